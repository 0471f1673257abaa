//! Multipart data written once.
//!
//! Clients split an object into parts of one size (boto3, the aws CLI,
//! rclone, s3fs, IOR). Such a part is written straight to its final offset,
//! `(n - 1) * stride`, in the upload's one data file (`data`), and its entry
//! `part.NNNNN` is then a small record of where its bytes are (marked by
//! [`IN_PLACE`] as its content type, with the part's ETag and checksum as
//! any part's). Completion checks the sizes, cuts the file to length and
//! renames it into place: no byte is copied (a plain concatenation copies
//! every byte again, which on CephFS, GlusterFS, MooseFS and Lustre is a
//! second write of the whole object).
//!
//! The stride is the size of the first part of at least 5 MiB, kept in the
//! upload's `stride` file (created once, atomically). Whatever the layout
//! cannot hold is written as a file of its own, as before, and completion
//! copies it in, or concatenates everything where the parts do not line up:
//! a part longer than the stride, a part without a Content-Length, a
//! re-uploaded part, a part whose slot another writer holds, part numbers
//! with gaps, middle parts of other sizes.
//!
//! Writers of one slot and completion exclude each other with
//! open-file-description locks (cluster-wide where the file system's fcntl
//! locks are): a writer holds its slot's byte range while it writes and
//! publishes its record, completion holds the whole file while it cuts and
//! renames it, and both give way (a writer to a file of its own, completion
//! to concatenation) rather than wait. A writer checks, once it holds its
//! range, that `data` still names its file (completion renamed it away) and
//! that its part has no record yet (a re-upload's bytes must never go over
//! bytes a record vouches for).

use super::staging::{part_file, upload_key, MIN_PART_SIZE, UPLOADS};
use crate::fscalls::{fstat, openat, statat};
use crate::meta::StoredMeta;
use crate::names::dir_rel;
use crate::put::{Adopted, Checks, Source};
use crate::*;
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::rc::Rc;

/// The upload's data file.
pub(super) const DATA: &str = "data";
/// The upload's stride: 8 bytes, little-endian.
const STRIDE: &str = "stride";
/// The content type of a part entry that records bytes in [`DATA`] (parts'
/// own files are stored with none).
pub(super) const IN_PLACE: &str = "application/x-s3hpc-part-in-place";
const RECORD_MAGIC: &[u8; 8] = b"s3hpcIP1";

/// Where a part's bytes are in the upload's data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Placed {
    pub offset: u64,
    pub len: u64,
    pub stride: u64,
}

impl Placed {
    fn encode(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        out[..8].copy_from_slice(RECORD_MAGIC);
        out[8..16].copy_from_slice(&self.offset.to_le_bytes());
        out[16..24].copy_from_slice(&self.len.to_le_bytes());
        out[24..].copy_from_slice(&self.stride.to_le_bytes());
        out
    }

    fn decode(buf: &[u8]) -> Option<Placed> {
        let word = |i: usize| Some(u64::from_le_bytes(buf.get(i..i + 8)?.try_into().ok()?));
        (buf.len() == 32 && &buf[..8] == RECORD_MAGIC).then_some(())?;
        Some(Placed {
            offset: word(8)?,
            len: word(16)?,
            stride: word(24)?,
        })
    }
}

/// Where a part entry, as opened, keeps its bytes: None for a part file of
/// its own.
pub(super) fn placed(info: &ObjectInfo, body: &mut ObjectReader) -> Option<Placed> {
    if info.content_type.as_deref() != Some(IN_PLACE) {
        return None;
    }
    let mut buf = Vec::with_capacity(32);
    body.read_into(&mut buf, 64).ok()?;
    Placed::decode(&buf)
}

/// One listed part's bytes, as completion found them.
pub(super) enum PartData {
    /// In the data file.
    Placed(Placed),
    /// In a file of its own.
    Own(File, u64),
}

impl PartData {
    pub fn len(&self) -> u64 {
        match self {
            PartData::Placed(p) => p.len,
            PartData::Own(_, len) => *len,
        }
    }
}

/// The uploads whose stride this process knows (it never changes once
/// set): a part reads the `stride` file once per upload and process.
#[derive(Default)]
pub(crate) struct Strides(std::sync::Mutex<std::collections::HashMap<String, u64>>);

impl Strides {
    const MAX: usize = 4096;

    fn get(&self, upload_id: &str) -> Option<u64> {
        self.0.lock().ok()?.get(upload_id).copied()
    }

    fn set(&self, upload_id: &str, stride: u64) {
        if let Ok(mut m) = self.0.lock() {
            if m.len() >= Self::MAX {
                m.clear();
            }
            m.insert(upload_id.to_string(), stride);
        }
    }
}

