//! Reading result files (`s3hpc-bench/1`) into [`Run`]s. Every error names
//! the file and says what is wrong with it, since a report usually combines
//! several files and "invalid JSON" alone would not say which.

use crate::model::{Latency, Row, Run, SummaryRow};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The schema this reader understands (the bench's `output::json::SCHEMA`).
pub const SCHEMA: &str = "s3hpc-bench/1";

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: empty file (expected a JSON results document from `s3hpc bench --json`)")]
    Empty { path: PathBuf },
    #[error("{path}: not JSON: {source}")]
    NotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: {what}")]
    Schema { path: PathBuf, what: String },
}

pub fn load(path: &Path) -> Result<Run, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if text.trim().is_empty() {
        return Err(LoadError::Empty {
            path: path.to_path_buf(),
        });
    }
    let doc: Value = serde_json::from_str(&text).map_err(|source| LoadError::NotJson {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &doc).map_err(|what| LoadError::Schema {
        path: path.to_path_buf(),
        what,
    })
}

fn parse(path: &Path, doc: &Value) -> Result<Run, String> {
    let obj = doc
        .as_object()
        .ok_or("expected a JSON object with \"schema\": \"s3hpc-bench/1\"")?;
    match obj.get("schema").and_then(Value::as_str) {
        Some(SCHEMA) => {}
        Some(other) => return Err(format!("schema is {other:?}; this report reads {SCHEMA:?}")),
        None => return Err(format!("no \"schema\" field; expected {SCHEMA:?}")),
    }
    let run = obj.get("run").cloned().unwrap_or(Value::Null);
    let label = run
        .get("label")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string())
        });
    let results = array(obj, "results")?
        .iter()
        .enumerate()
        .map(|(i, r)| row(r).map_err(|e| format!("results[{i}]: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let summary = summary_rows(obj, "summary", "phase")?;
    let score_summary = summary_rows(obj, "score_summary", "score")?;
    Ok(Run {
        label,
        path: path.to_path_buf(),
        meta: run,
        rows: results,
        summary,
        score_summary,
    })
}

/// `key` as an array; an absent key is an empty array (a bench that wrote no
/// summary), anything else is an error.
fn array<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(format!("\"{key}\" must be an array")),
    }
}

fn field_str(r: &Value, key: &str) -> Result<String, String> {
    r.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("missing string field \"{key}\""))
}

fn field_f64(r: &Value, key: &str) -> Option<f64> {
    r.get(key).and_then(Value::as_f64)
}

/// A required number. `null` is accepted as "not a number": serde_json
/// writes a NaN (a rate over zero time) as `null`, and one such cell should
/// show as `-` rather than reject the whole file.
fn number(r: &Value, key: &str) -> Result<f64, String> {
    match r.get(key) {
        Some(Value::Null) => Ok(f64::NAN),
        Some(v) => v
            .as_f64()
            .ok_or_else(|| format!("field \"{key}\" is not a number")),
        None => Err(format!("missing number field \"{key}\"")),
    }
}

fn row(r: &Value) -> Result<Row, String> {
    let obj = r.as_object().ok_or("not an object")?;
    let value = number(r, "value")?;
    Ok(Row {
        benchmark: field_str(r, "benchmark")?,
        backend: field_str(r, "backend")?,
        phase: field_str(r, "phase")?,
        value,
        unit: r
            .get("unit")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        ops: field_f64(r, "ops"),
        bytes: field_f64(r, "bytes"),
        seconds: field_f64(r, "seconds"),
        latency: match r.get("latency") {
            None | Some(Value::Null) => None,
            Some(l) => Some(latency(l).map_err(|e| format!("latency: {e}"))?),
        },
        iteration: r.get("iteration").and_then(Value::as_u64).unwrap_or(0),
        ratio_to_posix: field_f64(r, "ratio_to_posix"),
        transport: r
            .get("transport")
            .and_then(Value::as_str)
            .map(str::to_owned),
        fields: obj.clone(),
    })
}

fn latency(l: &Value) -> Result<Latency, String> {
    let histogram = match l.get("histogram") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(buckets)) => buckets
            .iter()
            .map(|b| {
                let pair = b.as_array().filter(|p| p.len() == 2);
                match pair.map(|p| (p[0].as_f64(), p[1].as_f64())) {
                    Some((Some(edge), Some(count))) if edge > 0.0 && count >= 0.0 => {
                        Ok((edge, count))
                    }
                    _ => Err("histogram buckets must be [upper_edge_seconds > 0, count >= 0]"),
                }
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("histogram must be an array".into()),
    };
    Ok(Latency {
        min: field_f64(l, "min"),
        p50: field_f64(l, "p50"),
        p90: field_f64(l, "p90"),
        p99: field_f64(l, "p99"),
        max: field_f64(l, "max"),
        histogram,
    })
}

fn summary_rows(
    obj: &Map<String, Value>,
    key: &str,
    name_key: &str,
) -> Result<Vec<SummaryRow>, String> {
    array(obj, key)?
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let median = number(r, "median").map_err(|e| format!("{key}[{i}]: {e}"))?;
            Ok(SummaryRow {
                benchmark: r
                    .get("benchmark")
                    .and_then(Value::as_str)
                    .unwrap_or("io500")
                    .to_owned(),
                backend: field_str(r, "backend").map_err(|e| format!("{key}[{i}]: {e}"))?,
                name: field_str(r, name_key).map_err(|e| format!("{key}[{i}]: {e}"))?,
                unit: r
                    .get("unit")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                median,
                min: field_f64(r, "min").unwrap_or(median),
                max: field_f64(r, "max").unwrap_or(median),
                n: r.get("n").and_then(Value::as_u64).unwrap_or(1),
                ratio: field_f64(r, "ratio_median").map(|m| {
                    (
                        m,
                        field_f64(r, "ratio_min").unwrap_or(m),
                        field_f64(r, "ratio_max").unwrap_or(m),
                    )
                }),
            })
        })
        .collect()
}
