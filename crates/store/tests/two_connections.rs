//! Two engines ("connections") over one data root, as two processes or two
//! nodes have: each with its own directory-handle and listing caches. Runs
//! on any file system: `S3HPC_TEST_DIR=/mnt/shared cargo test -p s3hpc-store
//! --test two_connections` (and `scripts/cluster test` runs this binary
//! inside a node of the cluster, on its shared volume, where a
//! directory-handle defect showed on one node).

mod common;

use common::*;
use md5::{Digest, Md5};
use s3hpc_store::*;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn two() -> (tempfile::TempDir, Store, Store) {
    let tmp = test_dir();
    let cfg = StoreConfig {
        etag: EtagPolicy::Md5,
        durability: Durability::None,
    };
    let a = Store::open(tmp.path().join("root"), cfg).unwrap();
    let b = Store::open(tmp.path().join("root"), cfg).unwrap();
    a.create_bucket(BUCKET).unwrap();
    (tmp, a, b)
}

fn get(s: &Store, key: &str) -> Result<(String, Vec<u8>)> {
    let mut g = s.get_object(BUCKET, key, None)?;
    let mut v = Vec::new();
    g.body.read_to_end(&mut v).unwrap();
    Ok((g.info.etag, v))
}

fn put(s: &Store, key: &str, data: &[u8]) -> Result<String> {
    s.put_object(BUCKET, key, PutBody::Bytes(data), &PutOptions::default())
}

/// A directory the other connection removed and made again under a handle
/// this one has cached: every call must find the new directory. (GlusterFS
/// reports a link count of 2 for a removed directory, so a check of
/// `st_nlink == 0` alone answered PUTs 404 and GETs 500 there.)
#[test]
fn directory_recreated_under_a_cached_handle() {
    let (_t, a, b) = two();
    for i in 0..30 {
        let d = format!("d{i}/sub");
        put(&a, &format!("{d}/x"), b"x").unwrap();
        get(&a, &format!("{d}/x")).unwrap();
        // B removes the object, and with it the now empty directories...
        b.delete_object(BUCKET, &format!("{d}/x")).unwrap();
        // ...and makes them again: new inodes under the same path.
        put(&b, &format!("{d}/y"), b"y").unwrap();
        put(&a, &format!("{d}/z"), b"z").unwrap_or_else(|e| panic!("round {i}: PUT {e}"));
        let (_, body) = get(&a, &format!("{d}/y")).unwrap_or_else(|e| panic!("round {i}: {e}"));
        assert_eq!(body, b"y");
        let gone = get(&a, &format!("{d}/x")).unwrap_err();
        assert_eq!(gone.code, ErrorCode::NoSuchKey, "round {i}: {gone}");
        let (_, body) = get(&b, &format!("{d}/z")).unwrap_or_else(|e| panic!("round {i}: {e}"));
        assert_eq!(body, b"z");
    }
}

/// A puts, B deletes, A puts again into the same directory, 30 rounds.
#[test]
fn put_delete_put_across_connections() {
    let (_t, a, b) = two();
    for i in 0..30 {
        put(&a, "p/q/x", format!("x{i}").as_bytes()).unwrap();
        get(&b, "p/q/x").unwrap();
        b.delete_object(BUCKET, "p/q/x").unwrap();
        put(&a, "p/q/y", b"y").unwrap_or_else(|e| panic!("round {i}: {e}"));
        get(&a, "p/q/y").unwrap_or_else(|e| panic!("round {i}: {e}"));
        get(&b, "p/q/y").unwrap_or_else(|e| panic!("round {i}: {e}"));
        a.delete_object(BUCKET, "p/q/y").unwrap();
    }
}

