//! `s3hpc`: the command line. Thin on purpose: it parses arguments and hands
//! them to the library crates.

mod agent;
mod breadth;
mod bucket;
mod explain;
mod keys;
mod man;
mod probe;

use anyhow::Context;
use clap::{Args, CommandFactory, Parser, Subcommand};
use s3hpc_bench::backend::{Backend, BackendConfig, HttpEndpoint, Libs3Config};
use s3hpc_bench::io500::CapOverrides;
use s3hpc_bench::stop::{signal_name, Interrupted, Stop};
use s3hpc_bench::storage::S3Mode;
use s3hpc_bench::suite::{self, SuiteOptions};
use s3hpc_store::{Durability, EtagPolicy, Layout};
use signal_hook::consts::{SIGINT, SIGTERM};
use std::path::PathBuf;
use std::time::Duration;

mod serve;

/// Like `eprintln!`, but a closed stderr is ignored rather than a panic: a
/// server or a signal thread must outlive the terminal or the parent that
/// started it.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// The no-argument run: two repetitions with a 1.5 s stonewall rather than
/// one with 3 s. Both take the same time (about 45 s on 2 cores, ext4 /tmp),
/// but measured three times each, the per-phase embedded/posix ratios of the
/// two-repetition run varied half as much from run to run (median spread
/// 26 % against 48 %; score total 8 % against 48 %): each repetition pairs
/// the backends under the same conditions, and the median of two pairs with
/// alternating order cancels the order effect one run cannot.
const QUICK_STONEWALL_SECS: f64 = 1.5;
const QUICK_REPEAT: usize = 2;

#[derive(Parser)]
#[command(
    name = "s3hpc",
    version,
    about = "S3 at parallel-file-system speed, and the instrument that measures it"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the arguments does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Benchmarks. Without a subcommand: the IO500 suite over every backend
    /// on a fresh temporary directory, twice (backend order alternating) with
    /// a 1.5 s stonewall, reporting the medians (two to three minutes on 2
    /// cores): steadier ratios than one run with a 3 s stonewall.
    /// Ctrl-C stops it and removes its data.
    Bench(BenchArgs),
    /// Serve the data directory to other processes: the binary RPC gateway
    /// on Unix and/or TCP sockets, and/or S3 over HTTP. Runs until SIGINT or
    /// SIGTERM, then finishes the requests in flight and removes its socket
    /// files.
    Serve(serve::ServeArgs),
    /// Tables and figures from result files of `s3hpc bench --json`: writes
    /// DIR/index.html (self-contained), each figure as PNG and SVG, and the
    /// tables as Markdown; prints the tables. Several files
    /// combine into one report; same-named backends of different files are
    /// told apart as `backend@label` (run.label, or the file's stem).
    Report(ReportArgs),
    /// Where the time of an S3 call goes, layer by layer: the same
    /// operations through POSIX, the engine, libs3, the RPC gateway (Unix,
    /// TCP), HTTP unsigned and SigV4 (and --endpoint), with latency, what
    /// each layer adds, file-system calls per op and CPU per op. Under a
    /// minute with no arguments (a temporary directory; --dir for the file
    /// system to explain).
    Explain(explain::ExplainArgs),
    /// What the file system under DIR can do (O_TMPFILE, renames, links,
    /// xattrs, locks, d_type), the paths the engine takes there, the median
    /// cost of each metadata call, and settings that break read-after-write
    /// across nodes (GlusterFS caching translators, FUSE cache timeouts).
    Probe(probe::ProbeArgs),
    /// Your own S3 keys, from the node's gateway (which knows you by your
    /// Unix socket's credentials): create, list, revoke.
    Keys {
        #[command(subcommand)]
        command: keys::KeysCommand,
    },
    /// Buckets on a data directory and their layouts: create (plain or
    /// packed), list, pack, unpack a packed bucket's objects into files,
    /// compact and check its packs.
    Bucket {
        #[command(subcommand)]
        command: bucket::BucketCommand,
    },
    /// Temporary credentials for a job (AWS_ACCESS_KEY_ID,
    /// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) from the node's gateway:
    /// eval "$(s3hpc creds)".
    Creds(keys::CredsArgs),
    /// Manual pages for every command (s3hpc.1, s3hpc-serve.1, ...), from
    /// the same definitions as --help; or the guide's command-line
    /// reference with --markdown.
    Man(man::ManArgs),
    /// One S3 client driven line by line on stdin (scripts/cluster test).
    #[command(hide = true)]
    Agent(agent::AgentArgs),
}

