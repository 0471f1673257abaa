//! The conformance suite every transport runs: the same S3 behaviour checked
//! through the [`S3Client`] trait alone, so the embedded, RPC, HTTP and libs3
//! transports are held to one contract instead of one copy of the tests each.
//!
//! Compiled only with the `conformance` feature. A transport's test file is a
//! few lines:
//!
//! ```ignore
//! use s3hpc_client::conformance::{run_all, Fixture};
//!
//! #[test]
//! fn conformance() {
//!     run_all("default", &|| {
//!         let dir = tempfile::tempdir().unwrap();
//!         let client = MyTransport::start(dir.path()); // over a fresh data root
//!         Fixture::new(client, dir) // the guard keeps the directory alive
//!     });
//! }
//! ```
//!
//! [`run_all`] builds a fresh fixture for every check, creates a bucket of the
//! check's own in it, runs the check and goes on after a failure; at the end
//! it panics with one line per failed check, `<transport> (<label>) <check>:
//! <message>`. `S3HPC_CONFORMANCE=name,name` runs only the named checks.
//!
//! Checks use only the trait (never the file system), and each states the
//! contract it holds a transport to in its doc comment.

use crate::{
    read_exact_body, ByteRange, DeleteCondition, ErrorCode, GetObject, ListPage, ListRequest,
    ObjectHeaders, ObjectInfo, PutBody, PutOptions, Result, S3Client, S3Error, WriteCondition,
};
use md5::{Digest, Md5};
use std::any::Any;
use std::collections::BTreeMap;
use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, SystemTime};

/// One check: a client and the name of a bucket that exists, is empty and
/// belongs to this check alone. A check panics (assert) when the transport
/// breaks the contract.
pub type Check = fn(&dyn S3Client, &str);

/// A client over a fresh data root, and whatever must live as long as it (a
/// temporary directory, a server thread).
pub struct Fixture {
    pub client: Box<dyn S3Client>,
    pub guard: Box<dyn Any>,
}

impl Fixture {
    pub fn new(client: impl S3Client + 'static, guard: impl Any) -> Fixture {
        Fixture {
            client: Box::new(client),
            guard: Box::new(guard),
        }
    }
}

/// Every check, by name.
pub const CHECKS: &[(&str, Check)] = &[
    ("bucket_lifecycle", bucket_lifecycle),
    ("bucket_name_rules", bucket_name_rules),
    ("missing_bucket", missing_bucket),
    ("put_get_head_round_trip", put_get_head_round_trip),
    ("empty_object", empty_object),
    ("missing_key", missing_key),
    ("special_character_keys", special_character_keys),
    ("max_length_key", max_length_key),
    ("folder_markers", folder_markers),
    ("object_and_prefix", object_and_prefix),
    ("put_stream_with_len", put_stream_with_len),
    ("put_stream_without_len", put_stream_without_len),
    (
        "put_stream_short_is_incomplete",
        put_stream_short_is_incomplete,
    ),
    ("ranged_get", ranged_get),
    ("invalid_range", invalid_range),
    ("delete_is_idempotent", delete_is_idempotent),
    ("delete_prunes_prefixes", delete_prunes_prefixes),
    ("copy_keeps_metadata", copy_keeps_metadata),
    ("copy_replaces_metadata", copy_replaces_metadata),
    ("overwrite_replaces", overwrite_replaces),
    ("list_byte_order", list_byte_order),
    ("list_prefix", list_prefix),
    ("list_delimiter", list_delimiter),
    ("list_start_after", list_start_after),
    ("list_paging", list_paging),
    ("list_paging_with_delimiter", list_paging_with_delimiter),
    ("hostile_keys", hostile_keys),
    ("multipart_round_trip", multipart_round_trip),
    ("multipart_abort", multipart_abort),
    ("multipart_complete_retried", multipart_complete_retried),
    (
        "multipart_parts_after_completion",
        multipart_parts_after_completion,
    ),
    ("multipart_invalid_part_order", multipart_invalid_part_order),
    ("multipart_entity_too_small", multipart_entity_too_small),
    ("multipart_invalid_part", multipart_invalid_part),
    ("read_exact_body_length", read_exact_body_length),
    ("put_checksum_verified", put_checksum_verified),
    ("conditional_put", conditional_put),
    ("conditional_delete", conditional_delete),
    (
        "conditional_copy_and_complete",
        conditional_copy_and_complete,
    ),
    ("conditional_races", conditional_races),
    ("object_tagging", object_tagging),
    ("standard_headers", standard_headers),
    (
        "error_messages_reach_the_caller",
        error_messages_reach_the_caller,
    ),
];

/// Runs every check (or those named in `S3HPC_CONFORMANCE`), each against a
/// fresh fixture from `make`, and panics naming every check that failed and
/// the transport. `label` tells runs of one transport apart (`md5`, `fast`).
pub fn run_all(label: &str, make: &dyn Fn() -> Fixture) {
    run_all_except(label, make, &[]);
}

/// As [`run_all`], leaving out the checks in `except`: `(name, why)` pairs
/// for what a client's API cannot express (the reason is printed).
pub fn run_all_except(label: &str, make: &dyn Fn() -> Fixture, except: &[(&str, &str)]) {
    let only = std::env::var("S3HPC_CONFORMANCE").unwrap_or_default();
    let only: Vec<&str> = only.split(',').filter(|s| !s.is_empty()).collect();
    let named = only.iter().chain(except.iter().map(|(n, _)| n));
    if let Some(bad) = named
        .into_iter()
        .find(|n| !CHECKS.iter().any(|c| c.0 == **n))
    {
        panic!("{bad:?} names no conformance check");
    }
    let mut failed = Vec::new();
    let mut ran = 0;
    let mut transport = "?";
    for (i, &(name, check)) in CHECKS.iter().enumerate() {
        if !only.is_empty() && !only.contains(&name) {
            continue;
        }
        if let Some((_, why)) = except.iter().find(|(n, _)| *n == name) {
            eprintln!("conformance ({label}): {name} left out: {why}");
            continue;
        }
        ran += 1;
        let fixture = make();
        let client = fixture.client.as_ref();
        transport = client.transport();
        let bucket = format!("conformance-{i:02}");
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            client
                .create_bucket(&bucket)
                .unwrap_or_else(|e| panic!("creating the check's bucket {bucket}: {e}"));
            check(client, &bucket);
        }));
        if let Err(panic) = outcome {
            let msg = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            failed.push(format!("{transport} ({label}) {name}: {msg}"));
        }
        drop(fixture);
    }
    eprintln!(
        "conformance {transport} ({label}): {} of {ran} checks passed",
        ran - failed.len()
    );
    if !failed.is_empty() {
        panic!(
            "{} of {ran} conformance checks failed:\n{}",
            failed.len(),
            failed.join("\n")
        );
    }
}

// ---------------------------------------------------------------- helpers

/// Asserts that `r` failed with `code`; `what` names the request.
#[track_caller]
fn expect_err<T>(r: Result<T>, code: ErrorCode, what: &str) {
    match r {
        Ok(_) => panic!("{what}: succeeded, expected {}", code.as_str()),
        Err(e) => assert_eq!(e.code, code, "{what}: expected {}, got {e}", code.as_str()),
    }
}

