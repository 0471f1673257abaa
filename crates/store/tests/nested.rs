//! Keys with no plain file of their own: folder markers (keys ending in
//! `/`, held as `<dir>/.s3hpc-dir`) and keys that are also prefixes of other
//! keys (held as `<dir>/.s3hpc-self`). GET, HEAD, DELETE, COPY, multipart,
//! listing order and pruning, readers during the move of a plain file into
//! its directory, and the hidden names staying unaddressable.

mod common;

use common::*;
use s3hpc_store::*;
use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn req(prefix: &str, delimiter: Option<&str>) -> ListRequest {
    ListRequest {
        prefix: prefix.to_string(),
        delimiter: delimiter.map(str::to_string),
        ..Default::default()
    }
}

#[test]
fn folder_markers() {
    let env = Env::new();
    let s = &env.store;
    // A 0-byte marker as consoles, S3A and rclone make it.
    assert_eq!(env.put("photos/", b""), md5_etag(b""));
    assert!(env.path("photos/.s3hpc-dir").is_file());
    assert_eq!(env.get("photos/"), b"");
    assert_eq!(s.head_object(BUCKET, "photos/").unwrap().size, 0);
    assert_eq!(s.head_object(BUCKET, "photos/").unwrap().key, "photos/");
    // A marker with content and metadata, nested.
    s.put_object(
        BUCKET,
        "photos/2024/",
        PutBody::Bytes(b"dir note"),
        &opts(Some("application/x-directory"), &[("k", "v")]),
    )
    .unwrap();
    let h = s.head_object(BUCKET, "photos/2024/").unwrap();
    assert_eq!(h.content_type.as_deref(), Some("application/x-directory"));
    assert_eq!(h.metadata.get("k").map(String::as_str), Some("v"));
    assert_eq!(env.get("photos/2024/"), b"dir note");
    env.put("photos/2024/img.jpg", b"jpg");
    assert_eq!(
        env.keys(),
        ["photos/", "photos/2024/", "photos/2024/img.jpg"]
    );
    // A marker is not the directory's object, nor the other way round.
    expect_err(
        s.head_object(BUCKET, "photos"),
        ErrorCode::NoSuchKey,
        &["photos"],
    );
    expect_err(
        s.head_object(BUCKET, "nothing/"),
        ErrorCode::NoSuchKey,
        &["nothing/"],
    );
    expect_err(
        s.get_object(BUCKET, "photos/2024/img.jpg/", None),
        ErrorCode::NoSuchKey,
        &["img.jpg/"],
    );
    // Overwrite.
    env.put("photos/", b"now with bytes");
    assert_eq!(env.get("photos/"), b"now with bytes");
    // DELETE removes only the marker.
    s.delete_object(BUCKET, "photos/").unwrap();
    expect_err(
        s.head_object(BUCKET, "photos/"),
        ErrorCode::NoSuchKey,
        &["photos/"],
    );
    assert_eq!(env.keys(), ["photos/2024/", "photos/2024/img.jpg"]);
    s.delete_object(BUCKET, "photos/2024/img.jpg").unwrap();
    assert_eq!(env.keys(), ["photos/2024/"]);
    assert_eq!(env.get("photos/2024/"), b"dir note");
    // The last one gone, the directories go too.
    s.delete_object(BUCKET, "photos/2024/").unwrap();
    assert!(env.keys().is_empty());
    assert!(walk(&env.root().join(BUCKET)).is_empty());
    // A bucket holding only a marker is not empty.
    env.put("m/", b"");
    expect_err(
        s.delete_bucket(BUCKET),
        ErrorCode::BucketNotEmpty,
        &[BUCKET],
    );
    s.delete_object(BUCKET, "m/").unwrap();
    s.delete_bucket(BUCKET).unwrap();
}

