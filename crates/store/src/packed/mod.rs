//! Packed buckets: small objects as records appended to a few large files
//! (one per writing process and user) instead of a file each, so that a
//! PUT is an append and a GET a `pread`, neither a metadata-server request
//! once the pack is open. The design, and how each guarantee holds across
//! nodes: docs/src/design/packed.md.
//!
//! A bucket is packed while it has a `.s3hpc-packs` directory. Objects
//! larger than [`PACK_MAX`] stay plain files at their keys' paths, with a
//! record that orders them among the key's records; a key no record names
//! is whatever file is at its path, so data that was there before the
//! bucket was packed stays visible.

mod compact;
mod list;
mod lock;
mod read;
mod record;
mod set;
mod unpack;
mod write;

pub use compact::Compacted;
pub(crate) use set::PACKS_DIR;
pub use unpack::Unpacked;

use crate::fscalls::{fstat, openat, statat};
use crate::meta::{self, StoredMeta};
use crate::put::{etag_matches, precondition_failed, Checks, Source};
use crate::*;
use record::Kind;
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use set::{Entry, PackSet};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::ops::Bound;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime};

/// Objects larger than this stay plain files in a packed bucket, unless
/// the bucket says otherwise ([`Store::set_pack_max`]).
pub const PACK_MAX: u64 = 1 << 20;

/// The largest threshold a bucket may set: a packed object is read whole
/// into memory by a GET, and gathered whole by a PUT.
pub const PACK_MAX_LIMIT: u64 = PACK_ROLL;

/// A writer seals its pack and starts another once it holds this many
/// bytes: sealed packs are what a compaction rewrites.
pub const PACK_ROLL: u64 = 64 << 20;

/// How long this process trusts what it learnt of a bucket's layout: a
/// bucket packed by another process is seen packed within this. The
/// check is one `stat` per bucket per interval.
const RECHECK: Duration = Duration::from_secs(1);

/// A bucket's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A directory tree: an object is the file at its key's path.
    Plain,
    /// Small objects appended to pack files (see the module's docs).
    Packed,
}

impl std::str::FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "plain" => Ok(Layout::Plain),
            "packed" => Ok(Layout::Packed),
            _ => Err(format!("unknown layout {s:?}: use plain or packed")),
        }
    }
}

impl Layout {
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Plain => "plain",
            Layout::Packed => "packed",
        }
    }
}

/// What this process knows of buckets' layouts.
#[derive(Default)]
pub(crate) struct Layouts {
    known: RwLock<HashMap<String, Known>>,
    /// New buckets are made packed (`serve --layout packed`).
    new_packed: std::sync::atomic::AtomicBool,
    /// [`RECHECK`], unless a test set another (in ms; 0: the default).
    recheck_ms: AtomicU64,
    /// [`PACK_ROLL`], unless a test set another (0: the default).
    roll: AtomicU64,
    /// The threshold of new packed buckets (0: [`PACK_MAX`]).
    new_pack_max: AtomicU64,
}

struct Known {
    set: Option<Arc<PackSet>>,
    checked: Instant,
}

/// A threshold a bucket may set: 1 byte to [`PACK_MAX_LIMIT`].
fn check_pack_max(bytes: u64) -> Result<()> {
    match bytes {
        0 => Err(s3err!(
            InvalidArgument,
            "a packed bucket packs objects of at least 1 byte; a plain bucket packs none"
        )),
        n if n > PACK_MAX_LIMIT => Err(s3err!(
            InvalidArgument,
            "a packed bucket packs objects of at most {PACK_MAX_LIMIT} bytes (asked: {n}); \
             larger ones are better as files"
        )),
        _ => Ok(()),
    }
}

