//! The embedded transport: S3 calls served by the engine in this process.

use crate::{GetObject, Request, Response, S3Client};
use s3hpc_store::{Acting, Identity, Result, Store};
use std::sync::Arc;

/// S3 over the engine, in-process: no serialization, no copies beyond the
/// file system's own.
#[derive(Clone)]
pub struct EmbeddedClient {
    store: Acting,
}

impl EmbeddedClient {
    /// The engine as the calling process: the kernel checks every call
    /// against the process's own ids (a program embedding the engine, or
    /// libs3 over `file://`, can do what that user can, no more).
    pub fn new(store: Arc<Store>) -> Self {
        Self::acting_as(store, Identity::server())
    }

    /// The engine acting as `who`.
    pub fn acting_as(store: Arc<Store>, who: Identity) -> Self {
        EmbeddedClient {
            store: Acting::new(store, who),
        }
    }

    /// The engine acting as `who`, on threads that stay `who` between
    /// calls ([`Acting::held`]): a gateway's connection from a user.
    pub fn held_as(store: Arc<Store>, who: Identity) -> Self {
        EmbeddedClient {
            store: Acting::held(store, who),
        }
    }
}

impl S3Client for EmbeddedClient {
    fn transport(&self) -> &'static str {
        "embedded"
    }
    fn acting_uid(&self) -> Option<u32> {
        self.store.identity().user().map(|u| u.uid)
    }
    fn call(&self, req: Request<'_>) -> Result<Response> {
        let s = &self.store;
        match req {
            Request::CreateBucket { bucket } => {
                crate::owned_is_created(s.create_bucket(bucket)).map(Response::done)
            }
            Request::DeleteBucket { bucket } => s.delete_bucket(bucket).map(Response::done),
            Request::HeadBucket { bucket } => s.head_bucket(bucket).map(Response::done),
            Request::ListBuckets => s.list_buckets().map(Response::Buckets),
            Request::PutObject(r) => s
                .put_object(r.bucket, r.key, r.body, r.opts)
                .map(Response::ETag),
            Request::GetObject { bucket, key, range } => {
                let got = s.get_object(bucket, key, range)?;
                Ok(Response::Object(object(got)))
            }
            Request::GetObjectPart(r) => {
                let p = s.get_object_part(r.bucket, r.key, r.part_number)?;
                Ok(Response::ObjectPart(object(p.got), p.parts_count))
            }
            Request::HeadObject { bucket, key } => s.head_object(bucket, key).map(Response::Info),
            Request::DeleteObject(r) => s
                .delete_object_if(r.bucket, r.key, r.condition)
                .map(Response::done),
            Request::ListObjects { bucket, list } => {
                s.list_objects(bucket, list).map(Response::List)
            }
            Request::CopyObject(r) => s
                .copy_object_if(
                    r.src_bucket,
                    r.src_key,
                    r.dst_bucket,
                    r.dst_key,
                    r.opts,
                    r.condition,
                )
                .map(Response::Info),
            Request::GetObjectTagging { bucket, key } => {
                s.get_object_tagging(bucket, key).map(Response::Tags)
            }
            Request::PutObjectTagging { bucket, key, tags } => {
                s.put_object_tagging(bucket, key, tags).map(Response::done)
            }
            Request::DeleteObjectTagging { bucket, key } => {
                s.delete_object_tagging(bucket, key).map(Response::done)
            }
            Request::CreateMultipartUpload { bucket, key, opts } => s
                .create_multipart_upload(bucket, key, opts)
                .map(Response::UploadId),
            Request::UploadPart(r) => s
                .upload_part(r.bucket, r.key, r.upload_id, r.part_number, r.body)
                .map(Response::ETag),
            Request::CompleteMultipartUpload(r) => s
                .complete_multipart_upload_if(r.bucket, r.key, r.upload_id, r.parts, r.condition)
                .map(Response::Info),
            Request::AbortMultipartUpload(u) => s
                .abort_multipart_upload(u.bucket, u.key, u.upload_id)
                .map(Response::done),
            Request::ListParts(u) => s
                .list_parts(u.bucket, u.key, u.upload_id)
                .map(Response::Parts),
            Request::ListMultipartUploads { bucket, prefix } => s
                .list_multipart_uploads(bucket, prefix)
                .map(Response::Uploads),
            Request::PutBucketVersioning { bucket, state } => {
                s.put_bucket_versioning(bucket, state).map(Response::done)
            }
            Request::GetBucketVersioning { bucket } => {
                s.bucket_versioning(bucket).map(Response::Versioning)
            }
            Request::ListObjectVersions { bucket, list } => {
                s.list_object_versions(bucket, list).map(Response::Versions)
            }
            Request::GetObjectVersion { version: v, range } => {
                let got = s.get_object_version(v.bucket, v.key, v.version_id, range)?;
                Ok(Response::Object(object(got)))
            }
            Request::HeadObjectVersion(v) => s
                .head_object_version(v.bucket, v.key, v.version_id)
                .map(Response::Info),
            Request::DeleteObjectVersion(v) => s
                .delete_object_version(v.bucket, v.key, v.version_id)
                .map(Response::done),
        }
    }
}

/// The engine's GET answer as a client's.
fn object(got: s3hpc_store::GetResult) -> GetObject {
    GetObject {
        info: got.info,
        offset: got.offset,
        length: got.length,
        body: Box::new(got.body),
    }
}
