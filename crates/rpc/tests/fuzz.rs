//! Bounded fuzzing of everything that decodes peer input: the frame
//! header, request and reply payloads, error payloads, and a live gateway
//! fed mutated byte streams. Inputs are mutations of valid messages (so
//! they get past the first checks) from a seeded generator: a failure names
//! its seed and replays. `S3HPC_FUZZ_ITERS` raises the count for a longer
//! run (default: a few seconds' worth).

mod common;

use common::{Socket, TestGateway};
use s3hpc_client::{ByteRange, ListRequest, PutOptions, S3Client, WriteCondition};
use s3hpc_rpc::body::decode_error;
use s3hpc_rpc::frame::{Header, Kind, HEADER_LEN};
use s3hpc_rpc::message::{Request, Response};
use s3hpc_store::EtagPolicy;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

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
        let _ = postcard::from_bytes::<Response>(&m);
        let _ = decode_error(&m);
        if m.len() >= HEADER_LEN {
            let _ = Header::decode(m[..HEADER_LEN].try_into().unwrap());
        }
    }
    // Both outcomes must occur, or the mutations test nothing.
    assert!(ok > 1000 && err > 1000, "ok {ok}, err {err}");
}

#[test]
fn a_gateway_fed_mutated_streams_keeps_serving() {
    let gw = TestGateway::start(Socket::Unix, EtagPolicy::Md5);
    let path = gw.address.strip_prefix("unix:").unwrap().to_string();
    let c = gw.client();
    c.create_bucket("bucket").unwrap();
    let seeds = seeds();
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let mut replied = 0;
    let cases = iterations(200_000) / 200;
    for case in 0..cases {
        // A handshake, then a few frames, some mutated, some data frames.
        let mut stream = Vec::new();
        stream.extend_from_slice(b"S3HPCRPC\x01\0\0\0\0\0\0\0");
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
