//! Every libs3 2.0 call of the data path, made through the C ABI with C
//! callbacks, on each transport: embedded (`file://`), remote (the RPC
//! gateway on a Unix socket) and HTTP (our server). Failures included.

use s3::abi2::*;
use s3hpc_client::EmbeddedClient;
use s3hpc_http::{AuthConfig, HttpServer};
use s3hpc_rpc::{Gateway, GatewayOptions};
use s3hpc_store::{Durability, EtagPolicy, Store, StoreConfig};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr::{null, null_mut};
use std::sync::Arc;

/// What the callbacks of one request saw, and what a put feeds.
#[derive(Default)]
struct Call {
    status: Option<S3Status>,
    message: String,
    length: Option<u64>,
    etag: Option<String>,
    meta: Vec<(String, String)>,
    got: Vec<u8>,
    /// Put source, fed `chunk` bytes per callback; abort after `abort_at`.
    src: Vec<u8>,
    pos: usize,
    chunk: usize,
    abort_at: Option<usize>,
    /// List results.
    keys: Vec<(String, u64)>,
    prefixes: Vec<String>,
    truncated: bool,
    next_marker: Option<String>,
    buckets: Vec<String>,
}

fn call(data: *mut c_void) -> &'static mut Call {
    // SAFETY: every request below passes a live `Call` as callback data.
    unsafe { &mut *(data as *mut Call) }
}

unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: the library passes NUL-terminated strings.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

unsafe extern "C" fn on_props(p: *const S3ResponseProperties, data: *mut c_void) -> S3Status {
    let c = call(data);
    // SAFETY: valid for the call.
    let p = unsafe { &*p };
    c.length = Some(p.content_length);
    // SAFETY: strings from the library.
    c.etag = (!p.e_tag.is_null()).then(|| unsafe { text(p.e_tag) });
    for i in 0..p.meta_data_count as usize {
        // SAFETY: `meta_data` has `meta_data_count` entries.
        let nv = unsafe { &*p.meta_data.add(i) };
        c.meta.push(unsafe { (text(nv.name), text(nv.value)) });
    }
    S3Status::OK
}

unsafe extern "C" fn on_complete(s: S3Status, d: *const S3ErrorDetails, data: *mut c_void) {
    let c = call(data);
    assert!(c.status.is_none(), "complete called twice");
    c.status = Some(s);
    if !d.is_null() {
        // SAFETY: valid for the call.
        c.message = unsafe { text((*d).message) };
    }
}

unsafe extern "C" fn on_put(size: c_int, buf: *mut c_char, data: *mut c_void) -> c_int {
    let c = call(data);
    if c.abort_at.is_some_and(|a| c.pos >= a) {
        return -1;
    }
    let n = (size as usize).min(c.chunk).min(c.src.len() - c.pos);
    // SAFETY: `buf` holds `size` bytes.
    unsafe { std::ptr::copy_nonoverlapping(c.src[c.pos..].as_ptr(), buf.cast(), n) };
    c.pos += n;
    n as c_int
}

unsafe extern "C" fn on_get(size: c_int, buf: *const c_char, data: *mut c_void) -> S3Status {
    let c = call(data);
    if c.abort_at.is_some_and(|a| c.got.len() >= a) {
        return S3Status::AbortedByCallback;
    }
    // SAFETY: `buf` holds `size` bytes.
    c.got
        .extend_from_slice(unsafe { std::slice::from_raw_parts(buf.cast(), size as usize) });
    S3Status::OK
}

unsafe extern "C" fn on_list(
    truncated: c_int,
    next: *const c_char,
    n: c_int,
    contents: *const S3ListBucketContent,
    np: c_int,
    prefixes: *const *const c_char,
    data: *mut c_void,
) -> S3Status {
    let c = call(data);
    c.truncated = truncated != 0;
    // SAFETY: arrays of the given lengths, strings from the library.
    unsafe {
        c.next_marker = (!next.is_null()).then(|| text(next));
        for i in 0..n as usize {
            let e = &*contents.add(i);
            c.keys.push((text(e.key), e.size));
        }
        for i in 0..np as usize {
            c.prefixes.push(text(*prefixes.add(i)));
        }
    }
    S3Status::OK
}

