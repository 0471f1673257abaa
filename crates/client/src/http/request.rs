//! Building, signing and sending one request.

use super::chunked::{self, ChunkEncoder};
use super::response::error_for;
use super::sigv4::{self, Signed, Signer, STREAMING_PAYLOAD, UNSIGNED_PAYLOAD};
use s3hpc_store::{ErrorCode, Result, S3Error};
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use ureq::http::{HeaderMap, Method, Response, StatusCode};
use url::Url;

/// How long a presigned request stays valid: well within any server's
/// 15-minute clock-skew window, long enough for a slow upload to start.
const PRESIGNED_LIFETIME: Duration = Duration::from_secs(900);
/// Largest XML answer read into memory (a listing page is far smaller).
const MAX_XML: u64 = 64 << 20;

/// Where and as whom the client talks.
#[derive(Clone)]
pub struct HttpClientConfig {
    /// `http://HOST:PORT` or `https://...`; buckets go in the path.
    pub endpoint: String,
    /// Signing region; `us-east-1` suits servers that ignore it.
    pub region: String,
    /// `(access key, secret key)`; `None` sends unsigned requests.
    pub credentials: Option<(String, String)>,
    /// A temporary credential's session token, sent as
    /// `X-Amz-Security-Token` with every signed request.
    pub session_token: Option<String>,
    /// Keep-alive connections kept per host: at least the number of
    /// threads sharing the client, or requests open new connections.
    pub max_connections: usize,
    /// Send signed PUT bodies of known length as signed aws-chunked
    /// chunks (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD`), as the AWS SDKs do;
    /// otherwise the body is not signed (`UNSIGNED-PAYLOAD`).
    pub streaming: bool,
    /// For `https://`: PEM certificates to trust instead of the public
    /// roots (a server's self-signed certificate, a private CA).
    pub ca_pem: Option<String>,
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        HttpClientConfig {
            endpoint: "http://127.0.0.1:9000".into(),
            region: "us-east-1".into(),
            credentials: None,
            session_token: None,
            max_connections: 256,
            streaming: false,
            ca_pem: None,
        }
    }
}

impl std::fmt::Debug for HttpClientConfig {
    // Never print the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientConfig")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("access_key", &self.credentials.as_ref().map(|c| &c.0))
            .finish()
    }
}

pub(crate) struct Transport {
    /// `scheme://host[:port]`.
    origin: String,
    /// The endpoint's path (encoded), which every request path starts with.
    path_prefix: String,
    /// The `Host` header, which is signed.
    host: String,
    signer: Option<Signer>,
    /// Sent (and signed) as `x-amz-security-token` with temporary
    /// credentials.
    session_token: Option<String>,
    streaming: bool,
    agent: ureq::Agent,
}

impl Transport {
    pub fn new(c: HttpClientConfig) -> std::result::Result<Transport, String> {
        let endpoint: Url = c
            .endpoint
            .parse()
            .map_err(|e| format!("endpoint {:?} is not a URL: {e}", c.endpoint))?;
        let Some(host) = endpoint
            .host_str()
            .filter(|_| matches!(endpoint.scheme(), "http" | "https"))
        else {
            return Err(format!(
                "endpoint {:?} must be http://HOST[:PORT] or https://HOST[:PORT]",
                c.endpoint
            ));
        };
        if endpoint.query().is_some() || endpoint.fragment().is_some() {
            return Err(format!(
                "endpoint {:?} must not have a query or fragment",
                c.endpoint
            ));
        }
        // `Url` leaves out a scheme's default port, as clients do in `Host`.
        let host = match endpoint.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let path_prefix = endpoint.path().trim_end_matches('/').to_string();
        let mut agent = ureq::Agent::config_builder();
        if let Some(pem) = &c.ca_pem {
            let certs = ureq::tls::parse_pem(pem.as_bytes())
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(cert)) => Some(Ok(cert)),
                    Ok(_) => None,
                    Err(e) => Some(Err(e)),
                })
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| format!("the trusted certificates are not valid PEM: {e}"))?;
            if certs.is_empty() {
                return Err("the trusted certificates hold no PEM CERTIFICATE".into());
            }
            let tls = ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::new_with_certs(&certs))
                .build();
            agent = agent.tls_config(tls);
        }
        let agent = agent
            .http_status_as_error(false)
            .max_idle_connections(c.max_connections.max(1))
            .max_idle_connections_per_host(c.max_connections.max(1))
            .build()
            .into();
        Ok(Transport {
            origin: format!("{}://{host}", endpoint.scheme()),
            path_prefix,
            host,
            signer: c.credentials.map(|(a, s)| Signer::new(a, s, c.region)),
            session_token: c.session_token,
            streaming: c.streaming,
            agent,
        })
    }
}

