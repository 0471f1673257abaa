//! The remote transport under load and under faults: many clients, large
//! streamed bodies, clients and gateways that go away, reconnection.

mod common;

use common::{Socket, TestGateway};
use s3hpc_client::{ErrorCode, ListRequest, PutBody, PutOptions, S3Client};
use s3hpc_rpc::frame::{push_frame, Kind};
use s3hpc_rpc::message::Request;
use s3hpc_rpc::RemoteClient;
use s3hpc_store::EtagPolicy;
use std::borrow::Cow;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A deterministic byte stream of a given length, never held whole.
struct Pattern {
    left: u64,
    state: u64,
}

impl Pattern {
    fn new(len: u64, seed: u64) -> Pattern {
        Pattern {
            left: len,
            state: seed | 1,
        }
    }
}

impl Read for Pattern {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.left) as usize;
        for b in &mut buf[..n] {
            // xorshift: cheap, and no two nearby bytes repeat.
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            *b = self.state as u8;
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Compares a reader with the pattern, in bounded chunks.
fn same_as_pattern(mut r: impl Read, len: u64, seed: u64) -> bool {
    let mut want = Pattern::new(len, seed);
    let (mut a, mut b) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    let mut total = 0u64;
    loop {
        let n = r.read(&mut a).unwrap();
        if n == 0 {
            return total == len && want.read(&mut b[..1]).unwrap() == 0;
        }
        want.read_exact(&mut b[..n]).unwrap();
        if a[..n] != b[..n] {
            return false;
        }
        total += n as u64;
    }
}

fn handshake(s: &mut UnixStream, version: u32) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..8].copy_from_slice(b"S3HPCRPC");
    h[8..12].copy_from_slice(&version.to_le_bytes());
    s.write_all(&h).unwrap();
    let mut reply = [0u8; 16];
    s.read_exact(&mut reply).unwrap();
    reply
}

fn raw_connect(gw: &TestGateway) -> UnixStream {
    let path = gw.address.strip_prefix("unix:").unwrap();
    let mut s = UnixStream::connect(path).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(
        &handshake(&mut s, s3hpc_rpc::message::VERSION)[12..16],
        &[0, 0, 0, 0]
    );
    s
}

fn put_request(bucket: &str, key: &str, len: Option<u64>) -> Vec<u8> {
    let opts = PutOptions::default();
    let req = Request::PutObject {
        bucket: bucket.into(),
        key: key.into(),
        len,
        opts: Cow::Borrowed(&opts),
    };
    let mut out = Vec::new();
    s3hpc_rpc::frame::push_encoded(&mut out, Kind::Request, req.op(), 1, &req).unwrap();
    out
}

/// Waits until `cond` holds, for at most 10 s.
fn eventually(what: &str, cond: impl Fn() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < Duration::from_secs(10), "timed out: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn sixty_four_concurrent_clients() {
    sixty_four_clients(0);
}

#[test]
fn sixty_four_concurrent_clients_on_two_epoll_workers() {
    sixty_four_clients(2);
}

fn sixty_four_clients(workers: usize) {
    let gw = TestGateway::start_with(Socket::Unix, EtagPolicy::Md5, workers);
    gw.client().create_bucket("bkt").unwrap();
    std::thread::scope(|s| {
        for t in 0..64u64 {
            let gw = &gw;
            s.spawn(move || {
                let c = gw.client();
                for i in 0..20u64 {
                    let key = format!("t{t}/obj{i}");
                    let len = 1000 + t * 97 + i;
                    let mut body = Vec::new();
                    Pattern::new(len, t * 1000 + i)
                        .read_to_end(&mut body)
                        .unwrap();
                    c.put_object("bkt", &key, PutBody::Bytes(&body), &PutOptions::default())
                        .unwrap();
                    assert_eq!(c.head_object("bkt", &key).unwrap().size, len);
                    let g = c.get_object("bkt", &key, None).unwrap();
                    assert!(same_as_pattern(g.body, len, t * 1000 + i), "{key}");
                    if i % 2 == 0 {
                        c.delete_object("bkt", &key).unwrap();
                    }
                }
            });
        }
    });
    let c = gw.client();
    let mut req = ListRequest {
        max_keys: 1000,
        ..ListRequest::default()
    };
    let mut n = 0;
    loop {
        let page = c.list_objects("bkt", &req).unwrap();
        n += page.objects.len();
        if !page.is_truncated {
            break;
        }
        req.continuation_token = page.next_token;
    }
    assert_eq!(n, 64 * 10);
}

