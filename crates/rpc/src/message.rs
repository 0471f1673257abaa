//! What requests and replies carry. Payloads are the postcard encoding
//! (<https://postcard.jamesmunk.us/wire-format.html>) of these types, whose
//! field lists docs/src/reference/rpc-protocol.md gives per op. postcard is compact (varints, no
//! field names), has a published wire format, and decodes from a bounded
//! slice: it never allocates beyond what the frame holds, so a hostile
//! payload cannot drive an allocation.
//!
//! The first byte of a request payload is the variant index of
//! [`Request`], which is also the op code in the frame header. Requests
//! borrow their strings from the received frame: no copy on the server.

use s3hpc_client::{
    BucketInfo, ByteRange, DeleteCondition, ErrorCode, ListPage, ListRequest, ObjectInfo, PartInfo,
    PutOptions, S3Error, Tags, UploadInfo, Versioning, VersionsPage, VersionsRequest,
    WriteCondition,
};
use s3hpc_keys::{KeyInfo, NewKey, SessionCredentials};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The protocol version both sides announce in the handshake. Bump it with
/// any change to a frame, a request or a reply (the golden-bytes test in
/// this module fails on such a change until it is bumped and updated).
pub const VERSION: u32 = 7;

/// The oldest client version a gateway still serves. Version 7 appended
/// the versions' operations and carries an object's version id in its
/// attributes (`ObjectInfo`), which changes the encoding of every reply
/// that holds them, so older clients are refused at their handshake with
/// both versions named.
pub const MIN_VERSION: u32 = 7;

/// Most parts one completion may name, as in S3.
pub const MAX_PARTS: usize = 10_000;

