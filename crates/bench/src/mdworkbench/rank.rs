//! One rank's md-workbench: the three phases in upstream's op order, each
//! op timed, and the collective that turns every rank's counters into the
//! phase statistics upstream prints.

use super::layout::Layout;
use super::MdwParams;
use crate::comm::Comm;
use crate::harness::progress::Progress;
use crate::harness::ranks::{merge, RankRecord};
use crate::latency::Latency;
use crate::pattern::Pattern;
use crate::stop::Stop;
use std::time::{Duration, Instant};

/// Op types, in the order upstream prints them in the benchmark line.
pub const OPS: [&str; 4] = ["read", "stat", "create", "delete"];
const READ: usize = 0;
const STAT: usize = 1;
const CREATE: usize = 2;
const DELETE: usize = 3;

/// What one phase did, on one rank or summed over all.
#[derive(Clone, Default)]
pub struct Counts {
    pub dsets: u64,
    pub created: u64,
    pub read: u64,
    pub deleted: u64,
}

/// One phase over all ranks (valid on rank 0).
#[derive(Clone)]
pub struct PhaseStats {
    pub name: &'static str,
    pub counts: Counts,
    /// Phase time: the slowest rank's (upstream's `t`).
    pub t_max: f64,
    pub t_min: f64,
    pub t_mean: f64,
    pub t_stddev: f64,
    /// Latency per op type (`OPS` order), merged over ranks.
    pub ops: [Latency; 4],
    pub iteration: usize,
}

impl PhaseStats {
    /// Upstream's rate in iops/s.
    pub fn rate(&self) -> f64 {
        let c = &self.counts;
        let n = match self.name {
            "precreate" => c.dsets + c.created,
            "benchmark" => c.read * 4,
            _ => c.deleted + c.dsets,
        };
        crate::harness::row::rate(n as f64, self.t_max)
    }

    pub fn op_count(&self) -> u64 {
        let c = &self.counts;
        match self.name {
            "precreate" => c.dsets + c.created,
            "benchmark" => c.read * 4,
            _ => c.deleted + c.dsets,
        }
    }

    /// Adds a later iteration of the same phase.
    pub fn absorb(&mut self, o: &PhaseStats) {
        self.counts.dsets += o.counts.dsets;
        self.counts.created += o.counts.created;
        self.counts.read += o.counts.read;
        self.counts.deleted += o.counts.deleted;
        self.t_max += o.t_max;
        self.t_min += o.t_min;
        self.t_mean += o.t_mean;
        self.t_stddev = self.t_stddev.max(o.t_stddev);
        for (a, b) in self.ops.iter_mut().zip(&o.ops) {
            a.merge(b);
        }
    }

    /// Every op of the phase in one distribution.
    pub fn all_ops(&self) -> Latency {
        let mut all = Latency::new();
        self.ops.iter().for_each(|l| all.merge(l));
        all
    }
}

/// One rank's counters while a phase runs.
struct RankPhase<'a> {
    counts: Counts,
    ops: [Latency; 4],
    error: Option<anyhow::Error>,
    stop: &'a Stop,
    progress: &'a Progress,
}

impl RankPhase<'_> {
    /// Times `f` as op `kind`; false (and the error kept) when it fails or a
    /// stop was requested.
    #[inline]
    fn op(&mut self, kind: usize, f: impl FnOnce() -> anyhow::Result<()>) -> bool {
        if self.error.is_some() {
            return false;
        }
        if let Err(e) = self.stop.check() {
            self.error = Some(e.into());
            return false;
        }
        let t0 = Instant::now();
        let r = f();
        self.ops[kind].record(t0.elapsed());
        self.progress.add(1);
        match r {
            Ok(()) => true,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }
}

/// The data identity of object `i` of dataset `(rank, d)`.
fn object_id(rank: usize, d: usize, i: u64) -> u64 {
    (rank as u64) << 48 | (d as u64) << 32 | i
}

