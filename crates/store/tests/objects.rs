//! Objects: PUT / GET / HEAD round trips, ETags under both policies, ranges,
//! DELETE and pruning, COPY, overwrite, key/prefix conflicts, files written by
//! plain POSIX, and the fsync durability setting.

mod common;

use common::*;
use s3hpc_store::*;
use std::fs;
use std::io::Read;
use std::time::{Duration, SystemTime};

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn put_get_head_round_trip_with_metadata() {
    let env = Env::new();
    let s = &env.store;
    let data = pattern(100_000, 7);
    let o = opts(
        Some("text/x-test"),
        &[("color", "blue"), ("owner", "ünïcødé")],
    );
    let before = SystemTime::now() - Duration::from_secs(2);
    let etag = s
        .put_object(BUCKET, "dir/sub/obj.bin", PutBody::Bytes(&data), &o)
        .unwrap();
    assert_eq!(etag, md5_etag(&data));

    let h = s.head_object(BUCKET, "dir/sub/obj.bin").unwrap();
    assert_eq!(h.key, "dir/sub/obj.bin");
    assert_eq!(h.size, data.len() as u64);
    assert_eq!(h.etag, etag);
    assert_eq!(h.content_type.as_deref(), Some("text/x-test"));
    assert_eq!(h.metadata, o.metadata);
    assert!(
        h.last_modified >= before && h.last_modified <= SystemTime::now() + Duration::from_secs(2)
    );

    let mut g = s.get_object(BUCKET, "dir/sub/obj.bin", None).unwrap();
    assert_eq!((g.offset, g.length), (0, data.len() as u64));
    assert_eq!(g.info, h);
    let mut body = Vec::new();
    g.body.read_to_end(&mut body).unwrap();
    assert_eq!(body, data);

    // The object is a plain file POSIX tools can read.
    assert_eq!(fs::read(env.path("dir/sub/obj.bin")).unwrap(), data);

    // The listing carries the same info.
    let page = s.list_objects(BUCKET, &ListRequest::default()).unwrap();
    assert_eq!(page.objects, vec![h]);
}

#[test]
fn put_without_metadata_has_none() {
    let env = Env::new();
    env.put("plain", b"abc");
    let h = env.store.head_object(BUCKET, "plain").unwrap();
    assert_eq!(h.content_type, None);
    assert!(h.metadata.is_empty());
    assert_eq!(h.etag, md5_etag(b"abc"));
}

#[test]
fn etag_md5_policy() {
    let env = Env::with(EtagPolicy::Md5, Durability::None);
    // The well-known MD5s, computed by hand elsewhere.
    assert_eq!(
        env.put("hello", b"hello"),
        "\"5d41402abc4b2a76b9719d911017c592\""
    );
    assert_eq!(
        env.put("empty", b""),
        "\"d41d8cd98f00b204e9800998ecf8427e\""
    );
    let big = pattern(3 << 20, 1);
    assert_eq!(env.put("big", &big), md5_etag(&big));
    // A streamed body hashes the same as a slice.
    let mut r: &[u8] = &big;
    let e = env
        .store
        .put_object(
            BUCKET,
            "streamed",
            PutBody::Stream {
                reader: &mut r,
                len: None,
            },
            &PutOptions::default(),
        )
        .unwrap();
    assert_eq!(e, md5_etag(&big));
    for (k, d) in [
        ("hello", &b"hello"[..]),
        ("empty", b""),
        ("big", &big),
        ("streamed", &big),
    ] {
        assert_eq!(
            env.store.head_object(BUCKET, k).unwrap().etag,
            md5_etag(d),
            "{k}"
        );
    }
}

#[test]
fn etag_fast_policy() {
    let env = Env::with(EtagPolicy::Fast, Durability::None);
    let e1 = env.put("k", b"hello");
    assert!(
        e1.starts_with('"') && e1.ends_with('"') && e1.contains('-'),
        "{e1}"
    );
    assert_ne!(e1, md5_etag(b"hello"));
    assert_eq!(env.store.head_object(BUCKET, "k").unwrap().etag, e1);
    // Replacing the object changes the ETag, even with the same content.
    let e2 = env.put("k", b"hello");
    assert_ne!(e1, e2);
    assert_eq!(env.store.head_object(BUCKET, "k").unwrap().etag, e2);
    // Two different objects never share one.
    let e3 = env.put("other", b"hello");
    assert_ne!(e3, e2);
    // With metadata stored, the ETag is still the fast one.
    let e4 = env
        .store
        .put_object(BUCKET, "m", PutBody::Bytes(b"xyz"), &opts(Some("a/b"), &[]))
        .unwrap();
    assert!(e4.contains('-'), "{e4}");
    assert_eq!(env.store.head_object(BUCKET, "m").unwrap().etag, e4);
    // The empty object's ETag is the MD5 of nothing, under either policy.
    assert_eq!(env.put("empty", b""), md5_etag(b""));
    assert_eq!(
        env.store.head_object(BUCKET, "empty").unwrap().etag,
        md5_etag(b"")
    );
}

