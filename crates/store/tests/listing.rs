//! Listing: S3 order over whole keys, prefix, delimiters, start-after,
//! continuation tokens (checked against a reference model over generated key
//! sets), the 1000-key cap, hidden and empty directories, and the listing
//! cache never hiding a change.

mod common;

use common::*;
use s3hpc_store::*;
use std::fs;
use std::time::Duration;

fn req(prefix: &str, delimiter: Option<&str>) -> ListRequest {
    ListRequest {
        prefix: prefix.to_string(),
        delimiter: delimiter.map(str::to_string),
        ..Default::default()
    }
}

/// Tricky keys that share prefixes across directory boundaries, including
/// keys that are also prefixes (`a/b`, `a/b/x`) and folder markers (`a/b/`).
const TRICKY: &[&str] = &[
    "a!",
    "a-b",
    "a.b",
    "a/b",
    "a/b!",
    "a/b-c",
    "a/bc/d",
    "a/b0",
    "a/b/x",
    "a/b/x!",
    "a/b/x/y",
    "a0",
    "a0!/x",
    "a00/b",
    "ab",
    "b",
    " space",
    "~tilde",
    "A",
    "Z/z",
    "é",
    "éx/y",
    "ü/ß",
    "\u{7f}del",
    "日本/語",
    "\u{10ffff}",
    "x.y/.hidden",
    "x.y/..z",
    "a/b/",
    "a/",
    "a/b/x/",
    "ü/",
];

fn tricky_env() -> (Env, Vec<String>) {
    let env = Env::new();
    let keys: Vec<&str> = TRICKY.to_vec();
    for (i, k) in keys.iter().enumerate() {
        env.put(k, format!("{i}").as_bytes());
    }
    let keys: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
    (env, keys)
}

