//! `s3hpc explain`: where the time of an S3 call goes, layer by layer.
//!
//! The same fixed operations (PUT new, PUT overwrite, GET, ranged GET,
//! HEAD, HEAD of a missing key, DELETE, LIST of 1000 keys, a 3-part
//! multipart upload) run through each layer in turn: POSIX calls alone, the
//! engine in-process, the libs3 ABI, the RPC gateway over a Unix socket and
//! over TCP, the HTTP server unsigned and signed, and any external endpoint.
//! Each op runs through every layer in turn, the layer order alternating
//! from op to op, with repetitions. For each op and layer: median and
//! p99 latency, the time it adds over the layer below, the file-system
//! calls per op by kind (counted by the engine, `s3hpc_store::fscalls`),
//! CPU per op in the calling thread and in the rest of the process (the
//! servers), and S3 requests on the wire.

pub mod layers;
mod ops;
mod table;
pub use table::size_label;

use crate::backend::{BackendConfig, HttpEndpoint};
use crate::latency::Latency;
use crate::output::json::{check_destination, write_atomic, SCHEMA};
use crate::results::{rfc3339, VERSION};
use crate::rundir::{self, RunDir};
use crate::stop::Stop;
use anyhow::Context;
use layers::{Exec, Layer};
pub use ops::Op;
use s3hpc_store::fscalls::{self, Counts, Kind};
use s3hpc_store::{MdsRequestCounter, MdsRequests};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone)]
pub struct ExplainParams {
    /// Where the layers' data roots go (a fresh subdirectory); `None`: a
    /// temporary directory.
    pub dir: Option<PathBuf>,
    pub allow_nonempty: bool,
    /// Object sizes of the sized ops (PUT, GET, HEAD, DELETE).
    pub sizes: Vec<u64>,
    /// Repetitions, alternating the layer order.
    pub repeat: usize,
    /// Ops of each kind per layer and repetition for small objects (fewer
    /// for large ones, so each batch moves at most 64 MiB).
    pub batch: usize,
    /// Keys in the listed prefix.
    pub list_keys: usize,
    /// External S3 endpoints, measured after s3hpc's own layers.
    pub endpoints: Vec<HttpEndpoint>,
    /// Only these layers (see [`layer_names`]); `None`: all.
    pub layers: Option<Vec<String>>,
    pub config: BackendConfig,
    pub json: Option<PathBuf>,
    pub label: Option<String>,
    pub stop: Stop,
}

impl Default for ExplainParams {
    fn default() -> Self {
        ExplainParams {
            dir: None,
            allow_nonempty: false,
            sizes: vec![0, 3901, 47008, 2 << 20],
            repeat: 3,
            batch: 100,
            list_keys: 1000,
            endpoints: Vec::new(),
            layers: None,
            config: BackendConfig::default(),
            json: None,
            label: None,
            stop: Stop::new(),
        }
    }
}

/// The layers `ExplainParams::layers` may name: s3hpc's own, and `ext1`,
/// `ext2`, ... for the external endpoints.
pub fn layer_names() -> Vec<&'static str> {
    layers::names()
}

/// What one (layer, op, size) accumulated over the repetitions.
#[derive(Clone, Default)]
pub struct Cell {
    pub latency: Latency,
    pub ops: u64,
    pub seconds: f64,
    pub calls: Counts,
    pub cpu_thread: Duration,
    pub cpu_process: Duration,
    /// The metadata-server requests the file system's client counted for
    /// these ops, where it counts them (ceph-fuse); None elsewhere.
    pub mds: Option<MdsRequests>,
}

impl Cell {
    pub fn median_us(&self) -> f64 {
        self.latency.quantile(0.5) * 1e6
    }

    pub fn p99_us(&self) -> f64 {
        self.latency.quantile(0.99) * 1e6
    }

    /// File-system calls per op of `kind`.
    pub fn per_op(&self, kind: Kind) -> f64 {
        self.calls.get(kind) as f64 / self.ops.max(1) as f64
    }

    pub fn calls_per_op(&self) -> f64 {
        self.calls.total() as f64 / self.ops.max(1) as f64
    }

