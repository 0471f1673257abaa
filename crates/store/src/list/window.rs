//! A directory's entries in key order, read a bounded window at a time,
//! and the cache of recent windows that lets paging cost O(page) instead
//! of O(directory).
//!
//! A listing resumes at a bound (the continuation token's position in this
//! directory). One pass of readdir keeps only entries at or after the bound,
//! and at most a window of them: the smallest, found by repeated selection,
//! so memory stays O(window) whatever the directory holds. A window that
//! stops short of the directory's end says so; a walk that runs past it
//! reads the next one. The window size grows with the directory (half of
//! what it held last time, within bounds), so a directory of N entries is
//! read about three times in a full paging (N/1 Mi times past 2 Mi), and a
//! page's share of that is flat in N. Once a window's worth is kept, an
//! entry beyond it costs a comparison, not a copy of its name.
//!
//! A cached window is used only while the directory's stamp (inode, mtime,
//! ctime, size) is what it was before the window was read, the change that
//! stamp records was older than the time stamps' resolution when it was
//! read (the racy-timestamp rule, so a later change in the same tick cannot
//! go unseen), and the stamp can be trusted: taken by the kernel on a local
//! file system, and on a shared one only where a forced stat asks the
//! server and its answer follows every client's change
//! (`FsProfile::coherent_dir_stamps`). Elsewhere every page reads the
//! directory again, still in bounded memory.

use super::attrs::Attrs;
use crate::fscalls::{read_dir, statat};
use crate::names::{is_reserved, DIR_ENTRY};
use rustix::fs::{AtFlags, Dir, FileType, Stat};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// A window holds at least this many entries (all of a smaller directory)...
pub(super) const MIN_WINDOW: usize = 1 << 16;
/// ...or this share of what the directory held when last read...
const WINDOW_SHARE: usize = 2;
/// ...and at most this many: about 64 MiB of names.
pub(super) const MAX_WINDOW: usize = 1 << 20;
/// All cached windows together hold at most this many bytes...
const CACHE_BYTES: usize = 256 << 20;
/// ...and at most this many windows.
const CACHED_WINDOWS: usize = 32;
/// Directory sizes remembered to size the next window.
const SIZE_HINTS: usize = 4096;
/// A window is trusted only if the directory was last changed at least this
/// long before it was read (kernel time stamps advance in jiffies).
const RACY_MARGIN: Duration = Duration::from_millis(50);
/// On a shared file system the stamps come from a server's clock: allow
/// this much skew against ours.
const SHARED_SKEW: Duration = Duration::from_secs(1);

/// One directory entry, by the key fragment it sorts as.
pub(super) struct Entry {
    pub sort_key: Box<str>,
    pub kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
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
    pub fn name(&self) -> &str {
        self.sort_key.strip_suffix('/').unwrap_or(&self.sort_key)
    }

    pub fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }
}

/// Where a window starts: entries whose sort key is greater than `key`,
/// or equal to it too if `inclusive`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Bound {
    pub key: Box<str>,
    pub inclusive: bool,
}

impl Bound {
    pub fn admits(&self, sort_key: &str) -> bool {
        match cmp_key(sort_key, false, &self.key) {
            Ordering::Greater => true,
            Ordering::Equal => self.inclusive,
            Ordering::Less => false,
        }
    }

    /// Whether every entry `other` admits, this one admits too.
    pub fn covers(this: Option<&Bound>, other: Option<&Bound>) -> bool {
        match (this, other) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => match a.key.as_bytes().cmp(b.key.as_bytes()) {
                Ordering::Less => true,
                Ordering::Equal => a.inclusive || !b.inclusive,
                Ordering::Greater => false,
            },
        }
    }
}

/// A sorted window of a directory's entries.
pub(super) struct Window {
    pub entries: Arc<Vec<Entry>>,
    /// The attributes taken as the directory was read, by index into
    /// `entries` (`FsProfile::stat_with_readdir`); empty if none. Never
    /// cached: a page uses only the stats of its own read.
    pub stats: Vec<Option<Box<Stat>>>,
    /// The attributes of its files taken with the read, cached with the
    /// window (`attrs`, `FsProfile::stat_with_readdir`).
    pub attrs: Option<Arc<Attrs>>,
    /// The directory holds entries after the last one here.
    pub more: bool,
}

impl Window {
    /// Where the window after this one starts.
    pub fn next(&self) -> Option<Bound> {
        let last = self.entries.last().filter(|_| self.more)?;
        Some(Bound {
            key: last.sort_key.clone(),
            inclusive: false,
        })
    }