#[test]
fn large_streamed_objects_over_both_sockets() {
    for socket in [Socket::Unix, Socket::Tcp] {
        let gw = TestGateway::start(socket, EtagPolicy::Fast);
        let c = gw.client();
        c.create_bucket("big").unwrap();
        let len = 96 << 20;
        // Announced length, then unknown length: both stream.
        for (key, announced) in [("known", Some(len)), ("unknown", None)] {
            let mut src = Pattern::new(len, 7);
            let body = PutBody::Stream {
                reader: &mut src,
                len: announced,
            };
            c.put_object("big", key, body, &PutOptions::default())
                .unwrap();
            let g = c.get_object("big", key, None).unwrap();
            assert_eq!(g.length, len);
            assert!(same_as_pattern(g.body, len, 7), "{key}");
        }
        // A range from the middle, across chunk boundaries.
        let range = s3hpc_client::ByteRange::FromTo {
            first: (5 << 20) + 3,
            last: Some((9 << 20) + 11),
        };
        let mut g = c.get_object("big", "known", Some(range)).unwrap();
        let mut got = Vec::new();
        g.body.read_to_end(&mut got).unwrap();
        let mut all = Pattern::new(len, 7);
        let mut skip = vec![0u8; (5 << 20) + 3];
        all.read_exact(&mut skip).unwrap();
        let mut want = vec![0u8; got.len()];
        all.read_exact(&mut want).unwrap();
        assert_eq!(got.len() as u64, (4 << 20) + 9);
        assert!(got == want);
        // A body shorter than announced is refused and leaves nothing.
        let mut short = Pattern::new(1000, 1);
        let e = c
            .put_object(
                "big",
                "short",
                PutBody::Stream {
                    reader: &mut short,
                    len: Some(5000),
                },
                &PutOptions::default(),
            )
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::IncompleteBody, "{e:?}");
        assert_eq!(
            c.head_object("big", "short").unwrap_err().code,
            ErrorCode::NoSuchKey
        );
    }
}

#[test]
fn dropping_a_get_body_midway_keeps_the_client_usable() {
    // TCP streams bodies as frames; Unix passes large objects as files.
    for socket in [Socket::Tcp, Socket::Unix] {
        let gw = TestGateway::start(socket, EtagPolicy::Fast);
        let c = gw.client();
        c.create_bucket("bkt").unwrap();
        for (key, len) in [("tiny", 1000u64), ("small", 300_000), ("large", 8 << 20)] {
            let mut src = Pattern::new(len, 3);
            let body = PutBody::Stream {
                reader: &mut src,
                len: Some(len),
            };
            c.put_object("bkt", key, body, &PutOptions::default())
                .unwrap();
            let mut g = c.get_object("bkt", key, None).unwrap();
            let mut first = [0u8; 100];
            g.body.read_exact(&mut first).unwrap();
            drop(g);
            assert_eq!(c.head_object("bkt", key).unwrap().size, len);
            let g = c.get_object("bkt", key, None).unwrap();
            assert!(same_as_pattern(g.body, len, 3), "{key}");
        }
    }
}

