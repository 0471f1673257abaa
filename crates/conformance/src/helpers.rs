//! What the checks share: asserting helpers, test data, listing and streaming
//! helpers, and the client API every check module uses.

pub(crate) use md5::{Digest, Md5};
pub(crate) use s3hpc_client::{
    read_exact_body, ByteRange, DeleteCondition, ErrorCode, GetObject, ListPage, ListRequest,
    ObjectHeaders, ObjectInfo, PutBody, PutOptions, Result, S3Client, S3Error, WriteCondition,
};
pub(crate) use std::collections::BTreeMap;
pub(crate) use std::io::Read;
pub(crate) use std::time::{Duration, SystemTime};

/// Asserts that `r` failed with `code`; `what` names the request.
#[track_caller]
pub(crate) fn expect_err<T>(r: Result<T>, code: ErrorCode, what: &str) {
    match r {
        Ok(_) => panic!("{what}: succeeded, expected {}", code.as_str()),
        Err(e) => assert_eq!(e.code, code, "{what}: expected {}, got {e}", code.as_str()),
    }
}

#[track_caller]
pub(crate) fn ok<T>(r: Result<T>, what: &str) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Deterministic, non-repeating-looking content.
pub(crate) fn data(len: usize, seed: u8) -> Vec<u8> {
    let mut x = 0x9e37_79b9_u32 ^ u32::from(seed).wrapping_mul(0x0100_0193);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

pub(crate) fn opts(content_type: &str, meta: &[(&str, &str)]) -> PutOptions {
    PutOptions {
        content_type: Some(content_type.to_string()),
        metadata: meta_map(meta),
        ..Default::default()
    }
}

pub(crate) fn meta_map(meta: &[(&str, &str)]) -> BTreeMap<String, String> {
    meta.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[track_caller]
pub(crate) fn put(c: &dyn S3Client, b: &str, key: &str, body: &[u8]) -> String {
    ok(
        c.put_object(b, key, PutBody::Bytes(body), &PutOptions::default()),
        &format!("PUT {key:?}"),
    )
}

/// GETs `key` (or a range of it) and reads the whole body.
#[track_caller]
pub(crate) fn get(
    c: &dyn S3Client,
    b: &str,
    key: &str,
    range: Option<ByteRange>,
) -> (GetObject, Vec<u8>) {
    let what = format!("GET {key:?} {range:?}");
    let mut got = ok(c.get_object(b, key, range), &what);
    let mut body = Vec::new();
    got.body
        .read_to_end(&mut body)
        .unwrap_or_else(|e| panic!("{what}: reading the body: {e}"));
    assert_eq!(
        body.len() as u64,
        got.length,
        "{what}: body length against GetObject.length"
    );
    (got, body)
}

/// Asserts `key` holds exactly `want`, through GET and HEAD.
#[track_caller]
pub(crate) fn assert_content(c: &dyn S3Client, b: &str, key: &str, want: &[u8]) -> ObjectInfo {
    let (got, body) = get(c, b, key, None);
    assert!(
        body == want,
        "GET {key:?}: content differs from what was written ({} bytes, expected {})",
        body.len(),
        want.len()
    );
    assert_eq!(
        (got.offset, got.length),
        (0, want.len() as u64),
        "GET {key:?}: offset, length"
    );
    let head = ok(c.head_object(b, key), &format!("HEAD {key:?}"));
    assert_eq!(head.size, want.len() as u64, "HEAD {key:?}: size");
    assert_eq!(head, got.info, "HEAD {key:?} against the GET's info");
    head
}

/// Asserts `key` holds `want` with the content type and metadata of `o`.
#[track_caller]
pub(crate) fn assert_stored(
    c: &dyn S3Client,
    b: &str,
    key: &str,
    want: &[u8],
    o: &PutOptions,
) -> ObjectInfo {
    let head = assert_content(c, b, key, want);
    assert_eq!(
        head.content_type, o.content_type,
        "HEAD {key:?}: content type"
    );
    assert_eq!(head.metadata, o.metadata, "HEAD {key:?}: metadata");
    head
}

/// ETags are quoted; one without a `-` is the MD5 of the content (a `-`
/// marks an opaque ETag: multipart, or the engine's fast policy).
#[track_caller]
pub(crate) fn assert_etag(etag: &str, content: &[u8], what: &str) {
    assert!(
        etag.len() > 2 && etag.starts_with('"') && etag.ends_with('"'),
        "{what}: ETag {etag:?} is not quoted"
    );
    if !etag.contains('-') {
        let md5: String = Md5::digest(content)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            etag,
            format!("\"{md5}\""),
            "{what}: ETag is not the content's MD5"
        );
    }
}

#[track_caller]
pub(crate) fn assert_recent(t: SystemTime, what: &str) {
    let now = SystemTime::now();
    let skew = Duration::from_secs(600);
    assert!(
        t > now - skew && t < now + skew,
        "{what}: last modified {t:?} is not near now ({now:?})"
    );
}

/// Follows continuation tokens from `req` to the end, checking each page's
/// shape, and returns every page.
#[track_caller]
pub(crate) fn list_pages(c: &dyn S3Client, b: &str, req: &ListRequest) -> Vec<ListPage> {
    let mut req = req.clone();
    let mut pages = Vec::new();
    loop {
        let page = ok(c.list_objects(b, &req), &format!("LIST {req:?}"));
        let n = page.objects.len() + page.common_prefixes.len();
        if req.max_keys > 0 {
            assert!(n <= req.max_keys, "LIST {req:?}: {n} entries on a page");
        }
        assert_eq!(
            page.is_truncated,
            page.next_token.is_some(),
            "LIST {req:?}: is_truncated against next_token"
        );
        assert!(pages.len() < 10_000, "LIST {req:?}: paging does not end");
        let next = page.next_token.clone();
        pages.push(page);
        match next {
            Some(t) => req.continuation_token = Some(t),
            None => return pages,
        }
    }
}

/// Keys and common prefixes of a whole listing.
#[track_caller]
pub(crate) fn list(c: &dyn S3Client, b: &str, req: &ListRequest) -> (Vec<String>, Vec<String>) {
    let pages = list_pages(c, b, req);
    let keys = pages.iter().flat_map(|p| &p.objects).map(|o| o.key.clone());
    let prefixes = pages.iter().flat_map(|p| p.common_prefixes.clone());
    (keys.collect(), prefixes.collect())
}

#[track_caller]
pub(crate) fn bucket_names(c: &dyn S3Client) -> Vec<String> {
    let buckets = ok(c.list_buckets(), "list buckets");
    buckets.into_iter().map(|i| i.name).collect()
}

pub(crate) fn req(prefix: &str, delimiter: Option<&str>) -> ListRequest {
    ListRequest {
        prefix: prefix.to_string(),
        delimiter: delimiter.map(str::to_string),
        ..Default::default()
    }
}

pub(crate) fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

pub(crate) fn put_keys(c: &dyn S3Client, b: &str, keys: &[&str]) {
    for (i, k) in keys.iter().enumerate() {
        put(c, b, k, &data(i % 7, i as u8));
    }
}

/// A reader that hands out its data in odd-sized pieces, so a transport's
/// buffering and chunking see reads that never align with their buffers.
pub(crate) struct Chunked<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        // Vary the piece size: 1, then up to 100 KiB.
        self.step = (self.step * 7 + 1) % (100 << 10) + 1;
        Ok(n)
    }
}

