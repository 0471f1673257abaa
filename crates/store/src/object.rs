//! Object GET, HEAD, DELETE and COPY, and resolving a key's directory.
//!
//! Every operation resolves the key's directory once (cached, see `dirs`) and
//! then acts on a single file name relative to it, never following a symlink.
//! PUT, which writes a temporary and links or renames it over the key, is in
//! `put`.

use crate::dirs::{open_dir_readable, DirCache};
use crate::fscalls::{fstat, fstat_cached, mkdirat, openat, statat, unlinkat};
use crate::meta::{self, StoredMeta};
use crate::names::{dir_rel, split_key, validate_bucket_name, validate_key, DIR_ENTRY, SELF_ENTRY};
use crate::put::Source;
use crate::*;
use rustix::fs::{AtFlags, FileType};
use rustix::fs::{Mode, OFlags};
use std::cell::Cell;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A reader over the bytes a GET selected.
pub struct ObjectReader {
    file: io::Take<File>,
}

impl ObjectReader {
    /// The next `len` bytes of `file`, from its current offset.
    pub(crate) fn new(file: File, len: u64) -> ObjectReader {
        ObjectReader {
            file: file.take(len),
        }
    }

    /// The open (read-only) file the bytes come from. A server on the same
    /// node can hand it to its client, which then reads the page cache
    /// directly (at the GET's offset) instead of through a socket.
    pub fn file(&self) -> &File {
        self.file.get_ref()
    }

    /// The open file underneath (for copying without user-space buffers).
    pub(crate) fn into_file(self) -> File {
        self.file.into_inner()
    }

    /// Appends up to `max` of the next bytes to `buf`, reading into its
    /// spare capacity without zeroing it first (which, for a 1 MiB buffer,
    /// costs a third as much as the read itself). Returns how many came;
    /// fewer than `max` only at the end.
    pub fn read_into(&mut self, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        let want = max.min(usize::try_from(self.file.limit()).unwrap_or(usize::MAX));
        buf.reserve(want);
        let start = buf.len();
        while buf.len() - start < want {
            let room = want - (buf.len() - start);
            let spare = &mut buf.spare_capacity_mut()[..room];
            match crate::fscalls::read(self.file.get_ref(), spare) {
                Ok(([], _)) => break,
                Ok((filled, _)) => {
                    let n = filled.len();
                    // SAFETY: the kernel initialized these `n` bytes of
                    // the spare capacity.
                    unsafe { buf.set_len(buf.len() + n) };
                }
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let got = buf.len() - start;
        self.file.set_limit(self.file.limit() - got as u64);
        Ok(got)
    }
}

impl Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // At the end `Take` answers without a call: count only real reads
        // (a transport probing for the end made no call the engine did not).
        if self.file.limit() == 0 {
            return Ok(0);
        }
        crate::fscalls::count(crate::fscalls::Kind::Read, self.file.read(buf))
    }
}

/// The answer to a GET on the engine.
pub struct GetResult {
    pub info: ObjectInfo,
    /// `(offset, length)` of the bytes `body` yields.
    pub offset: u64,
    pub length: u64,
    pub body: ObjectReader,
}

impl GetResult {
    /// The answer to a GET of `range` (all if None) of the object open as
    /// `file`.
    pub(crate) fn of(
        bucket: &str,
        info: ObjectInfo,
        mut file: File,
        range: Option<ByteRange>,
    ) -> Result<GetResult> {
        let what = || format!("{bucket}/{}", info.key);
        let (offset, length) = match range {
            None => (0, info.size),
            Some(r) => r
                .resolve(info.size)
                .map_err(|e| S3Error::new(e.code, format!("{}: {}", what(), e.message)))?,
        };
        if offset > 0 {
            file.seek(SeekFrom::Start(offset))
                .map_err(|e| S3Error::from_io(&e, &what()))?;
        }
        Ok(GetResult {
            info,
            offset,
            length,
            body: ObjectReader {
                file: file.take(length),
            },
        })
    }
}

fn is_regular(st: &rustix::fs::Stat) -> bool {
    FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
}

