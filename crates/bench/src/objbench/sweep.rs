//! Read and write throughput against object size (seed 000, Figs. 2, 3, 6,
//! 9): for each size, the ranks write a byte budget's worth of objects, then
//! read them all back (verified). Each phase is bounded by the budget and by
//! a time limit, whichever comes first; the reads cover what was written.

use super::{seconds, timed};
use crate::comm::Comm;
use crate::harness::objects::{pattern_len, Objects};
use crate::harness::progress::Progress;
use crate::harness::ranks::{timed_phase, Merged};
use crate::harness::row::{rate, MIB};
use crate::harness::{Benchmark, Row, Target};
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
        let limit = seconds("--seconds-per-size", p.max_seconds)?;
        let max = p.sizes.iter().copied().max().unwrap_or(1);
        let pattern = Pattern::new(t.opts.seed, pattern_len(max));
        writeln!(out, "sweep on {} with {} ranks", t.backend, t.opts.ranks)?;
        writeln!(
            out,
            "{:>12} {:>8} {:>14} {:>14}",
            "size", "objects", "write MiB/s", "read MiB/s"
        )?;
        let progress = if t.opts.is_root() {
            Progress::start("sweep")
        } else {
            Progress::silent()
        };
        let rows = Objects::with(t, |objects| {
            t.opts.each_rank(|comm| {
                let mut rows = Vec::new();
                for &size in &p.sizes {
                    let ctx = Size {
                        comm,
                        t,
                        objects,
                        pattern: &pattern,
                        size,
                        progress: &progress,
                    };
                    rows.extend(ctx.run(p.per_rank(size, comm.size()), limit)?);
                }
                Ok(rows)
            })
        })?;
        drop(progress);
        for w in rows.chunks(2) {
            writeln!(
                out,
                "{:>12} {:>8} {:>14.1} {:>14.1}",
                w[0].extra["object_size"].as_u64().unwrap_or(0),
                w[0].ops,
                w[0].value,
                w[1].value
            )?;
        }
        Ok(rows)
    }
}

/// One object size on one rank.
struct Size<'a> {
    comm: &'a dyn Comm,
    t: &'a Target<'a>,
    objects: &'a Objects,
    pattern: &'a Pattern,
    size: u64,
    progress: &'a Progress,
}

impl Size<'_> {
    fn key(&self, rank: usize, i: u64) -> String {
        format!("sweep{}/r{rank}-{i}", self.size)
    }

    /// Writes up to `n` objects (until `limit`), then reads back those of
    /// the next rank (not the writer's own), then removes its own.
    fn run(&self, n: u64, limit: Duration) -> anyhow::Result<[Row; 2]> {
        let (rank, ranks) = (self.comm.rank(), self.comm.size());
        let w = self.phase("write", n, limit, |i, _| {
            self.objects
                .put(self.pattern, &self.key(rank, i), self.size)
        })?;
        let owner = (rank + 1) % ranks;
        let r = self.phase("read", w.per_rank[owner][0], Duration::MAX, |i, scratch| {
            self.objects
                .get(self.pattern, &self.key(owner, i), 0, self.size, scratch)
                .map(|_| ())
        })?;
        if !self.t.opts.keep {
            for i in 0..w.per_rank[rank][0] {
                self.objects.delete(&self.key(rank, i))?;
            }
        }
        Ok([self.row("write", &w), self.row("read", &r)])
    }

    /// Runs `op(i, scratch)` for `i` in `0..n` until `limit` passes, on
    /// every rank; the counter is the objects moved.
    fn phase(
        &self,
        name: &str,
        n: u64,
        limit: Duration,
        op: impl Fn(u64, &mut Vec<u8>) -> anyhow::Result<()>,
    ) -> anyhow::Result<Merged> {
        let what = format!("sweep {name} of {} B", self.size);
        timed_phase(self.comm, &what, (1, 1), |rec| {
            let start = Instant::now();
            let mut scratch = Vec::new();
            for i in 0..n {
                self.t.opts.stop.check()?;
                if start.elapsed() >= limit {
                    break;
                }
                timed(&mut rec.latencies[0], || op(i, &mut scratch))?;
                self.progress.add(1);
                rec.counters[0] += 1;
            }
            Ok(())
        })
    }

    fn row(&self, phase: &str, m: &Merged) -> Row {
        let (ops, secs) = (m.counters[0], m.seconds());
        let bytes = ops * self.size;
        self.t
            .row("sweep", phase, "MiB/s")
            .measured(ops, bytes, secs, &m.latencies[0])
            .value(rate(bytes as f64 / MIB, secs))
            .with("object_size", self.size)
    }
}
