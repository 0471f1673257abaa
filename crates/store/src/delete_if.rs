//! Conditional DeleteObject (`If-Match`, `x-amz-if-match-size`,
//! `x-amz-if-match-last-modified-time`): the object goes only if it is the
//! one the conditions describe, decided atomically against other writers.
//!
//! The object is locked as If-Match's PUT locks it (`Store::lock_object`),
//! so conditional writers and deletes of one key are ordered by the lock.
//! Unconditional writers take no lock: to be sure the object unlinked is
//! the one compared, the delete renames it to a hidden temporary name
//! first (taking whatever is at the key in one step) and checks that it
//! took the locked inode; if a writer renamed a newer object in between,
//! that one goes back under its name (unless an even newer one is there)
//! and is compared in turn.

use crate::dirs::DirCache;
use crate::fscalls::{renameat, statat, unlinkat};
use crate::names::{dir_rel, split_key, validate_bucket_name, validate_key};
use crate::*;
use rustix::fs::AtFlags;
use rustix::io::Errno;
use std::os::fd::{AsFd, OwnedFd};
use std::time::UNIX_EPOCH;

/// What a locked delete did.
enum Outcome {
    /// No object at the key.
    Missing,
    /// Deleted; prune from this directory (a key relative to the bucket)
    /// if the directory may now be empty.
    Deleted { prune_from: Option<String> },
}

impl Store {
    /// DeleteObject that deletes only if `cond` holds for the object (see
    /// [`DeleteCondition`]); without conditions, [`Store::delete_object`].
    pub fn delete_object_if(&self, bucket: &str, key: &str, cond: &DeleteCondition) -> Result<()> {
        if cond.is_none() {
            return self.delete_object(bucket, key);
        }
        if self.versioning_of(bucket)? != crate::Versioning::Off {
            return self.delete_object_versioned_if(bucket, key, cond).map(drop);
        }
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        if let Some(done) = self.packed_delete(bucket, key, Some(cond)) {
            return done;
        }
        let rel = dir_rel(bucket, split_key(key).dir);
        let bucket_or_gone = || {
            if self.bucket_exists(bucket) {
                Ok(())
            } else {
                Err(s3err!(NoSuchBucket, "bucket {bucket:?} does not exist"))
            }
        };
        // A second round only when the cached directory turned out stale.
        for _ in 0..2 {
            let dirfd = match self.dirs.get(self.root_fd.as_fd(), &rel) {
                Ok(fd) => fd,
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        || e.raw_os_error() == Some(libc::ENOTDIR) =>
                {
                    return bucket_or_gone()
                }
                Err(e) => return Err(S3Error::from_io(&e, &format!("{bucket}/{key}"))),
            };
            match self.delete_locked(&dirfd, bucket, key, cond)? {
                Outcome::Deleted { prune_from } => {
                    if let Some(dir) = prune_from {
                        self.prune(bucket, &dir);
                    }
                    return Ok(());
                }
                Outcome::Missing
                    if DirCache::is_stale(
                        self.root_fd.as_fd(),
                        &rel,
                        &dirfd,
                        self.profile.shared,
                    ) =>
                {
                    self.dirs.forget(&rel);
                }
                Outcome::Missing => return Ok(()),
            }
        }
        bucket_or_gone()
    }

