//! Visibility latency (seed 002): objects written through the file system
//! into the tree the backend serves, then polled through the backend until
//! each is visible with its full size, and read back (verified). s3hpc
//! serves the file system itself, so the delay should be nil; a write-back
//! gateway shows minutes. For posix the "poll" is a stat.

use super::seconds;
use crate::harness::objects::{pattern_len, Objects, Source};
use crate::harness::row::rate;
use crate::harness::{Benchmark, Row, Target};
use crate::latency::Latency;
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
        let objects = Objects::open(t)?;
        let pattern = Pattern::new(t.opts.seed, pattern_len(p.object_size));
        let dir = Objects::posix_root(t).join("visibility");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let result = (|| -> anyhow::Result<Row> {
            let mut lat = Latency::new();
            let mut scratch = Vec::new();
            let start = Instant::now();
            for i in 0..p.objects {
                t.opts.stop.check()?;
                let key = format!("visibility/obj{i:07}");
                write_file(
                    &pattern,
                    &Objects::posix_root(t).join(&key),
                    &key,
                    p.object_size,
                )?;
                // The clock starts when the writer has closed the file.
                let t0 = Instant::now();
                let mut wait = Duration::from_micros(1);
                loop {
                    if objects.head(&key)? == Some(p.object_size) {
                        break;
                    }
                    anyhow::ensure!(
                        t0.elapsed() < timeout,
                        "{key} not visible through {} after {timeout:?}",
                        t.backend
                    );
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(MAX_POLL);
                }
                lat.record(t0.elapsed());
                objects.get(&pattern, &key, 0, p.object_size, &mut scratch)?;
            }
            let secs = start.elapsed().as_secs_f64();
            let s = lat.summary();
            writeln!(
                out,
                "visibility on {}: {} objects of {} B written through the file system; \
                 visible after min {:.1} µs, median {:.1} µs, p99 {:.1} µs, max {:.1} µs",
                t.backend,
                p.objects,
                p.object_size,
                s.min * 1e6,
                s.p50 * 1e6,
                s.p99 * 1e6,
                s.max * 1e6
            )?;
            Ok(t.row("visibility", "visible", "s")
                .measured(p.objects, p.objects * p.object_size, secs, &lat)
                .value(s.p50)
                .with("objects_per_s", rate(p.objects as f64, secs))
                .with("object_size", p.object_size))
        })();
        let cleaned = if t.opts.keep {
            Ok(())
        } else {
            objects.remove_all()
        };
        let row = result?;
        cleaned?;
        Ok(vec![row])
    }
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
