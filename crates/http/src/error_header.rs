//! The envelope every answer gets, whoever produced it (the engine, this
//! crate, or s3s itself: signatures, bucket names, XML):
//!
//! - `x-amz-request-id` and `x-amz-id-2` headers on every answer, success
//!   or not, as AWS sends them (SDKs show them as `RequestId` / `HostId`);
//! - every XML error body completed to AWS's shape: Code, Message (s3s
//!   raises some errors with a code alone, which boto3 printed as
//!   "Unknown"; those get the message of [`default_message`]), Resource
//!   (the request path), RequestId and HostId;
//! - the code in an `x-amz-error-code` header and the message in
//!   `x-amz-error-message`: a HEAD answer has no body, so without them a
//!   client cannot tell NoSuchBucket from NoSuchKey, or say why.

use futures_util::future::BoxFuture;
use hyper::header::{HeaderValue, CONTENT_LENGTH};
use hyper::{Method, Version};
use s3s::service::S3Service;
use s3s::{HttpError, HttpResponse};
use std::sync::atomic::{AtomicU64, Ordering};

pub const ERROR_CODE_HEADER: &str = "x-amz-error-code";
pub const ERROR_MESSAGE_HEADER: &str = "x-amz-error-message";

/// A request id as AWS shapes them: 16 upper-case hex digits, unique per
/// answer of this server (a counter, spread by a mix and started from the
/// clock so restarts do not repeat ids).
fn request_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static BASE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let mut z = base.wrapping_add(
        NEXT.fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15),
    );
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    format!("{:016X}", z ^ (z >> 31))
}

/// Marks a request whose response body hyper hands to the kernel without
/// reading it in user space (HTTP/1 with vectored writes, see
/// `server.rs`), so it may come from a memory mapping (`mapped.rs`).
/// HTTP/2 copies small DATA frames into its own buffer.
#[derive(Clone, Copy)]
pub struct KernelCopiesBodies;

/// The service with the error-code header. `kernel_copies`: the
/// connection hands response bodies to the kernel unread (plain HTTP/1);
/// false over TLS, where rustls reads every byte to encrypt it, so a GET
/// must never send from a mapping there.
#[derive(Clone)]
pub struct WithErrorCode {
    pub service: S3Service,
    pub kernel_copies: bool,
    /// The virtual-host domains (`sigv2_path` needs to tell the styles apart).
    pub virtual_hosts: std::sync::Arc<[String]>,
    /// Preflights and the Access-Control headers of browsers' requests.
    pub cors: crate::cors::Cors,
    /// STS requests (`Action=` at the root): OIDC logins.
    pub sts: std::sync::Arc<crate::sts::Sts>,
}

impl hyper::service::Service<hyper::Request<s3s::Body>> for WithErrorCode {
    type Response = HttpResponse;
    type Error = HttpError;
    type Future = BoxFuture<'static, Result<HttpResponse, HttpError>>;

    fn call(&self, mut req: hyper::Request<s3s::Body>) -> Self::Future {
        if crate::sts::asked(&req) {
            let sts = self.sts.clone();
            return Box::pin(async move { Ok(sts.answer(req, &request_id()).await) });
        }
        let service = self.service.clone();
        let cors = self.cors.clone();
        crate::sigv2_path::bucket_root(&mut req, &self.virtual_hosts);
        // A preflight is CORS's alone: s3s has no OPTIONS, and it carries
        // no credentials (a presigned URL's are for the request after it).
        let preflight =
            (req.method() == Method::OPTIONS).then(|| cors.preflight(&req, &self.virtual_hosts));
        let browser = preflight
            .is_none()
            .then(|| cors.asked(&req, &self.virtual_hosts))
            .flatten();
        // Only GETs send bodies from files; others skip the allocation.
        if self.kernel_copies
            && req.method() == Method::GET
            && matches!(req.version(), Version::HTTP_10 | Version::HTTP_11)
        {
            req.extensions_mut().insert(KernelCopiesBodies);
        }
        // A cheap clone (shared bytes); read only for an error's Resource.
        let uri = req.uri().clone();
        let sends_body = sends_body(req.headers());
        let attributes =
            req.method() == Method::GET && crate::attributes_etag::asks_attributes(uri.query());
        Box::pin(async move {
            let answered = match preflight {
                Some(answer) => answer,
                None => match prepare(&mut req).await {
                    Ok(()) => Ok(service.call(req).await?),
                    Err(e) => Err(e),
                },
            };
            let mut resp = match answered {
                Ok(resp) => resp,
                Err(e) => e
                    .to_http_response()
                    .map_err(|e| HttpError::new(Box::new(e)))?,
            };
            if let Some(asked) = &browser {
                cors.answer(asked, &mut resp);
            }
            let id = request_id();
            policy_condition_refusal(&mut resp);
            if attributes {
                crate::attributes_etag::unquote_etag(&mut resp);
            }
            let failed = resp.status().as_u16() >= 400;
            if failed {
                complete_error(&mut resp, uri.path(), &id);
            }
            let h = resp.headers_mut();
            if failed && sends_body {
                // An error may come before the body was read (a refused
                // PUT with `Expect: 100-continue`, whose client sends the
                // body anyway after a pause). The connection closes, or
                // those bytes would be read as the next request: seen as
                // SignatureDoesNotMatch on the following call, the body's
                // byte prefixed to its method.
                h.insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
            }
            if let Ok(v) = HeaderValue::from_str(&id) {
                h.insert("x-amz-id-2", v.clone());
                h.insert("x-amz-request-id", v);
            }
            Ok(resp)
        })
    }
}

