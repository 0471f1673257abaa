//! The storage stacks a run can compare. Adding one (remote, libs3)
//! means a variant here and, for an S3 transport, an `S3Client`: the S3
//! mapping itself is shared (`storage::s3`).

use crate::storage::{PosixStorage, S3Mode, S3Storage, StorageApi};
use anyhow::Context;
use s3hpc_client::{EmbeddedClient, HttpClient, HttpClientConfig};
use s3hpc_http::{AuthConfig, HttpServer};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig};
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The file system directly: the baseline.
    Posix,
    /// S3 through the engine, in this process.
    Embedded,
    /// S3 over HTTP: to s3hpc's server on a loopback port (started for the
    /// run over the run directory), or to `BackendConfig::http_endpoint`.
    Http,
}

/// Settings that shape a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendConfig {
    pub etag: EtagPolicy,
    pub durability: Durability,
    pub s3_mode: S3Mode,
    /// Where the `http` backend sends its requests; `None` starts s3hpc's
    /// own server for the run.
    pub http_endpoint: Option<HttpEndpoint>,
}

/// An S3 endpoint and who to sign as.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpEndpoint {
    pub url: String,
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
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
            s3_mode: S3Mode::SingleBucket,
            http_endpoint: None,
        }
    }
}

/// The bucket (or bucket-name prefix) S3 backends work in.
pub const BUCKET: &str = "io500";

impl Backend {
    pub const ALL: &'static [Backend] = &[Backend::Posix, Backend::Embedded, Backend::Http];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Posix => "posix",
            Backend::Embedded => "embedded",
            Backend::Http => "http",
        }
    }

    pub fn is_s3(self) -> bool {
        self != Backend::Posix
    }

    /// The backends usable in this build and environment.
    pub fn available() -> Vec<Backend> {
        Self::ALL.to_vec()
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
        Ok(match self {
            Backend::Posix => Arc::new(PosixStorage::new(dir, cfg.durability)?),
            Backend::Embedded => {
                let client = Arc::new(EmbeddedClient::new(Arc::new(open_store(dir, cfg)?)));
                Arc::new(S3Storage::new(client, cfg.s3_mode, BUCKET))
            }
            Backend::Http => {
                let client = match &cfg.http_endpoint {
                    Some(e) => http_client(e)?,
                    None => serve_for_run(dir, cfg)?,
                };
                Arc::new(S3Storage::new(Arc::new(client), cfg.s3_mode, BUCKET))
            }
        })
    }
}

fn open_store(dir: &Path, cfg: &BackendConfig) -> anyhow::Result<Store> {
    Store::open(
        dir,
        StoreConfig {
            etag: cfg.etag,
            durability: cfg.durability,
        },
    )
    .with_context(|| format!("opening the engine on {}", dir.display()))
}

fn http_client(e: &HttpEndpoint) -> anyhow::Result<HttpClient> {
    HttpClient::new(HttpClientConfig {
        endpoint: e.url.clone(),
        region: e.region.clone(),
        credentials: Some((e.access_key.clone(), e.secret_key.clone())),
        ..Default::default()
    })
    .map_err(anyhow::Error::msg)
}

/// Starts s3hpc's HTTP server on a free loopback port over `dir`, with a
/// one-run user, and returns a client that owns it: the server stops when
/// the backend is dropped.
fn serve_for_run(dir: &Path, cfg: &BackendConfig) -> anyhow::Result<HttpClient> {
    let store = Arc::new(open_store(dir, cfg)?);
    let secret = format!(
        "{:x}{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let auth = AuthConfig::single("s3hpc-bench", secret.clone());
    let server = HttpServer::bind(([127, 0, 0, 1], 0).into(), store, auth, &[])
        .context("starting the HTTP server for the http backend")?
        .spawn()
        .context("starting the HTTP server for the http backend")?;
    let endpoint = HttpEndpoint {
        url: server.endpoint(),
        region: "us-east-1".into(),
        access_key: "s3hpc-bench".into(),
        secret_key: secret,
    };
    Ok(http_client(&endpoint)?.keep_alive(server))
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
