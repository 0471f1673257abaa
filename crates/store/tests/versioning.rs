//! Versions on POSIX (docs/src/design/versioning.md): every write of a
//! versioned bucket is kept, the latest is the file at the key's path,
//! delete markers hide it, and removing versions puts the next one back.

mod common;

use common::*;
use s3hpc_store::*;
use std::io::Read;

fn enabled() -> Env {
    let env = Env::new();
    env.store
        .put_bucket_versioning(BUCKET, Versioning::Enabled)
        .unwrap();
    env
}

/// PUTs `data` at `key` and returns the version id it got.
fn put_version(env: &Env, key: &str, data: &[u8]) -> String {
    env.put(key, data);
    let info = env.store.head_object(BUCKET, key).unwrap();
    info.version_id
        .expect("a versioned bucket's object has a version id")
}

fn read_version(env: &Env, key: &str, id: &str) -> Vec<u8> {
    let mut got = env.store.get_object_version(BUCKET, key, id, None).unwrap();
    let mut out = Vec::new();
    got.body.read_to_end(&mut out).unwrap();
    out
}

/// (id, latest, marker) of each version of `key`, as listed.
fn history(env: &Env, key: &str) -> Vec<(String, bool, bool)> {
    env.store
        .list_key_versions(BUCKET, key)
        .unwrap()
        .into_iter()
        .map(|v| (v.version_id, v.is_latest, v.delete_marker))
        .collect()
}

#[test]
fn every_write_is_kept_and_the_latest_is_the_file_at_the_path() {
    let env = enabled();
    let first = put_version(&env, "k", b"one");
    let second = put_version(&env, "k", b"two");
    assert_ne!(first, second);
    assert_eq!(env.get("k"), b"two");
    assert_eq!(read_version(&env, "k", &first), b"one");
    assert_eq!(read_version(&env, "k", &second), b"two");
    assert_eq!(
        history(&env, "k"),
        vec![(second.clone(), true, false), (first.clone(), false, false)]
    );
    // A POSIX reader sees the current data as a plain file; listings do
    // not show the versions' directory.
    assert_eq!(std::fs::read(env.path("k")).unwrap(), b"two");
    assert_eq!(env.keys(), vec!["k".to_string()]);
    assert_eq!(
        code(
            env.store
                .get_object_version(BUCKET, "k", "00000000000000000000", None)
        ),
        ErrorCode::NoSuchVersion
    );
}

#[test]
fn the_object_from_before_versioning_becomes_the_null_version() {
    let env = Env::new();
    env.put("dir/k", b"before");
    env.store
        .put_bucket_versioning(BUCKET, Versioning::Enabled)
        .unwrap();
    assert_eq!(
        history(&env, "dir/k"),
        vec![(NULL_VERSION.into(), true, false)]
    );
    env.put("dir/k", b"after");
    let h = history(&env, "dir/k");
    assert_eq!(h.len(), 2, "{h:?}");
    assert!(h[0].1 && h[0].0 != NULL_VERSION);
    assert_eq!(h[1], (NULL_VERSION.into(), false, false));
    assert_eq!(read_version(&env, "dir/k", NULL_VERSION), b"before");
    assert_eq!(env.get("dir/k"), b"after");
}

#[test]
fn a_delete_leaves_a_marker_and_removing_it_brings_the_object_back() {
    let env = enabled();
    let id = put_version(&env, "k", b"kept");
    env.store.delete_object(BUCKET, "k").unwrap();
    assert_eq!(
        code(env.store.get_object(BUCKET, "k", None)),
        ErrorCode::NoSuchKey
    );
    assert!(env.keys().is_empty());
    let h = history(&env, "k");
    assert_eq!(h.len(), 2, "{h:?}");
    let (marker, latest, is_marker) = h[0].clone();
    assert!(latest && is_marker, "{h:?}");
    assert_eq!(h[1], (id.clone(), false, false));
    assert_eq!(
        code(env.store.get_object_version(BUCKET, "k", &marker, None)),
        ErrorCode::MethodNotAllowed
    );
    assert_eq!(read_version(&env, "k", &id), b"kept");
    // Removing the marker makes the version before it current again.
    env.store
        .delete_object_version(BUCKET, "k", &marker)
        .unwrap();
    assert_eq!(env.get("k"), b"kept");
    assert_eq!(history(&env, "k"), vec![(id, true, false)]);
}

