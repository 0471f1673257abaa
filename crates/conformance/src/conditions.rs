//! Conditional writes and deletes, and races with exactly one winner.

use crate::helpers::*;

pub(crate) fn cond_put(
    c: &dyn S3Client,
    b: &str,
    key: &str,
    body: &[u8],
    cond: WriteCondition,
) -> Result<String> {
    let o = PutOptions {
        condition: cond,
        ..Default::default()
    };
    c.put_object(b, key, PutBody::Bytes(body), &o)
}

/// Whether `r` is the refusal of a transport whose API cannot carry the
/// request (libs3's ABI has no field for conditions or tags). Only libs3
/// may refuse; it must refuse, never write unconditionally.
pub(crate) fn refused<T>(c: &dyn S3Client, r: &Result<T>) -> bool {
    c.transport() == "libs3"
        && matches!(
            r,
            Err(S3Error {
                code: ErrorCode::NotImplemented,
                ..
            })
        )
}

/// DeleteObject with conditions (If-Match, size, last-modified time)
/// deletes only the object they all describe; otherwise PreconditionFailed
/// and the object stays. A missing key succeeds whatever they say, as S3.
pub(crate) fn conditional_delete(c: &dyn S3Client, b: &str) {
    let cond = |etag: Option<&str>, size: Option<u64>, t: Option<SystemTime>| DeleteCondition {
        etag: etag.map(str::to_string),
        size,
        last_modified: t,
        ..Default::default()
    };
    put(c, b, "probe", b"x");
    let r = c.delete_object_if(b, "probe", &cond(Some("*"), None, None));
    if refused(c, &r) {
        return;
    }
    ok(r, "DELETE If-Match: * of an object");
    for key in ["k", "d"] {
        let etag = put(c, b, key, b"content");
        if key == "d" {
            // A key that is also a prefix.
            put(c, b, "d/e", b"below");
        }
        let t = ok(c.head_object(b, key), "HEAD").last_modified;
        let earlier = Some(t - Duration::from_secs(3600));
        let other = format!("\"{}\"", "0".repeat(32));
        let wrong = [
            ("another ETag", cond(Some(&other), None, None)),
            ("another size", cond(None, Some(8), None)),
            ("another time", cond(None, None, earlier)),
            ("two right, one wrong", cond(Some(&etag), Some(7), earlier)),
        ];
        for (what, w) in wrong {
            expect_err(
                c.delete_object_if(b, key, &w),
                ErrorCode::PreconditionFailed,
                &format!("DELETE {key} with {what}"),
            );
            assert_content(c, b, key, b"content");
        }
        ok(
            c.delete_object_if(b, key, &cond(Some(&etag), Some(7), Some(t))),
            "DELETE with the object's ETag, size and time",
        );
        expect_err(c.head_object(b, key), ErrorCode::NoSuchKey, "HEAD after it");
        ok(
            c.delete_object_if(b, key, &cond(Some(&other), Some(1), None)),
            "DELETE of a missing key with conditions",
        );
        put(c, b, key, b"again");
        ok(
            c.delete_object_if(b, key, &cond(Some("*"), None, None)),
            "DELETE If-Match: *",
        );
        expect_err(c.head_object(b, key), ErrorCode::NoSuchKey, "HEAD after *");
    }
    assert_content(c, b, "d/e", b"below");
    let (keys, _) = list(c, b, &req("", None));
    assert_eq!(
        keys,
        strings(&["d/e"]),
        "LIST after the conditional deletes"
    );
}

