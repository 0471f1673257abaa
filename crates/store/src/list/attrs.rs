//! The attributes of a window's files, kept with the window where the
//! file system hands them out with the directory (MooseFS).
//!
//! MooseFS's client fetches a directory's entries together with every
//! entry's attributes on the first readdir of an open handle, and answers
//! a lookup or stat from them while that handle stays open, for the thread
//! that read it (its cache is keyed by the caller's pid, which for FUSE is
//! the thread). Any other stat is a round trip to the master. `find` gets
//! its `-size` from there; a listing that stats a page's files when the
//! page is asked for (another thread, the handle long closed) pays a round
//! trip per key.
//!
//! So one thread reads the directory, selects and sorts the window, and
//! then stats the window's files in key order with the handle still open,
//! publishing each chunk as it goes: a page waits only for its own files,
//! the first page after about a page's worth of stats, and the whole
//! directory costs one local stat per file, as `find`. A large window is
//! shared by a few threads, each reading the directory once (one answer
//! of the master each) so the client answers its stats too: `find` stats
//! one file at a time. The attributes are those of
//! when the directory was read: the window is used only while the
//! directory's stamp is unchanged (an S3 write renames into it and so
//! changes it), and at most `MAX_AGE` (a file written in place by a POSIX
//! program leaves the stamp as it is).

use crate::fscalls::{read_dir, statat};
use rustix::fs::{AtFlags, Dir, FileType, Stat};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::threads::Lease;
use super::window::{read_window_in, Entry, Kind, Read};

/// Attributes older than this are not used: the window is read again.
pub(super) const MAX_AGE: Duration = Duration::from_secs(60);
/// A reader this many files ahead of the stats does its own stat rather
/// than wait (a listing that starts deep inside a fresh window).
const WAIT_AHEAD: usize = 8192;
/// The longest a reader waits for the stats to reach its file.
const WAIT: Duration = Duration::from_secs(5);
/// Files a statting thread claims at a time; readers are woken after each.
const CHUNK: usize = 64;
/// Threads taking a large window's stats, each with its own read of the
/// directory (the client answers only the thread that read it), the
/// helpers as `threads` leaves free...
const STAT_THREADS: usize = 4;
/// ...for windows of at least this many entries (each read costs the
/// master one answer holding the whole directory).
const PARALLEL_FROM: usize = 16 * 1024;

/// What a listing needs of a file's `stat` (size, time, the inode and
/// device for the fast ETag and the replaced-file check, the mode for the
/// type and the metadata bit): 40 bytes against a `Stat`'s 144.
#[derive(Clone, Copy)]
pub(super) struct Attr {
    dev: u64,
    ino: u64,
    size: i64,
    mtime: i64,
    mtime_nsec: u32,
    mode: u32,
}

impl Attr {
    #[allow(clippy::unnecessary_cast)] // the fields' types differ between architectures
    fn of(st: &Stat) -> Attr {
        Attr {
            dev: st.st_dev as u64,
            ino: st.st_ino,
            size: st.st_size,
            mtime: st.st_mtime as i64,
            mtime_nsec: st.st_mtime_nsec as u32,
            mode: st.st_mode,
        }
    }

    /// A `Stat` holding these fields (the others zero).
    pub fn stat(&self) -> Stat {
        // SAFETY: `Stat` is a plain C struct of integers; all zeros is a
        // valid value of it.
        let mut st: Stat = unsafe { std::mem::zeroed() };
        st.st_dev = self.dev as _;
        st.st_ino = self.ino as _;
        st.st_size = self.size as _;
        st.st_mtime = self.mtime as _;
        st.st_mtime_nsec = self.mtime_nsec as _;
        st.st_mode = self.mode as _;
        st
    }
}

struct Progress {
    /// Every slot before this one is filled.
    next: usize,
    /// Threads still taking stats.
    running: usize,
}

/// A window's file attributes by entry index, filled a chunk at a time,
/// in key order, by one or more threads.
pub(super) struct Attrs {
    slots: Vec<OnceLock<Option<Attr>>>,
    /// Where the next unclaimed chunk starts.
    claimed: AtomicUsize,
    progress: Mutex<Progress>,
    cv: Condvar,
    pub taken_at: Instant,
}

impl Attrs {
    fn new(entries: usize) -> Attrs {
        Attrs {
            slots: (0..entries).map(|_| OnceLock::new()).collect(),
            claimed: AtomicUsize::new(0),
            progress: Mutex::new(Progress {
                next: 0,
                running: 1,
            }),
            cv: Condvar::new(),
            taken_at: Instant::now(),
        }
    }

