//! PUT: data goes into a temporary in the key's directory, which is then
//! linked or renamed over the key, so readers see the old object or the new
//! one, never a partial one.

use crate::dirs::DirCache;
use crate::fscalls::{
    fdatasync, fstat, fsync, linkat, openat, renameat, renameat_with, statat, unlinkat,
};
use crate::meta::{self, StoredMeta, EMPTY_MD5};
use crate::names::dir_rel;
use crate::names::{split_key, validate_bucket_name, validate_key, DIR_ENTRY, SELF_ENTRY};
use crate::*;
use md5::{Digest, Md5};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags, CWD};
use rustix::io::Errno;
use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Chunk size for streaming: big enough to keep syscalls few, small enough
/// that memory stays bounded whatever the object size.
pub(crate) const CHUNK: usize = 1 << 20;
/// S3's largest object.
const MAX_OBJECT_SIZE: u64 = 5 << 40;

thread_local! {
    /// One streaming buffer per thread, reused across PUTs.
    static CHUNK_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// One temporary-name buffer per thread.
    static TEMP_NAME: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The file a PUT writes before it becomes the object.
///
/// New keys use an unnamed `O_TMPFILE`: no directory entry is made for the
/// temporary and none renamed, so a PUT of a new 3901-byte object measured
/// 0.77 of POSIX create+write on tmpfs and 0.82 on ext4, against 0.57 and
/// 0.53 with a named temporary; and a killed writer leaves nothing at all.
/// Replacing an existing key needs a name to rename from, which makes the
/// unnamed file the costlier way, so a thread whose PUTs keep hitting
/// existing keys (mdtest-hard's create-then-write) is predicted to overwrite
/// and uses named temporaries, probing the unnamed way again now and then.
pub(crate) enum Temp {
    Unnamed(OwnedFd),
    Named(OwnedFd),
    /// Named, and locked while it lives (see `open_temp`).
    Locked(OwnedFd),
}

impl Temp {
    fn fd(&self) -> &OwnedFd {
        match self {
            Temp::Unnamed(fd) | Temp::Named(fd) | Temp::Locked(fd) => fd,
        }
    }

    fn named(&self) -> bool {
        !matches!(self, Temp::Unnamed(_))
    }
}

/// How `open_temp` makes a PUT's temporary.
struct NewTemp {
    /// Held locked while it lives, with a name that says so.
    locked: bool,
    /// Its mode: with the metadata mark where metadata will be stored.
    mode: Mode,
}

/// Per-thread guess of whether the next PUT replaces an existing key.
struct OverwritePredictor;

thread_local! {
    /// PUTs left before the unnamed way is tried again.
    static OVERWRITE_STREAK: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

impl OverwritePredictor {
    /// After this many named PUTs the unnamed way is probed again.
    const PROBE_EVERY: u8 = 16;

    fn expect_overwrite() -> bool {
        OVERWRITE_STREAK.with(|s| {
            let left = s.get();
            s.set(left.saturating_sub(1));
            left > 0
        })
    }

    fn saw_overwrite() {
        OVERWRITE_STREAK.with(|s| s.set(Self::PROBE_EVERY));
    }
}

/// Gives the unnamed file `fd` the name `name` in `dir`. `AT_EMPTY_PATH`
/// needs CAP_DAC_READ_SEARCH on older kernels; without it the file is
/// linked through its `/proc/self/fd` entry, which any process may do.
pub(crate) fn link_fd(fd: &OwnedFd, dir: BorrowedFd<'_>, name: &str) -> rustix::io::Result<()> {
    static VIA_PROC: AtomicBool = AtomicBool::new(false);
    if !VIA_PROC.load(Ordering::Relaxed) {
        match linkat(fd, "", dir, name, AtFlags::EMPTY_PATH) {
            // A thread acting as a user has no CAP_DAC_READ_SEARCH while
            // the server may: its refusal says nothing of the others'.
            Err(Errno::NOENT | Errno::PERM) if crate::identity::acting_as_user() => {}
            Err(Errno::NOENT | Errno::PERM) => VIA_PROC.store(true, Ordering::Relaxed),
            other => return other,
        }
    }
    let proc_path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    linkat(CWD, proc_path.as_str(), dir, name, AtFlags::SYMLINK_FOLLOW)
}

/// The object a write makes.
#[derive(Clone, Copy)]
pub(crate) struct Object<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
}

/// Where the bytes of a new object come from.
pub(crate) enum Source<'a> {
    Body(PutBody<'a>),
    /// Byte ranges of existing files, concatenated (copy, multipart complete).
    Files(Vec<(File, u64, u64)>),
    /// A file already holding the object's bytes (a multipart upload's
    /// data file), moved in as the temporary.
    Adopt(Adopted),
}

/// A file that becomes an object as it is, locked whole by its open file
/// description (so that no writer of its ranges is at work): `name` in
/// `dir`, where it goes back if the write fails (a refused condition
/// leaves a multipart upload as it was).
pub(crate) struct Adopted {
    pub dir: Rc<OwnedFd>,
    pub name: &'static str,
    pub fd: OwnedFd,
}

const NEW_FILE: OFlags = OFlags::CREATE
    .union(OFlags::EXCL)
    .union(OFlags::WRONLY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
const FILE_MODE: Mode = Mode::from_bits_truncate(0o666);

impl Store {
    pub fn put_object(
        &self,
        bucket: &str,
        key: &str,
        body: PutBody<'_>,
        opts: &PutOptions,
    ) -> Result<String> {
        self.put_object_versioned(bucket, key, body, opts)
            .map(|(etag, _)| etag)
    }

    /// [`Store::put_object`], returning also the version id the object got
    /// (None where the bucket never had versioning).
    pub fn put_object_versioned(
        &self,
        bucket: &str,
        key: &str,
        body: PutBody<'_>,
        opts: &PutOptions,
    ) -> Result<(String, Option<String>)> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        let mut stored = StoredMeta::from_put(opts, None)?;
        if let PutBody::Stream { len: Some(n), .. } = body {
            if n > MAX_OBJECT_SIZE {
                return Err(s3err!(
                    EntityTooLarge,
                    "{n} bytes exceed the 5 TiB object limit"
                ));
            }
        }
        if let Some(set) = self.packed(bucket) {
            let checks = Checks::of(opts);
            let (source, cond) = (Source::Body(body), &opts.condition);
            let etag = self.packed_write(&set, bucket, key, source, stored, checks, cond)?;
            return Ok((etag, None));
        }
        self.stamp_version(bucket, key, &mut stored)?;
        let version = stored.version_id.clone();
        let empty = matches!(body, PutBody::Bytes(b) if b.is_empty())
            || matches!(body, PutBody::Stream { len: Some(0), .. });
        if empty
            && stored.is_empty()
            && opts.checksum.is_none()
            && opts.content_md5.is_none()
            && !matches!(opts.condition, WriteCondition::IfMatch(_))
        {
            // O_EXCL is itself the If-None-Match create; a key that exists
            // goes on to the replacing path, which answers 412 for it.
            if let Some(etag) = self.create_empty(bucket, key)? {
                return Ok((etag, None));
            }
        }
        let etag = self.write_object_if(
            bucket,
            key,
            Source::Body(body),
            stored,
            Checks::of(opts),
            &opts.condition,
        )?;
        Ok((etag, version))
    }

    /// An empty object with no metadata is complete the moment it exists, so
    /// it is created in place (`O_EXCL`) with no temporary and no rename.
    /// Returns None if the key exists, which needs the replacing path.
    fn create_empty(&self, bucket: &str, key: &str) -> Result<Option<String>> {
        let kp = split_key(key);
        let rel = dir_rel(bucket, kp.dir);
        let res = self.in_write_dir(bucket, key, &rel, |d| {
            match openat(d, kp.name, NEW_FILE, FILE_MODE) {
                Ok(fd) => Ok(Some(fd)),
                Err(Errno::EXIST) => Ok(None),
                Err(e) => Err(e.into()),
            }
        })?;
        match res {
            (dirfd, Some(_fd)) => {
                if self.config.durability == Durability::Fsync {
                    self.sync_dir(&dirfd, bucket, key)?;
                }
                Ok(Some(EMPTY_MD5.to_string()))
            }
            (_, None) => Ok(None),
        }
    }

    /// [`Store::write_object_if`] of a user's key: appended to a pack where
    /// the bucket is packed.
    pub(crate) fn write_user_object(
        &self,
        bucket: &str,
        key: &str,
        source: Source<'_>,
        stored: StoredMeta,
        checks: Checks<'_>,
        cond: &WriteCondition,
    ) -> Result<String> {
        match self.packed(bucket) {
            Some(set) => self.packed_write(&set, bucket, key, source, stored, checks, cond),
            None => {
                let mut stored = stored;
                self.stamp_version(bucket, key, &mut stored)?;
                self.write_object_if(bucket, key, source, stored, checks, cond)
            }
        }
    }

    /// Writes a new object from `source` into a temporary, then renames it
    /// over the key. Returns the ETag. With `check`, the checksum is
    /// computed on the way, compared with the expected value (if any) before
    /// the rename, and stored.
    pub(crate) fn write_object(
        &self,
        bucket: &str,
        key: &str,
        source: Source<'_>,
        stored: StoredMeta,
        checks: Checks<'_>,
    ) -> Result<String> {
        self.write_object_if(bucket, key, source, stored, checks, &WriteCondition::Always)
    }

    /// [`Store::write_object`] under a precondition, checked atomically
    /// with the step that makes the temporary the object (see
    /// [`Store::place`]).
    pub(crate) fn write_object_if(
        &self,
        bucket: &str,
        key: &str,
        source: Source<'_>,
        stored: StoredMeta,
        checks: Checks<'_>,
        cond: &WriteCondition,
    ) -> Result<String> {
        self.write_object_stat(bucket, key, source, stored, checks, cond)
            .map(|(etag, _)| etag)
    }

    /// [`Store::write_object_if`], returning also the new object's `stat`
    /// (as taken before it was published): a caller that answers with the
    /// object's info needs no HEAD after it.
    pub(crate) fn write_object_stat(
        &self,
        bucket: &str,
        key: &str,
        source: Source<'_>,
        mut stored: StoredMeta,
        checks: Checks<'_>,
        cond: &WriteCondition,
    ) -> Result<(String, rustix::fs::Stat)> {
        let kp = split_key(key);
        let rel = dir_rel(bucket, kp.dir);
        match cond {
            // Fail early, before any data is written and without making
            // directories for a key that does not exist; the check that
            // counts is the one made under the lock in `finish`.
            WriteCondition::IfMatch(want) => {
                let info = self.head_unchecked(bucket, key)?;
                if !etag_matches(want, &info.etag) {
                    return Err(precondition_failed(bucket, key, cond, Some(&info.etag)));
                }
            }
            WriteCondition::IfNoneMatchEtag(unwanted) => match self.head_unchecked(bucket, key) {
                Ok(info) if etag_matches(unwanted, &info.etag) => {
                    return Err(precondition_failed(bucket, key, cond, Some(&info.etag)))
                }
                Ok(_) => {}
                Err(e) if e.code == ErrorCode::NoSuchKey => {}
                Err(e) => return Err(e),
            },
            _ => {}
        }
        // Set on the temporary, never stored with the object.
        let access = stored.access.take();
        let made = NewTemp {
            // A body in hand takes one write; a longer one is written while
            // its writer holds a lock that shows other nodes' sweeps it live.
            locked: match &source {
                Source::Body(PutBody::Bytes(_)) => false,
                Source::Body(PutBody::Stream { len: Some(n), .. }) => *n > CHUNK as u64,
                _ => true,
            },
            // Marked at its creation as holding metadata (no chmod later).
            mode: if self.profile.xattrs
                && (self.config.etag == EtagPolicy::Md5
                    || checks.sum.is_some()
                    || !stored.is_empty())
            {
                Mode::from_bits_truncate(FILE_MODE.bits() | meta::META_BIT)
            } else {
                FILE_MODE
            },
        };
        TEMP_NAME.with_borrow_mut(|tmp| {
            let (dirfd, temp, source, adopted) = match source {
                Source::Adopt(a) => {
                    let dirfd = self.adopt_temp(bucket, key, &rel, tmp, &a)?;
                    let fd = a.fd.try_clone().map_err(|e| S3Error::from_io(&e, key))?;
                    (dirfd, Temp::Locked(fd), None, Some(a))
                }
                source => {
                    let (dirfd, temp) = self.open_temp(bucket, key, &rel, tmp, cond, &made)?;
                    (dirfd, temp, Some(source), None)
                }
            };
            let fd = temp.fd();
            let filled = match source {
                Some(source) => self.fill(fd, source, &mut stored, checks),
                None => Ok(()),
            };
            let result = filled
                .map_err(|e| match e.code {
                    // AWS's own wording, unchanged.
                    ErrorCode::BadDigest => e,
                    _ => S3Error::new(e.code, format!("{bucket}/{key}: {}", e.message)),
                })
                .and_then(|()| {
                    let object = Object { bucket, key };
                    self.finish(&dirfd, &temp, tmp, object, &stored, access.as_ref(), cond)
                });
            match (&result, adopted) {
                (Err(_), Some(a)) if !tmp.is_empty() => self.return_adopted(&dirfd, tmp, &a),
                (Err(_), None) if temp.named() => {
                    let _ = unlinkat(&dirfd, tmp.as_str(), AtFlags::empty());
                }
                _ => {}
            }
            result
        })
    }

    /// Moves an adopted file into the key's directory as temporary `tmp`,
    /// where it is finished like any PUT's.
    fn adopt_temp(
        &self,
        bucket: &str,
        key: &str,
        rel: &str,
        tmp: &mut String,
        adopted: &Adopted,
    ) -> Result<Rc<OwnedFd>> {
        self.temps.next_locked_for(split_key(key).name, tmp);
        let (dirfd, ()) = self.in_write_dir(bucket, key, rel, |d| {
            Ok(renameat(&adopted.dir, adopted.name, d, tmp.as_str())?)
        })?;
        // From here the temporary is the engine's like any other: a sweep
        // sees it live by the same lock a long PUT's temporary holds.
        let _ =
            crate::probe::fcntl_lock(adopted.fd.as_fd(), libc::F_OFD_SETLK, libc::F_UNLCK, 0, 0);
        if self.profile.shared {
            let _ = crate::probe::lock_file(adopted.fd.as_fd());
        }
        Ok(dirfd)
    }

    /// Whether [`Store::sync_data`] does anything.
    pub(crate) fn syncs_data(&self) -> bool {
        self.config.durability == Durability::Fsync || self.profile.buffered_writes
    }

    /// Syncs a file's data as `--durability` asks, or as the file system
    /// needs for another client to read it.
    ///
    /// `fdatasync` where the file system journals attributes in order
    /// (`FsProfile::ordered_attrs`): it keeps the data and the size that
    /// finds it, which is what a new file needs; the name is made durable
    /// by the sync of its directory after the rename, and the attributes
    /// the PUT set before that rename (the ETag's xattr, the metadata mark)
    /// were journaled before it: in the one journal of a local file system
    /// (and of a GlusterFS brick), or as ordered requests to CephFS's MDS
    /// or MooseFS's master. A full `fsync` would also flush the times, which
    /// on ceph-fuse is a journal flush at the MDS of its own (1.94-1.99
    /// session messages per durable PUT, against 1.00). Elsewhere, and for
    /// a write that set permissions ([`Store::sync_file`]: a lost chmod
    /// would leave the object more open than asked), a full `fsync`.
    pub(crate) fn sync_data(&self, fd: &OwnedFd) -> rustix::io::Result<()> {
        if self.config.durability == Durability::Fsync && !self.profile.ordered_attrs {
            fsync(fd)
        } else if self.syncs_data() {
            fdatasync(fd)
        } else {
            Ok(())
        }
    }

    /// A full `fsync` where `--durability` asks for syncs, for a file whose
    /// inode changed in ways [`Store::sync_data`] does not carry.
    pub(crate) fn sync_file(&self, fd: &OwnedFd) -> rustix::io::Result<()> {
        if self.config.durability == Durability::Fsync {
            fsync(fd)
        } else {
            self.sync_data(fd)
        }
    }

    /// Gives an adopted file back after a write that failed.
    fn return_adopted(&self, dirfd: &OwnedFd, tmp: &str, adopted: &Adopted) {
        if renameat(dirfd, tmp, &adopted.dir, adopted.name).is_err() {
            let _ = unlinkat(dirfd, tmp, AtFlags::empty());
        }
    }

    /// Opens the file a PUT writes into: an unnamed `O_TMPFILE` when the key
    /// is likely new and the file system has them, else a named temporary
    /// (its name left in `tmp`).
    fn open_temp(
        &self,
        bucket: &str,
        key: &str,
        rel: &str,
        tmp: &mut String,
        cond: &WriteCondition,
        made: &NewTemp,
    ) -> Result<(Rc<OwnedFd>, Temp)> {
        // If-None-Match wants a new key: `linkat` of an unnamed file is the
        // atomic create. If-Match replaces, which needs a name to rename.
        let unnamed = match cond {
            WriteCondition::Always => !OverwritePredictor::expect_overwrite(),
            WriteCondition::IfNoneMatch => true,
            WriteCondition::IfMatch(_) | WriteCondition::IfNoneMatchEtag(_) => false,
        };
        if unnamed && self.unnamed_temps.load(Ordering::Relaxed) {
            let (dirfd, fd) = self.in_write_dir(bucket, key, rel, |d| {
                match openat(
                    d,
                    ".",
                    OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
                    made.mode,
                ) {
                    Ok(fd) => Ok(Some(fd)),
                    Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => Ok(None),
                    Err(e) => Err(e.into()),
                }
            })?;
            match fd {
                Some(fd) => return Ok((dirfd, Temp::Unnamed(fd))),
                None => self.unnamed_temps.store(false, Ordering::Relaxed),
            }
        }
        // Named after the object: on GlusterFS it is then made on the
        // brick the object's name hashes to (see `temp.rs`).
        if made.locked {
            self.temps.next_locked_for(split_key(key).name, tmp);
        } else {
            self.temps.next_for(split_key(key).name, tmp);
        }
        let (dirfd, fd) = self.in_write_dir(bucket, key, rel, |d| {
            Ok(openat(d, tmp.as_str(), NEW_FILE, made.mode)?)
        })?;
        // A long write's temporary: other nodes' sweeps see the writer is
        // alive by its lock (a killed writer's lock goes with it); the age
        // rule alone let `--sweep-age 0` on one node delete a live upload's
        // temporary on another. A quick write's is left alone for
        // `QUICK_WRITE_AGE` instead: on CephFS the lock and its release are
        // two MDS requests, which made a small PUT 5 requests, not 3.
        if made.locked && self.profile.shared && self.profile.fcntl_locks {
            let _ = crate::probe::lock_file(fd.as_fd());
            return Ok((dirfd, Temp::Locked(fd)));
        }
        Ok((dirfd, Temp::Named(fd)))
    }

    /// Copies the source into the temporary, hashing it under the md5 policy
    /// unless the caller already knows the ETag, and computing the checksum
    /// asked for. A checksum that does not match fails here, before the
    /// temporary can become the object.
    pub(crate) fn fill(
        &self,
        fd: &OwnedFd,
        source: Source<'_>,
        stored: &mut StoredMeta,
        checks: Checks<'_>,
    ) -> Result<()> {
        let mut digests = self.digests_for(stored, checks);
        let io_err = |e: io::Error| S3Error::from_io(&e, "writing object data");
        match source {
            Source::Body(PutBody::Bytes(b)) => {
                digests.update(b);
                write_all(fd, b).map_err(io_err)?;
            }
            Source::Body(PutBody::Stream { reader, len }) => {
                copy_stream(reader, len, fd, &mut digests)?;
            }
            Source::Files(parts) => {
                for (file, offset, len) in parts {
                    copy_file(&file, offset, len, fd, &mut digests).map_err(io_err)?;
                }
            }
            Source::Adopt(_) => unreachable!("an adopted file is filled already"),
        }
        digests.settle(stored, checks)
    }

    /// The digests a write of `stored` computes: the MD5 under the md5
    /// policy unless the caller already knows the ETag, and the checksum
    /// asked for.
    fn digests_for(&self, stored: &StoredMeta, checks: Checks<'_>) -> Digests {
        let md5_etag = self.config.etag == EtagPolicy::Md5 && stored.etag.is_none();
        Digests {
            md5: (md5_etag || checks.md5.is_some()).then(Md5::new),
            md5_etag,
            sum: checks.sum.map(|c| Hasher::new(c.algorithm)),
        }
    }

    /// [`Store::fill`]'s checks and digests over data in hand (a packed
    /// bucket's record): the ETag and checksum land in `stored`.
    pub(crate) fn digest_bytes(
        &self,
        data: &[u8],
        stored: &mut StoredMeta,
        checks: Checks<'_>,
    ) -> Result<()> {
        let mut digests = self.digests_for(stored, checks);
        digests.update(data);
        digests.settle(stored, checks)
    }

    /// Stores metadata, syncs if asked, and renames the temporary into place.
    #[allow(clippy::too_many_arguments)] // the PUT's state, passed down once
    fn finish(
        &self,
        dirfd: &Rc<OwnedFd>,
        temp: &Temp,
        tmp: &mut String,
        Object { bucket, key }: Object<'_>,
        stored: &StoredMeta,
        access: Option<&crate::PermissionChange>,
        cond: &WriteCondition,
    ) -> Result<(String, rustix::fs::Stat)> {
        // Formatted only on an error path: this runs on every PUT.
        let what = || format!("{bucket}/{key}");
        let fd = temp.fd();
        let mut st = fstat(fd).map_err(|e| S3Error::from_io(&e.into(), &what()))?;
        if !stored.is_empty() {
            self.store_meta(fd, &st, stored, &what())?;
            // The mark it has, which the permissions' chmod keeps.
            st.st_mode |= meta::META_BIT;
        } else if meta::has_meta(&st) {
            // Marked at creation for metadata that did not come.
            let mode = Mode::from_bits_truncate(st.st_mode & 0o7777 & !meta::META_BIT);
            crate::fscalls::fchmod(fd, mode).map_err(|e| S3Error::from_io(&e.into(), &what()))?;
            st.st_mode &= !meta::META_BIT;
        }
        if let Some(change) = access {
            // Before the object is published: it never has other
            // permissions, and a refusal leaves what it would replace.
            self.apply_to_new(fd, &st, change, bucket, &what())?;
        }
        // Without a sync on a file system that buffers writes, the
        // published object reads empty until this fd closes.
        match access {
            None => self.sync_data(fd),
            Some(_) => self.sync_file(fd),
        }
        .map_err(|e| S3Error::from_io(&e.into(), &what()))?;
        if matches!(temp, Temp::Locked(_))
            && self.profile.shared
            && self.profile.fcntl_locks
            && self.profile.rename_gap
        {
            // The object is whole: release the temporary's lock before it
            // becomes the key. A locked file another node renames over
            // waits on GlusterFS's locks translator for the lock
            // (gluster/glusterfs#3089), which can stall both renames. Where
            // a rename is one step on one server (not `rename_gap`: CephFS,
            // MooseFS, NFS, ...) the close releases it: an unlock is an MDS
            // request on ceph-fuse, ~0.3 ms of a 1.2 ms create-to-close
            // (docs/src/results/peers.md), where the close's release costs nothing more.
            let _ = crate::probe::unlock_file(fd.as_fd());
        }
        // A version is named before it is published: none is displaced
        // unnamed (docs/src/design/versioning.md).
        let kept = match &stored.version_id {
            Some(id) => Some(self.keep_version(dirfd.as_fd(), split_key(key).name, fd, id)?),
            None => None,
        };
        let placed = match cond {
            WriteCondition::IfMatch(want) => {
                // Held until the new object is in place: no other
                // conditional writer can compare in between.
                self.lock_current(dirfd, bucket, key, want, cond)
                    .and_then(|_lock| self.place(dirfd, temp, tmp, bucket, key, cond))
            }
            WriteCondition::IfNoneMatchEtag(unwanted) => {
                self.place_unless(dirfd, temp, tmp, bucket, key, unwanted, cond)
            }
            _ => self.place(dirfd, temp, tmp, bucket, key, cond),
        };
        let dirfd = match placed {
            Ok(d) => d,
            Err(e) => {
                if let Some(k) = kept {
                    k.undo();
                }
                return Err(e);
            }
        };
        if let Some(k) = kept {
            let sync = self.config.durability == Durability::Fsync;
            let versions = k.published()?;
            if sync {
                // The version's name, as durable as the object's.
                fsync(&versions).map_err(|e| S3Error::from_io(&e.into(), &what()))?;
            }
        }
        if self.config.durability == Durability::Fsync {
            self.sync_dir(&dirfd, bucket, key)?;
        }
        let etag = match &stored.etag {
            Some(e) => e.clone(),
            None => meta::object_info(key, &st, None).etag,
        };
        Ok((etag, st))
    }

    /// Makes the finished temporary the object; returns the directory it
    /// went into.
    ///
    /// An unnamed temporary holds no entry in its directory, so a DELETE
    /// elsewhere may prune the directory while the data is written; the
    /// directory is then made again and the link retried, the data intact.
    fn place(
        &self,
        dirfd: &Rc<OwnedFd>,
        temp: &Temp,
        tmp: &mut String,
        bucket: &str,
        key: &str,
        cond: &WriteCondition,
    ) -> Result<Rc<OwnedFd>> {
        let if_absent = matches!(cond, WriteCondition::IfNoneMatch);
        let kp = split_key(key);
        let name = kp.name;
        // Needed only when retrying: not built on the common path.
        let rel = || dir_rel(bucket, kp.dir);
        let mut dirfd = dirfd.clone();
        // Whether a named link is in place to rename from.
        let mut named = temp.named();
        let mut attempts = 0;
        let result = loop {
            let placed = match temp {
                // `linkat` fails with EEXIST if the key exists: the atomic create.
                Temp::Unnamed(fd) if !named && if_absent => link_fd(fd, dirfd.as_fd(), name),
                Temp::Unnamed(fd) if !named => self.link_unnamed(&dirfd, fd, tmp, name, &mut named),
                _ if if_absent => self.create_from(&dirfd, tmp, name),
                _ => self.install(&dirfd, tmp, name),
            };
            match placed {
                Ok(()) => break Ok(dirfd.clone()),
                Err(Errno::NOENT | Errno::STALE)
                    if !named
                        && DirCache::is_stale(
                            self.root_fd.as_fd(),
                            &rel(),
                            &dirfd,
                            self.profile.shared,
                        ) =>
                {
                    // Pruned under the unnamed file: make the directory again
                    // and pin it with a named link, then go the named way.
                    let Temp::Unnamed(fd) = temp else {
                        unreachable!()
                    };
                    let rel = rel();
                    self.dirs.forget(&rel);
                    self.temps.next_for(name, tmp);
                    dirfd = self
                        .in_write_dir(bucket, key, &rel, |d| Ok(link_fd(fd, d, tmp)?))?
                        .0;
                    named = true;
                }
                // A folder marker's entry is never a directory.
                Err(Errno::EXIST) if if_absent && name == DIR_ENTRY => {
                    break Err(precondition_failed(bucket, key, cond, None))
                }
                Err(Errno::ISDIR | Errno::NOTEMPTY | Errno::EXIST)
                    if attempts < 64 && name != DIR_ENTRY =>
                {
                    // The key names a directory. If it holds nothing, it is
                    // no prefix of any object and gives way; otherwise the
                    // object becomes the directory's self-entry.
                    attempts += 1;
                    let sub_rel = format!("{}/{name}", rel());
                    match unlinkat(&dirfd, name, AtFlags::REMOVEDIR) {
                        Ok(()) => {
                            self.dirs.forget(&sub_rel);
                            continue;
                        }
                        // A file (an object) holds the name.
                        Err(Errno::NOTDIR) if if_absent => {
                            break Err(precondition_failed(bucket, key, cond, None))
                        }
                        // Deleted meanwhile: the name is free again.
                        Err(Errno::NOENT) => continue,
                        Err(_) => {}
                    }
                    // Removed or replaced meanwhile: try the plain name again.
                    let Ok(sub) = self.dirs.get(self.root_fd.as_fd(), &sub_rel) else {
                        continue;
                    };
                    // Published from the open file, not by the name `tmp`:
                    // on ext4 `install` swapped with the directory and back,
                    // and a nesting in between leaves a directory there.
                    match self.publish_self(temp.fd(), &sub, if_absent) {
                        Ok(()) => {}
                        Err(Errno::EXIST) if if_absent => {
                            break Err(precondition_failed(bucket, key, cond, None))
                        }
                        Err(Errno::NOENT | Errno::STALE)
                            if DirCache::is_stale(
                                self.root_fd.as_fd(),
                                &sub_rel,
                                &sub,
                                self.profile.shared,
                            ) =>
                        {
                            self.dirs.forget(&sub_rel);
                            continue;
                        }
                        Err(e) => {
                            break Err(S3Error::from_io(&e.into(), &format!("{bucket}/{key}")))
                        }
                    }
                    if named {
                        named = false;
                        if let Err(Errno::ISDIR) = unlinkat(&dirfd, tmp.as_str(), AtFlags::empty())
                        {
                            merge_displaced(&dirfd, tmp, &sub);
                        }
                        if temp.named() {
                            // Nothing left for `write_object` to remove.
                            tmp.clear();
                        }
                    }
                    break Ok(sub);
                }
                Err(e) => break Err(S3Error::from_io(&e.into(), &format!("{bucket}/{key}"))),
            }
        };
        // A named link made here for an unnamed file is this call's to remove.
        if result.is_err() && named && matches!(temp, Temp::Unnamed(_)) {
            let _ = unlinkat(&dirfd, tmp.as_str(), AtFlags::empty());
        }
        result
    }

    /// Makes the finished file `fd` the self-entry of directory `sub`; with
    /// `if_absent` only if there is none (EEXIST otherwise).
    fn publish_self(&self, fd: &OwnedFd, sub: &OwnedFd, if_absent: bool) -> rustix::io::Result<()> {
        if if_absent {
            return link_fd(fd, sub.as_fd(), SELF_ENTRY);
        }
        let mut t = String::new();
        self.temps.next_for(SELF_ENTRY, &mut t);
        link_fd(fd, sub.as_fd(), &t)?;
        renameat(sub, t.as_str(), sub, SELF_ENTRY).inspect_err(|_| {
            let _ = unlinkat(sub, t.as_str(), AtFlags::empty());
        })
    }

    /// Links a finished unnamed temporary in as the key. A new key takes
    /// one `linkat`; an existing one is replaced atomically through a named
    /// link and [`Store::install`], and the predictor learns that this thread
    /// overwrites.
    fn link_unnamed(
        &self,
        dirfd: &OwnedFd,
        fd: &OwnedFd,
        tmp: &mut String,
        name: &str,
        named: &mut bool,
    ) -> rustix::io::Result<()> {
        match link_fd(fd, dirfd.as_fd(), name) {
            Err(Errno::EXIST) => OverwritePredictor::saw_overwrite(),
            other => return other,
        }
        self.temps.next_for(name, tmp);
        link_fd(fd, dirfd.as_fd(), tmp)?;
        *named = true;
        let placed = self.install(dirfd, tmp, name);
        if let Err(e) = placed {
            // The key is a directory: the caller moves the named link into
            // it (an unnamed file, once linked and unlinked, cannot be
            // linked again).
            if !matches!(e, Errno::ISDIR | Errno::NOTEMPTY | Errno::EXIST) {
                let _ = unlinkat(dirfd, tmp.as_str(), AtFlags::empty());
                *named = false;
            }
        }
        placed
    }

    /// Makes the named temporary `tmp` the key only if no entry has that
    /// name (EEXIST otherwise), in one atomic step: `renameat2` with
    /// `RENAME_NOREPLACE`, or where the file system lacks it (ceph-fuse,
    /// GlusterFS, NFS) `link(2)` of the temporary, atomic on every POSIX
    /// file system, and then the temporary's name is removed.
    pub(crate) fn create_from(
        &self,
        dirfd: &OwnedFd,
        tmp: &str,
        name: &str,
    ) -> rustix::io::Result<()> {
        if self.noreplace_rename.load(Ordering::Relaxed) {
            match renameat_with(dirfd, tmp, dirfd, name, RenameFlags::NOREPLACE) {
                Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                    self.noreplace_rename.store(false, Ordering::Relaxed)
                }
                other => return other,
            }
        }
        linkat(dirfd, tmp, dirfd, name, AtFlags::empty())?;
        let _ = unlinkat(dirfd, tmp, AtFlags::empty());
        Ok(())
    }

    /// If-None-Match with ETags: the current object, locked, must not
    /// have one of them; it is then replaced under the lock. An absent key
    /// is created only if still absent, else the new object is compared
    /// in turn (a writer that created it meanwhile may have written one of
    /// the refused ETags).
    #[allow(clippy::too_many_arguments)] // `place`'s arguments and the ETags
    fn place_unless(
        &self,
        dirfd: &Rc<OwnedFd>,
        temp: &Temp,
        tmp: &mut String,
        bucket: &str,
        key: &str,
        unwanted: &str,
        cond: &WriteCondition,
    ) -> Result<Rc<OwnedFd>> {
        for _ in 0..16 {
            match self.lock_object(dirfd, bucket, key)? {
                Some(locked) if etag_matches(unwanted, &locked.info.etag) => {
                    return Err(precondition_failed(
                        bucket,
                        key,
                        cond,
                        Some(&locked.info.etag),
                    ))
                }
                Some(_locked) => {
                    return self.place(dirfd, temp, tmp, bucket, key, &WriteCondition::Always)
                }
                None => {
                    match self.place(dirfd, temp, tmp, bucket, key, &WriteCondition::IfNoneMatch) {
                        Err(e) if e.code == ErrorCode::PreconditionFailed => continue,
                        placed => return placed,
                    }
                }
            }
        }
        Err(s3err!(
            ConditionalRequestConflict,
            "{bucket}/{key} was created and deleted again and again while this write compared              its ETag for If-None-Match; retry the write"
        ))
    }

    /// If-Match's compare-and-swap: locks the current object (see
    /// [`Store::lock_object`]) and compares its ETag. The returned lock is
    /// held until the temporary has replaced the object.
    fn lock_current(
        &self,
        dirfd: &OwnedFd,
        bucket: &str,
        key: &str,
        want: &str,
        cond: &WriteCondition,
    ) -> Result<CasLock> {
        let Some(locked) = self.lock_object(dirfd, bucket, key)? else {
            return Err(s3err!(
                NoSuchKey,
                "no object {key:?} in bucket {bucket:?} to replace: If-Match needs an existing \
                 object (use If-None-Match: * to create one)"
            ));
        };
        if !etag_matches(want, &locked.info.etag) {
            return Err(precondition_failed(
                bucket,
                key,
                cond,
                Some(&locked.info.etag),
            ));
        }
        Ok(locked.lock)
    }

    /// Opens the current object of `key` (whose directory is `dirfd`) and
    /// takes an exclusive fcntl lock on it (open-file-description locks:
    /// per open file, so they exclude threads of one process as well as
    /// other processes, and other nodes where the file system's locks are
    /// cluster-wide), making sure the name still leads to the locked inode
    /// (a writer that held the lock before may have renamed a new object
    /// in; then the new one is locked instead). None if there is no object.
    pub(crate) fn lock_object<'k>(
        &self,
        dirfd: &OwnedFd,
        bucket: &str,
        key: &'k str,
    ) -> Result<Option<Locked<'k>>> {
        let kp = split_key(key);
        let (mut name, mut sub) = (kp.name, None::<Rc<OwnedFd>>);
        let what = || format!("{bucket}/{key}");
        let io = |e: Errno| S3Error::from_io(&e.into(), &what());
        for _ in 0..1000 {
            // The object of a key that is also a prefix is its self-entry.
            let dirfd: &OwnedFd = sub.as_deref().unwrap_or(dirfd);
            let fd = match openat(
                dirfd,
                name,
                // NONBLOCK: opening a FIFO planted in the tree must not hang.
                OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(Errno::ISDIR) if sub.is_none() && name != DIR_ENTRY => {
                    let rel = dir_rel(bucket, key);
                    sub = Some(
                        self.dirs
                            .get(self.root_fd.as_fd(), &rel)
                            .map_err(|e| S3Error::from_io(&e, &what()))?,
                    );
                    name = SELF_ENTRY;
                    continue;
                }
                Err(Errno::NOENT | Errno::ISDIR) => return Ok(None),
                Err(e) => return Err(io(e)),
            };
            let lock = CasLock::acquire(fd).map_err(io)?;
            let st = fstat(&lock.fd).map_err(io)?;
            match statat(dirfd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(now) if now.st_ino == st.st_ino && now.st_dev == st.st_dev => {}
                // Replaced while this writer waited: lock the new object.
                Ok(_) => continue,
                Err(Errno::NOENT) => return Ok(None),
                Err(e) => return Err(io(e)),
            }
            if st.st_mode & libc::S_IFMT != libc::S_IFREG {
                return Ok(None);
            }
            let stored = match meta::has_meta(&st) {
                true => Some(StoredMeta::read_from(&lock.fd).map_err(|e| {
                    S3Error::from_io(&e, &format!("{bucket}/{key}: reading its ETag"))
                })?),
                false => None,
            };
            return Ok(Some(Locked {
                info: meta::object_info(key, &st, stored),
                st,
                lock,
                sub,
                name,
            }));
        }
        Err(s3err!(
            ServiceUnavailable,
            "{}: the object kept being replaced while waiting for its lock; retry",
            what()
        ))
    }

    /// Moves the finished temporary over the key, atomically.
    ///
    /// On ext4 a rename over an existing file starts writeback of the new
    /// file's data at once (the `auto_da_alloc` heuristic for
    /// replace-via-rename), which made mdtest-hard's create-then-write 1.5x
    /// slower on a journaled ext4. A rename *exchange* has no such
    /// heuristic, so there an existing key is swapped with the temporary,
    /// which then holds the old object and is unlinked. Readers still see the
    /// old object or the new one.
    fn install(&self, dirfd: &OwnedFd, tmp: &str, name: &str) -> rustix::io::Result<()> {
        if !self.exchange_on_replace.load(Ordering::Relaxed) {
            return renameat(dirfd, tmp, dirfd, name);
        }
        // Only keys expected to exist come here on ext4 (an overwrite the
        // thread's predictor foresaw, a link that found the key, If-Match),
        // so the exchange goes first: no failed call when the key is there.
        // A key that is not (ENOENT) takes a rename that refuses to replace;
        // one made or deleted in between sends it round again.
        let mut attempts = 0;
        loop {
            match renameat_with(dirfd, tmp, dirfd, name, RenameFlags::EXCHANGE) {
                Err(Errno::NOENT) if attempts < 8 => attempts += 1,
                Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                    self.exchange_on_replace.store(false, Ordering::Relaxed);
                    return renameat(dirfd, tmp, dirfd, name);
                }
                other => break other?,
            }
            match renameat_with(dirfd, tmp, dirfd, name, RenameFlags::NOREPLACE) {
                Err(Errno::EXIST) => {}
                other => return other,
            }
        }
        match unlinkat(dirfd, tmp, AtFlags::empty()) {
            Err(Errno::ISDIR) => {
                // The key named a directory: swap back, leaving it untouched.
                renameat_with(dirfd, tmp, dirfd, name, RenameFlags::EXCHANGE)?;
                Err(Errno::ISDIR)
            }
            // The new object is in place either way; an old one that could
            // not be unlinked stays hidden until the temporaries sweep.
            _ => Ok(()),
        }
    }

    fn store_meta(
        &self,
        fd: &OwnedFd,
        st: &rustix::fs::Stat,
        stored: &StoredMeta,
        what: &str,
    ) -> Result<()> {
        match stored.write_to(fd) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
                // Without xattrs an MD5 ETag is merely lost (the fast one stands
                // in); content type and user metadata cannot be dropped silently.
                if stored.content_type.is_none()
                    && stored.metadata.is_empty()
                    && stored.headers.is_empty()
                {
                    return Ok(());
                }
                return Err(s3err!(
                    NotImplemented,
                    "{what}: the data file system does not support user extended attributes, \
                     so content type, metadata and standard headers cannot be stored; mount it \
                     with xattr support"
                ));
            }
            Err(e) => return Err(S3Error::from_io(&e, what)),
        }
        if meta::has_meta(st) {
            // Made with the mark (`open_temp`).
            return Ok(());
        }
        let mode = Mode::from_bits_truncate((st.st_mode & 0o7777) | meta::META_BIT);
        crate::fscalls::fchmod(fd, mode).map_err(|e| S3Error::from_io(&e.into(), what))
    }

    /// Makes a directory entry durable, in one sync shared with the other
    /// PUTs of that directory meanwhile (`dir_sync.rs`). fsync needs a
    /// readable fd, not O_PATH. A writer who may not read the directory
    /// (`-wx`, as a bucket policy or WRITE grant gives) cannot open it so;
    /// its entry is made durable with a `syncfs` of the file system
    /// instead, through the new file. That counts for it alone: on FUSE a
    /// `syncfs` may send nothing, so it covers no other writer's rename.
    fn sync_dir(&self, dirfd: &OwnedFd, bucket: &str, key: &str) -> Result<()> {
        use crate::dir_sync::Outcome;
        let err = |e: Errno| S3Error::from_io(&e.into(), &format!("{bucket}/{key}"));
        // An fd's device and inode never change: the kernel's copy will do
        // (no round trip to a FUSE server).
        let st = crate::fscalls::fstat_cached(dirfd).map_err(err)?;
        let dir = (st.st_dev, st.st_ino);
        let run = || {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            match openat(dirfd, ".", flags, Mode::empty()) {
                Ok(d) => Outcome::Shared(fsync(&d)),
                Err(Errno::ACCESS) => {
                    let file = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                    Outcome::Own(
                        openat(dirfd, split_key(key).name, file, Mode::empty())
                            .and_then(|f| rustix::fs::syncfs(&f)),
                    )
                }
                Err(e) => Outcome::Own(Err(e)),
            }
        };
        match self.dir_syncs.sync(dir, run) {
            Outcome::Shared(r) | Outcome::Own(r) => r.map_err(err),
        }
    }
}

