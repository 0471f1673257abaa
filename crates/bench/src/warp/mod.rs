//! warp's `mixed` and `get` workloads (`minio/warp` `pkg/bench/mixed.go`,
//! `get.go`): a time-boxed closed loop per concurrency slot over a pool of
//! objects, with warp's exact mixed schedule, full (or random ranged) GETs
//! that are size-checked and verified, and warp's report: average obj/s and
//! MiB/s over the analysis window, per-op request and TTFB percentiles, and
//! the per-second throughput (fastest, median, slowest).
//!
//! Under mpirun `--concurrent` and `--objects` are totals, as a warp user
//! expects of a distributed run: each process runs its share of the slots
//! over its share of the pool, all from a common start (a barrier); the
//! mixed schedule interleaves over the processes, so an op-bounded run has
//! the exact proportions; rank 0 analyses every request of every process.

pub mod analysis;
pub mod pool;
pub mod schedule;

use crate::comm::Comm;
use crate::harness::objects::{pattern_len, Objects};
use crate::harness::progress::Progress;
use crate::harness::ranks::{all_ok, share};
use crate::harness::{Benchmark, Row, Target};
use crate::pattern::Pattern;
use analysis::{Analysis, Rec};
use anyhow::Context;
use pool::Pool;
use schedule::{Distribution, Op, Rng, Schedule};
use serde_json::{json, Value};
use std::io::Write;
use std::ops::Range;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarpMode {
    Mixed,
    Get,
}

impl WarpMode {
    pub fn name(self) -> &'static str {
        match self {
            WarpMode::Mixed => "mixed",
            WarpMode::Get => "get",
        }
    }
}

impl std::str::FromStr for WarpMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "mixed" => Ok(WarpMode::Mixed),
            "get" => Ok(WarpMode::Get),
            _ => Err(format!("unknown warp workload {s:?}: use mixed or get")),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct WarpParams {
    pub mode: WarpMode,
    pub duration: Duration,
    pub concurrency: usize,
    pub object_size: u64,
    pub objects: usize,
    pub distribution: Distribution,
    /// get: random ranged GETs instead of whole objects.
    pub range: bool,
    /// Operations at most (besides the duration); `None`: the clock only.
    pub max_ops: Option<u64>,
}

impl WarpParams {
    /// Short defaults (warp's are 5 minutes, 20 threads, 2500 × 10 MiB).
    pub fn new(mode: WarpMode) -> WarpParams {
        WarpParams {
            mode,
            duration: Duration::from_secs(5),
            concurrency: 4,
            object_size: 1 << 20,
            objects: 200,
            distribution: Distribution::default(),
            range: false,
            max_ops: None,
        }
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.concurrency > 0, "--concurrent must be at least 1");
        anyhow::ensure!(
            self.duration > Duration::ZERO && self.duration <= Duration::from_secs(3600),
            "--duration must be between 0 and 3600 seconds"
        );
        anyhow::ensure!(
            self.objects > self.concurrency,
            "--objects ({}) must exceed --concurrent ({}): every thread takes an object out of \
             the pool while it works on it",
            self.objects,
            self.concurrency
        );
        anyhow::ensure!(self.object_size > 0, "--obj-size must be at least 1 byte");
        anyhow::ensure!(
            self.object_size.saturating_mul(self.objects as u64) <= 1 << 40,
            "--objects × --obj-size exceeds 1 TiB"
        );
        self.distribution.validate()
    }
}

pub struct Warp {
    pub params: WarpParams,
}

impl Benchmark for Warp {
    fn name(&self) -> &'static str {
        "warp"
    }

    fn id(&self) -> String {
        format!("warp-{}", self.params.mode.name())
    }

    fn params(&self) -> Value {
        let p = &self.params;
        json!({
            "mode": p.mode.name(),
            "duration_seconds": p.duration.as_secs_f64(),
            "concurrency": p.concurrency,
            "object_size": p.object_size,
            "objects": p.objects,
            "distribution": {
                "get": p.distribution.get, "stat": p.distribution.stat,
                "put": p.distribution.put, "delete": p.distribution.delete,
            },
            "range": p.range,
            "max_ops": p.max_ops,
        })
    }

    fn run(&self, t: &Target, out: &mut dyn Write) -> anyhow::Result<Vec<Row>> {
        let p = &self.params;
        p.validate()?;
        let pattern = Pattern::new(t.opts.seed, pattern_len(p.object_size));
        let gathered = Objects::with(t, |objects| {
            t.opts
                .each_process(|comm| run_process(comm, t, p, objects, &pattern))
        })?;
        // Rank 0 analyses every thread's requests of every process.
        let Some(g) = gathered else {
            return Ok(Vec::new());
        };
        let a = Analysis::new(&g.run);
        let mut rows = a.rows(t, p);
        if p.mode == WarpMode::Get {
            // warp get reports its prepare step's PUTs (the seeds' write
            // column): their own analysis, as warp does.
            let prep = Analysis::new(&g.prepare);
            prep.print_ops(out, p, g.prepare_ran)?;
            rows.extend(prep.op_row(t, p, Op::Put));
        }
        a.print(out, p, g.ran)?;
        Ok(rows)
    }
}

