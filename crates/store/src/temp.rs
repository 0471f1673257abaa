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
//!
//! A PUT's temporary is named rsync's way, `.NAME.s3hpc-tmp-HOST-PID-N` for
//! the object `NAME` ([`TempNames::next_for`]): GlusterFS's distribute layer
//! places a file on the brick its name hashes to, but hashes a name matching
//! its `cluster.rsync-hash-regex` (default `^\.(.+)\.[^.]+$`) as the part
//! in brackets, so the temporary is made on the brick of the final name and
//! the rename stays on that brick. With any other name the rename usually
//! crosses bricks and leaves a link file there, which makes every later
//! lookup, read and delete of the object two hops. (A suffix with a byte that
//! is not UTF-8, which no key could name, is not matched by that regex:
//! tried on GlusterFS 10.3.) So these names are reserved the way names
//! starting with `.s3hpc` are ([`is_temp`]; `names::validate_segment`): a key
//! segment `.x.s3hpc-tmp-...` is InvalidKey, and listings hide such entries.
//! Rsync's own `.x.AbC123` stays an ordinary key. Names that would exceed
//! NAME_MAX take the form `.s3hpc-tmp.HOST.PID.N`.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Prefix of every temporary file name.
pub(crate) const TEMP_PREFIX: &str = ".s3hpc-tmp.";
/// What the last `.`-separated field of an rsync-style temporary starts with.
pub(crate) const TEMP_MARK: &str = "s3hpc-tmp-";
/// Temporaries older than this are taken as abandoned by the sweep at startup.
pub const STALE_AGE: Duration = Duration::from_secs(6 * 3600);
/// What a temporary's counter field starts with when its writer holds an
/// fcntl lock on it while it lives ([`TempNames::next_locked_for`]).
const LOCKED_MARK: char = 'L';
/// How long a temporary whose writer takes no lock is presumed live: such a
/// writer has its whole body at hand (one write) and publishes it within
/// milliseconds. Locking it would cost every small PUT two metadata-server
/// requests on CephFS (the lock and its release; 5 per PUT instead of 3).
pub(crate) const QUICK_WRITE_AGE: Duration = Duration::from_secs(60);

pub(crate) struct TempNames {
    /// `.s3hpc-tmp.<host>.<pid>.`: fixed for the life of the process.
    stem: String,
    /// `s3hpc-tmp-<host>-<pid>-`, the same for rsync-style names.
    mark: String,
    counter: AtomicU64,
}

/// This host's name as temporary names carry it: alphanumerics and `-`,
/// at most 40 of them (a host name may hold dots, which separate fields).
pub(crate) fn host_field() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect()
}

/// The host and pid a temporary's name says its writer was.
fn writer_of(name: &[u8]) -> Option<(&str, i32)> {
    let (host, pid) = if let Some(rest) = name.strip_prefix(TEMP_PREFIX.as_bytes()) {
        // `.s3hpc-tmp.HOST.PID.N`
        let mut fields = std::str::from_utf8(rest).ok()?.split('.');
        (fields.next()?, fields.next()?)
    } else {
        // `s3hpc-tmp-HOST-PID-N`: the host may hold `-`, so from the right.
        let rest = std::str::from_utf8(rsync_mark(name)?).ok()?;
        let mut fields = rest.rsplitn(3, '-');
        let (_, pid, host) = (fields.next()?, fields.next()?, fields.next()?);
        (host, pid)
    };
    Some((host, pid.parse().ok()?))
}