/// The threshold a bucket's packs directory keeps: a regular file of at
/// most a few bytes owned by root or the bucket's owner (anyone may write in
/// the directory), else [`PACK_MAX`].
fn read_pack_max(set: &PackSet) -> u64 {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = openat(&set.dir, set::PACK_MAX_FILE, flags, Mode::empty()) else {
        return PACK_MAX;
    };
    let trusted = fstat(&fd).is_ok_and(|st| {
        st.st_mode & libc::S_IFMT == libc::S_IFREG
            && (st.st_uid == 0 || st.st_uid == set.bucket_owner)
    });
    let mut text = [0u8; 24];
    let n = match trusted {
        true => set::pread_full(&fd, &mut text, 0).unwrap_or(0),
        false => 0,
    };
    std::str::from_utf8(&text[..n])
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .filter(|n| *n > 0)
        .map_or(PACK_MAX, |n| n.min(PACK_MAX_LIMIT))
}

/// The stamp of a new record: the clock, but always after `prev` (the
/// key's newest record this process knows) and after every stamp this
/// process gave, so a key's records are ordered as their writes were.
fn stamp_after(prev: Option<u64>) -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let want = now.max(prev.map_or(0, |p| p + 1));
    let last = LAST.fetch_max(want, Ordering::Relaxed);
    if last >= want {
        LAST.fetch_add(1, Ordering::Relaxed) + 1
    } else {
        want
    }
}

fn io_err(e: Errno, what: &str) -> S3Error {
    S3Error::from_io(&e.into(), what)
}

impl Store {
    /// The packed state of `bucket`, or None where it is plain (or does
    /// not exist: the plain path says so).
    pub(crate) fn packed(&self, bucket: &str) -> Option<Arc<PackSet>> {
        if let Some(k) = self.layouts.known.read().unwrap().get(bucket) {
            let recheck = match self.layouts.recheck_ms.load(Ordering::Relaxed) {
                0 => RECHECK,
                ms => Duration::from_millis(ms),
            };
            if k.checked.elapsed() < recheck {
                return k.set.clone();
            }
        }
        let path = format!("{bucket}/{PACKS_DIR}");
        let old = self
            .layouts
            .known
            .read()
            .unwrap()
            .get(bucket)
            .and_then(|k| k.set.clone());
        let set = match statat(&self.root_fd, path.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if old.as_ref().is_some_and(|s| s.ino == st.st_ino) => {
                // Another process may have set a new threshold.
                let set = old.as_ref().unwrap();
                set.pack_max.store(read_pack_max(set), Ordering::Relaxed);
                old
            }
            Ok(_) => self.open_packs(bucket, &path),
            Err(Errno::NOENT | Errno::NOTDIR) => None,
            // A transient failure (ESTALE, EIO, EINTR on a shared file
            // system) says nothing of the layout: keep what was known,
            // not remembered, and look again on the next call.
            Err(_) => return old,
        };
        self.layouts.known.write().unwrap().insert(
            bucket.to_string(),
            Known {
                set: set.clone(),
                checked: Instant::now(),
            },
        );
        set
    }

    fn open_packs(&self, bucket: &str, path: &str) -> Option<Arc<PackSet>> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let dir = openat(&self.root_fd, path, flags, Mode::empty()).ok()?;
        let ino = fstat(&dir).ok()?.st_ino;
        let b = statat(&self.root_fd, bucket, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        let sticky = (b.st_mode & libc::S_ISVTX != 0).then_some(b.st_uid);
        let mut set = PackSet::open(dir, self.profile.shared, sticky, ino);
        set.bucket_owner = b.st_uid;
        set.pack_max.store(read_pack_max(&set), Ordering::Relaxed);
        Some(Arc::new(set))
    }

