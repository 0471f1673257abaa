//! How every benchmark spreads its work over ranks and merges it back: one
//! mechanism for thread ranks (one process) and process ranks (mpirun).
//!
//! A benchmark's per-rank code only talks to `Comm`. Each timed phase is
//! `timed_phase`: a barrier, the rank's work, then an all-gather of every
//! rank's `RankRecord` (counters, latency histograms, time, error), so every
//! rank sees the same totals and a failure on any rank fails all of them
//! with its message instead of leaving the others waiting in a collective.

use super::HarnessOptions;
use crate::comm::{run_threads, Comm};
use crate::latency::{take_u64, Latency};
use anyhow::Context;
use std::ffi::OsString;
use std::ops::Range;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

impl HarnessOptions {
    /// Runs `f` on every rank of the run: `ranks` threads of this process,
    /// or under mpirun this process's one rank. Returns the result of this
    /// process's lowest rank (rank 0 unless under mpirun).
    pub fn each_rank<R: Send>(&self, f: impl Fn(&dyn Comm) -> R + Sync) -> R {
        match &self.comm {
            Some(comm) => f(&**comm),
            None => run_threads(self.ranks, f).swap_remove(0),
        }
    }

    /// Runs `f` once in every process, for benchmarks with their own
    /// concurrency knob (warp's slots, copy's workers): under mpirun each
    /// process takes its share of the workers (`share`), otherwise this
    /// process is the only rank and runs them all.
    pub fn each_process<R: Send>(&self, f: impl Fn(&dyn Comm) -> R + Sync) -> R {
        match &self.comm {
            Some(comm) => f(&**comm),
            None => run_threads(1, f).swap_remove(0),
        }
    }
}

/// Rank `rank`'s block of `total` items split over `n` ranks as evenly as
/// possible (the first ranks get none when `total < n`).
pub fn share(total: u64, rank: usize, n: usize) -> Range<u64> {
    let (r, n) = (rank as u128, n as u128);
    let at = |i: u128| (total as u128 * i / n) as u64;
    at(r)..at(r + 1)
}

/// What one rank did in one phase.
#[derive(Default)]
pub struct RankRecord {
    /// The benchmark's counters (ops, bytes, objects...), summed over ranks.
    pub counters: Vec<u64>,
    /// Latency per op type, merged over ranks.
    pub latencies: Vec<Latency>,
    pub elapsed: Duration,
    pub error: Option<anyhow::Error>,
}

impl RankRecord {
    pub fn new(counters: usize, latencies: usize) -> RankRecord {
        RankRecord {
            counters: vec![0; counters],
            latencies: (0..latencies).map(|_| Latency::new()).collect(),
            ..Default::default()
        }
    }

    fn encode(&self) -> Vec<u8> {
        let mut buf = Vec::new();
        let header = [
            self.counters.len() as u64,
            self.latencies.len() as u64,
            self.elapsed.as_nanos() as u64,
        ];
        for v in header.iter().chain(&self.counters) {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        for l in &self.latencies {
            l.encode(&mut buf);
        }
        if let Some(e) = &self.error {
            buf.extend_from_slice(format!("{e:#}").as_bytes());
        }
        buf
    }
}

/// One phase over all ranks.
pub struct Merged {
    /// Counters summed over ranks.
    pub counters: Vec<u64>,
    /// Each rank's counters, by rank.
    pub per_rank: Vec<Vec<u64>>,
    /// Each rank's phase time in seconds, by rank.
    pub times: Vec<f64>,
    pub latencies: Vec<Latency>,
}

impl Merged {
    /// The phase time: the slowest rank's.
    pub fn seconds(&self) -> f64 {
        self.times.iter().copied().fold(0.0, f64::max)
    }