/// This process's part of the concurrency slots and of the pool, under
/// mpirun (`--concurrent` and `--objects` are totals over the processes).
struct Part {
    /// Global slot numbers (names, seeds).
    slots: Range<u64>,
    objects: Range<u64>,
}

impl Part {
    fn of(p: &WarpParams, rank: usize, ranks: usize) -> anyhow::Result<Part> {
        anyhow::ensure!(
            p.concurrency >= ranks,
            "--concurrent ({}) must be at least the number of processes ({ranks}): it is the \
             total over all ranks, and every rank runs at least one slot",
            p.concurrency
        );
        // The same check on every rank, so all fail together.
        for r in 0..ranks {
            let (s, o) = (
                share(p.concurrency as u64, r, ranks),
                share(p.objects as u64, r, ranks),
            );
            anyhow::ensure!(
                o.end - o.start > s.end - s.start,
                "--objects ({}) over {ranks} processes leaves rank {r} {} objects for its {} \
                 slots: every slot takes an object out of the pool while it works, so each \
                 rank needs more objects than slots",
                p.objects,
                o.end - o.start,
                s.end - s.start
            );
        }
        Ok(Part {
            slots: share(p.concurrency as u64, rank, ranks),
            objects: share(p.objects as u64, rank, ranks),
        })
    }
}

/// Every thread's requests of every process, on rank 0.
struct Gathered {
    run: Vec<Vec<Rec>>,
    ran: Duration,
    /// The prepare step's PUTs, timed from its own start.
    prepare: Vec<Vec<Rec>>,
    prepare_ran: Duration,
}

