//! The benchmark subcommands beyond IO500 (mdworkbench, warp, kv, copy,
//! sweep, visibility, all): their arguments and the hand-off to
//! `s3hpc_bench::harness`. They share `CommonArgs`.

use crate::{parse_backends, parse_seconds, parse_size, BackendList};
use clap::{Args, Subcommand};
use s3hpc_bench::backend::BackendConfig;
use s3hpc_bench::harness::{self, Benchmark, HarnessOptions};
use s3hpc_bench::mdworkbench::layout::DatasetMode;
use s3hpc_bench::mdworkbench::{MdWorkbench, MdwParams, Phases};
use s3hpc_bench::objbench;
use s3hpc_bench::objbench::copy::{Copy, CopyParams};
use s3hpc_bench::objbench::kv::{Kv, KvParams};
use s3hpc_bench::objbench::sweep::{Sweep, SweepParams};
use s3hpc_bench::objbench::visibility::{Visibility, VisibilityParams};
use s3hpc_bench::stop::Stop;
use s3hpc_bench::warp::schedule::Distribution;
use s3hpc_bench::warp::{Warp, WarpMode, WarpParams};
use s3hpc_store::{Durability, EtagPolicy, Layout};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Subcommand)]
pub enum BreadthSuite {
    /// MD-Workbench: datasets of small objects used as FIFOs (precreate,
    /// benchmark iterations of stat/read/delete/create, cleanup), printed
    /// in md-workbench's format.
    Mdworkbench(MdwArgs),
    /// warp's mixed (GET/STAT/PUT/DELETE in exact proportions) or get
    /// workload: time-boxed, with warp's report (obj/s, MiB/s, per-op
    /// percentiles, TTFB, per-second throughput).
    Warp(WarpArgs),
    /// Key-value latency: consecutive put, list, get, head, head of missing
    /// keys and delete on N keys per value size; median and stddev per op.
    Kv(KvArgs),
    /// Copy scaling: 1..N workers each moving one large object in and out.
    Copy(CopyArgs),
    /// Write and read throughput against object size (1 KiB to 128 MiB).
    Sweep(SweepArgs),
    /// Delay until files written through the file system are visible over
    /// the backend.
    Visibility(VisibilityArgs),
    /// Every benchmark in sequence (mdworkbench, warp mixed and get, kv,
    /// sweep, copy, visibility) on short defaults, into one results file.
    All(AllArgs),
}

#[derive(Args)]
pub struct KvArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Keys per value size.
    #[arg(long, default_value_t = 1000)]
    keys: u64,
    /// Value sizes (comma-separated, suffixes k, m).
    #[arg(long, default_value = "64,4k,64k", value_parser = parse_size_list)]
    value_sizes: SizeList,
}

#[derive(Args)]
pub struct CopyArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Worker counts to run (comma-separated).
    #[arg(long, default_value = "1,2,4", value_parser = parse_size_list)]
    workers: SizeList,
    /// Size of each worker's object (suffixes k, m, g).
    #[arg(long = "obj-size", default_value = "32m", value_parser = parse_size)]
    obj_size: u64,
    /// Drop the page cache before the reads (needs root; recorded per row).
    #[arg(long)]
    drop_caches: bool,
}

#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Object sizes (comma-separated, suffixes k, m, g).
    #[arg(long, default_value = "1k,4k,16k,64k,256k,1m,4m,16m,64m,128m", value_parser = parse_size_list)]
    sizes: SizeList,
    /// Bytes written per size (at least one object per rank).
    #[arg(long, default_value = "32m", value_parser = parse_size)]
    bytes_per_size: u64,
    /// Time limit of each size's write phase, in seconds.
    #[arg(long, default_value_t = 1.0, value_parser = parse_seconds)]
    seconds_per_size: f64,
}

#[derive(Args)]
pub struct VisibilityArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Objects to write and poll for.
    #[arg(long, default_value_t = 100)]
    objects: u64,
    /// Object size (suffixes k, m).
    #[arg(long = "obj-size", default_value = "64k", value_parser = parse_size)]
    obj_size: u64,
    /// Seconds an object may take to appear before the run fails.
    #[arg(long, default_value_t = 10.0, value_parser = parse_seconds)]
    timeout: f64,
}