#[derive(Args)]
struct ReportArgs {
    /// Result files (JSON, schema s3hpc-bench/1).
    #[arg(required = true, value_name = "RESULTS.json")]
    results: Vec<PathBuf>,
    /// Directory for index.html, the figures and the tables.
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
}

#[derive(Args)]
struct BenchArgs {
    #[command(subcommand)]
    suite: Option<Suite>,
}

#[derive(Subcommand)]
enum Suite {
    /// The IO500 phases over POSIX and S3, side by side.
    ///
    /// Ctrl-C or SIGTERM stops the phases at their next operation, removes
    /// the run directory and exits with 130 (SIGINT) or 143 (SIGTERM); a
    /// second signal quits at once and leaves the data.
    Io500(Io500Args),
    #[command(flatten)]
    Breadth(breadth::BreadthSuite),
}

#[derive(Args)]
struct Io500Args {
    /// Backends to compare, in order: posix, embedded, remote (RPC gateway:
    /// --remote, or one started on a private Unix socket), remote-tcp (a
    /// gateway started on TCP loopback), http (S3 REST: --endpoint, or
    /// s3hpc's server started on a loopback port), https (that server over
    /// TLS with a self-signed certificate), libs3 (a libs3 4.x
    /// library: --libs3, --libs3-host).
    #[arg(long, default_value = "posix,embedded,remote", value_parser = parse_backends)]
    backends: BackendList,
    /// Address of a running gateway for the remote backend
    /// (unix:///path/to.sock or s3hpc://host:port). `{host}` in it is
    /// each rank's host name, for one gateway per node (e.g.
    /// unix:/tmp/s3hpc-{host}.sock). Default: the bench starts its own
    /// (one per node under MPI) and stops it afterwards.
    #[arg(long)]
    remote: Option<String>,
    /// Directory to work in (on the file system to measure). It must be empty
    /// or absent (see --allow-nonempty); the bench works in a fresh
    /// subdirectory and removes only that, and --dir itself if it made it.
    #[arg(long)]
    dir: PathBuf,
    /// Seconds each write phase runs before wear-out (IO500 requires 300).
    #[arg(long, default_value_t = 300.0, value_parser = parse_seconds)]
    stonewall: f64,
    /// Write the results as JSON to this file (atomically).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Ranks (threads); default: the number of cores.
    #[arg(long)]
    ranks: Option<usize>,
    /// ETag policy of the engine: md5 or fast.
    #[arg(long, default_value = "fast")]
    etag: EtagPolicy,
    /// none trusts the page cache; fsync makes every PUT durable and fsyncs
    /// POSIX files at close (IOR -e).
    #[arg(long, default_value = "none")]
    durability: Durability,
    /// How S3 backends map files: single-bucket or bucket-per-file.
    #[arg(long, default_value = "single-bucket")]
    s3_mode: S3Mode,
    /// The layout of the S3 backends' buckets: plain (a file per object)
    /// or packed (small objects appended to pack files).
    #[arg(long, default_value = "plain")]
    layout: Layout,
    /// With --layout packed: pack objects up to this size (k, m suffixes;
    /// default 1m, at most 64m). 4m makes ior-easy's transfers appends.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pack_max: Option<u64>,
    /// ior-easy bytes per rank at most (suffixes k, m, g, t). Default 8g.
    /// Caps not given shrink to fit the free space and inodes of --dir (and
    /// free RAM on tmpfs); caps given by hand are kept as given.
    #[arg(long, value_parser = parse_size)]
    ior_easy_max_bytes: Option<u64>,
    /// ior-hard segments (47008 bytes each) per rank at most. Default 50000.
    #[arg(long)]
    ior_hard_max_segments: Option<u64>,
    /// mdtest-easy files per rank at most. Default 1000000.
    #[arg(long)]
    mdtest_easy_max_files: Option<u64>,
    /// mdtest-hard files per rank at most. Default 400000.
    #[arg(long)]
    mdtest_hard_max_files: Option<u64>,
    /// Keep the data and the run directory (skip cleanup).
    #[arg(long)]
    keep: bool,
    /// Work in a fresh subdirectory of a non-empty --dir.
    #[arg(long)]
    allow_nonempty: bool,
    /// Seed of the data pattern (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// Run the whole suite N times, alternating the backend order (a,b then
    /// b,a, ...). The comparison then shows medians, the median ratio to
    /// POSIX and its min-max range: single runs on a busy or small node can
    /// swing by tens of percent.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    repeat: u64,
    /// Free text stored as `run.label` in the JSON.
    #[arg(long)]
    label: Option<String>,
    #[command(flatten)]
    http: HttpArgs,
}

