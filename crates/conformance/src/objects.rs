//! Checks of single objects: PUT, GET, HEAD, ranges, streams, checksums,
//! deletes, copies and overwrites.

use crate::helpers::*;

/// PUT, GET and HEAD agree on content, size, ETag, content type and metadata.
pub(crate) fn put_get_head_round_trip(c: &dyn S3Client, b: &str) {
    let content = data(100_000, 1);
    let o = opts(
        "text/plain; charset=utf-8",
        &[("color", "blue"), ("long-name", "a value with spaces")],
    );
    let etag = ok(
        c.put_object(b, "dir/obj.txt", PutBody::Bytes(&content), &o),
        "PUT",
    );
    assert_etag(&etag, &content, "PUT");
    let head = assert_stored(c, b, "dir/obj.txt", &content, &o);
    assert_eq!(head.key, "dir/obj.txt", "HEAD key");
    assert_eq!(head.etag, etag, "HEAD ETag against PUT's");
    assert_recent(head.last_modified, "HEAD");
    let page = ok(c.list_objects(b, &ListRequest::default()), "LIST");
    assert_eq!(page.objects.len(), 1, "LIST: {:?}", page.objects);
    let listed = &page.objects[0];
    assert_eq!(
        (listed.key.as_str(), listed.size, &listed.etag),
        ("dir/obj.txt", head.size, &head.etag),
        "LIST entry"
    );
}

/// A zero-byte object is an object.
pub(crate) fn empty_object(c: &dyn S3Client, b: &str) {
    let etag = put(c, b, "empty", b"");
    assert_etag(&etag, b"", "PUT empty");
    assert_content(c, b, "empty", b"");
    let o = opts("application/x-empty", &[("k", "v")]);
    ok(
        c.put_object(b, "empty-meta", PutBody::Bytes(b""), &o),
        "PUT empty with metadata",
    );
    assert_stored(c, b, "empty-meta", b"", &o);
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&["empty", "empty-meta"]), "LIST");
}

/// NoSuchKey for keys that were never written.
pub(crate) fn missing_key(c: &dyn S3Client, b: &str) {
    put(c, b, "dir/present", b"x");
    for key in [
        "absent",
        "dir/absent",
        "dir",
        "dir/present/deeper",
        "nodir/absent",
    ] {
        expect_err(
            c.get_object(b, key, None),
            ErrorCode::NoSuchKey,
            &format!("GET {key:?}"),
        );
        expect_err(
            c.head_object(b, key),
            ErrorCode::NoSuchKey,
            &format!("HEAD {key:?}"),
        );
        expect_err(
            c.copy_object(b, key, b, "copy", None),
            ErrorCode::NoSuchKey,
            &format!("copy {key:?}"),
        );
    }
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(
        keys,
        strings(&["dir/present"]),
        "failed requests created keys"
    );
}

/// Keys with characters that URLs, headers and shells treat specially come
/// back exactly as written.
pub(crate) fn special_character_keys(c: &dyn S3Client, b: &str) {
    let keys = [
        "sp ace",
        "plus+sign",
        "per%25cent",
        "q?uery",
        "ha#sh",
        "amp&er=sand",
        "back\\slash",
        "quote\"'",
        "tab\tnl\n",
        "ünïcødé/ключ/日本語",
        "emoji/🦀",
        "~tilde",
        "colon:semi;",
    ];
    for (i, key) in keys.iter().enumerate() {
        let content = data(10 + i, i as u8);
        put(c, b, key, &content);
        let head = assert_content(c, b, key, &content);
        assert_eq!(head.key, *key, "HEAD key");
    }
    let (listed, _) = list(c, b, &ListRequest::default());
    let mut want = strings(&keys);
    want.sort();
    assert_eq!(listed, want, "LIST of special keys");
    for key in keys {
        ok(c.delete_object(b, key), &format!("DELETE {key:?}"));
    }
    let (listed, _) = list(c, b, &ListRequest::default());
    assert!(listed.is_empty(), "left after DELETE: {listed:?}");
}

/// A key of exactly 1024 bytes (segments of at most 255) is valid.
pub(crate) fn max_length_key(c: &dyn S3Client, b: &str) {
    let seg = "s".repeat(255);
    let key = format!("{seg}/{seg}/{seg}/{}/x", "t".repeat(254));
    assert_eq!(key.len(), 1024);
    put(c, b, &key, b"longest");
    assert_content(c, b, &key, b"longest");
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, vec![key.clone()], "LIST");
    ok(c.delete_object(b, &key), "DELETE");
}