/// What a write verifies: a checksum and the Content-MD5.
#[derive(Clone, Copy, Default)]
pub(crate) struct Checks<'a> {
    pub sum: Option<&'a ChecksumRequest>,
    pub md5: Option<&'a [u8; 16]>,
}

impl<'a> Checks<'a> {
    pub fn of(opts: &'a PutOptions) -> Checks<'a> {
        Checks {
            sum: opts.checksum.as_ref(),
            md5: opts.content_md5.as_ref(),
        }
    }
}

/// What is computed over the data while it is written; nothing when a PUT
/// asks for neither an MD5 ETag nor a checksum.
struct Digests {
    md5: Option<Md5>,
    /// The MD5 becomes the ETag.
    md5_etag: bool,
    sum: Option<Hasher>,
}

impl Digests {
    fn any(&self) -> bool {
        self.md5.is_some() || self.sum.is_some()
    }

    /// Compares what was computed with what the writer sent, before the
    /// data can become the object, and stores the ETag and checksum.
    fn settle(self, stored: &mut StoredMeta, checks: Checks<'_>) -> Result<()> {
        if let Some(h) = self.md5 {
            let digest = h.finalize();
            if checks.md5.is_some_and(|want| want[..] != digest[..]) {
                return Err(s3err!(
                    BadDigest,
                    "The Content-MD5 you specified did not match what we received."
                ));
            }
            if self.md5_etag {
                stored.etag = Some(meta::md5_etag(&digest));
            }
        }
        if let (Some(c), Some(h)) = (checks.sum, self.sum) {
            let value = h.finish_base64();
            c.verify(&value)?;
            stored.checksum = Some(ObjectChecksum {
                algorithm: c.algorithm,
                kind: ChecksumType::FullObject,
                value,
            });
        }
        Ok(())
    }

