//! Visibility latency (seed 002): objects written through the file system
//! into the tree the backend serves, then polled through the backend until
//! each is visible with its full size, and read back (verified). s3hpc
//! serves the file system itself, so the delay should be nil; a write-back
//! gateway shows minutes. For posix the "poll" is a stat. Each rank writes
//! and polls its own `objects` objects.

use super::seconds;
use crate::harness::objects::{pattern_len, Objects, Source};
use crate::harness::ranks::timed_phase;
use crate::harness::row::rate;
use crate::harness::{Benchmark, Row, Target};
use crate::pattern::Pattern;
use anyhow::Context;
use serde_json::{json, Value};
use std::io::Write;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct VisibilityParams {
    pub objects: u64,
    pub object_size: u64,
    /// How long one object may take to appear before the run fails.
    pub timeout: f64,
}

impl Default for VisibilityParams {
    fn default() -> Self {
        VisibilityParams {
            objects: 100,
            object_size: 64 << 10,
            timeout: 10.0,
        }
    }
}

impl VisibilityParams {
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            (1..=1_000_000).contains(&self.objects),
            "--objects must be between 1 and 1000000"
        );
        anyhow::ensure!(
            self.object_size <= 1 << 30,
            "--obj-size must be at most 1 GiB"
        );
        seconds("--timeout", self.timeout)?;
        Ok(())
    }
}

pub struct Visibility {
    pub params: VisibilityParams,
}

/// Polls back off up to this interval, so a slow gateway is not hammered.
const MAX_POLL: Duration = Duration::from_millis(10);

impl Benchmark for Visibility {
    fn name(&self) -> &'static str {
        "visibility"
    }

    fn params(&self) -> Value {
        let p = &self.params;
        json!({"objects": p.objects, "object_size": p.object_size, "timeout_seconds": p.timeout})
    }

    fn run(&self, t: &Target, out: &mut dyn Write) -> anyhow::Result<Vec<Row>> {
        let p = &self.params;
        p.validate()?;
        let timeout = seconds("--timeout", p.timeout)?;
        let pattern = Pattern::new(t.opts.seed, pattern_len(p.object_size));
        let dir = Objects::posix_root(t).join("visibility");
        let m = Objects::with(t, |objects| {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            t.opts.each_rank(|comm| {
                timed_phase(comm, "visibility", (0, 1), |rec| {
                    let lat = &mut rec.latencies[0];
                    let mut scratch = Vec::new();
                    for i in 0..p.objects {
                        t.opts.stop.check()?;
                        let key = format!("visibility/r{}-obj{i:07}", comm.rank());
                        let path = Objects::posix_root(t).join(&key);
                        write_file(&pattern, &path, &key, p.object_size)?;
                        lat.record(wait_visible(objects, t, &key, p.object_size, timeout)?);
                        objects.get(&pattern, &key, 0, p.object_size, &mut scratch)?;
                    }
                    Ok(())
                })
            })
        })?;
        let (lat, secs) = (&m.latencies[0], m.seconds());
        let n = lat.count();
        let s = lat.summary();
        writeln!(
            out,
            "visibility on {}: {n} objects of {} B written through the file system by {} \
             ranks; visible after min {:.1} µs, median {:.1} µs, p99 {:.1} µs, max {:.1} µs",
            t.backend,
            p.object_size,
            m.times.len(),
            s.min * 1e6,
            s.p50 * 1e6,
            s.p99 * 1e6,
            s.max * 1e6
        )?;
        Ok(vec![t
            .row("visibility", "visible", "s")
            .measured(n, n * p.object_size, secs, lat)
            .value(s.p50)
            .with("objects_per_s", rate(n as f64, secs))
            .with("object_size", p.object_size)])
    }
}

/// Polls until `key` is visible through the backend with its full size;
/// the delay from when the writer closed the file.
fn wait_visible(
    objects: &Objects,
    t: &Target,
    key: &str,
    size: u64,
    timeout: Duration,
) -> anyhow::Result<Duration> {
    let t0 = Instant::now();
    let mut wait = Duration::from_micros(1);
    while objects.head(key)? != Some(size) {
        anyhow::ensure!(
            t0.elapsed() < timeout,
            "{key} not visible through {} after {timeout:?}",
            t.backend
        );
        std::thread::sleep(wait);
        wait = (wait * 2).min(MAX_POLL);
    }
    Ok(t0.elapsed())
}

/// Writes `key`'s data to `path` as any POSIX program would.
fn write_file(
    pattern: &Pattern,
    path: &std::path::Path,
    key: &str,
    size: u64,
) -> anyhow::Result<()> {
    let mut f =
        std::fs::File::create(path).with_context(|| format!("create {}", path.display()))?;
    let mut src = Source::new(pattern, crate::harness::objects::object_id(key), size);
    while let Some(chunk) = src.next_chunk() {
        f.write_all(chunk)?;
    }
    Ok(())
}
