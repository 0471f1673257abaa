//! What the file system under a data root can do, and what it charges.
//!
//! [`FsProfile::probe`] runs at [`crate::Store::open`] in a scratch
//! directory (`.s3hpc-probe.<host>.<pid>.<n>`, a reserved name, removed at
//! once): `O_TMPFILE`, `RENAME_NOREPLACE`, `RENAME_EXCHANGE`, `linkat`,
//! xattrs, fcntl and flock locks, d_type in readdir. The engine takes its
//! paths from the answer (unnamed temporaries, rename-exchange, locked
//! temporaries and no trusted caches on shared file systems, no mapped GETs
//! on FUSE). [`measure_costs`] and [`warnings`] are for `s3hpc probe DIR`.

mod ceph_fuse;

use rustix::fs::{
    fgetxattr, fsetxattr, fstatfs, fsync, linkat, mkdirat, openat, renameat, renameat_with, statat,
    unlinkat, AtFlags, Dir, FileType, Mode, OFlags, RenameFlags, XattrFlags,
};
use rustix::io::Errno;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

pub(crate) const EXT4_SUPER_MAGIC: i64 = 0xEF53;
pub(crate) const TMPFS_MAGIC: i64 = 0x0102_1994;
const FUSE_SUPER_MAGIC: i64 = 0x6573_5546;
/// File systems that only this machine mounts: their caches are the file
/// system's own, and no other node writes behind them.
const LOCAL: &[(i64, &str)] = &[
    (EXT4_SUPER_MAGIC, "ext4"),
    (TMPFS_MAGIC, "tmpfs"),
    (0x5846_5342, "xfs"),
    (0x9123_683E, "btrfs"),
    (0xF2F2_0A52, "f2fs"),
    (0x794C_7630, "overlayfs"),
    (0x2FC1_2FC1, "zfs"),
    (0x6462_6720, "debugfs"),
];
const SHARED: &[(i64, &str)] = &[
    (FUSE_SUPER_MAGIC, "fuse"),
    (0x6969, "nfs"),
    (0x0BD0_0BD0, "lustre"),
    (0x4750_4653, "gpfs"),
    (0x00C3_6400, "ceph"),
    (0x1983_0326, "beegfs"),
    (0xFE53_4D42, "smb2"),
    (0xFF53_4D42, "cifs"),
    (0x6B41_4653, "afs"),
];

/// What the probe found. `Default` is the most cautious answer (nothing
/// works, shared), for a root the probe could not write in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsProfile {
    /// `statfs` `f_type`.
    pub fs_type: i64,
    /// `ext4`, `tmpfs`, `fuse`, `nfs`, ... (from `f_type`).
    pub fs_name: String,
    /// Other nodes may mount it: network, cluster and FUSE file systems,
    /// and any type not known to be local.
    pub shared: bool,
    pub fuse: bool,
    pub tmpfile: bool,
    pub rename_noreplace: bool,
    pub rename_exchange: bool,
    pub linkat: bool,
    pub xattrs: bool,
    pub fcntl_locks: bool,
    pub flock: bool,
    pub d_type: bool,
    /// Another client may find a name missing for a moment while it is
    /// renamed over (GlusterFS's distribute layer moves the name between
    /// bricks in several steps), so a GET or HEAD that misses retries.
    /// From the mount type: false where a rename is one step on one server
    /// (local file systems, MooseFS, CephFS, NFS, Lustre, GPFS, BeeGFS),
    /// true for GlusterFS and any type not known.
    pub rename_gap: bool,
    /// The client answers a stat made right after the readdir that
    /// returned the entry from what that readdir brought, and a stat made
    /// later with a round trip: MooseFS's (1000 stats on another node:
    /// 81-125 ms interleaved with the readdir, 249-353 ms after the whole
    /// directory was read). Listings there stat files as they read them.
    /// From the mount type.
    pub stat_with_readdir: bool,
    /// The client answers a stat from the inodes its readdirs brought, but
    /// keeps only the latest few (ceph-fuse: `client_cache_size`, 16384),
    /// so in a larger directory a stat right after the readdir that
    /// returned the entry is local and a stat in key order much later is a
    /// round trip to the metadata server. Listings there stat a large
    /// window's files in readdir order on a thread of their own, as `find`
    /// does (`list/attrs.rs`). From the mount type.
    pub readdir_order_stats: bool,
    /// A directory's stamp (inode, times, size) from a forced stat
    /// (`AT_STATX_FORCE_SYNC`) reflects every client's change to it, so a
    /// listing may reuse what it read while the stamp stays: local file
    /// systems; CephFS (kernel or FUSE: the metadata server recalls the
    /// capabilities of a directory another client changes), NFS, Lustre
    /// and GPFS (a forced stat asks the server, which orders it after
    /// every change), and MooseFS (its client answers a getattr from the
    /// master, or from a directory open at that moment on this mount).
    /// GlusterFS only where its client graph has no metadata cache
    /// (`md-cache`, the volume's `performance.stat-prefetch`), which
    /// answers a stat from what it kept for a second whatever the kernel
    /// asks; without it the distribute layer asks every brick. Not any
    /// type not known.
    pub coherent_dir_stamps: bool,
    /// The client keeps written data in buffers of its own until the file
    /// is synced or closed: another client, or another open on this mount,
    /// that opens the file before then finds its length but reads nothing.
    /// MooseFS's does (a writer renaming each 5000-byte file over the key
    /// before closing it: 897 of 4222 reads on another node short or torn;
    /// 0 of 5216 with a flush first), so a PUT syncs its data before it
    /// publishes it. From the mount type: MooseFS and any FUSE client not
    /// known; not GlusterFS or ceph-fuse, whose writes reach the servers
    /// before a rename is answered.
    pub buffered_writes: bool,
    /// Attributes set on a file (xattrs, mode) are journaled in the order
    /// they were made, before a later rename, so a durable PUT's sync of
    /// its directory after the rename carries them and its data needs only
    /// `fdatasync`: local file systems (one journal each), ceph-fuse,
    /// GlusterFS (a brick's ext4 or XFS) and MooseFS (each an ordered
    /// request to its server), NFS and Lustre (synchronous requests). Not
    /// the kernel CephFS client, which keeps a setxattr under its
    /// capabilities until a full `fsync` flushes them, nor any type not
    /// known: there the data gets a full `fsync`. From the mount type.
    pub ordered_attrs: bool,
}