    fn update(&mut self, data: &[u8]) {
        if let Some(h) = self.md5.as_mut() {
            h.update(data);
        }
        if let Some(h) = self.sum.as_mut() {
            h.update(data);
        }
    }
}

/// Moves what was written into directory `tmp` of `dirfd` (a directory
/// that `Store::install`'s swap back displaced, see `place`) into `sub`,
/// where it belongs, and removes it. Its self-entry is the version the
/// caller has just replaced; the engine's own entries stay (the sweep
/// removes them with the directory).
fn merge_displaced(dirfd: &OwnedFd, tmp: &str, sub: &OwnedFd) {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(d) = openat(dirfd, tmp, flags, Mode::empty()) else {
        return;
    };
    let Ok(entries) = crate::fscalls::read_dir(&d) else {
        return;
    };
    let names: Vec<std::ffi::CString> = entries
        .flatten()
        .map(|e| e.file_name().to_owned())
        .filter(|n| n.as_bytes() != b"." && n.as_bytes() != b"..")
        .collect();
    for n in names {
        if n.as_bytes() == SELF_ENTRY.as_bytes() {
            let _ = unlinkat(&d, n.as_c_str(), AtFlags::empty());
        } else if !crate::names::is_reserved(n.as_bytes()) {
            let _ = renameat_with(&d, n.as_c_str(), sub, n.as_c_str(), RenameFlags::NOREPLACE);
        }
    }
    let _ = unlinkat(dirfd, tmp, AtFlags::REMOVEDIR);
}

/// Whether an If-Match value names this ETag (quotes optional, `*` any).
pub(crate) fn etag_matches(want: &str, etag: &str) -> bool {
    let want = want.trim();
    want == "*"
        || want
            .split(',')
            .any(|w| w.trim().trim_start_matches("W/").trim_matches('"') == etag.trim_matches('"'))
}

pub(crate) fn precondition_failed(
    bucket: &str,
    key: &str,
    cond: &WriteCondition,
    current: Option<&str>,
) -> S3Error {
    match (cond, current) {
        (WriteCondition::IfMatch(want), Some(etag)) => s3err!(
            PreconditionFailed,
            "{bucket}/{key} has ETag {etag}, not {want} as If-Match requires; it was not \
             written (read the object again and retry with its current ETag)"
        ),
        (WriteCondition::IfNoneMatchEtag(unwanted), Some(etag)) => s3err!(
            PreconditionFailed,
            "{bucket}/{key} has ETag {etag}, which If-None-Match: {unwanted} refuses; the \
             existing object was left as it was"
        ),
        _ => s3err!(
            PreconditionFailed,
            "{bucket}/{key} already exists and If-None-Match: * allows only creating it; \
             the existing object was left as it was"
        ),
    }
}

/// An object locked by [`Store::lock_object`]: the lock, what the object
/// is, and where: entry `name` of the key's directory, or of `sub` (the
/// directory of the key's name) for a key that is also a prefix.
pub(crate) struct Locked<'k> {
    pub lock: CasLock,
    pub st: rustix::fs::Stat,
    pub info: ObjectInfo,
    pub sub: Option<Rc<OwnedFd>>,
    pub name: &'k str,
}

