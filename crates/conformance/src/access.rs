//! Permissions given with a write (`PutOptions::access`: S3's `x-amz-acl`
//! and `x-amz-grant-*`, libs3's `cannedAcl`) are part of the write: the
//! object is published with them or not at all, and one the file system
//! refuses leaves any object the write would have replaced as it was.
//! What the permissions then let other users do needs users (see
//! `http/tests/acl_users.rs`); through the trait, a check sees that the
//! write is taken or refused whole.

use crate::helpers::*;
use s3hpc_client::{AclEntry, AclTag, ErrorCode, PermissionChange, PutBody, PutOptions, S3Client};

/// A grant the kernel refuses (EINVAL): uid 2^32-1 is no user.
fn refused_grant() -> PutOptions {
    PutOptions {
        access: Some(PermissionChange {
            named: vec![AclEntry {
                tag: AclTag::User,
                id: u32::MAX,
                perm: 4,
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// public-read, with metadata: the engine's mark for stored metadata is
/// a mode bit, which setting the permissions must keep.
fn public_read() -> PutOptions {
    PutOptions {
        access: PermissionChange::canned("public-read", false),
        ..opts("text/x-acl", &[("m", "v")])
    }
}

fn assert_refused<T: std::fmt::Debug>(r: s3hpc_client::Result<T>, what: &str) {
    let e = r.expect_err(what);
    assert!(
        matches!(
            e.code,
            ErrorCode::InvalidArgument | ErrorCode::NotImplemented
        ),
        "{what}: {e}"
    );
}

/// A refused ACL on PUT, CopyObject (metadata replaced) and
/// CreateMultipartUpload: refused, and nothing changes. The old code
/// published the object first and deleted it when the ACL failed: the
/// object it had replaced was lost.
pub fn acl_refused_changes_nothing(c: &dyn S3Client, b: &str) {
    put(c, b, "k", b"old");
    put(c, b, "src", b"src");
    let bad = refused_grant();
    assert_refused(c.put_object(b, "k", PutBody::Bytes(b"new"), &bad), "PUT");
    assert_content(c, b, "k", b"old");
    assert_refused(c.put_object(b, "n", PutBody::Bytes(b""), &bad), "empty PUT");
    assert_eq!(
        c.head_object(b, "n").unwrap_err().code,
        ErrorCode::NoSuchKey
    );
    assert_refused(c.copy_object(b, "src", b, "k", Some(&bad)), "CopyObject");
    assert_content(c, b, "k", b"old");
    assert_refused(
        c.create_multipart_upload(b, "m", &bad),
        "CreateMultipartUpload",
    );
    assert!(
        c.list_multipart_uploads(b, "").unwrap().is_empty(),
        "a refused upload is not started"
    );
}

/// A canned ACL on PUT, CopyObject and multipart (kept with the upload
/// until completion) is taken, and the object is whole.
pub fn acl_given_with_writes(c: &dyn S3Client, b: &str) {
    let public = public_read();
    ok(
        c.put_object(b, "k", PutBody::Bytes(b"data"), &public),
        "PUT",
    );
    assert_content(c, b, "k", b"data");
    ok(
        c.put_object(b, "e", PutBody::Bytes(b""), &public),
        "empty PUT",
    );
    assert_content(c, b, "e", b"");
    ok(c.copy_object(b, "k", b, "c", Some(&public)), "CopyObject");
    assert_content(c, b, "c", b"data");
    let id = ok(c.create_multipart_upload(b, "m", &public), "create");
    let part = PutBody::Bytes(b"part");
    let etag = ok(c.upload_part(b, "m", &id, 1, part), "part");
    ok(
        c.complete_multipart_upload(b, "m", &id, &[(1, etag)]),
        "complete",
    );
    assert_stored(c, b, "m", b"part", &public);
}