impl Default for FsProfile {
    fn default() -> Self {
        FsProfile {
            fs_type: 0,
            fs_name: "unknown".into(),
            shared: true,
            fuse: false,
            tmpfile: false,
            rename_noreplace: false,
            rename_exchange: false,
            linkat: false,
            xattrs: false,
            fcntl_locks: false,
            flock: false,
            d_type: false,
            rename_gap: true,
            stat_with_readdir: false,
            readdir_order_stats: false,
            coherent_dir_stamps: false,
            buffered_writes: true,
            ordered_attrs: false,
        }
    }
}

fn scratch_name() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let host: String = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect();
    format!(
        ".s3hpc-probe.{host}.{}.{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

const NEW: OFlags = OFlags::CREATE
    .union(OFlags::EXCL)
    .union(OFlags::RDWR)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
const MODE: Mode = Mode::from_bits_truncate(0o600);

/// A scratch directory, removed with everything in it on drop.
struct Scratch<'a> {
    parent: BorrowedFd<'a>,
    name: String,
    fd: OwnedFd,
}

impl<'a> Scratch<'a> {
    fn new(parent: BorrowedFd<'a>) -> rustix::io::Result<Scratch<'a>> {
        let name = scratch_name();
        mkdirat(parent, name.as_str(), Mode::from_bits_truncate(0o700))?;
        let fd = openat(
            parent,
            name.as_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .inspect_err(|_| {
            let _ = unlinkat(parent, name.as_str(), AtFlags::REMOVEDIR);
        })?;
        Ok(Scratch { parent, name, fd })
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        remove_tree(&self.fd);
        let _ = unlinkat(self.parent, self.name.as_str(), AtFlags::REMOVEDIR);
    }
}

fn remove_tree(dir: &OwnedFd) {
    let Ok(entries) = Dir::read_from(dir) else {
        return;
    };
    let names: Vec<_> = entries
        .flatten()
        .map(|e| e.file_name().to_owned())
        .filter(|n| n.to_bytes() != b"." && n.to_bytes() != b"..")
        .collect();
    for n in names {
        if unlinkat(dir, n.as_c_str(), AtFlags::empty()) == Err(Errno::ISDIR) {
            if let Ok(sub) = openat(
                dir,
                n.as_c_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                remove_tree(&sub);
            }
            let _ = unlinkat(dir, n.as_c_str(), AtFlags::REMOVEDIR);
        }
    }
}

fn fs_kind(fs_type: i64) -> (String, bool) {
    if let Some((_, n)) = LOCAL.iter().find(|(m, _)| *m == fs_type) {
        return (n.to_string(), false);
    }
    if let Some((_, n)) = SHARED.iter().find(|(m, _)| *m == fs_type) {
        return (n.to_string(), true);
    }
    (format!("0x{fs_type:x}"), true)
}

/// Whether a rename on this shared file system can leave the target name
/// missing to other clients for a moment (see [`FsProfile::rename_gap`]).
/// `mount_type` is the type in mountinfo (`fuse.glusterfs`, `fuse.mfs`).
fn rename_gap(fs_type: i64, mount_type: Option<&str>) -> bool {
    /// Shared file systems whose rename is one step on one metadata server.
    const ONE_STEP: &[&str] = &["nfs", "nfs4", "lustre", "gpfs", "ceph", "beegfs"];
    match mount_type {
        // The subtype is the daemon's name unless it sets one
        // (`fuse.ceph-fuse`).
        Some(t) if fs_type == FUSE_SUPER_MAGIC => !(is_moosefs(t) || t.starts_with("fuse.ceph")),
        Some(t) => !ONE_STEP.contains(&t),
        None => true,
    }
}

/// Whether the FUSE client of mount type `mount_type` keeps written data
/// from other opens until a flush (see [`FsProfile::buffered_writes`]).
fn buffered_writes(mount_type: Option<&str>) -> bool {
    !mount_type.is_some_and(|t| t == "fuse.glusterfs" || t.starts_with("fuse.ceph"))
}

/// Whether a shared file system journals a file's attributes in order
/// with a later rename (see [`FsProfile::ordered_attrs`]).
fn ordered_attrs(fs_type: i64, mount_type: Option<&str>) -> bool {
    match mount_type {
        Some(t) if fs_type == FUSE_SUPER_MAGIC => {
            is_moosefs(t) || t.starts_with("fuse.ceph") || t == "fuse.glusterfs"
        }
        Some(t) => ["nfs", "nfs4", "lustre"].contains(&t),
        None => false,
    }
}

/// Whether FUSE mount type `t` (as [`mount_type`] names it) is MooseFS's
/// client (`fuse.mfs`, `fuse.mfsmount`, `fuse.moosefs`).
/// See `FsProfile::coherent_dir_stamps`.
fn coherent_dir_stamps(fs_name: &str, mount: Option<&Mount>) -> bool {
    match fs_name {
        "ceph" | "nfs" | "lustre" | "gpfs" => true,
        "fuse" => mount.is_some_and(|m| {
            is_moosefs(&m.fstype)
                || m.fstype.starts_with("fuse.ceph")
                || m.fstype == "fuse.glusterfs"
                    && glusterfs_translators(&m.point)
                        .is_some_and(|t| !t.iter().any(|x| x == "md-cache"))
        }),
        _ => false,
    }
}

/// The translators of the GlusterFS client graph mounted at `mnt`, by
/// kind (`md-cache`, `write-behind`, ...), as its meta translator shows
/// them (`.meta/graphs/active/VOLUME-KIND`); None if it cannot be read.
fn glusterfs_translators(mnt: &str) -> Option<Vec<String>> {
    let graph = Path::new(mnt).join(".meta/graphs/active");
    let names: Vec<String> = std::fs::read_dir(graph)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    Some(
        GLUSTERFS_CACHES
            .iter()
            .filter(|x| names.iter().any(|n| n.ends_with(&format!("-{x}"))))
            .map(|x| x.to_string())
            .collect(),
    )
}

/// GlusterFS's caching translators (each one a volume option
/// `performance.NAME`, `stat-prefetch` for `md-cache`).
const GLUSTERFS_CACHES: [&str; 8] = [
    "quick-read",
    "io-cache",
    "open-behind",
    "write-behind",
    "read-ahead",
    "readdir-ahead",
    "md-cache",
    "nl-cache",
];

/// Where a directory's file system is mounted, and as what.
struct Mount {
    /// The type in mountinfo (see [`mount_of_dir`]).
    fstype: String,
    point: String,
}

fn is_moosefs(t: &str) -> bool {
    t.starts_with("fuse.mfs") || t.starts_with("fuse.moosefs")
}

/// The mount holding directory `dir` (matched by its device number, so no
/// path is needed). Its type: a FUSE mount without a subtype is named by
/// its source: mfsmount mounts as type `fuse` with source
/// `mfs#MASTER:PORT` (mountinfo escapes the `#` as `\043`), which is
/// returned as `fuse.mfs`.
fn mount_of_dir(dir: BorrowedFd<'_>) -> Option<Mount> {
    let st = rustix::fs::fstat(dir).ok()?;
    #[allow(clippy::unnecessary_cast)] // st_dev's type differs between architectures
    let dev = st.st_dev as u64;
    let want = format!("{}:{}", rustix::fs::major(dev), rustix::fs::minor(dev));
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|line| mountinfo_mount(line, &want))
}

/// The mount of mountinfo line `line` if it is device `dev` (`MAJOR:MINOR`).
fn mountinfo_mount(line: &str, dev: &str) -> Option<Mount> {
    let f: Vec<&str> = line.split(' ').collect();
    let sep = f.iter().position(|x| *x == "-")?;
    if f.get(2) != Some(&dev) {
        return None;
    }
    let (fstype, source) = (*f.get(sep + 1)?, f.get(sep + 2).copied().unwrap_or(""));
    let mfs = source.starts_with("mfs\\043") || source.starts_with("mfs#");
    let fstype = if matches!(fstype, "fuse" | "fuseblk") && mfs {
        "fuse.mfs".to_string()
    } else {
        fstype.to_string()
    };
    Some(Mount {
        fstype,
        point: f.get(4)?.replace("\\040", " "),
    })
}

/// One `fcntl` lock command on `len` bytes at `start` of `fd` (`len` 0: to
/// the end and beyond): `kind` is `F_WRLCK` or `F_UNLCK`, `cmd` the
/// process-owned `F_SETLK`/`F_SETLKW` or the open-file-description
/// `F_OFD_SETLK`/`F_OFD_SETLKW`. EINTR is retried.
pub(crate) fn fcntl_lock(
    fd: BorrowedFd<'_>,
    cmd: libc::c_int,
    kind: libc::c_int,
    start: u64,
    len: u64,
) -> rustix::io::Result<()> {
    // SAFETY: zeroed is a valid `flock`; the fields that matter are set.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as _;
    fl.l_whence = libc::SEEK_SET as _;
    fl.l_start = start as _;
    fl.l_len = len as _;
    loop {
        // SAFETY: `fd` is open and `fl` a valid flock for the call.
        if unsafe { libc::fcntl(fd.as_raw_fd(), cmd, &mut fl as *mut libc::flock) } == 0 {
            return Ok(());
        }
        match Errno::from_raw_os_error(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
        {
            Errno::INTR => {}
            e => return Err(e),
        }
    }
}

/// A whole-file write lock with `fcntl(F_SETLK)`: Ok(true) taken,
/// Ok(false) held by another process, Err when the file system has none.
pub(crate) fn lock_file(fd: BorrowedFd<'_>) -> rustix::io::Result<bool> {
    match fcntl_lock(fd, libc::F_SETLK, libc::F_WRLCK, 0, 0) {
        Ok(()) => Ok(true),
        Err(Errno::ACCESS | Errno::AGAIN) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Releases the lock of [`lock_file`].
pub(crate) fn unlock_file(fd: BorrowedFd<'_>) -> rustix::io::Result<()> {
    fcntl_lock(fd, libc::F_SETLK, libc::F_UNLCK, 0, 0)
}

/// Whether another process holds a lock on the file (`fcntl(F_GETLK)`).
pub(crate) fn locked_by_other(fd: BorrowedFd<'_>) -> bool {
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as _;
    fl.l_whence = libc::SEEK_SET as _;
    // SAFETY: F_GETLK with a valid flock struct on an open fd.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETLK, &mut fl) };
    r == 0 && fl.l_type != libc::F_UNLCK as _
}

impl FsProfile {
    /// Probes the file system of directory `dir` (see the module docs).
    /// Costs a dozen metadata calls; a directory it cannot write in gets
    /// the cautious default with the type filled in.
    pub fn probe(dir: BorrowedFd<'_>) -> FsProfile {
        #[allow(clippy::unnecessary_cast)] // f_type's type differs between architectures
        let fs_type = fstatfs(dir).map_or(0, |st| st.f_type as i64);
        let (fs_name, shared) = fs_kind(fs_type);
        let mut p = FsProfile {
            fs_type,
            fs_name,
            shared,
            fuse: fs_type == FUSE_SUPER_MAGIC,
            rename_gap: false,
            buffered_writes: false,
            ..FsProfile::default()
        };
        if shared {
            let mount = mount_of_dir(dir);
            let mount_type = mount.as_ref().map(|m| m.fstype.as_str());
            p.rename_gap = rename_gap(fs_type, mount_type);
            p.stat_with_readdir = fs_type == FUSE_SUPER_MAGIC && mount_type.is_some_and(is_moosefs);
            p.readdir_order_stats = fs_type == FUSE_SUPER_MAGIC
                && mount_type.is_some_and(|t| t.starts_with("fuse.ceph"));
            p.coherent_dir_stamps = coherent_dir_stamps(&p.fs_name, mount.as_ref());
            p.buffered_writes = fs_type == FUSE_SUPER_MAGIC && buffered_writes(mount_type);
            p.ordered_attrs = ordered_attrs(fs_type, mount_type);
        } else {
            p.coherent_dir_stamps = true;
            p.ordered_attrs = true;
        }
        let Ok(s) = Scratch::new(dir) else {
            return p;
        };
        let d = s.fd.as_fd();
        p.tmpfile = openat(
            d,
            ".",
            OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
            MODE,
        )
        .is_ok();
        let Ok(a) = openat(d, "a", NEW, MODE) else {
            return p;
        };
        let _ = rustix::io::write(&a, b"x");
        let _ = openat(d, "b", NEW, MODE);
        p.linkat = linkat(d, "a", d, "l", AtFlags::empty()).is_ok();
        // NOREPLACE must both move onto a free name and refuse a taken one.
        p.rename_noreplace = renameat_with(d, "b", d, "c", RenameFlags::NOREPLACE).is_ok()
            && renameat_with(d, "c", d, "a", RenameFlags::NOREPLACE) == Err(Errno::EXIST);
        let c = if p.rename_noreplace { "c" } else { "b" };
        p.rename_exchange = renameat_with(d, "a", d, c, RenameFlags::EXCHANGE).is_ok();
        p.xattrs = fsetxattr(&a, "user.s3hpc.probe", b"1", XattrFlags::empty()).is_ok()
            && fgetxattr(&a, "user.s3hpc.probe", &mut [0u8; 8]).is_ok();
        p.fcntl_locks = lock_file(a.as_fd()).is_ok();
        p.flock =
            rustix::fs::flock(&a, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok();
        p.d_type = Dir::read_from(&s.fd).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_bytes() == b"a" && e.file_type() != FileType::Unknown)
        });
        p
    }

    /// One line per capability, for `s3hpc probe`.
    pub fn describe(&self) -> String {
        let yn = |b: bool| if b { "yes" } else { "NO" };
        format!(
            "file system: {} (f_type 0x{:x}){}\n\
             O_TMPFILE:        {}\n\
             RENAME_NOREPLACE: {}\n\
             RENAME_EXCHANGE:  {}\n\
             linkat:           {}\n\
             xattrs (user.*):  {}\n\
             fcntl locks:      {}\n\
             flock:            {}\n\
             d_type:           {}\n\
             rename gap:       {}\n\
             buffered writes:  {}\n\
             ordered attrs:    {}\n",
            self.fs_name,
            self.fs_type,
            if self.shared {
                ", shared (other nodes may mount it)"
            } else {
                ", local"
            },
            yn(self.tmpfile),
            yn(self.rename_noreplace),
            yn(self.rename_exchange),
            yn(self.linkat),
            yn(self.xattrs),
            yn(self.fcntl_locks),
            yn(self.flock),
            yn(self.d_type),
            if self.rename_gap {
                "yes (a GET or HEAD that misses retries)"
            } else {
                "no"
            },
            if self.buffered_writes {
                "yes (a PUT syncs its data before publishing it)"
            } else {
                "no"
            },
            if self.ordered_attrs {
                "yes (a durable PUT syncs its data with fdatasync)"
            } else {
                "no (a durable PUT syncs its data with a full fsync)"
            },
        )
    }
}

/// The median cost in microseconds of each metadata call in `dir`, `n`
/// times each (`s3hpc probe`): create, stat, open, rename, link, unlink,
/// mkdir, rmdir, readdir page, getxattr, fsync.
pub fn measure_costs(dir: BorrowedFd<'_>, n: usize) -> std::io::Result<Vec<(&'static str, f64)>> {
    let s = Scratch::new(dir)?;
    let d = s.fd.as_fd();
    let mut out = Vec::new();
    let mut time = |name: &'static str, f: &mut dyn FnMut(usize) -> rustix::io::Result<()>| {
        let mut v = Vec::with_capacity(n);
        for i in 0..n {
            let t = Instant::now();
            if f(i).is_err() {
                return;
            }
            v.push(t.elapsed().as_secs_f64() * 1e6);
        }
        v.sort_by(f64::total_cmp);
        out.push((name, v[v.len() / 2]));
    };
    let f = |i: usize| format!("f{i}");
    time("create", &mut |i| {
        openat(d, f(i).as_str(), NEW, MODE).map(drop)
    });
    time("stat", &mut |i| {
        statat(d, f(i).as_str(), AtFlags::SYMLINK_NOFOLLOW).map(drop)
    });
    time("open", &mut |i| {
        openat(
            d,
            f(i).as_str(),
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map(drop)
    });
    time("rename", &mut |i| {
        renameat(d, f(i).as_str(), d, format!("r{i}").as_str())
    });
    time("link", &mut |i| {
        linkat(
            d,
            format!("r{i}").as_str(),
            d,
            f(i).as_str(),
            AtFlags::empty(),
        )
    });
    time("unlink", &mut |i| {
        unlinkat(d, format!("r{i}").as_str(), AtFlags::empty())
    });
    time("mkdir", &mut |i| {
        mkdirat(d, format!("d{i}").as_str(), Mode::from_bits_truncate(0o700))
    });
    time("rmdir", &mut |i| {
        unlinkat(d, format!("d{i}").as_str(), AtFlags::REMOVEDIR)
    });
    // A page: one listing of the directory of n files, from the start.
    time("readdir page", &mut |_| {
        let fd = openat(
            d,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Dir::read_from(&fd)?.take(1000).for_each(drop);
        Ok(())
    });
    let x = openat(d, "x", NEW, MODE)?;
    let have_xattr = fsetxattr(&x, "user.s3hpc.probe", b"0123456789", XattrFlags::empty()).is_ok();
    if have_xattr {
        time("getxattr", &mut |_| {
            fgetxattr(&x, "user.s3hpc.probe", &mut [0u8; 64]).map(drop)
        });
    }
    time("fsync (4 KiB)", &mut |_| {
        rustix::io::pwrite(&x, &[7u8; 4096], 0)?;
        fsync(&x)
    });
    Ok(out)
}

/// Configurations of the file system under `path` that break cross-node
/// guarantees, where they can be seen from a client: GlusterFS caching
/// translators in the client graph, FUSE attribute and entry caches left on
/// (GlusterFS, MooseFS); and one that costs listings their speed: a
/// ceph-fuse inode cache smaller than a large directory.
pub fn warnings(path: &Path, profile: &FsProfile) -> Vec<String> {
    let mut out = Vec::new();
    if !profile.fuse {
        return out;
    }
    let Some((mnt, fstype)) = mount_of(path) else {
        return out;
    };
    let daemon = fuse_daemon(&mnt);
    let cmdline = daemon.as_ref().map(|(_, args)| args);
    if fstype == "fuse.glusterfs" {
        if let Some(on) = glusterfs_translators(&mnt).filter(|t| !t.is_empty()) {
            out.push(format!(
                "GlusterFS caching translators are on ({}): reads on one node can be stale \
                 after a write on another (99 in 100 measured), and listings read the \
                 whole directory for every page (md-cache). Turn them off: gluster \
                 volume set VOL performance.<name> off (stat-prefetch for md-cache)",
                on.join(", ")
            ));
        }
        if let Some(c) = cmdline {
            for opt in ["attribute-timeout", "entry-timeout", "negative-timeout"] {
                if !c.iter().any(|a| a == &format!("--{opt}=0")) {
                    out.push(format!(
                        "the FUSE {opt} is not 0 on {mnt}: the kernel may answer from its own \
                         cache for a while after another node's change; mount with -o {opt}=0"
                    ));
                }
            }
        }
    } else if fstype.starts_with("fuse.mfs") || fstype == "fuse.moosefs" {
        if let Some(c) = cmdline {
            let all = c.join(" ");
            for opt in [
                "mfsattrcacheto",
                "mfsdirentrycacheto",
                "mfsentrycacheto",
                "mfsnegentrycacheto",
                "mfsxattrcacheto",
            ] {
                if !all.contains(&format!("{opt}=0")) {
                    out.push(format!(
                        "MooseFS {opt} is not 0 on {mnt}: this client may answer from its cache \
                         after another node's change; mount with -o {opt}=0"
                    ));
                }
            }
        }
    } else if fstype.starts_with("fuse.ceph") {
        let cache = daemon.and_then(|(pid, _)| ceph_fuse::client_cache_size(pid));
        if let Some(n) = cache.filter(|&n| n < LARGE_DIRECTORY) {
            out.push(format!(
                "ceph-fuse keeps {n} inodes on {mnt} (client_cache_size): a listing of a \
                 larger directory stats each file over the metadata server again (2-2.5 times \
                 `find` at 200 000 files, against 0.6 with the cache above the directory). \
                 Raise it above the largest directory served, e.g. ceph config set client \
                 client_cache_size {LARGE_DIRECTORY} (the clients take it at once; each \
                 inode costs the client memory)"
            ));
        }
    }
    out
}

/// How many inodes the ceph-fuse client under `path` keeps
/// (`client_cache_size`, asked on its admin socket), for `s3hpc probe`;
/// None for other file systems, or where it cannot be asked. Below a
/// directory's size, key-order stats there are requests to the metadata
/// server. Above it they were as cheap as `find`'s at 200k (87 s against
/// 153 s), but not at a million files, where the metadata server (over its
/// cache limit) recalled the client's capabilities: so listings judge by
/// the stats' measured cost (`list/attrs.rs`), not by this.
pub fn client_inode_cache(path: &Path) -> Option<u64> {
    let (mnt, fstype) = mount_of(path)?;
    if !fstype.starts_with("fuse.ceph") {
        return None;
    }
    let (pid, _) = fuse_daemon(&mnt)?;
    ceph_fuse::client_cache_size(pid)
}

/// The metadata-server requests of the file-system client serving a path,
/// as the client counts them: on ceph-fuse, its admin socket's `perf dump
/// client reply` (every request it sent any MDS, whichever process made
/// the call). The MDS's own count (`ceph tell mds.N perf dump`) needs the
/// cluster's admin key; this needs only the client's socket, which the
/// user running ceph-fuse can reach.
pub struct MdsRequestCounter {
    socket: std::path::PathBuf,
}

/// A reading of [`MdsRequestCounter`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MdsRequests {
    pub count: u64,
    /// Their latencies summed, as the client measured them.
    pub seconds: f64,
}

impl MdsRequestCounter {
    /// The counter of the client serving `path`, where it has one this
    /// process can read (ceph-fuse, its admin socket reachable).
    pub fn for_path(path: &Path) -> Option<MdsRequestCounter> {
        let (mnt, fstype) = mount_of(path)?;
        if !fstype.starts_with("fuse.ceph") {
            return None;
        }
        let (pid, _) = fuse_daemon(&mnt)?;
        let counter = MdsRequestCounter {
            socket: ceph_fuse::admin_socket(pid)?,
        };
        counter.read().map(|_| counter)
    }

    pub fn read(&self) -> Option<MdsRequests> {
        let (count, seconds) = ceph_fuse::mds_replies(&self.socket)?;
        Some(MdsRequests { count, seconds })
    }
}

/// A directory size a centre's projects reach (millions of
/// files); a ceph-fuse inode cache below it is worth a warning.
const LARGE_DIRECTORY: u64 = 1 << 20;

/// The mount point and type holding `path` (longest matching mount point).
fn mount_of(path: &Path) -> Option<(String, String)> {
    let path = std::fs::canonicalize(path).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(String, String)> = None;
    for line in info.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let Some(sep) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        let (Some(mp), Some(ty)) = (f.get(4), f.get(sep + 1)) else {
            continue;
        };
        let mp = mp.replace("\\040", " ");
        if path.starts_with(&mp) && best.as_ref().is_none_or(|(b, _)| mp.len() >= b.len()) {
            best = Some((mp, ty.to_string()));
        }
    }
    best
}

/// The pid and command line of the FUSE daemon (GlusterFS, MooseFS,
/// ceph-fuse) serving mount point `mnt` in this process's mount namespace.
fn fuse_daemon(mnt: &str) -> Option<(u32, Vec<String>)> {
    let own_ns = std::fs::read_link("/proc/self/ns/mnt").ok()?;
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let p = e.path();
        if std::fs::read_link(p.join("ns/mnt")).ok().as_ref() != Some(&own_ns) {
            continue;
        }
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(raw) = std::fs::read(p.join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = raw
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let daemon = args.first().is_some_and(|a| {
            let a = a.rsplit('/').next().unwrap_or(a);
            a.starts_with("glusterfs") || a.starts_with("mfsmount") || a == "ceph-fuse"
        });
        if daemon && args.iter().any(|a| a == mnt) {
            return Some((pid, args));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory and an fd of it.
    fn temp_dir() -> (tempfile::TempDir, OwnedFd) {
        let dir = tempfile::tempdir().unwrap();
        let fd = rustix::fs::open(
            dir.path(),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
        (dir, fd)
    }

    #[test]
    fn probes_a_local_directory_and_leaves_nothing() {
        let (dir, fd) = temp_dir();
        let p = FsProfile::probe(fd.as_fd());
        assert!(p.linkat, "{p:?}");
        assert!(p.d_type, "{p:?}");
        assert!(p.fcntl_locks, "{p:?}");
        let costs = measure_costs(fd.as_fd(), 5).unwrap();
        assert!(costs.iter().any(|(n, _)| *n == "create"), "{costs:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn names_fuse_mounts_by_subtype_or_source() {
        // As mountinfo showed them on the cluster's nodes.
        let ty = |line, dev| mountinfo_mount(line, dev).map(|m| m.fstype);
        let mfs = "67 44 0:39 / /mnt/x rw,relatime - fuse mfs\\043192.0.2.2:9421 rw,user_id=0";
        assert_eq!(ty(mfs, "0:39").as_deref(), Some("fuse.mfs"));
        assert_eq!(ty(mfs, "0:40"), None);
        let gl = "70 44 0:41 / /mnt/a\\040b rw - fuse.glusterfs 192.0.2.2:/v rw,user_id=0";
        let m = mountinfo_mount(gl, "0:41").unwrap();
        assert_eq!(
            (m.fstype.as_str(), m.point.as_str()),
            ("fuse.glusterfs", "/mnt/a b")
        );
        let ceph = "71 44 0:42 / /mnt/x rw - fuse.ceph-fuse ceph-fuse rw,user_id=0";
        let t = ty(ceph, "0:42").unwrap();
        assert!(!rename_gap(FUSE_SUPER_MAGIC, Some(&t)), "{t}");
        assert!(!rename_gap(FUSE_SUPER_MAGIC, Some("fuse.mfs")));
        assert!(rename_gap(FUSE_SUPER_MAGIC, Some("fuse.glusterfs")));
        assert!(buffered_writes(Some("fuse.mfs")) && buffered_writes(Some("fuse.juicefs")));
        assert!(!buffered_writes(Some(&t)) && !buffered_writes(Some("fuse.glusterfs")));
        assert!(ordered_attrs(FUSE_SUPER_MAGIC, Some(&t)));
        assert!(ordered_attrs(FUSE_SUPER_MAGIC, Some("fuse.glusterfs")));
        assert!(!ordered_attrs(FUSE_SUPER_MAGIC, Some("fuse.juicefs")));
        assert!(
            !ordered_attrs(0x00C3_6400, Some("ceph")),
            "the kernel client"
        );
        assert!(ordered_attrs(0x6969, Some("nfs4")));
    }

    #[test]
    fn glusterfs_stamps_are_trusted_only_without_its_metadata_cache() {
        // A mount point whose meta translator shows the client graph.
        let mnt = tempfile::tempdir().unwrap();
        let graph = mnt.path().join(".meta/graphs/active");
        let mount = Mount {
            fstype: "fuse.glusterfs".into(),
            point: mnt.path().to_str().unwrap().into(),
        };
        // No graph to read: not trusted.
        assert!(!coherent_dir_stamps("fuse", Some(&mount)));
        for x in ["gv0", "gv0-dht", "gv0-client-0", "gv0-io-threads"] {
            std::fs::create_dir_all(graph.join(x)).unwrap();
        }
        assert!(coherent_dir_stamps("fuse", Some(&mount)));
        std::fs::create_dir(graph.join("gv0-md-cache")).unwrap();
        assert!(!coherent_dir_stamps("fuse", Some(&mount)));
        assert_eq!(
            glusterfs_translators(&mount.point).unwrap(),
            vec!["md-cache".to_string()]
        );
        let mfs = Mount {
            fstype: "fuse.mfs".into(),
            point: "/nonexistent".into(),
        };
        assert!(coherent_dir_stamps("fuse", Some(&mfs)));
        assert!(!coherent_dir_stamps("fuse", None));
    }

    #[test]
    fn finds_the_mount_type_by_device() {
        let (_dir, fd) = temp_dir();
        let t = mount_of_dir(fd.as_fd()).expect("in mountinfo").fstype;
        let (name, _) = fs_kind(fstatfs(&fd).unwrap().f_type as i64);
        assert!(
            t.starts_with(&name) || name.starts_with("0x"),
            "{t} vs {name}"
        );
    }
}
