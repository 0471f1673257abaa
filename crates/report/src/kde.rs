//! Gaussian kernel density over log10(time), from the bench's latency
//! histograms (10 log buckets per decade). Each bucket is a weighted point
//! at its centre in log space. Why by hand: the KDE crates take raw samples;
//! a million-sample phase would have to be expanded from its histogram
//! first, and the weighted form is a dozen lines.

/// Buckets per decade the bench writes.
pub const BUCKETS_PER_DECADE: f64 = 10.0;

/// Histograms of several repetitions summed bucket by bucket, as
/// `(log10 of the bucket's centre, count)`, sorted by time.
pub fn merge(histograms: &[&[(f64, f64)]]) -> Vec<(f64, f64)> {
    let mut buckets: Vec<(i64, f64)> = Vec::new();
    for h in histograms {
        for &(edge, count) in h.iter() {
            // Edges are powers of 10^(1/10): the index names the bucket
            // whatever rounding the writer's floats had.
            let i = (edge.log10() * BUCKETS_PER_DECADE).round() as i64;
            match buckets.iter_mut().find(|b| b.0 == i) {
                Some(b) => b.1 += count,
                None => buckets.push((i, count)),
            }
        }
    }
    buckets.retain(|b| b.1 > 0.0);
    buckets.sort_by_key(|b| b.0);
    buckets
        .into_iter()
        .map(|(i, c)| ((i as f64 - 0.5) / BUCKETS_PER_DECADE, c))
        .collect()
}

/// Silverman's rule on the weighted points, never narrower than one bucket
/// (a histogram cannot show detail finer than its buckets, and a narrower
/// kernel draws the buckets as ripples).
pub fn bandwidth(points: &[(f64, f64)]) -> f64 {
    let n: f64 = points.iter().map(|p| p.1).sum();
    let floor = 1.0 / BUCKETS_PER_DECADE;
    if n <= 0.0 {
        return floor;
    }
    let mean = points.iter().map(|p| p.0 * p.1).sum::<f64>() / n;
    let var = points
        .iter()
        .map(|p| (p.0 - mean).powi(2) * p.1)
        .sum::<f64>()
        / n;
    let silverman = 1.06 * var.sqrt() * n.powf(-0.2);
    silverman.max(floor)
}

/// The density (per decade, integrating to 1 over log10 time) at each `x`.
pub fn density(points: &[(f64, f64)], h: f64, xs: &[f64]) -> Vec<f64> {
    let n: f64 = points.iter().map(|p| p.1).sum();
    if n <= 0.0 {
        return vec![0.0; xs.len()];
    }
    let norm = 1.0 / (n * h * (2.0 * std::f64::consts::PI).sqrt());
    xs.iter()
        .map(|x| {
            norm * points
                .iter()
                .map(|(c, w)| w * (-0.5 * ((x - c) / h).powi(2)).exp())
                .sum::<f64>()
        })
        .collect()
}

/// `n` evenly spaced values from `lo` to `hi`.
pub fn grid(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| lo + (hi - lo) * i as f64 / (n.max(2) - 1) as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_sums_buckets_by_edge() {
        let a = [(1e-6, 2.0), (1.2589254117941673e-6, 1.0)];
        let b = [(1.0000000001e-6, 3.0), (1e-5, 0.0)];
        let m = merge(&[&a, &b]);
        assert_eq!(m.len(), 2);
        assert!((m[0].0 - (-6.05)).abs() < 1e-9 && m[0].1 == 5.0);
        assert!((m[1].0 - (-5.95)).abs() < 1e-9 && m[1].1 == 1.0);
    }

    #[test]
    fn density_integrates_to_one_and_peaks_at_the_mode() {
        let points = [(-6.0, 10.0), (-5.0, 1000.0), (-4.0, 10.0)];
        let h = bandwidth(&points);
        assert!(h >= 0.1);
        let xs = grid(-9.0, -1.0, 801);
        let d = density(&points, h, &xs);
        let area: f64 = d.iter().sum::<f64>() * (xs[1] - xs[0]);
        assert!((area - 1.0).abs() < 1e-3, "area {area}");
        let peak = xs[d
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap()
            .0];
        assert!((peak - (-5.0)).abs() < 0.02, "peak {peak}");
    }

    #[test]
    fn bandwidth_follows_silverman_when_wide() {
        // Two equal points 2 decades apart: sigma 1, n 2.
        let h = bandwidth(&[(-6.0, 1.0), (-4.0, 1.0)]);
        assert!((h - 1.06 * 2f64.powf(-0.2)).abs() < 1e-12);
    }
}
