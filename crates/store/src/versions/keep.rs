//! Keeping versions as they are written and deleted: a write names its
//! file in `.s3hpc-versions` before it publishes it at the key's path, so
//! no version is displaced before it has a name there; a delete leaves a
//! marker. The object written before versioning (no id) is named `null`
//! the first time it would be displaced.

use super::*;
use crate::fscalls::{fstat, mkdirat, openat, renameat, unlinkat};
use crate::meta::{self, StoredMeta};
use crate::names::SELF_ENTRY;
use crate::ErrorCode;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// The entry a write made for its new version: removed if the write
/// fails before its file is published. A `null` version is linked under a
/// temporary name first and replaces the previous `null` only once the
/// write is published ([`Kept::published`]): a refused write never costs
/// the version it would have replaced.
pub(crate) struct Kept {
    versions: OwnedFd,
    /// The name it has now (the entry's, or a temporary one).
    name: String,
    /// The entry's name, once published, where it is a `null` version.
    then: Option<(String, String)>,
}

impl Kept {
    pub fn undo(self) {
        let _ = unlinkat(&self.versions, self.name.as_str(), AtFlags::empty());
    }

    /// The write is published: a `null` version takes its name (and any
    /// null marker goes). Returns the versions directory (to sync).
    pub fn published(self) -> Result<OwnedFd> {
        if let Some((entry, marker)) = &self.then {
            replace_entry(&self.versions, &self.name, entry)?;
            let _ = unlinkat(&self.versions, marker.as_str(), AtFlags::empty());
        }
        Ok(self.versions)
    }
}

/// Renames `tmp` over `entry` in `versions` (removing `tmp` on failure).
fn replace_entry(versions: &OwnedFd, tmp: &str, entry: &str) -> Result<()> {
    if let Err(e) = renameat(versions, tmp, versions, entry) {
        let _ = unlinkat(versions, tmp, AtFlags::empty());
        return Err(io_err(e, &format!("{VERSIONS_DIR}/{entry}")));
    }
    Ok(())
}

/// A temporary name in a versions directory: hidden (not an entry), and
/// short whatever the key's name.
fn temp_name() -> String {
    format!(".{}", new_version_id())
}

fn io_err(e: Errno, what: &str) -> S3Error {
    S3Error::from_io(&e.into(), what)
}

impl Store {
    /// The bucket's versioning as this process last read it (at most a
    /// second ago: every process follows a change within a second).
    pub(crate) fn versioning_of(&self, bucket: &str) -> Result<Versioning> {
        Ok(self.setting_of(bucket)?.state)
    }

    /// The bucket's setting (versioning and object lock), as
    /// [`Store::versioning_of`] reads it.
    pub(crate) fn setting_of(&self, bucket: &str) -> Result<Setting> {
        let known = self.versionings.get(bucket);
        if let Some((v, true)) = known {
            return Ok(v);
        }
        match self.bucket_setting(bucket) {
            Ok(v) => {
                self.versionings.put(bucket, v);
                Ok(v)
            }
            // Read by someone else before (the state is the bucket's, not
            // the user's): that, rather than a guess.
            Err(_) if known.is_some() => Ok(known.unwrap().0),
            // A missing bucket: the operation says so itself.
            Err(e) if e.code == ErrorCode::NoSuchBucket => Ok(Setting::OFF),
            // This user may not read the bucket's directory, and no one has
            // yet: a write could displace a version unnamed, so none.
            Err(e) if e.code == ErrorCode::AccessDenied => Err(s3err!(
                AccessDenied,
                "bucket {bucket:?}: whether it keeps versions cannot be read ({}); a \
                 request by a user who may read the bucket's directory reads it for \
                 a second",
                e.message
            )),
            // Not a bucket (a symlink, ...): as the operation would answer.
            Err(e) => Err(e),
        }
    }

