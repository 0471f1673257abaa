//! The attributes of a window's files, kept with the window where the
//! file system hands them out with the directory (MooseFS).
//!
//! MooseFS's client fetches a directory's entries together with every
//! entry's attributes on the first readdir of an open handle, and answers
//! a lookup or stat from them while that handle stays open, for the thread
//! that read it (its cache is keyed by the caller's pid, which for FUSE is
//! the thread). Any other stat is a round trip to the master. `find` gets
//! its `-size` from there; a listing that stats a page's files when the
//! page is asked for (another thread, the handle long closed) pays a round
//! trip per key.
//!
//! So one thread reads the directory, selects and sorts the window, and
//! then stats the window's files in key order with the handle still open,
//! publishing each chunk as it goes: a page waits only for its own files,
//! the first page after about a page's worth of stats, and the whole
//! directory costs one local stat per file, as `find`. A large window is
//! shared by a few threads, each reading the directory once (one answer
//! of the master each) so the client answers its stats too: `find` stats
//! one file at a time. The attributes are those of
//! when the directory was read: the window is used only while the
//! directory's stamp is unchanged (an S3 write renames into it and so
//! changes it), and at most `MAX_AGE` (a file written in place by a POSIX
//! program leaves the stamp as it is).
//!
//! ceph-fuse answers a stat from its own inode cache too, but holds only
//! the last 16k inodes its readdirs brought (`client_cache_size`): in a
//! larger directory a stat in key order, long after the readdir, is a
//! round trip to the MDS, while `find`, stating each entry right after the
//! readdir returned it, is answered locally. So there ([`warm_window`]) the
//! window is the caller's at once, unstat'ed, and one thread reads the
//! directory again and stats the window's files in readdir order, as
//! `find` does. Pages take the attributes it has taken so far and stat the
//! rest themselves. An attribute serves a listing that began at most
//! `MAX_AGE` after it was taken (the continuation token says when the
//! listing began), so a window outlives the pass however long it takes,
//! and a pass that needs minutes over a window still serves its last
//! pages. Where the client still holds the window's inodes
//! (`client_cache_size` raised above the directory, and a metadata server
//! that leaves the client its capabilities), pages' own stats cost what
//! the pass's do and the pass would only double them. So the pass times a
//! sample of stats in key order against a sample of its own and runs only
//! while the first cost more; it rests otherwise and times both again,
//! because that changes within one listing: at a million files the metadata server, over its
//! cache limit, recalled the capabilities and every key-order stat became
//! a 17-40 ms request. While the pass pays, a page leaves it the lookups
//! (the kernel takes one at a time per directory): it waits for the pass
//! to take its files, looks up what is left for at most `OWN_SHARE`, and
//! then returns the keys it has, fewer than asked for where the pass has
//! not reached them yet.

use crate::fscalls::{read_dir, statat};
use rustix::fs::{AtFlags, Dir, FileType, Stat};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::threads::Lease;
use super::window::{read_window_in, Entry, Kind, Read};

