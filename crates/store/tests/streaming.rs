//! Streaming: multi-GiB PUT and GET in bounded memory, and bodies that end
//! early or run long.

mod common;

use common::*;
use s3hpc_store::*;
use std::io::{self, Read};

/// Peak resident set size of this process, from /proc/self/status.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// Reads a GET body to the end through a small buffer, counting bytes and
/// checking every byte is `byte`.
fn drain(mut r: impl Read, byte: u8) -> u64 {
    let mut buf = vec![0u8; 256 << 10];
    let want = vec![byte; buf.len()];
    let mut n = 0u64;
    loop {
        match r.read(&mut buf) {
            Ok(0) => return n,
            Ok(k) => {
                // A slice compare is a memcmp: fast even in debug builds.
                assert!(buf[..k] == want[..k], "wrong byte near offset {n}");
                n += k as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => panic!("read failed after {n} bytes: {e}"),
        }
    }
}

/// The size of the big objects. 3 GiB: large enough that holding an object,
/// or any sizeable fraction of it, in memory shows in the peak RSS.
const BIG: u64 = 3 << 30;

/// One test (not several) so that no other test in this binary allocates
/// while the peak is measured.
#[test]
fn multi_gib_objects_stream_in_bounded_memory() {
    // On the disk, not /dev/shm: tmpfs pages would count against memory.
    let env = Env::with(EtagPolicy::Fast, Durability::None);
    let s = &env.store;
    // Reset the high-water mark to the current RSS where the kernel allows.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = peak_rss();
    for (key, len) in [("big/known-len", Some(BIG)), ("big/unknown-len", None)] {
        let mut src = io::repeat(0).take(BIG);
        let etag = s
            .put_object(
                BUCKET,
                key,
                PutBody::Stream {
                    reader: &mut src,
                    len,
                },
                &PutOptions::default(),
            )
            .unwrap();
        let h = s.head_object(BUCKET, key).unwrap();
        assert_eq!(h.size, BIG, "{key}");
        assert_eq!(h.etag, etag);
        let g = s.get_object(BUCKET, key, None).unwrap();
        assert_eq!(g.length, BIG);
        assert_eq!(drain(g.body, 0), BIG, "{key}");
        // A range near the end, past 2^31 and 2^32-bit offsets.
        let g = s
            .get_object(
                BUCKET,
                key,
                Some(ByteRange::FromTo {
                    first: BIG - 10,
                    last: None,
                }),
            )
            .unwrap();
        assert_eq!((g.offset, g.length), (BIG - 10, 10));
        assert_eq!(drain(g.body, 0), 10);
        // A copy of it, through the kernel's copy path.
        if len.is_some() {
            let c = s
                .copy_object(BUCKET, key, BUCKET, "big/copy", None)
                .unwrap();
            assert_eq!(c.size, BIG);
            s.delete_object(BUCKET, "big/copy").unwrap();
        }
        s.delete_object(BUCKET, key).unwrap();
        assert!(!env.path(key).exists());
    }
    let grew = peak_rss().saturating_sub(before);
    assert!(
        grew < 64 << 20,
        "peak RSS grew by {} MiB while streaming {} GiB objects",
        grew >> 20,
        BIG >> 30
    );
    assert!(walk(&env.root().join(BUCKET)).is_empty());
}

#[test]
fn md5_of_a_streamed_body() {
    let env = Env::new();
    let data: Vec<u8> = (0..5_000_003u32).map(|i| (i % 251) as u8).collect();
    for len in [Some(data.len() as u64), None] {
        // A reader that returns odd-sized short reads.
        struct Dribble<'a>(&'a [u8], usize);
        impl Read for Dribble<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.1 = self.1 % 7919 + 1;
                let n = self.1.min(buf.len()).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut r = Dribble(&data, 0);
        let etag = env
            .store
            .put_object(
                BUCKET,
                "s",
                PutBody::Stream {
                    reader: &mut r,
                    len,
                },
                &PutOptions::default(),
            )
            .unwrap();
        assert_eq!(etag, md5_etag(&data));
        assert_eq!(env.get("s"), data);
    }
}

#[test]
fn short_body_is_incomplete_and_leaves_nothing() {
    let env = Env::new();
    let s = &env.store;
    env.put("k", b"old");
    for key in ["k", "new/key"] {
        let mut r = io::repeat(7).take(1000);
        expect_err(
            s.put_object(
                BUCKET,
                key,
                PutBody::Stream {
                    reader: &mut r,
                    len: Some(1001),
                },
                &PutOptions::default(),
            ),
            ErrorCode::IncompleteBody,
            &[key],
        );
    }
    assert_eq!(
        env.get("k"),
        b"old",
        "a failed PUT must not replace the object"
    );
    assert_eq!(code(s.head_object(BUCKET, "new/key")), ErrorCode::NoSuchKey);
    assert_eq!(env.keys(), ["k"]);
    // Neither a temporary nor an empty directory stays behind.
    let left = walk(&env.root().join(BUCKET));
    assert!(!left.iter().any(|p| p.contains("s3hpc-tmp")), "{left:?}");
    let page = env.top_level();
    assert!(page.common_prefixes.is_empty());
}

#[test]
fn failing_reader_fails_the_put_cleanly() {
    struct Broken(u64);
    impl Read for Broken {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0 == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionReset,
                    "peer went away",
                ));
            }
            let n = (buf.len() as u64).min(self.0) as usize;
            buf[..n].fill(1);
            self.0 -= n as u64;
            Ok(n)
        }
    }
    let env = Env::new();
    for len in [None, Some(10 << 20)] {
        let e = env
            .store
            .put_object(
                BUCKET,
                "broken",
                PutBody::Stream {
                    reader: &mut Broken(3 << 20),
                    len,
                },
                &PutOptions::default(),
            )
            .unwrap_err();
        assert_ne!(e.code, ErrorCode::InternalError, "{e}");
        assert!(e.message.contains("peer went away"), "{e}");
    }
    assert_eq!(
        code(env.store.head_object(BUCKET, "broken")),
        ErrorCode::NoSuchKey
    );
    assert!(walk(&env.root().join(BUCKET)).is_empty());
}

#[test]
fn a_long_body_is_cut_at_len() {
    let env = Env::new();
    let mut r = io::repeat(5).take(10_000);
    env.store
        .put_object(
            BUCKET,
            "cut",
            PutBody::Stream {
                reader: &mut r,
                len: Some(4096),
            },
            &PutOptions::default(),
        )
        .unwrap();
    assert_eq!(env.get("cut"), vec![5u8; 4096]);
}

#[test]
fn too_large_announced_length_is_refused_up_front() {
    let env = Env::new();
    let mut r = io::repeat(0);
    expect_err(
        env.store.put_object(
            BUCKET,
            "huge",
            PutBody::Stream {
                reader: &mut r,
                len: Some((5 << 40) + 1),
            },
            &PutOptions::default(),
        ),
        ErrorCode::EntityTooLarge,
        &[],
    );
    assert!(walk(&env.root().join(BUCKET)).is_empty());
}