/// One request. The order of the variants is the op-code table: never
/// reorder, only append (and bump [`VERSION`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request<'a> {
    CreateBucket {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
    },
    DeleteBucket {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
    },
    HeadBucket {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
    },
    ListBuckets,
    /// Followed by the body as data frames. `len`, when given, is checked.
    PutObject {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
        len: Option<u64>,
        opts: Cow<'a, PutOptions>,
    },
    GetObject {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
        range: Option<ByteRange>,
        /// The client accepts the object's open file instead of its bytes
        /// (it is on the same node, over a Unix socket).
        fd_ok: bool,
    },
    HeadObject {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
    },
    DeleteObject {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
    },
    ListObjects {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        list: Cow<'a, ListRequest>,
    },
    CopyObject {
        #[serde(borrow)]
        src_bucket: Cow<'a, str>,
        #[serde(borrow)]
        src_key: Cow<'a, str>,
        #[serde(borrow)]
        dst_bucket: Cow<'a, str>,
        #[serde(borrow)]
        dst_key: Cow<'a, str>,
        /// `None`: keep the source's content type and metadata.
        opts: Option<Cow<'a, PutOptions>>,
        /// Written only if this holds for the destination (version 2).
        condition: WriteCondition,
    },
    CreateMultipartUpload {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
        opts: Cow<'a, PutOptions>,
    },
    /// Followed by the body as data frames.
    UploadPart {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
        #[serde(borrow)]
        upload_id: Cow<'a, str>,
        part_number: u32,
        len: Option<u64>,
    },
    CompleteMultipartUpload {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
        #[serde(borrow)]
        upload_id: Cow<'a, str>,
        parts: Cow<'a, [(u32, String)]>,
        /// The object is made only if this holds (version 2).
        condition: WriteCondition,
    },
    AbortMultipartUpload {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
        #[serde(borrow)]
        upload_id: Cow<'a, str>,
    },
    ListParts {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
        #[serde(borrow)]
        upload_id: Cow<'a, str>,
    },
    ListMultipartUploads {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        prefix: Cow<'a, str>,
    },
    /// Unix sockets only: the frame carries a sealed memfd of `size` bytes
    /// (SCM_RIGHTS) that later PUT bodies on this connection may come in
    /// (a `SharedBody` frame instead of data frames).
    AttachSharedBuffer {
        size: u64,
    },
    /// Version 2 on: object tags.
    GetObjectTagging {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
    },
    PutObjectTagging {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
        tags: Cow<'a, Tags>,
    },
    DeleteObjectTagging {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
    },
    /// Version 3 on: DeleteObject with conditions (If-Match, size,
    /// last-modified time).
    DeleteObjectIf {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
        condition: Cow<'a, DeleteCondition>,
    },
    /// Version 4 on: GET with `partNumber`, answered by `ObjectPart`.
    GetObjectPart {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        #[serde(borrow)]
        key: Cow<'a, str>,
        part_number: u32,
    },
    /// Version 6 on, Unix sockets only (the kernel names the caller): a
    /// new key of the caller's uid in the key store, answered by `NewKey`.
    KeyCreate {
        valid_secs: Option<u64>,
    },
    /// The caller's keys (`uid`: another user's, for root and the
    /// server's user; None: all of theirs), answered by `Keys`.
    KeyList {
        uid: Option<u32>,
    },
    /// Revokes one of the caller's keys (anyone's, for root and the
    /// server's user).
    KeyRevoke {
        #[serde(borrow)]
        access_key: Cow<'a, str>,
    },
    /// Revokes every key of `uid` (the caller's if None) and voids its
    /// sessions issued so far, answered by `Keys` (those removed).
    KeyRevokeAll {
        uid: Option<u32>,
    },
    /// Temporary credentials of the caller's uid, answered by `Session`.
    SessionCreate {
        valid_secs: u64,
    },
    /// PutBucketVersioning (version 7 on, as are the five below).
    PutBucketVersioning {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        state: Versioning,
    },
    GetBucketVersioning {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
    },
    ListObjectVersions {
        #[serde(borrow)]
        bucket: Cow<'a, str>,
        list: VersionsRequest,
    },
    /// Answered as GetObject (`Object`, data frames follow).
    GetObjectVersion {
        #[serde(borrow)]
        version: VersionRef<'a>,
        range: Option<ByteRange>,
    },
    HeadObjectVersion(#[serde(borrow)] VersionRef<'a>),
    DeleteObjectVersion(#[serde(borrow)] VersionRef<'a>),
}

impl Request<'_> {
    /// The bucket and key the request is about (a copy's destination).
    pub fn target(&self) -> (Option<&str>, Option<&str>) {
        use Request::*;
        match self {
            CreateBucket { bucket }
            | DeleteBucket { bucket }
            | HeadBucket { bucket }
            | ListObjects { bucket, .. }
            | ListMultipartUploads { bucket, .. }
            | PutBucketVersioning { bucket, .. }
            | GetBucketVersioning { bucket }
            | ListObjectVersions { bucket, .. } => (Some(bucket), None),
            PutObject { bucket, key, .. }
            | GetObject { bucket, key, .. }
            | HeadObject { bucket, key }
            | DeleteObject { bucket, key }
            | DeleteObjectIf { bucket, key, .. }
            | GetObjectPart { bucket, key, .. }
            | CreateMultipartUpload { bucket, key, .. }
            | UploadPart { bucket, key, .. }
            | CompleteMultipartUpload { bucket, key, .. }
            | AbortMultipartUpload { bucket, key, .. }
            | ListParts { bucket, key, .. }
            | GetObjectTagging { bucket, key }
            | PutObjectTagging { bucket, key, .. }
            | DeleteObjectTagging { bucket, key }
            | GetObjectVersion {
                version: VersionRef { bucket, key, .. },
                ..
            }
            | HeadObjectVersion(VersionRef { bucket, key, .. })
            | DeleteObjectVersion(VersionRef { bucket, key, .. }) => (Some(bucket), Some(key)),
            CopyObject {
                dst_bucket,
                dst_key,
                ..
            } => (Some(dst_bucket), Some(dst_key)),
            ListBuckets
            | AttachSharedBuffer { .. }
            | KeyCreate { .. }
            | KeyList { .. }
            | KeyRevoke { .. }
            | KeyRevokeAll { .. }
            | SessionCreate { .. } => (None, None),
        }
    }

    /// The op code: the variant's index, as postcard writes it first.
    pub fn op(&self) -> u8 {
        match self {
            Request::CreateBucket { .. } => 0,
            Request::DeleteBucket { .. } => 1,
            Request::HeadBucket { .. } => 2,
            Request::ListBuckets => 3,
            Request::PutObject { .. } => 4,
            Request::GetObject { .. } => 5,
            Request::HeadObject { .. } => 6,
            Request::DeleteObject { .. } => 7,
            Request::ListObjects { .. } => 8,
            Request::CopyObject { .. } => 9,
            Request::CreateMultipartUpload { .. } => 10,
            Request::UploadPart { .. } => 11,
            Request::CompleteMultipartUpload { .. } => 12,
            Request::AbortMultipartUpload { .. } => 13,
            Request::ListParts { .. } => 14,
            Request::ListMultipartUploads { .. } => 15,
            Request::AttachSharedBuffer { .. } => 16,
            Request::GetObjectTagging { .. } => 17,
            Request::PutObjectTagging { .. } => 18,
            Request::DeleteObjectTagging { .. } => 19,
            Request::DeleteObjectIf { .. } => 20,
            Request::GetObjectPart { .. } => 21,
            Request::KeyCreate { .. } => 22,
            Request::KeyList { .. } => 23,
            Request::KeyRevoke { .. } => 24,
            Request::KeyRevokeAll { .. } => 25,
            Request::SessionCreate { .. } => 26,
            Request::PutBucketVersioning { .. } => 27,
            Request::GetBucketVersioning { .. } => 28,
            Request::ListObjectVersions { .. } => 29,
            Request::GetObjectVersion { .. } => 30,
            Request::HeadObjectVersion(_) => 31,
            Request::DeleteObjectVersion(_) => 32,
        }
    }

    /// Whether it is about keys rather than objects: served by the
    /// gateway's key store, as the socket's peer.
    pub fn is_key_op(&self) -> bool {
        (22..=26).contains(&self.op())
    }

    /// Whether data frames with a body follow the request.
    pub fn has_body(&self) -> bool {
        matches!(self, Request::PutObject { .. } | Request::UploadPart { .. })
    }

    /// A short name for logs and errors.
    pub fn name(&self) -> &'static str {
        op_name(self.op())
    }

    /// Decodes a request payload whose header named `op`, and checks the
    /// limits postcard cannot know.
    pub fn decode(op: u8, payload: &[u8]) -> Result<Request<'_>, String> {
        let req: Request = postcard::from_bytes(payload).map_err(|e| e.to_string())?;
        if req.op() != op {
            return Err(format!(
                "the header names op {op} but the payload holds {}",
                req.name()
            ));
        }
        if let Request::CompleteMultipartUpload { parts, .. } = &req {
            if parts.len() > MAX_PARTS {
                return Err(format!(
                    "{} parts named; an upload has at most {MAX_PARTS}",
                    parts.len()
                ));
            }
        }
        Ok(req)
    }
}