#[test]
fn a_client_gone_mid_upload_leaves_nothing() {
    let gw = TestGateway::start(Socket::Unix, EtagPolicy::Md5);
    let c = gw.client();
    c.create_bucket("bkt").unwrap();
    c.put_object(
        "bkt",
        "old",
        PutBody::Bytes(b"old version"),
        &PutOptions::default(),
    )
    .unwrap();
    for key in ["new", "old"] {
        let mut s = raw_connect(&gw);
        let mut out = put_request("bkt", key, Some(10 << 20));
        push_frame(&mut out, Kind::Data, 0, 1, &vec![b'x'; 1 << 20]);
        s.write_all(&out).unwrap();
        drop(s);
    }
    // The gateway notices the closes and discards the partial bodies; the
    // one connection left is `c`'s, idle in its pool.
    eventually("connections closed", || {
        gw.gateway.as_ref().unwrap().connections() == 1
    });
    assert_eq!(
        c.head_object("bkt", "new").unwrap_err().code,
        ErrorCode::NoSuchKey
    );
    let mut g = c.get_object("bkt", "old", None).unwrap();
    let mut body = String::new();
    g.body.read_to_string(&mut body).unwrap();
    assert_eq!(body, "old version");
    let keys = c
        .list_objects(
            "bkt",
            &ListRequest {
                max_keys: 1000,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(keys.objects.len(), 1);
    assert_no_temporaries(&gw.root);
}

/// No temporary file is left anywhere under `root` (named temporaries of
/// overwrites are removed when their writer fails).
fn assert_no_temporaries(root: &std::path::Path) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            assert!(
                !name.contains("s3hpc-tmp"),
                "leftover {}",
                e.path().display()
            );
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            }
        }
    }
}

#[test]
fn garbage_and_wrong_versions_are_refused_and_the_gateway_lives() {
    let gw = TestGateway::start(Socket::Unix, EtagPolicy::Md5);
    let path = gw.address.strip_prefix("unix:").unwrap().to_string();
    // Not our protocol at all: closed.
    let mut s = UnixStream::connect(&path).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut buf = Vec::new();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(s.read_to_end(&mut buf).unwrap(), 0);
    // A future version: told so, then closed.
    let mut s = UnixStream::connect(&path).unwrap();
    let reply = handshake(&mut s, 99);
    assert_eq!(&reply[..8], b"S3HPCRPC");
    assert_eq!(u32::from_le_bytes(reply[12..16].try_into().unwrap()), 1);
    assert_eq!(s.read_to_end(&mut buf).unwrap(), 0);
    // A frame announcing 4 GiB: closed before anything is allocated.
    let mut s = raw_connect(&gw);
    s.write_all(&[0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])
        .unwrap();
    assert_eq!(s.read_to_end(&mut buf).unwrap(), 0);
    // An unknown op and an undecodable payload get error replies, and the
    // connection goes on.
    let mut s = raw_connect(&gw);
    let mut out = Vec::new();
    push_frame(&mut out, Kind::Request, 77, 5, &[77, 1, 2, 3]);
    push_frame(&mut out, Kind::Request, 6, 6, &[6, 200]);
    s.write_all(&out).unwrap();
    for id in [5u64, 6] {
        let mut h = [0u8; 16];
        s.read_exact(&mut h).unwrap();
        let h = s3hpc_rpc::frame::Header::decode(&h).unwrap();
        assert_eq!((h.kind, h.id), (Kind::Error, id));
        let mut p = vec![0u8; h.len as usize];
        s.read_exact(&mut p).unwrap();
        let e = s3hpc_rpc::body::decode_error(&p);
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e:?}");
        assert!(e.message.contains("malformed"), "{e:?}");
    }
    // A truncated frame, then the close.
    s.write_all(&[10, 0, 0, 0, 1]).unwrap();
    drop(s);
    // Through all this, real clients are served.
    let c = gw.client();
    c.create_bucket("alive").unwrap();
    c.head_bucket("alive").unwrap();
}

