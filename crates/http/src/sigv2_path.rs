//! SigV2's resource for a bucket. AWS signs a request to a bucket as
//! `/BUCKET/` (the bucket's root), and SDKs do so whatever path they send:
//! botocore's `s3` signer sends `PUT /BUCKET` and signs `/BUCKET/`. s3s
//! signs the path as sent, so every SigV2 bucket call from botocore
//! (CreateBucket, ListObjects, ...) was SignatureDoesNotMatch. A
//! path-style SigV2 request to a bucket gets its root's path before s3s
//! sees it, as AWS resolves it; the route is the same bucket either way.
//! A virtual-host request (`Host: BUCKET.DOMAIN` for a configured domain)
//! is left alone: its `/NAME` is a key.

use hyper::header::AUTHORIZATION;
use hyper::Uri;

/// The request's host, without its port.
fn host<B>(req: &hyper::Request<B>) -> &str {
    let host = req
        .headers()
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| req.uri().host())
        .unwrap_or("");
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

/// The bucket a virtual-host request names (`Host: BUCKET.DOMAIN` for one
/// of `domains`), if it is one.
fn virtual_bucket<'a>(host: &'a str, domains: &[String]) -> Option<&'a str> {
    domains.iter().find_map(|d| {
        let b = host.strip_suffix(d.as_str())?.strip_suffix('.')?;
        (!b.is_empty()).then_some(b)
    })
}

/// The bucket a request is for: named by its host (virtual-host style),
/// else the first segment of its path; None for the service (`/`).
pub fn bucket_of<'a, B>(req: &'a hyper::Request<B>, domains: &[String]) -> Option<&'a str> {
    if let Some(b) = virtual_bucket(host(req), domains) {
        return Some(b);
    }
    let path = req.uri().path().trim_start_matches('/');
    let bucket = path.split('/').next().unwrap_or("");
    (!bucket.is_empty()).then_some(bucket)
}

/// `/BUCKET` → `/BUCKET/` on a path-style SigV2 header-signed request;
/// `domains` are the server's virtual-host domains.
pub fn bucket_root<B>(req: &mut hyper::Request<B>, domains: &[String]) {
    if virtual_bucket(host(req), domains).is_some() {
        return;
    }
    let sigv2 = req
        .headers()
        .get(AUTHORIZATION)
        .is_some_and(|a| a.as_bytes().starts_with(b"AWS ") && !a.as_bytes().starts_with(b"AWS4"));
    let path = req.uri().path();
    if !sigv2 || path.len() < 2 || path[1..].contains('/') {
        return;
    }
    let rooted = match req.uri().query() {
        Some(q) => format!("{path}/?{q}"),
        None => format!("{path}/"),
    };
    let mut parts = req.uri().clone().into_parts();
    if let Ok(pq) = rooted.parse() {
        parts.path_and_query = Some(pq);
        if let Ok(uri) = Uri::from_parts(parts) {
            *req.uri_mut() = uri;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::bucket_root;

    fn rooted(path: &str, auth: &str) -> String {
        on_host(path, auth, "localhost:9000")
    }

    fn on_host(path: &str, auth: &str, host: &str) -> String {
        let mut req = hyper::Request::builder()
            .uri(path)
            .header("authorization", auth)
            .header("host", host)
            .body(())
            .unwrap();
        bucket_root(&mut req, &["s3.local".to_string()]);
        req.uri().to_string()
    }

    #[test]
    fn sigv2_bucket_paths_get_their_root() {
        assert_eq!(rooted("/bkt", "AWS a:b"), "/bkt/");
        assert_eq!(rooted("/bkt?acl", "AWS a:b"), "/bkt/?acl");
        assert_eq!(rooted("/bkt/", "AWS a:b"), "/bkt/");
        assert_eq!(rooted("/bkt/key", "AWS a:b"), "/bkt/key");
        assert_eq!(rooted("/", "AWS a:b"), "/");
        assert_eq!(rooted("/bkt", "AWS4-HMAC-SHA256 Credential=x"), "/bkt");
        // Virtual-host style: /key names a key of bkt.
        assert_eq!(on_host("/key", "AWS a:b", "bkt.s3.local:9000"), "/key");
        assert_eq!(on_host("/bkt", "AWS a:b", "s3.local:9000"), "/bkt/");
    }
}