/// Keys ending in `/` ("folder" markers, as consoles, S3A and rclone make
/// them, usually empty) are objects like any other: PUT, HEAD, GET, COPY,
/// listing (a key under its own prefix, rolled up above it) and DELETE,
/// which removes only the marker.
pub(crate) fn folder_markers(c: &dyn S3Client, b: &str) {
    let etag = put(c, b, "dir/", b"");
    assert_etag(&etag, b"", "PUT dir/");
    let head = assert_content(c, b, "dir/", b"");
    assert_eq!(head.key, "dir/", "HEAD key");
    let o = opts("application/x-directory", &[("made-by", "console")]);
    ok(
        c.put_object(b, "dir/sub/", PutBody::Bytes(b"note"), &o),
        "PUT dir/sub/ with content and metadata",
    );
    assert_stored(c, b, "dir/sub/", b"note", &o);
    put(c, b, "dir/sub/file", b"f");
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&["dir/", "dir/sub/", "dir/sub/file"]), "LIST");
    let (keys, prefixes) = list(c, b, &req("", Some("/")));
    assert_eq!((keys, prefixes), (vec![], strings(&["dir/"])), "LIST / ");
    let (keys, prefixes) = list(c, b, &req("dir/", Some("/")));
    assert_eq!(
        (keys, prefixes),
        (strings(&["dir/"]), strings(&["dir/sub/"])),
        "LIST dir/ /"
    );
    expect_err(c.head_object(b, "dir"), ErrorCode::NoSuchKey, "HEAD dir");
    ok(
        c.copy_object(b, "dir/sub/", b, "copy/", None),
        "COPY dir/sub/ to copy/",
    );
    assert_stored(c, b, "copy/", b"note", &o);
    ok(c.delete_object(b, "dir/"), "DELETE dir/");
    expect_err(
        c.head_object(b, "dir/"),
        ErrorCode::NoSuchKey,
        "HEAD dir/ after DELETE",
    );
    assert_content(c, b, "dir/sub/", b"note");
    for k in ["dir/sub/file", "dir/sub/", "copy/"] {
        ok(c.delete_object(b, k), &format!("DELETE {k}"));
    }
    let (keys, prefixes) = list(c, b, &req("", Some("/")));
    assert!(
        keys.is_empty() && prefixes.is_empty(),
        "LIST after DELETE: {keys:?} {prefixes:?}"
    );
    ok(c.delete_bucket(b), "delete the emptied bucket");
}

/// A key may also be a prefix of other keys (`a/b` and `a/b/c`), written in
/// either order; with delimiter `/` and prefix `a/`, `a/b` is a key and
/// `a/b/` a common prefix. Multipart completes onto such keys.
pub(crate) fn object_and_prefix(c: &dyn S3Client, b: &str) {
    put(c, b, "a/b", b"object first");
    put(c, b, "a/b/c", b"below");
    put(c, b, "d/e", b"prefix first");
    let o = opts("text/plain", &[("k", "v")]);
    ok(
        c.put_object(b, "d", PutBody::Bytes(b"then object"), &o),
        "PUT d over prefix d/",
    );
    assert_content(c, b, "a/b", b"object first");
    assert_content(c, b, "a/b/c", b"below");
    assert_stored(c, b, "d", b"then object", &o);
    assert_content(c, b, "d/e", b"prefix first");
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&["a/b", "a/b/c", "d", "d/e"]), "LIST");
    put(c, b, "a/b!", b"!");
    put(c, b, "a/b/", b"");
    let (keys, prefixes) = list(c, b, &req("a/", Some("/")));
    assert_eq!(
        (keys, prefixes),
        (strings(&["a/b", "a/b!"]), strings(&["a/b/"])),
        "LIST a/ /"
    );
    let (keys, _) = list(c, b, &req("a/", None));
    assert_eq!(keys, strings(&["a/b", "a/b!", "a/b/", "a/b/c"]), "LIST a/");
    // Copy onto a key below an object, and multipart onto an object that is
    // a prefix.
    ok(c.copy_object(b, "d", b, "a/b!/x", None), "COPY d to a/b!/x");
    assert_content(c, b, "a/b!/x", b"then object");
    assert_content(c, b, "a/b!", b"!");
    let (id, parts, content) = upload_two_parts(c, b, "d", &PutOptions::default());
    ok(
        c.complete_multipart_upload(b, "d", &id, &parts),
        "complete onto d",
    );
    assert_content(c, b, "d", &content);
    // DELETE removes only the object named.
    ok(c.delete_object(b, "a/b"), "DELETE a/b");
    expect_err(
        c.head_object(b, "a/b"),
        ErrorCode::NoSuchKey,
        "HEAD a/b after DELETE",
    );
    assert_content(c, b, "a/b/c", b"below");
    ok(c.delete_object(b, "d/e"), "DELETE d/e");
    assert_content(c, b, "d", &content);
    let (keys, prefixes) = list(c, b, &req("", Some("/")));
    assert_eq!(
        (keys, prefixes),
        (strings(&["d"]), strings(&["a/"])),
        "LIST /"
    );
    for k in ["a/b!", "a/b!/x", "a/b/", "a/b/c", "d"] {
        ok(c.delete_object(b, k), &format!("DELETE {k}"));
    }
    ok(c.delete_bucket(b), "delete the emptied bucket");
}

