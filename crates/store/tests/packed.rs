//! Packed buckets under faults: damaged and truncated packs, writers
//! killed at many points, racing conditional writers in separate
//! processes (each an engine of its own, as on separate nodes), and the way
//! back to files.

mod common;

use common::*;
use s3hpc_store::*;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A store over `root` whose new buckets are packed.
fn packed_store(root: &Path, durability: Durability) -> Store {
    let s = Store::open(
        root,
        StoreConfig {
            etag: EtagPolicy::Md5,
            durability,
        },
    )
    .unwrap();
    s.set_default_layout(Layout::Packed);
    s
}

fn packs(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root.join(BUCKET).join(".s3hpc-packs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pack"))
        .collect();
    v.sort();
    v
}

fn value(i: u64) -> Vec<u8> {
    let mut v = format!("object {i} ").into_bytes();
    v.resize(3000 + (i as usize * 37) % 2000, b'a' + (i % 26) as u8);
    v
}

#[test]
fn a_damaged_record_is_reported_and_never_read() {
    let tmp = test_dir();
    let root = tmp.path().join("root");
    let s = packed_store(&root, Durability::None);
    s.create_bucket(BUCKET).unwrap();
    for i in 0..20 {
        put(&s, BUCKET, &format!("k{i:02}"), &value(i));
    }
    assert_eq!(s.bucket_layout(BUCKET).unwrap(), Layout::Packed);
    // Flip one byte in the middle of the pack: inside some record's data.
    let pack = &packs(&root)[0];
    let mut bytes = std::fs::read(pack).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(pack, &bytes).unwrap();
    // A fresh engine (another process would read the same bytes).
    let s = packed_store(&root, Durability::None);
    let (objects, damage) = s.check_packs(BUCKET).unwrap();
    assert_eq!(objects, 20);
    assert_eq!(damage.len(), 1, "{damage:?}");
    let mut bad = 0;
    for i in 0..20 {
        let key = format!("k{i:02}");
        match s.get_object(BUCKET, &key, None) {
            Ok(mut g) => {
                let mut v = Vec::new();
                g.body.read_to_end(&mut v).unwrap();
                assert_eq!(v, value(i), "{key}: wrong bytes returned");
            }
            Err(e) => {
                assert_eq!(e.code, ErrorCode::InternalError);
                assert!(e.message.contains("checksum"), "{e}");
                bad += 1;
            }
        }
    }
    assert_eq!(bad, 1);
    // Unpacking names the damaged object and still writes every other.
    let out = tmp.path().join("out");
    let done = s.unpack(BUCKET, "", Some(&out)).unwrap();
    assert_eq!((done.written, done.damaged.len()), (19, 1), "{done:?}");
    assert!(!out.join(&done.damaged[0]).exists());
}

#[test]
fn a_pack_cut_anywhere_in_its_last_record_keeps_every_earlier_object() {
    let tmp = test_dir();
    let root = tmp.path().join("root");
    let s = packed_store(&root, Durability::None);
    s.create_bucket(BUCKET).unwrap();
    put(&s, BUCKET, "k0", &value(0));
    put(&s, BUCKET, "k1", &value(1));
    let pack = packs(&root)[0].clone();
    let before_last = std::fs::metadata(&pack).unwrap().len() as usize;
    put(&s, BUCKET, "k2", &value(2));
    let whole = std::fs::read(&pack).unwrap();
    drop(s);
    // Every length from the last record's start to one byte short of it.
    for cut in before_last..whole.len() {
        std::fs::write(&pack, &whole[..cut]).unwrap();
        let s = packed_store(&root, Durability::None);
        let keys = list_all(&s, BUCKET, &ListRequest::default(), 1000).0;
        // k0 and k1 are whole; k2 only when its record is.
        assert!(keys.len() >= 2, "cut at {cut}: {keys:?}");
        assert_eq!(get(&s, BUCKET, "k0"), value(0));
        assert_eq!(get(&s, BUCKET, "k1"), value(1));
        if keys.len() == 3 {
            assert_eq!(get(&s, BUCKET, "k2"), value(2), "cut at {cut}");
        }
    }
}

