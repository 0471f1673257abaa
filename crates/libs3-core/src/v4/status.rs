//! `S3Status` of the libs3 4.x ABI, declared in the order of
//! crates/libs3-4/include/libs3.h; its `tests/layout.rs` checks every value against it.

use crate::{BucketNameProblem, Failure};
use s3hpc_client::ErrorCode;
use std::ffi::c_int;

#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct S3Status(pub c_int);

crate::s3_statuses! {
    OK, InternalError, OutOfMemory, Interrupted,
    InvalidBucketNameTooLong, InvalidBucketNameFirstCharacter, InvalidBucketNameCharacter,
    InvalidBucketNameCharacterSequence, InvalidBucketNameTooShort,
    InvalidBucketNameDotQuadNotation, QueryParamsTooLong, FailedToInitializeRequest,
    MetaDataHeadersTooLong, BadMetaData, BadContentType, ContentTypeTooLong, BadMD5,
    MD5TooLong, BadCacheControl, CacheControlTooLong, BadContentDispositionFilename,
    ContentDispositionFilenameTooLong, BadContentEncoding, ContentEncodingTooLong,
    BadIfMatchETag, IfMatchETagTooLong, BadIfNotMatchETag, IfNotMatchETagTooLong,
    HeadersTooLong, KeyTooLong, UriTooLong, XmlParseFailure, EmailAddressTooLong,
    UserIdTooLong, UserDisplayNameTooLong, GroupUriTooLong, PermissionTooLong,
    TargetBucketTooLong, TargetPrefixTooLong, TooManyGrants, BadGrantee, BadPermission,
    XmlDocumentTooLarge, NameLookupError, FailedToConnect, ServerFailedVerification,
    ConnectionFailed, AbortedByCallback, NotSupported,
    ErrorAccessDenied, ErrorAccountProblem, ErrorAmbiguousGrantByEmailAddress,
    ErrorBadDigest, ErrorBucketAlreadyExists, ErrorBucketAlreadyOwnedByYou,
    ErrorBucketNotEmpty, ErrorCredentialsNotSupported, ErrorCrossLocationLoggingProhibited,
    ErrorEntityTooSmall, ErrorEntityTooLarge, ErrorExpiredToken,
    ErrorIllegalVersioningConfigurationException, ErrorIncompleteBody,
    ErrorIncorrectNumberOfFilesInPostRequest, ErrorInlineDataTooLarge, ErrorInternalError,
    ErrorInvalidAccessKeyId, ErrorInvalidAddressingHeader, ErrorInvalidArgument,
    ErrorInvalidBucketName, ErrorInvalidBucketState, ErrorInvalidDigest,
    ErrorInvalidEncryptionAlgorithmError, ErrorInvalidLocationConstraint,
    ErrorInvalidObjectState, ErrorInvalidPart, ErrorInvalidPartOrder, ErrorInvalidPayer,
    ErrorInvalidPolicyDocument, ErrorInvalidRange, ErrorInvalidRequest, ErrorInvalidSecurity,
    ErrorInvalidSOAPRequest, ErrorInvalidStorageClass, ErrorInvalidTargetBucketForLogging,
    ErrorInvalidToken, ErrorInvalidURI, ErrorKeyTooLong, ErrorMalformedACLError,
    ErrorMalformedPOSTRequest, ErrorMalformedXML, ErrorMaxMessageLengthExceeded,
    ErrorMaxPostPreDataLengthExceededError, ErrorMetadataTooLarge, ErrorMethodNotAllowed,
    ErrorMissingAttachment, ErrorMissingContentLength, ErrorMissingRequestBodyError,
    ErrorMissingSecurityElement, ErrorMissingSecurityHeader, ErrorNoLoggingStatusForKey,
    ErrorNoSuchBucket, ErrorNoSuchKey, ErrorNoSuchLifecycleConfiguration, ErrorNoSuchUpload,
    ErrorNoSuchVersion, ErrorNotImplemented, ErrorNotSignedUp, ErrorNoSuchBucketPolicy,
    ErrorOperationAborted, ErrorPermanentRedirect, ErrorPreconditionFailed, ErrorRedirect,
    ErrorRestoreAlreadyInProgress, ErrorRequestIsNotMultiPartContent, ErrorRequestTimeout,
    ErrorRequestTimeTooSkewed, ErrorRequestTorrentOfBucketError, ErrorSignatureDoesNotMatch,
    ErrorServiceUnavailable, ErrorSlowDown, ErrorTemporaryRedirect, ErrorTokenRefreshRequired,
    ErrorTooManyBuckets, ErrorUnexpectedContent, ErrorUnresolvableGrantByEmailAddress,
    ErrorUserKeyMustBeSpecified, ErrorQuotaExceeded, ErrorUnknown,
    HttpErrorMovedTemporarily, HttpErrorBadRequest, HttpErrorForbidden, HttpErrorNotFound,
    HttpErrorConflict, HttpErrorUnknown,
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
            Failure::NotSupported(_) => S3Status::NotSupported,
            Failure::BucketName(p) => match p {
                BucketNameProblem::TooLong => S3Status::InvalidBucketNameTooLong,
                BucketNameProblem::FirstCharacter => S3Status::InvalidBucketNameFirstCharacter,
                BucketNameProblem::Character => S3Status::InvalidBucketNameCharacter,
                BucketNameProblem::CharacterSequence => {
                    S3Status::InvalidBucketNameCharacterSequence
                }
                BucketNameProblem::TooShort => S3Status::InvalidBucketNameTooShort,
                BucketNameProblem::DotQuadNotation => S3Status::InvalidBucketNameDotQuadNotation,
            },
            Failure::UriTooLong => S3Status::UriTooLong,
            Failure::Internal(_) => S3Status::InternalError,
        }
    }
}