unsafe extern "C" fn on_service(
    _owner: *const c_char,
    _name: *const c_char,
    bucket: *const c_char,
    _created: i64,
    data: *mut c_void,
) -> S3Status {
    // SAFETY: a string from the library.
    call(data).buckets.push(unsafe { text(bucket) });
    S3Status::OK
}

const RESPONSE: S3ResponseHandler = S3ResponseHandler {
    properties_callback: Some(on_props),
    complete_callback: Some(on_complete),
};

/// One transport under test: its host string and protocol.
struct Env {
    host: CString,
    http: bool,
    protocol: S3Protocol,
    access: CString,
    secret: CString,
}

impl Env {
    fn ctx(&self, bucket: &CString) -> S3BucketContext {
        S3BucketContext {
            host_name: self.host.as_ptr(),
            bucket_name: bucket.as_ptr(),
            protocol: self.protocol,
            uri_style: 1,
            access_key_id: self.access.as_ptr(),
            secret_access_key: self.secret.as_ptr(),
        }
    }

    fn bucket_op(&self, op: &str, bucket: &CString) -> Call {
        let mut c = Call::default();
        let d = &mut c as *mut Call as *mut c_void;
        let (h, a, s, b) = (
            self.host.as_ptr(),
            self.access.as_ptr(),
            self.secret.as_ptr(),
            bucket.as_ptr(),
        );
        // SAFETY: valid arguments; `c` outlives the call.
        unsafe {
            match op {
                "create" => S3_create_bucket(
                    self.protocol,
                    a,
                    s,
                    h,
                    b,
                    0,
                    null(),
                    null_mut(),
                    &RESPONSE,
                    d,
                ),
                "delete" => {
                    S3_delete_bucket(self.protocol, 1, a, s, h, b, null_mut(), &RESPONSE, d)
                }
                "test" => {
                    let mut loc = [0 as c_char; 64];
                    S3_test_bucket(
                        self.protocol,
                        1,
                        a,
                        s,
                        h,
                        b,
                        64,
                        loc.as_mut_ptr(),
                        null_mut(),
                        &RESPONSE,
                        d,
                    )
                }
                _ => unreachable!(),
            }
        }
        c
    }

    fn put(
        &self,
        bucket: &CString,
        key: &str,
        src: Vec<u8>,
        chunk: usize,
        abort_at: Option<usize>,
    ) -> Call {
        self.put_md5(bucket, key, src, chunk, abort_at, None)
    }

    /// A put with `md5` (base64) in its put properties.
    fn put_md5(
        &self,
        bucket: &CString,
        key: &str,
        src: Vec<u8>,
        chunk: usize,
        abort_at: Option<usize>,
        md5: Option<&std::ffi::CStr>,
    ) -> Call {
        let key = CString::new(key).unwrap();
        let len = src.len() as u64;
        let mut c = Call {
            src,
            chunk,
            abort_at,
            ..Default::default()
        };
        let (mn, mv) = (c"color", c"blue");
        let meta = [S3NameValue {
            name: mn.as_ptr(),
            value: mv.as_ptr(),
        }];
        let props = S3PutProperties {
            content_type: c"application/x-test".as_ptr(),
            md5: md5.map_or(null(), |m| m.as_ptr()),
            cache_control: null(),
            content_disposition_filename: null(),
            content_encoding: null(),
            expires: -1,
            canned_acl: 0,
            meta_data_count: 1,
            meta_data: meta.as_ptr(),
        };
        let h = S3PutObjectHandler {
            response_handler: RESPONSE,
            put_object_data_callback: Some(on_put),
        };
        let ctx = self.ctx(bucket);
        // SAFETY: valid arguments; `c` outlives the call.
        unsafe {
            S3_put_object(
                &ctx,
                key.as_ptr(),
                len,
                &props,
                null_mut(),
                &h,
                &mut c as *mut Call as *mut c_void,
            )
        };
        c
    }

    fn get(
        &self,
        bucket: &CString,
        key: &str,
        start: u64,
        count: u64,
        abort_at: Option<usize>,
    ) -> Call {
        let key = CString::new(key).unwrap();
        let mut c = Call {
            abort_at,
            ..Default::default()
        };
        let h = S3GetObjectHandler {
            response_handler: RESPONSE,
            get_object_data_callback: Some(on_get),
        };
        let ctx = self.ctx(bucket);
        // SAFETY: valid arguments; `c` outlives the call.
        unsafe {
            S3_get_object(
                &ctx,
                key.as_ptr(),
                null(),
                start,
                count,
                null_mut(),
                &h,
                &mut c as *mut Call as *mut c_void,
            )
        };
        c
    }

