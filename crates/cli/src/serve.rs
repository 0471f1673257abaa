//! `s3hpc serve`: the gateway process.

use anyhow::Context;
use clap::Args;
use s3hpc_bench::stop::{signal_name, Stop};
use s3hpc_client::EmbeddedClient;
use s3hpc_rpc::{Address, Gateway, GatewayOptions};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig, STALE_AGE};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args)]
pub struct ServeArgs {
    /// The data directory: each subdirectory is a bucket. Created if missing.
    #[arg(long)]
    data: PathBuf,
    /// Serve the binary RPC on this address: unix:PATH (node-local
    /// clients) or tcp:HOST:PORT. Repeat to listen on several.
    #[arg(long = "rpc", value_name = "ADDR")]
    rpc: Vec<Address>,
    /// ETag policy: md5 (what S3 clients expect) or fast (no hashing).
    #[arg(long, default_value = "md5")]
    etag: EtagPolicy,
    /// fsync: a PUT is on stable storage before it is acknowledged; none
    /// trusts the page cache.
    #[arg(long, default_value = "fsync")]
    durability: Durability,
    /// Connections beyond this many are refused.
    #[arg(long, default_value_t = 4096)]
    max_connections: usize,
    /// At start, remove temporaries of killed writers older than this many
    /// seconds (those of exited processes on this host go whatever their
    /// age; younger ones may belong to live writers on other nodes).
    #[arg(long, default_value_t = STALE_AGE.as_secs())]
    sweep_age: u64,
}

pub fn run(a: ServeArgs, stop: &Stop) -> anyhow::Result<()> {
    anyhow::ensure!(
        !a.rpc.is_empty(),
        "nothing to serve: give at least one --rpc unix:PATH or --rpc tcp:HOST:PORT"
    );
    let config = StoreConfig {
        etag: a.etag,
        durability: a.durability,
    };
    let store = Store::open(&a.data, config)
        .with_context(|| format!("opening the data directory {}", a.data.display()))?;
    let swept = store
        .sweep_temporaries(Duration::from_secs(a.sweep_age))
        .context("removing stale temporaries")?;
    let opts = GatewayOptions {
        max_connections: a.max_connections,
        ..GatewayOptions::default()
    };
    let client = Arc::new(EmbeddedClient::new(Arc::new(store)));
    let gateway = Gateway::start(client, &a.rpc, opts).context("starting the gateway")?;
    let listening: Vec<String> = gateway.addresses().iter().map(|a| a.to_string()).collect();
    eprintln!(
        "s3hpc serve: {} (etag {}, durability {}; {swept} stale temporaries removed), \
         listening on {}",
        a.data.display(),
        a.etag.as_str(),
        a.durability.as_str(),
        listening.join(", ")
    );
    while stop.requested().is_none() {
        std::thread::sleep(Duration::from_millis(50));
    }
    let sig = stop.requested().unwrap_or(0);
    eprintln!(
        "s3hpc serve: {} received: finishing the requests in flight",
        signal_name(sig)
    );
    gateway.stop();
    eprintln!("s3hpc serve: stopped");
    Ok(())
}
