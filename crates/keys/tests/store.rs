//! The key store as two servers sharing one directory see it.

use s3hpc_keys::session::Origin;
use s3hpc_keys::{KeyKind, KeyStore, Refused};
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn private_dir() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    t
}

fn open(dir: &std::path::Path) -> (Arc<KeyStore>, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l = lines.clone();
    let s = KeyStore::open(dir, move |m| l.lock().unwrap().push(m.to_owned())).unwrap();
    (s, lines)
}

#[test]
fn a_key_made_on_one_server_works_on_another_until_revoked() {
    let t = private_dir();
    let (a, _) = open(t.path());
    let (b, _) = open(t.path());
    let k = a.create(4242, 4343, None).unwrap();
    assert!(k.access_key.starts_with("S3HK"));
    let found = a.lookup(&k.access_key).unwrap();
    assert_eq!(
        (found.uid, found.gid, found.kind),
        (4242, 4343, KeyKind::LongLived)
    );
    assert_eq!(found.secret, k.secret);
    // B sees it at its next poll, without a restart.
    b.refresh();
    assert_eq!(b.lookup(&k.access_key).unwrap().secret, k.secret);
    // Another user cannot revoke it; its owner can.
    assert!(b.revoke(&k.access_key, 1000, false).is_err());
    assert!(b.lookup(&k.access_key).is_ok());
    b.revoke(&k.access_key, 4242, false).unwrap();
    a.refresh();
    assert_eq!(a.lookup(&k.access_key).unwrap_err(), Refused::Unknown);
    // The store keeps nothing readable by others.
    for sub in ["", "keys", "revoked", "used"] {
        let mode = std::fs::metadata(t.path().join(sub))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "{sub}: {mode:o}");
    }
}

#[test]
fn a_store_others_can_read_is_refused() {
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = KeyStore::open(t.path(), |_| {}).unwrap_err();
    assert!(e.contains("chmod 700"), "{e}");
    // Made by the server: private from the start.
    let fresh = t.path().join("store");
    KeyStore::open(&fresh, |_| {}).unwrap();
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn concurrent_creates_all_land() {
    let t = private_dir();
    let stores: Vec<_> = (0..4).map(|_| open(t.path()).0).collect();
    let made: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = stores
            .iter()
            .map(|st| {
                s.spawn(move || {
                    (0..25)
                        .map(|_| st.create(7, 7, None).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(made.len(), 100);
    let (other, _) = open(t.path());
    assert_eq!(other.list(Some(7)).len(), 100);
    for k in &made {
        assert_eq!(other.lookup(&k.access_key).unwrap().secret, k.secret);
    }
}

#[test]
fn a_torn_or_forged_entry_is_refused_and_logged_once() {
    let t = private_dir();
    let (s, lines) = open(t.path());
    let k = s.create(5, 5, None).unwrap();
    let keys = t.path().join("keys");
    std::fs::write(keys.join("S3HKTORN.json"), b"{\"access_key\": \"S3HKTO").unwrap();
    // A copy of a real key under another name grants nothing.
    std::fs::copy(
        keys.join(format!("{}.json", k.access_key)),
        keys.join("S3HKCOPY.json"),
    )
    .unwrap();
    s.refresh();
    std::thread::sleep(Duration::from_millis(20));
    s.list(None);
    assert_eq!(s.lookup("S3HKTORN").unwrap_err(), Refused::Unknown);
    assert_eq!(s.lookup("S3HKCOPY").unwrap_err(), Refused::Unknown);
    assert!(s.lookup(&k.access_key).is_ok());
    let l = lines.lock().unwrap();
    assert_eq!(l.len(), 2, "{l:?}");
    assert!(
        l.iter()
            .any(|m| m.contains("S3HKTORN.json") && m.contains("decode")),
        "{l:?}"
    );
    // No secret in the log.
    assert!(!l.iter().any(|m| m.contains(&k.secret)), "{l:?}");
}

#[test]
fn keys_expire() {
    let t = private_dir();
    let (s, _) = open(t.path());
    let k = s.create(5, 5, Some(Duration::from_secs(1))).unwrap();
    assert!(s.lookup(&k.access_key).is_ok());
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(s.lookup(&k.access_key).unwrap_err(), Refused::Expired);
}

#[test]
fn sessions_need_no_store_entry_expire_and_end_with_revoke_all() {
    let t = private_dir();
    let (a, _) = open(t.path());
    let (b, _) = open(t.path());
    let c = a
        .session(Origin::Socket, 1001, 100, Duration::from_secs(2))
        .unwrap();
    assert!(c.access_key.starts_with("S3HS"));
    // The other server derives the same secret and token from the key.
    let f = b.lookup(&c.access_key).unwrap();
    assert_eq!((f.uid, f.gid, f.kind), (1001, 100, KeyKind::Session));
    assert_eq!(
        (f.secret.as_str(), f.token.as_deref()),
        (c.secret.as_str(), Some(c.token.as_str()))
    );
    assert!(std::fs::read_dir(t.path().join("keys"))
        .unwrap()
        .next()
        .is_none());
    // Too long a session is refused.
    assert!(a
        .session(Origin::Socket, 1001, 100, Duration::from_secs(8 * 86400))
        .is_err());
    // Revoking everything of the user voids its sessions on every server.
    let k = a.create(1001, 100, None).unwrap();
    let removed = a.revoke_all(1001).unwrap();
    assert_eq!(removed.len(), 1);
    b.refresh();
    assert_eq!(b.lookup(&c.access_key).unwrap_err(), Refused::Revoked);
    assert_eq!(b.lookup(&k.access_key).unwrap_err(), Refused::Unknown);
    // A session made after it works.
    let later = a
        .session(Origin::Socket, 1001, 100, Duration::from_secs(2))
        .unwrap();
    assert!(b.lookup(&later.access_key).is_ok());
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(b.lookup(&later.access_key).unwrap_err(), Refused::Expired);
}

#[test]
fn last_use_is_written_down_and_listed() {
    let t = private_dir();
    let (a, _) = open(t.path());
    let k = a.create(9, 9, None).unwrap();
    assert_eq!(a.list(Some(9))[0].last_used, None);
    a.lookup(&k.access_key).unwrap();
    let (b, _) = open(t.path());
    // a writes its uses when listing (and every 30 s); b reads them.
    a.list(None);
    let l = b.list(Some(9));
    assert!(l[0].last_used.is_some(), "{l:?}");
    assert!(b.list(Some(10)).is_empty());
}
