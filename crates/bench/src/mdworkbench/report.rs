//! md-workbench's output lines (`print_p_stat` of `hpc/ior
//! src/md-workbench.c`, same fields and formats) and the result rows.

use super::rank::{PhaseStats, OPS};
use super::MdwParams;
use crate::harness::row::{rate, MIB};
use crate::harness::{Row, Target};
use crate::latency::Latency;
use crate::results::{rfc3339, VERSION};
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// `YYYY-mm-dd HH:MM:SS` (UTC).
pub fn now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    rfc3339(secs).replace('T', " ").replace('Z', "")
}

/// C's `%.4e` (two-digit exponent with sign), which Rust's `{:.4e}` is not.
pub fn sci(v: f64) -> String {
    let s = format!("{v:.4e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let e: i32 = e.parse().unwrap_or(0);
            let sign = if e < 0 { '-' } else { '+' };
            format!("{m}e{sign}{:02}", e.abs())
        }
        None => s,
    }
}

/// md-workbench's `(min, q1, median, q3, q90, q99, max)`, in seconds.
pub fn quantiles(l: &Latency) -> [f64; 7] {
    let s = l.summary();
    [
        s.min,
        l.quantile(0.25),
        l.quantile(0.5),
        l.quantile(0.75),
        l.quantile(0.9),
        l.quantile(0.99),
        s.max,
    ]
}

pub fn header(out: &mut dyn Write, p: &MdwParams, ranks: usize, t: &Target) -> std::io::Result<()> {
    writeln!(
        out,
        "MD-Workbench total objects: {} workingset size: {:.3} MiB (version: s3hpc-{VERSION}) time: {}",
        p.total_objects(ranks),
        (ranks * p.datasets) as f64 * p.precreate as f64 * p.size as f64 / MIB,
        now()
    )?;
    writeln!(
        out,
        "backend: {} D={} I={} P={} S={} O={} R={} ranks={}",
        t.backend, p.datasets, p.per_iteration, p.precreate, p.size, p.offset, p.iterations, ranks
    )
}

/// One phase line, as upstream prints it.
pub fn line(out: &mut dyn Write, ph: &PhaseStats, p: &MdwParams) -> std::io::Result<()> {
    let t = ph.t_max;
    let c = &ph.counts;
    let tp = (c.created + c.read) as f64 * p.size as f64 / t / MIB;
    let op_max = ph.ops.iter().map(|l| l.summary().max).fold(0.0, f64::max);
    write!(
        out,
        "{} process max:{t:.2}s min:{:.2}s mean: {:.2}s balance:{:.1} stddev:{:.1} ",
        ph.name,
        ph.t_min,
        ph.t_mean,
        ph.t_min / t * 100.0,
        ph.t_stddev
    )?;
    match ph.name {
        "benchmark" => write!(
            out,
            "rate:{:.1} iops/s objects:{} rate:{:.1} obj/s tp:{tp:.1} MiB/s op-max:{}s",
            ph.rate(),
            c.read,
            c.read as f64 / t,
            sci(op_max)
        )?,
        "precreate" => write!(
            out,
            "rate:{:.1} iops/s dsets: {} objects:{} rate:{:.3} dset/s rate:{:.1} obj/s tp:{tp:.1} MiB/s op-max:{}s",
            ph.rate(),
            c.dsets,
            c.created,
            c.dsets as f64 / t,
            c.created as f64 / t,
            sci(op_max)
        )?,
        _ => write!(
            out,
            "rate:{:.1} iops/s objects:{} dsets: {} rate:{:.1} obj/s rate:{:.3} dset/s op-max:{}s",
            ph.rate(),
            c.deleted,
            c.dsets,
            c.deleted as f64 / t,
            c.dsets as f64 / t,
            sci(op_max)
        )?,
    }
    write!(out, " (0 errs)")?;
    for (name, l) in OPS.iter().zip(&ph.ops) {
        if l.count() == 0 {
            continue;
        }
        let q = quantiles(l).map(sci);
        write!(out, " {name}({}s)", q.join("s, "))?;
    }
    writeln!(out)
}

/// The result row of a phase: `iops` as upstream's rate, with `obj_per_s`,
/// `mib_per_s` and each op type's latency.
pub fn row(t: &Target, ph: &PhaseStats, p: &MdwParams) -> Row {
    let c = &ph.counts;
    let objects = match ph.name {
        "precreate" => c.created,
        "benchmark" => c.read,
        _ => c.deleted,
    };
    let bytes = (c.created + c.read) * p.size as u64;
    let mut ops = serde_json::Map::new();
    for (name, l) in OPS.iter().zip(&ph.ops) {
        if l.count() > 0 {
            let q = quantiles(l);
            ops.insert(
                name.to_string(),
                serde_json::json!({
                    "count": l.count(),
                    "min": q[0], "q1": q[1], "median": q[2], "q3": q[3],
                    "q90": q[4], "q99": q[5], "max": q[6],
                }),
            );
        }
    }
    t.row("mdworkbench", ph.name, "iops")
        .measured(ph.op_count(), bytes, ph.t_max, &ph.all_ops())
        .value(ph.rate())
        .with("objects", objects)
        .with("obj_per_s", rate(objects as f64, ph.t_max))
        .with("mib_per_s", rate(bytes as f64 / MIB, ph.t_max))
        .with("dsets", c.dsets)
        .with("balance", rate(ph.t_min * 100.0, ph.t_max))
        .with("op_latency", ops)
}
