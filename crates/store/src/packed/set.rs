//! One packed bucket as one process sees it: the pack files in its
//! `.s3hpc-packs` directory, the index built from their records, and this
//! process's own packs (one per user it writes as).
//!
//! Every process appends only to packs it created, so a pack has one
//! writer and needs no lock. A reader learns of other processes' records
//! by reading each pack from where it last stopped (`refresh`): new packs
//! are found by the directory's stamp, new records by a `pread` at each
//! pack's end. The newest record of a key (its time stamp, then its pack
//! and offset) is the key's state.

use super::record::{self, Kind, Parsed};
use crate::fscalls::{self, fstat, openat, read_dir};
use crate::list::DirStamp;
use crate::*;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Instant, SystemTime};

/// The directory of a packed bucket's packs; its presence makes the
/// bucket packed.
pub(crate) const PACKS_DIR: &str = ".s3hpc-packs";
/// The file conditional writes lock ranges of (one byte per slot).
pub(crate) const LOCK_FILE: &str = "lock";
const PACK_SUFFIX: &str = ".pack";
/// What one scan `pread` asks for.
const SCAN_CHUNK: usize = 64 << 10;
/// How long bytes that are not a record must stay so before a scan skips
/// them as damage (a write still arriving from another node fills in
/// within milliseconds).
pub(crate) const DAMAGE_LASTS: std::time::Duration = std::time::Duration::from_secs(2);
/// How often a shared file system's packs directory is read, at least.
const LIST_AT_LEAST: std::time::Duration = std::time::Duration::from_secs(1);
/// The file that keeps a bucket's threshold, if not [`super::PACK_MAX`].
pub(crate) const PACK_MAX_FILE: &str = "pack-max";
/// Byte ranges of the lock file a key's conditional writes hash to.
pub(crate) const LOCK_SLOTS: usize = 256;

/// One pack file, open for reading.
pub(crate) struct Pack {
    pub name: String,
    pub fd: OwnedFd,
    /// Its owner: the uid its writer acted as.
    pub owner: u32,
    /// Orders records of equal time stamps from different packs.
    pub tie: u64,
}

/// The state of a key: where its newest record is.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub kind: Kind,
    pub pack: u32,
    /// The record's offset in its pack.
    pub at: u64,
    pub header: record::Header,
    /// The record's metadata (StoredMeta's encoding).
    pub meta: Box<[u8]>,
}

impl Entry {
    /// The entry of the record whose head (or whole bytes) is `head`,
    /// written at `at` of pack `pack`; None if `head` is not a record's.
    pub fn of_record(head: &[u8], pack: u32, at: u64) -> Option<Entry> {
        let Parsed::Record { header, meta, .. } = record::parse(head) else {
            return None;
        };
        Some(Entry {
            kind: header.kind,
            pack,
            at,
            meta: meta.into(),
            header,
        })
    }

    /// Newest last: the time stamp, then a compaction's copy over its
    /// original, then the packs' and offsets' order.
    fn order(&self, packs: &[Option<Arc<Pack>>]) -> (u64, u8, u64, u64) {
        let tie = packs
            .get(self.pack as usize)
            .and_then(Option::as_ref)
            .map_or(0, |p| p.tie);
        (self.header.stamp, self.header.copies, tie, self.at)
    }

    pub fn last_modified(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(self.header.stamp)
    }
}

/// How far this process has read each pack, and the directory as last read.
struct Scan {
    /// Parallel to `PackSet::packs`: the offset the next record starts at.
    scanned: Vec<u64>,
    /// Parallel to `PackSet::packs`: its writer sealed it.
    sealed: Vec<bool>,
    /// Packs still open that the directory no longer holds (a compaction
    /// removed them): closed once no key's newest record is in them.
    gone: Vec<u32>,
    /// When packs gone were last looked at.
    gone_checked: Option<Instant>,
    /// Damage seen (pack, offset), reported once.
    damaged: Vec<(u32, u64)>,
    /// Bytes that were not a record, and when they were first seen.
    suspect: HashMap<(u32, u64), Instant>,
    /// Names this process has opened, and those it may not read (yet).
    known: HashMap<String, ()>,
    /// The directory's stamp when a read of it could be trusted.
    dir: Option<DirStamp>,
    /// When the last refresh that completed began.
    last: Option<Instant>,
    /// When the directory was last read.
    listed: Option<Instant>,
}

/// This process's pack for one user. Its fd is closed when the pack has
/// been idle a while (see [`IDLE`]) and opened again by the next append.
pub(crate) struct Writer {
    fd: Option<Arc<OwnedFd>>,
    name: String,
    pub pack: u32,
    pub end: u64,
    used: Instant,
    /// The pack's syncs, which appends wait for without the writer.
    pub sync: Arc<GroupSync>,
}

