//! `s3hpc serve`: the engine over a data directory, behind the S3 REST
//! transport, until SIGINT or SIGTERM.

use anyhow::Context;
use clap::Args;
use s3hpc_http::{AuthConfig, HttpServer};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig, STALE_AGE};
use signal_hook::consts::{SIGINT, SIGTERM};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args)]
pub struct ServeArgs {
    /// Data root: buckets are its directories, objects its files.
    #[arg(long)]
    data: PathBuf,
    /// Serve S3 over HTTP on this address (loopback unless you mean it),
    /// e.g. 127.0.0.1:9000.
    #[arg(long)]
    http: Option<SocketAddr>,
    /// Accept unsigned requests and check no signature at all.
    #[arg(long, conflicts_with = "credentials")]
    anonymous: bool,
    /// Users, one `ACCESS_KEY SECRET_KEY` per line. Without it the user
    /// comes from S3HPC_ACCESS_KEY and S3HPC_SECRET_KEY.
    #[arg(long)]
    credentials: Option<PathBuf>,
    /// Domain for virtual-host-style addressing (BUCKET.DOMAIN); repeatable.
    /// Path style always works.
    #[arg(long = "virtual-host")]
    virtual_hosts: Vec<String>,
    /// ETag policy: md5 (what S3 clients expect) or fast.
    #[arg(long, default_value = "md5")]
    etag: EtagPolicy,
    /// fsync every PUT before acknowledging it, or none.
    #[arg(long, default_value = "fsync")]
    durability: Durability,
}

fn auth(a: &ServeArgs) -> anyhow::Result<AuthConfig> {
    if a.anonymous {
        return Ok(AuthConfig::Anonymous);
    }
    if let Some(file) = &a.credentials {
        return AuthConfig::from_file(file).map_err(anyhow::Error::msg);
    }
    AuthConfig::from_env()
        .map_err(anyhow::Error::msg)?
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no credentials: set {} and {}, give --credentials FILE, or pass --anonymous \
                 to serve without authentication",
                s3hpc_http::ACCESS_KEY_ENV,
                s3hpc_http::SECRET_KEY_ENV
            )
        })
}

pub fn run(a: ServeArgs) -> anyhow::Result<()> {
    let Some(addr) = a.http else {
        anyhow::bail!("nothing to serve: give --http ADDR:PORT");
    };
    let auth = auth(&a)?;
    let store = Store::open(
        &a.data,
        StoreConfig {
            etag: a.etag,
            durability: a.durability,
        },
    )
    .with_context(|| format!("opening the data root {}", a.data.display()))?;
    let swept = store
        .sweep_temporaries(STALE_AGE)
        .context("removing temporaries of earlier writers")?;
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("installing the SIGINT/SIGTERM handler")?;
    let server = HttpServer::bind(addr, Arc::new(store), auth.clone(), &a.virtual_hosts)?;
    let handle = server.spawn().context("starting the HTTP server")?;
    eprintln!(
        "s3hpc: serving S3 at {} from {} ({}; {swept} stale temporaries removed); \
         Ctrl-C stops",
        handle.endpoint(),
        a.data.display(),
        match auth {
            AuthConfig::Anonymous => "anonymous".to_string(),
            AuthConfig::Users(u) => format!("{} user(s)", u.len()),
        }
    );
    if let Some(sig) = signals.forever().next() {
        eprintln!(
            "s3hpc: {} received: finishing requests in flight, then stopping",
            s3hpc_bench::stop::signal_name(sig)
        );
    }
    handle.shutdown().context("stopping the HTTP server")?;
    eprintln!("s3hpc: stopped");
    Ok(())
}