/// Attributes taken this long before a listing began are not used: a
/// file rewritten in place by a POSIX program (which leaves the
/// directory's stamp as it is) shows its new size within this. Those a
/// readdir-order pass took after are used for the whole listing, however
/// long it takes (at a million files on ceph-fuse the pass takes minutes
/// over a window, and pages need all of a window's first keys).
pub(super) const MAX_AGE: Duration = Duration::from_secs(60);
/// A reader this many files ahead of the stats does its own stat rather
/// than wait (a listing that starts deep inside a fresh window).
const WAIT_AHEAD: usize = 8192;
/// The longest a reader waits for the stats to reach its file.
const WAIT: Duration = Duration::from_secs(5);
/// Files a statting thread claims at a time; readers are woken after each.
const CHUNK: usize = 64;
/// A readdir-order pass stops once no page has used its window for this
/// long: a client that asked for one page does not cost the metadata
/// server a whole window of stats. (A page can take seconds there while
/// the metadata server recalls the writer's capabilities of each file.)
const IDLE: Duration = MAX_AGE;
/// A window warmed in readdir order holds at least this many entries:
/// ceph-fuse's inode cache holds a smaller directory's whole, so pages'
/// own stats are answered from it.
const WARM_FROM: usize = 16 * 1024;
/// Threads taking a large window's stats, each with its own read of the
/// directory (the client answers only the thread that read it), the
/// helpers as `threads` leaves free...
const STAT_THREADS: usize = 4;
/// ...for windows of at least this many entries (each read costs the
/// master one answer holding the whole directory).
const PARALLEL_FROM: usize = 16 * 1024;
/// While a readdir-order pass pays, a page waits for it to take the
/// page's files rather than look them up itself, as long as it could
/// still look up what is left this long after its request began. Its
/// lookups and the pass's share one lock (see [`Attrs::wait_for_pass`]).
pub(super) const PAGE_BUDGET: Duration = Duration::from_secs(10);
/// How often a waiting page looks at what the pass has taken.
const POLL: Duration = Duration::from_millis(20);
/// Of its budget, a page that waits for a paying pass keeps at most this
/// much for its own lookups, and then returns what it has (fewer keys
/// than asked for, truncated, as S3 allows): at a million files a lookup
/// in key order cost 30-40 ms, and a page's thousand of them starved the
/// pass, which takes a file in 0.1-1 ms.
pub(super) const OWN_SHARE: Duration = Duration::from_secs(1);
/// The longest a page's lookup is held while the pass times its samples
/// (at most `SAMPLE_TIME` in key order, and `SAMPLE` stats of its own).
const MAX_HOLD: Duration = Duration::from_secs(3);

/// What a listing needs of a file's `stat` (size, time, the inode and
/// device for the fast ETag and the replaced-file check, the mode for the
/// type and the metadata bit): 40 bytes against a `Stat`'s 144.
#[derive(Clone, Copy)]
pub(super) struct Attr {
    dev: u64,
    ino: u64,
    size: i64,
    mtime: i64,
    mtime_nsec: u32,
    mode: u32,
    /// When it was taken, in ms after its window's `taken_at`.
    taken_ms: u32,
}

impl Attr {
    #[allow(clippy::unnecessary_cast)] // the fields' types differ between architectures
    fn of(st: &Stat, since: Instant) -> Attr {
        Attr {
            dev: st.st_dev as u64,
            ino: st.st_ino,
            size: st.st_size,
            mtime: st.st_mtime as i64,
            mtime_nsec: st.st_mtime_nsec as u32,
            mode: st.st_mode,
            taken_ms: since.elapsed().as_millis().min(u32::MAX as u128) as u32,
        }
    }

    /// A `Stat` holding these fields (the others zero).
    pub fn stat(&self) -> Stat {
        // SAFETY: `Stat` is a plain C struct of integers; all zeros is a
        // valid value of it.
        let mut st: Stat = unsafe { std::mem::zeroed() };
        st.st_dev = self.dev as _;
        st.st_ino = self.ino as _;
        st.st_size = self.size as _;
        st.st_mtime = self.mtime as _;
        st.st_mtime_nsec = self.mtime_nsec as _;
        st.st_mode = self.mode as _;
        st
    }
}

struct Progress {
    /// Every slot before this one is filled.
    next: usize,
    /// Threads still taking stats.
    running: usize,
}

/// The order a window's attributes are taken in, which says whether a
/// page waits for them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Key order, a chunk at a time (MooseFS): a page waits for the stats
    /// to reach its files, and the window expires whole after `MAX_AGE`.
    Key,
    /// Readdir order (ceph-fuse): a page takes what is there, and each
    /// attribute expires on its own.
    Readdir,
}

/// A window's file attributes by entry index, filled by one or more
/// threads.
pub(super) struct Attrs {
    slots: Vec<OnceLock<Option<Attr>>>,
    order: Order,
    /// Where the next unclaimed chunk starts.
    claimed: AtomicUsize,
    progress: Mutex<Progress>,
    cv: Condvar,
    pub taken_at: Instant,
    /// Pages have looked up every file before this index themselves (a
    /// readdir-order pass skips them)...
    paged_to: AtomicUsize,
    /// ...the last of them this many ms after `taken_at`.
    paged_ms: AtomicU64,
    /// A readdir-order pass runs and its last judgement said it pays...
    paying: AtomicBool,
    /// ...or it is timing its samples: pages hold their lookups, which
    /// would queue before its own and time the queue, not the stats.
    sampling: AtomicBool,
    /// ...where a stat in key order cost this many ns, and one of its own
    /// this many.
    late_ns: AtomicU64,
    fresh_ns: AtomicU64,
}