#[track_caller]
fn ok<T>(r: Result<T>, what: &str) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Deterministic, non-repeating-looking content.
fn data(len: usize, seed: u8) -> Vec<u8> {
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

fn opts(content_type: &str, meta: &[(&str, &str)]) -> PutOptions {
    PutOptions {
        content_type: Some(content_type.to_string()),
        metadata: meta_map(meta),
        ..Default::default()
    }
}

fn meta_map(meta: &[(&str, &str)]) -> BTreeMap<String, String> {
    meta.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[track_caller]
fn put(c: &dyn S3Client, b: &str, key: &str, body: &[u8]) -> String {
    ok(
        c.put_object(b, key, PutBody::Bytes(body), &PutOptions::default()),
        &format!("PUT {key:?}"),
    )
}

/// GETs `key` (or a range of it) and reads the whole body.
#[track_caller]
fn get(c: &dyn S3Client, b: &str, key: &str, range: Option<ByteRange>) -> (GetObject, Vec<u8>) {
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
fn assert_content(c: &dyn S3Client, b: &str, key: &str, want: &[u8]) -> ObjectInfo {
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
fn assert_stored(c: &dyn S3Client, b: &str, key: &str, want: &[u8], o: &PutOptions) -> ObjectInfo {
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
fn assert_etag(etag: &str, content: &[u8], what: &str) {
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
fn assert_recent(t: SystemTime, what: &str) {
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
fn list_pages(c: &dyn S3Client, b: &str, req: &ListRequest) -> Vec<ListPage> {
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
fn list(c: &dyn S3Client, b: &str, req: &ListRequest) -> (Vec<String>, Vec<String>) {
    let pages = list_pages(c, b, req);
    let keys = pages.iter().flat_map(|p| &p.objects).map(|o| o.key.clone());
    let prefixes = pages.iter().flat_map(|p| p.common_prefixes.clone());
    (keys.collect(), prefixes.collect())
}

#[track_caller]
fn bucket_names(c: &dyn S3Client) -> Vec<String> {
    let buckets = ok(c.list_buckets(), "list buckets");
    buckets.into_iter().map(|i| i.name).collect()
}

fn req(prefix: &str, delimiter: Option<&str>) -> ListRequest {
    ListRequest {
        prefix: prefix.to_string(),
        delimiter: delimiter.map(str::to_string),
        ..Default::default()
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn put_keys(c: &dyn S3Client, b: &str, keys: &[&str]) {
    for (i, k) in keys.iter().enumerate() {
        put(c, b, k, &data(i % 7, i as u8));
    }
}

/// A reader that hands out its data in odd-sized pieces, so a transport's
/// buffering and chunking see reads that never align with their buffers.
struct Chunked<'a> {
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
const STREAM_LEN: usize = (6 << 20) + 12_345;
const MIB5: usize = 5 << 20;

fn stream_put(
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

// ---------------------------------------------------------------- buckets

/// Create, head, list, delete of a bucket and their error codes.
fn bucket_lifecycle(c: &dyn S3Client, b: &str) {
    ok(c.head_bucket(b), "HEAD bucket");
    expect_err(
        c.create_bucket(b),
        ErrorCode::BucketAlreadyOwnedByYou,
        "create existing bucket",
    );
    let other = format!("{b}-other");
    ok(c.create_bucket(&other), "create second bucket");
    let names = bucket_names(c);
    assert!(
        names.contains(&b.to_string()) && names.contains(&other),
        "list buckets: {names:?}"
    );
    assert!(
        names.windows(2).all(|w| w[0] < w[1]),
        "list buckets is not sorted: {names:?}"
    );
    for info in ok(c.list_buckets(), "list buckets") {
        assert_recent(info.created, "bucket creation time");
    }

    put(c, &other, "k", b"x");
    expect_err(
        c.delete_bucket(&other),
        ErrorCode::BucketNotEmpty,
        "delete non-empty bucket",
    );
    ok(
        c.head_object(&other, "k"),
        "HEAD after refused bucket delete",
    );
    ok(c.delete_object(&other, "k"), "DELETE k");
    ok(c.delete_bucket(&other), "delete emptied bucket");
    expect_err(
        c.head_bucket(&other),
        ErrorCode::NoSuchBucket,
        "HEAD deleted bucket",
    );
    expect_err(
        c.delete_bucket(&other),
        ErrorCode::NoSuchBucket,
        "delete deleted bucket",
    );
    let names = bucket_names(c);
    assert!(
        !names.contains(&other),
        "deleted bucket still listed: {names:?}"
    );
    ok(c.create_bucket(&other), "re-create deleted bucket");
    let (keys, _) = list(c, &other, &ListRequest::default());
    assert!(keys.is_empty(), "re-created bucket holds {keys:?}");
}

/// S3's bucket-name rules, with nothing created for a rejected name.
fn bucket_name_rules(c: &dyn S3Client, _b: &str) {
    let before = ok(c.list_buckets(), "list buckets");
    let long = "a".repeat(64);
    for bad in [
        "ab",
        "Upper",
        "a_b",
        "-ab",
        "ab-",
        "a..b",
        "foo.-bar",
        "foo-.bar",
        "192.168.1.1",
        "xn--ab",
        "a/b",
        "..",
        &long,
    ] {
        expect_err(
            c.create_bucket(bad),
            ErrorCode::InvalidBucketName,
            &format!("create bucket {bad:?}"),
        );
        expect_err(
            c.head_bucket(bad),
            ErrorCode::InvalidBucketName,
            &format!("HEAD bucket {bad:?}"),
        );
        expect_err(
            c.put_object(bad, "k", PutBody::Bytes(b"x"), &PutOptions::default()),
            ErrorCode::InvalidBucketName,
            &format!("PUT into bucket {bad:?}"),
        );
    }
    assert_eq!(
        ok(c.list_buckets(), "list buckets"),
        before,
        "rejected names created buckets"
    );
    let max = "a".repeat(63);
    for good in ["abc", "a.b-c9", &max] {
        ok(c.create_bucket(good), &format!("create bucket {good:?}"));
        ok(c.delete_bucket(good), &format!("delete bucket {good:?}"));
    }
}

/// Object requests against a bucket that does not exist.
fn missing_bucket(c: &dyn S3Client, b: &str) {
    let nb = format!("{b}-missing");
    let code = ErrorCode::NoSuchBucket;
    expect_err(
        c.put_object(&nb, "k", PutBody::Bytes(b"x"), &PutOptions::default()),
        code,
        "PUT",
    );
    expect_err(c.get_object(&nb, "k", None), code, "GET");
    expect_err(c.head_object(&nb, "k"), code, "HEAD");
    expect_err(c.list_objects(&nb, &ListRequest::default()), code, "LIST");
    expect_err(
        c.create_multipart_upload(&nb, "k", &PutOptions::default()),
        code,
        "create upload",
    );
    expect_err(c.list_multipart_uploads(&nb, ""), code, "list uploads");
    put(c, b, "k", b"x");
    expect_err(
        c.copy_object(b, "k", &nb, "k", None),
        code,
        "copy into missing bucket",
    );
    expect_err(
        c.copy_object(&nb, "k", b, "k2", None),
        code,
        "copy from missing bucket",
    );
    expect_err(c.head_bucket(&nb), code, "HEAD bucket");
}

// ---------------------------------------------------------------- objects

/// PUT, GET and HEAD agree on content, size, ETag, content type and metadata.
fn put_get_head_round_trip(c: &dyn S3Client, b: &str) {
    let content = data(100_000, 1);
    let o = opts(
        "text/plain; charset=utf-8",
        &[("color", "blue"), ("long-name", "a value with spaces")],
    );
    let etag = ok(
        c.put_object(b, "dir/obj.txt", PutBody::Bytes(&content), &o),
        "PUT",
    );
    assert_etag(&etag, &content, "PUT");
    let head = assert_stored(c, b, "dir/obj.txt", &content, &o);
    assert_eq!(head.key, "dir/obj.txt", "HEAD key");
    assert_eq!(head.etag, etag, "HEAD ETag against PUT's");
    assert_recent(head.last_modified, "HEAD");
    let page = ok(c.list_objects(b, &ListRequest::default()), "LIST");
    assert_eq!(page.objects.len(), 1, "LIST: {:?}", page.objects);
    let listed = &page.objects[0];
    assert_eq!(
        (listed.key.as_str(), listed.size, &listed.etag),
        ("dir/obj.txt", head.size, &head.etag),
        "LIST entry"
    );
}

/// A zero-byte object is an object.
fn empty_object(c: &dyn S3Client, b: &str) {
    let etag = put(c, b, "empty", b"");
    assert_etag(&etag, b"", "PUT empty");
    assert_content(c, b, "empty", b"");
    let o = opts("application/x-empty", &[("k", "v")]);
    ok(
        c.put_object(b, "empty-meta", PutBody::Bytes(b""), &o),
        "PUT empty with metadata",
    );
    assert_stored(c, b, "empty-meta", b"", &o);
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&["empty", "empty-meta"]), "LIST");
}

/// NoSuchKey for keys that were never written.
fn missing_key(c: &dyn S3Client, b: &str) {
    put(c, b, "dir/present", b"x");
    for key in [
        "absent",
        "dir/absent",
        "dir",
        "dir/present/deeper",
        "nodir/absent",
    ] {
        expect_err(
            c.get_object(b, key, None),
            ErrorCode::NoSuchKey,
            &format!("GET {key:?}"),
        );
        expect_err(
            c.head_object(b, key),
            ErrorCode::NoSuchKey,
            &format!("HEAD {key:?}"),
        );
        expect_err(
            c.copy_object(b, key, b, "copy", None),
            ErrorCode::NoSuchKey,
            &format!("copy {key:?}"),
        );
    }
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(
        keys,
        strings(&["dir/present"]),
        "failed requests created keys"
    );
}

/// Keys with characters that URLs, headers and shells treat specially come
/// back exactly as written.
fn special_character_keys(c: &dyn S3Client, b: &str) {
    let keys = [
        "sp ace",
        "plus+sign",
        "per%25cent",
        "q?uery",
        "ha#sh",
        "amp&er=sand",
        "back\\slash",
        "quote\"'",
        "tab\tnl\n",
        "ünïcødé/ключ/日本語",
        "emoji/🦀",
        "~tilde",
        "colon:semi;",
    ];
    for (i, key) in keys.iter().enumerate() {
        let content = data(10 + i, i as u8);
        put(c, b, key, &content);
        let head = assert_content(c, b, key, &content);
        assert_eq!(head.key, *key, "HEAD key");
    }
    let (listed, _) = list(c, b, &ListRequest::default());
    let mut want = strings(&keys);
    want.sort();
    assert_eq!(listed, want, "LIST of special keys");
    for key in keys {
        ok(c.delete_object(b, key), &format!("DELETE {key:?}"));
    }
    let (listed, _) = list(c, b, &ListRequest::default());
    assert!(listed.is_empty(), "left after DELETE: {listed:?}");
}

/// A key of exactly 1024 bytes (segments of at most 255) is valid.
fn max_length_key(c: &dyn S3Client, b: &str) {
    let seg = "s".repeat(255);
    let key = format!("{seg}/{seg}/{seg}/{}/x", "t".repeat(254));
    assert_eq!(key.len(), 1024);
    put(c, b, &key, b"longest");
    assert_content(c, b, &key, b"longest");
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, vec![key.clone()], "LIST");
    ok(c.delete_object(b, &key), "DELETE");
}

/// Keys ending in `/` ("folder" markers, as consoles, S3A and rclone make
/// them, usually empty) are objects like any other: PUT, HEAD, GET, COPY,
/// listing (a key under its own prefix, rolled up above it) and DELETE,
/// which removes only the marker.
fn folder_markers(c: &dyn S3Client, b: &str) {
    let etag = put(c, b, "dir/", b"");
    assert_etag(&etag, b"", "PUT dir/");
    let head = assert_content(c, b, "dir/", b"");
    assert_eq!(head.key, "dir/", "HEAD key");
    let o = opts("application/x-directory", &[("made-by", "console")]);
    ok(
        c.put_object(b, "dir/sub/", PutBody::Bytes(b"note"), &o),
        "PUT dir/sub/ with content and metadata",
    );
    assert_stored(c, b, "dir/sub/", b"note", &o);
    put(c, b, "dir/sub/file", b"f");
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&["dir/", "dir/sub/", "dir/sub/file"]), "LIST");
    let (keys, prefixes) = list(c, b, &req("", Some("/")));
    assert_eq!((keys, prefixes), (vec![], strings(&["dir/"])), "LIST / ");
    let (keys, prefixes) = list(c, b, &req("dir/", Some("/")));
    assert_eq!(
        (keys, prefixes),
        (strings(&["dir/"]), strings(&["dir/sub/"])),
        "LIST dir/ /"
    );
    expect_err(c.head_object(b, "dir"), ErrorCode::NoSuchKey, "HEAD dir");
    ok(
        c.copy_object(b, "dir/sub/", b, "copy/", None),
        "COPY dir/sub/ to copy/",
    );
    assert_stored(c, b, "copy/", b"note", &o);
    ok(c.delete_object(b, "dir/"), "DELETE dir/");
    expect_err(
        c.head_object(b, "dir/"),
        ErrorCode::NoSuchKey,
        "HEAD dir/ after DELETE",
    );
    assert_content(c, b, "dir/sub/", b"note");
    for k in ["dir/sub/file", "dir/sub/", "copy/"] {
        ok(c.delete_object(b, k), &format!("DELETE {k}"));
    }
    let (keys, prefixes) = list(c, b, &req("", Some("/")));
    assert!(
        keys.is_empty() && prefixes.is_empty(),
        "LIST after DELETE: {keys:?} {prefixes:?}"
    );
    ok(c.delete_bucket(b), "delete the emptied bucket");
}

/// A key may also be a prefix of other keys (`a/b` and `a/b/c`), written in
/// either order; with delimiter `/` and prefix `a/`, `a/b` is a key and
/// `a/b/` a common prefix. Multipart completes onto such keys.
fn object_and_prefix(c: &dyn S3Client, b: &str) {
    put(c, b, "a/b", b"object first");
    put(c, b, "a/b/c", b"below");
    put(c, b, "d/e", b"prefix first");
    let o = opts("text/plain", &[("k", "v")]);
    ok(
        c.put_object(b, "d", PutBody::Bytes(b"then object"), &o),
        "PUT d over prefix d/",
    );
    assert_content(c, b, "a/b", b"object first");
    assert_content(c, b, "a/b/c", b"below");
    assert_stored(c, b, "d", b"then object", &o);
    assert_content(c, b, "d/e", b"prefix first");
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&["a/b", "a/b/c", "d", "d/e"]), "LIST");
    put(c, b, "a/b!", b"!");
    put(c, b, "a/b/", b"");
    let (keys, prefixes) = list(c, b, &req("a/", Some("/")));
    assert_eq!(
        (keys, prefixes),
        (strings(&["a/b", "a/b!"]), strings(&["a/b/"])),
        "LIST a/ /"
    );
    let (keys, _) = list(c, b, &req("a/", None));
    assert_eq!(keys, strings(&["a/b", "a/b!", "a/b/", "a/b/c"]), "LIST a/");
    // Copy onto a key below an object, and multipart onto an object that is
    // a prefix.
    ok(c.copy_object(b, "d", b, "a/b!/x", None), "COPY d to a/b!/x");
    assert_content(c, b, "a/b!/x", b"then object");
    assert_content(c, b, "a/b!", b"!");
    let (id, parts, content) = upload_two_parts(c, b, "d", &PutOptions::default());
    ok(
        c.complete_multipart_upload(b, "d", &id, &parts),
        "complete onto d",
    );
    assert_content(c, b, "d", &content);
    // DELETE removes only the object named.
    ok(c.delete_object(b, "a/b"), "DELETE a/b");
    expect_err(
        c.head_object(b, "a/b"),
        ErrorCode::NoSuchKey,
        "HEAD a/b after DELETE",
    );
    assert_content(c, b, "a/b/c", b"below");
    ok(c.delete_object(b, "d/e"), "DELETE d/e");
    assert_content(c, b, "d", &content);
    let (keys, prefixes) = list(c, b, &req("", Some("/")));
    assert_eq!(
        (keys, prefixes),
        (strings(&["d"]), strings(&["a/"])),
        "LIST /"
    );
    for k in ["a/b!", "a/b!/x", "a/b/", "a/b/c", "d"] {
        ok(c.delete_object(b, k), &format!("DELETE {k}"));
    }
    ok(c.delete_bucket(b), "delete the emptied bucket");
}

/// A streamed PUT of a known length arrives whole.
fn put_stream_with_len(c: &dyn S3Client, b: &str) {
    stream_round_trip(c, b, true);
}

/// A streamed PUT of unknown length (read to its end) arrives whole.
fn put_stream_without_len(c: &dyn S3Client, b: &str) {
    stream_round_trip(c, b, false);
}

#[track_caller]
fn stream_round_trip(c: &dyn S3Client, b: &str, with_len: bool) {
    let content = data(STREAM_LEN, with_len as u8);
    let len = with_len.then_some(STREAM_LEN as u64);
    let etag = ok(stream_put(c, b, "streamed", &content, len), "PUT stream");
    assert_etag(&etag, &content, "PUT stream");
    let head = assert_content(c, b, "streamed", &content);
    assert_eq!(head.etag, etag, "HEAD ETag against PUT's");
}

/// A stream that ends before its announced length is IncompleteBody, and
/// neither creates the key nor disturbs the object already there.
fn put_stream_short_is_incomplete(c: &dyn S3Client, b: &str) {
    let content = data(STREAM_LEN, 4);
    let short = stream_put(c, b, "new", &content, Some(STREAM_LEN as u64 + 1));
    expect_err(short, ErrorCode::IncompleteBody, "short stream, new key");
    expect_err(
        c.head_object(b, "new"),
        ErrorCode::NoSuchKey,
        "HEAD after the failed PUT",
    );
    put(c, b, "old", b"previous content");
    let short = stream_put(c, b, "old", &content[..1000], Some(5000));
    expect_err(
        short,
        ErrorCode::IncompleteBody,
        "short stream over an object",
    );
    assert_content(c, b, "old", b"previous content");
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&["old"]), "LIST after failed PUTs");
}

/// A checksum (`PutOptions::checksum`) or Content-MD5 that does not match
/// the body is BadDigest, and nothing is stored; a matching one is
/// accepted.
fn put_checksum_verified(c: &dyn S3Client, b: &str) {
    use s3hpc_store::{ChecksumAlgorithm, ChecksumRequest};
    let content = data(5000, 6);
    for alg in ChecksumAlgorithm::ALL {
        // A value of another body, and one that is no value of the
        // algorithm at all (s3-tests sends "bad"): both BadDigest, as S3.
        for value in [alg.checksum_of(b"other"), "bad".to_string()] {
            let wrong = PutOptions {
                checksum: Some(ChecksumRequest::expecting(alg, value.as_str())),
                ..Default::default()
            };
            expect_err(
                c.put_object(b, "k", PutBody::Bytes(&content), &wrong),
                ErrorCode::BadDigest,
                &format!("{} {value:?}", alg.as_str()),
            );
        }
        expect_err(
            c.head_object(b, "k"),
            ErrorCode::NoSuchKey,
            "HEAD after BadDigest",
        );
        let right = PutOptions {
            checksum: Some(ChecksumRequest::expecting(alg, alg.checksum_of(&content))),
            ..Default::default()
        };
        ok(
            c.put_object(b, "k", PutBody::Bytes(&content), &right),
            alg.as_str(),
        );
        ok(c.delete_object(b, "k"), "delete");
    }
    let md5 = |d: &[u8]| -> [u8; 16] { Md5::digest(d).into() };
    let wrong = PutOptions {
        content_md5: Some(md5(b"other")),
        ..Default::default()
    };
    expect_err(
        c.put_object(b, "m", PutBody::Bytes(&content), &wrong),
        ErrorCode::BadDigest,
        "Content-MD5",
    );
    expect_err(
        c.head_object(b, "m"),
        ErrorCode::NoSuchKey,
        "HEAD after BadDigest",
    );
    let right = PutOptions {
        content_md5: Some(md5(&content)),
        ..Default::default()
    };
    ok(
        c.put_object(b, "m", PutBody::Bytes(&content), &right),
        "Content-MD5",
    );
    assert_content(c, b, "m", &content);
}

/// Ranged GETs: first-last, open-ended, suffix, clamped at the end.
fn ranged_get(c: &dyn S3Client, b: &str) {
    let content = data(1000, 5);
    let etag = put(c, b, "r", &content);
    let cases = [
        (
            ByteRange::FromTo {
                first: 10,
                last: Some(19),
            },
            10..20,
        ),
        (
            ByteRange::FromTo {
                first: 0,
                last: Some(0),
            },
            0..1,
        ),
        (
            ByteRange::FromTo {
                first: 990,
                last: None,
            },
            990..1000,
        ),
        (
            ByteRange::FromTo {
                first: 0,
                last: None,
            },
            0..1000,
        ),
        (
            ByteRange::FromTo {
                first: 995,
                last: Some(5000),
            },
            995..1000,
        ),
        (
            ByteRange::FromTo {
                first: 999,
                last: Some(999),
            },
            999..1000,
        ),
        (ByteRange::Suffix(7), 993..1000),
        (ByteRange::Suffix(1000), 0..1000),
        (ByteRange::Suffix(5000), 0..1000),
    ];
    for (range, want) in cases {
        let (got, body) = get(c, b, "r", Some(range));
        assert_eq!(
            (got.offset, got.length),
            (want.start as u64, want.len() as u64),
            "GET {range:?}: offset, length"
        );
        assert!(body == content[want.clone()], "GET {range:?}: wrong bytes");
        assert_eq!(
            (got.info.size, &got.info.etag),
            (1000, &etag),
            "GET {range:?}: info describes the whole object"
        );
    }
}

/// Ranges that select nothing are InvalidRange.
fn invalid_range(c: &dyn S3Client, b: &str) {
    put(c, b, "r", &data(1000, 6));
    put(c, b, "empty", b"");
    for (key, range) in [
        (
            "r",
            ByteRange::FromTo {
                first: 1000,
                last: None,
            },
        ),
        (
            "r",
            ByteRange::FromTo {
                first: 5000,
                last: Some(6000),
            },
        ),
        (
            "r",
            ByteRange::FromTo {
                first: 20,
                last: Some(10),
            },
        ),
        ("r", ByteRange::Suffix(0)),
        (
            "empty",
            ByteRange::FromTo {
                first: 0,
                last: None,
            },
        ),
    ] {
        expect_err(
            c.get_object(b, key, Some(range)),
            ErrorCode::InvalidRange,
            &format!("GET {key} {range:?}"),
        );
    }
}

/// DELETE succeeds whether or not the key exists.
fn delete_is_idempotent(c: &dyn S3Client, b: &str) {
    ok(c.delete_object(b, "never"), "DELETE a key never written");
    ok(
        c.delete_object(b, "no/such/dir"),
        "DELETE under a missing prefix",
    );
    put(c, b, "k", b"x");
    ok(c.delete_object(b, "k"), "DELETE");
    expect_err(
        c.head_object(b, "k"),
        ErrorCode::NoSuchKey,
        "HEAD after DELETE",
    );
    expect_err(
        c.get_object(b, "k", None),
        ErrorCode::NoSuchKey,
        "GET after DELETE",
    );
    ok(c.delete_object(b, "k"), "DELETE again");
    let (keys, _) = list(c, b, &ListRequest::default());
    assert!(keys.is_empty(), "LIST after DELETE: {keys:?}");
}

/// Deleting the last key under a prefix makes the prefix disappear, and the
/// bucket can then be deleted.
fn delete_prunes_prefixes(c: &dyn S3Client, b: &str) {
    put_keys(c, b, &["a/b/c/d", "a/b/e", "a/f"]);
    ok(c.delete_object(b, "a/b/c/d"), "DELETE a/b/c/d");
    let (_, prefixes) = list(c, b, &req("a/b/", Some("/")));
    assert!(
        prefixes.is_empty(),
        "prefix with no objects listed: {prefixes:?}"
    );
    ok(c.delete_object(b, "a/b/e"), "DELETE a/b/e");
    let (keys, prefixes) = list(c, b, &req("a/", Some("/")));
    assert_eq!((keys, prefixes), (strings(&["a/f"]), vec![]), "LIST a/");
    ok(c.delete_object(b, "a/f"), "DELETE a/f");
    let (keys, prefixes) = list(c, b, &req("", Some("/")));
    assert!(
        keys.is_empty() && prefixes.is_empty(),
        "LIST: {keys:?} {prefixes:?}"
    );
    // A key where a pruned prefix was.
    put(c, b, "a", b"file now");
    ok(c.delete_object(b, "a"), "DELETE a");
    ok(c.delete_bucket(b), "delete the emptied bucket");
}

/// Copy without options keeps content type and metadata (COPY), also
/// across buckets; onto itself it would change nothing: InvalidRequest.
fn copy_keeps_metadata(c: &dyn S3Client, b: &str) {
    let content = data(70_000, 7);
    let o = opts("image/png", &[("origin", "camera"), ("n", "1")]);
    let etag = ok(
        c.put_object(b, "src", PutBody::Bytes(&content), &o),
        "PUT src",
    );
    let other = format!("{b}-dst");
    ok(c.create_bucket(&other), "create destination bucket");
    for (dst_bucket, dst_key) in [(b, "copy"), (b, "deep/er/copy"), (other.as_str(), "copy")] {
        let info = ok(c.copy_object(b, "src", dst_bucket, dst_key, None), "copy");
        assert_eq!(
            (info.key.as_str(), info.size),
            (dst_key, content.len() as u64),
            "copy's ObjectInfo"
        );
        assert_etag(&info.etag, &content, "copy");
        let head = assert_stored(c, dst_bucket, dst_key, &content, &o);
        assert_eq!(head.etag, info.etag, "HEAD ETag against the copy's");
    }
    // Onto itself, changing nothing: refused, as S3 does.
    expect_err(
        c.copy_object(b, "src", b, "src", None),
        ErrorCode::InvalidRequest,
        "copy onto itself keeping the metadata",
    );
    let src = assert_content(c, b, "src", &content);
    assert_eq!(
        (src.etag, src.metadata),
        (etag, o.metadata),
        "source after copies"
    );
}

/// Copy with options replaces content type and metadata (REPLACE), also
/// onto the source key itself (which needs a change, see
/// `copy_keeps_metadata`).
fn copy_replaces_metadata(c: &dyn S3Client, b: &str) {
    let content = data(3000, 8);
    let o = opts("text/csv", &[("old", "1"), ("keep", "no")]);
    ok(
        c.put_object(b, "src", PutBody::Bytes(&content), &o),
        "PUT src",
    );
    let new = opts("application/json", &[("new", "2")]);
    ok(
        c.copy_object(b, "src", b, "dst", Some(&new)),
        "copy REPLACE",
    );
    assert_stored(c, b, "dst", &content, &new);
    assert_stored(c, b, "src", &content, &o);
    ok(
        c.copy_object(b, "src", b, "src", Some(&new)),
        "copy onto itself, REPLACE",
    );
    assert_stored(c, b, "src", &content, &new);
    ok(
        c.copy_object(b, "src", b, "bare", Some(&PutOptions::default())),
        "copy REPLACE with nothing",
    );
    let bare = assert_content(c, b, "bare", &content);
    assert!(
        bare.metadata.is_empty(),
        "REPLACE with no metadata kept {:?}",
        bare.metadata
    );
    assert_ne!(
        bare.content_type.as_deref(),
        Some("application/json"),
        "REPLACE with no content type kept it"
    );
}

/// Overwriting a key replaces its content, ETag, content type and metadata,
/// whatever wrote it before (PUT, stream, multipart).
fn overwrite_replaces(c: &dyn S3Client, b: &str) {
    let first = data(5000, 9);
    let o = opts("text/plain", &[("version", "1")]);
    let etag1 = ok(c.put_object(b, "k", PutBody::Bytes(&first), &o), "PUT 1");
    let second = data(4000, 10);
    let etag2 = put(c, b, "k", &second);
    assert_ne!(
        etag1, etag2,
        "ETag unchanged by an overwrite with other content"
    );
    let head = assert_content(c, b, "k", &second);
    assert_eq!(head.etag, etag2, "HEAD ETag");
    assert!(
        head.metadata.is_empty(),
        "metadata survived an overwrite: {:?}",
        head.metadata
    );
    assert_ne!(
        head.content_type, o.content_type,
        "content type survived an overwrite"
    );
    let o3 = opts("text/html", &[("version", "3")]);
    ok(c.put_object(b, "k", PutBody::Bytes(&first), &o3), "PUT 3");
    assert_stored(c, b, "k", &first, &o3);
    let third = data(STREAM_LEN, 11);
    ok(stream_put(c, b, "k", &third, None), "PUT stream over it");
    assert_content(c, b, "k", &third);
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&["k"]), "LIST after overwrites");
}

