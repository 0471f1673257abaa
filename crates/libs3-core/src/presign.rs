//! Presigned URLs (`S3_generate_authenticated_query_string`): the
//! query-string form of SigV2 for libs3 2.0, SigV4 (signed by rusty-s3,
//! the signer the HTTP client uses) for 4.x. Only HTTP hosts have URLs;
//! the others answer not-supported.

use super::{Failure, Target};
use base64::Engine;
use hmac::{KeyInit, Mac};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use rusty_s3::actions::{DeleteObject, GetObject, HeadObject, PutObject, S3Action};
use rusty_s3::{Bucket, Credentials, UrlStyle};
use std::time::Duration;

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

/// The scheme and `host[:port]` of an HTTP target.
fn http_base(target: &Target) -> Result<(String, String), Failure> {
    let host = target.effective_host();
    if host.starts_with("file:")
        || host.starts_with("unix:")
        || host.starts_with("s3hpc:")
        || host.starts_with("tcp:")
    {
        return Err(Failure::NotSupported("a presigned URL for a non-HTTP host"));
    }
    Ok(match host.split_once("://") {
        Some((s, a)) => (s.to_string(), a.trim_end_matches('/').to_string()),
        None => (
            (if target.https { "https" } else { "http" }).to_string(),
            host.clone(),
        ),
    })
}

/// A SigV2 presigned GET URL for `bucket/key`, valid until `expires`
/// (seconds since the epoch; negative: as late as SigV2 allows).
/// `subresource` (like `acl`) is appended as libs3 does.
pub fn presigned_url_v2(
    target: &Target,
    virtual_host: bool,
    bucket: &str,
    key: Option<&str>,
    expires: i64,
    subresource: Option<&str>,
) -> Result<String, Failure> {
    let (scheme, authority) = http_base(target)?;
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

/// SigV4 allows a presigned URL at most seven days.
const MAX_V4_EXPIRES: u64 = 7 * 24 * 3600;

/// A SigV4 presigned URL for `method` on `bucket/key`, valid for
/// `expires` seconds (negative or over seven days: seven days).
/// `subresource` (`acl`, `?acl`) is signed as a query parameter.
pub fn presigned_url_v4(
    target: &Target,
    virtual_host: bool,
    bucket: &str,
    key: &str,
    expires: i64,
    subresource: Option<&str>,
    method: &str,
) -> Result<String, Failure> {
    let (scheme, authority) = http_base(target)?;
    let endpoint = format!("{scheme}://{authority}")
        .parse()
        .map_err(|e| Failure::BadHost(format!("{authority:?}: {e}")))?;
    let style = if virtual_host {
        UrlStyle::VirtualHost
    } else {
        UrlStyle::Path
    };
    let region = target.region.as_deref().unwrap_or("us-east-1").to_string();
    let bucket = Bucket::new(endpoint, style, bucket.to_string(), region)
        .map_err(|e| Failure::BadArgument(bucket_error(e)))?;
    let creds = match &target.security_token {
        Some(t) => Credentials::new_with_token(&target.access_key, &target.secret_key, t),
        None => Credentials::new(&target.access_key, &target.secret_key),
    };
    let expires = u64::try_from(expires)
        .unwrap_or(MAX_V4_EXPIRES)
        .clamp(1, MAX_V4_EXPIRES);
    let sub = subresource
        .map(|s| s.trim_start_matches('?'))
        .filter(|s| !s.is_empty());
    let ttl = Duration::from_secs(expires);
    let url = match method.to_ascii_uppercase().as_str() {
        "" | "GET" => sign(GetObject::new(&bucket, Some(&creds), key), sub, ttl),
        "HEAD" => sign(HeadObject::new(&bucket, Some(&creds), key), sub, ttl),
        "PUT" => sign(PutObject::new(&bucket, Some(&creds), key), sub, ttl),
        "DELETE" => sign(DeleteObject::new(&bucket, Some(&creds), key), sub, ttl),
        _ => {
            return Err(Failure::BadArgument(
                "httpMethod (GET, HEAD, PUT or DELETE)",
            ))
        }
    };
    Ok(url)
}

fn bucket_error(_: rusty_s3::BucketError) -> &'static str {
    "bucketName (not valid in a URL)"
}

fn sign<'a>(mut action: impl S3Action<'a>, sub: Option<&'a str>, ttl: Duration) -> String {
    if let Some(s) = sub {
        action.query_mut().insert(s, "");
    }
    action.sign(ttl).to_string()
}
