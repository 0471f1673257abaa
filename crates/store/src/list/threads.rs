//! A cap on the threads listings start to look files up, over all the
//! listings of the process at once.
//!
//! On a shared file system a page's files are stat'ed by several threads
//! (each stat waits for a server), and a window's attributes by a few
//! more (`attrs`). Without a cap, every concurrent listing adds its own:
//! a hundred clients paging at once would start 1600 threads against one
//! metadata server, which answers no faster for it. A listing takes what
//! is free, down to none (it then stats on its own thread), and gives it
//! back when its lookups end.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Lookup threads of all listings together: two listings at full width.
pub(super) const MAX_THREADS: usize = 32;

static IN_USE: AtomicUsize = AtomicUsize::new(0);

/// Threads a listing may start; given back when dropped.
#[must_use]
pub(super) struct Lease(usize);

impl Lease {
    /// Up to `want` threads of the process's `MAX_THREADS`, fewer (or
    /// none) if other listings hold the rest.
    pub fn take(want: usize) -> Lease {
        Lease(take_from(&IN_USE, want, MAX_THREADS))
    }

    pub fn threads(&self) -> usize {
        self.0
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        IN_USE.fetch_sub(self.0, Ordering::Relaxed);
    }
}

/// Adds up to `want` to `in_use` without passing `cap`; returns how many.
fn take_from(in_use: &AtomicUsize, want: usize, cap: usize) -> usize {
    let mut now = in_use.load(Ordering::Relaxed);
    loop {
        let got = want.min(cap.saturating_sub(now));
        if got == 0 {
            return 0;
        }
        match in_use.compare_exchange_weak(now, now + got, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return got,
            Err(seen) => now = seen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_what_is_free_up_to_the_cap() {
        let in_use = AtomicUsize::new(0);
        assert_eq!(take_from(&in_use, 16, 20), 16);
        assert_eq!(take_from(&in_use, 16, 20), 4);
        assert_eq!(take_from(&in_use, 1, 20), 0);
        in_use.fetch_sub(16, Ordering::Relaxed);
        assert_eq!(take_from(&in_use, 10, 20), 10);
        assert_eq!(in_use.load(Ordering::Relaxed), 14);
    }
}