    fn object_op(&self, op: &str, bucket: &CString, key: &str) -> Call {
        let key = CString::new(key).unwrap();
        let mut c = Call::default();
        let d = &mut c as *mut Call as *mut c_void;
        let ctx = self.ctx(bucket);
        // SAFETY: valid arguments; `c` outlives the call.
        unsafe {
            match op {
                "head" => S3_head_object(&ctx, key.as_ptr(), null_mut(), &RESPONSE, d),
                "delete" => S3_delete_object(&ctx, key.as_ptr(), null_mut(), &RESPONSE, d),
                "getacl" => S3_get_acl(
                    &ctx,
                    key.as_ptr(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    null_mut(),
                    &RESPONSE,
                    d,
                ),
                _ => unreachable!(),
            }
        }
        c
    }

    fn list(
        &self,
        bucket: &CString,
        prefix: &str,
        marker: Option<&str>,
        delimiter: Option<&str>,
        max: c_int,
    ) -> Call {
        let prefix = CString::new(prefix).unwrap();
        let marker = marker.map(|m| CString::new(m).unwrap());
        let delimiter = delimiter.map(|m| CString::new(m).unwrap());
        let mut c = Call::default();
        let h = S3ListBucketHandler {
            response_handler: RESPONSE,
            list_bucket_callback: Some(on_list),
        };
        let ctx = self.ctx(bucket);
        // SAFETY: valid arguments; `c` outlives the call.
        unsafe {
            S3_list_bucket(
                &ctx,
                prefix.as_ptr(),
                marker.as_ref().map_or(null(), |m| m.as_ptr()),
                delimiter.as_ref().map_or(null(), |m| m.as_ptr()),
                max,
                null_mut(),
                &h,
                &mut c as *mut Call as *mut c_void,
            )
        };
        c
    }
}

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// The whole data path and its failures on one transport.
fn exercise(env: &Env) {
    let b = CString::new("libs3-bkt").unwrap();
    let missing = CString::new("no-such-bucket").unwrap();
    assert_eq!(env.bucket_op("create", &b).status, Some(S3Status::OK));
    assert_eq!(env.bucket_op("test", &b).status, Some(S3Status::OK));
    assert_eq!(
        env.bucket_op("test", &missing).status,
        Some(S3Status::ErrorNoSuchBucket)
    );

    // Put through many small callbacks (an odd chunk size), get it back.
    let src = data(1_000_003);
    let put = env.put(&b, "dir/big.bin", src.clone(), 4093, None);
    assert_eq!(put.status, Some(S3Status::OK), "{}", put.message);
    assert_eq!(put.pos, src.len());
    let got = env.get(&b, "dir/big.bin", 0, 0, None);
    assert_eq!(got.status, Some(S3Status::OK), "{}", got.message);
    assert_eq!(got.length, Some(src.len() as u64));
    assert!(got.got == src, "GET returned different bytes");
    assert_eq!(got.meta, vec![("color".to_string(), "blue".to_string())]);
    // A range, and a range from an offset to the end.
    let r = env.get(&b, "dir/big.bin", 1000, 5000, None);
    assert_eq!(r.status, Some(S3Status::OK), "{}", r.message);
    assert!(r.got == src[1000..6000]);
    let r = env.get(&b, "dir/big.bin", 999_000, 0, None);
    assert!(r.got == src[999_000..]);
    // Head.
    let h = env.object_op("head", &b, "dir/big.bin");
    assert_eq!(h.status, Some(S3Status::OK));
    assert_eq!(h.length, Some(src.len() as u64));
    assert_eq!(h.etag, put.etag);

    // The put properties' MD5 is verified: a wrong one keeps nothing.
    let wrong = env.put_md5(
        &b,
        "md5",
        b"abc".to_vec(),
        2,
        None,
        Some(c"AAAAAAAAAAAAAAAAAAAAAA=="),
    );
    assert_eq!(
        wrong.status,
        Some(S3Status::ErrorBadDigest),
        "{}",
        wrong.message
    );
    let h = env.object_op("head", &b, "md5");
    assert_eq!(h.status, Some(S3Status::ErrorNoSuchKey));
    let right = env.put_md5(
        &b,
        "md5",
        b"abc".to_vec(),
        2,
        None,
        Some(c"kAFQmDzST7DWlj99KOF/cg=="),
    );
    assert_eq!(right.status, Some(S3Status::OK), "{}", right.message);
    assert_eq!(
        env.object_op("delete", &b, "md5").status,
        Some(S3Status::OK)
    );

    // Listing: prefix, delimiter, max-keys with truncation and marker.
    for k in ["a/1", "a/2", "b", "c", "d"] {
        assert_eq!(
            env.put(&b, k, k.as_bytes().to_vec(), 100, None).status,
            Some(S3Status::OK)
        );
    }
    let l = env.list(&b, "", None, Some("/"), 0);
    assert_eq!(l.status, Some(S3Status::OK), "{}", l.message);
    assert_eq!(l.prefixes, vec!["a/", "dir/"]);
    assert_eq!(
        l.keys.iter().map(|k| k.0.as_str()).collect::<Vec<_>>(),
        ["b", "c", "d"]
    );
    let l = env.list(&b, "a/", None, None, 0);
    assert_eq!(l.keys, vec![("a/1".to_string(), 3), ("a/2".to_string(), 3)]);
    let mut all = Vec::new();
    let mut marker = None;
    loop {
        let l = env.list(&b, "", marker.as_deref(), None, 2);
        assert_eq!(l.status, Some(S3Status::OK));
        assert!(l.keys.len() <= 2);
        all.extend(l.keys.iter().map(|k| k.0.clone()));
        if !l.truncated {
            break;
        }
        marker = l.next_marker.clone();
        assert!(marker.is_some(), "a truncated page names its next marker");
    }
    assert_eq!(
        all,
        ["a/1", "a/2", "b", "c", "dir/big.bin", "d"]
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );

    // Paging one entry at a time with a delimiter: the marker after a
    // common prefix must skip the keys rolled up into it.
    let mut seen = Vec::new();
    let mut marker: Option<String> = None;
    for _ in 0..20 {
        let l = env.list(&b, "", marker.as_deref(), Some("/"), 1);
        assert_eq!(l.status, Some(S3Status::OK));
        seen.extend(l.prefixes.iter().cloned());
        seen.extend(l.keys.iter().map(|k| k.0.clone()));
        if !l.truncated {
            break;
        }
        marker = l.next_marker.clone();
    }
    assert_eq!(seen, ["a/", "b", "c", "d", "dir/"]);

    // Copy, keeping metadata, to a new key.
    let mut c = Call::default();
    let mut etag = [0 as c_char; 64];
    let mut mtime = 0i64;
    let ctx = env.ctx(&b);
    // SAFETY: valid arguments; `c` outlives the call.
    unsafe {
        S3_copy_object(
            &ctx,
            c"b".as_ptr(),
            null(),
            c"b-copy".as_ptr(),
            null(),
            &mut mtime,
            64,
            etag.as_mut_ptr(),
            null_mut(),
            &RESPONSE,
            &mut c as *mut Call as *mut c_void,
        )
    };
    assert_eq!(c.status, Some(S3Status::OK), "{}", c.message);
    assert!(mtime > 0);
    // SAFETY: NUL-terminated by the library.
    assert!(unsafe { text(etag.as_ptr()) }.starts_with('"'));
    assert_eq!(env.get(&b, "b-copy", 0, 0, None).got, b"b");

    // A presigned URL (SigV2 query string): fetched over HTTP, refused
    // for hosts that have no URL.
    let mut url = vec![0 as c_char; S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE];
    // SAFETY: a buffer of the documented size.
    let s = unsafe {
        S3_generate_authenticated_query_string(url.as_mut_ptr(), &ctx, c"b".as_ptr(), -1, null())
    };
    // SAFETY: NUL-terminated by the library.
    let url = unsafe { text(url.as_ptr()) };
    if env.http {
        assert_eq!(s, S3Status::OK);
        let (status, body) = http_get(&url);
        assert_eq!(
            (status.as_str(), body.as_slice()),
            ("200", &b"b"[..]),
            "{url}"
        );
    } else {
        assert_eq!(s, S3Status::ErrorNotImplemented);
        assert!(url.is_empty());
    }

    // Failures: missing key, missing bucket, aborting callbacks, ACLs.
    assert_eq!(
        env.get(&b, "nope", 0, 0, None).status,
        Some(S3Status::ErrorNoSuchKey)
    );
    assert_eq!(
        env.object_op("head", &b, "nope").status,
        Some(S3Status::ErrorNoSuchKey)
    );
    assert_eq!(
        env.get(&missing, "x", 0, 0, None).status,
        Some(S3Status::ErrorNoSuchBucket)
    );
    assert_eq!(
        env.list(&missing, "", None, None, 0).status,
        Some(S3Status::ErrorNoSuchBucket)
    );
    let g = env.get(&b, "dir/big.bin", 0, 0, Some(1));
    assert_eq!(g.status, Some(S3Status::AbortedByCallback));
    let p = env.put(&b, "aborted", data(300_000), 1000, Some(50_000));
    assert_eq!(p.status, Some(S3Status::AbortedByCallback));
    // Atomic: the aborted put left no object.
    assert_eq!(
        env.object_op("head", &b, "aborted").status,
        Some(S3Status::ErrorNoSuchKey)
    );
    let acl = env.object_op("getacl", &b, "b");
    assert_eq!(acl.status, Some(S3Status::ErrorNotImplemented));
    assert!(acl.message.contains("not supported"), "{}", acl.message);

    // Delete everything; the bucket then goes.
    assert_eq!(
        env.bucket_op("delete", &b).status,
        Some(S3Status::ErrorBucketNotEmpty)
    );
    for k in ["a/1", "a/2", "b", "b-copy", "c", "d", "dir/big.bin"] {
        assert_eq!(env.object_op("delete", &b, k).status, Some(S3Status::OK));
    }
    let mut c = Call::default();
    let h = S3ListServiceHandler {
        response_handler: RESPONSE,
        list_service_callback: Some(on_service),
    };
    // SAFETY: valid arguments; `c` outlives the call.
    unsafe {
        S3_list_service(
            env.protocol,
            env.access.as_ptr(),
            env.secret.as_ptr(),
            env.host.as_ptr(),
            null_mut(),
            &h,
            &mut c as *mut Call as *mut c_void,
        )
    };
    assert_eq!(c.status, Some(S3Status::OK), "{}", c.message);
    assert_eq!(c.buckets, ["libs3-bkt"]);
    assert_eq!(env.bucket_op("delete", &b).status, Some(S3Status::OK));
    assert_eq!(
        env.bucket_op("test", &b).status,
        Some(S3Status::ErrorNoSuchBucket)
    );
}

fn env(host: String, protocol: S3Protocol) -> Env {
    Env {
        http: !host.contains("://"),
        host: CString::new(host).unwrap(),
        protocol,
        access: CString::new("libs3-test").unwrap(),
        secret: CString::new("libs3-test-secret").unwrap(),
    }
}

fn store(dir: &std::path::Path) -> Arc<Store> {
    let config = StoreConfig {
        etag: EtagPolicy::Md5,
        durability: Durability::None,
    };
    Arc::new(Store::open(dir, config).unwrap())
}

#[test]
fn embedded() {
    let dir = tempfile::tempdir().unwrap();
    exercise(&env(format!("file://{}", dir.path().display()), 1));
}

#[test]
fn remote() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("gw.sock");
    let client = EmbeddedClient::new(store(&dir.path().join("root")));
    let opts = GatewayOptions {
        log_errors: false,
        ..GatewayOptions::default()
    };
    let gw = Gateway::start(
        Arc::new(client),
        &[s3hpc_rpc::Address::Unix(sock.clone())],
        opts,
    )
    .unwrap();
    exercise(&env(format!("unix://{}", sock.display()), 1));
    gw.stop();
}

