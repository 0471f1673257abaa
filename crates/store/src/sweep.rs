//! Removal of the temporaries killed writers left (see `temp`), by a walk
//! of the data root. Servers run it in the background after they start
//! listening, paced to a share of one thread's time, so no request waits
//! for a walk of a tree of millions of files and the metadata servers keep
//! most of their time for requests. While a listing is served, the share
//! drops to a tenth: both read directories through the same client and
//! metadata server, and the listing is what a user waits for (CephFS, 50k
//! files: the first page took 4.1 s beside the sweep, 0.7 s with it
//! yielding). Temporaries are hidden from every listing and never read as
//! objects, so serving before the sweep has reached them shows nothing
//! partial.

use crate::fscalls::{read_dir, statat, unlinkat};
use crate::meta;
use crate::temp::{is_own, is_temp, writer_is_gone, writer_locks, QUICK_WRITE_AGE, TEMP_PREFIX};
use crate::*;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How a sweep shares the machine: the part of its elapsed time it may
/// spend working (it sleeps the rest), and a flag that ends it early.
pub struct SweepPace<'a> {
    /// In (0, 1]; 1 runs flat out.
    pub share: f64,
    pub stop: Option<&'a AtomicBool>,
}

impl SweepPace<'_> {
    /// Flat out, to the end.
    pub const FULL: SweepPace<'static> = SweepPace {
        share: 1.0,
        stop: None,
    };
}

/// Entries between two checks of the pace.
const PACE_EVERY: u32 = 256;
/// The part of its share a paced sweep takes while listings are served.
const BUSY_PART: f64 = 0.1;

impl SweepPace<'_> {
    /// The share of time the sweep may work now.
    fn share_now(&self, listing: bool) -> f64 {
        let share = self.share.clamp(0.01, 1.0);
        if listing && share < 1.0 {
            share * BUSY_PART
        } else {
            share
        }
    }
}

struct Sweep<'a> {
    cutoff: SystemTime,
    /// The cutoff for temporaries whose writers take no lock (see
    /// [`QUICK_WRITE_AGE`]): never later than that age.
    quick_cutoff: SystemTime,
    locks: bool,
    pace: &'a SweepPace<'a>,
    listings: &'a crate::list::ListingCache,
    start: Instant,
    /// Time spent sleeping so far.
    slept: Duration,
    since_check: u32,
    removed: usize,
}

impl Store {
    /// Removes temporaries left by killed writers anywhere under the data
    /// root: those older than `older_than`, and any whose writer was a
    /// process of this host that has exited. Other young ones may belong to
    /// a live writer on another node and are left alone, as are those a
    /// writer holds locked and this process's own (it may be serving while
    /// it sweeps). Returns how many went.
    pub fn sweep_temporaries(&self, older_than: Duration) -> Result<usize> {
        self.sweep_temporaries_paced(older_than, &SweepPace::FULL)
    }

    /// [`Store::sweep_temporaries`] at `pace`.
    pub fn sweep_temporaries_paced(&self, older_than: Duration, pace: &SweepPace) -> Result<usize> {
        let root = self
            .open_listing("")
            .map_err(|e| S3Error::from_io(&e, "data root"))?;
        let cutoff = SystemTime::now()
            .checked_sub(older_than)
            .unwrap_or(UNIX_EPOCH);
        let quick = SystemTime::now()
            .checked_sub(QUICK_WRITE_AGE)
            .unwrap_or(UNIX_EPOCH);
        let mut sweep = Sweep {
            cutoff,
            quick_cutoff: cutoff.min(quick),
            locks: self.profile.fcntl_locks,
            pace,
            listings: &self.listings,
            start: Instant::now(),
            slept: Duration::ZERO,
            since_check: 0,
            removed: 0,
        };
        sweep.dir(&root);
        Ok(sweep.removed)
    }
}

/// Whether a live writer (on any node) holds a lock on temporary `name`.
fn writer_holds_lock(dir: &OwnedFd, name: &std::ffi::CStr) -> bool {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    crate::fscalls::openat(dir.as_fd(), name, flags, Mode::empty())
        .is_ok_and(|fd| crate::probe::locked_by_other(fd.as_fd()))
}