#[derive(Args)]
pub struct AllArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Seconds each warp workload runs.
    #[arg(long, default_value_t = 3.0, value_parser = parse_seconds)]
    warp_duration: f64,
}

/// A comma-separated list of sizes or counts.
#[derive(Clone)]
pub struct SizeList(pub Vec<u64>);

pub(crate) fn parse_size_list(s: &str) -> Result<SizeList, String> {
    let v = s
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(parse_size)
        .collect::<Result<Vec<_>, _>>()?;
    if v.is_empty() {
        return Err("empty list".into());
    }
    Ok(SizeList(v))
}

/// Options every benchmark subcommand takes.
#[derive(Args, Clone)]
pub struct CommonArgs {
    /// Backends to run, in order: posix, embedded, remote (RPC gateway:
    /// --remote, or one started on a private Unix socket), remote-tcp,
    /// http (--endpoint, or s3hpc's server), libs3 (--libs3, --libs3-host).
    #[arg(long, default_value = "posix,embedded,remote", value_parser = parse_backends)]
    backends: BackendList,
    /// Address of a running gateway for the remote backend
    /// (unix:///path/to.sock or s3hpc://host:port); `{host}` in it is each
    /// rank's host name (one gateway per node). Default: the bench starts
    /// its own and stops it afterwards.
    #[arg(long)]
    remote: Option<String>,
    /// Directory to work in (on the file system to measure); it must be
    /// empty or absent. Default: a fresh temporary directory, removed after.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Write every result row as JSON to this file (atomically).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Free text stored as `run.label` in the JSON.
    #[arg(long)]
    label: Option<String>,
    /// Ranks (threads); default: the number of cores.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
    ranks: Option<u64>,
    /// ETag policy of the engine: md5 or fast.
    #[arg(long, default_value = "fast")]
    etag: EtagPolicy,
    /// none trusts the page cache; fsync makes every write durable.
    #[arg(long, default_value = "none")]
    durability: Durability,
    /// The layout of the S3 backends' buckets: plain or packed.
    #[arg(long, default_value = "plain")]
    layout: Layout,
    /// With --layout packed: pack objects up to this size (k, m suffixes;
    /// default 1m, at most 64m).
    #[arg(long, value_name = "SIZE", value_parser = crate::parse_size)]
    pack_max: Option<u64>,
    /// Keep the run directory and its data.
    #[arg(long)]
    keep: bool,
    /// Work in a fresh subdirectory of a non-empty --dir.
    #[arg(long)]
    allow_nonempty: bool,
    /// Seed of the data pattern (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    http: crate::HttpArgs,
}

impl CommonArgs {
    fn options(&self, stop: &Stop) -> anyhow::Result<HarnessOptions> {
        let mut o = HarnessOptions::new();
        o.backends = self.backends.0.clone();
        o.dir = self.dir.clone();
        o.json = self.json.clone();
        o.label = self.label.clone();
        if let Some(r) = self.ranks {
            o.ranks = r as usize;
        }
        o.config = BackendConfig {
            etag: self.etag,
            durability: self.durability,
            layout: self.layout,
            pack_max: self.pack_max,
            remote: self.remote.clone(),
            http_endpoint: self.http.endpoint()?,
            libs3: self.http.libs3(),
            ..BackendConfig::default()
        };
        o.keep = self.keep;
        o.allow_nonempty = self.allow_nonempty;
        if let Some(s) = self.seed {
            o.seed = s;
        }
        o.stop = stop.clone();
        o.comm = crate::process_comm();
        if let Some(c) = &o.comm {
            // Under mpirun every process is one rank.
            o.ranks = c.size();
        }
        Ok(o)
    }
}

