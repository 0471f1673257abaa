//! Calls outside the data path (ACLs, lifecycle, access logging): they
//! finish with S3StatusNotSupported through the complete callback (or
//! their return value), never succeed silently.

use super::types::*;
use super::S3Status;
use s3hpc_libs3_core::calls::not_supported;
use std::ffi::{c_char, c_int, c_void};

#[no_mangle]
pub extern "C" fn S3_convert_acl(
    _acl_xml: *mut c_char,
    _owner_id: *mut c_char,
    _owner_display_name: *mut c_char,
    _acl_grant_count_return: *mut c_int,
    _acl_grants: *mut S3AclGrant,
) -> S3Status {
    S3Status::NotSupported
}

#[no_mangle]
pub unsafe extern "C" fn S3_get_acl(
    _bucket_context: *const S3BucketContext,
    _key: *const c_char,
    _owner_id: *mut c_char,
    _owner_display_name: *mut c_char,
    _acl_grant_count_return: *mut c_int,
    _acl_grants: *mut S3AclGrant,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: `handler` is NULL or valid, per the header.
    unsafe { not_supported(handler, data, "S3_get_acl") }
}

#[no_mangle]
pub unsafe extern "C" fn S3_set_acl(
    _bucket_context: *const S3BucketContext,
    _key: *const c_char,
    _owner_id: *const c_char,
    _owner_display_name: *const c_char,
    _acl_grant_count: c_int,
    _acl_grants: *const S3AclGrant,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: `handler` is NULL or valid, per the header.
    unsafe { not_supported(handler, data, "S3_set_acl") }
}

#[no_mangle]
pub unsafe extern "C" fn S3_get_lifecycle(
    _bucket_context: *const S3BucketContext,
    _lifecycle_xml_return: *mut c_char,
    _lifecycle_xml_buffer_size: c_int,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: `handler` is NULL or valid, per the header.
    unsafe { not_supported(handler, data, "S3_get_lifecycle") }
}

#[no_mangle]
pub unsafe extern "C" fn S3_set_lifecycle(
    _bucket_context: *const S3BucketContext,
    _lifecycle_xml: *const c_char,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: `handler` is NULL or valid, per the header.
    unsafe { not_supported(handler, data, "S3_set_lifecycle") }
}

#[no_mangle]
pub unsafe extern "C" fn S3_get_server_access_logging(
    _bucket_context: *const S3BucketContext,
    _target_bucket_return: *mut c_char,
    _target_prefix_return: *mut c_char,
    _acl_grant_count_return: *mut c_int,
    _acl_grants: *mut S3AclGrant,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: `handler` is NULL or valid, per the header.
    unsafe { not_supported(handler, data, "S3_get_server_access_logging") }
}

#[no_mangle]
pub unsafe extern "C" fn S3_set_server_access_logging(
    _bucket_context: *const S3BucketContext,
    _target_bucket: *const c_char,
    _target_prefix: *const c_char,
    _acl_grant_count: c_int,
    _acl_grants: *const S3AclGrant,
    _ctx: *mut S3RequestContext,
    _timeout_ms: c_int,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: `handler` is NULL or valid, per the header.
    unsafe { not_supported(handler, data, "S3_set_server_access_logging") }
}
