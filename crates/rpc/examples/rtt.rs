//! Per-operation cost of the remote and HTTP transports against the
//! embedded one: one client thread, each op timed over many repetitions.
//! Shows how much of a metadata operation is the round trip, and what
//! passing files (GET over a Unix socket) saves against streaming the bytes.
//!
//!     cargo run --release -p s3hpc-rpc --example rtt [-- ITERATIONS [DIR [TRANSPORTS [OPS]]]]
//!
//! DIR defaults to a temporary directory (on /tmp); pass one on tmpfs to
//! take the disk out of the picture. TRANSPORTS is a comma list of columns
//! to run (default all: embedded,unix,unix-no-fd,tcp,http), OPS one of rows
//! (default all; a GET needs its PUT before it, a delete its put): one
//! transport and a few ops suit `perf record`.

use s3hpc_client::{EmbeddedClient, HttpClient, PutBody, PutOptions, S3Client};
use s3hpc_http::{AuthConfig, HttpServer};
use s3hpc_rpc::{Address, Gateway, GatewayOptions, RemoteClient};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig};
use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// IOR-hard's transfer size, and IOR-easy's.
const HARD: usize = 47008;
const EASY: usize = 2 << 20;
/// Large objects rotate over this many keys, to bound the space used.
const BIG_KEYS: usize = 8;

/// CPU time this process has used so far, in all its threads.
fn process_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