/// Where the http backend sends its requests: `--endpoint` with its
/// credentials, or (without it) an s3hpc server the bench starts.
#[derive(Args, Clone)]
pub(crate) struct HttpArgs {
    /// S3 endpoint of the http backend (e.g. http://127.0.0.1:9000 for
    /// MinIO). Without it the backend starts s3hpc's server on a free
    /// loopback port over the run directory.
    #[arg(long)]
    endpoint: Option<String>,
    #[command(flatten)]
    keys: Credentials,
    /// The libs3 backend's library: any libs3 4.x build (default: s3hpc's
    /// libs3.so.4 next to this binary).
    #[arg(long, value_name = "PATH")]
    libs3: Option<PathBuf>,
    /// The host the libs3 backend passes to its library (default:
    /// file://<run dir>); an HTTP host is signed with --access-key,
    /// --secret-key and --region. `{host}` is replaced as in --remote.
    #[arg(long, value_name = "HOST")]
    libs3_host: Option<String>,
}

/// Who to sign as at `--endpoint`.
#[derive(Args, Clone)]
pub(crate) struct Credentials {
    /// Signing region for --endpoint.
    #[arg(long, default_value = "us-east-1")]
    region: String,
    /// Access key for --endpoint (default: S3HPC_ACCESS_KEY).
    #[arg(long, env = "S3HPC_ACCESS_KEY", hide_env_values = true)]
    access_key: Option<String>,
    /// Secret key for --endpoint (default: S3HPC_SECRET_KEY).
    #[arg(long, env = "S3HPC_SECRET_KEY", hide_env_values = true)]
    secret_key: Option<String>,
}

impl Credentials {
    /// `url` signed with these credentials, which it needs.
    pub(crate) fn endpoint(&self, url: &str) -> anyhow::Result<HttpEndpoint> {
        let (Some(access_key), Some(secret_key)) =
            (self.access_key.clone(), self.secret_key.clone())
        else {
            anyhow::bail!(
                "--endpoint needs credentials: --access-key and --secret-key, or \
                 S3HPC_ACCESS_KEY and S3HPC_SECRET_KEY"
            );
        };
        Ok(HttpEndpoint {
            url: url.to_string(),
            region: self.region.clone(),
            access_key,
            secret_key,
            ca_pem: None,
        })
    }
}

impl HttpArgs {
    /// The http backend's target: `--endpoint` with its credentials, or none.
    pub(crate) fn endpoint(&self) -> anyhow::Result<Option<HttpEndpoint>> {
        self.endpoint
            .as_deref()
            .map(|url| self.keys.endpoint(url))
            .transpose()
    }

    /// The libs3 backend's library, host and keys.
    pub(crate) fn libs3(&self) -> Libs3Config {
        Libs3Config {
            library: self.libs3.clone(),
            host: self.libs3_host.clone(),
            region: self.keys.region.clone(),
            access_key: self.keys.access_key.clone().unwrap_or_default(),
            secret_key: self.keys.secret_key.clone().unwrap_or_default(),
        }
    }
}

/// `--backends` as one comma-separated value (a plain `Vec` would make clap
/// expect the option repeated).
#[derive(Clone)]
pub(crate) struct BackendList(pub(crate) Vec<Backend>);

pub(crate) fn parse_backends(s: &str) -> Result<BackendList, String> {
    Backend::parse_list(s).map(BackendList)
}

pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_lowercase() {
                'k' => 1u64 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                't' => 1 << 40,
                _ => return Err(format!("unknown size suffix in {s:?}: use k, m, g or t")),
            };
            (&s[..i], m)
        }
        _ => (s, 1),
    };
    let n: u64 = num.parse().map_err(|_| format!("not a size: {s:?}"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("size too large: {s:?}"))
}

/// A time in seconds: a plain number (`2.5`), or a duration as warp and Go
/// write it (`3s`, `1m30s`, `500ms`), parsed by humantime.
pub(crate) fn parse_seconds(s: &str) -> Result<f64, String> {
    let s = s.trim();
    if let Ok(n) = s.parse::<f64>() {
        return Ok(n);
    }
    humantime::parse_duration(s)
        .map(|d| d.as_secs_f64())
        .map_err(|e| {
            format!("not a time: {s:?} ({e}); give seconds (2.5) or a duration (3s, 1m30s, 500ms)")
        })
}