#[test]
fn empty_objects() {
    let env = Env::new();
    let s = &env.store;
    assert_eq!(env.put("e", b""), md5_etag(b""));
    // Empty with metadata, and streamed empty.
    s.put_object(
        BUCKET,
        "em",
        PutBody::Bytes(b""),
        &opts(Some("x/y"), &[("a", "b")]),
    )
    .unwrap();
    let mut r = std::io::empty();
    s.put_object(
        BUCKET,
        "es",
        PutBody::Stream {
            reader: &mut r,
            len: Some(0),
        },
        &PutOptions::default(),
    )
    .unwrap();
    for k in ["e", "em", "es"] {
        let h = s.head_object(BUCKET, k).unwrap();
        assert_eq!(
            (h.size, h.etag.as_str()),
            (0, md5_etag(b"").as_str()),
            "{k}"
        );
        assert!(env.get(k).is_empty());
    }
    assert_eq!(
        s.head_object(BUCKET, "em").unwrap().content_type.as_deref(),
        Some("x/y")
    );
    // Overwriting an object with an empty one empties it.
    env.put("e2", b"content");
    env.put("e2", b"");
    assert!(env.get("e2").is_empty());
    assert_eq!(s.head_object(BUCKET, "e2").unwrap().etag, md5_etag(b""));
}

fn range(env: &Env, key: &str, r: ByteRange) -> Result<(u64, u64, Vec<u8>)> {
    let mut g = env.store.get_object(BUCKET, key, Some(r))?;
    let mut v = Vec::new();
    g.body.read_to_end(&mut v).unwrap();
    assert_eq!(v.len() as u64, g.length);
    assert_eq!(
        g.info.size,
        env.store.head_object(BUCKET, key).unwrap().size
    );
    Ok((g.offset, g.length, v))
}

#[test]
fn read_into_appends_in_chunks_and_stops_at_the_range_end() {
    let env = Env::new();
    let data = pattern(1000, 5);
    env.put("chunked", &data);
    let range = ByteRange::FromTo {
        first: 100,
        last: Some(349),
    };
    let mut g = env
        .store
        .get_object(BUCKET, "chunked", Some(range))
        .unwrap();
    let mut buf = b"head".to_vec();
    assert_eq!(g.body.read_into(&mut buf, 100).unwrap(), 100);
    assert_eq!(g.body.read_into(&mut buf, 1000).unwrap(), 150);
    assert_eq!(g.body.read_into(&mut buf, 1000).unwrap(), 0);
    assert_eq!(&buf[..4], b"head");
    assert_eq!(&buf[4..], &data[100..350]);
}

