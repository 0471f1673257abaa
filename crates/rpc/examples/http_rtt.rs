//! Latency of one small HTTP call against a TCP loopback round trip, in
//! one process and one run: a raw ping-pong over loopback TCP (a thread
//! echoing 256 bytes per 256, what any request and answer pay for the
//! wire and two wake-ups), then HEAD and GET of a 3901-byte object over
//! s3hpc's HTTP server and signed `HttpClient`, each op N times per
//! round, the rounds alternating. Prints percentiles of each, the share in
//! the slow mode (over twice the op's p10) and CPU per op.
//!
//!     cargo run --release -p s3hpc-rpc --example http_rtt [-- N [DIR [ROUNDS]]]
//!
//! To profile the client alone (callgrind: the engine's `openat2` is not
//! known to valgrind), run the server in one process with
//! `S3HPC_RTT_SERVE=1` (it prints its endpoint) and the client in another
//! with `S3HPC_RTT_ENDPOINT=URL S3HPC_RTT_NO_CPU=1`.

use s3hpc_client::{HttpClient, PutBody, PutOptions, S3Client};
use s3hpc_http::{AuthConfig, HttpServer};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

type Op<'a> = Box<dyn FnMut() + 'a>;

fn process_cpu() -> Duration {
    // rustix's vDSO lookup does not run under valgrind.
    if std::env::var_os("S3HPC_RTT_NO_CPU").is_some() {
        return Duration::ZERO;
    }
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// A thread answering every 256 bytes with 256 bytes.
fn echo() -> TcpStream {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_nodelay(true).unwrap();
        let mut buf = [0u8; 256];
        while s.read_exact(&mut buf).is_ok() {
            if s.write_all(&buf).is_err() {
                break;
            }
        }
    });
    let s = TcpStream::connect(addr).expect("connect");
    s.set_nodelay(true).unwrap();
    s
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(3000, |a| a.parse().expect("N"));
    let base = match args.next() {
        Some(d) => tempfile::tempdir_in(d),
        None => tempfile::tempdir(),
    }
    .expect("temporary directory");
    let rounds: usize = args.next().map_or(3, |a| a.parse().expect("ROUNDS"));
    let config = StoreConfig {
        etag: EtagPolicy::Fast,
        durability: Durability::None,
    };
    let store = Arc::new(Store::open(base.path().join("root"), config).expect("store"));
    // `S3HPC_RTT_SERVE=1`: only the server, until killed (to profile a
    // client alone against it); `S3HPC_RTT_ENDPOINT=URL`: only the client.
    let endpoint = std::env::var("S3HPC_RTT_ENDPOINT").ok();
    let server = match endpoint {
        Some(_) => None,
        None => Some(
            HttpServer::bind(
                "127.0.0.1:0".parse().unwrap(),
                store,
                AuthConfig::single("rtt", "rtt-secret"),
                &[],
            )
            .and_then(HttpServer::spawn)
            .expect("HTTP server"),
        ),
    };
    let endpoint = endpoint.unwrap_or_else(|| server.as_ref().unwrap().endpoint());
    if std::env::var_os("S3HPC_RTT_SERVE").is_some() {
        println!("{endpoint}");
        loop {
            std::thread::park();
        }
    }
    let http = HttpClient::with_credentials(&endpoint, "rtt", "rtt-secret").unwrap();
    let _ = http.create_bucket("rtt");
    let small = vec![7u8; 3901];
    http.put_object("rtt", "k", PutBody::Bytes(&small), &PutOptions::default())
        .unwrap();
    let mut tcp = echo();
    let mut buf = [0u8; 256];
    let mut get_buf = vec![0u8; small.len()];
    let mut ops: Vec<(&str, Op)> = vec![
        (
            "tcp-rtt",
            Box::new(|| {
                tcp.write_all(&buf).unwrap();
                tcp.read_exact(&mut buf).unwrap();
            }),
        ),
        (
            "head",
            Box::new(|| drop(http.head_object("rtt", "k").unwrap())),
        ),
        (
            "get-3901",
            Box::new(|| {
                let mut g = http.get_object("rtt", "k", None).unwrap();
                g.body.read_exact(&mut get_buf).unwrap();
            }),
        ),
    ];
    let mut lat: Vec<Vec<f64>> = vec![Vec::new(); ops.len()];
    let mut cpu = vec![Duration::ZERO; ops.len()];
    for r in 0..rounds {
        let order: Vec<usize> = if r % 2 == 0 {
            (0..ops.len()).collect()
        } else {
            (0..ops.len()).rev().collect()
        };
        for i in order {
            let c = process_cpu();
            for _ in 0..n {
                let t = Instant::now();
                (ops[i].1)();
                lat[i].push(t.elapsed().as_secs_f64() * 1e6);
            }
            cpu[i] += process_cpu() - c;
        }
    }
    println!(
        "{:<10}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}",
        "op", "p10", "p50", "p90", "mean", "slow%", "cpu"
    );
    for (i, (name, _)) in ops.iter().enumerate() {
        let l = &mut lat[i];
        l.sort_by(f64::total_cmp);
        let p = |q: f64| l[((l.len() - 1) as f64 * q) as usize];
        let slow = l.iter().filter(|&&x| x > 2.0 * p(0.1)).count() as f64 / l.len() as f64;
        let mean = l.iter().sum::<f64>() / l.len() as f64;
        let cpu_us = cpu[i].as_secs_f64() * 1e6 / l.len() as f64;
        println!(
            "{name:<10}{:>8.1}{:>8.1}{:>8.1}{:>8.1}{:>8.1}{:>8.1}",
            p(0.1),
            p(0.5),
            p(0.9),
            mean,
            slow * 100.0,
            cpu_us
        );
    }
    drop(ops);
    drop(http);
    if let Some(s) = server {
        s.shutdown().expect("HTTP server stop");
    }
}