#[test]
fn order_is_by_whole_key_bytes() {
    let (env, keys) = tricky_env();
    let listed = env.keys();
    let want = byte_sorted(&keys.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(listed, want);
    // The classic case, spelled out.
    let pos = |k: &str| listed.iter().position(|x| x == k).unwrap();
    assert!(pos("a-b") < pos("a/b!") && pos("a.b") < pos("a/b!") && pos("a/b!") < pos("a0"));
    assert!(pos("a/b-c") < pos("a/b/x!") && pos("a/b/x/y") < pos("a/b0"));
    assert!(pos("é") < pos("éx/y") && pos("éx/y") < pos("ü/ß"));
}

#[test]
fn order_across_directories_with_siblings() {
    let env = Env::new();
    // Files "a", "a!" and "a0" beside directory "a/": within one directory
    // readdir order and name order both differ from key order.
    for k in ["a0", "a/z", "a!", "a/!", "a/0/0", "a-/x", "a./y", "a/0!"] {
        env.put(k, b"");
    }
    let dir = Env::new();
    for k in ["x/a0", "x/a!", "x/a/b", "x/a-", "x/a/b!/c", "x0", "x-"] {
        dir.put(k, b"");
    }
    assert_eq!(
        env.keys(),
        byte_sorted(&["a0", "a/z", "a!", "a/!", "a/0/0", "a-/x", "a./y", "a/0!"])
    );
    assert_eq!(
        dir.keys(),
        byte_sorted(&["x/a0", "x/a!", "x/a/b", "x/a-", "x/a/b!/c", "x0", "x-"])
    );
}

#[test]
fn prefix_matches_mid_segment() {
    let (env, keys) = tricky_env();
    let s = &env.store;
    for prefix in [
        "a/b", "a/b/", "a/b/x", "a", "a/", "a0", "é", "x.y/.", "日", "nomatch", "a/bc/d",
    ] {
        let (got, cps) = list_all(s, BUCKET, &req(prefix, None), 1000);
        assert!(cps.is_empty());
        let want: Vec<String> = model_list(&keys, prefix, None, None)
            .into_iter()
            .map(|i| i.text().to_string())
            .collect();
        assert_eq!(got, want, "prefix {prefix:?}");
    }
    let (got, _) = list_all(s, BUCKET, &req("a/b", None), 1000);
    assert!(got.contains(&"a/bc/d".to_string()) && got.contains(&"a/b/x!".to_string()));
    assert!(!got.contains(&"a-b".to_string()));
    // Prefixes that no key can have are simply empty, never errors.
    for prefix in [
        "../",
        "a//",
        "/a",
        "./a",
        ".s3hpc-tmp",
        ".s3hpc-uploads/",
        "a/../a/",
    ] {
        let page = s.list_objects(BUCKET, &req(prefix, Some("/"))).unwrap();
        assert!(
            page.objects.is_empty() && page.common_prefixes.is_empty(),
            "{prefix:?}"
        );
    }
}

#[test]
fn delimiter_slash_rolls_up_common_prefixes() {
    let (env, keys) = tricky_env();
    let s = &env.store;
    let page = s.list_objects(BUCKET, &req("", Some("/"))).unwrap();
    let objs: Vec<&str> = page.objects.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(
        page.common_prefixes,
        byte_sorted(&["a/", "a0!/", "a00/", "Z/", "éx/", "ü/", "日本/", "x.y/"])
    );
    assert_eq!(
        objs,
        byte_sorted(&[
            "a!",
            "a-b",
            "a.b",
            "a0",
            "ab",
            "b",
            " space",
            "~tilde",
            "A",
            "é",
            "\u{7f}del",
            "\u{10ffff}"
        ])
    );
    let page = s.list_objects(BUCKET, &req("a/", Some("/"))).unwrap();
    assert_eq!(page.common_prefixes, ["a/b/", "a/bc/"]);
    let objs: Vec<&str> = page.objects.iter().map(|o| o.key.as_str()).collect();
    // `a/b` is an object and a prefix: a key and a common prefix both;
    // `a/` (a folder marker) is a key of its own under prefix `a/`.
    assert_eq!(objs, ["a/", "a/b", "a/b!", "a/b-c", "a/b0"]);
    // Mid-segment prefix with delimiter.
    let page = s.list_objects(BUCKET, &req("a/b", Some("/"))).unwrap();
    assert_eq!(page.common_prefixes, ["a/b/", "a/bc/"]);
    let objs: Vec<&str> = page.objects.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(objs, ["a/b", "a/b!", "a/b-c", "a/b0"]);
    let page = s.list_objects(BUCKET, &req("a/b/", Some("/"))).unwrap();
    assert_eq!(page.common_prefixes, ["a/b/x/"]);
    let objs: Vec<&str> = page.objects.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(objs, ["a/b/", "a/b/x", "a/b/x!"]);
    for (prefix, d) in [("", "/"), ("a", "/"), ("a/b/", "/"), ("a/b/x", "/")] {
        let got = list_items(s, BUCKET, &req(prefix, Some(d)), 1000, Paging::Token);
        assert_eq!(
            got,
            model_list(&keys, prefix, Some(d), None),
            "{prefix:?} {d:?}"
        );
    }
}

#[test]
fn other_delimiters() {
    let (env, keys) = tricky_env();
    let s = &env.store;
    let page = s.list_objects(BUCKET, &req("", Some("-"))).unwrap();
    assert!(page.common_prefixes.contains(&"a-".to_string()));
    assert!(page.common_prefixes.contains(&"a/b-".to_string()));
    for (prefix, d) in [
        ("", "-"),
        ("", "b/"),
        ("", "."),
        ("a", "b"),
        ("a/", "!"),
        ("", "/b"),
        ("", "é"),
        ("", "xyz"),
    ] {
        let got = list_items(s, BUCKET, &req(prefix, Some(d)), 1000, Paging::Token);
        assert_eq!(
            got,
            model_list(&keys, prefix, Some(d), None),
            "{prefix:?} {d:?}"
        );
    }
    let page = s.list_objects(BUCKET, &req("", Some("b/"))).unwrap();
    assert_eq!(page.common_prefixes, ["a/b/"]);
    // An empty delimiter is no delimiter.
    let got = list_items(s, BUCKET, &req("", Some("")), 1000, Paging::Token);
    assert_eq!(got, model_list(&keys, "", None, None));
}

#[test]
fn start_after() {
    let (env, keys) = tricky_env();
    let s = &env.store;
    let mut afters: Vec<String> = keys.clone();
    afters.extend(
        [
            "a",
            "a/",
            "a/b",
            "a/b/",
            "a/b/x/",
            "a/bc",
            "",
            "\u{10ffff}\u{10ffff}",
            "0",
            "é",
            "éx/",
            "zzz",
        ]
        .map(String::from),
    );
    for after in &afters {
        for (prefix, d) in [("", None), ("", Some("/")), ("a/", Some("/")), ("a", None)] {
            let r = ListRequest {
                start_after: Some(after.clone()),
                ..req(prefix, d)
            };
            let got = list_items(s, BUCKET, &r, 1000, Paging::Token);
            let want = model_list(
                &keys,
                prefix,
                d,
                Some(after).filter(|a| !a.is_empty()).map(|s| s.as_str()),
            );
            assert_eq!(
                got, want,
                "after {after:?} prefix {prefix:?} delimiter {d:?}"
            );
        }
    }
}

/// A deterministic random key set with deep and wide parts and tricky
/// characters, keys that are also prefixes of others, and folder markers
/// (keys ending in `/`), written in random order.
fn generated_env(seed: u64, n: usize) -> (Env, Vec<String>) {
    let env = Env::new();
    let mut rng = Rng::new(seed);
    let parts = [
        "a", "a!", "a-", "a.", "a0", "b", "ab", "é", "z", "-", "x y", "~", "0", "A",
    ];
    let mut keys: Vec<String> = Vec::new();
    while keys.len() < n {
        let depth = 1 + rng.below(4);
        let segs: Vec<&str> = (0..depth).map(|_| *rng.pick(&parts)).collect();
        let mut key = segs.join("/");
        if rng.below(5) == 0 {
            key.push('/');
        }
        if keys.contains(&key) {
            continue;
        }
        env.store
            .put_object(
                BUCKET,
                &key,
                PutBody::Bytes(key.as_bytes()),
                &PutOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        keys.push(key);
    }
    (env, keys)
}

#[test]
fn paging_matches_the_model_exactly() {
    for seed in [1, 2] {
        let (env, keys) = generated_env(seed, 150);
        let s = &env.store;
        assert_eq!(
            env.keys(),
            model_list(&keys, "", None, None)
                .iter()
                .map(|i| i.text().to_string())
                .collect::<Vec<_>>()
        );
        check_paging(s, &keys, &format!("seed {seed}"));
        // Deleting keys in random order (objects that are also prefixes,
        // markers, and what lies below them) keeps the listing on the model
        // and prunes every directory left without objects.
        let mut left = keys.clone();
        let mut rng = Rng::new(seed + 100);
        while !left.is_empty() {
            let key = left.swap_remove(rng.below(left.len()));
            s.delete_object(BUCKET, &key).unwrap();
            if left.len() % 10 == 0 {
                for d in [None, Some("/")] {
                    let want = model_list(&left, "", d, None);
                    let got = list_items(s, BUCKET, &req("", d), 7, Paging::Token);
                    assert_eq!(got, want, "seed {seed} after deleting {key:?}, {d:?}");
                }
            }
        }
        assert!(walk(&env.root().join(BUCKET)).is_empty(), "seed {seed}");
    }
}

/// Stores over `env`'s tree taking each listing path: local, shared with
/// trusted directory stamps, and shared without.
fn every_path(env: &Env) -> [(&'static str, Store); 4] {
    let shared = |coherent: bool, with_readdir: bool| {
        Store::open_adjusted(env.root(), env.store.config(), |p| {
            p.shared = true;
            p.coherent_dir_stamps = coherent;
            p.stat_with_readdir = with_readdir;
        })
        .unwrap()
    };
    [
        (
            "local",
            Store::open(env.root(), env.store.config()).unwrap(),
        ),
        ("shared", shared(true, false)),
        ("shared, stamps not trusted", shared(false, false)),
        // MooseFS: the attributes taken with the readdir, cached with the
        // window.
        ("shared, attributes with the readdir", shared(true, true)),
    ]
}

/// Every page size and way of paging through `keys` (in `s`'s bucket)
/// with a range of prefixes and delimiters yields the model's listing.
fn check_paging(s: &Store, keys: &[String], what: &str) {
    for (prefix, d) in [
        ("", None),
        ("", Some("/")),
        ("a", Some("/")),
        ("a/", None),
        ("", Some("-")),
        ("", Some("b/")),
        ("a!/", Some("/")),
        ("é", Some("a")),
        ("a/", Some("/")),
        ("a/a", Some("/")),
        ("a/a/", Some("/")),
        ("b/", None),
    ] {
        let want = model_list(keys, prefix, d, None);
        for max_keys in [1, 2, 7] {
            for paging in [Paging::Token, Paging::Marker] {
                let got = list_items(s, BUCKET, &req(prefix, d), max_keys, paging);
                assert_eq!(
                    got, want,
                    "{what} prefix {prefix:?} delimiter {d:?} max {max_keys} {paging:?}"
                );
            }
        }
    }
}

/// Directories read a few entries at a time (windows far smaller than the
/// directory, as a directory of millions gets), from the cache and not,
/// on local and shared file systems' paths: the same listings.
#[test]
fn paging_across_small_windows_matches_the_model() {
    let (env, keys) = generated_env(5, 150);
    // Past the racy margins (local and shared), so windows are cached.
    std::thread::sleep(Duration::from_millis(1100));
    let stores = every_path(&env);
    for (what, s) in &stores {
        for window in [1, 3, 8] {
            s.set_listing_window(window);
            check_paging(s, &keys, &format!("{what}, window {window}"));
        }
        let (windows, _) = s.listing_cache_usage();
        if what.contains("not trusted") {
            assert_eq!(windows, 0, "{what}: nothing cached");
        } else {
            assert!(windows > 0, "{what}: windows cached");
        }
    }
}

#[test]
fn paging_with_start_after_and_prefix() {
    let (env, keys) = generated_env(3, 120);
    let s = &env.store;
    let mut rng = Rng::new(99);
    for _ in 0..12 {
        let after = rng.pick(&keys).clone();
        let d = *rng.pick(&[None, Some("/"), Some("-")]);
        let prefix = *rng.pick(&["", "a", "a/", "b/"]);
        let r = ListRequest {
            start_after: Some(after.clone()),
            ..req(prefix, d)
        };
        let want = model_list(&keys, prefix, d, Some(&after));
        for max_keys in [1, 3] {
            let got = list_items(s, BUCKET, &r, max_keys, Paging::Token);
            assert_eq!(
                got, want,
                "after {after:?} prefix {prefix:?} {d:?} max {max_keys}"
            );
        }
    }
}

#[test]
fn max_keys_is_capped_at_1000() {
    let env = Env::new();
    for i in 0..1100 {
        fs::write(env.path(&format!("k{i:05}")), b"").unwrap();
    }
    for max in [0, 1000, 1001, 5000, usize::MAX] {
        let page = env
            .store
            .list_objects(
                BUCKET,
                &ListRequest {
                    max_keys: max,
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(page.objects.len(), 1000, "max_keys {max}");
        assert!(page.is_truncated);
        assert_eq!(page.objects.last().unwrap().key, "k00999");
        let next = env
            .store
            .list_objects(
                BUCKET,
                &ListRequest {
                    max_keys: max,
                    continuation_token: page.next_token.clone(),
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(next.objects.len(), 100);
        assert_eq!(next.objects[0].key, "k01000");
        assert!(!next.is_truncated);
        assert_eq!(next.next_token, None);
    }
    // Exactly max_keys left is not truncated.
    let page = env
        .store
        .list_objects(
            BUCKET,
            &ListRequest {
                max_keys: 100,
                start_after: Some("k00999".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(page.objects.len(), 100);
    assert!(!page.is_truncated);
}

#[test]
fn empty_directories_are_never_prefixes() {
    let env = Env::new();
    env.put("real/obj", b"x");
    fs::create_dir_all(env.path("empty")).unwrap();
    fs::create_dir_all(env.path("deep/er/still")).unwrap();
    fs::create_dir_all(env.path("real/empty/sub")).unwrap();
    fs::create_dir_all(env.path("only-hidden")).unwrap();
    fs::write(env.path("only-hidden/.s3hpc-tmp.h.1.2"), b"tmp").unwrap();
    let page = env.store.list_objects(BUCKET, &req("", Some("/"))).unwrap();
    assert_eq!(page.common_prefixes, ["real/"]);
    assert!(page.objects.is_empty());
    let page = env
        .store
        .list_objects(BUCKET, &req("real/", Some("/")))
        .unwrap();
    assert!(page.common_prefixes.is_empty());
    assert_eq!(page.objects.len(), 1);
    let page = env.store.list_objects(BUCKET, &req("", Some("-"))).unwrap();
    assert!(
        page.common_prefixes.is_empty(),
        "{:?}",
        page.common_prefixes
    );
    assert_eq!(env.keys(), ["real/obj"]);
    // Paged one at a time, still nothing but the object.
    for max in [1, 2] {
        let got = list_items(&env.store, BUCKET, &req("", Some("/")), max, Paging::Token);
        assert_eq!(got, [Item::Prefix("real/".into())]);
    }
}

#[test]
fn hidden_engine_files_are_never_listed() {
    let env = Env::new();
    env.put("d/visible", b"v");
    fs::write(env.path(".s3hpc-tmp.host.1.1"), b"t").unwrap();
    fs::write(env.path("d/.s3hpc-tmp.host.1.2"), b"t").unwrap();
    // A PUT's temporary named rsync's way after its object (`temp.rs`).
    fs::write(env.path("d/.visible.s3hpc-tmp-host-1-3"), b"t").unwrap();
    fs::create_dir_all(env.path(".s3hpc-uploads/up1")).unwrap();
    fs::write(env.path(".s3hpc-uploads/up1/00001"), b"part").unwrap();
    fs::create_dir_all(env.path("d/.s3hpc-other")).unwrap();
    fs::write(env.path("d/.s3hpc-other/f"), b"x").unwrap();
    for (prefix, d) in [
        ("", None),
        ("", Some("/")),
        (".", None),
        (".s3hpc", None),
        ("d/", Some("/")),
        ("d/.", None),
    ] {
        let got = list_items(&env.store, BUCKET, &req(prefix, d), 1000, Paging::Token);
        for item in &got {
            assert!(
                !item.text().contains("s3hpc"),
                "{item:?} listed for {prefix:?}"
            );
        }
    }
    assert_eq!(env.keys(), ["d/visible"]);
    // Nor can they be read as objects.
    for k in [
        ".s3hpc-tmp.host.1.1",
        "d/.s3hpc-tmp.host.1.2",
        "d/.visible.s3hpc-tmp-host-1-3",
        ".s3hpc-uploads/up1/00001",
    ] {
        assert_eq!(
            code(env.store.get_object(BUCKET, k, None)),
            ErrorCode::InvalidKey,
            "{k}"
        );
        assert_eq!(
            code(env.store.head_object(BUCKET, k)),
            ErrorCode::InvalidKey,
            "{k}"
        );
    }
}

#[test]
fn non_utf8_and_special_entries_are_skipped() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    env.put("ok", b"1");
    let bad = env
        .root()
        .join(BUCKET)
        .join(std::ffi::OsStr::from_bytes(b"bad\xff"));
    fs::write(bad, b"x").unwrap();
    std::os::unix::net::UnixListener::bind(env.path("sock")).unwrap();
    assert_eq!(env.keys(), ["ok"]);
}

/// The keys of `first` (a page of `r`) and of every page after it;
/// `before(n)` runs before page n (2, 3, ...) is asked for.
fn pages_on(
    s: &Store,
    r: &ListRequest,
    first: &ListPage,
    mut before: impl FnMut(usize),
) -> Vec<String> {
    let mut keys: Vec<String> = first.objects.iter().map(|o| o.key.clone()).collect();
    let mut token = first.next_token.clone();
    let mut n = 1;
    while let Some(t) = token {
        n += 1;
        before(n);
        let page = s
            .list_objects(
                BUCKET,
                &ListRequest {
                    continuation_token: Some(t),
                    ..r.clone()
                },
            )
            .unwrap();
        keys.extend(page.objects.iter().map(|o| o.key.clone()));
        token = page.next_token.clone();
    }
    keys
}

#[test]
fn cached_listing_sees_files_created_between_pages() {
    let env = Env::new();
    fs::create_dir(env.path("big")).unwrap();
    for i in 0..5000 {
        fs::write(env.path(&format!("big/f{i:05}")), b"").unwrap();
    }
    // Let the directory's change time age past any racy window, so the
    // engine may cache its sorted entries.
    std::thread::sleep(Duration::from_millis(150));
    let s = &env.store;
    let r = ListRequest {
        prefix: "big/".into(),
        max_keys: 1000,
        ..Default::default()
    };
    let first = s.list_objects(BUCKET, &r).unwrap();
    assert_eq!(first.objects.len(), 1000);
    // Changes after page 1: one through the engine, one behind its back, one
    // removal, each where a later page will look.
    env.put("big/f03000x", b"engine");
    fs::write(env.path("big/f04500x"), b"posix").unwrap();
    fs::remove_file(env.path("big/f02000")).unwrap();
    let keys = pages_on(s, &r, &first, |page| {
        if page == 4 {
            // And one more, immediately before the next page, within any
            // timestamp granularity of the previous read.
            fs::write(env.path("big/f04900y"), b"quick").unwrap();
        }
    });
    assert!(
        keys.contains(&"big/f03000x".to_string()),
        "engine-created file missed"
    );
    assert!(
        keys.contains(&"big/f04500x".to_string()),
        "posix-created file missed"
    );
    assert!(
        keys.contains(&"big/f04900y".to_string()),
        "quickly created file missed"
    );
    assert!(
        !keys.contains(&"big/f02000".to_string()),
        "removed file listed"
    );
    assert_eq!(keys.len(), 5000 + 3 - 1);
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, keys, "listing out of order or with duplicates");
    // A fresh listing agrees.
    let (all, _) = list_all(s, BUCKET, &r, 1000);
    assert_eq!(all, keys);
}

/// Where the file system answers a stat right after readdir from what the
/// readdir brought (MooseFS), listings stat files as they read them: the
/// same pages, objects and attributes as stat'ing after the read, for every
/// prefix, delimiter, page size and resume point, with stored metadata
/// (MD5 ETags) and without.
#[test]
fn stat_with_readdir_lists_the_same_objects() {
    let (env, keys) = generated_env(4, 120);
    let plain = &env.store;
    let ahead = Store::open_adjusted(env.root(), plain.config(), |p| {
        p.shared = true;
        p.stat_with_readdir = true;
    })
    .unwrap();
    assert!(ahead.profile().stat_with_readdir);
    let mut rng = Rng::new(7);
    for round in 0..16 {
        let prefix = *rng.pick(&["", "a", "a/", "b/", "a/a/"]);
        let d = *rng.pick(&[None, Some("/"), Some("-")]);
        let after = (round % 2 == 1).then(|| rng.pick(&keys).clone());
        let max_keys = *rng.pick(&[1, 3, 1000]);
        let mut r = ListRequest {
            start_after: after.clone(),
            max_keys,
            ..req(prefix, d)
        };
        loop {
            let (a, b) = (
                plain.list_objects(BUCKET, &r).unwrap(),
                ahead.list_objects(BUCKET, &r).unwrap(),
            );
            assert_eq!(
                timeless(a),
                timeless(b.clone()),
                "prefix {prefix:?} {d:?} after {after:?} max {max_keys}"
            );
            match b.next_token {
                Some(t) if b.is_truncated => {
                    r.continuation_token = Some(t);
                    r.start_after = None;
                }
                _ => break,
            }
        }
    }
}

/// A continuation page reads what changed since the previous page, on every
/// path: a key PUT (through the engine or behind its back) after the
/// marker appears, a deleted one does not, whether the windows of the
/// directory were cached (local, shared with trusted stamps) or not.
#[test]
fn paging_sees_puts_and_deletes_between_pages_on_every_path() {
    let env = Env::new();
    fs::create_dir(env.path("big")).unwrap();
    for i in 0..3000 {
        fs::write(env.path(&format!("big/f{i:05}")), b"").unwrap();
    }
    let stores = every_path(&env);
    let r = ListRequest {
        prefix: "big/".into(),
        max_keys: 1000,
        ..Default::default()
    };
    for (round, (what, s)) in stores.iter().enumerate() {
        // Settled past every racy margin, so the first page's window is
        // cached where it may be, and small windows: the next page's
        // window is one the cache holds.
        std::thread::sleep(Duration::from_millis(1100));
        s.set_listing_window(1500);
        let first = s.list_objects(BUCKET, &r).unwrap();
        assert_eq!(first.objects.len(), 1000, "{what}");
        let cached = s.listing_cache_usage().0;
        assert_eq!(cached > 0, !what.contains("not trusted"), "{what}");
        // Within the window page 1 read (and the cache may hold), after
        // its marker.
        let engine = format!("big/f01200x{round}");
        let posix = format!("big/f01300y{round}");
        let gone = format!("big/f{:05}", 1400 + round);
        env.put(&engine, b"engine");
        fs::write(env.path(&posix), b"posix").unwrap();
        s.delete_object(BUCKET, &gone).unwrap();
        let keys = pages_on(s, &r, &first, |_| {});
        for k in [&engine, &posix] {
            assert!(keys.contains(k), "{what}: {k} missed");
        }
        assert!(!keys.contains(&gone), "{what}: deleted {gone} listed");
        let mut sorted = keys.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, keys, "{what}: out of order or duplicated");
        let (all, _) = list_all(s, BUCKET, &r, 1000);
        assert_eq!(all, keys, "{what}: a fresh listing differs");
    }
}

/// However many directories are listed, the cache holds a bounded number
/// of windows.
#[test]
fn listing_cache_stays_bounded() {
    let env = Env::new();
    for d in 0..50 {
        fs::create_dir(env.path(&format!("d{d:02}"))).unwrap();
        for i in 0..20 {
            fs::write(env.path(&format!("d{d:02}/f{i:02}")), b"").unwrap();
        }
    }
    std::thread::sleep(Duration::from_millis(100));
    let s = &env.store;
    s.set_listing_window(4);
    for d in 0..50 {
        let (keys, _) = list_all(s, BUCKET, &req(&format!("d{d:02}/"), None), 3);
        assert_eq!(keys.len(), 20);
    }
    let (windows, bytes) = s.listing_cache_usage();
    assert!((1..=32).contains(&windows), "{windows} windows cached");
    assert!(
        bytes < 32 * 4 * 64,
        "{bytes} bytes for {windows} windows of 4"
    );
}

/// A window large enough that several threads take its attributes (MooseFS
/// path, each with its own read of the directory): every page is what
/// stat'ing each file when the page is asked for gives, sizes and ETags
/// included, and a page from the cached window is the same again.
#[test]
fn attributes_taken_by_several_threads_match_plain_stats() {
    let env = Env::new();
    fs::create_dir(env.path("big")).unwrap();
    for i in 0..20_000 {
        fs::write(env.path(&format!("big/f{i:05}")), vec![b'x'; i % 7]).unwrap();
    }
    std::thread::sleep(Duration::from_millis(1100));
    let attrs = Store::open_adjusted(env.root(), env.store.config(), |p| {
        p.shared = true;
        p.coherent_dir_stamps = true;
        p.stat_with_readdir = true;
    })
    .unwrap();
    let r = ListRequest {
        prefix: "big/".into(),
        max_keys: 1000,
        ..Default::default()
    };
    for pass in 0..2 {
        let (mut a, mut b) = (r.clone(), r.clone());
        let mut pages = 0;
        loop {
            let (want, got) = (
                env.store.list_objects(BUCKET, &a).unwrap(),
                attrs.list_objects(BUCKET, &b).unwrap(),
            );
            assert_eq!(
                timeless(want),
                timeless(got.clone()),
                "pass {pass}, page {pages}"
            );
            pages += 1;
            match got.next_token {
                Some(t) if got.is_truncated => {
                    a.continuation_token = Some(t.clone());
                    b.continuation_token = Some(t);
                }
                _ => break,
            }
        }
        assert_eq!(pages, 20, "pass {pass}");
    }
}
