//! Object calls: put, get, head, delete, copy. Timeouts are accepted and
//! not applied.

use super::types::*;
use s3hpc_libs3_core::calls::{self, CopyReturn};
use std::ffi::{c_char, c_int, c_void};

#[no_mangle]
pub unsafe extern "C" fn S3_put_object(
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    content_length: u64,
    props: *const S3PutProperties,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3PutObjectHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        let ctx = context(bucket_context);
        let props = put_properties(props);
        calls::put_object(ctx, key, content_length, props, handler, data)
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
    _timeout_ms: c_int,
    handler: *const S3GetObjectHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        let ctx = context(bucket_context);
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
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe { calls::head_object(context(bucket_context), key, handler, data) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_delete_object(
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe { calls::delete_object(context(bucket_context), key, handler, data) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_copy_object(
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    destination_bucket: *const c_char,
    destination_key: *const c_char,
    props: *const S3PutProperties,
    last_modified_return: *mut i64,
    e_tag_return_size: c_int,
    e_tag_return: *mut c_char,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
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
            context(bucket_context),
            key,
            destination_bucket,
            destination_key,
            put_properties(props),
            out,
            handler,
            data,
        )
    }
}