fn io500_options(a: Io500Args, stop: &Stop) -> anyhow::Result<SuiteOptions> {
    anyhow::ensure!(
        a.stonewall.is_finite() && a.stonewall > 0.0,
        "--stonewall must be a positive number of seconds"
    );
    let http_endpoint = a.http.endpoint()?;
    let mut o = SuiteOptions::new(a.dir);
    o.backends = a.backends.0;
    o.stonewall = Duration::from_secs_f64(a.stonewall);
    o.json = a.json;
    if let Some(r) = a.ranks {
        o.ranks = r;
    }
    o.config = BackendConfig {
        etag: a.etag,
        durability: a.durability,
        layout: a.layout,
        pack_max: a.pack_max,
        s3_mode: a.s3_mode,
        remote: a.remote,
        http_endpoint,
        node_server: None,
        libs3: a.http.libs3(),
    };
    // Caps given by hand stand; the others still fit the free space.
    o.cap_overrides = CapOverrides {
        ior_easy_bytes_per_rank: a.ior_easy_max_bytes,
        ior_hard_segments_per_rank: a.ior_hard_max_segments,
        mdtest_easy_files_per_rank: a.mdtest_easy_max_files,
        mdtest_hard_files_per_rank: a.mdtest_hard_max_files,
    };
    o.keep = a.keep;
    o.allow_nonempty = a.allow_nonempty;
    o.seed = a.seed;
    o.repeat = a.repeat as usize;
    o.stop = stop.clone();
    o.label = a.label;
    o.comm = process_comm();
    if let Some(c) = &o.comm {
        // Under mpirun every process is one rank.
        o.ranks = c.size();
    }
    Ok(o)
}

/// Under mpirun (feature `mpi`) this process's rank: MPI is initialized
/// on the first call.
#[cfg(feature = "mpi")]
pub(crate) fn process_comm() -> Option<std::sync::Arc<dyn s3hpc_bench::comm::Comm>> {
    let c = s3hpc_bench::comm_mpi::world()?;
    Some(c)
}

/// Without the `mpi` feature ranks are always threads; a run under mpirun
/// would only repeat itself in every process, so it is refused.
#[cfg(not(feature = "mpi"))]
pub(crate) fn process_comm() -> Option<std::sync::Arc<dyn s3hpc_bench::comm::Comm>> {
    if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some_and(|n| n != "1") {
        eprintln!(
            "s3hpc: error: started by mpirun, but this build has no MPI support: \
             build with `cargo build --release --features mpi`"
        );
        std::process::exit(2);
    }
    None
}

/// Writes `msg` to stderr in one write, so that the lines of several
/// ranks, which mpirun merges, do not interleave.
fn report(msg: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(msg.as_bytes());
}

/// Ends MPI after a run every rank finished.
fn finalize_ranks() {
    #[cfg(feature = "mpi")]
    s3hpc_bench::comm_mpi::finalize();
}

/// `s3hpc` or, under mpirun, `s3hpc (rank 3)`: every rank reports its own
/// error.
fn who() -> String {
    match std::env::var("OMPI_COMM_WORLD_RANK").or_else(|_| std::env::var("PMIX_RANK")) {
        Ok(r) => format!("s3hpc (rank {r})"),
        Err(_) => "s3hpc".to_string(),
    }
}

/// `s3hpc bench`: every backend, a fresh temporary directory (removed
/// afterwards), a short stonewall.
fn quick_bench(stop: &Stop) -> anyhow::Result<()> {
    anyhow::ensure!(
        process_comm().is_none(),
        "under mpirun name the benchmark and a directory every rank sees: \
         `s3hpc bench io500 --dir /shared/dir` (or mdworkbench, warp, ..., all)"
    );
    let tmp = tempfile::Builder::new()
        .prefix("s3hpc-bench-")
        .tempdir()
        .context("creating a temporary directory")?;
    let mut o = SuiteOptions::new(tmp.path().to_path_buf());
    o.stonewall = Duration::from_secs_f64(QUICK_STONEWALL_SECS);
    o.repeat = QUICK_REPEAT;
    o.stop = stop.clone();
    eprintln!(
        "s3hpc: IO500 phases over {} in {} with {} ranks, stonewall {QUICK_STONEWALL_SECS} s, \
         {QUICK_REPEAT} repetitions (use `s3hpc bench io500` for more)",
        o.backends
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", "),
        tmp.path().display(),
        o.ranks
    );
    suite::run(&o, &mut std::io::stdout().lock())?;
    tmp.close().context("removing the temporary directory")
}

