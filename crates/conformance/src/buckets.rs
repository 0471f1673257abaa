//! Checks of bucket creation, naming and deletion.

use crate::helpers::*;

/// Create, head, list, delete of a bucket and their error codes.
/// Re-creating one's own bucket succeeds (AWS us-east-1, Ceph RGW) and keeps
/// its objects.
pub(crate) fn bucket_lifecycle(c: &dyn S3Client, b: &str) {
    ok(c.head_bucket(b), "HEAD bucket");
    put(c, b, "kept", b"kept");
    ok(c.create_bucket(b), "re-create one's own bucket");
    assert_eq!(
        get(c, b, "kept", None).1,
        b"kept",
        "re-create kept the objects"
    );
    let other = format!("{b}-other");
    ok(c.create_bucket(&other), "create second bucket");
    let names = bucket_names(c);
    assert!(
        names.contains(&b.to_string()) && names.contains(&other),
        "list buckets: {names:?}"
    );
    assert!(
        names.windows(2).all(|w| w[0] < w[1]),
        "list buckets is not sorted: {names:?}"
    );
    for info in ok(c.list_buckets(), "list buckets") {
        assert_recent(info.created, "bucket creation time");
    }

    put(c, &other, "k", b"x");
    expect_err(
        c.delete_bucket(&other),
        ErrorCode::BucketNotEmpty,
        "delete non-empty bucket",
    );
    ok(
        c.head_object(&other, "k"),
        "HEAD after refused bucket delete",
    );
    ok(c.delete_object(&other, "k"), "DELETE k");
    ok(c.delete_bucket(&other), "delete emptied bucket");
    expect_err(
        c.head_bucket(&other),
        ErrorCode::NoSuchBucket,
        "HEAD deleted bucket",
    );
    expect_err(
        c.delete_bucket(&other),
        ErrorCode::NoSuchBucket,
        "delete deleted bucket",
    );
    let names = bucket_names(c);
    assert!(
        !names.contains(&other),
        "deleted bucket still listed: {names:?}"
    );
    ok(c.create_bucket(&other), "re-create deleted bucket");
    let (keys, _) = list(c, &other, &ListRequest::default());
    assert!(keys.is_empty(), "re-created bucket holds {keys:?}");
}

/// S3's bucket-name rules, with nothing created for a rejected name.
pub(crate) fn bucket_name_rules(c: &dyn S3Client, _b: &str) {
    let before = ok(c.list_buckets(), "list buckets");
    let long = "a".repeat(64);
    for bad in [
        "ab",
        "Upper",
        "a_b",
        "-ab",
        "ab-",
        "a..b",
        "foo.-bar",
        "foo-.bar",
        "192.168.1.1",
        "xn--ab",
        "a/b",
        "..",
        &long,
    ] {
        expect_err(
            c.create_bucket(bad),
            ErrorCode::InvalidBucketName,
            &format!("create bucket {bad:?}"),
        );
        expect_err(
            c.head_bucket(bad),
            ErrorCode::InvalidBucketName,
            &format!("HEAD bucket {bad:?}"),
        );
        expect_err(
            c.put_object(bad, "k", PutBody::Bytes(b"x"), &PutOptions::default()),
            ErrorCode::InvalidBucketName,
            &format!("PUT into bucket {bad:?}"),
        );
    }
    assert_eq!(
        ok(c.list_buckets(), "list buckets"),
        before,
        "rejected names created buckets"
    );
    let max = "a".repeat(63);
    for good in ["abc", "a.b-c9", &max] {
        ok(c.create_bucket(good), &format!("create bucket {good:?}"));
        ok(c.delete_bucket(good), &format!("delete bucket {good:?}"));
    }
}

/// Object requests against a bucket that does not exist.
pub(crate) fn missing_bucket(c: &dyn S3Client, b: &str) {
    let nb = format!("{b}-missing");
    let code = ErrorCode::NoSuchBucket;
    expect_err(
        c.put_object(&nb, "k", PutBody::Bytes(b"x"), &PutOptions::default()),
        code,
        "PUT",
    );
    expect_err(c.get_object(&nb, "k", None), code, "GET");
    expect_err(c.head_object(&nb, "k"), code, "HEAD");
    expect_err(c.list_objects(&nb, &ListRequest::default()), code, "LIST");
    expect_err(
        c.create_multipart_upload(&nb, "k", &PutOptions::default()),
        code,
        "create upload",
    );
    expect_err(c.list_multipart_uploads(&nb, ""), code, "list uploads");
    put(c, b, "k", b"x");
    expect_err(
        c.copy_object(b, "k", &nb, "k", None),
        code,
        "copy into missing bucket",
    );
    expect_err(
        c.copy_object(&nb, "k", b, "k2", None),
        code,
        "copy from missing bucket",
    );
    expect_err(c.head_bucket(&nb), code, "HEAD bucket");
}
