//! Hostile keys and planted symlinks: no request may read, write, list or
//! stat anything outside its bucket, and each gets a clear error.

mod common;

use common::*;
use s3hpc_store::*;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

fn hostile_keys() -> Vec<(String, ErrorCode)> {
    let mut v: Vec<(String, ErrorCode)> = [
        ("", ErrorCode::InvalidKey),
        ("..", ErrorCode::InvalidKey),
        (".", ErrorCode::InvalidKey),
        ("../outside/x", ErrorCode::InvalidKey),
        ("../../etc/passwd", ErrorCode::InvalidKey),
        ("a/../../outside/x", ErrorCode::InvalidKey),
        ("a/./b", ErrorCode::InvalidKey),
        ("a/..", ErrorCode::InvalidKey),
        ("./x", ErrorCode::InvalidKey),
        ("/abs", ErrorCode::InvalidKey),
        ("/etc/passwd", ErrorCode::InvalidKey),
        ("a//b", ErrorCode::InvalidKey),
        ("a//", ErrorCode::InvalidKey),
        ("a/.s3hpc-self", ErrorCode::InvalidKey),
        ("a/.s3hpc-dir", ErrorCode::InvalidKey),
        (".s3hpc-dir/", ErrorCode::InvalidKey),
        ("/", ErrorCode::InvalidKey),
        ("//", ErrorCode::InvalidKey),
        ("a\0b", ErrorCode::InvalidKey),
        ("\0", ErrorCode::InvalidKey),
        ("dir/\0/x", ErrorCode::InvalidKey),
        (".s3hpc-tmp.host.1.1", ErrorCode::InvalidKey),
        (".s3hpc", ErrorCode::InvalidKey),
        ("a/.s3hpc-uploads/x", ErrorCode::InvalidKey),
        (".s3hpcanything/x", ErrorCode::InvalidKey),
    ]
    .into_iter()
    .map(|(k, c)| (k.to_string(), c))
    .collect();
    v.push(("x".repeat(256), ErrorCode::KeyTooLong));
    v.push((format!("ok/{}/x", "y".repeat(300)), ErrorCode::KeyTooLong));
    v.push(("k".repeat(1025), ErrorCode::KeyTooLong));
    v.push(("ab/".repeat(400) + "z", ErrorCode::KeyTooLong));
    v.push(("é".repeat(513), ErrorCode::KeyTooLong)); // 1026 bytes, 513 chars
    v
}

#[test]
fn hostile_keys_get_clear_errors_on_every_operation() {
    let env = Env::new();
    let s = &env.store;
    env.put("good", b"source");
    fs::create_dir_all(env.path("a")).unwrap();
    let before = snapshot(&env.tmp.path().join("outside"));
    for (key, want) in hostile_keys() {
        let k = key.as_str();
        let check = |what: &str, got: ErrorCode| {
            assert_eq!(got, want, "{what} of {:?}", &k[..k.len().min(40)]);
        };
        check(
            "PUT",
            code(s.put_object(BUCKET, k, PutBody::Bytes(b"evil"), &PutOptions::default())),
        );
        check(
            "PUT empty",
            code(s.put_object(BUCKET, k, PutBody::Bytes(b""), &PutOptions::default())),
        );
        let mut r: &[u8] = b"evil";
        check(
            "PUT stream",
            code(s.put_object(
                BUCKET,
                k,
                PutBody::Stream {
                    reader: &mut r,
                    len: None,
                },
                &PutOptions::default(),
            )),
        );
        check("GET", code(s.get_object(BUCKET, k, None)));
        check("HEAD", code(s.head_object(BUCKET, k)));
        check("DELETE", code(s.delete_object(BUCKET, k)));
        check(
            "COPY to",
            code(s.copy_object(BUCKET, "good", BUCKET, k, None)),
        );
        check(
            "COPY from",
            code(s.copy_object(BUCKET, k, BUCKET, "copy", None)),
        );
        // As a prefix it just matches nothing.
        let page = s
            .list_objects(
                BUCKET,
                &ListRequest {
                    prefix: key.clone(),
                    ..Default::default()
                },
            )
            .unwrap();
        if !"good".starts_with(k) {
            assert!(
                page.objects.is_empty(),
                "prefix {k:?} listed {:?}",
                page.objects
            );
        }
    }
    // Nothing was created anywhere: not in the bucket, not beside it.
    assert_eq!(walk(&env.root()), ["bkt", "bkt/a", "bkt/good"]);
    assert_eq!(snapshot(&env.tmp.path().join("outside")), before);
    assert_eq!(
        walk(env.tmp.path())
            .iter()
            .filter(|p| !p.starts_with("root"))
            .count(),
        1
    );
}