/// Listings on one connection right after changes on the other: no key
/// missing, no deleted one shown (the listing cache must add no window).
#[test]
fn listings_see_the_other_connections_changes() {
    let (_t, a, b) = two();
    let list = |s: &Store| -> Vec<String> {
        let mut keys = Vec::new();
        let mut token = None;
        loop {
            let page = s
                .list_objects(
                    BUCKET,
                    &ListRequest {
                        prefix: "l/".into(),
                        continuation_token: token.take(),
                        ..Default::default()
                    },
                )
                .unwrap();
            keys.extend(page.objects.into_iter().map(|o| o.key));
            match page.next_token {
                Some(t) if page.is_truncated => token = Some(t),
                _ => return keys,
            }
        }
    };
    for round in 0..5 {
        assert!(list(&b).is_empty());
        for i in 0..20 {
            put(&a, &format!("l/k{round}-{i}"), b"v").unwrap();
            assert_eq!(list(&b).len(), i + 1, "round {round}, key {i}");
        }
        for i in 0..20 {
            b.delete_object(BUCKET, &format!("l/k{round}-{i}")).unwrap();
            assert_eq!(list(&a).len(), 19 - i, "round {round}, delete {i}");
        }
    }
}

/// Every GET's ETag is the stored MD5 of the body it came with, never a
/// made-up one, while the other connection replaces the object.
#[test]
fn etags_match_bodies_under_overwrites() {
    let (_t, a, b) = two();
    let a = Arc::new(a);
    put(&a, "e/k", &[0u8; 5000]).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (a, stop) = (a.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0u32;
            while !stop.load(Ordering::Relaxed) {
                put(&a, "e/k", &vec![(i % 251) as u8; 5000]).unwrap();
                i += 1;
            }
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let mut reads = 0;
    while std::time::Instant::now() < deadline {
        let (etag, body) = get(&b, "e/k").unwrap();
        let md5: String = Md5::digest(&body)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect();
        assert_eq!(etag.trim_matches('"'), md5, "read {reads}");
        assert!(body.iter().all(|&x| x == body[0]), "torn read {reads}");
        reads += 1;
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    assert!(reads > 0);
}

/// Set in a child process: hold a write lock on this file until killed.
const HOLDER_ENV: &str = "S3HPC_TEST_LOCK_HOLDER";

/// Not a test of its own: the body of the lock-holding child process of
/// `sweep_keeps_a_live_writers_temporary` (does nothing unless asked).
#[test]
fn lock_holder_helper() {
    let Some(path) = std::env::var_os(HOLDER_ENV) else {
        return;
    };
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as _;
    fl.l_whence = libc::SEEK_SET as _;
    // SAFETY: a valid flock struct for an open fd.
    assert_eq!(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLK, &fl) }, 0);
    println!("locked");
    std::thread::sleep(std::time::Duration::from_secs(60));
}

/// A sweep with age 0 removes an abandoned temporary of another node's
/// writer, but not one whose writer is alive (it holds a lock on it): the
/// age rule alone let `--sweep-age 0` on one node delete a live upload's
/// temporary on another.
#[test]
fn sweep_keeps_a_live_writers_temporary() {
    let (t, a, _b) = two();
    let dir = t.path().join("root").join(BUCKET);
    // A long PUT's temporary, named after its object, with the mark of a
    // writer that locks it (`temp.rs`; a quick write's unlocked temporary
    // is kept by its age instead, see `sweep.rs`).
    let live = dir.join(".obj.s3hpc-tmp-othernode-4242-L1");
    let dead = dir.join(".s3hpc-tmp.othernode.4242.L2");
    std::fs::write(&live, b"partial").unwrap();
    std::fs::write(&dead, b"partial").unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "lock_holder_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HOLDER_ENV, &live)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("locked") {
        let n = out.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "the lock holder exited: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    let swept = a.sweep_temporaries(std::time::Duration::ZERO).unwrap();
    let live_kept = live.exists();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!dead.exists(), "the abandoned temporary stays");
    assert!(live_kept, "the live writer's temporary was swept");
    assert_eq!(swept, 1);
    // Its writer gone, the next sweep takes it.
    assert_eq!(a.sweep_temporaries(std::time::Duration::ZERO).unwrap(), 1);
    assert!(!live.exists());
}
