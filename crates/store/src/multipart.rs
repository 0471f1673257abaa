//! Multipart uploads.
use crate::*;
impl Store {
    pub fn create_multipart_upload(
        &self,
        _bucket: &str,
        _key: &str,
        _opts: &PutOptions,
    ) -> Result<String> {
        Err(s3err!(NotImplemented, "multipart is not implemented yet"))
    }
    pub fn upload_part(
        &self,
        _bucket: &str,
        _key: &str,
        _upload_id: &str,
        _n: u32,
        _body: PutBody<'_>,
    ) -> Result<String> {
        Err(s3err!(NotImplemented, "multipart is not implemented yet"))
    }
    pub fn complete_multipart_upload(
        &self,
        _bucket: &str,
        _key: &str,
        _upload_id: &str,
        _parts: &[(u32, String)],
    ) -> Result<ObjectInfo> {
        Err(s3err!(NotImplemented, "multipart is not implemented yet"))
    }
    pub fn abort_multipart_upload(
        &self,
        _bucket: &str,
        _key: &str,
        _upload_id: &str,
    ) -> Result<()> {
        Err(s3err!(NotImplemented, "multipart is not implemented yet"))
    }
    pub fn list_parts(&self, _bucket: &str, _key: &str, _upload_id: &str) -> Result<Vec<PartInfo>> {
        Err(s3err!(NotImplemented, "multipart is not implemented yet"))
    }
    pub fn list_multipart_uploads(&self, _bucket: &str, _prefix: &str) -> Result<Vec<UploadInfo>> {
        Err(s3err!(NotImplemented, "multipart is not implemented yet"))
    }
}
