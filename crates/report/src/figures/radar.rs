//! Radar chart (seed 000, Fig. 10): each backend's % of POSIX per IO500
//! phase, one polygon per backend, with POSIX as the 100 % ring. plotters
//! has no polar chart, so this draws rings, spokes and polygons as elements
//! on a square cartesian plane.

use super::{color, legend, DrawResult, Plot, FONT};
use crate::model::{distinct, Dataset};
use crate::tables::comparison::io500_summary;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub struct Radar {
    /// The IO500 phases, clockwise from the top.
    pub axes: Vec<String>,
    /// Backend, palette index and the ratio to POSIX per axis (missing: 0).
    pub polygons: Vec<(String, usize, Vec<f64>)>,
}

/// `None` without at least three phases with a ratio to POSIX.
pub fn plot(data: &Dataset) -> Option<Radar> {
    let summary = io500_summary(data);
    let axes = distinct(
        summary
            .iter()
            .filter(|s| s.ratio.is_some())
            .map(|s| s.name.clone()),
    );
    if axes.len() < 3 {
        return None;
    }
    let polygons: Vec<_> = data
        .series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_baseline())
        .filter_map(|(i, s)| {
            let values: Vec<Option<f64>> = axes
                .iter()
                .map(|a| {
                    summary
                        .iter()
                        .find(|r| r.backend == s.name && r.name == *a)
                        .and_then(|r| r.ratio.map(|q| q.0))
                })
                .collect();
            values.iter().any(Option::is_some).then(|| {
                (
                    s.name.clone(),
                    i,
                    values.iter().map(|v| v.unwrap_or(0.0)).collect(),
                )
            })
        })
        .collect();
    (!polygons.is_empty()).then_some(Radar { axes, polygons })
}

impl Radar {
    /// The outer ring: the largest ratio (at least 100 %), rounded up to
    /// a ring step.
    fn extent(&self) -> (f64, f64) {
        let max = self
            .polygons
            .iter()
            .flat_map(|p| p.2.iter().copied())
            .fold(1.0, f64::max);
        let step = if max <= 1.5 { 0.25 } else { 0.5 };
        ((max / step).ceil() * step, step)
    }

    fn at(&self, k: usize, r: f64) -> (f64, f64) {
        let angle = std::f64::consts::FRAC_PI_2
            - 2.0 * std::f64::consts::PI * k as f64 / self.axes.len() as f64;
        (r * angle.cos(), r * angle.sin())
    }

    fn ring(&self, r: f64) -> Vec<(f64, f64)> {
        (0..=self.axes.len())
            .map(|k| self.at(k % self.axes.len(), r))
            .collect()
    }
}

impl Plot for Radar {
    fn size(&self) -> (u32, u32) {
        (900, 760)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let (outer, step) = self.extent();
        let lim = outer * 1.3;
        let mut chart = ChartBuilder::on(root)
            .caption("% of POSIX per IO500 phase", (FONT, 20))
            .margin(10)
            .build_cartesian_2d(-lim * 1.18..lim * 1.18, -lim..lim)?;
        let grey = BLACK.mix(0.25);
        let mut r = step;
        while r <= outer + 1e-9 {
            let baseline = (r - 1.0).abs() < 1e-9;
            let style = if baseline {
                BLACK.stroke_width(2)
            } else {
                grey.stroke_width(1)
            };
            chart.draw_series(std::iter::once(PathElement::new(self.ring(r), style)))?;
            let label = if baseline {
                "POSIX = 100 %".to_string()
            } else {
                format!("{:.0} %", r * 100.0)
            };
            chart.draw_series(std::iter::once(Text::new(
                label,
                (outer * 0.02, r + outer * 0.015),
                (FONT, 11).into_font().color(&BLACK.mix(0.7)),
            )))?;
            r += step;
        }
        for (k, axis) in self.axes.iter().enumerate() {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 0.0), self.at(k, outer)],
                grey.stroke_width(1),
            )))?;
            let (x, y) = self.at(k, outer * 1.06);
            let h = if x.abs() < outer * 0.05 {
                HPos::Center
            } else if x > 0.0 {
                HPos::Left
            } else {
                HPos::Right
            };
            let v = if y > outer * 0.5 {
                VPos::Bottom
            } else if y < -outer * 0.5 {
                VPos::Top
            } else {
                VPos::Center
            };
            let style = TextStyle::from((FONT, 13).into_font()).pos(Pos::new(h, v));
            chart.draw_series(std::iter::once(Text::new(axis.clone(), (x, y), style)))?;
        }
        for (name, c, values) in &self.polygons {
            let c = color(*c);
            let pts: Vec<(f64, f64)> = (0..=values.len())
                .map(|k| self.at(k % values.len(), values[k % values.len()]))
                .collect();
            chart.draw_series(std::iter::once(Polygon::new(pts.clone(), c.mix(0.15))))?;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    pts.clone(),
                    c.stroke_width(2),
                )))?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], c.filled()));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}
