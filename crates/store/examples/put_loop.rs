//! N small PUTs with no checksum (fast ETags, no fsync): the loop to count
//! instructions of, before and after a change to the PUT path.
//!
//! ```sh
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/examples/put_loop /dev/shm/pl 20000
//! ```

use s3hpc_store::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).expect("usage: put_loop DIR [N]");
    let n: usize = args.get(2).map_or(20_000, |s| s.parse().unwrap());
    let _ = std::fs::remove_dir_all(dir);
    let config = StoreConfig {
        etag: EtagPolicy::Fast,
        durability: Durability::None,
    };
    let s = Store::open(dir, config).unwrap();
    s.create_bucket("bkt").unwrap();
    let data = vec![7u8; 3901];
    let opts = PutOptions::default();
    for i in 0..n {
        s.put_object(
            "bkt",
            &format!("d/k{}", i % 1000),
            PutBody::Bytes(&data),
            &opts,
        )
        .unwrap();
    }
    let _ = std::fs::remove_dir_all(dir);
}
