//! The S3 adapter: file operations mapped onto S3 requests the way IOR's and
//! mdtest's S3-libs3 backend does, over any `S3Client` (embedded today; the
//! remote, HTTP and libs3 transports are just other clients).
//!
//! Mapping (`hpc/ior src/aiori-S3-libs3.c`):
//! - every transfer is one whole object: key `<file>` at offset 0, else
//!   `<file>-<offset>-<len>`; reads must use the writes' transfer size;
//! - create is a 0-byte PUT of `<file>`; a write at offset 0 overwrites it
//!   (mdtest-hard: 0-byte PUT, then the 3901-byte PUT);
//! - stat is HEAD (the size is that of the offset-0 object, as in IOR);
//!   read is GET; delete is DELETE of `<file>`.
//!
//! Deliberate differences, each for a reason:
//! - open does not send a HEAD: the GET that follows reports a missing
//!   object just as well, and the extra round trip would only measure the
//!   adapter, not S3.
//! - delete never lists fragments (IOR's `S3LIB_DELETE_HEURISTICS` path for
//!   small files); fragmented ior files are removed by the untimed
//!   `remove_tree`, which lists the prefix.
//! - mkdir/rmdir are no-ops. In single-bucket mode keys carry `/`, which the
//!   engine maps onto directories, so a marker object named like the
//!   directory would collide with it. In bucket-per-file mode a directory
//!   has nothing to hold.
//! - bucket-per-file: create makes the bucket *and* a 0-byte object `0`,
//!   so stat (HEAD of `0`) reports size and mtime as in single-bucket mode;
//!   IOR's HEAD-bucket stat reports size 0, which would break find's
//!   `-size` test and the stat checks.

use super::{Entry, FileHandle, FileStat, Result, StorageApi};
use anyhow::Context;
use s3hpc_client::{ErrorCode, ListRequest, ObjectInfo, PutBody, PutOptions, S3Client};
use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

/// How files map onto buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum S3Mode {
    /// One bucket; the key is the file's relative path.
    #[default]
    SingleBucket,
    /// A bucket per file (`<prefix>-<path>-<hash>`); keys `0` or `<offset>-<len>`.
    BucketPerFile,
}

impl S3Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            S3Mode::SingleBucket => "single-bucket",
            S3Mode::BucketPerFile => "bucket-per-file",
        }
    }
}

impl std::str::FromStr for S3Mode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "single-bucket" => Ok(S3Mode::SingleBucket),
            "bucket-per-file" => Ok(S3Mode::BucketPerFile),
            _ => Err(format!(
                "unknown S3 mode {s:?}: use single-bucket or bucket-per-file"
            )),
        }
    }
}

pub struct S3Storage {
    client: Arc<dyn S3Client>,
    /// What must live as long as the client, and go after it: a gateway
    /// the bench started for this backend.
    _service: Option<Box<dyn std::any::Any + Send + Sync>>,
    mode: S3Mode,
    /// The bucket (single-bucket mode) or the bucket-name prefix.
    bucket: String,
    opts: PutOptions,
}

/// S3 listings return at most this many keys per page.
const PAGE: usize = 1000;

impl S3Storage {
    pub fn new(client: Arc<dyn S3Client>, mode: S3Mode, bucket: &str) -> S3Storage {
        S3Storage {
            client,
            _service: None,
            mode,
            bucket: bucket.to_string(),
            opts: PutOptions::default(),
        }
    }

    /// Keeps `service` (say, a gateway) alive until this storage is dropped,
    /// after the client.
    pub fn with_service(mut self, service: impl std::any::Any + Send + Sync) -> S3Storage {
        self._service = Some(Box::new(service));
        self
    }

