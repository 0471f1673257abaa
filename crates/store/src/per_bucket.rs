//! What this process last read of each bucket's settings (its versioning
//! and lock, its lifecycle rules; the HTTP server's bucket logging),
//! trusted for a second: every process follows a change within a second,
//! at one read a second per bucket.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a bucket's setting is trusted before it is read again.
pub(crate) const RECHECK: Duration = Duration::from_secs(1);

/// Buckets remembered at most (requests may name any number of buckets
/// that do not exist): past it, the cache starts over.
const REMEMBERED: usize = 65536;

pub struct PerBucket<T>(Mutex<HashMap<String, (T, Instant)>>);

impl<T> Default for PerBucket<T> {
    fn default() -> Self {
        PerBucket(Mutex::new(HashMap::new()))
    }
}

impl<T: Clone> PerBucket<T> {
    /// The value last read, and whether it is still to be trusted.
    pub fn get(&self, bucket: &str) -> Option<(T, bool)> {
        let known = self.0.lock().unwrap();
        known
            .get(bucket)
            .map(|(v, at)| (v.clone(), at.elapsed() < RECHECK))
    }

    /// The value just read or written.
    pub fn put(&self, bucket: &str, value: T) {
        let mut known = self.0.lock().unwrap();
        if known.len() >= REMEMBERED && !known.contains_key(bucket) {
            known.clear();
        }
        known.insert(bucket.to_string(), (value, Instant::now()));
    }

    /// Forgets the bucket: the next use reads it.
    pub fn forget(&self, bucket: &str) {
        self.0.lock().unwrap().remove(bucket);
    }
}
