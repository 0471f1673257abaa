//! `S3Client`: the one interface every transport implements (embedded
//! here, HTTP with the feature of that name, remote RPC in `s3hpc-rpc`,
//! libs3 in the benchmarks). Benchmarks and the libs3 drop-in talk only to
//! this trait, so a transport is chosen at run time. The operations are
//! one catalogue ([`op`]): a transport serves all of them in one `match`.
//!
//! The trait is blocking: benchmark ranks are threads or MPI processes, and
//! a synchronous call is also what the libs3 C ABI exposes.

mod embedded;
#[cfg(feature = "http")]
pub mod http;
pub mod op;

pub use embedded::EmbeddedClient;
#[cfg(feature = "http")]
pub use http::{HttpClient, HttpClientConfig};
use op::answer;
pub use op::{Request, Response};
pub use s3hpc_store::{
    AclEntry, AclTag, BucketInfo, ByteRange, DeleteCondition, ErrorCode, KeyVersion, ListPage,
    ListRequest, ObjectHeaders, ObjectInfo, PartInfo, PermissionChange, PutBody, PutOptions,
    Result, S3Error, UploadInfo, Versioning, VersionsPage, VersionsRequest, WriteCondition,
};

/// Object tags, key to value.
pub type Tags = std::collections::BTreeMap<String, String>;

use std::io::Read;

/// The answer to a GET: what the object is, which bytes follow, and a reader
/// that streams exactly those bytes.
pub struct GetObject {
    pub info: ObjectInfo,
    /// `(offset, length)` of the bytes `body` yields.
    pub offset: u64,
    pub length: u64,
    pub body: Box<dyn ObjectBody>,
}

/// A GET body: a reader of exactly the requested bytes which may also say
/// which local file they come from.
pub trait ObjectBody: Read + Send {
    /// The open, read-only file holding the bytes (at the GET's offset), if
    /// the body reads a local file. The RPC gateway passes it to clients on
    /// the same node, which then read the page cache directly.
    fn file(&self) -> Option<&std::fs::File> {
        None
    }
}

impl ObjectBody for s3hpc_store::ObjectReader {
    fn file(&self) -> Option<&std::fs::File> {
        Some(s3hpc_store::ObjectReader::file(self))
    }
}

/// S3 operations, as a client sees them. A transport implements
/// [`S3Client::call`], one exhaustive `match` over the operations of
/// [`Request`]; the typed methods are thin wrappers around it that callers
/// use.
pub trait S3Client: Send + Sync {
    /// A short name for reports: `embedded`, `remote`, `http`, ...
    fn transport(&self) -> &'static str;

    /// The uid this client's calls act as when it switches to a user (an
    /// engine acting for a gateway's peer or a key), for access logs;
    /// None: the calling process's own.
    fn acting_uid(&self) -> Option<u32> {
        None
    }