// ---------------------------------------------------------------- listing

/// Keys sort by their UTF-8 bytes as whole strings, whatever the directories.
fn list_byte_order(c: &dyn S3Client, b: &str) {
    let keys = [
        "a0", "a/b", "é", "a.b", "z", "B", "a-b", "a/c/d", "a/a", "a/-", "ab",
    ];
    put_keys(c, b, &keys);
    let mut want = strings(&keys);
    want.sort();
    assert_eq!(
        &want[..4],
        &strings(&["B", "a-b", "a.b", "a/-"]),
        "the model itself"
    );
    let (listed, prefixes) = list(c, b, &ListRequest::default());
    assert_eq!(listed, want, "LIST order");
    assert!(
        prefixes.is_empty(),
        "common prefixes without a delimiter: {prefixes:?}"
    );
    let page = ok(c.list_objects(b, &ListRequest::default()), "LIST");
    for o in &page.objects {
        let head = ok(c.head_object(b, &o.key), "HEAD");
        assert_eq!(
            (o.size, &o.etag),
            (head.size, &head.etag),
            "LIST entry {:?} against HEAD",
            o.key
        );
    }
}

/// A prefix selects keys by bytes, not by directory.
fn list_prefix(c: &dyn S3Client, b: &str) {
    put_keys(
        c,
        b,
        &["dir/x", "dir/sub/y", "dish", "di", "dir.txt", "other"],
    );
    for (prefix, want) in [
        ("dir/", &["dir/sub/y", "dir/x"][..]),
        ("di", &["di", "dir.txt", "dir/sub/y", "dir/x", "dish"]),
        ("dir", &["dir.txt", "dir/sub/y", "dir/x"]),
        ("dir/s", &["dir/sub/y"]),
        ("dir/sub/y", &["dir/sub/y"]),
        ("nothing", &[]),
        ("dir/sub/y/", &[]),
    ] {
        let (keys, _) = list(c, b, &req(prefix, None));
        assert_eq!(keys, strings(want), "LIST prefix {prefix:?}");
    }
}