#[test]
fn get_ranges() {
    let env = Env::new();
    let data = pattern(1000, 3);
    env.put("ranged-obj", &data);
    let ft = |first, last| ByteRange::FromTo { first, last };
    let cases = [
        (ft(0, Some(0)), 0, 1),
        (ft(10, Some(19)), 10, 10),
        (ft(0, Some(999)), 0, 1000),
        (ft(999, Some(999)), 999, 1),
        (ft(500, None), 500, 500),
        (ft(0, None), 0, 1000),
        (ft(990, Some(5000)), 990, 10), // clamped at the end
        (ByteRange::Suffix(1), 999, 1),
        (ByteRange::Suffix(100), 900, 100),
        (ByteRange::Suffix(1000), 0, 1000),
        (ByteRange::Suffix(5000), 0, 1000), // clamped to the whole object
    ];
    for (r, off, len) in cases {
        let (o, l, v) = range(&env, "ranged-obj", r).unwrap_or_else(|e| panic!("{r:?}: {e}"));
        assert_eq!((o, l), (off, len), "{r:?}");
        assert_eq!(v, &data[off as usize..(off + len) as usize], "{r:?}");
    }
    for r in [
        ft(1000, None),
        ft(1000, Some(1001)),
        ft(5000, Some(6000)),
        ByteRange::Suffix(0),
    ] {
        expect_err(
            range(&env, "ranged-obj", r),
            ErrorCode::InvalidRange,
            &["ranged-obj"],
        );
    }
    // A range on an empty object cannot start anywhere.
    env.put("empty", b"");
    for r in [ft(0, None), ft(0, Some(0)), ft(0, Some(10))] {
        expect_err(range(&env, "empty", r), ErrorCode::InvalidRange, &["empty"]);
    }
    // A suffix range on an empty object is the one satisfiable form
    // (RFC 9110, 14.1.1): the whole, empty, object.
    let (o, l, v) = range(&env, "empty", ByteRange::Suffix(5)).unwrap();
    assert_eq!((o, l, v.len()), (0, 0, 0));
    // Ranges are checked against the right object: a missing key is NoSuchKey.
    expect_err(
        range(&env, "missing", ft(0, None)),
        ErrorCode::NoSuchKey,
        &["missing"],
    );
}

#[test]
fn delete_is_idempotent() {
    let env = Env::new();
    let s = &env.store;
    env.put("k", b"v");
    s.delete_object(BUCKET, "k").unwrap();
    expect_err(
        s.head_object(BUCKET, "k"),
        ErrorCode::NoSuchKey,
        &["k", BUCKET],
    );
    expect_err(
        s.get_object(BUCKET, "k", None),
        ErrorCode::NoSuchKey,
        &["k", BUCKET],
    );
    s.delete_object(BUCKET, "k").unwrap();
    s.delete_object(BUCKET, "never/existed/at/all").unwrap();
    // Deleting below an object, or a prefix, is a no-op too.
    env.put("file", b"x");
    s.delete_object(BUCKET, "file/below").unwrap();
    env.put("pre/fix/obj", b"y");
    s.delete_object(BUCKET, "pre/fix").unwrap();
    s.delete_object(BUCKET, "pre").unwrap();
    assert_eq!(env.get("pre/fix/obj"), b"y");
    assert_eq!(env.get("file"), b"x");
    expect_err(
        s.delete_object("nobucket", "k"),
        ErrorCode::NoSuchBucket,
        &["nobucket"],
    );
}

#[test]
fn delete_prunes_empty_directories_but_not_the_bucket() {
    let env = Env::new();
    let s = &env.store;
    env.put("a/b/c/d", b"1");
    env.put("a/x", b"2");
    s.delete_object(BUCKET, "a/b/c/d").unwrap();
    assert!(!env.path("a/b").exists(), "a/b should be pruned");
    assert!(env.path("a").is_dir(), "a still holds a/x");
    s.delete_object(BUCKET, "a/x").unwrap();
    assert!(!env.path("a").exists());
    assert!(env.root().join(BUCKET).is_dir(), "the bucket itself stays");
    assert!(walk(&env.root().join(BUCKET)).is_empty());
    // A top-level object: nothing to prune, bucket stays.
    env.put("top", b"t");
    s.delete_object(BUCKET, "top").unwrap();
    assert!(env.root().join(BUCKET).is_dir());
    // The directory can be used again right after it was pruned.
    env.put("a/b/c/d", b"again");
    assert_eq!(env.get("a/b/c/d"), b"again");
}

#[test]
fn overwrite_replaces_content_and_metadata() {
    let env = Env::new();
    let s = &env.store;
    s.put_object(
        BUCKET,
        "k",
        PutBody::Bytes(&pattern(5000, 1)),
        &opts(Some("a/a"), &[("x", "1")]),
    )
    .unwrap();
    let e = s
        .put_object(
            BUCKET,
            "k",
            PutBody::Bytes(b"short"),
            &PutOptions::default(),
        )
        .unwrap();
    assert_eq!(e, md5_etag(b"short"));
    let h = s.head_object(BUCKET, "k").unwrap();
    assert_eq!(h.size, 5);
    assert_eq!(h.content_type, None, "old content type must not survive");
    assert!(h.metadata.is_empty(), "old metadata must not survive");
    assert_eq!(env.get("k"), b"short");
    // And growing again.
    let big = pattern(2 << 20, 9);
    env.put("k", &big);
    assert_eq!(env.get("k"), big);
    // No temporaries are left behind by successful PUTs.
    assert_eq!(walk(&env.root().join(BUCKET)), ["k"]);
}

