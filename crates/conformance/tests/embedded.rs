//! The shared conformance suite against the embedded transport, under both
//! ETag policies, each check over a fresh data root.

use s3hpc_client::EmbeddedClient;
use s3hpc_conformance::{run_all, Fixture};
use s3hpc_store::{Durability, EtagPolicy, Layout, Store, StoreConfig};
use std::sync::Arc;

fn embedded(etag: EtagPolicy) -> Fixture {
    embedded_with(etag, Layout::Plain)
}

fn embedded_with(etag: EtagPolicy, layout: Layout) -> Fixture {
    // Under S3HPC_TEST_DIR if set, to run on another file system.
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
    Fixture::new(EmbeddedClient::new(Arc::new(store)), dir)
}

#[test]
fn embedded_md5() {
    run_all("md5", &|| embedded(EtagPolicy::Md5));
}

#[test]
fn embedded_fast() {
    run_all("fast", &|| embedded(EtagPolicy::Fast));
}

#[test]
fn embedded_packed_md5() {
    run_all("packed md5", &|| {
        embedded_with(EtagPolicy::Md5, Layout::Packed)
    });
}

#[test]
fn embedded_packed_fast() {
    run_all("packed fast", &|| {
        embedded_with(EtagPolicy::Fast, Layout::Packed)
    });
}
