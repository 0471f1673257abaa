//! Bounded fuzzing of everything that decodes peer input: the frame
//! header, request and reply payloads, error payloads, and a live gateway
//! fed mutated byte streams. Inputs are mutations of valid messages (so
//! they get past the first checks) from a seeded generator: a failure names
//! its seed and replays. `S3HPC_FUZZ_ITERS` raises the count for a longer
//! run (default: a few seconds' worth). The decoders run through
//! `s3hpc_rpc::fuzz`, the entry points the cargo-fuzz targets use
//! (`crates/rpc/fuzz`, docs/src/reference/rpc-protocol.md), and every allocation they make is
//! measured against the frame limits.

mod common;

use common::{Socket, TestGateway};
use s3hpc_client::{ByteRange, ListRequest, PutBody, PutOptions, S3Client, WriteCondition};
use s3hpc_rpc::body::decode_error;
use s3hpc_rpc::frame::{Header, Kind, HEADER_LEN, MAX_CONTROL, MAX_DATA};
use s3hpc_rpc::message::{Request, Response};
use s3hpc_store::EtagPolicy;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Counts the largest single allocation made by threads that ask for it,
/// so the decoders can be held to the frame limits.
struct Measuring;

thread_local! {
    static MEASURE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LARGEST: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the bookkeeping touches only
// const-initialised thread-locals, which never allocate.
unsafe impl std::alloc::GlobalAlloc for Measuring {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        note(layout.size());
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        note(new);
        unsafe { std::alloc::System.realloc(ptr, layout, new) }
    }
}

fn note(size: usize) {
    let _ = MEASURE.try_with(|m| {
        if m.get() {
            let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        }
    });
}

#[global_allocator]
static ALLOC: Measuring = Measuring;