impl Attrs {
    fn new(entries: usize, order: Order) -> Attrs {
        Attrs {
            slots: (0..entries).map(|_| OnceLock::new()).collect(),
            order,
            claimed: AtomicUsize::new(0),
            progress: Mutex::new(Progress {
                next: 0,
                running: 1,
            }),
            cv: Condvar::new(),
            taken_at: Instant::now(),
            paged_to: AtomicUsize::new(0),
            paged_ms: AtomicU64::new(0),
            paying: AtomicBool::new(false),
            sampling: AtomicBool::new(false),
            late_ns: AtomicU64::new(0),
            fresh_ns: AtomicU64::new(0),
        }
    }

    /// Whether a readdir-order pass runs and pays: a page then leaves the
    /// lookups to it as far as it can.
    pub fn pass_paying(&self) -> bool {
        self.paying.load(Ordering::Relaxed)
    }

    /// Whether a pass takes the attributes in readdir order (ceph-fuse).
    pub fn readdir_order(&self) -> bool {
        self.order == Order::Readdir
    }

    /// Holds a page's next lookup while the pass times its samples, for
    /// at most `MAX_HOLD`. A first judgement, timed while 16 page threads
    /// held the directory's lookup lock in turn, saw 14 ms in key order
    /// against 11 ms of its own: both the queue, and the pass stopped
    /// where it paid.
    pub fn hold_for_sample(&self) {
        let until = Instant::now() + MAX_HOLD;
        while self.sampling.load(Ordering::Relaxed) && Instant::now() < until {
            std::thread::sleep(POLL);
        }
    }

    /// Waits while the pass pays (or times the samples that may say it
    /// does) and has not yet taken all the files `wanted` (entry
    /// indices), as long as a page could still look up those left by
    /// `deadline`, or `OWN_SHARE` of them where they would take longer
    /// (the page then returns fewer keys).
    ///
    /// ceph-fuse's kernel side takes one lookup at a time per directory,
    /// so a page's lookups (each a metadata server request, in key order)
    /// and the pass's (answered by the client's cache) queue for the same
    /// lock, and every lookup a page makes costs the pass several of its
    /// own. Pages that look up at once starved the pass at a million
    /// files (17 stats in 10 s against 16 page threads' 560). A page that
    /// waits gives the pass the lock: its files, spread over the readdir
    /// order, are taken a share at a time, and what is left it looks up
    /// itself (one lookup and one of the pass's, in turn, each).
    pub fn wait_for_pass(&self, wanted: &[usize], deadline: Instant) {
        loop {
            // A pass taking its samples may judge that it pays.
            if !self.pass_paying() && !self.sampling.load(Ordering::Relaxed) {
                return;
            }
            let left = wanted
                .iter()
                .filter(|&&i| self.slots.get(i).is_some_and(|s| s.get().is_none()))
                .count();
            let each = Duration::from_nanos(
                self.late_ns.load(Ordering::Relaxed) + self.fresh_ns.load(Ordering::Relaxed),
            );
            let own = (each * left as u32).min(OWN_SHARE);
            if left == 0 || Instant::now() + own + POLL >= deadline {
                return;
            }
            std::thread::sleep(POLL);
        }
    }

    /// A page looks up the files before entry `end` itself.
    pub fn paging_to(&self, end: usize) {
        self.paged_to.fetch_max(end, Ordering::Relaxed);
        self.paged_ms.store(
            self.taken_at.elapsed().as_millis() as u64,
            Ordering::Relaxed,
        );
    }

    /// Whether no page has used the window for `IDLE`.
    fn idle(&self) -> bool {
        let last = Duration::from_millis(self.paged_ms.load(Ordering::Relaxed));
        self.taken_at.elapsed().saturating_sub(last) > IDLE
    }