#[test]
fn longest_valid_keys_work() {
    let env = Env::new();
    let seg = "s".repeat(255);
    let k255 = "t".repeat(255);
    // 3 x (255 + 1) + 254 + 1 + 1 = 1024 bytes exactly.
    let k1024 = format!("{seg}/{seg}/{seg}/{}/x", &seg[1..]);
    assert_eq!(k1024.len(), 1024);
    let deep = "d/".repeat(511) + "zz"; // 1024 bytes, 512 levels
    assert_eq!(deep.len(), 1024);
    for k in [&k255, &k1024, &deep] {
        env.put(k, k.as_bytes());
        assert_eq!(env.get(k), k.as_bytes());
    }
    let mut want = vec![k255.clone(), k1024.clone(), deep.clone()];
    want.sort();
    assert_eq!(env.keys(), want);
    for k in [&k255, &k1024, &deep] {
        env.store.delete_object(BUCKET, k).unwrap();
    }
    assert!(walk(&env.root().join(BUCKET)).is_empty());
}

/// The walks that go down one directory level at a time (listings with and
/// without a delimiter, version listings, the sweep, a bucket's delete) go
/// as deep as the deepest key on a thread with far less stack than a
/// server's, where recursing on the thread's own stack overflowed it and
/// aborted the process.
#[test]
fn the_deepest_keys_are_walked_on_a_small_stack() {
    let env = std::sync::Arc::new(Env::new());
    let deep = "d/".repeat(511) + "zz"; // 1024 bytes, 512 levels
    let beside = "d/".repeat(300) + "e";
    let (walker, deepest) = (env.clone(), deep.clone());
    let done = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let (env, deep) = (walker, deepest);
            let s = &env.store;
            s.put_bucket_versioning(BUCKET, Versioning::Enabled)
                .unwrap();
            for k in [&deep, &beside, &deep] {
                env.put(k, k.as_bytes());
            }
            let mut want = vec![beside.clone(), deep.clone()];
            want.sort();
            assert_eq!(env.keys(), want);
            let slash = ListRequest {
                delimiter: Some("/".into()),
                ..Default::default()
            };
            let page = s.list_objects(BUCKET, &slash).unwrap();
            assert_eq!(page.common_prefixes, ["d/"]);
            let below = ListRequest {
                prefix: "d/".repeat(400),
                delimiter: Some("/".into()),
                ..Default::default()
            };
            let page = s.list_objects(BUCKET, &below).unwrap();
            assert_eq!(page.common_prefixes, ["d/".repeat(401)]);
            let versions = s
                .list_object_versions(BUCKET, &VersionsRequest::default())
                .unwrap();
            let listed: Vec<&str> = versions.versions.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(listed, [&deep, &deep, &beside]);
            let slash = VersionsRequest {
                delimiter: Some("/".into()),
                ..Default::default()
            };
            let versions = s.list_object_versions(BUCKET, &slash).unwrap();
            assert_eq!(versions.common_prefixes, ["d/"]);
            s.sweep_temporaries(Duration::ZERO).unwrap();
            // Versions are left below: the bucket is not empty.
            assert_eq!(code(s.delete_bucket(BUCKET)), ErrorCode::BucketNotEmpty);
            // A bucket holding only empty directories that deep goes.
            s.create_bucket("hollow").unwrap();
            let hollow = env.root().join("hollow").join("d/".repeat(511));
            fs::create_dir_all(hollow).unwrap();
            s.delete_bucket("hollow").unwrap();
        })
        .unwrap();
    done.join().unwrap();
    assert_eq!(env.get(&deep), deep.as_bytes());
}

