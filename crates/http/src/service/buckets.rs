//! Buckets: list, create, delete, head, location. A bucket is a directory under the data root.

use super::{run, Engine};
use crate::acl;
use crate::convert;
use s3s::dto::*;
use s3s::{S3Request, S3Response, S3Result};

pub(super) async fn list_buckets(
    engine: &Engine,
    req: S3Request<ListBucketsInput>,
) -> S3Result<S3Response<ListBucketsOutput>> {
    let (page, continuation_token) = page(run(|| engine.store.list_buckets())?, &req.input)?;
    let buckets = page
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
        continuation_token,
        prefix: req.input.prefix,
    }))
}

/// S3's page size when a token or prefix comes without `max-buckets`.
const MAX_BUCKETS: i32 = 10_000;

/// The page ListBuckets answers: names with the prefix, after the
/// continuation token (the last name of the previous page), at most
/// `max-buckets`; and the token for the next page when there is one.
fn page(
    mut all: Vec<s3hpc_store::BucketInfo>,
    i: &ListBucketsInput,
) -> S3Result<(Vec<s3hpc_store::BucketInfo>, Option<String>)> {
    let max = i.max_buckets.unwrap_or(MAX_BUCKETS);
    if !(1..=MAX_BUCKETS).contains(&max) {
        return Err(s3s::s3_error!(
            InvalidArgument,
            "max-buckets {max} is outside 1 to {MAX_BUCKETS}"
        ));
    }
    all.sort_by(|a, b| a.name.cmp(&b.name));
    let after = i.continuation_token.as_deref().unwrap_or("");
    let prefix = i.prefix.as_deref().unwrap_or("");
    let mut page: Vec<_> = all
        .into_iter()
        .filter(|b| b.name.as_str() > after && b.name.starts_with(prefix))
        .collect();
    let more = page.len() > max as usize;
    page.truncate(max as usize);
    let token = more.then(|| page.last().map(|b| b.name.clone())).flatten();
    Ok((page, token))
}

pub(super) async fn create_bucket(
    engine: &Engine,
    req: S3Request<CreateBucketInput>,
) -> S3Result<S3Response<CreateBucketOutput>> {
    acl::check_bucket_canned(req.input.acl.as_ref())?;
    super::unsupported::refuse_object_lock(&req.input)?;
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
