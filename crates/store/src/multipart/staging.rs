//! Where an upload's files are: its staging directory
//! `<bucket>/.s3hpc-uploads/<upload-id>/` and the names in it, shared by the
//! upload's operations (`multipart`) and its data file (`in_place`).

pub(crate) const UPLOADS: &str = ".s3hpc-uploads";
/// The upload's key and what it was created with.
pub(super) const INFO: &str = "info";
pub(super) const PART_PREFIX: &str = "part.";
/// S3's minimum size of every part but the last.
pub(super) const MIN_PART_SIZE: u64 = 5 << 20;

/// The key, relative to the bucket, of `file` in an upload's staging.
pub(super) fn upload_key(upload_id: &str, file: &str) -> String {
    format!("{UPLOADS}/{upload_id}/{file}")
}

/// Part `n`'s entry: its own file, or the record of its bytes in the
/// upload's data file.
pub(super) fn part_file(n: u32) -> String {
    format!("{PART_PREFIX}{n:05}")
}
