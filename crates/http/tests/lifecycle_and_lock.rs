//! Lifecycle rules and object lock: a malformed request is answered with
//! S3's 400 first, what s3hpc cannot do (transitions) is refused with the
//! reason, and the rest is kept, served and enforced.

mod common;

use common::request;
use s3hpc_http::AuthConfig;

fn code(body: &[u8]) -> String {
    let xml = String::from_utf8_lossy(body);
    let from = xml.find("<Code>").map(|i| i + 6).unwrap_or(0);
    let to = xml.find("</Code>").unwrap_or(from);
    xml[from..to].to_string()
}

fn lifecycle(rules: &str) -> Vec<u8> {
    format!("<LifecycleConfiguration>{rules}</LifecycleConfiguration>").into_bytes()
}

fn rule(id: &str, status: &str, expiration: &str) -> String {
    format!(
        "<Rule><ID>{id}</ID><Filter><Prefix>p/</Prefix></Filter><Status>{status}</Status>\
         <Expiration>{expiration}</Expiration></Rule>"
    )
}

#[test]
fn lifecycle_is_validated_then_kept() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    let put = |body: Vec<u8>| {
        let (st, _, b) = request(addr, "PUT /bkt?lifecycle HTTP/1.1\r\n", &body);
        (st, code(&b))
    };
    let days = "<Days>2</Days>";
    let cases = [
        (rule(&"a".repeat(256), "Enabled", days), "InvalidArgument"),
        (
            rule("r", "Enabled", days) + &rule("r", "Enabled", days),
            "InvalidArgument",
        ),
        (rule("r", "enabled", days), "MalformedXML"),
        (
            rule("r", "Enabled", "<Date>2030-01-01T03:28:21Z</Date>"),
            "InvalidArgument",
        ),
    ];
    for (rules, want) in cases {
        assert_eq!(put(lifecycle(&rules)), (400, want.to_string()), "{rules}");
    }
    let (st, _, b) = request(addr, "GET /bkt?lifecycle HTTP/1.1\r\n", b"");
    assert_eq!(
        (st, code(&b).as_str()),
        (404, "NoSuchLifecycleConfiguration")
    );
    let transition = "<Rule><ID>t</ID><Filter/><Status>Enabled</Status><Transition>\
                      <Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>";
    assert_eq!(
        put(lifecycle(transition)),
        (501, "NotImplemented".to_string())
    );
    let fine = rule("r", "Enabled", "<Date>2030-01-01T00:00:00Z</Date>");
    assert_eq!(put(lifecycle(&fine)).0, 200);
    let (st, _, b) = request(addr, "GET /bkt?lifecycle HTTP/1.1\r\n", b"");
    assert_eq!(st, 200);
    let xml = String::from_utf8_lossy(&b);
    assert!(
        xml.contains("<ID>r</ID>") && xml.contains("<Prefix>p/</Prefix>"),
        "{xml}"
    );
    assert_eq!(
        request(addr, "DELETE /bkt?lifecycle HTTP/1.1\r\n", b"").0,
        204
    );
    assert_eq!(request(addr, "GET /bkt?lifecycle HTTP/1.1\r\n", b"").0, 404);
    s.server.shutdown().unwrap();
}

