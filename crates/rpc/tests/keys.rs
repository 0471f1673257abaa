//! The gateway's key operations with real Linux users (made for the test
//! as root; skipped, saying so, otherwise): each user acts on its own keys
//! only, whatever the request says, because the kernel names the caller.

use s3hpc_client::{EmbeddedClient, ErrorCode, S3Error};
use s3hpc_keys::KeyStore;
use s3hpc_rpc::message::{Request, Response};
use s3hpc_rpc::{ClientFor, Gateway, GatewayOptions, Peer, RemoteClient};
use s3hpc_store::{Identity, Store, StoreConfig};
use s3hpc_test_users::{data_root, Users};
use std::borrow::Cow;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

fn gateway(addr: &str, keys: Option<Arc<KeyStore>>) -> Gateway {
    let (_d, root) = data_root();
    let store = Arc::new(Store::open(&root, StoreConfig::default()).unwrap());
    let client_for: ClientFor = Arc::new(move |peer| {
        let who = match peer {
            Peer::Unix { uid, gid, .. } => Identity::of_peer(uid, gid),
            Peer::Tcp => Identity::server(),
        };
        Arc::new(EmbeddedClient::held_as(store.clone(), who))
    });
    let opts = GatewayOptions {
        keys,
        ..Default::default()
    };
    Gateway::start_per_peer(client_for, &[addr.parse().unwrap()], opts).unwrap()
}

fn call(c: &RemoteClient, req: Request<'_>) -> Result<Response, S3Error> {
    c.key_request(&req)
}

#[track_caller]
fn refused(r: Result<Response, S3Error>, code: ErrorCode) {
    match r {
        Err(e) if e.code == code => {}
        other => panic!("expected {code:?}, got {other:?}"),
    }
}

#[test]
fn each_user_acts_on_its_own_keys_only() {
    let Some(users) = Users::make("k") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), PermissionsExt::from_mode(0o755)).unwrap();
    let keys = KeyStore::open(&dir.path().join("store"), |_| {}).unwrap();
    let addr = format!("unix:{}", dir.path().join("gw.sock").display());
    let gw = gateway(&addr, Some(keys.clone()));
    let as_user = |u: usize| {
        users.ids[u]
            .act(|| RemoteClient::connect(&addr).unwrap())
            .unwrap()
    };
    let (a, b) = (as_user(0), as_user(1));
    let root = RemoteClient::connect(&addr).unwrap();

    let Response::NewKey(ka) = call(&a, Request::KeyCreate { valid_secs: None }).unwrap() else {
        panic!("no key")
    };
    // The key is a's: the store says so, and so does every server's lookup.
    assert_eq!(keys.lookup(&ka.access_key).unwrap().uid, users.uid(0));
    // b neither sees nor revokes it, nor lists a's keys by asking.
    let Response::Keys(of_b) = call(&b, Request::KeyList { uid: None }).unwrap() else {
        panic!()
    };
    assert!(of_b.is_empty(), "{of_b:?}");
    refused(
        call(
            &b,
            Request::KeyList {
                uid: Some(users.uid(0)),
            },
        ),
        ErrorCode::AccessDenied,
    );
    refused(
        call(
            &b,
            Request::KeyRevoke {
                access_key: Cow::Borrowed(&ka.access_key),
            },
        ),
        ErrorCode::InvalidArgument,
    );
    refused(
        call(
            &b,
            Request::KeyRevokeAll {
                uid: Some(users.uid(0)),
            },
        ),
        ErrorCode::AccessDenied,
    );
    assert!(keys.lookup(&ka.access_key).is_ok());
    // a's sessions are a's.
    let Response::Session(s) = call(&a, Request::SessionCreate { valid_secs: 60 }).unwrap() else {
        panic!()
    };
    assert_eq!(keys.lookup(&s.access_key).unwrap().uid, users.uid(0));
    // Root sees every key, and may revoke anyone's.
    let Response::Keys(all) = call(&root, Request::KeyList { uid: None }).unwrap() else {
        panic!()
    };
    assert!(all.iter().any(|k| k.access_key == ka.access_key));
    // a revokes its own, and all its sessions with --all.
    call(&a, Request::KeyRevokeAll { uid: None }).unwrap();
    assert!(keys.lookup(&ka.access_key).is_err());
    assert!(keys.lookup(&s.access_key).is_err());
    // The secret never reaches a list.
    let Response::Keys(all) = call(&root, Request::KeyList { uid: None }).unwrap() else {
        panic!()
    };
    assert!(!format!("{all:?}").contains(&ka.secret));
    gw.stop();
}

#[test]
fn no_keys_over_tcp_or_without_a_store() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), PermissionsExt::from_mode(0o700)).unwrap();
    let keys = KeyStore::open(&dir.path().join("store"), |_| {}).unwrap();
    let gw = gateway("tcp:127.0.0.1:0", Some(keys));
    let tcp = RemoteClient::connect(&gw.addresses()[0].to_string()).unwrap();
    refused(
        call(&tcp, Request::KeyCreate { valid_secs: None }),
        ErrorCode::AccessDenied,
    );
    gw.stop();
    let addr = format!("unix:{}", dir.path().join("plain.sock").display());
    let gw = gateway(&addr, None);
    let c = RemoteClient::connect(&addr).unwrap();
    refused(
        call(&c, Request::SessionCreate { valid_secs: 60 }),
        ErrorCode::NotImplemented,
    );
    gw.stop();
}
