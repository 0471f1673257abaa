//! Summary statistics of repeated measurements. Pure functions, no I/O: the
//! comparison table and the JSON `summary` are built on these.
//!
//! Medians, not means: on a shared or small node a single disturbed run can
//! be off by tens of percent, and the median ignores it where the mean would
//! not. Min and max show how far the repetitions spread.

use serde::Serialize;

/// Median, extremes and count of a set of values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Spread {
    /// The spread of the finite values; `None` when there are none (NaN and
    /// infinities, such as a ratio over a zero baseline, are left out).
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        Some(Spread {
            median: median_sorted(&v)?,
            min: *v.first()?,
            max: *v.last()?,
            n: v.len(),
        })
    }
}

/// The median of sorted values: the middle one, or the mean of the two
/// middle ones for an even count. `None` for no values.
pub fn median_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// The median of the finite values, in any order.
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    Spread::of(values).map(|s| s.median)
}

/// `a / b` when both are usable and `b` is positive.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0 && a.is_finite() && b.is_finite()).then(|| a / b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median([]), None);
        assert_eq!(median([3.0]), Some(3.0));
        assert_eq!(median([5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median([4.0, 1.0, 3.0, 2.0]), Some(2.5));
        // One outlier moves the mean, not the median.
        assert_eq!(median([1.0, 1.1, 0.9, 1.0, 30.0]), Some(1.0));
        assert_eq!(median([f64::NAN, 2.0, f64::INFINITY]), Some(2.0));
        assert_eq!(median([f64::NAN]), None);
    }

    #[test]
    fn spreads() {
        let s = Spread::of([0.98, 1.04, 0.91, 1.0]).unwrap();
        assert_eq!((s.min, s.max, s.n), (0.91, 1.04, 4));
        assert!((s.median - 0.99).abs() < 1e-12);
        assert_eq!(Spread::of([2.0]).unwrap().n, 1);
        assert_eq!(Spread::of(Vec::new()), None);
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(3.0, 2.0), Some(1.5));
        assert_eq!(ratio(3.0, 0.0), None);
        assert_eq!(ratio(f64::NAN, 2.0), None);
        assert_eq!(ratio(0.0, 2.0), Some(0.0));
    }
}
