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
//! N for every page of 1000: windows of sorted entries, bounded in size and
//! cached while the directory's stamp shows no change, make it O(N) in all
//! (see `window`).

mod attrs;
mod threads;
mod window;

pub(crate) use window::{DirStamp, ListingCache};

use crate::fscalls::{fstat, fstat_fresh, openat, read_dir, statat, unlinkat};
use crate::meta::{self, StoredMeta};
use crate::names::dir_rel;
use crate::names::{is_reserved, validate_path, DIR_ENTRY, SELF_ENTRY};
use crate::*;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use std::collections::HashMap;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime};
use window::{read_window, Bound, Kind, StatAhead, Window};

const MAX_KEYS: usize = 1000;
/// Threads looking up a page's files at once on a shared file system,
/// where each stat waits for a server (as `threads` leaves free); one on
/// a ceph-fuse window taken in readdir order (see `look_up_ahead`).
const LOOKUP_THREADS: usize = 16;

/// A token names a listing's start at most this long ago (a client's
/// token may say anything): the attributes a page uses were taken at most
/// `attrs::MAX_AGE` before it.
const MAX_LISTING: Duration = Duration::from_secs(3600);

/// Where a listing resumes.
struct Resume {
    /// Only keys strictly greater than this.
    after: Option<String>,
    /// Skip every key under this common prefix (resuming after a prefix).
    skip_prefix: Option<String>,
    /// When the listing began, as its token says (ms since the epoch).
    began_ms: Option<u64>,
}

/// A continuation token: `k` (after a key) or `p` (after a common
/// prefix), `@` and when the listing began in ms since the epoch, `:`
/// and the key or prefix. Tokens of `k:KEY` and `p:PREFIX` (no start,
/// as issued before) resume too.
fn decode_token(token: &str) -> Result<Resume> {
    let bad = || {
        s3err!(InvalidArgument, "the continuation token {token:?} is not one this server issued; restart the listing without it")
    };
    let (kind, rest) = token.split_at_checked(1).ok_or_else(bad)?;
    let (began_ms, after) = match rest.strip_prefix(':') {
        Some(after) => (None, after),
        None => {
            let (ms, after) = rest
                .strip_prefix('@')
                .and_then(|r| r.split_once(':'))
                .ok_or_else(bad)?;
            (Some(ms.parse::<u64>().map_err(|_| bad())?), after)
        }
    };
    let after = Some(after.to_string());
    match kind {
        "k" => Ok(Resume {
            after,
            skip_prefix: None,
            began_ms,
        }),
        "p" => Ok(Resume {
            skip_prefix: after.clone(),
            after,
            began_ms,
        }),
        _ => Err(bad()),
    }
}

/// `last` (`k:KEY` or `p:PREFIX`) as a token of a listing that began at
/// `began` (see `decode_token`).
fn encode_token(last: &str, began: SystemTime) -> String {
    let ms = began
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    format!("{}@{ms}{}", &last[..1], &last[1..])
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
    /// When the request began (a page's lookups keep to a budget).
    started: Instant,
    /// When the listing began (its first page's request).
    began: SystemTime,
    /// How old attributes a pass took may be: those taken `MAX_AGE`
    /// before the listing began, or since.
    attr_age: Duration,
}

/// Whether the walk should go on.
pub(crate) type Flow = std::ops::ControlFlow<()>;

impl Store {
    pub fn list_objects(&self, bucket: &str, req: &ListRequest) -> Result<ListPage> {
        validate_bucket_name(bucket)?;
        if let Some(set) = self.packed(bucket) {
            return self.packed_list(&set, bucket, req);
        }
        self.list_files(bucket, req)
    }