impl Sweep<'_> {
    /// Whether a temporary has no live writer: its writer was a process of
    /// this host that has exited, or it is older than the cutoff; one
    /// whose writer takes no lock only once it is older than a quick
    /// write can be. (A locked one is left by the caller.)
    fn abandoned(&self, name: &[u8], st: &rustix::fs::Stat) -> bool {
        let cutoff = if writer_locks(name) {
            self.cutoff
        } else {
            self.quick_cutoff
        };
        !is_own(name) && (meta::mtime(st) <= cutoff || writer_is_gone(name))
    }

    /// Sleeps as the pace asks; false once told to stop.
    fn go_on(&mut self) -> bool {
        self.since_check += 1;
        if self.since_check < PACE_EVERY {
            return true;
        }
        self.since_check = 0;
        if self.pace.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return false;
        }
        // Short naps until the work done fits the share, so a stop or the
        // end of a listing is seen soon.
        while self.pace.share < 1.0 {
            let share = self.pace.share_now(self.listings.busy());
            let worked = self.start.elapsed().saturating_sub(self.slept);
            let ahead = worked.div_f64(share).saturating_sub(self.start.elapsed());
            if ahead < Duration::from_millis(1) {
                break;
            }
            // What was slept, not what was asked: an oversleep is no work.
            let napped = Instant::now();
            std::thread::sleep(ahead.min(Duration::from_millis(100)));
            self.slept += napped.elapsed();
            if self.pace.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return false;
            }
        }
        true
    }

    fn dir(&mut self, dir: &OwnedFd) -> bool {
        let Ok(entries) = read_dir(dir) else {
            return true;
        };
        for e in entries.flatten() {
            if !self.go_on() {
                return false;
            }
            let name = e.file_name();
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            // Only what can be a temporary or hold one needs a stat.
            let ft = e.file_type();
            if ft == FileType::RegularFile && !is_temp(bytes) {
                continue;
            }
            let Ok(st) = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => {
                    let flags =
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                    let Ok(sub) = crate::fscalls::openat(dir.as_fd(), name, flags, Mode::empty())
                    else {
                        continue;
                    };
                    if !crate::deep::grow(|| self.dir(&sub)) {
                        return false;
                    }
                    if bytes == crate::multipart::UPLOADS.as_bytes() {
                        let records =
                            SystemTime::now().checked_sub(crate::multipart::COMPLETED_AGE);
                        self.removed +=
                            crate::multipart::purge_completed(&sub, records.unwrap_or(UNIX_EPOCH));
                    }
                    // A directory a killed writer made while moving an
                    // object into a directory of its name (`nested`): it
                    // holds at most a second link to that object.
                    if bytes.starts_with(TEMP_PREFIX.as_bytes()) && self.abandoned(bytes, &st) {
                        let _ = unlinkat(&sub, crate::names::SELF_ENTRY, AtFlags::empty());
                        if unlinkat(dir, name, AtFlags::REMOVEDIR).is_ok() {
                            self.removed += 1;
                        }
                    }
                }
                FileType::RegularFile
                    if is_temp(bytes)
                        && self.abandoned(bytes, &st)
                        && !(self.locks && writer_holds_lock(dir, name))
                        && unlinkat(dir, name, AtFlags::empty()).is_ok() =>
                {
                    self.removed += 1;
                }
                _ => {}
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_removes_only_old_temporaries() {
        let d = tempfile::tempdir().unwrap();
        let config = StoreConfig {
            etag: EtagPolicy::Fast,
            durability: Durability::None,
        };
        let s = Store::open(d.path(), config).unwrap();
        s.create_bucket("bkt").unwrap();
        std::fs::create_dir_all(d.path().join("bkt/a")).unwrap();
        // Another host's writers: one that locks its temporary (its lock
        // would show it live), one that does not (a quick write).
        let tmp = d.path().join("bkt/a/.s3hpc-tmp.otherhost.1.L0");
        let quick = d.path().join("bkt/a/.s3hpc-tmp.otherhost.1.1");
        std::fs::write(&tmp, b"partial").unwrap();
        std::fs::write(&quick, b"partial").unwrap();
        std::fs::write(d.path().join("bkt/a/obj"), b"keep").unwrap();
        assert_eq!(s.sweep_temporaries(Duration::from_secs(3600)).unwrap(), 0);
        assert!(tmp.exists());
        assert_eq!(s.sweep_temporaries(Duration::ZERO).unwrap(), 1);
        assert!(!tmp.exists());
        assert!(
            quick.exists(),
            "a young unlocked temporary may be a live quick write"
        );
        let past = std::time::SystemTime::now() - crate::temp::QUICK_WRITE_AGE * 2;
        std::fs::File::options()
            .write(true)
            .open(&quick)
            .unwrap()
            .set_modified(past)
            .unwrap();
        assert_eq!(s.sweep_temporaries(Duration::ZERO).unwrap(), 1);
        assert!(!quick.exists());
        assert!(d.path().join("bkt/a/obj").exists());
    }

    #[test]
    fn a_sweep_beside_the_requests_leaves_their_temporaries() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(d.path(), StoreConfig::default()).unwrap();
        s.create_bucket("bkt").unwrap();
        let mut own = String::new();
        s.temps.next_for("obj", &mut own);
        let own = d.path().join("bkt").join(own);
        std::fs::write(&own, b"being written").unwrap();
        let old = std::time::SystemTime::now() - Duration::from_secs(7 * 3600);
        std::fs::File::options()
            .write(true)
            .open(&own)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert_eq!(s.sweep_temporaries(Duration::ZERO).unwrap(), 0);
        assert!(own.exists());
    }

    #[test]
    fn a_paced_sweep_yields_to_listings() {
        let pace = SweepPace {
            share: 0.25,
            stop: None,
        };
        assert_eq!(pace.share_now(false), 0.25);
        assert!((pace.share_now(true) - 0.025).abs() < 1e-9);
        // Flat out stays flat out.
        assert_eq!(SweepPace::FULL.share_now(true), 1.0);
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(d.path(), StoreConfig::default()).unwrap();
        assert!(!s.listings.busy());
        let running = s.listings.enter();
        assert!(s.listings.busy());
        drop(running);
        assert!(!s.listings.busy());
    }

    #[test]
    fn a_paced_sweep_stops_when_told() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(d.path(), StoreConfig::default()).unwrap();
        s.create_bucket("bkt").unwrap();
        for i in 0..600 {
            let tmp = d.path().join(format!("bkt/.s3hpc-tmp.otherhost.1.L{i}"));
            std::fs::write(tmp, b"partial").unwrap();
        }
        let stop = AtomicBool::new(true);
        let pace = SweepPace {
            share: 0.5,
            stop: Some(&stop),
        };
        // Told to stop before it starts: it checks within PACE_EVERY entries.
        let n = s.sweep_temporaries_paced(Duration::ZERO, &pace).unwrap();
        assert!(n < PACE_EVERY as usize, "{n}");
        stop.store(false, Ordering::Relaxed);
        let m = s.sweep_temporaries_paced(Duration::ZERO, &pace).unwrap();
        assert_eq!(n + m, 600);
    }
}