impl Store {
    /// Runs `op` on the cached fd of directory `rel`. If the op misses and the
    /// cached directory turns out to have been removed (by another process),
    /// resolves it again and retries once.
    pub(crate) fn in_dir<T>(
        &self,
        rel: &str,
        op: impl FnMut(BorrowedFd<'_>) -> io::Result<T>,
    ) -> io::Result<T> {
        self.in_dir_seen(rel, op, &Cell::new(false))
    }

    /// [`Store::in_dir`], which also sets `live` when a miss found the
    /// directory itself in place (so its bucket exists: a miss needs no
    /// further call to tell NoSuchKey from NoSuchBucket).
    fn in_dir_seen<T>(
        &self,
        rel: &str,
        mut op: impl FnMut(BorrowedFd<'_>) -> io::Result<T>,
        live: &Cell<bool>,
    ) -> io::Result<T> {
        let fd = self.dirs.get(self.root_fd.as_fd(), rel)?;
        match op(fd.as_fd()) {
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ESTALE) =>
            {
                if !DirCache::is_stale(self.root_fd.as_fd(), rel, &fd, self.profile.shared) {
                    live.set(true);
                    return Err(e);
                }
                self.dirs.forget(rel);
                let fd = self.dirs.get(self.root_fd.as_fd(), rel)?;
                live.set(true);
                op(fd.as_fd())
            }
            other => other,
        }
    }

    /// Whether the bucket directory exists (used on error paths only).
    pub(crate) fn bucket_exists(&self, bucket: &str) -> bool {
        statat(&self.root_fd, bucket, AtFlags::SYMLINK_NOFOLLOW)
            .map(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
            .unwrap_or(false)
    }

    /// Maps a failure to find an object onto NoSuchBucket or NoSuchKey.
    pub(crate) fn missing(&self, bucket: &str, key: &str, e: io::Error) -> S3Error {
        self.missing_seen(bucket, key, e, false)
    }

    /// [`Store::missing`], where `dir_live` says a directory of the bucket
    /// was just found in place (see [`Store::in_dir_seen`]).
    fn missing_seen(&self, bucket: &str, key: &str, e: io::Error, dir_live: bool) -> S3Error {
        let gone = e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR);
        if gone && !dir_live && !self.bucket_exists(bucket) {
            s3err!(NoSuchBucket, "bucket {bucket:?} does not exist")
        } else if gone {
            s3err!(NoSuchKey, "no object {key:?} in bucket {bucket:?}")
        } else {
            S3Error::from_io(&e, &format!("{bucket}/{key}"))
        }
    }

    /// Runs `op` in the directory that holds `key`, creating the directories
    /// the key needs. Returns the directory fd used, with the op's result.
    pub(crate) fn in_write_dir<T>(
        &self,
        bucket: &str,
        key: &str,
        rel: &str,
        op: impl FnMut(BorrowedFd<'_>) -> io::Result<T>,
    ) -> Result<(Rc<OwnedFd>, T)> {
        // A directory can vanish between being made and being used (another
        // writer's DELETE prunes it); retrying settles that race. Every
        // retry means another writer made progress, so the bound is generous.
        self.try_in_write_dir(bucket, key, rel, 1024, op)?
            .ok_or_else(|| {
                s3err!(
                    InternalError,
                    "the directory for {bucket}/{key} kept disappearing while writing; retry"
                )
            })
    }

    /// [`Store::in_write_dir`] with a bound on attempts; None when the
    /// directory vanished every time.
    pub(crate) fn try_in_write_dir<T>(
        &self,
        bucket: &str,
        key: &str,
        rel: &str,
        attempts: usize,
        mut op: impl FnMut(BorrowedFd<'_>) -> io::Result<T>,
    ) -> Result<Option<(Rc<OwnedFd>, T)>> {
        for attempt in 0..attempts {
            if attempt >= 8 {
                // Let the pruning DELETEs run their course.
                std::thread::yield_now();
            }
            let fd = match self.dirs.get(self.root_fd.as_fd(), rel) {
                Ok(fd) => fd,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    self.make_dirs(bucket, key, rel)?;
                    continue;
                }
                // A plain object stands where the key needs a directory: it
                // moves into that directory as its hidden self-entry.
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                    self.make_room(bucket, key, rel)?;
                    continue;
                }
                Err(e) => return Err(self.write_dir_error(bucket, key, e)),
            };
            match op(fd.as_fd()) {
                // Removed since cached: ENOENT, or EPERM for O_TMPFILE.
                Err(_)
                    if DirCache::is_stale(self.root_fd.as_fd(), rel, &fd, self.profile.shared) =>
                {
                    self.dirs.forget(rel);
                }
                Err(e) => return Err(S3Error::from_io(&e, &format!("{bucket}/{key}"))),
                Ok(v) => return Ok(Some((fd, v))),
            }
        }
        Ok(None)
    }

    pub(crate) fn write_dir_error(&self, bucket: &str, key: &str, e: io::Error) -> S3Error {
        if e.raw_os_error() == Some(libc::ENOTDIR) {
            s3err!(
                KeyConflict,
                "key {key:?} needs a directory where the file system holds something that is \
                 neither an object nor a directory (a special file); remove it there"
            )
        } else {
            S3Error::from_io(&e, &format!("{bucket}/{key}"))
        }
    }

    /// `mkdir -p` for the key's directory, one component at a time, each
    /// relative to its already-resolved parent.
    fn make_dirs(&self, bucket: &str, key: &str, rel: &str) -> Result<()> {
        if !self.bucket_exists(bucket) {
            return Err(s3err!(NoSuchBucket, "bucket {bucket:?} does not exist"));
        }
        let mut end = bucket.len();
        while end < rel.len() {
            let next = rel[end + 1..].find('/').map_or(rel.len(), |i| end + 1 + i);
            let (parent, name) = (&rel[..end], &rel[end + 1..next]);
            let mode = crate::multipart::dir_mode(bucket, parent);
            match self.in_dir(parent, |p| Ok(mkdirat(p, name, mode)?)) {
                Ok(()) => self.made_dir(bucket, parent, name),
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                // A parent was pruned by a concurrent DELETE after it was made
                // or found, or is a plain object that must make room; the
                // caller resolves again and calls us once more.
                Err(e)
                    if e.kind() == io::ErrorKind::NotFound
                        || e.raw_os_error() == Some(libc::ENOTDIR) =>
                {
                    return Ok(())
                }
                Err(e) => return Err(self.write_dir_error(bucket, key, e)),
            }
            end = next;
        }
        Ok(())
    }

    /// Opens an object for reading and returns its info and file.
    fn open_object(&self, bucket: &str, key: &str) -> Result<(ObjectInfo, File)> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        self.open_unchecked(bucket, key)
    }

