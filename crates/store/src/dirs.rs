//! Resolving directories beneath the data root, safely and cheaply.
//!
//! Every directory is opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`
//! relative to the root, so a symlink planted anywhere in a bucket, or a `..`
//! that slipped through, fails instead of escaping. Object operations then act
//! on a single name relative to that directory fd with `O_NOFOLLOW` /
//! `AT_SYMLINK_NOFOLLOW`, so no path walk ever follows a link.
//!
//! Opening the directory on every request would cost two extra syscalls per
//! operation (openat2 + close), a large share of a metadata op on tmpfs. So the
//! fds are cached. A cached fd can go stale when another process (or node)
//! removes the directory; operations then fail (ENOENT, or ESTALE on a
//! network file system), and [`DirCache::is_stale`] tells a dead directory
//! from a missing entry, so the caller drops the entry and resolves the path
//! again.

use crate::fscalls::openat2;
use rustc_hash::FxHashMap;
use rustix::fs::{Mode, OFlags, ResolveFlags};
use std::cell::RefCell;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// Bound on cached directory fds per thread and store; past it the cache
/// starts over.
const MAX_CACHED: usize = 4096;

/// A handle on the per-thread directory caches of one store.
///
/// The caches are per thread, not shared: a shared map costs a contended
/// lock and reference count on every operation, which measurably slowed
/// two ranks stat'ing one directory. Each thread resolves a directory once;
/// a thread that removes a directory forgets it at once, the others find
/// out through the dead-directory check like any other process would.
pub(crate) struct DirCache {
    id: u64,
    /// Dropped with the store; threads then free its cached fds lazily.
    alive: Arc<()>,
}

type Dirs = FxHashMap<Box<str>, Rc<OwnedFd>>;

struct StoreDirs {
    alive: Weak<()>,
    /// Per identity the thread acted as (`identity::acting_id`): a handle
    /// one user opened never serves another, who may not pass the
    /// directories above it (an `O_PATH` handle skips their checks).
    dirs: FxHashMap<u64, Dirs>,
}

thread_local! {
    static CACHES: RefCell<FxHashMap<u64, StoreDirs>> = RefCell::new(FxHashMap::default());
}

impl DirCache {
    pub fn new() -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        DirCache {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
        }
    }

    /// The directory `rel` (relative to the root, e.g. `bucket/a/b`), from the
    /// cache or freshly resolved.
    pub fn get(&self, root: BorrowedFd<'_>, rel: &str) -> io::Result<Rc<OwnedFd>> {
        let who = crate::identity::acting_id();
        let hit = CACHES.with_borrow(|c| {
            let s = c.get(&self.id)?;
            s.dirs.get(&who)?.get(rel).cloned()
        });
        if let Some(fd) = hit {
            return Ok(fd);
        }
        let fd = Rc::new(open_beneath(root, rel)?);
        CACHES.with_borrow_mut(|caches| {
            if !caches.contains_key(&self.id) {
                // A new store on this thread: drop what dead stores left.
                caches.retain(|_, s| s.alive.strong_count() > 0);
                caches.insert(
                    self.id,
                    StoreDirs {
                        alive: Arc::downgrade(&self.alive),
                        dirs: FxHashMap::default(),
                    },
                );
            }
            let all = &mut caches.get_mut(&self.id).expect("just inserted").dirs;
            if all.values().map(|d| d.len()).sum::<usize>() >= MAX_CACHED {
                all.clear();
            }
            all.entry(who).or_default().insert(rel.into(), fd.clone());
        });
        Ok(fd)
    }

    /// Runs `f` on the handles of every identity.
    fn with_dirs(&self, mut f: impl FnMut(&mut Dirs)) {
        CACHES.with_borrow_mut(|c| {
            if let Some(s) = c.get_mut(&self.id) {
                s.dirs.values_mut().for_each(&mut f)
            }
        })
    }

    /// Forgets `rel`, after it was removed or found dead.
    pub fn forget(&self, rel: &str) {
        self.with_dirs(|d| {
            d.remove(rel);
        });
    }

    /// Forgets `rel` and everything below it.
    pub fn forget_tree(&self, rel: &str) {
        self.with_dirs(|d| {
            d.retain(|k, _| {
                !(k.as_ref() == rel || k.starts_with(rel) && k[rel.len()..].starts_with('/'))
            })
        });
    }

    /// Whether the cached fd of directory `rel` no longer is the directory
    /// at that path: removed (and perhaps made again, by this process or
    /// another node). Called only after an operation through `fd` failed.
    ///
    /// On a local file system a removed directory has a link count of 0,
    /// which one `fstat` shows. On a `shared` one that is not enough:
    /// GlusterFS reports 2 for a removed directory, even to the client that
    /// removed it, and a directory removed and made again by
    /// another node is a new inode under the same path. There the path is
    /// resolved again and the inodes compared: the open is the round trip
    /// (its lookups); both inode numbers come from what the kernel holds
    /// (an open directory's inode number never changes, and the fresh one
    /// is what the open's lookup just brought), so no `fstat` asks the
    /// server. On the miss path only.
    pub fn is_stale(root: BorrowedFd<'_>, rel: &str, fd: &OwnedFd, shared: bool) -> bool {
        use crate::fscalls::{fstat, fstat_cached};
        if !shared {
            return fstat(fd).map_or(true, |st| st.st_nlink == 0);
        }
        let Ok(cached) = fstat_cached(fd) else {
            return true;
        };
        match open_beneath(root, rel).and_then(|now| Ok(fstat_cached(&now)?)) {
            Ok(now) => (now.st_dev, now.st_ino) != (cached.st_dev, cached.st_ino),
            Err(_) => true,
        }
    }
}

/// Opens a directory below `root` as an `O_PATH` fd, refusing symlinks and any
/// path that would leave `root`.
pub(crate) fn open_beneath(root: BorrowedFd<'_>, rel: &str) -> io::Result<OwnedFd> {
    open_beneath_flags(root, rel, OFlags::PATH)
}

/// Like [`open_beneath`] but readable, for listing entries.
pub(crate) fn open_dir_readable(root: BorrowedFd<'_>, rel: &str) -> io::Result<OwnedFd> {
    open_beneath_flags(root, rel, OFlags::RDONLY)
}

fn open_beneath_flags(root: BorrowedFd<'_>, rel: &str, mode: OFlags) -> io::Result<OwnedFd> {
    let path = if rel.is_empty() { "." } else { rel };
    Ok(openat2(
        root.as_fd(),
        path,
        mode | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )?)
}