#[test]
fn object_then_prefix() {
    let env = Env::new();
    let s = &env.store;
    s.put_object(
        BUCKET,
        "a/b",
        PutBody::Bytes(b"object b"),
        &opts(Some("text/plain"), &[("m", "1")]),
    )
    .unwrap();
    assert!(env.path("a/b").is_file(), "a plain key is a plain file");
    let before = s.head_object(BUCKET, "a/b").unwrap();
    env.put("a/b/c", b"below");
    // The object moved into its directory, content and metadata intact.
    assert!(env.path("a/b").is_dir());
    assert!(env.path("a/b/.s3hpc-self").is_file());
    assert_eq!(env.get("a/b"), b"object b");
    let h = s.head_object(BUCKET, "a/b").unwrap();
    assert_eq!(h.etag, before.etag);
    assert_eq!(h.content_type.as_deref(), Some("text/plain"));
    assert_eq!(h.metadata.get("m").map(String::as_str), Some("1"));
    assert_eq!(h.key, "a/b");
    assert_eq!(env.get("a/b/c"), b"below");
    // Ranged GET of the self-entry.
    let mut r = s
        .get_object(BUCKET, "a/b", Some(ByteRange::Suffix(1)))
        .unwrap();
    let mut v = Vec::new();
    std::io::Read::read_to_end(&mut r.body, &mut v).unwrap();
    assert_eq!(v, b"b");
    // Overwrite goes to the self-entry.
    env.put("a/b", b"second");
    env.put("a/b", b"");
    assert_eq!(env.get("a/b"), b"");
    env.put("a/b", b"third");
    assert_eq!(env.get("a/b"), b"third");
    // Deeper: a top-level file becomes a directory for a key three levels down.
    env.put("x", b"top");
    env.put("x/y/z", b"deep");
    assert_eq!(env.get("x"), b"top");
    assert_eq!(env.get("x/y/z"), b"deep");
    // And a folder marker over an object.
    env.put("f", b"file f");
    env.put("f/", b"");
    assert_eq!(env.get("f"), b"file f");
    assert_eq!(env.get("f/"), b"");
    assert_eq!(env.keys(), ["a/b", "a/b/c", "f", "f/", "x", "x/y/z"]);
    // Nothing hidden left behind but the entries themselves.
    let hidden: Vec<String> = walk(&env.root().join(BUCKET))
        .into_iter()
        .filter(|p| {
            p.contains(".s3hpc") && !p.ends_with(".s3hpc-self") && !p.ends_with(".s3hpc-dir")
        })
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
}

#[test]
fn prefix_then_object() {
    let env = Env::new();
    let s = &env.store;
    env.put("d/e", b"nested");
    for body in [&b"x"[..], b""] {
        env.put("d", body);
        assert_eq!(env.get("d"), body);
    }
    s.put_object(
        BUCKET,
        "d",
        PutBody::Bytes(b"meta"),
        &opts(Some("a/b"), &[]),
    )
    .unwrap();
    assert_eq!(
        s.head_object(BUCKET, "d").unwrap().content_type.as_deref(),
        Some("a/b")
    );
    assert!(env.path("d/.s3hpc-self").is_file());
    assert_eq!(env.get("d/e"), b"nested");
    assert_eq!(env.keys(), ["d", "d/e"]);
    // An empty leftover directory still gives way to a plain file.
    fs::create_dir_all(env.path("leftover")).unwrap();
    env.put("leftover", b"plain");
    assert!(env.path("leftover").is_file());
}

#[test]
fn delete_removes_only_that_object_and_prunes() {
    let env = Env::new();
    let s = &env.store;
    for k in ["a/b", "a/b/", "a/b/c", "a/b/c/d"] {
        env.put(k, k.as_bytes());
    }
    assert_eq!(env.keys(), ["a/b", "a/b/", "a/b/c", "a/b/c/d"]);
    s.delete_object(BUCKET, "a/b/c/d").unwrap();
    // `a/b/c` holds only its self-entry: kept, it is an object.
    assert_eq!(env.get("a/b/c"), b"a/b/c");
    assert_eq!(env.keys(), ["a/b", "a/b/", "a/b/c"]);
    s.delete_object(BUCKET, "a/b/c").unwrap();
    assert!(!env.path("a/b/c").exists(), "emptied directory pruned");
    assert_eq!(env.keys(), ["a/b", "a/b/"]);
    s.delete_object(BUCKET, "a/b").unwrap();
    assert_eq!(env.keys(), ["a/b/"]);
    assert_eq!(env.get("a/b/"), b"a/b/");
    // Deleting again, or a key that is only a prefix, is a no-op.
    s.delete_object(BUCKET, "a/b").unwrap();
    s.delete_object(BUCKET, "a").unwrap();
    s.delete_object(BUCKET, "a/").unwrap();
    assert_eq!(env.keys(), ["a/b/"]);
    s.delete_object(BUCKET, "a/b/").unwrap();
    assert!(walk(&env.root().join(BUCKET)).is_empty());
    // The self-entry's directory goes once it is the last.
    env.put("p", b"1");
    env.put("p/q", b"2");
    s.delete_object(BUCKET, "p/q").unwrap();
    s.delete_object(BUCKET, "p").unwrap();
    assert!(walk(&env.root().join(BUCKET)).is_empty());
}