    /// A page looks up the files before entry `end` itself: a thread
    /// taking the window's attributes need not.
    pub fn paging_to(&self, end: usize) {
        if let Some(a) = &self.attrs {
            a.paging_to(end);
        }
    }

    /// Whether a pass takes the window's attributes in readdir order
    /// (`attrs`, ceph-fuse).
    pub fn readdir_order(&self) -> bool {
        self.attrs.as_ref().is_some_and(|a| a.readdir_order())
    }

    /// Whether such a pass runs and pays (`Attrs::pass_paying`).
    pub fn pass_paying(&self) -> bool {
        self.attrs.as_ref().is_some_and(|a| a.pass_paying())
    }

    /// Holds a page's lookup while the pass times its samples
    /// (`Attrs::hold_for_sample`).
    pub fn hold_for_sample(&self) {
        if let Some(a) = &self.attrs {
            a.hold_for_sample();
        }
    }

    /// Lets a paying pass take the files `wanted` first, within a page's
    /// `deadline` (`Attrs::wait_for_pass`).
    pub fn wait_for_pass(&self, wanted: &[usize], deadline: std::time::Instant) {
        if let Some(a) = &self.attrs {
            a.wait_for_pass(wanted, deadline);
        }
    }

    /// The attributes of entry `i` taken as the directory was read, if
    /// they were, and, if a pass took them, at most `max_age` ago
    /// (`Attrs::get`).
    pub fn stat_of(&self, i: usize, max_age: Duration) -> Option<Stat> {
        if let Some(st) = self.stats.get(i).and_then(|s| s.as_deref()) {
            return Some(*st);
        }
        self.attrs.as_ref()?.get(i, max_age)
    }
}

/// Which files of a directory to stat while reading it: those the page
/// being listed may return, at most `budget` of them.
pub(super) struct StatAhead<'a> {
    pub key_prefix: &'a str,
    pub filter: &'a str,
    pub after: Option<&'a str>,
    pub budget: usize,
}

impl StatAhead<'_> {
    fn wants(&mut self, name: &str) -> bool {
        if self.budget == 0 || !name.starts_with(self.filter) {
            return false;
        }
        if let Some(after) = self.after {
            // The key is key_prefix + name; compare without building it.
            let key = self.key_prefix.bytes().chain(name.bytes());
            if key.cmp(after.bytes()) != Ordering::Greater {
                return false;
            }
        }
        self.budget -= 1;
        true
    }
}

/// What read one window found.
pub(super) struct Read {
    pub window: Window,
    /// Entries the directory held besides `.` and `..`, hidden ones too.
    pub seen: usize,
}

/// Reads directory `dirfd` in one pass and keeps the `limit` smallest
/// entries `from` admits, sorted as keys. With `ahead`, the files it wants
/// are stat'ed as the readdir returns them.
pub(super) fn read_window(
    dirfd: &OwnedFd,
    from: Option<&Bound>,
    limit: usize,
    ahead: Option<StatAhead<'_>>,
) -> Option<Read> {
    let dir = read_dir(dirfd).ok()?;
    read_window_in(dir, dirfd, from, limit, ahead).map(|(read, _)| read)
}