/// A delimiter rolls keys up into common prefixes, for `/` and other strings.
fn list_delimiter(c: &dyn S3Client, b: &str) {
    put_keys(
        c,
        b,
        &[
            "a/1", "a/2", "b/c/d", "b/e", "b0", "top", "x-1", "x-2/y", "y--z",
        ],
    );
    for (prefix, delim, want_keys, want_prefixes) in [
        (
            "",
            "/",
            &["b0", "top", "x-1", "y--z"][..],
            &["a/", "b/", "x-2/"][..],
        ),
        ("b/", "/", &["b/e"], &["b/c/"]),
        ("b", "/", &["b0"], &["b/"]),
        ("a/", "/", &["a/1", "a/2"], &[]),
        (
            "",
            "-",
            &["a/1", "a/2", "b/c/d", "b/e", "b0", "top"],
            &["x-", "y-"],
        ),
        ("y-", "-", &[], &["y--"]),
        (
            "",
            "c/",
            &["a/1", "a/2", "b/e", "b0", "top", "x-1", "x-2/y", "y--z"],
            &["b/c/"],
        ),
        ("zzz", "/", &[], &[]),
    ] {
        let (keys, prefixes) = list(c, b, &req(prefix, Some(delim)));
        assert_eq!(
            (keys, prefixes),
            (strings(want_keys), strings(want_prefixes)),
            "LIST prefix {prefix:?} delimiter {delim:?}"
        );
    }
}

