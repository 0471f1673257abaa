//! The object pool of a warp run: names of objects that exist. A GET or
//! STAT takes a random one out while it works on it (so no DELETE removes
//! it meanwhile), a DELETE takes one for good, a PUT adds one.

use super::schedule::Rng;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Default)]
pub struct Pool {
    keys: Mutex<Vec<String>>,
}

impl Pool {
    pub fn add(&self, key: String) {
        self.keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(key);
    }

    /// A random key, out of the pool. Waits while the pool is empty (other
    /// threads hold every object); `None` if it still is at `deadline`.
    pub fn take(&self, rng: &mut Rng, deadline: Instant) -> Option<String> {
        loop {
            {
                let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
                if !keys.is_empty() {
                    let i = rng.below(keys.len() as u64) as usize;
                    return Some(keys.swap_remove(i));
                }
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::yield_now();
        }
    }

    pub fn len(&self) -> usize {
        self.keys.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
