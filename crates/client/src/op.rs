//! The catalogue of S3 operations a client can ask for: one [`Request`]
//! variant per operation, borrowing its arguments, and the [`Response`]
//! each answers with. Every transport serves them in one exhaustive
//! `match` ([`crate::S3Client::call`]), so an operation added here is a
//! compile error in each transport until that transport serves it (or
//! says, by name, that it cannot carry it).

use crate::{GetObject, Tags};
use s3hpc_store::{
    BucketInfo, ByteRange, DeleteCondition, ErrorCode, ListPage, ListRequest, ObjectInfo, PartInfo,
    PutBody, PutOptions, S3Error, UploadInfo, Versioning, VersionsPage, VersionsRequest,
    WriteCondition,
};

/// One S3 operation and its arguments, borrowed from the caller. An
/// operation of more than three arguments carries them in a struct of its
/// name, so that a transport reads them by name.
pub enum Request<'a> {
    CreateBucket {
        bucket: &'a str,
    },
    DeleteBucket {
        bucket: &'a str,
    },
    HeadBucket {
        bucket: &'a str,
    },
    ListBuckets,
    /// Answered by the quoted ETag.
    PutObject(PutObject<'a>),
    GetObject {
        bucket: &'a str,
        key: &'a str,
        range: Option<ByteRange>,
    },
    /// GET with `partNumber`.
    GetObjectPart(GetObjectPart<'a>),
    HeadObject {
        bucket: &'a str,
        key: &'a str,
    },
    DeleteObject(DeleteObject<'a>),
    ListObjects {
        bucket: &'a str,
        list: &'a ListRequest,
    },
    CopyObject(CopyObject<'a>),
    GetObjectTagging {
        bucket: &'a str,
        key: &'a str,
    },
    PutObjectTagging {
        bucket: &'a str,
        key: &'a str,
        tags: &'a Tags,
    },
    DeleteObjectTagging {
        bucket: &'a str,
        key: &'a str,
    },
    CreateMultipartUpload {
        bucket: &'a str,
        key: &'a str,
        opts: &'a PutOptions,
    },
    /// Answered by the part's quoted ETag.
    UploadPart(UploadPart<'a>),
    CompleteMultipartUpload(CompleteMultipartUpload<'a>),
    AbortMultipartUpload(Upload<'a>),
    ListParts(Upload<'a>),
    ListMultipartUploads {
        bucket: &'a str,
        prefix: &'a str,
    },
    /// Enabled or Suspended.
    PutBucketVersioning {
        bucket: &'a str,
        state: Versioning,
    },
    GetBucketVersioning {
        bucket: &'a str,
    },
    ListObjectVersions {
        bucket: &'a str,
        list: &'a VersionsRequest,
    },
    /// GET with `versionId`.
    GetObjectVersion {
        version: ObjectVersion<'a>,
        range: Option<ByteRange>,
    },
    HeadObjectVersion(ObjectVersion<'a>),
    /// Removes one version for good.
    DeleteObjectVersion(ObjectVersion<'a>),
}

/// One version of an object.
#[derive(Clone, Copy)]
pub struct ObjectVersion<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    pub version_id: &'a str,
}

pub struct PutObject<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    pub body: PutBody<'a>,
    pub opts: &'a PutOptions,
}

pub struct GetObjectPart<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    pub part_number: u32,
}

/// Deletes only if `condition` holds (none: always).
pub struct DeleteObject<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    pub condition: &'a DeleteCondition,
}

/// `opts: None` keeps the source's content type and metadata (COPY);
/// `Some` replaces them (REPLACE).
pub struct CopyObject<'a> {
    pub src_bucket: &'a str,
    pub src_key: &'a str,
    pub dst_bucket: &'a str,
    pub dst_key: &'a str,
    pub opts: Option<&'a PutOptions>,
    pub condition: &'a WriteCondition,
}

pub struct UploadPart<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    pub upload_id: &'a str,
    pub part_number: u32,
    pub body: PutBody<'a>,
}

/// `parts` are `(part_number, etag)` in ascending part order.
pub struct CompleteMultipartUpload<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    pub upload_id: &'a str,
    pub parts: &'a [(u32, String)],
    pub condition: &'a WriteCondition,
}

/// One multipart upload.
pub struct Upload<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    pub upload_id: &'a str,
}

impl Request<'_> {
    /// The operation's name as S3 spells it, for errors and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Request::CreateBucket { .. } => "CreateBucket",
            Request::DeleteBucket { .. } => "DeleteBucket",
            Request::HeadBucket { .. } => "HeadBucket",
            Request::ListBuckets => "ListBuckets",
            Request::PutObject { .. } => "PutObject",
            Request::GetObject { .. } => "GetObject",
            Request::GetObjectPart { .. } => "GetObject (partNumber)",
            Request::HeadObject { .. } => "HeadObject",
            Request::DeleteObject { .. } => "DeleteObject",
            Request::ListObjects { .. } => "ListObjectsV2",
            Request::CopyObject { .. } => "CopyObject",
            Request::GetObjectTagging { .. } => "GetObjectTagging",
            Request::PutObjectTagging { .. } => "PutObjectTagging",
            Request::DeleteObjectTagging { .. } => "DeleteObjectTagging",
            Request::CreateMultipartUpload { .. } => "CreateMultipartUpload",
            Request::UploadPart { .. } => "UploadPart",
            Request::CompleteMultipartUpload { .. } => "CompleteMultipartUpload",
            Request::AbortMultipartUpload { .. } => "AbortMultipartUpload",
            Request::ListParts { .. } => "ListParts",
            Request::ListMultipartUploads { .. } => "ListMultipartUploads",
            Request::PutBucketVersioning { .. } => "PutBucketVersioning",
            Request::GetBucketVersioning { .. } => "GetBucketVersioning",
            Request::ListObjectVersions { .. } => "ListObjectVersions",
            Request::GetObjectVersion { .. } => "GetObject (versionId)",
            Request::HeadObjectVersion(_) => "HeadObject (versionId)",
            Request::DeleteObjectVersion(_) => "DeleteObject (versionId)",
        }
    }
}

