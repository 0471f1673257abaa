//! Presigned GET URLs with the query-string form of SigV2, the only
//! signature libs3 2.0 knows (`S3_generate_authenticated_query_string`).
//! Only HTTP hosts have URLs; the others answer not-supported.

use super::{Failure, Target};
use base64::Engine;
use hmac::{KeyInit, Mac};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// What S3 leaves unescaped in a key: unreserved characters and `/`.
const KEY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');
/// Query values escape everything but unreserved characters.
const VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A presigned URL for `bucket/key`, valid until `expires` (seconds since
/// the epoch; negative: as late as SigV2 allows). `subresource` (like
/// `acl`) is appended as libs3 does.
pub fn presigned_url(
    target: &Target,
    virtual_host: bool,
    bucket: &str,
    key: Option<&str>,
    expires: i64,
    subresource: Option<&str>,
) -> Result<String, Failure> {
    let host = target.effective_host();
    if host.starts_with("file:")
        || host.starts_with("unix:")
        || host.starts_with("s3hpc:")
        || host.starts_with("tcp:")
    {
        return Err(Failure::NotSupported("a presigned URL for a non-HTTP host"));
    }
    let (scheme, authority) = match host.split_once("://") {
        Some((s, a)) => (s.to_string(), a.trim_end_matches('/').to_string()),
        None => (
            (if target.https { "https" } else { "http" }).to_string(),
            host.clone(),
        ),
    };
    let expires = if expires < 0 {
        i32::MAX as i64
    } else {
        expires
    };
    let key = utf8_percent_encode(key.unwrap_or(""), KEY).to_string();
    let sub = subresource.filter(|s| !s.is_empty());
    let resource = format!(
        "/{bucket}/{key}{}",
        sub.map_or(String::new(), |s| format!("?{s}"))
    );
    let to_sign = format!("GET\n\n\n{expires}\n{resource}");
    let mut mac = hmac::Hmac::<sha1::Sha1>::new_from_slice(target.secret_key.as_bytes())
        .map_err(|e| Failure::Internal(format!("HMAC key: {e}")))?;
    mac.update(to_sign.as_bytes());
    let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    let path = if virtual_host {
        format!("{scheme}://{bucket}.{authority}/{key}")
    } else {
        format!("{scheme}://{authority}/{bucket}/{key}")
    };
    let sep = match sub {
        Some(s) => format!("?{s}&"),
        None => "?".to_string(),
    };
    Ok(format!(
        "{path}{sep}AWSAccessKeyId={}&Expires={expires}&Signature={}",
        utf8_percent_encode(&target.access_key, VALUE),
        utf8_percent_encode(&signature, VALUE)
    ))
}