/// The syncs of one pack, shared by its appends (group commit): a sync
/// covers every append that completed before it began, so writers
/// waiting at once share one sync instead of taking turns, each holding
/// the pack.
#[derive(Default)]
pub(crate) struct GroupSync {
    /// The pack's bytes appended so far (set after each append).
    pub written: std::sync::atomic::AtomicU64,
    state: Mutex<Synced>,
}

#[derive(Default)]
struct Synced {
    /// Bytes a sync made durable.
    upto: u64,
    /// The ranges failed syncs covered (past what was durable then), and
    /// their errors: the kernel reports a failed write-back once, so a
    /// later sync cannot vouch for them.
    failed: Vec<(std::ops::Range<u64>, Errno)>,
}

impl GroupSync {
    /// Returns once the pack's bytes up to `end` are synced, by `sync`
    /// on `fd` here or by another append's sync that covered them.
    pub fn sync_to(
        &self,
        end: u64,
        fd: &OwnedFd,
        sync: impl FnOnce(&OwnedFd) -> rustix::io::Result<()>,
    ) -> rustix::io::Result<()> {
        let mut s = self.state.lock().unwrap();
        // `end` is the last byte of an append, plus one.
        if let Some((_, e)) = s.failed.iter().find(|(r, _)| r.start < end && end <= r.end) {
            return Err(*e);
        }
        if end <= s.upto {
            return Ok(());
        }
        let target = self.written.load(std::sync::atomic::Ordering::Acquire);
        match sync(fd) {
            Ok(()) => {
                s.upto = s.upto.max(target);
                Ok(())
            }
            Err(e) => {
                let from = s.upto;
                s.failed.push((from..target, e));
                Err(e)
            }
        }
    }
}

/// How long a writer's pack stays open with nothing appended. A file open
/// for writing on one CephFS client makes every other client's look at
/// its end a request to the MDS (the writer holds the size); closed, the
/// look is answered from the reader's own capabilities (measured by
/// scripts/pack-blocks.py: 0.95 requests and 0.66 ms against 0.01 and
/// 38 µs). Reopening costs one open.
pub(crate) const IDLE: std::time::Duration = std::time::Duration::from_millis(200);

impl Writer {
    /// The pack's fd, opened again (through `dir`) if it was closed.
    pub fn fd(&mut self, dir: &OwnedFd) -> Result<Arc<OwnedFd>> {
        self.used = Instant::now();
        if self.fd.is_none() {
            let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = openat(dir, self.name.as_str(), flags, Mode::empty())
                .map_err(|e| io_err(e, &self.name))?;
            self.fd = Some(Arc::new(fd));
        }
        Ok(self.fd.clone().unwrap())
    }
}

/// Closes the packs of this process's writers that have been idle for
/// [`IDLE`], from one thread for the whole process.
fn close_when_idle(w: &Arc<Mutex<Writer>>) {
    static WRITERS: Mutex<Vec<std::sync::Weak<Mutex<Writer>>>> = Mutex::new(Vec::new());
    static STARTED: std::sync::Once = std::sync::Once::new();
    WRITERS.lock().unwrap().push(Arc::downgrade(w));
    STARTED.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("s3hpc-pack-closer".into())
            .spawn(|| loop {
                std::thread::sleep(IDLE / 2);
                WRITERS.lock().unwrap().retain(|weak| {
                    let Some(w) = weak.upgrade() else {
                        return false;
                    };
                    // A writer busy appending is not idle.
                    if let Ok(mut w) = w.try_lock() {
                        if w.used.elapsed() >= IDLE {
                            w.fd = None;
                        }
                    }
                    true
                });
            });
        // Without the thread packs stay open: slower looks, nothing lost.
        drop(spawned);
    });
}

pub(crate) struct PackSet {
    pub dir: OwnedFd,
    /// Every pack this process opened, by number; None once closed.
    pub packs: RwLock<Vec<Option<Arc<Pack>>>>,
    pub index: RwLock<BTreeMap<String, Entry>>,
    scan: Mutex<Scan>,
    pub writers: Mutex<HashMap<u32, Arc<Mutex<Writer>>>>,
    /// Packs this process writes (their records are indexed as written).
    own: Mutex<Vec<u32>>,
    shared: bool,
    /// The bucket directory's owner, if the directory is sticky: then only
    /// an object's writer, that owner or root may replace or delete it,
    /// as the kernel allows in such a directory.
    pub sticky_owner: Option<u32>,
    /// The lock file, opened on the first conditional write.
    pub lock: std::sync::OnceLock<OwnedFd>,
    /// Its directory's inode: a bucket deleted and made again has another.
    pub ino: u64,
    /// [`DAMAGE_LASTS`] (tests set zero).
    pub damage_lasts: std::time::Duration,
    /// Objects up to this size are packed; larger ones are plain files.
    pub pack_max: std::sync::atomic::AtomicU64,
    /// The bucket directory's owner (who, besides root, sets `pack_max`).
    pub bucket_owner: u32,
}

