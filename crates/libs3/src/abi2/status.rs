//! `S3Status` of the libs3 2.0 ABI, declared in header order;
//! `tests/layout.rs` checks every value against the real header.

use s3hpc_client::ErrorCode;
use s3hpc_libs3_core::{BucketNameProblem, Failure};
use std::ffi::c_int;

#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct S3Status(pub c_int);

s3hpc_libs3_core::s3_statuses! {
    OK, InternalError, OutOfMemory,
    Interrupted, InvalidBucketNameTooLong, InvalidBucketNameFirstCharacter,
    InvalidBucketNameCharacter, InvalidBucketNameCharacterSequence, InvalidBucketNameTooShort,
    InvalidBucketNameDotQuadNotation, QueryParamsTooLong, FailedToInitializeRequest,
    MetaDataHeadersTooLong, BadMetaData, BadContentType,
    ContentTypeTooLong, BadMD5, MD5TooLong,
    BadCacheControl, CacheControlTooLong, BadContentDispositionFilename,
    ContentDispositionFilenameTooLong, BadContentEncoding, ContentEncodingTooLong,
    BadIfMatchETag, IfMatchETagTooLong, BadIfNotMatchETag,
    IfNotMatchETagTooLong, HeadersTooLong, KeyTooLong,
    UriTooLong, XmlParseFailure, EmailAddressTooLong,
    UserIdTooLong, UserDisplayNameTooLong, GroupUriTooLong,
    PermissionTooLong, TargetBucketTooLong, TargetPrefixTooLong,
    TooManyGrants, BadGrantee, BadPermission,
    XmlDocumentTooLarge, NameLookupError, FailedToConnect,
    ServerFailedVerification, ConnectionFailed, AbortedByCallback,
    ErrorAccessDenied, ErrorAccountProblem, ErrorAmbiguousGrantByEmailAddress,
    ErrorBadDigest, ErrorBucketAlreadyExists, ErrorBucketAlreadyOwnedByYou,
    ErrorBucketNotEmpty, ErrorCredentialsNotSupported, ErrorCrossLocationLoggingProhibited,
    ErrorEntityTooSmall, ErrorEntityTooLarge, ErrorExpiredToken,
    ErrorIncompleteBody, ErrorIncorrectNumberOfFilesInPostRequest, ErrorInlineDataTooLarge,
    ErrorInternalError, ErrorInvalidAccessKeyId, ErrorInvalidAddressingHeader,
    ErrorInvalidArgument, ErrorInvalidBucketName, ErrorInvalidDigest,
    ErrorInvalidLocationConstraint, ErrorInvalidPayer, ErrorInvalidPolicyDocument,
    ErrorInvalidRange, ErrorInvalidSecurity, ErrorInvalidSOAPRequest,
    ErrorInvalidStorageClass, ErrorInvalidTargetBucketForLogging, ErrorInvalidToken,
    ErrorInvalidURI, ErrorKeyTooLong, ErrorMalformedACLError,
    ErrorMalformedXML, ErrorMaxMessageLengthExceeded, ErrorMaxPostPreDataLengthExceededError,
    ErrorMetadataTooLarge, ErrorMethodNotAllowed, ErrorMissingAttachment,
    ErrorMissingContentLength, ErrorMissingSecurityElement, ErrorMissingSecurityHeader,
    ErrorNoLoggingStatusForKey, ErrorNoSuchBucket, ErrorNoSuchKey,
    ErrorNotImplemented, ErrorNotSignedUp, ErrorOperationAborted,
    ErrorPermanentRedirect, ErrorPreconditionFailed, ErrorRedirect,
    ErrorRequestIsNotMultiPartContent, ErrorRequestTimeout, ErrorRequestTimeTooSkewed,
    ErrorRequestTorrentOfBucketError, ErrorSignatureDoesNotMatch, ErrorSlowDown,
    ErrorTemporaryRedirect, ErrorTokenRefreshRequired, ErrorTooManyBuckets,
    ErrorUnexpectedContent, ErrorUnresolvableGrantByEmailAddress, ErrorUserKeyMustBeSpecified,
    ErrorUnknown, HttpErrorMovedTemporarily, HttpErrorBadRequest,
    HttpErrorForbidden, HttpErrorNotFound, HttpErrorConflict,
    HttpErrorUnknown,
}

