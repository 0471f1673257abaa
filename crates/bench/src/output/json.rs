//! The result JSON (`s3hpc-bench/1`): run metadata, then flat rows, one per
//! phase and backend, which every report tool can read without knowing the
//! benchmark. Written atomically (temporary file, then rename).

use crate::suite::{BackendReport, RunInfo};
use anyhow::Context;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

pub const SCHEMA: &str = "s3hpc-bench/1";

pub fn document(run: &RunInfo, reports: &[BackendReport]) -> Value {
    let posix = reports.iter().find(|b| b.backend == "posix");
    let mut rows = Vec::new();
    for b in reports {
        for r in b.results.iter().filter(|r| r.scored()) {
            let mut row = json!({
                "benchmark": "io500",
                "backend": b.backend,
                "transport": b.transport,
                "api": b.api,
                "phase": r.name,
                "value": r.value,
                "unit": r.unit(),
                "ops": r.ops,
                "bytes": r.bytes,
                "seconds": r.seconds,
                "latency": r.latency,
                "ranks": run.ranks,
                "valid": r.valid,
                "stonewall_ops": r.stonewall_ops,
                "stonewall_seconds": r.stonewall_seconds,
            });
            let obj = row.as_object_mut().expect("object");
            if let Some(m) = r.matches {
                obj.insert("matches".into(), m.into());
            }
            if !r.notes.is_empty() {
                obj.insert("notes".into(), json!(r.notes));
            }
            let base = posix
                .filter(|p| p.backend != b.backend)
                .and_then(|p| p.results.iter().find(|x| x.name == r.name))
                .filter(|x| x.value > 0.0);
            if let Some(base) = base {
                obj.insert("ratio_to_posix".into(), (r.value / base.value).into());
            }
            rows.push(row);
        }
    }
    let scores: Vec<Value> = reports
        .iter()
        .map(|b| {
            json!({
                "benchmark": "io500",
                "backend": b.backend,
                "transport": b.transport,
                "bandwidth": b.score.bandwidth,
                "bandwidth_unit": "GiB/s",
                "iops": b.score.iops,
                "iops_unit": "kIOPS",
                "total": b.score.total,
                "valid": b.score.valid,
            })
        })
        .collect();
    json!({
        "schema": SCHEMA,
        "run": run,
        "results": rows,
        "scores": scores,
    })
}

/// Writes `value` to `path` through a temporary file in the same directory
/// and a rename, so readers never see a partial file.
pub fn write_atomic(path: &Path, value: &Value) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    serde_json::to_writer_pretty(&mut tmp, value)?;
    tmp.write_all(b"\n")?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
