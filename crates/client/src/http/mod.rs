//! The HTTP transport: S3 REST over any endpoint (s3hpc's server, MinIO,
//! versitygw, AWS), path style, signed with SigV4.
//!
//! Requests carry SigV4 in the `Authorization` header with an unsigned
//! payload, which every S3 server accepts and which needs no hashing of the
//! body (`sigv4.rs`); `ureq` sends, blocking and with pooled keep-alive
//! connections: the shape of a benchmark rank. Bodies stream in both
//! directions.

mod acl;
mod chunked;
mod request;
mod response;
pub mod sigv4;
pub mod xml;

use crate::{GetObject, Request, Response, S3Client, Tags};
pub use request::HttpClientConfig;
use request::{Body, Call};
use response::{object_info, parse_time};
use s3hpc_store::{
    BucketInfo, ByteRange, DeleteCondition, ErrorCode, KeyVersion, ListPage, ListRequest,
    ObjectInfo, PartInfo, PutBody, PutOptions, Result, S3Error, UploadInfo, Versioning,
    VersionsPage, VersionsRequest, WriteCondition,
};
use std::io::Read;
use ureq::http::Method;
pub use xml::complete_multipart_document;

/// S3 over HTTP. Cheap to share between threads: connections are pooled.
pub struct HttpClient {
    inner: request::Transport,
    /// Whatever must outlive the client's connections (the server a bench
    /// run started for it); dropped after them.
    _owned: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl HttpClient {
    pub fn new(config: HttpClientConfig) -> std::result::Result<HttpClient, String> {
        Ok(HttpClient {
            inner: request::Transport::new(config)?,
            _owned: None,
        })
    }

    /// Keeps `owned` (for example the server this client talks to) alive
    /// as long as the client, and drops it after the client's connections.
    pub fn keep_alive(mut self, owned: impl std::any::Any + Send + Sync) -> HttpClient {
        self._owned = Some(Box::new(owned));
        self
    }

    /// `endpoint` like `http://127.0.0.1:9000`, signing as one user.
    pub fn with_credentials(
        endpoint: &str,
        access_key: &str,
        secret_key: &str,
    ) -> std::result::Result<HttpClient, String> {
        HttpClient::new(HttpClientConfig {
            endpoint: endpoint.to_string(),
            credentials: Some((access_key.to_string(), secret_key.to_string())),
            ..Default::default()
        })
    }

    fn start<'a>(&'a self, method: Method, bucket: &'a str, key: Option<&'a str>) -> Call<'a> {
        Call::new(&self.inner, method, Some(bucket), key)
    }

    /// The object a copy or a completed upload wrote: from the answer's
    /// headers where the server sends it (s3hpc does), else by HEAD.
    fn written(
        &self,
        bucket: &str,
        key: &str,
        (headers, doc): (ureq::http::HeaderMap, String),
    ) -> Result<ObjectInfo> {
        // No ETag (or no document): the caller asks with HEAD.
        let etag = xml::parse::<xml::Written>(&doc, format_args!("write {key}"))
            .map(|w| w.etag)
            .unwrap_or_default();
        match response::written_info(key, &etag, &headers)? {
            Some(info) if !etag.is_empty() => Ok(info),
            _ => object_info(key, &self.start(Method::HEAD, bucket, Some(key)).send()?),
        }
    }
}

/// A GET body streamed from the connection (no local file behind it).
struct HttpBody {
    reader: ureq::BodyReader<'static>,
    /// Bytes the answer still owes.
    left: u64,
}

impl HttpBody {
    fn new(reader: ureq::BodyReader<'static>, length: u64) -> std::io::Result<HttpBody> {
        let mut body = HttpBody {
            reader,
            left: length,
        };
        if length == 0 {
            body.finish()?;
        }
        Ok(body)
    }

    /// ureq returns the connection to its pool only once a read has seen
    /// the end; callers that read exactly the length never make that read,
    /// and each GET would then cost a new connection.
    fn finish(&mut self) -> std::io::Result<()> {
        self.reader.read(&mut [0u8; 1]).map(drop)
    }
}

