//! Bucket configurations: versioning, and those s3hpc keeps none of, answered as AWS answers a bucket without them.

use super::{run, Engine};
use s3hpc_store::Versioning;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

/// AWS's 404 for a bucket configuration that was never set.
fn not_configured(code: &str, bucket: &str, what: &str) -> s3s::S3Error {
    super::not_set(
        code,
        format!(
            "bucket {bucket:?} has no {what}: s3hpc keeps no {what} for a bucket; \
             requests are governed by the file system's permissions"
        ),
    )
}

pub(super) async fn get_bucket_versioning(
    engine: &Engine,
    req: S3Request<GetBucketVersioningInput>,
) -> S3Result<S3Response<GetBucketVersioningOutput>> {
    let state = run(|| engine.store.bucket_versioning(&req.input.bucket))?;
    // Never enabled: an empty VersioningConfiguration, as S3 answers.
    let status = match state {
        Versioning::Off => None,
        s => Some(BucketVersioningStatus::from(s.as_str().to_string())),
    };
    Ok(S3Response::new(GetBucketVersioningOutput {
        status,
        ..Default::default()
    }))
}

pub(super) async fn put_bucket_versioning(
    engine: &Engine,
    req: S3Request<PutBucketVersioningInput>,
) -> S3Result<S3Response<PutBucketVersioningOutput>> {
    let i = req.input;
    run(|| engine.store.head_bucket(&i.bucket))?;
    let c = i.versioning_configuration;
    if c.mfa_delete
        .as_ref()
        .is_some_and(|m| m.as_str() == MFADelete::ENABLED)
    {
        return Err(s3_error!(
            NotImplemented,
            "MFA delete is not supported: versions are protected by the file system's \
             permissions and by object lock"
        ));
    }
    let state = match c.status.as_ref().map(|s| s.as_str()) {
        Some(BucketVersioningStatus::ENABLED) => Versioning::Enabled,
        Some(BucketVersioningStatus::SUSPENDED) => Versioning::Suspended,
        other => {
            return Err(s3_error!(
                IllegalVersioningConfigurationException,
                "the versioning status is Enabled or Suspended, not {other:?}"
            ))
        }
    };
    run(|| engine.store.put_bucket_versioning(&i.bucket, state))?;
    Ok(S3Response::new(PutBucketVersioningOutput::default()))
}

// Bucket configurations s3hpc has none of: the Get calls tools make
// when reading a bucket (Terraform's provider, the console, s3-tests)
// answer exactly as AWS does for a bucket without that configuration,
// and the Deletes succeed, as there is nothing to delete.
pub(super) async fn get_bucket_encryption(
    engine: &Engine,
    req: S3Request<GetBucketEncryptionInput>,
) -> S3Result<S3Response<GetBucketEncryptionOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Err(not_configured(
        "ServerSideEncryptionConfigurationNotFoundError",
        &req.input.bucket,
        "server-side encryption configuration",
    ))
}

pub(super) async fn get_bucket_website(
    engine: &Engine,
    req: S3Request<GetBucketWebsiteInput>,
) -> S3Result<S3Response<GetBucketWebsiteOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Err(not_configured(
        "NoSuchWebsiteConfiguration",
        &req.input.bucket,
        "website configuration",
    ))
}

pub(super) async fn get_bucket_replication(
    engine: &Engine,
    req: S3Request<GetBucketReplicationInput>,
) -> S3Result<S3Response<GetBucketReplicationOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Err(not_configured(
        "ReplicationConfigurationNotFoundError",
        &req.input.bucket,
        "replication configuration",
    ))
}

pub(super) async fn get_public_access_block(
    engine: &Engine,
    req: S3Request<GetPublicAccessBlockInput>,
) -> S3Result<S3Response<GetPublicAccessBlockOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Err(not_configured(
        "NoSuchPublicAccessBlockConfiguration",
        &req.input.bucket,
        "public access block configuration",
    ))
}

pub(super) async fn get_bucket_accelerate_configuration(
    engine: &Engine,
    req: S3Request<GetBucketAccelerateConfigurationInput>,
) -> S3Result<S3Response<GetBucketAccelerateConfigurationOutput>> {
    // Never configured (transfer acceleration was never configured): the empty answer.
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Ok(S3Response::new(
        GetBucketAccelerateConfigurationOutput::default(),
    ))
}

pub(super) async fn get_bucket_notification_configuration(
    engine: &Engine,
    req: S3Request<GetBucketNotificationConfigurationInput>,
) -> S3Result<S3Response<GetBucketNotificationConfigurationOutput>> {
    // Never configured (no notifications): the empty answer.
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Ok(S3Response::new(
        GetBucketNotificationConfigurationOutput::default(),
    ))
}

pub(super) async fn get_bucket_request_payment(
    engine: &Engine,
    req: S3Request<GetBucketRequestPaymentInput>,
) -> S3Result<S3Response<GetBucketRequestPaymentOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Ok(S3Response::new(GetBucketRequestPaymentOutput {
        payer: Some(Payer::from_static(Payer::BUCKET_OWNER)),
    }))
}

pub(super) async fn delete_bucket_encryption(
    engine: &Engine,
    req: S3Request<DeleteBucketEncryptionInput>,
) -> S3Result<S3Response<DeleteBucketEncryptionOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Ok(S3Response::with_status(
        DeleteBucketEncryptionOutput::default(),
        hyper::StatusCode::NO_CONTENT,
    ))
}

pub(super) async fn delete_public_access_block(
    engine: &Engine,
    req: S3Request<DeletePublicAccessBlockInput>,
) -> S3Result<S3Response<DeletePublicAccessBlockOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Ok(S3Response::with_status(
        DeletePublicAccessBlockOutput::default(),
        hyper::StatusCode::NO_CONTENT,
    ))
}

pub(super) async fn delete_bucket_website(
    engine: &Engine,
    req: S3Request<DeleteBucketWebsiteInput>,
) -> S3Result<S3Response<DeleteBucketWebsiteOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Ok(S3Response::with_status(
        DeleteBucketWebsiteOutput::default(),
        hyper::StatusCode::NO_CONTENT,
    ))
}
