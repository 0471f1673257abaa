//! The bucket configurations s3hpc keeps (on the bucket's directory).
//! Tags: validated, kept, given back and removed.
//! CORS: a bucket's rules are validated, kept and given back; a preflight
//! is answered by the first rule that allows its origin, method and
//! headers; a browser's request gets the Access-Control headers of the rule
//! that allows it, on errors too; without rules nothing is allowed.

mod common;

use common::{header, request};
use s3hpc_http::AuthConfig;
use std::net::SocketAddr;

fn code(body: &[u8]) -> String {
    let xml = String::from_utf8_lossy(body);
    let from = xml.find("<Code>").map(|i| i + 6).unwrap_or(0);
    let to = xml.find("</Code>").unwrap_or(from);
    xml[from..to].to_string()
}

fn rule(methods: &[&str], origins: &[&str], extra: &str) -> String {
    let m: String = methods
        .iter()
        .map(|m| format!("<AllowedMethod>{m}</AllowedMethod>"))
        .collect();
    let o: String = origins
        .iter()
        .map(|o| format!("<AllowedOrigin>{o}</AllowedOrigin>"))
        .collect();
    format!("<CORSRule>{m}{o}{extra}</CORSRule>")
}

fn put_cors(addr: SocketAddr, rules: &[String]) -> (u16, String) {
    let body = format!("<CORSConfiguration>{}</CORSConfiguration>", rules.concat());
    let (s, _, b) = request(addr, "PUT /bkt?cors HTTP/1.1\r\n", body.as_bytes());
    (s, code(&b))
}

/// Status, Access-Control-Allow-Origin and -Methods of a request.
fn ask(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    let (s, h, _) = request(addr, &format!("{method} {path} HTTP/1.1\r\n{extra}"), b"");
    let allowed = format!(
        "{} {}",
        header(&h, "access-control-allow-origin").unwrap_or("-"),
        header(&h, "access-control-allow-methods").unwrap_or("-")
    );
    (s, allowed)
}

#[test]
fn rules_are_validated_kept_and_removed() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    let (st, _, b) = request(addr, "GET /bkt?cors HTTP/1.1\r\n", b"");
    assert_eq!((st, code(&b)), (404, "NoSuchCORSConfiguration".into()));

    // Refused as S3 refuses them, and nothing is kept.
    let refused = [
        (vec![rule(&["PATCH"], &["*"], "")], "InvalidRequest"),
        (vec![rule(&["GET"], &["a*b*c"], "")], "InvalidRequest"),
        (
            vec![rule(&["GET"], &["*"], "<AllowedHeader>*a*</AllowedHeader>")],
            "InvalidRequest",
        ),
        (vec![], "MalformedXML"),
        (vec![rule(&["GET"], &["*"], ""); 101], "MalformedXML"),
    ];
    for (rules, want) in refused {
        assert_eq!(put_cors(addr, &rules), (400, want.to_string()), "{rules:?}");
    }
    let (st, _, b) = request(addr, "GET /bkt?cors HTTP/1.1\r\n", b"");
    assert_eq!((st, code(&b)), (404, "NoSuchCORSConfiguration".into()));

    let rules = [
        rule(
            &["GET", "PUT"],
            &["*.example"],
            "<MaxAgeSeconds>30</MaxAgeSeconds>",
        ),
        rule(
            &["DELETE"],
            &["https://admin"],
            "<ExposeHeader>ETag</ExposeHeader>",
        ),
    ];
    assert_eq!(put_cors(addr, &rules).0, 200);
    let (st, _, b) = request(addr, "GET /bkt?cors HTTP/1.1\r\n", b"");
    let xml = String::from_utf8_lossy(&b);
    assert_eq!(st, 200, "{xml}");
    for part in [
        "<AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>",
        "<AllowedOrigin>*.example</AllowedOrigin>",
        "<MaxAgeSeconds>30</MaxAgeSeconds>",
        "<ExposeHeader>ETag</ExposeHeader>",
    ] {
        assert!(xml.contains(part), "{part} missing from {xml}");
    }

    let (st, _, _) = request(addr, "DELETE /bkt?cors HTTP/1.1\r\n", b"");
    assert_eq!(st, 204);
    let (st, _, b) = request(addr, "GET /bkt?cors HTTP/1.1\r\n", b"");
    assert_eq!((st, code(&b)), (404, "NoSuchCORSConfiguration".into()));
    // On a bucket that is not there: NoSuchBucket, not a configuration.
    let (st, _, b) = request(
        addr,
        "PUT /nobkt?cors HTTP/1.1\r\n",
        b"<CORSConfiguration/>",
    );
    assert_eq!(st / 100, 4, "{}", String::from_utf8_lossy(&b));
}

