//! The roofline figure: one panel per backend, log-log, the roof as a line
//! and each phase at its intensity and measured op rate, coloured by what
//! bounds it. Phases that move no data have no intensity and appear only in
//! the table.

use super::{color, grid_rows, legend, log_label, panels, DrawResult, Plot, FONT};
use crate::roofline::{Bound, Roof};
use crate::tables::num;
use plotters::coord::Shift;
use plotters::prelude::*;

pub struct Roofline {
    pub roofs: Vec<Roof>,
}

const COLS: usize = 2;
const IOPS_BOUND: usize = 1;
const BANDWIDTH_BOUND: usize = 0;

impl Plot for Roofline {
    fn size(&self) -> (u32, u32) {
        let cols = COLS.min(self.roofs.len()).max(1) as u32;
        (560 * cols, 460 * grid_rows(self.roofs.len(), COLS))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        for (roof, area) in self.roofs.iter().zip(panels(root, self.roofs.len(), COLS)) {
            draw_roof(&area, roof)?;
        }
        Ok(())
    }
}

fn draw_roof<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, roof: &Roof) -> DrawResult {
    let placed: Vec<_> = roof
        .points
        .iter()
        .filter_map(|p| p.intensity.map(|i| (i, p)))
        .collect();
    let xs = placed.iter().map(|p| p.0).chain([roof.ridge()]);
    let x0 = xs.clone().fold(f64::INFINITY, f64::min) / 4.0;
    let x1 = xs.fold(f64::NEG_INFINITY, f64::max) * 4.0;
    let ys = placed
        .iter()
        .map(|p| p.1.rate)
        .chain([roof.peak_iops, roof.attainable(Some(x0))]);
    let y0 = ys.clone().fold(f64::INFINITY, f64::min) / 3.0;
    let y1 = ys.fold(f64::NEG_INFINITY, f64::max) * 3.0;
    let mut chart = ChartBuilder::on(area)
        .caption(format!("roofline: {}", roof.series), (FONT, 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("I/O intensity (ops/byte)")
        .y_desc("ops/s")
        .x_label_formatter(&|v| format!("{v:.0e}"))
        .y_label_formatter(&|v| log_label(*v))
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 14))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let roof_line = [x0, roof.ridge(), x1]
        .into_iter()
        .filter(|x| (x0..=x1).contains(x))
        .map(|x| (x, roof.attainable(Some(x))))
        .collect::<Vec<_>>();
    chart
        .draw_series(std::iter::once(PathElement::new(
            roof_line,
            BLACK.stroke_width(2),
        )))?
        .label(format!(
            "roof: {} ops/s, {} MiB/s",
            num(roof.peak_iops),
            num(roof.peak_bandwidth / 1048576.0)
        ))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    for (bound, c) in [
        (Bound::Iops, IOPS_BOUND),
        (Bound::Bandwidth, BANDWIDTH_BOUND),
    ] {
        let c = color(c);
        let of: Vec<_> = placed.iter().filter(|p| p.1.bound == bound).collect();
        if of.is_empty() {
            continue;
        }
        chart
            .draw_series(
                of.iter()
                    .map(|p| Circle::new((p.0, p.1.rate), 5, c.filled())),
            )?
            .label(bound.label())
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, c.filled()));
        chart.draw_series(of.iter().map(|p| {
            let label = if p.1.benchmark == "io500" {
                p.1.phase.clone()
            } else {
                format!("{} {}", p.1.benchmark, p.1.phase)
            };
            Text::new(
                label,
                (p.0 * 1.15, p.1.rate),
                (FONT, 10).into_font().color(&BLACK.mix(0.75)),
            )
        }))?;
    }
    legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    Ok(())
}
