//! Keys that try to escape the bucket or confuse the file system.

use crate::helpers::*;

/// Keys that cannot map into the bucket are rejected by every request, and
/// nothing is created anywhere.
pub(crate) fn hostile_keys(c: &dyn S3Client, b: &str) {
    let too_long = "k".repeat(1025);
    let long_segment = format!("d/{}", "s".repeat(256));
    let cases: &[(&str, ErrorCode)] = &[
        ("../x", ErrorCode::InvalidKey),
        ("a/../../x", ErrorCode::InvalidKey),
        ("./x", ErrorCode::InvalidKey),
        ("..", ErrorCode::InvalidKey),
        ("a//b", ErrorCode::InvalidKey),
        ("/abs", ErrorCode::InvalidKey),
        ("a\0b", ErrorCode::InvalidKey),
        ("", ErrorCode::InvalidKey),
        (".s3hpc-tmp.x", ErrorCode::InvalidKey),
        (".s3hpc-uploads/x", ErrorCode::InvalidKey),
        (&too_long, ErrorCode::KeyTooLong),
        (&long_segment, ErrorCode::KeyTooLong),
    ];
    put(c, b, "good", b"x");
    let buckets = bucket_names(c);
    let none = PutOptions::default();
    for &(key, code) in cases {
        let shown = format!("{:?}", &key[..key.len().min(20)]);
        expect_err(
            c.put_object(b, key, PutBody::Bytes(b"evil"), &none),
            code,
            &format!("PUT {shown}"),
        );
        let mut r: &[u8] = b"evil";
        let stream = PutBody::Stream {
            reader: &mut r,
            len: None,
        };
        expect_err(
            c.put_object(b, key, stream, &none),
            code,
            &format!("PUT stream {shown}"),
        );
        expect_err(c.get_object(b, key, None), code, &format!("GET {shown}"));
        expect_err(c.head_object(b, key), code, &format!("HEAD {shown}"));
        expect_err(c.delete_object(b, key), code, &format!("DELETE {shown}"));
        expect_err(
            c.copy_object(b, "good", b, key, None),
            code,
            &format!("copy to {shown}"),
        );
        expect_err(
            c.copy_object(b, key, b, "copy", None),
            code,
            &format!("copy from {shown}"),
        );
        expect_err(
            c.create_multipart_upload(b, key, &none),
            code,
            &format!("create upload {shown}"),
        );
    }
    let (keys, prefixes) = list(c, b, &req("", Some("/")));
    assert_eq!(
        (keys, prefixes),
        (strings(&["good"]), vec![]),
        "LIST after hostile keys"
    );
    assert_eq!(bucket_names(c), buckets, "buckets after hostile keys");
    assert!(
        ok(c.list_multipart_uploads(b, ""), "list uploads").is_empty(),
        "uploads after hostile keys"
    );
}
