//! Read and write throughput against object size (seed 000, Figs. 2, 3, 6,
//! 9): for each size, the ranks write a byte budget's worth of objects, then
//! read them all back (verified). Each phase is bounded by the budget and by
//! a time limit, whichever comes first; the reads cover what was written.

use super::seconds;
use crate::harness::objects::{pattern_len, Objects};
use crate::harness::progress::Progress;
use crate::harness::row::{rate, MIB};
use crate::harness::{Benchmark, Row, Target};
use crate::latency::Latency;
use crate::pattern::Pattern;
use serde_json::{json, Value};
use std::io::Write;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct SweepParams {
    pub sizes: Vec<u64>,
    /// Bytes written per size (at least one object per rank).
    pub budget: u64,
    /// Time limit of each write phase.
    pub max_seconds: f64,
}

impl Default for SweepParams {
    fn default() -> Self {
        SweepParams {
            sizes: (0..=17)
                .step_by(2)
                .map(|i| 1024u64 << i)
                .chain([128 << 20])
                .collect(),
            budget: 32 << 20,
            max_seconds: 1.0,
        }
    }
}

impl SweepParams {
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(!self.sizes.is_empty(), "--sizes is empty");
        anyhow::ensure!(
            self.sizes.iter().all(|&s| (1..=1 << 34).contains(&s)),
            "object sizes must be between 1 byte and 16 GiB"
        );
        anyhow::ensure!(self.budget > 0, "--bytes-per-size must be positive");
        seconds("--seconds-per-size", self.max_seconds)?;
        Ok(())
    }

    /// Objects per rank for `size`.
    pub fn per_rank(&self, size: u64, ranks: usize) -> u64 {
        (self.budget / size / ranks as u64).clamp(1, 100_000)
    }
}

pub struct Sweep {
    pub params: SweepParams,
}

impl Benchmark for Sweep {
    fn name(&self) -> &'static str {
        "sweep"
    }

    fn params(&self) -> Value {
        let p = &self.params;
        json!({"sizes": p.sizes, "bytes_per_size": p.budget, "seconds_per_size": p.max_seconds})
    }

    fn run(&self, t: &Target, out: &mut dyn Write) -> anyhow::Result<Vec<Row>> {
        let p = &self.params;
        p.validate()?;
        let objects = Objects::open(t)?;
        let max = p.sizes.iter().copied().max().unwrap_or(1);
        let pattern = Pattern::new(t.opts.seed, pattern_len(max));
        writeln!(out, "sweep on {} with {} ranks", t.backend, t.opts.ranks)?;
        writeln!(
            out,
            "{:>12} {:>8} {:>14} {:>14}",
            "size", "objects", "write MiB/s", "read MiB/s"
        )?;
        let mut rows = Vec::new();
        let result = (|| -> anyhow::Result<()> {
            for &size in &p.sizes {
                let n = p.per_rank(size, t.opts.ranks);
                let limit = seconds("--seconds-per-size", p.max_seconds)?;
                let key = |rank: usize, i: u64| format!("sweep{size}/r{rank}-{i}");
                let progress = Progress::start(&format!("sweep {size} B write"));
                let (w, written) = phase(t, n, limit, &progress, |rank, i, _| {
                    objects.put(&pattern, &key(rank, i), size).map(|()| true)
                })?;
                drop(progress);
                let progress = Progress::start(&format!("sweep {size} B read"));
                // Reads shift by one rank (not the writer's own objects),
                // over exactly the objects the writes made.
                let ranks = t.opts.ranks;
                let (r, _) = phase(t, n, Duration::MAX, &progress, |rank, i, scratch| {
                    let owner = (rank + 1) % ranks;
                    if i >= written[owner] {
                        return Ok(false);
                    }
                    objects
                        .get(&pattern, &key(owner, i), 0, size, scratch)
                        .map(|_| true)
                })?;
                drop(progress);
                let wrow = row(t, "write", size, &w);
                let rrow = row(t, "read", size, &r);
                writeln!(
                    out,
                    "{:>12} {:>8} {:>14.1} {:>14.1}",
                    size, w.0, wrow.value, rrow.value
                )?;
                rows.push(wrow);
                rows.push(rrow);
                if !t.opts.keep {
                    for (rank, &cnt) in written.iter().enumerate() {
                        for i in 0..cnt {
                            objects.delete(&key(rank, i))?;
                        }
                    }
                }
            }
            Ok(())
        })();
        let cleaned = if t.opts.keep {
            Ok(())
        } else {
            objects.remove_all()
        };
        result?;
        cleaned?;
        Ok(rows)
    }
}

/// (objects, bytes, seconds, latency) of a phase over all ranks.
type Totals = (u64, u64, f64, Latency);

/// Runs `op(rank, i, scratch)` for `i` in `0..n` on every rank until `limit`
/// passes; `op` returns whether it moved an object. Returns the totals and
/// how many ops each rank completed.
fn phase(
    t: &Target,
    n: u64,
    limit: Duration,
    progress: &Progress,
    op: impl Fn(usize, u64, &mut Vec<u8>) -> anyhow::Result<bool> + Sync,
) -> anyhow::Result<(Totals, Vec<u64>)> {
    let start = Instant::now();
    let per_rank: Vec<anyhow::Result<(u64, Latency)>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..t.opts.ranks)
            .map(|rank| {
                let op = &op;
                s.spawn(move || -> anyhow::Result<(u64, Latency)> {
                    let mut lat = Latency::new();
                    let mut scratch = Vec::new();
                    let mut done = 0;
                    for i in 0..n {
                        t.opts.stop.check()?;
                        if start.elapsed() >= limit {
                            break;
                        }
                        let t0 = Instant::now();
                        if !op(rank, i, &mut scratch)? {
                            break;
                        }
                        lat.record(t0.elapsed());
                        progress.add(1);
                        done += 1;
                    }
                    Ok((done, lat))
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("sweep rank"))
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let mut lat = Latency::new();
    let mut counts = Vec::new();
    for r in per_rank {
        let (done, l) = r?;
        lat.merge(&l);
        counts.push(done);
    }
    let total = counts.iter().sum();
    Ok(((total, 0, secs, lat), counts))
}

fn row(t: &Target, phase: &str, size: u64, (ops, _, secs, lat): &Totals) -> Row {
    let bytes = ops * size;
    t.row("sweep", phase, "MiB/s")
        .measured(*ops, bytes, *secs, lat)
        .value(rate(bytes as f64 / MIB, *secs))
        .with("object_size", size)
}
