//! Object calls: put (pulled through the data callback, streamed, atomic),
//! get (range, pushed in chunks), head, delete, copy.

use super::convert::{
    callback_status, context, cstring, opt_str, put_options, req_str, run, send_properties,
    unix_seconds,
};
use super::types::*;
use super::S3Status;
use crate::core::{client_for, push_body, Failure, PullReader};
use s3hpc_client::{ByteRange, ObjectInfo, PutBody};
use std::ffi::{c_char, c_int, c_void, CStr};

/// `bucket/key` for an error's resource field.
unsafe fn resource(ctx: *const S3BucketContext, key: *const c_char) -> String {
    let s = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: NUL-terminated, per the header.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    // SAFETY: NULL or valid, per the header.
    let bucket = unsafe { ctx.as_ref() }.map_or(String::new(), |c| s(c.bucket_name));
    format!("{bucket}/{}", s(key))
}

#[no_mangle]
pub unsafe extern "C" fn S3_put_object(
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    content_length: u64,
    put_properties: *const S3PutProperties,
    _ctx: *mut S3RequestContext,
    handler: *const S3PutObjectHandler,
    data: *mut c_void,
) {
    // SAFETY: NULL or valid, per the header.
    let h = unsafe { handler.as_ref() };
    let response = h.map_or(std::ptr::null(), |h| &h.response_handler as *const _);
    // SAFETY: pointers as the header documents them.
    unsafe {
        run(response, data, &resource(bucket_context, key), || {
            let (target, bucket) = context(bucket_context)?;
            let key = req_str(key, "key")?;
            let opts = put_options(put_properties)?.unwrap_or_default();
            let client = client_for(&target)?;
            let pull = h.and_then(|h| h.put_object_data_callback);
            if pull.is_none() && content_length > 0 {
                return Err(Failure::BadArgument("putObjectDataCallback"));
            }
            let mut reader = PullReader::new(content_length, |buf: &mut [u8]| match pull {
                // SAFETY: `buf` is writable for `buf.len()` bytes (at most
                // i32::MAX, as PullReader guarantees).
                Some(cb) => cb(buf.len() as c_int, buf.as_mut_ptr().cast(), data) as i64,
                None => 0,
            });
            let body = PutBody::Stream {
                reader: &mut reader,
                len: Some(content_length),
            };
            let put = client.put_object(&bucket, &key, body, &opts);
            if reader.aborted {
                return Err(Failure::Aborted);
            }
            let etag = put?;
            let info = ObjectInfo {
                key,
                size: content_length,
                last_modified: std::time::SystemTime::now(),
                etag,
                content_type: None,
                metadata: Default::default(),
            };
            send_properties(response, data, Some(&info), 0)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn S3_get_object(
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    get_conditions: *const S3GetConditions,
    start_byte: u64,
    byte_count: u64,
    _ctx: *mut S3RequestContext,
    handler: *const S3GetObjectHandler,
    data: *mut c_void,
) {
    // SAFETY: NULL or valid, per the header.
    let h = unsafe { handler.as_ref() };
    let response = h.map_or(std::ptr::null(), |h| &h.response_handler as *const _);
    // SAFETY: pointers as the header documents them.
    unsafe {
        run(response, data, &resource(bucket_context, key), || {
            let (target, bucket) = context(bucket_context)?;
            let key = req_str(key, "key")?;
            let client = client_for(&target)?;
            // libs3: a byte count of 0 means "to the end".
            let range = (start_byte > 0 || byte_count > 0).then(|| ByteRange::FromTo {
                first: start_byte,
                last: (byte_count > 0).then(|| start_byte.saturating_add(byte_count - 1)),
            });
            let mut obj = client.get_object(&bucket, &key, range)?;
            check_conditions(get_conditions.as_ref(), &obj.info)?;
            send_properties(response, data, Some(&obj.info), obj.length)?;
            let push = h.and_then(|h| h.get_object_data_callback);
            push_body(&mut obj.body, &key, |chunk| match push {
                // SAFETY: `chunk` is readable for its length (at most CHUNK).
                Some(cb) => callback_status(cb(chunk.len() as c_int, chunk.as_ptr().cast(), data)),
                None => Ok(()),
            })
        })
    }
}

/// libs3's GET conditions, checked against the object before any byte is
/// sent (-1 and NULL mean "no condition").
///
/// # Safety
/// The condition's strings are NULL or NUL-terminated.
unsafe fn check_conditions(c: Option<&S3GetConditions>, info: &ObjectInfo) -> Result<(), Failure> {
    let Some(c) = c else { return Ok(()) };
    let failed = || {
        Failure::S3(s3hpc_client::S3Error::new(
            s3hpc_client::ErrorCode::PreconditionFailed,
            format!("{}: a GET condition does not hold", info.key),
        ))
    };
    let mtime = unix_seconds(info.last_modified);
    if c.if_modified_since >= 0 && mtime <= c.if_modified_since {
        return Err(failed());
    }
    if c.if_not_modified_since >= 0 && mtime > c.if_not_modified_since {
        return Err(failed());
    }
    let bare = |e: &str| e.trim_matches('"').to_string();
    // SAFETY: forwarded contract.
    if let Some(m) = unsafe { opt_str(c.if_match_e_tag, "ifMatchETag") }? {
        if bare(&m) != bare(&info.etag) {
            return Err(failed());
        }
    }
    // SAFETY: forwarded contract.
    if let Some(m) = unsafe { opt_str(c.if_not_match_e_tag, "ifNotMatchETag") }? {
        if bare(&m) == bare(&info.etag) {
            return Err(failed());
        }
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn S3_head_object(
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        run(handler, data, &resource(bucket_context, key), || {
            let (target, bucket) = context(bucket_context)?;
            let key = req_str(key, "key")?;
            let info = client_for(&target)?.head_object(&bucket, &key)?;
            send_properties(handler, data, Some(&info), info.size)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn S3_delete_object(
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        run(handler, data, &resource(bucket_context, key), || {
            let (target, bucket) = context(bucket_context)?;
            let key = req_str(key, "key")?;
            client_for(&target)?.delete_object(&bucket, &key)?;
            send_properties(handler, data, None, 0)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn S3_copy_object(
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    destination_bucket: *const c_char,
    destination_key: *const c_char,
    put_properties: *const S3PutProperties,
    last_modified_return: *mut i64,
    e_tag_return_size: c_int,
    e_tag_return: *mut c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        run(handler, data, &resource(bucket_context, key), || {
            let (target, bucket) = context(bucket_context)?;
            let key = req_str(key, "key")?;
            let dst_bucket =
                opt_str(destination_bucket, "destinationBucket")?.unwrap_or_else(|| bucket.clone());
            let dst_key =
                opt_str(destination_key, "destinationKey")?.unwrap_or_else(|| key.clone());
            let opts = put_options(put_properties)?;
            let info = client_for(&target)?.copy_object(
                &bucket,
                &key,
                &dst_bucket,
                &dst_key,
                opts.as_ref(),
            )?;
            if !last_modified_return.is_null() {
                *last_modified_return = unix_seconds(info.last_modified);
            }
            if e_tag_return_size > 0 && !e_tag_return.is_null() {
                let etag = cstring(&info.etag);
                let bytes = etag.as_bytes();
                let n = bytes.len().min(e_tag_return_size as usize - 1);
                std::ptr::copy_nonoverlapping(bytes.as_ptr().cast(), e_tag_return, n);
                *e_tag_return.add(n) = 0;
            }
            send_properties(handler, data, Some(&info), 0)
        })
    }
}

/// libs3 2.0's buffer size for a query string:
/// `S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE`.
pub const S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE: usize =
    10 + 255 + 1024 * 3 + 17 + 32 + 10 + 32 + 12 + 28 + 1;

/// A presigned GET URL (SigV2 query string) for HTTP hosts; other hosts
/// answer ErrorNotImplemented and an empty string.
#[no_mangle]
pub unsafe extern "C" fn S3_generate_authenticated_query_string(
    buffer: *mut c_char,
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    expires: i64,
    resource: *const c_char,
) -> S3Status {
    if buffer.is_null() {
        return S3Status::InternalError;
    }
    // SAFETY: the header requires a buffer of
    // S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE bytes.
    unsafe { *buffer = 0 };
    let url = crate::core::guarded(|| {
        // SAFETY: pointers as the header documents them.
        unsafe {
            let (target, bucket) = context(bucket_context)?;
            let vhost = (*bucket_context).uri_style == S3_URI_STYLE_VIRTUAL_HOST;
            crate::core::presigned_url(
                &target,
                vhost,
                &bucket,
                opt_str(key, "key")?.as_deref(),
                expires,
                opt_str(resource, "resource")?.as_deref(),
            )
        }
    });
    match url {
        Ok(url) if url.len() < S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE => {
            // SAFETY: shorter than the buffer, NUL included.
            unsafe {
                std::ptr::copy_nonoverlapping(url.as_ptr().cast(), buffer, url.len());
                *buffer.add(url.len()) = 0;
            }
            S3Status::OK
        }
        Ok(_) => S3Status::UriTooLong,
        Err(f) => S3Status::from(&f),
    }
}