/// Whether a temporary's name says it belongs to a process of this host
/// that has exited: such a file can have no live writer, whatever its age.
/// A reused pid only makes the answer "alive", which keeps the file.
pub(crate) fn writer_is_gone(name: &[u8]) -> bool {
    let Some((host, pid)) = writer_of(name) else {
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

/// Whether a temporary's name says its writer locks it while it lives.
pub(crate) fn writer_locks(name: &[u8]) -> bool {
    let digits = name.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && name.len() > digits && name[name.len() - digits - 1] == LOCKED_MARK as u8
}

/// Whether a temporary is this process's own: a sweep running beside the
/// requests it serves must leave it, whatever its age (its lock, if any,
/// does not show to its own process).
pub(crate) fn is_own(name: &[u8]) -> bool {
    writer_of(name)
        .is_some_and(|(host, pid)| pid as u32 == std::process::id() && host == host_field())
}

/// What follows [`TEMP_MARK`] in an rsync-style temporary's name
/// `.NAME.s3hpc-tmp-...` (NAME not empty, no `.` after the mark).
fn rsync_mark(name: &[u8]) -> Option<&[u8]> {
    let dot = name.iter().rposition(|&b| b == b'.')?;
    if name.first() != Some(&b'.') || dot < 2 {
        return None;
    }
    name[dot + 1..].strip_prefix(TEMP_MARK.as_bytes())
}

/// Whether a directory entry is a temporary of the engine's, in either form:
/// hidden from listings, never a key, removed by the sweep once abandoned.
pub(crate) fn is_temp(name: &[u8]) -> bool {
    name.starts_with(TEMP_PREFIX.as_bytes()) || rsync_mark(name).is_some()
}

impl TempNames {
    pub fn new() -> Self {
        let (host, pid) = (host_field(), std::process::id());
        TempNames {
            stem: format!("{TEMP_PREFIX}{host}.{pid}."),
            mark: format!("{TEMP_MARK}{host}-{pid}-"),
            counter: AtomicU64::new(0),
        }
    }

    /// A temporary for the object `name`, in its directory: rsync's form
    /// `.NAME.s3hpc-tmp-HOST-PID-N` (see the module docs), or
    /// [`TempNames::next`]'s where that would not fit in a file name.
    pub fn next_for(&self, name: &str, out: &mut String) {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        out.clear();
        // 20 digits hold any u64.
        if 2 + name.len() + self.mark.len() + 20 <= crate::names::NAME_MAX {
            out.push('.');
            out.push_str(name);
            out.push('.');
            out.push_str(&self.mark);
        } else {
            out.push_str(&self.stem);
        }
        let _ = write!(out, "{n}");
    }

    /// [`TempNames::next_for`] for a writer that locks its temporary while
    /// it writes (a body that takes more than one write): the name says so,
    /// and a sweep then tells the writer's liveness by the lock alone.
    pub fn next_locked_for(&self, name: &str, out: &mut String) {
        self.next_for(name, out);
        let at = out.len() - out.bytes().rev().take_while(u8::is_ascii_digit).count();
        out.insert(at, LOCKED_MARK);
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
        assert!(!writer_is_gone(name.as_bytes()) && is_own(name.as_bytes()));
        let mut rsync = String::new();
        TempNames::new().next_for("obj", &mut rsync);
        assert!(is_own(rsync.as_bytes()), "{rsync}");
        // A pid far above any pid_max on this host cannot be running.
        let dead = format!("{TEMP_PREFIX}{}.2147483000.7", host_field());
        assert!(writer_is_gone(dead.as_bytes()) && !is_own(dead.as_bytes()));
        // Another host's writer may be alive: never judged gone.
        assert!(!writer_is_gone(
            format!("{TEMP_PREFIX}elsewhere-node.2147483000.7").as_bytes()
        ));
        assert!(!writer_is_gone(b".s3hpc-tmp.garbage"));
        // A locking writer's names say so, and still name their writer.
        let names = TempNames::new();
        for stem in ["obj", &"x".repeat(250)] {
            let mut locked = String::new();
            names.next_locked_for(stem, &mut locked);
            assert!(
                writer_locks(locked.as_bytes()) && is_own(locked.as_bytes()),
                "{locked}"
            );
            assert!(is_temp(locked.as_bytes()), "{locked}");
            let mut quick = String::new();
            names.next_for(stem, &mut quick);
            assert!(!writer_locks(quick.as_bytes()), "{quick}");
        }
        assert!(!writer_is_gone(b"plain-file"));
    }

    #[test]
    fn rsync_style_names_hash_as_the_object_and_stay_reserved() {
        let names = TempNames::new();
        let mut t = String::new();
        names.next_for("obj.tar", &mut t);
        // GlusterFS's default rsync-hash-regex `^\.(.+)\.[^.]+$` takes
        // the object's own name out of it.
        let (inner, last) = t[1..].rsplit_once('.').unwrap();
        assert_eq!(inner, "obj.tar", "{t}");
        assert!(!last.is_empty() && t.starts_with('.'), "{t}");
        assert!(
            is_temp(t.as_bytes()) && !writer_is_gone(t.as_bytes()),
            "{t}"
        );
        let dead = format!(".obj.{TEMP_MARK}{}-2147483000-7", host_field());
        assert!(writer_is_gone(dead.as_bytes()));
        assert!(!writer_is_gone(
            format!(".obj.{TEMP_MARK}other-node-2147483000-7").as_bytes()
        ));
        // rsync's own temporaries and look-alikes are keys, not ours.
        for key in [
            ".obj.AbC123",
            ".s3hpc-tmp-x",
            "..s3hpc-tmp-x",
            "a.s3hpc-tmp-x",
        ] {
            assert!(!is_temp(key.as_bytes()), "{key}");
        }
        // A name too long for the rsync form falls back to the old one.
        names.next_for(&"n".repeat(250), &mut t);
        assert!(t.starts_with(TEMP_PREFIX) && t.len() <= 255, "{t}");
    }
}
