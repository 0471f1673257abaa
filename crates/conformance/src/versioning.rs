//! Versioning: every write kept, the latest what a plain GET reads, delete
//! markers, and one version removed for good. Transports that cannot carry
//! versions yet (remote RPC, libs3) must refuse by name, never act on the
//! current object instead.

use crate::helpers::*;
use s3hpc_client::{Versioning, VersionsRequest};

/// (version id, latest, marker) of `key`'s versions, as listed.
fn history(c: &dyn S3Client, b: &str, key: &str) -> Vec<(String, bool, bool)> {
    let req = VersionsRequest {
        prefix: key.to_string(),
        ..Default::default()
    };
    let page = ok(c.list_object_versions(b, &req), "ListObjectVersions");
    page.versions
        .into_iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| (v.version_id, v.is_latest, v.delete_marker))
        .collect()
}

fn read_version(c: &dyn S3Client, b: &str, key: &str, id: &str) -> Vec<u8> {
    let mut got = ok(c.get_object_version(b, key, id, None), "GET versionId");
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut got.body, &mut out).expect("a version's body");
    out
}

/// An enabled bucket keeps each write; a DELETE leaves a marker that hides
/// the object, and removing the marker brings it back.
pub(crate) fn versions_kept(c: &dyn S3Client, b: &str) {
    let r = c.put_bucket_versioning(b, Versioning::Enabled);
    if c.transport() == "libs3" {
        expect_err(
            r,
            ErrorCode::NotImplemented,
            "versioning where it is not carried",
        );
        return;
    }
    if matches!(&r, Err(e) if e.code == ErrorCode::InvalidBucketState) {
        // A packed bucket, which keeps one version of each key.
        return;
    }
    ok(r, "PutBucketVersioning Enabled");
    assert_eq!(
        ok(c.get_bucket_versioning(b), "GetBucketVersioning"),
        Versioning::Enabled
    );
    put(c, b, "k", b"one");
    let first = ok(c.head_object(b, "k"), "HEAD")
        .version_id
        .expect("a version id");
    put(c, b, "k", b"two");
    let second = ok(c.head_object(b, "k"), "HEAD")
        .version_id
        .expect("a version id");
    assert_ne!(first, second);
    assert_eq!(
        history(c, b, "k"),
        vec![(second.clone(), true, false), (first.clone(), false, false)]
    );
    assert_eq!(read_version(c, b, "k", &first), b"one");
    ok(c.delete_object(b, "k"), "DELETE");
    expect_err(
        c.head_object(b, "k"),
        ErrorCode::NoSuchKey,
        "HEAD after DELETE",
    );
    let h = history(c, b, "k");
    assert_eq!(h.len(), 3, "{h:?}");
    assert!(h[0].1 && h[0].2, "the marker is the latest: {h:?}");
    ok(
        c.delete_object_version(b, "k", &h[0].0),
        "DELETE of the marker",
    );
    assert_eq!(get(c, b, "k", None).1, b"two");
    ok(
        c.delete_object_version(b, "k", &second),
        "DELETE of the latest version",
    );
    assert_eq!(get(c, b, "k", None).1, b"one");
    expect_err(
        c.head_object_version(b, "k", "00000000000000000000"),
        ErrorCode::NoSuchVersion,
        "HEAD of a version that never was",
    );
}
