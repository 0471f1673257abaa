//! The IO500 comparison (seed 000, Tables 3-6): phases × backends, each
//! value with the backend's % of POSIX, then the scores. Medians over
//! repetitions (the file's `summary`), with the ratio's min-max range when
//! there were several.

use super::{num, pct, Table};
use crate::model::{distinct, median, Dataset, SummaryRow};

/// The IO500 medians of every run: the file's `summary` rows, or, for a
/// file without them, medians computed from its `results`.
pub fn io500_summary(data: &Dataset) -> Vec<SummaryRow> {
    let mut out = Vec::new();
    for run in &data.runs {
        let listed: Vec<&SummaryRow> = run
            .summary
            .iter()
            .filter(|s| s.benchmark == "io500")
            .collect();
        if !listed.is_empty() {
            out.extend(listed.into_iter().cloned());
            continue;
        }
        let rows: Vec<_> = run.rows.iter().filter(|r| r.benchmark == "io500").collect();
        for (backend, phase) in distinct(rows.iter().map(|r| (r.backend.clone(), r.phase.clone())))
        {
            let of: Vec<_> = rows
                .iter()
                .filter(|r| r.backend == backend && r.phase == phase)
                .collect();
            let values = || of.iter().map(|r| r.value);
            let ratios: Vec<f64> = of.iter().filter_map(|r| r.ratio_to_posix).collect();
            out.push(SummaryRow {
                benchmark: "io500".into(),
                backend,
                name: phase,
                unit: of[0].unit.clone(),
                median: median(values()).unwrap_or(f64::NAN),
                min: values().fold(f64::INFINITY, f64::min),
                max: values().fold(f64::NEG_INFINITY, f64::max),
                n: of.len() as u64,
                ratio: median(ratios.iter().copied()).map(|m| {
                    (
                        m,
                        ratios.iter().copied().fold(f64::INFINITY, f64::min),
                        ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    )
                }),
            });
        }
    }
    out
}

/// The scores' medians (`score_summary`), every run.
pub fn io500_scores(data: &Dataset) -> Vec<SummaryRow> {
    data.runs
        .iter()
        .flat_map(|r| r.score_summary.iter().cloned())
        .collect()
}

/// `None` when no file has IO500 rows.
/// The table's title (the CLI finds it among the sections by it).
pub const TITLE: &str = "IO500: each backend and its % of POSIX";

pub fn table(data: &Dataset) -> Option<Table> {
    let phases = io500_summary(data);
    if phases.is_empty() {
        return None;
    }
    let scores = io500_scores(data);
    let series = distinct(phases.iter().map(|s| s.backend.clone()));
    let baseline = |name: &str| data.series(name).is_some_and(|s| s.is_baseline());
    let mut headers = vec!["phase".to_string(), "unit".to_string()];
    for s in &series {
        headers.push(s.clone());
        if !baseline(s) {
            headers.push(format!("{s} % POSIX"));
        }
    }
    let mut several = false;
    let mut line = |name: &str, rows: &[SummaryRow]| {
        let unit = rows
            .iter()
            .find(|r| r.name == name)
            .map_or(String::new(), |r| r.unit.clone());
        let mut cells = vec![name.to_string(), unit];
        for s in &series {
            let r = rows.iter().find(|r| r.name == name && r.backend == *s);
            cells.push(r.map_or("-".into(), |r| num(r.median)));
            if !baseline(s) {
                cells.push(match r.and_then(|r| r.ratio.map(|q| (q, r.n))) {
                    Some(((m, lo, hi), n)) if n > 1 && lo != hi => {
                        several = true;
                        format!("{} ({}-{})", pct(m), pct(lo), pct(hi))
                    }
                    Some(((m, _, _), _)) => pct(m),
                    None => "-".into(),
                });
            }
        }
        cells
    };
    let mut rows: Vec<Vec<String>> = distinct(phases.iter().map(|p| p.name.clone()))
        .iter()
        .map(|p| line(p, &phases))
        .collect();
    for name in distinct(scores.iter().map(|p| p.name.clone())) {
        let mut cells = line(&name, &scores);
        cells[0] = format!("score {name}");
        rows.push(cells);
    }
    let reps = distinct(phases.iter().map(|p| p.n));
    let mut note = format!(
        "Medians over {} repetition(s); % POSIX is each backend against POSIX of the same run and repetition.",
        reps.iter().map(u64::to_string).collect::<Vec<_>>().join("/")
    );
    if several {
        note.push_str(" In parentheses: the range of that ratio over the repetitions.");
    }
    Some(Table {
        title: TITLE.into(),
        headers,
        rows,
        note: Some(note),
    })
}
