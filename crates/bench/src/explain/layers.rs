//! The layers `s3hpc explain` measures, each over a data root of its own,
//! from the file system alone up to S3 over HTTP with signatures. Every S3
//! layer is the engine with one more piece in front of it; `base` names
//! the layer whose time it adds to.

use crate::backend::{Backend, BackendConfig, HttpEndpoint, KeepAlive, NodeServer};
use anyhow::Context;
use s3hpc_client::{HttpClient, HttpClientConfig, S3Client};
use s3hpc_http::{AuthConfig, HttpServer};
use s3hpc_store::{Store, StoreConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bucket (POSIX: the directory) every layer of s3hpc's own works in;
/// an external endpoint gets a bucket of the run's own.
pub const BUCKET: &str = "explain";

/// How a layer's operations are carried out.
pub enum Exec {
    /// Plain file-system calls on files under `root`.
    Posix { root: PathBuf },
    /// S3 calls through a client (and whatever server keeps it company).
    S3 {
        client: Arc<dyn S3Client>,
        /// The bucket the layer works in.
        bucket: String,
        /// Whether the run must remove the bucket: an endpoint keeps it.
        owns_bucket: bool,
        _keep_alive: Option<KeepAlive>,
    },
}

impl Exec {
    /// An S3 layer of s3hpc's own, over the run's temporary data root.
    fn local(client: Arc<dyn S3Client>, keep_alive: Option<KeepAlive>) -> Exec {
        Exec::S3 {
            client,
            bucket: BUCKET.to_string(),
            owns_bucket: false,
            _keep_alive: keep_alive,
        }
    }
}

/// Nanoseconds of the clock, in hex: with the pid, a bucket name no other
/// run uses.
fn unique() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{:x}", t.as_nanos())
}

pub struct Layer {
    /// Short name: a row of the table, the `backend` of the JSON rows.
    pub name: String,
    /// What the layer is, for the legend.
    pub what: String,
    /// The layer this one adds to (its index in the list).
    pub base: Option<usize>,
    /// Whether each S3 call crosses a socket (a round trip on the wire).
    pub networked: bool,
    /// Whether its file-system calls happen in this process's engine (and
    /// so are counted): not for an external endpoint, nor for libs3.so.4,
    /// which is loaded with its own copy of the engine.
    pub counted: bool,
    pub exec: Exec,
}

/// How each of s3hpc's layers is made.
enum Make {
    Posix,
    Backend(Backend),
    UnsignedHttp,
    /// SigV4 with the body signed chunk by chunk (aws-chunked).
    StreamingHttp,
}

/// s3hpc's layers: name, what it is, its base, how it is made.
const LAYERS: [(&str, &str, Option<&str>, Make); 8] = [
    (
        "posix",
        "the file-system calls an application would make",
        None,
        Make::Posix,
    ),
    (
        "engine",
        "the S3 engine in this process",
        Some("posix"),
        Make::Backend(Backend::Embedded),
    ),
    (
        "libs3",
        "the libs3 C ABI (libs3.so.4, file://) over the engine",
        Some("engine"),
        Make::Backend(Backend::Libs3),
    ),
    (
        "rpc-unix",
        "the RPC gateway over a Unix socket",
        Some("engine"),
        Make::Backend(Backend::Remote),
    ),
    (
        "rpc-tcp",
        "the RPC gateway over TCP loopback",
        Some("rpc-unix"),
        Make::Backend(Backend::RemoteTcp),
    ),
    (
        "http",
        "s3hpc's HTTP server, unsigned requests",
        Some("engine"),
        Make::UnsignedHttp,
    ),
    (
        "http-sigv4",
        "s3hpc's HTTP server, SigV4-signed requests",
        Some("http"),
        Make::Backend(Backend::Http),
    ),
    (
        "http-chunked",
        "the same, PUT bodies as signed aws-chunked chunks (as the AWS SDKs send)",
        Some("http-sigv4"),
        Make::StreamingHttp,
    ),
];

/// The names `--layers` accepts (external endpoints are `ext1`, ...).
pub fn names() -> Vec<&'static str> {
    LAYERS.iter().map(|l| l.0).collect()
}

