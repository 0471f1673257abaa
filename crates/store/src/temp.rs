//! Names for temporary files, and removal of the ones killed writers left.
//!
//! A PUT writes into a temporary in the target directory and renames it into
//! place. Many processes on many nodes may write into one shared tree, so a
//! name carries host, pid and a counter, and is hidden from listings by the
//! reserved prefix. A killed writer leaves its temporary behind, invisible;
//! [`crate::Store::sweep_temporaries`] removes those older than an age, never
//! younger ones, which may belong to a live writer elsewhere.
//!
//! Named temporaries rather than `O_TMPFILE`: `O_TMPFILE` is missing on some
//! parallel file systems, and an unnamed file cannot replace an existing
//! object (`linkat` refuses to overwrite), so an overwrite would need a
//! named link plus a rename anyway: one syscall more than a named temporary.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Prefix of every temporary file name.
pub(crate) const TEMP_PREFIX: &str = ".s3hpc-tmp.";
/// Temporaries older than this are taken as abandoned by the sweep at startup.
pub const STALE_AGE: Duration = Duration::from_secs(6 * 3600);

pub(crate) struct TempNames {
    /// `<host>.<pid>.`: fixed for the life of the process.
    stem: String,
    counter: AtomicU64,
}

impl TempNames {
    pub fn new() -> Self {
        let uname = rustix::system::uname();
        let host: String = uname
            .nodename()
            .to_string_lossy()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .take(40)
            .collect();
        TempNames {
            stem: format!("{TEMP_PREFIX}{host}.{}.", std::process::id()),
            counter: AtomicU64::new(0),
        }
    }

    /// A name no other writer, on this host or another, uses at the same time.
    pub fn next(&self, out: &mut String) {
        out.clear();
        out.push_str(&self.stem);
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let _ = write!(out, "{n}");
    }
}
