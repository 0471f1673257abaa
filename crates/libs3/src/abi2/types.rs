//! `#[repr(C)]` mirrors of the libs3 2.0 structs and callback types, field
//! for field as in Debian's `libs3.h` (checked by `tests/layout.rs`).

use super::S3Status;
use std::ffi::{c_char, c_int, c_void};

pub type S3Protocol = c_int;
pub const S3_PROTOCOL_HTTPS: S3Protocol = 0;
pub type S3UriStyle = c_int;
pub const S3_URI_STYLE_VIRTUAL_HOST: S3UriStyle = 0;
pub type S3CannedAcl = c_int;

/// Opaque to C; requests run synchronously, so it holds nothing.
pub struct S3RequestContext {
    _private: u8,
}

impl S3RequestContext {
    pub(crate) fn new() -> Self {
        S3RequestContext { _private: 0 }
    }
}

#[repr(C)]
pub struct S3NameValue {
    pub name: *const c_char,
    pub value: *const c_char,
}

#[repr(C)]
pub struct S3ResponseProperties {
    pub request_id: *const c_char,
    pub request_id2: *const c_char,
    pub content_type: *const c_char,
    pub content_length: u64,
    pub server: *const c_char,
    pub e_tag: *const c_char,
    pub last_modified: i64,
    pub meta_data_count: c_int,
    pub meta_data: *const S3NameValue,
}

pub const S3_MAX_GRANTEE_EMAIL_ADDRESS_SIZE: usize = 128;
pub const S3_MAX_GRANTEE_USER_ID_SIZE: usize = 128;
pub const S3_MAX_GRANTEE_DISPLAY_NAME_SIZE: usize = 128;

#[repr(C)]
pub struct S3CanonicalUser {
    pub id: [c_char; S3_MAX_GRANTEE_USER_ID_SIZE],
    pub display_name: [c_char; S3_MAX_GRANTEE_DISPLAY_NAME_SIZE],
}

#[repr(C)]
pub union S3Grantee {
    pub email_address: [c_char; S3_MAX_GRANTEE_EMAIL_ADDRESS_SIZE],
    pub canonical_user: std::mem::ManuallyDrop<S3CanonicalUser>,
}

#[repr(C)]
pub struct S3AclGrant {
    pub grantee_type: c_int,
    pub grantee: S3Grantee,
    pub permission: c_int,
}

#[repr(C)]
pub struct S3BucketContext {
    pub host_name: *const c_char,
    pub bucket_name: *const c_char,
    pub protocol: S3Protocol,
    pub uri_style: S3UriStyle,
    pub access_key_id: *const c_char,
    pub secret_access_key: *const c_char,
}

#[repr(C)]
pub struct S3ListBucketContent {
    pub key: *const c_char,
    pub last_modified: i64,
    pub e_tag: *const c_char,
    pub size: u64,
    pub owner_id: *const c_char,
    pub owner_display_name: *const c_char,
}

#[repr(C)]
pub struct S3PutProperties {
    pub content_type: *const c_char,
    pub md5: *const c_char,
    pub cache_control: *const c_char,
    pub content_disposition_filename: *const c_char,
    pub content_encoding: *const c_char,
    pub expires: i64,
    pub canned_acl: S3CannedAcl,
    pub meta_data_count: c_int,
    pub meta_data: *const S3NameValue,
}

#[repr(C)]
pub struct S3GetConditions {
    pub if_modified_since: i64,
    pub if_not_modified_since: i64,
    pub if_match_e_tag: *const c_char,
    pub if_not_match_e_tag: *const c_char,
}

#[repr(C)]
pub struct S3ErrorDetails {
    pub message: *const c_char,
    pub resource: *const c_char,
    pub further_details: *const c_char,
    pub extra_details_count: c_int,
    pub extra_details: *mut S3NameValue,
}

pub type S3ResponsePropertiesCallback =
    Option<unsafe extern "C" fn(*const S3ResponseProperties, *mut c_void) -> S3Status>;
pub type S3ResponseCompleteCallback =
    Option<unsafe extern "C" fn(S3Status, *const S3ErrorDetails, *mut c_void)>;
pub type S3ListServiceCallback = Option<
    unsafe extern "C" fn(*const c_char, *const c_char, *const c_char, i64, *mut c_void) -> S3Status,
>;
pub type S3ListBucketCallback = Option<
    unsafe extern "C" fn(
        c_int,
        *const c_char,
        c_int,
        *const S3ListBucketContent,
        c_int,
        *const *const c_char,
        *mut c_void,
    ) -> S3Status,
>;
pub type S3PutObjectDataCallback =
    Option<unsafe extern "C" fn(c_int, *mut c_char, *mut c_void) -> c_int>;
pub type S3GetObjectDataCallback =
    Option<unsafe extern "C" fn(c_int, *const c_char, *mut c_void) -> S3Status>;

#[repr(C)]
pub struct S3ResponseHandler {
    pub properties_callback: S3ResponsePropertiesCallback,
    pub complete_callback: S3ResponseCompleteCallback,
}

#[repr(C)]
pub struct S3ListServiceHandler {
    pub response_handler: S3ResponseHandler,
    pub list_service_callback: S3ListServiceCallback,
}

#[repr(C)]
pub struct S3ListBucketHandler {
    pub response_handler: S3ResponseHandler,
    pub list_bucket_callback: S3ListBucketCallback,
}

#[repr(C)]
pub struct S3PutObjectHandler {
    pub response_handler: S3ResponseHandler,
    pub put_object_data_callback: S3PutObjectDataCallback,
}

#[repr(C)]
pub struct S3GetObjectHandler {
    pub response_handler: S3ResponseHandler,
    pub get_object_data_callback: S3GetObjectDataCallback,
}
