//! The requests both ABIs make, from C arguments to callbacks: each shim's
//! exported function converts its own structs into [`TargetArgs`] /
//! [`ContextArgs`] and calls one of these.
//!
//! # Safety
//! Every function here takes the caller's C pointers as libs3's headers
//! describe them: NULL where allowed or valid, strings NUL-terminated,
//! callbacks honouring their signatures.
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

use crate::cabi::*;
use crate::request::{
    callback_status, cstring, lossy, opt_str, put_options, req_ref, run, send_properties,
    unix_seconds, ContextArgs, TargetArgs,
};
use crate::{client_for_ref, push_body, with_client, Failure, PullReader};
use s3hpc_client::{ByteRange, ListRequest, ObjectInfo, PutBody, S3Client};
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// A slice as C sees it: NULL when empty.
pub fn c_array<T>(v: &[T]) -> *const T {
    if v.is_empty() {
        std::ptr::null()
    } else {
        v.as_ptr()
    }
}

/// The client of a service-level call (no bucket context).
unsafe fn service_client(args: &TargetArgs) -> Result<Arc<dyn S3Client>, Failure> {
    // SAFETY: forwarded contract.
    client_for_ref(&unsafe { args.target_ref() }?)
}

/// The client and bucket of a bucket context (the bucket borrowed from
/// the caller's context).
pub(crate) unsafe fn context_client<'a>(
    ctx: &ContextArgs,
) -> Result<(Arc<dyn S3Client>, &'a str), Failure> {
    // SAFETY: forwarded contract.
    let (target, bucket) = unsafe { ctx.target_ref() }?;
    Ok((client_for_ref(&target)?, bucket))
}

pub unsafe fn list_service<A: Abi>(
    args: TargetArgs,
    handler: *const ListServiceHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: contract of this module.
    unsafe {
        let response = response_of(handler);
        run(
            response,
            data,
            || "/".to_string(),
            || {
                let buckets = service_client(&args)?.list_buckets()?;
                send_properties(response, data, None, 0)?;
                let Some(cb) = handler.as_ref().and_then(|h| h.list_service_callback) else {
                    return Ok(());
                };
                for b in buckets {
                    let name = cstring(&b.name);
                    callback_status::<A>(cb(
                        c"".as_ptr(),
                        c"".as_ptr(),
                        name.as_ptr(),
                        unix_seconds(b.created),
                        data,
                    ))?;
                }
                Ok(())
            },
        )
    }
}

/// What a bucket-level call does with the client and bucket name.
#[derive(Clone, Copy)]
pub enum BucketOp {
    /// Test, writing an empty location constraint (there are no
    /// locations here, as for US Standard) into the buffer.
    Test {
        location_size: c_int,
        location_return: *mut c_char,
    },
    Create,
    Delete,
}

pub unsafe fn bucket<A: Abi>(
    args: TargetArgs,
    bucket: *const c_char,
    op: BucketOp,
    handler: *const ResponseHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: contract of this module.
    unsafe {
        run(
            handler,
            data,
            || lossy(bucket),
            || {
                let client = service_client(&args)?;
                let name = req_ref(bucket, "bucketName")?;
                match op {
                    BucketOp::Test {
                        location_size,
                        location_return,
                    } => {
                        client.head_bucket(name)?;
                        if location_size > 0 && !location_return.is_null() {
                            *location_return = 0;
                        }
                    }
                    BucketOp::Create => client.create_bucket(name)?,
                    BucketOp::Delete => client.delete_bucket(name)?,
                }
                send_properties(handler, data, None, 0)
            },
        )
    }
}

