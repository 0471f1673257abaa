//! Bucket policies as a view of the bucket directory's permissions
//! (`policy.rs` says what can be held): Put writes the permissions and
//! keeps the document, Get answers it while the permissions still hold it,
//! Delete takes back what it added. Only the bucket's owner may.

use super::{run, Engine};
use crate::policy::{self, Record};
use crate::{acl, owners};
use s3hpc_store::Permissions;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

/// The bucket's permissions and its stored policy record, if the request
/// comes from its owner (or the administrator); AccessDenied else.
fn as_owner(
    engine: &Engine,
    bucket: &str,
    doing: &str,
) -> S3Result<(Permissions, Option<Record>, bool)> {
    let (p, raw) = run(|| engine.store.bucket_policy(bucket))?;
    let who = engine.store.identity();
    if !who.is_server() && owners::uid(who) != p.uid {
        let owner = engine.owners.of(p.uid);
        return Err(s3_error!(
            AccessDenied,
            "only the owner of bucket {bucket:?} ({}) may {doing} its policy; this request \
             acts as {}",
            owner.id.unwrap_or_default(),
            who.describe()
        ));
    }
    let stored = raw.is_some();
    Ok((p, raw.as_deref().and_then(Record::decode), stored))
}

pub(super) async fn get_bucket_policy(
    engine: &Engine,
    req: S3Request<GetBucketPolicyInput>,
) -> S3Result<S3Response<GetBucketPolicyOutput>> {
    let bucket = &req.input.bucket;
    match as_owner(engine, bucket, "read")? {
        (p, Some(r), _) if policy::holds(&p, &r.grants) => {
            Ok(S3Response::new(GetBucketPolicyOutput {
                policy: Some(r.document),
            }))
        }
        (_, Some(_), _) => Err(s3_error!(
            NoSuchBucketPolicy,
            "bucket {bucket:?} has a stored policy that no longer holds: its directory's \
             permissions were changed since it was put (chmod, setfacl or PutBucketAcl) and \
             no longer grant what it says; put the policy again, or delete it"
        )),
        (_, None, _) => Err(s3_error!(
            NoSuchBucketPolicy,
            "bucket {bucket:?} has no policy (its permissions are its ACL: GetBucketAcl)"
        )),
    }
}

pub(super) async fn put_bucket_policy(
    engine: &Engine,
    req: S3Request<PutBucketPolicyInput>,
) -> S3Result<S3Response<PutBucketPolicyOutput>> {
    let i = req.input;
    let (p, old, _) = as_owner(engine, &i.bucket, "change")?;
    let grants = policy::grants(&i.policy, &i.bucket, p.uid, &engine.owners)?;
    // A policy replaces the one before: what that one added goes first
    // (unless a chmod since has made it no longer hold).
    let base = match &old {
        Some(r) if policy::holds(&p, &r.grants) => policy::without(&p, &r.added),
        _ => acl::current(&p),
    };
    let (change, added) = policy::with(&base, &grants);
    let record = Record {
        document: i.policy,
        grants,
        added,
    };
    run(|| {
        engine
            .store
            .set_bucket_policy(&i.bucket, Some(&change), Some(&record.encode()))
    })?;
    Ok(S3Response::with_status(
        PutBucketPolicyOutput {},
        hyper::StatusCode::NO_CONTENT,
    ))
}

pub(super) async fn delete_bucket_policy(
    engine: &Engine,
    req: S3Request<DeleteBucketPolicyInput>,
) -> S3Result<S3Response<DeleteBucketPolicyOutput>> {
    let bucket = &req.input.bucket;
    let (p, old, stored) = as_owner(engine, bucket, "delete")?;
    // What the policy added goes while it still holds; after a chmod that
    // took it, the permissions are the owner's choice since, and stay.
    let change = old
        .filter(|r| policy::holds(&p, &r.grants))
        .map(|r| policy::without(&p, &r.added));
    if stored {
        run(|| {
            engine
                .store
                .set_bucket_policy(bucket, change.as_ref(), None)
        })?;
    }
    Ok(S3Response::with_status(
        DeleteBucketPolicyOutput::default(),
        hyper::StatusCode::NO_CONTENT,
    ))
}

/// IsPublic: whether everyone (the other class, which takes in unsigned
/// requests where `--anonymous-user` is set) may list the bucket or write
/// in it, whether a policy or an ACL granted it: both are the same bits.
pub(super) async fn get_bucket_policy_status(
    engine: &Engine,
    req: S3Request<GetBucketPolicyStatusInput>,
) -> S3Result<S3Response<GetBucketPolicyStatusOutput>> {
    let (p, _, _) = as_owner(engine, &req.input.bucket, "read the status of")?;
    Ok(S3Response::new(GetBucketPolicyStatusOutput {
        policy_status: Some(PolicyStatus {
            is_public: Some(policy::is_public(&p)),
        }),
    }))
}
