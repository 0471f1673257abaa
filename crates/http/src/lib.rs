//! s3hpc's S3 REST transport: the engine behind HTTP, so any S3 tool can use
//! it and the benchmark can measure what HTTP itself costs.
//!
//! s3s parses requests, routes them (path and virtual-host style), checks
//! SigV4 and SigV2 signatures (header and presigned, aws-chunked payloads)
//! and renders XML and error bodies; this crate maps each operation onto
//! the engine and streams bodies through bounded buffers.
//!
//! ```
//! # use std::sync::Arc;
//! # let dir = tempfile::tempdir().unwrap();
//! # let store = Arc::new(s3hpc_store::Store::open(dir.path(), Default::default()).unwrap());
//! let auth = s3hpc_http::AuthConfig::single("ACCESS", "SECRET");
//! let server = s3hpc_http::HttpServer::bind("127.0.0.1:0".parse().unwrap(), store, auth, &[]).unwrap();
//! let handle = server.spawn().unwrap();
//! println!("serving at {}", handle.endpoint());
//! handle.shutdown().unwrap();
//! ```

mod access_log;
mod acl;
mod attributes_etag;
mod auth;
mod body;
mod bucket_logs;
mod checksums;
pub mod chunked;
mod convert;
mod cors;
mod error_header;
mod gather;
mod handle;
mod keyring;
mod mapped;
mod metrics;
mod observe;
mod oidc;
mod owners;
mod policy;
mod presigned;
mod server;
mod service;
mod sigv2_path;
mod sts;
mod tls;
mod unframed;
mod unrouted;
mod write_gate;

pub use access_log::{AccessLog, Record};
pub use auth::{AuthConfig, MappedUsers, ACCESS_KEY_ENV, SECRET_KEY_ENV};
pub use handle::ServerHandle;
pub use keyring::Keyring;
pub use metrics::{Metrics, MetricsServer, Observation, Transport};
pub use oidc::OidcConfig;
pub use server::HttpServer;
pub use tls::TlsConfig;
