//! S3 ACLs as a view of POSIX permissions, with real
//! Linux users (made for the test as root; skipped, saying so, otherwise)
//! through HTTP: canned ACLs change exactly the mode bits, grants to a user
//! become POSIX ACL entries, other users are let in or refused exactly as
//! the bits say (the kernel decides), owners are the files' owners mapped
//! back to keys, and GetObjectAcl shows a chmod or an ACL made outside S3.

mod common;

use common::users::{Key, World};
use s3hpc_http::HttpServer;
use s3hpc_test_users::mode;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

/// A POSIX ACL attribute as the kernel's format has it, written by hand
/// (not with the server's code): `u::rw-, u:UID:r--, g::---, m::r--, o::---`.
fn acl_granting_read(uid: u32) -> Vec<u8> {
    let mut v = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in [
        (1u16, 6u16, u32::MAX),
        (2, 4, uid),
        (4, 0, u32::MAX),
        (0x10, 4, u32::MAX),
        (0x20, 0, u32::MAX),
    ] {
        v.extend(tag.to_le_bytes());
        v.extend(perm.to_le_bytes());
        v.extend(id.to_le_bytes());
    }
    v
}

#[test]
fn acls_are_the_file_systems_permissions() {
    let Some(w) = World::make("v") else { return };
    let uid = |i: usize| w.uid(i);
    let (users, ids, root, store, auth) = (&w.users, &w.ids, &w.root, &w.store, &w.auth);
    let [a, b, c] = w.keys();

    // A bucket made public-read: r-x for the group class and others.
    let (s, body) = a.send("PUT", "/pub/", &[("x-amz-acl", "public-read")], b"");
    assert_eq!(s, 200, "{body}");
    let bdir = root.join("pub");
    assert_eq!(std::fs::metadata(&bdir).unwrap().uid(), uid(0));
    assert_eq!(mode(&bdir) & 0o077, 0o055);
    let (s, body) = a.send("GET", "/pub/?acl", &[], b"");
    assert_eq!(s, 200, "{body}");

    assert!(body.contains("<ID>ka</ID>"), "owner is a's key: {body}");
    assert!(body.contains(&format!("<DisplayName>{}</DisplayName>", users.names[0])));
    assert!(body.contains("AuthenticatedUsers"), "{body}");
    assert!(body.contains("<Permission>READ</Permission>"), "{body}");

    // ListBuckets: b may enter a's public bucket, so it is listed to b;
    // with `--list-buckets owned` only one's own buckets are (S3's way).
    let (s, body) = b.send("PUT", "/bown/", &[], b"");
    assert_eq!(s, 200, "{body}");
    let (s, body) = b.send("GET", "/", &[], b"");
    assert_eq!(s, 200, "{body}");
    assert!(
        body.contains("<Name>pub</Name>") && body.contains("<Name>bown</Name>"),
        "{body}"
    );
    let owned = HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        store.clone(),
        auth.clone().with_owned_bucket_listing(),
        &[],
    )
    .unwrap()
    .spawn()
    .unwrap();
    let b_owned = Key {
        addr: owned.addr(),
        access: "kb",
    };
    let (s, body) = b_owned.send("GET", "/", &[], b"");
    assert_eq!(s, 200, "{body}");
    assert!(
        !body.contains("<Name>pub</Name>") && body.contains("<Name>bown</Name>"),
        "{body}"
    );
    owned.shutdown().unwrap();
    let (s, body) = b.send("DELETE", "/bown/", &[], b"");
    assert_eq!(s, 204, "{body}");

    // Names are shared: b cannot have it; a re-creating its own bucket
    // succeeds (AWS us-east-1, Ceph RGW) when it has what the request asks
    // for (no ACL: a new bucket's mode), else BucketAlreadyExists.
    let (s, body) = b.send("PUT", "/pub/", &[], b"");
    assert_eq!(
        (s, body.contains("BucketAlreadyExists")),
        (409, true),
        "{body}"
    );
    let (s, body) = a.send("PUT", "/own/", &[], b"");
    assert_eq!(s, 200, "{body}");
    let (s, body) = a.send("PUT", "/own/", &[], b"");
    assert_eq!(s, 200, "re-creating one's own bucket: {body}");
    let (s, body) = a.send("PUT", "/pub/", &[("x-amz-acl", "private")], b"");
    assert_eq!(
        (s, body.contains("BucketAlreadyExists")),
        (409, true),
        "{body}"
    );

    // A private object: b and c are refused by the kernel.
    let (s, body) = a.send("PUT", "/pub/k", &[("x-amz-acl", "private")], b"data");
    assert_eq!(s, 200, "{body}");
    let file = bdir.join("k");
    assert_eq!(mode(&file) & 0o077, 0);
    assert_eq!(b.send("GET", "/pub/k", &[], b"").0, 403);
    // public-read: o+r, and b reads it.
    let (s, body) = a.send("PUT", "/pub/k?acl", &[("x-amz-acl", "public-read")], b"");
    assert_eq!(s, 200, "{body}");
    assert_eq!(mode(&file) & 0o077, 0o044);
    assert_eq!(b.send("GET", "/pub/k", &[], b""), (200, "data".into()));
    // Only the owner may change permissions (the kernel's EPERM).
    let (s, body) = b.send("PUT", "/pub/k?acl", &[("x-amz-acl", "private")], b"");
    assert_eq!((s, body.contains("AccessDenied")), (403, true), "{body}");

    // A grant to b by key: a POSIX ACL entry; c stays out.
    let grant = [("x-amz-grant-read", "id=\"kb\"")];
    let (s, body) = a.send("PUT", "/pub/k?acl", &grant, b"");
    if s == 501 {
        eprintln!("the test directory's file system keeps no POSIX ACLs: {body}");
    } else {
        assert_eq!(s, 200, "{body}");
        assert_eq!(mode(&file) & 0o007, 0, "others lost their read");
        assert_eq!(b.send("GET", "/pub/k", &[], b"").0, 200);
        assert_eq!(c.send("GET", "/pub/k", &[], b"").0, 403);
        let (_, acl) = a.send("GET", "/pub/k?acl", &[], b"");
        assert!(acl.contains("<ID>kb</ID>"), "{acl}");
        assert!(!acl.contains("<ID>kc</ID>"), "{acl}");
        // An ACL written outside S3 (by hand, in the kernel's format) for c.
        rustix::fs::setxattr(
            &file,
            "system.posix_acl_access",
            &acl_granting_read(uid(2)),
            rustix::fs::XattrFlags::empty(),
        )
        .unwrap();
        assert_eq!(c.send("GET", "/pub/k", &[], b"").0, 200);
        assert_eq!(b.send("GET", "/pub/k", &[], b"").0, 403);
        let (_, acl) = a.send("GET", "/pub/k?acl", &[], b"");
        assert!(
            acl.contains("<ID>kc</ID>") && !acl.contains("<ID>kb</ID>"),
            "{acl}"
        );
    }

    // A chmod outside S3: the shared group's read is b's grant (b is in
    // it, c is not), and S3 says exactly that.
    let (s, _) = a.send("PUT", "/pub/k?acl", &[("x-amz-acl", "private")], b"");
    assert_eq!(s, 200);
    let gid = rustix::fs::stat(&file).unwrap().st_gid;
    let shared = ids[0]
        .user()
        .unwrap()
        .groups
        .iter()
        .copied()
        .find(|g| !ids[2].user().unwrap().groups.contains(g) && *g != gid)
        .unwrap();
    std::os::unix::fs::chown(&file, None, Some(shared)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let (_, acl) = a.send("GET", "/pub/k?acl", &[], b"");
    assert!(
        acl.contains("<ID>kb</ID>") && !acl.contains("<ID>kc</ID>"),
        "{acl}"
    );
    assert!(!acl.contains("AuthenticatedUsers"), "{acl}");
    assert_eq!(b.send("GET", "/pub/k", &[], b"").0, 200);
    assert_eq!(c.send("GET", "/pub/k", &[], b"").0, 403);

    // Grants POSIX cannot express are refused, saying why, and change nothing.
    for (h, v) in [
        ("x-amz-grant-full-control", "id=\"kb\""),
        ("x-amz-grant-read-acp", "id=\"kb\""),
    ] {
        let (s, body) = a.send("PUT", "/pub/k?acl", &[(h, v)], b"");
        assert_eq!(
            (s, body.contains("NotImplemented")),
            (501, true),
            "{h}: {body}"
        );
    }
    let (s, body) = a.send(
        "PUT",
        "/pub/k?acl",
        &[("x-amz-grant-read", "id=\"nobody-key\"")],
        b"",
    );
    assert_eq!((s, body.contains("InvalidArgument")), (400, true), "{body}");
    let mail = [("x-amz-grant-read", "emailAddress=\"b@example.com\"")];
    let (s, body) = a.send("PUT", "/pub/k?acl", &mail, b"");
    assert_eq!(
        (s, body.contains("UnresolvableGrantByEmailAddress")),
        (400, true),
        "{body}"
    );
    assert_eq!(mode(&file), 0o640);

    // public-read-write on a bucket: anyone may write in it.
    assert_eq!(c.send("PUT", "/pub/c-obj", &[], b"x").0, 403);
    // A refused writer that waits for 100 Continue is told before it sends
    // its body; an allowed one is asked for it (in a directory of the key's
    // path too).
    assert_eq!(c.put_expecting_continue("/pub/c-obj"), 403);
    assert_eq!(c.put_expecting_continue("/pub/new/dirs/c-obj"), 403);
    assert_eq!(a.put_expecting_continue("/pub/new/dirs/a-obj"), 100);
    // An object in the way of a deeper key (`k` under `k/x`) is not a
    // refusal before the body: the write decides.
    assert_eq!(a.put_expecting_continue("/pub/k/x"), 100);
    let (s, _) = a.send(
        "PUT",
        "/pub/?acl",
        &[("x-amz-acl", "public-read-write")],
        b"",
    );
    assert_eq!(s, 200);
    assert_eq!(mode(&bdir) & 0o007, 0o007);
    assert_eq!(c.send("PUT", "/pub/c-obj", &[], b"x").0, 200);
    assert_eq!(std::fs::metadata(bdir.join("c-obj")).unwrap().uid(), uid(2));
    // Writing in a bucket is not owning it: its CORS rules are a's alone.
    let cors = b"<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod>\
                 <AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>";
    let (s, body) = c.send("PUT", "/pub/?cors", &[], cors);
    assert_eq!((s, body.contains("AccessDenied")), (403, true), "{body}");
    assert_eq!(a.send("PUT", "/pub/?cors", &[], cors).0, 200);
    assert_eq!(c.send("DELETE", "/pub/?cors", &[], b"").0, 403);
    assert_eq!(a.send("DELETE", "/pub/?cors", &[], b"").0, 204);
    // bucket-owner-full-control: c's object gets an ACL entry for a, the
    // bucket's owner, and no one else reads it.
    let canned = [("x-amz-acl", "bucket-owner-full-control")];
    let (s, body) = c.send("PUT", "/pub/c-own", &canned, b"y");
    if s == 501 {
        eprintln!("no POSIX ACLs here: {body}");
        assert!(!bdir.join("c-own").exists(), "a refused PUT leaves nothing");
        c.send("PUT", "/pub/c-own", &[], b"y");
    } else {
        assert_eq!(s, 200, "{body}");
        assert_eq!(mode(&bdir.join("c-own")) & 0o007, 0);
        assert_eq!(a.send("GET", "/pub/c-own", &[], b""), (200, "y".into()));
        assert_eq!(b.send("GET", "/pub/c-own", &[], b"").0, 403);
    }

    // Owners in listings are the files' owners, as keys.
    let (s, list) = a.send("GET", "/pub/?list-type=2&fetch-owner=true", &[], b"");
    assert_eq!(s, 200, "{list}");
    let owners: Vec<&str> = list
        .split("<Contents>")
        .skip(1)
        .filter_map(|o| o.split("<ID>").nth(1)?.split("</ID>").next())
        .collect();
    assert_eq!(
        owners,
        vec!["kc", "kc", "ka"],
        "c-* are c's, k is a's: {list}"
    );
    let (_, list) = a.send("GET", "/pub/?list-type=2", &[], b"");
    assert!(
        !list.contains("<Owner>"),
        "no owner unless fetch-owner: {list}"
    );
    let (_, buckets) = b.send("GET", "/", &[], b"");
    assert!(buckets.contains("<ID>kb</ID>"), "{buckets}");
    w.server.shutdown().unwrap();
}

