//! What a page of ListObjects costs as a mapped user against the server,
//! on any directory (a shared file system's mount is where it matters):
//! a page's objects are looked up (stat, and the stored ETag) by up to 16
//! threads, which act as the user because a thread starts with its
//! creator's credentials. Rounds alternate the two; medians reported.
//!
//! Needs root (it acts as USER):
//! `cargo run --release -p s3hpc-store --example list_as_user -- DIR USER [OBJECTS] [ROUNDS]`

use s3hpc_store::*;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: list_as_user DIR USER [OBJECTS] [ROUNDS]";
    let dir = std::path::Path::new(args.get(1).expect(usage))
        .join(format!("list-as-user-{}", std::process::id()));
    let who = Identity::parse(args.get(2).expect(usage)).expect("a user to act as");
    let objects: usize = args.get(3).map_or(1000, |s| s.parse().unwrap());
    let rounds: usize = args.get(4).map_or(5, |s| s.parse().unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = StoreConfig {
        durability: Durability::None,
        ..Default::default()
    };
    let store = Arc::new(Store::open(dir.join("root"), config).unwrap());
    store.create_bucket("lst").unwrap();
    for p in [dir.join("root"), dir.join("root/lst")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let body = vec![7u8; 100];
    for i in 0..objects {
        let key = format!("k{i:06}");
        store
            .put_object("lst", &key, PutBody::Bytes(&body), &PutOptions::default())
            .unwrap();
    }
    let admin = Acting::new(store.clone(), Identity::server());
    let user = Acting::new(store.clone(), who.clone());
    let req = ListRequest {
        max_keys: 1000,
        ..Default::default()
    };
    let page = |a: &Acting| {
        let t = Instant::now();
        let p = a.list_objects("lst", &req).unwrap();
        assert_eq!(p.objects.len(), objects.min(1000));
        t.elapsed().as_secs_f64() * 1e3
    };
    let (mut ta, mut tu) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        ta.push(page(&admin));
        tu.push(page(&user));
    }
    let (ma, mu) = (median(ta), median(tu));
    println!(
        "{objects} objects in {}: a page of {} as the server {ma:.1} ms, as {} {mu:.1} ms, user/server {:.2}",
        dir.display(),
        objects.min(1000),
        who.describe(),
        mu / ma
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
