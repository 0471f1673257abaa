//! Object and bucket tagging: get, put, delete.

use super::{null_version, run, Engine};
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};
use std::collections::BTreeMap;

/// The engine's name for a bucket's tag set; S3's limit on it.
const BUCKET_TAGS: &str = "tagging";
const MAX_BUCKET_TAGS: usize = 50;

/// A request's tag set as a map; a key given twice is InvalidTag.
fn tag_map(tag_set: Vec<Tag>) -> S3Result<BTreeMap<String, String>> {
    let mut tags = BTreeMap::new();
    for t in tag_set {
        let key = t.key.unwrap_or_default();
        if tags
            .insert(key.clone(), t.value.unwrap_or_default())
            .is_some()
        {
            return Err(s3_error!(
                InvalidTag,
                "tag {key:?} appears twice; each key may appear once"
            ));
        }
    }
    Ok(tags)
}

fn tag_list(tags: BTreeMap<String, String>) -> Vec<Tag> {
    tags.into_iter()
        .map(|(k, v)| Tag {
            key: Some(k),
            value: Some(v),
        })
        .collect()
}

pub(super) async fn get_object_tagging(
    engine: &Engine,
    req: S3Request<GetObjectTaggingInput>,
) -> S3Result<S3Response<GetObjectTaggingOutput>> {
    let i = req.input;
    null_version(i.version_id.as_deref())?;
    let tags = run(|| engine.store.get_object_tagging(&i.bucket, &i.key))?;
    Ok(S3Response::new(GetObjectTaggingOutput {
        tag_set: tag_list(tags),
        version_id: None,
    }))
}

pub(super) async fn put_object_tagging(
    engine: &Engine,
    req: S3Request<PutObjectTaggingInput>,
) -> S3Result<S3Response<PutObjectTaggingOutput>> {
    let i = req.input;
    null_version(i.version_id.as_deref())?;
    let tags = tag_map(i.tagging.tag_set)?;
    run(|| engine.store.put_object_tagging(&i.bucket, &i.key, &tags))?;
    Ok(S3Response::new(PutObjectTaggingOutput::default()))
}

pub(super) async fn delete_object_tagging(
    engine: &Engine,
    req: S3Request<DeleteObjectTaggingInput>,
) -> S3Result<S3Response<DeleteObjectTaggingOutput>> {
    let i = req.input;
    null_version(i.version_id.as_deref())?;
    run(|| engine.store.delete_object_tagging(&i.bucket, &i.key))?;
    Ok(S3Response::with_status(
        DeleteObjectTaggingOutput::default(),
        hyper::StatusCode::NO_CONTENT,
    ))
}

// A bucket's tags: the engine's `tagging` document of the bucket (an
// extended attribute of its directory, set only by its owner), as JSON.

pub(super) async fn get_bucket_tagging(
    engine: &Engine,
    req: S3Request<GetBucketTaggingInput>,
) -> S3Result<S3Response<GetBucketTaggingOutput>> {
    let bucket = &req.input.bucket;
    let Some(bytes) = run(|| engine.store.bucket_config(bucket, BUCKET_TAGS))? else {
        return Err(super::not_set(
            "NoSuchTagSet",
            format!("bucket {bucket:?} has no tags; set them with PutBucketTagging"),
        ));
    };
    let tags: BTreeMap<String, String> = serde_json::from_slice(&bytes).map_err(|e| {
        s3_error!(
            InternalError,
            "the tags kept on bucket {bucket:?} (extended attribute user.s3hpc.{BUCKET_TAGS}) \
             are not readable: {e}; set them again with PutBucketTagging"
        )
    })?;
    Ok(S3Response::new(GetBucketTaggingOutput {
        tag_set: tag_list(tags),
    }))
}

pub(super) async fn put_bucket_tagging(
    engine: &Engine,
    req: S3Request<PutBucketTaggingInput>,
) -> S3Result<S3Response<PutBucketTaggingOutput>> {
    let i = req.input;
    let tags = tag_map(i.tagging.tag_set)?;
    s3hpc_store::validate_tag_set(&tags, MAX_BUCKET_TAGS, "a bucket")
        .map_err(crate::convert::s3_error)?;
    let bytes = serde_json::to_vec(&tags).expect("a map of strings");
    run(|| {
        engine
            .store
            .put_bucket_config(&i.bucket, BUCKET_TAGS, &bytes)
    })?;
    Ok(S3Response::new(PutBucketTaggingOutput::default()))
}

pub(super) async fn delete_bucket_tagging(
    engine: &Engine,
    req: S3Request<DeleteBucketTaggingInput>,
) -> S3Result<S3Response<DeleteBucketTaggingOutput>> {
    run(|| {
        engine
            .store
            .delete_bucket_config(&req.input.bucket, BUCKET_TAGS)
    })?;
    Ok(S3Response::with_status(
        DeleteBucketTaggingOutput::default(),
        hyper::StatusCode::NO_CONTENT,
    ))
}
