//! One request's callbacks: what they collect (status, properties, data,
//! listings) in a [`Call`] passed as the callback data, and the handler
//! tables that point at them.

use s3hpc_libs3_core::cabi::{ResponseHandler, S3ErrorDetails, S3ListBucketContent};
use s3hpc_libs3_core::multipart::{S3ListMultipartUpload, S3ListPart};
use s3hpc_libs3_core::v4::*;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::io::Read;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where a put's data callback reads from.
pub enum Source<'a> {
    None,
    Slice(&'a [u8]),
    Reader(&'a mut dyn Read),
}

/// Where a get's data callback writes.
pub enum Sink<'a> {
    /// Not a GET: a response with data stops the request.
    None,
    /// Collected in memory (room for the announced length made ahead).
    Vec(Vec<u8>),
    /// Straight into the caller's buffer; more than fits stops the request.
    Slice { buf: &'a mut [u8], filled: usize },
}

/// The properties of a response, as Rust values.
#[derive(Default)]
pub struct Properties {
    pub content_length: u64,
    pub e_tag: String,
    pub content_type: Option<String>,
    pub last_modified: Option<SystemTime>,
    pub metadata: BTreeMap<String, String>,
}

/// What one request's callbacks saw.
pub struct Call<'a> {
    /// `None` until the complete callback ran.
    pub status: Option<S3Status>,
    pub message: String,
    pub props: Option<Properties>,
    pub source: Source<'a>,
    /// Set when the put source failed (its error is the request's).
    pub source_error: Option<std::io::Error>,
    /// GET data lands here.
    pub sink: Sink<'a>,
    /// The object had more bytes than the sink's buffer holds.
    pub overflow: bool,
    /// Listings: keys (key, size, mtime, ETag), common prefixes, buckets,
    /// parts, uploads, and the continuation the last page gave.
    pub objects: Vec<(String, u64, i64, String)>,
    pub prefixes: Vec<String>,
    pub names: Vec<(String, i64)>,
    pub parts: Vec<(u64, u64, i64, String)>,
    pub truncated: bool,
    pub next: Option<String>,
    pub next2: Option<String>,
    /// A multipart upload id or a commit's ETag.
    pub reply: Option<String>,
}

impl<'a> Call<'a> {
    pub fn new(source: Source<'a>) -> Self {
        Self::with_sink(source, Sink::None)
    }

    pub fn with_sink(source: Source<'a>, sink: Sink<'a>) -> Self {
        Call {
            status: None,
            message: String::new(),
            props: None,
            source,
            source_error: None,
            sink,
            overflow: false,
            objects: Vec::new(),
            prefixes: Vec::new(),
            names: Vec::new(),
            parts: Vec::new(),
            truncated: false,
            next: None,
            next2: None,
            reply: None,
        }
    }

    pub fn data(&mut self) -> *mut c_void {
        self as *mut Call as *mut c_void
    }
}

/// The callback data as the `Call` it is.
///
/// # Safety
/// `data` is the pointer `Call::data` gave for a request still running.
unsafe fn call<'c>(data: *mut c_void) -> &'c mut Call<'c> {
    // SAFETY: per the contract.
    unsafe { &mut *(data as *mut Call) }
}

/// A C string as an owned String (NULL: empty).
///
/// # Safety
/// `p` is NULL or NUL-terminated.
pub unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: per the contract.
    let c = unsafe { CStr::from_ptr(p) };
    // The UTF-8 check is faster than the lossy conversion's, and what the
    // library hands over (ETags, keys) is UTF-8.
    match c.to_str() {
        Ok(s) => s.to_owned(),
        Err(_) => c.to_string_lossy().into_owned(),
    }
}

fn time(secs: i64) -> Option<SystemTime> {
    (secs >= 0).then(|| system_time(secs))
}

/// Seconds since the epoch as a time (before the epoch: the epoch).
pub fn system_time(secs: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs.max(0) as u64)
}

/// `Some` of a non-empty C string.
unsafe fn opt_text(p: *const c_char) -> Option<String> {
    // SAFETY: forwarded contract.
    Some(unsafe { text(p) }).filter(|s| !s.is_empty())
}

