//! The s3hpc engine: S3 semantics served from a POSIX directory tree.
//!
//! A bucket is a directory under the data root; an object is a file, its key
//! split on `/` into directories. Data already on the file system is visible
//! as objects, and objects are plain files that POSIX tools can read.
//!
//! Every path is resolved beneath the data root without following symlinks
//! (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), so no key can
//! reach outside its bucket. See ARCHITECTURE.md for the design and costs.

mod bucket;
mod dirs;
mod error;
mod list;
mod meta;
mod multipart;
mod names;
mod object;
mod probe;
mod put;
mod temp;
mod types;

pub use error::{ErrorCode, Result, S3Error};
pub use names::{url_encode, validate_bucket_name, validate_key, MAX_KEY_LEN};
pub use object::{GetResult, ObjectReader};
pub use probe::{measure_costs, warnings, FsProfile};
pub use temp::STALE_AGE;
pub use types::*;

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use probe::{EXT4_SUPER_MAGIC, TMPFS_MAGIC};

/// The engine over one data root. Cheap to share (`Arc<Store>`); all methods
/// take `&self` and are safe to call from many threads and many processes
/// (on many nodes) over the same tree.
pub struct Store {
    root: PathBuf,
    root_fd: OwnedFd,
    config: StoreConfig,
    dirs: dirs::DirCache,
    listings: list::ListingCache,
    temps: temp::TempNames,
    /// Replace existing keys by rename-exchange (see `Store::install`).
    exchange_on_replace: std::sync::atomic::AtomicBool,
    /// Whether the file system has `O_TMPFILE` (see `object::Temp`).
    unnamed_temps: std::sync::atomic::AtomicBool,
    /// tmpfs: a directory's `st_size` counts its entries (see `may_be_empty`).
    dir_size_counts_entries: bool,
    /// What the data root's file system can do, probed at open.
    profile: FsProfile,
}

impl Store {
    /// Opens (creating if needed) the data root. It does not walk the tree:
    /// servers call [`Store::sweep_temporaries`] at startup to remove what
    /// killed writers left, while a process embedding the engine (one of
    /// thousands of ranks) should not pay a full walk.
    pub fn open(root: impl AsRef<Path>, config: StoreConfig) -> Result<Store> {
        let root = root.as_ref().to_path_buf();
        std::fs::create_dir_all(&root)
            .map_err(|e| S3Error::from_io(&e, &format!("data root {}", root.display())))?;
        let root_fd = rustix::fs::open(
            &root,
            rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| S3Error::from_io(&e.into(), &format!("data root {}", root.display())))?;
        // The paths the engine takes follow from what the file system can
        // do (O_TMPFILE, rename-exchange) and whether other nodes share it.
        let profile = FsProfile::probe(std::os::fd::AsFd::as_fd(&root_fd));
        let fs_type = profile.fs_type;
        Ok(Store {
            root,
            root_fd,
            config,
            dirs: dirs::DirCache::new(),
            listings: list::ListingCache::new(),
            temps: temp::TempNames::new(),
            exchange_on_replace: std::sync::atomic::AtomicBool::new(
                fs_type == EXT4_SUPER_MAGIC && profile.rename_exchange,
            ),
            unnamed_temps: std::sync::atomic::AtomicBool::new(profile.tmpfile),
            dir_size_counts_entries: fs_type == TMPFS_MAGIC,
            profile,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> StoreConfig {
        self.config
    }

    /// What the data root's file system can do, as probed at open.
    pub fn profile(&self) -> &FsProfile {
        &self.profile
    }
}
