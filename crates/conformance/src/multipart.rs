//! Checks of multipart uploads: round trip, retries, parts after completion,
//! abort and the refusals S3 makes.

use crate::helpers::*;

/// Create, two parts, list parts and uploads, complete: the object is the
/// parts' concatenation with a `-2` ETag and the upload's metadata.
pub(crate) fn multipart_round_trip(c: &dyn S3Client, b: &str) {
    let key = "mp/object";
    let o = opts("video/mp4", &[("part", "many")]);
    let (id, parts, content) = upload_two_parts(c, b, key, &o);
    let listed = ok(c.list_parts(b, key, &id), "list parts");
    let got: Vec<(u32, u64, &str)> = listed
        .iter()
        .map(|p| (p.part_number, p.size, p.etag.as_str()))
        .collect();
    let want = vec![
        (1, MIB5 as u64, parts[0].1.as_str()),
        (2, (content.len() - MIB5) as u64, parts[1].1.as_str()),
    ];
    assert_eq!(got, want, "list parts");
    let uploads = ok(c.list_multipart_uploads(b, ""), "list uploads");
    assert_eq!(
        uploads
            .iter()
            .map(|u| (u.key.as_str(), u.upload_id.as_str()))
            .collect::<Vec<_>>(),
        vec![(key, id.as_str())],
        "list uploads"
    );
    assert_recent(uploads[0].initiated, "upload initiated");
    assert_eq!(
        ok(c.list_multipart_uploads(b, "mp/"), "list uploads mp/").len(),
        1,
        "uploads under mp/"
    );
    assert!(
        ok(c.list_multipart_uploads(b, "other"), "list uploads other").is_empty(),
        "uploads under other"
    );
    let (keys, _) = list(c, b, &ListRequest::default());
    assert!(
        keys.is_empty(),
        "an upload in progress is listed as objects: {keys:?}"
    );
    expect_err(
        c.head_object(b, key),
        ErrorCode::NoSuchKey,
        "HEAD before completion",
    );

    let info = ok(c.complete_multipart_upload(b, key, &id, &parts), "complete");
    assert_eq!(
        (info.key.as_str(), info.size),
        (key, content.len() as u64),
        "complete's ObjectInfo"
    );
    assert!(
        info.etag.starts_with('"') && info.etag.ends_with("-2\""),
        "multipart ETag {:?}",
        info.etag
    );
    let head = assert_stored(c, b, key, &content, &o);
    assert_eq!(head.etag, info.etag, "HEAD ETag against complete's");
    let (got, body) = get(
        c,
        b,
        key,
        Some(ByteRange::FromTo {
            first: MIB5 as u64 - 3,
            last: Some(MIB5 as u64 + 2),
        }),
    );
    assert_eq!(
        (got.offset, &body[..]),
        (MIB5 as u64 - 3, &content[MIB5 - 3..MIB5 + 3]),
        "GET across the part boundary"
    );

    assert!(
        ok(c.list_multipart_uploads(b, ""), "list uploads").is_empty(),
        "completed upload still listed"
    );
    expect_err(
        c.list_parts(b, key, &id),
        ErrorCode::NoSuchUpload,
        "list parts after completion",
    );
    // Completing twice answers the same object (multipart_complete_retried).
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&[key]), "LIST after completion");
}

/// A completion sent again (its first answer was lost) answers the same
/// object, as S3 does; with other parts, after the key was overwritten, or
/// for any other call on the upload, the upload is gone (NoSuchUpload).
pub(crate) fn multipart_complete_retried(c: &dyn S3Client, b: &str) {
    let (id, parts, content) = upload_two_parts(c, b, "k", &PutOptions::default());
    let first = ok(c.complete_multipart_upload(b, "k", &id, &parts), "complete");
    let again = ok(
        c.complete_multipart_upload(b, "k", &id, &parts),
        "complete again",
    );
    assert_eq!(again.etag, first.etag, "the retry's ETag");
    assert_eq!(again.size, content.len() as u64, "the retry's size");
    assert_content(c, b, "k", &content);
    let no = ErrorCode::NoSuchUpload;
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &parts[..1]),
        no,
        "complete again with other parts",
    );
    expect_err(
        c.complete_multipart_upload(b, "other", &id, &parts),
        no,
        "complete again under another key",
    );
    expect_err(c.list_parts(b, "k", &id), no, "list parts after completion");
    expect_err(
        c.abort_multipart_upload(b, "k", &id),
        no,
        "abort after completion",
    );
    let uploads = ok(c.list_multipart_uploads(b, ""), "list uploads");
    assert!(
        uploads.is_empty(),
        "a completed upload is listed: {uploads:?}"
    );
    put(c, b, "k", b"replaced");
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &parts),
        no,
        "complete again after the key was overwritten",
    );
    assert_content(c, b, "k", b"replaced");
}

