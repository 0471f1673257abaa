//! Latency density per operation type and backend (seed 000, Fig. 8): one
//! panel per phase, one smoothed curve per backend, log time axis. Each
//! curve merges the histograms of all repetitions of that phase. Benchmarks
//! that vary a parameter within a phase (object size, workers) get a panel
//! per value: merging 4 KiB and 256 MiB latencies would draw neither.

use super::lines::{Line, LinePlot, Panel};
use super::{bytes_label, log_label, time_label};
use crate::kde;
use crate::model::{distinct, Dataset, Row};
use plotters::chart::SeriesLabelPosition;

type Points = Vec<(f64, f64)>;

/// Panels per row.
const COLS: usize = 4;
/// Points per curve.
const GRID: usize = 240;

fn histogram(r: &Row) -> Option<&[(f64, f64)]> {
    r.latency
        .as_ref()
        .map(|l| &l.histogram[..])
        .filter(|h| h.iter().any(|b| b.1 > 0.0))
}

/// The parameters that split a phase into panels, with their labels.
type Label = fn(f64) -> String;
const SPLITS: [(&str, Label); 2] = [
    ("object_size", bytes_label),
    ("workers", |w| format!("{w} workers")),
];

/// The panel a row belongs to: its phase, and the value of a split.
fn panel_key(r: &Row) -> (String, Option<u64>, String) {
    for (field, label) in SPLITS {
        if let Some(v) = r.extra(field) {
            return (
                r.phase.clone(),
                Some(v.to_bits()),
                format!("{} {}", r.phase, label(v)),
            );
        }
    }
    (r.phase.clone(), None, r.phase.clone())
}

/// Benchmarks with at least one latency histogram, in file order.
pub fn benchmarks(data: &Dataset) -> Vec<String> {
    distinct(
        data.rows()
            .filter(|r| histogram(r).is_some())
            .map(|r| r.benchmark.clone()),
    )
}

/// The density figure of `benchmark`, or `None` without histograms.
pub fn plot(data: &Dataset, benchmark: &str) -> Option<LinePlot> {
    let rows: Vec<&Row> = data
        .benchmark(benchmark)
        .filter(|r| histogram(r).is_some())
        .collect();
    let panels: Vec<Panel> = distinct(rows.iter().map(|r| panel_key(r)))
        .into_iter()
        .map(|key| {
            let of_phase: Vec<&&Row> = rows.iter().filter(|r| panel_key(r) == key).collect();
            // (palette index, backend, merged histogram) per backend.
            let curves: Vec<(usize, String, Points)> = data
                .series
                .iter()
                .enumerate()
                .filter_map(|(i, s)| {
                    let hs: Vec<&[(f64, f64)]> = of_phase
                        .iter()
                        .filter(|r| r.backend == s.name)
                        .filter_map(|r| histogram(r))
                        .collect();
                    (!hs.is_empty()).then(|| (i, s.name.clone(), kde::merge(&hs)))
                })
                .collect();
            let lo = curves
                .iter()
                .flat_map(|c| c.2.iter().map(|p| p.0))
                .fold(f64::INFINITY, f64::min);
            let hi = curves
                .iter()
                .flat_map(|c| c.2.iter().map(|p| p.0))
                .fold(f64::NEG_INFINITY, f64::max);
            let xs = kde::grid(lo - 0.4, hi + 0.4, GRID);
            let lines = curves
                .into_iter()
                .map(|(color, label, points)| {
                    let d = kde::density(&points, kde::bandwidth(&points), &xs);
                    Line {
                        label,
                        color,
                        dashed: false,
                        markers: false,
                        points: xs.iter().map(|x| 10f64.powf(*x)).zip(d).collect(),
                    }
                })
                .collect();
            Panel {
                title: key.2,
                x_label: "latency per operation".into(),
                y_label: "density per decade".into(),
                x_log: true,
                y_log: false,
                x_fmt: time_label,
                y_fmt: log_label,
                lines,
                legend: SeriesLabelPosition::UpperRight,
            }
        })
        .collect();
    (!panels.is_empty()).then_some(LinePlot {
        panels,
        cols: COLS,
        panel_size: (380, 280),
    })
}