impl Read for HttpBody {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.reader.read(buf)?;
        self.left = self.left.saturating_sub(n as u64);
        if n > 0 && self.left == 0 {
            self.finish()?;
        }
        Ok(n)
    }
}

impl crate::ObjectBody for HttpBody {}

fn range_header(r: ByteRange) -> String {
    match r {
        ByteRange::FromTo { first, last: None } => format!("bytes={first}-"),
        ByteRange::FromTo {
            first,
            last: Some(last),
        } => format!("bytes={first}-{last}"),
        ByteRange::Suffix(n) => format!("bytes=-{n}"),
    }
}

/// `Content-Range: bytes FIRST-LAST/SIZE` into (offset, length, size).
fn content_range(v: &str) -> Option<(u64, u64, u64)> {
    let (range, size) = v.strip_prefix("bytes ")?.split_once('/')?;
    let (first, last) = range.split_once('-')?;
    let (first, last): (u64, u64) = (first.parse().ok()?, last.parse().ok()?);
    Some((first, last.checked_sub(first)? + 1, size.parse().ok()?))
}

fn with_put_options<'a>(mut call: Call<'a>, opts: &'a PutOptions) -> Result<Call<'a>> {
    if let Some(ct) = &opts.content_type {
        call = call.header("content-type", ct.clone());
    }
    for (k, v) in &opts.metadata {
        call = call.header(format!("x-amz-meta-{k}"), v.clone());
    }
    for (k, v) in opts.headers.iter() {
        call = call.header(k, v.to_string());
    }
    if let Some(c) = &opts.checksum {
        call = match &c.expected {
            Some(v) => call.header(c.algorithm.header_name(), v.clone()),
            None => call.header("x-amz-sdk-checksum-algorithm", c.algorithm.as_str()),
        };
    }
    if let Some(m) = &opts.content_md5 {
        call = call.header("content-md5", s3hpc_store::to_base64(m));
    }
    if !opts.tags.is_empty() {
        call = call.header("x-amz-tagging", tagging_header(&opts.tags));
    }
    if let Some(a) = &opts.access {
        for (k, v) in acl::headers(a)? {
            call = call.header(k, v);
        }
    }
    if let Some(r) = &opts.retention {
        let until = jiff::Timestamp::try_from(r.until).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        call = call
            .header("x-amz-object-lock-mode", r.mode.as_str())
            .header("x-amz-object-lock-retain-until-date", until.to_string());
    }
    if let Some(on) = opts.legal_hold {
        call = call.header(
            "x-amz-object-lock-legal-hold",
            if on { "ON" } else { "OFF" },
        );
    }
    Ok(call)
}

/// `x-amz-tagging`: the tags as a URL query string.
fn tagging_header(tags: &Tags) -> String {
    let enc = |s: &str| s3hpc_store::url_encode(s).replace('/', "%2F");
    tags.iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A GET's answer: the object's info, which of its bytes follow (from
/// Content-Range, if any) and their reader.
fn object_answer(key: &str, resp: ureq::http::Response<ureq::Body>) -> Result<GetObject> {
    let mut info = object_info(key, &resp)?;
    let (offset, length) = match resp.headers().get("content-range") {
        Some(v) => {
            let v = v.to_str().unwrap_or_default();
            let (offset, length, size) = content_range(v).ok_or_else(|| {
                S3Error::new(
                    ErrorCode::InternalError,
                    format!("GET {key}: unreadable Content-Range {v:?}"),
                )
            })?;
            info.size = size;
            (offset, length)
        }
        None => (0, info.size),
    };
    Ok(GetObject {
        info,
        offset,
        length,
        body: Box::new(
            HttpBody::new(resp.into_body().into_reader(), length)
                .map_err(|e| S3Error::from_io(&e, key))?,
        ),
    })
}

/// An HTTP date (RFC 9110's IMF-fixdate), to the second.
fn http_date(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let ts = jiff::Timestamp::from_second(secs).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&ts)
        .unwrap_or_default()
}

/// The headers of a write condition.
fn with_condition<'a>(call: Call<'a>, cond: &WriteCondition) -> Call<'a> {
    match cond {
        WriteCondition::Always => call,
        WriteCondition::IfNoneMatch => call.header("if-none-match", "*"),
        WriteCondition::IfMatch(etag) => call.header("if-match", etag.clone()),
        WriteCondition::IfNoneMatchEtag(etags) => call.header("if-none-match", etags.clone()),
    }
}