#[test]
fn http() {
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthConfig::single("libs3-test", "libs3-test-secret");
    let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), store(dir.path()), auth, &[])
        .unwrap()
        .spawn()
        .unwrap();
    // A bare host:port with protocol HTTP, as libs3 callers pass it.
    exercise(&env(server.addr().to_string(), 1));
    server.shutdown().unwrap();
}

#[test]
fn wrong_hosts_and_null_arguments_give_a_status() {
    let b = CString::new("bkt").unwrap();
    for host in [
        "file://relative/path".to_string(),
        "unix:///nonexistent/dir/gw.sock".to_string(),
        "s3hpc://no-port".to_string(),
        "ftp://host".to_string(),
        "127.0.0.1:1".to_string(),
    ] {
        let e = env(host.clone(), 1);
        let c = e.bucket_op("test", &b);
        let s = c.status.unwrap();
        assert_ne!(s, S3Status::OK, "{host}");
        assert!(!c.message.is_empty(), "{host}: no message");
    }
    assert_eq!(
        env("file://relative".into(), 1)
            .bucket_op("test", &b)
            .status,
        Some(S3Status::NameLookupError)
    );
    assert_eq!(
        env("unix:///nonexistent/gw.sock".into(), 1)
            .bucket_op("test", &b)
            .status,
        Some(S3Status::FailedToConnect)
    );
    // An HTTP endpoint with nothing listening is a connection failure too.
    assert_eq!(
        env("127.0.0.1:1".into(), 1).bucket_op("test", &b).status,
        Some(S3Status::FailedToConnect)
    );
    // NULL bucket context, NULL key, NULL handler: a status or nothing, never a crash.
    let mut c = Call::default();
    // SAFETY: NULLs where the library must cope.
    unsafe {
        S3_head_object(
            null(),
            null(),
            null_mut(),
            &RESPONSE,
            &mut c as *mut Call as *mut c_void,
        )
    };
    assert_eq!(c.status, Some(S3Status::ErrorInvalidArgument));
    let e = env("file:///tmp".into(), 1);
    let ctx = e.ctx(&b);
    let mut c = Call::default();
    // SAFETY: as above.
    unsafe {
        S3_head_object(
            &ctx,
            null(),
            null_mut(),
            &RESPONSE,
            &mut c as *mut Call as *mut c_void,
        )
    };
    assert_eq!(c.status, Some(S3Status::ErrorInvalidArgument));
    // SAFETY: as above.
    unsafe { S3_delete_object(&ctx, c"k".as_ptr(), null_mut(), null(), null_mut()) };
}