/// start_after lists only keys strictly after it, present or not.
fn list_start_after(c: &dyn S3Client, b: &str) {
    // k05 is only a prefix: it has keys under it, and after it.
    for i in 0..10 {
        let key = match i {
            5 => "k05/sub".to_string(),
            _ => format!("k{i:02}"),
        };
        put(c, b, &key, b"x");
    }
    for (after, want) in [
        ("k05", &["k05/sub", "k06", "k07", "k08", "k09"][..]),
        ("k05/sub", &["k06", "k07", "k08", "k09"]),
        ("k055", &["k06", "k07", "k08", "k09"]),
        ("k09", &[]),
        ("zzz", &[]),
        (
            "a",
            &[
                "k00", "k01", "k02", "k03", "k04", "k05/sub", "k06", "k07", "k08", "k09",
            ],
        ),
    ] {
        let r = ListRequest {
            start_after: Some(after.to_string()),
            ..Default::default()
        };
        let (got, _) = list(c, b, &r);
        assert_eq!(got, strings(want), "LIST start_after {after:?}");
    }
    let r = ListRequest {
        start_after: Some("k05".into()),
        prefix: "k0".into(),
        delimiter: Some("/".into()),
        ..Default::default()
    };
    assert_eq!(
        list(c, b, &r),
        (strings(&["k06", "k07", "k08", "k09"]), strings(&["k05/"])),
        "start_after with delimiter"
    );
}

/// ~25 keys at different depths for the paging checks.
fn paging_keys() -> Vec<String> {
    let mut keys: Vec<String> = (0..25)
        .map(|i| match i % 5 {
            0 => format!("p{i:02}"),
            1 => format!("d/p{i:02}"),
            2 => format!("d/e/p{i:02}"),
            3 => format!("d-{i:02}/q"),
            _ => format!("p{i:02}/x/y"),
        })
        .collect();
    keys.sort();
    keys
}

/// Paging with max_keys 2 and continuation tokens yields exactly the full
/// listing, with prefix and start_after too.
fn list_paging(c: &dyn S3Client, b: &str) {
    let keys = paging_keys();
    for k in &keys {
        put(c, b, k, k.as_bytes());
    }
    let full = ListRequest::default();
    assert_eq!(list(c, b, &full), (keys.clone(), vec![]), "unpaged LIST");
    let paged = ListRequest {
        max_keys: 2,
        ..Default::default()
    };
    let pages = list_pages(c, b, &paged);
    assert_eq!(pages.len(), keys.len().div_ceil(2), "number of pages");
    assert!(pages.iter().all(|p| !p.objects.is_empty()), "an empty page");
    assert_eq!(
        list(c, b, &paged),
        (keys.clone(), vec![]),
        "LIST paged by 2"
    );
    let sub = ListRequest {
        prefix: "d/".into(),
        start_after: Some("d/e/p07".into()),
        max_keys: 2,
        ..Default::default()
    };
    let want: Vec<String> = keys
        .iter()
        .filter(|k| k.starts_with("d/") && k.as_str() > "d/e/p07")
        .cloned()
        .collect();
    assert_eq!(
        list(c, b, &sub),
        (want, vec![]),
        "LIST prefix d/ after d/e/p07 paged by 2"
    );
}

/// With a delimiter, keys and common prefixes share max_keys, and paging
/// yields each exactly once.
fn list_paging_with_delimiter(c: &dyn S3Client, b: &str) {
    for k in paging_keys() {
        put(c, b, &k, b"x");
    }
    for prefix in ["", "d/", "p"] {
        let whole = req(prefix, Some("/"));
        let want = list(c, b, &whole);
        assert!(
            !want.0.is_empty() || !want.1.is_empty(),
            "LIST {prefix:?}: nothing"
        );
        for max_keys in [1, 2, 3] {
            let paged = ListRequest {
                max_keys,
                ..whole.clone()
            };
            assert_eq!(
                list(c, b, &paged),
                want,
                "LIST prefix {prefix:?} delimiter / paged by {max_keys}"
            );
        }
    }
}

// ---------------------------------------------------------------- hostile keys

/// Keys that cannot map into the bucket are rejected by every request, and
/// nothing is created anywhere.
fn hostile_keys(c: &dyn S3Client, b: &str) {
    let too_long = "k".repeat(1025);
    let long_segment = format!("d/{}", "s".repeat(256));
    let cases: &[(&str, ErrorCode)] = &[
        ("../x", ErrorCode::InvalidKey),
        ("a/../../x", ErrorCode::InvalidKey),
        ("./x", ErrorCode::InvalidKey),
        ("..", ErrorCode::InvalidKey),
        ("a//b", ErrorCode::InvalidKey),
        ("/abs", ErrorCode::InvalidKey),
        ("a\0b", ErrorCode::InvalidKey),
        ("", ErrorCode::InvalidKey),
        (".s3hpc-tmp.x", ErrorCode::InvalidKey),
        (".s3hpc-uploads/x", ErrorCode::InvalidKey),
        (&too_long, ErrorCode::KeyTooLong),
        (&long_segment, ErrorCode::KeyTooLong),
    ];
    put(c, b, "good", b"x");
    let buckets = bucket_names(c);
    let none = PutOptions::default();
    for &(key, code) in cases {
        let shown = format!("{:?}", &key[..key.len().min(20)]);
        expect_err(
            c.put_object(b, key, PutBody::Bytes(b"evil"), &none),
            code,
            &format!("PUT {shown}"),
        );
        let mut r: &[u8] = b"evil";
        let stream = PutBody::Stream {
            reader: &mut r,
            len: None,
        };
        expect_err(
            c.put_object(b, key, stream, &none),
            code,
            &format!("PUT stream {shown}"),
        );
        expect_err(c.get_object(b, key, None), code, &format!("GET {shown}"));
        expect_err(c.head_object(b, key), code, &format!("HEAD {shown}"));
        expect_err(c.delete_object(b, key), code, &format!("DELETE {shown}"));
        expect_err(
            c.copy_object(b, "good", b, key, None),
            code,
            &format!("copy to {shown}"),
        );
        expect_err(
            c.copy_object(b, key, b, "copy", None),
            code,
            &format!("copy from {shown}"),
        );
        expect_err(
            c.create_multipart_upload(b, key, &none),
            code,
            &format!("create upload {shown}"),
        );
    }
    let (keys, prefixes) = list(c, b, &req("", Some("/")));
    assert_eq!(
        (keys, prefixes),
        (strings(&["good"]), vec![]),
        "LIST after hostile keys"
    );
    assert_eq!(bucket_names(c), buckets, "buckets after hostile keys");
    assert!(
        ok(c.list_multipart_uploads(b, ""), "list uploads").is_empty(),
        "uploads after hostile keys"
    );
}

// ---------------------------------------------------------------- multipart