    pub fn metadata_per_op(&self) -> f64 {
        self.calls.metadata() as f64 / self.ops.max(1) as f64
    }

    /// Metadata-server requests per op, where the client counts them.
    pub fn mds_per_op(&self) -> Option<f64> {
        self.mds.map(|m| m.count as f64 / self.ops.max(1) as f64)
    }

    /// Microseconds of metadata-server replies per op, as the client timed them.
    pub fn mds_us_per_op(&self) -> Option<f64> {
        self.mds.map(|m| m.seconds * 1e6 / self.ops.max(1) as f64)
    }

    pub fn cpu_client_us(&self) -> f64 {
        self.cpu_thread.as_secs_f64() * 1e6 / self.ops.max(1) as f64
    }

    /// The rest of the process: the server threads of the layers that
    /// have one.
    pub fn cpu_server_us(&self) -> f64 {
        self.cpu_process
            .saturating_sub(self.cpu_thread)
            .as_secs_f64()
            * 1e6
            / self.ops.max(1) as f64
    }
}

/// Every measurement of a run, and what it needs to be read.
pub struct Explained {
    pub layers: Vec<LayerInfo>,
    pub sizes: Vec<u64>,
    /// `cells[layer][op][size slot]`; unsized ops use slot 0 only.
    pub cells: Vec<Vec<Vec<Cell>>>,
    pub filesystem: String,
    pub dir: String,
    pub repeat: usize,
}

pub struct LayerInfo {
    pub name: String,
    pub what: String,
    pub base: Option<usize>,
    pub networked: bool,
    pub counted: bool,
}

impl Explained {
    pub fn cell(&self, layer: usize, op: Op, slot: usize) -> &Cell {
        &self.cells[layer][op_index(op)][if op.sized() { slot } else { 0 }]
    }

    /// The µs `layer` adds over its base, at the median.
    pub fn added_us(&self, layer: usize, op: Op, slot: usize) -> Option<f64> {
        let base = self.layers[layer].base?;
        Some(self.cell(layer, op, slot).median_us() - self.cell(base, op, slot).median_us())
    }

    /// The time of `layer`'s op split into what each layer below it adds,
    /// down to the file system: `(part, µs)`, top first. A layer measured
    /// faster than its base (noise, or a cheaper path than POSIX's, such
    /// as the engine's DELETE against POSIX's on ext4) adds 0, and the
    /// file system's part is at most what the layer above it took.
    pub fn breakdown(&self, layer: usize, op: Op, slot: usize) -> Vec<(String, f64)> {
        let mut parts = Vec::new();
        let mut at = layer;
        let mut ceiling = self.cell(layer, op, slot).median_us();
        while let Some(base) = self.layers[at].base {
            let below = self.cell(base, op, slot).median_us().min(ceiling);
            parts.push((part_name(&self.layers[at].name), (ceiling - below).max(0.0)));
            ceiling = below;
            at = base;
        }
        parts.push(("file system".to_string(), ceiling));
        parts
    }

    pub fn layer_index(&self, name: &str) -> Option<usize> {
        self.layers.iter().position(|l| l.name == name)
    }
}

/// What a layer adds, as the breakdown names it.
fn part_name(layer: &str) -> String {
    match layer {
        "engine" => "engine".into(),
        "libs3" => "libs3 ABI".into(),
        "rpc-unix" => "RPC (Unix socket)".into(),
        "rpc-tcp" => "TCP over Unix socket".into(),
        "http" => "HTTP".into(),
        "http-sigv4" => "SigV4".into(),
        "http-chunked" => "chunk signing".into(),
        other => other.into(),
    }
}

fn op_index(op: Op) -> usize {
    Op::ALL.iter().position(|&o| o == op).unwrap_or(0)
}

