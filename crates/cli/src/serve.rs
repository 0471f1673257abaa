//! `s3hpc serve`: the gateway process: the binary RPC and/or S3 over HTTP,
//! over one engine.

use anyhow::Context;
use clap::Args;
use s3hpc_bench::stop::{signal_name, Stop};
use s3hpc_client::EmbeddedClient;
use s3hpc_http::{
    AccessLog, AuthConfig, HttpServer, Metrics, MetricsServer, Observation, Record, Transport,
};
use s3hpc_rpc::server::{Observer, Served};
use s3hpc_rpc::{Address, ClientFor, Gateway, GatewayOptions, Peer};
use s3hpc_store::{
    identity, Durability, EtagPolicy, Identity, Layout, Store, StoreConfig, SweepPace, STALE_AGE,
};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Args, Clone)]
pub struct ServeArgs {
    /// The data directory: each subdirectory is a bucket. Created if missing.
    #[arg(long)]
    data: PathBuf,
    /// Serve the binary RPC on this address: unix:PATH (node-local
    /// clients) or tcp:HOST:PORT. Repeat to listen on several. `{host}` in
    /// it is this host's name, as in the bench's --remote: one command line
    /// starts a gateway per node (srun) on a path several nodes may see.
    #[arg(long = "rpc", value_name = "ADDR", value_parser = rpc_address)]
    rpc: Vec<Address>,
    /// Serve S3 over HTTP on this address, e.g. 127.0.0.1:9000.
    #[arg(long)]
    http: Option<SocketAddr>,
    /// Serve --http as HTTPS with this PEM certificate chain (the
    /// server's certificate first); needs --tls-key.
    #[arg(long, value_name = "CERT.pem", requires_all = ["tls_key", "http"])]
    tls_cert: Option<PathBuf>,
    /// The PEM private key (PKCS#8, PKCS#1 or SEC1) of --tls-cert.
    #[arg(long, value_name = "KEY.pem", requires_all = ["tls_cert", "http"])]
    tls_key: Option<PathBuf>,
    /// HTTP: accept unsigned requests and check no signature at all.
    #[arg(long, conflicts_with = "credentials")]
    anonymous: bool,
    /// HTTP users, one `ACCESS_KEY SECRET_KEY [USER]` per line. USER (a
    /// name, or UID:GID; uid 0 only as `root!` or `0:0!`) is the POSIX
    /// user the key acts as; a key without acts as the server itself (an
    /// administrator). Without the file the key comes from
    /// S3HPC_ACCESS_KEY and S3HPC_SECRET_KEY.
    #[arg(long)]
    credentials: Option<PathBuf>,
    /// The users' own keys (`s3hpc keys create`) and sessions (`s3hpc
    /// creds`): a directory every server of the cluster shares (on the
    /// shared file system), private to the server's user (made so if
    /// absent; a store others may read is refused). Users reach it through
    /// --rpc unix: sockets; --http honours its keys, with new keys and
    /// revocations seen within seconds. SIGHUP also re-reads --credentials.
    #[arg(long, value_name = "DIR")]
    key_store: Option<PathBuf>,
    /// HTTP: answer AssumeRoleWithWebIdentity for ID tokens of this OIDC
    /// issuer (its URL, exactly as its tokens' `iss`), with temporary
    /// credentials of the POSIX user the token names. Needs --key-store
    /// and --oidc-audience.
    #[arg(long, value_name = "URL", requires_all = ["key_store", "oidc_audience", "http"])]
    oidc_issuer: Option<String>,
    /// The `aud` an ID token must carry: the client id s3hpc is registered
    /// as at the issuer. Repeatable.
    #[arg(long, value_name = "CLIENT_ID", requires = "oidc_issuer")]
    oidc_audience: Vec<String>,
    /// The token claim that names the POSIX user: a user name
    /// (preferred_username, or sub where it is the login) or a uid.
    #[arg(long, value_name = "CLAIM", default_value = "preferred_username")]
    oidc_user_claim: String,
    /// HTTP: unsigned requests act as this user (e.g. nobody), so what is
    /// world-readable is public; without it a server with users refuses
    /// them.
    #[arg(long, value_name = "USER", conflicts_with = "anonymous")]
    anonymous_user: Option<String>,
    /// With users: which buckets ListBuckets shows a user. `reachable`
    /// (default): every bucket whose directory it may enter; `owned`: the
    /// buckets it owns, as S3 does (clients and suites that clean up every
    /// bucket they list expect this). The administrator sees all.
    #[arg(long, value_name = "WHICH", default_value = "reachable",
          value_parser = ["reachable", "owned"])]
    list_buckets: String,
    /// RPC over TCP cannot tell who connects: its connections act as this
    /// user. Needed for a TCP --rpc when keys act as users (a Unix
    /// socket's connections act as their peer's user in any case).
    #[arg(long, value_name = "USER")]
    rpc_tcp_as: Option<String>,
    /// HTTP: domain for virtual-host-style addressing (BUCKET.DOMAIN);
    /// repeatable. Path style always works.
    #[arg(long = "virtual-host")]
    virtual_hosts: Vec<String>,
    /// ETag policy: md5 (what S3 clients expect) or fast (no hashing).
    #[arg(long, default_value = "md5")]
    etag: EtagPolicy,
    /// fsync: a PUT is on stable storage before it is acknowledged; none
    /// trusts the page cache.
    #[arg(long, default_value = "fsync")]
    durability: Durability,
    /// The layout of buckets made through this server: plain (a file per
    /// object) or packed (small objects appended to pack files; see `s3hpc
    /// bucket`).
    #[arg(long, default_value = "plain")]
    layout: Layout,
    /// The size up to which packed buckets made through this server pack
    /// objects (k, m suffixes; default 1m, at most 64m).
    #[arg(long, value_name = "SIZE", value_parser = crate::parse_size)]
    pack_max: Option<u64>,
    /// Connections beyond this many are refused.
    #[arg(long, default_value_t = 4096)]
    max_connections: usize,
    /// Serve from N worker threads waiting on their connections with epoll,
    /// instead of a thread per connection (the default, 0): fewer threads
    /// for many mostly idle clients, a little more latency per request.
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Append a line per request to FILE (its format: the guide's "Logs
    /// and metrics"); SIGHUP reopens it, for logrotate.
    #[arg(long, value_name = "FILE")]
    access_log: Option<PathBuf>,
    /// Serve Prometheus metrics at http://ADDR/metrics, e.g.
    /// 127.0.0.1:9100 (requests, bytes and latencies by operation).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    /// Once listening, remove temporaries of killed writers older than this
    /// many seconds (those of exited processes on this host go whatever
    /// their age; younger ones may belong to live writers on other nodes),
    /// walking the data root in the background.
    /// (Temporaries are never visible, so requests need not wait for it.)
    /// The sweep then compacts packed buckets' closed packs that are at
    /// least half dead records (one compaction per bucket on any node).
    #[arg(long, default_value_t = STALE_AGE.as_secs())]
    sweep_age: u64,
    /// The length of a lifecycle rule's day, in seconds. Rules are applied
    /// in the background every 1/24 of it (at least every second); tests
    /// shorten it, as RGW's rgw_lc_debug_interval does.
    #[arg(long, value_name = "SECONDS", default_value_t = 86_400, value_parser = clap::value_parser!(u64).range(1..))]
    lifecycle_day: u64,
    /// Write a bucket's server access logs (PutBucketLogging) into its
    /// target bucket once the oldest record is this many seconds old (or
    /// at shutdown); 0 turns bucket logging off (configurations are kept).
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    bucket_log_roll: u64,
}