#[test]
fn preflights_and_browser_requests_follow_the_rules() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    let o = |origin: &'static str, method: &'static str| {
        [
            ("Origin", origin),
            ("Access-Control-Request-Method", method),
        ]
    };
    // No rules: a preflight is refused, a request gets no CORS headers.
    assert_eq!(ask(addr, "OPTIONS", "/bkt/k", &o("x", "GET")).0, 403);
    assert_eq!(
        ask(addr, "GET", "/bkt", &[("Origin", "x")]),
        (200, "- -".into())
    );

    let rules = [
        rule(&["GET"], &["start*end"], ""),
        rule(
            &["PUT"],
            &["*.put"],
            "<AllowedHeader>x-amz-*</AllowedHeader>",
        ),
        rule(&["GET"], &["*"], ""),
    ];
    assert_eq!(put_cors(addr, &rules).0, 200);

    // A preflight needs Origin and the method.
    assert_eq!(ask(addr, "OPTIONS", "/bkt/k", &[]).0, 400);
    assert_eq!(
        ask(addr, "OPTIONS", "/bkt/k", &[("Origin", "a.put")]).0,
        400
    );
    assert_eq!(
        ask(addr, "OPTIONS", "/bkt/k", &o("startend", "GET")),
        (200, "startend GET".into())
    );
    assert_eq!(
        ask(addr, "OPTIONS", "/bkt/k", &o("a.put", "PUT")),
        (200, "a.put PUT".into())
    );
    // The wildcard origin answers "*".
    assert_eq!(
        ask(addr, "OPTIONS", "/bkt", &o("other", "GET")),
        (200, "* GET".into())
    );
    assert_eq!(ask(addr, "OPTIONS", "/bkt", &o("other", "DELETE")).0, 403);
    // Every requested header must be allowed.
    let with = |h: &'static str| {
        [
            ("Origin", "a.put"),
            ("Access-Control-Request-Method", "PUT"),
            ("Access-Control-Request-Headers", h),
        ]
    };
    assert_eq!(
        ask(addr, "OPTIONS", "/bkt/k", &with("x-amz-date, X-Amz-Meta-A")).0,
        200
    );
    assert_eq!(
        ask(
            addr,
            "OPTIONS",
            "/bkt/k",
            &with("x-amz-date, authorization")
        )
        .0,
        403
    );
    assert_eq!(
        ask(addr, "OPTIONS", "/nobkt/k", &o("startend", "GET")).0 / 100,
        4
    );

    // A browser's request: the headers of the first rule that allows it,
    // on an error answer too; none for an origin no rule allows.
    assert_eq!(
        ask(addr, "GET", "/bkt/missing", &[("Origin", "start1end")]),
        (404, "start1end GET".into())
    );
    assert_eq!(
        ask(addr, "GET", "/bkt", &[("Origin", "elsewhere")]),
        (200, "* GET".into())
    );
    let (st, h, _) = request(addr, "PUT /bkt/k HTTP/1.1\r\nOrigin: a.put\r\n", b"body");
    assert_eq!(st, 200);
    assert_eq!(header(&h, "access-control-allow-origin"), Some("a.put"));
    assert_eq!(header(&h, "access-control-allow-credentials"), Some("true"));
    assert_eq!(
        ask(addr, "DELETE", "/bkt/k", &[("Origin", "a.put")]),
        (204, "- -".into())
    );
}

#[test]
fn bucket_tags_are_validated_kept_and_removed() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    let get = || {
        let (st, _, b) = request(addr, "GET /bkt?tagging HTTP/1.1\r\n", b"");
        (st, String::from_utf8_lossy(&b).into_owned())
    };
    let put = |tags: &[(String, String)]| {
        let set: String = tags
            .iter()
            .map(|(k, v)| format!("<Tag><Key>{k}</Key><Value>{v}</Value></Tag>"))
            .collect();
        let body = format!("<Tagging><TagSet>{set}</TagSet></Tagging>");
        let (st, _, b) = request(addr, "PUT /bkt?tagging HTTP/1.1\r\n", body.as_bytes());
        (st, code(&b))
    };
    let (st, body) = get();
    assert_eq!((st, code(body.as_bytes())), (404, "NoSuchTagSet".into()));
    let tag = |k: &str, v: &str| (k.to_string(), v.to_string());
    // 51 tags, a key twice, a key too long: refused, nothing kept.
    let many: Vec<_> = (0..51).map(|i| tag(&format!("k{i}"), "v")).collect();
    assert_eq!(put(&many), (400, "InvalidTag".into()));
    assert_eq!(
        put(&[tag("a", "1"), tag("a", "2")]),
        (400, "InvalidTag".into())
    );
    assert_eq!(
        put(&[tag(&"k".repeat(129), "v")]),
        (400, "InvalidTag".into())
    );
    assert_eq!(get().0, 404);

    let fifty: Vec<_> = (0..50).map(|i| tag(&format!("k{i}"), "v")).collect();
    assert_eq!(put(&fifty).0, 200);
    assert_eq!(put(&[tag("project", "climate"), tag("cost", "42")]).0, 200);
    let (st, body) = get();
    assert_eq!(st, 200, "{body}");
    assert!(
        body.contains("<Key>cost</Key><Value>42</Value>")
            && body.contains("<Key>project</Key><Value>climate</Value>")
            && !body.contains("<Key>k0</Key>"),
        "a put replaces the whole set: {body}"
    );
    let (st, _, _) = request(addr, "DELETE /bkt?tagging HTTP/1.1\r\n", b"");
    assert_eq!(st, 204);
    assert_eq!(get().0, 404);
}
