//! Copies: CopyObject and UploadPartCopy, and the `x-amz-copy-source-*` conditions they share.

use super::acls::{self, asked};
use super::multipart::part_number;
use super::{run, run_long, Engine};
use crate::convert;
use s3hpc_store::PutBody;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

/// The `x-amz-copy-source-if-*` conditions of CopyObject and
/// UploadPartCopy (If-Match, If-None-Match; If-Modified-Since,
/// If-Unmodified-Since), checked against the source before the copy;
/// any that fails is 412, as S3 answers for copies.
/// A copy's source: an object, or one version of it.
struct Src {
    bucket: Box<str>,
    key: Box<str>,
    version: Option<Box<str>>,
}

impl Src {
    fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    fn head(&self, engine: &Engine) -> s3hpc_store::Result<s3hpc_store::ObjectInfo> {
        match self.version() {
            Some(v) => engine.store.head_object_version(&self.bucket, &self.key, v),
            None => engine.store.head_object(&self.bucket, &self.key),
        }
    }
}

fn check_copy_source(
    engine: &Engine,
    src: &Src,
    etags: [Option<&ETagCondition>; 2],
    times: [Option<&Timestamp>; 2],
) -> S3Result<()> {
    if etags.iter().all(Option::is_none) && times.iter().all(Option::is_none) {
        return Ok(());
    }
    let info = run(|| src.head(engine))?;
    convert::check_preconditions(&info, etags[0], etags[1], times[0], times[1]).map_err(|_| {
        s3_error!(
            PreconditionFailed,
            "the copy source {}/{} does not meet the x-amz-copy-source-if-* conditions; \
             nothing was copied",
            src.bucket,
            src.key
        )
    })
}

fn copy_source(source: CopySource) -> S3Result<Src> {
    match source {
        CopySource::Bucket {
            bucket,
            key,
            version_id,
        } => Ok(Src {
            bucket,
            key,
            version: version_id.filter(|v| !v.is_empty()),
        }),
        _ => Err(s3_error!(
            NotImplemented,
            "copy sources must be BUCKET/KEY, not access points"
        )),
    }
}

pub(super) async fn copy_object(
    engine: &Engine,
    req: S3Request<CopyObjectInput>,
) -> S3Result<S3Response<CopyObjectOutput>> {
    let cond = convert::write_condition_headers(&req.headers)?;
    let i = req.input;
    let asked = asked!(object i, i.acl.as_ref().map(|a| a.as_str()), None);
    let access = acls::for_new(engine, &asked, Some(&i.key))?;
    let src = copy_source(i.copy_source)?;
    let replace = i
        .metadata_directive
        .as_ref()
        .is_some_and(|d| d.as_str() == MetadataDirective::REPLACE);
    let replace_tags = i
        .tagging_directive
        .as_ref()
        .is_some_and(|d| d.as_str() == TaggingDirective::REPLACE);
    let tags = convert::tagging_header(i.tagging.as_deref())?;
    let (retention, hold) = super::object_lock::asked_lock!(i)?;
    check_copy_source(
        engine,
        &src,
        [
            i.copy_source_if_match.as_ref(),
            i.copy_source_if_none_match.as_ref(),
        ],
        [
            i.copy_source_if_modified_since.as_ref(),
            i.copy_source_if_unmodified_since.as_ref(),
        ],
    )?;
    // A lock asked for goes with the copy's options (COPY keeps the rest).
    let lock_asked = retention.is_some() || hold.is_some();
    let info = run(|| {
        let source_tags = || match src.version() {
            None => engine.store.get_object_tagging(&src.bucket, &src.key),
            Some(_) => Err(s3hpc_store::S3Error::new(
                s3hpc_store::ErrorCode::NotImplemented,
                "copying a given version with new metadata, a lock or its own tags is not \
                 supported yet; send the tags (x-amz-tagging-directive: REPLACE) too",
            )),
        };
        let mut opts = match (replace, replace_tags || lock_asked) {
            (false, false) => None,
            (true, _) => {
                let mut o = convert::put_options(i.content_type, i.metadata);
                o.headers = convert::object_headers!(i);
                o.tags = if replace_tags { tags } else { source_tags()? };
                Some(o)
            }
            (false, true) => {
                let info = src.head(engine)?;
                Some(s3hpc_store::PutOptions {
                    content_type: info.content_type,
                    metadata: info.metadata,
                    headers: info.headers,
                    tags: if replace_tags { tags } else { source_tags()? },
                    ..Default::default()
                })
            }
        };
        if let Some(o) = &mut opts {
            (o.retention, o.legal_hold) = (retention, hold);
        }
        engine.store.copy_object_with(
            (&src.bucket, &src.key, src.version()),
            (&i.bucket, &i.key),
            opts.as_ref(),
            &cond,
            access.as_ref(),
        )
    })?;
    let mut resp = S3Response::new(CopyObjectOutput {
        copy_object_result: Some(CopyObjectResult {
            e_tag: Some(convert::etag(&info.etag)),
            last_modified: Some(convert::timestamp(info.last_modified)),
            ..Default::default()
        }),
        version_id: convert::written_version(info.version_id.clone()),
        ..Default::default()
    });
    resp.headers = convert::written_headers(&info);
    Ok(resp)
}

pub(super) async fn upload_part_copy(
    engine: &Engine,
    req: S3Request<UploadPartCopyInput>,
) -> S3Result<S3Response<UploadPartCopyOutput>> {
    let i = req.input;
    let src = copy_source(i.copy_source)?;
    let range = i
        .copy_source_range
        .as_deref()
        .map(convert::copy_source_range)
        .transpose()?;
    let part = part_number(i.part_number)?;
    check_copy_source(
        engine,
        &src,
        [
            i.copy_source_if_match.as_ref(),
            i.copy_source_if_none_match.as_ref(),
        ],
        [
            i.copy_source_if_modified_since.as_ref(),
            i.copy_source_if_unmodified_since.as_ref(),
        ],
    )?;
    let store = &engine.store;
    let etag = run_long(|| {
        let mut src = match src.version() {
            Some(v) => store.get_object_version(&src.bucket, &src.key, v, range)?,
            None => store.get_object(&src.bucket, &src.key, range)?,
        };
        if let Some(r) = range {
            r.check_within(src.info.size)?;
        }
        let len = src.length;
        store.upload_part(
            &i.bucket,
            &i.key,
            &i.upload_id,
            part,
            PutBody::Stream {
                reader: &mut src.body,
                len: Some(len),
            },
        )
    })?;
    Ok(S3Response::new(UploadPartCopyOutput {
        copy_part_result: Some(CopyPartResult {
            e_tag: Some(convert::etag(&etag)),
            last_modified: Some(convert::timestamp(std::time::SystemTime::now())),
            ..Default::default()
        }),
        ..Default::default()
    }))
}
