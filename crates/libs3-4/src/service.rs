//! Library setup, status helpers, bucket-name validation, request
//! contexts (requests run synchronously: a context only has to exist) and
//! presigned URLs.

use super::types::*;
use super::S3Status;
use s3hpc_libs3_core::request::opt_str;
use s3hpc_libs3_core::service;
use std::ffi::{c_char, c_int, c_void};

#[no_mangle]
pub unsafe extern "C" fn S3_initialize(
    _user_agent_info: *const c_char,
    _flags: c_int,
    default_s3_host_name: *const c_char,
) -> S3Status {
    // SAFETY: NULL or a NUL-terminated string, per the header.
    unsafe { service::initialize::<Abi4>(default_s3_host_name) }
}

#[no_mangle]
pub extern "C" fn S3_deinitialize() {
    service::deinitialize()
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
    // SAFETY: NULL or a NUL-terminated string, per the header.
    unsafe { service::validate::<Abi4>(bucket_name, uri_style == S3_URI_STYLE_VIRTUAL_HOST) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_create_request_context(ret: *mut *mut S3RequestContext) -> S3Status {
    // SAFETY: a valid out pointer or NULL, per the header.
    unsafe { service::create_context::<Abi4>(ret) }
}

/// There is no curl here: the multi handle and setup callback are never
/// used.
#[no_mangle]
pub unsafe extern "C" fn S3_create_request_context_ex(
    ret: *mut *mut S3RequestContext,
    _curl_multi: *mut c_void,
    _setup_curl_callback: *mut c_void,
    _setup_curl_callback_data: *mut c_void,
) -> S3Status {
    // SAFETY: a valid out pointer or NULL, per the header.
    unsafe { service::create_context::<Abi4>(ret) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_destroy_request_context(ctx: *mut S3RequestContext) {
    // SAFETY: made by S3_create_request_context, per the header.
    unsafe { service::destroy_context(ctx) }
}

/// Requests ran when they were issued: nothing is left to run.
#[no_mangle]
pub extern "C" fn S3_runall_request_context(_ctx: *mut S3RequestContext) -> S3Status {
    S3Status::OK
}

/// As [`S3_runall_request_context`].
#[no_mangle]
pub extern "C" fn S3_process_request_context(_ctx: *mut S3RequestContext) -> S3Status {
    S3Status::OK
}

#[no_mangle]
pub unsafe extern "C" fn S3_runonce_request_context(
    _ctx: *mut S3RequestContext,
    remaining: *mut c_int,
) -> S3Status {
    // SAFETY: a valid out pointer or NULL.
    unsafe { service::run_once::<Abi4>(remaining) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_get_request_context_fdsets(
    _ctx: *mut S3RequestContext,
    _read: *mut c_void,
    _write: *mut c_void,
    _except: *mut c_void,
    max_fd: *mut c_int,
) -> S3Status {
    // SAFETY: a valid out pointer or NULL.
    unsafe { service::fdsets::<Abi4>(max_fd) }
}

#[no_mangle]
pub extern "C" fn S3_get_request_context_timeout(_ctx: *mut S3RequestContext) -> i64 {
    0
}

/// Accepted: TLS settings belong to the HTTP client, which verifies peers.
#[no_mangle]
pub extern "C" fn S3_set_request_context_verify_peer(
    _ctx: *mut S3RequestContext,
    _verify_peer: c_int,
) {
}

/// A SigV4 presigned URL for HTTP hosts; other hosts answer NotSupported
/// and an empty string.
#[no_mangle]
pub unsafe extern "C" fn S3_generate_authenticated_query_string(
    buffer: *mut c_char,
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    expires: c_int,
    resource: *const c_char,
    http_method: *const c_char,
) -> S3Status {
    // SAFETY: pointers as the header documents them.
    unsafe {
        let ctx = context(bucket_context);
        service::query_string::<Abi4>(buffer, || {
            let (target, bucket) = ctx.target()?;
            s3hpc_libs3_core::presigned_url_v4(
                &target,
                ctx.virtual_host(),
                &bucket,
                &opt_str(key, "key")?.unwrap_or_default(),
                expires as i64,
                opt_str(resource, "resource")?.as_deref(),
                &opt_str(http_method, "httpMethod")?.unwrap_or_default(),
            )
        })
    }
}