    /// The version id a new object at `key` gets: None where the bucket
    /// never had versioning, `null` where it is suspended.
    pub(crate) fn new_write_version(&self, bucket: &str, key: &str) -> Result<Option<String>> {
        match self.versioning_of(bucket)? {
            Versioning::Off => Ok(None),
            Versioning::Suspended => Ok(Some(NULL_VERSION.to_string())),
            Versioning::Enabled => {
                let name = crate::names::split_key(key).name;
                if name.len() > MAX_VERSIONED_NAME {
                    return Err(s3err!(
                        KeyTooLong,
                        "{bucket}/{key}: in a versioned bucket the last segment of a key \
                         is at most {MAX_VERSIONED_NAME} bytes (its versions are named \
                         after it); this one is {}",
                        name.len()
                    ));
                }
                Ok(Some(new_version_id()))
            }
        }
    }

    /// Names version `id` of `name` (the file `fd`, whole and synced) in
    /// `dir`'s versions, before it is published at `name`. Where versioning
    /// is enabled, the object it will displace is kept first if it has no
    /// name there yet (`null`). A `null` version replaces the previous one.
    pub(crate) fn keep_version(
        &self,
        dir: BorrowedFd<'_>,
        name: &str,
        fd: &OwnedFd,
        id: &str,
    ) -> Result<Kept> {
        let what = || format!("the versions of {name}");
        let versions = self.versions_dir(dir, true)?;
        let entry = VersionEntry {
            name,
            id,
            marker: false,
        }
        .file_name();
        if id == NULL_VERSION {
            // Suspended: replaces the null version (and any null marker)
            // once published.
            let tmp = temp_name();
            crate::put::link_fd(fd, versions.as_fd(), &tmp).map_err(|e| io_err(e, &what()))?;
            let marker = VersionEntry {
                name,
                id,
                marker: true,
            }
            .file_name();
            return Ok(Kept {
                versions,
                name: tmp,
                then: Some((entry, marker)),
            });
        }
        self.keep_unnamed(dir, &versions, name)?;
        crate::put::link_fd(fd, versions.as_fd(), &entry).map_err(|e| io_err(e, &what()))?;
        Ok(Kept {
            versions,
            name: entry,
            then: None,
        })
    }

    /// Before `name` in `dir` is deleted where versioning is on (`state`
    /// is not Off): keeps the object there if it has no name among the
    /// versions yet, and leaves a delete marker. Returns the marker's id.
    pub(crate) fn mark_deleted(
        &self,
        state: Versioning,
        dir: BorrowedFd<'_>,
        name: &str,
    ) -> Result<String> {
        let what = || format!("the versions of {name}");
        let id = match state {
            Versioning::Enabled => new_version_id(),
            Versioning::Off | Versioning::Suspended => NULL_VERSION.to_string(),
        };
        let versions = self.versions_dir(dir, true)?;
        if id == NULL_VERSION {
            // A null marker replaces the null version.
            let null = VersionEntry {
                name,
                id: NULL_VERSION,
                marker: false,
            };
            match unlinkat(&versions, null.file_name().as_str(), AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(io_err(e, &what())),
            }
        } else {
            self.keep_unnamed(dir, &versions, name)?;
        }
        let marker = VersionEntry {
            name,
            id: &id,
            marker: true,
        }
        .file_name();
        let flags = OFlags::CREATE | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        openat(
            &versions,
            marker.as_str(),
            flags,
            Mode::from_bits_truncate(0o644),
        )
        .map_err(|e| io_err(e, &what()))?;
        Ok(id)
    }

    /// The directory's versions (made, with the directory's own
    /// permissions, if `make`).
    pub(crate) fn versions_dir(&self, dir: BorrowedFd<'_>, make: bool) -> Result<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let what = VERSIONS_DIR;
        match openat(dir, VERSIONS_DIR, flags, Mode::empty()) {
            Err(Errno::NOENT) if make => {}
            other => return other.map_err(|e| io_err(e, what)),
        }
        // Whoever may write the directory may write its versions.
        let mode = fstat(dir).map_err(|e| io_err(e, what))?.st_mode & 0o7777;
        match mkdirat(dir, VERSIONS_DIR, Mode::from_bits_truncate(0o700)) {
            Ok(()) => {
                let fd =
                    openat(dir, VERSIONS_DIR, flags, Mode::empty()).map_err(|e| io_err(e, what))?;
                crate::fscalls::fchmod(&fd, Mode::from_bits_truncate(mode))
                    .map_err(|e| io_err(e, what))?;
                Ok(fd)
            }
            Err(Errno::EXIST) => {
                openat(dir, VERSIONS_DIR, flags, Mode::empty()).map_err(|e| io_err(e, what))
            }
            Err(e) => Err(io_err(e, what)),
        }
    }