#[test]
fn a_gateway_that_is_down_is_named_and_a_restarted_one_is_reconnected() {
    let mut gw = TestGateway::start(Socket::Unix, EtagPolicy::Md5);
    let c = gw.client();
    c.create_bucket("bkt").unwrap();
    c.put_object("bkt", "k", PutBody::Bytes(b"v"), &PutOptions::default())
        .unwrap();
    gw.stop();
    // The socket file is gone with the gateway.
    let path = gw.address.strip_prefix("unix:").unwrap().to_string();
    assert!(!std::path::Path::new(&path).exists());
    let e = c.head_object("bkt", "k").unwrap_err();
    assert_eq!(e.code, ErrorCode::ServiceUnavailable, "{e:?}");
    assert!(e.message.contains("s3hpc serve --rpc"), "{e:?}");
    let e = RemoteClient::connect(&gw.address).err().unwrap();
    assert_eq!(e.code, ErrorCode::ServiceUnavailable, "{e:?}");
    gw.restart();
    // The same client object carries on, including a streamed body.
    assert_eq!(c.head_object("bkt", "k").unwrap().size, 1);
    let mut src = Pattern::new(3 << 20, 5);
    c.put_object(
        "bkt",
        "s",
        PutBody::Stream {
            reader: &mut src,
            len: None,
        },
        &PutOptions::default(),
    )
    .unwrap();
    gw.restart();
    let mut src = Pattern::new(3 << 20, 5);
    c.put_object(
        "bkt",
        "s2",
        PutBody::Stream {
            reader: &mut src,
            len: None,
        },
        &PutOptions::default(),
    )
    .unwrap();
    assert!(same_as_pattern(
        c.get_object("bkt", "s2", None).unwrap().body,
        3 << 20,
        5
    ));
}

#[test]
fn a_live_socket_is_never_taken_over() {
    let gw = TestGateway::start(Socket::Unix, EtagPolicy::Md5);
    let addr: s3hpc_rpc::Address = gw.address.parse().unwrap();
    let store = s3hpc_store::Store::open(gw.dir.path().join("other"), Default::default()).unwrap();
    let client = std::sync::Arc::new(s3hpc_client::EmbeddedClient::new(std::sync::Arc::new(
        store,
    )));
    let e = s3hpc_rpc::Gateway::start(client, &[addr], Default::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("another gateway"), "{e}");
    gw.client().list_buckets().unwrap();
}

#[test]
fn bodies_through_the_shared_buffer_and_hostile_buffers() {
    use s3hpc_rpc::shm::SHARED_BUFFER_BYTES;
    let gw = TestGateway::start(Socket::Unix, EtagPolicy::Md5);
    let c = gw.client();
    c.create_bucket("bkt").unwrap();
    let max = SHARED_BUFFER_BYTES as usize;
    // Below, at and above the buffer's range; ETags as computed embedded.
    for (i, len) in [65_536usize, 2 << 20, max, max + 1].into_iter().enumerate() {
        let mut body = Vec::new();
        Pattern::new(len as u64, i as u64)
            .read_to_end(&mut body)
            .unwrap();
        let key = format!("k{i}");
        let etag = c
            .put_object("bkt", &key, PutBody::Bytes(&body), &PutOptions::default())
            .unwrap();
        let got = c.get_object("bkt", &key, None).unwrap();
        assert!(same_as_pattern(got.body, len as u64, i as u64), "{len}");
        let local = s3hpc_store::Store::open(&gw.root, Default::default()).unwrap();
        assert_eq!(local.head_object("bkt", &key).unwrap().etag, etag);
    }

    let path = gw.address.strip_prefix("unix:").unwrap().to_string();
    let attach = |s: &mut UnixStream, fd: Option<std::os::fd::BorrowedFd>, size: u64| {
        let req = Request::AttachSharedBuffer { size };
        let mut out = Vec::new();
        s3hpc_rpc::frame::push_encoded(&mut out, Kind::Request, req.op(), 9, &req).unwrap();
        match fd {
            Some(fd) => {
                let stream = s3hpc_rpc::addr::Stream::Unix(s.try_clone().unwrap());
                stream.send_with_fd(&out, fd).unwrap();
            }
            None => s.write_all(&out).unwrap(),
        }
        read_reply(s)
    };
    // No descriptor, an unsealed memfd, a regular file: refused, and the
    // connection goes on.
    let mut s = raw_connect_path(&path);
    let e = attach(&mut s, None, 4096).unwrap_err();
    assert!(e.message.contains("without a descriptor"), "{e:?}");
    let loose = rustix::fs::memfd_create("x", rustix::fs::MemfdFlags::empty()).unwrap();
    rustix::fs::ftruncate(&loose, 4096).unwrap();
    let e = attach(&mut s, Some(loose.as_fd()), 4096).unwrap_err();
    assert!(e.message.contains("shared buffer refused"), "{e:?}");
    let file = tempfile::tempfile().unwrap();
    assert!(attach(&mut s, Some(file.as_fd()), 4096).is_err());
    // A shared body with no buffer attached: an error, not a crash.
    let mut out = put_request("bkt", "x", None);
    push_frame(&mut out, Kind::SharedBody, 0, 1, &100u64.to_le_bytes());
    s.write_all(&out).unwrap();
    let e = read_reply(&mut s).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{e:?}");
    // A valid buffer, then a body claiming more than it holds.
    let (_buf, fd) = s3hpc_rpc::shm::SharedBuffer::create(4096).unwrap();
    attach(&mut s, Some(fd.as_fd()), 4096).unwrap();
    let mut out = put_request("bkt", "x", None);
    push_frame(&mut out, Kind::SharedBody, 0, 1, &5000u64.to_le_bytes());
    s.write_all(&out).unwrap();
    assert_eq!(
        read_reply(&mut s).unwrap_err().code,
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        c.head_object("bkt", "x").unwrap_err().code,
        ErrorCode::NoSuchKey
    );
}