/// `read_window` through `dir`, a handle of `dirfd` opened for reading,
/// returned still open.
pub(super) fn read_window_in(
    mut dir: Dir,
    dirfd: &OwnedFd,
    from: Option<&Bound>,
    limit: usize,
    mut ahead: Option<StatAhead<'_>>,
) -> Option<(Read, Dir)> {
    let mut k = Keeper {
        from,
        limit: limit.max(1),
        kept: Vec::new(),
        more: false,
        cutoff: None,
    };
    let mut seen = 0;
    for e in (&mut dir).flatten() {
        let name = e.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        seen += 1;
        if name == DIR_ENTRY.as_bytes() {
            if k.wants("", false) {
                k.keep("".into(), Kind::Marker, None);
            }
            continue;
        }
        if is_reserved(name) {
            continue;
        }
        let Ok(name) = std::str::from_utf8(name) else {
            continue; // not a key
        };
        // A directory sorts as `name` (its self-entry) and `name/`.
        let file_wanted = k.wants(name, false);
        if !file_wanted && !k.wants(name, true) {
            continue; // no need to know what it is
        }
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
        match ft {
            FileType::Directory => {
                // `name` sorts before every `name!`, `name-` ... and those
                // before `name/`, so the object a directory may hold of its
                // own is an entry of its parent, where it sorts.
                if file_wanted {
                    k.keep(name.into(), Kind::DirSelf, None);
                }
                if k.wants(name, true) {
                    k.keep(format!("{name}/").into(), Kind::Dir, None);
                }
            }
            FileType::RegularFile if file_wanted => {
                if stat.is_none() && ahead.as_mut().is_some_and(|a| a.wants(name)) {
                    stat = statat(dirfd, name, AtFlags::SYMLINK_NOFOLLOW)
                        .ok()
                        .map(Box::new);
                }
                // Only what was asked for.
                k.keep(name.into(), Kind::File, stat.filter(|_| ahead.is_some()));
            }
            _ => {} // symlinks and special files are not objects
        }
    }
    if k.kept.len() > k.limit {
        k.select();
    }
    let more = k.more;
    let mut kept = k.kept;
    kept.sort_unstable_by(by_key);
    let with_stats = ahead.is_some();
    let (entries, stats): (Vec<Entry>, Vec<Option<Box<Stat>>>) = kept.into_iter().unzip();
    let read = Read {
        window: Window {
            entries: Arc::new(entries),
            stats: if with_stats { stats } else { Vec::new() },
            attrs: None,
            more,
        },
        seen,
    };
    Some((read, dir))
}

type Kept = (Entry, Option<Box<Stat>>);

fn by_key(a: &Kept, b: &Kept) -> Ordering {
    a.0.sort_key.as_bytes().cmp(b.0.sort_key.as_bytes())
}

/// `name`, followed by `/` if `slash`, against `other`, as key bytes.
fn cmp_key(name: &str, slash: bool, other: &str) -> Ordering {
    let key = name.bytes().chain(slash.then_some(b'/'));
    key.cmp(other.bytes())
}

/// The smallest `limit` entries a bound admits, kept as a readdir returns
/// entries in no order.
struct Keeper<'a> {
    from: Option<&'a Bound>,
    limit: usize,
    kept: Vec<Kept>,
    /// Entries were passed over as beyond the window.
    more: bool,
    /// Once a selection has been made: the greatest key kept. Anything
    /// greater is passed over without a copy of its name.
    cutoff: Option<Box<str>>,
}

impl Keeper<'_> {
    fn wants(&mut self, name: &str, slash: bool) -> bool {
        if let Some(b) = self.from {
            match cmp_key(name, slash, &b.key) {
                Ordering::Less => return false,
                Ordering::Equal if !b.inclusive => return false,
                _ => {}
            }
        }
        if let Some(c) = &self.cutoff {
            if cmp_key(name, slash, c) == Ordering::Greater {
                self.more = true;
                return false;
            }
        }
        true
    }

    fn keep(&mut self, sort_key: Box<str>, kind: Kind, stat: Option<Box<Stat>>) {
        self.kept.push((Entry { sort_key, kind }, stat));
        // Selection every `limit` pushes: O(entries) in all, and never
        // more than twice the window in memory.
        if self.kept.len() >= 2 * self.limit {
            self.select();
        }
    }

    /// Keeps the `limit` smallest.
    fn select(&mut self) {
        let last = self.limit - 1;
        self.kept.select_nth_unstable_by(last, by_key);
        self.kept.truncate(self.limit);
        self.cutoff = Some(self.kept[last].0.sort_key.clone());
        self.more = true;
    }
}

/// What identifies a directory's content version.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct DirStamp {
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    size: i64,
}

impl DirStamp {
    pub fn of(st: &Stat) -> DirStamp {
        DirStamp {
            ino: st.st_ino,
            mtime: (st.st_mtime, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime, st.st_ctime_nsec as i64),
            size: st.st_size,
        }
    }

    /// Whether a window read at `read_at` may be trusted under this stamp
    /// (taken before the read): the last change it records was long enough
    /// before that any later change gets a different stamp.
    pub fn settled(&self, read_at: SystemTime, shared: bool) -> bool {
        let (secs, nsec) = self.mtime.max(self.ctime);
        let changed = SystemTime::UNIX_EPOCH + Duration::new(secs.max(0) as u64, nsec as u32);
        // Whole seconds only (MooseFS, coarse clocks): a later change in
        // the same second would leave the stamp as it is.
        let tick = if self.mtime.1 == 0 && self.ctime.1 == 0 {
            Duration::from_secs(1)
        } else {
            Duration::ZERO
        };
        let skew = if shared { SHARED_SKEW } else { Duration::ZERO };
        read_at
            .duration_since(changed)
            .is_ok_and(|age| age >= RACY_MARGIN + tick + skew)
    }
}

