//! Listing with S3 semantics over a directory tree.
//!
//! S3 orders keys by their UTF-8 bytes as whole strings, not per directory:
//! `a/b` sorts after `a-b` and `a.b` and before `a0`. A directory `d` holds
//! exactly the keys that start with `d/`, so sorting each directory's entries
//! by `name` for files and `name/` for directories, and walking depth-first,
//! yields keys in S3 order. Resuming (start-after, continuation) binary-searches
//! each directory instead of scanning it.
//!
//! Paging through a directory of N entries would otherwise read and sort all
//! N for every page of 1000. A small cache keeps the sorted entries of recently
//! listed directories, trusted only while the directory's change times are
//! unchanged and were already older than the timestamp granularity when the
//! entries were read (the "racy timestamp" rule), so a later change is never missed.

use crate::fscalls::{fstat, openat, read_dir, statat, unlinkat};
use crate::meta::{self, StoredMeta};
use crate::names::dir_rel;
use crate::names::{is_reserved, validate_path, DIR_ENTRY, SELF_ENTRY};
use crate::*;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

const MAX_KEYS: usize = 1000;
/// A listing snapshot is trusted only if the directory was last changed at
/// least this long before the snapshot was read.
const RACY_MARGIN: Duration = Duration::from_millis(50);
const CACHED_DIRS: usize = 16;

/// One directory entry, by the key fragment it sorts as.
struct Entry {
    sort_key: Box<str>,
    kind: Kind,
    /// A file's attributes taken as the directory was read, where the file
    /// system answers that from the readdir (`FsProfile::stat_with_readdir`).
    /// Never kept in the listing cache.
    stat: Option<Box<Stat>>,
}

/// Which files of a directory to stat while reading it: those the page
/// being listed may return, at most `budget` of them.
struct StatAhead<'a> {
    key_prefix: &'a str,
    filter: &'a str,
    after: Option<&'a str>,
    budget: usize,
}

impl StatAhead<'_> {
    fn wants(&mut self, name: &str) -> bool {
        if self.budget == 0 || !name.starts_with(self.filter) {
            return false;
        }
        if let Some(after) = self.after {
            // The key is key_prefix + name; compare without building it.
            let key = self.key_prefix.bytes().chain(name.bytes());
            if key.cmp(after.bytes()) != std::cmp::Ordering::Greater {
                return false;
            }
        }
        self.budget -= 1;
        true
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A plain file: key fragment `name`.
    File,
    /// A directory: the keys below it start with `name/`.
    Dir,
    /// The object a directory may hold as its self-entry: key fragment
    /// `name` (known to exist only once looked up).
    DirSelf,
    /// This directory's own folder marker: key fragment `""`.
    Marker,
}

impl Entry {
    fn name(&self) -> &str {
        self.sort_key.strip_suffix('/').unwrap_or(&self.sort_key)
    }

    fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }
}

struct Snapshot {
    rel: String,
    /// Who read it (`identity::acting_id`): served to that identity only,
    /// as another may not be allowed to read the directory.
    who: u64,
    stamp: DirStamp,
    entries: Arc<Vec<Entry>>,
}

/// What identifies a directory's content version.
#[derive(Clone, Copy, PartialEq, Eq)]
struct DirStamp {
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    size: i64,
}

impl DirStamp {
    fn of(st: &Stat) -> DirStamp {
        DirStamp {
            ino: st.st_ino,
            mtime: (st.st_mtime, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime, st.st_ctime_nsec as i64),
            size: st.st_size,
        }
    }
}

pub(crate) struct ListingCache {
    recent: Mutex<VecDeque<Snapshot>>,
}

impl ListingCache {
    pub fn new() -> Self {
        ListingCache {
            recent: Mutex::new(VecDeque::new()),
        }
    }
}

/// Where a listing resumes.
struct Resume {
    /// Only keys strictly greater than this.
    after: Option<String>,
    /// Skip every key under this common prefix (resuming after a prefix).
    skip_prefix: Option<String>,
}

fn decode_token(token: &str) -> Result<Resume> {
    let bad = || {
        s3err!(InvalidArgument, "the continuation token {token:?} is not one this server issued; restart the listing without it")
    };
    let (kind, rest) = token.split_at_checked(2).ok_or_else(bad)?;
    match kind {
        "k:" => Ok(Resume {
            after: Some(rest.to_string()),
            skip_prefix: None,
        }),
        "p:" => Ok(Resume {
            after: Some(rest.to_string()),
            skip_prefix: Some(rest.to_string()),
        }),
        _ => Err(bad()),
    }
}

