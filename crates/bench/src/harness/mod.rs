//! What the benchmarks beyond IO500 share (mdworkbench, warp, kv, copy,
//! sweep, visibility): the common options, the run directory, one pass per
//! backend, the flat result rows and the JSON file. `bench all` is the same
//! loop over several benchmarks, so it writes one file with every row.

pub mod objects;
pub mod progress;
pub mod row;

use crate::backend::{Backend, BackendConfig};
use crate::output::json::{write_atomic, SCHEMA};
use crate::rundir::{self, RunDir};
use crate::stop::Stop;
use crate::suite::{default_ranks, rfc3339, VERSION};
use anyhow::Context;
pub use row::Row;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Options every benchmark subcommand takes.
#[derive(Clone)]
pub struct HarnessOptions {
    pub backends: Vec<Backend>,
    /// Where to work; `None`: a fresh temporary directory, removed afterwards.
    pub dir: Option<PathBuf>,
    pub json: Option<PathBuf>,
    /// Free text stored as `run.label`, to tell runs apart in reports.
    pub label: Option<String>,
    pub ranks: usize,
    pub config: BackendConfig,
    pub allow_nonempty: bool,
    /// Leave the run directory and its data.
    pub keep: bool,
    /// Work in this run directory of an earlier `--keep` run instead of a
    /// fresh one (md-workbench's regression runs on a precreated set).
    pub reuse: Option<PathBuf>,
    pub stop: Stop,
    /// Seed of the data pattern.
    pub seed: u64,
}

impl HarnessOptions {
    pub fn new() -> HarnessOptions {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        HarnessOptions {
            backends: Backend::available(),
            dir: None,
            json: None,
            label: None,
            ranks: default_ranks(),
            config: BackendConfig::default(),
            allow_nonempty: false,
            keep: false,
            reuse: None,
            stop: Stop::new(),
            seed: now.as_nanos() as u64 ^ u64::from(std::process::id()) << 32,
        }
    }
}

impl Default for HarnessOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// One backend's place in a run, handed to a benchmark.
pub struct Target<'a> {
    pub backend: Backend,
    /// A directory of its own (empty unless reused).
    pub dir: PathBuf,
    /// Whether `dir` holds an earlier run's data (`--reuse`).
    pub reused: bool,
    pub opts: &'a HarnessOptions,
}

impl Target<'_> {
    /// A row of this backend with the common fields filled in.
    pub fn row(
        &self,
        benchmark: &'static str,
        phase: impl Into<String>,
        unit: &'static str,
    ) -> Row {
        Row::new(benchmark, self.backend, phase, unit)
    }
}

/// A benchmark the harness can run over each backend.
pub trait Benchmark {
    /// `mdworkbench`, `warp`, ... (the rows' `benchmark`).
    fn name(&self) -> &'static str;
    /// Unique within a run (`bench all` runs warp twice): names the
    /// backend directories and the entry under `run.benchmarks`.
    fn id(&self) -> String {
        self.name().to_string()
    }
    /// Its parameters, as recorded under `run.benchmarks`.
    fn params(&self) -> Value;
    /// Runs over one backend, printing its text report to `out`, and
    /// returns its rows. Removes its data unless the options keep it.
    fn run(&self, target: &Target, out: &mut dyn Write) -> anyhow::Result<Vec<Row>>;
}

/// Runs `benches` in order, each over every backend, in one run directory;
/// writes every row into one JSON file.
pub fn run(
    opts: &HarnessOptions,
    benches: &[&dyn Benchmark],
    out: &mut dyn Write,
) -> anyhow::Result<Vec<Row>> {
    anyhow::ensure!(opts.ranks > 0, "--ranks must be at least 1");
    anyhow::ensure!(!opts.backends.is_empty(), "no backend selected");
    opts.stop.check()?;
    let tmp;
    let mut run_dir = None;
    let root: PathBuf = if let Some(r) = &opts.reuse {
        anyhow::ensure!(
            r.is_dir(),
            "--reuse {}: not a directory (give the run directory a --keep run printed)",
            r.display()
        );
        r.clone()
    } else if let Some(d) = &opts.dir {
        let rd = RunDir::create(d, opts.allow_nonempty)?;
        let p = rd.path.clone();
        run_dir = Some(rd);
        p
    } else {
        tmp = tempfile::Builder::new()
            .prefix("s3hpc-bench-")
            .tempdir()
            .context("creating a temporary directory")?;
        tmp.path().to_path_buf()
    };
    let result = run_in(opts, benches, &root, out);
    let keep = opts.keep || opts.reuse.is_some();
    if keep {
        eprintln!("s3hpc: kept the run directory {}", root.display());
        if let Some(rd) = run_dir {
            std::mem::forget(rd);
        }
    } else if let Some(rd) = run_dir {
        let removed = rd.remove();
        if result.is_ok() && opts.stop.requested().is_none() {
            removed?;
        }
    }
    opts.stop.check()?;
    result
}

fn run_in(
    opts: &HarnessOptions,
    benches: &[&dyn Benchmark],
    root: &Path,
    out: &mut dyn Write,
) -> anyhow::Result<Vec<Row>> {
    let unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let mut rows = Vec::new();
    for bench in benches {
        for &backend in &opts.backends {
            opts.stop.check()?;
            let dir = root.join(format!("{}.{}", bench.id(), backend.name()));
            let reused = dir.is_dir();
            if !reused {
                std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            let target = Target {
                backend,
                dir,
                reused,
                opts,
            };
            let r = bench
                .run(&target, out)
                .with_context(|| format!("{} on backend {backend}", bench.id()))?;
            rows.extend(r);
            writeln!(out)?;
        }
    }
    let benchmarks: serde_json::Map<String, Value> =
        benches.iter().map(|b| (b.id(), b.params())).collect();
    let doc = json!({
        "schema": SCHEMA,
        "run": {
            "label": opts.label,
            "host": rustix::system::uname().nodename().to_string_lossy(),
            "start_time": rfc3339(unix.as_secs()),
            "unix_time": unix.as_secs(),
            "version": VERSION,
            "ranks": opts.ranks,
            "dir": root.display().to_string(),
            "filesystem": rundir::fs_type(root),
            "etag": opts.config.etag.as_str(),
            "durability": opts.config.durability.as_str(),
            "s3_mode": opts.config.s3_mode.as_str(),
            "backends": opts.backends.iter().map(|b| b.name()).collect::<Vec<_>>(),
            "benchmarks": benchmarks,
            "seed": opts.seed,
        },
        "results": rows,
    });
    if let Some(path) = &opts.json {
        write_atomic(path, &doc)?;
    }
    Ok(rows)
}