/// The child of `killed_writers_lose_nothing_acknowledged`: writes objects
/// until killed, printing each key once its PUT returned.
#[test]
fn child_writer() {
    let Some(root) = std::env::var_os("S3HPC_PACKED_CHILD_ROOT") else {
        return;
    };
    let s = packed_store(Path::new(&root), Durability::Fsync);
    let start: u64 = std::env::var("S3HPC_PACKED_CHILD_START")
        .unwrap()
        .parse()
        .unwrap();
    for i in start.. {
        let key = format!("k{i:06}");
        put(&s, BUCKET, &key, &value(i));
        println!("ack {key}");
    }
}

#[test]
fn killed_writers_lose_nothing_acknowledged() {
    let tmp = test_dir();
    let root = tmp.path().join("root");
    packed_store(&root, Durability::Fsync)
        .create_bucket(BUCKET)
        .unwrap();
    let mut acked = Vec::new();
    let mut rng = Rng::new(7);
    // Killed after 1 to 40 ms of writing: at many points of a record.
    for round in 0..12u64 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
            .env("S3HPC_PACKED_CHILD_ROOT", &root)
            .env("S3HPC_PACKED_CHILD_START", (round * 100_000).to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(out)
                .lines()
                .map_while(|l| l.ok())
                .filter_map(|l| l.strip_prefix("ack ").map(str::to_string))
                .collect::<Vec<_>>()
        });
        std::thread::sleep(Duration::from_millis(30 + rng.below(40) as u64));
        child.kill().unwrap();
        child.wait().unwrap();
        acked.extend(reader.join().unwrap());
    }
    assert!(acked.len() > 12, "the writers acknowledged {}", acked.len());
    let s = packed_store(&root, Durability::None);
    for key in &acked {
        let i: u64 = key[1..].parse().unwrap();
        assert_eq!(get(&s, BUCKET, key), value(i), "{key}");
    }
    // Every listed key reads whole (an unacknowledged last one may be there
    // or not, but never in part).
    let keys = list_all(&s, BUCKET, &ListRequest::default(), 1000).0;
    for key in &keys {
        let i: u64 = key[1..].parse().unwrap();
        assert_eq!(get(&s, BUCKET, key), value(i), "{key}");
    }
    assert!(keys.len() >= acked.len());
    // And the bucket takes writes after all of that.
    put(&s, BUCKET, "after", b"x");
    assert_eq!(get(&s, BUCKET, "after"), b"x");
}

/// The child of `conditional_writers_in_processes_have_one_winner`.
#[test]
fn child_conditional() {
    let Some(root) = std::env::var_os("S3HPC_PACKED_RACE_ROOT") else {
        return;
    };
    let s = packed_store(Path::new(&root), Durability::None);
    let me = std::env::var("S3HPC_PACKED_RACE_ME").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    // Wait for the start file, so both race from the same moment.
    while !Path::new(&root).join("go").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    for i in 0..40 {
        let opts = PutOptions {
            condition: WriteCondition::IfNoneMatch,
            ..Default::default()
        };
        let key = format!("race{i}");
        let body = PutBody::Bytes(me.as_bytes());
        match s.put_object(BUCKET, &key, body, &opts) {
            Ok(_) => println!("won {key}"),
            Err(e) if e.code == ErrorCode::PreconditionFailed => {}
            Err(e) => panic!("{key}: {e}"),
        }
    }
}

#[test]
fn conditional_writers_in_processes_have_one_winner() {
    let tmp = test_dir();
    let root = tmp.path().join("root");
    let s = packed_store(&root, Durability::None);
    s.create_bucket(BUCKET).unwrap();
    let children: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|me| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "child_conditional", "--nocapture"])
                .env("S3HPC_PACKED_RACE_ROOT", &root)
                .env("S3HPC_PACKED_RACE_ME", me)
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write(root.join("go"), b"").unwrap();
    let mut wins = std::collections::BTreeMap::new();
    for (me, child) in ["a", "b", "c"].iter().zip(children) {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "child {me} failed");
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            if let Some(key) = line.strip_prefix("won ") {
                wins.entry(key.to_string())
                    .or_insert_with(Vec::new)
                    .push(me.to_string());
            }
        }
    }
    for i in 0..40 {
        let key = format!("race{i}");
        let winners = wins.get(&key).cloned().unwrap_or_default();
        assert_eq!(winners.len(), 1, "{key}: winners {winners:?}");
        // The object is the winner's.
        assert_eq!(get(&s, BUCKET, &key), winners[0].as_bytes(), "{key}");
    }
}