struct Walk<'a> {
    store: &'a Store,
    prefix: &'a str,
    delimiter: Option<&'a str>,
    resume: Resume,
    max: usize,
    page: ListPage,
    /// The last emitted item, as a token.
    last: Option<String>,
}

/// Whether the walk should go on.
type Flow = std::ops::ControlFlow<()>;

impl Store {
    pub fn list_objects(&self, bucket: &str, req: &ListRequest) -> Result<ListPage> {
        self.head_bucket(bucket)?;
        let delimiter = req.delimiter.as_deref().filter(|d| !d.is_empty());
        let resume = match (&req.continuation_token, &req.start_after) {
            (Some(t), _) if !t.is_empty() => decode_token(t)?,
            (_, Some(a)) if !a.is_empty() => {
                // A v1 marker that is a common prefix (as NextMarker returns)
                // resumes after everything rolled up in it.
                // It is one if the first delimiter after the prefix ends it.
                let is_cp = delimiter.is_some_and(|d| {
                    a.strip_prefix(req.prefix.as_str())
                        .and_then(|rest| rest.find(d))
                        .is_some_and(|i| req.prefix.len() + i + d.len() == a.len())
                });
                Resume {
                    after: Some(a.clone()),
                    skip_prefix: is_cp.then(|| a.clone()),
                }
            }
            _ => Resume {
                after: None,
                skip_prefix: None,
            },
        };
        let max = if req.max_keys == 0 {
            MAX_KEYS
        } else {
            req.max_keys.min(MAX_KEYS)
        };
        let mut walk = Walk {
            store: self,
            prefix: &req.prefix,
            delimiter,
            resume,
            max,
            page: ListPage::default(),
            last: None,
        };
        // Start in the deepest directory the prefix names entirely.
        let (dir, filter) = match req.prefix.rfind('/') {
            Some(i) => (&req.prefix[..i], &req.prefix[i + 1..]),
            None => ("", req.prefix.as_str()),
        };
        // No object can have such a prefix. A prefix with a '/' needs a valid
        // directory part: "/" or "/a" would otherwise list the bucket's root.
        if req.prefix.contains('/') && (dir.is_empty() || validate_path(dir, dir).is_err()) {
            return Ok(walk.page);
        }
        let key_prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let _ = walk.visit(&dir_rel(bucket, dir), &key_prefix, filter);
        if walk.page.is_truncated {
            walk.page.next_token = walk.last.take();
        }
        Ok(walk.page)
    }

    /// The (cached) fd of directory `rel` and its sorted entries, from the
    /// listing cache when still valid.
    fn sorted_entries(
        &self,
        rel: &str,
        ahead: Option<StatAhead<'_>>,
    ) -> Option<(Rc<OwnedFd>, Arc<Vec<Entry>>)> {
        if self.profile.shared {
            // No cache to validate (see below), so no cached handle to
            // check either: one fresh resolution of the path, used both
            // to read the entries and to stat them.
            let dirfd = Rc::new(self.open_listing(rel).ok()?);
            let ahead = ahead.filter(|_| self.profile.stat_with_readdir);
            let (entries, seen) = read_sorted(&dirfd, ahead)?;
            if seen == 0 {
                self.remove_empty(rel);
            }
            return Some((dirfd, Arc::new(entries)));
        }
        let mut fd = self.dirs.get(self.root_fd.as_fd(), rel).ok()?;
        let mut st = fstat(&fd).ok()?;
        if st.st_nlink == 0 {
            // Removed since cached (by another process); resolve it again.
            self.dirs.forget(rel);
            fd = self.dirs.get(self.root_fd.as_fd(), rel).ok()?;
            st = fstat(&fd).ok()?;
        }
        let stamp = DirStamp::of(&st);
        // The cache trusts the directory's time stamps. On a shared file
        // system those come from this client's attribute cache and the
        // server's clock, and another node's change can leave them as they
        // were (issue 16: 93 of 100 new keys missing on GlusterFS), so
        // listings there always read the directory.
        let who = crate::identity::acting_id();
        {
            let recent = self.listings.recent.lock().unwrap();
            if let Some(s) = recent
                .iter()
                .find(|s| s.rel == rel && s.who == who && s.stamp == stamp)
            {
                return Some((fd, s.entries.clone()));
            }
        }
        let read_at = SystemTime::now();
        let dirfd = self.open_listing(rel).ok()?;
        let entries = Arc::new(read_sorted(&dirfd, None)?.0);
        let changed = SystemTime::UNIX_EPOCH
            + Duration::new(stamp.mtime.0.max(stamp.ctime.0) as u64, 0)
            + Duration::from_nanos(if stamp.mtime.0 >= stamp.ctime.0 {
                stamp.mtime.1
            } else {
                stamp.ctime.1
            } as u64);
        if read_at
            .duration_since(changed)
            .is_ok_and(|age| age >= RACY_MARGIN)
        {
            let mut recent = self.listings.recent.lock().unwrap();
            recent.retain(|s| s.rel != rel || s.who != who);
            if recent.len() >= CACHED_DIRS {
                recent.pop_front();
            }
            recent.push_back(Snapshot {
                rel: rel.to_string(),
                who,
                stamp,
                entries: entries.clone(),
            });
        }
        Some((fd, entries))
    }