/// The share of dead records that makes the sweep compact a closed pack.
const SWEEP_COMPACT_GARBAGE: f64 = 0.5;

/// The share of one thread's time the background sweep may take.
const SWEEP_SHARE: f64 = 0.25;

/// Applies buckets' lifecycle rules on a thread of its own, every 1/24 of a
/// rule's day; each bucket's turn in a period goes to one server of those
/// sharing the file system (see `s3hpc_store::lifecycle`).
fn background_lifecycle(
    store: Arc<Store>,
    day: Duration,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    let period = (day / 24).max(Duration::from_secs(1));
    let spawned = std::thread::Builder::new()
        .name("lifecycle".into())
        .spawn(move || {
            let pace = SweepPace {
                share: SWEEP_SHARE,
                stop: Some(&stop),
            };
            let clock = || s3hpc_store::LifecycleClock {
                now: std::time::SystemTime::now(),
                day,
            };
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                match store.apply_lifecycles(clock, period, &pace) {
                    Ok(d) if d != Default::default() => crate::say!(
                        "s3hpc serve: lifecycle: {} expired, {} noncurrent versions and \
                         markers removed, {} uploads aborted, {} refused (object lock or \
                         permissions), {} buckets failed",
                        d.expired,
                        d.removed,
                        d.aborted,
                        d.refused,
                        d.failed
                    ),
                    Ok(_) => {}
                    Err(e) => crate::say!("s3hpc serve: applying lifecycle rules failed: {e}"),
                }
                while started.elapsed() < period && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        });
    spawned.context("starting the lifecycle thread")
}

