//! The libs3 2.0 C types: the core's shared layouts, instantiated with
//! this ABI's statuses (`tests/layout.rs` checks them against Debian's
//! `libs3.h`).

use super::S3Status;
use s3hpc_libs3_core::cabi::{self, Abi};
use s3hpc_libs3_core::Failure;
use std::ffi::c_int;

pub use s3hpc_libs3_core::cabi::{
    S3AclGrant, S3CannedAcl, S3CanonicalUser, S3ErrorDetails, S3GetConditions, S3Grantee,
    S3ListBucketContent, S3NameValue, S3Protocol, S3PutObjectDataCallback, S3RequestContext,
    S3UriStyle, S3_MAX_GRANTEE_DISPLAY_NAME_SIZE, S3_MAX_GRANTEE_EMAIL_ADDRESS_SIZE,
    S3_MAX_GRANTEE_USER_ID_SIZE, S3_PROTOCOL_HTTPS, S3_URI_STYLE_VIRTUAL_HOST,
};
pub use s3hpc_libs3_core::service::S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE;

/// The 2.0 ABI for the core's generic requests.
pub enum Abi2 {}

impl Abi for Abi2 {
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
        base
    }
}

pub type S3ResponseProperties = cabi::ResponseProperties;
pub type S3BucketContext = cabi::BucketContext;
pub type S3PutProperties = cabi::PutProperties;
pub type S3ResponseHandler = cabi::ResponseHandler<Abi2>;
pub type S3ListServiceHandler = cabi::ListServiceHandler<Abi2>;
pub type S3ListBucketHandler = cabi::ListBucketHandler<Abi2>;
pub type S3PutObjectHandler = cabi::PutObjectHandler<Abi2>;
pub type S3GetObjectHandler = cabi::GetObjectHandler<Abi2>;
pub type S3ResponsePropertiesCallback = cabi::PropertiesCallback<Abi2>;
pub type S3ResponseCompleteCallback = cabi::CompleteCallback<Abi2>;
pub type S3ListServiceCallback = cabi::ListServiceCallback<Abi2>;
pub type S3ListBucketCallback = cabi::ListBucketCallback<Abi2>;
pub type S3GetObjectDataCallback = cabi::GetObjectDataCallback<Abi2>;