#[test]
fn copy_objects() {
    let env = Env::new();
    let s = &env.store;
    s.create_bucket("other").unwrap();
    let data = pattern(70_000, 5);
    let o = opts(Some("image/png"), &[("k1", "v1")]);
    s.put_object(BUCKET, "src/obj", PutBody::Bytes(&data), &o)
        .unwrap();

    // Same bucket, metadata copied.
    let c = s
        .copy_object(BUCKET, "src/obj", BUCKET, "dst/copy", None)
        .unwrap();
    assert_eq!(c.key, "dst/copy");
    assert_eq!(c.size, data.len() as u64);
    assert_eq!(c.etag, md5_etag(&data));
    assert_eq!(c.content_type.as_deref(), Some("image/png"));
    assert_eq!(c.metadata, o.metadata);
    assert_eq!(env.get("dst/copy"), data);
    assert_eq!(s.head_object(BUCKET, "dst/copy").unwrap(), c);

    // Other bucket, metadata replaced.
    let r = opts(Some("text/plain"), &[("k2", "v2")]);
    let c2 = s
        .copy_object(BUCKET, "src/obj", "other", "x", Some(&r))
        .unwrap();
    assert_eq!(c2.content_type.as_deref(), Some("text/plain"));
    assert_eq!(c2.metadata, r.metadata);
    assert_eq!(c2.etag, md5_etag(&data));
    assert_eq!(get(s, "other", "x"), data);
    // Replace with nothing clears it.
    let c3 = s
        .copy_object(
            BUCKET,
            "src/obj",
            "other",
            "y",
            Some(&PutOptions::default()),
        )
        .unwrap();
    assert_eq!(c3.content_type, None);
    assert!(c3.metadata.is_empty());

    // The source is untouched.
    assert_eq!(env.get("src/obj"), data);
    assert_eq!(
        s.head_object(BUCKET, "src/obj").unwrap().metadata,
        o.metadata
    );

    // Copy onto itself keeps the bytes (and may replace metadata).
    let c4 = s
        .copy_object(BUCKET, "src/obj", BUCKET, "src/obj", Some(&r))
        .unwrap();
    assert_eq!(c4.metadata, r.metadata);
    assert_eq!(env.get("src/obj"), data);

    // Copy over an existing object replaces it.
    env.put("dst/existing", b"old");
    s.copy_object(BUCKET, "src/obj", BUCKET, "dst/existing", None)
        .unwrap();
    assert_eq!(env.get("dst/existing"), data);

    // Errors.
    expect_err(
        s.copy_object(BUCKET, "missing", BUCKET, "d", None),
        ErrorCode::NoSuchKey,
        &["missing"],
    );
    expect_err(
        s.copy_object("nobucket", "k", BUCKET, "d", None),
        ErrorCode::NoSuchBucket,
        &["nobucket"],
    );
    expect_err(
        s.copy_object(BUCKET, "src/obj", "nobucket", "d", None),
        ErrorCode::NoSuchBucket,
        &["nobucket"],
    );
    // A copy below its own source: the source becomes a prefix too.
    s.copy_object(BUCKET, "src/obj", BUCKET, "src/obj/below", None)
        .unwrap();
    assert_eq!(env.get("src/obj/below"), data);
    assert_eq!(env.get("src/obj"), data);
    assert_eq!(
        code(s.copy_object(BUCKET, "../x", BUCKET, "d", None)),
        ErrorCode::InvalidKey
    );
    assert_eq!(
        code(s.copy_object(BUCKET, "src/obj", BUCKET, "../d", None)),
        ErrorCode::InvalidKey
    );
    assert!(!env.path("d").exists());
}

#[test]
fn copy_large_object_under_both_policies() {
    for policy in [EtagPolicy::Md5, EtagPolicy::Fast] {
        let env = Env::with(policy, Durability::None);
        let data = pattern(24 << 20, 11);
        env.put("big", &data);
        let c = env
            .store
            .copy_object(BUCKET, "big", BUCKET, "big2", None)
            .unwrap();
        assert_eq!(c.size, data.len() as u64);
        assert_eq!(env.get("big2"), data, "{policy:?}");
        match policy {
            EtagPolicy::Md5 => assert_eq!(c.etag, md5_etag(&data)),
            EtagPolicy::Fast => assert!(c.etag.contains('-')),
        }
    }
}

