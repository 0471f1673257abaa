//! Reading and removing one version of a key: GET, HEAD and DELETE with a
//! version id, and a key's history (newest first, the latest marked).

use super::*;
use crate::fscalls::{fstat, linkat, openat, read_dir, renameat_with, statat, unlinkat};
use crate::meta::{self, StoredMeta};
use crate::names::{dir_rel, split_key};
use crate::{GetResult, ObjectInfo};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// One version of a key, as ListObjectVersions gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KeyVersion {
    pub version_id: String,
    pub is_latest: bool,
    /// A delete marker: no data, no attributes but its time.
    pub delete_marker: bool,
    pub last_modified: std::time::SystemTime,
    /// The version's attributes (None for a marker).
    pub info: Option<ObjectInfo>,
}

impl KeyVersion {
    /// The object at a key's path as its only `null` version, the latest
    /// (written before versioning, or in a bucket that keeps one version).
    pub(super) fn null_latest(mut info: ObjectInfo) -> KeyVersion {
        info.version_id = Some(NULL_VERSION.to_string());
        KeyVersion {
            version_id: NULL_VERSION.to_string(),
            is_latest: true,
            delete_marker: false,
            last_modified: info.last_modified,
            info: Some(info),
        }
    }
}

fn io_err(e: Errno, what: &str) -> S3Error {
    S3Error::from_io(&e.into(), what)
}

fn no_such_version(bucket: &str, key: &str, id: &str) -> S3Error {
    s3err!(
        NoSuchVersion,
        "{bucket}/{key} has no version {id:?} (ListObjectVersions lists those it has)"
    )
}

/// A bucket and key as every call checks them, and an id this engine
/// could have made (any other names no version).
fn check_args(bucket: &str, key: &str, id: &str) -> Result<()> {
    validate_bucket_name(bucket)?;
    validate_key(key)?;
    if !is_version_id(id) {
        return Err(no_such_version(bucket, key, id));
    }
    Ok(())
}

impl Store {
    /// GET of version `id` of `key`.
    pub fn get_object_version(
        &self,
        bucket: &str,
        key: &str,
        id: &str,
        range: Option<ByteRange>,
    ) -> Result<GetResult> {
        let (info, file) = self.open_version(bucket, key, id)?;
        GetResult::of(bucket, info, file, range)
    }

    /// HEAD of version `id` of `key`.
    pub fn head_object_version(&self, bucket: &str, key: &str, id: &str) -> Result<ObjectInfo> {
        self.open_version(bucket, key, id).map(|(info, _)| info)
    }

    /// Version `id` of `key`, open, with its attributes: its entry among
    /// the versions, or for `null` the object at the key's path if it has
    /// no id. A delete marker is MethodNotAllowed, as in S3.
    pub(crate) fn open_version(
        &self,
        bucket: &str,
        key: &str,
        id: &str,
    ) -> Result<(ObjectInfo, File)> {
        check_args(bucket, key, id)?;
        if self.packed(bucket).is_some() {
            // One version of each key: `null`, the object.
            return match id {
                NULL_VERSION => self.open_unchecked(bucket, key).map(|(mut info, file)| {
                    info.version_id = Some(NULL_VERSION.to_string());
                    (info, file)
                }),
                _ => Err(no_such_version(bucket, key, id)),
            };
        }
        let kp = split_key(key);
        let what = format!("{bucket}/{key} (version {id})");
        let dir = self.key_dir(bucket, kp.dir, key, id)?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let entry = |marker| {
            VersionEntry {
                name: kp.name,
                id,
                marker,
            }
            .file_name()
        };
        let fd = match self.versions_dir(dir.as_fd(), false) {
            Ok(versions) => match openat(&versions, entry(false).as_str(), flags, Mode::empty()) {
                Ok(fd) => Some(fd),
                Err(Errno::NOENT) => {
                    if statat(&versions, entry(true).as_str(), AtFlags::SYMLINK_NOFOLLOW).is_ok() {
                        return Err(s3err!(
                            MethodNotAllowed,
                            "{what} is a delete marker: it has no data to read"
                        ));
                    }
                    None
                }
                Err(e) => return Err(io_err(e, &what)),
            },
            Err(e) if e.code == ErrorCode::NoSuchKey => None,
            Err(e) => return Err(e),
        };
        let fd = match fd {
            Some(fd) => fd,
            // The object written before versioning, never displaced.
            None if id == NULL_VERSION => {
                match keep::open_current(dir.as_fd(), kp.name).map_err(|e| io_err(e, &what))? {
                    Some(c) if c.version.is_none() => c.fd,
                    _ => return Err(no_such_version(bucket, key, id)),
                }
            }
            None => return Err(no_such_version(bucket, key, id)),
        };
        let st = fstat(&fd).map_err(|e| io_err(e, &what))?;
        let stored = match meta::has_meta(&st) {
            true => Some(StoredMeta::read_from(&fd).map_err(|e| S3Error::from_io(&e, &what))?),
            false => None,
        };
        let mut info = meta::object_info(key, &st, stored);
        info.version_id = Some(id.to_string());
        Ok((info, File::from(fd)))
    }

