//! Objects: PUT, GET, HEAD, DELETE (one and many), GetObjectAttributes.

use super::acls::{self, asked};
use super::{checksum_mode, content_md5, run, with_body, Engine};
use crate::body::GetStream;
use crate::checksums::{body_checks, known_value, set_checksum};
use crate::convert::{self, s3_error};
use crate::error_header::KernelCopiesBodies;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

pub(super) async fn put_object(
    engine: &Engine,
    req: S3Request<PutObjectInput>,
) -> S3Result<S3Response<PutObjectOutput>> {
    let (framing, checksum) = body_checks(&req.headers, req.trailing_headers)?;
    let i = req.input;
    // A client that waits for "100 Continue" learns of a refusal before it
    // sends the body (hyper sends the 100 when the body is first read).
    if expects_continue(&req.headers) {
        run(|| engine.store.may_create(&i.bucket, &i.key))?;
    }
    let asked = asked!(object i, i.acl.as_ref().map(|a| a.as_str()), None);
    let access = acls::for_new(engine, &asked, Some(&i.key))?;
    let mut opts = convert::put_options(i.content_type, i.metadata);
    opts.access = access;
    opts.headers = convert::object_headers!(i);
    opts.content_md5 = content_md5(i.content_md5.as_deref())?;
    opts.checksum = checksum.clone();
    opts.tags = convert::tagging_header(i.tagging.as_deref())?;
    opts.condition = convert::write_condition(i.if_match.as_ref(), i.if_none_match.as_ref())?;
    (opts.retention, opts.legal_hold) = super::object_lock::asked_lock!(i)?;
    let store = engine.store.clone();
    let (bucket, key) = (i.bucket.clone(), i.key.clone());
    let (etag, version_id) = with_body(engine, i.body, framing, move |body| {
        store.put_object_versioned(&bucket, &key, body, &opts)
    })
    .await?;
    let mut out = PutObjectOutput {
        e_tag: Some(convert::etag(&etag)),
        version_id: convert::written_version(version_id),
        expiration: super::lifecycle::expiration_after_write(engine, &i.bucket, &i.key),
        ..Default::default()
    };
    set_checksum!(out, checksum.as_ref().and_then(known_value));
    Ok(S3Response::new(out))
}

pub(super) async fn get_object(
    engine: &Engine,
    req: S3Request<GetObjectInput>,
) -> S3Result<S3Response<GetObjectOutput>> {
    let i = req.input;
    let version = asked_version(i.version_id.as_deref(), i.part_number)?;
    let range = i.range.map(convert::range);
    let part = requested_part(i.part_number, range.is_some())?;
    let with_checksum = checksum_mode(i.checksum_mode.as_ref()) && range.is_none();
    let (got, part) = (match (part, version) {
        (_, Some(v)) => engine
            .store
            .get_object_version(&i.bucket, &i.key, v, range)
            .map(|g| (g, None)),
        (None, None) => engine
            .store
            .get_object(&i.bucket, &i.key, range)
            .map(|g| (g, None)),
        (Some(n), None) => engine
            .store
            .get_object_part(&i.bucket, &i.key, n)
            .map(|p| (p.got, Some((p.part, p.parts_count)))),
    })
    .map_err(|e| missing(engine, &i.bucket, &i.key, version, e))?;
    let (info, offset, length, stream) = (got.info, got.offset, got.length, got.body);
    convert::check_preconditions(
        &info,
        i.if_match.as_ref(),
        i.if_none_match.as_ref(),
        i.if_modified_since.as_ref(),
        i.if_unmodified_since.as_ref(),
    )?;
    // Never on FUSE: when another node has replaced the file, GlusterFS
    // answers each FUSE read with ENOENT and the kernel retries a
    // MAP_POPULATE fault without end; the thread hung and SIGTERM never
    // finished. A read fails instead.
    let may_map =
        req.extensions.get::<KernelCopiesBodies>().is_some() && !engine.store.profile().fuse;
    let stream = GetStream::start(stream, offset, length, may_map)
        .map_err(|e| s3_error(s3hpc_store::S3Error::from_io(&e, &info.key)))?;
    // A part of a multipart object is a range of it, and says so.
    let ranged = range.is_some() || part.as_ref().is_some_and(|(_, n)| n.is_some());
    let content_range = ranged.then(|| {
        format!(
            "bytes {offset}-{}/{}",
            (offset + length).saturating_sub(1),
            info.size
        )
    });
    let mut out = GetObjectOutput {
        body: Some(StreamingBlob::wrap(stream)),
        content_length: Some(length as i64),
        content_range,
        accept_ranges: Some("bytes".into()),
        e_tag: Some(convert::etag(&info.etag)),
        last_modified: Some(convert::timestamp(info.last_modified)),
        metadata: convert::metadata(&info),
        tag_count: (info.tag_count > 0).then_some(info.tag_count as i32),
        version_id: info.version_id.clone(),
        ..Default::default()
    };
    super::object_lock::set_lock!(out, info.lock);
    out.expiration = super::lifecycle::expiration_of(engine, &i.bucket, &info);
    match part {
        // A part's own checksum, when the upload had one.
        Some((p, Some(count))) => {
            out.parts_count = Some(count as i32);
            set_checksum!(out, p.checksum);
        }
        _ if with_checksum => set_checksum!(out, info.checksum),
        _ => {}
    }
    // The response-* query parameters override what is stored.
    let overrides = convert::headers_of(
        i.response_cache_control,
        i.response_content_disposition,
        i.response_content_encoding,
        i.response_content_language,
        i.response_expires,
    );
    out.content_type = i.response_content_type.or(content_type(info.content_type));
    let mut resp = S3Response::new(out);
    convert::add_object_headers(&mut resp.headers, &info.headers, &overrides, "");
    Ok(resp)
}

