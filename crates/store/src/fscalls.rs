//! File-system calls, counted by kind.
//!
//! On a parallel file system nearly every metadata call is a round trip to
//! a server, so the number of calls an S3 operation makes, not its CPU,
//! decides how close it comes to POSIX. The engine makes every file-system
//! call through the wrappers here, which have the signatures of the rustix
//! functions they wrap; `s3hpc explain` and the tests read the counts.
//!
//! Counting is off unless [`enable`] turned it on. Off, a call pays one
//! relaxed atomic load and a branch. The counters are process-wide, so a
//! server's calls count too when it runs in the counting process.
//!
//! Not counted: `close` (it follows every counted open of a file, and the
//! engine's cached directory handles are closed only when evicted) and the
//! `getdents` calls inside a directory read, counted once per directory read
//! as `readdir` (one more per 32 KiB of entries in practice).

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags, ResolveFlags, Stat, StatFs, XattrFlags};
use rustix::{io, path};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The kinds of call, in the order reports print them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Kind {
    /// `open`, `openat`, `openat2` (files and directories).
    Open,
    /// `stat` of a path (`newfstatat`, `statx`).
    Stat,
    /// `fstat` of an open file.
    Fstat,
    Mkdir,
    Rmdir,
    Unlink,
    Rename,
    Link,
    /// A directory read (an open of the directory and its `getdents`).
    Readdir,
    Getxattr,
    Setxattr,
    /// `fchmod` (the engine's "has metadata" mark).
    Chmod,
    Read,
    Write,
    CopyRange,
    Fsync,
    Statfs,
}

impl Kind {
    pub const ALL: [Kind; 17] = [
        Kind::Open,
        Kind::Stat,
        Kind::Fstat,
        Kind::Mkdir,
        Kind::Rmdir,
        Kind::Unlink,
        Kind::Rename,
        Kind::Link,
        Kind::Readdir,
        Kind::Getxattr,
        Kind::Setxattr,
        Kind::Chmod,
        Kind::Read,
        Kind::Write,
        Kind::CopyRange,
        Kind::Fsync,
        Kind::Statfs,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Open => "open",
            Kind::Stat => "stat",
            Kind::Fstat => "fstat",
            Kind::Mkdir => "mkdir",
            Kind::Rmdir => "rmdir",
            Kind::Unlink => "unlink",
            Kind::Rename => "rename",
            Kind::Link => "link",
            Kind::Readdir => "readdir",
            Kind::Getxattr => "getxattr",
            Kind::Setxattr => "setxattr",
            Kind::Chmod => "chmod",
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::CopyRange => "copy_range",
            Kind::Fsync => "fsync",
            Kind::Statfs => "statfs",
        }
    }

    /// Whether the call is about names and attributes rather than data:
    /// the calls a parallel file system sends to its metadata servers.
    pub fn is_metadata(self) -> bool {
        !matches!(
            self,
            Kind::Read | Kind::Write | Kind::CopyRange | Kind::Fsync | Kind::Fstat
        )
    }
}

const KINDS: usize = Kind::ALL.len();

static ENABLED: AtomicBool = AtomicBool::new(false);
static CALLS: [AtomicU64; KINDS] = [const { AtomicU64::new(0) }; KINDS];
static FAILED: [AtomicU64; KINDS] = [const { AtomicU64::new(0) }; KINDS];

/// Turns counting on or off for the whole process.
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Calls and failed calls of each kind since the process started counting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub calls: [u64; KINDS],
    pub failed: [u64; KINDS],
}

impl Counts {
    pub fn get(&self, k: Kind) -> u64 {
        self.calls[k as usize]
    }

    pub fn failed(&self, k: Kind) -> u64 {
        self.failed[k as usize]
    }

    pub fn total(&self) -> u64 {
        self.calls.iter().sum()
    }

    /// The calls a metadata server would see (see [`Kind::is_metadata`]).
    pub fn metadata(&self) -> u64 {
        Kind::ALL
            .iter()
            .filter(|k| k.is_metadata())
            .map(|&k| self.get(k))
            .sum()
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &Counts) -> Counts {
        let mut d = Counts::default();
        for i in 0..KINDS {
            d.calls[i] = self.calls[i].saturating_sub(earlier.calls[i]);
            d.failed[i] = self.failed[i].saturating_sub(earlier.failed[i]);
        }
        d
    }