/// Runs the selected phases on this rank. Returns the phase statistics
/// (filled on rank 0) and the FIFO position after the run (the first object
/// index still present in each dataset).
pub fn run_rank(
    comm: &dyn Comm,
    layout: &Layout,
    p: &MdwParams,
    pattern: &Pattern,
    start_pos: u64,
    stop: &Stop,
    progress: &Progress,
) -> anyhow::Result<(Vec<PhaseStats>, u64)> {
    let rank = comm.rank();
    let n = comm.size();
    let mut path = String::new();
    let mut buf = pattern.buffer(p.size);
    let mut expected = pattern.buffer(p.size);
    let mut phases = Vec::new();
    let mut pos = start_pos;
    let new_phase = || RankPhase {
        counts: Counts::default(),
        ops: Default::default(),
        error: None,
        stop,
        progress,
    };

    // Create + write + close, timed as one op (upstream's create).
    let create = |ph: &mut RankPhase, path: &mut String, buf: &mut Vec<u8>, owner, d, i| {
        layout.object_path(path, owner, d, i);
        Pattern::stamp(buf, object_id(owner, d, i), 0);
        let st = layout.storage(owner, d);
        if ph.op(CREATE, || {
            let mut h = st.create(path)?;
            h.write_at(0, buf)?;
            h.close()
        }) {
            ph.counts.created += 1;
        }
    };

    if p.phases.precreate {
        let mut ph = new_phase();
        comm.barrier();
        let t0 = Instant::now();
        for d in 0..p.datasets {
            match layout.create_dataset(rank, d) {
                Ok(()) => ph.counts.dsets += 1,
                Err(e) => ph.error = Some(e.context(format!("create dataset {rank}_{d}"))),
            }
        }
        'outer: for f in pos..p.precreate {
            for d in 0..p.datasets {
                create(&mut ph, &mut path, &mut buf, rank, d, f);
                if ph.error.is_some() {
                    break 'outer;
                }
            }
        }
        phases.push(finish(comm, "precreate", 0, ph, t0.elapsed())?);
    }

    if p.phases.benchmark {
        for iteration in 0..p.iterations {
            let mut ph = new_phase();
            comm.barrier();
            let t0 = Instant::now();
            'pass: for f in 0..p.per_iteration {
                for d in 0..p.datasets {
                    let step = (p.offset * (d + 1)) % n;
                    let reader_of = (rank + n - step) % n;
                    let i = pos + f;
                    layout.object_path(&mut path, reader_of, d, i);
                    let st = layout.storage(reader_of, d);
                    let size = p.size as u64;
                    ph.op(STAT, || {
                        let s = st.stat(&path)?;
                        anyhow::ensure!(s.size == size, "stat {path}: size {} != {size}", s.size);
                        Ok(())
                    });
                    let ok = ph.op(READ, || {
                        let mut h = st.open(&path, false)?;
                        h.read_at(0, &mut buf)?;
                        h.close()?;
                        Pattern::verify(&buf, &mut expected, object_id(reader_of, d, i), 0, &path)
                            .map_err(anyhow::Error::msg)
                    });
                    if ok {
                        ph.counts.read += 1;
                    }
                    if ph.op(DELETE, || st.delete(&path)) {
                        ph.counts.deleted += 1;
                    }
                    let writer_to = (rank + step) % n;
                    create(&mut ph, &mut path, &mut buf, writer_to, d, p.precreate + i);
                    if ph.error.is_some() {
                        break 'pass;
                    }
                }
            }
            pos += p.per_iteration;
            phases.push(finish(comm, "benchmark", iteration, ph, t0.elapsed())?);
        }
    }

    if p.phases.cleanup {
        let mut ph = new_phase();
        comm.barrier();
        let t0 = Instant::now();
        'sets: for d in 0..p.datasets {
            for i in pos..pos + p.precreate {
                layout.object_path(&mut path, rank, d, i);
                let st = layout.storage(rank, d);
                if ph.op(DELETE, || st.delete(&path)) {
                    ph.counts.deleted += 1;
                } else {
                    break 'sets;
                }
            }
            match layout.remove_dataset(rank, d) {
                Ok(()) => ph.counts.dsets += 1,
                Err(e) => {
                    ph.error = Some(e.context(format!("remove dataset {rank}_{d}")));
                    break;
                }
            }
        }
        phases.push(finish(comm, "cleanup", 0, ph, t0.elapsed())?);
    }
    Ok((phases, pos))
}

/// Gathers every rank's counters; fails on every rank if any rank failed.
fn finish(
    comm: &dyn Comm,
    name: &'static str,
    iteration: usize,
    ph: RankPhase,
    elapsed: Duration,
) -> anyhow::Result<PhaseStats> {
    let c = &ph.counts;
    let rec = RankRecord {
        counters: vec![c.dsets, c.created, c.read, c.deleted],
        latencies: ph.ops.to_vec(),
        elapsed,
        error: ph.error,
    };
    let m = merge(comm, &format!("md-workbench {name}"), &rec)?;
    let (times, n) = (&m.times, m.times.len() as f64);
    let t_mean = times.iter().sum::<f64>() / n;
    Ok(PhaseStats {
        name,
        counts: Counts {
            dsets: m.counters[0],
            created: m.counters[1],
            read: m.counters[2],
            deleted: m.counters[3],
        },
        t_max: m.seconds(),
        t_min: times.iter().copied().fold(f64::INFINITY, f64::min),
        t_mean,
        t_stddev: (times.iter().map(|t| (t - t_mean).powi(2)).sum::<f64>() / n).sqrt(),
        ops: m
            .latencies
            .try_into()
            .map_err(|_| anyhow::anyhow!("four op types"))?,
        iteration,
    })
}
