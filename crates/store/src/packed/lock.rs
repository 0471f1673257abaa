//! The lock conditional writes of one key take, in any process on any
//! node: a byte of the bucket's lock file, by the key's hash.

use super::*;

/// A write lock on the lock file's byte `slot`, released on drop.
pub(crate) struct SlotLock {
    set: Arc<PackSet>,
    slot: usize,
    stripe: usize,
}

/// fcntl locks belong to the process, so its threads (and its engines: a
/// process may open several over one tree) take turns at a stripe first;
/// a stripe is a function of the bucket and the lock's byte, so two
/// threads wanting one byte always meet at one stripe.
const STRIPES: usize = 1024;

fn stripes() -> &'static [(std::sync::Mutex<bool>, std::sync::Condvar)] {
    static S: std::sync::OnceLock<Vec<(std::sync::Mutex<bool>, std::sync::Condvar)>> =
        std::sync::OnceLock::new();
    S.get_or_init(|| {
        (0..STRIPES)
            .map(|_| (std::sync::Mutex::new(false), std::sync::Condvar::new()))
            .collect()
    })
}

impl Drop for SlotLock {
    fn drop(&mut self) {
        if let Some(fd) = self.set.lock.get() {
            let slot = self.slot as u64;
            let _ = crate::probe::fcntl_lock(fd.as_fd(), libc::F_SETLK, libc::F_UNLCK, slot, 1);
        }
        let (busy, turn) = &stripes()[self.stripe];
        *busy.lock().unwrap() = false;
        turn.notify_one();
    }
}

impl Store {
    /// Takes the lock of `key`'s slot: conditional writers of one key, in
    /// any process on any node, take turns.
    pub(super) fn lock_key(&self, set: &Arc<PackSet>, key: &str) -> Result<SlotLock> {
        let slot = (record::crc(key.as_bytes()) as usize) % set::LOCK_SLOTS;
        let stripe = (meta::mix(set.ino ^ slot as u64) as usize) % STRIPES;
        {
            let (busy, turn) = &stripes()[stripe];
            let mut b = busy.lock().unwrap();
            while *b {
                b = turn.wait(b).unwrap();
            }
            *b = true;
        }
        // From here the drop releases the slot, whatever fails below.
        let held = SlotLock {
            set: set.clone(),
            slot,
            stripe,
        };
        let fd = set.lock_fd()?;
        crate::probe::fcntl_lock(fd.as_fd(), libc::F_SETLKW, libc::F_WRLCK, slot as u64, 1)
            .map_err(|e| io_err(e, "a packed bucket's lock"))?;
        Ok(held)
    }

    /// For a write to `key` of a packed bucket that does not go through
    /// [`Store::packed_write`] (a multipart completion): takes the key's
    /// lock and checks `cond` against the key's state, records included.
    /// The caller writes with no condition of its own while it holds the
    /// lock. None where the bucket is plain.
    pub(crate) fn packed_condition(
        &self,
        bucket: &str,
        key: &str,
        cond: &WriteCondition,
    ) -> Result<Option<SlotLock>> {
        let Some(set) = self.packed(bucket) else {
            return Ok(None);
        };
        // Held whether or not there is a condition: the completion puts a
        // plain file at the key (see `packed_write`).
        let lock = self.lock_key(&set, key)?;
        if !cond.is_always() {
            let prev = self.entry(&set, key)?;
            self.check_write(&set, bucket, key, prev.as_ref(), cond)?;
        }
        Ok(Some(lock))
    }
}
