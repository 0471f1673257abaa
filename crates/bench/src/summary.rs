//! Repetitions folded into one figure per backend and phase: the median of
//! the values, and for every backend but POSIX the median of its
//! per-repetition ratios to POSIX (each repetition's own POSIX run is the
//! baseline, so a slow moment of the machine cancels out within the pair),
//! and likewise to the embedded engine (what a transport costs).

use crate::io500::PhaseResult;
use crate::results::BackendReport;
use crate::stats::{ratio, Spread};

/// The backend every ratio is relative to.
pub const BASELINE: &str = "posix";

/// The backend other S3 transports are compared with: the engine in the
/// application, with no transport at all.
pub const IN_PROCESS: &str = "embedded";

/// Repetitions whose ratios differ by more than this factor (max/min) do
/// not agree: the median alone would hide that the medium, not the code,
/// set the figure (a noisy disk, another job on the node).
pub const UNSTEADY_FACTOR: f64 = 1.5;

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
    /// Relative to the embedded backend of the same repetition; `None` for
    /// POSIX, embedded itself and when embedded did not run.
    pub to_embedded: Option<Spread>,
    /// Repetitions in which this figure was marked invalid (a read that a
    /// client cache could answer, a write that ended before the stonewall).
    pub invalid: usize,
}

/// Whether the repetitions of a ratio disagree by more than
/// `UNSTEADY_FACTOR` (needs two of them to tell).
pub fn unsteady(s: &Spread) -> bool {
    s.n >= 2 && s.min > 0.0 && s.max / s.min > UNSTEADY_FACTOR
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
/// Whether a backend's figure in one repetition is invalid.
type Invalid<'a> = &'a dyn Fn(&BackendReport) -> bool;

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
        let metric = |b: &BackendReport| phase(b, p.name).map(|x| x.value);
        let invalid = |b: &BackendReport| phase(b, p.name).is_some_and(|x| !x.valid);
        phases.extend(rows(
            reports,
            &backends,
            p.name,
            p.unit(),
            &metric,
            &invalid,
        ));
    }
    let mut scores = Vec::new();
    let score_metrics: [(&str, &str, Metric); 3] = [
        ("bandwidth", "GiB/s", &|b| Some(b.score.bandwidth)),
        ("iops", "kIOPS", &|b| Some(b.score.iops)),
        ("total", "", &|b| Some(b.score.total)),
    ];
    for (name, unit, metric) in score_metrics {
        let invalid = |b: &BackendReport| !b.score.valid;
        scores.extend(rows(reports, &backends, name, unit, metric, &invalid));
    }
    Summary {
        backends,
        phases,
        scores,
    }
}

fn phase<'a>(b: &'a BackendReport, name: &str) -> Option<&'a PhaseResult> {
    b.results.iter().find(|x| x.name == name)
}

/// One row per backend for one metric.
fn rows(
    reports: &[BackendReport],
    backends: &[String],
    name: &'static str,
    unit: &'static str,
    metric: Metric,
    invalid: Invalid,
) -> Vec<SummaryRow> {
    // Each repetition's ratios to `base` in that same repetition.
    let paired = |backend: &String, base: &str| {
        if backend == base || backend == BASELINE {
            return None;
        }
        let of = |name: &str, iteration: usize| {
            reports
                .iter()
                .find(|b| b.backend == name && b.iteration == iteration)
                .and_then(metric)
        };
        Spread::of(
            reports
                .iter()
                .filter(|b| &b.backend == backend)
                .filter_map(|b| ratio(metric(b)?, of(base, b.iteration)?)),
        )
    };
    backends
        .iter()
        .filter_map(|backend| {
            let mine = || reports.iter().filter(move |b| &b.backend == backend);
            Some(SummaryRow {
                backend: backend.clone(),
                name,
                unit,
                value: Spread::of(mine().filter_map(metric))?,
                ratio: paired(backend, BASELINE),
                to_embedded: paired(backend, IN_PROCESS),
                invalid: mine().filter(|b| invalid(b)).count(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io500::score::score;
    use crate::io500::Group;

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
    fn ratios_to_embedded_and_invalid_repetitions() {
        let mut reports = vec![
            report("posix", 0, 100.0),
            report("embedded", 0, 80.0),
            report("remote", 0, 40.0),
            report("posix", 1, 100.0),
            report("embedded", 1, 40.0),
            report("remote", 1, 30.0),
        ];
        // POSIX's stat in repetition 1 came from a client cache.
        reports[3].results[1].valid = false;
        let s = summarize(&reports);
        let r = Summary::find(&s.phases, "remote", "mdtest-easy-stat").unwrap();
        let e = r.to_embedded.unwrap();
        assert_eq!((e.min, e.max, e.n), (0.5, 0.75, 2));
        assert_eq!(r.invalid, 0);
        let p = Summary::find(&s.phases, "posix", "mdtest-easy-stat").unwrap();
        assert_eq!((p.invalid, p.to_embedded), (1, None));
        let e = Summary::find(&s.phases, "embedded", "mdtest-easy-stat").unwrap();
        assert_eq!(e.to_embedded, None);
        // 0.8 against 0.4 of POSIX: the repetitions disagree.
        assert!(unsteady(&e.ratio.unwrap()));
        assert!(!unsteady(&r.ratio.unwrap()));
    }

    #[test]
    fn unsteady_needs_two_repetitions_apart() {
        let s = |v: &[f64]| Spread::of(v.iter().copied()).unwrap();
        assert!(!unsteady(&s(&[0.02])));
        assert!(!unsteady(&s(&[0.9, 1.1, 1.3])));
        assert!(unsteady(&s(&[0.03, 0.86])));
        assert!(unsteady(&s(&[1.0, 1.0, 1.6])));
    }

    #[test]
    fn no_baseline_no_ratio() {
        let s = summarize(&[report("embedded", 0, 5.0)]);
        let e = Summary::find(&s.phases, "embedded", "mdtest-easy-stat").unwrap();
        assert_eq!((e.value.n, e.ratio), (1, None));
    }
}
