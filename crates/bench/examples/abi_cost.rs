//! What the libs3 C ABI costs per operation: the same engine reached
//! natively (`EmbeddedClient`) and through a libs3 4.x library loaded by
//! dlopen (s3hpc's `libs3.so.4` on `file://`), op by op, in alternating
//! rounds so that both see the same machine.
//!
//!     cargo build --release && \
//!     cargo run --release -p s3hpc-bench --example abi_cost [-- ITERATIONS [DIR [ROUNDS [OPS]]]]
//!
//! DIR defaults to a temporary directory; pass one on tmpfs (/dev/shm) to
//! take the disk out of the picture. OPS is a comma list of rows (a get
//! or head needs its put before it, a delete its put). The library is the
//! `libs3_4.so` next to the example's binary's directory (target/release).
//! Prints the median over the rounds of each op's time per call, and
//! libs3 over embedded.

use s3hpc_bench::libs3::{Libs3Client, Libs3Target};
use s3hpc_client::{EmbeddedClient, PutBody, PutOptions, S3Client};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig};
use std::sync::Arc;
use std::time::Instant;

type Op<'a> = Box<dyn Fn(&dyn S3Client, &str) + 'a>;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

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
    let rounds: usize = args.next().map_or(5, |a| a.parse().expect("ROUNDS"));
    let only: Option<Vec<String>> = args
        .next()
        .map(|a| a.split(',').map(str::to_string).collect());
    let root = base.path().join("root");
    let config = StoreConfig {
        etag: EtagPolicy::Fast,
        durability: Durability::None,
    };
    let store = Arc::new(Store::open(&root, config).expect("store"));
    let embedded = EmbeddedClient::new(store);
    let exe = std::env::current_exe().expect("own path");
    // target/release/examples/abi_cost -> target/release/libs3_4.so
    let library = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let target = Libs3Target {
        host: format!("file://{}?etag=fast&durability=none", root.display()),
        access_key: String::new(),
        secret_key: String::new(),
        region: "us-east-1".into(),
    };
    let libs3 = Libs3Client::open(&library.join("libs3_4.so"), &target).expect("libs3.so.4");
    embedded.create_bucket("abi").expect("bucket");
    let small = vec![7u8; 3901];
    let hard = vec![8u8; 47008];
    let easy = vec![9u8; 2 << 20];
    let opts = PutOptions::default();
    let put = |c: &dyn S3Client, key: &str, body: &[u8]| {
        c.put_object("abi", key, PutBody::Bytes(body), &opts)
            .unwrap();
    };
    // One read buffer for every GET, as a benchmark reuses its own: a
    // fresh 2 MiB buffer per call would time the page faults.
    let buf = std::cell::RefCell::new(vec![0u8; easy.len()]);
    let get = |c: &dyn S3Client, key: &str, len: usize| {
        c.get_object_into("abi", key, &mut buf.borrow_mut()[..len])
            .unwrap();
    };
    // Large objects rotate over a few keys, to bound the space used.
    let big = |key: &str, tag: &str| format!("{tag}{}", key.len() % 4);
    let ops: Vec<(&str, Op)> = vec![
        ("put-3901", Box::new(|c, k| put(c, k, &small))),
        (
            "head",
            Box::new(|c, k| drop(c.head_object("abi", k).unwrap())),
        ),
        (
            "head-missing",
            Box::new(|c, k| assert!(c.head_object("abi", &format!("{k}x")).is_err())),
        ),
        ("get-3901", Box::new(|c, k| get(c, k, small.len()))),
        (
            "delete",
            Box::new(|c, k| c.delete_object("abi", k).unwrap()),
        ),
        ("put-47008", Box::new(|c, k| put(c, &big(k, "h"), &hard))),
        (
            "get-47008",
            Box::new(|c, k| get(c, &big(k, "h"), hard.len())),
        ),
        ("put-2MiB", Box::new(|c, k| put(c, &big(k, "e"), &easy))),
        (
            "get-2MiB",
            Box::new(|c, k| get(c, &big(k, "e"), easy.len())),
        ),
    ];
    let clients: [(&str, &dyn S3Client); 2] = [("embedded", &embedded), ("libs3", &libs3)];
    let ops: Vec<_> = ops
        .iter()
        .filter(|(name, _)| only.as_ref().is_none_or(|o| o.iter().any(|x| x == name)))
        .collect();
    // times[op][client]: one time per call and round.
    let mut times = vec![[Vec::new(), Vec::new()]; ops.len()];
    for round in 0..rounds {
        // Keys of their own per round and client: every put creates.
        for (j, (_, c)) in clients.iter().enumerate() {
            let keys: Vec<String> = (0..n).map(|i| format!("r{round}c{j}-{i}")).collect();
            for (i, (_, op)) in ops.iter().enumerate() {
                let t = Instant::now();
                for key in &keys {
                    op(*c, key);
                }
                times[i][j].push(t.elapsed().as_secs_f64() * 1e6 / n as f64);
            }
        }
    }
    println!("{n} calls per op and round, {rounds} rounds, one thread; median µs per call");
    println!(
        "{:<14}{:>10}{:>10}{:>10}{:>8}",
        "op", "embedded", "libs3", "+µs", "ratio"
    );
    for ((name, _), [e, l]) in ops.iter().zip(times) {
        let (e, l) = (median(e), median(l));
        println!("{name:<14}{e:>10.2}{l:>10.2}{:>10.2}{:>8.2}", l - e, e / l);
    }
}
