//! PutBucketLogging and GetBucketLogging: where a bucket's server access
//! logs go (`crate::bucket_logs` writes them).

use super::{run, Engine};
use crate::bucket_logs::{LogConfig, CONFIG};
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

/// Switches the bucket's logs on (into a target bucket, written as the
/// requester, who must be the bucket's owner) or off (no
/// `LoggingEnabled`).
pub(super) async fn put_bucket_logging(
    engine: &Engine,
    req: S3Request<PutBucketLoggingInput>,
) -> S3Result<S3Response<PutBucketLoggingOutput>> {
    let i = req.input;
    let Some(on) = i.bucket_logging_status.logging_enabled else {
        run(|| engine.store.delete_bucket_config(&i.bucket, CONFIG))?;
        engine.bucket_logs.forget(&i.bucket);
        return Ok(S3Response::new(PutBucketLoggingOutput::default()));
    };
    if on.target_grants.as_ref().is_some_and(|g| !g.is_empty()) {
        return Err(s3_error!(
            NotImplemented,
            "TargetGrants: log objects get the target bucket's default permissions, as files \
             of the user who switched logging on; grant access with the target bucket's \
             policy or ACL instead"
        ));
    }
    // The target must be there; the logs are written as the requester,
    // so the file system decides whether they may land in it.
    run(|| engine.store.head_bucket(&on.target_bucket)).map_err(|mut e| {
        if *e.code() == s3s::S3ErrorCode::NoSuchBucket {
            e.set_message(format!(
                "the logs' target bucket {:?} does not exist; create it first",
                on.target_bucket
            ));
        }
        e
    })?;
    // A target that logs itself would log the delivery of its own logs.
    if on.target_bucket != i.bucket
        && run(|| engine.store.bucket_config(&on.target_bucket, CONFIG))?.is_some()
    {
        return Err(s3_error!(
            InvalidArgument,
            "the target bucket {:?} has logging on itself; deliver logs into a bucket that \
             does not log",
            on.target_bucket
        ));
    }
    let writer = engine.store.identity().user().map(|u| (u.uid, u.gid));
    let partitioned = on
        .target_object_key_format
        .and_then(|f| f.partitioned_prefix);
    let config = LogConfig {
        target_bucket: on.target_bucket,
        target_prefix: on.target_prefix,
        partitioned: partitioned.is_some(),
        date_source: partitioned
            .and_then(|p| p.partition_date_source)
            .map(|d| d.as_str().to_string()),
        writer,
    };
    run(|| {
        engine
            .store
            .put_bucket_config(&i.bucket, CONFIG, &config.encode())
    })?;
    engine.bucket_logs.forget(&i.bucket);
    Ok(S3Response::new(PutBucketLoggingOutput::default()))
}

pub(super) async fn get_bucket_logging(
    engine: &Engine,
    req: S3Request<GetBucketLoggingInput>,
) -> S3Result<S3Response<GetBucketLoggingOutput>> {
    let bucket = &req.input.bucket;
    // Logging off: the empty answer.
    let Some(raw) = run(|| engine.store.bucket_config(bucket, CONFIG))? else {
        return Ok(S3Response::new(GetBucketLoggingOutput::default()));
    };
    let Some(config) = LogConfig::decode(&raw) else {
        return Err(s3_error!(
            InternalError,
            "bucket {bucket:?} holds a logging configuration this server cannot read; set it \
             again with PutBucketLogging"
        ));
    };
    let format = TargetObjectKeyFormat {
        partitioned_prefix: config.partitioned.then(|| PartitionedPrefix {
            partition_date_source: Some(PartitionDateSource::from(
                config
                    .date_source
                    .clone()
                    .unwrap_or_else(|| PartitionDateSource::DELIVERY_TIME.to_string()),
            )),
        }),
        simple_prefix: (!config.partitioned).then_some(SimplePrefix {}),
    };
    Ok(S3Response::new(GetBucketLoggingOutput {
        logging_enabled: Some(LoggingEnabled {
            target_bucket: config.target_bucket,
            target_grants: None,
            target_object_key_format: Some(format),
            target_prefix: config.target_prefix,
        }),
    }))
}