/// A completed multipart object keeps its part boundaries: GET with
/// `partNumber` answers that part's bytes, the object's ETag and its part
/// count; part 1 of an object not uploaded in parts is all of it, and a
/// part past the last is InvalidPart. (libs3's API has no field for
/// `partNumber`: it refuses it.)
pub(crate) fn multipart_parts_after_completion(c: &dyn S3Client, b: &str) {
    let (id, parts, content) = upload_two_parts(c, b, "k", &PutOptions::default());
    let done = ok(c.complete_multipart_upload(b, "k", &id, &parts), "complete");
    let r = c.get_object_part(b, "k", 1);
    if c.transport() == "libs3" && matches!(&r, Err(e) if e.code == ErrorCode::NotImplemented) {
        return;
    }
    let sizes = [(1, 0, MIB5), (2, MIB5, content.len() - MIB5)];
    for (n, (got, count)) in [
        (1, ok(r, "GET part 1")),
        (2, ok(c.get_object_part(b, "k", 2), "GET part 2")),
    ] {
        let (_, offset, len) = sizes[n - 1];
        let mut got = got;
        assert_eq!(count, Some(2), "part {n}: parts count");
        assert_eq!(
            (got.offset, got.length, got.info.size),
            (offset as u64, len as u64, content.len() as u64),
            "part {n}: offset, length, object size"
        );
        assert_eq!(got.info.etag, done.etag, "part {n}: the object's ETag");
        let mut body = Vec::new();
        got.body.read_to_end(&mut body).expect("read part");
        assert!(body == content[offset..offset + len], "part {n}: its bytes");
    }
    expect_err(
        c.get_object_part(b, "k", 3),
        ErrorCode::InvalidPart,
        "part 3 of 2",
    );
    put(c, b, "plain", b"body");
    let (mut whole, count) = ok(c.get_object_part(b, "plain", 1), "part 1 of a plain object");
    let mut body = Vec::new();
    whole.body.read_to_end(&mut body).expect("read it");
    assert_eq!(
        (body.as_slice(), count),
        (&b"body"[..], None),
        "part 1 of a plain object"
    );
    expect_err(
        c.get_object_part(b, "plain", 2),
        ErrorCode::InvalidPart,
        "part 2 of a plain object",
    );
    expect_err(
        c.get_object_part(b, "missing", 1),
        ErrorCode::NoSuchKey,
        "part of a missing key",
    );
}

/// Abort removes the upload and its parts: NoSuchUpload afterwards, no key,
/// and the bucket is empty enough to delete.
pub(crate) fn multipart_abort(c: &dyn S3Client, b: &str) {
    let key = "aborted";
    let id = ok(
        c.create_multipart_upload(b, key, &PutOptions::default()),
        "create upload",
    );
    let e1 = ok(
        c.upload_part(b, key, &id, 1, PutBody::Bytes(b"part one")),
        "upload part",
    );
    expect_err(
        c.list_parts(b, "other-key", &id),
        ErrorCode::NoSuchUpload,
        "list parts under another key",
    );
    expect_err(
        c.abort_multipart_upload(b, "other-key", &id),
        ErrorCode::NoSuchUpload,
        "abort under another key",
    );
    ok(c.abort_multipart_upload(b, key, &id), "abort");
    let no = ErrorCode::NoSuchUpload;
    expect_err(c.list_parts(b, key, &id), no, "list parts after abort");
    expect_err(
        c.upload_part(b, key, &id, 2, PutBody::Bytes(b"x")),
        no,
        "upload part after abort",
    );
    expect_err(
        c.complete_multipart_upload(b, key, &id, &[(1, e1)]),
        no,
        "complete after abort",
    );
    expect_err(c.abort_multipart_upload(b, key, &id), no, "abort twice");
    for bogus in ["../../x", "0123456789abcdef0123456789abcdef", ""] {
        expect_err(
            c.list_parts(b, key, bogus),
            no,
            &format!("list parts of upload {bogus:?}"),
        );
    }
    expect_err(
        c.head_object(b, key),
        ErrorCode::NoSuchKey,
        "HEAD after abort",
    );
    assert!(
        ok(c.list_multipart_uploads(b, ""), "list uploads").is_empty(),
        "aborted upload still listed"
    );
    ok(c.delete_bucket(b), "delete the bucket after the abort");
}