    /// The attributes of entry `i` if it is a file they were taken for,
    /// waiting for the stats to reach it unless they are far behind.
    pub fn get(&self, i: usize) -> Option<Stat> {
        let slot = self.slots.get(i)?;
        if let Some(a) = slot.get() {
            return a.map(|a| a.stat());
        }
        let mut p = self.progress.lock().unwrap();
        if i >= p.next + WAIT_AHEAD {
            return None;
        }
        while p.next <= i && p.running > 0 {
            let (g, waited) = self.cv.wait_timeout(p, WAIT).unwrap();
            p = g;
            if waited.timed_out() {
                break;
            }
        }
        drop(p);
        slot.get().copied().flatten().map(|a| a.stat())
    }

    /// Memory held, for the cache's bound.
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(self.slots.as_slice())
    }

    fn claim(&self) -> Option<std::ops::Range<usize>> {
        let lo = self.claimed.fetch_add(CHUNK, Ordering::Relaxed);
        (lo < self.slots.len()).then(|| lo..(lo + CHUNK).min(self.slots.len()))
    }

    /// Moves `next` past the filled slots and wakes the readers; with
    /// `finished`, one thread fewer runs.
    fn publish(&self, finished: bool) {
        let mut p = self.progress.lock().unwrap();
        while self.slots.get(p.next).is_some_and(|s| s.get().is_some()) {
            p.next += 1;
        }
        if finished {
            p.running -= 1;
        }
        self.cv.notify_all();
    }

    /// Starts a thread that reads directory `dirfd` once, so the client
    /// answers its stats, and then takes chunks of the window's stats.
    fn spawn_helper(attrs: &Arc<Self>, dirfd: &OwnedFd, entries: &Arc<Vec<Entry>>) {
        let lease = Lease::take(1);
        if lease.threads() == 0 {
            return; // other listings hold the process's threads
        }
        let Ok(fd) = dirfd.try_clone() else { return };
        let (weak, entries) = (Arc::downgrade(attrs), entries.clone());
        attrs.progress.lock().unwrap().running += 1;
        let started = std::thread::Builder::new()
            .name("s3hpc-list-attrs".into())
            .spawn(move || {
                let _lease = lease;
                // The first readdir of a handle brings the whole directory.
                let dir = read_dir(&fd).ok().map(|mut dir| {
                    let _ = dir.next();
                    dir
                });
                fill(&weak, &fd, &entries, dir);
            });
        if started.is_err() {
            attrs.publish(true);
        }
    }
}

/// Takes chunks of the window's stats until none is left, on a thread
/// that read the directory, while `_dir` (its handle) is open. Stops once
/// nothing else holds the attributes (the window was dropped).
fn fill(attrs: &Weak<Attrs>, dirfd: &OwnedFd, entries: &[Entry], _dir: Option<Dir>) {
    loop {
        let Some(attrs) = attrs.upgrade() else { return };
        let Some(chunk) = attrs.claim() else {
            attrs.publish(true);
            return;
        };
        for i in chunk {
            let e = &entries[i];
            let attr = (e.kind == Kind::File)
                .then(|| statat(dirfd, e.name(), AtFlags::SYMLINK_NOFOLLOW).ok())
                .flatten()
                .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
                .map(|st| Attr::of(&st));
            let _ = attrs.slots[i].set(attr);
        }
        attrs.publish(false);
    }
}

/// Reads a window of directory `dirfd` as `read_window` does, on a thread
/// of its own that then stays to take the attributes of its files (see
/// the module docs). Some(None) if the directory could not be read; None
/// if no thread started or it gave no answer (the caller reads it itself).
pub(super) fn read_window_with_attrs(
    dirfd: &OwnedFd,
    from: Option<&super::window::Bound>,
    limit: usize,
) -> Option<Option<Read>> {
    let fd = dirfd.try_clone().ok()?;
    let from = from.cloned();
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("s3hpc-list-attrs".into())
        .spawn(move || {
            let Some((mut read, dir)) = read_dir(&fd)
                .ok()
                .and_then(|dir| read_window_in(dir, &fd, from.as_ref(), limit, None))
            else {
                let _ = tx.send(None);
                return;
            };
            let attrs = Arc::new(Attrs::new(read.window.entries.len()));
            read.window.attrs = Some(attrs.clone());
            let entries = read.window.entries.clone();
            if entries.len() >= PARALLEL_FROM {
                for _ in 1..STAT_THREADS {
                    Attrs::spawn_helper(&attrs, &fd, &entries);
                }
            }
            let weak = Arc::downgrade(&attrs);
            drop(attrs);
            if tx.send(Some(read)).is_err() {
                return;
            }
            fill(&weak, &fd, &entries, Some(dir));
        })
        .ok()?;
    // A thread that ended without an answer (a panic): the caller reads.
    rx.recv().ok()
}