    /// Every version of `key`, the latest first, then newest first.
    pub fn list_key_versions(&self, bucket: &str, key: &str) -> Result<Vec<KeyVersion>> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        let kp = split_key(key);
        let dir = match self.key_dir(bucket, kp.dir, key, "") {
            Ok(d) => d,
            Err(e) if e.code == ErrorCode::NoSuchVersion => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let history = match self.versions_dir(dir.as_fd(), false) {
            Ok(versions) => {
                let entries = history(&versions, kp.name)?;
                Some((versions, entries))
            }
            Err(_) => None,
        };
        let history = history.as_ref().map(|(v, e)| (v, e.as_slice()));
        self.key_versions(bucket, key, dir.as_fd(), history, None)
    }

    /// The versions of `key`, whose directory is `dir`: the latest first,
    /// then newest first. `history`: its versions directory and its
    /// entries there (sorted, `history`); `listed`: the object at its path
    /// as a listing just gave it, if it did.
    pub(super) fn key_versions(
        &self,
        bucket: &str,
        key: &str,
        dir: BorrowedFd<'_>,
        history: Option<(&OwnedFd, &[HistoryEntry])>,
        listed: Option<ObjectInfo>,
    ) -> Result<Vec<KeyVersion>> {
        let (versions, entries) = match history {
            Some((v, e)) => (Some(v), e),
            None => (None, &[][..]),
        };
        if entries.is_empty() {
            // No versions: at most the object at the path, as `null`.
            if let Some(info) = listed {
                return Ok(vec![KeyVersion::null_latest(info)]);
            }
        }
        let kp = split_key(key);
        let what = format!("the versions of {bucket}/{key}");
        let current = keep::current_stat(dir, kp.name).map_err(|e| io_err(e, &what))?;
        let mut out = Vec::new();
        for e in entries {
            let is_latest = match &current {
                Some(cur) => !e.marker && cur.st_ino == e.st.st_ino && cur.st_dev == e.st.st_dev,
                None => false,
            };
            // The current version as the listing just gave it: the same
            // file (unless replaced since: its size and time tell), which
            // the user's listing shows anyway, so no open.
            let same = |l: &&ObjectInfo| {
                l.size == e.st.st_size as u64 && l.last_modified == meta::mtime(&e.st)
            };
            let listed_current = listed.as_ref().filter(|_| is_latest).filter(same).map(|l| {
                let mut info = l.clone();
                info.version_id = Some(e.id.clone());
                info
            });
            let info = listed_current.or_else(|| {
                (!e.marker)
                    .then(|| {
                        let flags =
                            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
                        let versions = versions.expect("entries come with their directory");
                        let fd = openat(versions, e.file.as_str(), flags, Mode::empty())?;
                        let stored = match meta::has_meta(&e.st) {
                            true => Some(StoredMeta::read_from(&fd)?),
                            false => None,
                        };
                        let mut info = meta::object_info(key, &e.st, stored);
                        info.version_id = Some(e.id.clone());
                        std::io::Result::Ok(info)
                    })
                    .transpose()
                    // A version this user may not read is listed by name.
                    .unwrap_or(None)
            });
            out.push(KeyVersion {
                last_modified: meta::mtime(&e.st),
                version_id: e.id.clone(),
                is_latest,
                delete_marker: e.marker,
                info,
            });
        }
        match &current {
            // The object at the path has no entry: written before
            // versioning, never displaced, so `null`.
            Some(st) if !out.iter().any(|v| v.is_latest) => {
                // Its attributes if this user may read them; else its stat's.
                let info = match listed {
                    Some(info) => info,
                    None => self
                        .head_object(bucket, key)
                        .unwrap_or_else(|_| meta::object_info(key, st, None)),
                };
                out.push(KeyVersion::null_latest(info));
            }
            Some(_) => {}
            // No object at the path: a newest marker is the latest.
            None => {
                if let Some(first) = out.first_mut() {
                    first.is_latest = first.delete_marker;
                }
            }
        }
        // The latest first, the rest newest first (the sort above).
        out.sort_by_key(|v| !v.is_latest);
        Ok(out)
    }