/// Parts named out of order are InvalidPartOrder; a part named twice in a
/// row counts with its last entry; the upload stays usable after a refusal.
pub(crate) fn multipart_invalid_part_order(c: &dyn S3Client, b: &str) {
    let (id, parts, content) = upload_two_parts(c, b, "k", &PutOptions::default());
    let swapped = [parts[1].clone(), parts[0].clone()];
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &swapped),
        ErrorCode::InvalidPartOrder,
        "parts 2, 1",
    );
    let stale_last = [
        parts[0].clone(),
        (1, format!("\"{}\"", "0".repeat(32))),
        parts[1].clone(),
    ];
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &stale_last),
        ErrorCode::InvalidPart,
        "parts 1, 1 (an ETag part 1 does not have), 2",
    );
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &[]),
        ErrorCode::InvalidArgument,
        "no parts",
    );
    expect_err(
        c.head_object(b, "k"),
        ErrorCode::NoSuchKey,
        "HEAD after failed completions",
    );
    // A part listed twice in a row counts with its last entry: a client
    // that re-sent part 1 lists both uploads' ETags, the one kept last.
    let resent = [
        (1, format!("\"{}\"", "0".repeat(32))),
        parts[0].clone(),
        parts[1].clone(),
    ];
    ok(
        c.complete_multipart_upload(b, "k", &id, &resent),
        "complete in order, part 1 listed twice",
    );
    assert_content(c, b, "k", &content);
}

/// Every part but the last must be at least 5 MiB.
pub(crate) fn multipart_entity_too_small(c: &dyn S3Client, b: &str) {
    let id = ok(
        c.create_multipart_upload(b, "k", &PutOptions::default()),
        "create upload",
    );
    let small = data(1024, 13);
    let e1 = ok(
        c.upload_part(b, "k", &id, 1, PutBody::Bytes(&small)),
        "part 1",
    );
    let e2 = ok(
        c.upload_part(b, "k", &id, 2, PutBody::Bytes(&small)),
        "part 2",
    );
    let both = [(1, e1.clone()), (2, e2)];
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &both),
        ErrorCode::EntityTooSmall,
        "1 KiB first part",
    );
    expect_err(
        c.head_object(b, "k"),
        ErrorCode::NoSuchKey,
        "HEAD after EntityTooSmall",
    );
    // A small part is fine as the last (here: the only) one.
    let info = ok(
        c.complete_multipart_upload(b, "k", &id, &[(1, e1)]),
        "complete with part 1 only",
    );
    assert!(info.etag.ends_with("-1\""), "one-part ETag {:?}", info.etag);
    assert_content(c, b, "k", &small);
}

/// A part never uploaded, a wrong part ETag or a bad part number fails.
pub(crate) fn multipart_invalid_part(c: &dyn S3Client, b: &str) {
    let id = ok(
        c.create_multipart_upload(b, "k", &PutOptions::default()),
        "create upload",
    );
    let e1 = ok(
        c.upload_part(b, "k", &id, 1, PutBody::Bytes(b"one")),
        "part 1",
    );
    let bad = ErrorCode::InvalidPart;
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &[(2, e1.clone())]),
        bad,
        "part never uploaded",
    );
    let wrong = "\"00000000000000000000000000000000\"".to_string();
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &[(1, wrong)]),
        bad,
        "wrong ETag",
    );
    for n in [0, 10_001] {
        expect_err(
            c.upload_part(b, "k", &id, n, PutBody::Bytes(b"x")),
            ErrorCode::InvalidArgument,
            &format!("part number {n}"),
        );
    }
    // Re-uploading a part replaces it.
    let e1b = ok(
        c.upload_part(b, "k", &id, 1, PutBody::Bytes(b"uno!")),
        "part 1 again",
    );
    let parts = ok(c.list_parts(b, "k", &id), "list parts");
    assert_eq!(
        parts
            .iter()
            .map(|p| (p.part_number, p.size))
            .collect::<Vec<_>>(),
        vec![(1, 4)],
        "list parts"
    );
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &[(1, e1)]),
        bad,
        "the replaced part's ETag",
    );
    ok(
        c.complete_multipart_upload(b, "k", &id, &[(1, e1b)]),
        "complete",
    );
    assert_content(c, b, "k", b"uno!");
}