/// The keys around a directory `a/b` that sort between its object and its
/// contents, and after them.
const AROUND: &[&str] = &[
    "a", "a/", "a/b", "a/b!", "a/b-c", "a/b.d", "a/b/", "a/b/!", "a/b/c", "a/b/c/", "a/b/c/d",
    "a/b0", "a/bb/", "a0", "b/", "b/c",
];

#[test]
fn listing_order_with_and_without_delimiter() {
    let env = Env::new();
    for k in AROUND {
        env.put(k, k.as_bytes());
    }
    let keys: Vec<String> = AROUND.iter().map(|s| s.to_string()).collect();
    assert_eq!(env.keys(), byte_sorted(AROUND));
    let pos = |k: &str| env.keys().iter().position(|x| x == k).unwrap();
    assert!(pos("a/b") < pos("a/b!") && pos("a/b.d") < pos("a/b/") && pos("a/b/") < pos("a/b/!"));
    // With delimiter and prefix `a/`: `a/b` is a key and `a/b/` a prefix.
    let page = env
        .store
        .list_objects(BUCKET, &req("a/", Some("/")))
        .unwrap();
    let objs: Vec<&str> = page.objects.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(objs, ["a/", "a/b", "a/b!", "a/b-c", "a/b.d", "a/b0"]);
    assert_eq!(page.common_prefixes, ["a/b/", "a/bb/"]);
    let page = env
        .store
        .list_objects(BUCKET, &req("a/b/", Some("/")))
        .unwrap();
    let objs: Vec<&str> = page.objects.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(objs, ["a/b/", "a/b/!", "a/b/c"]);
    assert_eq!(page.common_prefixes, ["a/b/c/"]);
    // Every prefix, delimiter, page size and resume point against the model.
    let mut prefixes = vec!["".to_string()];
    for k in AROUND {
        for i in 1..=k.len() {
            prefixes.push(k[..i].to_string());
        }
    }
    prefixes.sort();
    prefixes.dedup();
    for prefix in &prefixes {
        for d in [None, Some("/"), Some("b"), Some("/c")] {
            let want = model_list(&keys, prefix, d, None);
            for max_keys in [1, 2, 1000] {
                for paging in [Paging::Token, Paging::Marker] {
                    let got = list_items(&env.store, BUCKET, &req(prefix, d), max_keys, paging);
                    assert_eq!(
                        got, want,
                        "prefix {prefix:?} {d:?} max {max_keys} {paging:?}"
                    );
                }
            }
            for after in AROUND.iter().chain(&["a/b/c/d/", "a/b/\u{0}"]) {
                let r = ListRequest {
                    start_after: Some(after.to_string()),
                    ..req(prefix, d)
                };
                let want = model_list(&keys, prefix, d, Some(after));
                let got = list_items(&env.store, BUCKET, &r, 2, Paging::Token);
                assert_eq!(got, want, "prefix {prefix:?} {d:?} after {after:?}");
            }
        }
    }
    // Deleted one by one, the listing follows the model and nothing is left.
    let mut left = keys.clone();
    for k in AROUND
        .iter()
        .rev()
        .step_by(2)
        .chain(AROUND.iter().step_by(2))
    {
        if !left.contains(&k.to_string()) {
            continue;
        }
        env.store.delete_object(BUCKET, k).unwrap();
        left.retain(|x| x != k);
        for d in [None, Some("/")] {
            assert_eq!(
                list_items(&env.store, BUCKET, &req("", d), 3, Paging::Token),
                model_list(&left, "", d, None),
                "after deleting {k:?}, {d:?}"
            );
        }
    }
    assert!(walk(&env.root().join(BUCKET)).is_empty());
}