    /// The attributes of entry `i` if it is a file they were taken for,
    /// waiting for the stats to reach it unless they are far behind;
    /// those taken in readdir order only if taken at most `max_age` ago.
    pub fn get(&self, i: usize, max_age: Duration) -> Option<Stat> {
        let slot = self.slots.get(i)?;
        if let Some(a) = slot.get() {
            return a.filter(|a| self.fresh(a, max_age)).map(|a| a.stat());
        }
        if self.order == Order::Readdir {
            return None;
        }
        let mut p = self.progress.lock().unwrap();
        if i >= p.next + WAIT_AHEAD {
            return None;
        }
        while p.next <= i && p.running > 0 {
            let (g, waited) = self.cv.wait_timeout(p, WAIT).unwrap();
            p = g;
            if waited.timed_out() {
                break;
            }
        }
        drop(p);
        slot.get().copied().flatten().map(|a| a.stat())
    }

    /// Whether attributes taken in readdir order were taken at most
    /// `max_age` ago (those taken in key order expire with their window).
    fn fresh(&self, a: &Attr, max_age: Duration) -> bool {
        self.order == Order::Key
            || self
                .taken_at
                .elapsed()
                .saturating_sub(Duration::from_millis(a.taken_ms.into()))
                <= max_age
    }

    /// Whether the window's attributes have all grown too old to use.
    pub fn expired(&self) -> bool {
        self.order == Order::Key && self.taken_at.elapsed() > MAX_AGE
    }

    /// Memory held, for the cache's bound.
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(self.slots.as_slice())
    }

    fn claim(&self) -> Option<std::ops::Range<usize>> {
        let lo = self.claimed.fetch_add(CHUNK, Ordering::Relaxed);
        (lo < self.slots.len()).then(|| lo..(lo + CHUNK).min(self.slots.len()))
    }

    /// Moves `next` past the filled slots and wakes the readers; with
    /// `finished`, one thread fewer runs.
    fn publish(&self, finished: bool) {
        let mut p = self.progress.lock().unwrap();
        while self.slots.get(p.next).is_some_and(|s| s.get().is_some()) {
            p.next += 1;
        }
        if finished {
            p.running -= 1;
        }
        self.cv.notify_all();
    }

    /// Starts a thread that reads directory `dirfd` once, so the client
    /// answers its stats, and then takes chunks of the window's stats.
    fn spawn_helper(attrs: &Arc<Self>, dirfd: &OwnedFd, entries: &Arc<Vec<Entry>>) {
        let lease = Lease::take(1);
        if lease.threads() == 0 {
            return; // other listings hold the process's threads
        }
        let Ok(fd) = dirfd.try_clone() else { return };
        let (weak, entries) = (Arc::downgrade(attrs), entries.clone());
        attrs.progress.lock().unwrap().running += 1;
        let started = std::thread::Builder::new()
            .name("s3hpc-list-attrs".into())
            .spawn(move || {
                let _lease = lease;
                // The first readdir of a handle brings the whole directory.
                let dir = read_dir(&fd).ok().map(|mut dir| {
                    let _ = dir.next();
                    dir
                });
                fill(&weak, &fd, &entries, dir);
            });
        if started.is_err() {
            attrs.publish(true);
        }
    }
}

/// Takes chunks of the window's stats until none is left, on a thread
/// that read the directory, while `_dir` (its handle) is open. Stops once
/// nothing else holds the attributes (the window was dropped).
fn fill(attrs: &Weak<Attrs>, dirfd: &OwnedFd, entries: &[Entry], _dir: Option<Dir>) {
    loop {
        let Some(attrs) = attrs.upgrade() else { return };
        let Some(chunk) = attrs.claim() else {
            attrs.publish(true);
            return;
        };
        for i in chunk {
            match entries[i].kind {
                Kind::File => take(&attrs, dirfd, entries, i),
                _ => {
                    let _ = attrs.slots[i].set(None);
                }
            }
        }
        attrs.publish(false);
    }
}