/// Sweeps the data root on a thread of its own (see `s3hpc_store::sweep`)
/// and says what it removed.
fn background_sweep(
    store: Arc<Store>,
    older_than: Duration,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    let spawned = std::thread::Builder::new()
        .name("sweep".into())
        .spawn(move || {
            let t = Instant::now();
            let pace = SweepPace {
                share: SWEEP_SHARE,
                stop: Some(&stop),
            };
            match store.sweep_temporaries_paced(older_than, &pace) {
                Ok(n) if stop.load(Ordering::Relaxed) => crate::say!(
                    "s3hpc serve: sweep stopped after {:.1} s; {n} stale temporaries removed",
                    t.elapsed().as_secs_f64()
                ),
                Ok(n) => crate::say!(
                    "s3hpc serve: sweep done in {:.1} s; {n} stale temporaries removed",
                    t.elapsed().as_secs_f64()
                ),
                Err(e) => crate::say!("s3hpc serve: removing stale temporaries failed: {e}"),
            }
            compact_packed_buckets(&store, &stop);
        });
    spawned.context("starting the sweep of stale temporaries")
}

/// Compacts each packed bucket's closed packs that are mostly dead
/// records, and says what that freed.
fn compact_packed_buckets(store: &Store, stop: &AtomicBool) {
    let buckets = match store.list_buckets() {
        Ok(b) => b,
        Err(e) => return crate::say!("s3hpc serve: listing buckets to compact failed: {e}"),
    };
    for b in buckets {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        if !matches!(store.bucket_layout(&b.name), Ok(Layout::Packed)) {
            continue;
        }
        match store.compact_bucket(&b.name, SWEEP_COMPACT_GARBAGE) {
            Ok(done) if done.packs > 0 => crate::say!(
                "s3hpc serve: compacted bucket {}: {} packs rewritten, {} bytes freed",
                b.name,
                done.packs,
                done.bytes_freed
            ),
            Ok(_) => {}
            Err(e) => crate::say!("s3hpc serve: compacting bucket {} failed: {e}", b.name),
        }
    }
}

fn rpc_address(s: &str) -> Result<Address, String> {
    s3hpc_bench::backend::per_host(s).parse()
}

fn http_auth(a: &ServeArgs) -> anyhow::Result<AuthConfig> {
    let auth = http_keys(a)?;
    let auth = match &a.anonymous_user {
        Some(user) => auth.with_anonymous_user(
            Identity::parse(user)
                .map_err(anyhow::Error::msg)
                .context("--anonymous-user")?,
        ),
        None => auth,
    };
    Ok(match a.list_buckets.as_str() {
        "owned" => auth.with_owned_bucket_listing(),
        _ => auth,
    })
}