#[test]
fn copy_to_and_from_such_keys() {
    let env = Env::new();
    let s = &env.store;
    env.put("src", b"source");
    env.put("src/inner", b"i");
    env.put("dir/", b"marker");
    // From a self-entry and from a marker.
    s.copy_object(BUCKET, "src", BUCKET, "plain", None).unwrap();
    assert_eq!(env.get("plain"), b"source");
    s.copy_object(BUCKET, "dir/", BUCKET, "plain2", None)
        .unwrap();
    assert_eq!(env.get("plain2"), b"marker");
    // To a marker, to a key that is a prefix, and to one below a plain object.
    s.copy_object(BUCKET, "plain", BUCKET, "new/", None)
        .unwrap();
    assert_eq!(env.get("new/"), b"source");
    env.put("dir/x", b"x");
    let c = s
        .copy_object(BUCKET, "plain2", BUCKET, "dir", None)
        .unwrap();
    assert_eq!(c.key, "dir");
    assert_eq!(env.get("dir"), b"marker");
    s.copy_object(BUCKET, "src", BUCKET, "plain/below", None)
        .unwrap();
    assert_eq!(env.get("plain/below"), b"source");
    assert_eq!(env.get("plain"), b"source");
    // Onto itself.
    s.copy_object(BUCKET, "src", BUCKET, "src", Some(&opts(Some("t/x"), &[])))
        .unwrap();
    assert_eq!(env.get("src"), b"source");
}

#[test]
fn multipart_onto_such_keys() {
    let env = Env::new();
    let s = &env.store;
    env.put("mp/inside", b"i");
    env.put("plain", b"p");
    let part1 = vec![3u8; 5 << 20];
    for key in ["mp", "marker/", "plain/under", "mp/"] {
        let id = s
            .create_multipart_upload(BUCKET, key, &PutOptions::default())
            .unwrap();
        let e1 = s
            .upload_part(BUCKET, key, &id, 1, PutBody::Bytes(&part1))
            .unwrap();
        let e2 = s
            .upload_part(BUCKET, key, &id, 2, PutBody::Bytes(b"end"))
            .unwrap();
        assert!(s.head_object(BUCKET, key).is_err() || key == "mp/", "{key}");
        let info = s
            .complete_multipart_upload(BUCKET, key, &id, &[(1, e1), (2, e2)])
            .unwrap();
        assert_eq!(info.key, key);
        assert_eq!(info.size, (5 << 20) + 3, "{key}");
        let got = env.get(key);
        assert_eq!(got.len(), (5 << 20) + 3);
        assert_eq!(&got[got.len() - 3..], b"end");
    }
    assert_eq!(env.get("plain"), b"p");
    assert_eq!(env.get("mp/inside"), b"i");
    assert_eq!(
        env.keys(),
        ["marker/", "mp", "mp/", "mp/inside", "plain", "plain/under"]
    );
}