fn raw_connect_path(path: &str) -> UnixStream {
    let mut s = UnixStream::connect(path).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(
        &handshake(&mut s, s3hpc_rpc::message::VERSION)[12..16],
        &[0, 0, 0, 0]
    );
    s
}

/// Reads one reply frame: Ok for a response, the decoded error otherwise.
fn read_reply(s: &mut UnixStream) -> Result<(), s3hpc_client::S3Error> {
    let mut h = [0u8; 16];
    s.read_exact(&mut h).unwrap();
    let h = s3hpc_rpc::frame::Header::decode(&h).unwrap();
    let mut p = vec![0u8; h.len as usize];
    s.read_exact(&mut p).unwrap();
    match h.kind {
        Kind::Response => Ok(()),
        Kind::Error => Err(s3hpc_rpc::body::decode_error(&p)),
        k => panic!("unexpected {k:?}"),
    }
}

/// One UploadPart request frame.
fn upload_part_request(bucket: &str, key: &str, upload_id: &str, len: Option<u64>) -> Vec<u8> {
    let req = Request::UploadPart {
        bucket: bucket.into(),
        key: key.into(),
        upload_id: upload_id.into(),
        part_number: 1,
        len,
    };
    let mut out = Vec::new();
    s3hpc_rpc::frame::push_encoded(&mut out, Kind::Request, req.op(), 1, &req).unwrap();
    out
}

#[test]
fn bodies_of_other_than_the_announced_length_are_refused() {
    for workers in [0, 2] {
        bodies_of_the_announced_length(workers);
    }
}

