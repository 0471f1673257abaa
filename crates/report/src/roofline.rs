//! The I/O roofline (seed 002): per backend, the peak IOPS (the best op
//! rate of any small-object row) and the peak bandwidth (the best byte rate
//! of any row); attainable(I) = min(peak IOPS, peak bandwidth × I) at I/O
//! intensity I = ops / bytes. Each benchmark phase sits at its intensity
//! and is IOPS-bound right of the ridge, bandwidth-bound left of it.

use crate::model::{distinct, median, Dataset, Row};

/// Objects up to this size count as small for the peak IOPS: the seeds'
/// metadata-heavy workloads (mdtest-hard's 3901 bytes, 4 KiB KV values) sit
/// well below, IOR's 47008-byte transfers just below, 2 MiB transfers far
/// above.
pub const SMALL_OBJECT: f64 = 64.0 * 1024.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Iops,
    Bandwidth,
}

impl Bound {
    pub fn label(self) -> &'static str {
        match self {
            Bound::Iops => "IOPS-bound",
            Bound::Bandwidth => "bandwidth-bound",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Point {
    pub benchmark: String,
    pub phase: String,
    /// ops/byte; `None` for phases that move no data (creates, stats).
    pub intensity: Option<f64>,
    /// Measured ops/s (median over repetitions).
    pub rate: f64,
    pub attainable: f64,
    pub bound: Bound,
}

#[derive(Debug, Clone)]
pub struct Roof {
    pub series: String,
    /// Palette index.
    pub color: usize,
    pub peak_iops: f64,
    /// Where the peak came from (`benchmark phase`).
    pub peak_iops_from: String,
    /// Bytes per second.
    pub peak_bandwidth: f64,
    pub peak_bandwidth_from: String,
    pub points: Vec<Point>,
}

impl Roof {
    pub fn attainable(&self, intensity: Option<f64>) -> f64 {
        match intensity {
            Some(i) => self.peak_iops.min(self.peak_bandwidth * i),
            None => self.peak_iops,
        }
    }

    pub fn bound(&self, intensity: Option<f64>) -> Bound {
        match intensity {
            Some(i) if self.peak_bandwidth * i < self.peak_iops => Bound::Bandwidth,
            _ => Bound::Iops,
        }
    }

    /// The intensity where the two roofs meet.
    pub fn ridge(&self) -> f64 {
        self.peak_iops / self.peak_bandwidth
    }
}

fn best<'a>(rows: &[&'a Row], rate: impl Fn(&Row) -> Option<f64>) -> Option<(f64, &'a Row)> {
    rows.iter()
        .filter_map(|r| rate(r).map(|v| (v, *r)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// One roof per backend with both a rate and a bandwidth.
pub fn roofs(data: &Dataset) -> Vec<Roof> {
    data.series
        .iter()
        .enumerate()
        .filter_map(|(color, s)| {
            let rows: Vec<&Row> = data
                .rows()
                .filter(|r| r.backend == s.name && r.op_rate().is_some())
                .collect();
            let small = |r: &Row| {
                let per_op = r.bytes.unwrap_or(0.0) / r.ops.unwrap_or(1.0);
                (per_op <= SMALL_OBJECT).then(|| r.op_rate()).flatten()
            };
            let (peak_iops, iops_row) = best(&rows, small).or_else(|| best(&rows, Row::op_rate))?;
            let (peak_bandwidth, bw_row) = best(&rows, Row::byte_rate)?;
            let name = |r: &Row| format!("{} {}", r.benchmark, r.phase);
            let mut roof = Roof {
                series: s.name.clone(),
                color,
                peak_iops,
                peak_iops_from: name(iops_row),
                peak_bandwidth,
                peak_bandwidth_from: name(bw_row),
                points: Vec::new(),
            };
            for (benchmark, phase) in
                distinct(rows.iter().map(|r| (r.benchmark.clone(), r.phase.clone())))
            {
                let of: Vec<&&Row> = rows
                    .iter()
                    .filter(|r| r.benchmark == benchmark && r.phase == phase)
                    .collect();
                let moved = of.iter().all(|r| r.bytes.unwrap_or(0.0) > 0.0);
                let intensity = if moved {
                    median(
                        of.iter()
                            .map(|r| r.ops.unwrap_or(0.0) / r.bytes.unwrap_or(1.0)),
                    )
                } else {
                    None
                };
                let Some(rate) = median(of.iter().filter_map(|r| r.op_rate())) else {
                    continue;
                };
                roof.points.push(Point {
                    benchmark,
                    phase,
                    intensity,
                    rate,
                    attainable: roof.attainable(intensity),
                    bound: roof.bound(intensity),
                });
            }
            Some(roof)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roof(iops: f64, bw: f64) -> Roof {
        Roof {
            series: "x".into(),
            color: 0,
            peak_iops: iops,
            peak_iops_from: String::new(),
            peak_bandwidth: bw,
            peak_bandwidth_from: String::new(),
            points: Vec::new(),
        }
    }

    #[test]
    fn attainable_is_the_lower_roof() {
        // 100k IOPS, 1 GB/s: ridge at 1e-4 ops/byte (10 kB per op).
        let r = roof(1e5, 1e9);
        assert!((r.ridge() - 1e-4).abs() < 1e-12);
        // 2 MiB transfers: bandwidth-bound at 1e9 / 2 MiB ops/s.
        let big = 1.0 / (2.0 * 1048576.0);
        assert_eq!(r.bound(Some(big)), Bound::Bandwidth);
        assert!((r.attainable(Some(big)) - 1e9 * big).abs() < 1e-6);
        // 4 KiB objects: IOPS-bound.
        assert_eq!(r.bound(Some(1.0 / 4096.0)), Bound::Iops);
        assert_eq!(r.attainable(Some(1.0 / 4096.0)), 1e5);
        // No bytes at all: IOPS-bound at the peak.
        assert_eq!(r.bound(None), Bound::Iops);
        assert_eq!(r.attainable(None), 1e5);
    }
}
