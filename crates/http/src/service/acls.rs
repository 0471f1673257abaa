//! ACLs and object ownership as S3 clients read and set them.

use super::{null_version, run, Engine};
use crate::{acl, owners};
use s3hpc_store::PermissionChange;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

/// What a request's ACL fields ask for (`object`: a request that has no
/// `x-amz-grant-write`, which S3 gives buckets only).
macro_rules! asked {
    ($i:expr, $canned:expr, $policy:expr) => {
        asked!(@ $i, $canned, $policy, &$i.grant_write)
    };
    (object $i:expr, $canned:expr, $policy:expr) => {
        asked!(@ $i, $canned, $policy, &None)
    };
    (@ $i:expr, $canned:expr, $policy:expr, $write:expr) => {
        $crate::acl::Asked {
            canned: $canned,
            policy: $policy,
            headers: [
                &$i.grant_full_control,
                &$i.grant_read,
                &$i.grant_read_acp,
                $write,
                &$i.grant_write_acp,
            ],
        }
    };
}
pub(super) use asked;

/// The permissions a new bucket or object (`key`) created by this request
/// gets from its ACL fields, worked out (and refused, if they must be)
/// before anything is written; None when the request names none.
pub(super) fn for_new(
    engine: &Engine,
    asked: &acl::Asked<'_>,
    key: Option<&str>,
) -> S3Result<Option<PermissionChange>> {
    let target = acl::Target {
        bucket: key.is_none(),
        owner: owners::uid(engine.store.identity()),
    };
    acl::change(asked, &target, &engine.owners)
}

/// Applies what [`for_new`] worked out to a bucket just created. Where the
/// file system refuses it (no ACLs), the new bucket goes again, so that a
/// failed request leaves nothing behind. (Objects get theirs before they
/// are published: `PutOptions::access`.)
pub(super) fn apply_to_new_bucket(
    engine: &Engine,
    change: Option<&PermissionChange>,
    bucket: &str,
) -> S3Result<()> {
    let Some(c) = change else { return Ok(()) };
    run(|| engine.store.set_permissions(bucket, None, c)).inspect_err(|_| {
        let _ = engine.store.delete_bucket(bucket);
    })
}

/// Replaces the permissions of a bucket (`key` None) or object as asked.
fn put_acl(
    engine: &Engine,
    asked: &acl::Asked<'_>,
    bucket: &str,
    key: Option<&str>,
) -> S3Result<()> {
    let now = run(|| engine.store.permissions(bucket, key))?;
    let target = acl::Target {
        bucket: key.is_none(),
        owner: now.uid,
    };
    let change = acl::change(asked, &target, &engine.owners)?.ok_or_else(|| {
        s3_error!(
            MissingSecurityHeader,
            "no ACL given: send x-amz-acl, x-amz-grant-* headers or an AccessControlPolicy"
        )
    })?;
    run(|| engine.store.set_permissions(bucket, key, &change))
}

pub(super) async fn get_bucket_acl(
    engine: &Engine,
    req: S3Request<GetBucketAclInput>,
) -> S3Result<S3Response<GetBucketAclOutput>> {
    let p = run(|| engine.store.permissions(&req.input.bucket, None))?;
    let (owner, grants) = acl::view(&p, true, &engine.owners);
    Ok(S3Response::new(GetBucketAclOutput {
        grants: Some(grants),
        owner: Some(owner),
    }))
}

pub(super) async fn put_bucket_acl(
    engine: &Engine,
    req: S3Request<PutBucketAclInput>,
) -> S3Result<S3Response<PutBucketAclOutput>> {
    let i = req.input;
    let canned = i.acl.as_ref().map(|a| a.as_str());
    let asked = asked!(i, canned, i.access_control_policy.as_ref());
    put_acl(engine, &asked, &i.bucket, None)?;
    Ok(S3Response::new(PutBucketAclOutput {}))
}

pub(super) async fn get_object_acl(
    engine: &Engine,
    req: S3Request<GetObjectAclInput>,
) -> S3Result<S3Response<GetObjectAclOutput>> {
    let i = req.input;
    null_version(i.version_id.as_deref())?;
    let p = run(|| engine.store.permissions(&i.bucket, Some(&i.key)))?;
    let (owner, grants) = acl::view(&p, false, &engine.owners);
    Ok(S3Response::new(GetObjectAclOutput {
        grants: Some(grants),
        owner: Some(owner),
        ..Default::default()
    }))
}

pub(super) async fn put_object_acl(
    engine: &Engine,
    req: S3Request<PutObjectAclInput>,
) -> S3Result<S3Response<PutObjectAclOutput>> {
    let i = req.input;
    null_version(i.version_id.as_deref())?;
    let canned = i.acl.as_ref().map(|a| a.as_str());
    let asked = asked!(object i, canned, i.access_control_policy.as_ref());
    put_acl(engine, &asked, &i.bucket, Some(&i.key))?;
    Ok(S3Response::new(PutObjectAclOutput::default()))
}

pub(super) async fn get_bucket_ownership_controls(
    engine: &Engine,
    req: S3Request<GetBucketOwnershipControlsInput>,
) -> S3Result<S3Response<GetBucketOwnershipControlsOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Ok(S3Response::new(GetBucketOwnershipControlsOutput {
        ownership_controls: Some(OwnershipControls {
            rules: vec![OwnershipControlsRule {
                object_ownership: ObjectOwnership::from_static(ObjectOwnership::OBJECT_WRITER),
            }],
        }),
    }))
}

pub(super) async fn put_bucket_ownership_controls(
    engine: &Engine,
    req: S3Request<PutBucketOwnershipControlsInput>,
) -> S3Result<S3Response<PutBucketOwnershipControlsOutput>> {
    let i = req.input;
    run(|| engine.store.head_bucket(&i.bucket))?;
    for r in &i.ownership_controls.rules {
        if r.object_ownership.as_str() != ObjectOwnership::OBJECT_WRITER {
            return Err(s3_error!(
                NotImplemented,
                "object ownership {} is not supported: an object belongs to whoever wrote \
                 its file (the file's owner), which is ObjectWriter, the only setting \
                 accepted",
                r.object_ownership.as_str()
            ));
        }
    }
    Ok(S3Response::new(PutBucketOwnershipControlsOutput {}))
}