/// Several MiB, so every transport has to stream it in chunks.
pub(crate) const STREAM_LEN: usize = (6 << 20) + 12_345;
pub(crate) const MIB5: usize = 5 << 20;

pub(crate) fn stream_put(
    c: &dyn S3Client,
    b: &str,
    key: &str,
    content: &[u8],
    len: Option<u64>,
) -> Result<String> {
    let mut reader = Chunked {
        data: content,
        step: 1,
    };
    let body = PutBody::Stream {
        reader: &mut reader,
        len,
    };
    c.put_object(b, key, body, &PutOptions::default())
}

/// Uploads two parts (the first exactly 5 MiB, the second streamed) and
/// returns the upload id, the parts and the expected content.
pub(crate) fn upload_two_parts(
    c: &dyn S3Client,
    b: &str,
    key: &str,
    o: &PutOptions,
) -> (String, Vec<(u32, String)>, Vec<u8>) {
    let id = ok(c.create_multipart_upload(b, key, o), "create upload");
    let content = data(MIB5 + 300_000, 12);
    let e1 = ok(
        c.upload_part(b, key, &id, 1, PutBody::Bytes(&content[..MIB5])),
        "upload part 1",
    );
    assert_etag(&e1, &content[..MIB5], "part 1");
    let mut rest = Chunked {
        data: &content[MIB5..],
        step: 1,
    };
    let e2 = ok(
        c.upload_part(
            b,
            key,
            &id,
            2,
            PutBody::Stream {
                reader: &mut rest,
                len: None,
            },
        ),
        "upload part 2",
    );
    assert_etag(&e2, &content[MIB5..], "part 2");
    (id, vec![(1, e1), (2, e2)], content)
}