#[test]
fn hostile_bucket_names_never_escape() {
    let env = Env::new();
    for b in ["..", ".", "../outside", "/", "/tmp", "bkt/..", "a\0b", ""] {
        assert_eq!(
            code(env.store.create_bucket(b)),
            ErrorCode::InvalidBucketName,
            "{b:?}"
        );
        assert_eq!(
            code(env.store.head_bucket(b)),
            ErrorCode::InvalidBucketName,
            "{b:?}"
        );
        assert_eq!(
            code(
                env.store
                    .put_object(b, "k", PutBody::Bytes(b"x"), &PutOptions::default())
            ),
            ErrorCode::InvalidBucketName
        );
        assert_eq!(
            code(env.store.delete_bucket(b)),
            ErrorCode::InvalidBucketName
        );
    }
    assert!(walk(&env.outside()).is_empty());
}

/// A bucket with symlinks planted by someone with shell access: `ldir` to a
/// directory outside the data root, `lfile` to a file outside, `a/ldir` one
/// level down, and `linside` to a directory inside the bucket.
struct Planted {
    env: Env,
}

impl Planted {
    fn new() -> Planted {
        let env = Env::new();
        let out = env.outside();
        fs::create_dir(out.join("dir")).unwrap();
        fs::write(out.join("dir/secret"), b"outside secret").unwrap();
        fs::write(out.join("file"), b"outside file").unwrap();
        env.put("a/real", b"real");
        env.put("inside/obj", b"in");
        symlink(out.join("dir"), env.path("ldir")).unwrap();
        symlink(out.join("file"), env.path("lfile")).unwrap();
        symlink(out.join("dir"), env.path("a/ldir")).unwrap();
        symlink(out.join("file"), env.path("a/lfile")).unwrap();
        symlink(env.path("inside"), env.path("linside")).unwrap();
        symlink("../../../outside/dir", env.path("a/rel")).unwrap();
        Planted { env }
    }

    fn outside_unchanged(&self) {
        let out = self.env.outside();
        assert_eq!(walk(&out), ["dir", "dir/secret", "file"]);
        assert_eq!(fs::read(out.join("dir/secret")).unwrap(), b"outside secret");
        assert_eq!(fs::read(out.join("file")).unwrap(), b"outside file");
    }
}

const THROUGH_DIR: &[&str] = &[
    "ldir/secret",
    "a/ldir/secret",
    "a/rel/secret",
    "linside/obj",
    "ldir/new",
    "ldir/sub/new",
    "a/ldir/new",
];
const LINK_FILES: &[&str] = &["lfile", "a/lfile", "ldir", "a/ldir", "linside", "a/rel"];

#[test]
fn symlinks_are_never_read_or_stated() {
    let p = Planted::new();
    let s = &p.env.store;
    for k in THROUGH_DIR.iter().chain(LINK_FILES) {
        let e = s
            .get_object(BUCKET, k, None)
            .err()
            .unwrap_or_else(|| panic!("GET {k} succeeded"));
        assert!(
            matches!(e.code, ErrorCode::InvalidKey | ErrorCode::NoSuchKey),
            "GET {k}: {e}"
        );
        let e = s
            .head_object(BUCKET, k)
            .err()
            .unwrap_or_else(|| panic!("HEAD {k} succeeded"));
        assert!(
            matches!(e.code, ErrorCode::InvalidKey | ErrorCode::NoSuchKey),
            "HEAD {k}: {e}"
        );
        let e = s
            .copy_object(BUCKET, k, BUCKET, "stolen", None)
            .err()
            .unwrap_or_else(|| panic!("COPY from {k} succeeded"));
        assert!(
            matches!(e.code, ErrorCode::InvalidKey | ErrorCode::NoSuchKey),
            "COPY {k}: {e}"
        );
    }
    assert_eq!(code(s.head_object(BUCKET, "stolen")), ErrorCode::NoSuchKey);
    p.outside_unchanged();
}

#[test]
fn symlinks_are_never_listed() {
    let p = Planted::new();
    let s = &p.env.store;
    assert_eq!(p.env.keys(), ["a/real", "inside/obj"]);
    let page = p.env.top_level();
    assert_eq!(page.common_prefixes, ["a/", "inside/"]);
    assert!(page.objects.is_empty());
    for prefix in [
        "ldir/", "ldir", "a/ldir/", "a/rel/", "linside/", "lfile", "a/l",
    ] {
        for d in [None, Some("/")] {
            let page = s
                .list_objects(
                    BUCKET,
                    &ListRequest {
                        prefix: prefix.into(),
                        delimiter: d.map(Into::into),
                        ..Default::default()
                    },
                )
                .unwrap();
            assert!(
                page.objects.is_empty() && page.common_prefixes.is_empty(),
                "prefix {prefix:?}: {page:?}"
            );
        }
    }
}