/// `If-None-Match: *` creates only; `If-Match` replaces only the version
/// named; a failed condition is PreconditionFailed and leaves the object as
/// it was; If-Match on a missing key is NoSuchKey.
pub(crate) fn conditional_put(c: &dyn S3Client, b: &str) {
    let first = cond_put(c, b, "c/k", b"one", WriteCondition::IfNoneMatch);
    if refused(c, &first) {
        expect_err(c.head_object(b, "c/k"), ErrorCode::NoSuchKey, "refused PUT");
        return;
    }
    let e1 = ok(first, "PUT If-None-Match on a new key");
    expect_err(
        cond_put(c, b, "c/k", b"two", WriteCondition::IfNoneMatch),
        ErrorCode::PreconditionFailed,
        "PUT If-None-Match on an existing key",
    );
    assert_content(c, b, "c/k", b"one");
    expect_err(
        cond_put(
            c,
            b,
            "c/k",
            b"two",
            WriteCondition::IfMatch("\"0000\"".into()),
        ),
        ErrorCode::PreconditionFailed,
        "PUT If-Match with a wrong ETag",
    );
    assert_content(c, b, "c/k", b"one");
    let e2 = ok(
        cond_put(c, b, "c/k", b"two", WriteCondition::IfMatch(e1.clone())),
        "PUT If-Match with the current ETag",
    );
    assert_content(c, b, "c/k", b"two");
    expect_err(
        cond_put(c, b, "c/k", b"three", WriteCondition::IfMatch(e1)),
        ErrorCode::PreconditionFailed,
        "PUT If-Match with the replaced ETag",
    );
    ok(
        cond_put(c, b, "c/k", b"three", WriteCondition::IfMatch(e2)),
        "PUT If-Match again",
    );
    expect_err(
        cond_put(
            c,
            b,
            "c/none",
            b"x",
            WriteCondition::IfMatch("\"0000\"".into()),
        ),
        ErrorCode::NoSuchKey,
        "PUT If-Match on a missing key",
    );
    expect_err(c.head_object(b, "c/none"), ErrorCode::NoSuchKey, "HEAD");
    // Empty bodies too.
    ok(
        cond_put(c, b, "c/e", b"", WriteCondition::IfNoneMatch),
        "empty PUT If-None-Match",
    );
    expect_err(
        cond_put(c, b, "c/e", b"", WriteCondition::IfNoneMatch),
        ErrorCode::PreconditionFailed,
        "empty PUT If-None-Match again",
    );
}

/// `If-None-Match: ETAG` (what RGW and s3-tests use): the write is refused
/// while the object has that ETag, and goes through for another ETag or a
/// missing key; CompleteMultipartUpload takes it too.
pub(crate) fn conditional_put_none_match_etag(c: &dyn S3Client, b: &str) {
    let e1 = put(c, b, "n/k", b"one");
    let inm = |etag: &str| WriteCondition::IfNoneMatchEtag(etag.to_string());
    let r = cond_put(c, b, "n/k", b"two", inm(&e1));
    if refused(c, &r) {
        assert_content(c, b, "n/k", b"one");
        return;
    }
    expect_err(
        r,
        ErrorCode::PreconditionFailed,
        "PUT If-None-Match: its ETag",
    );
    assert_content(c, b, "n/k", b"one");
    let unquoted = e1.trim_matches('"').to_string();
    expect_err(
        cond_put(c, b, "n/k", b"two", inm(&unquoted)),
        ErrorCode::PreconditionFailed,
        "PUT If-None-Match: its ETag unquoted",
    );
    ok(
        cond_put(c, b, "n/k", b"two", inm("\"0000\"")),
        "PUT If-None-Match: another ETag",
    );
    assert_content(c, b, "n/k", b"two");
    ok(
        cond_put(c, b, "n/new", b"new", inm(&e1)),
        "PUT If-None-Match: ETAG on a missing key",
    );
    assert_content(c, b, "n/new", b"new");

    let id = ok(
        c.create_multipart_upload(b, "n/k", &PutOptions::default()),
        "create upload",
    );
    let parts = [(
        1,
        ok(
            c.upload_part(b, "n/k", &id, 1, PutBody::Bytes(b"mp")),
            "part",
        ),
    )];
    let current = ok(c.head_object(b, "n/k"), "HEAD").etag;
    expect_err(
        c.complete_multipart_upload_if(b, "n/k", &id, &parts, &inm(&current)),
        ErrorCode::PreconditionFailed,
        "complete If-None-Match: the current ETag",
    );
    assert_content(c, b, "n/k", b"two");
    ok(
        c.complete_multipart_upload_if(b, "n/k", &id, &parts, &inm(&e1)),
        "complete If-None-Match: an older ETag",
    );
    assert_content(c, b, "n/k", b"mp");
}

