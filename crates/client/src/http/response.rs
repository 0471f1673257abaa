//! Reading answers: S3 errors, object headers, timestamps.

use super::xml;
use s3hpc_store::{ErrorCode, ObjectHeaders, ObjectInfo, Result, S3Error};
use std::time::SystemTime;
use ureq::http::{HeaderMap, Response, StatusCode};

/// The S3 error an answer carries: its `<Code>` (or, for a HEAD, which has
/// no body, the `x-amz-error-code` header s3hpc sends), else a code that
/// fits the status. Codes the engine does not know (SignatureDoesNotMatch,
/// InvalidAccessKeyId, ...) keep their name in the message.
pub fn error_for(
    what: &str,
    status: StatusCode,
    headers: &HeaderMap,
    body: &str,
    is_object: bool,
) -> S3Error {
    let doc = xml::parse::<xml::ErrorDoc>(body, format_args!("{what}")).ok();
    let (code, message) = doc.map_or((None, None), |d| (d.code, d.message));
    let wire = code.or_else(|| {
        headers
            .get("x-amz-error-code")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    });
    // A HEAD answer has no body: s3hpc sends the message in a header too.
    let message = message
        .or_else(|| {
            headers
                .get("x-amz-error-message")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        })
        .unwrap_or_default();
    if let Some(code) = wire.as_deref().and_then(ErrorCode::from_wire) {
        return S3Error::new(code, format!("{what}: {message}"));
    }
    let code = match status.as_u16() {
        404 if is_object => ErrorCode::NoSuchKey,
        404 => ErrorCode::NoSuchBucket,
        403 => ErrorCode::AccessDenied,
        412 => ErrorCode::PreconditionFailed,
        416 => ErrorCode::InvalidRange,
        501 => ErrorCode::NotImplemented,
        507 => ErrorCode::InsufficientStorage,
        400..=499 => ErrorCode::InvalidArgument,
        _ => ErrorCode::InternalError,
    };
    let named = wire.unwrap_or_else(|| format!("HTTP {status}"));
    S3Error::new(code, format!("{what}: {named}: {message}"))
}

fn header<'a>(resp: &'a Response<ureq::Body>, name: &str) -> Option<&'a str> {
    get(resp.headers(), name)
}

fn get<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The quoted ETag of an answer.
pub fn etag(resp: &Response<ureq::Body>) -> Result<String> {
    let e = header(resp, "etag")
        .ok_or_else(|| S3Error::new(ErrorCode::InternalError, "the answer has no ETag header"))?;
    Ok(quoted(e))
}

fn quoted(etag: &str) -> String {
    let inner = etag.trim_matches('"');
    let mut out = String::with_capacity(inner.len() + 2);
    out.push('"');
    out.push_str(inner);
    out.push('"');
    out
}

/// HEAD or GET headers as an `ObjectInfo` (size is Content-Length).
pub fn object_info(key: &str, resp: &Response<ureq::Body>) -> Result<ObjectInfo> {
    let size = header(resp, "content-length").and_then(|v| v.parse().ok());
    let content_type = header(resp, "content-type");
    info_from(key, etag(resp)?, size, content_type, resp.headers(), "")
}

/// The object a CopyObject or CompleteMultipartUpload just wrote, from the
/// headers s3hpc's server adds to those answers (`x-s3hpc-object-size`,
/// `x-s3hpc-content-type`, and Last-Modified, `x-amz-meta-*` and
/// `x-amz-tagging-count` as on a HEAD), so the client needs no HEAD (a
/// stat and a getxattr on the server) to return it. `None` from servers
/// that do not send them: the caller then asks with HEAD.
pub fn written_info(key: &str, etag: &str, headers: &HeaderMap) -> Result<Option<ObjectInfo>> {
    let Some(size) = get(headers, "x-s3hpc-object-size").and_then(|v| v.parse().ok()) else {
        return Ok(None);
    };
    let content_type = get(headers, "x-s3hpc-content-type");
    info_from(
        key,
        quoted(etag),
        Some(size),
        content_type,
        headers,
        "x-s3hpc-",
    )
    .map(Some)
}