fn cpu_clock(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The cells of a run, and the file-system client's request counter.
struct Tally {
    cells: Vec<Vec<Vec<Cell>>>,
    mds: Option<MdsRequestCounter>,
}

/// Runs `n` ops, timing each, and adds them to `cell`.
fn measure(
    cell: &mut Cell,
    mds: Option<&MdsRequestCounter>,
    n: usize,
    mut op: impl FnMut(usize) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    // Read outside the timed loop: a question on the client's socket.
    let mds_before = mds.and_then(|m| m.read());
    let calls = fscalls::snapshot();
    let thread = cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID);
    let process = cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID);
    let start = Instant::now();
    for i in 0..n {
        let t = Instant::now();
        op(i)?;
        cell.latency.record(t.elapsed());
    }
    cell.seconds += start.elapsed().as_secs_f64();
    cell.cpu_thread += cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(thread);
    cell.cpu_process += cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID).saturating_sub(process);
    let d = fscalls::snapshot().since(&calls);
    for i in 0..Kind::ALL.len() {
        cell.calls.calls[i] += d.calls[i];
        cell.calls.failed[i] += d.failed[i];
    }
    cell.ops += n as u64;
    if let (Some(before), Some(after)) = (mds_before, mds.and_then(|m| m.read())) {
        let sum = cell.mds.get_or_insert_with(MdsRequests::default);
        sum.count += after.count.saturating_sub(before.count);
        sum.seconds += (after.seconds - before.seconds).max(0.0);
    }
    Ok(())
}

/// Ops per batch for objects of `size`: `batch`, fewer for large objects.
fn batch_for(batch: usize, size: u64) -> usize {
    let cap = (64u64 << 20) / size.max(1);
    (batch as u64).min(cap).max(5) as usize
}

/// Object bytes: a fixed, non-repeating-looking pattern.
fn data(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3])
        .collect()
}

/// Runs `op` `n` times through every layer, on `key(i)` with `body`: the
/// layer order reversed on odd turns.
#[allow(clippy::too_many_arguments)]
fn through_layers(
    layers: &[Layer],
    tally: &mut Tally,
    turn: usize,
    op: Op,
    slot: usize,
    n: usize,
    key: impl Fn(usize) -> String,
    body: &[u8],
    buf: &mut Vec<u8>,
) -> anyhow::Result<()> {
    let count = layers.len();
    for k in 0..count {
        let li = if turn.is_multiple_of(2) {
            k
        } else {
            count - 1 - k
        };
        let layer = &layers[li];
        let cell = &mut tally.cells[li][op_index(op)][slot];
        measure(cell, tally.mds.as_ref(), n, |i| {
            layer.exec.run(op, &key(i), body, buf)
        })
        .with_context(|| format!("{} through layer {}", op.name(), layer.name))?;
    }
    Ok(())
}

/// One repetition: each op in turn through every layer, the order of the
/// layers alternating from op to op. A slow spell of the machine (a journal
/// commit, a stolen core) then falls on several layers' samples, not on one
/// layer's whole batch, which made single cells swing by tens of µs.
fn run_rep(
    p: &ExplainParams,
    layers: &[Layer],
    rep: usize,
    tally: &mut Tally,
    part: &[u8],
) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    let mut turn = rep;
    for (slot, &size) in p.sizes.iter().enumerate() {
        let body = data(size as usize);
        let n = batch_for(p.batch, size);
        for op in Op::SIZED {
            if op == Op::GetRange && size == 0 {
                continue; // no byte to ask for
            }
            p.stop.check()?;
            let key = |i| format!("obj/{slot}-{rep}-{i}");
            through_layers(layers, tally, turn, op, slot, n, key, &body, &mut buf)?;
            turn += 1;
        }
    }
    p.stop.check()?;
    let missing = |i| format!("obj/missing-{i}");
    through_layers(
        layers,
        tally,
        turn,
        Op::HeadMissing,
        0,
        p.batch,
        missing,
        &[],
        &mut buf,
    )?;
    let lists = (p.batch / 20).max(3);
    through_layers(
        layers,
        tally,
        turn + 1,
        Op::List,
        0,
        lists,
        |_| String::new(),
        &[],
        &mut buf,
    )?;
    let uploads = 2;
    let upload = |i| format!("mpu/{rep}-{i}");
    through_layers(
        layers,
        tally,
        turn,
        Op::Multipart,
        0,
        uploads,
        upload,
        part,
        &mut buf,
    )?;
    for layer in layers {
        for i in 0..uploads {
            layer.exec.remove(&upload(i))?;
        }
    }
    Ok(())
}