#[test]
fn symlinks_are_never_written_through() {
    let p = Planted::new();
    let s = &p.env.store;
    for k in THROUGH_DIR {
        for body in [&b"evil"[..], b""] {
            let e = s
                .put_object(BUCKET, k, PutBody::Bytes(body), &PutOptions::default())
                .err()
                .unwrap_or_else(|| panic!("PUT {k} succeeded"));
            assert_eq!(e.code, ErrorCode::InvalidKey, "PUT {k}: {e}");
            assert!(e.message.contains(k), "{e}");
        }
        let e = s
            .copy_object(BUCKET, "a/real", BUCKET, k, None)
            .err()
            .unwrap_or_else(|| panic!("COPY to {k} succeeded"));
        assert_eq!(e.code, ErrorCode::InvalidKey, "COPY to {k}: {e}");
        let e = s
            .delete_object(BUCKET, k)
            .err()
            .unwrap_or_else(|| panic!("DELETE {k} ok"));
        assert_eq!(e.code, ErrorCode::InvalidKey, "DELETE {k}: {e}");
        p.outside_unchanged();
    }
    assert_eq!(p.env.get("inside/obj"), b"in");
}

#[test]
fn a_put_onto_a_symlink_replaces_the_link_not_its_target() {
    let p = Planted::new();
    for k in ["lfile", "a/lfile"] {
        p.env.put(k, b"new object");
        assert!(
            fs::symlink_metadata(p.env.path(k)).unwrap().is_file(),
            "{k} still a link"
        );
        assert_eq!(p.env.get(k), b"new object");
        p.outside_unchanged();
    }
    // A DELETE of a link name removes at most the link, never the target.
    for k in ["ldir", "a/ldir", "a/rel"] {
        let _ = p.env.store.delete_object(BUCKET, k);
        p.outside_unchanged();
    }
}

#[test]
fn deleting_a_bucket_with_symlinks_leaves_the_targets() {
    let p = Planted::new();
    let s = &p.env.store;
    s.delete_object(BUCKET, "a/real").unwrap();
    s.delete_object(BUCKET, "inside/obj").unwrap();
    let e = s.delete_bucket(BUCKET).unwrap_err();
    assert_eq!(e.code, ErrorCode::BucketNotEmpty, "{e}");
    p.outside_unchanged();
    // A planted link named like an engine temporary is removed as an entry,
    // without following it.
    let p = Planted::new();
    p.env.store.delete_object(BUCKET, "a/real").unwrap();
    p.env.store.delete_object(BUCKET, "inside/obj").unwrap();
    symlink(p.env.outside().join("dir"), p.env.path(".s3hpc-tmp.evil")).unwrap();
    symlink(p.env.outside().join("dir"), p.env.path(".s3hpc-uploads")).unwrap();
    assert_eq!(
        code(p.env.store.delete_bucket(BUCKET)),
        ErrorCode::BucketNotEmpty
    );
    p.outside_unchanged();
}

#[test]
fn a_symlinked_bucket_is_not_a_bucket() {
    let env = Env::new();
    let out = env.outside();
    fs::write(out.join("secret"), b"s").unwrap();
    symlink(&out, env.root().join("linked")).unwrap();
    let s = &env.store;
    let names: Vec<String> = s
        .list_buckets()
        .unwrap()
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(names, [BUCKET]);
    assert_eq!(code(s.head_bucket("linked")), ErrorCode::NoSuchBucket);
    assert_eq!(
        code(s.list_objects("linked", &ListRequest::default())),
        ErrorCode::NoSuchBucket
    );
    let refused = |c: ErrorCode| matches!(c, ErrorCode::NoSuchBucket | ErrorCode::InvalidKey);
    for body in [&b"x"[..], b""] {
        for k in ["new", "d/new", "secret"] {
            let c = code(s.put_object("linked", k, PutBody::Bytes(body), &PutOptions::default()));
            assert!(refused(c), "PUT linked/{k}: {c:?}");
        }
    }
    assert!(refused(code(s.get_object("linked", "secret", None))));
    assert!(refused(code(s.head_object("linked", "secret"))));
    assert!(refused(code(s.delete_object("linked", "secret"))));
    assert!(refused(code(
        s.copy_object("linked", "secret", BUCKET, "x", None)
    )));
    env.put("mine", b"m");
    assert!(refused(code(
        s.copy_object(BUCKET, "mine", "linked", "x", None)
    )));
    assert!(s.create_bucket("linked").is_err());
    assert_eq!(code(s.delete_bucket("linked")), ErrorCode::NoSuchBucket);
    assert!(fs::symlink_metadata(env.root().join("linked"))
        .unwrap()
        .is_symlink());
    assert_eq!(walk(&out), ["secret"]);
    assert_eq!(fs::read(out.join("secret")).unwrap(), b"s");
}