/// The name of an op code, `unknown` for codes outside the table.
pub fn op_name(op: u8) -> &'static str {
    const NAMES: [&str; 33] = [
        "CreateBucket",
        "DeleteBucket",
        "HeadBucket",
        "ListBuckets",
        "PutObject",
        "GetObject",
        "HeadObject",
        "DeleteObject",
        "ListObjects",
        "CopyObject",
        "CreateMultipartUpload",
        "UploadPart",
        "CompleteMultipartUpload",
        "AbortMultipartUpload",
        "ListParts",
        "ListMultipartUploads",
        "AttachSharedBuffer",
        "GetObjectTagging",
        "PutObjectTagging",
        "DeleteObjectTagging",
        "DeleteObjectIf",
        "GetObjectPart",
        "KeyCreate",
        "KeyList",
        "KeyRevoke",
        "KeyRevokeAll",
        "SessionCreate",
        "PutBucketVersioning",
        "GetBucketVersioning",
        "ListObjectVersions",
        "GetObjectVersion",
        "HeadObjectVersion",
        "DeleteObjectVersion",
    ];
    NAMES.get(op as usize).copied().unwrap_or("unknown")
}

/// One version of an object, as the versions' requests name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionRef<'a> {
    #[serde(borrow)]
    pub bucket: Cow<'a, str>,
    #[serde(borrow)]
    pub key: Cow<'a, str>,
    #[serde(borrow)]
    pub version_id: Cow<'a, str>,
}

