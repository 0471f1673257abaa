//! The `libs3` backend: an `S3Client` over any library with the libs3 4.x
//! ABI, loaded by dlopen. s3hpc's own `libs3.so.4` (which then maps the
//! calls onto its transports by host string) or the real libs3 4.1 (which
//! speaks HTTP to any S3 server). Every benchmark runs on it unchanged.
//!
//! Requests are synchronous (no request context): each call runs one
//! libs3 request to completion on the calling thread, as IOR's S3-libs3
//! backend does.

mod api;
mod call;
mod status;

use api::Api;
use call::Call;
use s3hpc_client::{
    BucketInfo, ByteRange, GetObject, ListPage, ListRequest, ObjectBody, ObjectInfo, PartInfo,
    PutBody, PutOptions, S3Client, UploadInfo,
};
use s3hpc_libs3_core::cabi::{self, S3NameValue};
use s3hpc_libs3_core::ctext::CText as CArg;
use s3hpc_libs3_core::v4::*;
use s3hpc_store::{ErrorCode, PermissionChange, Result, S3Error};
use std::ffi::{c_char, c_int, CString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::UNIX_EPOCH;

const S3_PROTOCOL_HTTP: S3Protocol = 1;
const S3_URI_STYLE_PATH: S3UriStyle = 1;
const S3_INIT_ALL: c_int = 1;
/// No timeout: a request may take as long as it takes.
const NO_TIMEOUT: c_int = 0;

/// A loaded, initialised library, shared by every client of that path;
/// deinitialised when the last one goes.
struct Loaded {
    api: Api,
    path: PathBuf,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        // SAFETY: initialised once in `load`; no request is running, since
        // every client holding this library is gone.
        unsafe { (self.api.S3_deinitialize)() };
    }
}

static LOADED: Mutex<Vec<Weak<Loaded>>> = Mutex::new(Vec::new());

/// The library at `path`, loaded and initialised once per process.
fn load(path: &Path, host: &CString) -> std::result::Result<Arc<Loaded>, String> {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.retain(|w| w.strong_count() > 0);
    if let Some(l) = loaded
        .iter()
        .filter_map(Weak::upgrade)
        .find(|l| l.path == path)
    {
        return Ok(l);
    }
    let api = Api::load(path)?;
    // SAFETY: valid NUL-terminated strings; called once for this load.
    let s = unsafe { (api.S3_initialize)(c"s3hpc-bench".as_ptr(), S3_INIT_ALL, host.as_ptr()) };
    if s != S3Status::OK {
        return Err(format!(
            "S3_initialize of {}: {}",
            path.display(),
            status::name(&api, s)
        ));
    }
    let l = Arc::new(Loaded {
        api,
        path: path.to_path_buf(),
    });
    loaded.push(Arc::downgrade(&l));
    Ok(l)
}

/// Who and where: the library, the host as libs3 takes it, the keys.
pub struct Libs3Client {
    lib: Arc<Loaded>,
    host: CString,
    protocol: S3Protocol,
    access: CString,
    secret: CString,
    region: CString,
}

/// Where a libs3 client sends its requests.
#[derive(Clone)]
pub struct Libs3Target {
    /// `file:///dir`, `unix:///path.sock`, `s3hpc://host:port` (s3hpc's
    /// library only), `http://host:port`, `https://host` or `host:port`.
    pub host: String,
    pub access_key: String,
    pub secret_key: String,
    pub region: String,
}

fn c(s: &str, what: &str) -> std::result::Result<CString, String> {
    CString::new(s).map_err(|_| format!("{what} contains a NUL byte"))
}

impl Libs3Client {
    /// Loads the library at `path` (once per process) for `target`.
    pub fn open(path: &Path, target: &Libs3Target) -> std::result::Result<Libs3Client, String> {
        // libs3 takes a bare host[:port] and a protocol; s3hpc's library
        // also takes its own schemes, passed as they are.
        let (protocol, host) = match target.host.split_once("://") {
            Some(("http", h)) => (S3_PROTOCOL_HTTP, h.trim_end_matches('/')),
            Some(("https", h)) => (cabi::S3_PROTOCOL_HTTPS, h.trim_end_matches('/')),
            _ => (S3_PROTOCOL_HTTP, target.host.as_str()),
        };
        let host = c(host, "the host")?;
        Ok(Libs3Client {
            lib: load(path, &host)?,
            host,
            protocol,
            access: c(&target.access_key, "the access key")?,
            secret: c(&target.secret_key, "the secret key")?,
            region: c(&target.region, "the region")?,
        })
    }

    fn api(&self) -> &Api {
        &self.lib.api
    }

    /// A bucket context for `bucket` (which must outlive it).
    fn context(&self, bucket: &CArg) -> S3BucketContext {
        S3BucketContext {
            base: cabi::BucketContext {
                host_name: self.host.as_ptr(),
                bucket_name: bucket.as_ptr(),
                protocol: self.protocol,
                uri_style: S3_URI_STYLE_PATH,
                access_key_id: self.access.as_ptr(),
                secret_access_key: self.secret.as_ptr(),
            },
            security_token: std::ptr::null(),
            auth_region: self.region.as_ptr(),
        }
    }

