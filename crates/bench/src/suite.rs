//! A whole run: the IO500 suite over each backend in turn, `repeat` times,
//! in a run directory the bench owns; each backend cleans up after itself.
//! Then one comparison table of the medians over the repetitions, and the
//! JSON.

use crate::backend::{Backend, BackendConfig};
use crate::comm::Comm;
use crate::harness::node;
use crate::harness::ranks::{dir_on_root, on_root};
use crate::io500::score::score;
use crate::io500::{self, CapOverrides, Caps, Io500Params, PhaseHook};
use crate::latency::take_u64;
use crate::output::{json, text};
use crate::results::{rfc3339, BackendReport, RunInfo, VERSION};
use crate::rundir::{self, RunDir};
use crate::slurm::SlurmJob;
use crate::stop::Stop;
use crate::summary::{self, Summary};
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What to run, and where.
#[derive(Clone)]
pub struct SuiteOptions {
    pub backends: Vec<Backend>,
    pub dir: PathBuf,
    pub ranks: usize,
    pub stonewall: Duration,
    pub config: BackendConfig,
    pub caps: Caps,
    /// Lower the caps to fit the free space of `dir` (unless set by hand).
    pub auto_caps: bool,
    /// Caps given by hand, applied after the fitting.
    pub cap_overrides: CapOverrides,
    /// Skip cleanup: the data and the run directory stay.
    pub keep: bool,
    pub allow_nonempty: bool,
    pub json: Option<PathBuf>,
    /// The data pattern's seed; by default from the clock.
    pub seed: Option<u64>,
    pub after_phase: Option<PhaseHook>,
    /// How many times the whole suite runs; the backend order alternates
    /// from one repetition to the next (a,b then b,a) so that neither
    /// always runs first, on a cold or a warm machine.
    pub repeat: usize,
    /// Set (by a signal handler) to end the run early: the phases stop at
    /// their next operation, the run directory is removed and `run` returns
    /// an `Interrupted` error.
    pub stop: Stop,
    /// Free text stored as `run.label`.
    pub label: Option<String>,
    /// Ranks as processes (MPI): this process's rank; `ranks` is then the
    /// number of processes. `None`: ranks are `ranks` threads.
    pub comm: Option<Arc<dyn Comm>>,
}

impl SuiteOptions {
    pub fn new(dir: PathBuf) -> SuiteOptions {
        SuiteOptions {
            backends: Backend::defaults(),
            dir,
            ranks: default_ranks(),
            stonewall: Duration::from_secs(300),
            config: BackendConfig::default(),
            caps: Caps::default(),
            auto_caps: true,
            cap_overrides: CapOverrides::default(),
            keep: false,
            allow_nonempty: false,
            json: None,
            seed: None,
            after_phase: None,
            repeat: 1,
            stop: Stop::new(),
            label: None,
            comm: None,
        }
    }
}

pub fn default_ranks() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub struct SuiteReport {
    pub run: RunInfo,
    /// Every backend of every repetition, in the order they ran.
    pub backends: Vec<BackendReport>,
    /// Medians and ranges over the repetitions.
    pub summary: Summary,
    pub json: serde_json::Value,
}

/// Runs the suite, printing as it goes to `out`.
pub fn run(opts: &SuiteOptions, out: &mut dyn Write) -> anyhow::Result<SuiteReport> {
    anyhow::ensure!(opts.ranks > 0, "--ranks must be at least 1");
    anyhow::ensure!(!opts.backends.is_empty(), "no backend selected");
    anyhow::ensure!(opts.repeat > 0, "--repeat must be at least 1");
    opts.stop.check()?;
    let comm = opts.comm.as_deref();
    let mut made = None;
    let path = dir_on_root(comm, || {
        if let Some(j) = &opts.json {
            json::check_destination(j)?;
        }
        let rd = made.insert(RunDir::create(&opts.dir, opts.allow_nonempty)?);
        Ok(rd.path.clone())
    })?;
    let result = run_in(opts, &path, out);
    // Only rank 0 cleans up, once every rank is done, and no rank exits
    // before it has (mpirun ends every rank once one exits with an error).
    let barrier = || {
        if let Some(c) = comm {
            c.barrier();
        }
    };
    barrier();
    let cleaned = made.map(|run_dir| {
        if opts.keep {
            Ok(format!(
                "kept the run directory {} (--keep)",
                path.display()
            ))
        } else {
            run_dir
                .remove()
                .map(|()| format!("removed the run directory {}", path.display()))
        }
    });
    barrier();
    let Some(cleaned) = cleaned else {
        opts.stop.check()?;
        return result;
    };
    let cleanup = match cleaned {
        Ok(m) => m,
        Err(e) if result.is_ok() && opts.stop.requested().is_none() => return Err(e),
        Err(e) => format!("{e:#}"),
    };
    // A stop ends the run with `Interrupted`, whatever the phases made of it.
    if let Err(stopped) = opts.stop.check() {
        return Err(anyhow::Error::new(stopped).context(format!("{stopped}; {cleanup}")));
    }
    if opts.keep {
        eprintln!("s3hpc: {cleanup}");
    }
    result
}