/// What an operation answers, by its [`Request`]:
pub enum Response {
    /// CreateBucket, DeleteBucket, HeadBucket, DeleteObject,
    /// PutObjectTagging, DeleteObjectTagging, AbortMultipartUpload.
    Done,
    Buckets(Vec<BucketInfo>),
    /// PutObject and UploadPart: the quoted ETag.
    ETag(String),
    /// GetObject.
    Object(GetObject),
    /// GetObjectPart: the part, and how many parts the object has (None:
    /// not uploaded in parts).
    ObjectPart(GetObject, Option<u32>),
    /// HeadObject, CopyObject, CompleteMultipartUpload.
    Info(ObjectInfo),
    List(ListPage),
    UploadId(String),
    Parts(Vec<PartInfo>),
    Uploads(Vec<UploadInfo>),
    Tags(Tags),
    /// GetBucketVersioning.
    Versioning(Versioning),
    /// ListObjectVersions.
    Versions(VersionsPage),
}

impl Response {
    /// `Done`, whatever the operation returned (for `Result::map`).
    pub fn done<T>(_: T) -> Response {
        Response::Done
    }

    fn kind(&self) -> &'static str {
        match self {
            Response::Done => "nothing",
            Response::Buckets(_) => "buckets",
            Response::ETag(_) => "an ETag",
            Response::Object(_) => "an object",
            Response::ObjectPart(..) => "an object's part",
            Response::Info(_) => "an object's attributes",
            Response::List(_) => "a listing",
            Response::UploadId(_) => "an upload id",
            Response::Parts(_) => "parts",
            Response::Uploads(_) => "uploads",
            Response::Tags(_) => "tags",
            Response::Versioning(_) => "a versioning state",
            Response::Versions(_) => "a listing of versions",
        }
    }
}

/// The error of a transport that has no way to carry versions yet.
pub fn no_versions(transport: &str) -> S3Error {
    crate::not_carried(
        transport,
        "object versions (versionId, versioning, ListObjectVersions)",
    )
}

/// The error for a transport that answered `op` with the wrong kind of
/// response: a bug in that transport, never the caller's.
pub fn mismatched(op: &str, got: &Response) -> S3Error {
    S3Error::new(
        ErrorCode::InternalError,
        format!(
            "{op} was answered with {} by the transport: a bug in s3hpc, please report it",
            got.kind()
        ),
    )
}

/// `body` for a request whose other arguments live shorter: a reader's
/// lifetime is invariant behind `&mut`, so it is narrowed explicitly.
pub(crate) fn narrow<'s, 'l: 's>(body: PutBody<'l>) -> PutBody<'s> {
    match body {
        PutBody::Bytes(b) => PutBody::Bytes(b),
        PutBody::Stream { reader, len } => PutBody::Stream { reader, len },
    }
}

/// Sends `req` through `client.call` and unpacks the response it must
/// answer with: `answer!(self, Request::X { .. }, Response::Y(v) => v)`.
macro_rules! answer {
    ($client:expr, $req:expr, $pat:pat => $v:expr) => {{
        let req = $req;
        let op = req.name();
        match $client.call(req)? {
            $pat => Ok($v),
            other => Err($crate::op::mismatched(op, &other)),
        }
    }};
}
pub(crate) use answer;