fn io_err(e: Errno, what: &str) -> S3Error {
    S3Error::from_io(&e.into(), what)
}

impl PackSet {
    pub fn open(dir: OwnedFd, shared: bool, sticky_owner: Option<u32>, ino: u64) -> PackSet {
        PackSet {
            dir,
            packs: RwLock::new(Vec::new()),
            index: RwLock::new(BTreeMap::new()),
            scan: Mutex::new(Scan {
                scanned: Vec::new(),
                sealed: Vec::new(),
                gone: Vec::new(),
                gone_checked: None,
                damaged: Vec::new(),
                suspect: HashMap::new(),
                known: HashMap::new(),
                dir: None,
                last: None,
                listed: None,
            }),
            writers: Mutex::new(HashMap::new()),
            own: Mutex::new(Vec::new()),
            shared,
            sticky_owner,
            lock: std::sync::OnceLock::new(),
            ino,
            damage_lasts: DAMAGE_LASTS,
            pack_max: super::PACK_MAX.into(),
            bucket_owner: 0,
        }
    }

    /// Reads what other processes appended since this one last looked,
    /// unless a refresh that began after `since` has completed (whose
    /// view is as new as one this call would make).
    pub fn refresh(&self, since: Instant) -> Result<()> {
        self.refresh_with(since, self.damage_lasts)
    }

    /// [`PackSet::refresh`] that also reads the packs' directory whatever
    /// its stamp says: on CephFS a directory's times reach other clients
    /// lazily, so a pack another node has just made can be there before
    /// the stamp shows it. For a key not found, before calling it missing.
    pub fn refresh_listing_packs(&self) -> Result<()> {
        self.scan.lock().unwrap().dir = None;
        self.refresh_with(Instant::now(), self.damage_lasts)
    }

    /// [`PackSet::refresh`], skipping damage once it has lasted `lasts`
    /// (zero: at once, for a check that reports it).
    pub fn refresh_with(&self, since: Instant, lasts: std::time::Duration) -> Result<()> {
        let mut scan = self.scan.lock().unwrap();
        if scan.last.is_some_and(|t| t >= since) {
            return Ok(());
        }
        let began = Instant::now();
        let read_at = SystemTime::now();
        let st = fstat(&self.dir).map_err(|e| io_err(e, PACKS_DIR))?;
        let stamp = DirStamp::of(&st);
        // On a shared file system the directory is read at least once a
        // second whatever its stamp says (see `refresh_listing_packs`).
        let stale = self.shared && scan.listed.is_none_or(|t| t.elapsed() >= LIST_AT_LEAST);
        if scan.dir != Some(stamp) || stale {
            scan.listed = Some(Instant::now());
            self.discover(&mut scan)?;
            scan.dir = stamp.settled(read_at, self.shared).then_some(stamp);
        }
        let packs = self.packs.read().unwrap().clone();
        let own = self.own.lock().unwrap().clone();
        let mut found = Vec::new();
        for (i, pack) in packs.iter().enumerate() {
            let Some(pack) = pack else { continue };
            // Packs that look gone are read too: a listing and a lookup
            // may both miss a live pack for a moment on a shared file
            // system, and a pack truly gone has no writer (one look at
            // its end) and is closed soon.
            if own.contains(&(i as u32)) || scan.sealed[i] {
                continue;
            }
            let mut from = scan.scanned[i];
            loop {
                let (to, damage) = scan_pack(pack, i as u32, from, &mut found)?;
                scan.scanned[i] = to;
                let Some(Damage {
                    at,
                    next: Some(next),
                }) = damage
                else {
                    break;
                };
                // Skipped, and reported, only once it has lasted.
                let first = *scan
                    .suspect
                    .entry((i as u32, at))
                    .or_insert_with(Instant::now);
                if first.elapsed() < lasts {
                    break;
                }
                if !scan.damaged.contains(&(i as u32, at)) {
                    scan.damaged.push((i as u32, at));
                    eprintln!(
                        "s3hpc: pack {} of a packed bucket is damaged at byte {at}: the records \
                         there cannot be read (`s3hpc bucket check` lists them)",
                        pack.name
                    );
                }
                scan.scanned[i] = next;
                from = next;
            }
            // A seal is a pack's last record: nothing is read after it.
            if found
                .last()
                .is_some_and(|(_, e)| e.pack == i as u32 && e.kind == Kind::Seal)
            {
                scan.sealed[i] = true;
                found.pop();
            }
        }
        if !found.is_empty() {
            let mut index = self.index.write().unwrap();
            for (key, e) in found {
                insert_newer(&mut index, key, e, &packs);
            }
        }
        self.close_gone(&mut scan);
        scan.last = Some(began);
        Ok(())
    }

