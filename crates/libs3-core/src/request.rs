//! Conversions between C arguments and the core, and the two callbacks
//! every request makes (properties, then complete), for either ABI.

use crate::cabi::*;
use crate::ctext::CText;
use crate::{guarded, Failure, Target, TargetRef};
use s3hpc_client::{ObjectInfo, PutOptions};
use std::ffi::{c_char, c_void, CStr, CString};
use std::time::UNIX_EPOCH;

/// A C string argument, borrowed: `None` for NULL, an error if not UTF-8.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that outlives `'a`.
pub unsafe fn opt_ref<'a>(
    p: *const c_char,
    what: &'static str,
) -> Result<Option<&'a str>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map(Some).map_err(|_| Failure::BadArgument(what))
}

/// A C string argument: `None` for NULL, an error if not UTF-8.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub unsafe fn opt_str(p: *const c_char, what: &'static str) -> Result<Option<String>, Failure> {
    // SAFETY: forwarded contract.
    Ok(unsafe { opt_ref(p, what) }?.map(str::to_string))
}

/// A C string argument that must be present, borrowed.
///
/// # Safety
/// As [`opt_ref`].
pub unsafe fn req_ref<'a>(p: *const c_char, what: &'static str) -> Result<&'a str, Failure> {
    // SAFETY: forwarded contract.
    unsafe { opt_ref(p, what) }?.ok_or(Failure::BadArgument(what))
}

/// A C string argument that must be present.
///
/// # Safety
/// As [`opt_str`].
pub unsafe fn req_str(p: *const c_char, what: &'static str) -> Result<String, Failure> {
    // SAFETY: forwarded contract.
    unsafe { opt_str(p, what) }?.ok_or(Failure::BadArgument(what))
}

/// A string for C; an interior NUL (never produced by a valid key) cuts it.
pub fn cstring(s: &str) -> CString {
    let end = s.find('\0').unwrap_or(s.len());
    CString::new(&s[..end]).unwrap_or_default()
}

/// The credentials and host strings of a call, still as C pointers (each
/// NULL or NUL-terminated).
#[derive(Clone, Copy)]
pub struct TargetArgs {
    pub protocol: S3Protocol,
    pub access_key_id: *const c_char,
    pub secret_access_key: *const c_char,
    pub security_token: *const c_char,
    pub host_name: *const c_char,
    pub auth_region: *const c_char,
}

impl TargetArgs {
    /// A 2.0 call's arguments (no token, no region).
    pub fn v2(
        protocol: S3Protocol,
        access_key_id: *const c_char,
        secret_access_key: *const c_char,
        host_name: *const c_char,
    ) -> TargetArgs {
        TargetArgs {
            protocol,
            access_key_id,
            secret_access_key,
            security_token: std::ptr::null(),
            host_name,
            auth_region: std::ptr::null(),
        }
    }

    /// The target these arguments name, borrowing the caller's strings.
    ///
    /// # Safety
    /// Each pointer is NULL or a NUL-terminated string that outlives `'a`.
    pub unsafe fn target_ref<'a>(&self) -> Result<TargetRef<'a>, Failure> {
        // SAFETY: forwarded contract.
        unsafe {
            Ok(TargetRef {
                host: opt_ref(self.host_name, "hostName")?,
                https: self.protocol == S3_PROTOCOL_HTTPS,
                access_key: opt_ref(self.access_key_id, "accessKeyId")?.unwrap_or_default(),
                secret_key: opt_ref(self.secret_access_key, "secretAccessKey")?.unwrap_or_default(),
                security_token: opt_ref(self.security_token, "securityToken")?
                    .filter(|t| !t.is_empty()),
                region: opt_ref(self.auth_region, "authRegion")?.filter(|r| !r.is_empty()),
            })
        }
    }

    /// The target these arguments name.
    ///
    /// # Safety
    /// Each pointer is NULL or a NUL-terminated string.
    pub unsafe fn target(&self) -> Result<Target, Failure> {
        // SAFETY: forwarded contract.
        Ok(unsafe { self.target_ref() }?.to_owned())
    }
}

/// A bucket context as both ABIs pass it: the 2.0 fields, and the 4.x
/// additions (NULL for 2.0).
#[derive(Clone, Copy)]
pub struct ContextArgs {
    pub base: *const BucketContext,
    pub security_token: *const c_char,
    pub auth_region: *const c_char,
}

impl ContextArgs {
    pub fn v2(base: *const BucketContext) -> ContextArgs {
        ContextArgs {
            base,
            security_token: std::ptr::null(),
            auth_region: std::ptr::null(),
        }
    }

