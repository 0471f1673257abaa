//! What the benchmarks beyond IO500 share (mdworkbench, warp, kv, copy,
//! sweep, visibility): the common options, the run directory, one pass per
//! backend, the flat result rows and the JSON file. `bench all` is the same
//! loop over several benchmarks, so it writes one file with every row.

pub mod node;
pub mod objects;
pub mod progress;
pub mod ranks;
pub mod row;

use crate::backend::{Backend, BackendConfig};
use crate::comm::Comm;
use crate::output::json::{check_destination, write_atomic, SCHEMA};
use crate::results::{rfc3339, VERSION};
use crate::rundir::{self, RunDir};
use crate::slurm::{self, SlurmJob};
use crate::stop::Stop;
use crate::suite::default_ranks;
use anyhow::Context;
pub use row::Row;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
    /// Ranks as processes (MPI): this process's rank. `None`: ranks are
    /// `ranks` threads of this process.
    pub comm: Option<Arc<dyn Comm>>,
}

impl HarnessOptions {
    pub fn new() -> HarnessOptions {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        HarnessOptions {
            backends: Backend::defaults(),
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
            comm: None,
        }
    }

    /// Whether this process reports: rank 0 of a process run, or the only
    /// process.
    pub fn is_root(&self) -> bool {
        self.comm.as_ref().is_none_or(|c| c.rank() == 0)
    }

    /// Waits for every process rank (a no-op with thread ranks).
    pub fn barrier(&self) {
        if let Some(c) = &self.comm {
            c.barrier();
        }
    }

    /// Rank 0's `value` on every process rank (as is with thread ranks).
    pub fn from_root(&self, value: &[u8]) -> Vec<u8> {
        match &self.comm {
            Some(c) => c.allgather_bytes(value).swap_remove(0),
            None => value.to_vec(),
        }
    }

    /// The process communicator, if ranks are processes.
    pub fn process_comm(&self) -> Option<&dyn Comm> {
        self.comm.as_deref()
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
    /// How to open the backend: the run's, or under mpirun pointing at
    /// the node's server (`node::backend_config`).
    pub config: BackendConfig,
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
    /// Every rank runs it (each thread rank, or under mpirun each process)
    /// and only rank 0's rows count: the benchmark merges every rank's
    /// results on rank 0 through `opts.comm`/`ranks`.
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
    let mut tmp = None;
    let mut run_dir = None;
    // Every process rank works in rank 0's directory.
    let root = ranks::dir_on_root(opts.process_comm(), || {
        if let Some(j) = &opts.json {
            check_destination(j)?;
        }
        let path = if let Some(r) = &opts.reuse {
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
            anyhow::ensure!(
                opts.comm.is_none(),
                "under mpirun give --dir on a file system every rank sees"
            );
            let t = tempfile::Builder::new()
                .prefix("s3hpc-bench-")
                .tempdir()
                .context("creating a temporary directory")?;
            tmp.insert(t).path().to_path_buf()
        };
        Ok(path)
    })?;
    // Every process rank writes and verifies the same data: rank 0's seed.
    let mut shared_opts = opts.clone();
    let seed = opts.from_root(&opts.seed.to_le_bytes());
    shared_opts.seed = u64::from_le_bytes(seed[..8].try_into().context("seed from rank 0")?);
    let opts = &shared_opts;
    let result = run_in(opts, benches, &root, out);
    // Nobody may still be working in the directory rank 0 removes.
    opts.barrier();
    let keep = opts.keep || opts.reuse.is_some();
    if keep && opts.is_root() {
        eprintln!("s3hpc: kept the run directory {}", root.display());
    }
    // Only rank 0 made the run directory, so only it removes it.
    let removed = match run_dir.filter(|_| !keep) {
        Some(rd) => rd.remove(),
        None => Ok(()),
    };
    // mpirun ends every rank once one exits with an error (an interrupted
    // run): none may exit before rank 0 has cleaned up.
    opts.barrier();
    if result.is_ok() && opts.stop.requested().is_none() {
        removed?;
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
    let root_rank = opts.is_root();
    let mut sink = std::io::sink();
    if root_rank {
        if let Some(job) = SlurmJob::from_env() {
            writeln!(out, "{}", job.line())?;
        }
    }
    for bench in benches {
        for &backend in &opts.backends {
            opts.stop.check()?;
            let dir = root.join(format!("{}.{}", bench.id(), backend.name()));
            let reused = ranks::on_root(opts.process_comm(), || {
                let reused = dir.is_dir();
                if !reused {
                    std::fs::create_dir(&dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                }
                Ok(vec![reused as u8])
            })? == [1];
            let (config, server) =
                node::backend_config(opts.process_comm(), backend, &dir, &opts.config)?;
            let target = Target {
                backend,
                dir,
                reused,
                config,
                opts,
            };
            let out: &mut dyn Write = if root_rank { &mut *out } else { &mut sink };
            let r = bench
                .run(&target, out)
                .with_context(|| format!("{} on backend {backend}", bench.id()))?;
            // The node's server stays until every rank is done with it.
            opts.barrier();
            drop(server);
            rows.extend(r);
            writeln!(out)?;
        }
    }
    if !root_rank {
        return Ok(Vec::new());
    }
    let benchmarks: serde_json::Map<String, Value> =
        benches.iter().map(|b| (b.id(), b.params())).collect();
    let mut doc = json!({
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
    slurm::record(&mut doc["run"]);
    if let Some(path) = &opts.json {
        write_atomic(path, &doc)?;
    }
    Ok(rows)
}
