//! ACLs and object ownership as S3 clients read and set them.

use super::{run, Engine};
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
    version: Option<&str>,
) -> S3Result<()> {
    let now = permissions(engine, bucket, key, version)?;
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
    run(|| match (key, version) {
        (Some(key), Some(v)) => engine
            .store
            .set_version_permissions(bucket, key, v, &change),
        _ => engine.store.set_permissions(bucket, key, &change),
    })
}

/// The permissions of a bucket, an object, or one version of an object.
fn permissions(
    engine: &Engine,
    bucket: &str,
    key: Option<&str>,
    version: Option<&str>,
) -> S3Result<s3hpc_store::Permissions> {
    run(|| match (key, version) {
        (Some(key), Some(v)) => engine.store.version_permissions(bucket, key, v),
        _ => engine.store.permissions(bucket, key),
    })
}

/// The version an object ACL call names: None for the current one (no id,
/// or `null`, which is the current object where it has no id).
fn named_version(v: Option<&str>) -> S3Result<Option<&str>> {
    match v {
        None | Some("") | Some("null") => Ok(None),
        Some(v) if s3hpc_store::is_version_id(v) => Ok(Some(v)),
        Some(v) => Err(s3_error!(
            NoSuchVersion,
            "no version {v:?}: not an id s3hpc makes"
        )),
    }
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
    put_acl(engine, &asked, &i.bucket, None, None)?;
    Ok(S3Response::new(PutBucketAclOutput {}))
}

pub(super) async fn get_object_acl(
    engine: &Engine,
    req: S3Request<GetObjectAclInput>,
) -> S3Result<S3Response<GetObjectAclOutput>> {
    let i = req.input;
    let version = named_version(i.version_id.as_deref())?;
    let p = permissions(engine, &i.bucket, Some(&i.key), version)?;
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
    let version = named_version(i.version_id.as_deref())?;
    let canned = i.acl.as_ref().map(|a| a.as_str());
    let asked = asked!(object i, canned, i.access_control_policy.as_ref());
    put_acl(engine, &asked, &i.bucket, Some(&i.key), version)?;
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