    /// [`Store::open_object`] for a key already checked, or one of the
    /// engine's own (multipart staging).
    pub(crate) fn open_unchecked(&self, bucket: &str, key: &str) -> Result<(ObjectInfo, File)> {
        if let Some(packed) = self.packed_open(bucket, key) {
            return packed;
        }
        let kp = split_key(key);
        let rel = dir_rel(bucket, kp.dir);
        let live = Cell::new(false);
        let (fd, st, stored) = self
            .retry_shared(&rel, kp.name, || {
                live.set(false);
                let fd = self.in_dir_seen(
                    &rel,
                    |d| {
                        Ok(openat(
                            d,
                            kp.name,
                            // NONBLOCK: opening a FIFO planted in the tree must not hang.
                            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
                            Mode::empty(),
                        )?)
                    },
                    &live,
                )?;
                // The attributes the open's lookup brought: on FUSE a plain
                // fstat would ask the server again.
                let mut st = fstat_cached(&fd)?;
                let mut fd = fd;
                if FileType::from_raw_mode(st.st_mode) == FileType::Directory
                    && kp.name != DIR_ENTRY
                {
                    // The key is also a prefix: its object, if any, is the
                    // directory's self-entry. The directory was opened without
                    // following links, so the entry is looked up in exactly it.
                    fd = openat(
                        &fd,
                        SELF_ENTRY,
                        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
                        Mode::empty(),
                    )?;
                    st = fstat_cached(&fd)?;
                }
                let stored = match meta::has_meta(&st) {
                    true => Some(StoredMeta::read_from(&fd)?),
                    false => None,
                };
                Ok((fd, st, stored))
            })
            .map_err(|e| self.missing_seen(bucket, key, e, live.get()))?;
        if !is_regular(&st) {
            return Err(s3err!(
                NoSuchKey,
                "no object {key:?} in bucket {bucket:?} (it is a prefix)"
            ));
        }
        Ok((meta::object_info(key, &st, stored), File::from(fd)))
    }