    /// Sets the size up to which `bucket`'s objects are packed (larger
    /// ones stay plain files), at most [`PACK_MAX_LIMIT`]. Objects already
    /// stored stay where they are; every process follows the new threshold
    /// once it opens the bucket's packs again, and until then packs or
    /// not by the old one, which readers handle alike.
    pub fn set_pack_max(&self, bucket: &str, bytes: u64) -> Result<()> {
        check_pack_max(bytes)?;
        let set = self
            .packed(bucket)
            .ok_or_else(|| s3err!(InvalidRequest, "bucket {bucket:?} is not packed"))?;
        let me = rustix::process::geteuid();
        if !me.is_root() && me.as_raw() != set.bucket_owner {
            return Err(s3err!(
                AccessDenied,
                "only the owner of bucket {bucket:?} (uid {}) or root sets its threshold",
                set.bucket_owner
            ));
        }
        let what = format!("bucket {bucket}'s {}", set::PACK_MAX_FILE);
        let tmp = format!(
            ".{}.{}.{:x}",
            set::PACK_MAX_FILE,
            std::process::id(),
            stamp_after(None)
        );
        let flags =
            OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd =
            openat(&set.dir, tmp.as_str(), flags, Mode::empty()).map_err(|e| io_err(e, &what))?;
        // Readable by every user whatever the umask: all follow it.
        let mut file = File::from(fd);
        let written = crate::fscalls::fchmod(&file, Mode::from_bits_truncate(0o644))
            .map_err(std::io::Error::from)
            .and_then(|_| file.write_all(format!("{bytes}\n").as_bytes()))
            .and_then(|_| file.sync_all());
        let renamed = written
            .map_err(|e| S3Error::from_io(&e, &what))
            .and_then(|_| {
                crate::fscalls::renameat(&set.dir, tmp.as_str(), &set.dir, set::PACK_MAX_FILE)
                    .map_err(|e| io_err(e, &what))
            });
        if renamed.is_err() {
            let _ = crate::fscalls::unlinkat(&set.dir, tmp.as_str(), AtFlags::empty());
        }
        renamed?;
        set.pack_max.store(bytes, Ordering::Relaxed);
        Ok(())
    }

    /// The size up to which `bucket`'s objects are packed; None for a
    /// plain bucket.
    pub fn pack_max(&self, bucket: &str) -> Option<u64> {
        self.packed(bucket)
            .map(|s| s.pack_max.load(Ordering::Relaxed))
    }

    /// Forgets what this process knew of `bucket`'s layout (it was deleted).
    pub(crate) fn forget_layout(&self, bucket: &str) {
        self.layouts.known.write().unwrap().remove(bucket);
    }

    /// The bucket's layout.
    pub fn bucket_layout(&self, bucket: &str) -> Result<Layout> {
        self.head_bucket(bucket)?;
        // As this process last looked (within a second): forgetting the
        // bucket's set would close its lock file, and with it the locks
        // other threads hold there.
        Ok(match self.packed(bucket) {
            Some(_) => Layout::Packed,
            None => Layout::Plain,
        })
    }

    /// How long a bucket's layout is trusted before it is looked at again,
    /// for tests that count calls per operation.
    #[doc(hidden)]
    pub fn set_layout_recheck(&self, every: Duration) {
        let ms = every.as_millis().max(1) as u64;
        self.layouts.recheck_ms.store(ms, Ordering::Relaxed);
    }

    /// [`PACK_ROLL`] for tests, to see packs sealed and compacted.
    #[doc(hidden)]
    pub fn set_pack_roll(&self, bytes: u64) {
        self.layouts.roll.store(bytes.max(1), Ordering::Relaxed);
    }

    pub(crate) fn pack_roll(&self) -> u64 {
        match self.layouts.roll.load(Ordering::Relaxed) {
            0 => PACK_ROLL,
            n => n,
        }
    }

    /// The layout CreateBucket gives new buckets, through every transport
    /// (plain unless set).
    pub fn set_default_layout(&self, layout: Layout) {
        let packed = layout == Layout::Packed;
        self.layouts.new_packed.store(packed, Ordering::Relaxed);
    }

    /// The threshold new packed buckets get ([`Store::set_pack_max`]);
    /// [`PACK_MAX`] unless set.
    pub fn set_default_pack_max(&self, bytes: u64) -> Result<()> {
        check_pack_max(bytes)?;
        self.layouts.new_pack_max.store(bytes, Ordering::Relaxed);
        Ok(())
    }