/// What a request must pass before s3s sees it: a presigned URL not
/// expired, and a body whose length is stated.
async fn prepare(req: &mut hyper::Request<s3s::Body>) -> s3s::S3Result<()> {
    crate::presigned::refuse_expired(req.uri())?;
    crate::unrouted::refuse(req.method(), req.uri(), req.headers())?;
    crate::unframed::state_length(req).await
}

/// A browser POST upload whose form breaks a condition of its policy (or
/// names another bucket): S3 answers 403 AccessDenied, "Invalid according
/// to Policy", where s3s answers InvalidPolicyDocument (400), which S3
/// keeps for a policy it cannot read.
fn policy_condition_refusal(resp: &mut HttpResponse) {
    const CODE: &str = "<Code>InvalidPolicyDocument</Code><Message>";
    const BROKEN: [&str; 2] = ["Policy condition ", "Bucket in form field "];
    let Some(text) = crate::attributes_etag::body_text(resp, hyper::StatusCode::BAD_REQUEST) else {
        return;
    };
    let Some(at) = text.find(CODE) else { return };
    let message = &text[at + CODE.len()..];
    if !BROKEN.iter().any(|b| message.starts_with(b)) {
        return;
    }
    let text = format!(
        "{}<Code>AccessDenied</Code><Message>Invalid according to Policy: {message}",
        &text[..at]
    );
    *resp.body_mut() = s3s::Body::from(text);
    *resp.status_mut() = hyper::StatusCode::FORBIDDEN;
}

/// Whether a request announces a body (a length above 0, or chunks).
fn sends_body(h: &hyper::HeaderMap) -> bool {
    h.get(hyper::header::CONTENT_LENGTH)
        .is_some_and(|v| v.as_bytes() != b"0")
        || h.contains_key(hyper::header::TRANSFER_ENCODING)
}

/// Completes an error answer: the body to AWS's shape, and the code and
/// message headers.
fn complete_error(resp: &mut HttpResponse, resource: &str, id: &str) {
    let Some(body) = resp.body().bytes() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return;
    };
    let Some(code) = element(text, "Code") else {
        return;
    };
    let given = element(text, "Message").filter(|m| !m.is_empty());
    let has_message = given.is_some();
    let message = given.unwrap_or_else(|| default_message(&code).to_string());
    if let Some(close) = text.rfind("</Error>") {
        let mut out = String::with_capacity(text.len() + 256);
        match has_message {
            true => out.push_str(&text[..close]),
            false => {
                // Code only (or an empty Message): the message goes after the code.
                let after_code = text.find("</Code>").map_or(close, |i| i + "</Code>".len());
                out.push_str(&text[..after_code]);
                push_element(&mut out, "Message", &message);
                let rest = &text[after_code..close];
                out.push_str(
                    &rest
                        .replace("<Message></Message>", "")
                        .replace("<Message/>", ""),
                );
            }
        }
        if !text.contains("<Resource>") {
            push_element(&mut out, "Resource", resource);
        }
        if !text.contains("<RequestId>") {
            push_element(&mut out, "RequestId", id);
        }
        if !text.contains("<HostId>") {
            push_element(&mut out, "HostId", id);
        }
        out.push_str(&text[close..]);
        let len = out.len();
        *resp.body_mut() = s3s::Body::from(out);
        resp.headers_mut()
            .insert(CONTENT_LENGTH, HeaderValue::from(len));
    }
    let h = resp.headers_mut();
    if !h.contains_key(ERROR_CODE_HEADER) {
        if let Ok(v) = HeaderValue::from_str(&code) {
            h.insert(ERROR_CODE_HEADER, v);
        }
    }
    // Header values are visible ASCII: anything else becomes '?'.
    let ascii: String = message
        .chars()
        .take(512)
        .map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                c
            } else {
                '?'
            }
        })
        .collect();
    if let Ok(v) = HeaderValue::from_str(&ascii) {
        h.insert(ERROR_MESSAGE_HEADER, v);
    }
}

