//! The outermost layer of the HTTP service when an access log or metrics
//! are on: times each request from its arrival to the last byte of its
//! answer, counts body bytes both ways, and hands one record to the access
//! log and the metrics when the answer is done (or the client left).
//!
//! What only the layers below know travels up in a [`RequestNote`] put in
//! the request's extensions (s3s passes them on to the access check and the
//! engine): the operation, the verified access key, the bucket and key as
//! s3s decoded them, and the uid the request acts as.

use crate::access_log::{AccessLog, Record};
use crate::bucket_logs::{self, BucketLogs};
use crate::error_header::WithErrorCode;
use crate::metrics::{Metrics, Observation, Transport};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, Uri};
use s3s::access::S3AccessContext;
use s3s::{HttpError, StdError};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime};

/// Where records go; at least one is set.
#[derive(Default)]
pub(crate) struct Watch {
    pub log: Option<Arc<AccessLog>>,
    pub metrics: Option<Arc<Metrics>>,
    /// The logs delivered into buckets (PutBucketLogging).
    pub bucket_logs: Option<Arc<BucketLogs>>,
}

/// What the layers below learn about a request, for its record.
pub(crate) struct RequestNote {
    operation: OnceLock<Box<str>>,
    access_key: OnceLock<String>,
    path: OnceLock<(Box<str>, Option<Box<str>>)>,
    /// `NO_UID` until someone says who the request acts as.
    uid: AtomicU64,
    bytes_in: AtomicU64,
    /// The kind of key the request was signed with (`file`, `key`,
    /// `session`, `oidc`).
    key_kind: OnceLock<&'static str>,
    /// The keys of a request about several (DeleteObjects).
    keys: OnceLock<Vec<String>>,
}

const NO_UID: u64 = u64::MAX;

impl Default for RequestNote {
    fn default() -> Self {
        RequestNote {
            operation: OnceLock::new(),
            access_key: OnceLock::new(),
            path: OnceLock::new(),
            uid: AtomicU64::new(NO_UID),
            bytes_in: AtomicU64::new(0),
            key_kind: OnceLock::new(),
            keys: OnceLock::new(),
        }
    }
}

impl RequestNote {
    /// The note of a request, when it is observed.
    pub(crate) fn of(extensions: &hyper::http::Extensions) -> Option<&Arc<RequestNote>> {
        extensions.get::<Arc<RequestNote>>()
    }

    /// Records the identity the request acts as (the key's mapped user).
    /// For the identity layer, which calls it before or after the access
    /// check: it wins over the server's own uid noted there.
    pub(crate) fn set_uid(&self, uid: u32) {
        self.uid.store(u64::from(uid), Relaxed);
    }

    /// `uid`, unless an identity was recorded already.
    fn default_uid(&self, uid: u32) {
        let _ = self
            .uid
            .compare_exchange(NO_UID, u64::from(uid), Relaxed, Relaxed);
    }

    fn uid(&self) -> Option<u32> {
        u32::try_from(self.uid.load(Relaxed)).ok()
    }
}

/// Called by the access check (which s3s runs once the signature is
/// verified and the route resolved, for every request when keys are
/// configured): notes the operation, the key, the bucket and key, and, if
/// no identity was set, the server's own uid for a signed request (every
/// key acts as the server until keys map to users).
pub(crate) fn note_access(cx: &mut S3AccessContext<'_>) {
    let operation: Box<str> = cx.s3_op().name().into();
    let key = cx.credentials().map(|c| c.access_key.clone());
    let path = cx.s3_path();
    let path = path
        .get_bucket_name()
        .map(|b| (b.into(), path.get_object_key().map(Into::into)));
    let Some(note) = RequestNote::of(cx.extensions_mut()) else {
        return;
    };
    let _ = note.operation.set(operation);
    if let Some(path) = path {
        let _ = note.path.set(path);
    }
    if let Some(key) = key {
        let _ = note.access_key.set(key);
        note.default_uid(rustix::process::geteuid().as_raw());
    }
}

/// Notes whom the request acts as once its key is mapped: a user's uid
/// (the server's own uid, noted at the access check, stays for the
/// administrator's keys).
pub(crate) fn note_identity(
    extensions: &hyper::http::Extensions,
    who: &s3hpc_store::Identity,
    key_kind: Option<&'static str>,
) {
    let Some(note) = RequestNote::of(extensions) else {
        return;
    };
    if let Some(user) = who.user() {
        note.set_uid(user.uid);
    }
    if let Some(kind) = key_kind {
        let _ = note.key_kind.set(kind);
    }
}