fn http_keys(a: &ServeArgs) -> anyhow::Result<AuthConfig> {
    if a.anonymous {
        return Ok(AuthConfig::Anonymous);
    }
    if let Some(file) = &a.credentials {
        return AuthConfig::from_file(file).map_err(anyhow::Error::msg);
    }
    let env = AuthConfig::from_env().map_err(anyhow::Error::msg)?;
    if env.is_none() && (a.anonymous_user.is_some() || a.key_store.is_some()) {
        // Only the store's keys, or unsigned requests as the anonymous user.
        return Ok(AuthConfig::Users(Default::default()));
    }
    env.ok_or_else(|| {
        anyhow::anyhow!(
            "no credentials for --http: set {} and {}, give --credentials FILE, or pass \
                 --anonymous to serve without authentication",
            s3hpc_http::ACCESS_KEY_ENV,
            s3hpc_http::SECRET_KEY_ENV
        )
    })
}

/// Whom RPC over TCP acts as: `--rpc-tcp-as`, or the server itself; a
/// server whose keys act as users must say (no one can be told apart on
/// TCP, so it would otherwise hand every network client the server's
/// rights).
fn rpc_tcp_identity(a: &ServeArgs, auth: Option<&AuthConfig>) -> anyhow::Result<Option<Identity>> {
    let tcp = a.rpc.iter().any(|r| !r.is_local());
    if let Some(user) = &a.rpc_tcp_as {
        anyhow::ensure!(
            tcp,
            "--rpc-tcp-as without a --rpc tcp:HOST:PORT to apply to"
        );
        let who = Identity::parse(user)
            .map_err(anyhow::Error::msg)
            .context("--rpc-tcp-as")?;
        return Ok(Some(who));
    }
    anyhow::ensure!(
        !(tcp && auth.is_some_and(AuthConfig::maps_users)),
        "--rpc tcp:... cannot tell who connects, and the keys of --credentials act as \
         users: give --rpc-tcp-as USER (whom TCP connections act as; `root!` for the \
         server's full rights), or serve RPC on a Unix socket, whose connections act as \
         their own user"
    );
    Ok(None)
}