#[test]
fn copy_of_a_posix_file_gets_an_md5() {
    let env = Env::new();
    fs::write(env.path("posix"), b"written by cp").unwrap();
    let c = env
        .store
        .copy_object(BUCKET, "posix", BUCKET, "copied", None)
        .unwrap();
    assert_eq!(c.etag, md5_etag(b"written by cp"));
}

#[test]
fn key_and_prefix_both_objects() {
    // Once refused with KeyConflict; tests/nested.rs covers these keys fully.
    let env = Env::new();
    let s = &env.store;
    env.put("a", b"file");
    env.put("a/b", b"x");
    env.put("a/b/c", b"");
    assert_eq!(env.get("a"), b"file");
    assert_eq!(env.get("a/b"), b"x");
    env.put("d/e", b"deep");
    for body in [&b"x"[..], b""] {
        env.put("d", body);
        assert_eq!(env.get("d"), body);
    }
    assert_eq!(env.get("d/e"), b"deep");
    assert_eq!(env.keys(), ["a", "a/b", "a/b/c", "d", "d/e"]);
    // No temporaries were left.
    assert_eq!(
        walk(&env.root().join(BUCKET)),
        [
            "a",
            "a/.s3hpc-self",
            "a/b",
            "a/b/.s3hpc-self",
            "a/b/c",
            "d",
            "d/.s3hpc-self",
            "d/e"
        ]
    );

    // An empty leftover directory (e.g. made by mkdir) gives way to a plain file.
    fs::create_dir_all(env.path("leftover")).unwrap();
    env.put("leftover", b"now a file");
    assert_eq!(env.get("leftover"), b"now a file");
    assert!(env.path("leftover").is_file());
    fs::create_dir_all(env.path("leftover2")).unwrap();
    env.put("leftover2", b"");
    assert!(env.path("leftover2").is_file());
    // A directory holding only empty directories holds no object, but is
    // not empty either: the object goes inside.
    fs::create_dir_all(env.path("nested/empty")).unwrap();
    s.put_object(
        BUCKET,
        "nested",
        PutBody::Bytes(b"x"),
        &PutOptions::default(),
    )
    .unwrap();
    assert_eq!(env.get("nested"), b"x");
}

#[test]
fn posix_written_files_are_objects() {
    let env = Env::new();
    fs::create_dir_all(env.path("data/run1")).unwrap();
    fs::write(env.path("data/run1/out.txt"), b"results").unwrap();
    fs::write(env.path("rootfile"), b"").unwrap();
    let h = env.store.head_object(BUCKET, "data/run1/out.txt").unwrap();
    assert_eq!(h.size, 7);
    assert!(h.etag.starts_with('"') && h.etag.ends_with('"') && h.etag.len() > 2);
    assert_eq!(h.content_type, None);
    assert_eq!(env.get("data/run1/out.txt"), b"results");
    assert_eq!(
        env.store.head_object(BUCKET, "rootfile").unwrap().etag,
        md5_etag(b"")
    );
    assert_eq!(env.keys(), ["data/run1/out.txt", "rootfile"]);
    // A HEAD of a directory is not an object.
    expect_err(
        env.store.head_object(BUCKET, "data/run1"),
        ErrorCode::NoSuchKey,
        &["data/run1"],
    );
    expect_err(
        env.store.get_object(BUCKET, "data", None),
        ErrorCode::NoSuchKey,
        &["data"],
    );
    // The ETag changes when the file is rewritten by POSIX.
    std::thread::sleep(Duration::from_millis(20));
    fs::write(env.path("data/run1/out.txt"), b"results, more").unwrap();
    let h2 = env.store.head_object(BUCKET, "data/run1/out.txt").unwrap();
    assert_eq!(h2.size, 13);
    assert_ne!(h2.etag, h.etag);
}

