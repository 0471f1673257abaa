//! Key-value latency (seed 001 §12.2): timed consecutive single-key
//! operations on N keys of one value size: put, enumerate (list), get
//! (verified), size query (head), query of missing keys, delete. Reports the
//! median and standard deviation of each operation. Each rank is one
//! client running the whole sequence on its own `keys` keys.

use super::timed;
use crate::comm::Comm;
use crate::harness::objects::{pattern_len, Objects};
use crate::harness::ranks::timed_phase;
use crate::harness::row::rate;
use crate::harness::{Benchmark, Row, Target};
use crate::pattern::Pattern;
use serde_json::{json, Value};
use std::io::Write;

#[derive(Debug, Clone)]
pub struct KvParams {
    pub keys: u64,
    pub value_sizes: Vec<u64>,
}

impl Default for KvParams {
    fn default() -> Self {
        KvParams {
            keys: 1000,
            value_sizes: vec![64, 4096, 65536],
        }
    }
}

impl KvParams {
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            (1..=10_000_000).contains(&self.keys),
            "--keys must be between 1 and 10000000"
        );
        anyhow::ensure!(!self.value_sizes.is_empty(), "--value-sizes is empty");
        anyhow::ensure!(
            self.value_sizes.iter().all(|&s| s <= 1 << 30),
            "value sizes must be at most 1 GiB"
        );
        Ok(())
    }
}

pub struct Kv {
    pub params: KvParams,
}

/// The phases, in the order they run.
pub const PHASES: [&str; 6] = ["put", "list", "get", "head", "head-missing", "delete"];

impl Benchmark for Kv {
    fn name(&self) -> &'static str {
        "kv"
    }

    fn params(&self) -> Value {
        json!({"keys": self.params.keys, "value_sizes": self.params.value_sizes})
    }

    fn run(&self, t: &Target, out: &mut dyn Write) -> anyhow::Result<Vec<Row>> {
        let p = &self.params;
        p.validate()?;
        let max = p.value_sizes.iter().copied().max().unwrap_or(0);
        let pattern = Pattern::new(t.opts.seed, pattern_len(max));
        writeln!(
            out,
            "kv on {}: {} keys per value size on each of {} ranks",
            t.backend, p.keys, t.opts.ranks
        )?;
        writeln!(
            out,
            "{:>10} {:>13} {:>12} {:>12} {:>12}",
            "size", "op", "ops/s", "median", "stddev"
        )?;
        let rows = Objects::with(t, |objects| {
            t.opts.each_rank(|comm| {
                let mut rows = Vec::new();
                for &size in &p.value_sizes {
                    rows.extend(run_size(comm, t, objects, &pattern, p.keys, size)?);
                }
                Ok(rows)
            })
        })?;
        for r in &rows {
            writeln!(
                out,
                "{:>10} {:>13} {:>12.1} {:>11.2}µs {:>11.2}µs",
                r.extra["value_size"].as_u64().unwrap_or(0),
                r.phase,
                r.value,
                r.extra["latency_median"].as_f64().unwrap_or(0.0) * 1e6,
                r.extra["latency_stddev"].as_f64().unwrap_or(0.0) * 1e6
            )?;
        }
        Ok(rows)
    }
}

/// One rank's sequence on its own `n` keys of one value size; every phase
/// is timed over all ranks (the slowest rank's time, every op's latency).
fn run_size(
    comm: &dyn Comm,
    t: &Target,
    objects: &Objects,
    pattern: &Pattern,
    n: u64,
    size: u64,
) -> anyhow::Result<Vec<Row>> {
    let prefix = format!("kv{size}/r{}/", comm.rank());
    let key = |i: u64| format!("{prefix}k{i:08}");
    let missing = |i: u64| format!("{prefix}missing{i:08}");
    let mut scratch = Vec::new();
    let mut rows = Vec::new();
    for phase in PHASES {
        t.opts.stop.check()?;
        // Counters: ops, bytes.
        let m = timed_phase(comm, &format!("kv {phase} of {size} B"), (2, 1), |rec| {
            let lat = &mut rec.latencies[0];
            rec.counters[0] = n;
            match phase {
                "put" => {
                    for i in 0..n {
                        timed(lat, || objects.put(pattern, &key(i), size))?;
                    }
                    rec.counters[1] = n * size;
                }
                "list" => {
                    // One enumeration of every key, timed as one op.
                    let found = timed(lat, || objects.list(&prefix))?;
                    anyhow::ensure!(found == n, "list {prefix}: {found} keys, expected {n}");
                    rec.counters[0] = 1;
                }
                "get" => {
                    for i in 0..n {
                        timed(lat, || objects.get(pattern, &key(i), 0, size, &mut scratch))?;
                    }
                    rec.counters[1] = n * size;
                }
                "head" => {
                    for i in 0..n {
                        let got = timed(lat, || objects.head(&key(i)))?;
                        anyhow::ensure!(
                            got == Some(size),
                            "head {}: {got:?}, expected {size}",
                            key(i)
                        );
                    }
                }
                "head-missing" => {
                    for i in 0..n {
                        let got = timed(lat, || objects.head(&missing(i)))?;
                        anyhow::ensure!(
                            got.is_none(),
                            "head {}: found a key never written",
                            missing(i)
                        );
                    }
                }
                _ => {
                    for i in 0..n {
                        timed(lat, || objects.delete(&key(i)))?;
                    }
                    // Every key is gone: a head now finds nothing.
                    anyhow::ensure!(
                        objects.head(&key(0))?.is_none(),
                        "{} still exists after delete",
                        key(0)
                    );
                }
            }
            Ok(())
        })?;
        let (ops, bytes, secs, lat) = (m.counters[0], m.counters[1], m.seconds(), &m.latencies[0]);
        let (_, sd) = lat.mean_stddev();
        rows.push(
            t.row("kv", phase, "ops/s")
                .measured(ops, bytes, secs, lat)
                .value(rate(ops as f64, secs))
                .with("value_size", size)
                .with("latency_median", lat.quantile(0.5))
                .with("latency_stddev", sd),
        );
    }
    Ok(rows)
}