/// Runs the layers, prints the tables to `out` and writes the JSON.
pub fn run(p: &ExplainParams, out: &mut dyn Write) -> anyhow::Result<Explained> {
    anyhow::ensure!(p.repeat > 0, "--repeat must be at least 1");
    anyhow::ensure!(p.batch > 0, "--batch must be at least 1");
    anyhow::ensure!(!p.sizes.is_empty(), "--sizes is empty");
    anyhow::ensure!(
        p.sizes.iter().all(|&s| s <= 1 << 30),
        "object sizes must be at most 1 GiB"
    );
    if let Some(j) = &p.json {
        check_destination(j)?;
    }
    if let Some(want) = &p.layers {
        let known = layer_names();
        for w in want {
            let ext = w
                .strip_prefix("ext")
                .and_then(|n| n.parse::<usize>().ok())
                .is_some_and(|n| (1..=p.endpoints.len()).contains(&n));
            anyhow::ensure!(
                ext || known.contains(&w.as_str()),
                "unknown layer {w:?}: use {} (or ext1.. for --endpoint)",
                known.join(", ")
            );
        }
    }
    let mut tmp = None;
    let mut run_dir = None;
    let root = match &p.dir {
        Some(d) => {
            let rd = RunDir::create(d, p.allow_nonempty)?;
            run_dir.insert(rd).path.clone()
        }
        None => tempfile::Builder::new()
            .prefix("s3hpc-explain-")
            .tempdir()
            .context("creating a temporary directory")
            .map(|t| tmp.insert(t).path().to_path_buf())?,
    };
    let result = run_in(p, &root, out);
    let removed = match run_dir {
        Some(rd) => rd.remove(),
        None => Ok(()),
    };
    let explained = result?;
    removed?;
    Ok(explained)
}