pub fn run(a: ServeArgs, stop: &Stop) -> anyhow::Result<()> {
    anyhow::ensure!(
        !a.rpc.is_empty() || a.http.is_some(),
        "nothing to serve: give --rpc unix:PATH, --rpc tcp:HOST:PORT and/or --http HOST:PORT"
    );
    let keys = a
        .key_store
        .as_deref()
        .map(|dir| s3hpc_keys::KeyStore::open(dir, |m| crate::say!("s3hpc serve: {m}")))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    if let Some(k) = &keys {
        k.spawn_refresher()
            .context("starting the key store's refresher")?;
    }
    let auth = a.http.map(|_| http_auth(&a)).transpose()?;
    let auth = match (auth, &keys) {
        (Some(auth), Some(k)) => Some(auth.with_key_store(k.clone())),
        (auth, _) => auth,
    };
    let auth = match (auth, &a.oidc_issuer) {
        (Some(auth), Some(issuer)) => Some(auth.with_oidc(s3hpc_http::OidcConfig {
            issuer: issuer.clone(),
            audiences: a.oidc_audience.clone(),
            user_claim: a.oidc_user_claim.clone(),
        })),
        (auth, _) => auth,
    };
    let tcp_as = rpc_tcp_identity(&a, auth.as_ref())?;
    if auth.as_ref().is_some_and(AuthConfig::maps_users) || tcp_as.is_some() {
        identity::check_can_switch().map_err(anyhow::Error::msg)?;
    }
    // Read before anything starts, so a bad file stops the server at once.
    let tls = match (&a.tls_cert, &a.tls_key) {
        (Some(cert), Some(key)) => Some(
            s3hpc_http::TlsConfig::from_pem_files(cert, key)
                .context("setting up HTTPS (--tls-cert, --tls-key)")?,
        ),
        _ => None,
    };
    let config = StoreConfig {
        etag: a.etag,
        durability: a.durability,
    };
    let store = Store::open(&a.data, config)
        .with_context(|| format!("opening the data directory {}", a.data.display()))?;
    store.set_default_layout(a.layout);
    if let Some(n) = a.pack_max {
        store.set_default_pack_max(n)?;
    }
    let store = Arc::new(store);
    let access_log = a
        .access_log
        .as_deref()
        .map(AccessLog::open)
        .transpose()?
        .map(Arc::new);
    // Filled once the HTTP server is bound: its keys, for a reload.
    let keyring = Arc::new(std::sync::OnceLock::new());
    let _reopen = reopen_on_sighup(access_log.clone(), reload_keys(&a, keyring.clone()))?;
    let metrics = a.metrics.map(|_| Arc::new(Metrics::new()));
    let metrics_server = match (a.metrics, &metrics) {
        (Some(addr), Some(m)) => Some(
            MetricsServer::bind(addr, m.clone())
                .and_then(MetricsServer::spawn)
                .context("starting the metrics listener (--metrics)")?,
        ),
        _ => None,
    };
    let observer = (access_log.is_some() || metrics.is_some()).then(|| {
        Arc::new(RpcRecorder {
            log: access_log.clone(),
            metrics: metrics.clone(),
        }) as Arc<dyn Observer>
    });
    let opts = GatewayOptions {
        max_connections: a.max_connections,
        workers: a.workers,
        observer,
        keys: keys.clone(),
        ..GatewayOptions::default()
    };
    let gateway = if a.rpc.is_empty() {
        None
    } else {
        let store = store.clone();
        let tcp_as = tcp_as.unwrap_or_default();
        let client_for: ClientFor = Arc::new(move |peer| {
            let who = match peer {
                Peer::Unix { uid, gid, .. } => Identity::of_peer(uid, gid),
                Peer::Tcp => tcp_as.clone(),
            };
            Arc::new(EmbeddedClient::held_as(store.clone(), who))
        });
        Some(Gateway::start_per_peer(client_for, &a.rpc, opts).context("starting the gateway")?)
    };
    let http = match (a.http, auth) {
        (Some(addr), Some(auth)) => Some(
            HttpServer::bind(addr, store.clone(), auth, &a.virtual_hosts)
                .map(|server| match tls {
                    Some(tls) => server.with_tls(tls),
                    None => server,
                })
                .map(|server| match &access_log {
                    Some(log) => server.with_access_log(log.clone()),
                    None => server,
                })
                .map(|server| {
                    let roll = Duration::from_secs(a.bucket_log_roll);
                    server.with_bucket_log_roll((!roll.is_zero()).then_some(roll))
                })
                .map(|server| match &metrics {
                    Some(m) => server.with_metrics(m.clone()),
                    None => server,
                })
                .inspect(|server| {
                    if let Some(k) = server.keyring() {
                        let _ = keyring.set(k);
                    }
                })
                .and_then(HttpServer::spawn)
                .context("starting the HTTP server")?,
        ),
        _ => None,
    };
    let mut listening: Vec<String> = gateway
        .iter()
        .flat_map(|g| {
            g.addresses()
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    listening.extend(http.iter().map(|h| h.endpoint()));
    listening.extend(
        metrics_server
            .iter()
            .map(|m| format!("{}/metrics", m.endpoint())),
    );
    crate::say!(
        "s3hpc serve: {} (etag {}, durability {}; sweeping stale temporaries in the \
         background), listening on {}",
        a.data.display(),
        a.etag.as_str(),
        a.durability.as_str(),
        listening.join(", ")
    );
    let sweep_stop = Arc::new(AtomicBool::new(false));
    let lifecycle = background_lifecycle(
        store.clone(),
        Duration::from_secs(a.lifecycle_day),
        sweep_stop.clone(),
    )?;
    let sweeper = background_sweep(store, Duration::from_secs(a.sweep_age), sweep_stop.clone())?;
    while stop.requested().is_none() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let sig = stop.requested().unwrap_or(0);
    crate::say!(
        "s3hpc serve: {} received: finishing the requests in flight",
        signal_name(sig)
    );
    sweep_stop.store(true, Ordering::Relaxed);
    if let Some(g) = gateway {
        g.stop();
    }
    let _ = sweeper.join();
    let _ = lifecycle.join();
    if let Some(h) = http {
        h.shutdown().context("stopping the HTTP server")?;
    }
    if let Some(m) = metrics_server {
        m.shutdown().context("stopping the metrics listener")?;
    }
    if let Some(log) = &access_log {
        log.sync();
    }
    crate::say!("s3hpc serve: stopped");
    Ok(())
}

/// What SIGHUP does to the keys: re-reads --credentials into the HTTP
/// server's keyring. A file that no longer parses keeps the keys in force,
/// with the reason logged.
fn reload_keys(
    a: &ServeArgs,
    keyring: Arc<std::sync::OnceLock<Arc<s3hpc_http::Keyring>>>,
) -> Option<Box<dyn Fn() + Send>> {
    let file = a.credentials.clone()?;
    let args = a.clone();
    Some(Box::new(move || {
        let Some(keyring) = keyring.get() else { return };
        match http_auth(&args)
            .map_err(|e| e.to_string())
            .and_then(|auth| keyring.reload(&auth))
        {
            Ok(n) => crate::say!("s3hpc serve: SIGHUP: {n} keys from {}", file.display()),
            Err(e) => crate::say!(
                "s3hpc serve: SIGHUP: {} not reloaded, the keys in force stay: {e}",
                file.display()
            ),
        }
    }))
}

/// Reopens the access log on each SIGHUP (logrotate renames the file, then
/// signals) and re-reads the credentials; without either, SIGHUP (a
/// `systemctl reload`) is ignored rather than ending the server. The
/// returned handle ends the thread when dropped.
fn reopen_on_sighup(
    log: Option<Arc<AccessLog>>,
    reload: Option<Box<dyn Fn() + Send>>,
) -> anyhow::Result<SignalsClose> {
    let mut signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGHUP])
        .context("installing the SIGHUP handler")?;
    let handle = signals.handle();
    std::thread::Builder::new()
        .name("sighup".into())
        .spawn(move || {
            for _ in signals.forever() {
                if let Some(log) = &log {
                    log.reopen();
                }
                if let Some(reload) = &reload {
                    reload();
                }
            }
        })
        .context("starting the SIGHUP thread")?;
    Ok(SignalsClose(handle))
}

