//! Presigned URLs (`S3_generate_authenticated_query_string`): the
//! query-string form of SigV2 for libs3 2.0, SigV4 (signed by the HTTP
//! client's signer, `s3hpc_client::http::sigv4`) for 4.x. Only HTTP hosts have URLs;
//! the others answer not-supported.

use super::{Failure, Target};
use base64::Engine;
use hmac::{KeyInit, Mac};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use s3hpc_client::http::sigv4::{self, Signer};
use url::Url;

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
    let endpoint = Url::parse(&format!("{scheme}://{authority}"))
        .map_err(|e| Failure::BadHost(format!("{authority:?}: {e}")))?;
    let method = match method.to_ascii_uppercase().as_str() {
        "" | "GET" => "GET",
        "HEAD" => "HEAD",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        _ => {
            return Err(Failure::BadArgument(
                "httpMethod (GET, HEAD, PUT or DELETE)",
            ))
        }
    };
    // `Url` leaves out a scheme's default port, as clients do in `Host`.
    let mut host = endpoint.host_str().unwrap_or_default().to_string();
    let prefix = endpoint.path().trim_end_matches('/');
    let key = sigv4::encode_path(key);
    let path = if virtual_host {
        host = format!("{bucket}.{host}");
        if Url::parse(&format!("{scheme}://{host}/")).is_err() {
            return Err(Failure::BadArgument(
                "bucketName (not valid in a host name)",
            ));
        }
        format!("{prefix}/{key}")
    } else {
        format!("{prefix}/{}/{key}", sigv4::encode_query(bucket))
    };
    if let Some(port) = endpoint.port() {
        host = format!("{host}:{port}");
    }
    // The caller's own parameters, signed with the signature's: the
    // subresource, and a temporary credential's token (a URL cannot send
    // it as a header).
    let sub = subresource
        .map(|s| s.trim_start_matches('?'))
        .filter(|s| !s.is_empty());
    let mut query: Vec<String> = sub
        .map(|s| format!("{}=", sigv4::encode_query(s)))
        .into_iter()
        .chain(
            target
                .security_token
                .as_deref()
                .map(|t| format!("X-Amz-Security-Token={}", sigv4::encode_query(t))),
        )
        .collect();
    query.sort_unstable();
    let headers = [("host".to_string(), host.clone())];
    let req = sigv4::Request {
        method,
        path: &path,
        query: &query.join("&"),
        headers: &headers,
        payload_hash: sigv4::UNSIGNED_PAYLOAD,
    };
    let region = target.region.as_deref().unwrap_or("us-east-1");
    let signer = Signer::new(
        target.access_key.clone(),
        target.secret_key.clone(),
        region.to_string(),
    );
    let expires = u64::try_from(expires)
        .unwrap_or(MAX_V4_EXPIRES)
        .clamp(1, MAX_V4_EXPIRES);
    let query = signer.presign(&req, expires);
    Ok(format!("{scheme}://{host}{path}?{query}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(host: &str, token: Option<&str>) -> Target {
        Target {
            host: Some(host.into()),
            access_key: "AK".into(),
            secret_key: "SK".into(),
            security_token: token.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn v4_urls_sign_what_they_carry() {
        let t = target("127.0.0.1:9000", None);
        let url = presigned_url_v4(&t, false, "b", "a b/c", -1, Some("?acl"), "put").unwrap();
        assert!(
            url.starts_with("http://127.0.0.1:9000/b/a%20b/c?X-Amz-Algorithm=AWS4-HMAC-SHA256"),
            "{url}"
        );
        assert!(url.contains("&X-Amz-Expires=604800&"), "{url}");
        assert!(url.contains("&acl=&X-Amz-Signature="), "{url}");
        let t = target("https://s3.example.com:8443/pre/", Some("to/ken"));
        let url = presigned_url_v4(&t, true, "b", "k", 60, None, "GET").unwrap();
        assert!(
            url.starts_with("https://b.s3.example.com:8443/pre/k?"),
            "{url}"
        );
        assert!(url.contains("&X-Amz-Security-Token=to%2Fken&"), "{url}");
        assert!(url.contains("X-Amz-SignedHeaders=host&"), "{url}");
        assert!(presigned_url_v4(&t, true, "b b", "k", 60, None, "GET").is_err());
        assert!(presigned_url_v4(&t, false, "b", "k", 60, None, "POST").is_err());
        let t = target("unix:///tmp/s", None);
        assert!(presigned_url_v4(&t, false, "b", "k", 60, None, "GET").is_err());
    }
}
