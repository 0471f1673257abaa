//! ACLs and object ownership as S3 clients read and set them.

use super::{null_version, run, Engine};
use crate::acl;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

pub(super) async fn get_bucket_acl(
    engine: &Engine,
    req: S3Request<GetBucketAclInput>,
) -> S3Result<S3Response<GetBucketAclOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Ok(S3Response::new(GetBucketAclOutput {
        grants: Some(acl::owner_full_control()),
        owner: Some(acl::owner()),
    }))
}

pub(super) async fn put_bucket_acl(
    engine: &Engine,
    req: S3Request<PutBucketAclInput>,
) -> S3Result<S3Response<PutBucketAclOutput>> {
    let i = req.input;
    run(|| engine.store.head_bucket(&i.bucket))?;
    acl::check_bucket_canned(i.acl.as_ref())?;
    acl::check_grants(
        i.access_control_policy.as_ref(),
        [
            &i.grant_full_control,
            &i.grant_read,
            &i.grant_read_acp,
            &i.grant_write,
            &i.grant_write_acp,
        ],
    )?;
    Ok(S3Response::new(PutBucketAclOutput {}))
}

pub(super) async fn get_object_acl(
    engine: &Engine,
    req: S3Request<GetObjectAclInput>,
) -> S3Result<S3Response<GetObjectAclOutput>> {
    let i = req.input;
    null_version(i.version_id.as_deref())?;
    run(|| engine.store.head_object(&i.bucket, &i.key))?;
    Ok(S3Response::new(GetObjectAclOutput {
        grants: Some(acl::owner_full_control()),
        owner: Some(acl::owner()),
        ..Default::default()
    }))
}

pub(super) async fn put_object_acl(
    engine: &Engine,
    req: S3Request<PutObjectAclInput>,
) -> S3Result<S3Response<PutObjectAclOutput>> {
    let i = req.input;
    null_version(i.version_id.as_deref())?;
    run(|| engine.store.head_object(&i.bucket, &i.key))?;
    acl::check_object_canned(i.acl.as_ref())?;
    acl::check_grants(
        i.access_control_policy.as_ref(),
        [
            &i.grant_full_control,
            &i.grant_read,
            &i.grant_read_acp,
            &i.grant_write,
            &i.grant_write_acp,
        ],
    )?;
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
                object_ownership: ObjectOwnership::from_static(
                    ObjectOwnership::BUCKET_OWNER_ENFORCED,
                ),
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
        if r.object_ownership.as_str() != ObjectOwnership::BUCKET_OWNER_ENFORCED {
            return Err(s3_error!(
                NotImplemented,
                "object ownership {} is not supported: s3hpc has one owner and no ACLs, \
                 which is BucketOwnerEnforced (the only setting accepted)",
                r.object_ownership.as_str()
            ));
        }
    }
    Ok(S3Response::new(PutBucketOwnershipControlsOutput {}))
}
