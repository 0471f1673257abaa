//! The storage stacks a run can compare. Adding one (libs3) means a
//! variant here and, for an S3 transport, an `S3Client`: the S3 mapping
//! itself is shared (`storage::s3`).

use crate::libs3::{Libs3Client, Libs3Target};
use crate::storage::{PosixStorage, S3Mode, S3Storage, StorageApi};
use anyhow::Context;
use s3hpc_client::{EmbeddedClient, HttpClient, HttpClientConfig, S3Client};
use s3hpc_http::{AuthConfig, HttpServer, ServerHandle, TlsConfig};
use s3hpc_rpc::{Address, Gateway, GatewayOptions, RemoteClient};
use s3hpc_store::{Durability, EtagPolicy, Layout, Store, StoreConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The file system directly: the baseline.
    Posix,
    /// S3 through the engine, in this process.
    Embedded,
    /// S3 over the binary RPC to a gateway: the one at `--remote`, or one
    /// the bench starts on a private Unix socket.
    Remote,
    /// The same over TCP loopback, to a gateway the bench starts.
    RemoteTcp,
    /// S3 over HTTP: to s3hpc's server on a loopback port (started for the
    /// run over the run directory), or to `BackendConfig::http_endpoint`.
    Http,
    /// The same over HTTPS: s3hpc's server on a loopback port with a
    /// self-signed certificate made for the run (rcgen), which the
    /// client trusts alone; measures what TLS costs beside `http`.
    Https,
    /// S3 through a libs3 4.x library loaded by dlopen (s3hpc's
    /// libs3.so.4 by default, or the real libs3), to `Libs3Config::host`.
    Libs3,
}

/// Settings that shape a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendConfig {
    pub etag: EtagPolicy,
    pub durability: Durability,
    /// The layout of the buckets S3 backends make (the engine's; POSIX
    /// is unaffected).
    pub layout: Layout,
    /// The size up to which packed buckets pack objects (None: the
    /// engine's default).
    pub pack_max: Option<u64>,
    pub s3_mode: S3Mode,
    /// The gateway of the `remote` backend; `None` starts one. `{host}`
    /// stands for this host's name (`per_host`): one gateway per node.
    pub remote: Option<String>,
    /// Where the `http` backend sends its requests; `None` starts s3hpc's
    /// own server for the run.
    pub http_endpoint: Option<HttpEndpoint>,
    /// Under mpirun: the server another rank of this node started for the
    /// backend (`Backend::start_server`); clients connect to it instead of
    /// starting their own.
    pub node_server: Option<NodeServer>,
    /// The `libs3` backend's library and host.
    pub libs3: Libs3Config,
}

/// A server one rank of a node started for a backend, as the node's
/// other ranks reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeServer {
    /// An RPC gateway's address (`remote`, `remote-tcp`).
    Gateway(String),
    /// s3hpc's HTTP server (`http`).
    Http(HttpEndpoint),
}

/// The `libs3` backend: which library, which host, as whom.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Libs3Config {
    /// A library with the libs3 4.x ABI; `None`: s3hpc's own libs3.so.4
    /// beside the running binary.
    pub library: Option<PathBuf>,
    /// The host string passed to the library; `None`: `file://<run dir>`
    /// with the run's ETag policy and durability.
    pub host: Option<String>,
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
}

impl std::fmt::Debug for Libs3Config {
    // Never print the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} on {:?} as {}",
            self.library, self.host, self.access_key
        )
    }
}

/// An S3 endpoint and who to sign as.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpEndpoint {
    pub url: String,
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
    /// PEM certificates the client trusts for an `https://` URL instead
    /// of the public roots (the self-signed one of the `https` backend).
    pub ca_pem: Option<String>,
}

impl std::fmt::Debug for HttpEndpoint {
    // Never print the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} as {}", self.url, self.access_key)
    }
}

impl Default for BackendConfig {
    fn default() -> Self {
        BackendConfig {
            // No hashing by default: IOR writes no checksums either.
            etag: EtagPolicy::Fast,
            durability: Durability::None,
            layout: Layout::Plain,
            pack_max: None,
            s3_mode: S3Mode::SingleBucket,
            remote: None,
            http_endpoint: None,
            node_server: None,
            libs3: Libs3Config::default(),
        }
    }
}

/// The bucket (or bucket-name prefix) S3 backends work in.
pub const BUCKET: &str = "io500";

