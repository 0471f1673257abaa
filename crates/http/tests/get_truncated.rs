//! A large GET is served from a memory mapping of the object's file. If
//! another process truncates that file in place meanwhile, the server must
//! end that one response short and keep serving: a read of the vanished
//! pages in user space would raise SIGBUS and kill the whole process (this
//! test's process, since the server runs in it). Over HTTPS, where rustls
//! reads every byte of a body to encrypt it, no GET is sent from a mapping
//! at all; the same truncation must end the answer just as safely.

use s3hpc_http::{AuthConfig, HttpServer, TlsConfig};
use s3hpc_store::{PutBody, PutOptions, Store, StoreConfig};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::rustls;

const SIZE: usize = 64 << 20;

type Tls = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// A connection to the server: plain, or TLS trusting `ca` alone.
fn connect(addr: std::net::SocketAddr, ca: Option<&[u8]>) -> Box<dyn ReadWrite> {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let Some(ca) = ca else { return Box::new(s) };
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from_pem_slice(ca).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    Box::new(Tls::new(conn, s))
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// Sends a GET and reads the answer's header; the body follows on the stream.
fn start_get(
    addr: std::net::SocketAddr,
    ca: Option<&[u8]>,
    path: &str,
) -> (Box<dyn ReadWrite>, String) {
    let mut s = connect(addr, ca);
    write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    (s, String::from_utf8(head).unwrap())
}

/// Reads until the server closes, an error, or `limit` bytes.
fn drain(s: &mut dyn ReadWrite, limit: usize) -> usize {
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0;
    while total < limit {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
    total
}

#[test]
fn truncating_an_object_during_its_get_ends_only_that_answer() {
    truncated_during_get(false);
}

#[test]
fn truncating_an_object_during_an_https_get_ends_only_that_answer() {
    truncated_during_get(true);
}

fn truncated_during_get(tls: bool) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let store = Store::open(&root, StoreConfig::default()).unwrap();
    store.create_bucket("bkt").unwrap();
    let data = vec![7u8; SIZE];
    let opts = PutOptions::default();
    store
        .put_object("bkt", "big", PutBody::Bytes(&data), &opts)
        .unwrap();
    store
        .put_object("bkt", "other", PutBody::Bytes(&data[..SIZE / 2]), &opts)
        .unwrap();
    let mut server = HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(store),
        AuthConfig::Anonymous,
        &[],
    )
    .unwrap();
    let mut ca = None;
    if tls {
        let c = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
        let (cert, key) = (c.cert.pem(), c.signing_key.serialize_pem());
        server = server.with_tls(TlsConfig::from_pem(cert.as_bytes(), key.as_bytes()).unwrap());
        ca = Some(cert.into_bytes());
    }
    let server = server.spawn().unwrap();
    let ca = ca.as_deref();

    let (mut s, head) = start_get(server.addr(), ca, "/bkt/big");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let first = drain(&mut *s, 1 << 20);
    assert!(first >= 1 << 20, "the body has started");
    // Another process's in-place truncation, which s3hpc itself never does.
    std::fs::OpenOptions::new()
        .write(true)
        .open(root.join("bkt/big"))
        .unwrap()
        .set_len(0)
        .unwrap();
    let received = first + drain(&mut *s, SIZE);
    assert!(received < SIZE, "the answer ends short: {received} bytes");

    // The server lives on and serves other objects whole.
    let (mut s, head) = start_get(server.addr(), ca, "/bkt/other");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(drain(&mut *s, SIZE / 2), SIZE / 2);
    server.shutdown().unwrap();
}