/// Notes the keys of a request about several (for bucket logs, which
/// record each).
pub(crate) fn note_keys(extensions: &hyper::http::Extensions, keys: Vec<String>) {
    if let Some(note) = RequestNote::of(extensions) {
        let _ = note.keys.set(keys);
    }
}

/// The service: [`WithErrorCode`] with the records, for one connection.
#[derive(Clone)]
pub(crate) struct Observed {
    pub inner: WithErrorCode,
    pub watch: Option<Arc<Watch>>,
    pub client: SocketAddr,
    pub transport: Transport,
}

impl hyper::service::Service<Request<Incoming>> for Observed {
    type Response = Response<ObservedBody>;
    type Error = HttpError;
    type Future = BoxFuture<'static, Result<Self::Response, HttpError>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        // A request to a bucket with logging on is watched for its record.
        let logged = self.watch.as_ref().and_then(|w| {
            let logs = w.bucket_logs.as_ref()?;
            let bucket = crate::sigv2_path::bucket_of(&req, &self.inner.virtual_hosts)?;
            Some(logs.logged(bucket)?.map(|key| (logs.clone(), key)))
        });
        let watch = self
            .watch
            .as_ref()
            .filter(|w| w.log.is_some() || w.metrics.is_some() || logged.is_some());
        let Some(watch) = watch else {
            let answer = self.inner.call(req.map(s3s::Body::from));
            return Box::pin(async move { Ok(answer.await?.map(ObservedBody::unobserved)) });
        };
        let note = Arc::new(RequestNote::default());
        // STS requests never reach s3s's access check, which notes the rest.
        if crate::sts::asked(&req) {
            let _ = note.operation.set("AssumeRoleWithWebIdentity".into());
        }
        // Logs that are due are written before the request that finds them
        // is served (it may be the one that looks for them).
        let roll = logged.flatten();
        let (mut parts, body) = req.into_parts();
        let mut pending = Pending::start(watch.clone(), self, note.clone(), &parts);
        parts.extensions.insert(note.clone());
        let counted = Counted { inner: body, note };
        let req = Request::from_parts(parts, s3s::Body::http_body(counted));
        let inner = self.inner.clone();
        Box::pin(async move {
            if let Some((logs, key)) = roll {
                let _ = tokio::task::spawn_blocking(move || logs.roll_if_due(&key)).await;
            }
            let resp = inner
                .call(req)
                .await
                .inspect_err(|_| pending.status = 500)?;
            pending.status = resp.status().as_u16();
            let header = |name| {
                resp.headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(String::from)
            };
            pending.request_id = header("x-amz-request-id");
            pending.version_id = header("x-amz-version-id");
            Ok(resp.map(|inner| ObservedBody {
                inner,
                pending: Some(Box::new(pending)),
            }))
        })
    }
}

/// A request on its way: what its record needs, written when this drops
/// (the answer's last byte went out, the answer was dropped unsent, or the
/// client left before any answer: status 499, as nginx logs it).
struct Pending {
    watch: Arc<Watch>,
    note: Arc<RequestNote>,
    transport: Transport,
    client: SocketAddr,
    time: SystemTime,
    start: Instant,
    /// For the record of a request the access check never saw.
    method: Method,
    uri: Uri,
    copy_source: bool,
    status: u16,
    bytes_out: u64,
    request_id: Option<String>,
    version_id: Option<String>,
    /// For bucket logs.
    user_agent: Option<String>,
    host: Option<String>,
}