unsafe extern "C" fn on_properties(p: *const S3ResponseProperties, data: *mut c_void) -> S3Status {
    // SAFETY: the library passes valid properties and our callback data.
    let (c, p) = unsafe { (call(data), &(*p).base) };
    let mut metadata = BTreeMap::new();
    for i in 0..p.meta_data_count.max(0) as usize {
        // SAFETY: `meta_data` holds `meta_data_count` entries.
        let nv = unsafe { &*p.meta_data.add(i) };
        // SAFETY: NUL-terminated strings.
        metadata.insert(unsafe { text(nv.name) }.to_ascii_lowercase(), unsafe {
            text(nv.value)
        });
    }
    c.props = Some(Properties {
        content_length: p.content_length,
        // SAFETY: NULL or NUL-terminated.
        e_tag: unsafe { text(p.e_tag) },
        content_type: unsafe { opt_text(p.content_type) },
        last_modified: time(p.last_modified),
        metadata,
    });
    if let Sink::Vec(v) = &mut c.sink {
        v.reserve(p.content_length.min(1 << 30) as usize);
    }
    S3Status::OK
}

unsafe extern "C" fn on_complete(s: S3Status, d: *const S3ErrorDetails, data: *mut c_void) {
    // SAFETY: our callback data; `d` NULL or valid.
    let c = unsafe { call(data) };
    c.status = Some(s);
    // SAFETY: NULL or valid details with NULL or NUL-terminated strings.
    if let Some(d) = unsafe { d.as_ref() } {
        c.message = unsafe { text(d.message) };
    }
}

unsafe extern "C" fn on_put(size: c_int, buf: *mut c_char, data: *mut c_void) -> c_int {
    // SAFETY: our callback data; `buf` writable for `size` bytes.
    let (c, buf) = unsafe {
        (
            call(data),
            std::slice::from_raw_parts_mut(buf.cast::<u8>(), size.max(0) as usize),
        )
    };
    match &mut c.source {
        Source::None => 0,
        Source::Slice(s) => {
            let n = s.len().min(buf.len());
            buf[..n].copy_from_slice(&s[..n]);
            *s = &s[n..];
            n as c_int
        }
        Source::Reader(r) => match r.read(buf) {
            Ok(n) => n as c_int,
            Err(e) => {
                c.source_error = Some(e);
                -1
            }
        },
    }
}

unsafe extern "C" fn on_get(size: c_int, buf: *const c_char, data: *mut c_void) -> S3Status {
    // SAFETY: our callback data; `buf` readable for `size` bytes.
    let (c, chunk) = unsafe {
        (
            call(data),
            std::slice::from_raw_parts(buf.cast::<u8>(), size.max(0) as usize),
        )
    };
    match &mut c.sink {
        Sink::None => return S3Status::AbortedByCallback,
        Sink::Vec(v) => v.extend_from_slice(chunk),
        Sink::Slice { buf, filled } => {
            let Some(dst) = buf.get_mut(*filled..*filled + chunk.len()) else {
                c.overflow = true;
                return S3Status::AbortedByCallback;
            };
            dst.copy_from_slice(chunk);
            *filled += chunk.len();
        }
    }
    S3Status::OK
}

unsafe extern "C" fn on_service(
    _owner: *const c_char,
    _display: *const c_char,
    bucket: *const c_char,
    created: i64,
    data: *mut c_void,
) -> S3Status {
    // SAFETY: our callback data and a NUL-terminated name.
    unsafe { call(data).names.push((text(bucket), created)) };
    S3Status::OK
}

unsafe extern "C" fn on_list(
    truncated: c_int,
    next: *const c_char,
    count: c_int,
    contents: *const S3ListBucketContent,
    nprefixes: c_int,
    prefixes: *const *const c_char,
    data: *mut c_void,
) -> S3Status {
    // SAFETY: our callback data; the arrays hold the counts given, their
    // strings NUL-terminated. libs3 may call this more than once a page.
    unsafe {
        let c = call(data);
        c.truncated = truncated != 0;
        c.next = opt_text(next);
        for i in 0..count.max(0) as usize {
            let o = &*contents.add(i);
            c.objects
                .push((text(o.key), o.size, o.last_modified, text(o.e_tag)));
        }
        for i in 0..nprefixes.max(0) as usize {
            c.prefixes.push(text(*prefixes.add(i)));
        }
    }
    S3Status::OK
}

unsafe extern "C" fn on_initiated(upload_id: *const c_char, data: *mut c_void) -> S3Status {
    // SAFETY: our callback data and a NUL-terminated id.
    unsafe { call(data).reply = Some(text(upload_id)) };
    S3Status::OK
}