/// Reads a window of directory `dirfd` as `read_window` does, on a thread
/// of its own that then stays to take the attributes of its files (see
/// the module docs). Some(None) if the directory could not be read; None
/// if no thread started or it gave no answer (the caller reads it itself).
pub(super) fn read_window_with_attrs(
    dirfd: &OwnedFd,
    from: Option<&super::window::Bound>,
    limit: usize,
) -> Option<Option<Read>> {
    let fd = dirfd.try_clone().ok()?;
    let from = from.cloned();
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("s3hpc-list-attrs".into())
        .spawn(move || {
            let Some((mut read, dir)) = read_dir(&fd)
                .ok()
                .and_then(|dir| read_window_in(dir, &fd, from.as_ref(), limit, None))
            else {
                let _ = tx.send(None);
                return;
            };
            let attrs = Arc::new(Attrs::new(read.window.entries.len(), Order::Key));
            read.window.attrs = Some(attrs.clone());
            let entries = read.window.entries.clone();
            if entries.len() >= PARALLEL_FROM {
                for _ in 1..STAT_THREADS {
                    Attrs::spawn_helper(&attrs, &fd, &entries);
                }
            }
            let weak = Arc::downgrade(&attrs);
            drop(attrs);
            if tx.send(Some(read)).is_err() {
                return;
            }
            fill(&weak, &fd, &entries, Some(dir));
        })
        .ok()?;
    // A thread that ended without an answer (a panic): the caller reads.
    rx.recv().ok()
}

/// Gives `window`, just read from directory `dirfd`, attributes that a
/// thread of its own takes in readdir order (see the module docs), if it
/// is large enough to need them and a thread is free.
pub(super) fn warm_window(dirfd: &OwnedFd, window: &mut super::window::Window) {
    if window.entries.len() < WARM_FROM {
        return;
    }
    let lease = Lease::take(1);
    if lease.threads() == 0 {
        return; // other listings hold the process's threads
    }
    let Ok(fd) = dirfd.try_clone() else { return };
    let attrs = Arc::new(Attrs::new(window.entries.len(), Order::Readdir));
    let (weak, entries) = (Arc::downgrade(&attrs), window.entries.clone());
    let started = std::thread::Builder::new()
        .name("s3hpc-list-warm".into())
        .spawn(move || {
            let _lease = lease;
            warm(&weak, &fd, &entries, SAMPLE);
            if let Some(a) = weak.upgrade() {
                a.paying.store(false, Ordering::Relaxed);
                a.sampling.store(false, Ordering::Relaxed);
            }
        });
    if started.is_ok() {
        window.attrs = Some(attrs);
    }
}

/// Files a readdir-order pass stats in key order where pages will ask
/// next, and then as many in readdir order, to judge whether it pays (see
/// [`pass_pays`]). The same thread times both, while pages hold theirs.
/// A sample from the window's end misjudged at a million files: 0.45-1 ms
/// a stat there (files made last, still in the metadata server's cache)
/// against 30-40 ms where pages were.
const SAMPLE: usize = 100;
/// A key-order sample stops after this long once it has `SAMPLE_MIN`
/// stats: 100 stats of 35 ms would cost the pass more than the 4096
/// stats it takes between two samples.
const SAMPLE_TIME: Duration = Duration::from_millis(200);
const SAMPLE_MIN: usize = 5;
/// A pass that pays judges again after this many more stats...
const RUN_BETWEEN: usize = 4096;
/// ...and one that does not, after resting this long: what the client
/// holds changes within a listing (at a million files the metadata
/// server, over its cache limit, recalled the capabilities, and a stat in
/// key order became a 17 ms request).
const REST: Duration = Duration::from_secs(10);

