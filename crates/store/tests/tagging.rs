//! Object tags: on PUT, Put/Get/DeleteObjectTagging, S3's limits, and what
//! copies and overwrites do with them.

mod common;
use common::*;
use s3hpc_store::*;
use std::collections::BTreeMap;

fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn tags_live_with_the_object() {
    let env = Env::new();
    let s = &env.store;
    let opts = PutOptions {
        content_type: Some("text/plain".into()),
        tags: tags(&[("project", "io500"), ("tier", "hot")]),
        ..Default::default()
    };
    let etag = s
        .put_object(BUCKET, "t/k", PutBody::Bytes(b"data"), &opts)
        .unwrap();
    assert_eq!(s.get_object_tagging(BUCKET, "t/k").unwrap(), opts.tags);
    let info = s.head_object(BUCKET, "t/k").unwrap();
    assert_eq!((info.tag_count, info.etag.as_str()), (2, etag.as_str()));
    assert_eq!(info.content_type.as_deref(), Some("text/plain"));

    // Copies keep them (S3's default tagging directive is COPY).
    s.copy_object(BUCKET, "t/k", BUCKET, "t/copy", None)
        .unwrap();
    assert_eq!(s.get_object_tagging(BUCKET, "t/copy").unwrap(), opts.tags);

    // Replacing tags leaves data, ETag and metadata alone.
    s.put_object_tagging(BUCKET, "t/k", &tags(&[("a", "b")]))
        .unwrap();
    let info = s.head_object(BUCKET, "t/k").unwrap();
    assert_eq!((info.tag_count, info.etag.as_str()), (1, etag.as_str()));
    assert_eq!(info.content_type.as_deref(), Some("text/plain"));
    assert_eq!(env.get("t/k"), b"data");
    s.delete_object_tagging(BUCKET, "t/k").unwrap();
    assert!(s.get_object_tagging(BUCKET, "t/k").unwrap().is_empty());
    assert_eq!(s.head_object(BUCKET, "t/k").unwrap().tag_count, 0);

    // A plain file (no attribute yet) can be tagged; its ETag stays.
    std::fs::write(env.path("plain"), b"posix").unwrap();
    let before = s.head_object(BUCKET, "plain").unwrap().etag;
    s.put_object_tagging(BUCKET, "plain", &tags(&[("x", "")]))
        .unwrap();
    let after = s.head_object(BUCKET, "plain").unwrap();
    assert_eq!((after.etag, after.tag_count), (before, 1));

    // An overwrite without tags drops them, as in S3.
    env.put("t/copy", b"new");
    assert!(s.get_object_tagging(BUCKET, "t/copy").unwrap().is_empty());
}

#[test]
fn tag_limits_are_s3s() {
    let env = Env::new();
    let s = &env.store;
    env.put("k", b"x");
    let eleven: BTreeMap<_, _> = (0..11).map(|i| (format!("k{i}"), "v".into())).collect();
    expect_err(
        s.put_object_tagging(BUCKET, "k", &eleven),
        ErrorCode::InvalidTag,
        &["10"],
    );
    let long_key = tags(&[(&"k".repeat(129), "v")]);
    expect_err(
        s.put_object_tagging(BUCKET, "k", &long_key),
        ErrorCode::InvalidTag,
        &["128"],
    );
    let long_value = tags(&[("k", &"v".repeat(257))]);
    expect_err(
        s.put_object_tagging(BUCKET, "k", &long_value),
        ErrorCode::InvalidTag,
        &["256"],
    );
    let ok = tags(&[(&"k".repeat(128), &"v".repeat(256))]);
    s.put_object_tagging(BUCKET, "k", &ok).unwrap();
    let opts = PutOptions {
        tags: eleven,
        ..Default::default()
    };
    expect_err(
        s.put_object(BUCKET, "k2", PutBody::Bytes(b"x"), &opts),
        ErrorCode::InvalidTag,
        &[],
    );
    expect_err(
        s.get_object_tagging(BUCKET, "missing"),
        ErrorCode::NoSuchKey,
        &["missing"],
    );
}