#[derive(Args)]
pub struct MdwArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Datasets per rank.
    #[arg(short = 'D', long = "datasets", default_value_t = 10)]
    datasets: usize,
    /// Objects per dataset per iteration.
    #[arg(short = 'I', long = "objects", default_value_t = 1000)]
    objects: u64,
    /// Objects precreated per dataset (at least -I).
    #[arg(short = 'P', long = "precreate", default_value_t = 3000)]
    precreate: u64,
    /// Object size in bytes (suffixes k, m).
    #[arg(short = 'S', long = "size", default_value = "3901", value_parser = parse_size)]
    size: u64,
    /// Rank offset: dataset d is read from rank - O*(d+1) and written to
    /// rank + O*(d+1).
    #[arg(short = 'O', long = "offset", default_value_t = 1)]
    offset: usize,
    /// Benchmark iterations.
    #[arg(short = 'R', long = "iterations", default_value_t = 3)]
    iterations: usize,
    /// Run the precreate phase (with -2/-3: only the phases given).
    #[arg(short = '1', long = "precreate-phase")]
    phase1: bool,
    /// Run the benchmark phase.
    #[arg(short = '2', long = "benchmark-phase")]
    phase2: bool,
    /// Run the cleanup phase. Without it the set and the run directory are
    /// kept for later runs (--reuse).
    #[arg(short = '3', long = "cleanup-phase")]
    phase3: bool,
    /// S3 backends: single-bucket (datasets are key prefixes) or
    /// bucket-per-dataset.
    #[arg(long, default_value = "single-bucket")]
    dataset_mode: DatasetMode,
    /// Run on the set a run without -3 kept: the run directory it printed.
    #[arg(long)]
    reuse: Option<PathBuf>,
}

impl MdwArgs {
    fn benchmark(&self) -> MdWorkbench {
        let any = self.phase1 || self.phase2 || self.phase3;
        MdWorkbench {
            params: MdwParams {
                datasets: self.datasets,
                per_iteration: self.objects,
                precreate: self.precreate,
                size: self.size as usize,
                offset: self.offset,
                iterations: self.iterations,
                phases: if any {
                    Phases {
                        precreate: self.phase1,
                        benchmark: self.phase2,
                        cleanup: self.phase3,
                    }
                } else {
                    Phases::ALL
                },
                dataset_mode: self.dataset_mode,
            },
        }
    }
}

#[derive(Args, Clone)]
pub struct WarpArgs {
    /// The workload: mixed or get.
    mode: WarpMode,
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    opts: WarpOpts,
}

/// warp's options (shared by `bench warp` and `bench all`).
#[derive(Args, Clone)]
pub struct WarpOpts {
    /// Seconds to run (after the prepare step).
    #[arg(long = "duration", default_value_t = 5.0, value_parser = parse_seconds)]
    warp_duration: f64,
    /// Concurrent operations (threads).
    #[arg(long = "concurrent", default_value_t = 4)]
    concurrent: usize,
    /// Object size (suffixes k, m, g).
    #[arg(long = "obj-size", default_value = "1m", value_parser = parse_size)]
    obj_size: u64,
    /// Objects uploaded before the run (the pool).
    #[arg(long = "objects", default_value_t = 200)]
    warp_objects: usize,
    /// mixed: relative weight of GETs.
    #[arg(long, default_value_t = 45.0)]
    get_distrib: f64,
    /// mixed: relative weight of STATs.
    #[arg(long, default_value_t = 30.0)]
    stat_distrib: f64,
    /// mixed: relative weight of PUTs.
    #[arg(long, default_value_t = 15.0)]
    put_distrib: f64,
    /// mixed: relative weight of DELETEs (at most that of PUTs).
    #[arg(long, default_value_t = 10.0)]
    delete_distrib: f64,
    /// get: random ranged GETs instead of whole objects.
    #[arg(long)]
    range: bool,
    /// Stop after this many operations even before --duration.
    #[arg(long)]
    max_ops: Option<u64>,
}

