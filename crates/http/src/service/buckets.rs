//! Buckets: list, create, delete, head, location. A bucket is a directory under the data root.

use super::acls::{self, asked};
use super::{run, Engine};
use crate::convert;
use crate::{acl, owners};
use s3hpc_store::PermissionChange;
use s3s::dto::*;
use s3s::{s3_error, S3ErrorCode, S3Request, S3Response, S3Result};

pub(super) async fn list_buckets(
    engine: &Engine,
    req: S3Request<ListBucketsInput>,
) -> S3Result<S3Response<ListBucketsOutput>> {
    let mut all = run(|| engine.store.list_buckets())?;
    let me = engine.store.identity();
    if engine.owners.list_owned_buckets && !me.is_server() {
        let uid = owners::uid(me);
        all.retain(|b| b.owner == Some(uid));
    }
    let (page, continuation_token) = page(all, &req.input)?;
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
        owner: Some(engine.owners.of(owners::uid(engine.store.identity()))),
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
    let i = &req.input;
    let asked = asked!(i, i.acl.as_ref().map(|a| a.as_str()), None);
    let bucket = &i.bucket;
    let change = acls::for_new(engine, &asked, None)?;
    match run(|| engine.store.create_bucket(bucket)) {
        // Already as asked: nothing to apply.
        Err(e) if e.code() == &S3ErrorCode::BucketAlreadyOwnedByYou => {
            recreated(engine, bucket, change)?
        }
        r => {
            r?;
            acls::apply_to_new_bucket(engine, change.as_ref(), bucket)?;
            if i.object_lock_enabled_for_bucket == Some(true) {
                super::object_lock::lock_new_bucket(engine, bucket)?;
            }
        }
    }
    Ok(S3Response::new(CreateBucketOutput {
        location: Some(format!("/{bucket}")),
    }))
}

/// A create of one's own existing bucket succeeds when the bucket has the
/// permissions the request asks for (none asked: what a new bucket gets,
/// 0777 under the server's umask), as AWS answers in us-east-1 (the region
/// this server answers for) and Ceph RGW everywhere; its objects are kept.
/// With other permissions it is BucketAlreadyExists, as Ceph answers, so
/// that a re-create neither keeps nor changes them silently (AWS would
/// reset them: on a shared file system that would chmod a project
/// directory behind its group's back).
fn recreated(engine: &Engine, bucket: &str, asked: Option<PermissionChange>) -> S3Result<()> {
    let now = run(|| engine.store.permissions(bucket, None))?;
    let asked = asked.or_else(new_bucket).ok_or_else(|| {
        s3_error!(
            InternalError,
            "the server's umask could not be read from /proc/self/status"
        )
    })?;
    if acl::current(&now) == asked {
        return Ok(());
    }
    Err(s3_error!(
        BucketAlreadyExists,
        "bucket {bucket:?} is yours already, with other permissions than this request sets \
         (mode {:o}); change them with PutBucketAcl",
        now.mode
    ))
}

/// The permissions a bucket made without an ACL gets: 0777 under the
/// process's umask (`/proc/self/status`, read once: reading it with
/// umask(2) would set it).
fn new_bucket() -> Option<PermissionChange> {
    static UMASK: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    let umask = (*UMASK.get_or_init(|| {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let v = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
        u32::from_str_radix(v.trim(), 8).ok()
    }))?;
    let mode = 0o777 & !umask;
    Some(PermissionChange {
        group: ((mode >> 3) & 7) as u8,
        other: (mode & 7) as u8,
        named: Vec::new(),
        bucket_owner: 0,
    })
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
