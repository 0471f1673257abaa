//! Translations between the engine's types and s3s's wire types.

use s3hpc_store::{ByteRange, ObjectHeaders, ObjectInfo, PutOptions, WriteCondition};
use s3s::dto::{self, ETag, ETagCondition, Timestamp};
use s3s::{S3ErrorCode, S3Result};
use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

/// An engine error as s3s's error, which renders the S3 XML error body.
/// Codes S3 does not define (InvalidKey, KeyConflict) keep their name and
/// the engine's status.
pub fn s3_error(e: s3hpc_store::S3Error) -> s3s::S3Error {
    let Ok(code) = e.code.as_str().parse::<S3ErrorCode>();
    let mut out = s3s::S3Error::with_message(code, e.message);
    if let Ok(status) = hyper::StatusCode::from_u16(e.code.http_status()) {
        out.set_status_code(status);
    }
    out
}

/// An error with a code s3s may have no variant for (NoSuchTagSet,
/// AccessForbidden, ...), and the status S3 answers it with.
pub fn coded(code: &str, status: hyper::StatusCode, message: impl Into<String>) -> s3s::S3Error {
    let Ok(code) = code.parse::<S3ErrorCode>();
    let mut e = s3s::S3Error::with_message(code, message.into());
    e.set_status_code(status);
    e
}

/// The version id a write answers with: a suspended bucket's `null` is
/// not announced, as in S3.
pub fn written_version(id: Option<String>) -> Option<String> {
    id.filter(|v| v != s3hpc_store::NULL_VERSION)
}

pub fn etag(quoted: &str) -> ETag {
    ETag::Strong(unquote(quoted).to_string())
}

pub fn unquote(s: &str) -> &str {
    s.trim_matches('"')
}

pub fn quote(s: &str) -> String {
    format!("\"{}\"", unquote(s))
}

pub fn timestamp(t: SystemTime) -> Timestamp {
    Timestamp::from(t)
}

/// A delete's conditions (DeleteObject's `If-Match`,
/// `x-amz-if-match-last-modified-time` and `x-amz-if-match-size`, or a
/// DeleteObjects entry's `ETag`, `LastModifiedTime` and `Size`), and the
/// request's `x-amz-bypass-governance-retention`.
pub fn delete_condition(
    etag: Option<&str>,
    last_modified: Option<Timestamp>,
    size: Option<i64>,
    bypass_governance: Option<bool>,
) -> s3hpc_store::Result<s3hpc_store::DeleteCondition> {
    let size = size
        .map(|n| {
            u64::try_from(n).map_err(|_| {
                s3hpc_store::S3Error::new(
                    s3hpc_store::ErrorCode::InvalidArgument,
                    format!("the size condition {n} is negative"),
                )
            })
        })
        .transpose()?;
    Ok(s3hpc_store::DeleteCondition {
        etag: etag.map(|e| if e == "*" { e.to_string() } else { quote(e) }),
        last_modified: last_modified.map(|t| time::OffsetDateTime::from(t).into()),
        size,
        bypass_governance: bypass_governance.unwrap_or(false),
    })
}

/// The ETag an `If-Match` names, `*` for any.
pub fn if_match_etag(c: &ETagCondition) -> &str {
    match c {
        ETagCondition::Any => "*",
        ETagCondition::ETag(t) => t.value(),
    }
}

pub fn range(r: dto::Range) -> ByteRange {
    match r {
        dto::Range::Int { first, last } => ByteRange::FromTo { first, last },
        dto::Range::Suffix { length } => ByteRange::Suffix(length),
    }
}

/// `bytes=first-last` of UploadPartCopy's `x-amz-copy-source-range`.
pub fn copy_source_range(s: &str) -> S3Result<ByteRange> {
    let bad = || {
        s3s::s3_error!(
            InvalidArgument,
            "x-amz-copy-source-range {s:?} must be bytes=FIRST-LAST"
        )
    };
    let (first, last) = s
        .strip_prefix("bytes=")
        .and_then(|r| r.split_once('-'))
        .ok_or_else(bad)?;
    let first = first.parse().map_err(|_| bad())?;
    let last: u64 = last.parse().map_err(|_| bad())?;
    if last < first {
        return Err(bad());
    }
    Ok(ByteRange::FromTo {
        first,
        last: Some(last),
    })
}

pub fn put_options(content_type: Option<String>, metadata: Option<dto::Metadata>) -> PutOptions {
    PutOptions {
        content_type,
        metadata: metadata
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect::<BTreeMap<_, _>>(),
        ..Default::default()
    }
}

/// The standard headers of a write (PutObject, CreateMultipartUpload,
/// CopyObject with new metadata), each an `Option` field of the s3s input
/// of the same name. `aws-chunked` is framing, not the object's encoding:
/// it is dropped from Content-Encoding, as S3 does.
macro_rules! object_headers {
    ($i:expr) => {
        $crate::convert::headers_of(
            $i.cache_control.clone(),
            $i.content_disposition.clone(),
            $i.content_encoding.clone(),
            $i.content_language.clone(),
            $i.expires.clone(),
        )
    };
}
pub(crate) use object_headers;