/// Takes an open-file-description write lock on `len` bytes at `start`
/// (0: to the end and beyond), without waiting. Ok(false): another holds a
/// lock there, or the file system has no such locks.
fn try_lock(fd: &OwnedFd, start: u64, len: u64) -> rustix::io::Result<bool> {
    match crate::probe::fcntl_lock(fd.as_fd(), libc::F_OFD_SETLK, libc::F_WRLCK, start, len) {
        Ok(()) => Ok(true),
        Err(Errno::AGAIN | Errno::ACCESS | Errno::INVAL | Errno::NOLCK | Errno::OPNOTSUPP) => {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// Opens the upload's data file for writing, making it if it is not there.
/// None: it went away meanwhile (a completion or an abort).
fn open_data(dir: &OwnedFd) -> rustix::io::Result<Option<OwnedFd>> {
    let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match openat(
        dir,
        DATA,
        flags | OFlags::CREATE,
        Mode::from_bits_truncate(0o666),
    ) {
        Ok(fd) => Ok(Some(fd)),
        // Two nodes made it at once: through FUSE (MooseFS) the one that
        // lost the create is told EEXIST, O_EXCL or not.
        Err(Errno::EXIST) => match openat(dir, DATA, flags, Mode::empty()) {
            Ok(fd) => Ok(Some(fd)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// Whether `name` in `dir` is the file open as `fd`.
fn still_named(dir: &OwnedFd, name: &str, fd: &OwnedFd) -> bool {
    match (statat(dir, name, AtFlags::SYMLINK_NOFOLLOW), fstat(fd)) {
        (Ok(a), Ok(b)) => a.st_ino == b.st_ino && a.st_dev == b.st_dev,
        _ => false,
    }
}

fn io_err(e: Errno, what: &str) -> S3Error {
    S3Error::from_io(&e.into(), what)
}

impl Store {
    /// Whether parts may go into the data file here: their records need
    /// the part's attributes (xattrs) and the slots need locks.
    fn in_place_ok(&self) -> bool {
        self.profile.xattrs && self.profile.fcntl_locks
    }

    fn upload_dir(&self, bucket: &str, upload_id: &str) -> Result<Rc<OwnedFd>> {
        let rel = dir_rel(bucket, &format!("{UPLOADS}/{upload_id}"));
        self.dirs
            .get(self.root_fd.as_fd(), &rel)
            .map_err(|e| S3Error::from_io(&e, "upload directory"))
    }

    /// The upload's stride: known, read, or (if none is set and this part
    /// may set it) set to `len`. None: no stride yet, and this part is too
    /// small to set one (it may be the last).
    fn upload_stride(&self, bucket: &str, upload_id: &str, len: u64) -> Result<Option<u64>> {
        if let Some(s) = self.strides.get(upload_id) {
            return Ok(Some(s));
        }
        let path = upload_key(upload_id, STRIDE);
        let read = || -> Result<Option<u64>> {
            let mut got = match self.get_unchecked(bucket, &path, None) {
                Ok(g) => g,
                Err(e) if e.code == ErrorCode::NoSuchKey => return Ok(None),
                Err(e) => return Err(e),
            };
            let mut buf = [0u8; 8];
            got.body
                .read_exact(&mut buf)
                .map_err(|e| S3Error::from_io(&e, "upload stride"))?;
            Ok(Some(u64::from_le_bytes(buf)).filter(|s| *s > 0))
        };
        let stride = match read()? {
            Some(s) => s,
            None if len < MIN_PART_SIZE => return Ok(None),
            None => {
                let set = self.write_object_if(
                    bucket,
                    &path,
                    Source::Body(PutBody::Bytes(&len.to_le_bytes())),
                    StoredMeta::default(),
                    Default::default(),
                    &WriteCondition::IfNoneMatch,
                );
                match set {
                    Ok(_) => len,
                    // Another part set it first.
                    Err(e) if e.code == ErrorCode::PreconditionFailed => match read()? {
                        Some(s) => s,
                        None => return Ok(None),
                    },
                    Err(e) => return Err(e),
                }
            }
        };
        self.strides.set(upload_id, stride);
        Ok(Some(stride))
    }

    /// Writes part `n` of `len` bytes at its final offset in the upload's
    /// data file and publishes its record. `Err(body)` hands the body back
    /// untouched where the layout cannot hold the part.
    pub(super) fn upload_part_in_place<'b>(
        &self,
        (bucket, upload_id, n): (&str, &str, u32),
        body: PutBody<'b>,
        checks: Checks<'_>,
    ) -> Result<std::result::Result<String, PutBody<'b>>> {
        let len = match &body {
            PutBody::Bytes(b) => b.len() as u64,
            PutBody::Stream { len: Some(len), .. } => *len,
            PutBody::Stream { len: None, .. } => return Ok(Err(body)),
        };
        if !self.in_place_ok() {
            return Ok(Err(body));
        }
        let Some(stride) = self.upload_stride(bucket, upload_id, len)? else {
            return Ok(Err(body));
        };
        let Some(offset) = (n as u64 - 1).checked_mul(stride) else {
            return Ok(Err(body));
        };
        if len > stride || offset.saturating_add(len) > 5 << 40 {
            return Ok(Err(body));
        }
        let dir = self.upload_dir(bucket, upload_id)?;
        let what = format!("part {n} of upload {upload_id}");
        let Some(fd) = open_data(&dir).map_err(|e| io_err(e, &what))? else {
            return Ok(Err(body));
        };
        if !try_lock(&fd, offset, stride).map_err(|e| io_err(e, &what))?
            || !still_named(&dir, DATA, &fd)
        {
            return Ok(Err(body));
        }
        match statat(&dir, part_file(n).as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Err(Errno::NOENT) => {}
            // A re-upload, or an entry that cannot be checked.
            _ => return Ok(Err(body)),
        }
        rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(offset)).map_err(|e| io_err(e, &what))?;
        let mut stored = StoredMeta {
            content_type: Some(IN_PLACE.to_string()),
            ..Default::default()
        };
        self.fill(&fd, Source::Body(body), &mut stored, checks)
            .map_err(|e| match e.code {
                ErrorCode::BadDigest => e,
                _ => S3Error::new(e.code, format!("{what}: {}", e.message)),
            })?;
        self.sync_data(&fd).map_err(|e| io_err(e, &what))?;
        if self.profile.shared {
            // This node's cached copy of the slot goes stale if completion
            // copies a re-upload of the part over it from another node, and
            // a FUSE client (ceph-fuse) drops such pages only some time
            // after: a GET here right after completion read the old part
            // (seen on CephFS across three nodes). Clean pages only.
            let _ = rustix::fs::fadvise(
                &fd,
                offset,
                std::num::NonZeroU64::new(len),
                rustix::fs::Advice::DontNeed,
            );
        }
        let record = Placed {
            offset,
            len,
            stride,
        };
        // Published while the range is held: no other writer of this part
        // can write over the bytes the record vouches for.
        let etag = self.write_object(
            bucket,
            &upload_key(upload_id, &part_file(n)),
            Source::Body(PutBody::Bytes(&record.encode())),
            stored,
            Default::default(),
        )?;
        Ok(Ok(etag))
    }

    /// Readies the upload's data file to become the object made of
    /// `parts` (in order), if they line up in it: part `i` (from 1) is part
    /// number `i`, every part but the last is one stride long and the last
    /// at most one. Parts in files of their own are copied to their slots;
    /// the file is cut to the object's length. None: the parts do not line
    /// up, or a writer holds part of the file; concatenate instead.
    pub(super) fn adopt_data(
        &self,
        bucket: &str,
        upload_id: &str,
        parts: &[(u32, PartData)],
    ) -> Result<Option<Adopted>> {
        let Some(stride) = parts.iter().find_map(|(_, d)| match d {
            PartData::Placed(p) => Some(p.stride),
            PartData::Own(..) => None,
        }) else {
            return Ok(None);
        };
        let last = parts.len() - 1;
        let lined_up = parts.iter().enumerate().all(|(i, (n, d))| {
            let offset = i as u64 * stride;
            *n as usize == i + 1
                && if i < last {
                    d.len() == stride
                } else {
                    d.len() <= stride
                }
                && match d {
                    PartData::Placed(p) => p.stride == stride && p.offset == offset,
                    PartData::Own(..) => true,
                }
        });
        if !lined_up {
            return Ok(None);
        }
        let dir = self.upload_dir(bucket, upload_id)?;
        let what = format!("upload {upload_id}");
        let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match openat(&dir, DATA, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(io_err(e, &what)),
        };
        // Every writer of a slot is done (none holds a range) and none can
        // start (each checks that `data` still names this file).
        if !try_lock(&fd, 0, 0).map_err(|e| io_err(e, &what))? || !still_named(&dir, DATA, &fd) {
            return Ok(None);
        }
        let total = last as u64 * stride + parts[last].1.len();
        let st = fstat(&fd).map_err(|e| io_err(e, &what))?;
        if st.st_size as u64 > (last as u64 + 1) * stride {
            // Parts not listed lie past the last slot. S3 drops them, but
            // only once the completion succeeds: if its condition fails,
            // the upload must stay completable with them.
            return Ok(None);
        }
        let mut copied = false;
        for (i, (_, d)) in parts.iter().enumerate() {
            if let PartData::Own(file, len) = d {
                let at = i as u64 * stride;
                rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(at))
                    .map_err(|e| io_err(e, &what))?;
                crate::put::copy_range(file, 0, *len, &fd)
                    .map_err(|e| S3Error::from_io(&e, &what))?;
                copied = true;
            }
        }
        if st.st_size as u64 != total {
            // The last slot's unused tail.
            crate::fscalls::count(
                crate::fscalls::Kind::Write,
                rustix::fs::ftruncate(&fd, total),
            )
            .map_err(|e| io_err(e, &what))?;
        }
        if copied {
            self.sync_data(&fd).map_err(|e| io_err(e, &what))?;
        }
        Ok(Some(Adopted {
            dir,
            name: DATA,
            fd,
        }))
    }
}
