//! Tags and the standard headers stored with an object.

use crate::conditions::refused;
use crate::helpers::*;

/// Tags given on PUT are stored with the object and counted by HEAD;
/// Put/Get/DeleteObjectTagging replace, read and remove them; more than
/// 10 is InvalidTag.
pub(crate) fn object_tagging(c: &dyn S3Client, b: &str) {
    let tags: BTreeMap<String, String> = meta_map(&[("project", "io500"), ("tier", "hot tier")]);
    let o = PutOptions {
        tags: tags.clone(),
        ..Default::default()
    };
    let r = c.put_object(b, "t", PutBody::Bytes(b"tagged"), &o);
    if refused(c, &r) {
        expect_err(c.head_object(b, "t"), ErrorCode::NoSuchKey, "refused PUT");
        return;
    }
    ok(r, "PUT with tags");
    assert_eq!(ok(c.get_object_tagging(b, "t"), "GET tagging"), tags);
    assert_eq!(assert_content(c, b, "t", b"tagged").tag_count, 2);
    let new = meta_map(&[("a", "b/c=d&e")]);
    ok(c.put_object_tagging(b, "t", &new), "PUT tagging");
    assert_eq!(ok(c.get_object_tagging(b, "t"), "GET tagging"), new);
    assert_eq!(assert_content(c, b, "t", b"tagged").tag_count, 1);
    ok(c.delete_object_tagging(b, "t"), "DELETE tagging");
    assert!(ok(c.get_object_tagging(b, "t"), "GET tagging").is_empty());
    assert_eq!(assert_content(c, b, "t", b"tagged").tag_count, 0);
    let eleven: BTreeMap<String, String> = (0..11)
        .map(|i| (format!("k{i}"), "v".to_string()))
        .collect();
    expect_err(
        c.put_object_tagging(b, "t", &eleven),
        ErrorCode::InvalidTag,
        "11 tags",
    );
    expect_err(
        c.get_object_tagging(b, "missing"),
        ErrorCode::NoSuchKey,
        "GET tagging of a missing key",
    );
}

/// Cache-Control, Content-Disposition, Content-Encoding, Content-Language
/// and Expires are stored with the object and returned by GET and HEAD, as
/// written (PUT, multipart upload); a copy keeps them, a copy with options
/// (REPLACE) takes the new ones, an overwrite without them drops them.
pub(crate) fn standard_headers(c: &dyn S3Client, b: &str) {
    let headers = ObjectHeaders {
        cache_control: Some("public, max-age=14400".into()),
        content_disposition: Some("attachment; filename=\"report 1.txt\"".into()),
        content_encoding: Some("gzip".into()),
        content_language: Some("de-CH".into()),
        expires: Some("Wed, 21 Oct 2026 07:28:00 GMT".into()),
    };
    let o = PutOptions {
        headers: headers.clone(),
        ..opts("text/plain", &[("m", "1")])
    };
    ok(c.put_object(b, "h", PutBody::Bytes(b"zipped"), &o), "PUT");
    assert_eq!(
        assert_content(c, b, "h", b"zipped").headers,
        headers,
        "HEAD"
    );
    let copied = ok(c.copy_object(b, "h", b, "copy", None), "copy");
    assert_eq!(copied.headers, headers, "copy's ObjectInfo");
    assert_eq!(assert_stored(c, b, "copy", b"zipped", &o).headers, headers);
    let new = PutOptions {
        headers: ObjectHeaders {
            cache_control: Some("no-store".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let replaced = ok(c.copy_object(b, "h", b, "new", Some(&new)), "copy REPLACE");
    assert_eq!(replaced.headers, new.headers, "copy REPLACE's ObjectInfo");
    assert_eq!(assert_content(c, b, "new", b"zipped").headers, new.headers);
    let (id, parts, content) = upload_two_parts(c, b, "mp", &o);
    let done = ok(
        c.complete_multipart_upload(b, "mp", &id, &parts),
        "complete",
    );
    assert_eq!(done.headers, headers, "complete's ObjectInfo");
    assert_eq!(assert_stored(c, b, "mp", &content, &o).headers, headers);
    put(c, b, "h", b"plain");
    let head = assert_content(c, b, "h", b"plain");
    assert_eq!(head.headers, ObjectHeaders::default(), "after an overwrite");
}
