//! Repetitions folded into one figure per backend and phase: the median of
//! the values, and for every backend but POSIX the median of its
//! per-repetition ratios to POSIX (each repetition's own POSIX run is the
//! baseline, so a slow moment of the machine cancels out within the pair).

use crate::results::BackendReport;
use crate::stats::{ratio, Spread};

/// The backend every ratio is relative to.
pub const BASELINE: &str = "posix";

/// One backend and one phase (or score) over all repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub backend: String,
    /// The phase (`ior-easy-write`, ...) or the score (`bandwidth`, `iops`,
    /// `total`).
    pub name: &'static str,
    pub unit: &'static str,
    pub value: Spread,
    /// Relative to the baseline of the same repetition; `None` for the
    /// baseline itself and when there is none.
    pub ratio: Option<Spread>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// The backends in the order of the first repetition.
    pub backends: Vec<String>,
    /// Scored phases, in run order, each with every backend.
    pub phases: Vec<SummaryRow>,
    /// The IO500 scores, likewise.
    pub scores: Vec<SummaryRow>,
}

impl Summary {
    /// The row of `backend` for `name`, among `rows`.
    pub fn find<'a>(rows: &'a [SummaryRow], backend: &str, name: &str) -> Option<&'a SummaryRow> {
        rows.iter().find(|r| r.backend == backend && r.name == name)
    }

    /// Row names in order, each once.
    pub fn names(rows: &[SummaryRow]) -> Vec<(&'static str, &'static str)> {
        let mut names: Vec<(&str, &str)> = Vec::new();
        for r in rows {
            if !names.iter().any(|(n, _)| *n == r.name) {
                names.push((r.name, r.unit));
            }
        }
        names
    }
}

type Metric<'a> = &'a dyn Fn(&BackendReport) -> Option<f64>;

pub fn summarize(reports: &[BackendReport]) -> Summary {
    let mut backends: Vec<String> = Vec::new();
    for r in reports {
        if !backends.contains(&r.backend) {
            backends.push(r.backend.clone());
        }
    }
    let first = reports.first().map(|b| &b.results[..]).unwrap_or(&[]);
    let mut phases = Vec::new();
    for p in first.iter().filter(|p| p.scored()) {
        let metric =
            |b: &BackendReport| b.results.iter().find(|x| x.name == p.name).map(|x| x.value);
        phases.extend(rows(reports, &backends, p.name, p.unit(), &metric));
    }
    let mut scores = Vec::new();
    let score_metrics: [(&str, &str, Metric); 3] = [
        ("bandwidth", "GiB/s", &|b| Some(b.score.bandwidth)),
        ("iops", "kIOPS", &|b| Some(b.score.iops)),
        ("total", "", &|b| Some(b.score.total)),
    ];
    for (name, unit, metric) in score_metrics {
        scores.extend(rows(reports, &backends, name, unit, metric));
    }
    Summary {
        backends,
        phases,
        scores,
    }
}

/// One row per backend for one metric.
fn rows(
    reports: &[BackendReport],
    backends: &[String],
    name: &'static str,
    unit: &'static str,
    metric: Metric,
) -> Vec<SummaryRow> {
    let base = |iteration: usize| {
        reports
            .iter()
            .find(|b| b.backend == BASELINE && b.iteration == iteration)
            .and_then(metric)
    };
    backends
        .iter()
        .filter_map(|backend| {
            let mine = || reports.iter().filter(move |b| &b.backend == backend);
            let value = Spread::of(mine().filter_map(metric))?;
            let ratio = if backend == BASELINE {
                None
            } else {
                Spread::of(mine().filter_map(|b| ratio(metric(b)?, base(b.iteration)?)))
            };
            Some(SummaryRow {
                backend: backend.clone(),
                name,
                unit,
                value,
                ratio,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io500::score::score;
    use crate::io500::{Group, PhaseResult};

    fn report(backend: &str, iteration: usize, stat: f64) -> BackendReport {
        let mut r = PhaseResult::empty("mdtest-easy-stat", Group::Metadata);
        r.value = stat;
        let results = vec![PhaseResult::empty("timestamp", Group::None), r];
        BackendReport {
            backend: backend.into(),
            iteration,
            transport: String::new(),
            api: String::new(),
            score: score(&results),
            results,
        }
    }

    #[test]
    fn medians_of_values_and_of_paired_ratios() {
        // Repetition 1 ran on a slow machine: both backends halved, so its
        // ratio is as good as the others.
        let reports = vec![
            report("posix", 0, 100.0),
            report("embedded", 0, 90.0),
            report("embedded", 1, 50.0),
            report("posix", 1, 50.0),
            report("posix", 2, 110.0),
            report("embedded", 2, 104.5),
        ];
        let s = summarize(&reports);
        assert_eq!(s.backends, ["posix", "embedded"]);
        assert_eq!(Summary::names(&s.phases), [("mdtest-easy-stat", "kIOPS")]);
        let p = Summary::find(&s.phases, "posix", "mdtest-easy-stat").unwrap();
        assert_eq!(
            (p.value.median, p.value.min, p.value.max),
            (100.0, 50.0, 110.0)
        );
        assert_eq!(p.ratio, None);
        let e = Summary::find(&s.phases, "embedded", "mdtest-easy-stat").unwrap();
        assert_eq!(e.value.median, 90.0);
        let r = e.ratio.unwrap();
        assert_eq!((r.median, r.min, r.max, r.n), (0.95, 0.9, 1.0, 3));
        // Scores fold the same way (a geometric mean of one value).
        let t = Summary::find(&s.scores, "embedded", "iops").unwrap();
        assert!((t.ratio.unwrap().median - 0.95).abs() < 1e-12);
        assert_eq!(s.scores.len(), 6);
    }

    #[test]
    fn no_baseline_no_ratio() {
        let s = summarize(&[report("embedded", 0, 5.0)]);
        let e = Summary::find(&s.phases, "embedded", "mdtest-easy-stat").unwrap();
        assert_eq!((e.value.n, e.ratio), (1, None));
    }
}
