//! What the HTTP tests share: a server over a fresh data root, and one raw
//! HTTP/1.1 request at a time (so a test sees exactly the bytes sent).

#![allow(dead_code)] // each test file uses a part

pub mod users;

use s3hpc_http::{AuthConfig, HttpServer, ServerHandle};
use s3hpc_store::{Store, StoreConfig};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// A server with bucket `bkt`, its store, and the directory they live in.
pub struct Served {
    pub server: ServerHandle,
    pub store: Arc<Store>,
    _dir: tempfile::TempDir,
}

pub fn serve(auth: AuthConfig) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), StoreConfig::default()).unwrap());
    store.create_bucket("bkt").unwrap();
    let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), store.clone(), auth, &[])
        .unwrap()
        .spawn()
        .unwrap();
    Served {
        server,
        store,
        _dir: dir,
    }
}

/// Sends one request with a Content-Length; returns the status, the header
/// block and the body.
pub fn request(addr: SocketAddr, head: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let framing = format!("Content-Length: {}\r\n", body.len());
    raw(addr, head, &framing, body)
}

/// Sends `head`, then `framing` (the body's length headers, as given),
/// then `body` as is; reads the answer to the end.
pub fn raw(addr: SocketAddr, head: &str, framing: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "{head}Host: localhost\r\n{framing}Connection: close\r\n\r\n"
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    split_answer(&all)
}

/// Status, header block and body of a whole HTTP answer.
pub fn split_answer(all: &[u8]) -> (u16, String, Vec<u8>) {
    let split = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header block in {:?}", String::from_utf8_lossy(all)));
    let headers = String::from_utf8_lossy(&all[..split]).into_owned();
    let status = headers[9..12].parse().unwrap();
    (status, headers, all[split + 4..].to_vec())
}

/// The value of header `name` in a header block.
pub fn header<'a>(headers: &'a str, name: &str) -> Option<&'a str> {
    headers.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}
