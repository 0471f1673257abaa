//! The s3hpc engine: S3 semantics served from a POSIX directory tree.
//!
//! A bucket is a directory under the data root; an object is a file, its key
//! split on `/` into directories. Data already on the file system is visible
//! as objects, and objects are plain files that POSIX tools can read.
//!
//! Every path is resolved beneath the data root without following symlinks
//! (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), so no key can
//! reach outside its bucket. See ARCHITECTURE.md for the design and costs.

mod acting;
mod bucket;
mod bucket_config;
mod bucket_policy;
mod checksum;
mod deep;
mod delete_if;
mod dir_sync;
mod dirs;
mod error;
pub mod fscalls;
pub mod identity;
mod lifecycle;
mod list;
mod meta;
mod multipart;
mod names;
mod nested;
mod object;
mod packed;
mod parts;
mod per_bucket;
mod perms;
mod probe;
mod put;
mod sweep;
mod tagging;
mod temp;
mod types;
mod versions;

pub use acting::Acting;
pub use checksum::{
    bad_digest, check_value, to_base64, ChecksumAlgorithm, ChecksumRequest, ChecksumType, Hasher,
    LateChecksum, ObjectChecksum,
};
pub use error::{ErrorCode, Result, S3Error};
pub use identity::Identity;
pub use lifecycle::{
    Expiration, LifecycleClock, LifecycleDone, LifecycleFilter, LifecycleRule, MAX_RULES,
};
pub use meta::{validate_tag_set, validate_tags, MAX_TAGS};
pub use names::{url_encode, validate_bucket_name, validate_key, MAX_KEY_LEN};
pub use object::{GetResult, ObjectReader};
pub use packed::{Compacted, Layout, Unpacked, PACK_MAX, PACK_MAX_LIMIT, PACK_ROLL};
pub use parts::{ObjectPart, PartGet};
pub use per_bucket::PerBucket;
pub use perms::{AclEntry, AclTag, PermissionChange, Permissions};
pub use probe::{
    client_inode_cache, measure_costs, warnings, FsProfile, MdsRequestCounter, MdsRequests,
};
pub use sweep::SweepPace;
pub use temp::STALE_AGE;
pub use types::*;
pub use versions::{
    is_version_id, KeyVersion, LockMode, ObjectLockConfig, ObjectLockState, Retention,
    RetentionPeriod, Versioning, VersionsPage, VersionsRequest, MAX_VERSIONED_NAME, NULL_VERSION,
    VERSIONS_DIR,
};

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
    /// When this process last purged old completion records, per bucket.
    completions: multipart::Purges,
    /// The strides of multipart uploads this process wrote parts of.
    strides: multipart::Strides,
    temps: temp::TempNames,
    /// Which buckets are packed, as this process last looked.
    layouts: packed::Layouts,
    /// Replace existing keys by rename-exchange (see `Store::install`).
    exchange_on_replace: std::sync::atomic::AtomicBool,
    /// Whether `renameat2(RENAME_NOREPLACE)` works (see `Store::create_from`).
    noreplace_rename: std::sync::atomic::AtomicBool,
    /// Whether the file system has `O_TMPFILE` (see `object::Temp`).
    unnamed_temps: std::sync::atomic::AtomicBool,
    /// tmpfs: a directory's `st_size` counts its entries (see `may_be_empty`).
    dir_size_counts_entries: bool,
    /// What the data root's file system can do, probed at open.
    profile: FsProfile,
    /// Which buckets keep versions, as this process last looked.
    versionings: per_bucket::PerBucket<versions::Setting>,
    /// The sorted indexes of versions directories recently read.
    version_indexes: versions::IndexCache,
    /// Directory syncs shared between concurrent PUTs.
    dir_syncs: dir_sync::DirSyncs,
    /// Each bucket's lifecycle rules as last read (for `x-amz-expiration`).
    lifecycles: per_bucket::PerBucket<lifecycle::Rules>,
}

impl Store {
    /// Opens (creating if needed) the data root. It does not walk the tree:
    /// servers run [`Store::sweep_temporaries_paced`] in the background
    /// once listening, to remove what killed writers left, while a process
    /// embedding the engine (one of thousands of ranks) should not pay a
    /// full walk.
    pub fn open(root: impl AsRef<Path>, config: StoreConfig) -> Result<Store> {
        Self::open_adjusted(root, config, |_| {})
    }

    /// [`Store::open`] taking the paths of the probed profile as `adjust`
    /// changes it: for tests of another file system's paths (a shared one's
    /// misses and deletes) on a local directory.
    #[doc(hidden)]
    pub fn open_adjusted(
        root: impl AsRef<Path>,
        config: StoreConfig,
        adjust: impl FnOnce(&mut FsProfile),
    ) -> Result<Store> {
        let root = root.as_ref().to_path_buf();
        std::fs::create_dir_all(&root)
            .map_err(|e| S3Error::from_io(&e, &format!("data root {}", root.display())))?;
        let root_fd = fscalls::open(
            &root,
            rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| S3Error::from_io(&e.into(), &format!("data root {}", root.display())))?;
        // The paths the engine takes follow from what the file system can
        // do (O_TMPFILE, rename-exchange) and whether other nodes share it.
        let mut profile = FsProfile::probe(std::os::fd::AsFd::as_fd(&root_fd));
        adjust(&mut profile);
        let fs_type = profile.fs_type;
        Ok(Store {
            root,
            root_fd,
            config,
            dirs: dirs::DirCache::new(),
            listings: list::ListingCache::new(),
            completions: Default::default(),
            strides: Default::default(),
            temps: temp::TempNames::new(),
            layouts: Default::default(),
            exchange_on_replace: std::sync::atomic::AtomicBool::new(
                fs_type == EXT4_SUPER_MAGIC && profile.rename_exchange,
            ),
            // Where the probe saw it fail (ceph-fuse, GlusterFS), an
            // If-None-Match goes straight to link + unlink, no failed call.
            noreplace_rename: std::sync::atomic::AtomicBool::new(profile.rename_noreplace),
            unnamed_temps: std::sync::atomic::AtomicBool::new(profile.tmpfile),
            dir_size_counts_entries: fs_type == TMPFS_MAGIC,
            profile,
            versionings: Default::default(),
            version_indexes: Default::default(),
            dir_syncs: Default::default(),
            lifecycles: Default::default(),
        })
    }

    /// Takes the paths of a file system with none of Linux's extras: no
    /// `O_TMPFILE`, no `renameat2` flags and (process-wide) no
    /// open-file-description locks, as on some FUSE and network file
    /// systems. For tests of the fallbacks.
    #[doc(hidden)]
    pub fn emulate_minimal_fs(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        self.unnamed_temps.store(false, Relaxed);
        self.noreplace_rename.store(false, Relaxed);
        self.exchange_on_replace.store(false, Relaxed);
        put::NO_OFD_LOCKS.store(true, Relaxed);
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