/// Uploads two parts (the first exactly 5 MiB, the second streamed) and
/// returns the upload id, the parts and the expected content.
fn upload_two_parts(
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

/// Create, two parts, list parts and uploads, complete: the object is the
/// parts' concatenation with a `-2` ETag and the upload's metadata.
fn multipart_round_trip(c: &dyn S3Client, b: &str) {
    let key = "mp/object";
    let o = opts("video/mp4", &[("part", "many")]);
    let (id, parts, content) = upload_two_parts(c, b, key, &o);
    let listed = ok(c.list_parts(b, key, &id), "list parts");
    let got: Vec<(u32, u64, &str)> = listed
        .iter()
        .map(|p| (p.part_number, p.size, p.etag.as_str()))
        .collect();
    let want = vec![
        (1, MIB5 as u64, parts[0].1.as_str()),
        (2, (content.len() - MIB5) as u64, parts[1].1.as_str()),
    ];
    assert_eq!(got, want, "list parts");
    let uploads = ok(c.list_multipart_uploads(b, ""), "list uploads");
    assert_eq!(
        uploads
            .iter()
            .map(|u| (u.key.as_str(), u.upload_id.as_str()))
            .collect::<Vec<_>>(),
        vec![(key, id.as_str())],
        "list uploads"
    );
    assert_recent(uploads[0].initiated, "upload initiated");
    assert_eq!(
        ok(c.list_multipart_uploads(b, "mp/"), "list uploads mp/").len(),
        1,
        "uploads under mp/"
    );
    assert!(
        ok(c.list_multipart_uploads(b, "other"), "list uploads other").is_empty(),
        "uploads under other"
    );
    let (keys, _) = list(c, b, &ListRequest::default());
    assert!(
        keys.is_empty(),
        "an upload in progress is listed as objects: {keys:?}"
    );
    expect_err(
        c.head_object(b, key),
        ErrorCode::NoSuchKey,
        "HEAD before completion",
    );

    let info = ok(c.complete_multipart_upload(b, key, &id, &parts), "complete");
    assert_eq!(
        (info.key.as_str(), info.size),
        (key, content.len() as u64),
        "complete's ObjectInfo"
    );
    assert!(
        info.etag.starts_with('"') && info.etag.ends_with("-2\""),
        "multipart ETag {:?}",
        info.etag
    );
    let head = assert_stored(c, b, key, &content, &o);
    assert_eq!(head.etag, info.etag, "HEAD ETag against complete's");
    let (got, body) = get(
        c,
        b,
        key,
        Some(ByteRange::FromTo {
            first: MIB5 as u64 - 3,
            last: Some(MIB5 as u64 + 2),
        }),
    );
    assert_eq!(
        (got.offset, &body[..]),
        (MIB5 as u64 - 3, &content[MIB5 - 3..MIB5 + 3]),
        "GET across the part boundary"
    );

    assert!(
        ok(c.list_multipart_uploads(b, ""), "list uploads").is_empty(),
        "completed upload still listed"
    );
    expect_err(
        c.list_parts(b, key, &id),
        ErrorCode::NoSuchUpload,
        "list parts after completion",
    );
    // Completing twice answers the same object (multipart_complete_retried).
    let (keys, _) = list(c, b, &ListRequest::default());
    assert_eq!(keys, strings(&[key]), "LIST after completion");
}

/// A completion sent again (its first answer was lost) answers the same
/// object, as S3 does; with other parts, after the key was overwritten, or
/// for any other call on the upload, the upload is gone (NoSuchUpload).
fn multipart_complete_retried(c: &dyn S3Client, b: &str) {
    let (id, parts, content) = upload_two_parts(c, b, "k", &PutOptions::default());
    let first = ok(c.complete_multipart_upload(b, "k", &id, &parts), "complete");
    let again = ok(
        c.complete_multipart_upload(b, "k", &id, &parts),
        "complete again",
    );
    assert_eq!(again.etag, first.etag, "the retry's ETag");
    assert_eq!(again.size, content.len() as u64, "the retry's size");
    assert_content(c, b, "k", &content);
    let no = ErrorCode::NoSuchUpload;
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &parts[..1]),
        no,
        "complete again with other parts",
    );
    expect_err(
        c.complete_multipart_upload(b, "other", &id, &parts),
        no,
        "complete again under another key",
    );
    expect_err(c.list_parts(b, "k", &id), no, "list parts after completion");
    expect_err(
        c.abort_multipart_upload(b, "k", &id),
        no,
        "abort after completion",
    );
    let uploads = ok(c.list_multipart_uploads(b, ""), "list uploads");
    assert!(
        uploads.is_empty(),
        "a completed upload is listed: {uploads:?}"
    );
    put(c, b, "k", b"replaced");
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &parts),
        no,
        "complete again after the key was overwritten",
    );
    assert_content(c, b, "k", b"replaced");
}

/// A completed multipart object keeps its part boundaries: GET with
/// `partNumber` answers that part's bytes, the object's ETag and its part
/// count; part 1 of an object not uploaded in parts is all of it, and a
/// part past the last is InvalidPart. (The RPC and libs3 have no field for
/// `partNumber`: they refuse it.)
fn multipart_parts_after_completion(c: &dyn S3Client, b: &str) {
    let (id, parts, content) = upload_two_parts(c, b, "k", &PutOptions::default());
    let done = ok(c.complete_multipart_upload(b, "k", &id, &parts), "complete");
    let r = c.get_object_part(b, "k", 1);
    if matches!(c.transport(), "remote" | "libs3")
        && matches!(&r, Err(e) if e.code == ErrorCode::NotImplemented)
    {
        return;
    }
    let sizes = [(1, 0, MIB5), (2, MIB5, content.len() - MIB5)];
    for (n, (got, count)) in [
        (1, ok(r, "GET part 1")),
        (2, ok(c.get_object_part(b, "k", 2), "GET part 2")),
    ] {
        let (_, offset, len) = sizes[n - 1];
        let mut got = got;
        assert_eq!(count, Some(2), "part {n}: parts count");
        assert_eq!(
            (got.offset, got.length, got.info.size),
            (offset as u64, len as u64, content.len() as u64),
            "part {n}: offset, length, object size"
        );
        assert_eq!(got.info.etag, done.etag, "part {n}: the object's ETag");
        let mut body = Vec::new();
        got.body.read_to_end(&mut body).expect("read part");
        assert!(body == content[offset..offset + len], "part {n}: its bytes");
    }
    expect_err(
        c.get_object_part(b, "k", 3),
        ErrorCode::InvalidPart,
        "part 3 of 2",
    );
    put(c, b, "plain", b"body");
    let (mut whole, count) = ok(c.get_object_part(b, "plain", 1), "part 1 of a plain object");
    let mut body = Vec::new();
    whole.body.read_to_end(&mut body).expect("read it");
    assert_eq!(
        (body.as_slice(), count),
        (&b"body"[..], None),
        "part 1 of a plain object"
    );
    expect_err(
        c.get_object_part(b, "plain", 2),
        ErrorCode::InvalidPart,
        "part 2 of a plain object",
    );
    expect_err(
        c.get_object_part(b, "missing", 1),
        ErrorCode::NoSuchKey,
        "part of a missing key",
    );
}

/// Abort removes the upload and its parts: NoSuchUpload afterwards, no key,
/// and the bucket is empty enough to delete.
fn multipart_abort(c: &dyn S3Client, b: &str) {
    let key = "aborted";
    let id = ok(
        c.create_multipart_upload(b, key, &PutOptions::default()),
        "create upload",
    );
    let e1 = ok(
        c.upload_part(b, key, &id, 1, PutBody::Bytes(b"part one")),
        "upload part",
    );
    expect_err(
        c.list_parts(b, "other-key", &id),
        ErrorCode::NoSuchUpload,
        "list parts under another key",
    );
    expect_err(
        c.abort_multipart_upload(b, "other-key", &id),
        ErrorCode::NoSuchUpload,
        "abort under another key",
    );
    ok(c.abort_multipart_upload(b, key, &id), "abort");
    let no = ErrorCode::NoSuchUpload;
    expect_err(c.list_parts(b, key, &id), no, "list parts after abort");
    expect_err(
        c.upload_part(b, key, &id, 2, PutBody::Bytes(b"x")),
        no,
        "upload part after abort",
    );
    expect_err(
        c.complete_multipart_upload(b, key, &id, &[(1, e1)]),
        no,
        "complete after abort",
    );
    expect_err(c.abort_multipart_upload(b, key, &id), no, "abort twice");
    for bogus in ["../../x", "0123456789abcdef0123456789abcdef", ""] {
        expect_err(
            c.list_parts(b, key, bogus),
            no,
            &format!("list parts of upload {bogus:?}"),
        );
    }
    expect_err(
        c.head_object(b, key),
        ErrorCode::NoSuchKey,
        "HEAD after abort",
    );
    assert!(
        ok(c.list_multipart_uploads(b, ""), "list uploads").is_empty(),
        "aborted upload still listed"
    );
    ok(c.delete_bucket(b), "delete the bucket after the abort");
}

/// Parts named out of order are InvalidPartOrder; a part named twice in a
/// row counts with its last entry; the upload stays usable after a refusal.
fn multipart_invalid_part_order(c: &dyn S3Client, b: &str) {
    let (id, parts, content) = upload_two_parts(c, b, "k", &PutOptions::default());
    let swapped = [parts[1].clone(), parts[0].clone()];
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &swapped),
        ErrorCode::InvalidPartOrder,
        "parts 2, 1",
    );
    let stale_last = [
        parts[0].clone(),
        (1, format!("\"{}\"", "0".repeat(32))),
        parts[1].clone(),
    ];
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &stale_last),
        ErrorCode::InvalidPart,
        "parts 1, 1 (an ETag part 1 does not have), 2",
    );
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &[]),
        ErrorCode::InvalidArgument,
        "no parts",
    );
    expect_err(
        c.head_object(b, "k"),
        ErrorCode::NoSuchKey,
        "HEAD after failed completions",
    );
    // A part listed twice in a row counts with its last entry: a client
    // that re-sent part 1 lists both uploads' ETags, the one kept last.
    let resent = [
        (1, format!("\"{}\"", "0".repeat(32))),
        parts[0].clone(),
        parts[1].clone(),
    ];
    ok(
        c.complete_multipart_upload(b, "k", &id, &resent),
        "complete in order, part 1 listed twice",
    );
    assert_content(c, b, "k", &content);
}

