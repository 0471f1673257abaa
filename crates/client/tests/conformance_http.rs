//! The shared conformance suite against the HTTP transport: `HttpClient`
//! talking SigV4 to s3hpc's own server, started in this process over a
//! fresh data root for every check.

use s3hpc_client::conformance::{run_all, Fixture};
use s3hpc_client::HttpClient;
use s3hpc_http::{AuthConfig, HttpServer};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig};
use std::sync::Arc;

fn http(etag: EtagPolicy) -> Fixture {
    let dir = match std::env::var_os("S3HPC_TEST_DIR").filter(|d| !d.is_empty()) {
        Some(d) => tempfile::tempdir_in(d),
        None => tempfile::tempdir(),
    }
    .unwrap();
    let config = StoreConfig {
        etag,
        durability: Durability::None,
    };
    let store = Store::open(dir.path().join("root"), config).unwrap();
    let auth = AuthConfig::single("conformance", "conformance-secret");
    let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), Arc::new(store), auth, &[])
        .unwrap()
        .spawn()
        .unwrap();
    let client =
        HttpClient::with_credentials(&server.endpoint(), "conformance", "conformance-secret")
            .unwrap();
    // The server stops before its data root is removed.
    Fixture::new(client, (server, dir))
}

#[test]
fn http_md5() {
    run_all("md5", &|| http(EtagPolicy::Md5));
}

#[test]
fn http_fast() {
    run_all("fast", &|| http(EtagPolicy::Fast));
}