    /// Closes the packs the directory no longer holds that no key's
    /// newest record is in any more (a compaction's copies, newer by
    /// their count, took their place), so their space returns. At most
    /// once a second: it walks the index.
    fn close_gone(&self, scan: &mut Scan) {
        if scan.gone.is_empty()
            || scan
                .gone_checked
                .is_some_and(|t| t.elapsed() < LIST_AT_LEAST)
        {
            return;
        }
        scan.gone_checked = Some(Instant::now());
        let used: std::collections::HashSet<u32> = {
            let index = self.index.read().unwrap();
            index
                .values()
                .map(|e| e.pack)
                .filter(|p| scan.gone.contains(p))
                .collect()
        };
        let candidates: Vec<(u32, Arc<Pack>)> = {
            let packs = self.packs.read().unwrap();
            scan.gone
                .iter()
                .filter(|p| !used.contains(p))
                .filter_map(|p| packs[*p as usize].clone().map(|pack| (*p, pack)))
                .collect()
        };
        for (p, pack) in candidates {
            // Looked up once more before it is let go (a second miss, a
            // second later): one still there was not gone.
            scan.gone.retain(|g| *g != p);
            if !self.name_gone(&pack) {
                continue;
            }
            // Forgotten with it: if its name is listed again (it was
            // there all along), the next refresh opens it again.
            self.packs.write().unwrap()[p as usize] = None;
            scan.known.remove(&pack.name);
        }
    }

    /// Whether `pack`'s name is gone or names another file now (a
    /// compaction removed it).
    fn name_gone(&self, pack: &Pack) -> bool {
        match fscalls::statat(
            &self.dir,
            pack.name.as_str(),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        ) {
            Err(Errno::NOENT) => true,
            Ok(st) => fstat(&pack.fd).is_ok_and(|mine| mine.st_ino != st.st_ino),
            Err(_) => false,
        }
    }