/// An exclusive fcntl lock on a whole object, released when dropped (the
/// fd closes). Open-file-description locks (`F_OFD_SETLKW`) where the file
/// system takes them; else classic POSIX locks, which belong to the
/// process, so threads of this process then queue on a mutex first.
pub(crate) struct CasLock {
    fd: OwnedFd,
    _local: Option<std::sync::MutexGuard<'static, ()>>,
}

/// Set once `F_OFD_SETLKW` failed with EINVAL (or by
/// [`Store::emulate_minimal_fs`]).
pub(crate) static NO_OFD_LOCKS: AtomicBool = AtomicBool::new(false);

impl CasLock {
    fn acquire(fd: OwnedFd) -> rustix::io::Result<CasLock> {
        static PROCESS: std::sync::Mutex<()> = std::sync::Mutex::new(());
        if !NO_OFD_LOCKS.load(Ordering::Relaxed) {
            match whole_file_lock(&fd, libc::F_OFD_SETLKW) {
                Err(Errno::INVAL) => NO_OFD_LOCKS.store(true, Ordering::Relaxed),
                Err(e) => return Err(e),
                Ok(()) => return Ok(CasLock { fd, _local: None }),
            }
        }
        let local = PROCESS.lock().unwrap_or_else(|p| p.into_inner());
        whole_file_lock(&fd, libc::F_SETLKW)?;
        Ok(CasLock {
            fd,
            _local: Some(local),
        })
    }
}