/// A PutObject or UploadPart whose data frames (or shared-buffer body)
/// hold more or fewer bytes than its `len` is refused with IncompleteBody,
/// nothing is stored (an older object stays), and the connection goes on.
fn bodies_of_the_announced_length(workers: usize) {
    use s3hpc_rpc::shm::SharedBuffer;
    let gw = TestGateway::start_with(Socket::Unix, EtagPolicy::Md5, workers);
    let c = gw.client();
    c.create_bucket("bkt").unwrap();
    let opts = PutOptions::default();
    c.put_object("bkt", "old", PutBody::Bytes(b"old version"), &opts)
        .unwrap();
    let upload = c.create_multipart_upload("bkt", "mp", &opts).unwrap();
    let path = gw.address.strip_prefix("unix:").unwrap().to_string();
    let mut s = raw_connect_path(&path);
    // (announced, frames of the body): longer, shorter, split over frames,
    // an empty announced body with bytes, and a long tail in a later frame.
    let cases: [(u64, &[&[u8]]); 6] = [
        (10, &[&[b'x'; 20]]),
        (10, &[&[b'x'; 5]]),
        (10, &[&[b'x'; 6], &[b'y'; 5]]),
        (0, &[b"abc"]),
        (3, &[b"abc", b"d"]),
        (100_000, &[&[b'z'; 99_999]]),
    ];
    let check_refused = |s: &mut UnixStream, what: &str| {
        let e = read_reply(s).unwrap_err();
        assert_eq!(e.code, ErrorCode::IncompleteBody, "{what}: {e:?}");
    };
    for (i, (len, frames)) in cases.iter().enumerate() {
        let frame_body = |mut out: Vec<u8>| {
            for (j, f) in frames.iter().enumerate() {
                let kind = if j + 1 == frames.len() {
                    Kind::DataEnd
                } else {
                    Kind::Data
                };
                push_frame(&mut out, kind, 0, 1, f);
            }
            out
        };
        for key in ["new", "old"] {
            s.write_all(&frame_body(put_request("bkt", key, Some(*len))))
                .unwrap();
            check_refused(&mut s, &format!("put {key} case {i} ({workers} workers)"));
        }
        s.write_all(&frame_body(upload_part_request(
            "bkt",
            "mp",
            &upload,
            Some(*len),
        )))
        .unwrap();
        check_refused(&mut s, &format!("part case {i} ({workers} workers)"));
    }
    // The same through a shared buffer: 20 bytes where 10 and 30 are
    // announced.
    let (buf, fd) = SharedBuffer::create(4096).unwrap();
    let _ = buf;
    let req = Request::AttachSharedBuffer { size: 4096 };
    let mut out = Vec::new();
    s3hpc_rpc::frame::push_encoded(&mut out, Kind::Request, req.op(), 9, &req).unwrap();
    s3hpc_rpc::addr::Stream::Unix(s.try_clone().unwrap())
        .send_with_fd(&out, fd.as_fd())
        .unwrap();
    read_reply(&mut s).unwrap();
    for len in [10, 30] {
        let mut out = put_request("bkt", "new", Some(len));
        push_frame(&mut out, Kind::SharedBody, 0, 1, &20u64.to_le_bytes());
        s.write_all(&out).unwrap();
        check_refused(&mut s, &format!("shared put of 20 as {len}"));
        let mut out = upload_part_request("bkt", "mp", &upload, Some(len));
        push_frame(&mut out, Kind::SharedBody, 0, 1, &20u64.to_le_bytes());
        s.write_all(&out).unwrap();
        check_refused(&mut s, &format!("shared part of 20 as {len}"));
    }
    // Nothing stored; the old object whole; the connection still serves
    // a body of the right length.
    assert_eq!(
        c.head_object("bkt", "new").unwrap_err().code,
        ErrorCode::NoSuchKey
    );
    let mut g = c.get_object("bkt", "old", None).unwrap();
    let mut body = String::new();
    g.body.read_to_string(&mut body).unwrap();
    assert_eq!(body, "old version");
    assert!(c.list_parts("bkt", "mp", &upload).unwrap().is_empty());
    let mut out = put_request("bkt", "new", Some(10));
    push_frame(&mut out, Kind::Data, 0, 1, &[b'a'; 4]);
    push_frame(&mut out, Kind::DataEnd, 0, 1, &[b'b'; 6]);
    s.write_all(&out).unwrap();
    read_reply(&mut s).unwrap();
    assert_eq!(c.head_object("bkt", "new").unwrap().size, 10);
    let mut out = put_request("bkt", "empty", Some(0));
    push_frame(&mut out, Kind::DataEnd, 0, 1, &[]);
    s.write_all(&out).unwrap();
    read_reply(&mut s).unwrap();
    assert_eq!(c.head_object("bkt", "empty").unwrap().size, 0);
    assert_no_temporaries(&gw.root);
}
