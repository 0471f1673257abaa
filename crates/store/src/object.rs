//! Object PUT, GET, HEAD, DELETE and COPY.
use crate::*;
use std::fs::File;
use std::io::Read;

/// A reader over the bytes a GET selected.
pub struct ObjectReader {
    file: std::io::Take<File>,
}

impl Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.file.read(buf)
    }
}

/// The answer to a GET on the engine.
pub struct GetResult {
    pub info: ObjectInfo,
    pub offset: u64,
    pub length: u64,
    pub body: ObjectReader,
}

impl Store {
    pub fn put_object(&self, _bucket: &str, _key: &str, _body: PutBody<'_>, _opts: &PutOptions) -> Result<String> { todo!() }
    pub fn get_object(&self, _bucket: &str, _key: &str, _range: Option<ByteRange>) -> Result<GetResult> { todo!() }
    pub fn head_object(&self, _bucket: &str, _key: &str) -> Result<ObjectInfo> { todo!() }
    pub fn delete_object(&self, _bucket: &str, _key: &str) -> Result<()> { todo!() }
    pub fn copy_object(&self, _sb: &str, _sk: &str, _db: &str, _dk: &str, _opts: Option<&PutOptions>) -> Result<ObjectInfo> { todo!() }
    pub fn create_bucket(&self, _bucket: &str) -> Result<()> { todo!() }
    pub fn delete_bucket(&self, _bucket: &str) -> Result<()> { todo!() }
    pub fn head_bucket(&self, _bucket: &str) -> Result<()> { todo!() }
    pub fn list_buckets(&self) -> Result<Vec<BucketInfo>> { todo!() }
    pub fn list_objects(&self, _bucket: &str, _req: &ListRequest) -> Result<ListPage> { todo!() }
    pub fn create_multipart_upload(&self, _bucket: &str, _key: &str, _opts: &PutOptions) -> Result<String> { todo!() }
    pub fn upload_part(&self, _bucket: &str, _key: &str, _upload_id: &str, _n: u32, _body: PutBody<'_>) -> Result<String> { todo!() }
    pub fn complete_multipart_upload(&self, _bucket: &str, _key: &str, _upload_id: &str, _parts: &[(u32, String)]) -> Result<ObjectInfo> { todo!() }
    pub fn abort_multipart_upload(&self, _bucket: &str, _key: &str, _upload_id: &str) -> Result<()> { todo!() }
    pub fn list_parts(&self, _bucket: &str, _key: &str, _upload_id: &str) -> Result<Vec<PartInfo>> { todo!() }
    pub fn list_multipart_uploads(&self, _bucket: &str, _prefix: &str) -> Result<Vec<UploadInfo>> { todo!() }
    pub fn sweep_temporaries(&self, _older_than: std::time::Duration) -> Result<usize> { Ok(0) }
}
