//! The result JSON (`s3hpc-bench/1`): run metadata, then flat rows, one per
//! phase, backend and repetition (`iteration`), which every report tool can
//! read without knowing the benchmark; then `summary`, one row per backend
//! and phase over the repetitions (median, min, max, and the same of the
//! ratio to POSIX), and `score_summary` likewise for the scores. Written
//! atomically (temporary file, then rename).

use crate::results::{BackendReport, RunInfo};
use crate::stats::Spread;
use crate::summary::{unsteady, Summary, SummaryRow, BASELINE};
use anyhow::Context;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

pub const SCHEMA: &str = "s3hpc-bench/1";

pub fn document(run: &RunInfo, reports: &[BackendReport], summary: &Summary) -> Value {
    let mut rows = Vec::new();
    for b in reports {
        // The baseline of the same repetition.
        let posix = reports
            .iter()
            .find(|p| p.backend == BASELINE && p.iteration == b.iteration);
        for r in b.results.iter().filter(|r| r.scored()) {
            let mut row = json!({
                "benchmark": "io500",
                "backend": b.backend,
                "iteration": b.iteration,
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
                "iteration": b.iteration,
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
        "summary": summary_rows(&summary.phases, "phase"),
        "score_summary": summary_rows(&summary.scores, "score"),
    })
}

/// Flat rows: `backend`, `<key>` (the phase or score name), `unit`,
/// `median`, `min`, `max`, `n`, and `ratio_median`, `ratio_min`,
/// `ratio_max` for backends with a POSIX baseline, `ratio_embedded_*` the
/// same against embedded, `invalid` (repetitions) and the `*_unsteady`
/// flags.
fn summary_rows(rows: &[SummaryRow], key: &str) -> Vec<Value> {
    rows.iter()
        .map(|r| {
            let mut row = json!({
                "benchmark": "io500",
                "backend": r.backend,
                key: r.name,
                "unit": r.unit,
            });
            let obj = row.as_object_mut().expect("object");
            let mut put = |prefix: &str, s: &Spread| {
                obj.insert(format!("{prefix}median"), s.median.into());
                obj.insert(format!("{prefix}min"), s.min.into());
                obj.insert(format!("{prefix}max"), s.max.into());
            };
            put("", &r.value);
            if let Some(q) = &r.ratio {
                put("ratio_", q);
            }
            if let Some(q) = &r.to_embedded {
                put("ratio_embedded_", q);
            }
            obj.insert("n".into(), r.value.n.into());
            // Repetitions in which the figure was invalid; whether a ratio's
            // repetitions disagree (`summary::unsteady`).
            obj.insert("invalid".into(), r.invalid.into());
            for (key, q) in [
                ("ratio_unsteady", &r.ratio),
                ("ratio_embedded_unsteady", &r.to_embedded),
            ] {
                if let Some(q) = q {
                    obj.insert(key.into(), unsteady(q).into());
                }
            }
            row
        })
        .collect()
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Fails before a run, rather than after it, when `--json` names a file
/// in a directory that does not exist.
pub fn check_destination(path: &Path) -> anyhow::Result<()> {
    let dir = parent(path);
    anyhow::ensure!(
        dir.is_dir(),
        "--json {}: {} is not a directory",
        path.display(),
        dir.display()
    );
    anyhow::ensure!(!path.is_dir(), "--json {}: is a directory", path.display());
    Ok(())
}

/// Writes `value` to `path` through a temporary file in the same directory
/// and a rename, so readers never see a partial file.
pub fn write_atomic(path: &Path, value: &Value) -> anyhow::Result<()> {
    let dir = parent(path);
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    // Buffered: serde writes token by token, a syscall each unbuffered
    // (6000 writes for a small result file).
    let mut w = std::io::BufWriter::new(tmp.as_file_mut());
    serde_json::to_writer_pretty(&mut w, value)?;
    w.write_all(b"\n")?;
    w.flush()?;
    drop(w);
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