fn run_in(
    p: &ExplainParams,
    root: &std::path::Path,
    out: &mut dyn Write,
) -> anyhow::Result<Explained> {
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let filesystem = rundir::fs_type(root);
    writeln!(
        out,
        "s3hpc explain: {} ({filesystem}), {} repetitions, sizes {}",
        root.display(),
        p.repeat,
        p.sizes
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    // Counting from here on: the run's whole total goes into the JSON, to
    // hold against `strace -f -c` of the same command.
    fscalls::enable(true);
    let whole_run = fscalls::snapshot();
    let want = |name: &str| {
        p.layers
            .as_ref()
            .is_none_or(|l| l.iter().any(|w| w == name))
    };
    let layers = layers::open_all(root, &p.config, &p.endpoints, &want)?;
    for l in &layers {
        l.exec
            .prepare(p.list_keys)
            .with_context(|| format!("preparing layer {}", l.name))?;
        // A key that stays, so the object directories are never emptied
        // and removed between batches (S3 deletes empty "folders").
        for dir in ["obj", "mpu"] {
            if let Exec::Posix { root } = &l.exec {
                std::fs::create_dir_all(root.join(layers::BUCKET).join(dir))?;
            }
            l.exec
                .run(Op::PutNew, &format!("{dir}/keep"), b"", &mut Vec::new())?;
        }
    }
    let part = data(ops::PART_SIZE as usize);
    let mut tally = Tally {
        cells: vec![vec![vec![Cell::default(); p.sizes.len()]; Op::ALL.len()]; layers.len()],
        mds: MdsRequestCounter::for_path(root),
    };
    let measured = (|| {
        for rep in 0..p.repeat {
            run_rep(p, &layers, rep, &mut tally, &part)?;
        }
        anyhow::Ok(())
    })();
    // Also after a failed repetition: an endpoint keeps what a run made.
    let removed: anyhow::Result<()> = layers.iter().try_for_each(|l| {
        l.exec
            .teardown()
            .with_context(|| format!("removing layer {}'s bucket", l.name))
    });
    measured?;
    removed?;
    let explained = Explained {
        layers: layers
            .iter()
            .map(|l| LayerInfo {
                name: l.name.clone(),
                what: l.what.clone(),
                base: l.base,
                networked: l.networked,
                counted: l.counted,
            })
            .collect(),
        sizes: p.sizes.clone(),
        cells: tally.cells,
        filesystem,
        dir: root.display().to_string(),
        repeat: p.repeat,
    };
    drop(layers);
    let counted = fscalls::snapshot().since(&whole_run);
    fscalls::enable(false);
    table::print(&explained, out)?;
    if let Some(path) = &p.json {
        let mut doc = json!({
            "schema": SCHEMA,
            "run": {
                "label": p.label,
                "host": rustix::system::uname().nodename().to_string_lossy(),
                "start_time": rfc3339(unix.as_secs()),
                "unix_time": unix.as_secs(),
                "version": VERSION,
                "ranks": 1,
                "dir": explained.dir,
                "filesystem": explained.filesystem,
                "etag": p.config.etag.as_str(),
                "durability": p.config.durability.as_str(),
                "layout": p.config.layout.as_str(),
                "backends": explained.layers.iter().map(|l| l.name.clone()).collect::<Vec<_>>(),
                "fs_calls_counted": Kind::ALL.iter()
                    .map(|k| (k.name().to_string(), json!(counted.get(*k))))
                    .collect::<Map<String, Value>>(),
                "benchmarks": {"explain": {
                    "sizes": p.sizes, "repeat": p.repeat, "batch": p.batch,
                    "list_keys": p.list_keys,
                    "layers": explained.layers.iter().map(|l| json!({
                        "name": l.name, "what": l.what,
                        "base": l.base.map(|b| explained.layers[b].name.clone()),
                    })).collect::<Vec<_>>(),
                }},
            },
            "results": rows(&explained),
        });
        crate::slurm::record(&mut doc["run"]);
        write_atomic(path, &doc)?;
        writeln!(out, "JSON: {}", path.display())?;
    }
    Ok(explained)
}

/// One result row per (layer, op, size), in the bench's row format with
/// the explain fields beside it.
fn rows(e: &Explained) -> Vec<Value> {
    let mut rows = Vec::new();
    for (li, l) in e.layers.iter().enumerate() {
        for op in Op::ALL {
            let slots: Vec<(usize, Option<u64>)> = if op.sized() {
                e.sizes.iter().copied().map(Some).enumerate().collect()
            } else {
                vec![(0, None)]
            };
            for (slot, size) in slots {
                let c = e.cell(li, op, slot);
                if c.ops == 0 {
                    continue;
                }
                let mut calls = Map::new();
                let mut failed = Map::new();
                for k in Kind::ALL {
                    if c.calls.get(k) > 0 {
                        calls.insert(k.name().into(), json!(c.per_op(k)));
                    }
                    if c.calls.failed(k) > 0 {
                        failed.insert(
                            k.name().into(),
                            json!(c.calls.failed(k) as f64 / c.ops as f64),
                        );
                    }
                }
                rows.push(json!({
                    "benchmark": "explain",
                    "backend": l.name,
                    "phase": op.name(),
                    "value": c.median_us(),
                    "unit": "us",
                    "ops": c.ops,
                    "bytes": size.unwrap_or(0) * c.ops,
                    "seconds": c.seconds,
                    "latency": c.latency.summary(),
                    "iteration": 0,
                    "transport": l.name,
                    "object_size": size,
                    "p99_us": c.p99_us(),
                    "base": l.base.map(|b| e.layers[b].name.clone()),
                    "added_us": e.added_us(li, op, slot),
                    "fs_calls": if l.counted { Value::Object(calls) } else { Value::Null },
                    "fs_failed": if l.counted { Value::Object(failed) } else { Value::Null },
                    "fs_calls_total": l.counted.then(|| c.calls_per_op()),
                    "fs_metadata_calls": l.counted.then(|| c.metadata_per_op()),
                    "mds_requests": c.mds_per_op(),
                    "mds_us": c.mds_us_per_op(),
                    "cpu_client_us": c.cpu_client_us(),
                    "cpu_server_us": c.cpu_server_us(),
                    "requests": if l.networked { op.requests() } else { 0 },
                    "breakdown": e.breakdown(li, op, slot).into_iter()
                        .map(|(part, us)| json!({"part": part, "us": us}))
                        .collect::<Vec<_>>(),
                }));
            }
        }
    }
    rows
}
