//! The storage stacks a run can compare. Adding one (remote, http, libs3)
//! means a variant here and, for an S3 transport, an `S3Client`: the S3
//! mapping itself is shared (`storage::s3`).

use crate::storage::{PosixStorage, S3Mode, S3Storage, StorageApi};
use anyhow::Context;
use s3hpc_client::{EmbeddedClient, S3Client};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig};
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The file system directly: the baseline.
    Posix,
    /// S3 through the engine, in this process.
    Embedded,
}

/// Settings that shape a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackendConfig {
    pub etag: EtagPolicy,
    pub durability: Durability,
    pub s3_mode: S3Mode,
}

impl Default for BackendConfig {
    fn default() -> Self {
        BackendConfig {
            // No hashing by default: IOR writes no checksums either.
            etag: EtagPolicy::Fast,
            durability: Durability::None,
            s3_mode: S3Mode::SingleBucket,
        }
    }
}

/// The bucket (or bucket-name prefix) S3 backends work in.
pub const BUCKET: &str = "io500";

impl Backend {
    pub const ALL: &'static [Backend] = &[Backend::Posix, Backend::Embedded];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Posix => "posix",
            Backend::Embedded => "embedded",
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
                let client = self.s3_client(dir, cfg)?.expect("an S3 backend");
                Arc::new(S3Storage::new(client, cfg.s3_mode, BUCKET))
            }
        })
    }

    /// The S3 client of an S3 backend over `dir` (`None` for posix), for
    /// benchmarks that speak S3 directly rather than through `StorageApi`
    /// (warp, kv, copy, sweep, visibility).
    pub fn s3_client(
        self,
        dir: &Path,
        cfg: &BackendConfig,
    ) -> anyhow::Result<Option<Arc<dyn S3Client>>> {
        Ok(match self {
            Backend::Posix => None,
            Backend::Embedded => {
                let store = Store::open(
                    dir,
                    StoreConfig {
                        etag: cfg.etag,
                        durability: cfg.durability,
                    },
                )
                .with_context(|| format!("opening the engine on {}", dir.display()))?;
                Some(Arc::new(EmbeddedClient::new(Arc::new(store))))
            }
        })
    }
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
