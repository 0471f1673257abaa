//! Requests that must be refused before s3s routes them.
//!
//! s3s routes by method, path and the query parameters it knows. A
//! sub-resource of an S3 operation newer than its router falls through to
//! the plain operation on the same path: `PUT /b/k?renameObject` would be
//! a PutObject that empties `k`, `DELETE /b/k?annotation` a DeleteObject,
//! `DELETE /b?metadataConfiguration` a DeleteBucket. Each is answered 501
//! NotImplemented here, naming the operation.
//!
//! Headers asking for what s3hpc cannot give are refused too, rather than
//! answered 200 with the promise broken: server-side encryption with a
//! customer's or a KMS key (the object would be stored in the clear and
//! served without the key).

use hyper::{HeaderMap, Method, StatusCode};
use s3s::S3Result;

/// Sub-resources s3s does not route, with the operations they name.
const SUBRESOURCES: &[(&str, &str)] = &[
    ("renameObject", "RenameObject"),
    (
        "annotation",
        "Get/Put/Delete/ListObjectAnnotation(s) (S3 metadata annotations)",
    ),
    ("abac", "Get/PutBucketAbac (attribute-based access control)"),
    (
        "metadataConfiguration",
        "Create/Get/DeleteBucketMetadataConfiguration (S3 Metadata tables)",
    ),
    ("metadataTable", "S3 Metadata table configurations"),
    (
        "metadataAnnotationTable",
        "S3 Metadata table configurations",
    ),
    ("metadataInventoryTable", "S3 Metadata table configurations"),
    ("metadataJournalTable", "S3 Metadata table configurations"),
    ("session", "CreateSession (S3 Express One Zone)"),
];

pub fn refuse(method: &Method, uri: &hyper::Uri, headers: &HeaderMap) -> S3Result<()> {
    if let Some(query) = uri.query() {
        for name in query
            .split('&')
            .map(|p| p.split_once('=').map_or(p, |(n, _)| n))
        {
            if let Some((_, op)) = SUBRESOURCES.iter().find(|(s, _)| *s == name) {
                return Err(not_implemented(format!(
                    "{op} (the ?{name} sub-resource) is not supported by s3hpc; nothing \
                     was changed"
                )));
            }
            // PutBucketEncryption and UpdateObjectEncryption: the file
            // system's own encryption at rest is all there is.
            if name == "encryption" && method == Method::PUT {
                return Err(not_implemented(
                    "setting encryption (?encryption) is not supported by s3hpc: data is \
                     encrypted at rest only as the file system encrypts it; nothing was \
                     changed",
                ));
            }
        }
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    for h in [
        "x-amz-server-side-encryption-customer-algorithm",
        "x-amz-copy-source-server-side-encryption-customer-algorithm",
    ] {
        if header(h).is_some() {
            return Err(not_implemented(format!(
                "server-side encryption with a customer-provided key ({h}) is not supported \
                 by s3hpc: it cannot keep the object from readers without the key; send the \
                 request without the SSE-C headers"
            )));
        }
    }
    if let Some(sse) = header("x-amz-server-side-encryption") {
        if sse != "AES256" {
            return Err(not_implemented(format!(
                "x-amz-server-side-encryption: {sse} is not supported by s3hpc, which has no \
                 key management service; use AES256 (encryption at rest is the file \
                 system's) or leave the header out"
            )));
        }
    }
    Ok(())
}

fn not_implemented(message: impl Into<String>) -> s3s::S3Error {
    crate::convert::coded("NotImplemented", StatusCode::NOT_IMPLEMENTED, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(method: Method, uri: &str, headers: &[(&str, &str)]) -> Option<String> {
        let mut h = HeaderMap::new();
        for (n, v) in headers {
            h.insert(
                hyper::header::HeaderName::from_bytes(n.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        refuse(&method, &uri.parse().unwrap(), &h)
            .err()
            .map(|e| e.code().as_str().to_owned())
    }

    #[test]
    fn newer_sub_resources_are_refused_not_routed() {
        let ni = Some("NotImplemented".to_owned());
        assert_eq!(code(Method::PUT, "/b/k?renameObject", &[]), ni);
        assert_eq!(
            code(Method::DELETE, "/b/k?annotation&annotationName=a", &[]),
            ni
        );
        assert_eq!(code(Method::DELETE, "/b?metadataConfiguration", &[]), ni);
        assert_eq!(code(Method::GET, "/b?abac", &[]), ni);
        assert_eq!(code(Method::PUT, "/b/k?encryption", &[]), ni);
        // What s3hpc serves passes: GetBucketEncryption, tags, uploads, a
        // key that merely contains the word.
        assert_eq!(code(Method::GET, "/b?encryption", &[]), None);
        assert_eq!(code(Method::PUT, "/b/k?tagging", &[]), None);
        assert_eq!(code(Method::PUT, "/b/renameObject", &[]), None);
        assert_eq!(code(Method::GET, "/b?prefix=annotation", &[]), None);
        assert_eq!(code(Method::PUT, "/b/k?x-id=PutObject", &[]), None);
    }

    #[test]
    fn broken_promises_in_headers_are_refused() {
        let sse_c = [("x-amz-server-side-encryption-customer-algorithm", "AES256")];
        assert_eq!(
            code(Method::PUT, "/b/k", &sse_c).as_deref(),
            Some("NotImplemented")
        );
        let kms = [("x-amz-server-side-encryption", "aws:kms")];
        assert_eq!(
            code(Method::PUT, "/b/k", &kms).as_deref(),
            Some("NotImplemented")
        );
        let aes = [("x-amz-server-side-encryption", "AES256")];
        assert_eq!(code(Method::PUT, "/b/k", &aes), None);
    }
}
