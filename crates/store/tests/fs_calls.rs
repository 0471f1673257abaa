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
/// Long enough that no counted operation looks at a bucket's layout again
/// (the first on each bucket does, uncounted).
const HOUR: std::time::Duration = std::time::Duration::from_secs(3600);

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
    s.set_layout_recheck(HOUR);
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

    // CompleteMultipartUpload of one part: the upload's info read (open,
    // fstat, reads), the part opened (open, fstat), copied into an unnamed
    // temporary made with the metadata mark in its mode, its metadata
    // stored (the multipart ETag: setxattr), linked in; then the
    // completion record written in the
    // staging (an unnamed file: open, write, fstat, link) for a retried
    // completion, and the rest of the staging removed (a listing of it, an
    // unlink per file; the directories stay with the record).
    let id = s
        .create_multipart_upload(BUCKET, "mp", &PutOptions::default())
        .unwrap();
    let etag = s
        .upload_part(BUCKET, "mp", &id, 1, PutBody::Bytes(&data))
        .unwrap();
    // (Before any overwrite: those teach this thread to predict more.)
    let (info, c) = calls(|| {
        s.complete_multipart_upload(BUCKET, "mp", &id, &[(1, etag)])
            .unwrap()
    });
    assert_eq!(info, s.head_object(BUCKET, "mp").unwrap());
    expect(
        &c,
        "CompleteMultipartUpload",
        &[
            (Open, 5),
            (Fstat, 4),
            (Read, 1),
            (CopyRange, 1),
            (Setxattr, 1),
            (Link, 2),
            (Readdir, 1),
            (Unlink, 2),
            (Write, 1),
        ],
    );

    // An unnamed temporary (O_TMPFILE), written, linked in under the key.
    // The fstat reads the temporary's mode and size for the reply.
    let c = put(s, "new", &data);
    expect(
        &c,
        "PUT new",
        &[(Open, 1), (Fstat, 1), (Write, 1), (Link, 1)],
    );

    // With an ACL (a canned one: mode bits), set on the temporary before
    // the link: any ACL it inherited removed, then one chmod.
    let canned = PutOptions {
        access: PermissionChange::canned("public-read", false),
        ..Default::default()
    };
    let (r, c) = calls(|| s.put_object(BUCKET, "acl", PutBody::Bytes(&data), &canned));
    r.unwrap();
    expect(
        &c,
        "PUT new with an ACL",
        &[
            (Open, 1),
            (Fstat, 1),
            (Write, 1),
            (Setxattr, 1),
            (Chmod, 1),
            (Link, 1),
        ],
    );

    // The first overwrite: the unnamed temporary's link fails (the key
    // exists), so it is linked under a temporary name and moved over the
    // key; this thread now predicts overwrites.
    let c = put(s, "new", &data);
    let install: &[(Kind, u64)] = match fs {
        // exchange (the key is expected to exist), unlink the old object.
        Fs::Ext4 => &[(Rename, 1), (Unlink, 1)],
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

    // The miss, then whether the directory handle is still live (fstat:
    // its link count); a live directory also answers that the bucket
    // exists (NoSuchKey, not NoSuchBucket).
    let (e, c) = calls(|| s.head_object(BUCKET, "missing").unwrap_err());
    assert_eq!(e.code, ErrorCode::NoSuchKey);
    expect(&c, "HEAD missing", &[(Stat, 1), (Fstat, 1)]);
    // A missing bucket: its directory fails to open, then the bucket stat.
    let (e, c) = calls(|| s.head_object("no-such-bucket", "k").unwrap_err());
    assert_eq!(e.code, ErrorCode::NoSuchBucket);
    // And the look for its packs (once per bucket and second).
    expect(&c, "HEAD missing bucket", &[(Open, 1), (Stat, 2)]);

    let (_, c) = calls(|| s.delete_object(BUCKET, "new").unwrap());
    match fs {
        // The parent's size tells whether it is now empty.
        Fs::Tmpfs => expect(&c, "DELETE", &[(Fstat, 1), (Unlink, 1)]),
        _ => expect(&c, "DELETE", &[(Unlink, 1)]),
    }

    // The failed unlink, then the same check as a HEAD's miss.
    let (_, c) = calls(|| s.delete_object(BUCKET, "missing").unwrap());
    expect(&c, "DELETE missing", &[(Unlink, 1), (Fstat, 1)]);

    // In a directory: a local file system removes the directory the delete
    // may have emptied (ext4 tries, tmpfs asks the size first).
    put(s, "d/x", &data);
    put(s, "d/y", &data);
    let (_, c) = calls(|| s.delete_object(BUCKET, "d/x").unwrap());
    match fs {
        Fs::Tmpfs => expect(&c, "DELETE in a directory", &[(Fstat, 1), (Unlink, 1)]),
        _ => expect(&c, "DELETE in a directory", &[(Unlink, 1), (Rmdir, 1)]),
    }
    let (_, c) = calls(|| s.delete_object(BUCKET, "d/y").unwrap());
    match fs {
        Fs::Tmpfs => expect(
            &c,
            "DELETE emptying a directory",
            &[(Fstat, 1), (Unlink, 1), (Rmdir, 1)],
        ),
        _ => expect(
            &c,
            "DELETE emptying a directory",
            &[(Unlink, 1), (Rmdir, 1)],
        ),
    }
    assert!(!env.path("d").exists());

    // If-None-Match on a new key: the unnamed temporary's link is the
    // atomic create, nothing added.
    let c = put_if_none_match(s, "cond", &data);
    expect(
        &c,
        "PUT If-None-Match",
        &[(Open, 1), (Fstat, 1), (Write, 1), (Link, 1)],
    );
    // mdtest's create: an empty object made in place.
    let c = put(s, "empty", b"");
    expect(&c, "PUT empty", &[(Open, 1)]);

    // A body that arrives in pieces (libs3's data callback hands out 64
    // KiB at a time) is written a full 1 MiB buffer at a time: on FUSE
    // without write-behind each write is a round trip to the server.
    let body = vec![3u8; 2 << 20];
    let mut pieces = Pieces(&body, 64 << 10);
    let (r, c) = calls(|| {
        let stream = PutBody::Stream {
            reader: &mut pieces,
            len: Some(body.len() as u64),
        };
        s.put_object(BUCKET, "streamed", stream, &PutOptions::default())
    });
    r.unwrap();
    eprintln!("PUT streamed 2 MiB in 64 KiB pieces: {}", c.describe());
    if fs != Fs::Other {
        assert_eq!(c.get(Write), 2, "{}", c.describe());
    }
    let mut got = Vec::new();
    s.get_object(BUCKET, "streamed", None)
        .unwrap()
        .body
        .read_to_end(&mut got)
        .unwrap();
    assert!(got == body, "the streamed object reads back whole");

    // Without O_TMPFILE and renameat2's flags (GlusterFS, MooseFS, CephFS
    // through FUSE): a named temporary, renamed over the key whether it is
    // new or not.
    s.emulate_minimal_fs();
    for (op, key) in [
        ("PUT new, named", "named"),
        ("PUT overwrite, named", "named"),
    ] {
        let c = put(s, key, &data);
        expect(&c, op, &[(Open, 1), (Fstat, 1), (Write, 1), (Rename, 1)]);
    }
    // If-None-Match there: link(2) of the temporary, which refuses a taken
    // name, then the temporary's name removed.
    let c = put_if_none_match(s, "cond-named", &data);
    expect(
        &c,
        "PUT If-None-Match, named",
        &[(Open, 1), (Fstat, 1), (Write, 1), (Link, 1), (Unlink, 1)],
    );
    shared_paths(&data);
    fscalls::enable(false);
}