/// A streamed PUT of a known length arrives whole.
pub(crate) fn put_stream_with_len(c: &dyn S3Client, b: &str) {
    stream_round_trip(c, b, true);
}

/// A streamed PUT of unknown length (read to its end) arrives whole.
pub(crate) fn put_stream_without_len(c: &dyn S3Client, b: &str) {
    stream_round_trip(c, b, false);
}

#[track_caller]
pub(crate) fn stream_round_trip(c: &dyn S3Client, b: &str, with_len: bool) {
    let content = data(STREAM_LEN, with_len as u8);
    let len = with_len.then_some(STREAM_LEN as u64);
    let etag = ok(stream_put(c, b, "streamed", &content, len), "PUT stream");
    assert_etag(&etag, &content, "PUT stream");
    let head = assert_content(c, b, "streamed", &content);
    assert_eq!(head.etag, etag, "HEAD ETag against PUT's");
}

/// A stream that ends before its announced length is IncompleteBody, and
/// neither creates the key nor disturbs the object already there.
pub(crate) fn put_stream_short_is_incomplete(c: &dyn S3Client, b: &str) {
    let content = data(STREAM_LEN, 4);
    let short = stream_put(c, b, "new", &content, Some(STREAM_LEN as u64 + 1));
    expect_err(short, ErrorCode::IncompleteBody, "short stream, new key");
    expect_err(
        c.head_object(b, "new"),
        ErrorCode::NoSuchKey,
        "HEAD after the failed PUT",
    );
    put(c, b, "old", b"previous content");
    let short = stream_put(c, b, "old", &content[..1000], Some(5000));
    expect_err(
        short,
        ErrorCode::IncompleteBody,
        "short stream over an object",
    );
    assert_content(c, b, "old", b"previous content");
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&["old"]), "LIST after failed PUTs");
}

/// A checksum (`PutOptions::checksum`) or Content-MD5 that does not match
/// the body is BadDigest, and nothing is stored; a matching one is
/// accepted.
pub(crate) fn put_checksum_verified(c: &dyn S3Client, b: &str) {
    use s3hpc_store::{ChecksumAlgorithm, ChecksumRequest};
    let content = data(5000, 6);
    for alg in ChecksumAlgorithm::ALL {
        // A value of another body, and one that is no value of the
        // algorithm at all (s3-tests sends "bad"): both BadDigest, as S3.
        for value in [alg.checksum_of(b"other"), "bad".to_string()] {
            let wrong = PutOptions {
                checksum: Some(ChecksumRequest::expecting(alg, value.as_str())),
                ..Default::default()
            };
            expect_err(
                c.put_object(b, "k", PutBody::Bytes(&content), &wrong),
                ErrorCode::BadDigest,
                &format!("{} {value:?}", alg.as_str()),
            );
        }
        expect_err(
            c.head_object(b, "k"),
            ErrorCode::NoSuchKey,
            "HEAD after BadDigest",
        );
        let right = PutOptions {
            checksum: Some(ChecksumRequest::expecting(alg, alg.checksum_of(&content))),
            ..Default::default()
        };
        ok(
            c.put_object(b, "k", PutBody::Bytes(&content), &right),
            alg.as_str(),
        );
        ok(c.delete_object(b, "k"), "delete");
    }
    let md5 = |d: &[u8]| -> [u8; 16] { Md5::digest(d).into() };
    let wrong = PutOptions {
        content_md5: Some(md5(b"other")),
        ..Default::default()
    };
    expect_err(
        c.put_object(b, "m", PutBody::Bytes(&content), &wrong),
        ErrorCode::BadDigest,
        "Content-MD5",
    );
    expect_err(
        c.head_object(b, "m"),
        ErrorCode::NoSuchKey,
        "HEAD after BadDigest",
    );
    let right = PutOptions {
        content_md5: Some(md5(&content)),
        ..Default::default()
    };
    ok(
        c.put_object(b, "m", PutBody::Bytes(&content), &right),
        "Content-MD5",
    );
    assert_content(c, b, "m", &content);
}