/// Every part but the last must be at least 5 MiB.
fn multipart_entity_too_small(c: &dyn S3Client, b: &str) {
    let id = ok(
        c.create_multipart_upload(b, "k", &PutOptions::default()),
        "create upload",
    );
    let small = data(1024, 13);
    let e1 = ok(
        c.upload_part(b, "k", &id, 1, PutBody::Bytes(&small)),
        "part 1",
    );
    let e2 = ok(
        c.upload_part(b, "k", &id, 2, PutBody::Bytes(&small)),
        "part 2",
    );
    let both = [(1, e1.clone()), (2, e2)];
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &both),
        ErrorCode::EntityTooSmall,
        "1 KiB first part",
    );
    expect_err(
        c.head_object(b, "k"),
        ErrorCode::NoSuchKey,
        "HEAD after EntityTooSmall",
    );
    // A small part is fine as the last (here: the only) one.
    let info = ok(
        c.complete_multipart_upload(b, "k", &id, &[(1, e1)]),
        "complete with part 1 only",
    );
    assert!(info.etag.ends_with("-1\""), "one-part ETag {:?}", info.etag);
    assert_content(c, b, "k", &small);
}

/// A part never uploaded, a wrong part ETag or a bad part number fails.
fn multipart_invalid_part(c: &dyn S3Client, b: &str) {
    let id = ok(
        c.create_multipart_upload(b, "k", &PutOptions::default()),
        "create upload",
    );
    let e1 = ok(
        c.upload_part(b, "k", &id, 1, PutBody::Bytes(b"one")),
        "part 1",
    );
    let bad = ErrorCode::InvalidPart;
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &[(2, e1.clone())]),
        bad,
        "part never uploaded",
    );
    let wrong = "\"00000000000000000000000000000000\"".to_string();
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &[(1, wrong)]),
        bad,
        "wrong ETag",
    );
    for n in [0, 10_001] {
        expect_err(
            c.upload_part(b, "k", &id, n, PutBody::Bytes(b"x")),
            ErrorCode::InvalidArgument,
            &format!("part number {n}"),
        );
    }
    // Re-uploading a part replaces it.
    let e1b = ok(
        c.upload_part(b, "k", &id, 1, PutBody::Bytes(b"uno!")),
        "part 1 again",
    );
    let parts = ok(c.list_parts(b, "k", &id), "list parts");
    assert_eq!(
        parts
            .iter()
            .map(|p| (p.part_number, p.size))
            .collect::<Vec<_>>(),
        vec![(1, 4)],
        "list parts"
    );
    expect_err(
        c.complete_multipart_upload(b, "k", &id, &[(1, e1)]),
        bad,
        "the replaced part's ETag",
    );
    ok(
        c.complete_multipart_upload(b, "k", &id, &[(1, e1b)]),
        "complete",
    );
    assert_content(c, b, "k", b"uno!");
}

// ---------------------------------------------------------------- helpers of the crate

/// `read_exact_body` reads a body of exactly the buffer's length and fails
/// with IncompleteBody on any other.
fn read_exact_body_length(c: &dyn S3Client, b: &str) {
    let content = data(4096, 14);
    put(c, b, "k", &content);
    for wrong in [4095, 4097, 0] {
        let mut got = ok(c.get_object(b, "k", None), "GET");
        let mut buf = vec![0; wrong];
        expect_err(
            read_exact_body(&mut got, &mut buf),
            ErrorCode::IncompleteBody,
            &format!("read_exact_body into {wrong} bytes"),
        );
    }
    let mut got = ok(c.get_object(b, "k", None), "GET");
    let mut buf = vec![0; 4096];
    ok(read_exact_body(&mut got, &mut buf), "read_exact_body");
    assert!(buf == content, "read_exact_body: wrong bytes");
    let mut got = ok(
        c.get_object(b, "k", Some(ByteRange::Suffix(100))),
        "GET suffix",
    );
    let mut buf = vec![0; 100];
    ok(
        read_exact_body(&mut got, &mut buf),
        "read_exact_body of a range",
    );
    assert!(
        buf == content[3996..],
        "read_exact_body of a range: wrong bytes"
    );
}

fn cond_put(
    c: &dyn S3Client,
    b: &str,
    key: &str,
    body: &[u8],
    cond: WriteCondition,
) -> Result<String> {
    let o = PutOptions {
        condition: cond,
        ..Default::default()
    };
    c.put_object(b, key, PutBody::Bytes(body), &o)
}

/// Whether `r` is the refusal of a transport whose API cannot carry the
/// request (libs3's ABI has no field for conditions or tags). Only libs3
/// may refuse; it must refuse, never write unconditionally.
fn refused<T>(c: &dyn S3Client, r: &Result<T>) -> bool {
    c.transport() == "libs3"
        && matches!(
            r,
            Err(S3Error {
                code: ErrorCode::NotImplemented,
                ..
            })
        )
}

/// DeleteObject with conditions (If-Match, size, last-modified time)
/// deletes only the object they all describe; otherwise PreconditionFailed
/// and the object stays. A missing key succeeds whatever they say, as S3.
fn conditional_delete(c: &dyn S3Client, b: &str) {
    let cond = |etag: Option<&str>, size: Option<u64>, t: Option<SystemTime>| DeleteCondition {
        etag: etag.map(str::to_string),
        size,
        last_modified: t,
    };
    put(c, b, "probe", b"x");
    let r = c.delete_object_if(b, "probe", &cond(Some("*"), None, None));
    if refused(c, &r) {
        return;
    }
    ok(r, "DELETE If-Match: * of an object");
    for key in ["k", "d"] {
        let etag = put(c, b, key, b"content");
        if key == "d" {
            // A key that is also a prefix.
            put(c, b, "d/e", b"below");
        }
        let t = ok(c.head_object(b, key), "HEAD").last_modified;
        let earlier = Some(t - Duration::from_secs(3600));
        let other = format!("\"{}\"", "0".repeat(32));
        let wrong = [
            ("another ETag", cond(Some(&other), None, None)),
            ("another size", cond(None, Some(8), None)),
            ("another time", cond(None, None, earlier)),
            ("two right, one wrong", cond(Some(&etag), Some(7), earlier)),
        ];
        for (what, w) in wrong {
            expect_err(
                c.delete_object_if(b, key, &w),
                ErrorCode::PreconditionFailed,
                &format!("DELETE {key} with {what}"),
            );
            assert_content(c, b, key, b"content");
        }
        ok(
            c.delete_object_if(b, key, &cond(Some(&etag), Some(7), Some(t))),
            "DELETE with the object's ETag, size and time",
        );
        expect_err(c.head_object(b, key), ErrorCode::NoSuchKey, "HEAD after it");
        ok(
            c.delete_object_if(b, key, &cond(Some(&other), Some(1), None)),
            "DELETE of a missing key with conditions",
        );
        put(c, b, key, b"again");
        ok(
            c.delete_object_if(b, key, &cond(Some("*"), None, None)),
            "DELETE If-Match: *",
        );
        expect_err(c.head_object(b, key), ErrorCode::NoSuchKey, "HEAD after *");
    }
    assert_content(c, b, "d/e", b"below");
    let (keys, _) = list(c, b, &req("", None));
    assert_eq!(
        keys,
        strings(&["d/e"]),
        "LIST after the conditional deletes"
    );
}

/// `If-None-Match: *` creates only; `If-Match` replaces only the version
/// named; a failed condition is PreconditionFailed and leaves the object as
/// it was; If-Match on a missing key is NoSuchKey.
fn conditional_put(c: &dyn S3Client, b: &str) {
    let first = cond_put(c, b, "c/k", b"one", WriteCondition::IfNoneMatch);
    if refused(c, &first) {
        expect_err(c.head_object(b, "c/k"), ErrorCode::NoSuchKey, "refused PUT");
        return;
    }
    let e1 = ok(first, "PUT If-None-Match on a new key");
    expect_err(
        cond_put(c, b, "c/k", b"two", WriteCondition::IfNoneMatch),
        ErrorCode::PreconditionFailed,
        "PUT If-None-Match on an existing key",
    );
    assert_content(c, b, "c/k", b"one");
    expect_err(
        cond_put(
            c,
            b,
            "c/k",
            b"two",
            WriteCondition::IfMatch("\"0000\"".into()),
        ),
        ErrorCode::PreconditionFailed,
        "PUT If-Match with a wrong ETag",
    );
    assert_content(c, b, "c/k", b"one");
    let e2 = ok(
        cond_put(c, b, "c/k", b"two", WriteCondition::IfMatch(e1.clone())),
        "PUT If-Match with the current ETag",
    );
    assert_content(c, b, "c/k", b"two");
    expect_err(
        cond_put(c, b, "c/k", b"three", WriteCondition::IfMatch(e1)),
        ErrorCode::PreconditionFailed,
        "PUT If-Match with the replaced ETag",
    );
    ok(
        cond_put(c, b, "c/k", b"three", WriteCondition::IfMatch(e2)),
        "PUT If-Match again",
    );
    expect_err(
        cond_put(
            c,
            b,
            "c/none",
            b"x",
            WriteCondition::IfMatch("\"0000\"".into()),
        ),
        ErrorCode::NoSuchKey,
        "PUT If-Match on a missing key",
    );
    expect_err(c.head_object(b, "c/none"), ErrorCode::NoSuchKey, "HEAD");
    // Empty bodies too.
    ok(
        cond_put(c, b, "c/e", b"", WriteCondition::IfNoneMatch),
        "empty PUT If-None-Match",
    );
    expect_err(
        cond_put(c, b, "c/e", b"", WriteCondition::IfNoneMatch),
        ErrorCode::PreconditionFailed,
        "empty PUT If-None-Match again",
    );
}