    /// The bucket holding `path`'s objects.
    fn bucket_of<'a>(&'a self, path: &str) -> Cow<'a, str> {
        match self.mode {
            S3Mode::SingleBucket => Cow::Borrowed(&self.bucket),
            S3Mode::BucketPerFile => Cow::Owned(file_bucket(&self.bucket, path)),
        }
    }

    /// The key of the offset-0 object of `path`.
    fn base_key<'a>(&self, path: &'a str) -> &'a str {
        base_key(self.mode, path)
    }

    /// Visits every object under `prefix`, page by page.
    fn for_each_object(
        &self,
        bucket: &str,
        prefix: &str,
        delimiter: bool,
        mut visit: impl FnMut(&ObjectInfo),
        mut visit_prefix: impl FnMut(&str),
    ) -> Result<()> {
        let mut req = ListRequest {
            prefix: prefix.to_string(),
            delimiter: delimiter.then(|| "/".to_string()),
            max_keys: PAGE,
            ..Default::default()
        };
        loop {
            let page = self
                .client
                .list_objects(bucket, &req)
                .with_context(|| format!("list {bucket}/{prefix}"))?;
            page.objects.iter().for_each(&mut visit);
            page.common_prefixes.iter().for_each(|p| visit_prefix(p));
            if !page.is_truncated {
                return Ok(());
            }
            req.continuation_token = page.next_token;
            if req.continuation_token.is_none() {
                anyhow::bail!(
                    "list {bucket}/{prefix}: truncated page without a continuation token"
                );
            }
        }
    }

    /// Deletes every object under `prefix` (untimed cleanup), page by page:
    /// deleting keys already listed does not disturb the continuation.
    fn delete_prefix(&self, bucket: &str, prefix: &str) -> Result<()> {
        let mut failed = None;
        self.for_each_object(
            bucket,
            prefix,
            false,
            |o| {
                if failed.is_none() {
                    failed = self.client.delete_object(bucket, &o.key).err().map(|e| {
                        anyhow::Error::new(e).context(format!("delete {bucket}/{}", o.key))
                    });
                }
            },
            |_| {},
        )?;
        failed.map_or(Ok(()), Err)
    }

    /// Our buckets in bucket-per-file mode.
    fn file_buckets(&self) -> Result<Vec<String>> {
        let prefix = format!("{}-", self.bucket);
        Ok(self
            .client
            .list_buckets()
            .context("list buckets")?
            .into_iter()
            .filter(|b| b.name.starts_with(&prefix))
            .map(|b| b.name)
            .collect())
    }

    fn delete_file_bucket(&self, bucket: &str) -> Result<()> {
        self.delete_prefix(bucket, "")?;
        match self.client.delete_bucket(bucket) {
            Err(e) if e.code == ErrorCode::NoSuchBucket => Ok(()),
            r => r.with_context(|| format!("delete bucket {bucket}")),
        }
    }
}

/// The key prefix of everything below directory `dir` (`""` for the root).
fn dir_prefix(dir: &str) -> String {
    if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    }
}

/// `<prefix>-<path, bucket-name safe>-<16 hex of a hash of the path>`, at
/// most 63 characters: the path's tail is kept (it is what distinguishes
/// files), the hash keeps names unique.
pub fn file_bucket(prefix: &str, path: &str) -> String {
    let hash = path.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    let room = 63usize.saturating_sub(prefix.len() + 2 + 16);
    let safe: String = path
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let tail = &safe[safe.len().saturating_sub(room)..];
    format!("{prefix}-{tail}-{hash:016x}")
}

impl StorageApi for S3Storage {
    fn api(&self) -> String {
        format!("s3 {}", self.mode.as_str())
    }
    fn transport(&self) -> &'static str {
        self.client.transport()
    }

    fn setup(&self) -> Result<()> {
        if self.mode == S3Mode::SingleBucket {
            self.client
                .create_bucket(&self.bucket)
                .with_context(|| format!("create bucket {}", self.bucket))?;
        }
        Ok(())
    }

    fn teardown(&self) -> Result<()> {
        match self.mode {
            S3Mode::SingleBucket => self
                .client
                .delete_bucket(&self.bucket)
                .with_context(|| format!("delete bucket {}", self.bucket)),
            S3Mode::BucketPerFile => Ok(()),
        }
    }

    fn create<'a>(&'a self, path: &'a str) -> Result<Box<dyn FileHandle + 'a>> {
        let bucket = self.bucket_of(path);
        if self.mode == S3Mode::BucketPerFile {
            match self.client.create_bucket(&bucket) {
                Err(e) if e.code != ErrorCode::BucketAlreadyOwnedByYou => {
                    return Err(e).with_context(|| format!("create bucket {bucket}"));
                }
                _ => {}
            }
        }
        let key = self.base_key(path);
        self.client
            .put_object(&bucket, key, PutBody::Bytes(&[]), &self.opts)
            .with_context(|| format!("create {bucket}/{key}"))?;
        Ok(Box::new(S3File {
            st: self,
            path,
            bucket,
            key: String::new(),
        }))
    }

    fn open<'a>(&'a self, path: &'a str, _write: bool) -> Result<Box<dyn FileHandle + 'a>> {
        Ok(Box::new(S3File {
            st: self,
            path,
            bucket: self.bucket_of(path),
            key: String::new(),
        }))
    }

    fn stat(&self, path: &str) -> Result<FileStat> {
        let bucket = self.bucket_of(path);
        let key = self.base_key(path);
        let info = self
            .client
            .head_object(&bucket, key)
            .with_context(|| format!("head {bucket}/{key}"))?;
        Ok(FileStat {
            size: info.size,
            mtime: info.last_modified,
        })
    }

    fn delete(&self, path: &str) -> Result<()> {
        match self.mode {
            S3Mode::SingleBucket => self
                .client
                .delete_object(&self.bucket, path)
                .with_context(|| format!("delete {}/{path}", self.bucket)),
            S3Mode::BucketPerFile => self.delete_file_bucket(&self.bucket_of(path)),
        }
    }

    fn mkdir(&self, _path: &str) -> Result<()> {
        Ok(())
    }

    fn rmdir(&self, _path: &str) -> Result<()> {
        Ok(())
    }

    fn list_dir(&self, dir: &str, visit: &mut dyn FnMut(Entry<'_>)) -> Result<()> {
        match self.mode {
            S3Mode::SingleBucket => {
                let prefix = dir_prefix(dir);
                // Directories arrive while files are visited: collect them.
                let mut dirs = Vec::new();
                self.for_each_object(
                    &self.bucket,
                    &prefix,
                    true,
                    |o| {
                        visit(Entry::File {
                            name: &o.key[prefix.len()..],
                            stat: FileStat {
                                size: o.size,
                                mtime: o.last_modified,
                            },
                        })
                    },
                    |p| dirs.push(p.to_string()),
                )?;
                for p in &dirs {
                    visit(Entry::Dir {
                        name: p[prefix.len()..].trim_end_matches('/'),
                    });
                }
                Ok(())
            }
            // Buckets have no hierarchy: the root holds every file.
            S3Mode::BucketPerFile if dir.is_empty() => {
                let strip = self.bucket.len() + 1;
                for b in self.file_buckets()? {
                    let info = self
                        .client
                        .head_object(&b, "0")
                        .with_context(|| format!("head {b}/0"))?;
                    let name = &b[strip..b.len().saturating_sub(17).max(strip)];
                    visit(Entry::File {
                        name,
                        stat: FileStat {
                            size: info.size,
                            mtime: info.last_modified,
                        },
                    });
                }
                Ok(())
            }
            S3Mode::BucketPerFile => Ok(()),
        }
    }

    fn remove_tree(&self, dir: &str) -> Result<()> {
        match self.mode {
            S3Mode::SingleBucket => {
                let prefix = dir_prefix(dir);
                self.delete_prefix(&self.bucket, &prefix)
            }
            // Bucket names keep only a path's tail, so a subtree cannot be
            // told apart reliably: only the root (all our buckets) is removed.
            S3Mode::BucketPerFile if dir.is_empty() => {
                for b in self.file_buckets()? {
                    self.delete_file_bucket(&b)?;
                }
                Ok(())
            }
            S3Mode::BucketPerFile => Ok(()),
        }
    }
}

