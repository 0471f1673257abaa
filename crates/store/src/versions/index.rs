//! A directory's `.s3hpc-versions` as a sorted index: its entries by
//! (name, id), read once and kept while the directory's stamp shows no
//! change, under the same rules as the listing's windows (`list::window`).
//! A page of ListObjectVersions then reads each versions directory it
//! touches at most once, and on a file system whose stamps can be trusted
//! not at all while nothing changed, instead of once per key.

use super::{VersionEntry, VERSIONS_DIR};
use crate::fscalls::{fstat, fstat_fresh, openat, read_dir};
use crate::list::DirStamp;
use crate::probe::FsProfile;
use rustix::fs::{Mode, OFlags};
use std::collections::HashMap;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Versions directories whose indexes stay cached...
const CACHED_INDEXES: usize = 64;
/// ...holding at most this many entries together (about 200 MiB).
const CACHED_ENTRIES: usize = 4 << 20;

/// One entry of a versions directory.
pub(crate) struct IndexEntry {
    /// The key's last segment.
    pub name: Box<str>,
    pub id: Box<str>,
    pub marker: bool,
}

/// The entries of one versions directory, sorted by (name, id).
#[derive(Default)]
pub(crate) struct VersionsIndex {
    entries: Vec<IndexEntry>,
}

impl VersionsIndex {
    fn read(versions: BorrowedFd<'_>) -> std::io::Result<VersionsIndex> {
        let mut entries = Vec::new();
        for e in read_dir(versions)? {
            let e = e?;
            let Ok(file) = e.file_name().to_str() else {
                continue;
            };
            if let Some(v) = VersionEntry::parse(file) {
                entries.push(IndexEntry {
                    name: v.name.into(),
                    id: v.id.into(),
                    marker: v.marker,
                });
            }
        }
        entries.sort_unstable_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
        Ok(VersionsIndex { entries })
    }

    /// The entries of key segment `name` (in id order).
    pub fn of_name(&self, name: &str) -> &[IndexEntry] {
        let start = self.entries.partition_point(|e| &*e.name < name);
        let end = start + self.entries[start..].partition_point(|e| &*e.name == name);
        &self.entries[start..end]
    }

    /// The distinct names from the first at or after `from`, in order.
    pub fn names_from<'a>(&'a self, from: &str) -> impl Iterator<Item = &'a str> + 'a {
        let start = self.entries.partition_point(|e| &*e.name < from);
        let mut last: Option<&str> = None;
        self.entries[start..].iter().filter_map(move |e| {
            let fresh = last != Some(&*e.name);
            last = Some(&e.name);
            fresh.then_some(&*e.name)
        })
    }

    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// A key directory's versions: its versions directory, open, and its
/// index.
pub(crate) struct DirVersions {
    pub versions: OwnedFd,
    pub index: Arc<VersionsIndex>,
}

/// The indexes recently read, by the versions directory's path below the
/// data root.
#[derive(Default)]
pub(crate) struct IndexCache(Mutex<HashMap<String, (DirStamp, Arc<VersionsIndex>)>>);

impl IndexCache {
    /// The versions of directory `dir` (at `rel`), None if it has none:
    /// the cached index where the versions directory's stamp is what it
    /// was when the index was read, else a fresh read (cached where the
    /// stamp can be trusted, see `DirStamp::settled`).
    pub fn versions_of(
        &self,
        profile: &FsProfile,
        dir: BorrowedFd<'_>,
        rel: &str,
    ) -> std::io::Result<Option<DirVersions>> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let versions = match openat(dir, VERSIONS_DIR, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        // A stamp only where it follows every change (as for listings).
        let stamp = match (profile.shared, profile.coherent_dir_stamps) {
            (false, _) => Some(DirStamp::of(&fstat(&versions)?)),
            (true, true) => Some(DirStamp::of(&fstat_fresh(&versions)?)),
            (true, false) => None,
        };
        if let Some(stamp) = stamp {
            if let Some((s, index)) = self.0.lock().unwrap().get(rel) {
                if *s == stamp {
                    let index = index.clone();
                    return Ok(Some(DirVersions { versions, index }));
                }
            }
        }
        let read_at = SystemTime::now();
        let index = Arc::new(VersionsIndex::read(std::os::fd::AsFd::as_fd(&versions))?);
        if let Some(stamp) = stamp.filter(|s| s.settled(read_at, profile.shared)) {
            self.put(rel, stamp, index.clone());
        }
        Ok(Some(DirVersions { versions, index }))
    }

    fn put(&self, rel: &str, stamp: DirStamp, index: Arc<VersionsIndex>) {
        if index.len() > CACHED_ENTRIES {
            return;
        }
        let mut cache = self.0.lock().unwrap();
        cache.remove(rel);
        // Room by dropping others, largest first (they cost most to hold).
        let mut held: usize = cache.values().map(|(_, i)| i.len()).sum();
        while cache.len() >= CACHED_INDEXES || held + index.len() > CACHED_ENTRIES {
            let Some(largest) = cache
                .iter()
                .max_by_key(|(_, (_, i))| i.len())
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((_, i)) = cache.remove(&largest) {
                held -= i.len();
            }
        }
        cache.insert(rel.to_string(), (stamp, index));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(files: &[&str]) -> VersionsIndex {
        let mut entries: Vec<IndexEntry> = files
            .iter()
            .filter_map(|f| VersionEntry::parse(f))
            .map(|v| IndexEntry {
                name: v.name.into(),
                id: v.id.into(),
                marker: v.marker,
            })
            .collect();
        entries.sort_unstable_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
        VersionsIndex { entries }
    }

    #[test]
    fn names_come_once_each_in_key_order_and_a_name_finds_its_entries() {
        let id = |n: u8| format!("{:020x}", n);
        let files = [
            format!("b~{}", id(2)),
            format!("a.b~{}", id(1)),
            format!("b~{}.marker", id(1)),
            format!("a~{}", id(3)),
            "b~null".to_string(),
            "junk".to_string(),
        ];
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        let ix = index(&files);
        assert_eq!(ix.names_from("").collect::<Vec<_>>(), ["a", "a.b", "b"]);
        assert_eq!(ix.names_from("a.").collect::<Vec<_>>(), ["a.b", "b"]);
        assert_eq!(ix.names_from("c").count(), 0);
        let b: Vec<(&str, bool)> = ix.of_name("b").iter().map(|e| (&*e.id, e.marker)).collect();
        assert_eq!(b.len(), 3);
        assert!(b.contains(&(id(1).as_str(), true)) && b.contains(&("null", false)));
        assert!(ix.of_name("c").is_empty() && ix.of_name("a.").is_empty());
        assert_eq!(&*ix.of_name("a")[0].id, id(3));
    }
}