    /// Removes version `id` of `key` for good. If it was the latest, the
    /// next newest version becomes the object at the key's path (none if
    /// that is a delete marker). Returns whether it was a delete marker.
    /// A version under object lock stays (AccessDenied).
    pub fn delete_object_version(&self, bucket: &str, key: &str, id: &str) -> Result<bool> {
        self.delete_version(bucket, key, id, false)
    }

    /// [`Store::delete_object_version`]; `bypass` removes a version under
    /// GOVERNANCE retention (`x-amz-bypass-governance-retention`).
    fn delete_version(&self, bucket: &str, key: &str, id: &str, bypass: bool) -> Result<bool> {
        check_args(bucket, key, id)?;
        if self.packed(bucket).is_some() {
            // One version of each key: `null`, the object.
            return match id {
                NULL_VERSION => self.delete_object(bucket, key).map(|()| false),
                _ => Ok(false),
            };
        }
        let kp = split_key(key);
        let what = format!("{bucket}/{key} (version {id})");
        let dir = match self.key_dir(bucket, kp.dir, key, id) {
            Ok(d) => d,
            // Deleting a version that does not exist succeeds, as in S3.
            Err(e) if e.code == ErrorCode::NoSuchVersion => return Ok(false),
            Err(e) => return Err(e),
        };
        let versions = match self.versions_dir(dir.as_fd(), false) {
            Ok(v) => Some(v),
            Err(e) if e.code == ErrorCode::NoSuchKey => None,
            Err(e) => return Err(e),
        };
        let cur_st = match keep::open_current(dir.as_fd(), kp.name) {
            Ok(c) => c.map(|c| (c.st, c.version, Some(c.fd))),
            // Another user's object this one may not read (but, with write
            // permission on the directory, may remove): its id unknown,
            // taken as none. A version it displaces is put back below.
            Err(Errno::ACCESS) => statat(dir.as_fd(), kp.name, AtFlags::SYMLINK_NOFOLLOW)
                .ok()
                .filter(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG)
                .map(|st| (st, None, None)),
            Err(e) => return Err(io_err(e, &what)),
        };
        let mut was_latest = false;
        let mut removed = false;
        let mut was_marker = false;
        if let Some(versions) = &versions {
            for marker in [false, true] {
                let file = VersionEntry {
                    name: kp.name,
                    id,
                    marker,
                }
                .file_name();
                let st = match statat(versions, file.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => st,
                    Err(Errno::NOENT) => continue,
                    Err(e) => return Err(io_err(e, &what)),
                };
                if !marker {
                    lock::check_entry_unlocked(versions.as_fd(), &file, bypass, &what)?;
                }
                let latest = match &cur_st {
                    Some((c, _, _)) => !marker && c.st_ino == st.st_ino && c.st_dev == st.st_dev,
                    // No object at the path: a marker is the latest if it
                    // is the newest entry.
                    None if marker => {
                        self.newest_entry(versions, kp.name)?.as_deref() == Some(file.as_str())
                    }
                    None => false,
                };
                match unlinkat(versions, file.as_str(), AtFlags::empty()) {
                    Ok(()) => {}
                    // Removed meanwhile by a concurrent delete, which also
                    // puts the next version back if this was the latest.
                    Err(Errno::NOENT) => continue,
                    Err(e) => return Err(io_err(e, &what)),
                }
                was_latest = latest;
                was_marker |= marker;
                removed = true;
            }
        }
        if !removed {
            // `null` with no entry: the object at the path, if it has no id.
            match &cur_st {
                Some((_, None, fd)) if id == NULL_VERSION => {
                    self.check_path_unlocked(bucket, fd.as_ref(), bypass, &what)?;
                    was_latest = true
                }
                // The object at the path is this version, but its entry is
                // gone (removed by a concurrent delete while it was being
                // made current again): it is still that version.
                Some((_, Some(v), fd)) if v == id => {
                    self.check_path_unlocked(bucket, fd.as_ref(), bypass, &what)?;
                    was_latest = true
                }
                _ => return Ok(false),
            }
        }
        if was_latest {
            if cur_st.is_some() {
                match self.delete_file_at(bucket, key) {
                    // Gone already (a concurrent delete of it).
                    Err(e) if e.code == ErrorCode::NoSuchKey => {}
                    r => r?,
                }
            }
            if let Some(versions) = &versions {
                self.restore_newest(dir.as_fd(), versions, kp.name, &what)?;
            }
        }
        // The last version of the directory's keys: the directory may go.
        if unlinkat(dir.as_fd(), VERSIONS_DIR, AtFlags::REMOVEDIR).is_ok() {
            self.prune(bucket, kp.dir);
        }
        Ok(was_marker)
    }