#[test]
fn hidden_names_stay_unaddressable() {
    let env = Env::new();
    let s = &env.store;
    env.put("a/b", b"1");
    env.put("a/b/c", b"2");
    env.put("a/b/", b"3");
    for k in [
        "a/b/.s3hpc-self",
        "a/b/.s3hpc-dir",
        ".s3hpc-self",
        ".s3hpc-dir",
        ".s3hpc-dir/",
        "a/.s3hpc-self/",
        "a/b//",
        "/",
        "//",
        "a//",
    ] {
        assert_eq!(
            code(s.get_object(BUCKET, k, None)),
            ErrorCode::InvalidKey,
            "{k}"
        );
        assert_eq!(code(s.head_object(BUCKET, k)), ErrorCode::InvalidKey, "{k}");
        assert_eq!(
            code(s.put_object(BUCKET, k, PutBody::Bytes(b"x"), &PutOptions::default())),
            ErrorCode::InvalidKey,
            "{k}"
        );
        assert_eq!(
            code(s.delete_object(BUCKET, k)),
            ErrorCode::InvalidKey,
            "{k}"
        );
    }
    for (prefix, d) in [
        ("", None),
        ("a/b/", Some("/")),
        ("a/b/.", None),
        ("a/b/.s3hpc", None),
    ] {
        for item in list_items(s, BUCKET, &req(prefix, d), 1000, Paging::Token) {
            assert!(!item.text().contains(".s3hpc"), "{item:?}");
        }
    }
    // A hidden name planted as a directory is no object either.
    fs::create_dir_all(env.path("q/.s3hpc-dir")).unwrap();
    fs::create_dir_all(env.path("q/.s3hpc-self/x")).unwrap();
    assert_eq!(code(s.get_object(BUCKET, "q/", None)), ErrorCode::NoSuchKey);
    assert_eq!(code(s.head_object(BUCKET, "q")), ErrorCode::NoSuchKey);
    assert!(s
        .put_object(BUCKET, "q/", PutBody::Bytes(b"x"), &PutOptions::default())
        .is_err());
    assert_eq!(env.get("a/b"), b"1");
    assert_eq!(env.keys(), ["a/b", "a/b/", "a/b/c"]);
}

/// Readers of a plain object never miss it while a PUT below it moves it
/// into a directory of its name.
#[test]
fn readers_never_miss_an_object_being_nested() {
    readers_never_miss(Env::new());
}

/// The same where the file system has no `RENAME_EXCHANGE` (ceph-fuse,
/// NFS): the nest unlinks the object before renaming its directory in, and
/// readers that miss it in between find the nest's marker and wait.
#[test]
fn readers_never_miss_an_object_being_nested_without_exchange() {
    readers_never_miss(env_without_exchange());
}

/// A store taking a shared file system's paths without `RENAME_EXCHANGE`.
fn env_without_exchange() -> Env {
    let tmp = test_dir();
    let config = StoreConfig {
        etag: EtagPolicy::Md5,
        durability: Durability::None,
    };
    let store = Store::open_adjusted(tmp.path().join("root"), config, |p| {
        p.shared = true;
        p.rename_gap = false;
        p.rename_exchange = false;
    })
    .unwrap();
    store.create_bucket(BUCKET).unwrap();
    Env { tmp, store }
}

fn readers_never_miss(env: Env) {
    let env = Arc::new(env);
    const N: usize = 300;
    for i in 0..N {
        env.put(&format!("k{i:03}"), format!("v{i}").as_bytes());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (env, stop) = (env.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut rounds = 0;
                while !stop.load(Ordering::Relaxed) || rounds == 0 {
                    for i in 0..N {
                        let k = format!("k{i:03}");
                        let want = format!("v{i}");
                        if r == 0 {
                            assert_eq!(env.get(&k), want.as_bytes(), "GET {k}");
                        } else {
                            let h = env.store.head_object(BUCKET, &k);
                            assert_eq!(
                                h.unwrap_or_else(|e| panic!("HEAD {k}: {e}")).size,
                                want.len() as u64
                            );
                        }
                    }
                    rounds += 1;
                }
                rounds
            })
        })
        .collect();
    for i in 0..N {
        env.put(&format!("k{i:03}/child"), b"c");
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    for i in 0..N {
        assert_eq!(env.get(&format!("k{i:03}")), format!("v{i}").as_bytes());
    }
}

/// Writers putting below the same plain object at once: every key and the
/// object survive; a writer replacing the object meanwhile is never undone;
/// nothing hidden is left over.
#[test]
fn concurrent_nesting_of_one_object() {
    nesting_races(false, Env::new);
}

/// The same without `RENAME_EXCHANGE`: the nests' markers are gone after.
#[test]
fn concurrent_nesting_of_one_object_without_exchange() {
    nesting_races(false, env_without_exchange);
}

/// The same with a PUT of the object racing the nesting. On ext4 a PUT over
/// an existing name swaps with it (rename-exchange, see `put.rs`) and, when
/// the name is a directory, swaps back; a nesting in between leaves a
/// directory where the PUT's file was, which the PUT then merges back.
#[test]
fn concurrent_nesting_and_overwrite() {
    nesting_races(true, Env::new);
}

