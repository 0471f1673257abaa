//! Compaction: the live records of closed packs (sealed by their writer,
//! or left by a process of this host that is gone) copied into this
//! process's pack, then the old pack removed. Copies keep their time
//! stamps, so a copy never wins over a newer record elsewhere, and a
//! reader that has the old pack open goes on reading it (its space returns
//! when the last such reader closes it). Readers are never blocked.

use super::*;

/// What a compaction did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Compacted {
    /// Packs rewritten and removed.
    pub packs: u64,
    /// Live records copied.
    pub records: u64,
    /// Bytes of dead records the removed packs held.
    pub bytes_freed: u64,
    /// Packs left alone because they belong to another user (only root
    /// may compact them: the copies keep their owner).
    pub skipped: u64,
}

/// Whose a pack is, and who may read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Owner {
    uid: u32,
    gid: u32,
    mode: u32,
}

/// A pack a compaction copies records into: its own, of one owner, group
/// and mode, sealed when the compaction ends.
struct Dest {
    fd: OwnedFd,
    name: String,
    pack: u32,
    end: u64,
    uid: u32,
}

impl Dest {
    fn new(set: &PackSet, owner: Owner) -> Result<Dest> {
        // Its name is durable before any pack it replaces goes, whatever
        // the durability asked of writes.
        let made = |d: &OwnedFd| write::sync_new_entry(Durability::Fsync, d);
        // Made with no permissions, then given its owner and mode: no one
        // can open it in between (an fd opened then would stay open).
        let ready = |fd: &OwnedFd| {
            let what = |e| io_err(e, "a compaction's pack");
            rustix::fs::fchown(
                fd,
                Some(rustix::process::Uid::from_raw(owner.uid)),
                Some(rustix::process::Gid::from_raw(owner.gid)),
            )
            .map_err(what)?;
            rustix::fs::fchmod(fd, Mode::from_raw_mode(owner.mode)).map_err(what)
        };
        let (fd, name, pack) = set.new_pack_as(owner.uid, Mode::empty(), ready, made)?;
        Ok(Dest {
            fd,
            name,
            pack,
            end: 0,
            uid: owner.uid,
        })
    }

    /// Appends a whole record; its index entry.
    fn append(&mut self, bytes: &[u8]) -> Result<Entry> {
        let at = self.end;
        let entry = Entry::of_record(bytes, self.pack, at)
            .ok_or_else(|| s3err!(InternalError, "a compaction's copy is not a whole record"))?;
        write::pwrite_all(&self.fd, bytes, at).map_err(|e| io_err(e, &self.name))?;
        self.end += bytes.len() as u64;
        Ok(entry)
    }

    fn seal(mut self) -> Result<()> {
        let seal = record::encode(Kind::Seal, "", &[], &[], stamp_after(None), self.uid);
        self.append(&seal)?;
        crate::fscalls::fsync(&self.fd).map_err(|e| io_err(e, &self.name))
    }
}

/// Releases a byte of the lock file when dropped.
struct Unlock<'a>(&'a OwnedFd, u64);

impl Drop for Unlock<'_> {
    fn drop(&mut self) {
        let _ = crate::probe::fcntl_lock(self.0.as_fd(), libc::F_SETLK, libc::F_UNLCK, self.1, 1);
    }
}

/// The lock file's byte a compaction holds (past the keys' slots): one
/// compaction per bucket at a time, on any node.
const COMPACTION_SLOT: u64 = set::LOCK_SLOTS as u64;

