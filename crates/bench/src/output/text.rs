//! IO500-format text on stdout (`result_summary.txt` lines), then the
//! comparison of every backend with POSIX.

use crate::io500::score::Score;
use crate::io500::PhaseResult;
use crate::results::{BackendReport, RunInfo};
use crate::stats::median;
use crate::summary::{Summary, SummaryRow, BASELINE};
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
/// column gives the range (min-max) of that ratio.
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
        header += &format!(" {b:>12}");
    }
    if has_base {
        for b in &others {
            header += &format!(" {:>15}", format!("{b}/{BASELINE}"));
            if ranges {
                header += &format!(" {:>11}", "range");
            }
        }
    }
    writeln!(out, "{header}")?;
    let rule = "-".repeat(header.len());
    writeln!(out, "{rule}")?;

    let table = |out: &mut dyn Write, rows: &[SummaryRow], label: &str| -> io::Result<()> {
        for (name, unit) in Summary::names(rows) {
            let mut line = format!("{:<20} {unit:<6}", format!("{label}{name}"));
            for b in &s.backends {
                line += &match Summary::find(rows, b, name) {
                    Some(r) => format!(" {:>12}", fmt_value(r.value.median)),
                    None => format!(" {:>12}", "-"),
                };
            }
            if has_base {
                for b in &others {
                    let ratio = Summary::find(rows, b, name).and_then(|r| r.ratio);
                    line += &match ratio {
                        Some(q) => format!(" {:>15.2}", q.median),
                        None => format!(" {:>15}", "-"),
                    };
                    if ranges {
                        line += &match ratio {
                            Some(q) => format!(" {:>11}", format!("{:.2}-{:.2}", q.min, q.max)),
                            None => format!(" {:>11}", "-"),
                        };
                    }
                }
            }
            writeln!(out, "{line}")?;
        }
        Ok(())
    };
    table(out, &s.phases, "")?;
    writeln!(out, "{rule}")?;
    table(out, &s.scores, "score ")?;
    out.flush()
}

/// The backend other S3 transports are compared with: the engine in the
/// application, with no transport at all.
const IN_PROCESS: &str = "embedded";

/// What each S3 transport costs: its value per phase as a ratio of the
/// embedded backend's (medians over repetitions). Printed when embedded
/// and another S3 backend ran.
pub fn transport_cost(out: &mut dyn Write, s: &Summary) -> io::Result<()> {
    let others: Vec<&String> = s
        .backends
        .iter()
        .filter(|b| *b != BASELINE && *b != IN_PROCESS)
        .collect();
    if others.is_empty() || !s.backends.iter().any(|b| b == IN_PROCESS) {
        return Ok(());
    }
    writeln!(out)?;
    let mut header = format!("{:<20}", "transport cost");
    for b in &others {
        header += &format!(" {:>20}", format!("{b}/{IN_PROCESS}"));
    }
    writeln!(out, "{header}")?;
    writeln!(out, "{}", "-".repeat(header.len()))?;
    for (rows, label) in [(&s.phases, ""), (&s.scores, "score ")] {
        for (name, _) in Summary::names(rows) {
            let mut line = format!("{:<20}", format!("{label}{name}"));
            let base = Summary::find(rows, IN_PROCESS, name).map(|r| r.value.median);
            for b in &others {
                let mine = Summary::find(rows, b, name).map(|r| r.value.median);
                line += &match (mine, base) {
                    (Some(m), Some(e)) if e > 0.0 => format!(" {:>20.2}", m / e),
                    _ => format!(" {:>20}", "-"),
                };
            }
            writeln!(out, "{line}")?;
        }
    }
    out.flush()
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
    use crate::io500::Group;

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