    /// The target and bucket of the context, borrowing its strings.
    ///
    /// # Safety
    /// `base` is NULL or points to a valid context; the strings are NULL
    /// or NUL-terminated; all outlive `'a`.
    pub unsafe fn target_ref<'a>(&self) -> Result<(TargetRef<'a>, &'a str), Failure> {
        // SAFETY: the caller guarantees `base` is NULL or valid.
        let ctx = unsafe { self.base.as_ref() }.ok_or(Failure::BadArgument("bucketContext"))?;
        let args = TargetArgs {
            protocol: ctx.protocol,
            access_key_id: ctx.access_key_id,
            secret_access_key: ctx.secret_access_key,
            security_token: self.security_token,
            host_name: ctx.host_name,
            auth_region: self.auth_region,
        };
        // SAFETY: the context's strings are NULL or NUL-terminated.
        unsafe {
            let bucket = opt_ref(ctx.bucket_name, "bucketName")?;
            Ok((
                args.target_ref()?,
                bucket.ok_or(Failure::BadArgument("bucketName"))?,
            ))
        }
    }

    /// The target and bucket of the context.
    ///
    /// # Safety
    /// As [`ContextArgs::target_ref`].
    pub unsafe fn target(&self) -> Result<(Target, String), Failure> {
        // SAFETY: forwarded contract.
        let (t, b) = unsafe { self.target_ref() }?;
        Ok((t.to_owned(), b.to_string()))
    }

    /// Whether the context asks for virtual-host style URLs.
    ///
    /// # Safety
    /// As [`ContextArgs::target`].
    pub unsafe fn virtual_host(&self) -> bool {
        // SAFETY: forwarded contract.
        unsafe { self.base.as_ref() }.is_some_and(|c| c.uri_style == S3_URI_STYLE_VIRTUAL_HOST)
    }

    /// `bucket/key` for an error's resource field.
    ///
    /// # Safety
    /// As [`ContextArgs::target`]; `key` is NULL or NUL-terminated.
    pub unsafe fn resource(&self, key: *const c_char) -> String {
        // SAFETY: forwarded contract.
        unsafe {
            let bucket = self
                .base
                .as_ref()
                .map_or(String::new(), |c| lossy(c.bucket_name));
            if key.is_null() {
                bucket
            } else {
                format!("{bucket}/{}", lossy(key))
            }
        }
    }
}

