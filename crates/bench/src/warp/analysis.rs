//! warp's report from the per-request records: the analysis window (from
//! when every thread has finished a request to when the first thread
//! finished its last one, so all threads were busy throughout), average
//! obj/s and MiB/s, per-op request and TTFB percentiles, and the per-second
//! throughput spread. Falls back to the whole run when the window is empty.

use super::schedule::Op;
use super::WarpParams;
use crate::harness::row::{rate, MIB};
use crate::harness::{Row, Target};
use crate::latency::{take_u64, Latency};
use std::io::Write;
use std::time::Duration;

/// One request, times relative to the start of the run.
#[derive(Debug, Clone, Copy)]
pub struct Rec {
    pub op: Op,
    pub start: Duration,
    pub end: Duration,
    /// GET: request to first byte; PUT: the whole request (no finer point).
    pub ttfb: Duration,
    pub bytes: u64,
}

impl Rec {
    /// Appends the records of each thread (for the gather on rank 0).
    pub fn encode(threads: &[Vec<Rec>], out: &mut Vec<u8>) {
        out.extend_from_slice(&(threads.len() as u64).to_le_bytes());
        for recs in threads {
            out.extend_from_slice(&(recs.len() as u64).to_le_bytes());
            for r in recs {
                out.push(r.op.index() as u8);
                for v in [r.start, r.end, r.ttfb] {
                    out.extend_from_slice(&(v.as_nanos() as u64).to_le_bytes());
                }
                out.extend_from_slice(&r.bytes.to_le_bytes());
            }
        }
    }

    /// The threads' records `encode` wrote.
    pub fn decode(mut input: &[u8]) -> Option<Vec<Vec<Rec>>> {
        Rec::decode_from(&mut input)
    }

    /// One block `encode` wrote, from the front of `inp` (several blocks
    /// may follow one another).
    pub fn decode_from(inp: &mut &[u8]) -> Option<Vec<Vec<Rec>>> {
        let threads = take_u64(inp)?;
        (0..threads)
            .map(|_| {
                let n = take_u64(inp)?;
                (0..n)
                    .map(|_| {
                        let (&op, rest) = inp.split_first()?;
                        *inp = rest;
                        let mut d = || take_u64(inp).map(Duration::from_nanos);
                        Some(Rec {
                            op: *Op::ALL.get(op as usize)?,
                            start: d()?,
                            end: d()?,
                            ttfb: d()?,
                            bytes: take_u64(inp)?,
                        })
                    })
                    .collect()
            })
            .collect()
    }
}

#[derive(Default)]
struct OpStats {
    ops: u64,
    bytes: u64,
    req: Latency,
    ttfb: Latency,
}

pub struct Analysis {
    window: (Duration, Duration),
    per_op: [OpStats; 4],
    /// Per whole second of the window: (ops, bytes).
    seconds: Vec<(u64, u64)>,
    /// Every request of the run per op type, in the window or not.
    all_ops: [u64; 4],
}

impl Analysis {
    pub fn new(per_thread: &[Vec<Rec>]) -> Analysis {
        let busy = per_thread.iter().filter(|r| !r.is_empty());
        let from = busy.clone().map(|r| r[0].end).max().unwrap_or_default();
        let to = busy.map(|r| r[r.len() - 1].end).min().unwrap_or_default();
        let all_end = per_thread
            .iter()
            .flatten()
            .map(|r| r.end)
            .max()
            .unwrap_or_default();
        let window = if to > from + Duration::from_millis(10) {
            (from, to)
        } else {
            (Duration::ZERO, all_end)
        };
        let mut per_op: [OpStats; 4] = Default::default();
        let len = window.1.saturating_sub(window.0);
        let mut seconds = vec![(0, 0); len.as_secs() as usize];
        let mut all_ops = [0; 4];
        for r in per_thread.iter().flatten() {
            all_ops[r.op.index()] += 1;
            if r.end <= window.0 || r.end > window.1 {
                continue;
            }
            let s = &mut per_op[r.op.index()];
            s.ops += 1;
            s.bytes += r.bytes;
            s.req.record(r.end - r.start);
            if r.op == Op::Get {
                s.ttfb.record(r.ttfb);
            }
            if let Some(b) = seconds.get_mut((r.end - window.0).as_secs() as usize) {
                b.0 += 1;
                b.1 += r.bytes;
            }
        }
        Analysis {
            window,
            per_op,
            seconds,
            all_ops,
        }
    }

    pub fn seconds(&self) -> f64 {
        (self.window.1 - self.window.0).as_secs_f64()
    }

    fn total(&self) -> (u64, u64, Latency) {
        let mut lat = Latency::new();
        let (mut ops, mut bytes) = (0, 0);
        for s in &self.per_op {
            ops += s.ops;
            bytes += s.bytes;
            lat.merge(&s.req);
        }
        (ops, bytes, lat)
    }

    /// (fastest, median, slowest) seconds by bytes (ops when no bytes).
    fn spread(&self) -> Option<[(u64, u64); 3]> {
        let mut v = self.seconds.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_by_key(|&(ops, bytes)| (bytes, ops));
        Some([v[v.len() - 1], v[v.len() / 2], v[0]])
    }

    /// The text report, in warp's layout.
    pub fn print(&self, out: &mut dyn Write, p: &WarpParams, ran: Duration) -> std::io::Result<()> {
        self.print_ops(out, p, ran)?;
        let secs = self.seconds();
        let (ops, bytes, _) = self.total();
        report_header(out, "Total", p, ran)?;
        writeln!(
            out,
            " * Average: {:.2} MiB/s, {:.2} obj/s",
            rate(bytes as f64 / MIB, secs),
            rate(ops as f64, secs)
        )?;
        if let Some([fast, mid, slow]) = self.spread() {
            writeln!(out, "Throughput, split into {} x 1s:", self.seconds.len())?;
            for (name, (o, b)) in [("Fastest", fast), ("50% Median", mid), ("Slowest", slow)] {
                writeln!(out, " * {name}: {:.1}MiB/s, {o:.2} obj/s", b as f64 / MIB)?;
            }
        }
        Ok(())
    }