#[test]
fn large_objects_stay_files_and_unpack_brings_the_rest_out() {
    let tmp = test_dir();
    let root = tmp.path().join("root");
    let s = packed_store(&root, Durability::None);
    s.create_bucket(BUCKET).unwrap();
    let big = vec![9u8; PACK_MAX as usize + 1];
    put(&s, BUCKET, "dir/big", &big);
    put(&s, BUCKET, "dir/small", b"small");
    put(&s, BUCKET, "top", b"top");
    // The large object is a file of its own; the small ones are not.
    assert_eq!(
        std::fs::read(root.join(BUCKET).join("dir/big")).unwrap(),
        big
    );
    assert!(!root.join(BUCKET).join("dir/small").exists());
    // Overwritten small, the file goes; overwritten large again, it is back.
    put(&s, BUCKET, "dir/big", b"now small");
    assert!(!root.join(BUCKET).join("dir/big").exists());
    assert_eq!(get(&s, BUCKET, "dir/big"), b"now small");
    // Out into a directory of files.
    let out = tmp.path().join("out");
    assert_eq!(s.unpack(BUCKET, "dir/", Some(&out)).unwrap().written, 2);
    assert_eq!(std::fs::read(out.join("dir/small")).unwrap(), b"small");
    assert!(!out.join("top").exists());
    // Into the bucket: plain files, the same objects, listed once.
    assert_eq!(s.unpack(BUCKET, "", None).unwrap().written, 3);
    assert_eq!(
        std::fs::read(root.join(BUCKET).join("top")).unwrap(),
        b"top"
    );
    assert_eq!(
        list_all(&s, BUCKET, &ListRequest::default(), 1000).0,
        vec!["dir/big", "dir/small", "top"]
    );
    assert_eq!(get(&s, BUCKET, "dir/small"), b"small");
    // A fresh engine agrees.
    let s2 = packed_store(&root, Durability::None);
    assert_eq!(get(&s2, BUCKET, "top"), b"top");
    s2.delete_object(BUCKET, "top").unwrap();
    assert!(!root.join(BUCKET).join("top").exists());
    expect_err(
        s2.head_object(BUCKET, "top"),
        ErrorCode::NoSuchKey,
        &["top"],
    );
}