impl Backend {
    pub const ALL: &'static [Backend] = &[
        Backend::Posix,
        Backend::Embedded,
        Backend::Remote,
        Backend::RemoteTcp,
        Backend::Http,
        Backend::Https,
        Backend::Libs3,
    ];

    /// What runs when no backend is named: one of each transport (TCP
    /// loopback differs from the Unix socket only in the kernel path).
    pub const DEFAULT: &'static [Backend] = &[
        Backend::Posix,
        Backend::Embedded,
        Backend::Remote,
        Backend::Http,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Posix => "posix",
            Backend::Embedded => "embedded",
            Backend::Remote => "remote",
            Backend::RemoteTcp => "remote-tcp",
            Backend::Http => "http",
            Backend::Https => "https",
            Backend::Libs3 => "libs3",
        }
    }

    pub fn is_s3(self) -> bool {
        self != Backend::Posix
    }

    /// The backends a run compares unless told otherwise.
    pub fn defaults() -> Vec<Backend> {
        Self::DEFAULT.to_vec()
    }

    /// Parses `posix,embedded`.
    pub fn parse_list(s: &str) -> Result<Vec<Backend>, String> {
        let mut out = Vec::new();
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let b: Backend = name.parse()?;
            if !out.contains(&b) {
                out.push(b);
            }
        }
        if out.is_empty() {
            return Err("no backend given".into());
        }
        Ok(out)
    }

    /// Opens the backend over `dir`, which it owns for the run.
    pub fn open(self, dir: &Path, cfg: &BackendConfig) -> anyhow::Result<Arc<dyn StorageApi>> {
        let Some(h) = self.s3_client(dir, cfg)? else {
            return Ok(Arc::new(PosixStorage::new(dir, cfg.durability)?));
        };
        let storage = S3Storage::new(h.client, cfg.s3_mode, BUCKET);
        Ok(match h.keep_alive {
            Some(service) => Arc::new(storage.with_service(service)),
            None => Arc::new(storage),
        })
    }

    /// The S3 client of an S3 backend over `dir` (`None` for posix), for
    /// benchmarks that speak S3 directly rather than through `StorageApi`
    /// (warp, kv, copy, sweep, visibility).
    pub fn s3_client(self, dir: &Path, cfg: &BackendConfig) -> anyhow::Result<Option<S3Handle>> {
        let plain = |client: Arc<dyn S3Client>| {
            Some(S3Handle {
                client,
                keep_alive: None,
            })
        };
        if let Some(server) = &cfg.node_server {
            return Ok(plain(server.connect()?));
        }
        Ok(match (self, &cfg.remote, &cfg.http_endpoint) {
            (Backend::Posix, _, _) => None,
            (Backend::Embedded, _, _) => {
                plain(Arc::new(EmbeddedClient::new(open_store(dir, cfg)?)))
            }
            (Backend::Remote, Some(addr), _) => plain(Arc::new(connect_gateway(&per_host(addr))?)),
            (Backend::Http, _, Some(e)) => plain(Arc::new(http_client(e)?)),
            (Backend::Libs3, _, _) => plain(Arc::new(libs3_client(dir, cfg)?)),
            // A server of its own, for this client alone.
            _ => {
                let (server, keep_alive) = self.start_server(dir, cfg)?;
                Some(S3Handle {
                    client: server.connect()?,
                    keep_alive: Some(keep_alive),
                })
            }
        })
    }

    /// Whether the backend starts a server of its own: a gateway unless
    /// given `--remote`, s3hpc's HTTP server unless given `--endpoint`.
    pub fn starts_server(self, cfg: &BackendConfig) -> bool {
        match self {
            Backend::Remote => cfg.remote.is_none(),
            Backend::RemoteTcp => true,
            Backend::Http => cfg.http_endpoint.is_none(),
            Backend::Https => true,
            Backend::Posix | Backend::Embedded | Backend::Libs3 => false,
        }
    }

    /// Starts the backend's own server over `dir` (see `starts_server`):
    /// how clients reach it, and what stops it when dropped.
    pub fn start_server(
        self,
        dir: &Path,
        cfg: &BackendConfig,
    ) -> anyhow::Result<(NodeServer, KeepAlive)> {
        Ok(match self {
            Backend::Remote | Backend::RemoteTcp => {
                let gw = start_gateway(dir, cfg, self == Backend::RemoteTcp)?;
                (NodeServer::Gateway(gw.address.clone()), Box::new(gw))
            }
            Backend::Http | Backend::Https => {
                let (endpoint, server) = start_http_server(dir, cfg, self == Backend::Https)?;
                (NodeServer::Http(endpoint), Box::new(server))
            }
            Backend::Posix | Backend::Embedded | Backend::Libs3 => {
                anyhow::bail!("backend {self} has no server")
            }
        })
    }
}

/// What keeps a server the bench started running until it is dropped.
pub type KeepAlive = Box<dyn std::any::Any + Send + Sync>;

impl NodeServer {
    /// A client of the server.
    pub fn connect(&self) -> anyhow::Result<Arc<dyn S3Client>> {
        Ok(match self {
            NodeServer::Gateway(addr) => Arc::new(connect_gateway(addr)?),
            NodeServer::Http(e) => Arc::new(http_client(e)?),
        })
    }