/// Prepares this process's share of the pool, runs its slots from a start
/// every process shares (a barrier), and gathers every thread's requests
/// on rank 0, with the longest run time. `None` on the other ranks.
fn run_process(
    comm: &dyn Comm,
    t: &Target,
    p: &WarpParams,
    objects: &Objects,
    pattern: &Pattern,
) -> anyhow::Result<Option<Gathered>> {
    let part = Part::of(p, comm.rank(), comm.size())?;
    let stop = &t.opts.stop;
    let pool = Pool::default();
    let slots: Vec<u64> = part.slots.clone().collect();
    let prefixes: Vec<String> = slots
        .iter()
        .map(|&i| Rng::new(t.opts.seed ^ (i + 1) << 20).name(8))
        .collect();
    // Prepare: each thread uploads its share under its own prefix, each
    // PUT recorded (warp get reports them).
    let prepare_start = Instant::now();
    let prepared = std::thread::scope(|s| -> anyhow::Result<Vec<Vec<Rec>>> {
        let handles: Vec<_> = (0..slots.len())
            .map(|j| {
                let (pool, prefixes, part, slots) = (&pool, &prefixes, &part, &slots);
                s.spawn(move || -> anyhow::Result<Vec<Rec>> {
                    let mut rng = Rng::new(t.opts.seed ^ slots[j]);
                    let mut recs = Vec::new();
                    for n in part.objects.clone().skip(j).step_by(slots.len()) {
                        stop.check()?;
                        let key = format!("{}/{n}.{}.rnd", prefixes[j], rng.name(16));
                        let t0 = Instant::now();
                        objects.put(pattern, &key, p.object_size)?;
                        let end = Instant::now();
                        recs.push(Rec {
                            op: Op::Put,
                            start: t0 - prepare_start,
                            end: end - prepare_start,
                            ttfb: end - t0,
                            bytes: p.object_size,
                        });
                        pool.add(key);
                    }
                    Ok(recs)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("prepare thread"))
            .collect()
    });
    let prepare_ran = prepare_start.elapsed();
    let prepared = all_ok(comm, "warp prepare", prepared)?;

    let limit = p.max_ops.unwrap_or(u64::MAX);
    let schedule = Schedule::strided(&p.distribution, limit, comm.rank(), comm.size());
    let counter = std::sync::atomic::AtomicU64::new(p.objects as u64);
    let progress = Progress::start(&format!("warp {}", p.mode.name()));
    comm.barrier();
    let start = Instant::now();
    let deadline = start + p.duration;
    let per_thread = std::thread::scope(|s| -> anyhow::Result<Vec<Vec<Rec>>> {
        let handles: Vec<_> = (0..slots.len())
            .map(|j| {
                let (pool, schedule, counter, progress, prefixes, slots) =
                    (&pool, &schedule, &counter, &progress, &prefixes, &slots);
                s.spawn(move || -> anyhow::Result<Vec<Rec>> {
                    let mut w = Worker {
                        p,
                        objects,
                        pattern,
                        pool,
                        rng: Rng::new(t.opts.seed.wrapping_add(slots[j] * 7919)),
                        scratch: Vec::new(),
                        start,
                        deadline,
                        recs: Vec::new(),
                    };
                    loop {
                        if Instant::now() >= deadline {
                            break;
                        }
                        stop.check()?;
                        let op = match (schedule.next(), p.mode) {
                            (None, _) => break,
                            (Some(op), WarpMode::Mixed) => op,
                            (Some(_), WarpMode::Get) => Op::Get,
                        };
                        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if !w.one(op, &prefixes[j], n)? {
                            break;
                        }
                        progress.add(1);
                    }
                    Ok(w.recs)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("warp thread"))
            .collect()
    });
    let ran = start.elapsed();
    drop(progress);
    let per_thread = all_ok(comm, &format!("warp {}", p.mode.name()), per_thread)?;
    let ran = Duration::from_nanos(comm.allreduce_max(ran.as_nanos() as u64));
    let prepare_ran = Duration::from_nanos(comm.allreduce_max(prepare_ran.as_nanos() as u64));
    let mut buf = Vec::new();
    Rec::encode(&per_thread, &mut buf);
    Rec::encode(&prepared, &mut buf);
    drop((per_thread, prepared));
    let Some(all) = comm.gather_bytes(&buf) else {
        return Ok(None);
    };
    let (mut run, mut prepare) = (Vec::new(), Vec::new());
    for (rank, mut bytes) in all.iter().map(Vec::as_slice).enumerate() {
        let what = || format!("warp records of rank {rank}");
        run.extend(Rec::decode_from(&mut bytes).with_context(what)?);
        prepare.extend(Rec::decode_from(&mut bytes).with_context(what)?);
    }
    Ok(Some(Gathered {
        run,
        ran,
        prepare,
        prepare_ran,
    }))
}

/// One concurrency slot.
struct Worker<'a> {
    p: &'a WarpParams,
    objects: &'a Objects,
    pattern: &'a Pattern,
    pool: &'a Pool,
    rng: Rng,
    scratch: Vec<u8>,
    start: Instant,
    deadline: Instant,
    recs: Vec<Rec>,
}

impl Worker<'_> {
    /// Runs one operation and records it; false when the run is over (the
    /// pool stayed empty until the deadline).
    fn one(&mut self, op: Op, prefix: &str, n: u64) -> anyhow::Result<bool> {
        let size = self.p.object_size;
        let t0 = Instant::now();
        let mut ttfb = Duration::ZERO;
        let mut bytes = 0;
        match op {
            Op::Put => {
                let key = format!("{prefix}/{n}.{}.rnd", self.rng.name(16));
                self.objects.put(self.pattern, &key, size)?;
                bytes = size;
                ttfb = t0.elapsed();
                self.pool.add(key);
            }
            Op::Get | Op::Stat | Op::Delete => {
                let Some(key) = self.pool.take(&mut self.rng, self.deadline) else {
                    return Ok(false);
                };
                let t0 = Instant::now();
                let r = match op {
                    Op::Get => {
                        let (off, len) = if self.p.range {
                            let off = self.rng.below(size);
                            (off, 1 + self.rng.below(size - off))
                        } else {
                            (0, size)
                        };
                        bytes = len;
                        self.objects
                            .get(self.pattern, &key, off, len, &mut self.scratch)
                            .map(|d| ttfb = d)
                    }
                    Op::Stat => self.objects.head(&key).and_then(|s| {
                        anyhow::ensure!(s == Some(size), "stat {key}: size {s:?}, expected {size}");
                        Ok(())
                    }),
                    _ => self.objects.delete(&key),
                };
                let end = Instant::now();
                if op != Op::Delete {
                    self.pool.add(key);
                }
                r?;
                self.record(op, t0, end, ttfb, bytes);
                return Ok(true);
            }
        }
        self.record(op, t0, Instant::now(), ttfb, bytes);
        Ok(true)
    }

    fn record(&mut self, op: Op, t0: Instant, end: Instant, ttfb: Duration, bytes: u64) {
        self.recs.push(Rec {
            op,
            start: t0 - self.start,
            end: end - self.start,
            ttfb,
            bytes,
        });
    }
}
