//! A gateway over a fresh data root, for the remote tests.

#![allow(dead_code)]

use s3hpc_client::EmbeddedClient;
use s3hpc_rpc::{Address, Gateway, GatewayOptions, RemoteClient};
use s3hpc_store::{Durability, EtagPolicy, Layout, Store, StoreConfig};
use std::path::PathBuf;
use std::sync::Arc;

pub enum Socket {
    Unix,
    Tcp,
}

pub struct TestGateway {
    pub gateway: Option<Gateway>,
    pub address: String,
    pub root: PathBuf,
    pub dir: tempfile::TempDir,
}

impl TestGateway {
    pub fn start(socket: Socket, etag: EtagPolicy) -> TestGateway {
        Self::start_with(socket, etag, 0)
    }

    /// With `workers` > 0, the gateway serves from that many epoll workers
    /// instead of a thread per connection.
    pub fn start_with(socket: Socket, etag: EtagPolicy, workers: usize) -> TestGateway {
        Self::start_layout(socket, etag, workers, Layout::Plain)
    }

    /// With new buckets of `layout`.
    pub fn start_layout(
        socket: Socket,
        etag: EtagPolicy,
        workers: usize,
        layout: Layout,
    ) -> TestGateway {
        let dir = match std::env::var_os("S3HPC_TEST_DIR").filter(|d| !d.is_empty()) {
            Some(d) => tempfile::tempdir_in(d),
            None => tempfile::tempdir(),
        }
        .unwrap();
        let root = dir.path().join("root");
        let addr = match socket {
            Socket::Unix => Address::Unix(dir.path().join("gw.sock")),
            Socket::Tcp => Address::Tcp("127.0.0.1:0".into()),
        };
        let gateway = start_gateway(&root, &addr, etag, workers, layout);
        let address = gateway.addresses()[0].to_string();
        TestGateway {
            gateway: Some(gateway),
            address,
            root,
            dir,
        }
    }

    pub fn client(&self) -> RemoteClient {
        RemoteClient::connect(&self.address).unwrap()
    }

    pub fn stop(&mut self) {
        if let Some(g) = self.gateway.take() {
            g.stop();
        }
    }

    /// Starts a new gateway on the same address and data root.
    pub fn restart(&mut self) {
        self.stop();
        let addr: Address = self.address.parse().unwrap();
        self.gateway = Some(start_gateway(
            &self.root,
            &addr,
            EtagPolicy::Md5,
            0,
            Layout::Plain,
        ));
    }
}

fn start_gateway(
    root: &std::path::Path,
    addr: &Address,
    etag: EtagPolicy,
    workers: usize,
    layout: Layout,
) -> Gateway {
    let config = StoreConfig {
        etag,
        durability: Durability::None,
    };
    let store = Store::open(root, config).unwrap();
    store.set_default_layout(layout);
    let opts = GatewayOptions {
        log_errors: false,
        workers,
        ..GatewayOptions::default()
    };
    Gateway::start(
        Arc::new(EmbeddedClient::new(Arc::new(store))),
        std::slice::from_ref(addr),
        opts,
    )
    .unwrap()
}