struct Cached {
    rel: String,
    /// Who read it (`identity::acting_id`): served to that identity only,
    /// as another may not be allowed to read the directory.
    who: u64,
    stamp: DirStamp,
    from: Option<Bound>,
    entries: Arc<Vec<Entry>>,
    attrs: Option<Arc<Attrs>>,
    more: bool,
    bytes: usize,
    used: u64,
}

impl Cached {
    /// Attributes taken with the read grow stale when a POSIX program
    /// writes a file in place (the directory's stamp stays).
    fn expired(&self) -> bool {
        self.attrs.as_ref().is_some_and(|a| a.expired())
    }

    /// Whether this window holds where a walk from `from` starts.
    fn serves(&self, from: Option<&Bound>) -> bool {
        if self.expired() {
            return false;
        }
        if !Bound::covers(self.from.as_ref(), from) {
            return false;
        }
        // A window that stops short must reach the start.
        !self.more
            || match (from, self.entries.last()) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(b), Some(last)) => b.admits(&last.sort_key),
            }
    }
}

#[derive(Default)]
struct Inner {
    windows: Vec<Cached>,
    tick: u64,
    /// Entries each directory held when last read.
    sizes: HashMap<String, usize>,
}

/// Recently read windows, least recently used evicted first, bounded in
/// count and in bytes.
pub(crate) struct ListingCache {
    inner: Mutex<Inner>,
    /// Tests: windows of this many entries (0: sized as above).
    window_override: AtomicUsize,
    /// Listings being served now (the background sweep yields to them).
    running: AtomicUsize,
}

/// A listing being served, counted while it lives.
pub(crate) struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, AtomicOrdering::Relaxed);
    }
}

impl ListingCache {
    pub fn new() -> Self {
        ListingCache {
            inner: Mutex::new(Inner::default()),
            window_override: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
        }
    }

    /// Counts a listing as served until the guard drops.
    pub fn enter(&self) -> Running<'_> {
        self.running.fetch_add(1, AtomicOrdering::Relaxed);
        Running(&self.running)
    }

    /// Whether a listing is being served now.
    pub fn busy(&self) -> bool {
        self.running.load(AtomicOrdering::Relaxed) > 0
    }

    pub(super) fn override_window(&self, entries: usize) {
        self.window_override.store(entries, AtomicOrdering::Relaxed);
    }

    pub(super) fn get(&self, rel: &str, stamp: DirStamp, from: Option<&Bound>) -> Option<Window> {
        let who = crate::identity::acting_id();
        let mut inner = self.inner.lock().unwrap();
        inner.tick += 1;
        let tick = inner.tick;
        let c = inner
            .windows
            .iter_mut()
            .find(|c| c.rel == rel && c.who == who && c.stamp == stamp && c.serves(from))?;
        c.used = tick;
        Some(Window {
            entries: c.entries.clone(),
            stats: Vec::new(),
            attrs: c.attrs.clone(),
            more: c.more,
        })
    }

    /// How many entries the next window of `rel` may hold.
    pub(super) fn window_for(&self, rel: &str) -> usize {
        let fixed = self.window_override.load(AtomicOrdering::Relaxed);
        if fixed > 0 {
            return fixed;
        }
        let inner = self.inner.lock().unwrap();
        let seen = inner.sizes.get(rel).copied().unwrap_or(0);
        (seen / WINDOW_SHARE).clamp(MIN_WINDOW, MAX_WINDOW)
    }

    pub(super) fn note_size(&self, rel: &str, seen: usize) {
        let mut inner = self.inner.lock().unwrap();
        if seen < MIN_WINDOW {
            inner.sizes.remove(rel);
            return;
        }
        if inner.sizes.len() >= SIZE_HINTS {
            inner.sizes.clear();
        }
        inner.sizes.insert(rel.to_string(), seen);
    }

    pub(super) fn put(&self, rel: &str, stamp: DirStamp, from: Option<Bound>, w: &Window) {
        let bytes = window_bytes(&w.entries) + w.attrs.as_ref().map_or(0, |a| a.bytes());
        if bytes > CACHE_BYTES / 2 {
            return;
        }
        let mut inner = self.inner.lock().unwrap();
        // Windows of an older version of the directory are useless now.
        inner
            .windows
            .retain(|c| c.rel != rel || c.stamp == stamp && !c.expired());
        while inner.windows.len() >= CACHED_WINDOWS || inner.bytes_now() + bytes > CACHE_BYTES {
            let Some(lru) = (0..inner.windows.len()).min_by_key(|&i| inner.windows[i].used) else {
                break;
            };
            inner.windows.swap_remove(lru);
        }
        inner.tick += 1;
        let used = inner.tick;
        inner.windows.push(Cached {
            rel: rel.to_string(),
            who: crate::identity::acting_id(),
            stamp,
            from,
            entries: w.entries.clone(),
            attrs: w.attrs.clone(),
            more: w.more,
            bytes,
            used,
        });
    }

    /// How many windows the cache holds, and their bytes.
    pub(super) fn usage(&self) -> (usize, usize) {
        let inner = self.inner.lock().unwrap();
        (inner.windows.len(), inner.bytes_now())
    }
}