#[test]
fn removing_the_latest_version_makes_the_one_before_current() {
    let env = enabled();
    let v1 = put_version(&env, "a/b", b"v1");
    let v2 = put_version(&env, "a/b", b"v2");
    env.store.delete_object_version(BUCKET, "a/b", &v2).unwrap();
    assert_eq!(env.get("a/b"), b"v1");
    assert_eq!(history(&env, "a/b"), vec![(v1.clone(), true, false)]);
    env.store.delete_object_version(BUCKET, "a/b", &v1).unwrap();
    assert_eq!(
        code(env.store.get_object(BUCKET, "a/b", None)),
        ErrorCode::NoSuchKey
    );
    assert!(history(&env, "a/b").is_empty());
    // Deleting a version that is gone succeeds, as in S3.
    env.store.delete_object_version(BUCKET, "a/b", &v1).unwrap();
}

#[test]
fn suspended_writes_replace_the_null_version_and_keep_the_others() {
    let env = enabled();
    let id = put_version(&env, "k", b"versioned");
    env.store
        .put_bucket_versioning(BUCKET, Versioning::Suspended)
        .unwrap();
    env.put("k", b"null one");
    env.put("k", b"null two");
    let h = history(&env, "k");
    assert_eq!(
        h,
        vec![
            (NULL_VERSION.into(), true, false),
            (id.clone(), false, false)
        ]
    );
    assert_eq!(read_version(&env, "k", NULL_VERSION), b"null two");
    assert_eq!(read_version(&env, "k", &id), b"versioned");
}

#[test]
fn concurrent_writers_of_one_key_lose_no_version() {
    let env = enabled();
    let store = &env.store;
    std::thread::scope(|s| {
        for t in 0..4 {
            s.spawn(move || {
                for i in 0..10 {
                    put(store, BUCKET, "hot", format!("{t}-{i}").as_bytes());
                }
            });
        }
    });
    let h = history(&env, "hot");
    assert_eq!(h.len(), 40, "{h:?}");
    assert_eq!(h.iter().filter(|v| v.1).count(), 1);
    let latest = store
        .head_object(BUCKET, "hot")
        .unwrap()
        .version_id
        .unwrap();
    assert_eq!(h[0].0, latest);
    let mut bodies: Vec<Vec<u8>> = h.iter().map(|v| read_version(&env, "hot", &v.0)).collect();
    bodies.sort();
    bodies.dedup();
    assert_eq!(bodies.len(), 40);
}

/// Several clients deleting the same versions at once (as s3-tests'
/// concurrent DeleteObjects does): every delete succeeds, and no key is left
/// with an object whose version is gone.
#[test]
fn concurrent_deletes_of_the_same_versions_leave_nothing() {
    for round in 0..20 {
        let env = enabled();
        let store = &env.store;
        let keys: Vec<String> = (0..3).map(|k| format!("k{k}")).collect();
        for _ in 0..3 {
            for k in &keys {
                put(store, BUCKET, k, b"v");
            }
        }
        let all: Vec<(String, String)> = keys
            .iter()
            .flat_map(|k| history(&env, k).into_iter().map(move |v| (k.clone(), v.0)))
            .collect();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for (k, v) in &all {
                        store.delete_object_version(BUCKET, k, v).unwrap();
                    }
                });
            }
        });
        for k in &keys {
            assert_eq!(history(&env, k), vec![], "round {round}, {k}");
            assert_eq!(code(store.head_object(BUCKET, k)), ErrorCode::NoSuchKey);
        }
    }
}

#[test]
fn a_bucket_holding_versions_is_not_empty() {
    let env = enabled();
    env.put("x/k", b"v");
    env.store.delete_object(BUCKET, "x/k").unwrap();
    assert!(env.keys().is_empty());
    expect_err(
        env.store.delete_bucket(BUCKET),
        ErrorCode::BucketNotEmpty,
        &["version"],
    );
    for v in env.store.list_key_versions(BUCKET, "x/k").unwrap() {
        env.store
            .delete_object_version(BUCKET, "x/k", &v.version_id)
            .unwrap();
    }
    env.store.delete_bucket(BUCKET).unwrap();
}