struct SignalsClose(signal_hook::iterator::Handle);

impl Drop for SignalsClose {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The gateway's requests into the access log and metrics, as the HTTP
/// server's go (transport `rpc`, no access key).
#[derive(Debug)]
struct RpcRecorder {
    log: Option<Arc<AccessLog>>,
    metrics: Option<Arc<Metrics>>,
}

impl Observer for RpcRecorder {
    fn begin(&self) {
        if let Some(m) = &self.metrics {
            m.begin(Transport::Rpc);
        }
    }

    fn end(&self, s: &Served<'_>) {
        if let Some(m) = &self.metrics {
            m.end(&Observation {
                transport: Transport::Rpc,
                operation: s.operation,
                status: s.status,
                bytes_in: s.bytes.0,
                bytes_out: s.bytes.1,
                micros: s.micros,
                // The kernel named a Unix socket's peer; TCP's act as
                // --rpc-tcp-as, with nothing to show who connected.
                key_kind: s.peer.starts_with("unix").then_some("socket"),
            });
        }
        if let Some(log) = &self.log {
            log.record(&Record {
                time: s.time,
                transport: Transport::Rpc.as_str(),
                client: s.peer,
                access_key: None,
                // A request the gateway runs as itself acts as the server.
                uid: s.uid.or(Some(rustix::process::geteuid().as_raw())),
                operation: s.operation,
                bucket: s.target.0,
                key: s.target.1,
                status: s.status,
                bytes_in: s.bytes.0,
                bytes_out: s.bytes.1,
                micros: s.micros,
                request_id: None,
                key_kind: None,
            });
        }
    }
}