type Op<'a> = Box<dyn Fn(&dyn S3Client, &str) + 'a>;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map_or(20_000, |a| a.parse().expect("ITERATIONS"));
    let base = match args.next() {
        Some(d) => tempfile::tempdir_in(d),
        None => tempfile::tempdir(),
    }
    .expect("temporary directory");
    let mut list = || -> Option<Vec<String>> {
        args.next()
            .map(|a| a.split(',').map(str::to_string).collect())
    };
    let (only, only_ops) = (list(), list());
    let picked = |only: &Option<Vec<String>>, name: &str| {
        only.as_ref().is_none_or(|o| o.iter().any(|x| x == name))
    };
    let config = StoreConfig {
        etag: EtagPolicy::Fast,
        durability: Durability::None,
    };
    let store = Arc::new(Store::open(base.path().join("root"), config).expect("store"));
    let embedded: Arc<dyn S3Client> = Arc::new(EmbeddedClient::new(store.clone()));
    let addrs = [
        Address::Unix(base.path().join("rtt.sock")),
        Address::Tcp("127.0.0.1:0".into()),
    ];
    let gw = Gateway::start(embedded.clone(), &addrs, GatewayOptions::default()).expect("gateway");
    // A second gateway that never passes files: bytes through the socket.
    let frames_opts = GatewayOptions {
        fd_min_bytes: u64::MAX,
        ..GatewayOptions::default()
    };
    let frames_addr = [Address::Unix(base.path().join("frames.sock"))];
    let gw_frames = Gateway::start(embedded.clone(), &frames_addr, frames_opts).expect("gateway");
    let connect = |a: &Address| RemoteClient::connect(&a.to_string()).expect("client");
    let unix = connect(&gw.addresses()[0]);
    let tcp = connect(&gw.addresses()[1]);
    let frames = connect(&gw_frames.addresses()[0]);
    let http_server = HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        store.clone(),
        AuthConfig::single("rtt", "rtt-secret"),
        &[],
    )
    .and_then(HttpServer::spawn)
    .expect("HTTP server");
    let http = HttpClient::with_credentials(&http_server.endpoint(), "rtt", "rtt-secret")
        .expect("HTTP client");
    let clients: Vec<(&str, &dyn S3Client)> = [
        ("embedded", embedded.as_ref()),
        ("unix", &unix as &dyn S3Client),
        ("unix-no-fd", &frames),
        ("tcp", &tcp),
        ("http", &http),
    ]
    .into_iter()
    .filter(|(name, _)| picked(&only, name))
    .collect();
    assert!(!clients.is_empty(), "TRANSPORTS names none of the columns");
    embedded.create_bucket("rtt").expect("bucket");
    let small = vec![7u8; 3901];
    let hard = vec![8u8; HARD];
    let easy = vec![9u8; EASY];
    let opts = PutOptions::default();
    let put = |c: &dyn S3Client, key: &str, body: &[u8]| {
        c.put_object("rtt", key, PutBody::Bytes(body), &opts)
            .unwrap();
    };
    let get = |c: &dyn S3Client, key: &str, len: usize| {
        let mut g = c.get_object("rtt", key, None).unwrap();
        let mut buf = vec![0u8; len];
        g.body.read_exact(&mut buf).unwrap();
    };
    let big_key = |key: &str, tag: &str| {
        let (client, i) = key.split_once('-').unwrap();
        format!("{tag}{client}-{}", i.parse::<usize>().unwrap() % BIG_KEYS)
    };
    let ops: Vec<(&str, Op)> = vec![
        (
            "head-bucket",
            Box::new(|c, _| c.head_bucket("rtt").unwrap()),
        ),
        ("put-0", Box::new(|c, k| put(c, &format!("z{k}"), &[]))),
        (
            "delete-0",
            Box::new(|c, k| c.delete_object("rtt", &format!("z{k}")).unwrap()),
        ),
        ("put-3901", Box::new(|c, k| put(c, k, &small))),
        (
            "head",
            Box::new(|c, k| drop(c.head_object("rtt", k).unwrap())),
        ),
        ("get-3901", Box::new(|c, k| get(c, k, small.len()))),
        (
            "delete",
            Box::new(|c, k| c.delete_object("rtt", k).unwrap()),
        ),
        (
            "put-47008",
            Box::new(|c, k| put(c, &big_key(k, "h"), &hard)),
        ),
        ("get-47008", Box::new(|c, k| get(c, &big_key(k, "h"), HARD))),
        ("put-2MiB", Box::new(|c, k| put(c, &big_key(k, "e"), &easy))),
        ("get-2MiB", Box::new(|c, k| get(c, &big_key(k, "e"), EASY))),
    ];
    // Wall time, and the CPU time of the whole process (client and servers
    // alike), which a busy machine distorts less.
    let mut tables = [String::new(), String::new()];
    for (name, op) in ops.iter().filter(|(name, _)| picked(&only_ops, name)) {
        let mut rows = [format!("{name:<12}"), format!("{name:<12}")];
        let mut base = [0.0; 2];
        for (j, (_, c)) in clients.iter().enumerate() {
            // Keys of their own per client: every put creates, every
            // delete removes.
            let keys: Vec<String> = (0..n).map(|i| format!("{j}-{i}")).collect();
            let (t, cpu) = (Instant::now(), process_cpu());
            for key in &keys {
                op(*c, key);
            }
            let took = [t.elapsed(), process_cpu() - cpu];
            for (k, row) in rows.iter_mut().enumerate() {
                let us = took[k].as_secs_f64() * 1e6 / n as f64;
                if j == 0 {
                    base[k] = us;
                    *row += &format!("{us:>10.2}");
                } else {
                    *row += &format!("{us:>12.2} ({:>4.2})", base[k] / us);
                }
            }
        }
        for (table, row) in tables.iter_mut().zip(rows) {
            *table += &format!("{row}\n");
        }
    }
    let mut head = format!("{:<12}{:>10}", "op", clients[0].0);
    for (name, _) in &clients[1..] {
        head += &format!("{name:>20}");
    }
    for (what, table) in ["wall", "CPU (all threads)"].iter().zip(tables) {
        println!("{n} iterations per op, one thread; {what} microseconds per op (the first column over each)");
        println!("{head}\n{table}");
    }
    drop(http);
    http_server.shutdown().expect("HTTP server stop");
    gw.stop();
    gw_frames.stop();
}
