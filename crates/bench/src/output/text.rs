//! IO500-format text on stdout (`result_summary.txt` lines), then the
//! comparison of every backend with POSIX.

use crate::io500::score::Score;
use crate::io500::PhaseResult;
use crate::results::{BackendReport, RunInfo};
use crate::stats::{median, Spread};
use crate::summary::{unsteady, Summary, SummaryRow, BASELINE, IN_PROCESS, UNSTEADY_FACTOR};
use std::io::{self, Write};

/// An official IO500 run needs this stonewall (`[debug] stonewall-time`).
pub const OFFICIAL_STONEWALL: f64 = 300.0;

/// IO500's line: `"[RESULT]" " %20s %15s %s : time %.3f seconds%s"`.
pub fn result_line(r: &PhaseResult) -> String {
    format!(
        "{} {:>20} {:>15} {} : time {:.3} seconds{}",
        if r.scored() { "[RESULT]" } else { "[      ]" },
        r.name,
        format!("{:.6}", r.value),
        r.unit(),
        r.seconds,
        if r.valid { "" } else { " [INVALID]" }
    )
}

pub fn score_line(s: &Score) -> String {
    format!(
        "[SCORE ] Bandwidth {:.6} GiB/s : IOPS {:.6} kiops : TOTAL {:.6}{}",
        s.bandwidth,
        s.iops,
        s.total,
        if s.valid { "" } else { " [INVALID]" }
    )
}

/// One backend's block: header, phase lines, notes, score.
pub fn backend_block(out: &mut dyn Write, run: &RunInfo, b: &BackendReport) -> io::Result<()> {
    write!(
        out,
        "IO500 version s3hpc-{} (standard) backend {}",
        run.version, b.backend
    )?;
    if run.repeat > 1 {
        write!(out, " repetition {}/{}", b.iteration + 1, run.repeat)?;
    }
    writeln!(out)?;
    if run.stonewall_seconds < OFFICIAL_STONEWALL {
        writeln!(
            out,
            "[NOTE  ] stonewall {} s; an official IO500 run needs {OFFICIAL_STONEWALL:.0} s, so these figures are not comparable with IO500 lists",
            run.stonewall_seconds
        )?;
    }
    for r in &b.results {
        writeln!(out, "{}", result_line(r))?;
    }
    for r in &b.results {
        for n in &r.notes {
            writeln!(out, "[NOTE  ] {}: {n}", r.name)?;
        }
    }
    writeln!(out, "{}", score_line(&b.score))?;
    out.flush()
}

