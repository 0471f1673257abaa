//! `StorageApi`: the file-like operations the benchmark phases use (IOR's
//! `aiori` idea). One interface, two kinds of adapters: `posix` (the file
//! system directly, the baseline) and `s3` (IOR/mdtest's S3 mapping over any
//! `S3Client`, so every later transport is just another client).
//!
//! Paths are relative to the adapter's root and use `/`; `""` is the root.
//! Handles borrow their path, so creating one allocates nothing beyond the
//! box, which keeps per-op overhead equal for both adapters.

pub mod posix;
pub mod s3;

pub use posix::PosixStorage;
pub use s3::{S3Mode, S3Storage};

use std::time::SystemTime;

pub type Result<T> = anyhow::Result<T>;

/// What `stat` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    pub size: u64,
    pub mtime: SystemTime,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, Copy)]
pub enum Entry<'a> {
    File { name: &'a str, stat: FileStat },
    Dir { name: &'a str },
}

/// File-like storage operations.
pub trait StorageApi: Send + Sync {
    /// `posix`, or `s3` plus the mapping mode.
    fn api(&self) -> String;
    /// What carries the requests: `posix`, `embedded`, `remote`, ...
    fn transport(&self) -> &'static str;

    /// Untimed preparation before the phases (an S3 bucket, say).
    fn setup(&self) -> Result<()> {
        Ok(())
    }
    /// Untimed removal of what `setup` made; the tree must be empty by then.
    fn teardown(&self) -> Result<()> {
        Ok(())
    }

    /// Creates (or truncates) a file and opens it for writing.
    fn create<'a>(&'a self, path: &'a str) -> Result<Box<dyn FileHandle + 'a>>;
    /// Opens an existing file for reading, or for writing when `write`.
    fn open<'a>(&'a self, path: &'a str, write: bool) -> Result<Box<dyn FileHandle + 'a>>;
    fn stat(&self, path: &str) -> Result<FileStat>;
    fn delete(&self, path: &str) -> Result<()>;
    fn mkdir(&self, path: &str) -> Result<()>;
    fn rmdir(&self, path: &str) -> Result<()>;
    /// Calls `visit` for every file and subdirectory directly inside `dir`.
    fn list_dir(&self, dir: &str, visit: &mut dyn FnMut(Entry<'_>)) -> Result<()>;
    /// Removes `dir` and everything under it (untimed cleanup); `""` empties
    /// the root.
    fn remove_tree(&self, dir: &str) -> Result<()>;
}

/// An open file. Transfers are whole: `read_at` fills the buffer or fails.
pub trait FileHandle {
    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()>;
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// Closes the file; flushes it to stable storage first when the
    /// durability setting asks for it (IOR `-e`).
    fn close(self: Box<Self>) -> Result<()>;
}

/// `a/b` from `a` and `b`, with `""` as the root.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}
