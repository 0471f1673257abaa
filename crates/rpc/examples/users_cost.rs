//! What acting as a user costs per operation: small objects on
//! a directory (tmpfs: /dev/shm), the same operations as the administrator
//! (no switch) and as a mapped user, in process (the engine alone,
//! switching in and out on every call: the switch's share is largest
//! there), over the gateway's Unix socket and over HTTP (a thread stays
//! the user between calls: `Acting::held`). Rounds alternate the two, and
//! the median round is reported.
//!
//! Needs root (it acts as USER, default nobody):
//! `cargo run --release -p s3hpc-rpc --example users_cost -- [DIR] [USER] [OBJECTS] [ROUNDS] [ONLY]`
//! ONLY (TRANSPORT: embedded, rpc or http) runs that transport alone;
//! `TRANSPORT:admin` or `TRANSPORT:user` one side of it, for counts of
//! system calls (`strace -f -c`) or instructions (two runs, subtracted).

use s3hpc_client::{EmbeddedClient, HttpClient, HttpClientConfig, S3Client};
use s3hpc_http::{AuthConfig, HttpServer, MappedUsers};
use s3hpc_rpc::{ClientFor, Gateway, Peer, RemoteClient};
use s3hpc_store::{Durability, Identity, ListRequest, PutBody, PutOptions, Store, StoreConfig};
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Instant;

/// The operations timed, in the order they run.
const OPS: [&str; 5] = ["PUT", "GET", "HEAD", "LIST", "DELETE"];

/// Microseconds per operation of each kind, for `objects` objects of
/// 4 KiB; a LIST is a page of 100 keys of one of 10 directories.
fn round(c: &dyn S3Client, bucket: &str, objects: usize) -> [f64; 5] {
    let body = vec![7u8; 4096];
    let keys: Vec<String> = (0..objects).map(|i| format!("d{}/k{i}", i % 10)).collect();
    let mut out = [0.0; 5];
    let mut time = |slot: usize, keys: &[String], f: &mut dyn FnMut(&str)| {
        let t = Instant::now();
        for k in keys {
            f(k);
        }
        out[slot] = t.elapsed().as_secs_f64() * 1e6 / keys.len() as f64;
    };
    let opts = PutOptions::default();
    time(0, &keys, &mut |k| {
        c.put_object(bucket, k, PutBody::Bytes(&body), &opts)
            .unwrap();
    });
    let mut buf = vec![0u8; 8192];
    time(1, &keys, &mut |k| {
        c.get_object_into(bucket, k, &mut buf[..4096]).unwrap();
    });
    time(2, &keys, &mut |k| {
        c.head_object(bucket, k).unwrap();
    });
    let dirs: Vec<String> = (0..objects.div_ceil(20))
        .map(|i| format!("d{}/", i % 10))
        .collect();
    time(3, &dirs, &mut |d| {
        let req = ListRequest {
            prefix: d.to_string(),
            max_keys: 100,
            ..Default::default()
        };
        c.list_objects(bucket, &req).unwrap();
    });
    time(4, &keys, &mut |k| c.delete_object(bucket, k).unwrap());
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// How many objects, rounds, and which side of which transport runs.
struct Plan {
    objects: usize,
    rounds: usize,
    /// A transport, and one side of it (true: the user).
    only: Option<(String, Option<bool>)>,
}

/// Each writes its own bucket: the administrator "admin", the user "user"
/// user's.
fn compare(plan: &Plan, label: &str, admin: &dyn S3Client, user: &dyn S3Client) {
    match &plan.only {
        Some((transport, _)) if transport != label => return,
        Some((_, Some(as_user))) => {
            let (c, b) = if *as_user {
                (user, "user")
            } else {
                (admin, "admin")
            };
            for _ in 0..plan.rounds {
                round(c, b, plan.objects);
            }
            println!("{label}: ran {} rounds as {b} only", plan.rounds);
            return;
        }
        _ => {}
    }
    let (mut a, mut u): (Vec<[f64; 5]>, Vec<[f64; 5]>) = (Vec::new(), Vec::new());
    for _ in 0..plan.rounds {
        a.push(round(admin, "admin", plan.objects));
        u.push(round(user, "user", plan.objects));
    }
    for (i, op) in OPS.iter().enumerate() {
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
    let number = |a: Option<String>, default| a.map_or(default, |s| s.parse().expect("a number"));
    let plan = Plan {
        objects: number(args.next(), 2000),
        rounds: number(args.next(), 7),
        only: args.next().map(|o| match o.split_once(':') {
            Some((t, side)) => (t.to_string(), Some(side == "user")),
            None => (o, None),
        }),
    };
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
    println!(
        "{} objects of 4 KiB in {dir}, median of {} rounds, as {user}",
        plan.objects, plan.rounds
    );

    // The switch alone: into the user's ids and back.
    let n = if plan.only.as_ref().is_some_and(|o| o.1.is_some()) {
        10
    } else {
        100_000
    };
    let t = Instant::now();
    for _ in 0..n {
        who.act(|| ()).unwrap();
    }
    let switch = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    println!("switch    into the user's ids and back: {switch:.2} µs");

    let admin = EmbeddedClient::new(store.clone());
    let acting = EmbeddedClient::acting_as(store.clone(), who.clone());
    compare(&plan, "embedded", &admin, &acting);

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
    compare(&plan, "rpc", &connect(), &who.act(connect).unwrap());
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
        &plan,
        "http",
        &http("admin", "a-secret"),
        &http("user", "u-secret"),
    );
    server.shutdown().unwrap();
}