/// Runs `f` and returns the largest single allocation it made.
fn largest_allocation(f: impl FnOnce()) -> usize {
    LARGEST.with(|l| l.set(0));
    MEASURE.with(|m| m.set(true));
    f();
    MEASURE.with(|m| m.set(false));
    LARGEST.with(|l| l.get())
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn iterations(default: usize) -> usize {
    std::env::var("S3HPC_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One valid encoded request per op.
fn seeds() -> Vec<Vec<u8>> {
    let opts = PutOptions {
        content_type: Some("text/plain".into()),
        metadata: BTreeMap::from([("a".into(), "b".into())]),
        tags: BTreeMap::from([("t".into(), "v".into())]),
        condition: WriteCondition::IfNoneMatch,
        ..Default::default()
    };
    let list = ListRequest {
        prefix: "p/".into(),
        delimiter: Some("/".into()),
        start_after: Some("p/a".into()),
        continuation_token: Some("k:p/b".into()),
        max_keys: 1000,
    };
    let parts = vec![(1u32, "\"e1\"".to_string()), (2, "\"e2\"".to_string())];
    let b = || Cow::Borrowed("bucket");
    let k = || Cow::Borrowed("dir/key");
    let u = || Cow::Borrowed("0123456789abcdef0123456789abcdef");
    let reqs = vec![
        Request::CreateBucket { bucket: b() },
        Request::DeleteBucket { bucket: b() },
        Request::HeadBucket { bucket: b() },
        Request::ListBuckets,
        Request::PutObject {
            bucket: b(),
            key: k(),
            len: Some(3),
            opts: Cow::Borrowed(&opts),
        },
        Request::GetObject {
            bucket: b(),
            key: k(),
            range: Some(ByteRange::FromTo {
                first: 1,
                last: Some(9),
            }),
            fd_ok: true,
        },
        Request::HeadObject {
            bucket: b(),
            key: k(),
        },
        Request::DeleteObject {
            bucket: b(),
            key: k(),
        },
        Request::ListObjects {
            bucket: b(),
            list: Cow::Borrowed(&list),
        },
        Request::CopyObject {
            src_bucket: b(),
            src_key: k(),
            dst_bucket: b(),
            dst_key: "../x".into(),
            opts: Some(Cow::Borrowed(&opts)),
            condition: WriteCondition::IfMatch("\"e\"".into()),
        },
        Request::CreateMultipartUpload {
            bucket: b(),
            key: k(),
            opts: Cow::Borrowed(&opts),
        },
        Request::UploadPart {
            bucket: b(),
            key: k(),
            upload_id: u(),
            part_number: 1,
            len: None,
        },
        Request::CompleteMultipartUpload {
            bucket: b(),
            key: k(),
            upload_id: u(),
            parts: Cow::Borrowed(&parts),
            condition: WriteCondition::IfNoneMatch,
        },
        Request::AbortMultipartUpload {
            bucket: b(),
            key: k(),
            upload_id: u(),
        },
        Request::ListParts {
            bucket: b(),
            key: k(),
            upload_id: u(),
        },
        Request::ListMultipartUploads {
            bucket: b(),
            prefix: "".into(),
        },
        Request::GetObjectTagging {
            bucket: b(),
            key: k(),
        },
        Request::PutObjectTagging {
            bucket: b(),
            key: k(),
            tags: Cow::Borrowed(&opts.tags),
        },
        Request::DeleteObjectTagging {
            bucket: b(),
            key: k(),
        },
    ];
    reqs.iter()
        .map(|r| postcard::to_allocvec(r).unwrap())
        .collect()
}

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        let inside = at.min(v.len().saturating_sub(1));
        match rng.below(6) {
            0 if !v.is_empty() => v[inside] ^= 1 << rng.below(8),
            1 if !v.is_empty() => v[inside] = rng.next() as u8,
            2 => v.truncate(at),
            3 => v.insert(at, rng.next() as u8),
            // A huge varint: lengths and counts that claim the world.
            4 => v
                .splice(at..at, [0xff, 0xff, 0xff, 0xff, 0x0f])
                .for_each(drop),
            _ => v.extend((0..rng.below(16)).map(|_| rng.next() as u8)),
        }
    }
    v
}

#[test]
fn decoders_never_panic() {
    let seeds = seeds();
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let (mut ok, mut err) = (0usize, 0usize);
    for _ in 0..iterations(200_000) {
        let s = &seeds[rng.below(seeds.len())];
        let m = mutate(&mut rng, s);
        let op = if rng.below(4) == 0 {
            rng.next() as u8
        } else {
            m.first().copied().unwrap_or(0)
        };
        match Request::decode(op, &m) {
            Ok(_) => ok += 1,
            Err(_) => err += 1,
        }
        let mut with_op = vec![op];
        with_op.extend_from_slice(&m);
        let largest = largest_allocation(|| s3hpc_rpc::fuzz::payloads(&with_op));
        assert!(
            largest <= MAX_CONTROL,
            "decoding {} bytes allocated {largest}",
            m.len()
        );
        let _ = postcard::from_bytes::<Response>(&m);
        let _ = decode_error(&m);
        if m.len() >= HEADER_LEN {
            let _ = Header::decode(m[..HEADER_LEN].try_into().unwrap());
        }
    }
    // Both outcomes must occur, or the mutations test nothing.
    assert!(ok > 1000 && err > 1000, "ok {ok}, err {err}");
}

/// Streams of frames as a peer sends them (valid requests, replies, errors
/// and data, then mutated, with headers that claim up to 4 GiB) through the
/// frame reader and every payload decoder: no panic, and no allocation
/// beyond the largest frame a header may announce.
#[test]
fn frame_streams_stay_within_the_frame_limits() {
    let seeds = seeds();
    let mut rng = Rng(0xd1b54a32d192ed03);
    let mut frames_seen = 0usize;
    let mut largest_seen = 0usize;
    for _ in 0..iterations(200_000) / 4 {
        let mut stream = Vec::new();
        for id in 0..1 + rng.below(4) as u64 {
            let (kind, payload) = match rng.below(5) {
                0 => (
                    Kind::Response,
                    postcard::to_allocvec(&Response::Done).unwrap(),
                ),
                1 => (Kind::Error, vec![rng.next() as u8; rng.below(40)]),
                2 => (Kind::DataEnd, vec![b'x'; rng.below(100)]),
                _ => (Kind::Request, seeds[rng.below(seeds.len())].clone()),
            };
            let payload = if rng.below(2) == 0 {
                mutate(&mut rng, &payload)
            } else {
                payload
            };
            let h = Header {
                len: payload.len() as u32,
                kind,
                op: payload.first().copied().unwrap_or(0),
                id,
            };
            let mut frame = h.encode().to_vec();
            frame.extend_from_slice(&payload);
            if rng.below(4) == 0 {
                frame = mutate(&mut rng, &frame);
            }
            if frame.len() >= 4 && rng.below(8) == 0 {
                // A length that claims far more than follows.
                let claim = [MAX_DATA as u32, MAX_CONTROL as u32, u32::MAX][rng.below(3)];
                frame[..4].copy_from_slice(&claim.to_le_bytes());
            }
            stream.extend_from_slice(&frame);
        }
        frames_seen += stream.len() / HEADER_LEN;
        let largest = largest_allocation(|| s3hpc_rpc::fuzz::frames(&stream));
        assert!(
            largest <= MAX_CONTROL,
            "a stream of {} bytes allocated {largest}",
            stream.len()
        );
        largest_seen = largest_seen.max(largest);
    }
    assert!(frames_seen > 0);
    // The measure works: headers claiming the limits were taken at their
    // word (the payload buffer is sized before it is read), and no more.
    assert!(largest_seen >= MAX_DATA, "largest {largest_seen}");
}

#[test]
fn a_gateway_fed_mutated_streams_keeps_serving() {
    let gw = TestGateway::start(Socket::Unix, EtagPolicy::Md5);
    let path = gw.address.strip_prefix("unix:").unwrap().to_string();
    let c = gw.client();
    c.create_bucket("bucket").unwrap();
    // An object no seed names keeps the bucket non-empty: a valid
    // DeleteObject then DeleteBucket among the streams must not remove it.
    c.put_object(
        "bucket",
        "sentinel/untouched",
        PutBody::Bytes(b"x"),
        &PutOptions::default(),
    )
    .unwrap();
    let seeds = seeds();
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let mut replied = 0;
    let cases = iterations(200_000) / 200;
    for case in 0..cases {
        // A handshake, then a few frames, some mutated, some data frames.
        let mut stream = Vec::new();
        stream.extend_from_slice(b"S3HPCRPC");
        stream.extend_from_slice(&s3hpc_rpc::message::VERSION.to_le_bytes());
        stream.extend_from_slice(&[0; 4]);
        for id in 0..1 + rng.below(4) as u64 {
            let s = &seeds[rng.below(seeds.len())];
            let payload = if rng.below(2) == 0 {
                mutate(&mut rng, s)
            } else {
                s.clone()
            };
            let op = payload.first().copied().unwrap_or(0);
            let mut frame = Vec::new();
            let h = Header {
                len: payload.len() as u32,
                kind: Kind::Request,
                op,
                id,
            };
            frame.extend_from_slice(&h.encode());
            frame.extend_from_slice(&payload);
            if op == 4 || op == 11 {
                let data = Header {
                    len: 3,
                    kind: Kind::DataEnd,
                    op: 0,
                    id,
                };
                frame.extend_from_slice(&data.encode());
                frame.extend_from_slice(b"abc");
            }
            if rng.below(3) == 0 {
                frame = mutate(&mut rng, &frame);
            }
            stream.extend_from_slice(&frame);
        }
        let mut s = UnixStream::connect(&path).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _ = s.write_all(&stream);
        let _ = s.shutdown(std::net::Shutdown::Write);
        // The gateway answers or closes; it never hangs.
        let mut sink = Vec::new();
        let got = s.read_to_end(&mut sink);
        // Beyond the 16-byte handshake reply: at least one frame came back.
        replied += usize::from(sink.len() > 16 + HEADER_LEN);
        if let Err(e) = got {
            assert!(
                e.kind() != std::io::ErrorKind::WouldBlock,
                "case {case}: the gateway hung"
            );
        }
    }
    // Most streams start with a valid frame: they must get answers.
    assert!(
        replied > cases / 2,
        "{replied} of {cases} streams got a reply"
    );
    // Still serving, and nothing escaped the data root.
    c.head_bucket("bucket").unwrap();
    for e in std::fs::read_dir(gw.dir.path()).unwrap() {
        let name = e.unwrap().file_name();
        assert!(
            name == "root" || name == "gw.sock",
            "{name:?} appeared beside the data root"
        );
    }
}
