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
        let Ok(_running) = RUNNING.try_lock() else {
            return Ok(Compacted::default());
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
        let mut done = Compacted::default();
        for (pack, len) in set.closed_packs() {
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
            let Some(p) = set.pack(pack) else { continue };
            // Every copy first; a damaged record keeps its pack as it is.
            let mut copies = Vec::with_capacity(live.len());
            for (key, e) in &live {
                let mut bytes = vec![0u8; e.header.len() as usize];
                let n =
                    set::pread_full(&p.fd, &mut bytes, e.at).map_err(|err| io_err(err, &p.name))?;
                let whole = n == bytes.len()
                    && record::crc(&bytes[e.header.data_at() as usize..]) == e.header.data_crc;
                if !whole {
                    copies.clear();
                    break;
                }
                copies.push((key, e, bytes));
            }
            if copies.len() != live.len() {
                continue;
            }
            for (key, e, bytes) in copies {
                let new = self.append_record(&set, key, &bytes)?;
                set.moved(key, (pack, e.at), new);
            }
            match crate::fscalls::unlinkat(&set.dir, p.name.as_str(), AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(io_err(e, &p.name)),
            }
            done.packs += 1;
            done.records += live.len() as u64;
            done.bytes_freed += len - live_bytes.min(len);
        }
        Ok(done)
    }
}