/// `prefix`: what precedes the standard headers' names (Cache-Control, ...).
fn info_from(
    key: &str,
    etag: String,
    size: Option<u64>,
    content_type: Option<&str>,
    headers: &HeaderMap,
    prefix: &str,
) -> Result<ObjectInfo> {
    let mut standard = ObjectHeaders::default();
    for (k, v) in headers {
        let name = k.as_str().strip_prefix(prefix);
        if let Some(field) = name.and_then(|n| standard.field_mut(n)) {
            *field = v.to_str().ok().map(str::to_string);
        }
    }
    let metadata = headers
        .iter()
        .filter_map(|(k, v)| {
            let name = k.as_str().strip_prefix("x-amz-meta-")?;
            Some((name.to_string(), v.to_str().ok()?.to_string()))
        })
        .collect();
    Ok(ObjectInfo {
        key: key.to_string(),
        size: size.unwrap_or(0),
        last_modified: parse_time(get(headers, "last-modified").unwrap_or_default())?,
        etag,
        content_type: content_type.map(str::to_string),
        metadata,
        checksum: None,
        tag_count: get(headers, "x-amz-tagging-count")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        headers: standard,
        owner: None,
        version_id: get(headers, "x-amz-version-id").map(str::to_string),
        lock: lock_from(headers),
    })
}

/// The `x-amz-object-lock-*` headers of a GET or HEAD.
fn lock_from(headers: &HeaderMap) -> s3hpc_store::ObjectLockState {
    let mode = get(headers, "x-amz-object-lock-mode").and_then(s3hpc_store::LockMode::parse);
    let until =
        get(headers, "x-amz-object-lock-retain-until-date").and_then(|t| parse_time(t).ok());
    s3hpc_store::ObjectLockState {
        retention: mode
            .zip(until)
            .map(|(mode, until)| s3hpc_store::Retention { mode, until }),
        legal_hold: get(headers, "x-amz-object-lock-legal-hold").map(|h| h == "ON"),
    }
}

/// ISO 8601 (listings; starts with the year) or an HTTP date
/// (Last-Modified; starts with the day's name). Each is parsed only as
/// what it looks like: a failed parse builds an error, which cost a HEAD
/// more than the parse.
pub fn parse_time(s: &str) -> Result<SystemTime> {
    let ts = if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.parse::<jiff::Timestamp>()
    } else {
        jiff::fmt::rfc2822::DateTimeParser::new().parse_timestamp(s)
    };
    ts.map(SystemTime::from).map_err(|e| {
        S3Error::new(
            ErrorCode::InternalError,
            format!("unreadable timestamp {s:?} in the answer: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_and_errors() {
        let a = parse_time("2026-11-21T22:29:55.000Z").unwrap();
        let b = parse_time("Sat, 21 Nov 2026 22:29:55 GMT").unwrap();
        assert_eq!(a, b);
        assert!(parse_time("yesterday").is_err());
        let body = "<Error><Code>NoSuchBucket</Code><Message>gone</Message></Error>";
        let e = error_for(
            "GET b",
            StatusCode::NOT_FOUND,
            &HeaderMap::new(),
            body,
            true,
        );
        assert_eq!(e.code, ErrorCode::NoSuchBucket);
        let body = "<Error><Code>SignatureDoesNotMatch</Code><Message>no</Message></Error>";
        let e = error_for(
            "GET b",
            StatusCode::FORBIDDEN,
            &HeaderMap::new(),
            body,
            true,
        );
        assert_eq!(e.code, ErrorCode::AccessDenied);
        assert!(e.message.contains("SignatureDoesNotMatch"), "{e}");
        let e = error_for(
            "HEAD b/k",
            StatusCode::NOT_FOUND,
            &HeaderMap::new(),
            "",
            true,
        );
        assert_eq!(e.code, ErrorCode::NoSuchKey);
    }
}