/// The `partNumber` of a GET or HEAD, if any; S3 refuses it with a Range.
fn requested_part(n: Option<i32>, with_range: bool) -> S3Result<Option<u32>> {
    let Some(n) = n else { return Ok(None) };
    if with_range {
        return Err(s3_error!(
            InvalidRequest,
            "Cannot specify both Range header and partNumber query parameter"
        ));
    }
    super::multipart::part_number(n).map(Some)
}

pub(super) async fn head_object(
    engine: &Engine,
    req: S3Request<HeadObjectInput>,
) -> S3Result<S3Response<HeadObjectOutput>> {
    let i = req.input;
    let version = asked_version(i.version_id.as_deref(), i.part_number)?;
    let part = requested_part(i.part_number, i.range.is_some())?;
    let (info, part) = (match (part, version) {
        (_, Some(v)) => engine
            .store
            .head_object_version(&i.bucket, &i.key, v)
            .map(|h| (h, None)),
        (None, None) => engine
            .store
            .head_object(&i.bucket, &i.key)
            .map(|h| (h, None)),
        (Some(n), None) => engine
            .store
            .head_object_part(&i.bucket, &i.key, n)
            .map(|p| (p.got, Some((p.part, p.parts_count)))),
    })
    .map_err(|e| missing(engine, &i.bucket, &i.key, version, e))?;
    convert::check_preconditions(
        &info,
        i.if_match.as_ref(),
        i.if_none_match.as_ref(),
        i.if_modified_since.as_ref(),
        i.if_unmodified_since.as_ref(),
    )?;
    let tag_count = info.tag_count;
    let mut out = HeadObjectOutput {
        content_length: Some(part.as_ref().map_or(info.size, |(p, _)| p.size) as i64),
        accept_ranges: Some("bytes".into()),
        e_tag: Some(convert::etag(&info.etag)),
        last_modified: Some(convert::timestamp(info.last_modified)),
        metadata: convert::metadata(&info),
        version_id: info.version_id.clone(),
        ..Default::default()
    };
    super::object_lock::set_lock!(out, info.lock);
    out.expiration = super::lifecycle::expiration_of(engine, &i.bucket, &info);
    match part {
        Some((p, Some(count))) => {
            out.parts_count = Some(count as i32);
            set_checksum!(out, p.checksum);
        }
        _ if checksum_mode(i.checksum_mode.as_ref()) => set_checksum!(out, info.checksum),
        _ => {}
    }
    out.content_type = content_type(info.content_type);
    let mut resp = S3Response::new(out);
    convert::add_object_headers(&mut resp.headers, &info.headers, &Default::default(), "");
    // HeadObjectOutput has no field for it; GET's header, as tools expect.
    if tag_count > 0 {
        resp.headers.insert(
            "x-amz-tagging-count",
            hyper::header::HeaderValue::from(tag_count),
        );
    }
    Ok(resp)
}

pub(super) async fn delete_object(
    engine: &Engine,
    req: S3Request<DeleteObjectInput>,
) -> S3Result<S3Response<DeleteObjectOutput>> {
    let i = req.input;
    let cond = convert::delete_condition(
        i.if_match.as_ref().map(convert::if_match_etag),
        i.if_match_last_modified_time,
        i.if_match_size,
        i.bypass_governance_retention,
    )
    .map_err(s3_error)?;
    let out = run(|| delete_one(engine, &i.bucket, &i.key, i.version_id.as_deref(), &cond))?;
    Ok(S3Response::new(DeleteObjectOutput {
        delete_marker: out.delete_marker,
        version_id: out.version_id,
        ..Default::default()
    }))
}

