//! `s3hpc explain`: arguments onto `s3hpc_bench::explain`.

use crate::breadth::{parse_size_list, SizeList};
use crate::Credentials;
use clap::Args;
use s3hpc_bench::backend::BackendConfig;
use s3hpc_bench::explain::{self, ExplainParams};
use s3hpc_bench::stop::Stop;
use std::path::PathBuf;

#[derive(Args)]
pub struct ExplainArgs {
    /// The file system to explain: a fresh subdirectory is made in DIR and
    /// removed afterwards (default: a temporary directory).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Work in a fresh subdirectory of a non-empty --dir.
    #[arg(long)]
    allow_nonempty: bool,
    /// Object sizes of PUT, GET, HEAD and DELETE (suffixes k, m, g).
    #[arg(long, default_value = "0,3901,47008,2m", value_parser = parse_size_list)]
    sizes: SizeList,
    /// Repetitions, alternating the layer order.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Ops of each kind per layer and repetition (fewer for large objects).
    #[arg(long, default_value_t = 100)]
    batch: usize,
    /// Another S3 endpoint to measure beside s3hpc's layers (repeatable),
    /// signed with --access-key and --secret-key.
    #[arg(long = "endpoint", value_name = "URL")]
    endpoints: Vec<String>,
    #[command(flatten)]
    keys: Credentials,
    /// Only these layers, comma-separated (default: all): posix, engine,
    /// libs3, rpc-unix, rpc-tcp, http, http-sigv4, http-chunked, and ext1, ext2, ...
    /// for the --endpoint URLs in order.
    #[arg(long, value_delimiter = ',')]
    layers: Option<Vec<String>>,
    /// The layout of the S3 layers' bucket: plain, or packed (objects up to
    /// 1 MiB appended to pack files; see `s3hpc bucket`).
    #[arg(long, default_value = "plain")]
    layout: s3hpc_store::Layout,
    /// Write every measurement as JSON (for `s3hpc report`).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Free text stored as `run.label` in the JSON.
    #[arg(long)]
    label: Option<String>,
}

pub fn run(a: ExplainArgs, stop: &Stop) -> anyhow::Result<()> {
    let endpoints = a
        .endpoints
        .iter()
        .map(|url| a.keys.endpoint(url))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let p = ExplainParams {
        dir: a.dir,
        allow_nonempty: a.allow_nonempty,
        sizes: a.sizes.0,
        repeat: a.repeat,
        batch: a.batch,
        endpoints,
        layers: a.layers,
        config: BackendConfig {
            layout: a.layout,
            ..BackendConfig::default()
        },
        json: a.json,
        label: a.label,
        stop: stop.clone(),
        ..ExplainParams::default()
    };
    explain::run(&p, &mut std::io::stdout().lock()).map(drop)
}
