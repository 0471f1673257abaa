//! ListObjectVersions over a bucket: every key that has a current object
//! or a version, in key order, each key's versions the latest first, then
//! newest first; paged by an exact (key, version id) position.
//!
//! This first form walks the bucket for each page (the current objects as
//! ListObjectsV2 lists them, plus the names in every `.s3hpc-versions`),
//! so a page costs a walk of the bucket; the design's windowed walk (one
//! more directory read per directory of the page) is still to come.

use super::*;
use crate::fscalls::{openat, read_dir};
use crate::names::{is_reserved, DIR_ENTRY};
use rustix::fs::{FileType, Mode, OFlags};
use std::collections::BTreeSet;
use std::os::fd::{AsFd, BorrowedFd};

/// What ListObjectVersions asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionsRequest {
    pub prefix: String,
    pub delimiter: Option<String>,
    /// Only keys after it (and, with `version_id_marker`, this key's
    /// versions after that one).
    pub key_marker: Option<String>,
    pub version_id_marker: Option<String>,
    /// Capped at 1000; 0 means 1000.
    pub max_keys: usize,
}

/// One page of ListObjectVersions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionsPage {
    /// (key, version), in order.
    pub versions: Vec<(String, KeyVersion)>,
    pub common_prefixes: Vec<String>,
    pub is_truncated: bool,
    pub next_key_marker: Option<String>,
    pub next_version_id_marker: Option<String>,
}

impl Store {
    pub fn list_object_versions(
        &self,
        bucket: &str,
        req: &VersionsRequest,
    ) -> Result<VersionsPage> {
        validate_bucket_name(bucket)?;
        let max = match req.max_keys {
            0 => 1000,
            n => n.min(1000),
        };
        let mut keys = BTreeSet::new();
        // A packed bucket keeps one version of each key: its objects; so
        // does a bucket that never had versioning (no versions directory
        // is made before it is enabled), at a listing's cost.
        let one_each = self.packed(bucket).is_some()
            || self.versioning_of(bucket).unwrap_or(Versioning::Enabled) == Versioning::Off;
        let mut objects = std::collections::HashMap::new();
        // The current objects, as a listing gives them.
        let mut list = ListRequest {
            prefix: req.prefix.clone(),
            max_keys: 1000,
            ..Default::default()
        };
        loop {
            let page = self.list_objects(bucket, &list)?;
            for o in page.objects {
                keys.insert(o.key.clone());
                if one_each {
                    objects.insert(o.key.clone(), o);
                }
            }
            match page.next_token {
                Some(t) if page.is_truncated => list.continuation_token = Some(t),
                _ => break,
            }
        }
        // Keys whose latest version is a marker have no object: their
        // names are only among the versions.
        if !one_each {
            let root = self
                .open_listing(bucket)
                .map_err(|e| S3Error::from_io(&e, &format!("bucket {bucket}")))?;
            names_with_versions(root.as_fd(), "", &req.prefix, &mut keys);
        }

        let mut page = VersionsPage::default();
        let mut count = 0;
        let after_key = req.key_marker.as_deref().unwrap_or("");
        for key in keys.iter().filter(|k| k.starts_with(&req.prefix)) {
            if key.as_str() < after_key || (key == after_key && req.version_id_marker.is_none()) {
                continue;
            }
            if let Some(d) = req.delimiter.as_deref().filter(|d| !d.is_empty()) {
                if let Some(i) = key[req.prefix.len()..].find(d) {
                    let cp = &key[..req.prefix.len() + i + d.len()];
                    if page.common_prefixes.last().map(String::as_str) != Some(cp) && cp > after_key
                    {
                        if count == max {
                            page.is_truncated = true;
                            break;
                        }
                        page.common_prefixes.push(cp.to_string());
                        page.next_key_marker = Some(cp.to_string());
                        page.next_version_id_marker = None;
                        count += 1;
                    }
                    continue;
                }
            }
            let mut versions = match objects.remove(key) {
                Some(info) => vec![KeyVersion::null_latest(info)],
                None if one_each => Vec::new(),
                None => self.list_key_versions(bucket, key)?,
            };
            if key == after_key {
                // Continue after the marker's version.
                let marker = req.version_id_marker.as_deref().unwrap_or_default();
                match versions.iter().position(|v| v.version_id == marker) {
                    Some(i) => drop(versions.drain(..=i)),
                    None => versions.clear(),
                }
            }
            for v in versions {
                if count == max {
                    page.is_truncated = true;
                    break;
                }
                page.next_key_marker = Some(key.clone());
                page.next_version_id_marker = Some(v.version_id.clone());
                page.versions.push((key.clone(), v));
                count += 1;
            }
            if page.is_truncated {
                break;
            }
        }
        if !page.is_truncated {
            page.next_key_marker = None;
            page.next_version_id_marker = None;
        }
        Ok(page)
    }
}

/// Adds the keys named in every `.s3hpc-versions` below `dir` (whose keys
/// start with `path`) that could start with `prefix`.
fn names_with_versions(dir: BorrowedFd<'_>, path: &str, prefix: &str, keys: &mut BTreeSet<String>) {
    let Ok(entries) = read_dir(dir) else {
        return;
    };
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    for e in entries.flatten() {
        let Ok(name) = e.file_name().to_str() else {
            continue;
        };
        if name == "." || name == ".." {
            continue;
        }
        if name == VERSIONS_DIR {
            let Ok(versions) = openat(dir, name, flags, Mode::empty()) else {
                continue;
            };
            let Ok(entries) = read_dir(&versions) else {
                continue;
            };
            for v in entries.flatten() {
                if let Some(v) = v.file_name().to_str().ok().and_then(VersionEntry::parse) {
                    // A folder key (`a/`) is its directory's own entry.
                    let key = match v.name {
                        DIR_ENTRY => path.to_string(),
                        name => format!("{path}{name}"),
                    };
                    if key.starts_with(prefix) {
                        keys.insert(key);
                    }
                }
            }
            continue;
        }
        if is_reserved(name.as_bytes()) {
            continue;
        }
        let is_dir = match e.file_type() {
            FileType::Directory => true,
            FileType::Unknown => openat(dir, name, flags, Mode::empty()).is_ok(),
            _ => false,
        };
        let sub = format!("{path}{name}/");
        // Only directories a key of the prefix can be under.
        if is_dir && (sub.starts_with(prefix) || prefix.starts_with(&sub)) {
            if let Ok(fd) = openat(dir, name, flags, Mode::empty()) {
                names_with_versions(fd.as_fd(), &sub, prefix, keys);
            }
        }
    }
}
