//! Copy scaling: throughput against the number of workers, one line per
//! backend, solid for PUT and dashed for GET.

use super::lines::{Line, LinePlot, Panel};
use super::log_label;
use super::sweep::median_points;
use crate::model::{distinct, Dataset, Row};
use plotters::chart::SeriesLabelPosition;

pub fn plot(data: &Dataset) -> Option<LinePlot> {
    let workers = |r: &Row| r.extra("workers").filter(|w| *w > 0.0);
    let rows: Vec<&Row> = data
        .benchmark("copy")
        .filter(|r| workers(r).is_some())
        .collect();
    let phases = distinct(rows.iter().map(|r| r.phase.clone()));
    let mut lines = Vec::new();
    for (i, s) in data.series.iter().enumerate() {
        for (k, phase) in phases.iter().enumerate() {
            let points =
                median_points(&rows, |r| r.backend == s.name && r.phase == *phase, workers);
            if !points.is_empty() {
                lines.push(Line {
                    label: format!("{} {phase}", s.name),
                    color: i,
                    dashed: k % 2 == 1,
                    markers: true,
                    points,
                });
            }
        }
    }
    (!lines.is_empty()).then(|| LinePlot {
        panels: vec![Panel {
            title: "copy scaling".into(),
            x_label: "workers".into(),
            y_label: "MiB/s".into(),
            x_log: true,
            y_log: false,
            x_fmt: log_label,
            y_fmt: log_label,
            lines,
            legend: SeriesLabelPosition::LowerRight,
        }],
        cols: 1,
        panel_size: (760, 440),
    })
}