impl Inner {
    fn bytes_now(&self) -> usize {
        self.windows.iter().map(|c| c.bytes).sum()
    }
}

/// What a window's entries cost in memory: the vector and each name's
/// allocation (rounded up as allocators do).
fn window_bytes(entries: &[Entry]) -> usize {
    std::mem::size_of_val(entries)
        + entries
            .iter()
            .map(|e| e.sort_key.len().next_multiple_of(16) + 16)
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(key: &str, inclusive: bool) -> Bound {
        Bound {
            key: key.into(),
            inclusive,
        }
    }

    #[test]
    fn bounds_cover_what_they_admit() {
        assert!(Bound::covers(None, Some(&b("a", true))));
        assert!(!Bound::covers(Some(&b("a", true)), None));
        assert!(Bound::covers(Some(&b("a", true)), Some(&b("a", false))));
        assert!(!Bound::covers(Some(&b("a", false)), Some(&b("a", true))));
        assert!(Bound::covers(Some(&b("a", false)), Some(&b("b", true))));
        assert!(!Bound::covers(Some(&b("b", true)), Some(&b("a", false))));
        assert!(b("a", false).admits("a/") && !b("a", false).admits("a"));
    }

    #[test]
    fn coarse_or_recent_stamps_are_not_settled() {
        let now = SystemTime::now();
        let secs = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).unwrap();
        let stamp = |t: SystemTime, nsec: bool| {
            let d = secs(t);
            let n = if nsec {
                d.subsec_nanos().max(1) as i64
            } else {
                0
            };
            DirStamp {
                ino: 1,
                mtime: (d.as_secs() as i64, n),
                ctime: (d.as_secs() as i64, n),
                size: 0,
            }
        };
        let ago = |ms| now - Duration::from_millis(ms);
        assert!(stamp(ago(200), true).settled(now, false));
        assert!(!stamp(ago(20), true).settled(now, false));
        // Whole seconds: a change later in the same second keeps the stamp.
        assert!(!stamp(now, false).settled(now, false));
        assert!(stamp(ago(2500), false).settled(now, false));
        // A server's clock may be behind ours.
        assert!(!stamp(ago(200), true).settled(now, true));
        assert!(stamp(ago(3500), false).settled(now, true));
    }

    #[test]
    fn windows_are_the_smallest_entries_after_the_bound_in_order() {
        let d = tempfile::tempdir().unwrap();
        let mut names: Vec<String> = (0..300)
            .map(|i| format!("f{}", (i * 7919) % 1000))
            .collect();
        for n in &names {
            std::fs::write(d.path().join(n), b"").unwrap();
        }
        std::fs::create_dir(d.path().join("f5")).unwrap();
        names.extend(["f5".to_string(), "f5/".to_string()]);
        names.sort();
        let fd = crate::fscalls::open(
            d.path(),
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        // Page through in windows of 7: every name once, in order, and
        // never more than a window held.
        let mut from = None;
        let mut got = Vec::new();
        loop {
            let r = read_window(&fd, from.as_ref(), 7, None).unwrap();
            assert_eq!(r.seen, 301);
            assert!(r.window.entries.len() <= 7);
            got.extend(r.window.entries.iter().map(|e| e.sort_key.to_string()));
            from = r.window.next();
            if from.is_none() {
                break;
            }
        }
        assert_eq!(got, names);
        // A bound in the middle, inclusive and not.
        let at = |inclusive| {
            let b = b(&names[100], inclusive);
            let r = read_window(&fd, Some(&b), 3, None).unwrap();
            r.window
                .entries
                .iter()
                .map(|e| e.sort_key.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(at(true), names[100..103]);
        assert_eq!(at(false), names[101..104]);
    }
}