    /// Performs one operation. A transport with no way to carry one
    /// answers NotImplemented ([`not_carried`]); a condition it cannot
    /// carry is refused ([`refuse_condition`]), never dropped.
    fn call(&self, req: Request<'_>) -> Result<Response>;

    /// Creates a bucket. Creating one the caller owns already succeeds and
    /// changes nothing, as AWS (us-east-1) and Ceph RGW answer; see
    /// [`owned_is_created`].
    fn create_bucket(&self, bucket: &str) -> Result<()> {
        answer!(self, Request::CreateBucket { bucket }, Response::Done => ())
    }
    fn delete_bucket(&self, bucket: &str) -> Result<()> {
        answer!(self, Request::DeleteBucket { bucket }, Response::Done => ())
    }
    fn head_bucket(&self, bucket: &str) -> Result<()> {
        answer!(self, Request::HeadBucket { bucket }, Response::Done => ())
    }
    fn list_buckets(&self) -> Result<Vec<BucketInfo>> {
        answer!(self, Request::ListBuckets, Response::Buckets(b) => b)
    }

    /// Stores an object atomically and returns its ETag (quoted).
    fn put_object(
        &self,
        bucket: &str,
        key: &str,
        body: PutBody<'_>,
        opts: &PutOptions,
    ) -> Result<String> {
        let req = Request::PutObject(op::PutObject {
            bucket,
            key,
            body: op::narrow(body),
            opts,
        });
        answer!(self, req, Response::ETag(e) => e)
    }
    fn get_object(&self, bucket: &str, key: &str, range: Option<ByteRange>) -> Result<GetObject> {
        let req = Request::GetObject { bucket, key, range };
        answer!(self, req, Response::Object(g) => g)
    }
    /// A whole object read into `buf`, which must be exactly its length
    /// (as [`read_exact_body`] checks). For callers that know the size
    /// (benchmarks reading back what they wrote); a transport whose data
    /// arrives by callback (libs3) writes straight into `buf`.
    fn get_object_into(&self, bucket: &str, key: &str, buf: &mut [u8]) -> Result<ObjectInfo> {
        let mut got = self.get_object(bucket, key, None)?;
        read_exact_body(&mut got, buf)?;
        Ok(got.info)
    }
    /// GET with `partNumber`: the bytes of part `part_number` of a
    /// multipart object (part 1 of an object not uploaded in parts is all
    /// of it; any other part of it is InvalidPart), and how many parts the
    /// object has (None: not uploaded in parts).
    fn get_object_part(
        &self,
        bucket: &str,
        key: &str,
        part_number: u32,
    ) -> Result<(GetObject, Option<u32>)> {
        let req = Request::GetObjectPart(op::GetObjectPart {
            bucket,
            key,
            part_number,
        });
        answer!(self, req, Response::ObjectPart(g, n) => (g, n))
    }
    fn head_object(&self, bucket: &str, key: &str) -> Result<ObjectInfo> {
        answer!(self, Request::HeadObject { bucket, key }, Response::Info(i) => i)
    }
    /// Idempotent: deleting a missing key succeeds, as in S3.
    fn delete_object(&self, bucket: &str, key: &str) -> Result<()> {
        self.delete_object_if(bucket, key, &DeleteCondition::default())
    }
    /// [`S3Client::delete_object`] that deletes only if `cond` holds for
    /// the object (If-Match, size, last-modified time), else
    /// PreconditionFailed and the object stays; a missing key succeeds. A
    /// transport that cannot carry a condition refuses it with
    /// NotImplemented rather than delete unconditionally.
    fn delete_object_if(&self, bucket: &str, key: &str, cond: &DeleteCondition) -> Result<()> {
        let req = Request::DeleteObject(op::DeleteObject {
            bucket,
            key,
            condition: cond,
        });
        answer!(self, req, Response::Done => ())
    }
    fn list_objects(&self, bucket: &str, req: &ListRequest) -> Result<ListPage> {
        let req = Request::ListObjects { bucket, list: req };
        answer!(self, req, Response::List(page) => page)
    }
    /// Copies an object. `opts: None` keeps the source's content type and
    /// metadata (S3's COPY directive); `Some` replaces them (REPLACE).
    fn copy_object(
        &self,
        src_bucket: &str,
        src_key: &str,
        dst_bucket: &str,
        dst_key: &str,
        opts: Option<&PutOptions>,
    ) -> Result<ObjectInfo> {
        let always = &WriteCondition::Always;
        self.copy_object_if(src_bucket, src_key, dst_bucket, dst_key, opts, always)
    }

    /// [`S3Client::copy_object`] whose destination is written only if
    /// `cond` holds (`If-None-Match: *` / `If-Match`), else
    /// PreconditionFailed and the destination is untouched. A transport
    /// that cannot carry a condition refuses one with NotImplemented
    /// ([`refuse_condition`]) rather than write unconditionally.
    fn copy_object_if(
        &self,
        src_bucket: &str,
        src_key: &str,
        dst_bucket: &str,
        dst_key: &str,
        opts: Option<&PutOptions>,
        cond: &WriteCondition,
    ) -> Result<ObjectInfo> {
        let req = Request::CopyObject(op::CopyObject {
            src_bucket,
            src_key,
            dst_bucket,
            dst_key,
            opts,
            condition: cond,
        });
        answer!(self, req, Response::Info(i) => i)
    }

    /// The object's tags.
    fn get_object_tagging(&self, bucket: &str, key: &str) -> Result<Tags> {
        answer!(self, Request::GetObjectTagging { bucket, key }, Response::Tags(t) => t)
    }
    /// Replaces the object's tags (at most 10).
    fn put_object_tagging(&self, bucket: &str, key: &str, tags: &Tags) -> Result<()> {
        let req = Request::PutObjectTagging { bucket, key, tags };
        answer!(self, req, Response::Done => ())
    }
    fn delete_object_tagging(&self, bucket: &str, key: &str) -> Result<()> {
        answer!(self, Request::DeleteObjectTagging { bucket, key }, Response::Done => ())
    }

    fn create_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        opts: &PutOptions,
    ) -> Result<String> {
        let req = Request::CreateMultipartUpload { bucket, key, opts };
        answer!(self, req, Response::UploadId(id) => id)
    }
    /// Returns the part's ETag (quoted).
    fn upload_part(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        part_number: u32,
        body: PutBody<'_>,
    ) -> Result<String> {
        let req = Request::UploadPart(op::UploadPart {
            bucket,
            key,
            upload_id,
            part_number,
            body: op::narrow(body),
        });
        answer!(self, req, Response::ETag(e) => e)
    }
    /// `parts` are `(part_number, etag)` in ascending part order.
    fn complete_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
    ) -> Result<ObjectInfo> {
        let always = &WriteCondition::Always;
        self.complete_multipart_upload_if(bucket, key, upload_id, parts, always)
    }
    /// [`S3Client::complete_multipart_upload`] that makes the object only
    /// if `cond` holds; otherwise PreconditionFailed and the upload stays.
    fn complete_multipart_upload_if(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
        cond: &WriteCondition,
    ) -> Result<ObjectInfo> {
        let req = Request::CompleteMultipartUpload(op::CompleteMultipartUpload {
            bucket,
            key,
            upload_id,
            parts,
            condition: cond,
        });
        answer!(self, req, Response::Info(i) => i)
    }
    fn abort_multipart_upload(&self, bucket: &str, key: &str, upload_id: &str) -> Result<()> {
        let upload = op::Upload {
            bucket,
            key,
            upload_id,
        };
        let req = Request::AbortMultipartUpload(upload);
        answer!(self, req, Response::Done => ())
    }
    fn list_parts(&self, bucket: &str, key: &str, upload_id: &str) -> Result<Vec<PartInfo>> {
        let upload = op::Upload {
            bucket,
            key,
            upload_id,
        };
        let req = Request::ListParts(upload);
        answer!(self, req, Response::Parts(p) => p)
    }
    fn list_multipart_uploads(&self, bucket: &str, prefix: &str) -> Result<Vec<UploadInfo>> {
        let req = Request::ListMultipartUploads { bucket, prefix };
        answer!(self, req, Response::Uploads(u) => u)
    }

    /// Enables or suspends the bucket's versioning (its owner only).
    fn put_bucket_versioning(&self, bucket: &str, state: Versioning) -> Result<()> {
        let req = Request::PutBucketVersioning { bucket, state };
        answer!(self, req, Response::Done => ())
    }
    fn get_bucket_versioning(&self, bucket: &str) -> Result<Versioning> {
        answer!(self, Request::GetBucketVersioning { bucket }, Response::Versioning(v) => v)
    }
    fn list_object_versions(&self, bucket: &str, list: &VersionsRequest) -> Result<VersionsPage> {
        let req = Request::ListObjectVersions { bucket, list };
        answer!(self, req, Response::Versions(page) => page)
    }
    fn get_object_version(
        &self,
        bucket: &str,
        key: &str,
        version_id: &str,
        range: Option<ByteRange>,
    ) -> Result<GetObject> {
        let version = op::ObjectVersion {
            bucket,
            key,
            version_id,
        };
        let req = Request::GetObjectVersion { version, range };
        answer!(self, req, Response::Object(g) => g)
    }
    fn head_object_version(&self, bucket: &str, key: &str, version_id: &str) -> Result<ObjectInfo> {
        let version = op::ObjectVersion {
            bucket,
            key,
            version_id,
        };
        answer!(self, Request::HeadObjectVersion(version), Response::Info(i) => i)
    }
    /// Removes one version for good (the next newest becomes current).
    fn delete_object_version(&self, bucket: &str, key: &str, version_id: &str) -> Result<()> {
        let version = op::ObjectVersion {
            bucket,
            key,
            version_id,
        };
        answer!(self, Request::DeleteObjectVersion(version), Response::Done => ())
    }
}

