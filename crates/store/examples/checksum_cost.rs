//! What each checksum costs per GiB, one core: the hash alone over a
//! buffer in 1 MiB pieces (as the engine feeds it), and a whole PUT of a
//! 256 MiB object to DIR with that checksum against one without.
//!
//! ```sh
//! cargo run --release -p s3hpc-store --example checksum_cost -- /dev/shm/cc [ROUNDS]
//! ```

use s3hpc_store::*;
use std::time::Instant;

const SIZE: usize = 256 << 20;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).expect("usage: checksum_cost DIR [ROUNDS]");
    let rounds: usize = args.get(2).map_or(5, |s| s.parse().unwrap());
    let data: Vec<u8> = (0..SIZE).map(|i| (i * 31 + i / 4099) as u8).collect();
    let gib = SIZE as f64 / (1u64 << 30) as f64;
    let _ = std::fs::remove_dir_all(dir);
    let config = StoreConfig {
        etag: EtagPolicy::Fast,
        durability: Durability::None,
    };
    let s = Store::open(dir, config).unwrap();
    s.create_bucket("bkt").unwrap();
    // Best of ROUNDS, in seconds per GiB.
    let best = |f: &mut dyn FnMut()| {
        (0..rounds)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() / gib
            })
            .fold(f64::INFINITY, f64::min)
    };
    let put = |check: Option<ChecksumRequest>| {
        let opts = PutOptions {
            checksum: check,
            ..Default::default()
        };
        let mut r = std::io::Cursor::new(&data);
        let body = PutBody::Stream {
            reader: &mut r,
            len: Some(SIZE as u64),
        };
        s.put_object("bkt", "obj", body, &opts).unwrap();
    };
    // Without a checksum, measured between the others too (the machine is
    // shared: the least of all rounds is the baseline).
    let mut base = best(&mut || put(None));
    println!("| algorithm | hash GiB/s | hash ms/GiB | PUT ms/GiB | PUT added ms/GiB |");
    println!("|---|---:|---:|---:|---:|");
    let mut rows: Vec<(&str, Option<ChecksumAlgorithm>)> = ChecksumAlgorithm::ALL
        .iter()
        .map(|a| (a.as_str(), Some(*a)))
        .collect();
    rows.push(("MD5 (ETag policy md5)", None));
    for (name, alg) in rows {
        let hash = best(&mut || match alg {
            Some(a) => {
                let mut h = Hasher::new(a);
                data.chunks(1 << 20).for_each(|c| h.update(c));
                std::hint::black_box(h.finish());
            }
            None => {
                use md5::Digest;
                let mut h = md5::Md5::new();
                data.chunks(1 << 20).for_each(|c| h.update(c));
                std::hint::black_box(h.finalize());
            }
        });
        base = base.min(best(&mut || put(None)));
        let (p, added) = match alg {
            Some(a) => {
                let p = best(&mut || put(Some(ChecksumRequest::new(a))));
                (
                    format!("{:.1}", p * 1e3),
                    format!("{:.1}", (p - base) * 1e3),
                )
            }
            None => ("".into(), "".into()),
        };

        println!(
            "| {name} | {:.2} | {:.1} | {p} | {added} |",
            1.0 / hash,
            hash * 1e3
        );
    }
    println!(
        "PUT of 256 MiB without a checksum: {:.1} ms/GiB",
        base * 1e3
    );
    let _ = std::fs::remove_dir_all(dir);
}
