//! The S3 operations over the engine. s3s has parsed, authenticated and
//! validated the request; each method maps it onto `Store` calls and the
//! result back. File-system calls run on the blocking side of tokio.
//!
//! One module per S3 concern (as Garage's `api/s3` does); this file holds
//! what they share and the table that routes each `S3` trait method to its
//! module, so that an operation has exactly one home.

mod acls;
mod bucket_logging;
mod buckets;
mod configurations;
mod copy;
mod cors;
mod expected_owner;
mod lifecycle;
mod listing;
mod multipart;
mod object_lock;
mod objects;
mod policies;
mod tagging;

use crate::body::{self, BodyFault, ChannelReader, Decoded, Framing, Incoming};
use crate::convert::s3_error;
use crate::gather::BufferPool;
use crate::owners::Owners;
use crate::write_gate::WriteGate;
use base64::Engine as _;
use s3hpc_store::{Acting, Identity, PutBody, Store};
use s3s::auth::Credentials;
use s3s::dto::*;
use s3s::stream::ByteStream as _;
use s3s::{s3_error, S3Request, S3Response, S3Result, S3};
use std::sync::Arc;

/// The S3 service: the engine, and who each access key acts as.
pub(crate) struct Service {
    pub store: Arc<Store>,
    pub io: Arc<Io>,
    /// Who each access key is. Without (`None`, an anonymous server),
    /// every request acts as the server.
    pub keyring: Option<Arc<crate::keyring::Keyring>>,
    /// Files' uids as S3 owners, on an anonymous server (the keyring has
    /// its own, which a reload of the credentials replaces).
    pub owners: Arc<Owners>,
    /// The logs delivered into buckets: told when a bucket's configuration
    /// changes.
    pub bucket_logs: Arc<crate::bucket_logs::BucketLogs>,
}

/// What every request shares: the write gate and the body buffers.
#[derive(Default)]
pub(crate) struct Io {
    pub writes: WriteGate,
    pub buffers: BufferPool,
}

/// What one request works with: the engine acting as the request's
/// identity (the only way a handler reaches the file system), and the
/// server's shared write gate and buffers.
pub(crate) struct Engine {
    pub store: Acting,
    pub io: Arc<Io>,
    pub owners: Arc<Owners>,
    /// The kind of key the request was signed with, for the access log.
    pub key_kind: Option<&'static str>,
    pub bucket_logs: Arc<crate::bucket_logs::BucketLogs>,
}

impl Service {
    /// The engine as the request's sender: an access key's user, the
    /// anonymous user for an unsigned request.
    fn engine(
        &self,
        credentials: Option<&Credentials>,
        headers: &hyper::HeaderMap,
        uri: &hyper::Uri,
    ) -> S3Result<Engine> {
        let (who, owners, kind) = match (&self.keyring, credentials) {
            (None, _) => (Identity::server(), self.owners.clone(), None),
            (Some(keys), Some(c)) => {
                let sender = keys.sender(&c.access_key, session_token(headers, uri))?;
                (sender.who, sender.owners, Some(sender.kind))
            }
            (Some(keys), None) => match &keys.anonymous {
                Some(anonymous) => (anonymous.clone(), self.owners.clone(), None),
                None => {
                    return Err(s3_error!(
                        AccessDenied,
                        "unsigned requests are refused: this server has many users and no \
                         --anonymous-user; sign the request with an access key"
                    ))
                }
            },
        };
        // Held: a worker stays the last request's user until a request as
        // someone else comes (its other work between them is parsing,
        // signing and moving bytes on open sockets and files), so a run of
        // one user's requests pays no switch (docs/src/design/costs.md).
        Ok(Engine {
            store: Acting::held(self.store.clone(), who),
            io: self.io.clone(),
            owners,
            key_kind: kind,
            bucket_logs: self.bucket_logs.clone(),
        })
    }
}

/// A request's session token: the header, or a presigned URL's parameter.
fn session_token<'a>(headers: &'a hyper::HeaderMap, uri: &'a hyper::Uri) -> Option<&'a str> {
    if let Some(t) = headers.get("x-amz-security-token") {
        return t.to_str().ok();
    }
    uri.query()?
        .split('&')
        .find_map(|kv| kv.strip_prefix("X-Amz-Security-Token="))
}