/// Keys a URL cannot carry: an empty key addresses the bucket, and `.` or
/// `..` segments are folded away by every URL parser (also when escaped).
/// S3 servers that map keys to files reject them anyway. Keys over S3's
/// 1024 bytes are refused here too: servers reject them while the body is
/// still being sent, which a client sees only as a dropped connection.
pub(crate) fn check_key(key: &str) -> Result<()> {
    if key.len() > s3hpc_store::MAX_KEY_LEN {
        return Err(S3Error::new(
            ErrorCode::KeyTooLong,
            format!(
                "key of {} bytes: S3 keys are at most {} bytes",
                key.len(),
                s3hpc_store::MAX_KEY_LEN
            ),
        ));
    }
    if key.is_empty() || key.split('/').any(|s| s == "." || s == "..") {
        return Err(S3Error::new(
            ErrorCode::InvalidKey,
            format!("key {key:?} is empty or has a '.' or '..' segment, which a URL cannot carry"),
        ));
    }
    Ok(())
}

pub(crate) enum Body<'a> {
    Empty,
    Bytes(&'a [u8]),
    /// A stream; with a length it is sent with Content-Length and must
    /// deliver exactly that many bytes.
    Reader(&'a mut dyn Read, Option<u64>),
}

/// Passes a stream through, failing the upload when it ends before its
/// declared length (the server then discards what it received).
struct Exact<'a> {
    inner: &'a mut dyn Read,
    left: Option<u64>,
    short: &'a AtomicBool,
}

impl Read for Exact<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = match self.left {
            Some(0) => return Ok(0),
            Some(n) => buf.len().min(usize::try_from(n).unwrap_or(usize::MAX)),
            None => buf.len(),
        };
        let n = self.inner.read(&mut buf[..want])?;
        if let Some(left) = &mut self.left {
            if n == 0 {
                self.short.store(true, Ordering::Relaxed);
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the body ended before its declared length",
                ));
            }
            *left -= n as u64;
        }
        Ok(n)
    }
}

/// Names a request in error messages (`GET b/k`); formatted only when an
/// error is made, not on every request.
struct What<'a> {
    method: Method,
    bucket: Option<&'a str>,
    key: Option<&'a str>,
}

impl std::fmt::Display for What<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.bucket, self.key) {
            (Some(b), Some(k)) => write!(f, "{} {b}/{k}", self.method),
            (Some(b), None) => write!(f, "{} {b}", self.method),
            _ => write!(f, "{} /", self.method),
        }
    }
}

pub(crate) struct Call<'a> {
    t: &'a Transport,
    method: Method,
    bucket: Option<&'a str>,
    key: Option<&'a str>,
    query: Vec<(&'static str, String)>,
    headers: Vec<(String, String)>,
    /// The request's signature when its body goes as signed chunks.
    seed: Option<Signed>,
}