/// Ranged GETs: first-last, open-ended, suffix, clamped at the end.
pub(crate) fn ranged_get(c: &dyn S3Client, b: &str) {
    let content = data(1000, 5);
    let etag = put(c, b, "r", &content);
    let cases = [
        (
            ByteRange::FromTo {
                first: 10,
                last: Some(19),
            },
            10..20,
        ),
        (
            ByteRange::FromTo {
                first: 0,
                last: Some(0),
            },
            0..1,
        ),
        (
            ByteRange::FromTo {
                first: 990,
                last: None,
            },
            990..1000,
        ),
        (
            ByteRange::FromTo {
                first: 0,
                last: None,
            },
            0..1000,
        ),
        (
            ByteRange::FromTo {
                first: 995,
                last: Some(5000),
            },
            995..1000,
        ),
        (
            ByteRange::FromTo {
                first: 999,
                last: Some(999),
            },
            999..1000,
        ),
        (ByteRange::Suffix(7), 993..1000),
        (ByteRange::Suffix(1000), 0..1000),
        (ByteRange::Suffix(5000), 0..1000),
    ];
    for (range, want) in cases {
        let (got, body) = get(c, b, "r", Some(range));
        assert_eq!(
            (got.offset, got.length),
            (want.start as u64, want.len() as u64),
            "GET {range:?}: offset, length"
        );
        assert!(body == content[want.clone()], "GET {range:?}: wrong bytes");
        assert_eq!(
            (got.info.size, &got.info.etag),
            (1000, &etag),
            "GET {range:?}: info describes the whole object"
        );
    }
}

/// Ranges that select nothing are InvalidRange.
pub(crate) fn invalid_range(c: &dyn S3Client, b: &str) {
    put(c, b, "r", &data(1000, 6));
    put(c, b, "empty", b"");
    for (key, range) in [
        (
            "r",
            ByteRange::FromTo {
                first: 1000,
                last: None,
            },
        ),
        (
            "r",
            ByteRange::FromTo {
                first: 5000,
                last: Some(6000),
            },
        ),
        (
            "r",
            ByteRange::FromTo {
                first: 20,
                last: Some(10),
            },
        ),
        ("r", ByteRange::Suffix(0)),
        (
            "empty",
            ByteRange::FromTo {
                first: 0,
                last: None,
            },
        ),
    ] {
        expect_err(
            c.get_object(b, key, Some(range)),
            ErrorCode::InvalidRange,
            &format!("GET {key} {range:?}"),
        );
    }
}

/// DELETE succeeds whether or not the key exists.
pub(crate) fn delete_is_idempotent(c: &dyn S3Client, b: &str) {
    ok(c.delete_object(b, "never"), "DELETE a key never written");
    ok(
        c.delete_object(b, "no/such/dir"),
        "DELETE under a missing prefix",
    );
    put(c, b, "k", b"x");
    ok(c.delete_object(b, "k"), "DELETE");
    expect_err(
        c.head_object(b, "k"),
        ErrorCode::NoSuchKey,
        "HEAD after DELETE",
    );
    expect_err(
        c.get_object(b, "k", None),
        ErrorCode::NoSuchKey,
        "GET after DELETE",
    );
    ok(c.delete_object(b, "k"), "DELETE again");
    let (keys, _) = list(c, b, &ListRequest::default());
    assert!(keys.is_empty(), "LIST after DELETE: {keys:?}");
}

/// Deleting the last key under a prefix makes the prefix disappear, and the
/// bucket can then be deleted.
pub(crate) fn delete_prunes_prefixes(c: &dyn S3Client, b: &str) {
    put_keys(c, b, &["a/b/c/d", "a/b/e", "a/f"]);
    ok(c.delete_object(b, "a/b/c/d"), "DELETE a/b/c/d");
    let (_, prefixes) = list(c, b, &req("a/b/", Some("/")));
    assert!(
        prefixes.is_empty(),
        "prefix with no objects listed: {prefixes:?}"
    );
    ok(c.delete_object(b, "a/b/e"), "DELETE a/b/e");
    let (keys, prefixes) = list(c, b, &req("a/", Some("/")));
    assert_eq!((keys, prefixes), (strings(&["a/f"]), vec![]), "LIST a/");
    ok(c.delete_object(b, "a/f"), "DELETE a/f");
    let (keys, prefixes) = list(c, b, &req("", Some("/")));
    assert!(
        keys.is_empty() && prefixes.is_empty(),
        "LIST: {keys:?} {prefixes:?}"
    );
    // A key where a pruned prefix was.
    put(c, b, "a", b"file now");
    ok(c.delete_object(b, "a"), "DELETE a");
    ok(c.delete_bucket(b), "delete the emptied bucket");
}