    /// Removes directory `rel` (below a bucket), which a listing just read
    /// with no entry at all: on a shared file system a DELETE leaves the
    /// directory it emptied (`Store::may_be_empty`). The rmdir is the
    /// arbiter: it fails if another writer put something in since, and a
    /// writer whose directory goes makes it again (`in_write_dir`).
    fn remove_empty(&self, rel: &str) {
        let Some((parent, name)) = rel.rsplit_once('/') else {
            return; // the bucket itself
        };
        if self
            .in_dir(parent, |p| Ok(unlinkat(p, name, AtFlags::REMOVEDIR)?))
            .is_ok()
        {
            self.dirs.forget_tree(rel);
            // Its parent may hold nothing else now (a delete left both).
            if let Some((bucket, dir)) = parent.split_once('/') {
                self.prune(bucket, dir);
            }
        }
    }
}

impl Store {
    /// Whether directory `rel` holds an object at any depth (and, with
    /// `own_self`, its own self-entry counts), reading each directory only
    /// until the first object. For a shared file system, where no listing
    /// is cached: reading and sorting a large directory whole just to show
    /// its common prefix would double what the caller pays to list it next.
    fn any_object(&self, rel: &str, own_self: bool) -> bool {
        let Ok(fd) = self.open_listing(rel) else {
            return false;
        };
        let Ok(dir) = read_dir(&fd) else {
            return false;
        };
        let mut subdirs = Vec::new();
        let mut seen = 0;
        for e in dir.flatten() {
            let name = e.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            seen += 1;
            let object = name == DIR_ENTRY.as_bytes() || own_self && name == SELF_ENTRY.as_bytes();
            if is_reserved(name) && !object {
                continue;
            }
            let Ok(name) = std::str::from_utf8(name) else {
                continue;
            };
            let ft = match e.file_type() {
                FileType::Unknown => match statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => FileType::from_raw_mode(st.st_mode),
                    Err(_) => continue,
                },
                ft => ft,
            };
            match ft {
                FileType::RegularFile => return true,
                FileType::Directory => subdirs.push(name.to_owned()),
                _ => {}
            }
        }
        if seen == 0 {
            self.remove_empty(rel);
        }
        subdirs
            .iter()
            .any(|d| self.any_object(&format!("{rel}/{d}"), true))
    }
}

/// The entries of directory `dirfd`, sorted as keys (see [`Entry`]), and
/// how many entries it had besides `.` and `..` (hidden ones included).
/// With `ahead`, the files it wants are stat'ed as the readdir returns them.
fn read_sorted(dirfd: &OwnedFd, mut ahead: Option<StatAhead<'_>>) -> Option<(Vec<Entry>, usize)> {
    let mut entries = Vec::new();
    let mut seen = 0;
    for e in read_dir(dirfd).ok()?.flatten() {
        let name = e.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        seen += 1;
        if name == DIR_ENTRY.as_bytes() {
            entries.push(Entry {
                sort_key: "".into(),
                kind: Kind::Marker,
                stat: None,
            });
            continue;
        }
        if is_reserved(name) {
            continue;
        }
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        }; // not a key
        let mut stat = None;
        let ft = match e.file_type() {
            FileType::Unknown => match statat(dirfd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => {
                    let ft = FileType::from_raw_mode(st.st_mode);
                    stat = Some(Box::new(st));
                    ft
                }
                Err(_) => continue,
            },
            ft => ft,
        };
        let is_dir = match ft {
            FileType::Directory => true,
            FileType::RegularFile => false,
            _ => continue, // symlinks and special files are not objects
        };
        if is_dir {
            // `name` sorts before every `name!`, `name-` ... and those
            // before `name/`, so the object a directory may hold of its
            // own is an entry of its parent, where it sorts.
            entries.push(Entry {
                sort_key: name.into(),
                kind: Kind::DirSelf,
                stat: None,
            });
            entries.push(Entry {
                sort_key: format!("{name}/").into(),
                kind: Kind::Dir,
                stat: None,
            });
        } else {
            if stat.is_none() && ahead.as_mut().is_some_and(|a| a.wants(name)) {
                stat = statat(dirfd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .ok()
                    .map(Box::new);
            }
            entries.push(Entry {
                sort_key: name.into(),
                kind: Kind::File,
                // Only what was asked for: the cache must hold no stats.
                stat: stat.filter(|_| ahead.is_some()),
            });
        }
    }
    entries.sort_unstable_by(|a, b| a.sort_key.as_bytes().cmp(b.sort_key.as_bytes()));
    Some((entries, seen))
}