fn body_of(body: PutBody<'_>) -> Body<'_> {
    match body {
        PutBody::Bytes(b) => Body::Bytes(b),
        PutBody::Stream { reader, len } => Body::Reader(reader, len),
    }
}

/// A ListObjectsV2 answer (`encoding-type=url`) as the engine's page.
fn list_page(doc: xml::ListBucket) -> Result<ListPage> {
    let objects = doc
        .contents
        .into_iter()
        .map(|c| {
            let modified = parse_time(&c.last_modified)?;
            Ok(ObjectInfo::new(
                xml::url_decode(&c.key),
                c.size,
                modified,
                c.etag,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ListPage {
        objects,
        common_prefixes: doc
            .common_prefixes
            .iter()
            .map(|p| xml::url_decode(&p.prefix))
            .collect(),
        is_truncated: doc.is_truncated,
        next_token: doc.next_continuation_token.filter(|_| doc.is_truncated),
    })
}

/// A listing's query: keys URL-encoded, and the prefix, delimiter and
/// page size (`(prefix, delimiter, max_keys)`) and the markers that are
/// set.
fn listing_query<'a>(
    mut call: Call<'a>,
    (prefix, delimiter, max_keys): (&str, Option<&str>, usize),
    markers: [(&'static str, Option<&str>); 2],
) -> Call<'a> {
    call = call.query("encoding-type", "url");
    if !prefix.is_empty() {
        call = call.query("prefix", prefix);
    }
    if let Some(d) = delimiter {
        call = call.query("delimiter", d);
    }
    for (name, value) in markers {
        if let Some(v) = value {
            call = call.query(name, v);
        }
    }
    if max_keys > 0 {
        call = call.query("max-keys", max_keys.to_string());
    }
    call
}

/// `call` with the headers of a conditional DELETE.
fn with_delete_condition<'a>(mut call: Call<'a>, cond: &DeleteCondition) -> Call<'a> {
    if let Some(etag) = &cond.etag {
        call = call.header("if-match", etag.clone());
    }
    if let Some(size) = cond.size {
        call = call.header("x-amz-if-match-size", size.to_string());
    }
    if let Some(t) = cond.last_modified {
        call = call.header("x-amz-if-match-last-modified-time", http_date(t));
    }
    call
}

impl S3Client for HttpClient {
    fn transport(&self) -> &'static str {
        "http"
    }

    fn call(&self, req: Request<'_>) -> Result<Response> {
        match req {
            Request::CreateBucket { bucket } => {
                let sent = self.start(Method::PUT, bucket, None).send().map(drop);
                crate::owned_is_created(sent).map(Response::done)
            }
            Request::DeleteBucket { bucket } => self
                .start(Method::DELETE, bucket, None)
                .send()
                .map(Response::done),
            Request::HeadBucket { bucket } => self
                .start(Method::HEAD, bucket, None)
                .send()
                .map(Response::done),
            Request::ListBuckets => self.fetch_buckets().map(Response::Buckets),
            Request::PutObject(r) => {
                let call = self.start(Method::PUT, r.bucket, Some(r.key));
                let call = with_put_options(call, r.opts)?;
                let resp = with_condition(call, &r.opts.condition).send_body(body_of(r.body))?;
                response::etag(&resp).map(Response::ETag)
            }
            Request::GetObject { bucket, key, range } => {
                self.fetch_object(bucket, key, range).map(Response::Object)
            }
            Request::GetObjectPart(r) => {
                let resp = self
                    .start(Method::GET, r.bucket, Some(r.key))
                    .query("partNumber", r.part_number.to_string())
                    .send()?;
                let count = resp
                    .headers()
                    .get("x-amz-mp-parts-count")
                    .and_then(|n| n.to_str().ok()?.parse().ok());
                Ok(Response::ObjectPart(object_answer(r.key, resp)?, count))
            }
            Request::HeadObject { bucket, key } => {
                let resp = self.start(Method::HEAD, bucket, Some(key)).send()?;
                object_info(key, &resp).map(Response::Info)
            }
            Request::DeleteObject(r) => {
                let call = self.start(Method::DELETE, r.bucket, Some(r.key));
                with_delete_condition(call, r.condition)
                    .send()
                    .map(Response::done)
            }
            Request::ListObjects { bucket, list } => {
                self.fetch_list_page(bucket, list).map(Response::List)
            }
            Request::CopyObject(r) => {
                request::check_key(r.src_key)?;
                let source = format!("/{}/{}", r.src_bucket, s3hpc_store::url_encode(r.src_key));
                let mut call = self
                    .start(Method::PUT, r.dst_bucket, Some(r.dst_key))
                    .header("x-amz-copy-source", source);
                if let Some(o) = r.opts {
                    call = with_put_options(call.header("x-amz-metadata-directive", "REPLACE"), o)?;
                    if !o.tags.is_empty() {
                        call = call.header("x-amz-tagging-directive", "REPLACE");
                    }
                }
                let answer = with_condition(call, r.condition).send_for_answer(Body::Empty)?;
                self.written(r.dst_bucket, r.dst_key, answer)
                    .map(Response::Info)
            }
            Request::GetObjectTagging { bucket, key } => {
                self.fetch_tags(bucket, key).map(Response::Tags)
            }
            Request::PutObjectTagging { bucket, key, tags } => {
                let doc = xml::Tagging::of(tags).to_xml();
                self.start(Method::PUT, bucket, Some(key))
                    .query("tagging", "")
                    .header("content-type", "application/xml")
                    .send_for_xml(Body::Bytes(doc.as_bytes()))
                    .map(Response::done)
            }
            Request::DeleteObjectTagging { bucket, key } => self
                .start(Method::DELETE, bucket, Some(key))
                .query("tagging", "")
                .send()
                .map(Response::done),
            Request::CreateMultipartUpload { bucket, key, opts } => {
                let doc = with_put_options(self.start(Method::POST, bucket, Some(key)), opts)?
                    .query("uploads", "")
                    .send_for_xml(Body::Empty)?;
                let what = format_args!("create upload of {bucket}/{key}");
                let created = xml::parse::<xml::InitiateMultipartUpload>(&doc, what)?;
                Ok(Response::UploadId(created.upload_id))
            }
            Request::UploadPart(r) => {
                let resp = self
                    .start(Method::PUT, r.bucket, Some(r.key))
                    .query("partNumber", r.part_number.to_string())
                    .query("uploadId", r.upload_id)
                    .send_body(body_of(r.body))?;
                response::etag(&resp).map(Response::ETag)
            }
            Request::CompleteMultipartUpload(r) => {
                let doc = xml::complete_multipart_document(r.parts);
                let call = self
                    .start(Method::POST, r.bucket, Some(r.key))
                    .query("uploadId", r.upload_id)
                    .header("content-type", "application/xml");
                let body = Body::Bytes(doc.as_bytes());
                let answer = with_condition(call, r.condition).send_for_answer(body)?;
                self.written(r.bucket, r.key, answer).map(Response::Info)
            }
            Request::AbortMultipartUpload(u) => self
                .start(Method::DELETE, u.bucket, Some(u.key))
                .query("uploadId", u.upload_id)
                .send()
                .map(Response::done),
            Request::ListParts(u) => self
                .fetch_all_parts(u.bucket, u.key, u.upload_id)
                .map(Response::Parts),
            Request::ListMultipartUploads { bucket, prefix } => self
                .fetch_all_uploads(bucket, prefix)
                .map(Response::Uploads),
            Request::PutBucketVersioning { bucket, state } => {
                let doc = xml::VersioningConfiguration {
                    status: Some(state.as_str().to_string()).filter(|s| !s.is_empty()),
                }
                .to_xml();
                self.start(Method::PUT, bucket, None)
                    .query("versioning", "")
                    .header("content-type", "application/xml")
                    .send_for_xml(Body::Bytes(doc.as_bytes()))
                    .map(Response::done)
            }
            Request::GetBucketVersioning { bucket } => {
                let doc = self
                    .start(Method::GET, bucket, None)
                    .query("versioning", "")
                    .send_for_xml(Body::Empty)?;
                let what = format_args!("versioning of {bucket}");
                let c: xml::VersioningConfiguration = xml::parse(&doc, what)?;
                Ok(Response::Versioning(match c.status.as_deref() {
                    Some("Enabled") => Versioning::Enabled,
                    Some("Suspended") => Versioning::Suspended,
                    _ => Versioning::Off,
                }))
            }
            Request::ListObjectVersions { bucket, list } => {
                self.fetch_versions(bucket, list).map(Response::Versions)
            }
            Request::GetObjectVersion { version: v, range } => {
                let call = self
                    .start(Method::GET, v.bucket, Some(v.key))
                    .query("versionId", v.version_id);
                let call = match range {
                    Some(r) => call.header("range", range_header(r)),
                    None => call,
                };
                object_answer(v.key, call.send()?).map(Response::Object)
            }
            Request::HeadObjectVersion(v) => {
                let resp = self
                    .start(Method::HEAD, v.bucket, Some(v.key))
                    .query("versionId", v.version_id)
                    .send()?;
                object_info(v.key, &resp).map(Response::Info)
            }
            Request::DeleteObjectVersion(v) => self
                .start(Method::DELETE, v.bucket, Some(v.key))
                .query("versionId", v.version_id)
                .send()
                .map(Response::done),
        }
    }
}

/// The operations of more than a few lines, for [`S3Client::call`]
/// (named apart from the trait's typed methods, which call `call`).
impl HttpClient {
    fn fetch_buckets(&self) -> Result<Vec<BucketInfo>> {
        let doc = Call::new(&self.inner, Method::GET, None, None).send_for_xml(Body::Empty)?;
        xml::parse::<xml::ListAllMyBuckets>(&doc, format_args!("GET /"))?
            .buckets
            .list
            .into_iter()
            .map(|b| {
                Ok(BucketInfo {
                    created: parse_time(&b.creation_date)?,
                    name: b.name,
                    owner: None,
                })
            })
            .collect()
    }

    fn fetch_object(&self, bucket: &str, key: &str, range: Option<ByteRange>) -> Result<GetObject> {
        let mut call = self.start(Method::GET, bucket, Some(key));
        if let Some(r) = range {
            if let ByteRange::FromTo {
                first,
                last: Some(last),
            } = r
            {
                // HTTP has no way to send this; the engine's answer.
                if last < first {
                    return Err(S3Error::new(
                        ErrorCode::InvalidRange,
                        format!("range end {last} is before its start {first}"),
                    ));
                }
            }
            call = call.header("range", range_header(r));
        }
        object_answer(key, call.send()?)
    }

    fn fetch_list_page(&self, bucket: &str, req: &ListRequest) -> Result<ListPage> {
        let call = self
            .start(Method::GET, bucket, None)
            .query("list-type", "2");
        let page = (req.prefix.as_str(), req.delimiter.as_deref(), req.max_keys);
        let after = ("start-after", req.start_after.as_deref());
        let token = ("continuation-token", req.continuation_token.as_deref());
        let doc = listing_query(call, page, [after, token]).send_for_xml(Body::Empty)?;
        list_page(xml::parse(&doc, format_args!("list {bucket}"))?)
    }

    fn fetch_versions(&self, bucket: &str, req: &VersionsRequest) -> Result<VersionsPage> {
        let call = self.start(Method::GET, bucket, None).query("versions", "");
        let page = (req.prefix.as_str(), req.delimiter.as_deref(), req.max_keys);
        let key = ("key-marker", req.key_marker.as_deref());
        let version = ("version-id-marker", req.version_id_marker.as_deref());
        let doc = listing_query(call, page, [key, version]).send_for_xml(Body::Empty)?;
        let list: xml::ListVersions = xml::parse(&doc, format_args!("versions in {bucket}"))?;
        let mut page = VersionsPage::default();
        for child in list.children {
            match child {
                xml::VersionsChild::Version(_) | xml::VersionsChild::DeleteMarker(_) => {
                    let (v, marker) = match child {
                        xml::VersionsChild::DeleteMarker(v) => (v, true),
                        xml::VersionsChild::Version(v) => (v, false),
                        _ => unreachable!("matched as a version or a marker"),
                    };
                    let last_modified = parse_time(&v.last_modified)?;
                    let key = xml::url_decode(&v.key);
                    let info = (!marker).then(|| {
                        let mut info = ObjectInfo::new(key.clone(), v.size, last_modified, v.etag);
                        info.version_id = Some(v.version_id.clone());
                        info
                    });
                    page.versions.push((
                        key,
                        KeyVersion {
                            version_id: v.version_id,
                            is_latest: v.is_latest,
                            delete_marker: marker,
                            last_modified,
                            info,
                        },
                    ));
                }
                xml::VersionsChild::CommonPrefixes(p) => {
                    page.common_prefixes.push(xml::url_decode(&p.prefix))
                }
                xml::VersionsChild::IsTruncated(t) => page.is_truncated = t,
                xml::VersionsChild::NextKeyMarker(k) => {
                    page.next_key_marker = Some(xml::url_decode(&k))
                }
                xml::VersionsChild::NextVersionIdMarker(v) => page.next_version_id_marker = Some(v),
                xml::VersionsChild::Other => {}
            }
        }
        Ok(page)
    }

    fn fetch_tags(&self, bucket: &str, key: &str) -> Result<Tags> {
        let doc = self
            .start(Method::GET, bucket, Some(key))
            .query("tagging", "")
            .send_for_xml(Body::Empty)?;
        let tags: xml::Tagging = xml::parse(&doc, format_args!("tags of {bucket}/{key}"))?;
        Ok(tags
            .tag_set
            .tags
            .into_iter()
            .map(|t| (t.key, t.value))
            .collect())
    }

    fn fetch_all_parts(&self, bucket: &str, key: &str, upload_id: &str) -> Result<Vec<PartInfo>> {
        let mut parts = Vec::new();
        let mut marker = None::<String>;
        loop {
            let mut call = self
                .start(Method::GET, bucket, Some(key))
                .query("uploadId", upload_id);
            if let Some(m) = &marker {
                call = call.query("part-number-marker", m);
            }
            let doc = call.send_for_xml(Body::Empty)?;
            let page: xml::ListParts = xml::parse(&doc, format_args!("parts of {bucket}/{key}"))?;
            for p in page.parts {
                parts.push(PartInfo {
                    part_number: p.part_number,
                    size: p.size,
                    last_modified: parse_time(&p.last_modified)?,
                    etag: p.etag,
                    checksum: None,
                });
            }
            marker = page.next_part_number_marker;
            if !page.is_truncated || marker.is_none() {
                return Ok(parts);
            }
        }
    }

    fn fetch_all_uploads(&self, bucket: &str, prefix: &str) -> Result<Vec<UploadInfo>> {
        let mut uploads = Vec::new();
        let mut markers = None::<(String, String)>;
        loop {
            let mut call = self.start(Method::GET, bucket, None).query("uploads", "");
            if !prefix.is_empty() {
                call = call.query("prefix", prefix);
            }
            if let Some((k, u)) = &markers {
                call = call.query("key-marker", k).query("upload-id-marker", u);
            }
            let doc = call.send_for_xml(Body::Empty)?;
            let page: xml::ListUploads = xml::parse(&doc, format_args!("uploads in {bucket}"))?;
            for u in page.uploads {
                uploads.push(UploadInfo {
                    initiated: parse_time(&u.initiated)?,
                    key: u.key,
                    upload_id: u.upload_id,
                    owner: None,
                });
            }
            let next = page.next_key_marker.zip(page.next_upload_id_marker);
            if !page.is_truncated || next.is_none() {
                return Ok(uploads);
            }
            markers = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_both_ways() {
        assert_eq!(
            range_header(ByteRange::FromTo {
                first: 3,
                last: None
            }),
            "bytes=3-"
        );
        assert_eq!(range_header(ByteRange::Suffix(7)), "bytes=-7");
        assert_eq!(content_range("bytes 2-5/10"), Some((2, 4, 10)));
        assert_eq!(content_range("bytes 5-2/10"), None);
        assert_eq!(content_range("items 0-1/2"), None);
    }
}