/// Ctrl-C and SIGTERM end a run cleanly: the first one sets the bench's stop
/// flag (the phases stop at their next operation, the run directory is
/// removed, and the process exits with 128 + the signal: 130 for SIGINT);
/// a second one quits at once, leaving the data.
///
/// Why `signal-hook`: it is the maintained, widely used crate for Unix
/// signals, and its `Signals` iterator delivers them to an ordinary thread
/// through a self-pipe. So the reaction (setting the flag, printing what
/// happens next, the second-signal exit) is plain Rust rather than code that
/// must be async-signal-safe, and one handler covers SIGINT and SIGTERM with
/// the signal's number (`ctrlc` needs a feature for SIGTERM and does not say
/// which signal came, which the exit status needs).
fn stop_on_signals(stop: &Stop, serving: bool) -> anyhow::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("installing the SIGINT/SIGTERM handler")?;
    let stop = stop.clone();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if stop.requested().is_some() {
                    say!(
                        "s3hpc: {} again: quitting at once; the run directory is left as it is",
                        signal_name(sig)
                    );
                    std::process::exit(128 + sig);
                }
                stop.request(sig);
                // The server says itself what it does next.
                if !serving {
                    say!(
                        "s3hpc: {} received: stopping at the next operation and removing the \
                         run directory (send it again to quit at once and leave the data)",
                        signal_name(sig)
                    );
                }
            }
        })
        .context("starting the signal thread")?;
    Ok(())
}

fn main() {
    let cli = Cli::parse();
    let stop = Stop::new();
    let serving = matches!(cli.command, Command::Serve(_));
    let r = stop_on_signals(&stop, serving).and_then(|()| match cli.command {
        Command::Bench(BenchArgs { suite: None }) => quick_bench(&stop),
        Command::Bench(BenchArgs {
            suite: Some(Suite::Io500(a)),
        }) => io500_options(a, &stop)
            .and_then(|o| suite::run(&o, &mut std::io::stdout().lock()).map(|_| ())),
        Command::Bench(BenchArgs {
            suite: Some(Suite::Breadth(b)),
        }) => breadth::run(b, &stop),
        Command::Serve(a) => serve::run(a, &stop),
        Command::Explain(a) => explain::run(a, &stop),
        Command::Agent(a) => agent::run(a),
        Command::Man(a) => man::run(a, Cli::command()),
        Command::Keys { command } => keys::keys(command),
        Command::Creds(a) => keys::creds(a),
        Command::Bucket { command } => bucket::run(command).map(|code| {
            if code != 0 {
                std::process::exit(code);
            }
        }),
        Command::Probe(a) => probe::run(a, &mut std::io::stdout().lock()),
        Command::Report(a) => {
            s3hpc_report::run(&a.results, &a.output, &mut std::io::stdout().lock()).map(|_| ())
        }
    });
    // A failed run leaves MPI as it is: a rank exiting without finalizing
    // makes mpirun end the others, wherever they wait.
    if let Err(e) = r {
        if let Some(i) = e.downcast_ref::<Interrupted>() {
            // The outermost message says what was cleaned up.
            report(&format!("{}: {e}\n", who()));
            std::process::exit(i.exit_code());
        }
        report(&format!("{}: error: {e:#}\n", who()));
        std::process::exit(1);
    }
    finalize_ranks();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("2m"), Ok(2 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("123"), Ok(123));
        assert!(parse_size("1x").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn seconds() {
        assert_eq!(parse_seconds("2.5"), Ok(2.5));
        assert_eq!(parse_seconds("3s"), Ok(3.0));
        assert_eq!(parse_seconds("1m30s"), Ok(90.0));
        assert_eq!(parse_seconds("500ms"), Ok(0.5));
        assert!(parse_seconds("3 parsecs").is_err());
        // warp's own syntax reaches the warp options.
        let cli = Cli::try_parse_from(["s3hpc", "bench", "warp", "mixed", "--duration", "3s"]);
        assert!(cli.is_ok(), "{:?}", cli.err());
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