/// A C string for an error's resource field, whatever it holds.
///
/// # Safety
/// `p` is NULL or NUL-terminated.
pub unsafe fn lossy(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: NUL-terminated, per the contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Put options from `S3PutProperties` (content type, metadata, the canned
/// ACL and the body's MD5, which the engine verifies and applies before the
/// object becomes visible; the other fields are HTTP response headers this
/// store does not keep).
///
/// # Safety
/// `p` is NULL or points to valid put properties.
pub unsafe fn put_options(p: *const PutProperties) -> Result<Option<PutOptions>, Failure> {
    // SAFETY: NULL or valid, per the contract.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return Ok(None);
    };
    let mut opts = PutOptions {
        // SAFETY: string fields are NULL or NUL-terminated.
        content_type: unsafe { opt_str(p.content_type, "contentType") }?,
        access: canned_acl(p.canned_acl)?,
        ..Default::default()
    };
    // SAFETY: as above.
    if let Some(md5) = unsafe { opt_str(p.md5, "md5") }? {
        use base64::Engine as _;
        let raw = base64::engine::general_purpose::STANDARD
            .decode(md5.trim())
            .ok()
            .and_then(|v| <[u8; 16]>::try_from(v).ok())
            .ok_or(Failure::S3(s3hpc_store::S3Error::new(
                s3hpc_store::ErrorCode::InvalidArgument,
                "md5 must be the base64 of a 16-byte MD5 digest",
            )))?;
        opts.content_md5 = Some(raw);
    }
    if p.meta_data_count > 0 && !p.meta_data.is_null() {
        // SAFETY: `meta_data` holds `meta_data_count` entries.
        let nv = unsafe { std::slice::from_raw_parts(p.meta_data, p.meta_data_count as usize) };
        for e in nv {
            // SAFETY: each entry's strings are NUL-terminated.
            let name = unsafe { req_str(e.name, "metaData name") }?;
            let value = unsafe { opt_str(e.value, "metaData value") }?.unwrap_or_default();
            opts.metadata.insert(name.to_ascii_lowercase(), value);
        }
    }
    Ok(Some(opts))
}

/// libs3's `S3CannedAcl` as the permissions it asks for. Private (0) is
/// what libs3 sends no header for: the object gets a new file's mode, as
/// from the real library against S3 (private there by default).
fn canned_acl(
    c: crate::cabi::S3CannedAcl,
) -> Result<Option<s3hpc_store::PermissionChange>, Failure> {
    let name = match c {
        0 => return Ok(None),
        1 => "public-read",
        2 => "public-read-write",
        3 => "authenticated-read",
        4 => "bucket-owner-full-control",
        other => {
            return Err(Failure::S3(s3hpc_store::S3Error::new(
                s3hpc_store::ErrorCode::InvalidArgument,
                format!("cannedAcl {other} is not an S3CannedAcl (0 to 4)"),
            )))
        }
    };
    Ok(s3hpc_store::PermissionChange::canned(name, false))
}

pub fn unix_seconds(t: std::time::SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

/// Calls the properties callback, if any, with what is known of the object
/// (`length`: the bytes this response carries). A non-OK answer stops the
/// request with that status, as in libs3.
///
/// # Safety
/// `handler` is NULL or valid; the callback honours its signature.
pub unsafe fn send_properties<A: Abi>(
    handler: *const ResponseHandler<A>,
    data: *mut c_void,
    info: Option<&ObjectInfo>,
    length: u64,
) -> Result<(), Failure> {
    // SAFETY: NULL or valid, per the contract.
    let Some(cb) = (unsafe { handler.as_ref() }).and_then(|h| h.properties_callback) else {
        return Ok(());
    };
    let server = c"s3hpc";
    let etag = info.map(|i| CText::cut(&i.etag));
    let ctype = info.and_then(|i| i.content_type.as_deref()).map(CText::cut);
    // No allocation without metadata (the common case).
    let meta: Vec<(CText, CText)> = info
        .map(|i| {
            i.metadata
                .iter()
                .map(|(k, v)| (CText::cut(k), CText::cut(v)))
                .collect()
        })
        .unwrap_or_default();
    let nv: Vec<S3NameValue> = meta
        .iter()
        .map(|(k, v)| S3NameValue {
            name: k.as_ptr(),
            value: v.as_ptr(),
        })
        .collect();
    let props = A::properties(ResponseProperties {
        request_id: std::ptr::null(),
        request_id2: std::ptr::null(),
        content_type: ctype.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        content_length: length,
        server: server.as_ptr(),
        e_tag: etag.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        last_modified: info.map_or(-1, |i| unix_seconds(i.last_modified)),
        meta_data_count: nv.len() as i32,
        meta_data: if nv.is_empty() {
            std::ptr::null()
        } else {
            nv.as_ptr()
        },
    });
    // SAFETY: `props` and everything it points to live across the call.
    let status = unsafe { cb(&props, data) };
    callback_status::<A>(status)
}

/// A callback's answer as a request outcome.
pub fn callback_status<A: Abi>(status: A::Status) -> Result<(), Failure> {
    if status == A::OK {
        Ok(())
    } else {
        Err(Failure::Callback(A::raw(status)))
    }
}

/// Runs one request (panics caught) and reports its outcome through the
/// complete callback, exactly once.
///
/// # Safety
/// `handler` is NULL or valid; the callback honours its signature.
pub unsafe fn run<A: Abi>(
    handler: *const ResponseHandler<A>,
    data: *mut c_void,
    resource: impl FnOnce() -> String,
    request: impl FnOnce() -> Result<(), Failure>,
) {
    let outcome = guarded(request);
    // SAFETY: NULL or valid, per the contract.
    let Some(cb) = (unsafe { handler.as_ref() }).and_then(|h| h.complete_callback) else {
        return;
    };
    match outcome {
        // SAFETY: NULL details are allowed on success.
        Ok(()) => unsafe { cb(A::OK, std::ptr::null(), data) },
        Err(f) => {
            let (message, resource) = keep_error_text(cstring(&f.message()), cstring(&resource()));
            let details = S3ErrorDetails {
                message,
                resource,
                further_details: std::ptr::null(),
                extra_details_count: 0,
                extra_details: std::ptr::null_mut(),
            };
            // SAFETY: `details` lives across the call, its strings longer.
            unsafe { cb(A::status(&f), &details, data) }
        }
    }
}

thread_local! {
    /// The text of this thread's last error details.
    static ERROR_TEXT: std::cell::RefCell<(CString, CString)> =
        std::cell::RefCell::new(Default::default());
}

/// Keeps an error's message and resource until this thread's next failed
/// request, and returns pointers to them: callers copy the details struct
/// in the callback and print its strings afterwards (IOR does), which
/// libs3's own strings survive too.
fn keep_error_text(message: CString, resource: CString) -> (*const c_char, *const c_char) {
    ERROR_TEXT.with_borrow_mut(|t| {
        *t = (message, resource);
        (t.0.as_ptr(), t.1.as_ptr())
    })
}