impl Pending {
    fn start(
        watch: Arc<Watch>,
        on: &Observed,
        note: Arc<RequestNote>,
        req: &hyper::http::request::Parts,
    ) -> Pending {
        if let Some(m) = &watch.metrics {
            m.begin(on.transport);
        }
        Pending {
            watch,
            note,
            transport: on.transport,
            client: on.client,
            time: SystemTime::now(),
            start: Instant::now(),
            method: req.method.clone(),
            uri: req.uri.clone(),
            copy_source: req.headers.contains_key("x-amz-copy-source"),
            status: 499,
            bytes_out: 0,
            request_id: None,
            version_id: None,
            user_agent: header_of(req, hyper::header::USER_AGENT),
            host: header_of(req, hyper::header::HOST),
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let micros = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        let note = &self.note;
        let operation = match note.operation.get() {
            Some(op) => op,
            None => operation_of(&self.method, &self.uri, self.copy_source),
        };
        let bytes_in = note.bytes_in.load(Relaxed);
        if let Some(m) = &self.watch.metrics {
            m.end(&Observation {
                transport: self.transport,
                operation,
                status: self.status,
                bytes_in,
                bytes_out: self.bytes_out,
                micros,
                key_kind: note.key_kind.get().copied(),
            });
        }
        let fallback;
        let (bucket, key) = match note.path.get() {
            Some((b, k)) => (Some(&**b), k.as_deref()),
            None => {
                fallback = path_parts(self.uri.path());
                (fallback.0.as_deref(), fallback.1.as_deref())
            }
        };
        let client = self.client.to_string();
        if let (Some(logs), Some(bucket)) = (&self.watch.bucket_logs, bucket) {
            let one = [key];
            let keys: Vec<Option<&str>> = match note.keys.get() {
                Some(many) => many.iter().map(|k| Some(k.as_str())).collect(),
                None => one.to_vec(),
            };
            for key in keys {
                logs.record(
                    bucket,
                    &bucket_logs::Request {
                        time: self.time,
                        client: &client,
                        requester: note.access_key.get().map(String::as_str),
                        request_id: self.request_id.as_deref(),
                        operation,
                        method: self.method.as_str(),
                        key,
                        uri: self.uri.path_and_query().map_or("/", |p| p.as_str()),
                        status: self.status,
                        bytes_sent: self.bytes_out,
                        object_size: (bytes_in > 0).then_some(bytes_in),
                        millis: micros / 1000,
                        user_agent: self.user_agent.as_deref(),
                        version_id: self.version_id.as_deref(),
                        signed: note.access_key.get().is_some(),
                        host: self.host.as_deref(),
                    },
                );
            }
        }
        let Some(log) = &self.watch.log else {
            return;
        };
        log.record(&Record {
            time: self.time,
            transport: self.transport.as_str(),
            client: &client,
            access_key: note.access_key.get().map(String::as_str),
            uid: note.uid(),
            operation,
            bucket,
            key,
            status: self.status,
            bytes_in,
            bytes_out: self.bytes_out,
            micros,
            request_id: self.request_id.as_deref(),
            key_kind: note.key_kind.get().copied(),
        });
    }
}

/// The request body, counting the bytes read into the note.
struct Counted {
    inner: Incoming,
    note: Arc<RequestNote>,
}

impl Body for Counted {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled {
            if let Some(data) = frame.data_ref() {
                self.note.bytes_in.fetch_add(data.len() as u64, Relaxed);
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The response body, counting the bytes sent; its record is written when
/// the last frame was taken, or when hyper drops it.
pub(crate) struct ObservedBody {
    inner: s3s::Body,
    pending: Option<Box<Pending>>,
}

impl ObservedBody {
    fn unobserved(inner: s3s::Body) -> ObservedBody {
        ObservedBody {
            inner,
            pending: None,
        }
    }
}

impl Body for ObservedBody {
    type Data = Bytes;
    type Error = StdError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, StdError>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Some(p) = &mut self.pending {
            match &polled {
                Poll::Ready(Some(Ok(frame))) => {
                    p.bytes_out += frame.data_ref().map_or(0, |d| d.len() as u64);
                }
                // The end (or a failure midway): the record goes now.
                Poll::Ready(_) => drop(self.pending.take()),
                Poll::Pending => {}
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The operation of a request the access check did not see (anonymous
/// service, or refused before: a bad signature, a bad bucket name), told
/// from its method, query and copy-source header, in s3s's names for the
/// operations s3hpc serves; `-` for anything else.
fn operation_of(method: &Method, uri: &Uri, copy_source: bool) -> &'static str {
    let query = uri.query().unwrap_or("");
    let has = |name: &str| {
        query
            .split('&')
            .any(|kv| kv.split('=').next() == Some(name))
    };
    let (bucket, key) = path_parts(uri.path());
    let object = key.is_some();
    match (method, bucket.is_some(), object) {
        (&Method::GET, false, _) => "ListBuckets",
        (&Method::GET, true, false) if has("uploads") => "ListMultipartUploads",
        (&Method::GET, true, false) if has("list-type") => "ListObjectsV2",
        (&Method::GET, true, false) if has("versions") => "ListObjectVersions",
        (&Method::GET, true, false) if has("location") => "GetBucketLocation",
        (&Method::GET, true, false) if has("acl") => "GetBucketAcl",
        (&Method::GET, true, false) if has("tagging") => "GetBucketTagging",
        (&Method::GET, true, false) if has("versioning") => "GetBucketVersioning",
        (&Method::GET, true, false) => "ListObjects",
        (&Method::HEAD, true, false) => "HeadBucket",
        (&Method::PUT, true, false) => "CreateBucket",
        (&Method::DELETE, true, false) => "DeleteBucket",
        (&Method::POST, true, false) if has("delete") => "DeleteObjects",
        (&Method::GET, _, true) if has("uploadId") => "ListParts",
        (&Method::GET, _, true) if has("tagging") => "GetObjectTagging",
        (&Method::GET, _, true) if has("acl") => "GetObjectAcl",
        (&Method::GET, _, true) if has("attributes") => "GetObjectAttributes",
        (&Method::GET, _, true) => "GetObject",
        (&Method::HEAD, _, true) => "HeadObject",
        (&Method::PUT, _, true) if has("partNumber") && copy_source => "UploadPartCopy",
        (&Method::PUT, _, true) if has("partNumber") => "UploadPart",
        (&Method::PUT, _, true) if has("tagging") => "PutObjectTagging",
        (&Method::PUT, _, true) if has("acl") => "PutObjectAcl",
        (&Method::PUT, _, true) if copy_source => "CopyObject",
        (&Method::PUT, _, true) => "PutObject",
        (&Method::POST, _, true) if has("uploads") => "CreateMultipartUpload",
        (&Method::POST, _, true) if has("uploadId") => "CompleteMultipartUpload",
        (&Method::DELETE, _, true) if has("uploadId") => "AbortMultipartUpload",
        (&Method::DELETE, _, true) if has("tagging") => "DeleteObjectTagging",
        (&Method::DELETE, _, true) => "DeleteObject",
        _ => "-",
    }
}

/// The bucket and key of a path-style request path, percent-decoded.
fn path_parts(path: &str) -> (Option<String>, Option<String>) {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let path = path.strip_prefix('/').unwrap_or(path);
    match path.split_once('/') {
        _ if path.is_empty() => (None, None),
        None | Some((_, "")) => (Some(decode(path.trim_end_matches('/'))), None),
        Some((bucket, key)) => (Some(decode(bucket)), Some(decode(key))),
    }
}

fn header_of(req: &hyper::http::request::Parts, name: hyper::header::HeaderName) -> Option<String> {
    req.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_from_method_and_query() {
        let op = |m: Method, u: &str, copy| operation_of(&m, &u.parse().unwrap(), copy);
        assert_eq!(op(Method::GET, "/", false), "ListBuckets");
        assert_eq!(
            op(Method::GET, "/b?list-type=2&prefix=a", false),
            "ListObjectsV2"
        );
        assert_eq!(op(Method::GET, "/b/", false), "ListObjects");
        assert_eq!(op(Method::PUT, "/b", false), "CreateBucket");
        assert_eq!(op(Method::PUT, "/b/k", false), "PutObject");
        assert_eq!(op(Method::PUT, "/b/k", true), "CopyObject");
        assert_eq!(
            op(Method::PUT, "/b/k?partNumber=1&uploadId=x", true),
            "UploadPartCopy"
        );
        assert_eq!(
            op(Method::POST, "/b/k?uploads", false),
            "CreateMultipartUpload"
        );
        assert_eq!(
            op(Method::POST, "/b/k?uploadId=u", false),
            "CompleteMultipartUpload"
        );
        assert_eq!(
            op(Method::DELETE, "/b/k?uploadId=u", false),
            "AbortMultipartUpload"
        );
        assert_eq!(op(Method::HEAD, "/b/a/b%20c", false), "HeadObject");
        assert_eq!(op(Method::PATCH, "/b/k", false), "-");
    }

    #[test]
    fn a_mapped_uid_wins_over_the_servers() {
        let note = RequestNote::default();
        assert_eq!(note.uid(), None);
        note.default_uid(7);
        note.set_uid(1000);
        note.default_uid(7);
        assert_eq!(note.uid(), Some(1000));
    }

    #[test]
    fn bucket_and_key_decoded() {
        assert_eq!(path_parts("/"), (None, None));
        assert_eq!(path_parts("/b/"), (Some("b".into()), None));
        assert_eq!(
            path_parts("/b/a%20b/%0A"),
            (Some("b".into()), Some("a b/\n".into()))
        );
    }
}