    /// Opens the packs the directory holds that this process has not.
    fn discover(&self, scan: &mut Scan) -> Result<()> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let d = openat(&self.dir, ".", flags, Mode::empty()).map_err(|e| io_err(e, PACKS_DIR))?;
        let entries = read_dir(&d).map_err(|e| io_err(e, PACKS_DIR))?;
        let mut listed = std::collections::HashSet::new();
        // A listing cut short must not make packs look gone.
        for e in entries {
            let e = e.map_err(|e| io_err(e, PACKS_DIR))?;
            if let Ok(n) = e.file_name().to_str() {
                if n.ends_with(PACK_SUFFIX) {
                    listed.insert(n.to_string());
                }
            }
        }
        // Packs this process has open that are no longer there (its own
        // sealed ones too): not listed, and their name is gone or another
        // file's (a listing on a shared file system may miss an entry).
        for (i, p) in self.packs.read().unwrap().iter().enumerate() {
            let i = i as u32;
            let Some(p) = p else { continue };
            if listed.contains(&p.name) {
                // Listed again: it was there all along.
                scan.gone.retain(|g| *g != i);
                continue;
            }
            if !scan.gone.contains(&i) && self.name_gone(p) {
                scan.gone.push(i);
            }
        }
        let mut names: Vec<String> = listed
            .into_iter()
            .filter(|n| !scan.known.contains_key(n))
            .collect();
        names.sort();
        for name in names {
            let fd = match openat(
                &self.dir,
                name.as_str(),
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                // Another user's pack this identity may not read: tried
                // again by the next refresh (perhaps as someone who may).
                Err(Errno::ACCESS | Errno::PERM) => continue,
                // Removed by a compaction since the read of the directory
                // (ESTALE: a FUSE client's listing named a file already gone).
                Err(Errno::NOENT | Errno::STALE) => continue,
                Err(e) => return Err(io_err(e, &name)),
            };
            let owner = fstat(&fd).map(|s| s.st_uid).unwrap_or(u32::MAX);
            self.add_pack(scan, name, fd, owner);
        }
        Ok(())
    }

    fn add_pack(&self, scan: &mut Scan, name: String, fd: OwnedFd, owner: u32) -> u32 {
        let tie = crate::meta::mix(record::crc(name.as_bytes()) as u64);
        let mut packs = self.packs.write().unwrap();
        packs.push(Some(Arc::new(Pack {
            name: name.clone(),
            fd,
            owner,
            tie,
        })));
        scan.scanned.push(0);
        scan.sealed.push(false);
        scan.known.insert(name, ());
        (packs.len() - 1) as u32
    }

    /// This process's pack for the uid the thread acts as, created on the
    /// first write. `made` runs on the packs' directory after a new pack is
    /// created (to make its entry durable).
    pub fn writer(&self, uid: u32, made: impl FnOnce(&OwnedFd)) -> Result<Arc<Mutex<Writer>>> {
        let mut writers = self.writers.lock().unwrap();
        if let Some(w) = writers.get(&uid) {
            return Ok(w.clone());
        }
        let (fd, name, pack) = self.new_pack(uid, made)?;
        let w = Arc::new(Mutex::new(Writer {
            fd: Some(Arc::new(fd)),
            name,
            pack,
            end: 0,
            used: Instant::now(),
            sync: Arc::default(),
        }));
        close_when_idle(&w);
        writers.insert(uid, w.clone());
        Ok(w)
    }

    /// Moves `w` on to a new pack (after its old one was sealed).
    pub fn roll(&self, w: &mut Writer, uid: u32, made: impl FnOnce(&OwnedFd)) -> Result<()> {
        let (fd, name, pack) = self.new_pack(uid, made)?;
        *w = Writer {
            fd: Some(Arc::new(fd)),
            name,
            pack,
            end: 0,
            used: Instant::now(),
            sync: Arc::default(),
        };
        Ok(())
    }

    /// Creates a pack for this process and `uid`, open for appending, and
    /// opens it for reading among the set's packs.
    fn new_pack(&self, uid: u32, made: impl FnOnce(&OwnedFd)) -> Result<(OwnedFd, String, u32)> {
        self.new_pack_as(uid, Mode::from_bits_truncate(0o666), |_| Ok(()), made)
    }

    /// [`PackSet::new_pack`], created with `mode` (less the umask) and
    /// given to `ready` (which may set its owner and mode) before its name
    /// goes durable with `made` and it is opened for reading.
    pub fn new_pack_as(
        &self,
        uid: u32,
        mode: Mode,
        ready: impl FnOnce(&OwnedFd) -> Result<()>,
        made: impl FnOnce(&OwnedFd),
    ) -> Result<(OwnedFd, String, u32)> {
        let name = format!(
            "{}.{}.{uid}.{:08x}{PACK_SUFFIX}",
            crate::temp::host_field(),
            std::process::id(),
            crate::meta::mix(
                SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64)
            ) as u32
        );
        let fd = openat(
            &self.dir,
            name.as_str(),
            OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            mode,
        )
        .map_err(|e| io_err(e, &format!("a new pack in {PACKS_DIR}")))?;
        if let Err(e) = ready(&fd) {
            let _ = fscalls::unlinkat(&self.dir, name.as_str(), rustix::fs::AtFlags::empty());
            return Err(e);
        }
        made(&self.dir);
        let read = openat(
            &self.dir,
            name.as_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_err(e, &name))?;
        let pack = {
            let mut scan = self.scan.lock().unwrap();
            self.add_pack(&mut scan, name.clone(), read, uid)
        };
        self.own.lock().unwrap().push(pack);
        Ok((fd, name, pack))
    }

    /// The packs a compaction may rewrite, with how many bytes of each
    /// the scans read: sealed ones, and those whose writer (a process of
    /// this host) is gone. Never this process's own.
    pub fn closed_packs(&self) -> Vec<(u32, u64)> {
        let scan = self.scan.lock().unwrap();
        let own = self.own.lock().unwrap();
        let packs = self.packs.read().unwrap();
        let host = crate::temp::host_field();
        // Only a pack read to its end, with nothing in it that is not a
        // record: what a scan has not indexed, a compaction would lose.
        let whole = |p: &Pack, i: usize| {
            fstat(&p.fd).is_ok_and(|st| st.st_size as u64 == scan.scanned[i])
                && !scan.suspect.keys().any(|(p, _)| *p == i as u32)
        };
        (0..packs.len())
            .filter(|i| !own.contains(&(*i as u32)) && !scan.gone.contains(&(*i as u32)))
            .filter_map(|i| Some((i, packs[i].as_ref()?)))
            .filter(|(i, p)| scan.sealed[*i] || writer_gone(&p.name, &host))
            .filter(|(i, p)| whole(p, *i))
            .map(|(i, _)| (i as u32, scan.scanned[i]))
            .collect()
    }

    /// Points `key` at `new` if it still points at `old` (a compaction's
    /// copy of the record).
    pub fn moved(&self, key: &str, old: (u32, u64), new: Entry) {
        let mut index = self.index.write().unwrap();
        if let Some(e) = index.get_mut(key) {
            if (e.pack, e.at) == old {
                *e = new;
            }
        }
    }

    /// Records what this process appended.
    pub fn indexed(&self, key: &str, e: Entry) {
        // The packs lock is let go before the index's is taken: a listing
        // holds the index's and then asks for the packs' (one order only).
        let packs = self.packs.read().unwrap().clone();
        insert_newer(&mut self.index.write().unwrap(), key.to_string(), e, &packs);
    }

    /// The bucket's lock file, opened once per set: fcntl locks belong to
    /// the process, and closing any other fd of the file would release
    /// every lock the process holds on it.
    pub fn lock_fd(&self) -> Result<&OwnedFd> {
        if let Some(fd) = self.lock.get() {
            return Ok(fd);
        }
        let fd = openat(
            &self.dir,
            LOCK_FILE,
            OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_err(e, &format!("{PACKS_DIR}/{LOCK_FILE}")))?;
        let _ = self.lock.set(fd);
        Ok(self.lock.get().unwrap())
    }

    /// Every pack this process has open.
    pub fn open_packs(&self) -> Vec<Arc<Pack>> {
        self.packs
            .read()
            .unwrap()
            .iter()
            .flatten()
            .cloned()
            .collect()
    }

    pub fn pack(&self, i: u32) -> Option<Arc<Pack>> {
        self.packs
            .read()
            .unwrap()
            .get(i as usize)
            .cloned()
            .flatten()
    }

    /// The damage refreshes found: (pack name, offset).
    pub fn damage(&self) -> Vec<(String, u64)> {
        let scan = self.scan.lock().unwrap();
        let packs = self.packs.read().unwrap();
        scan.damaged
            .iter()
            .filter_map(|(p, at)| Some((packs[*p as usize].as_ref()?.name.clone(), *at)))
            .collect()
    }
}

