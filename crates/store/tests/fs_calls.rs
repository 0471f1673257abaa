//! The file-system calls of each S3 operation, counted by the engine
//! (`s3hpc_store::fscalls`) and pinned here. On a parallel file system each
//! metadata call is a round trip to a server, so a change that adds one to
//! PUT, GET, HEAD or DELETE must change this table on purpose.
//!
//! One test in this binary: the counters are process-wide.

mod common;

use common::*;
use s3hpc_store::fscalls::{self, Counts, Kind};
use s3hpc_store::*;
use std::io::Read;

/// Runs `op` and returns the calls it made.
fn calls<T>(op: impl FnOnce() -> T) -> (T, Counts) {
    let before = fscalls::snapshot();
    let r = op();
    (r, fscalls::snapshot().since(&before))
}

fn put(store: &Store, key: &str, data: &[u8]) -> Counts {
    let (r, c) =
        calls(|| store.put_object(BUCKET, key, PutBody::Bytes(data), &PutOptions::default()));
    r.unwrap();
    c
}

/// `kind n` pairs, the others zero.
fn expect(c: &Counts, op: &str, want: &[(Kind, u64)]) {
    eprintln!("{op}: {}", c.describe());
    if std::env::var_os("FS_CALLS_PRINT").is_some() {
        return;
    }
    for k in Kind::ALL {
        let n = want.iter().find(|(w, _)| *w == k).map_or(0, |(_, n)| *n);
        assert_eq!(
            c.get(k),
            n,
            "{op}: {} calls of {}, expected {n} (all: {})",
            c.get(k),
            k.name(),
            c.describe()
        );
    }
}

/// What the engine does differs per file system; these are the two the
/// suite runs on (`scripts/test` runs it on /tmp and on /dev/shm).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fs {
    /// tmpfs: a DELETE checks the parent's size to remove it when empty.
    Tmpfs,
    /// ext4: an overwrite swaps the temporary in (rename-exchange, see
    /// `put.rs`), avoiding ext4's writeback on rename-over.
    Ext4,
    Other,
}

fn fs_of(path: &std::path::Path) -> Fs {
    match rustix::fs::statfs(path).map(|s| s.f_type) {
        Ok(0x0102_1994) => Fs::Tmpfs,
        Ok(0xEF53) => Fs::Ext4,
        _ => Fs::Other,
    }
}

#[test]
fn calls_per_operation() {
    use Kind::*;
    let env = Env::with(EtagPolicy::Fast, Durability::None);
    let s = &env.store;
    let fs = fs_of(&env.root());
    let data = vec![7u8; 3901];
    fscalls::enable(true);
    // Warm the directory-handle cache, as every later request finds it.
    put(s, "warm", &data);
    if fs == Fs::Other {
        // Pinned only where the suite runs; elsewhere, print what happens.
        eprintln!("file system not pinned: counts printed only");
        std::env::set_var("FS_CALLS_PRINT", "1");
    }

    // An unnamed temporary (O_TMPFILE), written, linked in under the key.
    // The fstat reads the temporary's mode and size for the reply.
    let c = put(s, "new", &data);
    expect(
        &c,
        "PUT new",
        &[(Open, 1), (Fstat, 1), (Write, 1), (Link, 1)],
    );

    // The first overwrite: the unnamed temporary's link fails (the key
    // exists), so it is linked under a temporary name and moved over the
    // key; this thread now predicts overwrites.
    let c = put(s, "new", &data);
    let install: &[(Kind, u64)] = match fs {
        // rename-noreplace (fails: the key exists), exchange, unlink the old.
        Fs::Ext4 => &[(Rename, 2), (Unlink, 1)],
        _ => &[(Rename, 1)],
    };
    let mut want = vec![(Open, 1), (Fstat, 1), (Write, 1), (Link, 2)];
    want.extend_from_slice(install);
    expect(&c, "PUT overwrite (first)", &want);

    // Predicted overwrites: a named temporary from the start.
    let c = put(s, "new", &data);
    let mut want = vec![(Open, 1), (Fstat, 1), (Write, 1)];
    want.extend_from_slice(install);
    expect(&c, "PUT overwrite", &want);

    let (got, c) = calls(|| {
        let mut g = s.get_object(BUCKET, "new", None).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let mut n = 0;
        loop {
            match g.body.read(&mut buf[n..]).unwrap() {
                0 => break,
                k => n += k,
            }
        }
        buf.truncate(n);
        buf
    });
    assert_eq!(got, data);
    // open, fstat (size, metadata mark), the data; the read that finds the
    // end makes no call (the reader stops at the object's length).
    expect(&c, "GET", &[(Open, 1), (Fstat, 1), (Read, 1)]);

    let (_, c) = calls(|| s.head_object(BUCKET, "new").unwrap());
    expect(&c, "HEAD", &[(Stat, 1)]);

    // The miss, then whether the directory handle is still live (fstat)
    // and whether the bucket exists (NoSuchBucket or NoSuchKey).
    let (_, c) = calls(|| s.head_object(BUCKET, "missing").unwrap_err());
    expect(&c, "HEAD missing", &[(Stat, 2), (Fstat, 1)]);

    let (_, c) = calls(|| s.delete_object(BUCKET, "new").unwrap());
    match fs {
        // The parent's size tells whether it is now empty.
        Fs::Tmpfs => expect(&c, "DELETE", &[(Fstat, 1), (Unlink, 1)]),
        _ => expect(&c, "DELETE", &[(Unlink, 1)]),
    }

    // The failed unlink, then the same two checks as a HEAD's miss.
    let (_, c) = calls(|| s.delete_object(BUCKET, "missing").unwrap());
    expect(&c, "DELETE missing", &[(Unlink, 1), (Stat, 1), (Fstat, 1)]);
    fscalls::enable(false);
}