/// A successful reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Response {
    Done,
    Buckets(Vec<BucketInfo>),
    /// PutObject and UploadPart: the quoted ETag.
    ETag(String),
    /// GetObject: followed by `length` bytes as data frames.
    Object {
        info: ObjectInfo,
        offset: u64,
        length: u64,
    },
    /// HeadObject, CopyObject, CompleteMultipartUpload.
    Info(ObjectInfo),
    List(ListPage),
    UploadId(String),
    Parts(Vec<PartInfo>),
    Uploads(Vec<UploadInfo>),
    /// GetObject to a same-node client that said `fd_ok`: the object's file,
    /// open read-only, travels with this frame (SCM_RIGHTS); the client
    /// reads `length` bytes at `offset` from it. No data frames follow.
    ObjectFd {
        info: ObjectInfo,
        offset: u64,
        length: u64,
    },
    /// GetObjectTagging (version 2).
    Tags(Tags),
    /// GetObjectPart (version 4): as `Object` (data frames follow), and
    /// how many parts the object has (None: not uploaded in parts).
    ObjectPart {
        info: ObjectInfo,
        offset: u64,
        length: u64,
        parts_count: Option<u32>,
    },
    /// KeyCreate (version 6): the secret, shown this once.
    NewKey(NewKey),
    /// KeyList, KeyRevokeAll (version 6): never a secret.
    Keys(Vec<KeyInfo>),
    /// SessionCreate (version 6).
    Session(SessionCredentials),
    /// GetBucketVersioning (version 7).
    Versioning(Versioning),
    /// ListObjectVersions (version 7).
    Versions(VersionsPage),
}

/// A failed reply: the S3 error code (as S3 spells it) and the message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireError<'a> {
    #[serde(borrow)]
    pub code: Cow<'a, str>,
    #[serde(borrow)]
    pub message: Cow<'a, str>,
}

impl<'a> From<&'a S3Error> for WireError<'a> {
    fn from(e: &'a S3Error) -> Self {
        WireError {
            code: Cow::Borrowed(e.code.as_str()),
            message: Cow::Borrowed(&e.message),
        }
    }
}

