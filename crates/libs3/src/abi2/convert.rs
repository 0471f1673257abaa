//! Conversions between C arguments and the core, and the two callbacks
//! every request makes (properties, then complete).

use super::types::*;
use super::S3Status;
use crate::core::{guarded, Failure, Target};
use s3hpc_client::{ObjectInfo, PutOptions};
use std::ffi::{c_char, c_void, CStr, CString};
use std::time::UNIX_EPOCH;

/// A C string argument: `None` for NULL, an error if not UTF-8.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub unsafe fn opt_str(p: *const c_char, what: &'static str) -> Result<Option<String>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(|s| Some(s.to_string()))
        .map_err(|_| Failure::BadArgument(what))
}

/// A C string argument that must be present.
///
/// # Safety
/// As [`opt_str`].
pub unsafe fn req_str(p: *const c_char, what: &'static str) -> Result<String, Failure> {
    // SAFETY: forwarded contract.
    unsafe { opt_str(p, what) }?.ok_or(Failure::BadArgument(what))
}

/// A string for C; an interior NUL (never produced by a valid key) cuts it.
pub fn cstring(s: &str) -> CString {
    let end = s.find('\0').unwrap_or(s.len());
    CString::new(&s[..end]).unwrap_or_default()
}

/// The target of a call that passes its host and keys one by one.
///
/// # Safety
/// Each pointer is NULL or a NUL-terminated string.
pub unsafe fn target(
    protocol: S3Protocol,
    access: *const c_char,
    secret: *const c_char,
    host: *const c_char,
) -> Result<Target, Failure> {
    // SAFETY: forwarded contract.
    unsafe {
        Ok(Target {
            host: opt_str(host, "hostName")?,
            https: protocol == S3_PROTOCOL_HTTPS,
            access_key: opt_str(access, "accessKeyId")?.unwrap_or_default(),
            secret_key: opt_str(secret, "secretAccessKey")?.unwrap_or_default(),
        })
    }
}

/// The target and bucket of a bucket context.
///
/// # Safety
/// `ctx` is NULL or points to a valid `S3BucketContext`.
pub unsafe fn context(ctx: *const S3BucketContext) -> Result<(Target, String), Failure> {
    // SAFETY: the caller guarantees `ctx` is NULL or valid.
    let ctx = unsafe { ctx.as_ref() }.ok_or(Failure::BadArgument("bucketContext"))?;
    // SAFETY: the context's strings are NULL or NUL-terminated.
    unsafe {
        let t = target(
            ctx.protocol,
            ctx.access_key_id,
            ctx.secret_access_key,
            ctx.host_name,
        )?;
        Ok((t, req_str(ctx.bucket_name, "bucketName")?))
    }
}

/// Put options from `S3PutProperties` (content type and metadata; the
/// other fields are HTTP response headers this store does not keep).
///
/// # Safety
/// `p` is NULL or points to valid put properties.
pub unsafe fn put_options(p: *const S3PutProperties) -> Result<Option<PutOptions>, Failure> {
    // SAFETY: NULL or valid, per the contract.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return Ok(None);
    };
    let mut opts = PutOptions {
        // SAFETY: string fields are NULL or NUL-terminated.
        content_type: unsafe { opt_str(p.content_type, "contentType") }?,
        ..Default::default()
    };
    if p.meta_data_count > 0 && !p.meta_data.is_null() {
        // SAFETY: `meta_data` holds `meta_data_count` entries.
        let nv = unsafe { std::slice::from_raw_parts(p.meta_data, p.meta_data_count as usize) };
        for e in nv {
            // SAFETY: each entry's strings are NUL-terminated.
            let name = unsafe { req_str(e.name, "metaData name") }?;
            let value = unsafe { opt_str(e.value, "metaData value") }?.unwrap_or_default();
            opts.metadata.insert(name.to_ascii_lowercase(), value);
        }
    }
    Ok(Some(opts))
}

pub fn unix_seconds(t: std::time::SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

/// Calls the properties callback, if any, with what is known of the object
/// (`length`: the bytes this response carries). A non-OK answer stops the
/// request with that status, as in libs3.
///
/// # Safety
/// `handler` is NULL or valid; the callback honours its signature.
pub unsafe fn send_properties(
    handler: *const S3ResponseHandler,
    data: *mut c_void,
    info: Option<&ObjectInfo>,
    length: u64,
) -> Result<(), Failure> {
    // SAFETY: NULL or valid, per the contract.
    let Some(cb) = (unsafe { handler.as_ref() }).and_then(|h| h.properties_callback) else {
        return Ok(());
    };
    let server = c"s3hpc";
    let etag = info.map(|i| cstring(&i.etag));
    let ctype = info.and_then(|i| i.content_type.as_deref()).map(cstring);
    let meta: Vec<(CString, CString)> = info
        .map(|i| {
            i.metadata
                .iter()
                .map(|(k, v)| (cstring(k), cstring(v)))
                .collect()
        })
        .unwrap_or_default();
    let nv: Vec<S3NameValue> = meta
        .iter()
        .map(|(k, v)| S3NameValue {
            name: k.as_ptr(),
            value: v.as_ptr(),
        })
        .collect();
    let props = S3ResponseProperties {
        request_id: std::ptr::null(),
        request_id2: std::ptr::null(),
        content_type: ctype.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        content_length: length,
        server: server.as_ptr(),
        e_tag: etag.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        last_modified: info.map_or(-1, |i| unix_seconds(i.last_modified)),
        meta_data_count: nv.len() as i32,
        meta_data: if nv.is_empty() {
            std::ptr::null()
        } else {
            nv.as_ptr()
        },
    };
    // SAFETY: `props` and everything it points to live across the call.
    let status = unsafe { cb(&props, data) };
    callback_status(status)
}

/// A callback's answer as a request outcome.
pub fn callback_status(status: S3Status) -> Result<(), Failure> {
    if status == S3Status::OK {
        Ok(())
    } else {
        Err(Failure::Callback(status.0))
    }
}

/// Runs one request (panics caught) and reports its outcome through the
/// complete callback, exactly once.
///
/// # Safety
/// `handler` is NULL or valid; the callback honours its signature.
pub unsafe fn run(
    handler: *const S3ResponseHandler,
    data: *mut c_void,
    resource: &str,
    request: impl FnOnce() -> Result<(), Failure>,
) {
    let outcome = guarded(request);
    // SAFETY: NULL or valid, per the contract.
    let Some(cb) = (unsafe { handler.as_ref() }).and_then(|h| h.complete_callback) else {
        return;
    };
    match outcome {
        // SAFETY: NULL details are allowed on success.
        Ok(()) => unsafe { cb(S3Status::OK, std::ptr::null(), data) },
        Err(f) => {
            let message = cstring(&f.message());
            let resource = cstring(resource);
            let details = S3ErrorDetails {
                message: message.as_ptr(),
                resource: resource.as_ptr(),
                further_details: std::ptr::null(),
                extra_details_count: 0,
                extra_details: std::ptr::null_mut(),
            };
            // SAFETY: `details` and its strings live across the call.
            unsafe { cb(S3Status::from(&f), &details, data) }
        }
    }
}