/// What deleting one key (or one of its versions) did.
#[derive(Default)]
struct Deleted {
    /// The version removed or the marker made.
    version_id: Option<String>,
    delete_marker: Option<bool>,
}

/// DELETE of `key`: of one version (for good), or with versioning a new
/// delete marker, else the object.
fn delete_one(
    engine: &Engine,
    bucket: &str,
    key: &str,
    version: Option<&str>,
    cond: &s3hpc_store::DeleteCondition,
) -> s3hpc_store::Result<Deleted> {
    match version.filter(|v| !v.is_empty()) {
        Some(v) => {
            let marker = engine
                .store
                .delete_object_version_if(bucket, key, v, cond)?;
            Ok(Deleted {
                version_id: Some(v.to_string()),
                delete_marker: marker.then_some(true),
            })
        }
        None if cond.is_none() => {
            let marker = engine.store.delete_object_versioned(bucket, key)?;
            Ok(Deleted {
                delete_marker: marker.is_some().then_some(true),
                version_id: marker,
            })
        }
        None => {
            let marker = engine.store.delete_object_versioned_if(bucket, key, cond)?;
            Ok(Deleted {
                delete_marker: marker.is_some().then_some(true),
                version_id: marker,
            })
        }
    }
}

/// A GET or HEAD that found no object (or a delete marker), with the
/// headers S3 adds: `x-amz-delete-marker` (and the marker's id) where the
/// key's latest version is a marker, `false` on any other NoSuchKey.
fn missing(
    engine: &Engine,
    bucket: &str,
    key: &str,
    version: Option<&str>,
    e: s3hpc_store::S3Error,
) -> s3s::S3Error {
    use s3hpc_store::ErrorCode;
    let marker = match e.code {
        ErrorCode::MethodNotAllowed => version.map(str::to_string),
        ErrorCode::NoSuchKey => engine.store.latest_delete_marker(bucket, key),
        _ => return s3_error(e),
    };
    let mut headers = hyper::HeaderMap::new();
    let is = if marker.is_some() { "true" } else { "false" };
    headers.insert(
        "x-amz-delete-marker",
        hyper::header::HeaderValue::from_static(is),
    );
    if let Some(id) = marker.and_then(|m| hyper::header::HeaderValue::from_str(&m).ok()) {
        headers.insert("x-amz-version-id", id);
    }
    let mut out = s3_error(e);
    out.set_headers(headers);
    out
}

/// The version a GET or HEAD names (none for an empty one); S3 takes no
/// `partNumber` with it here.
fn asked_version(v: Option<&str>, part: Option<i32>) -> S3Result<Option<&str>> {
    match v.filter(|v| !v.is_empty()) {
        Some(_) if part.is_some() => Err(s3_error!(
            NotImplemented,
            "partNumber of a given versionId is not supported; GET the version whole"
        )),
        v => Ok(v),
    }
}

/// S3's limit on the keys of one DeleteObjects.
const MAX_DELETE_KEYS: usize = 1000;

pub(super) async fn delete_objects(
    engine: &Engine,
    req: S3Request<DeleteObjectsInput>,
) -> S3Result<S3Response<DeleteObjectsOutput>> {
    let i = req.input;
    if i.delete.objects.len() > MAX_DELETE_KEYS {
        return Err(s3_error!(
            MalformedXML,
            "DeleteObjects names {} keys; one request may delete at most {MAX_DELETE_KEYS}",
            i.delete.objects.len()
        ));
    }
    run(|| engine.store.head_bucket(&i.bucket))?;
    // Bucket logs record each key of a multi-object delete.
    crate::observe::note_keys(
        &req.extensions,
        i.delete.objects.iter().map(|o| o.key.clone()).collect(),
    );
    let quiet = i.delete.quiet.unwrap_or(false);
    let (mut deleted, mut errors) = (Vec::new(), Vec::new());
    tokio::task::block_in_place(|| {
        for o in i.delete.objects {
            let result = convert::delete_condition(
                o.e_tag.as_ref().map(|e| e.value()),
                o.last_modified_time.clone(),
                o.size,
                i.bypass_governance_retention,
            )
            .and_then(|cond| delete_one(engine, &i.bucket, &o.key, o.version_id.as_deref(), &cond));
            match result {
                Ok(_) if quiet => {}
                Ok(d) => deleted.push(DeletedObject {
                    key: Some(o.key),
                    // As AWS: the version asked for; a marker's id apart.
                    version_id: o.version_id,
                    delete_marker: d.delete_marker,
                    delete_marker_version_id: d.delete_marker.and(d.version_id),
                }),
                // The version asked for is echoed, as S3 does: clients
                // retry or inspect an error by key and version.
                Err(e) => errors.push(Error {
                    code: Some(e.code.as_str().to_string()),
                    message: Some(e.message),
                    key: Some(o.key),
                    version_id: o.version_id,
                }),
            }
        }
    });
    Ok(S3Response::new(DeleteObjectsOutput {
        deleted: Some(deleted),
        errors: Some(errors),
        ..Default::default()
    }))
}