/// CopyObject's destination and CompleteMultipartUpload take the same
/// conditions; a failed completion leaves the upload to finish later.
pub(crate) fn conditional_copy_and_complete(c: &dyn S3Client, b: &str) {
    put(c, b, "src", b"source");
    let dst = put(c, b, "dst", b"dest");
    let r = c.copy_object_if(b, "src", b, "dst", None, &WriteCondition::IfNoneMatch);
    if refused(c, &r) {
        assert_content(c, b, "dst", b"dest");
        return;
    }
    expect_err(r, ErrorCode::PreconditionFailed, "COPY If-None-Match");
    assert_content(c, b, "dst", b"dest");
    expect_err(
        c.copy_object_if(
            b,
            "src",
            b,
            "dst",
            None,
            &WriteCondition::IfMatch("\"0000\"".into()),
        ),
        ErrorCode::PreconditionFailed,
        "COPY If-Match wrong",
    );
    ok(
        c.copy_object_if(b, "src", b, "dst", None, &WriteCondition::IfMatch(dst)),
        "COPY If-Match right",
    );
    assert_content(c, b, "dst", b"source");
    ok(
        c.copy_object_if(b, "src", b, "fresh", None, &WriteCondition::IfNoneMatch),
        "COPY If-None-Match to a new key",
    );

    let id = ok(
        c.create_multipart_upload(b, "mp", &PutOptions::default()),
        "create upload",
    );
    let p1 = ok(
        c.upload_part(b, "mp", &id, 1, PutBody::Bytes(b"part one")),
        "upload part",
    );
    let there = put(c, b, "mp", b"there first");
    let parts = [(1, p1)];
    expect_err(
        c.complete_multipart_upload_if(b, "mp", &id, &parts, &WriteCondition::IfNoneMatch),
        ErrorCode::PreconditionFailed,
        "complete If-None-Match on an existing key",
    );
    assert_content(c, b, "mp", b"there first");
    ok(
        c.complete_multipart_upload_if(b, "mp", &id, &parts, &WriteCondition::IfMatch(there)),
        "complete If-Match after a failed condition",
    );
    assert_content(c, b, "mp", b"part one");
}

/// Two writers racing on one key with the same condition: exactly one
/// wins, the other gets PreconditionFailed, in every one of 50 trials, for
/// If-None-Match and for If-Match.
pub(crate) fn conditional_races(c: &dyn S3Client, b: &str) {
    if refused(
        c,
        &cond_put(c, b, "probe", b"x", WriteCondition::IfNoneMatch),
    ) {
        return;
    }
    for if_match in [false, true] {
        for t in 0..50 {
            let key = format!("race/{if_match}/{t}");
            let cond = if if_match {
                WriteCondition::IfMatch(put(c, b, &key, b"base"))
            } else {
                WriteCondition::IfNoneMatch
            };
            let barrier = std::sync::Barrier::new(2);
            let results: Vec<Result<String>> = std::thread::scope(|sc| {
                let hs: Vec<_> = (0..2u8)
                    .map(|w| {
                        let (barrier, key, cond) = (&barrier, &key, cond.clone());
                        sc.spawn(move || {
                            let body = data(64 << 10, w);
                            barrier.wait();
                            cond_put(c, b, key, &body, cond)
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let won: Vec<usize> = (0..2).filter(|&w| results[w].is_ok()).collect();
            assert_eq!(
                won.len(),
                1,
                "race {t} (If-Match: {if_match}): exactly one writer must win: {results:?}"
            );
            let lost = &results[1 - won[0]];
            assert!(
                matches!(lost, Err(e) if e.code == ErrorCode::PreconditionFailed),
                "race {t}: the loser must get PreconditionFailed: {lost:?}"
            );
            assert_content(c, b, &key, &data(64 << 10, won[0] as u8));
        }
    }
}
