//! Key-value latency (seed 001 §12.2): timed consecutive single-key
//! operations on N keys of one value size: put, enumerate (list), get
//! (verified), size query (head), query of missing keys, delete. Reports the
//! median and standard deviation of each operation.

use super::timed;
use crate::harness::objects::{pattern_len, Objects};
use crate::harness::row::rate;
use crate::harness::{Benchmark, Row, Target};
use crate::latency::Latency;
use crate::pattern::Pattern;
use serde_json::{json, Value};
use std::io::Write;
use std::time::Instant;

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
        self.params.validate()?;
        let objects = Objects::open(t)?;
        let max = self.params.value_sizes.iter().copied().max().unwrap_or(0);
        let pattern = Pattern::new(t.opts.seed, pattern_len(max));
        let mut rows = Vec::new();
        writeln!(
            out,
            "kv on {}: {} keys per value size",
            t.backend, self.params.keys
        )?;
        writeln!(
            out,
            "{:>10} {:>13} {:>12} {:>12} {:>12}",
            "size", "op", "ops/s", "median", "stddev"
        )?;
        let result = (|| -> anyhow::Result<()> {
            for &size in &self.params.value_sizes {
                for r in run_size(t, &objects, &pattern, self.params.keys, size)? {
                    writeln!(
                        out,
                        "{:>10} {:>13} {:>12.1} {:>11.2}µs {:>11.2}µs",
                        size,
                        r.phase,
                        r.value,
                        r.extra["latency_median"].as_f64().unwrap_or(0.0) * 1e6,
                        r.extra["latency_stddev"].as_f64().unwrap_or(0.0) * 1e6
                    )?;
                    rows.push(r);
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

fn run_size(
    t: &Target,
    objects: &Objects,
    pattern: &Pattern,
    n: u64,
    size: u64,
) -> anyhow::Result<Vec<Row>> {
    let prefix = format!("kv{size}/");
    let key = |i: u64| format!("{prefix}k{i:08}");
    let missing = |i: u64| format!("{prefix}missing{i:08}");
    let mut scratch = Vec::new();
    let mut rows = Vec::new();
    for phase in PHASES {
        t.opts.stop.check()?;
        let mut lat = Latency::new();
        let t0 = Instant::now();
        let mut ops = n;
        let mut bytes = 0;
        match phase {
            "put" => {
                for i in 0..n {
                    timed(&mut lat, || objects.put(pattern, &key(i), size))?;
                }
                bytes = n * size;
            }
            "list" => {
                // One enumeration of every key, timed as one op.
                let found = timed(&mut lat, || objects.list(&prefix))?;
                anyhow::ensure!(found == n, "list {prefix}: {found} keys, expected {n}");
                ops = 1;
            }
            "get" => {
                for i in 0..n {
                    timed(&mut lat, || {
                        objects.get(pattern, &key(i), 0, size, &mut scratch)
                    })?;
                }
                bytes = n * size;
            }
            "head" => {
                for i in 0..n {
                    let got = timed(&mut lat, || objects.head(&key(i)))?;
                    anyhow::ensure!(
                        got == Some(size),
                        "head {}: {got:?}, expected {size}",
                        key(i)
                    );
                }
            }
            "head-missing" => {
                for i in 0..n {
                    let got = timed(&mut lat, || objects.head(&missing(i)))?;
                    anyhow::ensure!(
                        got.is_none(),
                        "head {}: found a key never written",
                        missing(i)
                    );
                }
            }
            _ => {
                for i in 0..n {
                    timed(&mut lat, || objects.delete(&key(i)))?;
                }
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        let (_, sd) = lat.mean_stddev();
        rows.push(
            t.row("kv", phase, "ops/s")
                .measured(ops, bytes, secs, &lat)
                .value(rate(ops as f64, secs))
                .with("value_size", size)
                .with("latency_median", lat.quantile(0.5))
                .with("latency_stddev", sd),
        );
    }
    // Every key is gone: a head now finds nothing.
    anyhow::ensure!(
        objects.head(&key(0))?.is_none(),
        "{} still exists after delete",
        key(0)
    );
    Ok(rows)
}
