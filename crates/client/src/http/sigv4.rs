//! SigV4 in the `Authorization` header, with an unsigned payload.
//!
//! The one SigV4 signer of the workspace: the libs3 drop-in presigns its
//! URLs with it too. Why not a crate: rusty-s3 signs only presigned URLs,
//! whose six query parameters both sides then encode, parse and sort on
//! every request (a third of the client's CPU time and about a tenth of
//! the server's for a small request, docs/src/results/per-request.md), has no chunk
//! signatures, and took twice the instructions of [`Signer::presign`] for
//! the same URL (docs/src/design/costs.md); `aws-sigv4` brings the AWS SDK's
//! runtime crates. The algorithm is short and fixed; `sha2` and `hmac` do
//! the cryptography, the derived signing key is kept for the day it is
//! valid, and the unit test checks AWS's published example.
//!
//! `aws-sigv4` measured against this signer (1.6.4 with `sign-http` and
//! `http1` only, in a scratch program beside the repo; one GET with a
//! `host` header and an unsigned payload, 100,000 times, three runs): 8.1
//! to 8.7 µs per request against 1.9 to 3.2 µs here. It derives the
//! signing key (four HMACs) on every request and builds the request as an
//! `http::Request`; its 52 crates add 29 to the HTTP client's (AWS Smithy runtime
//! types, `time`, `futures-util`, `tokio`, `tracing`). A HEAD over HTTP costs about
//! 47 µs of CPU in all, so it would add about a seventh to every small
//! request the bench measures.

use hmac::{Hmac, KeyInit, Mac};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use sha2::{Digest, Sha256};
use std::fmt::Write;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// What a request signs instead of a body hash: S3 accepts it everywhere,
/// and the body is then never hashed.
pub const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";

/// RFC 3986's unreserved characters stay; everything else is `%XX`.
const QUERY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// In a path `/` separates segments and stays.
const PATH: &AsciiSet = &QUERY.remove(b'/');

/// `s` encoded for a URL path as SigV4 canonicalizes it.
pub fn encode_path(s: &str) -> String {
    utf8_percent_encode(s, PATH).to_string()
}

/// `s` encoded for a query name or value as SigV4 canonicalizes it.
pub fn encode_query(s: &str) -> String {
    utf8_percent_encode(s, QUERY).to_string()
}

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    m.update(data);
    m.finalize().into_bytes().into()
}

/// Lowercase hex (`write!` with `{:02x}` per byte was a fifth of the
/// signing time).
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 * bytes.len());
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// The HMAC of `data` under the key `mac` was made with, in hex.
fn hmac_hex(mut mac: HmacSha256, data: &[u8]) -> String {
    mac.update(data);
    hex(&mac.finalize().into_bytes())
}

/// A request as SigV4 sees it.
pub struct Request<'a> {
    pub method: &'a str,
    /// Already encoded with [`encode_path`].
    pub path: &'a str,
    /// `name=value` pairs already encoded with [`encode_query`], sorted,
    /// joined by `&`.
    pub query: &'a str,
    /// Lowercase names, sorted by name, without `x-amz-date` and
    /// `x-amz-content-sha256` (the signer adds them).
    pub headers: &'a [(String, String)],
    pub payload_hash: &'a str,
}

/// The headers a signed request carries in addition to its own.
pub struct Signed {
    pub amz_date: String,
    pub authorization: String,
    /// `DAY/REGION/s3/aws4_request`, and the signature alone: the seed of
    /// a signed aws-chunked body's chunk signatures.
    pub scope: String,
    pub signature: String,
}

/// The payload hash of a body sent as signed aws-chunked chunks.
pub const STREAMING_PAYLOAD: &str = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
/// SHA-256 of nothing, in hex.
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Signs requests as one user in one region. Shared by all threads of a
/// client; the lock guards only what repeats between requests.
pub struct Signer {
    access_key: String,
    secret_key: String,
    region: String,
    cache: Mutex<Cache>,
}

/// What the requests of one second, and of one day, share.
#[derive(Default)]
struct Cache {
    /// `YYYYMMDD` of the last day signed for, and an HMAC keyed with that
    /// day's signing key: its key pads are hashed once a day, not twice
    /// per signature.
    day: Option<(String, HmacSha256)>,
    /// The last second signed in, and its `YYYYMMDDTHHMMSSZ`.
    stamp: Option<(u64, String)>,
}

impl Signer {
    pub fn new(access_key: String, secret_key: String, region: String) -> Signer {
        Signer {
            access_key,
            secret_key,
            region,
            cache: Mutex::default(),
        }
    }

