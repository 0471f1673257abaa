//! Details of the HTTP answers that only the REST transport has: headers
//! of conditional answers, listing XML, request framing, browser POSTs.

mod common;

use common::{header, request};
use s3hpc_http::AuthConfig;

/// A 304 carries the validators a cache revalidates against (ETag and
/// Last-Modified), on GET and HEAD, for If-None-Match and If-Modified-Since.
#[test]
fn not_modified_carries_etag_and_last_modified() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    let (st, h, _) = request(addr, "PUT /bkt/k HTTP/1.1\r\n", b"bar");
    assert_eq!(st, 200);
    let etag = header(&h, "etag").unwrap().to_string();
    let (_, h, _) = request(addr, "HEAD /bkt/k HTTP/1.1\r\n", b"");
    let modified = header(&h, "last-modified").unwrap().to_string();
    for method in ["GET", "HEAD"] {
        for cond in [
            format!("If-None-Match: {etag}"),
            format!("If-Modified-Since: {modified}"),
        ] {
            let (st, h, body) = request(
                addr,
                &format!("{method} /bkt/k HTTP/1.1\r\n{cond}\r\n"),
                b"",
            );
            assert_eq!(st, 304, "{method} {cond}");
            assert_eq!(
                header(&h, "etag"),
                Some(etag.as_str()),
                "{method} {cond}: {h}"
            );
            assert_eq!(
                header(&h, "last-modified"),
                Some(modified.as_str()),
                "{method} {cond}"
            );
            assert!(body.is_empty(), "a 304 has no body");
        }
    }
    s.server.shutdown().unwrap();
}
