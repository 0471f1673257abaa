//! Service and bucket calls: list service, test/create/delete bucket, list
//! bucket.

use super::types::*;
use s3hpc_libs3_core::calls::{self, BucketOp};
use s3hpc_libs3_core::request::{ContextArgs, TargetArgs};
use std::ffi::{c_char, c_int, c_void};

#[no_mangle]
pub unsafe extern "C" fn S3_list_service(
    protocol: S3Protocol,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    host_name: *const c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ListServiceHandler,
    data: *mut c_void,
) {
    let args = TargetArgs::v2(protocol, access_key_id, secret_access_key, host_name);
    // SAFETY: pointers as the header documents them.
    unsafe { calls::list_service(args, handler, data) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_test_bucket(
    protocol: S3Protocol,
    _uri_style: S3UriStyle,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    host_name: *const c_char,
    bucket_name: *const c_char,
    location_size: c_int,
    location_return: *mut c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    let args = TargetArgs::v2(protocol, access_key_id, secret_access_key, host_name);
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
    host_name: *const c_char,
    bucket_name: *const c_char,
    _canned_acl: S3CannedAcl,
    _location_constraint: *const c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    let args = TargetArgs::v2(protocol, access_key_id, secret_access_key, host_name);
    // SAFETY: pointers as the header documents them.
    unsafe { calls::bucket(args, bucket_name, BucketOp::Create, handler, data) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_delete_bucket(
    protocol: S3Protocol,
    _uri_style: S3UriStyle,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    host_name: *const c_char,
    bucket_name: *const c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    let args = TargetArgs::v2(protocol, access_key_id, secret_access_key, host_name);
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
    handler: *const S3ListBucketHandler,
    data: *mut c_void,
) {
    let ctx = ContextArgs::v2(bucket_context);
    // SAFETY: pointers as the header documents them.
    unsafe { calls::list_bucket(ctx, prefix, marker, delimiter, maxkeys, handler, data) }
}
