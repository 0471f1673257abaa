//! Library setup, status helpers, bucket-name validation and request
//! contexts (requests run synchronously, so a context only has to exist).

use super::convert::opt_str;
use super::types::*;
use super::S3Status;
use crate::core::{forget_clients, set_default_host};
use std::ffi::{c_char, c_int, c_void};

#[no_mangle]
pub unsafe extern "C" fn S3_initialize(
    _user_agent_info: *const c_char,
    _flags: c_int,
    default_s3_host_name: *const c_char,
) -> S3Status {
    // SAFETY: NULL or a NUL-terminated string, per the header.
    match unsafe { opt_str(default_s3_host_name, "defaultS3HostName") } {
        Ok(host) => {
            set_default_host(host);
            S3Status::OK
        }
        Err(_) => S3Status::InternalError,
    }
}

#[no_mangle]
pub extern "C" fn S3_deinitialize() {
    // Dropping clients closes files and connections; never unwind into C.
    let _ = std::panic::catch_unwind(|| {
        forget_clients();
        set_default_host(None);
    });
}

#[no_mangle]
pub extern "C" fn S3_get_status_name(status: S3Status) -> *const c_char {
    status.name_ptr()
}

#[no_mangle]
pub extern "C" fn S3_status_is_retryable(status: S3Status) -> c_int {
    status.is_retryable() as c_int
}

#[no_mangle]
pub unsafe extern "C" fn S3_validate_bucket_name(
    bucket_name: *const c_char,
    uri_style: S3UriStyle,
) -> S3Status {
    if bucket_name.is_null() {
        return S3Status::InvalidBucketNameTooShort;
    }
    // SAFETY: a NUL-terminated string, per the header.
    let name = unsafe { std::ffi::CStr::from_ptr(bucket_name) }.to_bytes();
    validate_bucket_name(name, uri_style == S3_URI_STYLE_VIRTUAL_HOST)
}

/// libs3's rules: 3..=255 bytes of `[A-Za-z0-9._-]` for path style; DNS
/// rules (3..=63, lower case, no `..`, `.-`, `-.`) for virtual-host style.
pub fn validate_bucket_name(name: &[u8], virtual_host: bool) -> S3Status {
    let max = if virtual_host { 63 } else { 255 };
    if name.len() < 3 {
        return S3Status::InvalidBucketNameTooShort;
    }
    if name.len() > max {
        return S3Status::InvalidBucketNameTooLong;
    }
    let first_ok = |c: u8| {
        c.is_ascii_digit() || c.is_ascii_lowercase() || !virtual_host && c.is_ascii_uppercase()
    };
    if !first_ok(name[0]) {
        return S3Status::InvalidBucketNameFirstCharacter;
    }
    for (i, &c) in name.iter().enumerate() {
        if !(first_ok(c) || c == b'.' || c == b'-' || !virtual_host && c == b'_') {
            return S3Status::InvalidBucketNameCharacter;
        }
        if virtual_host && i > 0 {
            let pair = [name[i - 1], c];
            if matches!(&pair, b".." | b".-" | b"-.") {
                return S3Status::InvalidBucketNameCharacterSequence;
            }
        }
    }
    let dots = name.iter().filter(|&&c| c == b'.').count();
    if dots == 3 && name.iter().all(|c| c.is_ascii_digit() || *c == b'.') {
        return S3Status::InvalidBucketNameDotQuadNotation;
    }
    S3Status::OK
}

#[no_mangle]
pub unsafe extern "C" fn S3_create_request_context(ret: *mut *mut S3RequestContext) -> S3Status {
    if ret.is_null() {
        return S3Status::InternalError;
    }
    let ctx = Box::into_raw(Box::new(S3RequestContext::new()));
    // SAFETY: `ret` is a valid out pointer, per the header.
    unsafe { *ret = ctx };
    S3Status::OK
}

#[no_mangle]
pub unsafe extern "C" fn S3_destroy_request_context(ctx: *mut S3RequestContext) {
    if !ctx.is_null() {
        // SAFETY: made by S3_create_request_context, destroyed once.
        drop(unsafe { Box::from_raw(ctx) });
    }
}

/// Requests ran when they were issued: nothing is left to run.
#[no_mangle]
pub extern "C" fn S3_runall_request_context(_ctx: *mut S3RequestContext) -> S3Status {
    S3Status::OK
}

#[no_mangle]
pub unsafe extern "C" fn S3_runonce_request_context(
    _ctx: *mut S3RequestContext,
    remaining: *mut c_int,
) -> S3Status {
    if !remaining.is_null() {
        // SAFETY: a valid out pointer when not NULL.
        unsafe { *remaining = 0 };
    }
    S3Status::OK
}

/// No sockets wait in a context: empty sets, `maxFd` -1.
#[no_mangle]
pub unsafe extern "C" fn S3_get_request_context_fdsets(
    _ctx: *mut S3RequestContext,
    _read: *mut c_void,
    _write: *mut c_void,
    _except: *mut c_void,
    max_fd: *mut c_int,
) -> S3Status {
    if !max_fd.is_null() {
        // SAFETY: a valid out pointer when not NULL.
        unsafe { *max_fd = -1 };
    }
    S3Status::OK
}

#[no_mangle]
pub extern "C" fn S3_get_request_context_timeout(_ctx: *mut S3RequestContext) -> i64 {
    0
}