unsafe extern "C" fn on_commit(
    _location: *const c_char,
    etag: *const c_char,
    data: *mut c_void,
) -> S3Status {
    // SAFETY: our callback data and a NUL-terminated ETag.
    unsafe { call(data).reply = opt_text(etag) };
    S3Status::OK
}

unsafe extern "C" fn on_parts(
    truncated: c_int,
    next: *const c_char,
    _initiator_id: *const c_char,
    _initiator_name: *const c_char,
    _owner_id: *const c_char,
    _owner_name: *const c_char,
    _storage_class: *const c_char,
    count: c_int,
    _last: c_int,
    parts: *const S3ListPart,
    data: *mut c_void,
) -> S3Status {
    // SAFETY: our callback data; `parts` holds `count` entries.
    unsafe {
        let c = call(data);
        c.truncated = truncated != 0;
        c.next = opt_text(next);
        for i in 0..count.max(0) as usize {
            let p = &*parts.add(i);
            c.parts
                .push((p.part_number, p.size, p.last_modified, text(p.e_tag)));
        }
    }
    S3Status::OK
}

unsafe extern "C" fn on_uploads(
    truncated: c_int,
    next_key: *const c_char,
    next_id: *const c_char,
    count: c_int,
    uploads: *const S3ListMultipartUpload,
    _nprefixes: c_int,
    _prefixes: *const *const c_char,
    data: *mut c_void,
) -> S3Status {
    // SAFETY: our callback data; `uploads` holds `count` entries.
    unsafe {
        let c = call(data);
        c.truncated = truncated != 0;
        c.next = opt_text(next_key);
        c.next2 = opt_text(next_id);
        for i in 0..count.max(0) as usize {
            let u = &*uploads.add(i);
            // (key, upload id) as (name, initiated) pairs with the id in
            // `objects`' ETag slot.
            c.objects
                .push((text(u.key), 0, u.initiated, text(u.upload_id)));
        }
    }
    S3Status::OK
}

const RESPONSE: ResponseHandler<Abi4> = ResponseHandler {
    properties_callback: Some(on_properties),
    complete_callback: Some(on_complete),
};

pub const RESPONSE_HANDLER: S3ResponseHandler = RESPONSE;
pub const SERVICE_HANDLER: S3ListServiceHandler = S3ListServiceHandler {
    response_handler: RESPONSE,
    list_service_callback: Some(on_service),
};
pub const LIST_HANDLER: S3ListBucketHandler = S3ListBucketHandler {
    response_handler: RESPONSE,
    list_bucket_callback: Some(on_list),
};
pub const PUT_HANDLER: S3PutObjectHandler = S3PutObjectHandler {
    response_handler: RESPONSE,
    put_object_data_callback: Some(on_put),
};
pub const GET_HANDLER: S3GetObjectHandler = S3GetObjectHandler {
    response_handler: RESPONSE,
    get_object_data_callback: Some(on_get),
};
pub const INITIAL_HANDLER: S3MultipartInitialHandler = S3MultipartInitialHandler {
    response_handler: RESPONSE,
    response_xml_callback: Some(on_initiated),
};
pub const COMMIT_HANDLER: S3MultipartCommitHandler = S3MultipartCommitHandler {
    response_handler: RESPONSE,
    put_object_data_callback: Some(on_put),
    response_xml_callback: Some(on_commit),
};
pub const PARTS_HANDLER: S3ListPartsHandler = S3ListPartsHandler {
    response_handler: RESPONSE,
    response_xml_callback: Some(on_parts),
};
pub const UPLOADS_HANDLER: S3ListMultipartUploadsHandler = S3ListMultipartUploadsHandler {
    response_handler: RESPONSE,
    response_xml_callback: Some(on_uploads),
};

thread_local! {
    /// An abort's status: libs3 gives its callbacks no data pointer.
    pub static ABORT_STATUS: std::cell::Cell<Option<(S3Status, String)>> =
        const { std::cell::Cell::new(None) };
}

unsafe extern "C" fn on_abort_complete(s: S3Status, d: *const S3ErrorDetails, _: *mut c_void) {
    // SAFETY: NULL or valid details.
    let message = unsafe { d.as_ref() }.map_or(String::new(), |d| unsafe { text(d.message) });
    ABORT_STATUS.with(|a| a.set(Some((s, message))));
}

pub const ABORT_HANDLER: S3AbortMultipartUploadHandler = S3AbortMultipartUploadHandler {
    response_handler: ResponseHandler {
        properties_callback: None,
        complete_callback: Some(on_abort_complete),
    },
};
