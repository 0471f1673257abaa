//! `#[repr(C)]` types both libs3 ABIs lay out the same way, and the
//! handler structs, generic over what differs: the status numbering and the
//! response-properties struct ([`Abi`]). Each shim's `tests/layout.rs`
//! checks them against its C header.

use crate::Failure;
use std::ffi::{c_char, c_int, c_void};

/// What one C ABI decides for itself.
pub trait Abi: 'static {
    /// The ABI's `S3Status`: a C int newtype.
    type Status: Copy + PartialEq + std::fmt::Debug;
    /// The struct the properties callback receives.
    type Properties;
    const OK: Self::Status;
    /// The status a failed request reports.
    fn status(f: &Failure) -> Self::Status;
    fn raw(s: Self::Status) -> c_int;
    /// Wraps the fields both ABIs share into this ABI's struct.
    fn properties(base: ResponseProperties) -> Self::Properties;
}

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
    pub fn new() -> Self {
        S3RequestContext { _private: 0 }
    }
}

impl Default for S3RequestContext {
    fn default() -> Self {
        Self::new()
    }
}

#[repr(C)]
pub struct S3NameValue {
    pub name: *const c_char,
    pub value: *const c_char,
}

/// The response properties of libs3 2.0; 4.x appends one field.
#[repr(C)]
pub struct ResponseProperties {
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

/// The bucket context of libs3 2.0; 4.x appends two fields.
#[repr(C)]
pub struct BucketContext {
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

/// The put properties of libs3 2.0; 4.x appends one field.
#[repr(C)]
pub struct PutProperties {
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

pub type PropertiesCallback<A> =
    Option<unsafe extern "C" fn(*const <A as Abi>::Properties, *mut c_void) -> <A as Abi>::Status>;
pub type CompleteCallback<A> =
    Option<unsafe extern "C" fn(<A as Abi>::Status, *const S3ErrorDetails, *mut c_void)>;
pub type ListServiceCallback<A> = Option<
    unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        *const c_char,
        i64,
        *mut c_void,
    ) -> <A as Abi>::Status,
>;
pub type ListBucketCallback<A> = Option<
    unsafe extern "C" fn(
        c_int,
        *const c_char,
        c_int,
        *const S3ListBucketContent,
        c_int,
        *const *const c_char,
        *mut c_void,
    ) -> <A as Abi>::Status,
>;
pub type S3PutObjectDataCallback =
    Option<unsafe extern "C" fn(c_int, *mut c_char, *mut c_void) -> c_int>;
pub type GetObjectDataCallback<A> =
    Option<unsafe extern "C" fn(c_int, *const c_char, *mut c_void) -> <A as Abi>::Status>;

#[repr(C)]
pub struct ResponseHandler<A: Abi> {
    pub properties_callback: PropertiesCallback<A>,
    pub complete_callback: CompleteCallback<A>,
}

#[repr(C)]
pub struct ListServiceHandler<A: Abi> {
    pub response_handler: ResponseHandler<A>,
    pub list_service_callback: ListServiceCallback<A>,
}

#[repr(C)]
pub struct ListBucketHandler<A: Abi> {
    pub response_handler: ResponseHandler<A>,
    pub list_bucket_callback: ListBucketCallback<A>,
}

#[repr(C)]
pub struct PutObjectHandler<A: Abi> {
    pub response_handler: ResponseHandler<A>,
    pub put_object_data_callback: S3PutObjectDataCallback,
}

#[repr(C)]
pub struct GetObjectHandler<A: Abi> {
    pub response_handler: ResponseHandler<A>,
    pub get_object_data_callback: GetObjectDataCallback<A>,
}

/// The response handler inside a handler struct, or NULL.
pub trait HasResponse<A: Abi> {
    fn response(&self) -> &ResponseHandler<A>;
}

/// Implements [`HasResponse`] for handler structs whose first field is
/// `response_handler`.
macro_rules! has_response {
    ($($t:ident),*) => {$(
        impl<A: Abi> HasResponse<A> for $t<A> {
            fn response(&self) -> &ResponseHandler<A> {
                &self.response_handler
            }
        }
    )*};
}
pub(crate) use has_response;
has_response!(
    ListServiceHandler,
    ListBucketHandler,
    PutObjectHandler,
    GetObjectHandler
);

/// `handler`'s response handler, NULL if `handler` is NULL.
///
/// # Safety
/// `handler` is NULL or valid.
pub unsafe fn response_of<A: Abi, H: HasResponse<A>>(
    handler: *const H,
) -> *const ResponseHandler<A> {
    // SAFETY: NULL or valid, per the contract.
    unsafe { handler.as_ref() }.map_or(std::ptr::null(), |h| h.response() as *const _)
}
