//! Panels of labelled lines, shared by the density, sweep and copy figures:
//! each axis linear or logarithmic, one colour per backend.

use super::{color, grid_rows, legend, panels, DrawResult, Plot, FONT};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

#[derive(Debug, Clone)]
pub struct Line {
    pub label: String,
    /// Palette index (one per backend, the same in every panel).
    pub color: usize,
    /// Dashed lines tell a second quantity of the same backend apart
    /// (reads against writes).
    pub dashed: bool,
    /// Markers at the points (measured values, not a smooth curve).
    pub markers: bool,
    pub points: Vec<(f64, f64)>,
}

pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
    pub x_fmt: fn(f64) -> String,
    pub y_fmt: fn(f64) -> String,
    pub lines: Vec<Line>,
    /// Where the legend covers the least (rising curves: lower right).
    pub legend: SeriesLabelPosition,
}

pub struct LinePlot {
    pub panels: Vec<Panel>,
    pub cols: usize,
    pub panel_size: (u32, u32),
}

impl Plot for LinePlot {
    fn size(&self) -> (u32, u32) {
        let cols = self.cols.min(self.panels.len()).max(1) as u32;
        (
            self.panel_size.0 * cols,
            self.panel_size.1 * grid_rows(self.panels.len(), self.cols),
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        for (p, area) in self
            .panels
            .iter()
            .zip(panels(root, self.panels.len(), self.cols))
        {
            draw_panel(&area, p)?;
        }
        Ok(())
    }
}

/// The range of the values, padded; on a log axis only positive values
/// count and the padding is a factor.
fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let v: Vec<f64> = values
        .filter(|x| x.is_finite() && (!log || *x > 0.0))
        .collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        let (lo, hi) = if hi / lo < 1.5 {
            (lo / 2.0, hi * 2.0)
        } else {
            (lo, hi)
        };
        (lo / 1.2, hi * 1.2)
    } else {
        let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
        (
            (lo - 0.05 * span).min(if lo >= 0.0 { 0.0 } else { lo }),
            hi + 0.05 * span,
        )
    }
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> DrawResult {
    let points = || p.lines.iter().flat_map(|l| l.points.iter());
    let (x0, x1) = range(points().map(|q| q.0), p.x_log);
    let (y0, y1) = range(points().map(|q| q.1), p.y_log);
    let lin = |a: f64, b: f64| RangedCoordf64::from(a..b);
    let log = |a: f64, b: f64| LogCoord::from((a..b).log_scale());
    match (p.x_log, p.y_log) {
        (true, true) => draw_on(area, p, log(x0, x1), log(y0, y1)),
        (true, false) => draw_on(area, p, log(x0, x1), lin(y0, y1)),
        (false, true) => draw_on(area, p, lin(x0, x1), log(y0, y1)),
        (false, false) => draw_on(area, p, lin(x0, x1), lin(y0, y1)),
    }
}

fn draw_on<DB, X, Y>(area: &DrawingArea<DB, Shift>, p: &Panel, x: X, y: Y) -> DrawResult
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc(&p.x_label)
        .y_desc(&p.y_label)
        .x_label_formatter(&|v| (p.x_fmt)(*v))
        .y_label_formatter(&|v| (p.y_fmt)(*v))
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 14))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for l in &p.lines {
        let c = color(l.color);
        let style = c.stroke_width(2);
        if l.dashed {
            chart
                .draw_series(std::iter::once(DashedPathElement::new(
                    l.points.clone(),
                    6,
                    4,
                    style,
                )))?
                .label(&l.label)
                .legend(move |(x, y)| {
                    DashedPathElement::new(vec![(x, y), (x + 20, y)], 5, 3, style)
                });
        } else {
            chart
                .draw_series(LineSeries::new(l.points.clone(), style))?
                .label(&l.label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        if l.markers {
            chart.draw_series(l.points.iter().map(|&q| Circle::new(q, 3, c.filled())))?;
        }
    }
    if p.lines.iter().any(|l| !l.label.is_empty()) {
        legend(&mut chart, p.legend.clone())?;
    }
    Ok(())
}