/// The answer every transport gives to re-creating one's own bucket:
/// success, as AWS gives it in us-east-1 (the region this server answers
/// for) and Ceph RGW everywhere, so that an idempotent "make sure the bucket
/// exists" works on every transport and against servers that answer 409
/// BucketAlreadyOwnedByYou instead. Someone else's bucket stays an error.
pub fn owned_is_created(r: Result<()>) -> Result<()> {
    match r {
        Err(e) if e.code == ErrorCode::BucketAlreadyOwnedByYou => Ok(()),
        r => r,
    }
}

/// NotImplemented for a transport that has no way to send `what`.
pub fn not_carried(transport: &str, what: &str) -> S3Error {
    S3Error::new(
        ErrorCode::NotImplemented,
        format!("the {transport} transport cannot carry {what}; use the embedded, remote or http transport"),
    )
}

/// Refuses a write condition a transport cannot carry: writing without it
/// would silently break the caller's guarantee.
pub fn refuse_condition(transport: &str, cond: &WriteCondition) -> Result<()> {
    if cond.is_always() {
        return Ok(());
    }
    Err(not_carried(
        transport,
        "If-None-Match / If-Match write conditions",
    ))
}

/// Refuses an object lock a transport cannot carry: a version written
/// without it could be deleted, which the caller asked to prevent.
pub fn refuse_lock(transport: &str, opts: &PutOptions) -> Result<()> {
    if opts.retention.is_none() && opts.legal_hold.is_none() {
        return Ok(());
    }
    Err(not_carried(
        transport,
        "object lock retention or legal hold",
    ))
}

/// Reads a whole GET body into `buf`, which must be exactly the object's
/// length; a short or long body is an IncompleteBody error. Used where the
/// caller knows the size (benchmarks reading back what they wrote).
pub fn read_exact_body(get: &mut GetObject, buf: &mut [u8]) -> Result<()> {
    if get.length != buf.len() as u64 {
        return Err(S3Error::new(
            ErrorCode::IncompleteBody,
            format!(
                "object {} has {} bytes, expected {}",
                get.info.key,
                get.length,
                buf.len()
            ),
        ));
    }
    get.body
        .read_exact(buf)
        .map_err(|e| S3Error::from_io(&e, &get.info.key))
}
