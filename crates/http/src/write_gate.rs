//! Where a PUT's file-system write runs: on the async worker itself, or
//! with the worker's other tasks moved to another thread first
//! (`block_in_place`), chosen by what writes have cost lately.
//!
//! The hand-off costs about 20 µs of CPU (futex wake-ups, a context switch
//! and a scheduler moving threads), more than a whole create, write and
//! link on tmpfs or a quiet local disk. But a write can also wait hundreds
//! of microseconds on a busy file system's journal or allocator; inline,
//! that holds up the worker's other connections (on a loaded ext4 the IO500
//! write phases ran at half the rate). So a write runs inline while recent
//! writes were short, and is handed off once they are not.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Writes that recently took less than this (a moving average) run inline.
const INLINE_BELOW_NS: u64 = 100_000;
/// One slow write (a preempted thread, a page-cache flush) moves the average
/// by at most this much, so it does not send the next many writes away.
const SAMPLE_CAP_NS: u64 = 4 * INLINE_BELOW_NS;

#[derive(Default)]
pub(crate) struct WriteGate {
    /// Moving average of recent writes' durations, nanoseconds (weight 1/8
    /// for the newest). Updated without a lock: a lost update only delays
    /// the average by one sample.
    recent_ns: AtomicU64,
}

impl WriteGate {
    /// Runs `write` inline or after a hand-off, and records how long it
    /// took (the write alone, not the hand-off).
    pub fn run<T>(&self, write: impl FnOnce() -> T) -> T {
        if self.recent_ns.load(Ordering::Relaxed) < INLINE_BELOW_NS {
            self.timed(write)
        } else {
            tokio::task::block_in_place(|| self.timed(write))
        }
    }

    fn timed<T>(&self, write: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = write();
        self.record(start.elapsed().as_nanos() as u64);
        out
    }

    fn record(&self, took_ns: u64) {
        let old = self.recent_ns.load(Ordering::Relaxed);
        let new = old - old / 8 + took_ns.min(SAMPLE_CAP_NS) / 8;
        self.recent_ns.store(new, Ordering::Relaxed);
    }

    #[cfg(test)]
    fn inline(&self) -> bool {
        self.recent_ns.load(Ordering::Relaxed) < INLINE_BELOW_NS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_writes_are_handed_off_and_fast_ones_bring_them_back() {
        let gate = WriteGate::default();
        assert!(gate.inline(), "no history: inline");
        for _ in 0..4 {
            gate.record(1_000_000);
        }
        assert!(!gate.inline(), "after slow writes: handed off");
        for _ in 0..16 {
            gate.record(5_000);
        }
        assert!(gate.inline(), "after fast writes again: inline");
    }

    #[test]
    fn one_slow_write_among_fast_ones_keeps_them_inline() {
        let gate = WriteGate::default();
        for _ in 0..8 {
            gate.record(10_000);
        }
        gate.record(50_000_000);
        assert!(gate.inline());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn runs_the_write_either_way() {
        let gate = WriteGate::default();
        assert_eq!(gate.run(|| 1), 1);
        for _ in 0..8 {
            gate.record(1_000_000);
        }
        assert_eq!(gate.run(|| 2), 2);
    }
}
