//! The roofline as a table: every phase with its intensity, measured and
//! attainable op rate, and whether it is IOPS- or bandwidth-bound.

use super::{num, Table};
use crate::roofline::Roof;

pub fn table(roofs: &[Roof]) -> Option<Table> {
    if roofs.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    for roof in roofs {
        for p in &roof.points {
            rows.push(vec![
                roof.series.clone(),
                format!("{} {}", p.benchmark, p.phase),
                p.intensity
                    .map_or("no data moved".into(), |i| format!("{i:.3e}")),
                num(p.rate),
                num(p.attainable),
                num(100.0 * p.rate / p.attainable),
                p.bound.label().into(),
            ]);
        }
    }
    let peaks = roofs
        .iter()
        .map(|r| {
            format!(
                "{}: peak {} ops/s ({}), peak {} MiB/s ({})",
                r.series,
                num(r.peak_iops),
                r.peak_iops_from,
                num(r.peak_bandwidth / 1048576.0),
                r.peak_bandwidth_from
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    Some(Table {
        title: "I/O roofline: attainable = min(peak IOPS, peak bandwidth × intensity)".into(),
        headers: ["backend", "phase", "intensity (ops/byte)", "ops/s", "attainable ops/s", "% of attainable", "bound"]
            .map(String::from)
            .to_vec(),
        rows,
        note: Some(format!(
            "Peaks are the best row of each backend (IOPS: objects up to 64 KiB). {peaks}. Values are medians over repetitions."
        )),
    })
}