/// Whether the pack's writer was a process of this host that is gone.
fn writer_gone(name: &str, host: &str) -> bool {
    let mut parts = name.split('.');
    let (Some(h), Some(pid)) = (parts.next(), parts.next()) else {
        return false;
    };
    let Some(pid) = pid.parse().ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    h == host
        && pid != rustix::process::getpid()
        && rustix::process::test_kill_process(pid) == Err(Errno::SRCH)
}

fn insert_newer(
    index: &mut BTreeMap<String, Entry>,
    key: String,
    e: Entry,
    packs: &[Option<Arc<Pack>>],
) {
    match index.get_mut(&key) {
        Some(old) if old.order(packs) >= e.order(packs) => {}
        Some(old) => *old = e,
        None => {
            index.insert(key, e);
        }
    }
}

/// Bytes that are not a record, at `at`; the next record whose header
/// holds starts at `next`, if the scan's buffer held one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Damage {
    at: u64,
    next: Option<u64>,
}

/// Reads the records of `pack` from `from` on into `found`. Returns where
/// the next record will start, and the damage that stopped the scan, if
/// any. A record not yet whole (being written, or left half done by a
/// killed writer) ends the scan at its start, to be read again; so does
/// damage: bytes that are not a record may be one still arriving from
/// another node (GlusterFS's client can make a later part of a write
/// visible before an earlier one), so the caller skips it only once it
/// has lasted (see [`DAMAGE_LASTS`]).
fn scan_pack(
    pack: &Pack,
    id: u32,
    from: u64,
    found: &mut Vec<(String, Entry)>,
) -> Result<(u64, Option<Damage>)> {
    let mut at = from;
    let mut buf = vec![0u8; SCAN_CHUNK];
    let mut dropped = false;
    'read: loop {
        let n = pread_full(&pack.fd, &mut buf, at).map_err(|e| io_err(e, &pack.name))?;
        if n == 0 {
            return Ok((at, None));
        }
        let got = &buf[..n];
        let mut pos = 0;
        while pos < got.len() {
            match record::parse(&got[pos..]) {
                Parsed::Record { header, key, meta } => {
                    let end = at + pos as u64 + header.len();
                    if end > at + got.len() as u64 && !has_byte(pack, end - 1)? {
                        return Ok((at + pos as u64, None));
                    }
                    found.push((
                        key.to_string(),
                        Entry {
                            kind: header.kind,
                            pack: id,
                            at: at + pos as u64,
                            meta: meta.into(),
                            header: header.clone(),
                        },
                    ));
                    // May pass the buffer's end: the next read starts there.
                    pos += header.len() as usize;
                }
                Parsed::Short { need } => {
                    if n < buf.len() {
                        // The file ends inside this record.
                        return Ok((at + pos as u64, None));
                    }
                    if pos == 0 {
                        buf.resize(need.max(buf.len() * 2), 0);
                    }
                    break;
                }
                Parsed::Damaged => {
                    let here = at + pos as u64;
                    // Perhaps only this client's cached copy of bytes
                    // another node has since written: read them again
                    // from the file system, once.
                    if !dropped {
                        dropped = true;
                        forget_cached(pack, here);
                        at = here;
                        continue 'read;
                    }
                    let next = record::resync(&got[pos..]).map(|skip| here + skip as u64);
                    return Ok((here, Some(Damage { at: here, next })));
                }
            }
        }
        at += pos as u64;
    }
}

