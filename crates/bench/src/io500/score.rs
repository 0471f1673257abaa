//! IO500 scoring (`src/main.c` calc_score): BW is the geometric mean of the
//! ior phases, MD that of the mdtest phases and find, each skipping phases
//! that scored ≤ 0 (not counting them as zero); TOTAL = √(BW·MD).

use super::{Group, PhaseResult};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Score {
    /// GiB/s.
    pub bandwidth: f64,
    /// kIOPS.
    pub iops: f64,
    pub total: f64,
    /// False when any scored phase was invalid.
    pub valid: bool,
}

/// Geometric mean of the positive values; 0 when there are none.
pub fn geomean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0u32);
    for v in values.into_iter().filter(|v| *v > 0.0) {
        sum += v.ln();
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        (sum / n as f64).exp()
    }
}

pub fn score(results: &[PhaseResult]) -> Score {
    let group = |g: Group| geomean(results.iter().filter(|r| r.group == g).map(|r| r.value));
    let bandwidth = group(Group::Bandwidth);
    let iops = group(Group::Metadata);
    Score {
        bandwidth,
        iops,
        total: (bandwidth * iops).sqrt(),
        valid: results
            .iter()
            .filter(|r| r.group != Group::None)
            .all(|r| r.valid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geomean_skips_non_positive() {
        assert_eq!(geomean([]), 0.0);
        assert_eq!(geomean([0.0, -1.0]), 0.0);
        assert!((geomean([2.0, 8.0]) - 4.0).abs() < 1e-12);
        assert!((geomean([2.0, 0.0, 8.0, -3.0]) - 4.0).abs() < 1e-12);
        assert!((geomean([1.0, 10.0, 100.0]) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn total_is_sqrt_of_groups() {
        let mk = |name, group, value| PhaseResult {
            name,
            group,
            value,
            ..PhaseResult::empty(name, group)
        };
        let rs = vec![
            mk("ior-easy-write", Group::Bandwidth, 4.0),
            mk("ior-hard-write", Group::Bandwidth, 1.0),
            mk("timestamp", Group::None, 123.0),
            mk("mdtest-easy-write", Group::Metadata, 100.0),
            mk("find", Group::Metadata, 0.0),
            mk("mdtest-hard-write", Group::Metadata, 25.0),
        ];
        let s = score(&rs);
        assert!((s.bandwidth - 2.0).abs() < 1e-12);
        assert!((s.iops - 50.0).abs() < 1e-9);
        assert!((s.total - 10.0).abs() < 1e-9);
        assert!(s.valid);
    }
}
