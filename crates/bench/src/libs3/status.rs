//! A libs3 4.x status as the S3 error the rest of the bench understands.

use super::api::Api;
use super::call::text;
use s3hpc_libs3_core::v4::S3Status;
use s3hpc_store::{ErrorCode, S3Error};

/// The library's name for `s` (`ErrorNoSuchKey`).
pub fn name(api: &Api, s: S3Status) -> String {
    // SAFETY: returns a static NUL-terminated string for any value.
    unsafe { text((api.S3_get_status_name)(s)) }
}

/// The S3 error for a failed request. A HEAD has no body, so libs3 can
/// only say "404": that is a missing key (`on_key`) or bucket.
pub fn error(api: &Api, s: S3Status, message: &str, what: &str, on_key: bool) -> S3Error {
    use ErrorCode as C;
    let code = match s {
        S3Status::ErrorNoSuchBucket => C::NoSuchBucket,
        S3Status::ErrorNoSuchKey => C::NoSuchKey,
        S3Status::HttpErrorNotFound if on_key => C::NoSuchKey,
        S3Status::HttpErrorNotFound => C::NoSuchBucket,
        S3Status::ErrorNoSuchUpload => C::NoSuchUpload,
        S3Status::ErrorBucketNotEmpty | S3Status::HttpErrorConflict => C::BucketNotEmpty,
        S3Status::ErrorBucketAlreadyOwnedByYou => C::BucketAlreadyOwnedByYou,
        S3Status::ErrorBucketAlreadyExists => C::BucketAlreadyExists,
        S3Status::ErrorInvalidBucketName
        | S3Status::InvalidBucketNameTooLong
        | S3Status::InvalidBucketNameFirstCharacter
        | S3Status::InvalidBucketNameCharacter
        | S3Status::InvalidBucketNameCharacterSequence
        | S3Status::InvalidBucketNameTooShort
        | S3Status::InvalidBucketNameDotQuadNotation => C::InvalidBucketName,
        S3Status::ErrorKeyTooLong | S3Status::KeyTooLong => C::KeyTooLong,
        S3Status::ErrorEntityTooLarge => C::EntityTooLarge,
        S3Status::ErrorEntityTooSmall => C::EntityTooSmall,
        S3Status::ErrorInvalidRange => C::InvalidRange,
        S3Status::ErrorInvalidPart => C::InvalidPart,
        S3Status::ErrorInvalidPartOrder => C::InvalidPartOrder,
        S3Status::ErrorMetadataTooLarge => C::MetadataTooLarge,
        S3Status::ErrorBadDigest => C::BadDigest,
        S3Status::ErrorIncompleteBody => C::IncompleteBody,
        S3Status::ErrorPreconditionFailed => C::PreconditionFailed,
        S3Status::ErrorNotImplemented | S3Status::NotSupported => C::NotImplemented,
        S3Status::ErrorAccessDenied
        | S3Status::HttpErrorForbidden
        | S3Status::ErrorSignatureDoesNotMatch
        | S3Status::ErrorInvalidAccessKeyId => C::AccessDenied,
        S3Status::ErrorInvalidArgument | S3Status::HttpErrorBadRequest => C::InvalidArgument,
        S3Status::NameLookupError
        | S3Status::FailedToConnect
        | S3Status::ConnectionFailed
        | S3Status::ErrorServiceUnavailable
        | S3Status::ErrorSlowDown => C::ServiceUnavailable,
        S3Status::ErrorQuotaExceeded => C::InsufficientStorage,
        _ => C::InternalError,
    };
    // libs3's statuses have no KeyConflict, InvalidKey and the like, which
    // then arrive as a generic one; s3hpc's library starts the message
    // with the S3 code, which is more precise.
    let code = match code {
        C::InvalidArgument | C::InternalError => message
            .split_once(": ")
            .and_then(|(c, _)| ErrorCode::from_wire(c))
            .unwrap_or(code),
        _ => code,
    };
    let status = name(api, s);
    let message = if message.is_empty() {
        format!("{what}: libs3 status {status}")
    } else {
        format!("{what}: libs3 status {status}: {message}")
    };
    S3Error::new(code, message)
}
