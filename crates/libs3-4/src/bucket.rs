//! Service and bucket calls: list service, test/create/delete bucket, list
//! bucket. Timeouts are accepted and not applied.

use super::types::*;
use s3hpc_libs3_core::calls::{self, BucketOp};
use s3hpc_libs3_core::request::TargetArgs;
use std::ffi::{c_char, c_int, c_void};

#[no_mangle]
pub unsafe extern "C" fn S3_list_service(
    protocol: S3Protocol,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    security_token: *const c_char,
    host_name: *const c_char,
    auth_region: *const c_char,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ListServiceHandler,
    data: *mut c_void,
) {
    let args = TargetArgs {
        protocol,
        access_key_id,
        secret_access_key,
        security_token,
        host_name,
        auth_region,
    };
    // SAFETY: pointers as the header documents them.
    unsafe { calls::list_service(args, handler, data) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_test_bucket(
    protocol: S3Protocol,
    _uri_style: S3UriStyle,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    security_token: *const c_char,
    host_name: *const c_char,
    bucket_name: *const c_char,
    auth_region: *const c_char,
    location_size: c_int,
    location_return: *mut c_char,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    let args = TargetArgs {
        protocol,
        access_key_id,
        secret_access_key,
        security_token,
        host_name,
        auth_region,
    };
    let op = BucketOp::Test {
        location_size,
        location_return,
    };
    // SAFETY: pointers as the header documents them.
    unsafe { calls::bucket(args, bucket_name, op, handler, data) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_create_bucket(
    protocol: S3Protocol,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    security_token: *const c_char,
    host_name: *const c_char,
    bucket_name: *const c_char,
    auth_region: *const c_char,
    _canned_acl: S3CannedAcl,
    _location_constraint: *const c_char,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    let args = TargetArgs {
        protocol,
        access_key_id,
        secret_access_key,
        security_token,
        host_name,
        auth_region,
    };
    // SAFETY: pointers as the header documents them.
    unsafe { calls::bucket(args, bucket_name, BucketOp::Create, handler, data) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_delete_bucket(
    protocol: S3Protocol,
    _uri_style: S3UriStyle,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    security_token: *const c_char,
    host_name: *const c_char,
    bucket_name: *const c_char,
    auth_region: *const c_char,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    let args = TargetArgs {
        protocol,
        access_key_id,
        secret_access_key,
        security_token,
        host_name,
        auth_region,
    };
    // SAFETY: pointers as the header documents them.
    unsafe { calls::bucket(args, bucket_name, BucketOp::Delete, handler, data) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_list_bucket(
    bucket_context: *const S3BucketContext,
    prefix: *const c_char,
    marker: *const c_char,
    delimiter: *const c_char,
    maxkeys: c_int,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ListBucketHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        let ctx = context(bucket_context);
        calls::list_bucket(ctx, prefix, marker, delimiter, maxkeys, handler, data)
    }
}