/// The comparison table: per phase, each backend's value, then each S3
/// backend as a ratio of POSIX. Over several repetitions, the values are
/// medians, the ratio is the median of the per-repetition ratios, and a
/// column gives the range (min-max) of that ratio. Flags: `*` a figure
/// invalid in some repetition (on either side of a ratio), `~` a ratio
/// whose repetitions disagree (`summary::unsteady`); both explained below
/// the table.
pub fn comparison(out: &mut dyn Write, run: &RunInfo, s: &Summary) -> io::Result<()> {
    let has_base = s.backends.iter().any(|b| b == BASELINE);
    let others: Vec<&String> = s.backends.iter().filter(|b| *b != BASELINE).collect();
    let ranges = run.repeat > 1;
    writeln!(out)?;
    writeln!(
        out,
        "Comparison: {} ranks, stonewall {} s, durability {}, etag {}, s3 mode {}, file system {}",
        run.ranks, run.stonewall_seconds, run.durability, run.etag, run.s3_mode, run.filesystem
    )?;
    if let Some(job) = &run.slurm {
        writeln!(out, "{}", job.line())?;
    }
    if ranges {
        writeln!(
            out,
            "Medians of {} repetitions (backend order alternating); a ratio is the median of the \
             per-repetition ratios, its range their min-max",
            run.repeat
        )?;
    }
    let mut header = format!("{:<20} {:<6}", "phase", "unit");
    for b in &s.backends {
        header += &format!(" {b:>13}");
    }
    if has_base {
        for b in &others {
            header += &format!(" {:>16}", format!("{b}/{BASELINE}"));
            if ranges {
                header += &format!(" {:>11}", "range");
            }
        }
    }
    writeln!(out, "{header}")?;
    let rule = "-".repeat(header.len());
    writeln!(out, "{rule}")?;
    let mut flags = Flags::default();
    let mut table = |out: &mut dyn Write, rows: &[SummaryRow], label: &str| -> io::Result<()> {
        for (name, unit) in Summary::names(rows) {
            let mut line = format!("{:<20} {unit:<6}", format!("{label}{name}"));
            for b in &s.backends {
                line += &match Summary::find(rows, b, name) {
                    Some(r) => format!(" {:>13}", fmt_value(r.value.median) + &mark(r.invalid > 0)),
                    None => format!(" {:>13}", "-"),
                };
            }
            let base_invalid = Summary::find(rows, BASELINE, name).map_or(0, |r| r.invalid);
            if has_base {
                for b in &others {
                    let row = Summary::find(rows, b, name);
                    let invalid = row.map_or(0, |r| r.invalid) + base_invalid;
                    line += &flags.ratio_cell(
                        row.and_then(|r| r.ratio),
                        &format!("{label}{name}"),
                        b,
                        BASELINE,
                        invalid,
                        16,
                        ranges,
                    );
                }
            }
            writeln!(out, "{line}")?;
        }
        Ok(())
    };
    table(out, &s.phases, "")?;
    writeln!(out, "{rule}")?;
    table(out, &s.scores, "score ")?;
    flags.explain(out, run.repeat)?;
    out.flush()
}

/// What each S3 transport costs: its value per phase as a ratio of the
/// embedded backend's, paired per repetition like the ratios to POSIX,
/// with their range and the same flags. Printed when embedded and another
/// S3 backend ran.
pub fn transport_cost(out: &mut dyn Write, run: &RunInfo, s: &Summary) -> io::Result<()> {
    let others: Vec<&String> = s
        .backends
        .iter()
        .filter(|b| *b != BASELINE && *b != IN_PROCESS)
        .collect();
    if others.is_empty() || !s.backends.iter().any(|b| b == IN_PROCESS) {
        return Ok(());
    }
    let ranges = run.repeat > 1;
    writeln!(out)?;
    let mut header = format!("{:<20}", "transport cost");
    for b in &others {
        header += &format!(" {:>20}", format!("{b}/{IN_PROCESS}"));
        if ranges {
            header += &format!(" {:>11}", "range");
        }
    }
    writeln!(out, "{header}")?;
    writeln!(out, "{}", "-".repeat(header.len()))?;
    let mut flags = Flags::default();
    for (rows, label) in [(&s.phases, ""), (&s.scores, "score ")] {
        for (name, _) in Summary::names(rows) {
            let mut line = format!("{:<20}", format!("{label}{name}"));
            let base_invalid = Summary::find(rows, IN_PROCESS, name).map_or(0, |r| r.invalid);
            for b in &others {
                let row = Summary::find(rows, b, name);
                line += &flags.ratio_cell(
                    row.and_then(|r| r.to_embedded),
                    &format!("{label}{name}"),
                    b,
                    IN_PROCESS,
                    row.map_or(0, |r| r.invalid) + base_invalid,
                    20,
                    ranges,
                );
            }
            writeln!(out, "{line}")?;
        }
    }
    flags.explain(out, run.repeat)?;
    out.flush()
}

fn mark(invalid: bool) -> String {
    if invalid { "*" } else { "" }.to_string()
}

/// The flagged ratios of one table, to explain below it.
#[derive(Default)]
struct Flags {
    invalid: bool,
    /// Each unsteady ratio's phase (or score) and `backend/base min-max`.
    unsteady: Vec<(String, String)>,
}

