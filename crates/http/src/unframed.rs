//! Uploads that arrive with `Transfer-Encoding: chunked` and no
//! Content-Length (curl reading a pipe, streaming clients, s3-tests'
//! test_object_write_with_chunked_transfer_encoding).
//!
//! Anonymous, SigV2 and aws-chunked bodies stream as they are: nothing
//! needs their length beforehand. A SigV4 header signature over a payload
//! hash or `UNSIGNED-PAYLOAD` is different: s3s verifies the body's
//! SHA-256 against a stated length and refuses the request without one
//! (MissingContentLength, as AWS does). So such a body is read here first,
//! up to [`MAX_UNFRAMED`] (a client that hashed the payload before sending
//! held it whole anyway), and goes on with its length stated; a longer one
//! is refused with the ways to send it.

use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_LENGTH, TRANSFER_ENCODING};
use hyper::HeaderMap;
use s3s::{s3_error, S3Result};

/// The largest SigV4 single-chunk body accepted without a Content-Length.
pub const MAX_UNFRAMED: usize = 64 << 20;

/// Whether s3s needs a length this request does not state.
fn needs_length(h: &HeaderMap) -> bool {
    let sigv4 = h
        .get(AUTHORIZATION)
        .is_some_and(|a| a.as_bytes().starts_with(b"AWS4-"));
    let single_chunk = h
        .get("x-amz-content-sha256")
        .is_some_and(|v| !v.as_bytes().starts_with(b"STREAMING-"));
    sigv4 && single_chunk && h.contains_key(TRANSFER_ENCODING) && !h.contains_key(CONTENT_LENGTH)
}

/// Reads the body of a request that needs its length stated and states it;
/// any other request is left as it is.
pub async fn state_length(req: &mut hyper::Request<s3s::Body>) -> S3Result<()> {
    use futures_util::StreamExt;
    if !needs_length(req.headers()) {
        return Ok(());
    }
    let mut body = std::mem::take(req.body_mut());
    let mut all = bytes::BytesMut::new();
    while let Some(chunk) = body.next().await {
        let chunk =
            chunk.map_err(|e| s3_error!(IncompleteBody, "the request body ended early: {e}"))?;
        if all.len() + chunk.len() > MAX_UNFRAMED {
            return Err(s3_error!(
                MissingContentLength,
                "a SigV4-signed body without Content-Length is accepted up to {} MiB; send \
                 Content-Length, or an aws-chunked body (x-amz-content-sha256: STREAMING-...) \
                 with x-amz-decoded-content-length, or use a multipart upload",
                MAX_UNFRAMED >> 20
            ));
        }
        all.extend_from_slice(&chunk);
    }
    req.headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from(all.len()));
    *req.body_mut() = s3s::Body::from(all.freeze());
    Ok(())
}