fn run_in(opts: &SuiteOptions, run_dir: &Path, out: &mut dyn Write) -> anyhow::Result<SuiteReport> {
    let now = SystemTime::now();
    let unix = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let filesystem = rundir::fs_type(run_dir);
    let free = rundir::free_bytes(run_dir);
    let mut caps = opts.caps;
    let mut lowered = false;
    if opts.auto_caps {
        // Backends run one after another and clean up, so each may use the
        // budget: 40 % of the free space (of RAM too, for tmpfs).
        let mut room = free.unwrap_or(u64::MAX);
        if filesystem == "tmpfs" {
            room = room.min(rundir::mem_available().unwrap_or(u64::MAX));
        }
        lowered = caps.fit(opts.ranks as u64, room / 10 * 4);
        // Inodes are only ours while the run lasts: 60 % of the free ones.
        if let Some(inodes) = rundir::free_inodes(run_dir) {
            lowered |= caps.fit_files(opts.ranks as u64, inodes / 10 * 6);
        }
    }
    opts.cap_overrides.apply(&mut caps);
    let seed = opts
        .seed
        .unwrap_or(unix.as_nanos() as u64 ^ (std::process::id() as u64) << 32);
    // Every process rank runs with rank 0's caps and seed.
    let (caps, lowered, seed) = shared_setup(opts, caps, lowered, seed)?;
    let run = RunInfo {
        label: opts.label.clone(),
        host: rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned(),
        start_time: rfc3339(unix.as_secs()),
        unix_time: unix.as_secs(),
        version: VERSION.to_string(),
        ranks: opts.ranks,
        stonewall_seconds: opts.stonewall.as_secs_f64(),
        dir: opts.dir.display().to_string(),
        run_dir: run_dir.display().to_string(),
        filesystem,
        free_bytes: free,
        etag: opts.config.etag.as_str(),
        durability: opts.config.durability.as_str(),
        layout: opts.config.layout.as_str(),
        pack_max: opts.config.pack_max,
        s3_mode: opts.config.s3_mode.as_str(),
        caps,
        caps_lowered: lowered,
        seed,
        backends: opts.backends.iter().map(|b| b.name().to_string()).collect(),
        repeat: opts.repeat,
        kept: opts.keep,
        slurm: SlurmJob::from_env(),
    };
    let root = opts.comm.as_ref().is_none_or(|c| c.rank() == 0);
    if lowered && root {
        eprintln!(
            "s3hpc: caps lowered to fit the free space of {}: per rank at most {:.2} GiB ior-easy, \
             {} ior-hard segments, {} mdtest-easy and {} mdtest-hard files",
            run.dir,
            caps.ior_easy_bytes_per_rank as f64 / (1u64 << 30) as f64,
            caps.ior_hard_segments_per_rank,
            caps.mdtest_easy_files_per_rank,
            caps.mdtest_hard_files_per_rank
        );
    }

    if root && rundir::ext4_without_journal(run_dir) {
        eprintln!(
            "s3hpc: {} is ext4 without a journal, where every file create scans past the \
             inodes deleted nearby in the last minutes: a backend that runs after another's \
             deletes, or after an earlier run, creates files 10-50x slower than on a fresh \
             disk, and mdtest-hard over S3 (a 0-byte PUT, then an overwriting PUT) pays twice; \
             its write ratios say more about the allocator than about S3 (tmpfs or a journaled \
             file system measures them fairly)",
            run.dir
        );
    }
    let mut reports = Vec::new();
    for iteration in 0..opts.repeat {
        for backend in order(&opts.backends, iteration) {
            opts.stop.check()?;
            let report = run_backend(opts, &run, run_dir, backend, caps, seed, iteration)
                .with_context(|| {
                    format!(
                        "backend {backend}, repetition {}/{}",
                        iteration + 1,
                        opts.repeat
                    )
                })?;
            if root {
                text::backend_block(out, &run, &report)?;
                writeln!(out)?;
            }
            reports.push(report);
        }
    }
    if !root {
        // Rank 0 reports for every rank.
        return Ok(SuiteReport {
            run,
            backends: reports,
            summary: summary::summarize(&[]),
            json: serde_json::Value::Null,
        });
    }
    let summary = summary::summarize(&reports);
    text::comparison(out, &run, &summary)?;
    text::transport_cost(out, &run, &summary)?;
    text::latencies(out, &run, &summary, &reports)?;
    let doc = json::document(&run, &reports, &summary);
    if let Some(path) = &opts.json {
        json::write_atomic(path, &doc)?;
    }
    Ok(SuiteReport {
        run,
        backends: reports,
        summary,
        json: doc,
    })
}