impl From<&Failure> for S3Status {
    fn from(f: &Failure) -> S3Status {
        match f {
            Failure::S3(e) => from_code(e.code()),
            Failure::BadHost(_) => S3Status::NameLookupError,
            Failure::Connect(_) => S3Status::FailedToConnect,
            Failure::Aborted => S3Status::AbortedByCallback,
            Failure::Callback(s) => S3Status(*s),
            Failure::BadArgument(_) => S3Status::ErrorInvalidArgument,
            Failure::NotSupported(_) => S3Status::ErrorNotImplemented,
            Failure::BucketName(p) => bucket_name_status(*p),
            Failure::UriTooLong => S3Status::UriTooLong,
            Failure::Internal(_) => S3Status::InternalError,
        }
    }
}

/// The 2.0 status for an S3 error code; codes 2.0 has no name for map to
/// the nearest one.
fn from_code(code: ErrorCode) -> S3Status {
    use ErrorCode as C;
    match code {
        C::NoSuchBucket => S3Status::ErrorNoSuchBucket,
        C::NoSuchKey => S3Status::ErrorNoSuchKey,
        C::NoSuchUpload => S3Status::ErrorNoSuchKey,
        C::BucketNotEmpty => S3Status::ErrorBucketNotEmpty,
        C::BucketAlreadyOwnedByYou => S3Status::ErrorBucketAlreadyOwnedByYou,
        C::BucketAlreadyExists => S3Status::ErrorBucketAlreadyExists,
        C::InvalidBucketName => S3Status::ErrorInvalidBucketName,
        C::InvalidArgument | C::InvalidKey | C::KeyConflict => S3Status::ErrorInvalidArgument,
        C::InvalidPart | C::InvalidPartOrder | C::InvalidTag => S3Status::ErrorInvalidArgument,
        C::KeyTooLong => S3Status::ErrorKeyTooLong,
        C::EntityTooLarge => S3Status::ErrorEntityTooLarge,
        C::EntityTooSmall => S3Status::ErrorEntityTooSmall,
        C::InvalidRange => S3Status::ErrorInvalidRange,
        C::MetadataTooLarge => S3Status::ErrorMetadataTooLarge,
        C::BadDigest => S3Status::ErrorBadDigest,
        C::InvalidRequest => S3Status::ErrorInvalidArgument,
        C::IncompleteBody => S3Status::ErrorIncompleteBody,
        C::PreconditionFailed => S3Status::ErrorPreconditionFailed,
        C::ConditionalRequestConflict => S3Status::ErrorOperationAborted,
        C::NotImplemented => S3Status::ErrorNotImplemented,
        C::AccessDenied => S3Status::ErrorAccessDenied,
        C::ServiceUnavailable => S3Status::FailedToConnect,
        C::InsufficientStorage | C::InternalError => S3Status::ErrorInternalError,
        // 2.0 has no names for these versioning errors.
        C::NoSuchVersion => S3Status::ErrorNoSuchKey,
        C::InvalidBucketState => S3Status::HttpErrorConflict,
        C::IllegalVersioningConfiguration => S3Status::ErrorMalformedXML,
        C::MethodNotAllowed => S3Status::ErrorMethodNotAllowed,
    }
}

fn bucket_name_status(p: BucketNameProblem) -> S3Status {
    match p {
        BucketNameProblem::TooLong => S3Status::InvalidBucketNameTooLong,
        BucketNameProblem::FirstCharacter => S3Status::InvalidBucketNameFirstCharacter,
        BucketNameProblem::Character => S3Status::InvalidBucketNameCharacter,
        BucketNameProblem::CharacterSequence => S3Status::InvalidBucketNameCharacterSequence,
        BucketNameProblem::TooShort => S3Status::InvalidBucketNameTooShort,
        BucketNameProblem::DotQuadNotation => S3Status::InvalidBucketNameDotQuadNotation,
    }
}