    /// Names the object at `name` in `dir` `null` among the versions if it
    /// has no id (written before versioning): exactly the file opened,
    /// linked through its descriptor, so a write published meanwhile is
    /// never taken for it.
    fn keep_unnamed(&self, dir: BorrowedFd<'_>, versions: &OwnedFd, name: &str) -> Result<()> {
        let what = || format!("the object {name}, to keep it as version null");
        let Some(Current { fd, st, version }) =
            open_current(dir, name).map_err(|e| io_err(e, &what()))?
        else {
            return Ok(());
        };
        if version.is_some() {
            return Ok(());
        }
        let null = VersionEntry {
            name,
            id: NULL_VERSION,
            marker: false,
        }
        .file_name();
        match crate::put::link_fd(&fd, versions.as_fd(), &null) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => {
                let kept = rustix::fs::statat(versions, null.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|e| e.st_ino == st.st_ino && e.st_dev == st.st_dev);
                if kept {
                    // By another writer, or at an earlier write.
                    return Ok(());
                }
                // An older null (this object replaced it unversioned, from
                // a process that had not seen versioning on yet, or by a
                // POSIX tool): this one is the null version now.
                let tmp = temp_name();
                crate::put::link_fd(&fd, versions.as_fd(), &tmp).map_err(|e| io_err(e, &what()))?;
                replace_entry(versions, &tmp, &null)
            }
            Err(Errno::PERM) => Err(s3err!(
                AccessDenied,
                "{name}: the object there (uid {}) was written before versioning and must be \
                 kept as version null before it is replaced, which the file system refuses \
                 you (fs.protected_hardlinks): its owner or root can write it once",
                st.st_uid
            )),
            Err(e) => Err(io_err(e, &what())),
        }
    }
}

/// The `stat` of the object at `name` in `dir` (a key that is also a
/// prefix: its self-entry), which needs no permission on the file: what a
/// listing compares with the versions' inodes.
pub(super) fn current_stat(
    dir: BorrowedFd<'_>,
    name: &str,
) -> rustix::io::Result<Option<rustix::fs::Stat>> {
    let flags = AtFlags::SYMLINK_NOFOLLOW;
    let st = match crate::fscalls::statat(dir, name, flags) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(e),
    };
    let st = match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => st,
        FileType::Directory => {
            match crate::fscalls::statat(dir, format!("{name}/{SELF_ENTRY}").as_str(), flags) {
                Ok(st) => st,
                Err(Errno::NOENT) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
        _ => return Ok(None),
    };
    Ok((FileType::from_raw_mode(st.st_mode) == FileType::RegularFile).then_some(st))
}

/// The object at a key's path: its file, `stat` and version id (None for
/// one written before versioning, or by another tool).
pub(super) struct Current {
    pub fd: OwnedFd,
    pub st: rustix::fs::Stat,
    pub version: Option<String>,
}

/// The regular file at `name` in `dir` (a key that is also a prefix: its
/// self-entry), with its version id; None if there is none.
pub(super) fn open_current(dir: BorrowedFd<'_>, name: &str) -> rustix::io::Result<Option<Current>> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let mut fd = match openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT | Errno::LOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut st = fstat(&fd)?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Directory => {
            fd = match openat(&fd, SELF_ENTRY, flags, Mode::empty()) {
                Ok(f) => f,
                Err(Errno::NOENT) => return Ok(None),
                Err(e) => return Err(e),
            };
            st = fstat(&fd)?;
        }
        _ => return Ok(None),
    }
    let version = match meta::has_meta(&st) {
        true => {
            StoredMeta::read_from(&fd)
                .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))?
                .version_id
        }
        false => None,
    };
    Ok(Some(Current { fd, st, version }))
}
