//! Buckets: list, create, delete, head, location. A bucket is a directory under the data root.

use super::{run, Engine};
use crate::acl;
use crate::convert;
use s3s::dto::*;
use s3s::{S3Request, S3Response, S3Result};

pub(super) async fn list_buckets(
    engine: &Engine,
    _req: S3Request<ListBucketsInput>,
) -> S3Result<S3Response<ListBucketsOutput>> {
    let buckets = run(|| engine.store.list_buckets())?
        .into_iter()
        .map(|b| Bucket {
            name: Some(b.name),
            creation_date: Some(convert::timestamp(b.created)),
            ..Default::default()
        })
        .collect();
    Ok(S3Response::new(ListBucketsOutput {
        buckets: Some(buckets),
        owner: Some(Owner {
            display_name: Some("s3hpc".into()),
            id: Some("s3hpc".into()),
        }),
        ..Default::default()
    }))
}

pub(super) async fn create_bucket(
    engine: &Engine,
    req: S3Request<CreateBucketInput>,
) -> S3Result<S3Response<CreateBucketOutput>> {
    acl::check_bucket_canned(req.input.acl.as_ref())?;
    let bucket = req.input.bucket;
    run(|| engine.store.create_bucket(&bucket))?;
    Ok(S3Response::new(CreateBucketOutput {
        location: Some(format!("/{bucket}")),
    }))
}

pub(super) async fn delete_bucket(
    engine: &Engine,
    req: S3Request<DeleteBucketInput>,
) -> S3Result<S3Response<DeleteBucketOutput>> {
    run(|| engine.store.delete_bucket(&req.input.bucket))?;
    Ok(S3Response::new(DeleteBucketOutput {}))
}

pub(super) async fn head_bucket(
    engine: &Engine,
    req: S3Request<HeadBucketInput>,
) -> S3Result<S3Response<HeadBucketOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    Ok(S3Response::new(HeadBucketOutput::default()))
}

pub(super) async fn get_bucket_location(
    engine: &Engine,
    req: S3Request<GetBucketLocationInput>,
) -> S3Result<S3Response<GetBucketLocationOutput>> {
    run(|| engine.store.head_bucket(&req.input.bucket))?;
    // Empty means us-east-1, the region SigV4 clients default to.
    Ok(S3Response::new(GetBucketLocationOutput::default()))
}