#[test]
fn object_lock_is_validated_then_served() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    let call = |head: &str, body: &str| {
        let (st, _, b) = request(addr, head, body.as_bytes());
        (st, code(&b))
    };
    let lock = |enabled: &str, retention: &str| {
        format!(
            "<ObjectLockConfiguration><ObjectLockEnabled>{enabled}</ObjectLockEnabled><Rule>\
             <DefaultRetention>{retention}</DefaultRetention></Rule></ObjectLockConfiguration>"
        )
    };
    let put_lock = "PUT /bkt?object-lock HTTP/1.1\r\n";
    for (body, want) in [
        (
            lock("Enabled", "<Mode>abc</Mode><Days>1</Days>"),
            (400, "MalformedXML"),
        ),
        (
            lock("Disabled", "<Mode>GOVERNANCE</Mode><Days>1</Days>"),
            (400, "MalformedXML"),
        ),
        (
            lock(
                "Enabled",
                "<Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years>",
            ),
            (400, "MalformedXML"),
        ),
        (
            lock("Enabled", "<Mode>GOVERNANCE</Mode><Days>0</Days>"),
            (400, "InvalidRetentionPeriod"),
        ),
        (
            lock("Enabled", "<Mode>COMPLIANCE</Mode><Years>1</Years>"),
            (409, "InvalidBucketState"),
        ),
    ] {
        assert_eq!(
            call(put_lock, &body),
            (want.0, want.1.to_string()),
            "{body}"
        );
    }
    assert_eq!(request(addr, "PUT /bkt/k HTTP/1.1\r\n", b"x").0, 200);
    let retention = |mode: &str| {
        format!("<Retention><Mode>{mode}</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>")
    };
    let put_retention = "PUT /bkt/k?retention HTTP/1.1\r\n";
    assert_eq!(
        call(put_retention, &retention("governance")),
        (400, "MalformedXML".into())
    );
    assert_eq!(
        call(put_retention, &retention("GOVERNANCE")),
        (400, "InvalidRequest".into())
    );
    let hold = |status: &str| format!("<LegalHold><Status>{status}</Status></LegalHold>");
    let put_hold = "PUT /bkt/k?legal-hold HTTP/1.1\r\n";
    assert_eq!(call(put_hold, &hold("abc")), (400, "MalformedXML".into()));
    assert_eq!(call(put_hold, &hold("ON")), (400, "InvalidRequest".into()));
    for get in [
        "GET /bkt/k?retention HTTP/1.1\r\n",
        "GET /bkt/k?legal-hold HTTP/1.1\r\n",
    ] {
        assert_eq!(call(get, ""), (400, "InvalidRequest".into()), "{get}");
    }
    // A bucket made with object lock: versioned, and its locked versions
    // stay until a bypass removes them.
    let (st, _, _) = request(
        addr,
        "PUT /locked HTTP/1.1\r\nx-amz-bucket-object-lock-enabled: true\r\n",
        b"",
    );
    assert_eq!(st, 200);
    let (st, _, b) = request(addr, "GET /locked?object-lock HTTP/1.1\r\n", b"");
    assert_eq!(st, 200);
    assert!(String::from_utf8_lossy(&b).contains("<ObjectLockEnabled>Enabled</ObjectLockEnabled>"));
    let suspend = "<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>";
    assert_eq!(
        call("PUT /locked?versioning HTTP/1.1\r\n", suspend),
        (409, "InvalidBucketState".into())
    );
    let (st, headers, _) = request(
        addr,
        "PUT /locked/k HTTP/1.1\r\nx-amz-object-lock-mode: GOVERNANCE\r\n\
         x-amz-object-lock-retain-until-date: 2099-01-01T00:00:00Z\r\n",
        b"kept",
    );
    assert_eq!(st, 200);
    let version = headers
        .lines()
        .find_map(|l| l.strip_prefix("x-amz-version-id: "))
        .expect("a version id")
        .trim()
        .to_string();
    let delete = format!("DELETE /locked/k?versionId={version} HTTP/1.1\r\n");
    assert_eq!(call(&delete, ""), (403, "AccessDenied".into()));
    let (st, headers, _) = request(addr, "HEAD /locked/k HTTP/1.1\r\n", b"");
    assert_eq!(st, 200);
    assert!(
        headers.contains("x-amz-object-lock-mode: GOVERNANCE"),
        "{headers}"
    );
    let bypass = format!(
        "DELETE /locked/k?versionId={version} HTTP/1.1\r\nx-amz-bypass-governance-retention: true\r\n"
    );
    assert_eq!(request(addr, &bypass, b"").0, 204);
    assert_eq!(request(addr, "HEAD /locked/k HTTP/1.1\r\n", b"").0, 404);
    s.server.shutdown().unwrap();
}

/// Operations newer than the router (RenameObject, annotations, S3
/// Metadata) would fall through to PutObject, DeleteObject or DeleteBucket
/// on the same path; they are refused, and the data stays as it was.
#[test]
fn newer_operations_are_refused_and_change_nothing() {
    let s = common::serve(AuthConfig::Anonymous);
    let addr = s.server.addr();
    assert_eq!(
        request(addr, "PUT /bkt/dst HTTP/1.1\r\n", b"precious").0,
        200
    );
    assert_eq!(request(addr, "PUT /empty HTTP/1.1\r\n", b"").0, 200);
    for (req, body) in [
        (
            "PUT /bkt/dst?renameObject HTTP/1.1\r\nx-amz-rename-source: src\r\n",
            &b""[..],
        ),
        (
            "PUT /bkt/dst?annotation&annotationName=a HTTP/1.1\r\n",
            b"{}",
        ),
        (
            "PUT /bkt/dst?encryption HTTP/1.1\r\n",
            b"<ObjectEncryption/>",
        ),
        (
            "DELETE /bkt/dst?annotation&annotationName=a HTTP/1.1\r\n",
            b"",
        ),
        ("DELETE /empty?metadataConfiguration HTTP/1.1\r\n", b""),
        ("GET /bkt?abac HTTP/1.1\r\n", b""),
        (
            "PUT /bkt/dst HTTP/1.1\r\nx-amz-server-side-encryption-customer-algorithm: AES256\r\n",
            b"clear",
        ),
        (
            "PUT /bkt/dst HTTP/1.1\r\nx-amz-object-lock-mode: COMPLIANCE\r\n\
             x-amz-object-lock-retain-until-date: 2099-01-01T00:00:00Z\r\n",
            b"unlocked",
        ),
    ] {
        let (st, _, b) = request(addr, req, body);
        assert!(st == 501 || st == 400, "{req}: {st}");
        let c = code(&b);
        assert!(c == "NotImplemented" || c == "InvalidRequest", "{req}: {c}");
    }
    let (st, _, body) = request(addr, "GET /bkt/dst HTTP/1.1\r\n", b"");
    assert_eq!((st, body.as_slice()), (200, &b"precious"[..]));
    assert_eq!(request(addr, "HEAD /empty HTTP/1.1\r\n", b"").0, 200);
    s.server.shutdown().unwrap();
}