/// The backends of repetition `iteration`: as given in even ones, reversed
/// in odd ones.
pub fn order(backends: &[Backend], iteration: usize) -> Vec<Backend> {
    let mut v = backends.to_vec();
    if iteration % 2 == 1 {
        v.reverse();
    }
    v
}

/// The caps, whether they were lowered, and the seed: rank 0's on every
/// process rank.
fn shared_setup(
    opts: &SuiteOptions,
    caps: Caps,
    lowered: bool,
    seed: u64,
) -> anyhow::Result<(Caps, bool, u64)> {
    let Some(c) = &opts.comm else {
        return Ok((caps, lowered, seed));
    };
    let mine: Vec<u8> = [
        caps.ior_easy_bytes_per_rank,
        caps.ior_hard_segments_per_rank,
        caps.mdtest_easy_files_per_rank,
        caps.mdtest_hard_files_per_rank,
        lowered as u64,
        seed,
    ]
    .iter()
    .flat_map(|v| v.to_le_bytes())
    .collect();
    let root = c.allgather_bytes(&mine).swap_remove(0);
    let mut inp = &root[..];
    let mut next = || take_u64(&mut inp).context("caps from rank 0");
    let caps = Caps {
        ior_easy_bytes_per_rank: next()?,
        ior_hard_segments_per_rank: next()?,
        mdtest_easy_files_per_rank: next()?,
        mdtest_hard_files_per_rank: next()?,
    };
    Ok((caps, next()? != 0, next()?))
}

fn run_backend(
    opts: &SuiteOptions,
    run: &RunInfo,
    run_dir: &Path,
    backend: Backend,
    caps: Caps,
    seed: u64,
    iteration: usize,
) -> anyhow::Result<BackendReport> {
    let comm = opts.comm.as_deref();
    // Fresh for every repetition (with --keep, each one's data stays).
    let name = backend_dir(backend, iteration);
    let dir = run_dir.join(&name);
    on_root(comm, || {
        std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Vec::new())
    })?;
    let (config, server) = node::backend_config(comm, backend, &dir, &opts.config)?;
    let storage = backend.open(&dir, &config)?;
    on_root(comm, || storage.setup().map(|()| Vec::new()))?;
    let mut params = Io500Params::new(
        opts.stonewall,
        caps,
        seed,
        run_dir.join(format!("{name}.timestamp")),
    );
    params.after_phase = opts.after_phase.clone();
    params.stop = opts.stop.clone();
    params.shared_fs = std::fs::File::open(&dir)
        .map(|d| s3hpc_store::FsProfile::probe(std::os::fd::AsFd::as_fd(&d)).shared)
        .unwrap_or(false);
    let results = match comm {
        // Under mpirun this process is one rank.
        Some(c) => io500::run_rank(c, &*storage, &params),
        None => io500::run(&*storage, run.ranks, &params),
    };
    // Clean up whether the phases passed or not; a phase error wins.
    if let Some(c) = comm {
        c.barrier();
    }
    let cleaned = if opts.keep {
        Ok(Vec::new())
    } else {
        on_root(comm, || {
            storage
                .remove_tree("")
                .and_then(|()| storage.teardown())
                .context("cleanup")
                .map(|()| Vec::new())
        })
    };
    let (transport, api) = (storage.transport().to_string(), storage.api());
    // The clients go before the node's server.
    drop(storage);
    drop(server);
    let results = results?;
    cleaned?;
    Ok(BackendReport {
        backend: backend.name().to_string(),
        iteration,
        transport,
        api,
        score: score(&results),
        results,
    })
}

/// The directory, under the run directory, of one backend in one
/// repetition: `<backend>.<iteration>`.
pub fn backend_dir(backend: Backend, iteration: usize) -> String {
    format!("{}.{iteration}", backend.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_alternates() {
        let both = [Backend::Posix, Backend::Embedded];
        assert_eq!(order(&both, 0), both);
        assert_eq!(order(&both, 1), [Backend::Embedded, Backend::Posix]);
        assert_eq!(order(&both, 2), both);
        assert_eq!(order(&both[..1], 1), [Backend::Posix]);
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    }
}
