//! Bucket policies as a view of POSIX permissions, with real Linux users
//! (made for the test as root; skipped, saying so, otherwise) through
//! HTTP: the owner's ListBucket-for-everyone policy lets another user list
//! (the kernel decides, from the bits it wrote), DeleteBucketPolicy takes
//! that back, a refused document or a non-owner changes nothing, and a
//! policy that a chmod has taken is no longer answered.

mod common;

use common::users::World;
use s3hpc_test_users::mode;
use std::os::unix::fs::PermissionsExt;

const LIST_FOR_EVERYONE: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:ListBucket","Resource":["arn:aws:s3:::pol","arn:aws:s3:::pol/*"]}]}"#;

fn has_acl(p: &std::path::Path) -> bool {
    let mut buf = [0u8; 512];
    rustix::fs::getxattr(p, "system.posix_acl_access", &mut buf).is_ok()
}

#[test]
fn policies_are_the_bucket_directorys_permissions() {
    let Some(w) = World::make("p") else { return };
    let [a, b, c] = w.keys();
    let dir = w.root.join("pol");
    let (s, body) = a.send("PUT", "/pol/", &[("x-amz-acl", "private")], b"");
    assert_eq!(s, 200, "{body}");
    assert_eq!(a.send("PUT", "/pol/k", &[], b"data").0, 200);
    assert_eq!(mode(&dir) & 0o077, 0);
    assert_eq!(b.send("GET", "/pol/", &[], b"").0, 403);
    let (s, body) = a.send("GET", "/pol/?policy", &[], b"");
    assert_eq!(
        (s, body.contains("NoSuchBucketPolicy")),
        (404, true),
        "{body}"
    );

    // Only the owner may put, read or delete a policy.
    let doc = LIST_FOR_EVERYONE.as_bytes();
    let (s, body) = b.send("PUT", "/pol/?policy", &[], doc);
    assert_eq!((s, body.contains("AccessDenied")), (403, true), "{body}");
    // Refused documents, each for its reason, change nothing.
    let refused = [
        (LIST_FOR_EVERYONE.replace("Allow", "Deny"), 501),
        (
            LIST_FOR_EVERYONE.replace("s3:ListBucket", "s3:GetObject"),
            501,
        ),
        (
            LIST_FOR_EVERYONE.replace("s3:ListBucket", "s3:PutObject"),
            501,
        ),
        (LIST_FOR_EVERYONE.replace("\"s3:ListBucket\"", "\"*\""), 501),
        (LIST_FOR_EVERYONE.replace("2012-10-17", "2020-01-01"), 400),
        (
            LIST_FOR_EVERYONE.replace("{\"AWS\":\"*\"}", "{\"AWS\":\"nokey\"}"),
            400,
        ),
        ("{\"Version\":".to_string(), 400),
    ];
    for (d, status) in refused {
        let (s, body) = a.send("PUT", "/pol/?policy", &[], d.as_bytes());
        let code = if status == 501 {
            "NotImplemented"
        } else {
            "MalformedPolicy"
        };
        assert_eq!((s, body.contains(code)), (status, true), "{d}: {body}");
    }
    assert_eq!(mode(&dir) & 0o077, 0, "a refused policy changes nothing");
    assert_eq!(a.send("GET", "/pol/?policy", &[], b"").0, 404);

    // ListBucket for everyone: r-x for the group class and others.
    let (s, body) = a.send("PUT", "/pol/?policy", &[], doc);
    assert_eq!(s, 204, "{body}");
    assert_eq!(mode(&dir) & 0o077, 0o055);
    let (s, list) = b.send("GET", "/pol/", &[], b"");
    assert_eq!((s, list.contains("<Key>k</Key>")), (200, true), "{list}");
    assert_eq!(b.send("PUT", "/pol/b-obj", &[], b"x").0, 403, "no write");
    assert_eq!(
        a.send("GET", "/pol/?policy", &[], b""),
        (200, LIST_FOR_EVERYONE.to_string()),
        "the document verbatim"
    );
    assert_eq!(b.send("GET", "/pol/?policy", &[], b"").0, 403);
    assert_eq!(b.send("DELETE", "/pol/?policy", &[], b"").0, 403);
    let (_, status) = a.send("GET", "/pol/?policyStatus", &[], b"");
    assert!(status.contains("<IsPublic>true</IsPublic>"), "{status}");

    // A chmod outside S3 took what the policy granted: no policy is shown
    // that the permissions do not hold, and its Delete leaves them be.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o710)).unwrap();
    let (s, body) = a.send("GET", "/pol/?policy", &[], b"");
    assert_eq!((s, body.contains("no longer holds")), (404, true), "{body}");
    assert_eq!(a.send("DELETE", "/pol/?policy", &[], b"").0, 204);
    assert_eq!(mode(&dir), 0o710);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();

    // Put again, then Delete takes back exactly what it added.
    assert_eq!(a.send("PUT", "/pol/?policy", &[], doc).0, 204);
    assert_eq!(b.send("GET", "/pol/", &[], b"").0, 200);
    assert_eq!(a.send("DELETE", "/pol/?policy", &[], b"").0, 204);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(b.send("GET", "/pol/", &[], b"").0, 403);
    assert_eq!(a.send("GET", "/pol/?policy", &[], b"").0, 404);
    let (_, status) = a.send("GET", "/pol/?policyStatus", &[], b"");
    assert!(status.contains("<IsPublic>false</IsPublic>"), "{status}");

    // Writing for one user, by key: a POSIX ACL entry -wx for c alone.
    let write_for_c = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["kc"]},"Action":["s3:PutObject","s3:DeleteObject"],"Resource":"arn:aws:s3:::pol/*"}]}"#;
    let (s, body) = a.send("PUT", "/pol/?policy", &[], write_for_c.as_bytes());
    if s == 501 {
        eprintln!("the test directory's file system keeps no POSIX ACLs: {body}");
        assert_eq!(mode(&dir), 0o700);
    } else {
        assert_eq!(s, 204, "{body}");
        assert!(has_acl(&dir));
        let (s, body) = c.send("PUT", "/pol/c-obj", &[], b"x");
        assert_eq!(s, 200, "{body}");
        assert_eq!(b.send("PUT", "/pol/b-obj", &[], b"x").0, 403);
        assert_eq!(c.send("GET", "/pol/", &[], b"").0, 403, "write is not list");
        assert_eq!(c.send("DELETE", "/pol/c-obj", &[], b"").0, 204);
        assert_eq!(a.send("DELETE", "/pol/?policy", &[], b"").0, 204);
        assert!(!has_acl(&dir), "the entry the policy made is gone");
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(c.send("PUT", "/pol/c-obj", &[], b"x").0, 403);
    }
    w.server.shutdown().unwrap();
}