    /// A conditional DELETE without a version id where the bucket has
    /// versioning: a delete marker if `cond` holds for the current object
    /// (its id returned). The object is locked as for a conditional PUT,
    /// so conditional writers and deletes of the key are ordered; an
    /// unconditional PUT between the check and the marker is hidden by the
    /// marker (its version stays). With a delete marker as the latest,
    /// only `If-Match: *` holds, as in S3; a key with no versions at all is
    /// deleted whatever the conditions.
    pub fn delete_object_versioned_if(
        &self,
        bucket: &str,
        key: &str,
        cond: &DeleteCondition,
    ) -> Result<Option<String>> {
        if cond.is_none() || self.versioning_of(bucket)? == crate::Versioning::Off {
            return self.delete_object_if(bucket, key, cond).map(|()| None);
        }
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        let rel = dir_rel(bucket, split_key(key).dir);
        let dirfd = match self.dirs.get(self.root_fd.as_fd(), &rel) {
            Ok(fd) => fd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.head_bucket(bucket)?;
                return Ok(None);
            }
            Err(e) => return Err(S3Error::from_io(&e, &format!("{bucket}/{key}"))),
        };
        let Some(locked) = self.lock_object(&dirfd, bucket, key)? else {
            let any = cond.etag.as_deref() == Some("*")
                && cond.size.is_none()
                && cond.last_modified.is_none();
            if !any && self.latest_delete_marker(bucket, key).is_some() {
                return Err(s3err!(
                    PreconditionFailed,
                    "{bucket}/{key} is deleted (its latest version is a delete marker), so \
                     only If-Match: * holds"
                ));
            }
            return Ok(None);
        };
        check(bucket, key, cond, &locked.info)?;
        let marker = self.delete_object_versioned(bucket, key)?;
        drop(locked);
        Ok(marker)
    }

    fn delete_locked(
        &self,
        dirfd: &OwnedFd,
        bucket: &str,
        key: &str,
        cond: &DeleteCondition,
    ) -> Result<Outcome> {
        let what = || format!("{bucket}/{key}");
        let io = |e: Errno| S3Error::from_io(&e.into(), &what());
        let mut tmp = String::new();
        for _ in 0..1000 {
            let Some(locked) = self.lock_object(dirfd, bucket, key)? else {
                return Ok(Outcome::Missing);
            };
            check(bucket, key, cond, &locked.info)?;
            let d: &OwnedFd = locked.sub.as_deref().unwrap_or(dirfd);
            self.temps.next_for(locked.name, &mut tmp);
            match renameat(d, locked.name, d, tmp.as_str()) {
                Ok(()) => {}
                // Deleted meanwhile by an unconditional delete.
                Err(Errno::NOENT) => continue,
                Err(e) => return Err(io(e)),
            }
            let taken = statat(d, tmp.as_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(io)?;
            if taken.st_ino == locked.st.st_ino && taken.st_dev == locked.st.st_dev {
                unlinkat(d, tmp.as_str(), AtFlags::empty()).map_err(io)?;
                let prune_from = match &locked.sub {
                    Some(_) => key.to_string(),
                    None => split_key(key).dir.to_string(),
                };
                let may_be_empty = self.may_be_empty(d.as_fd());
                return Ok(Outcome::Deleted {
                    prune_from: may_be_empty.then_some(prune_from),
                });
            }
            // A writer replaced the object after it was compared: put the
            // newer one back, unless a newer still holds the name (then
            // the one taken was overwritten anyway), and compare again.
            if let Err(Errno::EXIST) = self.create_from(d, &tmp, locked.name) {
                let _ = unlinkat(d, tmp.as_str(), AtFlags::empty());
            }
        }
        Err(s3err!(
            ServiceUnavailable,
            "{}: the object kept being replaced during a conditional delete; retry",
            what()
        ))
    }
}

/// Whether every condition holds for `info`; PreconditionFailed naming the
/// first that does not.
pub(crate) fn check(
    bucket: &str,
    key: &str,
    cond: &DeleteCondition,
    info: &ObjectInfo,
) -> Result<()> {
    let failed = |what: String| {
        Err(s3err!(
            PreconditionFailed,
            "{bucket}/{key} {what}, so the conditional delete left it in place (read the \
             object again and retry with its current values)"
        ))
    };
    if let Some(want) = &cond.etag {
        if !crate::put::etag_matches(want, &info.etag) {
            return failed(format!("has ETag {}, not {want}", info.etag));
        }
    }
    if let Some(size) = cond.size {
        if size != info.size {
            return failed(format!("has {} bytes, not {size}", info.size));
        }
    }
    if let Some(t) = cond.last_modified {
        let secs =
            |t: std::time::SystemTime| t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if secs(t) != secs(info.last_modified) {
            return failed(format!(
                "was last modified at {} s after the epoch, not {}",
                secs(info.last_modified),
                secs(t)
            ));
        }
    }
    Ok(())
}
