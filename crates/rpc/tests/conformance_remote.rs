//! The shared conformance suite over the remote transport: Unix socket and
//! TCP loopback, each check against a fresh gateway and data root.

mod common;

use common::{Socket, TestGateway};
use s3hpc_conformance::{run_all, Fixture};
use s3hpc_store::{EtagPolicy, Layout};

fn remote(socket: Socket, etag: EtagPolicy) -> Fixture {
    let gw = TestGateway::start(socket, etag);
    Fixture::new(gw.client(), gw)
}

#[test]
fn remote_unix_md5() {
    run_all("unix-md5", &|| remote(Socket::Unix, EtagPolicy::Md5));
}

#[test]
fn remote_unix_fast() {
    run_all("unix-fast", &|| remote(Socket::Unix, EtagPolicy::Fast));
}

#[test]
fn remote_tcp_md5() {
    run_all("tcp-md5", &|| remote(Socket::Tcp, EtagPolicy::Md5));
}

#[test]
fn remote_unix_epoll_workers() {
    run_all("unix-workers", &|| {
        let gw = TestGateway::start_with(Socket::Unix, EtagPolicy::Md5, 2);
        Fixture::new(gw.client(), gw)
    });
}

#[test]
fn remote_unix_packed() {
    run_all("unix-packed", &|| {
        let gw = TestGateway::start_layout(Socket::Unix, EtagPolicy::Md5, 0, Layout::Packed);
        Fixture::new(gw.client(), gw)
    });
}
