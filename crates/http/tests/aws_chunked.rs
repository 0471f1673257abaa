//! aws-chunked bodies and checksums through the real server, anonymous
//! (the path s3s leaves framed): stored byte-exactly, the decoded length
//! enforced both ways, trailer and header checksums verified before the
//! object becomes visible, and returned with `x-amz-checksum-mode`.

mod common;

use common::request;
use s3hpc_http::AuthConfig;
use s3hpc_store::ChecksumAlgorithm;
use std::net::SocketAddr;

fn frame(data: &[u8], chunk: usize, signed: bool, trailer: &str) -> Vec<u8> {
    let ext = if signed {
        format!(";chunk-signature={}", "0".repeat(64))
    } else {
        String::new()
    };
    let mut out = Vec::new();
    for c in data.chunks(chunk) {
        out.extend(format!("{:x}{ext}\r\n", c.len()).bytes());
        out.extend_from_slice(c);
        out.extend(b"\r\n");
    }
    out.extend(format!("0{ext}\r\n{trailer}\r\n").bytes());
    out
}

fn put_chunked(
    addr: SocketAddr,
    key: &str,
    body: &[u8],
    decoded: usize,
    extra: &str,
) -> (u16, String, Vec<u8>) {
    let head = format!(
        "PUT /bkt/{key} HTTP/1.1\r\nx-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER\r\n\
         Content-Encoding: aws-chunked\r\nx-amz-decoded-content-length: {decoded}\r\n{extra}"
    );
    request(addr, &head, body)
}

#[test]
fn anonymous_aws_chunked_bodies_are_decoded_and_checked() {
    let s = common::serve(AuthConfig::Anonymous);
    let (addr, store) = (s.server.addr(), &s.store);
    // Large enough to stream through the channel, and small (in memory).
    for size in [100_000usize, 3 << 20, 10] {
        let data: Vec<u8> = (0..size).map(|i| (i * 13 + i / 7) as u8).collect();
        let crc = ChecksumAlgorithm::Crc32.checksum_of(&data);
        for signed in [false, true] {
            let key = format!("ok-{size}-{signed}");
            let trailer = format!("x-amz-checksum-crc32:{crc}\r\n");
            let body = frame(&data, 65536, signed, &trailer);
            let (st, _, b) = put_chunked(
                addr,
                &key,
                &body,
                size,
                "x-amz-trailer: x-amz-checksum-crc32\r\n",
            );
            assert_eq!(st, 200, "{}", String::from_utf8_lossy(&b));
            let (st, h, got) = request(
                addr,
                &format!("GET /bkt/{key} HTTP/1.1\r\nx-amz-checksum-mode: ENABLED\r\n"),
                b"",
            );
            assert_eq!(st, 200);
            let h = h.to_lowercase();
            assert_eq!(got.len(), size, "stored with its framing?");
            assert!(got == data);
            assert!(
                h.contains(&format!("x-amz-checksum-crc32: {}", crc.to_lowercase())),
                "{h}"
            );
            assert!(h.contains("x-amz-checksum-type: full_object"), "{h}");

            // A wrong trailer checksum, and lengths off by 10 either way.
            let bad = frame(&data, 65536, signed, "x-amz-checksum-crc32:AAAAAQ==\r\n");
            let (st, _, b) = put_chunked(
                addr,
                &format!("bad-{key}"),
                &bad,
                size,
                "x-amz-trailer: x-amz-checksum-crc32\r\n",
            );
            assert_eq!(st, 400);
            assert!(String::from_utf8_lossy(&b).contains("BadDigest"));
            let plain = frame(&data, 65536, signed, "");
            for decoded in [size + 10, size - 10] {
                let (st, _, b) = put_chunked(addr, &format!("len-{key}"), &plain, decoded, "");
                assert_eq!(st, 400, "decoded length {decoded} of {size}");
                assert!(String::from_utf8_lossy(&b).contains("IncompleteBody"));
            }
            // An overwrite that fails keeps the old object.
            let (st, _, _) = put_chunked(
                addr,
                &key,
                &bad,
                size,
                "x-amz-trailer: x-amz-checksum-crc32\r\n",
            );
            assert_eq!(st, 400);
            assert!(store.get_object("bkt", &key, None).unwrap().length == size as u64);
        }
    }
    // Header checksums, and a trailer announced but not sent.
    let (st, _, b) = request(
        addr,
        "PUT /bkt/h HTTP/1.1\r\nx-amz-checksum-sha256: 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\r\n",
        b"",
    );
    assert_eq!(st, 200, "{}", String::from_utf8_lossy(&b));
    let (st, _, _) = request(
        addr,
        "PUT /bkt/h2 HTTP/1.1\r\nx-amz-checksum-sha256: 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\r\n",
        b"x",
    );
    assert_eq!(st, 400);
    let (st, _, _) = put_chunked(
        addr,
        "no-trailer",
        &frame(b"abc", 2, false, ""),
        3,
        "x-amz-trailer: x-amz-checksum-crc32c\r\n",
    );
    assert_eq!(st, 400);
    let listed = store
        .list_objects("bkt", &Default::default())
        .unwrap()
        .objects
        .into_iter()
        .map(|o| o.key)
        .collect::<Vec<_>>();
    assert_eq!(
        listed,
        [
            "h",
            "ok-10-false",
            "ok-10-true",
            "ok-100000-false",
            "ok-100000-true",
            "ok-3145728-false",
            "ok-3145728-true"
        ]
    );
    s.server.shutdown().unwrap();
}