    /// One line per field, to hand the server to the node's other ranks.
    pub fn encode(&self) -> String {
        match self {
            NodeServer::Gateway(addr) => format!("gateway\n{addr}"),
            // PEM's line breaks as `|`, which PEM never holds.
            NodeServer::Http(e) => format!(
                "http\n{}\n{}\n{}\n{}\n{}",
                e.url,
                e.region,
                e.access_key,
                e.secret_key,
                e.ca_pem.as_deref().unwrap_or("").replace('\n', "|")
            ),
        }
    }

    pub fn decode(s: &str) -> anyhow::Result<NodeServer> {
        let f: Vec<&str> = s.split('\n').collect();
        Ok(match f[..] {
            ["gateway", addr] => NodeServer::Gateway(addr.to_string()),
            ["http", url, region, access_key, secret_key, ca] => NodeServer::Http(HttpEndpoint {
                url: url.into(),
                region: region.into(),
                access_key: access_key.into(),
                secret_key: secret_key.into(),
                ca_pem: (!ca.is_empty()).then(|| ca.replace('|', "\n")),
            }),
            _ => anyhow::bail!("not a node server: {:?}", f.first()),
        })
    }
}

/// `{host}` in an address replaced by this host's name, so that one
/// address (e.g. `unix:/tmp/s3hpc-{host}.sock`) reaches the gateway of
/// each rank's own node: node-local sockets may share a path that several
/// nodes see (a shared /tmp, a socket directory on Lustre).
pub fn per_host(addr: &str) -> String {
    if !addr.contains("{host}") {
        return addr.to_string();
    }
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    addr.replace("{host}", &host)
}

fn connect_gateway(addr: &str) -> anyhow::Result<RemoteClient> {
    RemoteClient::connect(addr).with_context(|| format!("connecting to the gateway at {addr}"))
}

/// The names s3hpc's 4.x library goes by: its soname, and the file cargo
/// builds.
const OUR_LIBS3: [&str; 2] = ["libs3.so.4", "libs3_4.so"];

/// s3hpc's libs3.so.4 beside the running binary, or where cargo puts it
/// (target/<profile>, and its deps/ when built as a dependency).
fn our_libs3() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the running binary")?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let dirs = [dir.to_path_buf(), dir.join("deps"), dir.join("..")];
    dirs.into_iter()
        .flat_map(|d| OUR_LIBS3.iter().map(move |n| d.join(n)))
        .find(|p| p.exists())
        .with_context(|| {
            format!(
                "no libs3.so.4 (or libs3_4.so) next to {}: build it into the same target \
                 directory (cargo build --release -p s3hpc-libs3-4, with the CARGO_TARGET_DIR \
                 of this binary: a --features mpi build of s3hpc does not make it) or pass \
                 --libs3 PATH",
                exe.display()
            )
        })
}

/// A client over the configured libs3 library and host.
fn libs3_client(dir: &Path, cfg: &BackendConfig) -> anyhow::Result<Libs3Client> {
    let l = &cfg.libs3;
    let library = match &l.library {
        Some(p) => p.clone(),
        None => our_libs3()?,
    };
    let host = match &l.host {
        Some(h) => per_host(h),
        None => {
            let dir = std::fs::canonicalize(dir)
                .with_context(|| format!("resolving {}", dir.display()))?;
            let mut host = format!(
                "file://{}?etag={}&durability={}&layout={}",
                dir.display(),
                cfg.etag.as_str(),
                cfg.durability.as_str(),
                cfg.layout.as_str()
            );
            if let Some(n) = cfg.pack_max {
                host += &format!("&pack-max={n}");
            }
            host
        }
    };
    let target = Libs3Target {
        host,
        access_key: l.access_key.clone(),
        secret_key: l.secret_key.clone(),
        region: if l.region.is_empty() {
            "us-east-1".into()
        } else {
            l.region.clone()
        },
    };
    Libs3Client::open(&library, &target).map_err(anyhow::Error::msg)
}

/// An S3 backend's client, and what must outlive it (a gateway the bench
/// started). Drop the client first.
pub struct S3Handle {
    pub client: Arc<dyn S3Client>,
    pub keep_alive: Option<Box<dyn std::any::Any + Send + Sync>>,
}

fn open_store(dir: &Path, cfg: &BackendConfig) -> anyhow::Result<Arc<Store>> {
    let config = StoreConfig {
        etag: cfg.etag,
        durability: cfg.durability,
    };
    let store = Store::open(dir, config)
        .with_context(|| format!("opening the engine on {}", dir.display()))?;
    store.set_default_layout(cfg.layout);
    if let Some(n) = cfg.pack_max {
        store.set_default_pack_max(n)?;
    }
    Ok(Arc::new(store))
}

