//! `s3hpc explain`: each op's time through the full HTTP stack as stacked
//! bars, one segment per layer's share (file system, engine, HTTP, SigV4),
//! with the file-system calls per op of POSIX and of the engine beside it.

use super::{color, DrawResult, Plot, FONT};
use crate::model::{Dataset, Row};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;

/// The layer whose time the bars split.
const TOP: &str = "http-chunked";

pub struct Bar {
    pub op: String,
    /// Median µs of the whole op through `TOP`.
    pub total_us: f64,
    /// `(part, µs)` from the file system up.
    pub parts: Vec<(String, f64)>,
    /// File-system calls per op: POSIX's and the engine's (metadata calls).
    pub posix_calls: Option<(f64, f64)>,
    pub engine_calls: Option<(f64, f64)>,
}

pub struct Explain {
    pub bars: Vec<Bar>,
    /// Part names in stacking order, for colours and the legend.
    pub parts: Vec<String>,
    /// What the sized ops were measured with, for the title.
    pub size: Option<f64>,
}

fn calls(row: Option<&Row>) -> Option<(f64, f64)> {
    let r = row?;
    Some((r.extra("fs_calls_total")?, r.extra("fs_metadata_calls")?))
}

/// `None` without explain rows of the top layer.
pub fn plot(data: &Dataset) -> Option<Explain> {
    let rows: Vec<&Row> = data.benchmark("explain").collect();
    // The sized ops at the smallest non-zero size measured.
    let size = rows
        .iter()
        .filter_map(|r| r.extra("object_size"))
        .filter(|s| *s > 0.0)
        .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.min(s))));
    let at_size = |r: &&&Row| {
        let s = r.extra("object_size");
        s.is_none() || s == size || (size.is_none() && s == Some(0.0))
    };
    let layer =
        |r: &Row, name: &str| r.backend == name || r.backend.starts_with(&format!("{name}@"));
    let mut parts: Vec<String> = Vec::new();
    let mut bars = Vec::new();
    for top in rows.iter().filter(at_size).filter(|r| layer(r, TOP)) {
        let Some(Value::Array(breakdown)) = top.fields.get("breakdown") else {
            continue;
        };
        let mut split: Vec<(String, f64)> = breakdown
            .iter()
            .filter_map(|p| Some((p.get("part")?.as_str()?.to_string(), p.get("us")?.as_f64()?)))
            .collect();
        split.reverse();
        for (p, _) in &split {
            if !parts.contains(p) {
                parts.push(p.clone());
            }
        }
        let same_op = |name: &'static str| {
            rows.iter()
                .filter(at_size)
                .find(|r| layer(r, name) && r.phase == top.phase)
                .copied()
        };
        bars.push(Bar {
            op: top.phase.clone(),
            total_us: top.value,
            parts: split,
            posix_calls: calls(same_op("posix")),
            engine_calls: calls(same_op("engine")),
        });
    }
    (!bars.is_empty()).then_some(Explain { bars, parts, size })
}

impl Plot for Explain {
    fn size(&self) -> (u32, u32) {
        (1000, 130 + 40 * self.bars.len() as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let (chart_area, side) = root.split_horizontally(660);
        let title = match self.size {
            Some(s) => format!("Where an S3 call's time goes ({TOP}, {s} B objects)"),
            None => format!("Where an S3 call's time goes ({TOP})"),
        };
        let n = self.bars.len();
        let mut chart = ChartBuilder::on(&chart_area)
            .caption(title, (FONT, 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(100)
            .build_cartesian_2d(0f64..100f64, 0f64..n as f64)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("share of the op's median time, %")
            .label_style((FONT, 12))
            .draw()?;
        let text = |h: HPos| TextStyle::from((FONT, 12).into_font()).pos(Pos::new(h, VPos::Center));
        let fmt =
            |c: Option<(f64, f64)>| c.map_or("-".to_string(), |(t, m)| format!("{t:.1} ({m:.1})"));
        let (side_x, _) = side.get_base_pixel();
        let header_y = chart.backend_coord(&(0.0, n as f64)).1 - 10;
        root.draw(&Text::new(
            "median µs, fs calls per op: posix / engine (metadata)",
            (side_x + 4, header_y),
            text(HPos::Left),
        ))?;
        for (k, b) in self.bars.iter().enumerate() {
            let y = (n - 1 - k) as f64;
            let total: f64 = b.parts.iter().map(|p| p.1.max(0.0)).sum();
            let mut x = 0.0;
            for (name, us) in &b.parts {
                let w = 100.0 * us.max(0.0) / total.max(f64::MIN_POSITIVE);
                let c = color(self.parts.iter().position(|p| p == name).unwrap_or(0));
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, y + 0.15), (x + w, y + 0.85)],
                    c.filled(),
                )))?;
                x += w;
            }
            // The op's name left of its bar, its figures right of the chart.
            let (px, py) = chart.backend_coord(&(0.0, y + 0.5));
            root.draw(&Text::new(b.op.clone(), (px - 6, py), text(HPos::Right)))?;
            root.draw(&Text::new(
                format!(
                    "{:>8.0}   {} / {}",
                    b.total_us,
                    fmt(b.posix_calls),
                    fmt(b.engine_calls)
                ),
                (side_x + 4, py),
                text(HPos::Left),
            ))?;
        }
        // The legend under the figures at the side.
        let (_, bottom) = chart.backend_coord(&(0.0, 0.0));
        for (i, p) in self.parts.iter().enumerate() {
            let x = side_x + 4 + 80 * i as i32;
            let y = bottom + 22;
            root.draw(&Rectangle::new(
                [(x, y - 5), (x + 10, y + 5)],
                color(i).filled(),
            ))?;
            root.draw(&Text::new(p.clone(), (x + 14, y), text(HPos::Left)))?;
        }
        Ok(())
    }
}
