//! What every phase shares: timed loops (with the stonewall and wear-out of
//! the write phases) and the collective that turns per-rank counters into
//! one result.

use crate::comm::Comm;
use crate::io500::{Group, PhaseResult};
use crate::latency::{take_u64, Latency};
use crate::stop::Stop;
use std::time::{Duration, Instant};

/// One rank's counters for one phase.
#[derive(Default)]
pub struct RankStats {
    pub ops: u64,
    pub bytes: u64,
    pub elapsed: Duration,
    /// Ops done, and time taken, when the stonewall struck (write phases).
    pub stonewall_ops: u64,
    pub stonewall_elapsed: Duration,
    pub latency: Latency,
    /// find: matching files.
    pub matches: u64,
    pub error: Option<anyhow::Error>,
    /// Checked once per op, like the stonewall; a stop becomes this rank's
    /// error, which every rank learns at the next collective.
    pub stop: Stop,
}

impl RankStats {
    pub fn new(stop: &Stop) -> Self {
        RankStats {
            stop: stop.clone(),
            ..Self::default()
        }
    }

    /// Keeps the first error only: the later ones are usually its echoes.
    pub fn fail(&mut self, e: anyhow::Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Records the stop, if one was requested, as this rank's error.
    /// Returns whether the loop may go on.
    pub fn keep_going(&mut self) -> bool {
        if let Err(e) = self.stop.check() {
            self.fail(e.into());
        }
        self.error.is_none()
    }

    /// Runs `op(i)` for `i` in `range`, timing each op, until the first error
    /// or a stop.
    pub fn timed(
        &mut self,
        range: std::ops::Range<u64>,
        mut op: impl FnMut(u64) -> anyhow::Result<()>,
    ) {
        for i in range {
            if !self.keep_going() {
                return;
            }
            let t0 = Instant::now();
            let r = op(i);
            self.latency.record(t0.elapsed());
            if let Err(e) = r {
                self.fail(e);
                return;
            }
            self.ops += 1;
        }
    }

    /// The write-phase loop: `op(i)` from 0 until `deadline` passes, `cap`
    /// ops are done or a stop is requested; then every rank continues up to the largest count any
    /// rank reached (IOR `stoneWallingWearOut`, mdtest `-W` with `-x`).
    /// Returns that count, which the later phases of the same files process.
    /// `start` is when the phase began.
    pub fn stonewalled(
        &mut self,
        comm: &dyn Comm,
        start: Instant,
        deadline: Instant,
        cap: u64,
        mut op: impl FnMut(u64) -> anyhow::Result<()>,
    ) -> u64 {
        let mut i = 0;
        while i < cap && self.keep_going() {
            let t0 = Instant::now();
            let r = op(i);
            let t1 = Instant::now();
            self.latency.record(t1 - t0);
            match r {
                Ok(()) => i += 1,
                Err(e) => self.fail(e),
            }
            // The clock read for the latency doubles as the stonewall check.
            if t1 >= deadline {
                break;
            }
        }
        self.stonewall_ops = i;
        self.stonewall_elapsed = start.elapsed();
        // A failed rank must still take part in the collectives.
        let any_failed = comm.allreduce_max(self.error.is_some() as u64) != 0;
        let target = comm.allreduce_max(i);
        self.ops = i;
        if !any_failed {
            self.timed(i..target, &mut op);
        }
        target
    }

    fn encode(&self, out: &mut Vec<u8>) {
        for v in [
            self.ops,
            self.bytes,
            self.elapsed.as_nanos() as u64,
            self.stonewall_ops,
            self.stonewall_elapsed.as_nanos() as u64,
            self.matches,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        self.latency.encode(out);
        if let Some(e) = &self.error {
            out.extend_from_slice(format!("{e:#}").as_bytes());
        }
    }

    fn decode(mut input: &[u8]) -> Option<(RankStats, Option<String>)> {
        let inp = &mut input;
        let mut s = RankStats {
            ops: take_u64(inp)?,
            bytes: take_u64(inp)?,
            elapsed: Duration::from_nanos(take_u64(inp)?),
            stonewall_ops: take_u64(inp)?,
            stonewall_elapsed: Duration::from_nanos(take_u64(inp)?),
            matches: take_u64(inp)?,
            ..Default::default()
        };
        s.latency = Latency::decode(inp)?;
        let err = (!input.is_empty()).then(|| String::from_utf8_lossy(input).into_owned());
        Some((s, err))
    }
}

/// Combines every rank's counters. Every rank learns whether any failed (and
/// returns the first error); rank 0 gets the result.
pub fn finish(
    comm: &dyn Comm,
    name: &'static str,
    group: Group,
    stats: RankStats,
) -> anyhow::Result<Option<PhaseResult>> {
    let mut buf = Vec::new();
    stats.encode(&mut buf);
    let all = comm.allgather_bytes(&buf);
    let mut total = RankStats::default();
    let mut max_sw = Duration::ZERO;
    for (rank, bytes) in all.iter().enumerate() {
        let (s, err) = RankStats::decode(bytes).expect("rank stats decode");
        if let Some(e) = err {
            anyhow::bail!("{name} failed on rank {rank}: {e}");
        }
        total.ops += s.ops;
        total.bytes += s.bytes;
        total.elapsed = total.elapsed.max(s.elapsed);
        total.stonewall_ops += s.stonewall_ops;
        max_sw = max_sw.max(s.stonewall_elapsed);
        total.matches += s.matches;
        total.latency.merge(&s.latency);
    }
    if comm.rank() != 0 {
        return Ok(None);
    }
    let seconds = total.elapsed.as_secs_f64();
    let value = match group {
        Group::Bandwidth => total.bytes as f64 / seconds / (1u64 << 30) as f64,
        Group::Metadata => total.ops as f64 / seconds / 1000.0,
        Group::None => 0.0,
    };
    Ok(Some(PhaseResult {
        name,
        group,
        value: if value.is_finite() { value } else { 0.0 },
        ops: total.ops,
        bytes: total.bytes,
        seconds,
        stonewall_ops: total.stonewall_ops,
        stonewall_seconds: max_sw.as_secs_f64(),
        latency: total.latency.summary(),
        valid: true,
        notes: Vec::new(),
        matches: (name == "find").then_some(total.matches),
    }))
}
