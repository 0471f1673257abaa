//! Thread per connection against epoll workers: aggregate small-request
//! throughput (HEAD of a 3901-byte object, and PUT of one) with 1 to 64
//! concurrent clients over a Unix socket, each model in the same run.
//!
//!     cargo run --release -p s3hpc-rpc --example models [-- SECONDS_PER_CASE [DIR]]

use s3hpc_client::{EmbeddedClient, PutBody, PutOptions, S3Client};
use s3hpc_rpc::{Address, Gateway, GatewayOptions, RemoteClient};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: f64 = args
        .next()
        .map_or(1.0, |a| a.parse().expect("SECONDS_PER_CASE"));
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
    embedded.create_bucket("models").expect("bucket");
    let body = vec![1u8; 3901];
    embedded
        .put_object(
            "models",
            "obj",
            PutBody::Bytes(&body),
            &PutOptions::default(),
        )
        .expect("object");
    let models = [("thread/conn", 0usize), ("2 epoll workers", 2)];
    println!("kops/s over a Unix socket, {secs} s per case");
    println!(
        "{:<10}{:>8}{:>18}{:>18}",
        "op", "clients", models[0].0, models[1].0
    );
    for op in ["head", "put"] {
        for clients in [1usize, 2, 8, 64] {
            let mut line = format!("{op:<10}{clients:>8}");
            for (i, (_, workers)) in models.iter().enumerate() {
                let opts = GatewayOptions {
                    workers: *workers,
                    ..GatewayOptions::default()
                };
                let addr = Address::Unix(base.path().join(format!("m{i}.sock")));
                let gw = Gateway::start(embedded.clone(), &[addr], opts).expect("gateway");
                let addr = gw.addresses()[0].to_string();
                let rate = run(&addr, clients, op, &body, Duration::from_secs_f64(secs));
                line += &format!("{:>18.1}", rate / 1e3);
                gw.stop();
            }
            println!("{line}");
        }
    }
}

/// Ops per second of `clients` threads, each with its own connection.
fn run(addr: &str, clients: usize, op: &str, body: &[u8], time: Duration) -> f64 {
    let done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..clients {
            let (done, stop) = (&done, &stop);
            s.spawn(move || {
                let c = RemoteClient::connect(addr).expect("client");
                let key = format!("k{t}");
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    if op == "head" {
                        c.head_object("models", "obj").expect("head");
                    } else {
                        let b = PutBody::Bytes(body);
                        c.put_object("models", &key, b, &PutOptions::default())
                            .expect("put");
                    }
                    n += 1;
                }
                done.fetch_add(n, Ordering::Relaxed);
            });
        }
        std::thread::sleep(time);
        stop.store(true, Ordering::Relaxed);
    });
    done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}
