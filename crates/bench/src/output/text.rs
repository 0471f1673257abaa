//! IO500-format text on stdout (`result_summary.txt` lines), then the
//! comparison of every backend with POSIX.

use crate::io500::score::Score;
use crate::io500::PhaseResult;
use crate::suite::{BackendReport, RunInfo};
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
    writeln!(
        out,
        "IO500 version s3hpc-{} (standard) backend {}",
        run.version, b.backend
    )?;
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
/// backend as a ratio of POSIX.
pub fn comparison(out: &mut dyn Write, run: &RunInfo, reports: &[BackendReport]) -> io::Result<()> {
    let posix = reports.iter().position(|b| b.backend == "posix");
    let others: Vec<usize> = (0..reports.len()).filter(|&i| Some(i) != posix).collect();
    writeln!(out)?;
    writeln!(
        out,
        "Comparison: {} ranks, stonewall {} s, durability {}, etag {}, s3 mode {}, file system {}",
        run.ranks, run.stonewall_seconds, run.durability, run.etag, run.s3_mode, run.filesystem
    )?;
    let mut header = format!("{:<20} {:<6}", "phase", "unit");
    for b in reports {
        header += &format!(" {:>12}", b.backend);
    }
    if posix.is_some() {
        for &i in &others {
            header += &format!(" {:>15}", format!("{}/posix", reports[i].backend));
        }
    }
    writeln!(out, "{header}")?;
    writeln!(out, "{}", "-".repeat(header.len()))?;

    let row =
        |out: &mut dyn Write, name: &str, unit: &str, vals: Vec<Option<f64>>| -> io::Result<()> {
            let mut line = format!("{name:<20} {unit:<6}");
            for v in &vals {
                line += &match v {
                    Some(v) => format!(" {:>12}", fmt_value(*v)),
                    None => format!(" {:>12}", "-"),
                };
            }
            if let Some(p) = posix {
                for &i in &others {
                    line += &match (vals[p], vals[i]) {
                        (Some(base), Some(v)) if base > 0.0 => format!(" {:>15.2}", v / base),
                        _ => format!(" {:>15}", "-"),
                    };
                }
            }
            writeln!(out, "{line}")
        };

    let first = reports.first().map(|b| &b.results[..]).unwrap_or(&[]);
    for r in first.iter().filter(|r| r.scored()) {
        let vals = reports
            .iter()
            .map(|b| b.results.iter().find(|x| x.name == r.name).map(|x| x.value))
            .collect();
        row(out, r.name, r.unit(), vals)?;
    }
    writeln!(out, "{}", "-".repeat(header.len()))?;
    row(
        out,
        "score bandwidth",
        "GiB/s",
        reports.iter().map(|b| Some(b.score.bandwidth)).collect(),
    )?;
    row(
        out,
        "score iops",
        "kIOPS",
        reports.iter().map(|b| Some(b.score.iops)).collect(),
    )?;
    row(
        out,
        "score total",
        "",
        reports.iter().map(|b| Some(b.score.total)).collect(),
    )?;
    out.flush()
}

/// Per-op latency quantiles (median and 99th percentile) of each backend:
/// where the time goes, per phase.
pub fn latencies(out: &mut dyn Write, reports: &[BackendReport]) -> io::Result<()> {
    writeln!(out)?;
    let mut header = format!("{:<20}", "latency (us)");
    for b in reports {
        header += &format!(" {:>21}", format!("{} p50/p99", b.backend));
    }
    writeln!(out, "{header}")?;
    writeln!(out, "{}", "-".repeat(header.len()))?;
    let first = reports.first().map(|b| &b.results[..]).unwrap_or(&[]);
    for r in first.iter().filter(|r| r.scored()) {
        let mut line = format!("{:<20}", r.name);
        for b in reports {
            line += &match b.results.iter().find(|x| x.name == r.name) {
                Some(x) => format!(
                    " {:>21}",
                    format!("{:.1}/{:.1}", x.latency.p50 * 1e6, x.latency.p99 * 1e6)
                ),
                None => format!(" {:>21}", "-"),
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