fn nesting_races(with_overwrite: bool, new_env: fn() -> Env) {
    for round in 0..50 {
        let env = Arc::new(new_env());
        env.put("o", b"obj");
        let overwrite = with_overwrite && round % 2 == 1;
        let ts: Vec<_> = (0..3)
            .map(|t| {
                let env = env.clone();
                std::thread::spawn(move || {
                    if t == 2 && overwrite {
                        env.put("o", b"new");
                    } else {
                        env.put(&format!("o/{t}"), b"x");
                    }
                })
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        let got = env.get("o");
        if overwrite {
            // The overwrite came after "obj": it is never lost.
            assert_eq!(got, b"new", "round {round}");
            assert_eq!(env.keys(), ["o", "o/0", "o/1"], "round {round}");
        } else {
            assert_eq!(got, b"obj", "round {round}");
            assert_eq!(env.keys(), ["o", "o/0", "o/1", "o/2"], "round {round}");
        }
        let stray: Vec<String> = walk(&env.root().join(BUCKET))
            .into_iter()
            .filter(|p| p.contains("s3hpc-tmp"))
            .collect();
        assert!(stray.is_empty(), "round {round}: {stray:?}");
    }
}

#[test]
fn sweep_removes_what_a_killed_nesting_left() {
    let env = Env::new();
    env.put("k", b"v");
    // A nesting killed after linking: a hidden directory with a second link.
    let t = env.path(".s3hpc-tmp.otherhost.1.5");
    fs::create_dir(&t).unwrap();
    fs::hard_link(env.path("k"), t.join(".s3hpc-self")).unwrap();
    assert_eq!(env.keys(), ["k"]);
    // Young, it may be a live nesting on another node (a quick step, with
    // no lock to show it): left alone.
    assert_eq!(
        env.store
            .sweep_temporaries(std::time::Duration::ZERO)
            .unwrap(),
        0
    );
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
    fs::File::open(&t).unwrap().set_modified(past).unwrap();
    assert_eq!(
        env.store
            .sweep_temporaries(std::time::Duration::ZERO)
            .unwrap(),
        1
    );
    assert!(!t.exists());
    assert_eq!(env.get("k"), b"v");
}

/// If-None-Match: * and If-Match on folder markers and on keys that are
/// also prefixes act on their hidden entries.
#[test]
fn conditional_writes_on_such_keys() {
    let env = Env::new();
    let s = &env.store;
    let cond = |c: WriteCondition| PutOptions {
        condition: c,
        ..Default::default()
    };
    let put = |k: &str, body: &[u8], c: WriteCondition| {
        s.put_object(BUCKET, k, PutBody::Bytes(body), &cond(c))
    };
    env.put("d/e", b"below");
    // Created only if absent: the directory holds no self-entry yet.
    put("d", b"first", WriteCondition::IfNoneMatch).unwrap();
    assert_eq!(env.get("d"), b"first");
    assert_eq!(
        code(put("d", b"second", WriteCondition::IfNoneMatch)),
        ErrorCode::PreconditionFailed
    );
    assert_eq!(env.get("d"), b"first");
    put("m/", b"", WriteCondition::IfNoneMatch).unwrap();
    let e = put("m/", b"x", WriteCondition::IfNoneMatch).unwrap_err();
    assert_eq!(e.code, ErrorCode::PreconditionFailed, "{e}");
    // If-Match compares with the self-entry's ETag.
    let etag = s.head_object(BUCKET, "d").unwrap().etag;
    assert_eq!(
        code(put("d", b"x", WriteCondition::IfMatch("\"0123\"".into()))),
        ErrorCode::PreconditionFailed
    );
    put("d", b"third", WriteCondition::IfMatch(etag)).unwrap();
    assert_eq!(env.get("d"), b"third");
    let etag = s.head_object(BUCKET, "m/").unwrap().etag;
    put("m/", b"y", WriteCondition::IfMatch(etag)).unwrap();
    assert_eq!(env.get("m/"), b"y");
    assert_eq!(env.keys(), ["d", "d/e", "m/"]);
}
