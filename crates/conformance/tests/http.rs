//! The shared conformance suite against the HTTP transport: `HttpClient`
//! talking SigV4 to s3hpc's own server, started in this process over a
//! fresh data root for every check; over HTTPS too, with a self-signed
//! certificate that the client trusts alone.

use s3hpc_client::{HttpClient, HttpClientConfig};
use s3hpc_conformance::{run_all, Fixture};
use s3hpc_http::{AuthConfig, HttpServer, TlsConfig};
use s3hpc_store::{Durability, EtagPolicy, Layout, Store, StoreConfig};
use std::sync::Arc;

fn http(etag: EtagPolicy) -> Fixture {
    served(etag, false)
}

fn served(etag: EtagPolicy, tls: bool) -> Fixture {
    served_layout(etag, tls, Layout::Plain)
}

fn served_layout(etag: EtagPolicy, tls: bool, layout: Layout) -> Fixture {
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
    store.set_default_layout(layout);
    let auth = AuthConfig::single("conformance", "conformance-secret");
    let mut server =
        HttpServer::bind("127.0.0.1:0".parse().unwrap(), Arc::new(store), auth, &[]).unwrap();
    let mut ca_pem = None;
    if tls {
        let c = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
        let (cert, key) = (c.cert.pem(), c.signing_key.serialize_pem());
        server = server.with_tls(TlsConfig::from_pem(cert.as_bytes(), key.as_bytes()).unwrap());
        ca_pem = Some(cert);
    }
    let server = server.spawn().unwrap();
    assert_eq!(server.endpoint().starts_with("https://"), tls);
    let client = HttpClient::new(HttpClientConfig {
        endpoint: server.endpoint(),
        credentials: Some(("conformance".into(), "conformance-secret".into())),
        ca_pem,
        ..Default::default()
    })
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

#[test]
fn http_packed() {
    run_all("packed", &|| {
        served_layout(EtagPolicy::Md5, false, Layout::Packed)
    });
}

#[test]
fn https_md5() {
    run_all("https-md5", &|| served(EtagPolicy::Md5, true));
}
