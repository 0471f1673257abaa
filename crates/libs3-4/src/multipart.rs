//! Multipart uploads: initiate, upload part, complete, abort, list parts,
//! list uploads, and copying a byte range into a part.

use super::types::*;
use s3hpc_libs3_core::calls::CopyReturn;
use s3hpc_libs3_core::multipart::{self as mp, PartCopy, UploadsQuery};
use std::ffi::{c_char, c_int, c_ulong, c_void};

#[no_mangle]
pub unsafe extern "C" fn S3_initiate_multipart(
    bucket_context: *mut S3BucketContext,
    key: *const c_char,
    props: *mut S3PutProperties,
    handler: *mut S3MultipartInitialHandler,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        let ctx = context(bucket_context);
        mp::initiate(ctx, key, put_properties(props), handler, data)
    }
}

/// The put properties are accepted: a part has no properties of its own.
#[no_mangle]
pub unsafe extern "C" fn S3_upload_part(
    bucket_context: *mut S3BucketContext,
    key: *const c_char,
    _props: *mut S3PutProperties,
    handler: *mut S3PutObjectHandler,
    seq: c_int,
    upload_id: *const c_char,
    part_content_length: c_int,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        let ctx = context(bucket_context);
        mp::upload_part(ctx, key, handler, seq, upload_id, part_content_length, data)
    }
}

#[no_mangle]
pub unsafe extern "C" fn S3_complete_multipart_upload(
    bucket_context: *mut S3BucketContext,
    key: *const c_char,
    handler: *mut S3MultipartCommitHandler,
    upload_id: *const c_char,
    content_length: c_int,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        let ctx = context(bucket_context);
        mp::complete(ctx, key, handler, upload_id, content_length, data)
    }
}

/// The encoding type is accepted: keys come back as they are.
#[no_mangle]
pub unsafe extern "C" fn S3_list_parts(
    bucket_context: *mut S3BucketContext,
    key: *const c_char,
    part_number_marker: *const c_char,
    upload_id: *const c_char,
    _encoding_type: *const c_char,
    max_parts: c_int,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ListPartsHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        let ctx = context(bucket_context);
        mp::list_parts(
            ctx,
            key,
            part_number_marker,
            upload_id,
            max_parts,
            handler,
            data,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn S3_abort_multipart_upload(
    bucket_context: *mut S3BucketContext,
    key: *const c_char,
    upload_id: *const c_char,
    _timeout_ms: c_int,
    handler: *mut S3AbortMultipartUploadHandler,
) {
    // SAFETY: pointers as the header documents them.
    unsafe { mp::abort(context(bucket_context), key, upload_id, handler) }
}

/// The encoding type is accepted: keys come back as they are.
#[no_mangle]
pub unsafe extern "C" fn S3_list_multipart_uploads(
    bucket_context: *mut S3BucketContext,
    prefix: *const c_char,
    key_marker: *const c_char,
    upload_id_marker: *const c_char,
    _encoding_type: *const c_char,
    delimiter: *const c_char,
    max_uploads: c_int,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ListMultipartUploadsHandler,
    data: *mut c_void,
) {
    let q = UploadsQuery {
        prefix,
        key_marker,
        upload_id_marker,
        delimiter,
        max_uploads,
    };
    // SAFETY: pointers as the header documents them.
    unsafe { mp::list_uploads(context(bucket_context), q, handler, data) }
}

#[no_mangle]
pub unsafe extern "C" fn S3_copy_object_range(
    bucket_context: *const S3BucketContext,
    key: *const c_char,
    destination_bucket: *const c_char,
    destination_key: *const c_char,
    part_no: c_int,
    upload_id: *const c_char,
    start_offset: c_ulong,
    count: c_ulong,
    _props: *const S3PutProperties,
    last_modified_return: *mut i64,
    e_tag_return_size: c_int,
    e_tag_return: *mut c_char,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // c_ulong is narrower than u64 on some targets.
    #[allow(clippy::useless_conversion)]
    let part = PartCopy {
        part_number: part_no,
        upload_id,
        start: u64::from(start_offset),
        count: u64::from(count),
    };
    let out = CopyReturn {
        last_modified: last_modified_return,
        e_tag_size: e_tag_return_size,
        e_tag: e_tag_return,
    };
    // SAFETY: pointers as the header documents them.
    unsafe {
        mp::copy_range(
            context(bucket_context),
            key,
            destination_bucket,
            destination_key,
            part,
            out,
            handler,
            data,
        )
    }
}