/// Runs a short file-system call (a stat, an unlink, an open, one chunk
/// of data) right here on the async worker. Any hand-off costs more than
/// the call: `block_in_place` moves the worker's scheduler to another thread
/// every time, which was a quarter of the server's CPU time per request
/// (futex wake-ups, context switches; docs/src/results/per-request.md). The price is
/// nginx's: a file system that stalls holds up this worker's other
/// connections meanwhile. Writes ([`WriteGate`]) leave the worker when the
/// file system is slow; long calls (streamed bodies, multipart assembly,
/// batch deletes) always do.
pub(super) fn run<T>(f: impl FnOnce() -> s3hpc_store::Result<T>) -> S3Result<T> {
    f().map_err(s3_error)
}

/// Runs a long call (multipart assembly, UploadPartCopy) on this thread
/// after handing the worker's other tasks to another one. Not on tokio's
/// blocking pool: the engine caches directory handles per thread, and a
/// pool thread that had not seen the upload's directories opened them
/// again (4-5 opens more per multipart upload than in-process).
pub(super) fn run_long<T>(f: impl FnOnce() -> s3hpc_store::Result<T>) -> S3Result<T> {
    tokio::task::block_in_place(f).map_err(s3_error)
}

pub(super) fn content_md5(b64: Option<&str>) -> S3Result<Option<[u8; 16]>> {
    let Some(b64) = b64 else { return Ok(None) };
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()
        .and_then(|v| <[u8; 16]>::try_from(v).ok())
        .ok_or_else(|| {
            s3_error!(
                InvalidDigest,
                "Content-MD5 must be the base64 of a 16-byte MD5 digest"
            )
        })?;
    Ok(Some(raw))
}

/// Whether GET/HEAD should return the stored checksum.
pub(super) fn checksum_mode(mode: Option<&ChecksumMode>) -> bool {
    mode.is_some_and(|m| m.as_str().eq_ignore_ascii_case(ChecksumMode::ENABLED))
}

/// Receives a PUT body and hands it to `write`: from memory when it fits in
/// one chunk or can be gathered (where `WriteGate` says), else on a
/// blocking thread through a bounded channel while the rest arrives. The
/// body is decoded as `framing` says (aws-chunked, its decoded length, its
/// trailer checksum) on the way. A body that fails midway (client gone,
/// broken framing, wrong length) fails the write, and so does a wrong
/// checksum or Content-MD5 (the engine compares before it publishes), so
/// the engine keeps nothing of it.
async fn with_body<T, F>(
    engine: &Engine,
    body: Option<StreamingBlob>,
    framing: Framing,
    write: F,
) -> S3Result<T>
where
    T: Send + 'static,
    F: for<'a> FnOnce(PutBody<'a>) -> s3hpc_store::Result<T> + Send + 'static,
{
    let Some(body) = body else {
        if framing.decoder.is_some() || framing.decoded_len.is_some_and(|n| n > 0) {
            return Err(s3_error!(
                IncompleteBody,
                "the aws-chunked body is empty: not even its final chunk arrived"
            ));
        }
        return engine.write_whole(&[], write);
    };
    let len = match framing.decoded_len {
        Some(n) => Some(n),
        None if framing.decoder.is_some() => None,
        None => body.remaining_length().exact().map(|n| n as u64),
    };
    let body = Decoded::new(body, framing);
    let len = len.and_then(|n| usize::try_from(n).ok());
    let incoming = body::receive(body, len, &engine.io.buffers).await?;
    match incoming {
        Incoming::Whole(bytes) => engine.write_whole(&bytes, write),
        Incoming::Gathered(pooled) => engine.write_whole(&pooled.buf, write),
        Incoming::Partial { head, rest } => {
            let (tx, rx) = body::channel();
            let fault = Arc::new(BodyFault::default());
            let mut reader = ChannelReader::new(head, rx, fault.clone());
            let pump = tokio::spawn(body::pump(rest, tx));
            let written = tokio::task::spawn_blocking(move || {
                write(PutBody::Stream {
                    reader: &mut reader,
                    len: None,
                })
            })
            .await;
            pump.abort();
            match written {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(fault.take().unwrap_or_else(|| s3_error(e))),
                Err(e) => Err(s3s::S3Error::internal_error(e)),
            }
        }
    }
}

