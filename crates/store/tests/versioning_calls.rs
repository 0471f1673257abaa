//! What keeping versions adds to a PUT and a DELETE, in file-system calls
//! (each a metadata request on a parallel file system), against the same
//! operation on a bucket without versioning. One test in this binary: the
//! counters are process-wide.

mod common;

use common::*;
use s3hpc_store::fscalls::{self, Counts, Kind};
use s3hpc_store::*;

fn calls<T>(op: impl FnOnce() -> T) -> Counts {
    let before = fscalls::snapshot();
    op();
    fscalls::snapshot().since(&before)
}

/// The calls of an overwrite and of a delete of `dir/k` (the bucket's
/// state read before, by a first write).
fn overwrite_and_delete(env: &Env) -> (Counts, Counts) {
    env.put("dir/k", b"first");
    env.put("dir/k", b"second");
    let put = calls(|| env.put("dir/k", b"third"));
    let delete = calls(|| env.store.delete_object(BUCKET, "dir/k").unwrap());
    (put, delete)
}

/// `b - a` per kind, the kinds that differ. Not `rmdir`: a DELETE that
/// empties a directory removes it where the file system tells (tmpfs by
/// its size, elsewhere by trying), and a directory that holds versions is
/// never empty.
fn added(a: &Counts, b: &Counts) -> Vec<(&'static str, i64)> {
    Kind::ALL
        .iter()
        .filter(|&&k| k != Kind::Rmdir && a.get(k) != b.get(k))
        .map(|&k| (k.name(), b.get(k) as i64 - a.get(k) as i64))
        .collect()
}

#[test]
fn a_versioned_overwrite_adds_one_link_and_the_look_at_what_it_displaces() {
    fscalls::enable(true);
    let plain = Env::new();
    let versioned = Env::new();
    versioned
        .store
        .put_bucket_versioning(BUCKET, Versioning::Enabled)
        .unwrap();
    let (put_plain, del_plain) = overwrite_and_delete(&plain);
    let (put_versioned, del_versioned) = overwrite_and_delete(&versioned);
    eprintln!("PUT, unversioned: {}", put_plain.describe());
    eprintln!("PUT, versioned:   {}", put_versioned.describe());
    eprintln!("DELETE, unversioned: {}", del_plain.describe());
    eprintln!("DELETE, versioned:   {}", del_versioned.describe());
    // The version's name (link), its directory (open), and a look at the
    // object it displaces (open, fstat and its metadata: is it a version
    // already?).
    assert_eq!(
        added(&put_plain, &put_versioned),
        [("open", 2), ("fstat", 1), ("link", 1), ("getxattr", 1)],
        "PUT"
    );
    // The marker (open of the directory, create), and the same look.
    assert_eq!(
        added(&del_plain, &del_versioned),
        [("open", 3), ("fstat", 1), ("getxattr", 1)],
        "DELETE"
    );
}
