//! Per-operation cost of the engine against the same POSIX calls, single
//! thread: `cargo run --release -p s3hpc-store --example opcost -- DIR [N]`.
//! A quick look at where metadata time goes; the full comparison is
//! `s3hpc bench io500`.

use s3hpc_store::*;
use std::io::Write;
use std::time::Instant;

fn rate(label: &str, n: usize, f: impl FnMut(usize)) -> f64 {
    let t = Instant::now();
    (0..n).for_each(f);
    let r = n as f64 / t.elapsed().as_secs_f64();
    println!("{label:<28} {:>10.0} ops/s", r);
    r
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let base = std::path::PathBuf::from(args.get(1).expect("usage: opcost DIR [N]"));
    let n: usize = args.get(2).map_or(50_000, |s| s.parse().unwrap());
    let px = base.join("posix/d");
    std::fs::create_dir_all(&px).unwrap();
    for etag in [EtagPolicy::Fast, EtagPolicy::Md5] {
        let root = base.join(format!("store-{}", etag.as_str()));
        let s = Store::open(
            &root,
            StoreConfig {
                etag,
                durability: Durability::None,
            },
        )
        .unwrap();
        s.create_bucket("bkt").unwrap();
        let data = vec![7u8; 3901];
        println!("--- etag {}", etag.as_str());
        let p = |i: usize| px.join(format!("f{i}"));
        let k = |i: usize| format!("d/f{i}");
        let a = rate("posix create+write 3901", n, |i| {
            let mut f = std::fs::File::create(p(i)).unwrap();
            f.write_all(&data).unwrap();
        });
        let b = rate("put 3901 (new key)", n, |i| {
            s.put_object("bkt", &k(i), PutBody::Bytes(&data), &PutOptions::default())
                .unwrap();
        });
        println!("  ratio {:.2}", b / a);
        for i in 0..n {
            s.delete_object("bkt", &k(i)).unwrap();
        }
        let b = rate("put 0 B + put 3901", n, |i| {
            s.put_object("bkt", &k(i), PutBody::Bytes(&[]), &PutOptions::default())
                .unwrap();
            s.put_object("bkt", &k(i), PutBody::Bytes(&data), &PutOptions::default())
                .unwrap();
        });
        println!("  ratio {:.2}", b / a);
        let a = rate("posix stat", n, |i| {
            std::fs::metadata(p(i)).unwrap();
        });
        let b = rate("head", n, |i| {
            s.head_object("bkt", &k(i)).unwrap();
        });
        println!("  ratio {:.2}", b / a);
        // The same stat the engine makes, without the engine around it.
        let dir = rustix::fs::open(
            root.join("bkt/d"),
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let c = rate("bare statat(dirfd, name)", n, |i| {
            let name = format!("f{i}");
            rustix::fs::statat(&dir, name.as_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW).unwrap();
        });
        println!("  head/bare {:.2}", b / c);
        let mut buf = vec![0u8; 3901];
        let a = rate("posix open+read+close", n, |i| {
            use std::io::Read;
            std::fs::File::open(p(i))
                .unwrap()
                .read_exact(&mut buf)
                .unwrap();
        });
        let b = rate("get", n, |i| {
            use std::io::Read;
            s.get_object("bkt", &k(i), None)
                .unwrap()
                .body
                .read_exact(&mut buf)
                .unwrap();
        });
        println!("  ratio {:.2}", b / a);
        let a = rate("posix readdir+stat", 1, |_| {
            for e in std::fs::read_dir(&px).unwrap() {
                let e = e.unwrap();
                std::hint::black_box(e.metadata().unwrap().len());
            }
        }) * n as f64;
        let b = rate("list (1000-key pages)", 1, |_| {
            let mut req = ListRequest {
                prefix: "d/".into(),
                max_keys: 1000,
                ..Default::default()
            };
            loop {
                let page = s.list_objects("bkt", &req).unwrap();
                std::hint::black_box(page.objects.len());
                if !page.is_truncated {
                    break;
                }
                req.continuation_token = page.next_token;
            }
        }) * n as f64;
        println!("  ratio {:.2} (per entry)", b / a);
        let a = rate("posix unlink", n, |i| std::fs::remove_file(p(i)).unwrap());
        let b = rate("delete", n, |i| s.delete_object("bkt", &k(i)).unwrap());
        println!("  ratio {:.2}", b / a);
        let a = rate("posix create 0 B", n, |i| {
            std::fs::File::create(p(i)).unwrap();
        });
        let b = rate("put 0 B", n, |i| {
            s.put_object("bkt", &k(i), PutBody::Bytes(&[]), &PutOptions::default())
                .unwrap();
        });
        println!("  ratio {:.2}", b / a);
        for i in 0..n {
            std::fs::remove_file(p(i)).unwrap();
            s.delete_object("bkt", &k(i)).unwrap();
        }
    }
    std::fs::remove_dir_all(&base).unwrap();
}
