//! Library setup, status helpers, bucket-name validation and request
//! contexts (requests run synchronously, so a context only has to exist).

use super::types::*;
use super::S3Status;
use s3hpc_libs3_core::service;
use std::ffi::{c_char, c_int, c_void};

#[no_mangle]
pub unsafe extern "C" fn S3_initialize(
    _user_agent_info: *const c_char,
    _flags: c_int,
    default_s3_host_name: *const c_char,
) -> S3Status {
    // SAFETY: NULL or a NUL-terminated string, per the header.
    unsafe { service::initialize::<Abi2>(default_s3_host_name) }
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
    unsafe { service::validate::<Abi2>(bucket_name, uri_style == S3_URI_STYLE_VIRTUAL_HOST) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_create_request_context(ret: *mut *mut S3RequestContext) -> S3Status {
    // SAFETY: a valid out pointer or NULL, per the header.
    unsafe { service::create_context::<Abi2>(ret) }
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

#[no_mangle]
pub unsafe extern "C" fn S3_runonce_request_context(
    _ctx: *mut S3RequestContext,
    remaining: *mut c_int,
) -> S3Status {
    // SAFETY: a valid out pointer or NULL.
    unsafe { service::run_once::<Abi2>(remaining) }
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
    unsafe { service::fdsets::<Abi2>(max_fd) }
}

#[no_mangle]
pub extern "C" fn S3_get_request_context_timeout(_ctx: *mut S3RequestContext) -> i64 {
    0
}
