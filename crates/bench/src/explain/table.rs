//! The tables `s3hpc explain` prints: latency per layer and op with what
//! each layer adds, file-system calls per op, CPU per op, and the largest
//! cost of each op.

use super::{Explained, Op};
use s3hpc_store::fscalls::Kind;
use std::io::Write;

const SIZED: [Op; 6] = Op::SIZED;
const UNSIZED: [Op; 3] = Op::UNSIZED;

/// A size as `4 MiB`, `64 KiB` or `100 B`.
pub fn size_label(size: u64) -> String {
    match size {
        s if s >= 1 << 20 && s % (1 << 20) == 0 => format!("{} MiB", s >> 20),
        s if s >= 1 << 10 && s % (1 << 10) == 0 => format!("{} KiB", s >> 10),
        s => format!("{s} B"),
    }
}

fn us(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{:.0}", v)
    } else if v.abs() >= 10.0 {
        format!("{:.1}", v)
    } else {
        format!("{:.2}", v)
    }
}

/// One latency grid: a row per layer, a column per op, `median (+added)`.
fn latency_grid(
    e: &Explained,
    ops: &[Op],
    slot: usize,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    write!(out, "{:<13}", "layer")?;
    for op in ops {
        write!(out, " {:>19}", op.name())?;
    }
    writeln!(out)?;
    for (li, l) in e.layers.iter().enumerate() {
        write!(out, "{:<13}", l.name)?;
        for &op in ops {
            let c = e.cell(li, op, slot);
            let cell = if c.ops == 0 {
                "-".to_string()
            } else {
                match e.added_us(li, op, slot) {
                    Some(a) => format!(
                        "{} ({}{})",
                        us(c.median_us()),
                        if a >= 0.0 { "+" } else { "" },
                        us(a)
                    ),
                    None => us(c.median_us()),
                }
            };
            write!(out, " {cell:>19}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

pub fn print(e: &Explained, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(out, "Layers (each adds to the one in brackets):")?;
    for l in &e.layers {
        let base = l
            .base
            .map_or(String::new(), |b| format!(" [{}]", e.layers[b].name));
        writeln!(out, "  {:<13} {}{base}", l.name, l.what)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Median µs per op, and (in brackets) what the layer adds over its base; p99 in the JSON."
    )?;
    for (slot, &size) in e.sizes.iter().enumerate() {
        writeln!(out, "\nObjects of {}:", size_label(size))?;
        latency_grid(e, &SIZED, slot, out)?;
    }
    writeln!(
        out,
        "\nHEAD of a missing key, LIST of 1000 keys (one page), multipart of 3 x 5 MiB:"
    )?;
    latency_grid(e, &UNSIZED, 0, out)?;
    fs_calls(e, out)?;
    mds_requests(e, out)?;
    cpu(e, out)?;
    largest(e, out)
}

/// Metadata-server requests per op through every layer, where the file
/// system's client counts them (ceph-fuse), with their latency summed per
/// op: what the calls above cost the MDS.
fn mds_requests(e: &Explained, out: &mut dyn Write) -> std::io::Result<()> {
    let slot = e.sizes.iter().position(|&s| s > 0).unwrap_or(0);
    let counted = |li: usize, op: Op| e.cell(li, op, slot).mds_per_op();
    if !e
        .layers
        .iter()
        .enumerate()
        .any(|(li, _)| counted(li, Op::PutNew).is_some())
    {
        return Ok(());
    }
    writeln!(
        out,
        "\nMetadata-server requests per op ({} objects), as the file system's client counted \
         them (ceph-fuse's `perf dump client reply`: every request of this mount, so other \
         work on it counts too), and [their latency summed, µs]:",
        size_label(e.sizes[slot])
    )?;
    write!(out, "{:<14}", "op")?;
    for l in &e.layers {
        write!(out, " {:>20}", l.name)?;
    }
    writeln!(out)?;
    for op in SIZED.iter().chain(UNSIZED.iter()).copied() {
        write!(out, "{:<14}", op.name())?;
        for li in 0..e.layers.len() {
            let c = e.cell(li, op, slot);
            let cell = match (c.mds_per_op(), c.mds_us_per_op()) {
                (Some(n), Some(us)) if c.ops > 0 => format!("{n:.2} [{us:.0}]"),
                _ => "-".into(),
            };
            write!(out, " {cell:>20}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// File-system calls per op: POSIX's and the engine's, by kind, and
/// whether every transport made exactly the engine's calls.
fn fs_calls(e: &Explained, out: &mut dyn Write) -> std::io::Result<()> {
    let (Some(posix), Some(engine)) = (e.layer_index("posix"), e.layer_index("engine")) else {
        return Ok(());
    };
    // The calls of a small object (the second size when 0 is first).
    let slot = e.sizes.iter().position(|&s| s > 0).unwrap_or(0);
    writeln!(
        out,
        "\nFile-system calls per op ({} objects; metadata calls in brackets, the ones a \
         parallel file system's metadata server answers):",
        size_label(e.sizes[slot])
    )?;
    writeln!(
        out,
        "{:<14} {:>12} {:>12}   engine's calls",
        "op", "posix", "engine"
    )?;
    let describe = |li: usize, op: Op| {
        let c = e.cell(li, op, slot);
        let parts: Vec<String> = Kind::ALL
            .iter()
            .filter(|&&k| c.calls.get(k) > 0)
            .map(|&k| {
                let failed = c.calls.failed(k) as f64 / c.ops.max(1) as f64;
                if failed > 0.0 {
                    format!("{} {:.3} ({:.3} failed)", k.name(), c.per_op(k), failed)
                } else {
                    format!("{} {:.3}", k.name(), c.per_op(k))
                }
            })
            .collect();
        parts.join(", ").replace(".000", "")
    };
    let mut differing = Vec::new();
    for op in SIZED.iter().chain(UNSIZED.iter()).copied() {
        let (p, g) = (e.cell(posix, op, slot), e.cell(engine, op, slot));
        if g.ops == 0 {
            continue;
        }
        writeln!(
            out,
            "{:<14} {:>12} {:>12}   {}",
            op.name(),
            format!("{:.1} ({:.1})", p.calls_per_op(), p.metadata_per_op()),
            format!("{:.1} ({:.1})", g.calls_per_op(), g.metadata_per_op()),
            describe(engine, op)
        )?;
        for (li, l) in e.layers.iter().enumerate() {
            let c = e.cell(li, op, slot);
            if l.counted && li != posix && li != engine && c.ops > 0 {
                let per = |c: &super::Cell| c.metadata_per_op();
                // Within 1% (and 0.05 calls): the listing cache may miss a
                // little more often under one transport than another.
                if (per(c) - per(g)).abs() > 0.05f64.max(per(g) * 0.01) {
                    differing.push(format!(
                        "{} {}: {:.2} metadata calls per op (engine {:.2})",
                        l.name,
                        op.name(),
                        per(c),
                        per(g)
                    ));
                }
            }
        }
    }
    if differing.is_empty() {
        writeln!(
            out,
            "Every transport made the engine's metadata calls, no more."
        )?;
    } else {
        writeln!(
            out,
            "Transports whose metadata calls differ from the engine's:"
        )?;
        for d in differing {
            writeln!(out, "  {d}")?;
        }
    }
    Ok(())
}

/// CPU µs per op: the calling thread (client) / the rest of the process
/// (the server threads, where the layer has a server).
fn cpu(e: &Explained, out: &mut dyn Write) -> std::io::Result<()> {
    let slot = e.sizes.iter().position(|&s| s > 0).unwrap_or(0);
    writeln!(
        out,
        "\nCPU µs per op, client / server ({} objects for the sized ops):",
        size_label(e.sizes[slot])
    )?;
    let ops = [Op::PutNew, Op::Get, Op::Head, Op::Delete, Op::List];
    write!(out, "{:<13}", "layer")?;
    for op in ops {
        write!(out, " {:>15}", op.name())?;
    }
    writeln!(out, " {:>9}", "requests")?;
    for (li, l) in e.layers.iter().enumerate() {
        write!(out, "{:<13}", l.name)?;
        for op in ops {
            let c = e.cell(li, op, slot);
            write!(
                out,
                " {:>15}",
                format!("{} / {}", us(c.cpu_client_us()), us(c.cpu_server_us()))
            )?;
        }
        writeln!(out, " {:>9}", if l.networked { "1 per op" } else { "0" })?;
    }
    Ok(())
}

/// For the full HTTP stack (and the RPC one): which part of each op's
/// time is the largest.
fn largest(e: &Explained, out: &mut dyn Write) -> std::io::Result<()> {
    let slot = e.sizes.iter().position(|&s| s > 0).unwrap_or(0);
    for top in ["http-chunked", "rpc-unix"] {
        let Some(li) = e.layer_index(top) else {
            continue;
        };
        writeln!(
            out,
            "\nWhere the time of {top} goes ({} objects for the sized ops), and the largest part:",
            size_label(e.sizes[slot])
        )?;
        for op in SIZED.iter().chain(UNSIZED.iter()).copied() {
            if e.cell(li, op, slot).ops == 0 {
                continue;
            }
            let parts = e.breakdown(li, op, slot);
            let total: f64 = parts.iter().map(|(_, v)| v.max(0.0)).sum();
            let Some((name, v)) = parts.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
                continue;
            };
            let shares: Vec<String> = parts
                .iter()
                .rev()
                .map(|(n, v)| format!("{n} {}", us(*v)))
                .collect();
            writeln!(
                out,
                "  {:<14} {:>8} µs = {}; largest: {name} ({:.0}%)",
                op.name(),
                us(e.cell(li, op, slot).median_us()),
                shares.join(" + "),
                100.0 * v.max(0.0) / total.max(f64::MIN_POSITIVE)
            )?;
        }
    }
    Ok(())
}
