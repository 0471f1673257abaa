//! Buckets: directories directly under the data root.

use crate::fscalls::{mkdirat, read_dir, statat, statx, unlinkat};
use crate::names::{is_reserved, validate_bucket_name};
use crate::*;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::fs::{Statx, StatxFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

impl Store {
    /// Creates a bucket with the default layout (see
    /// [`Store::set_default_layout`]).
    pub fn create_bucket(&self, bucket: &str) -> Result<()> {
        self.create_bucket_with(bucket, self.default_layout())
    }

    /// Makes the bucket's directory.
    pub(crate) fn make_bucket(&self, bucket: &str) -> Result<()> {
        validate_bucket_name(bucket)?;
        match mkdirat(&self.root_fd, bucket, Mode::from_bits_truncate(0o777)) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => match statat(&self.root_fd, bucket, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
                    // Whose it is: the directory's owner against the uid
                    // this thread acts as (credentials are per thread).
                    if st.st_uid == rustix::process::geteuid().as_raw() {
                        Err(s3err!(
                            BucketAlreadyOwnedByYou,
                            "bucket {bucket:?} already exists and is yours"
                        ))
                    } else {
                        Err(s3err!(
                            BucketAlreadyExists,
                            "bucket {bucket:?} already exists and belongs to another user \
                             (uid {}); bucket names are shared by all users: pick another",
                            st.st_uid
                        ))
                    }
                }
                _ => Err(s3err!(
                    InvalidBucketName,
                    "{bucket:?} names a file, not a directory, in the data root; pick another name"
                )),
            },
            Err(e) => Err(S3Error::from_io(&e.into(), &format!("bucket {bucket}"))),
        }
    }

    pub fn head_bucket(&self, bucket: &str) -> Result<()> {
        validate_bucket_name(bucket)?;
        if self.bucket_exists(bucket) {
            Ok(())
        } else {
            Err(s3err!(NoSuchBucket, "bucket {bucket:?} does not exist"))
        }
    }

    /// Deletes a bucket that holds no objects. Empty directories and the
    /// engine's own hidden files (temporaries, abandoned uploads) go with it;
    /// anything else that is not an object (a symlink, a socket) keeps the
    /// bucket, with an error saying so.
    pub fn delete_bucket(&self, bucket: &str) -> Result<()> {
        self.head_bucket(bucket)?;
        let probe = ListRequest {
            max_keys: 1,
            ..Default::default()
        };
        if !self.list_objects(bucket, &probe)?.objects.is_empty() {
            return Err(s3err!(
                BucketNotEmpty,
                "bucket {bucket:?} still holds objects; delete them first"
            ));
        }
        let what = format!("bucket {bucket}");
        let fd = self
            .open_listing(bucket)
            .map_err(|e| S3Error::from_io(&e, &what))?;
        clear_non_objects(&fd, false);
        self.dirs.forget_tree(bucket);
        self.forget_layout(bucket);
        match unlinkat(&self.root_fd, bucket, AtFlags::REMOVEDIR) {
            Ok(()) => Ok(()),
            Err(Errno::NOTEMPTY | Errno::EXIST) if holds_versions(&fd) => Err(s3err!(
                BucketNotEmpty,
                "bucket {bucket:?} still holds versions of objects (or delete markers); \
                 delete every version first (ListObjectVersions lists them)"
            )),
            Err(Errno::NOTEMPTY | Errno::EXIST) => Err(s3err!(
                BucketNotEmpty,
                "bucket {bucket:?} holds no objects but other entries (symlinks or special \
                 files) remain in {}; remove them on the file system",
                self.root.join(bucket).display()
            )),
            Err(e) => Err(S3Error::from_io(&e.into(), &what)),
        }
    }

    /// Every directory under the data root whose name is a valid bucket name,
    /// including ones made by other tools, sorted by name.
    pub fn list_buckets(&self) -> Result<Vec<BucketInfo>> {
        let what = format!("data root {}", self.root.display());
        let fd = self
            .open_listing("")
            .map_err(|e| S3Error::from_io(&e, &what))?;
        let mut out = Vec::new();
        for entry in read_dir(&fd).map_err(|e| S3Error::from_io(&e.into(), &what))? {
            let Ok(entry) = entry else { continue };
            let Ok(name) = entry.file_name().to_str() else {
                continue;
            };
            if validate_bucket_name(name).is_err() {
                continue;
            }
            let Ok(st) = statx(
                &fd,
                name,
                AtFlags::SYMLINK_NOFOLLOW,
                StatxFlags::BASIC_STATS | StatxFlags::BTIME,
            ) else {
                continue;
            };
            if FileType::from_raw_mode(st.stx_mode.into()) == FileType::Directory {
                out.push(BucketInfo {
                    name: name.to_string(),
                    created: created(&st),
                    owner: Some(st.stx_uid),
                });
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

/// A bucket's creation time: the directory's birth time where the file
/// system records one, else its last change (mtime moves with every key
/// written at the bucket's top level).
fn created(st: &Statx) -> SystemTime {
    let t = if st.stx_mask & StatxFlags::BTIME.bits() != 0 {
        st.stx_btime
    } else {
        st.stx_mtime
    };
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    UNIX_EPOCH + Duration::new(secs, t.tv_nsec)
}

/// Whether a versions directory is left anywhere below `dir`.
fn holds_versions(dir: &OwnedFd) -> bool {
    let Ok(entries) = read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            return false;
        }
        if name.to_bytes() == crate::VERSIONS_DIR.as_bytes() {
            return true;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        crate::fscalls::openat(dir.as_fd(), name, flags, Mode::empty())
            .is_ok_and(|sub| crate::deep::grow(|| holds_versions(&sub)))
    })
}

/// Removes, below `dir`, the engine's hidden entries (all of a hidden
/// directory's content) and directories that end up empty; leaves everything
/// else.
fn clear_non_objects(dir: &OwnedFd, hidden: bool) {
    let Ok(entries) = read_dir(dir) else {
        return;
    };
    let names: Vec<(std::ffi::CString, FileType)> = entries
        .flatten()
        .map(|e| (e.file_name().to_owned(), e.file_type()))
        .filter(|(n, _)| n.as_bytes() != b"." && n.as_bytes() != b"..")
        .collect();
    for (name, ft) in names {
        let ft = if ft == FileType::Unknown {
            match statat(dir, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => FileType::from_raw_mode(st.st_mode),
                Err(_) => continue,
            }
        } else {
            ft
        };
        if ft == FileType::Directory && name.as_bytes() == crate::VERSIONS_DIR.as_bytes() {
            // Objects' versions: a bucket that holds any is not empty (an
            // empty versions directory goes).
            let _ = unlinkat(dir, name.as_c_str(), AtFlags::REMOVEDIR);
            continue;
        }
        if ft == FileType::Directory {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            if let Ok(sub) =
                crate::fscalls::openat(dir.as_fd(), name.as_c_str(), flags, Mode::empty())
            {
                let hidden = hidden || is_reserved(name.as_bytes());
                crate::deep::grow(|| clear_non_objects(&sub, hidden));
            }
            let _ = unlinkat(dir, name.as_c_str(), AtFlags::REMOVEDIR);
        } else if hidden || is_reserved(name.as_bytes()) {
            let _ = unlinkat(dir, name.as_c_str(), AtFlags::empty());
        }
    }
}
