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
//! removes the directory; operations then fail with ENOENT, and
//! [`DirCache::is_dead`] tells a dead directory (no links left) from a missing
//! entry, so the caller drops the entry and resolves the path again.

use rustix::fs::{openat2, Mode, OFlags, ResolveFlags};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, RwLock};

/// Bound on cached directory fds; past it the cache starts over.
const MAX_CACHED: usize = 4096;

pub(crate) struct DirCache {
    map: RwLock<HashMap<Box<str>, Arc<OwnedFd>>>,
}

impl DirCache {
    pub fn new() -> Self {
        DirCache {
            map: RwLock::new(HashMap::new()),
        }
    }

    /// The directory `rel` (relative to the root, e.g. `bucket/a/b`), from the
    /// cache or freshly resolved.
    pub fn get(&self, root: BorrowedFd<'_>, rel: &str) -> io::Result<Arc<OwnedFd>> {
        if let Some(fd) = self.map.read().unwrap().get(rel) {
            return Ok(fd.clone());
        }
        let fd = Arc::new(open_beneath(root, rel)?);
        let mut map = self.map.write().unwrap();
        if map.len() >= MAX_CACHED {
            map.clear();
        }
        map.insert(rel.into(), fd.clone());
        Ok(fd)
    }

    /// Forgets `rel`, after it was removed or found dead.
    pub fn forget(&self, rel: &str) {
        self.map.write().unwrap().remove(rel);
    }

    /// Forgets `rel` and everything below it.
    pub fn forget_tree(&self, rel: &str) {
        let mut map = self.map.write().unwrap();
        map.retain(|k, _| {
            !(k.as_ref() == rel || k.starts_with(rel) && k[rel.len()..].starts_with('/'))
        });
    }

    /// Whether a directory fd refers to a directory that has been removed.
    pub fn is_dead(fd: &OwnedFd) -> bool {
        rustix::fs::fstat(fd)
            .map(|st| st.st_nlink == 0)
            .unwrap_or(true)
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