impl<'a> Call<'a> {
    pub fn new(
        t: &'a Transport,
        method: Method,
        bucket: Option<&'a str>,
        key: Option<&'a str>,
    ) -> Call<'a> {
        Call {
            t,
            method,
            bucket,
            key,
            query: Vec::new(),
            headers: Vec::new(),
            seed: None,
        }
    }

    pub fn query(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.query.push((name, value.into()));
        self
    }

    /// A header that is also signed.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers
            .push((name.into().to_ascii_lowercase(), value.into()));
        self
    }

    /// Whether the body is an object's bytes (PutObject, UploadPart): the
    /// bodies the AWS SDKs send as aws-chunked. Sub-resources (tagging,
    /// ACLs, versioning) go as plain bodies, as from the SDKs; s3s decodes
    /// aws-chunked only for object bodies.
    fn carries_object(&self) -> bool {
        self.method == Method::PUT
            && self.key.is_some()
            && self
                .query
                .iter()
                .all(|(name, _)| matches!(*name, "partNumber" | "uploadId"))
    }

    fn what(&self) -> What<'a> {
        What {
            method: self.method.clone(),
            bucket: self.bucket,
            key: self.key,
        }
    }

    /// The request's path below the endpoint, encoded as SigV4 signs it:
    /// `/`, `/BUCKET/` or `/BUCKET/KEY`.
    fn path(&self) -> Result<String> {
        let Some(name) = self.bucket else {
            return Ok("/".into()); // ListBuckets
        };
        if matches!(name, "" | "." | "..") || name.contains('/') {
            return Err(S3Error::new(
                ErrorCode::InvalidBucketName,
                format!("bucket name {name:?} cannot be part of a URL"),
            ));
        }
        let bucket = sigv4::encode_path(name);
        Ok(match self.key {
            Some(k) => {
                check_key(k)?;
                format!("/{bucket}/{}", sigv4::encode_path(k))
            }
            None => format!("/{bucket}/"),
        })
    }

    /// Sorts and encodes the query (as SigV4 wants it, and as sent), adds
    /// `Host` and, with credentials, the signature: in headers, or in the
    /// query for a body of unknown length (see [`Signer::presign`]). With
    /// `streamed` (the body's length), the body is to go as signed chunks.
    /// Returns the URL.
    fn sign(&mut self, presign: bool, streamed: Option<u64>) -> Result<String> {
        let path = format!("{}{}", self.t.path_prefix, self.path()?);
        self.query.sort();
        let mut query = self
            .query
            .iter()
            .map(|(k, v)| format!("{}={}", sigv4::encode_query(k), sigv4::encode_query(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.headers.push(("host".into(), self.t.host.clone()));
        if let Some(token) = &self.t.session_token {
            // Temporary credentials: the token travels signed, as a header.
            self.headers
                .push(("x-amz-security-token".into(), token.clone()));
        }
        let streamed = streamed.filter(|_| self.t.signer.is_some() && !presign);
        if let Some(len) = streamed {
            self.headers.extend([
                ("content-encoding".into(), "aws-chunked".into()),
                ("x-amz-decoded-content-length".into(), len.to_string()),
            ]);
        }
        self.headers.sort();
        if let Some(signer) = &self.t.signer {
            let payload_hash = if streamed.is_some() {
                STREAMING_PAYLOAD
            } else {
                UNSIGNED_PAYLOAD
            };
            let req = sigv4::Request {
                method: self.method.as_str(),
                path: &path,
                query: &query,
                headers: &self.headers,
                payload_hash,
            };
            if presign {
                query = signer.presign(&req, PRESIGNED_LIFETIME.as_secs());
                return Ok(format!("{}{path}?{query}", self.t.origin));
            }
            let signed = signer.sign(&req);
            self.headers.extend([
                ("x-amz-content-sha256".into(), payload_hash.into()),
                ("x-amz-date".into(), signed.amz_date.clone()),
                ("authorization".into(), signed.authorization.clone()),
            ]);
            self.seed = streamed.map(|_| signed);
        }
        let mut url = format!("{}{path}", self.t.origin);
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query);
        }
        Ok(url)
    }

    fn run(
        &self,
        url: &str,
        body: &mut Body<'_>,
        short: &AtomicBool,
    ) -> Result<std::result::Result<Response<ureq::Body>, ureq::Error>> {
        let mut req = ureq::http::Request::builder()
            .method(self.method.clone())
            .uri(url);
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let build_error = |e: ureq::http::Error| {
            S3Error::new(
                ErrorCode::InvalidArgument,
                format!("{}: cannot build the request: {e}", self.what()),
            )
        };
        if let (Some(seed), Some(signer)) = (&self.seed, &self.t.signer) {
            // The body as signed chunks: Content-Length is the framed size.
            let send = |req: ureq::http::request::Builder, r: &mut dyn Read, len: u64| {
                let req = req.header("content-length", chunked::encoded_len(len).to_string());
                let mut framed = ChunkEncoder::new(r, len, signer, seed);
                let body = ureq::SendBody::from_reader(&mut framed);
                Ok(self.t.agent.run(req.body(body).map_err(build_error)?))
            };
            return match body {
                Body::Bytes(b) => send(req, &mut &b[..], b.len() as u64),
                Body::Reader(r, Some(len)) => {
                    let mut exact = Exact {
                        inner: &mut **r,
                        left: Some(*len),
                        short,
                    };
                    send(req, &mut exact, *len)
                }
                _ => unreachable!("only bodies of known length are streamed"),
            };
        }
        Ok(match body {
            // PUT and POST say `Content-Length: 0`: MinIO reads a PUT bucket
            // without it as a chunked body and answers MalformedXML.
            Body::Empty if self.method == Method::PUT || self.method == Method::POST => {
                self.t.agent.run(req.body(&[][..]).map_err(build_error)?)
            }
            Body::Empty => self.t.agent.run(req.body(()).map_err(build_error)?),
            Body::Bytes(b) => self.t.agent.run(req.body(*b).map_err(build_error)?),
            Body::Reader(r, len) => {
                if let Some(n) = len {
                    req = req.header("content-length", n.to_string());
                }
                let mut exact = Exact {
                    inner: &mut **r,
                    left: *len,
                    short,
                };
                let body = ureq::SendBody::from_reader(&mut exact);
                self.t.agent.run(req.body(body).map_err(build_error)?)
            }
        })
    }

    /// Sends the request without a body; an answer other than 2xx becomes
    /// the S3 error it carries.
    pub fn send(self) -> Result<Response<ureq::Body>> {
        self.send_body(Body::Empty)
    }

    /// Sends the request with `body`.
    pub fn send_body(mut self, mut body: Body<'_>) -> Result<Response<ureq::Body>> {
        let chunked = self.t.streaming && self.carries_object();
        let streamed = match &body {
            Body::Bytes(b) if chunked => Some(b.len() as u64),
            Body::Reader(_, Some(n)) if chunked => Some(*n),
            _ => None,
        };
        let url = self.sign(matches!(body, Body::Reader(_, None)), streamed)?;
        let what = self.what();
        let transport_error = |e: ureq::Error| {
            // An endpoint that cannot be reached is not the server's fault:
            // callers (the libs3 drop-in) treat it as a connection failure.
            let code = match e {
                ureq::Error::Io(_)
                | ureq::Error::ConnectionFailed
                | ureq::Error::HostNotFound
                | ureq::Error::Timeout(_) => ErrorCode::ServiceUnavailable,
                _ => ErrorCode::InternalError,
            };
            S3Error::new(code, format!("{what}: the HTTP request failed: {e}"))
        };
        let short = AtomicBool::new(false);
        let mut sent = self.run(&url, &mut body, &short)?;
        // A pooled keep-alive connection the server has closed meanwhile
        // (servers close after an answer sent before the request body was
        // read) fails before any answer: send once more on a new one, when
        // the body can be sent again.
        if matches!(sent, Err(ureq::Error::Io(_))) && !matches!(body, Body::Reader(..)) {
            sent = self.run(&url, &mut body, &short)?;
        }
        let mut resp = match sent {
            Ok(r) => r,
            Err(_) if short.load(Ordering::Relaxed) => {
                return Err(S3Error::new(
                    ErrorCode::IncompleteBody,
                    format!("{what}: the body ended before its declared length"),
                ))
            }
            Err(e) => return Err(transport_error(e)),
        };
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let body = if self.method == Method::HEAD || status == StatusCode::NOT_MODIFIED {
            String::new()
        } else {
            resp.body_mut()
                .with_config()
                .limit(MAX_XML)
                .read_to_string()
                .unwrap_or_default()
        };
        Err(error_for(
            &what.to_string(),
            status,
            resp.headers(),
            &body,
            self.key.is_some(),
        ))
    }

    /// Sends the request and reads its XML answer, which may still be an
    /// error (CopyObject and CompleteMultipartUpload can fail after a 200).
    pub fn send_for_xml(self, body: Body<'_>) -> Result<String> {
        self.send_for_answer(body).map(|(_, doc)| doc)
    }

    /// [`Call::send_for_xml`] with the answer's headers.
    pub fn send_for_answer(self, body: Body<'_>) -> Result<(HeaderMap, String)> {
        let what = self.what();
        let is_object = self.key.is_some();
        let mut resp = self.send_body(body)?;
        let doc = resp
            .body_mut()
            .with_config()
            .limit(MAX_XML)
            .read_to_string()
            .map_err(|e| {
                S3Error::new(
                    ErrorCode::InternalError,
                    format!("{what}: reading the answer: {e}"),
                )
            })?;
        if doc.contains("<Error>") {
            return Err(error_for(
                &what.to_string(),
                StatusCode::INTERNAL_SERVER_ERROR,
                resp.headers(),
                &doc,
                is_object,
            ));
        }
        Ok((std::mem::take(resp.headers_mut()), doc))
    }
}
