//! The embedded transport: S3 calls served by the engine in this process.

use crate::{GetObject, S3Client, Tags};
use s3hpc_store::{
    Acting, BucketInfo, ByteRange, DeleteCondition, Identity, ListPage, ListRequest, ObjectInfo,
    PartInfo, PutBody, PutOptions, Result, Store, UploadInfo, WriteCondition,
};
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
    fn create_bucket(&self, bucket: &str) -> Result<()> {
        crate::owned_is_created(self.store.create_bucket(bucket))
    }
    fn delete_bucket(&self, bucket: &str) -> Result<()> {
        self.store.delete_bucket(bucket)
    }
    fn head_bucket(&self, bucket: &str) -> Result<()> {
        self.store.head_bucket(bucket)
    }
    fn list_buckets(&self) -> Result<Vec<BucketInfo>> {
        self.store.list_buckets()
    }
    fn put_object(
        &self,
        bucket: &str,
        key: &str,
        body: PutBody<'_>,
        opts: &PutOptions,
    ) -> Result<String> {
        self.store.put_object(bucket, key, body, opts)
    }
    fn get_object(&self, bucket: &str, key: &str, range: Option<ByteRange>) -> Result<GetObject> {
        let got = self.store.get_object(bucket, key, range)?;
        Ok(GetObject {
            info: got.info,
            offset: got.offset,
            length: got.length,
            body: Box::new(got.body),
        })
    }
    fn get_object_part(
        &self,
        bucket: &str,
        key: &str,
        part_number: u32,
    ) -> Result<(GetObject, Option<u32>)> {
        let p = self.store.get_object_part(bucket, key, part_number)?;
        let got = GetObject {
            info: p.got.info,
            offset: p.got.offset,
            length: p.got.length,
            body: Box::new(p.got.body),
        };
        Ok((got, p.parts_count))
    }
    fn head_object(&self, bucket: &str, key: &str) -> Result<ObjectInfo> {
        self.store.head_object(bucket, key)
    }
    fn delete_object(&self, bucket: &str, key: &str) -> Result<()> {
        self.store.delete_object(bucket, key)
    }
    fn delete_object_if(&self, bucket: &str, key: &str, cond: &DeleteCondition) -> Result<()> {
        self.store.delete_object_if(bucket, key, cond)
    }
    fn list_objects(&self, bucket: &str, req: &ListRequest) -> Result<ListPage> {
        self.store.list_objects(bucket, req)
    }
    fn copy_object_if(
        &self,
        src_bucket: &str,
        src_key: &str,
        dst_bucket: &str,
        dst_key: &str,
        opts: Option<&PutOptions>,
        cond: &WriteCondition,
    ) -> Result<ObjectInfo> {
        self.store
            .copy_object_if(src_bucket, src_key, dst_bucket, dst_key, opts, cond)
    }
    fn get_object_tagging(&self, bucket: &str, key: &str) -> Result<Tags> {
        self.store.get_object_tagging(bucket, key)
    }
    fn put_object_tagging(&self, bucket: &str, key: &str, tags: &Tags) -> Result<()> {
        self.store.put_object_tagging(bucket, key, tags)
    }
    fn delete_object_tagging(&self, bucket: &str, key: &str) -> Result<()> {
        self.store.delete_object_tagging(bucket, key)
    }
    fn create_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        opts: &PutOptions,
    ) -> Result<String> {
        self.store.create_multipart_upload(bucket, key, opts)
    }
    fn upload_part(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        part_number: u32,
        body: PutBody<'_>,
    ) -> Result<String> {
        self.store
            .upload_part(bucket, key, upload_id, part_number, body)
    }
    fn complete_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
    ) -> Result<ObjectInfo> {
        self.store
            .complete_multipart_upload(bucket, key, upload_id, parts)
    }
    fn complete_multipart_upload_if(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
        cond: &WriteCondition,
    ) -> Result<ObjectInfo> {
        self.store
            .complete_multipart_upload_if(bucket, key, upload_id, parts, cond)
    }
    fn abort_multipart_upload(&self, bucket: &str, key: &str, upload_id: &str) -> Result<()> {
        self.store.abort_multipart_upload(bucket, key, upload_id)
    }
    fn list_parts(&self, bucket: &str, key: &str, upload_id: &str) -> Result<Vec<PartInfo>> {
        self.store.list_parts(bucket, key, upload_id)
    }
    fn list_multipart_uploads(&self, bucket: &str, prefix: &str) -> Result<Vec<UploadInfo>> {
        self.store.list_multipart_uploads(bucket, prefix)
    }
}
