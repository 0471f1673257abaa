//! PutBucketCors, GetBucketCors and DeleteBucketCors: the bucket's rules
//! that `crate::cors` answers browsers with.

use super::{run, Engine};
use crate::cors::{self, CONFIG};
use s3s::dto::*;
use s3s::{S3Request, S3Response, S3Result};

pub(super) async fn put_bucket_cors(
    engine: &Engine,
    req: S3Request<PutBucketCorsInput>,
) -> S3Result<S3Response<PutBucketCorsOutput>> {
    let i = req.input;
    let rules = cors::rules_from(i.cors_configuration)?;
    run(|| {
        engine
            .store
            .put_bucket_config(&i.bucket, CONFIG, &cors::encode(&rules))
    })?;
    Ok(S3Response::new(PutBucketCorsOutput::default()))
}

pub(super) async fn get_bucket_cors(
    engine: &Engine,
    req: S3Request<GetBucketCorsInput>,
) -> S3Result<S3Response<GetBucketCorsOutput>> {
    let bucket = &req.input.bucket;
    let Some(bytes) = run(|| engine.store.bucket_config(bucket, CONFIG))? else {
        return Err(super::not_set(
            "NoSuchCORSConfiguration",
            format!("bucket {bucket:?} has no CORS configuration; set one with PutBucketCors"),
        ));
    };
    Ok(S3Response::new(GetBucketCorsOutput {
        cors_rules: Some(cors::to_dto(cors::decode(bucket, &bytes)?)),
    }))
}

pub(super) async fn delete_bucket_cors(
    engine: &Engine,
    req: S3Request<DeleteBucketCorsInput>,
) -> S3Result<S3Response<DeleteBucketCorsOutput>> {
    run(|| engine.store.delete_bucket_config(&req.input.bucket, CONFIG))?;
    Ok(S3Response::with_status(
        DeleteBucketCorsOutput::default(),
        hyper::StatusCode::NO_CONTENT,
    ))
}