#[test]
fn versioning_cannot_be_turned_off_nor_set_on_a_packed_bucket() {
    let env = enabled();
    expect_err(
        env.store.put_bucket_versioning(BUCKET, Versioning::Off),
        ErrorCode::IllegalVersioningConfiguration,
        &["suspended"],
    );
    env.store.create_bucket("packed").unwrap();
    env.store.pack_bucket("packed").unwrap();
    expect_err(
        env.store
            .put_bucket_versioning("packed", Versioning::Enabled),
        ErrorCode::InvalidBucketState,
        &["packed"],
    );
    assert_eq!(
        env.store.bucket_versioning("packed").unwrap(),
        Versioning::Off
    );
}

#[test]
fn copies_and_completed_uploads_are_versions_too() {
    let env = enabled();
    env.put("src", b"source");
    let copied = env
        .store
        .copy_object(BUCKET, "src", BUCKET, "dst", None)
        .unwrap();
    let first = copied.version_id.clone().unwrap();
    let id = env
        .store
        .create_multipart_upload(BUCKET, "dst", &PutOptions::default())
        .unwrap();
    let part = vec![7u8; 5 << 20];
    let etag = env
        .store
        .upload_part(BUCKET, "dst", &id, 1, PutBody::Bytes(&part))
        .unwrap();
    let done = env
        .store
        .complete_multipart_upload(BUCKET, "dst", &id, &[(1, etag)])
        .unwrap();
    let second = done.version_id.unwrap();
    let h = history(&env, "dst");
    assert_eq!(
        h,
        vec![(second, true, false), (first.clone(), false, false)]
    );
    assert_eq!(read_version(&env, "dst", &first), b"source");
    assert_eq!(env.get("dst"), part);
}