impl Flags {
    /// A ratio's cell (median, `*` and `~` flags) and, with `ranges`, its
    /// range cell.
    #[allow(clippy::too_many_arguments)]
    fn ratio_cell(
        &mut self,
        q: Option<Spread>,
        name: &str,
        backend: &str,
        base: &str,
        invalid: usize,
        width: usize,
        ranges: bool,
    ) -> String {
        let Some(q) = q else {
            let mut cell = format!(" {:>width$}", "-");
            if ranges {
                cell += &format!(" {:>11}", "-");
            }
            return cell;
        };
        let shaky = unsteady(&q);
        if shaky {
            self.unsteady.push((
                name.to_string(),
                format!("{backend}/{base} {:.2}-{:.2}", q.min, q.max),
            ));
        }
        self.invalid |= invalid > 0;
        let flag = format!(
            "{}{}",
            if invalid > 0 { "*" } else { "" },
            if shaky { "~" } else { "" }
        );
        let mut cell = format!(" {:>width$}", format!("{:.2}{flag}", q.median));
        if ranges {
            cell += &format!(" {:>11}", format!("{:.2}-{:.2}", q.min, q.max));
        }
        cell
    }

    fn explain(&self, out: &mut dyn Write, repeat: usize) -> io::Result<()> {
        if self.invalid {
            writeln!(
                out,
                "* invalid in at least one repetition (on either side of a ratio): see the \
                 [NOTE] lines of the backend blocks (e.g. a read or stat a client cache could \
                 answer); do not quote it"
            )?;
        }
        if !self.unsteady.is_empty() {
            writeln!(
                out,
                "~ unsteady: the repetitions of these ratios differ by more than {UNSTEADY_FACTOR}x \
                 (max/min), so the median is the file system's or the machine's noise as much as \
                 a cost; rerun with more --repeat, on a quieter machine, or on tmpfs to tell:"
            )?;
            // One line per phase.
            let mut i = 0;
            while i < self.unsteady.len() {
                let name = &self.unsteady[i].0;
                let same: Vec<&str> = self.unsteady[i..]
                    .iter()
                    .take_while(|(n, _)| n == name)
                    .map(|(_, r)| r.as_str())
                    .collect();
                writeln!(out, "    {name}: {}", same.join(", "))?;
                i += same.len();
            }
        }
        if repeat == 1 {
            writeln!(
                out,
                "One repetition: how far these ratios swing from run to run is unknown; \
                 --repeat 3 or more shows it"
            )?;
        }
        Ok(())
    }
}

/// Per-op latency quantiles (median and 99th percentile) of each backend:
/// where the time goes, per phase. Over several repetitions, the median of
/// each quantile.
pub fn latencies(
    out: &mut dyn Write,
    run: &RunInfo,
    summary: &Summary,
    reports: &[BackendReport],
) -> io::Result<()> {
    writeln!(out)?;
    let mut header = format!(
        "{:<20}",
        if run.repeat > 1 {
            "latency (us, median)"
        } else {
            "latency (us)"
        }
    );
    for b in &summary.backends {
        header += &format!(" {:>21}", format!("{b} p50/p99"));
    }
    writeln!(out, "{header}")?;
    writeln!(out, "{}", "-".repeat(header.len()))?;
    for (name, _) in Summary::names(&summary.phases) {
        let mut line = format!("{name:<20}");
        for b in &summary.backends {
            let quantile = |q: fn(&PhaseResult) -> f64| {
                median(
                    reports
                        .iter()
                        .filter(|r| &r.backend == b)
                        .flat_map(|r| r.results.iter().find(|x| x.name == name))
                        .map(q),
                )
            };
            line += &match (quantile(|x| x.latency.p50), quantile(|x| x.latency.p99)) {
                (Some(p50), Some(p99)) => {
                    format!(" {:>21}", format!("{:.1}/{:.1}", p50 * 1e6, p99 * 1e6))
                }
                _ => format!(" {:>21}", "-"),
            };
        }
        writeln!(out, "{line}")?;
    }
    out.flush()
}

