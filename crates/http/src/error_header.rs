//! Puts the S3 error code of every error answer into an `x-amz-error-code`
//! header. A HEAD answer has no body, so without it a client cannot tell
//! NoSuchBucket from NoSuchKey, or InvalidBucketName from KeyTooLongError;
//! errors that s3s raises itself (signatures, names) included.

use futures_util::future::BoxFuture;
use hyper::header::HeaderValue;
use hyper::{Method, Version};
use s3s::service::S3Service;
use s3s::{HttpError, HttpResponse};

pub const ERROR_CODE_HEADER: &str = "x-amz-error-code";

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
}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for WithErrorCode {
    type Response = HttpResponse;
    type Error = HttpError;
    type Future = BoxFuture<'static, Result<HttpResponse, HttpError>>;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        let service = self.service.clone();
        let mut req = req.map(s3s::Body::from);
        // Only GETs send bodies from files; others skip the allocation.
        if self.kernel_copies
            && req.method() == Method::GET
            && matches!(req.version(), Version::HTTP_10 | Version::HTTP_11)
        {
            req.extensions_mut().insert(KernelCopiesBodies);
        }
        Box::pin(async move {
            let mut resp = service.call(req).await?;
            if resp.status().as_u16() >= 400 && !resp.headers().contains_key(ERROR_CODE_HEADER) {
                let code = resp.body().bytes().and_then(|b| code_of(&b));
                if let Some(v) = code.and_then(|c| HeaderValue::from_str(&c).ok()) {
                    resp.headers_mut().insert(ERROR_CODE_HEADER, v);
                }
            }
            Ok(resp)
        })
    }
}

/// The `<Code>` of an S3 XML error body.
fn code_of(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let start = text.find("<Code>")? + "<Code>".len();
    let len = text[start..].find("</Code>")?;
    Some(text[start..start + len].to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_code() {
        let body =
            b"<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>m</Message></Error>";
        assert_eq!(super::code_of(body).as_deref(), Some("NoSuchKey"));
        assert_eq!(super::code_of(b"<Error></Error>"), None);
    }
}