    /// [`Store::delete_object_version`] if `cond` holds for that version
    /// (else PreconditionFailed). A version's bytes never change under its
    /// id, so the check and the delete need no lock between them; a
    /// version that is not there is deleted whatever the condition, as in
    /// S3.
    pub fn delete_object_version_if(
        &self,
        bucket: &str,
        key: &str,
        id: &str,
        cond: &DeleteCondition,
    ) -> Result<bool> {
        if !cond.is_none() {
            match self.head_object_version(bucket, key, id) {
                Ok(info) => crate::delete_if::check(bucket, key, cond, &info)?,
                Err(e)
                    if matches!(
                        e.code,
                        ErrorCode::NoSuchVersion | ErrorCode::MethodNotAllowed
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        self.delete_version(bucket, key, id, cond.bypass_governance)
    }

    /// The id of the delete marker that is `key`'s latest version, if it
    /// is one (for the `x-amz-delete-marker` of a GET or HEAD that finds
    /// no object); None where the bucket never had versioning.
    pub fn latest_delete_marker(&self, bucket: &str, key: &str) -> Option<String> {
        if self.versioning_of(bucket).unwrap_or(Versioning::Off) == Versioning::Off {
            return None;
        }
        validate_key(key).ok()?;
        let kp = split_key(key);
        let dir = self.key_dir(bucket, kp.dir, key, "").ok()?;
        // An object at the path is the latest; else the newest entry.
        if keep::current_stat(dir.as_fd(), kp.name).ok()?.is_some() {
            return None;
        }
        let versions = self.versions_dir(dir.as_fd(), false).ok()?;
        let newest = history(&versions, kp.name).ok()?.into_iter().next()?;
        newest.marker.then_some(newest.id)
    }

    /// The file name of `name`'s newest entry among `versions`.
    fn newest_entry(&self, versions: &OwnedFd, name: &str) -> Result<Option<String>> {
        Ok(history(versions, name)?.into_iter().next().map(|e| e.file))
    }

    /// Makes `name`'s newest version (unless it is a delete marker) the
    /// object at the key's path, unless a write published one meanwhile.
    fn restore_newest(
        &self,
        dir: BorrowedFd<'_>,
        versions: &OwnedFd,
        name: &str,
        what: &str,
    ) -> Result<()> {
        // Concurrent deletes of this key's versions may remove the entry
        // being restored: then the next newest is, a few times at most.
        for _ in 0..8 {
            let Some(file) = self.newest_entry(versions, name)? else {
                return Ok(());
            };
            if VersionEntry::parse(&file).is_some_and(|v| v.marker) {
                return Ok(());
            }
            // Linked under a temporary name, then renamed onto the key only
            // if nothing is there: a PUT that published meanwhile stays
            // current. Hidden from listings, and short whatever the key's name.
            let tmp = format!(".s3hpc-restore.{}", new_version_id());
            match linkat(versions, file.as_str(), dir, tmp.as_str(), AtFlags::empty()) {
                Ok(()) => {}
                Err(Errno::NOENT) => continue,
                Err(Errno::PERM) => {
                    return Err(s3err!(
                        AccessDenied,
                        "{what}: removed; the version before it ({file}) belongs to another \
                         user and the file system refuses you to make it current \
                         (fs.protected_hardlinks): its owner or root can"
                    ))
                }
                Err(e) => return Err(io_err(e, what)),
            }
            let placed_ino = statat(dir, tmp.as_str(), AtFlags::SYMLINK_NOFOLLOW).map(|s| s.st_ino);
            let placed = renameat_with(dir, tmp.as_str(), dir, name, RenameFlags::NOREPLACE);
            if placed.is_err() {
                let _ = unlinkat(dir, tmp.as_str(), AtFlags::empty());
            }
            match placed {
                Ok(()) => {}
                Err(Errno::EXIST) => return Ok(()),
                Err(e) => return Err(io_err(e, what)),
            }
            // Its entry deleted while it was being placed: the path must not
            // keep a version that no longer exists.
            match statat(versions, file.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
                Err(Errno::NOENT) => {
                    let at_path = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map(|s| s.st_ino);
                    if at_path.is_ok() && at_path == placed_ino {
                        let _ = unlinkat(dir, name, AtFlags::empty());
                    }
                }
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    /// The directory of `key` (`sub` of `bucket`); NoSuchVersion where it
    /// is not there (for a version `id`).
    fn key_dir(
        &self,
        bucket: &str,
        sub: &str,
        key: &str,
        id: &str,
    ) -> Result<std::rc::Rc<OwnedFd>> {
        let rel = dir_rel(bucket, sub);
        match self.dirs.get(self.root_fd.as_fd(), &rel) {
            Ok(d) => Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.head_bucket(bucket)?;
                Err(no_such_version(bucket, key, id))
            }
            Err(e) => Err(S3Error::from_io(&e, &format!("{bucket}/{key}"))),
        }
    }
}

/// One entry of a key's history.
pub(super) struct HistoryEntry {
    id: String,
    marker: bool,
    file: String,
    st: rustix::fs::Stat,
}

/// `name`'s entries among `versions`, newest first (see `history_of`).
fn history(versions: &OwnedFd, name: &str) -> Result<Vec<HistoryEntry>> {
    let what = || format!("the versions of {name}");
    let mut found = Vec::new();
    for e in read_dir(versions).map_err(|e| io_err(e, &what()))? {
        let e = e.map_err(|e| io_err(e, &what()))?;
        let Ok(file) = e.file_name().to_str() else {
            continue;
        };
        if let Some(v) = VersionEntry::parse(file).filter(|v| v.name == name) {
            found.push((v.id.to_string(), v.marker));
        }
    }
    history_of(versions, name, found)
}

/// The entries `found` (id, marker) of `name` among `versions`, newest
/// first. An id carries its time; `null` has none of its own and goes by
/// its file's mtime (the object's write, or the null marker's making).
/// An entry removed since its directory was read is left out.
pub(super) fn history_of(
    versions: &OwnedFd,
    name: &str,
    found: impl IntoIterator<Item = (String, bool)>,
) -> Result<Vec<HistoryEntry>> {
    let what = || format!("the versions of {name}");
    let mut out = Vec::new();
    for (id, marker) in found {
        let file = VersionEntry {
            name,
            id: &id,
            marker,
        }
        .file_name();
        let st = match statat(versions, file.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => continue,
            Err(e) => return Err(io_err(e, &what())),
        };
        let order = match id.as_str() {
            NULL_VERSION => {
                let t = meta::mtime(&st)
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                format!("{:016x}", u64::MAX - t)
            }
            id => id[..16].to_string(),
        };
        out.push((order, id, marker, file, st));
    }
    out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    Ok(out
        .into_iter()
        .map(|(_, id, marker, file, st)| HistoryEntry {
            id,
            marker,
            file,
            st,
        })
        .collect())
}