/// The layers in order, those `want` selects, each opened over
/// `root/<name>`. A layer's base is its nearest selected ancestor.
pub fn open_all(
    root: &Path,
    cfg: &BackendConfig,
    endpoints: &[HttpEndpoint],
    want: &dyn Fn(&str) -> bool,
) -> anyhow::Result<Vec<Layer>> {
    let mut layers: Vec<Layer> = Vec::new();
    let base_of = |layers: &[Layer], mut base: Option<&str>| {
        while let Some(b) = base {
            if let Some(i) = layers.iter().position(|l| l.name == b) {
                return Some(i);
            }
            base = LAYERS.iter().find(|l| l.0 == b).and_then(|l| l.2);
        }
        None
    };
    for (name, what, base, make) in &LAYERS {
        if !want(name) {
            continue;
        }
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let (exec, networked, counted) = match make {
            Make::Posix => (Exec::Posix { root: dir }, false, true),
            Make::UnsignedHttp => (unsigned_http(&dir, cfg)?, true, true),
            Make::StreamingHttp => (streaming_http(&dir, cfg)?, true, true),
            Make::Backend(b) => {
                let h = b
                    .s3_client(&dir, cfg)?
                    .context("an S3 backend has a client")?;
                let exec = Exec::local(h.client, h.keep_alive);
                (exec, b.starts_server(cfg), *b != Backend::Libs3)
            }
        };
        layers.push(Layer {
            name: name.to_string(),
            what: what.to_string(),
            base: base_of(&layers, *base),
            networked,
            counted,
            exec,
        });
    }
    for (i, e) in endpoints.iter().enumerate() {
        let name = format!("ext{}", i + 1);
        if !want(&name) {
            continue;
        }
        let client = HttpClient::new(HttpClientConfig {
            endpoint: e.url.clone(),
            region: e.region.clone(),
            credentials: Some((e.access_key.clone(), e.secret_key.clone())),
            ca_pem: e.ca_pem.clone(),
            ..Default::default()
        })
        .map_err(anyhow::Error::msg)?;
        layers.push(Layer {
            name,
            what: format!("the S3 endpoint {}, SigV4-signed", e.url),
            base: base_of(&layers, Some("http-chunked")),
            networked: true,
            counted: false,
            // A bucket of this run's own: the endpoint may hold an
            // `explain` bucket of someone else, or of an earlier run.
            exec: Exec::S3 {
                client: Arc::new(client),
                bucket: format!("{}-{}-{}", BUCKET, std::process::id(), unique()),
                owns_bucket: true,
                _keep_alive: None,
            },
        });
    }
    anyhow::ensure!(!layers.is_empty(), "no layer selected");
    Ok(layers)
}

/// s3hpc's HTTP server with SigV4 users, and a client that signs each
/// PUT body chunk by chunk.
fn streaming_http(dir: &Path, cfg: &BackendConfig) -> anyhow::Result<Exec> {
    let (server, keep_alive) = Backend::Http.start_server(dir, cfg)?;
    let NodeServer::Http(e) = server else {
        anyhow::bail!("the http backend's server is an HTTP server");
    };
    let client = HttpClient::new(HttpClientConfig {
        endpoint: e.url.clone(),
        region: e.region.clone(),
        credentials: Some((e.access_key.clone(), e.secret_key.clone())),
        ca_pem: e.ca_pem.clone(),
        streaming: true,
        ..Default::default()
    })
    .map_err(anyhow::Error::msg)?;
    Ok(Exec::local(Arc::new(client), Some(keep_alive)))
}

/// s3hpc's HTTP server with no signature checks, and a client that signs
/// nothing: the HTTP transport's cost without SigV4's.
fn unsigned_http(dir: &Path, cfg: &BackendConfig) -> anyhow::Result<Exec> {
    let store = Store::open(
        dir,
        StoreConfig {
            etag: cfg.etag,
            durability: cfg.durability,
        },
    )
    .with_context(|| format!("opening the engine on {}", dir.display()))?;
    store.set_default_layout(cfg.layout);
    let server = HttpServer::bind(
        ([127, 0, 0, 1], 0).into(),
        Arc::new(store),
        AuthConfig::Anonymous,
        &[],
    )
    .and_then(HttpServer::spawn)
    .context("starting an unsigned HTTP server")?;
    let client = HttpClient::new(HttpClientConfig {
        endpoint: server.endpoint(),
        credentials: None,
        ..Default::default()
    })
    .map_err(anyhow::Error::msg)?;
    Ok(Exec::local(Arc::new(client), Some(Box::new(server))))
}