#[test]
fn a_symlinked_data_root_component_is_refused_beneath() {
    // A directory swapped for a symlink after the engine cached it: the
    // cached fd keeps pointing at the real directory, never at the target.
    let env = Env::new();
    env.put("d/x", b"1");
    assert_eq!(env.get("d/x"), b"1");
    fs::rename(env.path("d"), env.path("d-moved")).unwrap();
    symlink(env.outside(), env.path("d")).unwrap();
    for k in ["d/x", "d/new"] {
        let _ = env
            .store
            .put_object(BUCKET, k, PutBody::Bytes(b"evil"), &PutOptions::default());
        let _ = env.store.delete_object(BUCKET, k);
    }
    assert!(
        walk(&env.outside()).is_empty(),
        "{:?}",
        walk(&env.outside())
    );
}

/// A FIFO planted in the bucket must not hang a GET (opening a FIFO for
/// reading blocks until a writer comes).
#[test]
fn special_files_do_not_hang_or_leak() {
    let env = Env::new();
    let fifo = env.path("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let root = env.root();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let s = Store::open(&root, StoreConfig::default()).unwrap();
        let get = s
            .get_object(BUCKET, "fifo", None)
            .map(|_| ())
            .map_err(|e| e.code);
        let head = s
            .head_object(BUCKET, "fifo")
            .map(|_| ())
            .map_err(|e| e.code);
        let copy = s
            .copy_object(BUCKET, "fifo", BUCKET, "c", None)
            .map(|_| ())
            .map_err(|e| e.code);
        let _ = tx.send((get, head, copy));
    });
    let got = rx.recv_timeout(Duration::from_secs(5));
    if got.is_err() {
        // Unblock the stuck open before failing.
        let _ = fs::OpenOptions::new().write(true).open(&fifo);
    }
    let (get, head, copy) = got.expect("GET/HEAD/COPY of a FIFO hung");
    assert_eq!(get, Err(ErrorCode::NoSuchKey));
    assert_eq!(head, Err(ErrorCode::NoSuchKey));
    assert_eq!(copy, Err(ErrorCode::NoSuchKey));
    assert!(env.keys().is_empty());
}

#[test]
fn nothing_is_created_outside_the_root() {
    // A workload of every operation, good and bad, then a check that the
    // only thing beside the data root is the untouched outside directory.
    let p = Planted::new();
    let s = &p.env.store;
    let tmp = p.env.tmp.path();
    let beside_before: Vec<String> = walk(tmp)
        .into_iter()
        .filter(|x| !x.starts_with("root"))
        .collect();
    for (k, _) in hostile_keys() {
        let _ = s.put_object(BUCKET, &k, PutBody::Bytes(b"e"), &PutOptions::default());
        let _ = s.copy_object(BUCKET, "a/real", BUCKET, &k, None);
    }
    for k in THROUGH_DIR {
        let _ = s.put_object(BUCKET, k, PutBody::Bytes(b"e"), &PutOptions::default());
    }
    let _ = s.create_bucket("outside");
    let _ = s.sweep_temporaries(Duration::ZERO);
    let beside: Vec<String> = walk(tmp)
        .into_iter()
        .filter(|x| !x.starts_with("root"))
        .collect();
    assert_eq!(beside, beside_before);
    p.outside_unchanged();
    assert!(!Path::new("/outside").exists());
}
