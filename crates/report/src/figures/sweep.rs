//! Throughput against object size (seed 000, Figs. 2, 3, 6, 9), from
//! `sweep` rows: log-log, one line per backend, writes and reads side by
//! side. Each point is the median over repetitions.

use super::lines::{Line, LinePlot, Panel};
use super::{log_label, si_bytes_label};
use crate::model::{distinct, median, Dataset, Row};
use plotters::chart::SeriesLabelPosition;

/// Points `(x, median y)` of the rows passing `keep`, by distinct `x`,
/// sorted by `x` (the sweep and copy figures share it).
pub fn median_points(
    rows: &[&Row],
    keep: impl Fn(&Row) -> bool,
    x: impl Fn(&Row) -> Option<f64>,
) -> Vec<(f64, f64)> {
    let kept: Vec<&&Row> = rows.iter().filter(|r| keep(r)).collect();
    let mut xs = distinct(kept.iter().filter_map(|r| x(r)).map(f64::to_bits));
    xs.sort_by(|a, b| f64::from_bits(*a).total_cmp(&f64::from_bits(*b)));
    xs.into_iter()
        .filter_map(|xb| {
            let ys = kept.iter().filter(|r| x(r).map(f64::to_bits) == Some(xb));
            median(ys.map(|r| r.value)).map(|y| (f64::from_bits(xb), y))
        })
        .collect()
}

pub fn plot(data: &Dataset) -> Option<LinePlot> {
    let size = |r: &Row| r.extra("object_size").filter(|s| *s > 0.0);
    let rows: Vec<&Row> = data
        .benchmark("sweep")
        .filter(|r| size(r).is_some())
        .collect();
    let panels: Vec<Panel> = distinct(rows.iter().map(|r| r.phase.clone()))
        .into_iter()
        .map(|phase| Panel {
            title: format!("sweep: {phase}"),
            x_label: "object size".into(),
            y_label: "MiB/s".into(),
            x_log: true,
            y_log: true,
            x_fmt: si_bytes_label,
            y_fmt: log_label,
            lines: data
                .series
                .iter()
                .enumerate()
                .map(|(i, s)| Line {
                    label: s.name.clone(),
                    color: i,
                    dashed: false,
                    markers: true,
                    points: median_points(&rows, |r| r.backend == s.name && r.phase == phase, size),
                })
                .filter(|l| !l.points.is_empty())
                .collect(),
            legend: SeriesLabelPosition::LowerRight,
        })
        .collect();
    (!panels.is_empty()).then_some(LinePlot {
        panels,
        cols: 2,
        panel_size: (520, 380),
    })
}
