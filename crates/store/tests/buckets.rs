//! Buckets: naming rules, create / head / delete, and listing of buckets,
//! including directories that other tools made under the data root.

mod common;

use common::*;
use s3hpc_store::*;
use std::fs;

#[test]
fn bucket_names_follow_s3_rules() {
    let env = Env::new();
    let s = &env.store;
    let long = "a".repeat(64);
    for bad in [
        "ab",
        "",
        "Upper",
        "under_score",
        "-lead",
        "trail-",
        ".lead",
        "trail.",
        "two..dots",
        "192.168.5.4",
        "xn--punycode",
        "sthree-x",
        "name-s3alias",
        "name--ol-s3",
        long.as_str(),
        "sp ace",
        "a/b",
        "..",
        "ümlaut",
    ] {
        expect_err(s.create_bucket(bad), ErrorCode::InvalidBucketName, &[bad]);
        // Every bucket operation checks the name before touching the disk.
        assert_eq!(code(s.head_bucket(bad)), ErrorCode::InvalidBucketName);
        assert_eq!(code(s.delete_bucket(bad)), ErrorCode::InvalidBucketName);
        assert_eq!(
            code(s.put_object(bad, "k", PutBody::Bytes(b"x"), &PutOptions::default())),
            ErrorCode::InvalidBucketName
        );
        assert_eq!(
            code(s.get_object(bad, "k", None)),
            ErrorCode::InvalidBucketName
        );
        assert_eq!(
            code(s.list_objects(bad, &ListRequest::default())),
            ErrorCode::InvalidBucketName
        );
    }
    let max = "b".repeat(63);
    for good in ["abc", "a-b.c1", "123", max.as_str(), "1.2.3", "a.b-c.d"] {
        s.create_bucket(good)
            .unwrap_or_else(|e| panic!("{good}: {e}"));
        s.head_bucket(good).unwrap();
        assert!(env.root().join(good).is_dir());
    }
    // Nothing but the valid buckets was created.
    let mut on_disk: Vec<String> = fs::read_dir(env.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    on_disk.sort();
    let mut want = vec![
        "123",
        "1.2.3",
        "a-b.c1",
        "a.b-c.d",
        "abc",
        max.as_str(),
        BUCKET,
    ];
    want.sort();
    assert_eq!(on_disk, want);
}

#[test]
fn create_twice_is_already_owned() {
    let env = Env::new();
    expect_err(
        env.store.create_bucket(BUCKET),
        ErrorCode::BucketAlreadyOwnedByYou,
        &[BUCKET],
    );
    // The existing bucket and its objects are untouched.
    env.put("k", b"v");
    expect_err(
        env.store.create_bucket(BUCKET),
        ErrorCode::BucketAlreadyOwnedByYou,
        &[BUCKET],
    );
    assert_eq!(env.get("k"), b"v");
}

#[test]
fn create_over_a_plain_file_fails_cleanly() {
    let env = Env::new();
    fs::write(env.root().join("plainfile"), b"data").unwrap();
    let e = env.store.create_bucket("plainfile").unwrap_err();
    assert_ne!(e.code, ErrorCode::InternalError, "{e}");
    assert!(e.message.contains("plainfile"), "{e}");
    assert_eq!(fs::read(env.root().join("plainfile")).unwrap(), b"data");
    assert_eq!(
        code(env.store.head_bucket("plainfile")),
        ErrorCode::NoSuchBucket
    );
}

#[test]
fn head_and_missing_buckets() {
    let env = Env::new();
    env.store.head_bucket(BUCKET).unwrap();
    let s = &env.store;
    expect_err(s.head_bucket("nope"), ErrorCode::NoSuchBucket, &["nope"]);
    expect_err(s.delete_bucket("nope"), ErrorCode::NoSuchBucket, &["nope"]);
    expect_err(
        s.list_objects("nope", &ListRequest::default()),
        ErrorCode::NoSuchBucket,
        &["nope"],
    );
    expect_err(
        s.put_object("nope", "a/b", PutBody::Bytes(b"x"), &PutOptions::default()),
        ErrorCode::NoSuchBucket,
        &["nope"],
    );
    expect_err(
        s.put_object("nope", "k", PutBody::Bytes(b""), &PutOptions::default()),
        ErrorCode::NoSuchBucket,
        &["nope"],
    );
    expect_err(
        s.get_object("nope", "k", None),
        ErrorCode::NoSuchBucket,
        &["nope"],
    );
    expect_err(
        s.head_object("nope", "a/k"),
        ErrorCode::NoSuchBucket,
        &["nope"],
    );
    expect_err(
        s.delete_object("nope", "k"),
        ErrorCode::NoSuchBucket,
        &["nope"],
    );
    // A PUT into a missing bucket must not create it.
    assert!(!env.root().join("nope").exists());
}

#[test]
fn delete_refuses_non_empty_then_works_once_emptied() {
    let env = Env::new();
    env.put("a/b/c", b"1");
    env.put("top", b"2");
    expect_err(
        env.store.delete_bucket(BUCKET),
        ErrorCode::BucketNotEmpty,
        &[BUCKET],
    );
    env.store.delete_object(BUCKET, "top").unwrap();
    // Still one object, deep down.
    expect_err(
        env.store.delete_bucket(BUCKET),
        ErrorCode::BucketNotEmpty,
        &[BUCKET],
    );
    assert_eq!(env.get("a/b/c"), b"1");
    env.store.delete_object(BUCKET, "a/b/c").unwrap();
    env.store.delete_bucket(BUCKET).unwrap();
    assert!(!env.root().join(BUCKET).exists());
    assert_eq!(code(env.store.head_bucket(BUCKET)), ErrorCode::NoSuchBucket);
    assert!(env.store.list_buckets().unwrap().is_empty());
    // And it can be made again, empty.
    env.store.create_bucket(BUCKET).unwrap();
    assert!(env.keys().is_empty());
}

#[test]
fn a_posix_file_keeps_the_bucket() {
    let env = Env::new();
    fs::create_dir_all(env.path("x/y")).unwrap();
    fs::write(env.path("x/y/file"), b"posix").unwrap();
    expect_err(
        env.store.delete_bucket(BUCKET),
        ErrorCode::BucketNotEmpty,
        &[BUCKET],
    );
    assert_eq!(fs::read(env.path("x/y/file")).unwrap(), b"posix");
}

#[test]
fn delete_removes_empty_dirs_and_engine_temporaries() {
    let env = Env::new();
    fs::create_dir_all(env.path("empty/deeper/still")).unwrap();
    fs::create_dir_all(env.path("d")).unwrap();
    fs::write(env.path(".s3hpc-tmp.host.1.0"), b"partial").unwrap();
    fs::write(env.path("d/.s3hpc-tmp.host.2.7"), b"partial").unwrap();
    fs::write(env.path("d/.obj.s3hpc-tmp-host-2-8"), b"partial").unwrap();
    fs::create_dir_all(env.path(".s3hpc-uploads/some-upload")).unwrap();
    fs::write(env.path(".s3hpc-uploads/some-upload/1"), b"part").unwrap();
    env.store.delete_bucket(BUCKET).unwrap();
    assert!(!env.root().join(BUCKET).exists());
}

#[test]
fn list_buckets_sees_directories_made_on_the_file_system() {
    let env = Env::new();
    env.store.create_bucket("made-by-engine").unwrap();
    fs::create_dir(env.root().join("made-by-mkdir")).unwrap();
    fs::create_dir(env.root().join("Invalid_Name")).unwrap();
    fs::create_dir(env.root().join("ab")).unwrap();
    fs::create_dir(env.root().join(".hidden")).unwrap();
    fs::write(env.root().join("plain-file"), b"not a bucket").unwrap();
    std::os::unix::fs::symlink(env.outside(), env.root().join("symlinked")).unwrap();
    let names: Vec<String> = env
        .store
        .list_buckets()
        .unwrap()
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(names, ["bkt", "made-by-engine", "made-by-mkdir"]);
    // A bucket made on the file system is usable as any other.
    env.store.head_bucket("made-by-mkdir").unwrap();
    put(&env.store, "made-by-mkdir", "k", b"v");
    assert_eq!(fs::read(env.root().join("made-by-mkdir/k")).unwrap(), b"v");
    // And a plain file is not a bucket.
    assert_eq!(
        code(env.store.head_bucket("plain-file")),
        ErrorCode::NoSuchBucket
    );
}

#[test]
fn list_buckets_reports_creation_time() {
    let env = Env::new();
    let before = std::time::SystemTime::now() - std::time::Duration::from_secs(5);
    env.store.create_bucket("second").unwrap();
    let list = env.store.list_buckets().unwrap();
    assert_eq!(list.len(), 2);
    for b in list {
        assert!(b.created >= before, "{b:?}");
        assert!(b.created <= std::time::SystemTime::now() + std::time::Duration::from_secs(5));
    }
}

#[test]
fn creation_time_stays_when_keys_are_written() {
    let env = Env::new();
    let created = |s: &Store| {
        s.list_buckets()
            .unwrap()
            .into_iter()
            .find(|b| b.name == BUCKET)
            .unwrap()
            .created
    };
    let before = created(&env.store);
    std::thread::sleep(std::time::Duration::from_millis(30));
    env.put("top-level", b"x");
    env.store.delete_object(BUCKET, "top-level").unwrap();
    assert_eq!(created(&env.store), before);
}