/// Reads directory `dirfd` and stats each of the window's files right
/// after the readdir returned it, but those pages have looked up already.
/// Stops once nothing else holds the attributes (the window was dropped)
/// or no page has used them for a while. With `sample` > 0 it runs only
/// while that pays: it times `sample` stats in key order and then
/// `sample` of its own, and if its own are not enough cheaper, rests and
/// times both again.
fn warm(attrs: &Weak<Attrs>, dirfd: &OwnedFd, entries: &[Entry], sample: usize) {
    let mut late = match attrs.upgrade() {
        Some(a) if sample > 0 => key_order_sample(&a, dirfd, entries, sample),
        Some(_) => Duration::ZERO,
        None => return,
    };
    let Ok(dir) = read_dir(dirfd) else { return };
    // The pass's own stats since the last key-order sample, from when.
    let (mut since, mut t) = (0, Instant::now());
    for (n, e) in dir.flatten().enumerate() {
        if n % 1024 == 1023 && attrs.upgrade().is_none_or(|a| a.idle()) {
            return;
        }
        let name = e.file_name().to_bytes();
        // Files sort as their names; a directory's entries differ in kind.
        let Ok(i) = entries.binary_search_by(|x| x.sort_key.as_bytes().cmp(name)) else {
            continue;
        };
        if entries[i].kind != Kind::File {
            continue;
        }
        let Some(a) = attrs.upgrade() else { return };
        if i < a.paged_to.load(Ordering::Relaxed) || a.slots[i].get().is_some() {
            continue;
        }
        take(&a, dirfd, entries, i);
        since += 1;
        if sample == 0 {
            continue;
        }
        if since == sample && !a.judge(late, t.elapsed() / sample as u32) {
            drop(a);
            if !rest(attrs) {
                return;
            }
        } else if since < sample + RUN_BETWEEN {
            continue;
        }
        let Some(a) = attrs.upgrade() else { return };
        late = key_order_sample(&a, dirfd, entries, sample);
        (since, t) = (0, Instant::now());
    }
}

impl Attrs {
    /// Whether the pass pays, by what a stat in key order cost (`late`)
    /// and one of its own (`fresh`); pages learn both.
    fn judge(&self, late: Duration, fresh: Duration) -> bool {
        let pays = pass_pays(late, fresh);
        self.late_ns
            .store(late.as_nanos() as u64, Ordering::Relaxed);
        self.fresh_ns
            .store(fresh.as_nanos() as u64, Ordering::Relaxed);
        self.paying.store(pays, Ordering::Relaxed);
        self.sampling.store(false, Ordering::Relaxed);
        pays
    }
}

/// Stats up to `n` files not taken yet in key order, from where pages
/// have looked up to (the files the next page asks for), for at most
/// `SAMPLE_TIME` once it has `SAMPLE_MIN`; what each cost. Starts a
/// sampling: pages hold their lookups until the judgement
/// (`Attrs::judge`).
fn key_order_sample(a: &Attrs, dirfd: &OwnedFd, entries: &[Entry], n: usize) -> Duration {
    a.sampling.store(true, Ordering::Relaxed);
    let from = a.paged_to.load(Ordering::Relaxed);
    let (mut took, mut spent) = (0, Duration::ZERO);
    for (i, e) in entries.iter().enumerate().skip(from) {
        if took == n || (took >= SAMPLE_MIN && spent >= SAMPLE_TIME) {
            break;
        }
        if e.kind == Kind::File && a.slots[i].get().is_none() {
            let t = Instant::now();
            take(a, dirfd, entries, i);
            spent += t.elapsed();
            took += 1;
        }
    }
    spent / took.max(1) as u32
}

/// Waits `REST` while pages keep using the window; false once it is
/// dropped or idle.
fn rest(attrs: &Weak<Attrs>) -> bool {
    let until = Instant::now() + REST;
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(200));
        if attrs.upgrade().is_none_or(|a| a.idle()) {
            return false;
        }
    }
    true
}

/// Whether stats right after the readdir (`fresh`, each) are enough
/// cheaper than stats long after it in key order (`late`, each, what pages
/// would pay) for a pass to save more than it costs: ceph-fuse with its
/// default 16k-inode cache, 1882 µs late against 815 µs fresh on a 200k
/// directory; with `client_cache_size` above the directory, pages were as
/// cheap as `find` and the pass doubled their stats (186 s against 87 s).
fn pass_pays(late: Duration, fresh: Duration) -> bool {
    late * 2 > fresh * 3
}