#[test]
fn a_bucket_lists_every_version_once_in_pages_of_any_size() {
    let env = enabled();
    for (key, n) in [("a", 3), ("d/x", 2), ("d/y", 1), ("z", 2)] {
        for i in 0..n {
            env.put(key, format!("{key}{i}").as_bytes());
        }
    }
    env.store.delete_object(BUCKET, "d/y").unwrap();
    let whole = env
        .store
        .list_object_versions(BUCKET, &VersionsRequest::default())
        .unwrap();
    assert!(!whole.is_truncated);
    let keys: Vec<&str> = whole.versions.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["a", "a", "a", "d/x", "d/x", "d/y", "d/y", "z", "z"]);
    // d/y: its marker is the latest, listed first.
    assert!(whole.versions[5].1.delete_marker && whole.versions[5].1.is_latest);
    for size in 1..=4 {
        let mut req = VersionsRequest {
            max_keys: size,
            ..Default::default()
        };
        let mut got = Vec::new();
        loop {
            let page = env.store.list_object_versions(BUCKET, &req).unwrap();
            assert!(page.versions.len() <= size);
            got.extend(
                page.versions
                    .iter()
                    .map(|(k, v)| (k.clone(), v.version_id.clone())),
            );
            if !page.is_truncated {
                break;
            }
            req.key_marker = page.next_key_marker;
            req.version_id_marker = page.next_version_id_marker;
        }
        let want: Vec<_> = whole
            .versions
            .iter()
            .map(|(k, v)| (k.clone(), v.version_id.clone()))
            .collect();
        assert_eq!(got, want, "pages of {size}");
    }
    let grouped = env
        .store
        .list_object_versions(
            BUCKET,
            &VersionsRequest {
                delimiter: Some("/".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(grouped.common_prefixes, ["d/"]);
    assert_eq!(grouped.versions.len(), 5);
}

#[test]
fn a_null_marker_made_after_versions_is_the_latest() {
    let env = enabled();
    let kept = put_version(&env, "k", b"versioned");
    env.store
        .put_bucket_versioning(BUCKET, Versioning::Suspended)
        .unwrap();
    env.store.delete_object(BUCKET, "k").unwrap();
    assert_eq!(
        history(&env, "k"),
        vec![(NULL_VERSION.into(), true, true), (kept, false, false)]
    );
    assert_eq!(
        env.store.latest_delete_marker(BUCKET, "k").as_deref(),
        Some(NULL_VERSION)
    );
}

#[test]
fn a_refused_write_of_a_suspended_bucket_keeps_the_null_version() {
    let env = enabled();
    env.store
        .put_bucket_versioning(BUCKET, Versioning::Suspended)
        .unwrap();
    env.put("k", b"null one");
    let create_only = PutOptions {
        condition: WriteCondition::IfNoneMatch,
        ..Default::default()
    };
    let r = env
        .store
        .put_object(BUCKET, "k", PutBody::Bytes(b"refused"), &create_only);
    assert_eq!(code(r), ErrorCode::PreconditionFailed);
    assert_eq!(read_version(&env, "k", NULL_VERSION), b"null one");
    assert_eq!(history(&env, "k"), vec![(NULL_VERSION.into(), true, false)]);
}

#[test]
fn folder_keys_and_files_replaced_outside_s3_keep_their_versions() {
    let env = enabled();
    env.put("a/", b"");
    env.put("a/", b"folder");
    let whole = env
        .store
        .list_object_versions(BUCKET, &VersionsRequest::default())
        .unwrap();
    let keys: Vec<&str> = whole.versions.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["a/", "a/"]);
    // A null version, then a file put in its place by a POSIX tool (a new
    // inode, no id): the next write keeps that file as the null version.
    env.store
        .put_bucket_versioning(BUCKET, Versioning::Suspended)
        .unwrap();
    env.put("p", b"null by s3");
    let tmp = env.path("p.new");
    std::fs::write(&tmp, b"by posix").unwrap();
    std::fs::rename(&tmp, env.path("p")).unwrap();
    env.store
        .put_bucket_versioning(BUCKET, Versioning::Enabled)
        .unwrap();
    env.put("p", b"versioned");
    assert_eq!(read_version(&env, "p", NULL_VERSION), b"by posix");
    assert_eq!(env.get("p"), b"versioned");
}

#[test]
fn a_packed_bucket_lists_its_objects_as_null_versions() {
    let env = Env::new();
    env.store.create_bucket("packed").unwrap();
    env.store.pack_bucket("packed").unwrap();
    put(&env.store, "packed", "x", b"small");
    let page = env
        .store
        .list_object_versions("packed", &VersionsRequest::default())
        .unwrap();
    assert_eq!(page.versions.len(), 1);
    assert_eq!(page.versions[0].1.version_id, NULL_VERSION);
    assert!(page.versions[0].1.is_latest);
    let mut got = env
        .store
        .get_object_version("packed", "x", NULL_VERSION, None)
        .unwrap();
    let mut body = Vec::new();
    got.body.read_to_end(&mut body).unwrap();
    assert_eq!(body, b"small");
}

#[test]
fn conditional_deletes_without_an_id_leave_a_marker_only_when_they_hold() {
    let env = enabled();
    let s = &env.store;
    let cond = |etag: &str| DeleteCondition {
        etag: Some(etag.to_string()),
        ..Default::default()
    };
    // A key with no versions at all: deleted whatever the condition.
    assert_eq!(
        s.delete_object_versioned_if(BUCKET, "k", &cond("\"bad\""))
            .unwrap(),
        None
    );
    let etag = env.put("k", b"v");
    assert_eq!(
        code(s.delete_object_versioned_if(BUCKET, "k", &cond("\"bad\""))),
        ErrorCode::PreconditionFailed
    );
    let marker = s
        .delete_object_versioned_if(BUCKET, "k", &cond(&etag))
        .unwrap();
    assert!(marker.is_some());
    assert_eq!(history(&env, "k").len(), 2);
    // The latest is a marker: only `*` holds.
    assert_eq!(
        s.delete_object_versioned_if(BUCKET, "k", &cond("*"))
            .unwrap(),
        None
    );
    assert_eq!(
        code(s.delete_object_versioned_if(BUCKET, "k", &cond("\"bad\""))),
        ErrorCode::PreconditionFailed
    );
}

/// Every listing of versions, in pages of any size, with or without a
/// prefix and a delimiter, is what each key's own history says, in key
/// order: over nested directories, keys whose latest is a marker, objects
/// from before versioning, folder keys, and directories read a few entries
/// at a time.
#[test]
fn pages_of_versions_match_each_keys_history_under_any_scope() {
    let env = Env::new();
    // Written before versioning: null versions.
    for key in ["a-1", "d/old", "e/f/g"] {
        env.put(key, key.as_bytes());
    }
    env.store
        .put_bucket_versioning(BUCKET, Versioning::Enabled)
        .unwrap();
    let keys = [
        "a", "a-1", "a-2", "a.b", "b/", "b/c", "b/c-d", "b/c/e", "d/old", "d/x", "d/y/z", "e/f/g",
        "e/f/h", "e/g", "z",
    ];
    for (i, key) in keys.iter().enumerate() {
        for n in 0..(i % 3 + 1) {
            env.put(key, format!("{key}{n}").as_bytes());
        }
    }
    // Latest a marker (some with no version left but markers), and a
    // version removed from the middle of a history.
    for key in ["a-2", "b/c/e", "d/y/z", "e/f/h", "d/old"] {
        env.store.delete_object(BUCKET, key).unwrap();
    }
    let hist = env.store.list_key_versions(BUCKET, "e/g").unwrap();
    env.store
        .delete_object_version(BUCKET, "e/g", &hist[1].version_id)
        .unwrap();
    for key in ["d/y/z"] {
        for v in env.store.list_key_versions(BUCKET, key).unwrap() {
            if !v.delete_marker {
                env.store
                    .delete_object_version(BUCKET, key, &v.version_id)
                    .unwrap();
            }
        }
    }
    let mut sorted = keys.to_vec();
    sorted.sort();
    // What a listing should give: (key or prefix, version id or "" for a prefix).
    let expected = |prefix: &str, delimiter: Option<&str>| {
        let mut out: Vec<(String, String, bool, bool)> = Vec::new();
        for key in sorted.iter().filter(|k| k.starts_with(prefix)) {
            let rolled = delimiter.and_then(|d| {
                key[prefix.len()..]
                    .find(d)
                    .map(|i| key[..prefix.len() + i + d.len()].to_string())
            });
            let versions = env.store.list_key_versions(BUCKET, key).unwrap();
            if versions.is_empty() {
                continue;
            }
            match rolled {
                Some(cp) => {
                    if out.last().map(|l| &l.0) != Some(&cp) {
                        out.push((cp, String::new(), false, false));
                    }
                }
                None => out.extend(
                    versions
                        .into_iter()
                        .map(|v| (key.to_string(), v.version_id, v.is_latest, v.delete_marker)),
                ),
            }
        }
        out
    };
    for window in [0, 2] {
        env.store.set_listing_window(window);
        for (prefix, delimiter) in [
            ("", None),
            ("", Some("/")),
            ("", Some("-")),
            ("b/", Some("/")),
            ("e/f", None),
            ("e/", Some("/")),
            ("a", Some("-")),
            ("nothing", None),
        ] {
            let want = expected(prefix, delimiter);
            for size in [1, 2, 3, 5, 1000] {
                let mut req = VersionsRequest {
                    prefix: prefix.into(),
                    delimiter: delimiter.map(str::to_string),
                    max_keys: size,
                    ..Default::default()
                };
                let mut got = Vec::new();
                for _ in 0..200 {
                    let page = env.store.list_object_versions(BUCKET, &req).unwrap();
                    assert!(page.versions.len() + page.common_prefixes.len() <= size);
                    // Versions and prefixes of one page, merged in key order.
                    let mut items: Vec<(String, String, bool, bool)> = page
                        .versions
                        .iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.version_id.clone(),
                                v.is_latest,
                                v.delete_marker,
                            )
                        })
                        .chain(
                            page.common_prefixes
                                .iter()
                                .map(|cp| (cp.clone(), String::new(), false, false)),
                        )
                        .collect();
                    items.sort_by(|a, b| a.0.cmp(&b.0));
                    got.extend(items);
                    if !page.is_truncated {
                        break;
                    }
                    req.key_marker = page.next_key_marker;
                    req.version_id_marker = page.next_version_id_marker;
                }
                let label = format!(
                    "prefix {prefix:?} delimiter {delimiter:?} pages of {size} window {window}"
                );
                assert_eq!(got, want, "{label}");
            }
        }
    }
}
