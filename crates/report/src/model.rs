//! What a result file holds, as the report needs it, and the one rule that
//! joins several files: a backend's name becomes `backend@label` when
//! another file has a backend of the same name, so runs from different
//! machines or days never merge silently.

use serde_json::{Map, Value};
use std::path::PathBuf;

/// The backend every ratio is relative to.
pub const BASELINE: &str = "posix";

#[derive(Debug, Clone, Default)]
pub struct Latency {
    pub min: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
    /// `(upper edge in seconds, count)`, 10 log buckets per decade.
    pub histogram: Vec<(f64, f64)>,
}

/// One row of `results`: one benchmark phase of one backend in one
/// repetition.
#[derive(Debug, Clone)]
pub struct Row {
    pub benchmark: String,
    pub backend: String,
    pub phase: String,
    pub value: f64,
    pub unit: String,
    pub ops: Option<f64>,
    pub bytes: Option<f64>,
    pub seconds: Option<f64>,
    pub latency: Option<Latency>,
    pub iteration: u64,
    pub ratio_to_posix: Option<f64>,
    pub transport: Option<String>,
    /// The whole row, for benchmark-specific fields (`obj_per_s`,
    /// `object_size`, `workers`, ...).
    pub fields: Map<String, Value>,
}

impl Row {
    pub fn extra(&self, key: &str) -> Option<f64> {
        self.fields.get(key).and_then(Value::as_f64)
    }

    /// Operations per second over the phase's time.
    pub fn op_rate(&self) -> Option<f64> {
        match (self.ops, self.seconds) {
            (Some(o), Some(s)) if o > 0.0 && s > 0.0 => Some(o / s),
            _ => None,
        }
    }

    /// Bytes per second over the phase's time.
    pub fn byte_rate(&self) -> Option<f64> {
        match (self.bytes, self.seconds) {
            (Some(b), Some(s)) if b > 0.0 && s > 0.0 => Some(b / s),
            _ => None,
        }
    }
}

/// One row of `summary` (a phase) or `score_summary` (a score): the median
/// over repetitions, the range, and the ratio to POSIX as (median, min, max).
#[derive(Debug, Clone)]
pub struct SummaryRow {
    pub benchmark: String,
    pub backend: String,
    pub name: String,
    pub unit: String,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: u64,
    pub ratio: Option<(f64, f64, f64)>,
}

/// One result file.
#[derive(Debug, Clone)]
pub struct Run {
    /// `run.label`, or the file's stem.
    pub label: String,
    pub path: PathBuf,
    pub meta: Value,
    pub rows: Vec<Row>,
    pub summary: Vec<SummaryRow>,
    pub score_summary: Vec<SummaryRow>,
}

/// Every file of a report, with backends renamed so that no two runs share
/// a name. Row and summary `backend` fields hold the display name (the
/// series); `Series::backend` keeps the original.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub runs: Vec<Run>,
    pub series: Vec<Series>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// `embedded`, or `embedded@label` when several files have `embedded`.
    pub name: String,
    pub backend: String,
    /// Index into `Dataset::runs`.
    pub run: usize,
}

impl Series {
    pub fn is_baseline(&self) -> bool {
        self.backend == BASELINE
    }
}

impl Dataset {
    pub fn new(mut runs: Vec<Run>) -> Dataset {
        // Labels must differ for `@label` to tell runs apart.
        let labels: Vec<String> = runs.iter().map(|r| r.label.clone()).collect();
        for (i, run) in runs.iter_mut().enumerate() {
            if labels[..i].contains(&run.label) {
                run.label = format!("{}#{}", run.label, i + 1);
            }
        }
        let backends_of = |r: &Run| {
            let mut b: Vec<String> = Vec::new();
            for name in r
                .rows
                .iter()
                .map(|x| &x.backend)
                .chain(r.summary.iter().map(|x| &x.backend))
            {
                if !b.contains(name) {
                    b.push(name.clone());
                }
            }
            b
        };
        let per_run: Vec<Vec<String>> = runs.iter().map(backends_of).collect();
        let mut series = Vec::new();
        for (i, backends) in per_run.iter().enumerate() {
            for b in backends {
                let shared = per_run
                    .iter()
                    .enumerate()
                    .any(|(j, other)| j != i && other.contains(b));
                let name = if shared {
                    format!("{b}@{}", runs[i].label)
                } else {
                    b.clone()
                };
                series.push(Series {
                    name,
                    backend: b.clone(),
                    run: i,
                });
            }
        }
        for (i, run) in runs.iter_mut().enumerate() {
            let rename = |b: &mut String| {
                if let Some(s) = series.iter().find(|s| s.run == i && s.backend == *b) {
                    *b = s.name.clone();
                }
            };
            run.rows.iter_mut().for_each(|r| rename(&mut r.backend));
            run.summary.iter_mut().for_each(|r| rename(&mut r.backend));
            run.score_summary
                .iter_mut()
                .for_each(|r| rename(&mut r.backend));
        }
        Dataset { runs, series }
    }

    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.runs.iter().flat_map(|r| r.rows.iter())
    }

    /// Rows of one benchmark.
    pub fn benchmark<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Row> + 'a {
        self.rows().filter(move |r| r.benchmark == name)
    }

    pub fn has(&self, benchmark: &str) -> bool {
        self.benchmark(benchmark).next().is_some()
    }

    /// Series names in file order, restricted to those with a row passing
    /// `keep`.
    pub fn series_with(&self, keep: impl Fn(&Row) -> bool) -> Vec<String> {
        self.series
            .iter()
            .filter(|s| {
                self.runs[s.run]
                    .rows
                    .iter()
                    .any(|r| r.backend == s.name && keep(r))
            })
            .map(|s| s.name.clone())
            .collect()
    }

    pub fn series(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }
}

/// Distinct values in first-seen order.
pub fn distinct<T: PartialEq + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The median (mean of the middle two for an even count); `None` when empty.
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median([3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median([4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median([]), None);
    }
}