/// An exclusive (write) lock on the whole file, waiting for it; EINTR retried.
fn whole_file_lock(fd: &OwnedFd, cmd: libc::c_int) -> rustix::io::Result<()> {
    crate::probe::fcntl_lock(fd.as_fd(), cmd, libc::F_WRLCK, 0, 0)
}

fn write_all(fd: &OwnedFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match crate::fscalls::write(fd, buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Pulls a stream through the per-thread chunk buffer into `fd`.
fn copy_stream(
    reader: &mut dyn Read,
    len: Option<u64>,
    fd: &OwnedFd,
    digests: &mut Digests,
) -> Result<()> {
    CHUNK_BUF.with_borrow_mut(|buf| {
        buf.resize(CHUNK, 0);
        let mut total = 0u64;
        loop {
            let want = match len {
                Some(n) if total >= n => break,
                Some(n) => (n - total).min(CHUNK as u64) as usize,
                None => CHUNK,
            };
            let got = fill_buf(reader, &mut buf[..want])?;
            if got == 0 {
                break;
            }
            digests.update(&buf[..got]);
            write_all(fd, &buf[..got]).map_err(|e| S3Error::from_io(&e, "writing object data"))?;
            total += got as u64;
            if total > MAX_OBJECT_SIZE {
                return Err(s3err!(
                    EntityTooLarge,
                    "the body exceeds the 5 TiB object limit"
                ));
            }
            if got < want {
                break; // the body ended
            }
        }
        match len {
            Some(n) if total < n => Err(s3err!(
                IncompleteBody,
                "the body ended after {total} of {n} announced bytes"
            )),
            _ => Ok(()),
        }
    })
}

/// Reads until `buf` is full or the body ends; returns how much it holds.
/// A body arrives in the pieces its source hands out (libs3's data callback
/// 64 KiB at a time, a streamed HTTP body a frame), and on a FUSE file
/// system without write-behind every `write` is a round trip to the
/// server: one write per full buffer, not per piece (a 2 MiB libs3 PUT:
/// 2 writes, was 32).
fn fill_buf(reader: &mut dyn Read, buf: &mut [u8]) -> Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(s3err!(
                    IncompleteBody,
                    "reading the request body failed: {e}"
                ))
            }
        }
    }
    Ok(got)
}