    pub fn sign(&self, req: &Request<'_>) -> Signed {
        self.sign_at(req, SystemTime::now())
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An HMAC keyed with `day`'s signing key.
    fn keyed(&self, day: &str) -> HmacSha256 {
        let mut cache = self.cache();
        if let Some((d, mac)) = &cache.day {
            if d == day {
                return mac.clone();
            }
        }
        let secret = format!("AWS4{}", self.secret_key);
        let key = [self.region.as_bytes(), b"s3", b"aws4_request"]
            .iter()
            .fold(hmac(secret.as_bytes(), day.as_bytes()), |k, part| {
                hmac(&k, part)
            });
        let mac = HmacSha256::new_from_slice(&key).expect("HMAC takes keys of any length");
        cache.day = Some((day.to_string(), mac.clone()));
        mac
    }

    /// `now` as `x-amz-date`, formatted once per second.
    fn amz_date(&self, now: SystemTime) -> String {
        let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let mut cache = self.cache();
        match &cache.stamp {
            Some((s, text)) if *s == secs => text.clone(),
            _ => {
                let text = amz_date(secs);
                cache.stamp = Some((secs, text.clone()));
                text
            }
        }
    }

    fn sign_at(&self, req: &Request<'_>, now: SystemTime) -> Signed {
        let amz_date = self.amz_date(now);
        let ours = [
            ("x-amz-content-sha256", req.payload_hash),
            ("x-amz-date", amz_date.as_str()),
        ];
        let (canonical, signed_headers) = canonical_request(req, req.query, &ours);
        let (scope, signature) = self.signature(&amz_date, &canonical);
        Signed {
            authorization: format!(
                "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
                self.access_key
            ),
            amz_date,
            scope,
            signature,
        }
    }

    /// The signature of one chunk of an aws-chunked body
    /// ([`STREAMING_PAYLOAD`]), chained from the previous chunk's (the
    /// first from the request's own signature).
    pub fn chunk_signature(&self, seed: &Signed, previous: &str, chunk: &[u8]) -> String {
        let to_sign = format!(
            "AWS4-HMAC-SHA256-PAYLOAD\n{}\n{}\n{previous}\n{EMPTY_SHA256}\n{}",
            seed.amz_date,
            seed.scope,
            hex(&Sha256::digest(chunk))
        );
        hmac_hex(self.keyed(&seed.amz_date[..8]), to_sign.as_bytes())
    }

    /// The query of a presigned URL for `req` (its own parameters and the
    /// signature's, sorted and encoded), valid for `expires` seconds. For
    /// bodies of unknown length: S3 servers refuse a header-signed PUT
    /// without Content-Length, but take a presigned one.
    pub fn presign(&self, req: &Request<'_>, expires: u64) -> String {
        self.presign_at(req, expires, SystemTime::now())
    }

    fn presign_at(&self, req: &Request<'_>, expires: u64, now: SystemTime) -> String {
        let amz_date = self.amz_date(now);
        let scope = format!("{}/{}/s3/aws4_request", &amz_date[..8], self.region);
        let mut names: Vec<&str> = req.headers.iter().map(|(k, _)| k.as_str()).collect();
        names.sort_unstable();
        let mut params: Vec<String> = [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256".to_string()),
            ("X-Amz-Credential", format!("{}/{scope}", self.access_key)),
            ("X-Amz-Date", amz_date.clone()),
            ("X-Amz-Expires", expires.to_string()),
            ("X-Amz-SignedHeaders", names.join(";")),
        ]
        .iter()
        .map(|(k, v)| format!("{k}={}", encode_query(v)))
        .chain(
            req.query
                .split('&')
                .filter(|p| !p.is_empty())
                .map(String::from),
        )
        .collect();
        params.sort_unstable();
        let query = params.join("&");
        let (canonical, _) = canonical_request(req, &query, &[]);
        let (_, signature) = self.signature(&amz_date, &canonical);
        format!("{query}&X-Amz-Signature={signature}")
    }

    /// `(scope, signature)` of a canonical request.
    fn signature(&self, amz_date: &str, canonical: &str) -> (String, String) {
        let day = &amz_date[..8];
        let scope = format!("{day}/{}/s3/aws4_request", self.region);
        let to_sign = format!(
            "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
            hex(&Sha256::digest(canonical.as_bytes()))
        );
        let signature = hmac_hex(self.keyed(day), to_sign.as_bytes());
        (scope, signature)
    }
}

/// SigV4's canonical request of `req` with `query` and the `extra`
/// headers, and the list of signed header names.
fn canonical_request(req: &Request<'_>, query: &str, extra: &[(&str, &str)]) -> (String, String) {
    let mut canonical = format!("{}\n{}\n{query}\n", req.method, req.path);
    let mut signed_headers = String::new();
    let mut all: Vec<(&str, &str)> = req
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain(extra.iter().copied())
        .collect();
    all.sort_unstable();
    for (name, value) in &all {
        canonical.push_str(name);
        canonical.push(':');
        // Trimmed, and runs of white space as one space, as the server
        // will canonicalize it.
        let mut words = value.split_whitespace();
        if let Some(first) = words.next() {
            canonical.push_str(first);
            for w in words {
                canonical.push(' ');
                canonical.push_str(w);
            }
        }
        canonical.push('\n');
        if !signed_headers.is_empty() {
            signed_headers.push(';');
        }
        signed_headers.push_str(name);
    }
    let _ = write!(canonical, "\n{signed_headers}\n{}", req.payload_hash);
    (canonical, signed_headers)
}

/// `YYYYMMDDTHHMMSSZ` in UTC of `secs` since the epoch.
fn amz_date(secs: u64) -> String {
    let ts = i64::try_from(secs)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let dt = ts.to_zoned(jiff::tz::TimeZone::UTC).datetime();
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// AWS's published example (S3 API reference, "Signature Calculations
    /// for the Authorization Header", GET Object).
    #[test]
    fn matches_the_aws_example() {
        let signer = Signer::new(
            "AKIAIOSFODNN7EXAMPLE".into(),
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            "us-east-1".into(),
        );
        let headers = [
            ("host".into(), "examplebucket.s3.amazonaws.com".into()),
            ("range".into(), "bytes=0-9".into()),
        ];
        let req = Request {
            method: "GET",
            path: "/test.txt",
            query: "",
            headers: &headers,
            payload_hash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        };
        // 2013-05-24T00:00:00Z
        let when = UNIX_EPOCH + Duration::from_secs(1_369_353_600);
        let signed = signer.sign_at(&req, when);
        assert_eq!(signed.amz_date, "20130524T000000Z");
        assert_eq!(
            signed.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
        // The cached key gives the same answer; another day another one.
        assert_eq!(
            signer.sign_at(&req, when).authorization,
            signed.authorization
        );
        let next_day = signer.sign_at(&req, when + Duration::from_secs(86_400));
        assert_ne!(next_day.authorization, signed.authorization);
        assert!(next_day.authorization.contains("/20130525/"));
    }

    /// AWS's published presigned example (S3 API reference, "Query
    /// Parameters for Authenticating Requests").
    #[test]
    fn presigns_as_the_aws_example() {
        let signer = Signer::new(
            "AKIAIOSFODNN7EXAMPLE".into(),
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            "us-east-1".into(),
        );
        let headers = [("host".into(), "examplebucket.s3.amazonaws.com".into())];
        let req = Request {
            method: "GET",
            path: "/test.txt",
            query: "",
            headers: &headers,
            payload_hash: UNSIGNED_PAYLOAD,
        };
        let when = UNIX_EPOCH + Duration::from_secs(1_369_353_600);
        assert_eq!(
            signer.presign_at(&req, 86_400, when),
            "X-Amz-Algorithm=AWS4-HMAC-SHA256\
             &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request\
             &X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host\
             &X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
        );
    }

    /// AWS's published example (S3 API reference, "Signature Calculations
    /// for the Authorization Header: Transferring Payload in Multiple
    /// Chunks"): the seed signature and the first chunk's (64 KiB of 'a').
    #[test]
    fn signs_chunks_as_the_aws_example() {
        let signer = Signer::new(
            "AKIAIOSFODNN7EXAMPLE".into(),
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            "us-east-1".into(),
        );
        let headers = [
            ("content-encoding".into(), "aws-chunked".into()),
            ("content-length".into(), "66824".into()),
            ("host".into(), "s3.amazonaws.com".into()),
            ("x-amz-decoded-content-length".into(), "66560".into()),
            ("x-amz-storage-class".into(), "REDUCED_REDUNDANCY".into()),
        ];
        let req = Request {
            method: "PUT",
            path: "/examplebucket/chunkObject.txt",
            query: "",
            headers: &headers,
            payload_hash: STREAMING_PAYLOAD,
        };
        let when = UNIX_EPOCH + Duration::from_secs(1_369_353_600);
        let seed = signer.sign_at(&req, when);
        assert_eq!(
            seed.signature,
            "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
        );
        let first = signer.chunk_signature(&seed, &seed.signature, &[b'a'; 65536]);
        assert_eq!(
            first,
            "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"
        );
        let second = signer.chunk_signature(&seed, &first, &[b'a'; 1024]);
        assert_eq!(
            second,
            "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"
        );
        assert_eq!(
            signer.chunk_signature(&seed, &second, &[]),
            "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"
        );
    }

    #[test]
    fn encodes_as_sigv4_canonicalizes() {
        assert_eq!(encode_path("a b/c+é~_.-"), "a%20b/c%2B%C3%A9~_.-");
        assert_eq!(encode_query("a/b=c&d"), "a%2Fb%3Dc%26d");
    }
}