pub(super) async fn get_object_attributes(
    engine: &Engine,
    req: S3Request<GetObjectAttributesInput>,
) -> S3Result<S3Response<GetObjectAttributesOutput>> {
    let i = req.input;
    let version = i.version_id.as_deref().filter(|v| !v.is_empty());
    let info = run(|| match version {
        Some(v) => engine.store.head_object_version(&i.bucket, &i.key, v),
        None => engine.store.head_object(&i.bucket, &i.key),
    })?;
    // One header, comma-separated (s3s may keep it as one item).
    let want = |a: &str| {
        i.object_attributes
            .iter()
            .flat_map(|x| x.as_str().split(','))
            .any(|x| x.trim() == a)
    };
    let mut out = GetObjectAttributesOutput {
        last_modified: Some(convert::timestamp(info.last_modified)),
        version_id: info.version_id.clone(),
        ..Default::default()
    };
    if want(ObjectAttributes::ETAG) {
        out.e_tag = Some(convert::etag(&info.etag));
    }
    if want(ObjectAttributes::OBJECT_SIZE) {
        out.object_size = Some(info.size as i64);
    }
    if want(ObjectAttributes::STORAGE_CLASS) {
        out.storage_class = Some(StorageClass::from_static(StorageClass::STANDARD));
    }
    if want(ObjectAttributes::CHECKSUM) {
        if let Some(c) = &info.checksum {
            let mut sum = Checksum::default();
            // A composite value keeps its `-N`, as HEAD and GET give it.
            set_checksum!(sum, Some(c.clone()));
            out.checksum = Some(sum);
        }
    }
    if want(ObjectAttributes::OBJECT_PARTS) {
        out.object_parts = object_parts(engine, &i)?;
    }
    Ok(S3Response::new(out))
}

/// GetObjectAttributes' ObjectParts: the parts kept at completion, a page
/// of them after `x-amz-part-number-marker`, at most `x-amz-max-parts`
/// (1000 by default); None for an object not uploaded in parts.
fn object_parts(
    engine: &Engine,
    i: &GetObjectAttributesInput,
) -> S3Result<Option<GetObjectAttributesParts>> {
    let Some(parts) = run(|| engine.store.object_parts(&i.bucket, &i.key))? else {
        return Ok(None);
    };
    let marker = i.part_number_marker.unwrap_or(0).max(0) as u32;
    let max = i.max_parts.unwrap_or(1000).clamp(0, 1000) as usize;
    let total = parts.len();
    let page: Vec<_> = parts
        .into_iter()
        .filter(|p| p.part_number > marker)
        .collect();
    let truncated = page.len() > max;
    let page = &page[..page.len().min(max)];
    Ok(Some(GetObjectAttributesParts {
        total_parts_count: Some(total as i32),
        part_number_marker: i.part_number_marker,
        next_part_number_marker: page.last().map(|p| p.part_number as i32),
        max_parts: Some(max as i32),
        is_truncated: Some(truncated),
        parts: Some(
            page.iter()
                .map(|p| {
                    let mut part = ObjectPart {
                        part_number: Some(p.part_number as i32),
                        size: Some(p.size as i64),
                        ..Default::default()
                    };
                    set_checksum!(part, p.checksum.as_ref(), value_only);
                    part
                })
                .collect(),
        ),
    }))
}

/// The Content-Type of a GET or HEAD: the stored one, else S3's default for
/// an object stored without one (and for every file written by plain
/// POSIX tools): `binary/octet-stream`, as AWS and Ceph RGW answer, so
/// that clients which read the header always find it.
fn content_type(stored: Option<String>) -> Option<String> {
    Some(stored.unwrap_or_else(|| "binary/octet-stream".to_string()))
}

fn expects_continue(headers: &hyper::HeaderMap) -> bool {
    headers
        .get(hyper::header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}