/// Copies `len` bytes at `offset` of `src` to `dst` at its file position,
/// in the kernel where it can.
pub(crate) fn copy_range(src: &File, offset: u64, len: u64, dst: &OwnedFd) -> io::Result<()> {
    let mut none = Digests {
        md5: None,
        md5_etag: false,
        sum: None,
    };
    copy_file(src, offset, len, dst, &mut none)
}

/// Copies `len` bytes at `offset` of `src` to the end of `dst`: in the kernel
/// (`copy_file_range`, reflinks where the file system can) unless the bytes
/// must be hashed on the way.
fn copy_file(
    src: &File,
    offset: u64,
    len: u64,
    dst: &OwnedFd,
    digests: &mut Digests,
) -> io::Result<()> {
    if !digests.any() {
        let mut off = offset;
        let end = offset + len;
        while off < end {
            let want = (end - off).min(1 << 30) as usize;
            match crate::fscalls::copy_file_range(src, Some(&mut off), dst, None, want) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(_) => {}
                Err(Errno::INTR) => {}
                Err(Errno::XDEV | Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP)
                    if off == offset =>
                {
                    return copy_file_buffered(src, offset, len, dst, digests)
                }
                Err(e) => return Err(e.into()),
            }
        }
        return Ok(());
    }
    copy_file_buffered(src, offset, len, dst, digests)
}

fn copy_file_buffered(
    src: &File,
    offset: u64,
    len: u64,
    dst: &OwnedFd,
    digests: &mut Digests,
) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    CHUNK_BUF.with_borrow_mut(|buf| {
        buf.resize(CHUNK, 0);
        let mut done = 0u64;
        while done < len {
            let want = (len - done).min(CHUNK as u64) as usize;
            let n = crate::fscalls::count(
                crate::fscalls::Kind::Read,
                src.read_at(&mut buf[..want], offset + done),
            )?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            digests.update(&buf[..n]);
            write_all(dst, &buf[..n])?;
            done += n as u64;
        }
        Ok(())
    })
}
