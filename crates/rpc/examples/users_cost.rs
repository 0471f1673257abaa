//! What acting as a user costs per operation (issue 24): small objects on
//! a directory (tmpfs: /dev/shm), the same operations as the administrator
//! (no switch) and as a mapped user, in process (the engine alone,
//! switching in and out on every call: the switch's share is largest
//! there), over the gateway's Unix socket (a connection's thread stays its
//! user) and over HTTP (switching per call on the tokio workers). Rounds alternate the two, and the
//! median round is reported.
//!
//! Needs root (it acts as `--user`, default nobody):
//! `cargo run --release -p s3hpc-rpc --example users_cost -- [DIR] [USER]`

use s3hpc_client::{EmbeddedClient, HttpClient, HttpClientConfig, S3Client};
use s3hpc_http::{AuthConfig, HttpServer, MappedUsers};
use s3hpc_rpc::{ClientFor, Gateway, Peer, RemoteClient};
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

/// Each writes its own bucket: the administrator "admin", the user "user"
/// user's.
fn compare(label: &str, admin: &dyn S3Client, user: &dyn S3Client) {
    let (mut a, mut u): (Vec<[f64; 4]>, Vec<[f64; 4]>) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        a.push(round(admin, "admin"));
        u.push(round(user, "user"));
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
    store.create_bucket("admin").unwrap();
    store.create_bucket("user").unwrap();
    std::fs::set_permissions(
        tmp.path().join("root/user"),
        std::fs::Permissions::from_mode(0o1777),
    )
    .unwrap();
    println!("{OBJECTS} objects of 3901 bytes in {dir}, median of {ROUNDS} rounds, as {user}");

    // The switch alone: into the user's ids and back.
    let n = 100_000;
    let t = Instant::now();
    for _ in 0..n {
        who.act(|| ()).unwrap();
    }
    let switch = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    println!("switch    into the user's ids and back: {switch:.2} µs");

    let admin = EmbeddedClient::new(store.clone());
    let acting = EmbeddedClient::acting_as(store.clone(), who.clone());
    compare("embedded", &admin, &acting);

    // The gateway on a Unix socket: each connection acts as its peer.
    let sock = tmp.path().join("gw.sock");
    let s = store.clone();
    let client_for: ClientFor = Arc::new(move |peer| {
        let who = match peer {
            Peer::Unix { uid, gid, .. } => Identity::of_peer(uid, gid),
            Peer::Tcp => Identity::server(),
        };
        Arc::new(EmbeddedClient::held_as(s.clone(), who))
    });
    let addr = format!("unix:{}", sock.display());
    let gw =
        Gateway::start_per_peer(client_for, &[addr.parse().unwrap()], Default::default()).unwrap();
    std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o777)).unwrap();
    let connect = || RemoteClient::connect(&addr).unwrap();
    compare("rpc unix", &connect(), &who.act(connect).unwrap());
    gw.stop();

    let mut keys = std::collections::HashMap::new();
    keys.insert(
        "admin".to_string(),
        ("a-secret".to_string(), Identity::server()),
    );
    keys.insert("user".to_string(), ("u-secret".to_string(), who));
    let auth = AuthConfig::Mapped(MappedUsers {
        keys,
        anonymous: None,
        ..Default::default()
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
