//! Typed errors that map one-to-one onto S3 error codes.

use std::fmt;

/// Declares [`ErrorCode`] with each variant's wire string, keeping the list
/// of codes in one place.
macro_rules! error_codes {
    ($($code:ident => $wire:literal),+ $(,)?) => {
        /// The S3 error codes the engine can produce. Each maps to the code
        /// string and HTTP status that S3 uses, so every transport reports the
        /// same thing.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($code),+
        }

        impl ErrorCode {
            /// Every code, for decoders that map wire strings back.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$code),+];

            /// The code string as S3 spells it on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$code => $wire),+
                }
            }
        }
    };
}

error_codes! {
    NoSuchBucket => "NoSuchBucket",
    NoSuchKey => "NoSuchKey",
    NoSuchUpload => "NoSuchUpload",
    BucketNotEmpty => "BucketNotEmpty",
    BucketAlreadyOwnedByYou => "BucketAlreadyOwnedByYou",
    // Names are shared by all users: another one owns it.
    BucketAlreadyExists => "BucketAlreadyExists",
    InvalidBucketName => "InvalidBucketName",
    InvalidArgument => "InvalidArgument",
    // S3 has no dedicated code for an unmappable key; AWS answers
    // InvalidArgument, but a distinct name makes client errors clearer.
    InvalidKey => "InvalidKey",
    KeyTooLong => "KeyTooLongError",
    KeyConflict => "KeyConflict",
    EntityTooLarge => "EntityTooLarge",
    EntityTooSmall => "EntityTooSmall",
    InvalidRange => "InvalidRange",
    InvalidPart => "InvalidPart",
    InvalidPartOrder => "InvalidPartOrder",
    MetadataTooLarge => "MetadataTooLarge",
    InvalidTag => "InvalidTag",
    BadDigest => "BadDigest",
    InvalidRequest => "InvalidRequest",
    IncompleteBody => "IncompleteBody",
    PreconditionFailed => "PreconditionFailed",
    // Conditional writers that kept racing on one key.
    ConditionalRequestConflict => "ConditionalRequestConflict",
    NotImplemented => "NotImplemented",
    InsufficientStorage => "InsufficientStorage",
    AccessDenied => "AccessDenied",
    // A remote transport cannot reach its server.
    ServiceUnavailable => "ServiceUnavailable",
    InternalError => "InternalError",
    // Versioning.
    NoSuchVersion => "NoSuchVersion",
    InvalidBucketState => "InvalidBucketState",
    IllegalVersioningConfiguration => "IllegalVersioningConfigurationException",
    MethodNotAllowed => "MethodNotAllowed",
}

impl ErrorCode {
    /// The HTTP status S3 answers with for this code.
    pub fn http_status(self) -> u16 {
        use ErrorCode::*;
        match self {
            NoSuchBucket | NoSuchKey | NoSuchUpload | NoSuchVersion => 404,
            MethodNotAllowed => 405,
            BucketNotEmpty
            | InvalidBucketState
            | BucketAlreadyOwnedByYou
            | BucketAlreadyExists
            | KeyConflict
            | ConditionalRequestConflict => 409,
            InvalidRange => 416,
            PreconditionFailed => 412,
            NotImplemented => 501,
            InsufficientStorage => 507,
            AccessDenied => 403,
            InternalError => 500,
            ServiceUnavailable => 503,
            _ => 400,
        }
    }

    /// Parses a wire code string back into a code (used by remote transports).
    pub fn from_wire(s: &str) -> Option<ErrorCode> {
        Self::ALL.iter().copied().find(|c| c.as_str() == s)
    }
}

/// An S3 error: a code, and a message that says what went wrong and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Error {
    pub code: ErrorCode,
    pub message: String,
}

impl S3Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        S3Error {
            code,
            message: message.into(),
        }
    }

    /// Maps an I/O error from the file system onto the closest S3 code.
    /// `what` names the object or bucket, so the message is actionable.
    pub fn from_io(err: &std::io::Error, what: &str) -> Self {
        use std::io::ErrorKind;
        let code = match err.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => ErrorCode::InsufficientStorage,
            Some(libc::ENAMETOOLONG) => ErrorCode::KeyTooLong,
            Some(libc::EACCES) | Some(libc::EPERM) => ErrorCode::AccessDenied,
            // A symlink met with RESOLVE_NO_SYMLINKS or O_NOFOLLOW.
            Some(libc::ELOOP) | Some(libc::EXDEV) => ErrorCode::InvalidKey,
            _ if err.kind() == ErrorKind::NotFound => ErrorCode::NoSuchKey,
            _ => ErrorCode::InternalError,
        };
        let hint = match code {
            ErrorCode::InsufficientStorage => "; free space or quota on the data file system",
            ErrorCode::AccessDenied => "; check the permissions of the data directory",
            ErrorCode::InvalidKey => "; the path holds a symlink, which is never followed",
            _ => "",
        };
        S3Error::new(code, format!("{what}: {err}{hint}"))
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }
}

impl fmt::Display for S3Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for S3Error {}

pub type Result<T, E = S3Error> = std::result::Result<T, E>;

/// Shorthand for building an error with a formatted message.
#[macro_export]
macro_rules! s3err {
    ($code:ident, $($arg:tt)*) => {
        $crate::S3Error::new($crate::ErrorCode::$code, format!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_round_trip() {
        for &c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_wire(c.as_str()), Some(c));
        }
        assert_eq!(ErrorCode::from_wire("NoSuchThing"), None);
        assert_eq!(ErrorCode::KeyTooLong.as_str(), "KeyTooLongError");
        assert_eq!(ErrorCode::NoSuchKey.http_status(), 404);
    }
}