/// Copy without options keeps content type and metadata (COPY), also
/// across buckets; onto itself it would change nothing: InvalidRequest.
pub(crate) fn copy_keeps_metadata(c: &dyn S3Client, b: &str) {
    let content = data(70_000, 7);
    let o = opts("image/png", &[("origin", "camera"), ("n", "1")]);
    let etag = ok(
        c.put_object(b, "src", PutBody::Bytes(&content), &o),
        "PUT src",
    );
    let other = format!("{b}-dst");
    ok(c.create_bucket(&other), "create destination bucket");
    for (dst_bucket, dst_key) in [(b, "copy"), (b, "deep/er/copy"), (other.as_str(), "copy")] {
        let info = ok(c.copy_object(b, "src", dst_bucket, dst_key, None), "copy");
        assert_eq!(
            (info.key.as_str(), info.size),
            (dst_key, content.len() as u64),
            "copy's ObjectInfo"
        );
        assert_etag(&info.etag, &content, "copy");
        let head = assert_stored(c, dst_bucket, dst_key, &content, &o);
        assert_eq!(head.etag, info.etag, "HEAD ETag against the copy's");
    }
    // Onto itself, changing nothing: refused, as S3 does.
    expect_err(
        c.copy_object(b, "src", b, "src", None),
        ErrorCode::InvalidRequest,
        "copy onto itself keeping the metadata",
    );
    let src = assert_content(c, b, "src", &content);
    assert_eq!(
        (src.etag, src.metadata),
        (etag, o.metadata),
        "source after copies"
    );
}

/// Copy with options replaces content type and metadata (REPLACE), also
/// onto the source key itself (which needs a change, see
/// `copy_keeps_metadata`).
pub(crate) fn copy_replaces_metadata(c: &dyn S3Client, b: &str) {
    let content = data(3000, 8);
    let o = opts("text/csv", &[("old", "1"), ("keep", "no")]);
    ok(
        c.put_object(b, "src", PutBody::Bytes(&content), &o),
        "PUT src",
    );
    let new = opts("application/json", &[("new", "2")]);
    ok(
        c.copy_object(b, "src", b, "dst", Some(&new)),
        "copy REPLACE",
    );
    assert_stored(c, b, "dst", &content, &new);
    assert_stored(c, b, "src", &content, &o);
    ok(
        c.copy_object(b, "src", b, "src", Some(&new)),
        "copy onto itself, REPLACE",
    );
    assert_stored(c, b, "src", &content, &new);
    ok(
        c.copy_object(b, "src", b, "bare", Some(&PutOptions::default())),
        "copy REPLACE with nothing",
    );
    let bare = assert_content(c, b, "bare", &content);
    assert!(
        bare.metadata.is_empty(),
        "REPLACE with no metadata kept {:?}",
        bare.metadata
    );
    assert_ne!(
        bare.content_type.as_deref(),
        Some("application/json"),
        "REPLACE with no content type kept it"
    );
}

/// Overwriting a key replaces its content, ETag, content type and metadata,
/// whatever wrote it before (PUT, stream, multipart).
pub(crate) fn overwrite_replaces(c: &dyn S3Client, b: &str) {
    let first = data(5000, 9);
    let o = opts("text/plain", &[("version", "1")]);
    let etag1 = ok(c.put_object(b, "k", PutBody::Bytes(&first), &o), "PUT 1");
    let second = data(4000, 10);
    let etag2 = put(c, b, "k", &second);
    assert_ne!(
        etag1, etag2,
        "ETag unchanged by an overwrite with other content"
    );
    let head = assert_content(c, b, "k", &second);
    assert_eq!(head.etag, etag2, "HEAD ETag");
    assert!(
        head.metadata.is_empty(),
        "metadata survived an overwrite: {:?}",
        head.metadata
    );
    assert_ne!(
        head.content_type, o.content_type,
        "content type survived an overwrite"
    );
    let o3 = opts("text/html", &[("version", "3")]);
    ok(c.put_object(b, "k", PutBody::Bytes(&first), &o3), "PUT 3");
    assert_stored(c, b, "k", &first, &o3);
    let third = data(STREAM_LEN, 11);
    ok(stream_put(c, b, "k", &third, None), "PUT stream over it");
    assert_content(c, b, "k", &third);
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&["k"]), "LIST after overwrites");
}