impl WarpOpts {
    fn benchmark(&self, mode: WarpMode) -> anyhow::Result<Warp> {
        anyhow::ensure!(
            self.warp_duration.is_finite() && self.warp_duration > 0.0,
            "--duration must be a positive number of seconds"
        );
        let mut p = WarpParams::new(mode);
        p.duration = Duration::from_secs_f64(self.warp_duration.min(1e6));
        p.concurrency = self.concurrent;
        p.object_size = self.obj_size;
        p.objects = self.warp_objects;
        p.distribution = Distribution {
            get: self.get_distrib,
            stat: self.stat_distrib,
            put: self.put_distrib,
            delete: self.delete_distrib,
        };
        p.range = self.range;
        p.max_ops = self.max_ops;
        p.validate()?;
        Ok(Warp { params: p })
    }
}

pub fn run(suite: BreadthSuite, stop: &Stop) -> anyhow::Result<()> {
    let out = &mut std::io::stdout().lock();
    match suite {
        BreadthSuite::Mdworkbench(a) => {
            let b = a.benchmark();
            b.params.validate()?;
            let mut o = a.common.options(stop)?;
            o.reuse = a.reuse.clone();
            // A set without cleanup is kept for the next run.
            o.keep |= !b.params.phases.cleanup;
            harness::run(&o, &[&b as &dyn Benchmark], out)?;
        }
        BreadthSuite::Warp(a) => {
            let b = a.opts.benchmark(a.mode)?;
            harness::run(&a.common.options(stop)?, &[&b as &dyn Benchmark], out)?;
        }
        BreadthSuite::Kv(a) => {
            let b = Kv {
                params: KvParams {
                    keys: a.keys,
                    value_sizes: a.value_sizes.0,
                },
            };
            b.params.validate()?;
            harness::run(&a.common.options(stop)?, &[&b as &dyn Benchmark], out)?;
        }
        BreadthSuite::Copy(a) => {
            let b = Copy {
                params: CopyParams {
                    workers: a.workers.0.iter().map(|&w| w as usize).collect(),
                    object_size: a.obj_size,
                    drop_caches: a.drop_caches,
                },
            };
            b.params.validate()?;
            harness::run(&a.common.options(stop)?, &[&b as &dyn Benchmark], out)?;
        }
        BreadthSuite::Sweep(a) => {
            let b = Sweep {
                params: SweepParams {
                    sizes: a.sizes.0,
                    budget: a.bytes_per_size,
                    max_seconds: a.seconds_per_size,
                },
            };
            b.params.validate()?;
            harness::run(&a.common.options(stop)?, &[&b as &dyn Benchmark], out)?;
        }
        BreadthSuite::Visibility(a) => {
            let b = Visibility {
                params: VisibilityParams {
                    objects: a.objects,
                    object_size: a.obj_size,
                    timeout: a.timeout,
                },
            };
            b.params.validate()?;
            harness::run(&a.common.options(stop)?, &[&b as &dyn Benchmark], out)?;
        }
        BreadthSuite::All(a) => {
            let duration = objbench::seconds("--warp-duration", a.warp_duration)?;
            let warp = |mode| {
                let mut p = WarpParams::new(mode);
                p.duration = duration;
                Warp { params: p }
            };
            let (mixed, get) = (warp(WarpMode::Mixed), warp(WarpMode::Get));
            // Shorter than each benchmark's own defaults: the whole
            // sequence stays around a minute on 2 cores.
            let mdw = MdWorkbench {
                params: MdwParams {
                    per_iteration: 300,
                    precreate: 600,
                    iterations: 2,
                    ..MdwParams::default()
                },
            };
            let kv = Kv {
                params: KvParams {
                    keys: 300,
                    ..KvParams::default()
                },
            };
            let sweep = Sweep {
                params: SweepParams {
                    sizes: vec![1 << 10, 16 << 10, 256 << 10, 4 << 20, 64 << 20],
                    budget: 16 << 20,
                    max_seconds: 0.5,
                },
            };
            let copy = Copy {
                params: CopyParams {
                    object_size: 16 << 20,
                    ..CopyParams::default()
                },
            };
            let vis = Visibility {
                params: VisibilityParams::default(),
            };
            let all: [&dyn Benchmark; 7] = [&mdw, &mixed, &get, &kv, &sweep, &copy, &vis];
            harness::run(&a.common.options(stop)?, &all, out)?;
        }
    }
    Ok(())
}