/// Enough digits for small and large values alike.
fn fmt_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io500::score::score;
    use crate::io500::Group;

    fn report(backend: &str, iteration: usize, write: f64, stat: f64) -> BackendReport {
        let phase = |name, value| {
            let mut r = PhaseResult::empty(name, Group::Metadata);
            r.value = value;
            r
        };
        let results = vec![
            phase("mdtest-hard-write", write),
            phase("mdtest-easy-stat", stat),
        ];
        BackendReport {
            backend: backend.into(),
            iteration,
            transport: String::new(),
            api: String::new(),
            score: score(&results),
            results,
        }
    }

    fn run_info(repeat: usize) -> RunInfo {
        RunInfo {
            label: None,
            host: "n1".into(),
            start_time: String::new(),
            unix_time: 0,
            version: String::new(),
            ranks: 2,
            stonewall_seconds: 2.0,
            dir: String::new(),
            run_dir: String::new(),
            filesystem: "ext4".into(),
            free_bytes: None,
            etag: "fast",
            durability: "none",
            layout: "plain",
            pack_max: None,
            s3_mode: "single-bucket",
            caps: crate::io500::Caps::default(),
            caps_lowered: false,
            seed: 0,
            backends: Vec::new(),
            repeat,
            kept: false,
            slurm: None,
        }
    }

    /// A disk that swings (mdtest-hard-write 0.03 in one
    /// repetition, 0.86 in the next) is flagged, with its range, rather
    /// than printed as one steady ratio; a steady phase is not.
    #[test]
    fn repetitions_that_disagree_are_flagged() {
        let reports = vec![
            report("posix", 0, 100.0, 100.0),
            report("embedded", 0, 3.0, 95.0),
            report("embedded", 1, 86.0, 100.0),
            report("posix", 1, 100.0, 110.0),
        ];
        let s = crate::summary::summarize(&reports);
        let mut out = Vec::new();
        comparison(&mut out, &run_info(2), &s).unwrap();
        let text = String::from_utf8(out).unwrap();
        let line = |p: &str| text.lines().find(|l| l.starts_with(p)).unwrap().to_string();
        assert!(line("mdtest-hard-write").contains("0.45~"), "{text}");
        assert!(line("mdtest-hard-write").contains("0.03-0.86"), "{text}");
        assert!(!line("mdtest-easy-stat").contains('~'), "{text}");
        assert!(text.contains("~ unsteady"), "{text}");
        assert!(
            text.contains("    mdtest-hard-write: embedded/posix 0.03-0.86\n"),
            "{text}"
        );
        assert!(!text.contains("* invalid"), "{text}");
    }

    #[test]
    fn invalid_figures_and_single_runs_are_marked() {
        let mut reports = vec![
            report("posix", 0, 100.0, 100.0),
            report("embedded", 0, 50.0, 20000.0),
        ];
        reports[1].results[1].valid = false;
        let s = crate::summary::summarize(&reports);
        let mut out = Vec::new();
        comparison(&mut out, &run_info(1), &s).unwrap();
        let text = String::from_utf8(out).unwrap();
        let line = |p: &str| text.lines().find(|l| l.starts_with(p)).unwrap().to_string();
        assert!(line("mdtest-easy-stat").contains("200.00*"), "{text}");
        assert!(!line("mdtest-hard-write").contains('*'), "{text}");
        assert!(
            text.contains("* invalid in at least one repetition"),
            "{text}"
        );
        assert!(text.contains("One repetition"), "{text}");
    }

    #[test]
    fn io500_line_format() {
        let mut r = PhaseResult::empty("ior-easy-write", Group::Bandwidth);
        r.value = 0.18662;
        r.seconds = 300.27;
        assert_eq!(
            result_line(&r),
            "[RESULT]       ior-easy-write        0.186620 GiB/s : time 300.270 seconds"
        );
        let mut t = PhaseResult::empty("timestamp", Group::None);
        t.seconds = 0.001;
        assert_eq!(
            result_line(&t),
            "[      ]            timestamp        0.000000 kIOPS : time 0.001 seconds"
        );
        let s = Score {
            bandwidth: 0.172092,
            iops: 292.625029,
            total: 7.096374,
            valid: true,
        };
        assert_eq!(
            score_line(&s),
            "[SCORE ] Bandwidth 0.172092 GiB/s : IOPS 292.625029 kiops : TOTAL 7.096374"
        );
    }
}