#[test]
fn files_from_before_the_bucket_was_packed_stay_objects() {
    let e = Env::new();
    e.put("old", b"old data");
    e.store.pack_bucket(BUCKET).unwrap();
    assert_eq!(e.store.bucket_layout(BUCKET).unwrap(), Layout::Packed);
    e.put("new", b"new data");
    assert_eq!(e.keys(), vec!["new", "old"]);
    assert_eq!(e.get("old"), b"old data");
    // Overwritten, the packed version wins; deleted, the file goes too.
    e.put("old", b"replaced");
    assert_eq!(e.get("old"), b"replaced");
    e.store.delete_object(BUCKET, "old").unwrap();
    expect_err(
        e.store.head_object(BUCKET, "old"),
        ErrorCode::NoSuchKey,
        &["old"],
    );
    assert_eq!(e.keys(), vec!["new"]);
    // Paging across the two sources, one key at a time.
    for k in ["a", "c", "e"] {
        std::fs::write(e.path(k), k).unwrap();
    }
    for k in ["b", "d", "f"] {
        e.put(k, k.as_bytes());
    }
    let (keys, _) = list_all(&e.store, BUCKET, &ListRequest::default(), 1);
    assert_eq!(keys, vec!["a", "b", "c", "d", "e", "f", "new"]);
    let page = e
        .store
        .list_objects(
            BUCKET,
            &ListRequest {
                max_keys: 1,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(page.is_truncated && page.objects.len() == 1);
}

#[test]
fn compaction_beside_writers_and_readers_loses_nothing() {
    let tmp = test_dir();
    let root = tmp.path().join("root");
    // Three engines over one tree, as three processes (or nodes) would be.
    let writer = packed_store(&root, Durability::None);
    writer.set_pack_roll(64 << 10);
    writer.create_bucket(BUCKET).unwrap();
    let reader = packed_store(&root, Durability::None);
    let compactor = packed_store(&root, Durability::None);
    // What each key was last acknowledged as: (version, deleted); and the
    // version of its last delete.
    let acked = std::sync::Mutex::new(std::collections::BTreeMap::<String, (u64, bool)>::new());
    let deletes = std::sync::Mutex::new(std::collections::BTreeMap::<String, u64>::new());
    let stop = std::sync::atomic::AtomicBool::new(false);
    let body = |key: &str, v: u64| format!("{key} version {v} ").repeat(40).into_bytes();
    let mut freed = 0;
    std::thread::scope(|sc| {
        sc.spawn(|| {
            let mut rng = Rng::new(3);
            for v in 1..=3000u64 {
                let key = format!("k{:02}", rng.below(40));
                if rng.below(5) == 0 {
                    // Noted before it is made: a reader may see it at once.
                    deletes.lock().unwrap().insert(key.clone(), v);
                    writer.delete_object(BUCKET, &key).unwrap();
                    acked.lock().unwrap().insert(key, (v, true));
                } else {
                    put(&writer, BUCKET, &key, &body(&key, v));
                    acked.lock().unwrap().insert(key, (v, false));
                }
            }
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        sc.spawn(|| {
            let mut rng = Rng::new(5);
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let key = format!("k{:02}", rng.below(40));
                let before = acked.lock().unwrap().get(&key).copied();
                match reader.get_object(BUCKET, &key, None) {
                    Ok(mut g) => {
                        let mut v = Vec::new();
                        g.body.read_to_end(&mut v).unwrap();
                        let text = String::from_utf8(v).unwrap();
                        let got: u64 = text.split(' ').nth(2).unwrap().parse().unwrap();
                        assert_eq!(text.as_bytes(), body(&key, got), "{key}: torn");
                        if let Some((want, _)) = before {
                            assert!(got >= want || before.unwrap().1, "{key}: {got} < {want}");
                        }
                    }
                    Err(e) => {
                        assert_eq!(e.code, ErrorCode::NoSuchKey, "{key}: {e}");
                        // Missing only if never written, or deleted since
                        // (and perhaps written again).
                        let deleted = deletes.lock().unwrap().get(&key).copied();
                        assert!(
                            before.is_none_or(|(v, d)| d || deleted.is_some_and(|x| x > v)),
                            "{key}: missing after {before:?}"
                        );
                    }
                }
            }
        });
        sc.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                freed += compactor.compact_bucket(BUCKET, 0.3).unwrap().packs;
                std::thread::sleep(Duration::from_millis(20));
            }
        });
    });
    freed += compactor.compact_bucket(BUCKET, 0.3).unwrap().packs;
    assert!(freed > 0, "no pack was compacted");
    // Every engine, and a fresh one, agrees with what was acknowledged.
    let fresh = packed_store(&root, Durability::None);
    for s in [&writer, &reader, &compactor, &fresh] {
        for (key, (v, deleted)) in acked.lock().unwrap().iter() {
            match deleted {
                true => {
                    expect_err(s.head_object(BUCKET, key), ErrorCode::NoSuchKey, &[key]);
                }
                false => assert_eq!(get(s, BUCKET, key), body(key, *v), "{key}"),
            }
        }
    }
    // Every engine lets the removed packs go once its keys moved on to
    // the copies (looked at once a second), so their space returns.
    std::thread::sleep(Duration::from_millis(1100));
    for s in [&writer, &reader, &compactor, &fresh] {
        let _ = s.head_object(BUCKET, "k00");
    }
    let held: Vec<PathBuf> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|p| {
            let p = p.to_string_lossy();
            p.contains(".s3hpc-packs/") && p.ends_with(" (deleted)")
        })
        .collect();
    assert!(held.is_empty(), "removed packs still open: {held:?}");
    // Fewer bytes on disk than written.
    let on_disk: u64 = packs(&root)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(on_disk < 3000 * 1000, "{on_disk} bytes in packs");
}