    pub(crate) fn default_layout(&self) -> Layout {
        match self.layouts.new_packed.load(Ordering::Relaxed) {
            true => Layout::Packed,
            false => Layout::Plain,
        }
    }

    /// Creates a bucket with the given layout.
    pub fn create_bucket_with(&self, bucket: &str, layout: Layout) -> Result<()> {
        self.make_bucket(bucket)?;
        if layout == Layout::Packed {
            self.pack_bucket(bucket)?;
            match self.layouts.new_pack_max.load(Ordering::Relaxed) {
                0 => {}
                max => self.set_pack_max(bucket, max)?,
            }
        }
        Ok(())
    }

    /// Makes an existing bucket packed: new small objects are packed, and
    /// the files already there stay objects as they are. Idempotent.
    pub fn pack_bucket(&self, bucket: &str) -> Result<()> {
        self.head_bucket(bucket)?;
        if self.bucket_versioning(bucket)? != crate::Versioning::Off {
            return Err(s3err!(
                InvalidBucketState,
                "bucket {bucket:?} keeps versions of its objects, which a packed bucket \
                 does not: pack a bucket that never had versioning"
            ));
        }
        let what = format!("bucket {bucket}");
        let path = format!("{bucket}/{PACKS_DIR}");
        match crate::fscalls::mkdirat(
            &self.root_fd,
            path.as_str(),
            Mode::from_bits_truncate(0o777),
        ) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(io_err(e, &what)),
        }
        let lock = format!("{path}/{}", set::LOCK_FILE);
        match openat(
            &self.root_fd,
            lock.as_str(),
            OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_bits_truncate(0o666),
        ) {
            // Anyone who may write in the bucket takes locks in it.
            Ok(fd) => crate::fscalls::fchmod(&fd, Mode::from_bits_truncate(0o666))
                .map_err(|e| io_err(e, &what))?,
            Err(Errno::EXIST) => {}
            Err(e) => return Err(io_err(e, &what)),
        }
        // Seen packed from now on; a set already open is kept (dropping it
        // would close its lock file, and with it other threads' locks).
        if self.packed(bucket).is_none() {
            self.forget_layout(bucket);
        }
        Ok(())
    }

    /// The newest record of `key` this process knows, without reading
    /// what others appended since it last looked.
    pub(super) fn known(&self, set: &PackSet, key: &str) -> Option<Entry> {
        set.index.read().unwrap().get(key).cloned()
    }

    /// What the newest record of `key` says, after reading what others
    /// appended.
    pub(super) fn entry(&self, set: &PackSet, key: &str) -> Result<Option<Entry>> {
        set.refresh(Instant::now())?;
        if let Some(e) = self.known(set, key) {
            return Ok(Some(e));
        }
        // Not found: perhaps in a pack whose directory entry the stamp does
        // not show yet (another node's new writer).
        set.refresh_listing_packs()?;
        Ok(self.known(set, key))
    }

    pub(super) fn info_of(&self, set: &PackSet, key: &str, e: &Entry) -> ObjectInfo {
        let stored = StoredMeta::decode(&e.meta);
        let owner = set.pack(e.pack).map(|p| p.owner);
        ObjectInfo {
            key: key.to_string(),
            size: e.header.data_len,
            last_modified: e.last_modified(),
            etag: stored.etag.unwrap_or_else(|| meta::EMPTY_MD5.to_string()),
            content_type: stored.content_type,
            metadata: stored.metadata,
            checksum: stored.checksum,
            tag_count: stored.tags.len() as u16,
            headers: stored.headers,
            owner,
            version_id: None,
            lock: Default::default(),
        }
    }
}

fn no_such_key(bucket: &str, key: &str) -> S3Error {
    s3err!(NoSuchKey, "no object {key:?} in bucket {bucket:?}")
}