impl Store {
    /// Compacts the closed packs of `bucket` of which at least
    /// `min_garbage` (0 to 1) is dead records. Returns at once, having done
    /// nothing, while another compaction of the bucket runs.
    pub fn compact_bucket(&self, bucket: &str, min_garbage: f64) -> Result<Compacted> {
        let set = self
            .packed(bucket)
            .ok_or_else(|| s3err!(InvalidRequest, "bucket {bucket:?} is not packed"))?;
        // One compaction per process at a time too: fcntl locks do not
        // keep a process's threads apart.
        static RUNNING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _running = match RUNNING.try_lock() {
            Ok(g) => g,
            // A compaction that panicked left nothing this one relies on.
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Ok(Compacted::default()),
        };
        let lock = set.lock_fd()?;
        let busy = |e| io_err(e, "the compaction lock");
        match crate::probe::fcntl_lock(
            lock.as_fd(),
            libc::F_SETLK,
            libc::F_WRLCK,
            COMPACTION_SLOT,
            1,
        ) {
            Ok(()) => {}
            Err(Errno::ACCESS | Errno::AGAIN) => return Ok(Compacted::default()),
            Err(e) => return Err(busy(e)),
        }
        let _unlock = Unlock(lock, COMPACTION_SLOT);
        set.refresh(Instant::now())?;
        let euid = rustix::process::geteuid().as_raw();
        let mut done = Compacted::default();
        let mut into: HashMap<Owner, Dest> = HashMap::new();
        let result = (|| {
            let closed = set.closed_packs();
            // A record is dead because a newer one is elsewhere, perhaps in
            // a pack its writer never synced (a killed compaction, or a
            // writer under `--durability none`): every pack is synced
            // before anything it supersedes goes.
            for p in set.open_packs() {
                crate::fscalls::fdatasync(&p.fd).map_err(|e| io_err(e, &p.name))?;
            }
            for (pack, len) in closed {
                let Some(p) = set.pack(pack) else { continue };
                let st = fstat(&p.fd).map_err(|e| io_err(e, &p.name))?;
                let owner = Owner {
                    uid: st.st_uid,
                    gid: st.st_gid,
                    mode: st.st_mode & 0o7777,
                };
                // Copies go to a pack of the same owner, group and mode,
                // so no one may read them who could not read the original;
                // only root can give a pack to someone else.
                if euid != 0 && owner.uid != euid {
                    done.skipped += 1;
                    continue;
                }
                let live: Vec<(String, Entry)> = set
                    .index
                    .read()
                    .unwrap()
                    .iter()
                    .filter(|(_, e)| e.pack == pack)
                    .map(|(k, e)| (k.clone(), e.clone()))
                    .collect();
                let live_bytes: u64 = live.iter().map(|(_, e)| e.header.len()).sum();
                if len == 0 || ((len - live_bytes.min(len)) as f64) < min_garbage * len as f64 {
                    continue;
                }
                // Every copy first; a damaged record keeps its pack as it is.
                let mut copies = Vec::with_capacity(live.len());
                for (key, e) in &live {
                    let mut bytes = vec![0u8; e.header.len() as usize];
                    let n = set::pread_full(&p.fd, &mut bytes, e.at)
                        .map_err(|err| io_err(err, &p.name))?;
                    let whole = n == bytes.len()
                        && record::crc(&bytes[e.header.data_at() as usize..]) == e.header.data_crc;
                    match record::copied(&bytes) {
                        Some(copy) if whole => copies.push((key, e, copy)),
                        _ => break,
                    }
                }
                if copies.len() != live.len() {
                    continue;
                }
                let dest = match into.entry(owner) {
                    std::collections::hash_map::Entry::Occupied(d) => d.into_mut(),
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert(Dest::new(&set, owner)?)
                    }
                };
                let mut moved = Vec::with_capacity(copies.len());
                for (key, e, copy) in copies {
                    moved.push((key, (pack, e.at), dest.append(&copy)?));
                }
                // The copies are on disk before the only other copy goes,
                // whatever the durability asked of writes.
                crate::fscalls::fsync(&dest.fd).map_err(|e| io_err(e, &dest.name))?;
                for (key, old, new) in moved {
                    set.moved(key, old, new);
                }
                match crate::fscalls::unlinkat(&set.dir, p.name.as_str(), AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => {}
                    Err(e) => return Err(io_err(e, &p.name)),
                }
                done.packs += 1;
                done.records += live.len() as u64;
                done.bytes_freed += len - live_bytes.min(len);
            }
            Ok(())
        })();
        // Sealed, the compaction's packs are a later compaction's to take.
        let sealed = into.into_values().map(Dest::seal).fold(Ok(()), Result::and);
        result.and(sealed)?;
        Ok(done)
    }
}