/// Drops this client's cached pages of `pack` from `from` on. A FUSE
/// client (ceph-fuse, GlusterFS's) keeps a page it read in the kernel's
/// page cache, and invalidates it only some time after another node
/// writes there: a pack's last page, cached when it ended mid-page, then
/// shows zeros where a later record has since been appended (measured on
/// CephFS across nodes: 1 GET in 100 missed a key its writer had
/// acknowledged). Clean pages only, so it costs at most a read again.
pub(crate) fn forget_cached(pack: &Pack, from: u64) {
    // Advice covers whole pages only: from the page `from` is in.
    let page = from & !4095;
    let _ = rustix::fs::fadvise(&pack.fd, page, None, rustix::fs::Advice::DontNeed);
}

/// Whether the file has a byte at `at` (a record's last, to tell a whole
/// record from one still being written).
fn has_byte(pack: &Pack, at: u64) -> Result<bool> {
    let mut b = [0u8; 1];
    let n = pread_full(&pack.fd, &mut b, at).map_err(|e| io_err(e, &pack.name))?;
    Ok(n == 1)
}

/// `pread` until `buf` is full or the file ends.
pub(crate) fn pread_full(fd: impl AsFd, buf: &mut [u8], at: u64) -> rustix::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match fscalls::count(
            fscalls::Kind::Read,
            rustix::io::pread(fd.as_fd(), &mut buf[n..], at + n as u64),
        ) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> (tempfile::TempDir, PackSet) {
        let d = tempfile::tempdir().unwrap();
        let fd =
            rustix::fs::open(d.path(), OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
        let mut s = PackSet::open(fd, false, None, 0);
        s.damage_lasts = std::time::Duration::ZERO;
        (d, s)
    }

    fn write(d: &std::path::Path, name: &str, bytes: &[u8]) {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(d.join(name))
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }

    fn keys(s: &PackSet) -> Vec<(String, Kind)> {
        let idx = s.index.read().unwrap();
        idx.iter().map(|(k, e)| (k.clone(), e.kind)).collect()
    }

    #[test]
    fn one_sync_covers_what_was_appended_before_it_and_a_failure_sticks() {
        use std::sync::atomic::Ordering::SeqCst;
        let d = tempfile::tempdir().unwrap();
        let fd: OwnedFd = std::fs::File::create(d.path().join("p")).unwrap().into();
        let g = GroupSync::default();
        let calls = std::cell::Cell::new(0);
        let ok = |_: &OwnedFd| {
            calls.set(calls.get() + 1);
            Ok(())
        };
        let fail = |_: &OwnedFd| {
            calls.set(calls.get() + 1);
            Err(Errno::IO)
        };
        g.written.store(10, SeqCst);
        g.sync_to(4, &fd, ok).unwrap();
        // Bytes 4..10 were appended before that sync began: covered.
        g.sync_to(10, &fd, ok).unwrap();
        assert_eq!(calls.get(), 1);
        g.written.store(20, SeqCst);
        assert_eq!(g.sync_to(20, &fd, fail), Err(Errno::IO));
        // What the failed sync covered fails without another sync (one
        // that succeeds now could not vouch for it).
        assert_eq!(g.sync_to(15, &fd, ok), Err(Errno::IO));
        // What a sync made durable before the failure stays so.
        g.sync_to(8, &fd, ok).unwrap();
        assert_eq!(calls.get(), 2);
        g.written.store(30, SeqCst);
        g.sync_to(30, &fd, ok).unwrap();
        assert_eq!(g.sync_to(18, &fd, ok), Err(Errno::IO));
        g.sync_to(25, &fd, ok).unwrap();
        assert_eq!(calls.get(), 3);
    }

    #[test]
    fn a_pack_truncated_anywhere_indexes_exactly_its_whole_records() {
        let a = record::encode(Kind::Object, "a", b"", b"aaaa", 1, 0);
        let b = record::encode(Kind::Object, "b", b"m", b"bbbbbbbb", 2, 0);
        let whole = [a.clone(), b.clone()].concat();
        for cut in 0..=whole.len() {
            let (d, s) = set();
            write(d.path(), "w.pack", &whole[..cut]);
            s.refresh(Instant::now()).unwrap();
            let want = if cut == whole.len() {
                2
            } else if cut >= a.len() {
                1
            } else {
                0
            };
            assert_eq!(keys(&s).len(), want, "cut at {cut}");
            // The rest arriving later is read from where the scan stopped.
            write(d.path(), "w.pack", &whole[cut..]);
            s.refresh(Instant::now()).unwrap();
            assert_eq!(keys(&s).len(), 2, "cut at {cut}, then the rest");
            assert!(s.damage().is_empty(), "cut at {cut}");
        }
    }

    #[test]
    fn a_pack_whose_name_vanished_for_a_moment_is_read_again() {
        // On a shared file system a listing and a lookup of a name can
        // both miss a live pack at once (ceph-fuse, while a compaction
        // made and removed packs beside it): it must not be given up for
        // the rest of the process's life.
        let (d, s) = set();
        let rec = |k: &str, t| record::encode(Kind::Object, k, b"", b"data", t, 0);
        write(d.path(), "w.pack", &rec("a", 1));
        write(d.path(), "e.pack", b"");
        s.refresh(Instant::now()).unwrap();
        let away = |n: &str| d.path().join(format!("{n}.away"));
        for n in ["w.pack", "e.pack"] {
            std::fs::rename(d.path().join(n), away(n)).unwrap();
        }
        s.refresh(Instant::now()).unwrap();
        // Appended while they looked gone; then their names are back.
        write(d.path(), "w.pack.away", &rec("b", 2));
        write(d.path(), "e.pack.away", &rec("c", 3));
        for n in ["w.pack", "e.pack"] {
            std::fs::rename(away(n), d.path().join(n)).unwrap();
        }
        s.refresh(Instant::now()).unwrap();
        let names: Vec<String> = keys(&s).into_iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[test]
    fn the_newest_record_of_a_key_wins_across_packs() {
        let (d, s) = set();
        write(
            d.path(),
            "x.pack",
            &record::encode(Kind::Object, "k", b"", b"old", 5, 0),
        );
        write(
            d.path(),
            "y.pack",
            &record::encode(Kind::Tombstone, "k", b"", b"", 9, 0),
        );
        write(
            d.path(),
            "x.pack",
            &record::encode(Kind::Object, "k", b"", b"mid", 7, 0),
        );
        s.refresh(Instant::now()).unwrap();
        assert_eq!(keys(&s), vec![("k".to_string(), Kind::Tombstone)]);
    }

    #[test]
    fn damage_is_skipped_to_the_next_good_record_and_reported() {
        let (d, s) = set();
        let mut bytes = record::encode(Kind::Object, "a", b"", b"data", 1, 0);
        bytes[40] ^= 0xff; // the key: the header's checksum fails
        bytes.extend(record::encode(Kind::Object, "b", b"", b"data", 2, 0));
        write(d.path(), "w.pack", &bytes);
        s.refresh(Instant::now()).unwrap();
        assert_eq!(keys(&s), vec![("b".to_string(), Kind::Object)]);
        assert_eq!(s.damage(), vec![("w.pack".to_string(), 0)]);
    }

    #[test]
    fn a_hole_that_fills_in_is_not_skipped() {
        // GlusterFS's client can make the later part of a write visible
        // before the earlier: zeros, then a good record.
        let (d, mut s) = set();
        s.damage_lasts = std::time::Duration::from_secs(3600);
        let a = record::encode(Kind::Object, "a", b"", b"aaaa", 1, 0);
        let b = record::encode(Kind::Object, "b", b"", b"bbbb", 2, 0);
        let c = record::encode(Kind::Object, "c", b"", b"cccc", 3, 0);
        let hole = vec![0u8; b.len()];
        write(d.path(), "w.pack", &[a.clone(), hole, c.clone()].concat());
        s.refresh(Instant::now()).unwrap();
        assert_eq!(keys(&s).len(), 1);
        assert!(s.damage().is_empty());
        std::fs::write(d.path().join("w.pack"), [a, b, c].concat()).unwrap();
        s.refresh(Instant::now()).unwrap();
        assert_eq!(keys(&s).len(), 3);
        assert!(s.damage().is_empty());
    }

    #[test]
    fn records_larger_than_a_scan_chunk_are_indexed() {
        let (d, s) = set();
        let big = vec![7u8; SCAN_CHUNK * 2 + 5];
        let mut bytes = record::encode(Kind::Object, "big", b"", &big, 1, 0);
        bytes.extend(record::encode(
            Kind::Object,
            "small",
            &[1u8; 100],
            b"x",
            2,
            0,
        ));
        write(d.path(), "w.pack", &bytes);
        s.refresh(Instant::now()).unwrap();
        assert_eq!(keys(&s).len(), 2);
    }
}