    /// ListObjects of the files under the bucket's directory.
    pub(crate) fn list_files(&self, bucket: &str, req: &ListRequest) -> Result<ListPage> {
        let _running = self.listings.enter();
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
                    began_ms: None,
                }
            }
            _ => Resume {
                after: None,
                skip_prefix: None,
                began_ms: None,
            },
        };
        // Where the token does not say (a v1 marker, start-after, an
        // older token), the listing begins with this page.
        let now = SystemTime::now();
        let began = resume
            .began_ms
            .and_then(|ms| SystemTime::UNIX_EPOCH.checked_add(Duration::from_millis(ms)))
            .map_or(now, |t| t.clamp(now - MAX_LISTING, now));
        let attr_age = attrs::MAX_AGE + now.duration_since(began).unwrap_or_default();
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
            started: Instant::now(),
            began,
            attr_age,
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
            walk.page.next_token = walk.last.take().map(|t| encode_token(&t, walk.began));
        }
        Ok(walk.page)
    }

    /// The fd of directory `rel` and the window of its sorted entries that
    /// starts at `from`, from the listing cache where it may be trusted
    /// (see `window`).
    fn window(
        &self,
        rel: &str,
        from: Option<&Bound>,
        ahead: Option<StatAhead<'_>>,
    ) -> Option<(Rc<OwnedFd>, Window)> {
        let limit = self.listings.window_for(rel);
        if self.profile.shared {
            // A cached handle could name a directory another node removed
            // and made again: one fresh resolution of the path, used to
            // stamp, read and stat.
            let dirfd = Rc::new(self.open_listing(rel).ok()?);
            // The stamp from the server, not the kernel's attribute cache,
            // and only where it follows other clients' changes (on
            // GlusterFS, a listing trusting GlusterFS's missed 93 of 100 new keys).
            let stamp = if self.profile.coherent_dir_stamps {
                Some(DirStamp::of(&fstat_fresh(&*dirfd).ok()?))
            } else {
                None
            };
            if let Some(w) = stamp.and_then(|s| self.listings.get(rel, s, from)) {
                return Some((dirfd, w));
            }
            let read_at = SystemTime::now();
            let read = self.read_shared_window(&dirfd, from, limit, ahead)?;
            if read.seen == 0 {
                self.remove_empty(rel);
            }
            self.listings.note_size(rel, read.seen);
            if let Some(stamp) = stamp.filter(|s| s.settled(read_at, true)) {
                self.listings.put(rel, stamp, from.cloned(), &read.window);
            }
            return Some((dirfd, read.window));
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
        if let Some(w) = self.listings.get(rel, stamp, from) {
            return Some((fd, w));
        }
        let read_at = SystemTime::now();
        let dirfd = self.open_listing(rel).ok()?;
        let read = read_window(&dirfd, from, limit, None)?;
        self.listings.note_size(rel, read.seen);
        if stamp.settled(read_at, false) {
            self.listings.put(rel, stamp, from.cloned(), &read.window);
        }
        Some((fd, read.window))
    }

    /// Reads a window of a directory on a shared file system. Where the
    /// client answers stats from what the readdir brought, on a thread
    /// that keeps doing so for the whole window (`attrs`), or else on this
    /// thread for the files this page may return (`ahead`). Where it keeps
    /// only the latest inodes (ceph-fuse), a thread stats the window's
    /// files in readdir order while pages are served, as long as that
    /// pays. Threads act as the server, so neither for a user's listing.
    fn read_shared_window(
        &self,
        dirfd: &OwnedFd,
        from: Option<&Bound>,
        limit: usize,
        ahead: Option<StatAhead<'_>>,
    ) -> Option<window::Read> {
        if !self.profile.stat_with_readdir {
            let mut read = read_window(dirfd, from, limit, None)?;
            if self.profile.readdir_order_stats && !crate::identity::acting_as_user() {
                attrs::warm_window(dirfd, &mut read.window);
            }
            return Some(read);
        }
        if !crate::identity::acting_as_user() {
            if let Some(read) = attrs::read_window_with_attrs(dirfd, from, limit) {
                return read;
            }
        }
        read_window(dirfd, from, limit, ahead)
    }

    /// The entries of directory `rel` in key order, from the first whose
    /// sort key (`name`, or `name/` for a subdirectory) is at or after
    /// `from`, read through the listing's windows (and their cache), until
    /// `each` (given the sort key and whether it is a subdirectory)
    /// breaks.
    pub(crate) fn each_entry(
        &self,
        rel: &str,
        from: &str,
        mut each: impl FnMut(&str, bool) -> Flow,
    ) {
        let mut bound = (!from.is_empty()).then(|| Bound {
            key: from.into(),
            inclusive: true,
        });
        loop {
            let Some((_, w)) = self.window(rel, bound.as_ref(), None) else {
                return;
            };
            let start = w
                .entries
                .partition_point(|e| e.sort_key.as_bytes() < from.as_bytes());
            for e in &w.entries[start..] {
                if each(&e.sort_key, e.kind == Kind::Dir).is_break() {
                    return;
                }
            }
            bound = w.next();
            if bound.is_none() {
                return;
            }
        }
    }

    /// Tests: listing windows of `entries` entries (0: as sized normally),
    /// so that small directories cross window boundaries.
    #[doc(hidden)]
    pub fn set_listing_window(&self, entries: usize) {
        self.listings.override_window(entries);
    }

    /// Tests: the listing cache's windows and the bytes they hold.
    #[doc(hidden)]
    pub fn listing_cache_usage(&self) -> (usize, usize) {
        self.listings.usage()
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
            .any(|d| crate::deep::grow(|| self.any_object(&format!("{rel}/{d}"), true)))
    }
}