impl From<WireError<'_>> for S3Error {
    fn from(w: WireError<'_>) -> Self {
        match ErrorCode::from_wire(&w.code) {
            Some(code) => S3Error::new(code, w.message.into_owned()),
            // A newer gateway's code: keep it readable rather than lose it.
            None => S3Error::new(
                ErrorCode::InternalError,
                format!("{} ({})", w.message, w.code),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use s3hpc_client::ObjectHeaders;
    use std::collections::BTreeMap;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn op_codes_are_the_variant_indices() {
        let opts = PutOptions::default();
        let reqs = [
            Request::ListBuckets,
            Request::PutObject {
                bucket: "b".into(),
                key: "k".into(),
                len: Some(3),
                opts: Cow::Borrowed(&opts),
            },
            Request::ListMultipartUploads {
                bucket: "b".into(),
                prefix: "".into(),
            },
        ];
        for r in reqs {
            let bytes = postcard::to_allocvec(&r).unwrap();
            assert_eq!(bytes[0], r.op(), "{r:?}");
            assert_eq!(Request::decode(r.op(), &bytes).unwrap(), r);
            assert!(Request::decode(r.op() ^ 1, &bytes).is_err());
        }
    }

    /// Pins the encoding: a change to these types changes the bytes, and
    /// must come with a new VERSION.
    #[test]
    fn golden_bytes() {
        let opts = PutOptions {
            content_type: Some("t".into()),
            metadata: BTreeMap::from([("m".to_string(), "v".to_string())]),
            checksum: None,
            content_md5: None,
            tags: BTreeMap::from([("t".to_string(), "u".to_string())]),
            condition: WriteCondition::IfMatch("e".into()),
            headers: ObjectHeaders {
                cache_control: Some("c".into()),
                ..Default::default()
            },
            access: Some(s3hpc_client::PermissionChange {
                group: 4,
                other: 4,
                named: vec![s3hpc_client::AclEntry {
                    tag: s3hpc_client::AclTag::User,
                    id: 1001,
                    perm: 4,
                }],
                bucket_owner: 0,
            }),
            // Not carried (the client refuses them).
            retention: None,
            legal_hold: None,
        };
        let put = Request::PutObject {
            bucket: "bk".into(),
            key: "a/b".into(),
            len: Some(300),
            opts: Cow::Borrowed(&opts),
        };
        assert_eq!(
            postcard::to_allocvec(&put).unwrap(),
            [
                4, 2, b'b', b'k', 3, b'a', b'/', b'b', 1, 0xac, 2, 1, 1, b't', 1, 1, b'm', 1, b'v',
                0, 0, 1, 1, b't', 1, b'u', 2, 1, b'e', 1, 1, b'c', 0, 0, 0, 0, 1, 4, 4, 1, 1, 0xe9,
                7, 4, 0
            ]
        );
        let info = Response::Info(ObjectInfo {
            key: "k".into(),
            size: 5,
            last_modified: UNIX_EPOCH + Duration::new(2, 3),
            etag: "\"e\"".into(),
            content_type: None,
            metadata: BTreeMap::new(),
            checksum: None,
            tag_count: 3,
            headers: ObjectHeaders::default(),
            owner: None,
            version_id: None,
            lock: Default::default(),
        });
        assert_eq!(
            postcard::to_allocvec(&info).unwrap(),
            [4, 1, b'k', 5, 2, 3, 3, b'"', b'e', b'"', 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]
        );
        let create = Request::KeyCreate {
            valid_secs: Some(300),
        };
        assert_eq!(postcard::to_allocvec(&create).unwrap(), [22, 1, 0xac, 2]);
        let head = Request::HeadObjectVersion(VersionRef {
            bucket: "b".into(),
            key: "k".into(),
            version_id: "null".into(),
        });
        assert_eq!(
            postcard::to_allocvec(&head).unwrap(),
            [31, 1, b'b', 1, b'k', 4, b'n', b'u', b'l', b'l']
        );
        assert_eq!(VERSION, 7, "update the golden bytes with the version");
    }

    #[test]
    fn hostile_payloads_are_errors_not_allocations() {
        // A list of 2^60 parts announced in a few bytes.
        let mut evil = vec![12u8, 1, b'b', 1, b'k', 1, b'u'];
        evil.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(Request::decode(12, &evil).is_err());
        // A string longer than the payload.
        assert!(Request::decode(0, &[0, 0xff, 0xff, 0x03, b'x']).is_err());
        assert!(Request::decode(200, &[200]).is_err());
        assert!(Request::decode(0, &[]).is_err());
        // Invalid UTF-8 in a key.
        assert!(Request::decode(6, &[6, 1, b'b', 1, 0xff]).is_err());
    }

    #[test]
    fn unknown_error_codes_survive() {
        let e: S3Error = WireError {
            code: "SlowDown".into(),
            message: "busy".into(),
        }
        .into();
        assert_eq!(e.code, ErrorCode::InternalError);
        assert!(e.message.contains("SlowDown"));
        let e: S3Error = WireError {
            code: "NoSuchKey".into(),
            message: "gone".into(),
        }
        .into();
        assert_eq!(e.code, ErrorCode::NoSuchKey);
    }
}
