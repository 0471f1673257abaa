//! What acting as a user costs per operation (issue 24): small objects on
//! a directory (tmpfs: /dev/shm), the same operations as the administrator
//! (no switch) and as a mapped user (two identity switches per call), in
//! process (the engine alone: the switch's share is largest there) and
//! over HTTP (what a client sees). Rounds alternate the two, and the
//! median round is reported.
//!
//! Needs root (it acts as `--user`, default nobody):
//! `cargo run --release -p s3hpc-rpc --example users_cost -- [DIR] [USER]`

use s3hpc_client::{EmbeddedClient, HttpClient, HttpClientConfig, S3Client};
use s3hpc_http::{AuthConfig, HttpServer, MappedUsers};
use s3hpc_store::{Durability, Identity, PutBody, PutOptions, Store, StoreConfig};
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Instant;

const OBJECTS: usize = 2000;
const ROUNDS: usize = 7;

/// Microseconds per operation of each kind, for `OBJECTS` objects.
fn round(c: &dyn S3Client, bucket: &str) -> [f64; 4] {
    let body = vec![7u8; 3901];
    let keys: Vec<String> = (0..OBJECTS).map(|i| format!("d{}/k{i}", i % 10)).collect();
    let mut out = [0.0; 4];
    let mut time = |slot: usize, f: &mut dyn FnMut(&str)| {
        let t = Instant::now();
        for k in &keys {
            f(k);
        }
        out[slot] = t.elapsed().as_secs_f64() * 1e6 / OBJECTS as f64;
    };
    let opts = PutOptions::default();
    time(0, &mut |k| {
        c.put_object(bucket, k, PutBody::Bytes(&body), &opts)
            .unwrap();
    });
    let mut buf = vec![0u8; 8192];
    time(1, &mut |k| {
        c.get_object_into(bucket, k, &mut buf[..3901]).unwrap();
    });
    time(2, &mut |k| {
        c.head_object(bucket, k).unwrap();
    });
    time(3, &mut |k| c.delete_object(bucket, k).unwrap());
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Each writes its own bucket: "a" the administrator's, "u" (1777) the
/// user's.
fn compare(label: &str, admin: &dyn S3Client, user: &dyn S3Client) {
    let (mut a, mut u): (Vec<[f64; 4]>, Vec<[f64; 4]>) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        a.push(round(admin, "a"));
        u.push(round(user, "u"));
    }
    for (i, op) in ["PUT", "GET", "HEAD", "DELETE"].iter().enumerate() {
        let ma = median(a.iter().map(|r| r[i]).collect());
        let mu = median(u.iter().map(|r| r[i]).collect());
        println!(
            "{label:9} {op:7} admin {ma:8.2} µs  user {mu:8.2} µs  user/admin {:.3}",
            mu / ma
        );
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "/dev/shm".into());
    let user = args.next().unwrap_or_else(|| "nobody".into());
    let who = Identity::parse(&user).expect("a user to act as");
    let tmp = tempfile::tempdir_in(&dir).unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = StoreConfig {
        durability: Durability::None,
        ..Default::default()
    };
    let store = Arc::new(Store::open(tmp.path().join("root"), config).unwrap());
    store.create_bucket("a").unwrap();
    store.create_bucket("u").unwrap();
    std::fs::set_permissions(
        tmp.path().join("root/u"),
        std::fs::Permissions::from_mode(0o1777),
    )
    .unwrap();
    println!("{OBJECTS} objects of 3901 bytes in {dir}, median of {ROUNDS} rounds, as {user}");

    let admin = EmbeddedClient::new(store.clone());
    let acting = EmbeddedClient::acting_as(store.clone(), who.clone());
    compare("embedded", &admin, &acting);

    let mut keys = std::collections::HashMap::new();
    keys.insert(
        "admin".to_string(),
        ("a-secret".to_string(), Identity::server()),
    );
    keys.insert("user".to_string(), ("u-secret".to_string(), who));
    let auth = AuthConfig::Mapped(MappedUsers {
        keys,
        anonymous: None,
    });
    let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), store, auth, &[])
        .unwrap()
        .spawn()
        .unwrap();
    let http = |key: &str, secret: &str| {
        HttpClient::new(HttpClientConfig {
            endpoint: server.endpoint(),
            credentials: Some((key.into(), secret.into())),
            ..Default::default()
        })
        .unwrap()
    };
    compare(
        "http",
        &http("admin", "a-secret"),
        &http("user", "u-secret"),
    );
    server.shutdown().unwrap();
}