/// The 4.x status for an S3 error code.
fn from_code(code: ErrorCode) -> S3Status {
    use ErrorCode as C;
    match code {
        C::NoSuchBucket => S3Status::ErrorNoSuchBucket,
        C::NoSuchKey => S3Status::ErrorNoSuchKey,
        C::NoSuchUpload => S3Status::ErrorNoSuchUpload,
        C::BucketNotEmpty => S3Status::ErrorBucketNotEmpty,
        C::BucketAlreadyOwnedByYou => S3Status::ErrorBucketAlreadyOwnedByYou,
        C::BucketAlreadyExists => S3Status::ErrorBucketAlreadyExists,
        C::InvalidBucketName => S3Status::ErrorInvalidBucketName,
        // libs3 4.x has no status for InvalidTag.
        C::InvalidArgument | C::InvalidKey | C::KeyConflict | C::InvalidTag => {
            S3Status::ErrorInvalidArgument
        }
        C::InvalidPart => S3Status::ErrorInvalidPart,
        C::InvalidPartOrder => S3Status::ErrorInvalidPartOrder,
        C::KeyTooLong => S3Status::ErrorKeyTooLong,
        C::EntityTooLarge => S3Status::ErrorEntityTooLarge,
        C::EntityTooSmall => S3Status::ErrorEntityTooSmall,
        C::InvalidRange => S3Status::ErrorInvalidRange,
        C::MetadataTooLarge => S3Status::ErrorMetadataTooLarge,
        C::BadDigest => S3Status::ErrorBadDigest,
        C::InvalidRequest => S3Status::ErrorInvalidRequest,
        C::IncompleteBody => S3Status::ErrorIncompleteBody,
        C::PreconditionFailed => S3Status::ErrorPreconditionFailed,
        // libs3's "a conflicting conditional operation is in progress".
        C::ConditionalRequestConflict => S3Status::ErrorOperationAborted,
        C::NotImplemented => S3Status::ErrorNotImplemented,
        C::AccessDenied => S3Status::ErrorAccessDenied,
        // An unreachable server: libs3 retries it as a connection failure.
        C::ServiceUnavailable => S3Status::FailedToConnect,
        C::InsufficientStorage => S3Status::ErrorQuotaExceeded,
        C::InternalError => S3Status::ErrorInternalError,
        C::NoSuchVersion => S3Status::ErrorNoSuchVersion,
        C::InvalidBucketState => S3Status::ErrorInvalidBucketState,
        C::IllegalVersioningConfiguration => S3Status::ErrorIllegalVersioningConfigurationException,
        C::MethodNotAllowed => S3Status::ErrorMethodNotAllowed,
    }
}
