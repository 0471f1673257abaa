//! Summary tables of the non-IO500 benchmarks (md-workbench, warp, kv, copy,
//! sweep, visibility): one line per backend, phase (and size or worker
//! count where the benchmark varies one), each cell the median over the
//! repetitions.

use super::{num, seconds, Table};
use crate::model::{distinct, median, Dataset, Row};

type Get = fn(&Row) -> Option<f64>;

/// A column: header, what to read from a row, and whether it is a time.
struct Column(&'static str, Get, bool);

fn p50(r: &Row) -> Option<f64> {
    r.latency.as_ref().and_then(|l| l.p50)
}
fn p99(r: &Row) -> Option<f64> {
    r.latency.as_ref().and_then(|l| l.p99)
}
fn value(r: &Row) -> Option<f64> {
    Some(r.value)
}
fn ops(r: &Row) -> Option<f64> {
    r.ops
}
fn secs(r: &Row) -> Option<f64> {
    r.seconds
}

/// The tables this report knows, in page order: (benchmark, title, the
/// field that splits a phase into several lines, columns).
fn specs() -> Vec<(
    &'static str,
    &'static str,
    Option<&'static str>,
    Vec<Column>,
)> {
    vec![
        (
            "mdworkbench",
            "md-workbench",
            None,
            vec![
                Column("IOPS", value, false),
                Column("obj/s", |r| r.extra("obj_per_s"), false),
                Column("MiB/s", |r| r.extra("mib_per_s"), false),
                Column("ops", ops, false),
                Column("seconds", secs, false),
                Column("p50", p50, true),
                Column("p99", p99, true),
            ],
        ),
        (
            "warp",
            "warp (mixed and GET workloads, then per operation type)",
            Some("object_size"),
            vec![
                Column("obj/s", value, false),
                Column("MiB/s", |r| r.extra("mib_per_s"), false),
                Column("ops", ops, false),
                Column("seconds", secs, false),
                Column("p50", p50, true),
                Column("p99", p99, true),
            ],
        ),
        (
            "kv",
            "key-value operations",
            None,
            vec![
                Column("ops/s", value, false),
                Column("value size (B)", |r| r.extra("value_size"), false),
                Column("median", |r| r.extra("latency_median"), true),
                Column("stddev", |r| r.extra("latency_stddev"), true),
                Column("p99", p99, true),
            ],
        ),
        (
            "copy",
            "copy scaling",
            Some("workers"),
            vec![
                Column("MiB/s", value, false),
                Column("object size (B)", |r| r.extra("object_size"), false),
                Column("p50", p50, true),
                Column("p99", p99, true),
            ],
        ),
        (
            "sweep",
            "throughput by object size",
            Some("object_size"),
            vec![
                Column("MiB/s", value, false),
                Column("p50", p50, true),
                Column("p99", p99, true),
            ],
        ),
        (
            "visibility",
            "time until a write is visible",
            None,
            vec![
                Column("ops", ops, false),
                Column("p50", p50, true),
                Column("p99", p99, true),
                Column("max", |r| r.latency.as_ref().and_then(|l| l.max), true),
            ],
        ),
    ]
}

/// The benchmarks these tables cover, for the page's skip notes.
pub fn benchmarks() -> Vec<(&'static str, &'static str)> {
    specs().into_iter().map(|(b, t, _, _)| (b, t)).collect()
}

/// The table of `benchmark`, or `None` when no file has its rows.
pub fn table(data: &Dataset, benchmark: &str) -> Option<Table> {
    let (_, title, split, columns) = specs().into_iter().find(|s| s.0 == benchmark)?;
    let rows: Vec<&Row> = data.benchmark(benchmark).collect();
    if rows.is_empty() {
        return None;
    }
    let key = |r: &Row| split.and_then(|f| r.extra(f)).map(f64::to_bits);
    let groups = distinct(
        rows.iter()
            .map(|r| (r.backend.clone(), r.phase.clone(), key(r))),
    );
    let mut headers = vec!["backend".to_string(), "phase".to_string()];
    if let Some(f) = split {
        headers.push(f.replace('_', " "));
    }
    headers.extend(columns.iter().map(|c| c.0.to_string()));
    let mut reps = Vec::new();
    let lines = groups
        .into_iter()
        .map(|(backend, phase, k)| {
            let of: Vec<&&Row> = rows
                .iter()
                .filter(|r| r.backend == backend && r.phase == phase && key(r) == k)
                .collect();
            reps.push(of.len());
            let mut cells = vec![backend, phase];
            if split.is_some() {
                cells.push(k.map_or("-".into(), |b| num(f64::from_bits(b))));
            }
            for Column(_, get, is_time) in &columns {
                cells.push(match median(of.iter().filter_map(|r| get(r))) {
                    Some(v) if *is_time => seconds(v),
                    Some(v) => num(v),
                    None => "-".into(),
                });
            }
            cells
        })
        .collect();
    let reps = distinct(reps);
    Some(Table {
        title: title.to_string(),
        headers,
        rows: lines,
        note: Some(format!(
            "Medians over {} repetition(s); latencies per operation.",
            reps.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join("/")
        )),
    })
}