impl Walk<'_> {
    /// Visits directory `rel`, whose keys start with `key_prefix`, restricted
    /// to entries whose names start with `filter`.
    fn visit(&mut self, rel: &str, key_prefix: &str, filter: &str) -> Flow {
        let ahead = StatAhead {
            key_prefix,
            filter,
            after: self.resume.after.as_deref(),
            budget: self
                .max
                .saturating_sub(self.page.objects.len() + self.page.common_prefixes.len()),
        };
        let Some((fd, entries)) = self.store.sorted_entries(rel, Some(ahead)) else {
            return Flow::Continue(()); // a missing directory holds nothing
        };
        let mut start = entries.partition_point(|e| e.sort_key.as_ref() < filter);
        if let Some(after) = self.resume.after.as_deref() {
            if let Some(rest) = after.strip_prefix(key_prefix) {
                let pos = entries.partition_point(|e| e.sort_key.as_bytes() <= rest.as_bytes());
                // A directory whose keys straddle `after` is entered, not
                // skipped; so is one whose `name/` equals `after`, as all its
                // keys sort after it (a `p:` token skips it in `visit_dir`).
                let straddles = pos > 0 && {
                    let e = &entries[pos - 1];
                    e.is_dir() && rest.starts_with(e.sort_key.as_ref())
                };
                start = start.max(if straddles { pos - 1 } else { pos });
            }
        }
        let mut key = String::with_capacity(key_prefix.len() + 64);
        for e in &entries[start..] {
            if !e.sort_key.starts_with(filter) {
                break;
            }
            key.clear();
            key.push_str(key_prefix);
            key.push_str(&e.sort_key);
            match e.kind {
                Kind::Dir => self.visit_dir(rel, &key, e.name())?,
                Kind::File => self.visit_file(fd.as_fd(), &key, e.name(), e.stat.as_deref())?,
                // A marker in the bucket itself would be the key "/", which
                // no request can make.
                Kind::Marker if key_prefix.is_empty() => {}
                Kind::Marker => self.visit_file(fd.as_fd(), &key, DIR_ENTRY, None)?,
                Kind::DirSelf => self.visit_self(rel, &key, e.name())?,
            }
        }
        Flow::Continue(())
    }

    fn skipped(&self, key: &str) -> bool {
        self.resume.after.as_deref().is_some_and(|a| key <= a)
            || self
                .resume
                .skip_prefix
                .as_deref()
                .is_some_and(|p| key.starts_with(p))
    }

    /// The common prefix `key` rolls up into, if the delimiter occurs in it
    /// after the listing prefix.
    fn common_prefix<'k>(&self, key: &'k str) -> Option<&'k str> {
        let d = self.delimiter?;
        let rest = key.get(self.prefix.len()..)?;
        rest.find(d)
            .map(|i| &key[..self.prefix.len() + i + d.len()])
    }

    /// `read`: the file's attributes if taken as the directory was read.
    fn visit_file(
        &mut self,
        dir: BorrowedFd<'_>,
        key: &str,
        name: &str,
        read: Option<&Stat>,
    ) -> Flow {
        if self.skipped(key) {
            return Flow::Continue(());
        }
        if let Some(cp) = self.common_prefix(key) {
            let cp = cp.to_string();
            return self.emit_prefix(cp);
        }
        let Some(info) = stat_object(dir, key, name, read) else {
            return Flow::Continue(()); // removed meanwhile
        };
        self.emit(format!("k:{key}"), |page| page.objects.push(info))
    }

    /// The object directory `name` of `parent_rel` may hold as its
    /// self-entry, under key `key`: one stat, whether or not it exists.
    fn visit_self(&mut self, parent_rel: &str, key: &str, name: &str) -> Flow {
        if self.skipped(key) {
            return Flow::Continue(());
        }
        let Some(info) = self.self_entry(parent_rel, key, name) else {
            return Flow::Continue(());
        };
        if let Some(cp) = self.common_prefix(key) {
            let cp = cp.to_string();
            return self.emit_prefix(cp);
        }
        self.emit(format!("k:{key}"), |page| page.objects.push(info))
    }

    fn self_entry(&self, parent_rel: &str, key: &str, name: &str) -> Option<ObjectInfo> {
        let rel = format!("{parent_rel}/{name}");
        let fd = self.store.dirs.get(self.store.root_fd.as_fd(), &rel).ok()?;
        stat_object(fd.as_fd(), key, SELF_ENTRY, None)
    }

    /// `dir_key` is the directory's key fragment with its trailing `/`.
    fn visit_dir(&mut self, parent_rel: &str, dir_key: &str, name: &str) -> Flow {
        if let Some(skip) = self.resume.skip_prefix.as_deref() {
            if dir_key.starts_with(skip) {
                return Flow::Continue(());
            }
        }
        let rel = format!("{parent_rel}/{name}");
        // All keys below share `dir_key`; if the delimiter occurs within it,
        // they roll up into one common prefix, shown if any object qualifies.
        if let Some(cp) = self.common_prefix(dir_key) {
            let cp = cp.to_string();
            if self.last.as_deref() == Some(&format!("p:{cp}")) || !self.has_object(&rel, dir_key) {
                return Flow::Continue(());
            }
            return self.emit_prefix(cp);
        }
        self.visit(&rel, dir_key, "")
    }

    fn emit_prefix(&mut self, cp: String) -> Flow {
        let token = format!("p:{cp}");
        if self.last.as_deref() == Some(&token) || self.resume.skip_prefix.as_deref() == Some(&cp) {
            return Flow::Continue(());
        }
        self.emit(token, |page| page.common_prefixes.push(cp))
    }

    fn emit(&mut self, token: String, push: impl FnOnce(&mut ListPage)) -> Flow {
        if self.page.objects.len() + self.page.common_prefixes.len() >= self.max {
            self.page.is_truncated = true;
            return Flow::Break(());
        }
        push(&mut self.page);
        self.last = Some(token);
        Flow::Continue(())
    }

    /// Whether the subtree at `rel` (keys starting with `dir_key`) holds an
    /// object the listing would return. Stops at the first one.
    fn has_object(&self, rel: &str, dir_key: &str) -> bool {
        if self.store.profile.shared && self.resume.after.is_none() {
            return self.store.any_object(rel, false);
        }
        let Some((_, entries)) = self.store.sorted_entries(rel, None) else {
            return false;
        };
        entries.iter().any(|e| {
            let key = format!("{dir_key}{}", e.sort_key);
            match e.kind {
                Kind::Dir => {
                    !self
                        .resume
                        .skip_prefix
                        .as_deref()
                        .is_some_and(|p| key.starts_with(p))
                        && self.has_object(&format!("{rel}/{}", e.name()), &key)
                }
                Kind::File | Kind::Marker => !self.skipped(&key),
                Kind::DirSelf => {
                    !self.skipped(&key) && self.self_entry(rel, &key, e.name()).is_some()
                }
            }
        })
    }
}

/// The listing entry for one file: a stat (or `read`, the one taken as the
/// directory was read), plus the xattr if the mode says so. A file
/// replaced between the stat and the attribute read (by another process or
/// node) is looked at again, so the ETag listed is a stored one.
fn stat_object(
    dir: BorrowedFd<'_>,
    key: &str,
    name: &str,
    mut read: Option<&Stat>,
) -> Option<ObjectInfo> {
    let mut attempts = 0;
    loop {
        let st = match read.take() {
            Some(st) => *st,
            None => statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?,
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return None;
        }
        if !meta::has_meta(&st) {
            return Some(meta::object_info(key, &st, None));
        }
        let stored = openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(std::io::Error::from)
        .and_then(|fd| {
            let again = fstat(&fd)?;
            if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino) {
                return Err(std::io::Error::from_raw_os_error(libc::ESTALE));
            }
            StoredMeta::read_from(&fd)
        });
        match stored {
            Ok(stored) => return Some(meta::object_info(key, &st, Some(stored))),
            Err(_) if attempts < 4 => attempts += 1,
            Err(_) => return Some(meta::object_info(key, &st, Some(StoredMeta::default()))),
        }
    }
}