    /// Every op type's latencies in one distribution.
    pub fn all_latencies(&self) -> Latency {
        let mut all = Latency::new();
        self.latencies.iter().for_each(|l| all.merge(l));
        all
    }
}

/// Gathers every rank's record on every rank. Fails on every rank, with
/// the first failed rank's error, if any rank failed.
pub fn merge(comm: &dyn Comm, what: &str, rec: &RankRecord) -> anyhow::Result<Merged> {
    let all = comm.allgather_bytes(&rec.encode());
    let mut m = Merged {
        counters: vec![0; rec.counters.len()],
        per_rank: Vec::with_capacity(all.len()),
        times: Vec::with_capacity(all.len()),
        latencies: (0..rec.latencies.len()).map(|_| Latency::new()).collect(),
    };
    for (rank, bytes) in all.iter().enumerate() {
        let mut inp = &bytes[..];
        let mut next = || take_u64(&mut inp).context("short rank record");
        let (nc, nl, ns) = (next()?, next()?, next()?);
        anyhow::ensure!(
            nc as usize == m.counters.len() && nl as usize == m.latencies.len(),
            "rank {rank} sent a different record for {what}"
        );
        let counters = (0..nc)
            .map(|_| next())
            .collect::<anyhow::Result<Vec<_>>>()?;
        for (l, total) in m.latencies.iter_mut().enumerate() {
            total.merge(
                &Latency::decode(&mut inp)
                    .with_context(|| format!("latency record {l} of rank {rank}"))?,
            );
        }
        if !inp.is_empty() {
            anyhow::bail!(
                "{what} failed on rank {rank}: {}",
                String::from_utf8_lossy(inp)
            );
        }
        for (t, c) in m.counters.iter_mut().zip(&counters) {
            *t += c;
        }
        m.per_rank.push(counters);
        m.times.push(ns as f64 / 1e9);
    }
    Ok(m)
}

/// One timed phase on this rank: waits for every rank, runs `work` on a
/// fresh record, and merges the records of all ranks. `work`'s error is
/// every rank's error.
pub fn timed_phase(
    comm: &dyn Comm,
    what: &str,
    (counters, latencies): (usize, usize),
    work: impl FnOnce(&mut RankRecord) -> anyhow::Result<()>,
) -> anyhow::Result<Merged> {
    let mut rec = RankRecord::new(counters, latencies);
    comm.barrier();
    let t0 = Instant::now();
    if let Err(e) = work(&mut rec) {
        rec.error = Some(e);
    }
    rec.elapsed = t0.elapsed();
    merge(comm, what, &rec)
}

/// Every rank's outcome of untimed work, shared: fails on every rank,
/// with the first failed rank's error, if any rank failed.
pub fn all_ok<T>(comm: &dyn Comm, what: &str, r: anyhow::Result<T>) -> anyhow::Result<T> {
    let mine = match &r {
        Ok(_) => String::new(),
        Err(e) => format!("{e:#}"),
    };
    let all = comm.allgather_bytes(mine.as_bytes());
    if let Some((rank, msg)) = all.iter().enumerate().find(|(_, m)| !m.is_empty()) {
        anyhow::bail!(
            "{what} failed on rank {rank}: {}",
            String::from_utf8_lossy(msg)
        );
    }
    r
}

/// Runs `f` on rank 0 only and hands its outcome to every rank: rank 0's
/// value, or its error, so that every rank fails with the same message
/// rather than waiting for a rank that gave up.
pub fn on_root(
    comm: Option<&dyn Comm>,
    f: impl FnOnce() -> anyhow::Result<Vec<u8>>,
) -> anyhow::Result<Vec<u8>> {
    let Some(comm) = comm else {
        return f();
    };
    let mine = if comm.rank() == 0 {
        match f() {
            Ok(v) => [&[1u8][..], &v].concat(),
            Err(e) => [&[0u8][..], format!("{e:#}").as_bytes()].concat(),
        }
    } else {
        Vec::new()
    };
    let root = comm.allgather_bytes(&mine).swap_remove(0);
    match root.split_first() {
        Some((1, v)) => Ok(v.to_vec()),
        Some((_, msg)) if comm.rank() == 0 => anyhow::bail!("{}", String::from_utf8_lossy(msg)),
        Some((_, msg)) => anyhow::bail!("on rank 0: {}", String::from_utf8_lossy(msg)),
        None => anyhow::bail!("rank 0 sent nothing"),
    }
}

/// A directory rank 0 makes (the run directory), on every rank. Fails on
/// every rank if some process rank cannot see it (not on a file system
/// every node mounts).
pub fn dir_on_root(
    comm: Option<&dyn Comm>,
    f: impl FnOnce() -> anyhow::Result<PathBuf>,
) -> anyhow::Result<PathBuf> {
    let bytes = on_root(comm, || Ok(f()?.into_os_string().into_vec()))?;
    let dir = PathBuf::from(OsString::from_vec(bytes));
    if let Some(comm) = comm {
        let seen = if dir.is_dir() {
            Ok(())
        } else {
            Err(anyhow::anyhow!(
                "{} (made by rank 0) is not visible on {}: give --dir on a file system \
                 every rank sees",
                dir.display(),
                rustix::system::uname().nodename().to_string_lossy()
            ))
        };
        all_ok(comm, "the run directory", seen)?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::run_threads;

    #[test]
    fn shares_cover_the_total_once() {
        for (total, n) in [(10, 3), (2, 4), (0, 2), (7, 1)] {
            let parts: Vec<_> = (0..n).map(|r| share(total, r, n)).collect();
            assert_eq!(parts[0].start, 0);
            assert_eq!(parts[n - 1].end, total);
            assert!(parts.windows(2).all(|w| w[0].end == w[1].start));
            assert!(parts
                .iter()
                .all(|p| p.end - p.start <= total.div_ceil(n as u64)));
        }
    }

    #[test]
    fn phases_merge_counters_times_and_latencies() {
        let out = run_threads(3, |c| {
            timed_phase(c, "test", (2, 1), |rec| {
                rec.counters[0] = c.rank() as u64 + 1;
                rec.counters[1] = 10;
                rec.latencies[0].record(Duration::from_micros(5));
                Ok(())
            })
            .map(|m| {
                (
                    m.counters,
                    m.per_rank,
                    m.latencies[0].count(),
                    m.times.len(),
                )
            })
        });
        for r in out {
            let (sum, per_rank, samples, times) = r.unwrap();
            assert_eq!(sum, [6, 30]);
            assert_eq!(per_rank, [[1, 10], [2, 10], [3, 10]]);
            assert_eq!((samples, times), (3, 3));
        }
    }

    #[test]
    fn a_rank_error_fails_every_rank() {
        let out = run_threads(3, |c| {
            timed_phase(c, "put", (1, 0), |_| {
                anyhow::ensure!(c.rank() != 2, "disk full");
                Ok(())
            })
            .map(|_| ())
        });
        for r in out {
            let e = format!("{:#}", r.unwrap_err());
            assert_eq!(e, "put failed on rank 2: disk full");
        }
        let out = run_threads(2, |c| {
            on_root(Some(c), || anyhow::bail!("no room")).map(|_| ())
        });
        assert_eq!(
            format!("{:#}", out[1].as_ref().unwrap_err()),
            "on rank 0: no room"
        );
        let out = run_threads(2, |c| {
            let r = if c.rank() == 1 {
                Err(anyhow::anyhow!("gone"))
            } else {
                Ok(1)
            };
            all_ok(c, "delete", r)
        });
        for r in out {
            assert_eq!(
                format!("{:#}", r.unwrap_err()),
                "delete failed on rank 1: gone"
            );
        }
        assert_eq!(
            run_threads(2, |c| all_ok(c, "x", Ok(c.rank())).unwrap()),
            [0, 1]
        );
    }

    #[test]
    fn every_rank_must_see_the_run_directory() {
        let t = tempfile::tempdir().unwrap();
        let ok = run_threads(2, |c| dir_on_root(Some(c), || Ok(t.path().into())).unwrap());
        assert_eq!(ok, [t.path(), t.path()]);
        let gone = t.path().join("gone");
        let out = run_threads(2, |c| {
            dir_on_root(Some(c), || Ok(gone.clone())).map_err(|e| format!("{e:#}"))
        });
        for r in out {
            let e = r.unwrap_err();
            assert!(
                e.contains("not visible on") && e.contains("failed on rank 0"),
                "{e}"
            );
        }
    }
}