struct S3File<'a> {
    st: &'a S3Storage,
    path: &'a str,
    bucket: Cow<'a, str>,
    /// Reused for `<file>-<offset>-<len>` keys: no allocation per transfer.
    key: String,
}

fn base_key(mode: S3Mode, path: &str) -> &str {
    match mode {
        S3Mode::SingleBucket => path,
        S3Mode::BucketPerFile => "0",
    }
}

/// The object key of the transfer at `offset`; `scratch` is reused so a
/// transfer allocates nothing.
fn object_key<'k>(
    mode: S3Mode,
    path: &'k str,
    scratch: &'k mut String,
    offset: u64,
    len: usize,
) -> &'k str {
    if offset == 0 {
        return base_key(mode, path);
    }
    scratch.clear();
    let _ = match mode {
        S3Mode::SingleBucket => write!(scratch, "{path}-{offset}-{len}"),
        S3Mode::BucketPerFile => write!(scratch, "{offset}-{len}"),
    };
    scratch
}

impl FileHandle for S3File<'_> {
    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        let key = object_key(self.st.mode, self.path, &mut self.key, offset, data.len());
        let bucket = &*self.bucket;
        self.st
            .client
            .put_object(bucket, key, PutBody::Bytes(data), &self.st.opts)
            .with_context(|| format!("put {bucket}/{key}"))?;
        Ok(())
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let key = object_key(self.st.mode, self.path, &mut self.key, offset, buf.len());
        let bucket = &*self.bucket;
        self.st
            .client
            .get_object_into(bucket, key, buf)
            .with_context(|| format!("get {bucket}/{key}"))?;
        Ok(())
    }

    fn close(self: Box<Self>) -> Result<()> {
        // The engine applies the durability setting to every PUT.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_names_are_valid_and_unique() {
        let a = file_bucket(
            "io500",
            "mdtest-hard/test-dir.0-0/mdtest_tree.0/file.mdtest.1.123",
        );
        let b = file_bucket(
            "io500",
            "mdtest-hard/test-dir.0-0/mdtest_tree.0/file.mdtest.1.124",
        );
        assert_ne!(a, b);
        for n in [&a, &b] {
            assert!(n.len() <= 63, "{n}");
            assert!(n
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-'));
            assert!(n.starts_with("io500-"));
            assert!(n.contains("file-mdtest-1-12"), "{n}");
        }
        assert!(s3hpc_store::validate_bucket_name(&a).is_ok());
    }
}