#[test]
fn compaction_keeps_each_packs_owner_group_and_mode() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let tmp = test_dir();
    let root = tmp.path().join("root");
    let writer = packed_store(&root, Durability::None);
    writer.set_pack_roll(16 << 10);
    writer.create_bucket(BUCKET).unwrap();
    for i in 0..60u64 {
        put(&writer, BUCKET, &format!("k{i}"), &value(i));
    }
    // The sealed packs become another user's, readable by that user only.
    let root_user = rustix::process::geteuid().is_root();
    let (uid, gid) = if root_user { (4321, 4322) } else { (0, 0) };
    // Those that end in a seal (a 40-byte record of kind 4), not the one
    // its writer still has open.
    let sealed: Vec<PathBuf> = packs(&root)
        .into_iter()
        .filter(|p| {
            let b = std::fs::read(p).unwrap();
            b.len() >= 40 && b[b.len() - 40..][..4] == *b"S3PK" && b[b.len() - 35] == 4
        })
        .collect();
    assert!(sealed.len() >= 2, "{sealed:?}");
    for p in &sealed {
        if root_user {
            std::os::unix::fs::chown(p, Some(uid), Some(gid)).unwrap();
        }
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let compactor = packed_store(&root, Durability::None);
    let done = compactor.compact_bucket(BUCKET, 0.0).unwrap();
    if !root_user {
        // Only root may give a pack to someone else: another user's are
        // left alone.
        assert_eq!(done.packs, 0, "{done:?}");
        assert_eq!(done.skipped, sealed.len() as u64, "{done:?}");
        return;
    }
    assert!(done.packs >= 2 && done.records >= 2, "{done:?}");
    let after = packs(&root);
    for p in &sealed {
        assert!(!after.contains(p), "{p:?} was not compacted");
    }
    let made: Vec<&PathBuf> = after
        .iter()
        .filter(|p| {
            let m = std::fs::metadata(p).unwrap();
            m.uid() == uid
        })
        .collect();
    assert_eq!(made.len(), 1, "one pack for the owner's copies: {after:?}");
    let m = std::fs::metadata(made[0]).unwrap();
    assert_eq!((m.gid(), m.mode() & 0o7777), (gid, 0o600));
    // Everything reads back, through a fresh engine too.
    let fresh = packed_store(&root, Durability::None);
    for i in 0..60u64 {
        for s in [&writer, &compactor, &fresh] {
            assert_eq!(get(s, BUCKET, &format!("k{i}")), value(i));
        }
    }
}

#[test]
fn a_bucket_sets_the_size_up_to_which_it_packs() {
    let tmp = test_dir();
    let root = tmp.path().join("root");
    let s = packed_store(&root, Durability::None);
    s.create_bucket(BUCKET).unwrap();
    assert_eq!(s.pack_max(BUCKET), Some(PACK_MAX));
    let two_mib: Vec<u8> = (0..2u32 << 20).map(|i| (i % 251) as u8).collect();
    put(&s, BUCKET, "before", &two_mib);
    assert!(
        root.join(BUCKET).join("before").exists(),
        "over 1 MiB: a file"
    );
    s.set_pack_max(BUCKET, 4 << 20).unwrap();
    put(&s, BUCKET, "after", &two_mib);
    assert!(!root.join(BUCKET).join("after").exists(), "packed at 4 MiB");
    // Another process follows the bucket's threshold, and reads both.
    let other = packed_store(&root, Durability::None);
    assert_eq!(other.pack_max(BUCKET), Some(4 << 20));
    for key in ["before", "after"] {
        assert_eq!(get(&other, BUCKET, key), two_mib, "{key}");
    }
    put(&other, BUCKET, "other", &two_mib);
    assert!(!root.join(BUCKET).join("other").exists());
    // Bounds, and plain buckets, get clear errors.
    expect_err(
        s.set_pack_max(BUCKET, PACK_MAX_LIMIT + 1),
        ErrorCode::InvalidArgument,
        &["at most"],
    );
    expect_err(
        s.set_pack_max(BUCKET, 0),
        ErrorCode::InvalidArgument,
        &["plain bucket"],
    );
    // A threshold file someone else left (anyone may write in the packs'
    // directory) is not followed.
    if rustix::process::geteuid().is_root() {
        let file = root.join(BUCKET).join(".s3hpc-packs/pack-max");
        std::os::unix::fs::chown(&file, Some(4321), None).unwrap();
        let third = packed_store(&root, Durability::None);
        assert_eq!(third.pack_max(BUCKET), Some(PACK_MAX));
        std::os::unix::fs::chown(&file, Some(0), None).unwrap();
    }
    let plain = Store::open(&root, StoreConfig::default()).unwrap();
    plain
        .create_bucket_with("plain-bucket", Layout::Plain)
        .unwrap();
    expect_err(
        plain.set_pack_max("plain-bucket", 4 << 20),
        ErrorCode::InvalidRequest,
        &["not packed"],
    );
    // New buckets of a store told so get the threshold.
    plain.set_default_pack_max(2 << 20).unwrap();
    plain
        .create_bucket_with("packed-two", Layout::Packed)
        .unwrap();
    assert_eq!(plain.pack_max("packed-two"), Some(2 << 20));
}
