//! Checks of the client crate's own helpers and of the errors it reports.

use crate::conditions::{cond_put, refused};
use crate::helpers::*;

/// `read_exact_body` reads a body of exactly the buffer's length and fails
/// with IncompleteBody on any other.
pub(crate) fn read_exact_body_length(c: &dyn S3Client, b: &str) {
    let content = data(4096, 14);
    put(c, b, "k", &content);
    for wrong in [4095, 4097, 0] {
        let mut got = ok(c.get_object(b, "k", None), "GET");
        let mut buf = vec![0; wrong];
        expect_err(
            read_exact_body(&mut got, &mut buf),
            ErrorCode::IncompleteBody,
            &format!("read_exact_body into {wrong} bytes"),
        );
    }
    let mut got = ok(c.get_object(b, "k", None), "GET");
    let mut buf = vec![0; 4096];
    ok(read_exact_body(&mut got, &mut buf), "read_exact_body");
    assert!(buf == content, "read_exact_body: wrong bytes");
    let mut got = ok(
        c.get_object(b, "k", Some(ByteRange::Suffix(100))),
        "GET suffix",
    );
    let mut buf = vec![0; 100];
    ok(
        read_exact_body(&mut got, &mut buf),
        "read_exact_body of a range",
    );
    assert!(
        buf == content[3996..],
        "read_exact_body of a range: wrong bytes"
    );
}

/// The engine's message, not just the code, reaches the caller: for GET
/// and for HEAD (whose HTTP answer has no body) of a missing key, and for
/// a failed write condition.
pub(crate) fn error_messages_reach_the_caller(c: &dyn S3Client, b: &str) {
    let msg = |r: Result<()>, what: &str| match r {
        Ok(()) => panic!("{what}: succeeded, expected an error"),
        Err(e) => e.message,
    };
    let m = msg(c.get_object(b, "gone", None).map(drop), "GET missing");
    assert!(m.contains("no object"), "GET missing key: message {m:?}");
    let m = msg(c.head_object(b, "gone").map(drop), "HEAD missing");
    assert!(m.contains("no object"), "HEAD missing key: message {m:?}");
    put(c, b, "there", b"x");
    let r = cond_put(c, b, "there", b"y", WriteCondition::IfNoneMatch);
    if !refused(c, &r) {
        let m = msg(r.map(drop), "PUT If-None-Match");
        assert!(m.contains("If-None-Match"), "412: message {m:?}");
    }
}