pub unsafe fn list_bucket<A: Abi>(
    ctx: ContextArgs,
    prefix: *const c_char,
    marker: *const c_char,
    delimiter: *const c_char,
    maxkeys: c_int,
    handler: *const ListBucketHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: contract of this module.
    unsafe {
        let response = response_of(handler);
        run(
            response,
            data,
            || ctx.resource(std::ptr::null()),
            || {
                let (client, bucket) = context_client(&ctx)?;
                let req = ListRequest {
                    prefix: opt_str(prefix, "prefix")?.unwrap_or_default(),
                    delimiter: opt_str(delimiter, "delimiter")?.filter(|d| !d.is_empty()),
                    start_after: opt_str(marker, "marker")?.filter(|m| !m.is_empty()),
                    continuation_token: None,
                    max_keys: maxkeys.max(0) as usize,
                };
                let page = client.list_objects(bucket, &req)?;
                send_properties(response, data, None, 0)?;
                let Some(cb) = handler.as_ref().and_then(|h| h.list_bucket_callback) else {
                    return Ok(());
                };
                let keys: Vec<_> = page
                    .objects
                    .iter()
                    .map(|o| (cstring(&o.key), cstring(&o.etag)))
                    .collect();
                let contents: Vec<S3ListBucketContent> = page
                    .objects
                    .iter()
                    .zip(&keys)
                    .map(|(o, (k, e))| S3ListBucketContent {
                        key: k.as_ptr(),
                        last_modified: unix_seconds(o.last_modified),
                        e_tag: e.as_ptr(),
                        size: o.size,
                        owner_id: std::ptr::null(),
                        owner_display_name: std::ptr::null(),
                    })
                    .collect();
                let prefixes: Vec<_> = page.common_prefixes.iter().map(|p| cstring(p)).collect();
                let prefix_ptrs: Vec<*const c_char> = prefixes.iter().map(|p| p.as_ptr()).collect();
                // The v1 marker to continue from: the last key or common prefix
                // this page returned, whichever sorts later.
                let next = page.is_truncated.then(|| {
                    let last_key = page.objects.last().map(|o| o.key.as_str());
                    let last_prefix = page.common_prefixes.last().map(|p| p.as_str());
                    cstring(last_key.max(last_prefix).unwrap_or_default())
                });
                callback_status::<A>(cb(
                    page.is_truncated as c_int,
                    next.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
                    contents.len() as c_int,
                    c_array(&contents),
                    prefix_ptrs.len() as c_int,
                    c_array(&prefix_ptrs),
                    data,
                ))
            },
        )
    }
}

/// Runs a request on one object of a bucket context: finds the client,
/// bucket and key, runs `f`, and reports through `handler`.
pub(crate) unsafe fn on_object<A: Abi>(
    handler: *const ResponseHandler<A>,
    data: *mut c_void,
    ctx: ContextArgs,
    key: *const c_char,
    f: impl FnOnce(&dyn S3Client, &str, &str) -> Result<(), Failure>,
) {
    // SAFETY: contract of this module.
    unsafe {
        run(
            handler,
            data,
            || ctx.resource(key),
            || {
                let (target, bucket) = ctx.target_ref()?;
                let key = req_ref(key, "key")?;
                with_client(&target, |client| f(client, bucket, key))?
            },
        )
    }
}

/// A `Read` over the caller's put data callback, `len` bytes long.
pub(crate) fn pull_reader(
    pull: S3PutObjectDataCallback,
    len: u64,
    data: *mut c_void,
) -> PullReader<impl FnMut(&mut [u8]) -> i64> {
    PullReader::new(len, move |buf: &mut [u8]| match pull {
        // SAFETY: `buf` is writable for `buf.len()` bytes (at most
        // CHUNK, as PullReader guarantees).
        Some(cb) => (unsafe { cb(buf.len() as c_int, buf.as_mut_ptr().cast(), data) }) as i64,
        None => 0,
    })
}

/// What a put or part upload knows of the object it wrote, for the
/// properties callback (which does not show the key).
pub(crate) fn written(size: u64, etag: String) -> ObjectInfo {
    ObjectInfo::new(String::new(), size, std::time::SystemTime::now(), etag)
}

pub unsafe fn put_object<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    content_length: u64,
    put_properties: *const PutProperties,
    handler: *const PutObjectHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: contract of this module.
    unsafe {
        let response = response_of(handler);
        on_object(response, data, ctx, key, |client, bucket, key| {
            let opts = put_options(put_properties)?.unwrap_or_default();
            let pull = handler.as_ref().and_then(|h| h.put_object_data_callback);
            if pull.is_none() && content_length > 0 {
                return Err(Failure::BadArgument("putObjectDataCallback"));
            }
            let mut reader = pull_reader(pull, content_length, data);
            let body = PutBody::Stream {
                reader: &mut reader,
                len: Some(content_length),
            };
            let put = client.put_object(bucket, key, body, &opts);
            if reader.aborted {
                return Err(Failure::Aborted);
            }
            let info = written(content_length, put?);
            send_properties(response, data, Some(&info), 0)
        })
    }
}

