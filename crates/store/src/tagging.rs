//! Object tags: kept in the object's metadata attribute beside its content
//! type and user metadata, so they go wherever the object goes (copies take
//! them along) and vanish with it.

use crate::meta::{self, StoredMeta};
use crate::names::dir_rel;
use crate::names::{split_key, validate_bucket_name, validate_key};
use crate::*;
use rustix::fs::{fstat, openat, Mode, OFlags};
use std::collections::BTreeMap;
use std::os::fd::OwnedFd;

impl Store {
    /// The object's tags (empty when it has none).
    pub fn get_object_tagging(&self, bucket: &str, key: &str) -> Result<BTreeMap<String, String>> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        if let Some(tags) = self.packed_tags(bucket, key) {
            return tags;
        }
        let (fd, st) = self.open_for_tags(bucket, key)?;
        Ok(if meta::has_meta(&st) {
            read_meta(&fd, bucket, key)?.tags
        } else {
            BTreeMap::new()
        })
    }

    /// Replaces the object's tags (S3 limits: 10 tags, keys up to 128 and
    /// values up to 256 characters). The data, ETag and other metadata stay.
    pub fn put_object_tagging(
        &self,
        bucket: &str,
        key: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<()> {
        meta::validate_tags(tags)?;
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        if let Some(done) = self.packed_set_tags(bucket, key, tags) {
            return done;
        }
        let (fd, st) = self.open_for_tags(bucket, key)?;
        let mut stored = if meta::has_meta(&st) {
            read_meta(&fd, bucket, key)?
        } else {
            StoredMeta::default()
        };
        if stored.tags == *tags {
            return Ok(());
        }
        stored.tags = tags.clone();
        crate::versions::rewrite_meta(&fd, &stored, &format!("{bucket}/{key}"))
    }

    /// Removes every tag of the object.
    pub fn delete_object_tagging(&self, bucket: &str, key: &str) -> Result<()> {
        self.put_object_tagging(bucket, key, &BTreeMap::new())
    }

    fn open_for_tags(&self, bucket: &str, key: &str) -> Result<(OwnedFd, rustix::fs::Stat)> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        let kp = split_key(key);
        let rel = dir_rel(bucket, kp.dir);
        let fd = self
            .in_dir(&rel, |d| {
                Ok(openat(
                    d,
                    kp.name,
                    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
                    Mode::empty(),
                )?)
            })
            .map_err(|e| self.missing(bucket, key, e))?;
        let st = fstat(&fd).map_err(|e| S3Error::from_io(&e.into(), key))?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(s3err!(NoSuchKey, "no object {key:?} in bucket {bucket:?}"));
        }
        Ok((fd, st))
    }
}

/// The object's metadata attribute; a failed read is an error, never
/// "no metadata" (writing that back would lose the ETag and checksum).
fn read_meta(fd: &OwnedFd, bucket: &str, key: &str) -> Result<StoredMeta> {
    StoredMeta::read_from(fd)
        .map_err(|e| crate::S3Error::from_io(&e, &format!("{bucket}/{key}: reading its metadata")))
}