    /// Runs a read-side lookup `op` of entry `name` of directory `rel`,
    /// retried where another node's replace can make it fail on a shared
    /// file system, as NFS clients retry: ESTALE (the file went away under
    /// the handle) up to 4 times, and ENOENT up to 3 times, after 1, 2 and
    /// 4 ms, where a name can be missing for a moment while it is replaced.
    /// A rename on GlusterFS's distribute layer is not atomic to other
    /// clients (a key that always exists answered 404; one retry
    /// after 1 ms still missed 1 in 785 reads on a loaded machine): there
    /// every miss costs those 7 ms. A nesting without `RENAME_EXCHANGE`
    /// (ceph-fuse, NFS) unlinks the name before renaming the directory in,
    /// and marks itself first (`nested.rs`): there a miss looks for the
    /// marker and waits while it is there (up to [`NEST_WAIT`](crate::nested::NEST_WAIT): a nest
    /// descheduled between its two calls on a loaded node outlasts any
    /// fixed number of short sleeps), else looks at the name once more at
    /// once (the nest may have ended between the miss and that look): two
    /// more lookups, no sleep, for a key really missing. Where a rename is
    /// one step on one server and the exchange works, nothing.
    pub(crate) fn retry_shared<T>(
        &self,
        rel: &str,
        name: &str,
        mut op: impl FnMut() -> io::Result<T>,
    ) -> io::Result<T> {
        use crate::nested::Miss;
        let mut stale = 0;
        let mut missing = 0;
        let mut back = 0;
        let mut pause = 0;
        let mut marked_since = None;
        loop {
            match op() {
                Err(e) if e.raw_os_error() == Some(libc::ESTALE) && stale < 4 => stale += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    if self.profile.rename_gap && missing < 3 {
                        std::thread::sleep(Duration::from_millis(1 << missing));
                        missing += 1;
                        continue;
                    }
                    if !self.nest_gaps() {
                        return Err(e);
                    }
                    match self.after_miss(rel, name) {
                        Miss::Real => return Err(e),
                        // Once, or after a wait for a nest: a name that is
                        // there but no object (a directory without a
                        // self-entry) is a real miss, not a nest ending.
                        Miss::Back if back == 0 || marked_since.is_some() && back < 3 => back += 1,
                        Miss::Back => return Err(e),
                        Miss::Marked => {
                            let since = *marked_since.get_or_insert_with(Instant::now);
                            if since.elapsed() >= crate::nested::NEST_WAIT {
                                return Err(e);
                            }
                            // 1 ms doubling to 32: a nest takes milliseconds,
                            // a killed one's marker waits for the sweep.
                            std::thread::sleep(Duration::from_millis(1 << pause.min(5)));
                            pause += 1;
                        }
                    }
                }
                other => return other,
            }
        }
    }

    pub fn get_object(
        &self,
        bucket: &str,
        key: &str,
        range: Option<ByteRange>,
    ) -> Result<GetResult> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        self.get_unchecked(bucket, key, range)
    }

    pub(crate) fn get_unchecked(
        &self,
        bucket: &str,
        key: &str,
        range: Option<ByteRange>,
    ) -> Result<GetResult> {
        let (info, file) = self.open_unchecked(bucket, key)?;
        GetResult::of(bucket, info, file, range)
    }

    pub fn head_object(&self, bucket: &str, key: &str) -> Result<ObjectInfo> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        self.head_unchecked(bucket, key)
    }

    pub(crate) fn head_unchecked(&self, bucket: &str, key: &str) -> Result<ObjectInfo> {
        if let Some(packed) = self.packed_head(bucket, key) {
            return packed;
        }
        self.head_file(bucket, key)
    }

    /// HEAD of the file at the key's path (what a packed bucket's key no
    /// record names is).
    pub(crate) fn head_file(&self, bucket: &str, key: &str) -> Result<ObjectInfo> {
        let kp = split_key(key);
        let rel = dir_rel(bucket, kp.dir);
        let live = Cell::new(false);
        let (st, stored) = self
            .retry_shared(&rel, kp.name, || {
                live.set(false);
                let (st, stored) = self.stat_in(&rel, kp.name, &live)?;
                if FileType::from_raw_mode(st.st_mode) == FileType::Directory
                    && kp.name != DIR_ENTRY
                {
                    // The key is also a prefix: its object is the self-entry.
                    return self.stat_in(&dir_rel(bucket, key), SELF_ENTRY, &live);
                }
                Ok((st, stored))
            })
            .map_err(|e| self.missing_seen(bucket, key, e, live.get()))?;
        if !is_regular(&st) {
            return Err(s3err!(NoSuchKey, "no object {key:?} in bucket {bucket:?}"));
        }
        Ok(meta::object_info(key, &st, stored))
    }

    /// The stat of entry `name` of directory `rel`, with its stored metadata
    /// if it is an object that has some. One stat in the common case; the
    /// xattr only when the mode says so.
    fn stat_in(
        &self,
        rel: &str,
        name: &str,
        live: &Cell<bool>,
    ) -> io::Result<(rustix::fs::Stat, Option<StoredMeta>)> {
        self.in_dir_seen(
            rel,
            |d| {
                let st = statat(d, name, AtFlags::SYMLINK_NOFOLLOW)?;
                if !is_regular(&st) || !meta::has_meta(&st) {
                    return Ok((st, None));
                }
                // stat, attribute, stat again: if the inode is the same, both
                // describe one version (an overwrite renames a new inode in).
                if let Some(stored) = StoredMeta::read_at(d, name) {
                    let again = statat(d, name, AtFlags::SYMLINK_NOFOLLOW)?;
                    if again.st_ino == st.st_ino && again.st_dev == st.st_dev {
                        return Ok((again, Some(stored?)));
                    }
                }
                let fd = openat(
                    d,
                    name,
                    // NONBLOCK: opening a FIFO planted in the tree must not hang.
                    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                Ok((fstat(&fd)?, Some(StoredMeta::read_from(&fd)?)))
            },
            live,
        )
    }

    pub fn delete_object(&self, bucket: &str, key: &str) -> Result<()> {
        self.delete_object_versioned(bucket, key).map(drop)
    }

    /// [`Store::delete_object`], returning the id of the delete marker it
    /// left where the bucket has versioning.
    pub fn delete_object_versioned(&self, bucket: &str, key: &str) -> Result<Option<String>> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        if let Some(done) = self.packed_delete(bucket, key, None) {
            return done.map(|()| None);
        }
        let kp = split_key(key);
        let rel = dir_rel(bucket, kp.dir);
        let state = self.versioning_of(bucket)?;
        let mut marker = None;
        if state != crate::Versioning::Off {
            // The marker first: the version it hides keeps its name.
            let mut marked = None;
            match self.in_dir(&rel, |d| {
                marked = Some(self.mark_deleted(state, d, kp.name));
                Ok(())
            }) {
                Ok(()) => marker = marked.transpose()?,
                // No such directory: no key under it to mark.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(S3Error::from_io(&e, &format!("{bucket}/{key}"))),
            }
        }
        self.delete_file_at(bucket, key)?;
        Ok(marker)
    }

    /// Unlinks the object file at `key`'s path (the self-entry of a key
    /// that is also a prefix) and prunes what it leaves empty.
    pub(crate) fn delete_file_at(&self, bucket: &str, key: &str) -> Result<()> {
        let kp = split_key(key);
        let rel = dir_rel(bucket, kp.dir);
        let live = Cell::new(false);
        let unlinked = self.in_dir_seen(
            &rel,
            |d| {
                unlinkat(d, kp.name, AtFlags::empty())?;
                Ok(self.may_be_empty(d))
            },
            &live,
        );
        let unlinked = match unlinked {
            // The key is also a prefix: its object, if any, is the self-entry.
            Err(e) if e.raw_os_error() == Some(libc::EISDIR) && kp.name != DIR_ENTRY => {
                let rel = dir_rel(bucket, key);
                match self.in_dir(&rel, |d| {
                    unlinkat(d, SELF_ENTRY, AtFlags::empty())?;
                    Ok(self.may_be_empty(d))
                }) {
                    Ok(may_be_empty) => {
                        if may_be_empty {
                            self.prune(bucket, key);
                        }
                        return Ok(());
                    }
                    Err(e) => Err(e),
                }
            }
            other => other,
        };
        match unlinked {
            Ok(may_be_empty) => {
                if may_be_empty {
                    self.prune(bucket, kp.dir);
                }
                Ok(())
            }
            // Missing, or a directory (a prefix, not an object): nothing to do.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOENT | libc::ENOTDIR | libc::EISDIR)
                ) =>
            {
                // The key's directory was found in place: so is its bucket.
                if live.get() || self.bucket_exists(bucket) {
                    Ok(())
                } else {
                    Err(s3err!(NoSuchBucket, "bucket {bucket:?} does not exist"))
                }
            }
            Err(e) => Err(self.missing(bucket, key, e)),
        }
    }

    /// Whether directory `d` might be empty, so that pruning it is worth a
    /// try. A failed rmdir costs a syscall and takes the directory's lock,
    /// which stalls other ranks deleting in a shared directory. tmpfs
    /// reports a directory's size from its entry count, so there one `fstat`
    /// (no lock) answers; other local file systems try on every delete.
    /// On a shared file system a failed rmdir is a round trip to every
    /// metadata server holding the directory (GlusterFS: 0.7 ms with 1
    /// entry, 2 ms with 1000, more than the unlink, and a logged warning),
    /// and no attribute there tells an empty directory: the delete leaves
    /// it, and a listing that reads it empty removes it (`list.rs`), as do
    /// a PUT of its name and DeleteBucket. Listings never show it meanwhile.
    pub(crate) fn may_be_empty(&self, d: BorrowedFd<'_>) -> bool {
        /// A tmpfs directory's size: 20 bytes an entry, `.` and `..` included.
        const TMPFS_EMPTY_DIR_SIZE: i64 = 40;
        if self.profile.shared {
            return false;
        }
        !self.dir_size_counts_entries
            || fstat(d).map_or(true, |st| st.st_size <= TMPFS_EMPTY_DIR_SIZE)
    }

    /// Removes directories left empty by a delete, bottom up, so that no
    /// listing shows a prefix without objects. Stops at the first non-empty one.
    pub(crate) fn prune(&self, bucket: &str, mut dir: &str) {
        while !dir.is_empty() {
            let kp = split_key(dir);
            let parent = dir_rel(bucket, kp.dir);
            if self
                .in_dir(&parent, |p| Ok(unlinkat(p, kp.name, AtFlags::REMOVEDIR)?))
                .is_err()
            {
                return;
            }
            self.dirs.forget(&dir_rel(bucket, dir));
            dir = kp.dir;
        }
    }

    pub fn copy_object(
        &self,
        src_bucket: &str,
        src_key: &str,
        dst_bucket: &str,
        dst_key: &str,
        opts: Option<&PutOptions>,
    ) -> Result<ObjectInfo> {
        self.copy_object_if(
            src_bucket,
            src_key,
            dst_bucket,
            dst_key,
            opts,
            &WriteCondition::Always,
        )
    }

    /// CopyObject whose destination is written only if `cond` holds (as
    /// PutObject's; `opts.condition` must be `Always`). The destination
    /// gets `opts.access`, if any (a copy without options: none).
    pub fn copy_object_if(
        &self,
        src_bucket: &str,
        src_key: &str,
        dst_bucket: &str,
        dst_key: &str,
        opts: Option<&PutOptions>,
        cond: &WriteCondition,
    ) -> Result<ObjectInfo> {
        let access = opts.and_then(|o| o.access.as_ref());
        let (src, dst) = ((src_bucket, src_key, None), (dst_bucket, dst_key));
        self.copy_object_with(src, dst, opts, cond, access)
    }

    /// [`Store::copy_object_if`] giving the destination `access` whether
    /// or not `opts` replaces the source's metadata (S3's CopyObject takes
    /// an ACL with either metadata directive).
    pub fn copy_object_with(
        &self,
        (src_bucket, src_key, src_version): (&str, &str, Option<&str>),
        (dst_bucket, dst_key): (&str, &str),
        opts: Option<&PutOptions>,
        cond: &WriteCondition,
        access: Option<&PermissionChange>,
    ) -> Result<ObjectInfo> {
        validate_bucket_name(dst_bucket)?;
        validate_key(dst_key)?;
        if opts.is_some_and(|o| !o.condition.is_always()) {
            return Err(s3err!(
                InvalidArgument,
                "CopyObject takes its write condition as an argument, not in the options"
            ));
        }
        // (A given version copied over its key makes it current again.)
        if opts.is_none() && src_version.is_none() && (src_bucket, src_key) == (dst_bucket, dst_key)
        {
            // AWS's words; a copy that changes nothing would be a no-op.
            return Err(s3err!(
                InvalidRequest,
                "This copy request is illegal because it is trying to copy an object to itself \
                 without changing the object's metadata, storage class, website redirect \
                 location or encryption attributes."
            ));
        }
        let (src, file) = match src_version {
            Some(v) => self.open_version(src_bucket, src_key, v)?,
            None => self.open_object(src_bucket, src_key)?,
        };
        let mut stored = match opts {
            Some(o) => StoredMeta::from_put(o, None)?,
            None => StoredMeta {
                etag: None,
                content_type: src.content_type.clone(),
                metadata: src.metadata.clone(),
                headers: src.headers.clone(),
                // Tags come along as S3's default tagging directive (COPY) says.
                tags: if src.tag_count > 0 {
                    StoredMeta::read_from(&file)
                        .map_err(|e| {
                            S3Error::from_io(
                                &e,
                                &format!("{src_bucket}/{src_key}: reading its tags"),
                            )
                        })?
                        .tags
                } else {
                    Default::default()
                },
                ..Default::default()
            },
        };
        stored.access = access.cloned();
        // Same bytes, same MD5: reuse a stored content hash instead of rehashing.
        if self.config.etag == EtagPolicy::Md5 && !src.etag.contains('-') {
            stored.etag = Some(src.etag.clone());
        }
        // The checksum goes with the bytes: a whole-object one is kept, a
        // composite one (of the source's parts) is computed over the copy.
        let mut check = opts.and_then(|o| o.checksum.clone());
        match &src.checksum {
            Some(c) if check.is_none() && c.kind == ChecksumType::FullObject => {
                stored.checksum = Some(c.clone())
            }
            Some(c) if check.is_none() => check = Some(ChecksumRequest::new(c.algorithm)),
            _ => {}
        }
        self.write_user_object(
            dst_bucket,
            dst_key,
            Source::Files(vec![(file, 0, src.size)]),
            stored,
            crate::put::Checks {
                sum: check.as_ref(),
                md5: None,
            },
            cond,
        )?;
        self.head_object(dst_bucket, dst_key)
    }

    /// A readable fd for listing the directory `rel`.
    pub(crate) fn open_listing(&self, rel: &str) -> io::Result<OwnedFd> {
        open_dir_readable(self.root_fd.as_fd(), rel)
    }
}