    /// The report of each op type (warp's `Report: GET ...` blocks).
    pub fn print_ops(
        &self,
        out: &mut dyn Write,
        p: &WarpParams,
        ran: Duration,
    ) -> std::io::Result<()> {
        let secs = self.seconds();
        let (ops, _, _) = self.total();
        for op in Op::ALL {
            let s = &self.per_op[op.index()];
            if s.ops == 0 {
                continue;
            }
            let share = if p.mode == super::WarpMode::Mixed {
                format!(
                    " ({:.1}% of operations)",
                    100.0 * s.ops as f64 / ops.max(1) as f64
                )
            } else {
                String::new()
            };
            report_header(out, &format!("{}{share}", op.name()), p, ran)?;
            if s.bytes > 0 {
                writeln!(
                    out,
                    " * Average: {:.2} MiB/s, {:.2} obj/s",
                    rate(s.bytes as f64 / MIB, secs),
                    rate(s.ops as f64, secs)
                )?;
            } else {
                writeln!(out, " * Average: {:.2} ops/s", rate(s.ops as f64, secs))?;
            }
            let (mean, sd) = s.req.mean_stddev();
            let q = |x: f64| fmt_dur(s.req.quantile(x));
            writeln!(
                out,
                " * Reqs: Avg: {}, 50%: {}, 90%: {}, 99%: {}, Fastest: {}, Slowest: {}, StdDev: {}",
                fmt_dur(mean),
                q(0.5),
                q(0.9),
                q(0.99),
                q(0.0),
                q(1.0),
                fmt_dur(sd)
            )?;
            if s.ttfb.count() > 0 {
                let (mean, sd) = s.ttfb.mean_stddev();
                let q = |x: f64| fmt_dur(s.ttfb.quantile(x));
                writeln!(
                    out,
                    " * TTFB: Avg: {}, Best: {}, 25th: {}, Median: {}, 75th: {}, 90th: {}, 99th: {}, Worst: {} StdDev: {}",
                    fmt_dur(mean),
                    q(0.0),
                    q(0.25),
                    q(0.5),
                    q(0.75),
                    q(0.9),
                    q(0.99),
                    q(1.0),
                    fmt_dur(sd)
                )?;
            }
            writeln!(out)?;
        }
        Ok(())
    }

    /// The workload row (`mixed`/`get`) and a row per op (`mixed.GET`, ...).
    pub fn rows(&self, t: &Target, p: &WarpParams) -> Vec<Row> {
        let secs = self.seconds();
        let phase = p.mode.name();
        let (ops, bytes, lat) = self.total();
        let mut total = t
            .row("warp", phase, "obj/s")
            .measured(ops, bytes, secs, &lat)
            .value(rate(ops as f64, secs))
            .with("mib_per_s", rate(bytes as f64 / MIB, secs))
            .with("concurrency", p.concurrency)
            .with("object_size", p.object_size)
            .with("objects", p.objects)
            .with("ops_all", self.all_ops.iter().sum::<u64>());
        if let Some(spread) = self.spread() {
            for (name, (o, b)) in ["fastest", "median", "slowest"].iter().zip(spread) {
                total = total.with(
                    &format!("per_second_{name}"),
                    serde_json::json!({"obj_per_s": o, "mib_per_s": b as f64 / MIB}),
                );
            }
        }
        let mut rows = vec![total];
        rows.extend(Op::ALL.into_iter().filter_map(|op| self.op_row(t, p, op)));
        rows
    }

    /// The row of one op type (`mixed.GET`, ...); `None` if none ran.
    pub fn op_row(&self, t: &Target, p: &WarpParams, op: Op) -> Option<Row> {
        let secs = self.seconds();
        let (ops, _, _) = self.total();
        let s = &self.per_op[op.index()];
        if self.all_ops[op.index()] == 0 {
            return None;
        }
        let mut r = t
            .row("warp", format!("{}.{}", p.mode.name(), op.name()), "obj/s")
            .measured(s.ops, s.bytes, secs, &s.req)
            .value(rate(s.ops as f64, secs))
            .with("mib_per_s", rate(s.bytes as f64 / MIB, secs))
            .with("share", s.ops as f64 / ops.max(1) as f64)
            .with("ops_all", self.all_ops[op.index()])
            .with("object_size", p.object_size);
        if s.ttfb.count() > 0 {
            r = r.with(
                "ttfb",
                serde_json::to_value(s.ttfb.summary()).unwrap_or_default(),
            );
        }
        Some(r)
    }
}

/// warp's `Report: NAME. Concurrency: N. Ran: 5s` line.
fn report_header(
    out: &mut dyn Write,
    name: &str,
    p: &WarpParams,
    ran: Duration,
) -> std::io::Result<()> {
    writeln!(
        out,
        "Report: {name}. Concurrency: {}. Ran: {}",
        p.concurrency,
        fmt_ran(ran)
    )
}

/// A duration in seconds the way Go prints rounded durations: `504ms`,
/// `3.0ms`, `250µs`, `1.2s`.
pub fn fmt_dur(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.1}s")
    } else if s >= 0.1 {
        format!("{:.0}ms", s * 1e3)
    } else if s >= 1e-3 {
        format!("{:.1}ms", s * 1e3)
    } else {
        format!("{:.0}µs", s * 1e6)
    }
}

/// `4m58s`, `5s`.
fn fmt_ran(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    if s >= 60 {
        format!("{}m{}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}