/// A gateway the bench runs for one backend, in this process (its own
/// threads, reached only through the socket), with the socket's directory.
/// Dropped after its clients: the gateway stops and the socket goes.
struct OwnGateway {
    gateway: Option<Gateway>,
    address: String,
    _socket_dir: tempfile::TempDir,
}

impl Drop for OwnGateway {
    fn drop(&mut self) {
        if let Some(g) = self.gateway.take() {
            g.stop();
        }
    }
}

/// Starts a gateway over `dir` on a private Unix socket (under the temp
/// directory, since socket paths are limited to 107 bytes) or on a free
/// loopback port.
fn start_gateway(dir: &Path, cfg: &BackendConfig, tcp: bool) -> anyhow::Result<OwnGateway> {
    let socket_dir = tempfile::Builder::new()
        .prefix("s3hpc-gw-")
        .tempdir()
        .context("creating a directory for the gateway socket")?;
    let addr = if tcp {
        Address::Tcp("127.0.0.1:0".into())
    } else {
        Address::Unix(socket_dir.path().join("rpc.sock"))
    };
    let client = EmbeddedClient::new(open_store(dir, cfg)?);
    let gateway = Gateway::start(Arc::new(client), &[addr], GatewayOptions::default())
        .context("starting the bench's gateway")?;
    Ok(OwnGateway {
        address: gateway.addresses()[0].to_string(),
        gateway: Some(gateway),
        _socket_dir: socket_dir,
    })
}

fn http_client(e: &HttpEndpoint) -> anyhow::Result<HttpClient> {
    HttpClient::new(HttpClientConfig {
        endpoint: e.url.clone(),
        region: e.region.clone(),
        credentials: Some((e.access_key.clone(), e.secret_key.clone())),
        ca_pem: e.ca_pem.clone(),
        ..Default::default()
    })
    .map_err(anyhow::Error::msg)
}

/// Starts s3hpc's HTTP server on a free loopback port over `dir`, with a
/// one-run user; with `tls`, HTTPS with a self-signed certificate for
/// 127.0.0.1 made here. The server stops when its handle drops.
fn start_http_server(
    dir: &Path,
    cfg: &BackendConfig,
    tls: bool,
) -> anyhow::Result<(HttpEndpoint, ServerHandle)> {
    let secret = format!(
        "{:x}{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let auth = AuthConfig::single("s3hpc-bench", secret.clone());
    let mut server = HttpServer::bind(([127, 0, 0, 1], 0).into(), open_store(dir, cfg)?, auth, &[])
        .context("starting the HTTP server for the http backend")?;
    let mut ca_pem = None;
    if tls {
        let (cert, key) = self_signed_cert()?;
        let config = TlsConfig::from_pem(cert.as_bytes(), key.as_bytes())
            .context("the https backend's certificate")?;
        server = server.with_tls(config);
        ca_pem = Some(cert);
    }
    let server = server
        .spawn()
        .context("starting the HTTP server for the http backend")?;
    let endpoint = HttpEndpoint {
        url: server.endpoint(),
        region: "us-east-1".into(),
        access_key: "s3hpc-bench".into(),
        secret_key: secret,
        ca_pem,
    };
    Ok((endpoint, server))
}

/// A fresh self-signed certificate (ECDSA P-256, what TLS servers commonly
/// use) for 127.0.0.1 and localhost, and its key, in PEM.
fn self_signed_cert() -> anyhow::Result<(String, String)> {
    let names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(names).context("making a self-signed certificate")?;
    Ok((cert.pem(), signing_key.serialize_pem()))
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Backend::ALL
            .iter()
            .copied()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Backend::ALL.iter().map(|b| b.name()).collect();
                format!("unknown backend {s:?}: use one of {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_in_addresses() {
        let host = rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned();
        assert_eq!(
            per_host("unix:/tmp/gw-{host}.sock"),
            format!("unix:/tmp/gw-{host}.sock")
        );
        assert_eq!(per_host("unix:/tmp/gw.sock"), "unix:/tmp/gw.sock");
    }

    #[test]
    fn https_node_servers_travel_with_their_certificate() {
        let (cert, _) = self_signed_cert().unwrap();
        let e = HttpEndpoint {
            url: "https://127.0.0.1:1".into(),
            region: "us-east-1".into(),
            access_key: "a".into(),
            secret_key: "s".into(),
            ca_pem: Some(cert),
        };
        for ca_pem in [e.ca_pem.clone(), None] {
            let s = NodeServer::Http(HttpEndpoint {
                ca_pem,
                ..e.clone()
            });
            assert_eq!(NodeServer::decode(&s.encode()).unwrap(), s);
        }
        assert_eq!("https".parse::<Backend>().unwrap(), Backend::Https);
    }
}
