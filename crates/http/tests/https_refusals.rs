//! Every refusal reaches the client as an S3 error over HTTPS too: an
//! `--anonymous` HTTPS server (the path where this crate, not s3s, decodes
//! aws-chunked bodies) answers a body longer than its decoded length with
//! a 400 and ends the connection with a TLS close_notify, so the client
//! reads the error instead of an EOF it would retry.

mod common;

use s3hpc_http::{AuthConfig, HttpServer, TlsConfig};
use s3hpc_store::{Store, StoreConfig};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::rustls;

fn aws_chunked(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for c in data.chunks(65536) {
        out.extend(format!("{:x}\r\n", c.len()).bytes());
        out.extend_from_slice(c);
        out.extend(b"\r\n");
    }
    out.extend(b"0\r\n\r\n");
    out
}

#[test]
fn anonymous_https_refuses_a_long_aws_chunked_body_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), StoreConfig::default()).unwrap());
    store.create_bucket("bkt").unwrap();
    let c = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let (cert, key) = (c.cert.pem(), c.signing_key.serialize_pem());
    let server = HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        store,
        AuthConfig::Anonymous,
        &[],
    )
    .unwrap()
    .with_tls(TlsConfig::from_pem(cert.as_bytes(), key.as_bytes()).unwrap())
    .spawn()
    .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(c.cert.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    );
    // In memory, streamed and larger than the socket buffers.
    for size in [100usize, 3 << 20, 24 << 20] {
        let body = aws_chunked(&vec![b'x'; size]);
        let tcp = TcpStream::connect(server.addr()).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let conn =
            rustls::ClientConnection::new(config.clone(), "localhost".try_into().unwrap()).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let head = format!(
            "PUT /bkt/k HTTP/1.1\r\nHost: localhost\r\n\
             x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER\r\n\
             Content-Encoding: aws-chunked\r\nx-amz-decoded-content-length: {}\r\n\
             Content-Length: {}\r\n\r\n",
            size - 10,
            body.len()
        );
        tls.write_all(head.as_bytes()).unwrap();
        // The server may answer and close before the whole body is sent.
        let _ = tls.write_all(&body);
        let mut answer = Vec::new();
        let read = tls.read_to_end(&mut answer);
        assert!(
            read.is_ok(),
            "size {size}: the connection ended without a TLS close_notify: {read:?}"
        );
        let (status, _, xml) = common::split_answer(&answer);
        assert_eq!(status, 400, "size {size}");
        let xml = String::from_utf8_lossy(&xml);
        assert!(
            xml.contains("<Code>IncompleteBody</Code>"),
            "size {size}: {xml}"
        );
    }
    server.shutdown().unwrap();
}
