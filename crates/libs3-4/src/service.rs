//! Library setup, status helpers, bucket-name validation, request
//! contexts (requests run synchronously: a context only has to exist) and
//! presigned URLs.

use super::types::*;
use super::S3Status;
use s3hpc_libs3_core::request::opt_str;
use s3hpc_libs3_core::service;
use std::ffi::{c_char, c_int, c_void};

s3hpc_libs3_core::shared_service_exports!(Abi4);

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

/// As [`S3_runall_request_context`].
#[no_mangle]
pub extern "C" fn S3_process_request_context(_ctx: *mut S3RequestContext) -> S3Status {
    S3Status::OK
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