/// Stats window file `i` into its slot.
fn take(attrs: &Attrs, dirfd: &OwnedFd, entries: &[Entry], i: usize) {
    let attr = statat(dirfd, entries[i].name(), AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
        .map(|st| Attr::of(&st, attrs.taken_at));
    let _ = attrs.slots[i].set(attr);
}

#[cfg(test)]
impl Attrs {
    /// The attributes of a readdir-order window of `entries` entries,
    /// none taken yet, whose pass judged that it pays: a lookup in key
    /// order 20 ms, one of its own 1 ms.
    pub(super) fn paying(entries: usize) -> Arc<Attrs> {
        let attrs = Attrs::new(entries, Order::Readdir);
        attrs.judge(Duration::from_millis(20), Duration::from_millis(1));
        Arc::new(attrs)
    }

    /// Takes window file `i` as the pass would.
    pub(super) fn take(&self, dirfd: &OwnedFd, entries: &[Entry], i: usize) {
        take(self, dirfd, entries, i);
    }

    /// Where pages have looked up to.
    pub(super) fn paged_to(&self) -> usize {
        self.paged_to.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attributes of a regular file of `size` bytes, taken as its
    /// window's attributes began.
    fn file_of(size: i64) -> Attr {
        Attr {
            dev: 1,
            ino: 1,
            size,
            mtime: 0,
            mtime_nsec: 0,
            mode: 0o100644,
            taken_ms: 0,
        }
    }
    use crate::list::window::read_window;

    #[test]
    fn warming_in_readdir_order_fills_the_windows_files_only() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..300 {
            std::fs::write(tmp.path().join(format!("k{i:03}")), vec![b'x'; i]).unwrap();
        }
        std::fs::create_dir(tmp.path().join("k150x")).unwrap();
        let dirfd = rustix::fs::open(
            tmp.path(),
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        // The 200 smallest keys: k000..k150, k150x/ and k150x (its self-entry) among them.
        let read = read_window(&dirfd, None, 200, None).unwrap();
        let entries = read.window.entries.clone();
        let attrs = Arc::new(Attrs::new(entries.len(), Order::Readdir));
        // Nothing taken yet: a page does not wait, it stats on its own.
        let t = Instant::now();
        assert!(attrs.get(0, MAX_AGE).is_none());
        assert!(t.elapsed() < WAIT);
        // A page looked up the first 10 itself: the pass leaves them.
        attrs.paging_to(10);
        warm(&Arc::downgrade(&attrs), &dirfd, &entries, 0);
        for (i, e) in entries.iter().enumerate() {
            let got = attrs.get(i, MAX_AGE);
            match e.kind {
                Kind::File if i < 10 => assert!(got.is_none(), "{}", e.name()),
                Kind::File => {
                    let size = e.name()[1..].parse::<i64>().unwrap();
                    assert_eq!(got.map(|st| st.st_size), Some(size), "{}", e.name());
                }
                _ => assert!(got.is_none(), "{}", e.name()),
            }
        }
        assert!(
            !attrs.expired(),
            "readdir-order attributes expire one by one"
        );
    }

    #[test]
    fn key_order_samples_start_where_pages_are_past_taken_files() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..50 {
            std::fs::write(tmp.path().join(format!("k{i:02}")), b"x").unwrap();
        }
        let dirfd = rustix::fs::open(
            tmp.path(),
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let entries = read_window(&dirfd, None, 50, None).unwrap().window.entries;
        let attrs = Attrs::new(entries.len(), Order::Readdir);
        let taken = |attrs: &Attrs| -> Vec<usize> {
            (0..50)
                .filter(|&i| attrs.get(i, MAX_AGE).is_some())
                .collect()
        };
        attrs.paging_to(30);
        take(&attrs, &dirfd, &entries, 32);
        key_order_sample(&attrs, &dirfd, &entries, 5);
        // 30, 31, 33, 34, 35: 32 was taken already.
        assert_eq!(taken(&attrs), [30, 31, 32, 33, 34, 35]);
        assert!(attrs.sampling.load(Ordering::Relaxed), "pages hold");
        // Pages moved on: the next sample starts where they are.
        attrs.paging_to(45);
        key_order_sample(&attrs, &dirfd, &entries, 100);
        assert_eq!(taken(&attrs).len(), 6 + 5, "45..50 too, and no more");
    }

    #[test]
    fn pages_wait_for_a_paying_pass_only_within_their_budget() {
        let ms = Duration::from_millis;
        let attr = file_of(0);
        let wanted: Vec<usize> = (0..10).collect();
        let attrs = Arc::new(Attrs::new(10, Order::Readdir));
        // No pass judged yet (or it rests): no wait at all.
        let t = Instant::now();
        attrs.wait_for_pass(&wanted, t + Duration::from_secs(5));
        assert!(t.elapsed() < ms(500));
        // A paying pass at 1 ms a lookup: the page waits until it has
        // taken the page's files, here after 300 ms.
        assert!(attrs.judge(ms(3) / 2, ms(1) / 2));
        let filler = {
            let a = attrs.clone();
            std::thread::spawn(move || {
                std::thread::sleep(ms(300));
                for s in &a.slots {
                    let _ = s.set(Some(attr));
                }
            })
        };
        let t = Instant::now();
        attrs.wait_for_pass(&wanted, t + Duration::from_secs(5));
        let waited = t.elapsed();
        filler.join().unwrap();
        assert!(waited >= ms(280) && waited < ms(3000), "{waited:?}");
        // Lookups of 1 s each: ten left would take longer than the
        // page's own share, so it waits until that share is left.
        let attrs = Attrs::new(10, Order::Readdir);
        assert!(attrs.judge(ms(900), ms(100)));
        let t = Instant::now();
        attrs.wait_for_pass(&wanted, t + OWN_SHARE + ms(400));
        let waited = t.elapsed();
        assert!(waited >= ms(350) && waited < OWN_SHARE, "{waited:?}");
        // Its budget spent already: no wait.
        let t = Instant::now();
        attrs.wait_for_pass(&wanted, t + ms(500));
        assert!(t.elapsed() < ms(300));
        // A pass that does not pay: pages do not wait for it.
        assert!(!attrs.judge(ms(1), ms(1)));
        assert!(!attrs.pass_paying());
    }

    #[test]
    fn readdir_order_attributes_serve_a_listing_as_old_as_it_allows() {
        let ms = Duration::from_millis;
        let attrs = Attrs::new(1, Order::Readdir);
        let _ = attrs.slots[0].set(Some(file_of(7)));
        std::thread::sleep(ms(300));
        assert!(attrs.get(0, ms(100)).is_none(), "taken before it began");
        assert_eq!(attrs.get(0, ms(1000)).map(|st| st.st_size), Some(7));
    }

    #[test]
    fn pages_hold_their_lookups_while_the_pass_times_its_samples() {
        let ms = Duration::from_millis;
        let attrs = Arc::new(Attrs::new(10, Order::Readdir));
        attrs.sampling.store(true, Ordering::Relaxed);
        // The pass judges after 200 ms that it does not pay.
        let judge = {
            let a = attrs.clone();
            std::thread::spawn(move || {
                std::thread::sleep(ms(200));
                a.judge(ms(1), ms(1))
            })
        };
        let t = Instant::now();
        attrs.hold_for_sample();
        let held = t.elapsed();
        assert!(!judge.join().unwrap());
        assert!(held >= ms(180) && held < MAX_HOLD, "{held:?}");
        // Sampling: a page waits for the judgement, then not for a pass
        // that does not pay.
        attrs.sampling.store(true, Ordering::Relaxed);
        let a = attrs.clone();
        let judge = std::thread::spawn(move || {
            std::thread::sleep(ms(200));
            a.judge(ms(1), ms(1))
        });
        let t = Instant::now();
        attrs.wait_for_pass(&[0, 1], t + Duration::from_secs(5));
        judge.join().unwrap();
        assert!(t.elapsed() >= ms(180) && t.elapsed() < ms(3000));
        // Not sampling: no hold at all.
        let t = Instant::now();
        attrs.hold_for_sample();
        assert!(t.elapsed() < ms(100));
    }

    #[test]
    fn a_pass_runs_only_where_late_stats_cost_more() {
        let us = Duration::from_micros;
        assert!(pass_pays(us(1882), us(815)), "ceph-fuse's default cache");
        assert!(
            !pass_pays(us(335), us(457)),
            "a cache holding the directory"
        );
        assert!(!pass_pays(us(10), us(10)), "a local file system");
    }
}
