//! Names for temporary files, and removal of the ones killed writers left.
//!
//! A PUT writes into a temporary in the target directory and renames it into
//! place. Many processes on many nodes may write into one shared tree, so a
//! name carries host, pid and a counter, and is hidden from listings by the
//! reserved prefix. A killed writer leaves its temporary behind, invisible;
//! [`crate::Store::sweep_temporaries`] removes those older than an age, never
//! younger ones, which may belong to a live writer elsewhere, unless the
//! name says the writer was a process on this host that no longer exists.
//!
//! These names serve the PUTs that cannot use an unnamed `O_TMPFILE` (see
//! `put::Temp`): overwrites, since `linkat` refuses to replace an existing
//! object, and every PUT on file systems without `O_TMPFILE` (GlusterFS,
//! MooseFS, CephFS through FUSE).

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

/// This host's name as temporary names carry it: alphanumerics and `-`,
/// at most 40 of them (a host name may hold dots, which separate fields).
fn host_field() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect()
}

/// Whether a temporary's name says it belongs to a process of this host
/// that has exited: such a file can have no live writer, whatever its age.
/// A reused pid only makes the answer "alive", which keeps the file.
pub(crate) fn writer_is_gone(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(TEMP_PREFIX.as_bytes()) else {
        return false;
    };
    let Ok(rest) = std::str::from_utf8(rest) else {
        return false;
    };
    let mut fields = rest.split('.');
    let (Some(host), Some(pid)) = (fields.next(), fields.next()) else {
        return false;
    };
    let Ok(pid) = pid.parse::<i32>() else {
        return false;
    };
    if host != host_field() || pid as u32 == std::process::id() {
        return false;
    }
    match rustix::process::Pid::from_raw(pid) {
        Some(pid) => matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        ),
        None => false,
    }
}

impl TempNames {
    pub fn new() -> Self {
        TempNames {
            stem: format!("{TEMP_PREFIX}{}.{}.", host_field(), std::process::id()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gone_writers_are_recognised() {
        let mut name = String::new();
        TempNames::new().next(&mut name);
        // Our own temporaries belong to a live writer.
        assert!(!writer_is_gone(name.as_bytes()));
        // A pid far above any pid_max on this host cannot be running.
        let dead = format!("{TEMP_PREFIX}{}.2147483000.7", host_field());
        assert!(writer_is_gone(dead.as_bytes()));
        // Another host's writer may be alive: never judged gone.
        assert!(!writer_is_gone(
            format!("{TEMP_PREFIX}elsewhere-node.2147483000.7").as_bytes()
        ));
        assert!(!writer_is_gone(b".s3hpc-tmp.garbage"));
        assert!(!writer_is_gone(b"plain-file"));
    }
}