    /// `kind n (m failed)` for every kind that occurred, e.g.
    /// `open 1, stat 2 (1 failed), link 1`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = Kind::ALL
            .iter()
            .filter(|&&k| self.get(k) > 0)
            .map(|&k| match self.failed(k) {
                0 => format!("{} {}", k.name(), self.get(k)),
                f => format!("{} {} ({f} failed)", k.name(), self.get(k)),
            })
            .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

/// The counts so far.
pub fn snapshot() -> Counts {
    let mut c = Counts::default();
    for i in 0..KINDS {
        c.calls[i] = CALLS[i].load(Ordering::Relaxed);
        c.failed[i] = FAILED[i].load(Ordering::Relaxed);
    }
    c
}

/// Counts one call of `kind` that ended in `r`.
#[inline]
pub fn count<T, E>(kind: Kind, r: Result<T, E>) -> Result<T, E> {
    if ENABLED.load(Ordering::Relaxed) {
        CALLS[kind as usize].fetch_add(1, Ordering::Relaxed);
        if r.is_err() {
            FAILED[kind as usize].fetch_add(1, Ordering::Relaxed);
        }
    }
    r
}

// The wrappers: rustix's signatures, counted.

pub fn open<P: path::Arg>(p: P, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
    count(Kind::Open, rustix::fs::open(p, flags, mode))
}

pub fn openat<P: path::Arg, Fd: AsFd>(
    dirfd: Fd,
    p: P,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    count(Kind::Open, rustix::fs::openat(dirfd, p, flags, mode))
}

pub fn openat2<P: path::Arg, Fd: AsFd>(
    dirfd: Fd,
    p: P,
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> io::Result<OwnedFd> {
    count(
        Kind::Open,
        rustix::fs::openat2(dirfd, p, flags, mode, resolve),
    )
}

pub fn statat<P: path::Arg, Fd: AsFd>(dirfd: Fd, p: P, flags: AtFlags) -> io::Result<Stat> {
    count(Kind::Stat, rustix::fs::statat(dirfd, p, flags))
}

pub fn statx<P: path::Arg, Fd: AsFd>(
    dirfd: Fd,
    p: P,
    flags: AtFlags,
    mask: rustix::fs::StatxFlags,
) -> io::Result<rustix::fs::Statx> {
    count(Kind::Stat, rustix::fs::statx(dirfd, p, flags, mask))
}

pub fn fstat<Fd: AsFd>(fd: Fd) -> io::Result<Stat> {
    count(Kind::Fstat, rustix::fs::fstat(fd))
}

/// `fstat` answered from the attributes the kernel already holds
/// (`statx` with `AT_STATX_DONT_SYNC`), counted as `fstat`. On FUSE with
/// `attribute-timeout=0` a plain `fstat` asks the server again (a round
/// trip); right after an open or a path lookup the kernel holds what that
/// lookup brought, which is as fresh. Local file systems answer both alike.
/// Falls back to `fstat` where `statx` is missing.
pub fn fstat_cached<Fd: AsFd>(fd: Fd) -> io::Result<Stat> {
    fstat_synced(fd, AtFlags::STATX_DONT_SYNC)
}

/// `fstat` asking the file system itself, past the kernel's attribute
/// cache (`statx` with `AT_STATX_FORCE_SYNC`: FUSE, NFS and CephFS go to
/// their server), counted as `fstat`. Falls back to `fstat` where `statx`
/// is missing.
pub fn fstat_fresh<Fd: AsFd>(fd: Fd) -> io::Result<Stat> {
    fstat_synced(fd, AtFlags::STATX_FORCE_SYNC)
}

/// `fstat` through `statx` with `sync` (one of its `AT_STATX_*` flags).
fn fstat_synced<Fd: AsFd>(fd: Fd, sync: AtFlags) -> io::Result<Stat> {
    use rustix::fs::StatxFlags;
    let r = rustix::fs::statx(&fd, "", AtFlags::EMPTY_PATH | sync, StatxFlags::BASIC_STATS);
    match r {
        Ok(x) => count(Kind::Fstat, Ok(stat_of_statx(&x))),
        Err(io::Errno::NOSYS) => fstat(fd),
        Err(e) => count(Kind::Fstat, Err(e)),
    }
}

fn stat_of_statx(x: &rustix::fs::Statx) -> Stat {
    // SAFETY: `Stat` is a plain C struct; all-zero is a valid value.
    let mut st: Stat = unsafe { std::mem::zeroed() };
    st.st_dev = rustix::fs::makedev(x.stx_dev_major, x.stx_dev_minor) as _;
    st.st_ino = x.stx_ino as _;
    st.st_nlink = x.stx_nlink as _;
    st.st_mode = x.stx_mode as _;
    st.st_uid = x.stx_uid as _;
    st.st_gid = x.stx_gid as _;
    st.st_rdev = rustix::fs::makedev(x.stx_rdev_major, x.stx_rdev_minor) as _;
    st.st_size = x.stx_size as _;
    st.st_blksize = x.stx_blksize as _;
    st.st_blocks = x.stx_blocks as _;
    st.st_atime = x.stx_atime.tv_sec as _;
    st.st_atime_nsec = x.stx_atime.tv_nsec as _;
    st.st_mtime = x.stx_mtime.tv_sec as _;
    st.st_mtime_nsec = x.stx_mtime.tv_nsec as _;
    st.st_ctime = x.stx_ctime.tv_sec as _;
    st.st_ctime_nsec = x.stx_ctime.tv_nsec as _;
    st
}

pub fn fstatfs<Fd: AsFd>(fd: Fd) -> io::Result<StatFs> {
    count(Kind::Statfs, rustix::fs::fstatfs(fd))
}

pub fn mkdirat<P: path::Arg, Fd: AsFd>(dirfd: Fd, p: P, mode: Mode) -> io::Result<()> {
    count(Kind::Mkdir, rustix::fs::mkdirat(dirfd, p, mode))
}

/// `unlinkat`, counted as `rmdir` with `AT_REMOVEDIR`.
pub fn unlinkat<P: path::Arg, Fd: AsFd>(dirfd: Fd, p: P, flags: AtFlags) -> io::Result<()> {
    let kind = if flags.contains(AtFlags::REMOVEDIR) {
        Kind::Rmdir
    } else {
        Kind::Unlink
    };
    count(kind, rustix::fs::unlinkat(dirfd, p, flags))
}

pub fn renameat<P: path::Arg, Q: path::Arg, PFd: AsFd, QFd: AsFd>(
    old_dirfd: PFd,
    old: P,
    new_dirfd: QFd,
    new: Q,
) -> io::Result<()> {
    count(
        Kind::Rename,
        rustix::fs::renameat(old_dirfd, old, new_dirfd, new),
    )
}

pub fn renameat_with<P: path::Arg, Q: path::Arg, PFd: AsFd, QFd: AsFd>(
    old_dirfd: PFd,
    old: P,
    new_dirfd: QFd,
    new: Q,
    flags: RenameFlags,
) -> io::Result<()> {
    count(
        Kind::Rename,
        rustix::fs::renameat_with(old_dirfd, old, new_dirfd, new, flags),
    )
}

pub fn linkat<P: path::Arg, Q: path::Arg, PFd: AsFd, QFd: AsFd>(
    old_dirfd: PFd,
    old: P,
    new_dirfd: QFd,
    new: Q,
    flags: AtFlags,
) -> io::Result<()> {
    count(
        Kind::Link,
        rustix::fs::linkat(old_dirfd, old, new_dirfd, new, flags),
    )
}

pub fn fgetxattr<Fd: AsFd, N: path::Arg>(fd: Fd, name: N, value: &mut [u8]) -> io::Result<usize> {
    count(Kind::Getxattr, rustix::fs::fgetxattr(fd, name, value))
}

/// Removes an attribute; counted with the calls that set one (both change
/// the file's attributes, one round trip each).
pub fn fremovexattr<Fd: AsFd, N: path::Arg>(fd: Fd, name: N) -> io::Result<()> {
    count(Kind::Setxattr, rustix::fs::fremovexattr(fd, name))
}

pub fn fsetxattr<Fd: AsFd, N: path::Arg>(
    fd: Fd,
    name: N,
    value: &[u8],
    flags: XattrFlags,
) -> io::Result<()> {
    count(
        Kind::Setxattr,
        rustix::fs::fsetxattr(fd, name, value, flags),
    )
}

pub fn fchmod<Fd: AsFd>(fd: Fd, mode: Mode) -> io::Result<()> {
    count(Kind::Chmod, rustix::fs::fchmod(fd, mode))
}

pub fn fsync<Fd: AsFd>(fd: Fd) -> io::Result<()> {
    count(Kind::Fsync, rustix::fs::fsync(fd))
}

/// Counted as `fsync`: the same round trip, without the inode's times.
pub fn fdatasync<Fd: AsFd>(fd: Fd) -> io::Result<()> {
    count(Kind::Fsync, rustix::fs::fdatasync(fd))
}

pub fn read<Fd: AsFd, Buf: rustix::buffer::Buffer<u8>>(
    fd: Fd,
    buf: Buf,
) -> io::Result<Buf::Output> {
    count(Kind::Read, rustix::io::read(fd, buf))
}

pub fn write<Fd: AsFd>(fd: Fd, buf: &[u8]) -> io::Result<usize> {
    count(Kind::Write, rustix::io::write(fd, buf))
}

pub fn copy_file_range<InFd: AsFd, OutFd: AsFd>(
    fd_in: InFd,
    off_in: Option<&mut u64>,
    fd_out: OutFd,
    off_out: Option<&mut u64>,
    len: usize,
) -> io::Result<usize> {
    count(
        Kind::CopyRange,
        rustix::fs::copy_file_range(fd_in, off_in, fd_out, off_out, len),
    )
}

/// A directory read: rustix's [`rustix::fs::Dir`], counted once.
pub fn read_dir<Fd: AsFd>(fd: Fd) -> io::Result<rustix::fs::Dir> {
    count(Kind::Readdir, rustix::fs::Dir::read_from(fd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_calls_and_failures() {
        let d = tempfile::tempdir().unwrap();
        let root =
            rustix::fs::open(d.path(), OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
        // Other tests of this binary may count too: compare only the kinds
        // this one makes, and enable before the first snapshot.
        enable(true);
        let before = snapshot();
        let _ = statat(&root, "missing", AtFlags::empty());
        mkdirat(&root, "sub", Mode::from_raw_mode(0o755)).unwrap();
        unlinkat(&root, "sub", AtFlags::REMOVEDIR).unwrap();
        let after = snapshot().since(&before);
        assert!(after.get(Kind::Stat) >= 1 && after.failed(Kind::Stat) >= 1);
        assert!(after.get(Kind::Mkdir) >= 1);
        assert!(after.get(Kind::Rmdir) >= 1);
        assert!(after.describe().contains("failed"));
    }
}
