//! Object tagging: get, put, delete.

use super::{null_version, run, Engine};
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

pub(super) async fn get_object_tagging(
    engine: &Engine,
    req: S3Request<GetObjectTaggingInput>,
) -> S3Result<S3Response<GetObjectTaggingOutput>> {
    let i = req.input;
    null_version(i.version_id.as_deref())?;
    let tags = run(|| engine.store.get_object_tagging(&i.bucket, &i.key))?;
    Ok(S3Response::new(GetObjectTaggingOutput {
        tag_set: tags
            .into_iter()
            .map(|(k, v)| Tag {
                key: Some(k),
                value: Some(v),
            })
            .collect(),
        version_id: None,
    }))
}

pub(super) async fn put_object_tagging(
    engine: &Engine,
    req: S3Request<PutObjectTaggingInput>,
) -> S3Result<S3Response<PutObjectTaggingOutput>> {
    let i = req.input;
    null_version(i.version_id.as_deref())?;
    let mut tags = std::collections::BTreeMap::new();
    for t in i.tagging.tag_set {
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