#[test]
fn local_helpers() {
    assert_eq!(S3_status_is_retryable(S3Status::FailedToConnect), 1);
    assert_eq!(S3_status_is_retryable(S3Status::ErrorNoSuchKey), 0);
    // SAFETY: NUL-terminated names.
    unsafe {
        assert_eq!(
            S3_validate_bucket_name(c"my-bucket".as_ptr(), 0),
            S3Status::OK
        );
        assert_eq!(
            S3_validate_bucket_name(c"ab".as_ptr(), 0),
            S3Status::InvalidBucketNameTooShort
        );
        assert_eq!(
            S3_validate_bucket_name(c"My_Bucket".as_ptr(), 0),
            S3Status::InvalidBucketNameFirstCharacter
        );
        assert_eq!(
            S3_validate_bucket_name(c"My_Bucket".as_ptr(), 1),
            S3Status::OK
        );
        assert_eq!(
            S3_validate_bucket_name(c"a..b".as_ptr(), 0),
            S3Status::InvalidBucketNameCharacterSequence
        );
        assert_eq!(
            S3_validate_bucket_name(c"1.2.3.4".as_ptr(), 0),
            S3Status::InvalidBucketNameDotQuadNotation
        );
        assert_eq!(
            S3_validate_bucket_name(null(), 0),
            S3Status::InvalidBucketNameTooShort
        );
        let mut ctx = null_mut();
        assert_eq!(S3_create_request_context(&mut ctx), S3Status::OK);
        assert!(!ctx.is_null());
        let mut remaining = 7;
        assert_eq!(
            S3_runonce_request_context(ctx, &mut remaining),
            S3Status::OK
        );
        assert_eq!(remaining, 0);
        assert_eq!(S3_runall_request_context(ctx), S3Status::OK);
        S3_destroy_request_context(ctx);
        assert_eq!(
            S3_create_request_context(null_mut()),
            S3Status::InternalError
        );
    }
}

/// A plain HTTP/1.0 GET of `url`: (status code, body).
fn http_get(url: &str) -> (String, Vec<u8>) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = std::net::TcpStream::connect(authority).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {authority}\r\n\r\n").unwrap();
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).unwrap();
    let split = resp.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&resp[..split]).to_string();
    let status = head.split_whitespace().nth(1).unwrap().to_string();
    (status, resp[split + 4..].to_vec())
}