fn push_element(out: &mut String, name: &str, value: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    for c in value.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// The text of `<name>` in an S3 XML error body (entities left as sent).
fn element(text: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = text.find(&open)? + open.len();
    let len = text[start..].find(&format!("</{name}>"))?;
    Some(text[start..start + len].to_string())
}

/// What to tell the client for errors s3s raises with a code alone.
pub fn default_message(code: &str) -> &'static str {
    match code {
        "InvalidBucketName" => {
            "The specified bucket is not valid: a bucket name is 3 to 63 characters of \
             lower-case letters, digits, dots and hyphens, starting and ending with a letter \
             or digit, and not shaped like an IP address"
        }
        "NoSuchBucket" => "The specified bucket does not exist; create it first",
        "NoSuchKey" => "The specified key does not exist",
        "NoSuchUpload" => {
            "The specified multipart upload does not exist: it was completed, aborted or \
             never started"
        }
        "SignatureDoesNotMatch" => {
            "The request signature we calculated does not match the signature you provided; \
             check your secret key and signing method"
        }
        "InvalidAccessKeyId" => {
            "The access key ID you provided does not exist in our records; check the \
             server's S3HPC_ACCESS_KEY"
        }
        "AccessDenied" => "Access denied; check the credentials the request is signed with",
        "RequestTimeTooSkewed" => {
            "The difference between the request time and the server's time is more than 15 \
             minutes; correct the client's clock"
        }
        "MissingContentLength" => "You must provide the Content-Length HTTP header",
        "MalformedXML" => {
            "The XML you provided was not well-formed or did not validate against the S3 schema"
        }
        "MethodNotAllowed" => "The specified method is not allowed against this resource",
        "NotImplemented" => {
            "A header or operation you provided implies functionality that s3hpc does not \
             implement"
        }
        "InvalidRequest" | "InvalidArgument" => "The request is not valid; check its parameters",
        "InvalidURI" => "Could not parse the specified URI",
        "InvalidDigest" => "The Content-MD5 you specified is not valid",
        "BadDigest" => "The Content-MD5 or checksum you specified did not match what was received",
        "XAmzContentSHA256Mismatch" => {
            "The provided x-amz-content-sha256 header does not match what was computed"
        }
        "EntityTooLarge" => "Your proposed upload exceeds the maximum allowed size",
        "KeyTooLongError" => "Your key is too long: at most 1024 bytes",
        "PreconditionFailed" => "At least one of the preconditions you specified did not hold",
        "InternalError" => "We encountered an internal error; please try again",
        _ => "The request failed with this error code; see the S3 documentation for it",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completed(body: &str) -> (String, hyper::HeaderMap) {
        let mut resp = HttpResponse::new(s3s::Body::from(body.to_string()));
        *resp.status_mut() = hyper::StatusCode::BAD_REQUEST;
        complete_error(&mut resp, "/bkt/a<b", "0123456789ABCDEF");
        let out = String::from_utf8(resp.body().bytes().unwrap().to_vec()).unwrap();
        (out, resp.headers().clone())
    }

    #[test]
    fn errors_get_aws_shape() {
        let (out, h) =
            completed("<?xml version=\"1.0\"?><Error><Code>InvalidBucketName</Code></Error>");
        assert!(out.starts_with(
            "<?xml version=\"1.0\"?><Error><Code>InvalidBucketName</Code><Message>The specified bucket is not valid"
        ), "{out}");
        assert!(out.ends_with("<Resource>/bkt/a&lt;b</Resource><RequestId>0123456789ABCDEF</RequestId><HostId>0123456789ABCDEF</HostId></Error>"), "{out}");
        assert_eq!(h[ERROR_CODE_HEADER], "InvalidBucketName");
        assert_eq!(h[CONTENT_LENGTH], out.len().to_string().as_str());
        // A message is kept as it is.
        let (out, h) = completed("<Error><Code>NoSuchKey</Code><Message>k: gone</Message></Error>");
        assert!(
            out.starts_with("<Error><Code>NoSuchKey</Code><Message>k: gone</Message><Resource>"),
            "{out}"
        );
        assert_eq!(h[ERROR_MESSAGE_HEADER], "k: gone");
        let (out, _) = completed("<Error><Code>X</Code><Message></Message></Error>");
        assert_eq!(out.matches("<Message>").count(), 1, "{out}");
        assert!(!out.contains("<Message></Message>"), "{out}");
    }

    #[test]
    fn broken_post_policy_conditions_are_access_denied() {
        let refuse = |body: &str| {
            let mut resp = HttpResponse::new(s3s::Body::from(body.to_string()));
            *resp.status_mut() = hyper::StatusCode::BAD_REQUEST;
            policy_condition_refusal(&mut resp);
            complete_error(&mut resp, "/bkt", "0123456789ABCDEF");
            let out = String::from_utf8(resp.body().bytes().unwrap().to_vec()).unwrap();
            (resp.status().as_u16(), out, resp.headers().clone())
        };
        let (st, out, h) = refuse(
            "<Error><Code>InvalidPolicyDocument</Code><Message>Policy condition 'eq' for \
             field 'acl' failed</Message></Error>",
        );
        assert_eq!(st, 403);
        assert!(out.starts_with("<Error><Code>AccessDenied</Code><Message>Invalid according to Policy: Policy condition 'eq'"), "{out}");
        assert_eq!(h[ERROR_CODE_HEADER], "AccessDenied");
        assert_eq!(h[CONTENT_LENGTH], out.len().to_string().as_str());
        // A policy that cannot be read stays what it is.
        let (st, out, _) = refuse(
            "<Error><Code>InvalidPolicyDocument</Code><Message>failed to parse POST policy</Message></Error>",
        );
        assert_eq!(st, 400);
        assert!(out.contains("<Code>InvalidPolicyDocument</Code>"), "{out}");
    }
}