    /// The outcome of a finished request; `what` names it in errors.
    fn finish(&self, call: &mut Call, what: impl FnOnce() -> String, on_key: bool) -> Result<()> {
        if let Some(e) = call.source_error.take() {
            return Err(S3Error::from_io(&e, &what()));
        }
        match call.status {
            Some(S3Status::OK) => Ok(()),
            Some(s) => Err(status::error(self.api(), s, &call.message, &what(), on_key)),
            None => Err(S3Error::new(
                ErrorCode::InternalError,
                format!("{}: the library never completed the request", what()),
            )),
        }
    }
}

fn nul_error(s: &str) -> S3Error {
    S3Error::new(
        ErrorCode::InvalidArgument,
        format!("{s:?} contains a NUL byte"),
    )
}

/// A C string argument.
fn owned_arg(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| nul_error(s))
}

/// A C string argument, on the stack when short (as keys and bucket
/// names mostly are), so a request allocates nothing for it.
fn arg(s: &str) -> Result<CArg> {
    CArg::exact(s).ok_or_else(|| nul_error(s))
}

/// A bucket name as a C string; one holding a NUL, which no C string can
/// carry, is the invalid name it would be anywhere.
fn bucket_arg(bucket: &str) -> Result<CArg> {
    CArg::exact(bucket).ok_or_else(|| {
        S3Error::new(
            ErrorCode::InvalidBucketName,
            format!("bucket name {bucket:?} holds a NUL byte"),
        )
    })
}

/// A bucket and key as C strings (a key holding a NUL is an invalid key).
fn object_args(bucket: &str, key: &str) -> Result<(CArg, CArg)> {
    let k = CArg::exact(key).ok_or_else(|| {
        S3Error::new(
            ErrorCode::InvalidKey,
            format!("key {key:?} holds a NUL byte, which a key cannot"),
        )
    })?;
    Ok((bucket_arg(bucket)?, k))
}

/// Put properties carrying `opts` (the strings in `keep` must outlive them).
fn put_properties(
    opts: &PutOptions,
    keep: &mut Vec<CString>,
    meta: &mut Vec<S3NameValue>,
) -> Result<S3PutProperties> {
    // libs3's S3PutProperties has no field for either: refused rather than
    // dropped.
    s3hpc_client::refuse_condition("libs3", &opts.condition)?;
    if !opts.tags.is_empty() {
        return Err(s3hpc_client::not_carried("libs3", "object tags"));
    }
    let content_type = match &opts.content_type {
        Some(t) => {
            keep.push(owned_arg(t)?);
            keep[keep.len() - 1].as_ptr()
        }
        None => std::ptr::null(),
    };
    for (k, v) in &opts.metadata {
        keep.push(owned_arg(k)?);
        keep.push(owned_arg(v)?);
    }
    let base = keep.len() - 2 * opts.metadata.len();
    meta.extend(keep[base..].chunks(2).map(|kv| S3NameValue {
        name: kv[0].as_ptr(),
        value: kv[1].as_ptr(),
    }));
    Ok(S3PutProperties {
        base: cabi::PutProperties {
            content_type,
            md5: std::ptr::null(),
            cache_control: std::ptr::null(),
            content_disposition_filename: std::ptr::null(),
            content_encoding: std::ptr::null(),
            expires: -1,
            canned_acl: canned_acl(opts)?,
            meta_data_count: meta.len() as c_int,
            meta_data: if meta.is_empty() {
                std::ptr::null()
            } else {
                meta.as_ptr()
            },
        },
        use_server_side_encryption: 0,
    })
}

/// libs3's `S3CannedAcl` for the permissions asked (none: 0, which libs3
/// sends as no ACL); what no canned ACL says is refused, not dropped.
fn canned_acl(opts: &PutOptions) -> Result<c_int> {
    let Some(asked) = &opts.access else {
        return Ok(0);
    };
    // In S3CannedAcl's order, from 1.
    let names = [
        "public-read",
        "public-read-write",
        "authenticated-read",
        "bucket-owner-full-control",
    ];
    names
        .iter()
        .zip(1..)
        .find(|(n, _)| PermissionChange::canned(n, false).as_ref() == Some(asked))
        .map(|(_, i)| i)
        .ok_or_else(|| {
            s3hpc_client::not_carried("libs3", "permissions other than a canned ACL but private")
        })
}

/// A GET body the library already pushed into memory.
struct Buffered(std::io::Cursor<Vec<u8>>);

impl std::io::Read for Buffered {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl ObjectBody for Buffered {}

fn info(key: &str, call: &mut Call, size: u64) -> ObjectInfo {
    let p = call.props.take().unwrap_or_default();
    let modified = p.last_modified.unwrap_or(UNIX_EPOCH);
    ObjectInfo {
        content_type: p.content_type,
        metadata: p.metadata,
        ..ObjectInfo::new(key.to_string(), size, modified, p.e_tag)
    }
}

mod client;