pub fn headers_of(
    cache_control: Option<String>,
    content_disposition: Option<String>,
    content_encoding: Option<String>,
    content_language: Option<String>,
    expires: Option<Timestamp>,
) -> ObjectHeaders {
    let content_encoding = content_encoding
        .map(|e| {
            e.split(',')
                .map(str::trim)
                .filter(|e| !e.eq_ignore_ascii_case("aws-chunked") && !e.is_empty())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|e| !e.is_empty());
    ObjectHeaders {
        cache_control,
        content_disposition,
        content_encoding,
        content_language,
        expires: expires.and_then(|t| http_date(&t)),
    }
}

fn http_date(t: &Timestamp) -> Option<String> {
    let mut date = Vec::new();
    t.format(dto::TimestampFormat::HttpDate, &mut date).ok()?;
    String::from_utf8(date).ok()
}

/// The stored standard headers as response headers, each named `prefix`
/// followed by its own name; on GET, `overrides` (the `response-*` query
/// parameters) take the place of stored values. A value that cannot be a
/// header is left out.
pub fn add_object_headers(
    h: &mut hyper::HeaderMap,
    stored: &ObjectHeaders,
    overrides: &ObjectHeaders,
    prefix: &str,
) {
    use hyper::header::{HeaderName, HeaderValue};
    let given: Vec<_> = overrides.iter().collect();
    let stored = stored
        .iter()
        .filter(|(n, _)| !given.iter().any(|(g, _)| g == n));
    for (name, value) in given.iter().copied().chain(stored) {
        if let (Ok(n), Ok(v)) = (
            HeaderName::try_from(format!("{prefix}{name}")),
            HeaderValue::from_str(value),
        ) {
            h.insert(n, v);
        }
    }
}

/// `x-amz-tagging`: tags as a URL query string (`k1=v1&k2=v2`).
pub fn tagging_header(s: Option<&str>) -> S3Result<BTreeMap<String, String>> {
    let mut tags = BTreeMap::new();
    let Some(s) = s.filter(|s| !s.is_empty()) else {
        return Ok(tags);
    };
    for pair in s.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (k, v) = (form_decode(k)?, form_decode(v)?);
        if tags.insert(k.clone(), v).is_some() {
            return Err(s3s::s3_error!(
                InvalidTag,
                "x-amz-tagging names tag {k:?} twice; each key may appear once"
            ));
        }
    }
    Ok(tags)
}

fn form_decode(s: &str) -> S3Result<String> {
    let bad = || {
        s3s::s3_error!(
            InvalidTag,
            "x-amz-tagging {s:?} is not URL-encoded UTF-8 (key=value&key=value)"
        )
    };
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3).ok_or_else(bad)?;
                out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| bad())
}

/// The write condition of PutObject / CompleteMultipartUpload headers.
/// Both at once is not something S3 defines: refused.
pub fn write_condition(
    if_match: Option<&ETagCondition>,
    if_none_match: Option<&ETagCondition>,
) -> S3Result<WriteCondition> {
    match (if_match, if_none_match) {
        (None, None) => Ok(WriteCondition::Always),
        (Some(_), Some(_)) => Err(s3s::s3_error!(
            InvalidArgument,
            "a write takes If-Match or If-None-Match, not both"
        )),
        (Some(ETagCondition::Any), None) => Ok(WriteCondition::IfMatch("*".into())),
        (Some(ETagCondition::ETag(t)), None) => Ok(WriteCondition::IfMatch(quote(t.value()))),
        (None, Some(ETagCondition::Any)) => Ok(WriteCondition::IfNoneMatch),
        (None, Some(ETagCondition::ETag(t))) => {
            Ok(WriteCondition::IfNoneMatchEtag(quote(t.value())))
        }
    }
}

/// The same from raw headers (CopyObject, whose input type in s3s 0.14 has
/// no fields for them).
pub fn write_condition_headers(h: &hyper::HeaderMap) -> S3Result<WriteCondition> {
    let parse = |name: &str| -> S3Result<Option<ETagCondition>> {
        let Some(v) = h.get(name) else {
            return Ok(None);
        };
        let v = v
            .to_str()
            .map_err(|_| s3s::s3_error!(InvalidArgument, "{name} is not ASCII"))?
            .trim();
        Ok(Some(if v == "*" {
            ETagCondition::Any
        } else {
            ETagCondition::ETag(ETag::Strong(
                unquote(v.trim_start_matches("W/")).to_string(),
            ))
        }))
    };
    write_condition(
        parse("if-match")?.as_ref(),
        parse("if-none-match")?.as_ref(),
    )
}

