//! Per-phase latency: an HDR histogram of nanoseconds, mergeable across ranks.

use hdrhistogram::Histogram;
use serde::Serialize;
use std::time::Duration;

/// Highest trackable latency: one hour. Slower operations saturate there.
const MAX_NS: u64 = 3_600_000_000_000;

/// Latencies of one operation type in one phase.
#[derive(Clone)]
pub struct Latency {
    hist: Histogram<u64>,
}

/// Buckets per decade of the histogram written to the JSON: fine enough for
/// a smoothed density plot, coarse enough to stay a few hundred bytes.
pub const HISTOGRAM_BUCKETS_PER_DECADE: u32 = 10;
/// The lower edge of the first histogram bucket, in nanoseconds.
const HISTOGRAM_FIRST_BUCKET_NS: u64 = 100;

/// Quantiles in seconds, as they appear in reports and the JSON, and the
/// distribution for density plots: `histogram` holds `[upper_edge_seconds,
/// count]` for every non-empty log bucket (10 per decade, so a bucket spans
/// `(upper / 10^0.1, upper]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub histogram: Vec<(f64, u64)>,
}

impl Default for Latency {
    fn default() -> Self {
        Self::new()
    }
}

impl Latency {
    pub fn new() -> Self {
        // Three significant digits: 0.1 % resolution, about 200 KiB per histogram.
        Latency {
            hist: Histogram::new_with_bounds(1, MAX_NS, 3).expect("valid histogram bounds"),
        }
    }

    #[inline]
    pub fn record(&mut self, d: Duration) {
        let ns = (d.as_nanos() as u64).clamp(1, MAX_NS);
        // Cannot fail: the value is clamped into the histogram's range.
        let _ = self.hist.record(ns);
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn merge(&mut self, other: &Latency) {
        self.hist
            .add(&other.hist)
            .expect("histograms with equal bounds always merge");
    }

    pub fn summary(&self) -> LatencySummary {
        if self.hist.is_empty() {
            return LatencySummary::default();
        }
        let s = |ns: u64| ns as f64 / 1e9;
        LatencySummary {
            min: s(self.hist.min()),
            p50: s(self.hist.value_at_quantile(0.50)),
            p90: s(self.hist.value_at_quantile(0.90)),
            p99: s(self.hist.value_at_quantile(0.99)),
            max: s(self.hist.max()),
            histogram: self.log_buckets(),
        }
    }

    /// Non-empty log buckets as `(upper edge in seconds, count)`.
    fn log_buckets(&self) -> Vec<(f64, u64)> {
        let base = 10f64.powf(1.0 / f64::from(HISTOGRAM_BUCKETS_PER_DECADE));
        self.hist
            .iter_log(HISTOGRAM_FIRST_BUCKET_NS, base)
            .filter(|v| v.count_since_last_iteration() > 0)
            .map(|v| {
                (
                    v.value_iterated_to() as f64 / 1e9,
                    v.count_since_last_iteration(),
                )
            })
            .collect()
    }

    /// A compact encoding for gathers: `(value, count)` pairs of the
    /// recorded buckets, little-endian.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let n = self.hist.iter_recorded().count() as u64;
        out.extend_from_slice(&n.to_le_bytes());
        for v in self.hist.iter_recorded() {
            out.extend_from_slice(&v.value_iterated_to().to_le_bytes());
            out.extend_from_slice(&v.count_at_value().to_le_bytes());
        }
    }

    /// Decodes what `encode` wrote, advancing `input`.
    pub fn decode(input: &mut &[u8]) -> Option<Latency> {
        let mut lat = Latency::new();
        let n = take_u64(input)?;
        for _ in 0..n {
            let v = take_u64(input)?;
            let c = take_u64(input)?;
            lat.hist.record_n(v.clamp(1, MAX_NS), c).ok()?;
        }
        Some(lat)
    }
}

pub(crate) fn take_u64(input: &mut &[u8]) -> Option<u64> {
    let (head, rest) = input.split_first_chunk::<8>()?;
    *input = rest;
    Some(u64::from_le_bytes(*head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_merge_and_roundtrip() {
        let mut a = Latency::new();
        let mut b = Latency::new();
        for i in 1..=100u64 {
            a.record(Duration::from_micros(i));
            b.record(Duration::from_millis(i));
        }
        let mut buf = Vec::new();
        b.encode(&mut buf);
        let mut slice = &buf[..];
        let b2 = Latency::decode(&mut slice).unwrap();
        assert!(slice.is_empty());
        assert_eq!(b2.count(), 100);
        a.merge(&b2);
        let s = a.summary();
        assert_eq!(a.count(), 200);
        assert!((s.min - 1e-6).abs() < 1e-8, "{s:?}");
        assert!((s.max - 0.1).abs() < 1e-3, "{s:?}");
        assert!(s.p50 > 9e-5 && s.p50 < 1.1e-4, "{s:?}");
        assert!(s.p99 > 0.09, "{s:?}");
        let total: u64 = s.histogram.iter().map(|b| b.1).sum();
        assert_eq!(total, 200, "{:?}", s.histogram);
        assert!(s.histogram.windows(2).all(|w| w[0].0 < w[1].0));
        // 1 µs lands in a bucket whose upper edge is within one step above it.
        let first = s.histogram[0].0;
        assert!((1e-6..1.3e-6).contains(&first), "{first}");
    }
}
