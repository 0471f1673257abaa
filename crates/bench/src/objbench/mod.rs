//! The object benchmarks beyond warp, each one small module over
//! `harness::objects`: key-value latency (`kv`), throughput against object
//! size (`sweep`), parallel large-object copies (`copy`) and the delay
//! until a file written through the file system is visible over S3
//! (`visibility`).

pub mod copy;
pub mod kv;
pub mod sweep;
pub mod visibility;

use crate::latency::Latency;
use std::time::{Duration, Instant};

/// Runs `op` and records its duration in `lat`.
#[inline]
pub fn timed<T>(lat: &mut Latency, op: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let t0 = Instant::now();
    let r = op();
    lat.record(t0.elapsed());
    r
}

/// Parses a positive duration in seconds from an option value.
pub fn seconds(name: &str, s: f64) -> anyhow::Result<Duration> {
    anyhow::ensure!(
        s.is_finite() && s > 0.0 && s <= 86_400.0,
        "{name} must be a positive number of seconds (at most a day)"
    );
    Ok(Duration::from_secs_f64(s))
}
