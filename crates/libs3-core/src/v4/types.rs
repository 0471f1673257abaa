//! The libs3 4.x C types: the core's shared layouts with this ABI's
//! statuses, and the three structs 4.x extends (each starts with the 2.0
//! fields, so the core reads them through `base`). `tests/layout.rs`
//! checks every one against include/libs3.h.
#![allow(clippy::missing_safety_doc)]

use super::S3Status;
use crate::cabi::{self, Abi};
use crate::{multipart, Failure};
use std::ffi::{c_char, c_int};

pub use crate::cabi::{
    S3AclGrant, S3CannedAcl, S3CanonicalUser, S3ErrorDetails, S3GetConditions, S3Grantee,
    S3ListBucketContent, S3NameValue, S3Protocol, S3PutObjectDataCallback, S3RequestContext,
    S3UriStyle, S3_PROTOCOL_HTTPS, S3_URI_STYLE_VIRTUAL_HOST,
};
pub use crate::multipart::{S3ListMultipartUpload, S3ListPart};
pub use crate::service::S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE;

/// The 4.x ABI for the core's generic requests.
pub enum Abi4 {}

impl Abi for Abi4 {
    type Status = S3Status;
    type Properties = S3ResponseProperties;
    const OK: S3Status = S3Status::OK;
    fn status(f: &Failure) -> S3Status {
        S3Status::from(f)
    }
    fn raw(s: S3Status) -> c_int {
        s.0
    }
    fn properties(base: cabi::ResponseProperties) -> S3ResponseProperties {
        S3ResponseProperties {
            base,
            uses_server_side_encryption: 0,
        }
    }
}

#[repr(C)]
pub struct S3ResponseProperties {
    pub base: cabi::ResponseProperties,
    pub uses_server_side_encryption: c_char,
}

#[repr(C)]
pub struct S3BucketContext {
    pub base: cabi::BucketContext,
    pub security_token: *const c_char,
    pub auth_region: *const c_char,
}

#[repr(C)]
pub struct S3PutProperties {
    pub base: cabi::PutProperties,
    pub use_server_side_encryption: c_char,
}

pub type S3ResponseHandler = cabi::ResponseHandler<Abi4>;
pub type S3ListServiceHandler = cabi::ListServiceHandler<Abi4>;
pub type S3ListBucketHandler = cabi::ListBucketHandler<Abi4>;
pub type S3PutObjectHandler = cabi::PutObjectHandler<Abi4>;
pub type S3GetObjectHandler = cabi::GetObjectHandler<Abi4>;
pub type S3MultipartInitialHandler = multipart::MultipartInitialHandler<Abi4>;
pub type S3MultipartCommitHandler = multipart::MultipartCommitHandler<Abi4>;
pub type S3ListMultipartUploadsHandler = multipart::ListMultipartUploadsHandler<Abi4>;
pub type S3ListPartsHandler = multipart::ListPartsHandler<Abi4>;
pub type S3AbortMultipartUploadHandler = multipart::AbortMultipartUploadHandler<Abi4>;
pub type S3ResponsePropertiesCallback = cabi::PropertiesCallback<Abi4>;
pub type S3ResponseCompleteCallback = cabi::CompleteCallback<Abi4>;
pub type S3ListServiceCallback = cabi::ListServiceCallback<Abi4>;
pub type S3ListBucketCallback = cabi::ListBucketCallback<Abi4>;
pub type S3GetObjectDataCallback = cabi::GetObjectDataCallback<Abi4>;

/// The core's view of a 4.x bucket context (NULL stays NULL).
///
/// # Safety
/// `ctx` is NULL or valid.
pub unsafe fn context(ctx: *const S3BucketContext) -> crate::request::ContextArgs {
    // SAFETY: NULL or valid, per the contract.
    let c = unsafe { ctx.as_ref() };
    crate::request::ContextArgs {
        base: c.map_or(std::ptr::null(), |c| &c.base as *const _),
        security_token: c.map_or(std::ptr::null(), |c| c.security_token),
        auth_region: c.map_or(std::ptr::null(), |c| c.auth_region),
    }
}

/// The 2.0 part of 4.x put properties (NULL stays NULL).
///
/// # Safety
/// `p` is NULL or valid.
pub unsafe fn put_properties(p: *const S3PutProperties) -> *const cabi::PutProperties {
    // SAFETY: NULL or valid, per the contract.
    unsafe { p.as_ref() }.map_or(std::ptr::null(), |p| &p.base as *const _)
}