fn put_if_none_match(store: &Store, key: &str, data: &[u8]) -> Counts {
    let opts = PutOptions {
        condition: WriteCondition::IfNoneMatch,
        ..PutOptions::default()
    };
    let (r, c) = calls(|| store.put_object(BUCKET, key, PutBody::Bytes(data), &opts));
    r.unwrap();
    c
}

/// The paths of a shared file system (MooseFS, CephFS, GlusterFS), taken
/// on this local one by adjusting the probed profile.
fn shared_paths(data: &[u8]) {
    use Kind::*;
    let open = |rename_gap: bool| {
        let tmp = test_dir();
        let store = Store::open_adjusted(
            tmp.path().join("root"),
            StoreConfig {
                etag: EtagPolicy::Fast,
                durability: Durability::None,
            },
            |p| {
                p.shared = true;
                p.rename_gap = rename_gap;
                p.rename_exchange = true;
            },
        )
        .unwrap();
        store.set_layout_recheck(HOUR);
        store.create_bucket(BUCKET).unwrap();
        put(&store, "warm", data);
        (tmp, store)
    };
    let (tmp, s) = open(false);

    let (_, c) = calls(|| {
        let mut g = s.get_object(BUCKET, "warm", None).unwrap();
        std::io::copy(&mut g.body, &mut std::io::sink()).unwrap()
    });
    // The fstat answers from what the open's lookup brought (no round trip
    // on FUSE), so it is the same as on a local file system.
    expect(&c, "shared: GET", &[(Open, 1), (Fstat, 1), (Read, 1)]);

    // The miss; then the directory's path resolved again (open) and its
    // inode compared with the cached handle's (two fstats from what the
    // kernel holds). No retry where a rename is one step (MooseFS, CephFS).
    let (e, c) = calls(|| s.head_object(BUCKET, "missing").unwrap_err());
    assert_eq!(e.code, ErrorCode::NoSuchKey);
    expect(
        &c,
        "shared: HEAD missing",
        &[(Stat, 1), (Open, 1), (Fstat, 2)],
    );
    let (_, c) = calls(|| s.delete_object(BUCKET, "missing").unwrap());
    expect(
        &c,
        "shared: DELETE missing",
        &[(Unlink, 1), (Open, 1), (Fstat, 2)],
    );

    // Where a nest can leave a key missing for a moment (no
    // RENAME_EXCHANGE: ceph-fuse, NFS), a miss looks for the nest's marker
    // and at the name once more: two stats, and no sleep or retry.
    let gap_tmp = test_dir();
    let g = Store::open_adjusted(gap_tmp.path().join("root"), s.config(), |p| {
        p.shared = true;
        p.rename_gap = false;
        p.rename_exchange = false;
    })
    .unwrap();
    g.set_layout_recheck(HOUR);
    g.create_bucket(BUCKET).unwrap();
    put(&g, "warm", data);
    let (e, c) = calls(|| g.head_object(BUCKET, "missing").unwrap_err());
    assert_eq!(e.code, ErrorCode::NoSuchKey);
    expect(
        &c,
        "shared, no exchange: HEAD missing",
        &[(Stat, 3), (Open, 1), (Fstat, 2)],
    );
    // A nest there removes its marker when done.
    put(&g, "n", data);
    put(&g, "n/x", data);
    assert_eq!(g.head_object(BUCKET, "n").unwrap().size, data.len() as u64);
    let mut left: Vec<_> = std::fs::read_dir(gap_tmp.path().join("root").join(BUCKET))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["n", "warm"]);

    // A delete leaves the directory it emptied: a failed rmdir would be a
    // round trip to every server holding it. A listing that reads it empty
    // removes it, and never shows it.
    put(&s, "d/x", data);
    let (_, c) = calls(|| s.delete_object(BUCKET, "d/x").unwrap());
    expect(&c, "shared: DELETE emptying a directory", &[(Unlink, 1)]);
    let dir = tmp.path().join("root").join(BUCKET).join("d");
    assert!(dir.is_dir());
    let page = s
        .list_objects(
            BUCKET,
            &ListRequest {
                delimiter: Some("/".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(page.common_prefixes.is_empty(), "{page:?}");
    assert_eq!(page.objects.len(), 1, "{page:?}");
    let page = s
        .list_objects(
            BUCKET,
            &ListRequest {
                prefix: "d/".into(),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(page.objects.is_empty(), "{page:?}");
    assert!(!dir.exists());
    // A PUT after the removal makes the directory again.
    put(&s, "d/x", data);
    assert_eq!(
        s.head_object(BUCKET, "d/x").unwrap().size,
        data.len() as u64
    );

    // MooseFS: files stat'ed as the readdir returns them (answered from
    // what the readdir brought there), the same calls as stat'ing after the
    // read: one stat per file a page returns, no more.
    let mut counts = Vec::new();
    // A shared file system's paths on a new tree holding l/0 .. l/4.
    let five = |adjust: &dyn Fn(&mut FsProfile)| {
        let tmp = test_dir();
        let s = Store::open_adjusted(tmp.path().join("root"), s.config(), |p| {
            p.shared = true;
            adjust(p);
        })
        .unwrap();
        s.set_layout_recheck(HOUR);
        s.create_bucket(BUCKET).unwrap();
        for i in 0..5 {
            put(&s, &format!("l/{i}"), data);
        }
        (tmp, s)
    };
    for stat_with_readdir in [false, true] {
        let (_tmp, s) = five(&|p| {
            p.rename_exchange = true;
            p.stat_with_readdir = stat_with_readdir;
        });
        let list = |max_keys| ListRequest {
            prefix: "l/".into(),
            max_keys,
            ..Default::default()
        };
        let (page, c) = calls(|| s.list_objects(BUCKET, &list(1000)).unwrap());
        assert_eq!(page.objects.len(), 5);
        let (page, c2) = calls(|| s.list_objects(BUCKET, &list(2)).unwrap());
        assert_eq!(page.objects.len(), 2);
        // The bucket's stat, the two files, and the third, whose stat comes
        // before the page is found full. Stat'ing with the readdir takes the
        // first two files in readdir order, which the page may not return:
        // at most 2 more.
        if stat_with_readdir {
            eprintln!(
                "shared, stat with readdir: LIST of 2 in 5: {}",
                c2.describe()
            );
            assert!((4..=6).contains(&c2.get(Stat)), "{}", c2.describe());
        } else {
            // The fstat: the directory's stamp, forced from the server, to
            // know whether what the page read may serve the next.
            expect(
                &c2,
                "shared: LIST of 2 in a directory of 5",
                &[(Stat, 4), (Open, 1), (Fstat, 1), (Readdir, 1)],
            );
        }
        counts.push(c.describe());
    }
    assert_eq!(counts[0], counts[1], "LIST of 5, stat after / with readdir");

    // A continuation page of a directory whose stamp has settled (older
    // than the 1 s allowed for a server's clock) comes from the window the
    // previous page read: no readdir, whatever the directory holds.
    let (_tmp, s) = five(&|p| p.coherent_dir_stamps = true);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let mut r = ListRequest {
        prefix: "l/".into(),
        max_keys: 2,
        ..Default::default()
    };
    let first = s.list_objects(BUCKET, &r).unwrap();
    r.continuation_token = first.next_token;
    let (page, c) = calls(|| s.list_objects(BUCKET, &r).unwrap());
    assert_eq!(page.objects.len(), 2);
    expect(
        &c,
        "shared: a continuation page from the cached window",
        &[(Stat, 4), (Open, 1), (Fstat, 1)],
    );

    // MooseFS: the window's attributes were taken by the thread that read
    // the directory (done well within the pause) and are cached with it:
    // the continuation page stats no file.
    let (_tmp, s) = five(&|p| {
        p.coherent_dir_stamps = true;
        p.stat_with_readdir = true;
    });
    std::thread::sleep(std::time::Duration::from_millis(1100));
    r.continuation_token = None;
    let first = s.list_objects(BUCKET, &r).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    r.continuation_token = first.next_token;
    let (page, c) = calls(|| s.list_objects(BUCKET, &r).unwrap());
    assert_eq!(page.objects.len(), 2);
    expect(
        &c,
        "shared, attributes with the readdir: a continuation page from the cached window",
        &[(Stat, 1), (Open, 1), (Fstat, 1)],
    );

    // GlusterFS: a miss is retried 3 times (1, 2, 4 ms), each with the
    // directory check, since a name can be missing while it is renamed over.
    let (_tmp, s) = open(true);
    let (_, c) = calls(|| s.head_object(BUCKET, "missing").unwrap_err());
    expect(
        &c,
        "shared, rename gap: HEAD missing",
        &[(Stat, 4), (Open, 4), (Fstat, 8)],
    );
}

/// A body handed out at most `.1` bytes per read, as a data callback does.
struct Pieces<'a>(&'a [u8], usize);

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.1).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}
