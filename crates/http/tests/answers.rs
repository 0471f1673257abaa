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

/// An object stored without a Content-Type (or a file put there by POSIX
/// tools) answers S3's default, binary/octet-stream; a stored one, and a
/// response-content-type override of a GET, win.
#[test]
fn content_type_defaults_as_s3_does() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    std::fs::write(s.store.root().join("bkt/posix"), b"x").unwrap();
    assert_eq!(request(addr, "PUT /bkt/k HTTP/1.1\r\n", b"bar").0, 200);
    let typed = "PUT /bkt/t HTTP/1.1\r\nContent-Type: text/csv\r\n";
    assert_eq!(request(addr, typed, b"a,b").0, 200);
    for (path, want) in [
        ("/bkt/k", "binary/octet-stream"),
        ("/bkt/posix", "binary/octet-stream"),
        ("/bkt/t", "text/csv"),
        ("/bkt/k?response-content-type=image/png", "image/png"),
    ] {
        // s3s takes no response-* overrides on HEAD.
        let methods: &[&str] = if path.contains('?') {
            &["GET"]
        } else {
            &["GET", "HEAD"]
        };
        for method in methods {
            let (st, h, _) = request(addr, &format!("{method} {path} HTTP/1.1\r\n"), b"");
            assert_eq!(st, 200, "{method} {path}");
            assert_eq!(header(&h, "content-type"), Some(want), "{method} {path}");
        }
    }
}

/// Listing XML as SDKs read it: each key's Owner in v1 and in v2 with
/// fetch-owner; an empty delimiter is no delimiter and is not echoed;
/// allow-unordered with a delimiter is refused; with encoding-type=url, v2
/// encodes its Prefix (control characters too) and v1 sends it as given.
#[test]
fn listing_details() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    for key in ["a/b", "c"] {
        assert_eq!(
            request(addr, &format!("PUT /bkt/{key} HTTP/1.1\r\n"), b"x").0,
            200
        );
    }
    let list = |query: &str| {
        let (st, _, body) = request(addr, &format!("GET /bkt?{query} HTTP/1.1\r\n"), b"");
        (st, String::from_utf8(body).unwrap())
    };
    let owners = |xml: &str| xml.matches("<Owner>").count();
    let (st, xml) = list("delimiter=");
    assert_eq!((st, owners(&xml)), (200, 2), "{xml}");
    assert!(!xml.contains("<Delimiter>"), "{xml}");
    assert!(xml.contains("<Key>a/b</Key>"), "{xml}");
    let (_, xml) = list("list-type=2");
    assert_eq!(owners(&xml), 0, "{xml}");
    let (_, xml) = list("list-type=2&fetch-owner=true&delimiter=");
    assert_eq!(owners(&xml), 2, "{xml}");
    assert!(!xml.contains("<Delimiter>"), "{xml}");
    for query in [
        "allow-unordered=true&delimiter=/",
        "list-type=2&allow-unordered=true&delimiter=/",
    ] {
        let (st, xml) = list(query);
        assert_eq!(st, 400, "{query}");
        assert!(xml.contains("<Code>InvalidArgument</Code>"), "{xml}");
    }
    assert_eq!(list("allow-unordered=true").0, 200);
    let (_, xml) = list("encoding-type=url&prefix=%0A");
    assert!(xml.contains("<Prefix>\n</Prefix>"), "v1: {xml}");
    let (_, xml) = list("list-type=2&encoding-type=url&prefix=%0A");
    assert!(xml.contains("<Prefix>%0A</Prefix>"), "v2: {xml}");
    s.server.shutdown().unwrap();
}

/// ListBuckets pages: `max-buckets`, the continuation token it answers
/// while more remain, and `prefix`.
#[test]
fn list_buckets_pages() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    for b in ["pa1", "pb1", "qc1"] {
        assert_eq!(request(addr, &format!("PUT /{b} HTTP/1.1\r\n"), b"").0, 200);
    }
    let list = |query: &str| {
        let (st, _, body) = request(addr, &format!("GET /?{query} HTTP/1.1\r\n"), b"");
        assert_eq!(st, 200, "{query}");
        let xml = String::from_utf8(body).unwrap();
        let names: Vec<String> = xml
            .split("<Name>")
            .skip(1)
            .map(|n| n[..n.find("</Name>").unwrap()].to_string())
            .collect();
        let token = xml
            .split_once("<ContinuationToken>")
            .map(|(_, t)| t[..t.find("</ContinuationToken>").unwrap()].to_string());
        (names, token)
    };
    let (names, token) = list("max-buckets=2");
    assert_eq!(
        (names, token.as_deref()),
        (vec!["bkt".into(), "pa1".into()], Some("pa1"))
    );
    let (names, token) = list("max-buckets=2&continuation-token=pa1");
    assert_eq!(
        (names, token),
        (vec!["pb1".to_string(), "qc1".into()], None)
    );
    let (names, token) = list("prefix=p&max-buckets=1&continuation-token=pa1");
    assert_eq!((names, token), (vec!["pb1".to_string()], None));
    assert_eq!(list("").0.len(), 4);
    let (st, _, _) = request(addr, "GET /?max-buckets=0 HTTP/1.1\r\n", b"");
    assert_eq!(st, 400);
    s.server.shutdown().unwrap();
}

/// GetObjectAttributes gives the ETag unquoted, as AWS does (SDKs pass it
/// through), where every other answer quotes it.
#[test]
fn object_attributes_etag_unquoted() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    let (_, h, _) = request(addr, "PUT /bkt/k HTTP/1.1\r\n", b"bar");
    let etag = header(&h, "etag").unwrap().to_string();
    let (st, _, body) = request(
        addr,
        "GET /bkt/k?attributes HTTP/1.1\r\nx-amz-object-attributes: ETag,ObjectSize\r\n",
        b"",
    );
    let xml = String::from_utf8(body).unwrap();
    assert_eq!(st, 200, "{xml}");
    assert!(
        xml.contains(&format!("<ETag>{}</ETag>", etag.trim_matches('"'))),
        "{xml}"
    );
    s.server.shutdown().unwrap();
}

/// A DeleteObjects error names the key and echoes the version asked for
/// (S3 does; s3-tests' clean-up reads `VersionId` of every error).
#[test]
fn delete_objects_error_echoes_the_version() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    let (st, _, _) = request(addr, "PUT /bkt/k HTTP/1.1\r\n", b"bar");
    assert_eq!(st, 200);
    let body = b"<Delete><Object><Key>k</Key><VersionId>null</VersionId>\
<ETag>\"0123456789abcdef0123456789abcdef\"</ETag></Object></Delete>";
    let (st, _, answer) = request(addr, "POST /bkt?delete HTTP/1.1\r\n", body);
    let answer = String::from_utf8_lossy(&answer);
    assert_eq!(st, 200, "{answer}");
    assert!(
        answer.contains("<Error>") && answer.contains("<VersionId>null</VersionId>"),
        "{answer}"
    );
    assert!(answer.contains("PreconditionFailed"), "{answer}");
    let (st, _, _) = request(addr, "HEAD /bkt/k HTTP/1.1\r\n", b"");
    assert_eq!(st, 200, "the object a failed condition names stays");
    s.server.shutdown().unwrap();
}