/// PUTs that sync into one directory at once, some of them nested keys
/// whose directory is the object's own: each is read back whole, and none
/// waits forever for a shared directory sync.
#[test]
fn concurrent_fsync_puts_share_directory_syncs() {
    let env = std::sync::Arc::new(Env::with(EtagPolicy::Md5, Durability::Fsync));
    env.put("n", b"nest me");
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let env = env.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    let body = format!("w{w} i{i}");
                    env.put(&format!("d/k{w}-{i}"), body.as_bytes());
                    if i % 5 == 0 {
                        env.put(&format!("n/k{w}-{i}"), body.as_bytes());
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    for w in 0..8 {
        for i in 0..25 {
            let body = format!("w{w} i{i}");
            assert_eq!(env.get(&format!("d/k{w}-{i}")), body.as_bytes());
        }
    }
    assert_eq!(env.get("n"), b"nest me");
    assert_eq!(env.keys().len(), 1 + 8 * 25 + 8 * 5);
}

#[test]
fn fsync_durability_works() {
    let env = Env::with(EtagPolicy::Md5, Durability::Fsync);
    let s = &env.store;
    assert_eq!(env.put("a/b/c", b"durable"), md5_etag(b"durable"));
    assert_eq!(env.put("a/b/c", b"again"), md5_etag(b"again"));
    assert_eq!(env.put("empty", b""), md5_etag(b""));
    assert_eq!(env.put("x/empty", b""), md5_etag(b""));
    let mut r: &[u8] = b"streamed";
    s.put_object(
        BUCKET,
        "s",
        PutBody::Stream {
            reader: &mut r,
            len: Some(8),
        },
        &opts(Some("t/t"), &[("m", "v")]),
    )
    .unwrap();
    s.copy_object(BUCKET, "s", BUCKET, "s2", None).unwrap();
    assert_eq!(env.get("a/b/c"), b"again");
    assert_eq!(env.get("s2"), b"streamed");
    assert_eq!(env.keys(), ["a/b/c", "empty", "s", "s2", "x/empty"]);
    s.delete_object(BUCKET, "a/b/c").unwrap();
    assert!(!env.path("a").exists());
}

#[test]
fn metadata_limits() {
    let env = Env::new();
    let big = "v".repeat(3000);
    expect_err(
        env.store.put_object(
            BUCKET,
            "m",
            PutBody::Bytes(b"x"),
            &opts(None, &[("k", &big)]),
        ),
        ErrorCode::MetadataTooLarge,
        &[],
    );
    assert_eq!(
        code(env.store.head_object(BUCKET, "m")),
        ErrorCode::NoSuchKey
    );
}

#[test]
fn error_messages_name_key_and_bucket() {
    let env = Env::new();
    let s = &env.store;
    expect_err(
        s.get_object(BUCKET, "no/such", None),
        ErrorCode::NoSuchKey,
        &["no/such", BUCKET],
    );
    expect_err(
        s.head_object(BUCKET, "no/such"),
        ErrorCode::NoSuchKey,
        &["no/such", BUCKET],
    );
    expect_err(
        s.get_object("ghost", "k", None),
        ErrorCode::NoSuchBucket,
        &["ghost"],
    );
    expect_err(
        s.head_object("ghost", "k"),
        ErrorCode::NoSuchBucket,
        &["ghost"],
    );
    expect_err(
        s.delete_bucket("ghost"),
        ErrorCode::NoSuchBucket,
        &["ghost"],
    );
    env.put("obj", b"12345");
    expect_err(
        s.get_object(
            BUCKET,
            "obj",
            Some(ByteRange::FromTo {
                first: 10,
                last: None,
            }),
        ),
        ErrorCode::InvalidRange,
        &["obj"],
    );
    let mut short: &[u8] = b"abc";
    expect_err(
        s.put_object(
            BUCKET,
            "incomplete",
            PutBody::Stream {
                reader: &mut short,
                len: Some(10),
            },
            &PutOptions::default(),
        ),
        ErrorCode::IncompleteBody,
        &["incomplete"],
    );
    expect_err(
        s.put_object(BUCKET, "a//b", PutBody::Bytes(b""), &PutOptions::default()),
        ErrorCode::InvalidKey,
        &["a//b"],
    );
    let long = "k".repeat(1100);
    let e = expect_err(
        s.put_object(BUCKET, &long, PutBody::Bytes(b""), &PutOptions::default()),
        ErrorCode::KeyTooLong,
        &["1100"],
    );
    assert!(
        e.message.len() < 400,
        "a long key must not flood the message: {}",
        e.message
    );
    expect_err(
        s.list_objects(
            BUCKET,
            &ListRequest {
                continuation_token: Some("garbage".into()),
                ..Default::default()
            },
        ),
        ErrorCode::InvalidArgument,
        &["garbage"],
    );
}