impl Walk<'_> {
    /// Visits directory `rel`, whose keys start with `key_prefix`, restricted
    /// to entries whose names start with `filter`.
    fn visit(&mut self, rel: &str, key_prefix: &str, filter: &str) -> Flow {
        let mut from = start_bound(key_prefix, filter, self.resume.after.as_deref());
        loop {
            let ahead = StatAhead {
                key_prefix,
                filter,
                after: self.resume.after.as_deref(),
                budget: self
                    .max
                    .saturating_sub(self.page.objects.len() + self.page.common_prefixes.len()),
            };
            let Some((fd, w)) = self.store.window(rel, from.as_ref(), Some(ahead)) else {
                return Flow::Continue(()); // a missing directory holds nothing
            };
            if self.visit_window(rel, key_prefix, filter, fd.as_fd(), &w)? {
                return Flow::Continue(());
            }
            from = w.next();
            if from.is_none() {
                return Flow::Continue(());
            }
        }
    }

    /// Visits the entries of one window of directory `rel` (see `visit`);
    /// true if the walk of this directory ends within it.
    fn visit_window(
        &mut self,
        rel: &str,
        key_prefix: &str,
        filter: &str,
        fd: BorrowedFd<'_>,
        w: &Window,
    ) -> std::ops::ControlFlow<(), bool> {
        let entries = &w.entries;
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
        // On a shared file system each stat is a round trip to a server:
        // the files the page will return are looked up together.
        let mut found = if self.store.profile.shared {
            self.look_up_ahead(fd, key_prefix, filter, w, start)
        } else {
            HashMap::new()
        };
        let mut key = String::with_capacity(key_prefix.len() + 64);
        for (i, e) in entries.iter().enumerate().skip(start) {
            if !e.sort_key.starts_with(filter) {
                return std::ops::ControlFlow::Continue(true);
            }
            key.clear();
            key.push_str(key_prefix);
            key.push_str(&e.sort_key);
            match e.kind {
                Kind::Dir => self.visit_dir(rel, &key, e.name())?,
                Kind::File => {
                    let info = match found.remove(&i) {
                        Some(info) => info,
                        // Not listed as an object here: no stat.
                        None if self.passes(&key) => None,
                        None => {
                            let read = w.stat_of(i, self.attr_age).or_else(|| {
                                w.hold_for_sample();
                                w.stat_of(i, self.attr_age)
                            });
                            if read.is_none() {
                                if self.budget_spent(w) {
                                    self.page.is_truncated = true;
                                    return std::ops::ControlFlow::Break(());
                                }
                                w.paging_to(i + 1);
                            }
                            stat_object(fd, &key, e.name(), read.as_ref())
                        }
                    };
                    self.visit_file(&key, info)?
                }
                // A marker in the bucket itself would be the key "/", which
                // no request can make.
                Kind::Marker if key_prefix.is_empty() => {}
                Kind::Marker => {
                    let info = self.stat_unless_passed(fd, &key, DIR_ENTRY, None);
                    self.visit_file(&key, info)?
                }
                Kind::DirSelf => self.visit_self(rel, &key, e.name())?,
            }
        }
        std::ops::ControlFlow::Continue(!w.more)
    }

    /// Whether a page that would now look up a file itself returns what
    /// it has instead: it has at least one key (so the next page's token
    /// differs from this one's), the window's pass pays, and the page's
    /// budget is spent (see `attrs::OWN_SHARE`).
    fn budget_spent(&self, w: &Window) -> bool {
        !(self.page.objects.is_empty() && self.page.common_prefixes.is_empty())
            && w.pass_paying()
            && self.started.elapsed() >= attrs::PAGE_BUDGET
    }

    /// Whether the walk passes `key` by rather than list it as an
    /// object (skipped, or rolled up in a prefix).
    fn passes(&self, key: &str) -> bool {
        self.skipped(key) || self.common_prefix(key).is_some()
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

    /// `info`: the file's listing entry, if it is one
    /// (`stat_unless_passed`).
    fn visit_file(&mut self, key: &str, info: Option<ObjectInfo>) -> Flow {
        if self.skipped(key) {
            return Flow::Continue(());
        }
        if let Some(cp) = self.common_prefix(key) {
            let cp = cp.to_string();
            return self.emit_prefix(cp);
        }
        let Some(info) = info else {
            return Flow::Continue(()); // removed meanwhile
        };
        self.emit(format!("k:{key}"), |page| page.objects.push(info))
    }

    /// The listing entry of file `name` under `key`, unless the walk would
    /// not list it as an object (skipped, or rolled up in a prefix): no stat
    /// for those. `read`: its attributes if taken as the directory was read.
    fn stat_unless_passed(
        &self,
        dir: BorrowedFd<'_>,
        key: &str,
        name: &str,
        read: Option<&Stat>,
    ) -> Option<ObjectInfo> {
        if self.passes(key) {
            return None;
        }
        stat_object(dir, key, name, read)
    }

    /// The listing entries of the files from `start` in window `w` that
    /// this page will return as objects, by entry index, looked up by up
    /// to `LOOKUP_THREADS` threads at once (fewer, or none, where other
    /// listings hold the process's threads: the walk then stats them).
    /// Stops at the first directory (the keys below it may fill the page).
    fn look_up_ahead(
        &self,
        fd: BorrowedFd<'_>,
        key_prefix: &str,
        filter: &str,
        w: &Window,
        start: usize,
    ) -> HashMap<usize, Option<ObjectInfo>> {
        let budget = self
            .max
            .saturating_sub(self.page.objects.len() + self.page.common_prefixes.len());
        let mut wanted: Vec<(usize, String)> = Vec::new();
        // Files the page will return, looked up or not, and where they end.
        let mut returned = 0;
        let mut end = start;
        for (i, e) in w.entries.iter().enumerate().skip(start) {
            if returned >= budget || !e.sort_key.starts_with(filter) {
                break;
            }
            end = i + 1;
            match e.kind {
                Kind::File => {}
                Kind::Marker => continue,
                Kind::Dir | Kind::DirSelf => break,
            }
            let key = format!("{key_prefix}{}", e.sort_key);
            if self.passes(&key) {
                continue;
            }
            returned += 1;
            // A file whose attributes came with the directory and that
            // has no metadata to read needs no round trip.
            if w.stat_of(i, self.attr_age)
                .is_none_or(|st| meta::has_meta(&st))
            {
                wanted.push((i, key));
            }
        }
        // Where a readdir-order pass runs (ceph-fuse), the kernel takes
        // one lookup at a time per directory (libfuse2), so more threads
        // only queue, and the page's lookups and the pass's queue for
        // one lock. While the pass pays, the page leaves its lookups to
        // it as long as its budget allows. The walk then looks up what is
        // left on its own thread, telling the pass as it goes, and may
        // end the page short (`budget_spent`): 16 threads starved the
        // pass, whose stats the client's cache answers (`attrs`), and
        // made it time their queue and judge that it did not pay.
        if w.readdir_order() {
            let idx: Vec<usize> = wanted.iter().map(|(i, _)| *i).collect();
            w.wait_for_pass(&idx, self.started + attrs::PAGE_BUDGET);
            // That pages are past `start` keeps the pass from going idle.
            w.paging_to(start);
            return HashMap::new();
        }
        w.paging_to(end);
        // A thread starts with its creator's credentials (clone(2)), so
        // these act as the user this thread acts as: the kernel checks
        // their lookups as it checks this thread's.
        if wanted.len() < 2 {
            return HashMap::new();
        }
        let lease = threads::Lease::take(LOOKUP_THREADS.min(wanted.len()));
        if lease.threads() == 0 {
            return HashMap::new();
        }
        let per_thread = wanted.len().div_ceil(lease.threads());
        std::thread::scope(|scope| {
            let parts: Vec<_> = wanted
                .chunks(per_thread)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|(i, key)| {
                                let read = w.stat_of(*i, self.attr_age);
                                (
                                    *i,
                                    stat_object(fd, key, w.entries[*i].name(), read.as_ref()),
                                )
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            // A part whose thread failed is looked up again one by one.
            parts
                .into_iter()
                .flat_map(|p| p.join().unwrap_or_default())
                .collect()
        })
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
        crate::deep::grow(|| self.visit(&rel, dir_key, ""))
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
        let mut from = None;
        loop {
            let Some((_, w)) = self.store.window(rel, from.as_ref(), None) else {
                return false;
            };
            let found = w.entries.iter().any(|e| {
                let key = format!("{dir_key}{}", e.sort_key);
                match e.kind {
                    Kind::Dir => {
                        !self
                            .resume
                            .skip_prefix
                            .as_deref()
                            .is_some_and(|p| key.starts_with(p))
                            && crate::deep::grow(|| {
                                self.has_object(&format!("{rel}/{}", e.name()), &key)
                            })
                    }
                    Kind::File | Kind::Marker => !self.skipped(&key),
                    Kind::DirSelf => {
                        !self.skipped(&key) && self.self_entry(rel, &key, e.name()).is_some()
                    }
                }
            });
            from = w.next();
            if found || from.is_none() {
                return found;
            }
        }
    }
}

/// Where the walk of a directory whose keys start with `key_prefix` starts:
/// at `filter`, and after `after` where `after` falls in this directory,
/// a subdirectory `x/` whose keys straddle it included.
fn start_bound(key_prefix: &str, filter: &str, after: Option<&str>) -> Option<Bound> {
    let by_filter = (!filter.is_empty()).then(|| Bound {
        key: filter.into(),
        inclusive: true,
    });
    let by_after =
        after
            .and_then(|a| a.strip_prefix(key_prefix))
            .map(|rest| match rest.find('/') {
                Some(i) => Bound {
                    key: rest[..=i].into(),
                    inclusive: true,
                },
                None => Bound {
                    key: rest.into(),
                    inclusive: false,
                },
            });
    match (by_filter, by_after) {
        // The narrower of the two.
        (Some(f), Some(a)) => Some(if Bound::covers(Some(&f), Some(&a)) {
            a
        } else {
            f
        }),
        (f, a) => f.or(a),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_the_listings_start_and_old_ones_still_resume() {
        let began = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_000_000_123);
        let t = encode_token("k:a:b@c", began);
        assert_eq!(t, "k@1764000000123:a:b@c");
        let r = decode_token(&t).unwrap();
        assert_eq!(r.after.as_deref(), Some("a:b@c"));
        assert_eq!(r.began_ms, Some(1_764_000_000_123));
        assert!(r.skip_prefix.is_none());
        let r = decode_token(&encode_token("p:d/", began)).unwrap();
        assert_eq!(r.skip_prefix.as_deref(), Some("d/"));
        let r = decode_token("k:x").unwrap();
        assert_eq!((r.after.as_deref(), r.began_ms), (Some("x"), None));
        for bad in ["", "k", "x:a", "k@:a", "k@12a:b", "k@12", "é:a", "k@-1:a"] {
            assert!(decode_token(bad).is_err(), "{bad:?}");
        }
    }

    /// A store (shared or not) whose bucket `bkt` holds files `f00`..
    /// (`files` of them), made behind its back.
    fn bucket_of(files: usize, shared: bool) -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let config = StoreConfig {
            etag: EtagPolicy::Md5,
            durability: Durability::None,
        };
        let store = Store::open_adjusted(tmp.path(), config, |p| p.shared |= shared).unwrap();
        store.create_bucket("bkt").unwrap();
        for i in 0..files {
            std::fs::write(tmp.path().join(format!("bkt/f{i:02}")), b"x").unwrap();
        }
        (tmp, store)
    }

    #[test]
    fn any_start_a_token_names_resumes_after_its_key() {
        let (_tmp, store) = bucket_of(3, false);
        for token in ["k@18446744073709551615:f00", "k@0:f00", "k:f00"] {
            let req = ListRequest {
                continuation_token: Some(token.into()),
                ..Default::default()
            };
            let page = store.list_objects("bkt", &req).unwrap();
            let keys: Vec<&str> = page.objects.iter().map(|o| o.key.as_str()).collect();
            assert_eq!(keys, ["f01", "f02"], "{token}");
        }
    }

    /// A page beside a paying pass whose budget is spent returns the keys
    /// the pass has taken from its start, and one more it looks up itself
    /// if it has none: truncated, with a token after its last key.
    #[test]
    fn a_page_beside_a_paying_pass_ends_short_once_its_budget_is_spent() {
        let (_tmp, store) = bucket_of(20, true);
        let rel = dir_rel("bkt", "");
        let dirfd = store.open_listing(&rel).unwrap();
        let mut w = read_window(&dirfd, None, 1000, None).unwrap().window;
        let attrs = attrs::Attrs::paying(w.entries.len());
        let file = |name: &str| w.entries.iter().position(|e| e.name() == name).unwrap();
        for name in ["f00", "f01", "f02", "f03", "f04", "f07"] {
            attrs.take(&dirfd, &w.entries, file(name));
        }
        w.attrs = Some(attrs.clone());
        let page = |after: Option<&str>| {
            let mut walk = Walk {
                store: &store,
                prefix: "",
                delimiter: None,
                resume: Resume {
                    after: after.map(str::to_string),
                    skip_prefix: None,
                    began_ms: None,
                },
                max: 1000,
                page: ListPage::default(),
                last: None,
                started: Instant::now() - attrs::PAGE_BUDGET,
                began: SystemTime::now(),
                attr_age: attrs::MAX_AGE,
            };
            let flow = walk.visit_window(&rel, "", "", dirfd.as_fd(), &w);
            assert!(flow.is_break() && walk.page.is_truncated);
            let keys: Vec<String> = walk.page.objects.iter().map(|o| o.key.clone()).collect();
            (keys, walk.last.unwrap())
        };
        let (keys, last) = page(None);
        assert_eq!(keys, ["f00", "f01", "f02", "f03", "f04"]);
        assert_eq!(last, "k:f04");
        assert_eq!(attrs.paged_to(), 0, "the page looked up nothing itself");
        let (keys, _) = page(Some("f04"));
        assert_eq!(keys, ["f05"], "one of its own, so that the token moves");
        assert_eq!(attrs.paged_to(), file("f05") + 1);
        let (keys, _) = page(Some("f05"));
        assert_eq!(keys, ["f06", "f07"]);
    }
}