pub unsafe fn get_object<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    get_conditions: *const S3GetConditions,
    start_byte: u64,
    byte_count: u64,
    handler: *const GetObjectHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: contract of this module.
    unsafe {
        let response = response_of(handler);
        on_object(response, data, ctx, key, |client, bucket, key| {
            // libs3: a byte count of 0 means "to the end".
            let range = (start_byte > 0 || byte_count > 0).then(|| ByteRange::FromTo {
                first: start_byte,
                last: (byte_count > 0).then(|| start_byte.saturating_add(byte_count - 1)),
            });
            let mut obj = client.get_object(bucket, key, range)?;
            check_conditions(get_conditions.as_ref(), &obj.info)?;
            send_properties(response, data, Some(&obj.info), obj.length)?;
            let push = handler.as_ref().and_then(|h| h.get_object_data_callback);
            push_body(&mut *obj.body, obj.length, key, |chunk| match push {
                // SAFETY: `chunk` is readable for its length (at most CHUNK).
                Some(cb) => {
                    callback_status::<A>(cb(chunk.len() as c_int, chunk.as_ptr().cast(), data))
                }
                None => Ok(()),
            })
        })
    }
}

/// libs3's GET conditions, checked against the object before any byte is
/// sent (-1 and NULL mean "no condition").
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

pub unsafe fn head_object<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    handler: *const ResponseHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: contract of this module.
    unsafe {
        on_object(handler, data, ctx, key, |client, bucket, key| {
            let info = client.head_object(bucket, key)?;
            send_properties(handler, data, Some(&info), info.size)
        })
    }
}

pub unsafe fn delete_object<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    handler: *const ResponseHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: contract of this module.
    unsafe {
        on_object(handler, data, ctx, key, |client, bucket, key| {
            client.delete_object(bucket, key)?;
            send_properties(handler, data, None, 0)
        })
    }
}

/// Where a copy's results go: the caller's out pointers (each may be
/// NULL).
#[derive(Clone, Copy)]
pub struct CopyReturn {
    pub last_modified: *mut i64,
    pub e_tag_size: c_int,
    pub e_tag: *mut c_char,
}

pub unsafe fn copy_object<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    destination_bucket: *const c_char,
    destination_key: *const c_char,
    put_properties: *const PutProperties,
    out: CopyReturn,
    handler: *const ResponseHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: contract of this module.
    unsafe {
        on_object(handler, data, ctx, key, |client, bucket, key| {
            let (dst_bucket, dst_key) =
                destination(bucket, key, destination_bucket, destination_key)?;
            let opts = put_options(put_properties)?;
            let info = client.copy_object(bucket, key, &dst_bucket, &dst_key, opts.as_ref())?;
            if !out.last_modified.is_null() {
                *out.last_modified = unix_seconds(info.last_modified);
            }
            copy_to_buffer(&info.etag, out.e_tag, out.e_tag_size);
            send_properties(handler, data, Some(&info), 0)
        })
    }
}

/// A copy's destination: the given bucket and key, or the source's where
/// NULL.
pub(crate) unsafe fn destination(
    bucket: &str,
    key: &str,
    destination_bucket: *const c_char,
    destination_key: *const c_char,
) -> Result<(String, String), Failure> {
    // SAFETY: NULL or NUL-terminated, per the contract.
    unsafe {
        Ok((
            opt_str(destination_bucket, "destinationBucket")?.unwrap_or_else(|| bucket.into()),
            opt_str(destination_key, "destinationKey")?.unwrap_or_else(|| key.into()),
        ))
    }
}

/// Writes `s` into a C buffer of `size` bytes, cut to fit, NUL-terminated.
/// Nothing happens for a NULL or empty buffer.
pub unsafe fn copy_to_buffer(s: &str, buffer: *mut c_char, size: c_int) {
    if size <= 0 || buffer.is_null() {
        return;
    }
    let bytes = s.as_bytes();
    let n = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let n = n.min(size as usize - 1);
    // SAFETY: the caller's buffer holds `size` bytes; `n < size`.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr().cast(), buffer, n);
        *buffer.add(n) = 0;
    }
}

/// Answers a call outside the data path: not-supported through the
/// complete callback, naming the call.
pub unsafe fn not_supported<A: Abi>(
    handler: *const ResponseHandler<A>,
    data: *mut c_void,
    call: &'static str,
) {
    // SAFETY: contract of this module.
    unsafe {
        run(handler, data, String::new, || {
            Err(Failure::NotSupported(call))
        })
    }
}