/// CopyObject's destination and CompleteMultipartUpload take the same
/// conditions; a failed completion leaves the upload to finish later.
fn conditional_copy_and_complete(c: &dyn S3Client, b: &str) {
    put(c, b, "src", b"source");
    let dst = put(c, b, "dst", b"dest");
    let r = c.copy_object_if(b, "src", b, "dst", None, &WriteCondition::IfNoneMatch);
    if refused(c, &r) {
        assert_content(c, b, "dst", b"dest");
        return;
    }
    expect_err(r, ErrorCode::PreconditionFailed, "COPY If-None-Match");
    assert_content(c, b, "dst", b"dest");
    expect_err(
        c.copy_object_if(
            b,
            "src",
            b,
            "dst",
            None,
            &WriteCondition::IfMatch("\"0000\"".into()),
        ),
        ErrorCode::PreconditionFailed,
        "COPY If-Match wrong",
    );
    ok(
        c.copy_object_if(b, "src", b, "dst", None, &WriteCondition::IfMatch(dst)),
        "COPY If-Match right",
    );
    assert_content(c, b, "dst", b"source");
    ok(
        c.copy_object_if(b, "src", b, "fresh", None, &WriteCondition::IfNoneMatch),
        "COPY If-None-Match to a new key",
    );

    let id = ok(
        c.create_multipart_upload(b, "mp", &PutOptions::default()),
        "create upload",
    );
    let p1 = ok(
        c.upload_part(b, "mp", &id, 1, PutBody::Bytes(b"part one")),
        "upload part",
    );
    let there = put(c, b, "mp", b"there first");
    let parts = [(1, p1)];
    expect_err(
        c.complete_multipart_upload_if(b, "mp", &id, &parts, &WriteCondition::IfNoneMatch),
        ErrorCode::PreconditionFailed,
        "complete If-None-Match on an existing key",
    );
    assert_content(c, b, "mp", b"there first");
    ok(
        c.complete_multipart_upload_if(b, "mp", &id, &parts, &WriteCondition::IfMatch(there)),
        "complete If-Match after a failed condition",
    );
    assert_content(c, b, "mp", b"part one");
}

/// Two writers racing on one key with the same condition: exactly one
/// wins, the other gets PreconditionFailed, in every one of 50 trials, for
/// If-None-Match and for If-Match.
fn conditional_races(c: &dyn S3Client, b: &str) {
    if refused(
        c,
        &cond_put(c, b, "probe", b"x", WriteCondition::IfNoneMatch),
    ) {
        return;
    }
    for if_match in [false, true] {
        for t in 0..50 {
            let key = format!("race/{if_match}/{t}");
            let cond = if if_match {
                WriteCondition::IfMatch(put(c, b, &key, b"base"))
            } else {
                WriteCondition::IfNoneMatch
            };
            let barrier = std::sync::Barrier::new(2);
            let results: Vec<Result<String>> = std::thread::scope(|sc| {
                let hs: Vec<_> = (0..2u8)
                    .map(|w| {
                        let (barrier, key, cond) = (&barrier, &key, cond.clone());
                        sc.spawn(move || {
                            let body = data(64 << 10, w);
                            barrier.wait();
                            cond_put(c, b, key, &body, cond)
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let won: Vec<usize> = (0..2).filter(|&w| results[w].is_ok()).collect();
            assert_eq!(
                won.len(),
                1,
                "race {t} (If-Match: {if_match}): exactly one writer must win: {results:?}"
            );
            let lost = &results[1 - won[0]];
            assert!(
                matches!(lost, Err(e) if e.code == ErrorCode::PreconditionFailed),
                "race {t}: the loser must get PreconditionFailed: {lost:?}"
            );
            assert_content(c, b, &key, &data(64 << 10, won[0] as u8));
        }
    }
}

/// Tags given on PUT are stored with the object and counted by HEAD;
/// Put/Get/DeleteObjectTagging replace, read and remove them; more than
/// 10 is InvalidTag.
fn object_tagging(c: &dyn S3Client, b: &str) {
    let tags: BTreeMap<String, String> = meta_map(&[("project", "io500"), ("tier", "hot tier")]);
    let o = PutOptions {
        tags: tags.clone(),
        ..Default::default()
    };
    let r = c.put_object(b, "t", PutBody::Bytes(b"tagged"), &o);
    if refused(c, &r) {
        expect_err(c.head_object(b, "t"), ErrorCode::NoSuchKey, "refused PUT");
        return;
    }
    ok(r, "PUT with tags");
    assert_eq!(ok(c.get_object_tagging(b, "t"), "GET tagging"), tags);
    assert_eq!(assert_content(c, b, "t", b"tagged").tag_count, 2);
    let new = meta_map(&[("a", "b/c=d&e")]);
    ok(c.put_object_tagging(b, "t", &new), "PUT tagging");
    assert_eq!(ok(c.get_object_tagging(b, "t"), "GET tagging"), new);
    assert_eq!(assert_content(c, b, "t", b"tagged").tag_count, 1);
    ok(c.delete_object_tagging(b, "t"), "DELETE tagging");
    assert!(ok(c.get_object_tagging(b, "t"), "GET tagging").is_empty());
    assert_eq!(assert_content(c, b, "t", b"tagged").tag_count, 0);
    let eleven: BTreeMap<String, String> = (0..11)
        .map(|i| (format!("k{i}"), "v".to_string()))
        .collect();
    expect_err(
        c.put_object_tagging(b, "t", &eleven),
        ErrorCode::InvalidTag,
        "11 tags",
    );
    expect_err(
        c.get_object_tagging(b, "missing"),
        ErrorCode::NoSuchKey,
        "GET tagging of a missing key",
    );
}

/// Cache-Control, Content-Disposition, Content-Encoding, Content-Language
/// and Expires are stored with the object and returned by GET and HEAD, as
/// written (PUT, multipart upload); a copy keeps them, a copy with options
/// (REPLACE) takes the new ones, an overwrite without them drops them.
fn standard_headers(c: &dyn S3Client, b: &str) {
    let headers = ObjectHeaders {
        cache_control: Some("public, max-age=14400".into()),
        content_disposition: Some("attachment; filename=\"report 1.txt\"".into()),
        content_encoding: Some("gzip".into()),
        content_language: Some("de-CH".into()),
        expires: Some("Wed, 21 Oct 2026 07:28:00 GMT".into()),
    };
    let o = PutOptions {
        headers: headers.clone(),
        ..opts("text/plain", &[("m", "1")])
    };
    ok(c.put_object(b, "h", PutBody::Bytes(b"zipped"), &o), "PUT");
    assert_eq!(
        assert_content(c, b, "h", b"zipped").headers,
        headers,
        "HEAD"
    );
    let copied = ok(c.copy_object(b, "h", b, "copy", None), "copy");
    assert_eq!(copied.headers, headers, "copy's ObjectInfo");
    assert_eq!(assert_stored(c, b, "copy", b"zipped", &o).headers, headers);
    let new = PutOptions {
        headers: ObjectHeaders {
            cache_control: Some("no-store".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let replaced = ok(c.copy_object(b, "h", b, "new", Some(&new)), "copy REPLACE");
    assert_eq!(replaced.headers, new.headers, "copy REPLACE's ObjectInfo");
    assert_eq!(assert_content(c, b, "new", b"zipped").headers, new.headers);
    let (id, parts, content) = upload_two_parts(c, b, "mp", &o);
    let done = ok(
        c.complete_multipart_upload(b, "mp", &id, &parts),
        "complete",
    );
    assert_eq!(done.headers, headers, "complete's ObjectInfo");
    assert_eq!(assert_stored(c, b, "mp", &content, &o).headers, headers);
    put(c, b, "h", b"plain");
    let head = assert_content(c, b, "h", b"plain");
    assert_eq!(head.headers, ObjectHeaders::default(), "after an overwrite");
}

/// The engine's message, not just the code, reaches the caller: for GET
/// and for HEAD (whose HTTP answer has no body) of a missing key, and for
/// a failed write condition.
fn error_messages_reach_the_caller(c: &dyn S3Client, b: &str) {
    let msg = |r: Result<()>, what: &str| match r {
        Ok(()) => panic!("{what}: succeeded, expected an error"),
        Err(e) => e.message,
    };
    let m = msg(c.get_object(b, "gone", None).map(drop), "GET missing");
    assert!(m.contains("no object"), "GET missing key: message {m:?}");
    let m = msg(c.head_object(b, "gone").map(drop), "HEAD missing");
    assert!(m.contains("no object"), "HEAD missing key: message {m:?}");
    put(c, b, "there", b"x");
    let r = cond_put(c, b, "there", b"y", WriteCondition::IfNoneMatch);
    if !refused(c, &r) {
        let m = msg(r.map(drop), "PUT If-None-Match");
        assert!(m.contains("If-None-Match"), "412: message {m:?}");
    }
}