impl Engine {
    /// Writes a body that is all in memory, where the write gate says.
    fn write_whole<T>(
        &self,
        bytes: &[u8],
        write: impl FnOnce(PutBody<'_>) -> s3hpc_store::Result<T>,
    ) -> S3Result<T> {
        self.io
            .writes
            .run(|| write(PutBody::Bytes(bytes)))
            .map_err(s3_error)
    }
}

/// AWS's 404 for a bucket configuration that is not set (its own code
/// per configuration: NoSuchTagSet, NoSuchCORSConfiguration, ...).
pub(super) fn not_set(code: &str, message: String) -> s3s::S3Error {
    crate::convert::coded(code, hyper::StatusCode::NOT_FOUND, message)
}

/// A `versionId` where this operation serves only the current version:
/// none, `null` or an empty one. Another id of this engine's is refused by
/// name rather than answered from the current version.
pub(super) fn null_version(v: Option<&str>) -> S3Result<()> {
    match v {
        None | Some("null") | Some("") => Ok(()),
        Some(v) if s3hpc_store::is_version_id(v) => Err(s3_error!(
            NotImplemented,
            "this operation on a given version ({v}) is not supported yet: it serves the \
             current version, without versionId (GET, HEAD and DELETE take any version)"
        )),
        Some(v) => Err(s3_error!(
            NoSuchVersion,
            "no version {v:?}: not an id s3hpc makes"
        )),
    }
}

/// Routes each `S3` method to the module that serves it, one line per
/// operation: `module::operation(Input) -> Output;`.
macro_rules! route {
    ($($module:ident::$op:ident($input:ident) -> $output:ident;)*) => {
        #[async_trait::async_trait]
        impl S3 for Service {
            $(
                async fn $op(&self, req: S3Request<$input>) -> S3Result<S3Response<$output>> {
                    let engine = self.engine(req.credentials.as_ref(), &req.headers, &req.uri)?;
                    crate::observe::note_identity(&req.extensions, engine.store.identity(), engine.key_kind);
                    expected_owner::check(&engine, &req.input)?;
                    $module::$op(&engine, req).await
                }
            )*
        }
    };
}

route! {
    buckets::list_buckets(ListBucketsInput) -> ListBucketsOutput;
    buckets::create_bucket(CreateBucketInput) -> CreateBucketOutput;
    buckets::delete_bucket(DeleteBucketInput) -> DeleteBucketOutput;
    buckets::head_bucket(HeadBucketInput) -> HeadBucketOutput;
    buckets::get_bucket_location(GetBucketLocationInput) -> GetBucketLocationOutput;
    listing::list_objects(ListObjectsInput) -> ListObjectsOutput;
    listing::list_objects_v2(ListObjectsV2Input) -> ListObjectsV2Output;
    listing::list_object_versions(ListObjectVersionsInput) -> ListObjectVersionsOutput;
    objects::put_object(PutObjectInput) -> PutObjectOutput;
    objects::get_object(GetObjectInput) -> GetObjectOutput;
    objects::head_object(HeadObjectInput) -> HeadObjectOutput;
    objects::delete_object(DeleteObjectInput) -> DeleteObjectOutput;
    objects::delete_objects(DeleteObjectsInput) -> DeleteObjectsOutput;
    objects::get_object_attributes(GetObjectAttributesInput) -> GetObjectAttributesOutput;
    tagging::get_object_tagging(GetObjectTaggingInput) -> GetObjectTaggingOutput;
    tagging::put_object_tagging(PutObjectTaggingInput) -> PutObjectTaggingOutput;
    tagging::delete_object_tagging(DeleteObjectTaggingInput) -> DeleteObjectTaggingOutput;
    copy::copy_object(CopyObjectInput) -> CopyObjectOutput;
    copy::upload_part_copy(UploadPartCopyInput) -> UploadPartCopyOutput;
    multipart::create_multipart_upload(CreateMultipartUploadInput) -> CreateMultipartUploadOutput;
    multipart::upload_part(UploadPartInput) -> UploadPartOutput;
    multipart::complete_multipart_upload(CompleteMultipartUploadInput) -> CompleteMultipartUploadOutput;
    multipart::abort_multipart_upload(AbortMultipartUploadInput) -> AbortMultipartUploadOutput;
    multipart::list_parts(ListPartsInput) -> ListPartsOutput;
    multipart::list_multipart_uploads(ListMultipartUploadsInput) -> ListMultipartUploadsOutput;
    acls::get_bucket_acl(GetBucketAclInput) -> GetBucketAclOutput;
    acls::put_bucket_acl(PutBucketAclInput) -> PutBucketAclOutput;
    acls::get_object_acl(GetObjectAclInput) -> GetObjectAclOutput;
    acls::put_object_acl(PutObjectAclInput) -> PutObjectAclOutput;
    acls::get_bucket_ownership_controls(GetBucketOwnershipControlsInput) -> GetBucketOwnershipControlsOutput;
    acls::put_bucket_ownership_controls(PutBucketOwnershipControlsInput) -> PutBucketOwnershipControlsOutput;
    configurations::get_bucket_versioning(GetBucketVersioningInput) -> GetBucketVersioningOutput;
    configurations::put_bucket_versioning(PutBucketVersioningInput) -> PutBucketVersioningOutput;
    policies::get_bucket_policy(GetBucketPolicyInput) -> GetBucketPolicyOutput;
    policies::put_bucket_policy(PutBucketPolicyInput) -> PutBucketPolicyOutput;
    policies::delete_bucket_policy(DeleteBucketPolicyInput) -> DeleteBucketPolicyOutput;
    cors::get_bucket_cors(GetBucketCorsInput) -> GetBucketCorsOutput;
    cors::put_bucket_cors(PutBucketCorsInput) -> PutBucketCorsOutput;
    lifecycle::get_bucket_lifecycle_configuration(GetBucketLifecycleConfigurationInput) -> GetBucketLifecycleConfigurationOutput;
    tagging::get_bucket_tagging(GetBucketTaggingInput) -> GetBucketTaggingOutput;
    tagging::put_bucket_tagging(PutBucketTaggingInput) -> PutBucketTaggingOutput;
    configurations::get_bucket_encryption(GetBucketEncryptionInput) -> GetBucketEncryptionOutput;
    configurations::get_bucket_website(GetBucketWebsiteInput) -> GetBucketWebsiteOutput;
    configurations::get_bucket_replication(GetBucketReplicationInput) -> GetBucketReplicationOutput;
    object_lock::get_object_lock_configuration(GetObjectLockConfigurationInput) -> GetObjectLockConfigurationOutput;
    configurations::get_public_access_block(GetPublicAccessBlockInput) -> GetPublicAccessBlockOutput;
    bucket_logging::get_bucket_logging(GetBucketLoggingInput) -> GetBucketLoggingOutput;
    bucket_logging::put_bucket_logging(PutBucketLoggingInput) -> PutBucketLoggingOutput;
    configurations::get_bucket_accelerate_configuration(GetBucketAccelerateConfigurationInput) -> GetBucketAccelerateConfigurationOutput;
    configurations::get_bucket_notification_configuration(GetBucketNotificationConfigurationInput) -> GetBucketNotificationConfigurationOutput;
    configurations::get_bucket_request_payment(GetBucketRequestPaymentInput) -> GetBucketRequestPaymentOutput;
    policies::get_bucket_policy_status(GetBucketPolicyStatusInput) -> GetBucketPolicyStatusOutput;
    cors::delete_bucket_cors(DeleteBucketCorsInput) -> DeleteBucketCorsOutput;
    lifecycle::delete_bucket_lifecycle(DeleteBucketLifecycleInput) -> DeleteBucketLifecycleOutput;
    tagging::delete_bucket_tagging(DeleteBucketTaggingInput) -> DeleteBucketTaggingOutput;
    configurations::delete_bucket_encryption(DeleteBucketEncryptionInput) -> DeleteBucketEncryptionOutput;
    configurations::delete_public_access_block(DeletePublicAccessBlockInput) -> DeletePublicAccessBlockOutput;
    configurations::delete_bucket_website(DeleteBucketWebsiteInput) -> DeleteBucketWebsiteOutput;
    lifecycle::put_bucket_lifecycle_configuration(PutBucketLifecycleConfigurationInput) -> PutBucketLifecycleConfigurationOutput;
    object_lock::put_object_lock_configuration(PutObjectLockConfigurationInput) -> PutObjectLockConfigurationOutput;
    object_lock::put_object_retention(PutObjectRetentionInput) -> PutObjectRetentionOutput;
    object_lock::get_object_retention(GetObjectRetentionInput) -> GetObjectRetentionOutput;
    object_lock::put_object_legal_hold(PutObjectLegalHoldInput) -> PutObjectLegalHoldOutput;
    object_lock::get_object_legal_hold(GetObjectLegalHoldInput) -> GetObjectLegalHoldOutput;
}