/// An ACL given with a write (PutObject, CopyObject, CreateMultipartUpload)
/// is part of the write: the object appears with it or not at all, and an
/// ACL the file system refuses leaves the object it would have replaced as
/// it was (it was published, then deleted: the old data was lost).
#[test]
fn acls_given_with_a_write_are_part_of_it() {
    let Some(w) = World::make("w") else { return };
    let [a, b, _] = w.keys();
    let bdir = w.root.join("wrt");
    let (s, body) = a.send("PUT", "/wrt/", &[("x-amz-acl", "public-read")], b"");
    assert_eq!(s, 200, "{body}");
    for (k, v) in [("k", "old"), ("src", "src")] {
        let (s, body) = a.send("PUT", &format!("/wrt/{k}"), &[], v.as_bytes());
        assert_eq!(s, 200, "{body}");
    }
    // uid 2^32-1 is no user: the kernel refuses the ACL entry (EINVAL).
    let bad = ("x-amz-grant-read", "id=\"uid:4294967295\"");
    let refused = |(s, body): (u16, String), what: &str| {
        assert!(
            (s == 400 && body.contains("InvalidArgument"))
                || (s == 501 && body.contains("NotImplemented")),
            "{what}: {s} {body}"
        );
    };
    refused(a.send("PUT", "/wrt/k", &[bad], b"new"), "PUT");
    assert_eq!(
        a.send("GET", "/wrt/k", &[], b""),
        (200, "old".into()),
        "a refused ACL on PUT must leave the object it would replace"
    );
    refused(
        a.send("PUT", "/wrt/new", &[bad], b"new"),
        "PUT of a new key",
    );
    assert!(!bdir.join("new").exists(), "a refused PUT leaves nothing");
    let copy = ("x-amz-copy-source", "/wrt/src");
    refused(a.send("PUT", "/wrt/k", &[copy, bad], b""), "CopyObject");
    assert_eq!(a.send("GET", "/wrt/k", &[], b""), (200, "old".into()));
    refused(
        a.send("POST", "/wrt/m?uploads", &[bad], b""),
        "CreateMultipartUpload",
    );
    let (_, uploads) = a.send("GET", "/wrt/?uploads", &[], b"");
    assert!(
        !uploads.contains("<Upload>"),
        "a refused upload is not started: {uploads}"
    );

    // Given ACLs are what the object has (b reads it through o+r only).
    let public = ("x-amz-acl", "public-read");
    let (s, body) = a.send("PUT", "/wrt/p", &[public], b"p");
    assert_eq!(s, 200, "{body}");
    assert_eq!(mode(&bdir.join("p")) & 0o077, 0o044);
    let (s, body) = a.send(
        "PUT",
        "/wrt/cp",
        &[("x-amz-copy-source", "/wrt/k"), public],
        b"",
    );
    assert_eq!(s, 200, "{body}");
    assert_eq!(mode(&bdir.join("cp")) & 0o077, 0o044);
    assert_eq!(b.send("GET", "/wrt/cp", &[], b""), (200, "old".into()));
    // Multipart: kept with the upload, applied at completion.
    let (s, body) = a.send("POST", "/wrt/m?uploads", &[public], b"");
    assert_eq!(s, 200, "{body}");
    let id = body
        .split("<UploadId>")
        .nth(1)
        .and_then(|r| r.split("</UploadId>").next())
        .unwrap()
        .to_string();
    let (s, head, body) = a.send_full(
        "PUT",
        &format!("/wrt/m?partNumber=1&uploadId={id}"),
        &[],
        b"part",
    );
    assert_eq!(s, 200, "{body}");
    let etag = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("etag:")
                .then(|| l[5..].trim().to_string())
        })
        .unwrap();
    let done = format!(
        "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{etag}</ETag></Part></CompleteMultipartUpload>"
    );
    let (s, body) = a.send(
        "POST",
        &format!("/wrt/m?uploadId={id}"),
        &[],
        done.as_bytes(),
    );
    assert_eq!(s, 200, "{body}");
    assert_eq!(mode(&bdir.join("m")) & 0o077, 0o044);
    assert_eq!(b.send("GET", "/wrt/m", &[], b""), (200, "part".into()));

    // x-amz-expected-bucket-owner: AccessDenied unless the bucket is that
    // account's (its key, or uid:N).
    let (s, body) = a.send(
        "GET",
        "/wrt/k",
        &[("x-amz-expected-bucket-owner", "kb")],
        b"",
    );
    assert_eq!((s, body.contains("AccessDenied")), (403, true), "{body}");
    let (s, body) = a.send(
        "PUT",
        "/wrt/k",
        &[("x-amz-expected-bucket-owner", "kb")],
        b"x",
    );
    assert_eq!(s, 403, "{body}");
    let (s, body) = b.send(
        "GET",
        "/wrt/?list-type=2",
        &[("x-amz-expected-bucket-owner", "kb")],
        b"",
    );
    assert_eq!(s, 403, "{body}");
    let (s, body) = a.send(
        "GET",
        "/wrt/k",
        &[("x-amz-expected-bucket-owner", "ka")],
        b"",
    );
    assert_eq!((s, body.as_str()), (200, "old"));
    let own = format!("uid:{}", w.uid(0));
    let (s, body) = b.send(
        "GET",
        "/wrt/?list-type=2",
        &[("x-amz-expected-bucket-owner", &own)],
        b"",
    );
    assert_eq!(s, 200, "{body}");
}