/// What the client of a CopyObject or CompleteMultipartUpload would
/// otherwise HEAD for (a stat and a getxattr here): the written object's
/// size, content type, time, metadata, standard headers and tag count, as
/// headers beside the XML answer (`x-s3hpc-object-size`,
/// `x-s3hpc-content-type` and `x-s3hpc-` + a standard header's name, the
/// rest named as on a HEAD). `HttpClient` reads them; other clients ignore
/// them. Empty when a value cannot be a header, and the client then HEADs.
pub fn written_headers(info: &ObjectInfo) -> hyper::HeaderMap {
    use hyper::header::{HeaderName, HeaderValue};
    let mut h = hyper::HeaderMap::new();
    let mut date = Vec::new();
    let ok = timestamp(info.last_modified)
        .format(dto::TimestampFormat::HttpDate, &mut date)
        .is_ok();
    let mut add = |name: &str, value: &[u8]| match (
        HeaderName::try_from(name),
        HeaderValue::from_bytes(value),
    ) {
        (Ok(n), Ok(v)) => {
            h.insert(n, v);
            true
        }
        _ => false,
    };
    let mut ok = ok && add("last-modified", &date);
    ok &= info
        .content_type
        .as_ref()
        .is_none_or(|t| add("x-s3hpc-content-type", t.as_bytes()));
    for (k, v) in &info.metadata {
        ok &= add(&format!("x-amz-meta-{k}"), v.as_bytes());
    }
    // Prefixed: a Content-Encoding on the answer would describe its XML.
    for (k, v) in info.headers.iter() {
        ok &= add(&format!("x-s3hpc-{k}"), v.as_bytes());
    }
    if info.tag_count > 0 {
        ok &= add("x-amz-tagging-count", info.tag_count.to_string().as_bytes());
    }
    // Last: the client takes the answer as complete only with the size.
    ok &= add("x-s3hpc-object-size", info.size.to_string().as_bytes());
    if !ok {
        h.clear();
    }
    h
}

pub fn metadata(info: &ObjectInfo) -> Option<dto::Metadata> {
    (!info.metadata.is_empty()).then(|| info.metadata.clone().into_iter().collect())
}

fn whole_seconds(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

fn matches(cond: &ETagCondition, info: &ObjectInfo) -> bool {
    match cond {
        ETagCondition::Any => true,
        ETagCondition::ETag(t) => t.value() == unquote(&info.etag),
    }
}

/// The four HTTP preconditions of GET and HEAD, in RFC 9110's order:
/// If-Match, else If-Unmodified-Since (412); If-None-Match, else
/// If-Modified-Since (304). Dates compare in whole seconds, as HTTP sends them.
pub fn check_preconditions(
    info: &ObjectInfo,
    if_match: Option<&ETagCondition>,
    if_none_match: Option<&ETagCondition>,
    if_modified_since: Option<&Timestamp>,
    if_unmodified_since: Option<&Timestamp>,
) -> S3Result<()> {
    let modified = whole_seconds(info.last_modified);
    let secs = |t: &Timestamp| time::OffsetDateTime::from(t.clone()).unix_timestamp();
    let failed = match (if_match, if_unmodified_since) {
        (Some(c), _) => !matches(c, info),
        (None, Some(t)) => modified > secs(t),
        (None, None) => false,
    };
    if failed {
        return Err(s3s::s3_error!(
            PreconditionFailed,
            "{} does not meet the If-Match / If-Unmodified-Since condition",
            info.key
        ));
    }
    let not_modified = match (if_none_match, if_modified_since) {
        (Some(c), _) => matches(c, info),
        (None, Some(t)) => modified <= secs(t),
        (None, None) => false,
    };
    if not_modified {
        return Err(not_modified_answer(info));
    }
    Ok(())
}

/// 304 Not Modified with the validators a cache revalidates against: the
/// ETag and Last-Modified of the object it already holds (RFC 9110 15.4.5).
fn not_modified_answer(info: &ObjectInfo) -> s3s::S3Error {
    use hyper::header::{HeaderValue, ETAG, LAST_MODIFIED};
    let mut e = s3s::s3_error!(NotModified);
    let mut h = hyper::HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&quote(&info.etag)) {
        h.insert(ETAG, v);
    }
    let date = http_date(&timestamp(info.last_modified));
    if let Some(v) = date.and_then(|d| HeaderValue::from_str(&d).ok()) {
        h.insert(LAST_MODIFIED, v);
    }
    e.set_headers(h);
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use s3hpc_store::ErrorCode;

    #[test]
    fn engine_errors_keep_code_and_status() {
        let e = s3_error(s3hpc_store::S3Error::new(ErrorCode::NoSuchKey, "k"));
        assert_eq!(*e.code(), S3ErrorCode::NoSuchKey);
        assert_eq!(e.status_code().map(|s| s.as_u16()), Some(404));
        let e = s3_error(s3hpc_store::S3Error::new(ErrorCode::KeyConflict, "k"));
        assert_eq!(e.code().as_str(), "KeyConflict");
        assert_eq!(e.status_code().map(|s| s.as_u16()), Some(409));
    }

    #[test]
    fn url_encoding_and_copy_ranges() {
        assert_eq!(
            copy_source_range("bytes=2-5").unwrap(),
            ByteRange::FromTo {
                first: 2,
                last: Some(5)
            }
        );
        assert!(copy_source_range("bytes=5-2").is_err());
        assert!(copy_source_range("2-5").is_err());
    }
}
