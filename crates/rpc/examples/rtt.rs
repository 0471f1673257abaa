//! Per-operation cost of the remote transport against the embedded one:
//! one client thread, small objects, each op timed over many repetitions.
//! Shows how much of a metadata operation is the round trip.
//!
//!     cargo run --release -p s3hpc-rpc --example rtt [-- ITERATIONS [DIR]]
//!
//! DIR defaults to a temporary directory (on /tmp); pass one on tmpfs to
//! take the disk out of the picture.

use s3hpc_client::{EmbeddedClient, PutBody, PutOptions, S3Client};
use s3hpc_rpc::{Address, Gateway, GatewayOptions, RemoteClient};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig};
use std::io::Read;
use std::sync::Arc;
use std::time::Instant;

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
    let config = StoreConfig {
        etag: EtagPolicy::Fast,
        durability: Durability::None,
    };
    let store = Arc::new(Store::open(base.path().join("root"), config).expect("store"));
    let embedded: Arc<dyn S3Client> = Arc::new(EmbeddedClient::new(store));
    let sock = Address::Unix(base.path().join("rtt.sock"));
    let tcp = Address::Tcp("127.0.0.1:0".into());
    let gw =
        Gateway::start(embedded.clone(), &[sock, tcp], GatewayOptions::default()).expect("gateway");
    let addrs = gw.addresses();
    let unix = RemoteClient::connect(&addrs[0].to_string()).expect("unix client");
    let tcp = RemoteClient::connect(&addrs[1].to_string()).expect("tcp client");
    let clients: [(&str, &dyn S3Client); 3] = [
        ("embedded", embedded.as_ref()),
        ("remote-unix", &unix),
        ("remote-tcp", &tcp),
    ];
    embedded.create_bucket("rtt").expect("bucket");
    let body = vec![7u8; 3901];
    let big = vec![9u8; 2 << 20];
    let opts = PutOptions::default();
    println!("{n} iterations per op, one thread; microseconds per op (ratio to embedded)");
    println!(
        "{:<14}{:>12}{:>22}{:>22}",
        "op", "embedded", "remote-unix", "remote-tcp"
    );
    type Op<'a> = Box<dyn Fn(&dyn S3Client, &str) + 'a>;
    let ops: Vec<(&str, Op)> = vec![
        (
            "head-bucket",
            Box::new(|c, _| c.head_bucket("rtt").unwrap()),
        ),
        (
            "put-3901",
            Box::new(|c, key| {
                c.put_object("rtt", key, PutBody::Bytes(&body), &opts)
                    .unwrap();
            }),
        ),
        (
            "head",
            Box::new(|c, key| {
                c.head_object("rtt", key).unwrap();
            }),
        ),
        (
            "get-3901",
            Box::new(|c, key| {
                let mut g = c.get_object("rtt", key, None).unwrap();
                let mut buf = [0u8; 3901];
                g.body.read_exact(&mut buf).unwrap();
            }),
        ),
        (
            "delete",
            Box::new(|c, key| c.delete_object("rtt", key).unwrap()),
        ),
        // IOR-easy's transfer: bandwidth rather than round trips.
        (
            "put-2MiB",
            Box::new(|c, key| {
                let key = format!("big-{key}");
                c.put_object("rtt", &key, PutBody::Bytes(&big), &opts)
                    .unwrap();
            }),
        ),
        (
            "get-2MiB",
            Box::new(|c, key| {
                let key = format!("big-{key}");
                let mut g = c.get_object("rtt", &key, None).unwrap();
                let mut buf = vec![0u8; 2 << 20];
                g.body.read_exact(&mut buf).unwrap();
            }),
        ),
    ];
    for (name, op) in &ops {
        let mut row = format!("{name:<14}");
        let mut base_us = 0.0;
        for (j, (_, c)) in clients.iter().enumerate() {
            // Keys of their own per client: every put creates, every
            // delete removes.
            let keys: Vec<String> = (0..n).map(|i| format!("{j}-{i}")).collect();
            let t = Instant::now();
            for key in &keys {
                op(*c, key);
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
            if j == 0 {
                base_us = us;
                row += &format!("{us:>12.2}");
            } else {
                row += &format!("{:>14.2} ({:>4.2})", us, base_us / us);
            }
        }
        println!("{row}");
    }
    gw.stop();
}
