//! Object calls: put, get, head, delete, copy, and presigned URLs.

use super::types::*;
use super::S3Status;
use s3hpc_libs3_core::calls::{self, CopyReturn};
use s3hpc_libs3_core::request::{opt_str, ContextArgs};
use s3hpc_libs3_core::service;
use std::ffi::{c_char, c_int, c_void};

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
    let ctx = ContextArgs::v2(bucket_context);
    // SAFETY: pointers as the header documents them.
    unsafe { calls::put_object(ctx, key, content_length, put_properties, handler, data) }
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
    let ctx = ContextArgs::v2(bucket_context);
    // SAFETY: pointers as the header documents them.
    unsafe {
        calls::get_object(
            ctx,
            key,
            get_conditions,
            start_byte,
            byte_count,
            handler,
            data,
        )
    }
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
    unsafe { calls::head_object(ContextArgs::v2(bucket_context), key, handler, data) }
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
    unsafe { calls::delete_object(ContextArgs::v2(bucket_context), key, handler, data) }
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
    let out = CopyReturn {
        last_modified: last_modified_return,
        e_tag_size: e_tag_return_size,
        e_tag: e_tag_return,
    };
    // SAFETY: pointers as the header documents them.
    unsafe {
        calls::copy_object(
            ContextArgs::v2(bucket_context),
            key,
            destination_bucket,
            destination_key,
            put_properties,
            out,
            handler,
            data,
        )
    }
}

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
    let ctx = ContextArgs::v2(bucket_context);
    // SAFETY: pointers as the header documents them.
    unsafe {
        service::query_string::<Abi2>(buffer, || {
            let (target, bucket) = ctx.target()?;
            s3hpc_libs3_core::presigned_url_v2(
                &target,
                ctx.virtual_host(),
                &bucket,
                opt_str(key, "key")?.as_deref(),
                expires,
                opt_str(resource, "resource")?.as_deref(),
            )
        })
    }
}
