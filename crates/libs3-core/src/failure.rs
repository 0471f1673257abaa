//! Why a request failed, independent of any ABI's status numbering: each
//! shim maps these onto its own `S3Status` values.

use s3hpc_client::S3Error;

#[derive(Debug)]
pub enum Failure {
    /// The store or server answered with an S3 error.
    S3(S3Error),
    /// The host string names no usable transport (bad syntax, a data root
    /// that cannot be opened).
    BadHost(String),
    /// The transport's server could not be reached.
    Connect(String),
    /// A put data callback returned a negative count.
    Aborted,
    /// A callback returned this non-OK status (in the caller's ABI), which
    /// libs3 hands back as the request's status.
    Callback(i32),
    /// A required argument was NULL or not valid UTF-8.
    BadArgument(&'static str),
    /// The call is outside the data path this library serves (ACLs,
    /// logging, ...).
    NotSupported(&'static str),
    /// A bucket name libs3's rules reject.
    BucketName(BucketNameProblem),
    /// A presigned URL longer than the caller's buffer.
    UriTooLong,
    /// A bug (a caught panic).
    Internal(String),
}

/// Why libs3's rules reject a bucket name; both ABIs have a status for
/// each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketNameProblem {
    TooLong,
    FirstCharacter,
    Character,
    CharacterSequence,
    TooShort,
    DotQuadNotation,
}

impl Failure {
    /// A message for the caller's error details.
    pub fn message(&self) -> String {
        match self {
            Failure::S3(e) => e.to_string(),
            Failure::BadHost(m) | Failure::Connect(m) | Failure::Internal(m) => m.clone(),
            Failure::Aborted => "aborted by the data callback".to_string(),
            Failure::Callback(s) => format!("a callback returned status {s}"),
            Failure::BadArgument(what) => format!("missing or invalid argument: {what}"),
            Failure::BucketName(p) => format!("invalid bucket name: {p:?}"),
            Failure::UriTooLong => "the URL does not fit the buffer".to_string(),
            Failure::NotSupported(what) => {
                format!("{what} is not supported by s3hpc's libs3 (data path only)")
            }
        }
    }
}

impl From<S3Error> for Failure {
    fn from(e: S3Error) -> Failure {
        Failure::S3(e)
    }
}
