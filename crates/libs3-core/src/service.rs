//! Library setup, bucket-name validation, request contexts and presigned
//! URLs: the calls that are not requests, for either ABI.
#![allow(clippy::missing_safety_doc)]

use crate::cabi::{Abi, S3RequestContext};
use crate::request::opt_str;
use crate::{forget_clients, guarded, set_default_host, BucketNameProblem, Failure};
use std::ffi::{c_char, c_int, CStr};

/// `S3_initialize`: remembers the default host.
pub unsafe fn initialize<A: Abi>(default_host: *const c_char) -> A::Status {
    // SAFETY: NULL or NUL-terminated, per the header.
    match unsafe { opt_str(default_host, "defaultS3HostName") } {
        Ok(host) => {
            set_default_host(host);
            A::OK
        }
        Err(f) => A::status(&f),
    }
}

/// `S3_deinitialize`: drops the clients (closing files and connections)
/// and the default host.
pub fn deinitialize() {
    // Never unwind into C.
    let _ = std::panic::catch_unwind(|| {
        forget_clients();
        set_default_host(None);
    });
}

/// `S3_validate_bucket_name` on a C string.
pub unsafe fn validate<A: Abi>(name: *const c_char, virtual_host: bool) -> A::Status {
    if name.is_null() {
        return A::status(&Failure::BucketName(BucketNameProblem::TooShort));
    }
    // SAFETY: NUL-terminated, per the header.
    let name = unsafe { CStr::from_ptr(name) }.to_bytes();
    match validate_bucket_name(name, virtual_host) {
        Ok(()) => A::OK,
        Err(p) => A::status(&Failure::BucketName(p)),
    }
}

/// libs3's rules: 3..=255 bytes of `[A-Za-z0-9._-]` for path style; DNS
/// rules (3..=63, lower case, no `..`, `.-`, `-.`) for virtual-host style.
pub fn validate_bucket_name(name: &[u8], virtual_host: bool) -> Result<(), BucketNameProblem> {
    let max = if virtual_host { 63 } else { 255 };
    if name.len() < 3 {
        return Err(BucketNameProblem::TooShort);
    }
    if name.len() > max {
        return Err(BucketNameProblem::TooLong);
    }
    let first_ok = |c: u8| {
        c.is_ascii_digit() || c.is_ascii_lowercase() || !virtual_host && c.is_ascii_uppercase()
    };
    if !first_ok(name[0]) {
        return Err(BucketNameProblem::FirstCharacter);
    }
    for (i, &c) in name.iter().enumerate() {
        if !(first_ok(c) || c == b'.' || c == b'-' || !virtual_host && c == b'_') {
            return Err(BucketNameProblem::Character);
        }
        if virtual_host && i > 0 {
            let pair = [name[i - 1], c];
            if matches!(&pair, b".." | b".-" | b"-.") {
                return Err(BucketNameProblem::CharacterSequence);
            }
        }
    }
    let dots = name.iter().filter(|&&c| c == b'.').count();
    if dots == 3 && name.iter().all(|c| c.is_ascii_digit() || *c == b'.') {
        return Err(BucketNameProblem::DotQuadNotation);
    }
    Ok(())
}

/// `S3_create_request_context`.
pub unsafe fn create_context<A: Abi>(ret: *mut *mut S3RequestContext) -> A::Status {
    if ret.is_null() {
        // libs3 has no argument status here; it reports an internal error.
        return A::status(&Failure::Internal("requestContextReturn is NULL".into()));
    }
    let ctx = Box::into_raw(Box::new(S3RequestContext::new()));
    // SAFETY: `ret` is a valid out pointer, per the header.
    unsafe { *ret = ctx };
    A::OK
}

/// `S3_destroy_request_context`.
pub unsafe fn destroy_context(ctx: *mut S3RequestContext) {
    if !ctx.is_null() {
        // SAFETY: made by create_context, destroyed once.
        drop(unsafe { Box::from_raw(ctx) });
    }
}

/// `S3_runonce_request_context`: requests ran when they were issued, so
/// none remain.
pub unsafe fn run_once<A: Abi>(remaining: *mut c_int) -> A::Status {
    if !remaining.is_null() {
        // SAFETY: a valid out pointer when not NULL.
        unsafe { *remaining = 0 };
    }
    A::OK
}

/// `S3_get_request_context_fdsets`: no sockets wait in a context, so the
/// sets stay as they are and `maxFd` is -1.
pub unsafe fn fdsets<A: Abi>(max_fd: *mut c_int) -> A::Status {
    if !max_fd.is_null() {
        // SAFETY: a valid out pointer when not NULL.
        unsafe { *max_fd = -1 };
    }
    A::OK
}

/// libs3's buffer size for a presigned URL,
/// `S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE` (the same in both ABIs).
pub const S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE: usize =
    10 + 255 + 1024 * 3 + 17 + 32 + 10 + 32 + 12 + 28 + 1;

/// Writes the URL `make` produces into the caller's buffer of
/// [`S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE`] bytes (empty on failure).
pub unsafe fn query_string<A: Abi>(
    buffer: *mut c_char,
    make: impl FnOnce() -> Result<String, Failure>,
) -> A::Status {
    if buffer.is_null() {
        return A::status(&Failure::Internal("buffer is NULL".into()));
    }
    // SAFETY: the header requires a buffer of the documented size.
    unsafe { *buffer = 0 };
    match guarded(make) {
        Ok(url) if url.len() < S3_MAX_AUTHENTICATED_QUERY_STRING_SIZE => {
            // SAFETY: shorter than the buffer, NUL included.
            unsafe {
                std::ptr::copy_nonoverlapping(url.as_ptr().cast(), buffer, url.len());
                *buffer.add(url.len()) = 0;
            }
            A::OK
        }
        Ok(_) => A::status(&Failure::UriTooLong),
        Err(f) => A::status(&f),
    }
}

/// Exports the calls whose C signature and code are the same in every
/// ABI (setup, status helpers, bucket-name validation, request contexts),
/// for the ABI `$abi`. The invoking module must have that ABI's
/// `S3Status`, `S3UriStyle`, `S3_URI_STYLE_VIRTUAL_HOST` and
/// `S3RequestContext` in scope.
#[macro_export]
macro_rules! shared_service_exports {
    ($abi:ty) => {
        #[no_mangle]
        pub unsafe extern "C" fn S3_initialize(
            _user_agent_info: *const ::std::ffi::c_char,
            _flags: ::std::ffi::c_int,
            default_s3_host_name: *const ::std::ffi::c_char,
        ) -> S3Status {
            // SAFETY: NULL or a NUL-terminated string, per the header.
            unsafe { $crate::service::initialize::<$abi>(default_s3_host_name) }
        }

        #[no_mangle]
        pub extern "C" fn S3_deinitialize() {
            $crate::service::deinitialize()
        }

        #[no_mangle]
        pub extern "C" fn S3_get_status_name(status: S3Status) -> *const ::std::ffi::c_char {
            status.name_ptr()
        }

        #[no_mangle]
        pub extern "C" fn S3_status_is_retryable(status: S3Status) -> ::std::ffi::c_int {
            status.is_retryable() as ::std::ffi::c_int
        }

        #[no_mangle]
        pub unsafe extern "C" fn S3_validate_bucket_name(
            bucket_name: *const ::std::ffi::c_char,
            uri_style: S3UriStyle,
        ) -> S3Status {
            // SAFETY: NULL or a NUL-terminated string, per the header.
            unsafe {
                $crate::service::validate::<$abi>(
                    bucket_name,
                    uri_style == S3_URI_STYLE_VIRTUAL_HOST,
                )
            }
        }

        #[no_mangle]
        pub unsafe extern "C" fn S3_create_request_context(
            ret: *mut *mut S3RequestContext,
        ) -> S3Status {
            // SAFETY: a valid out pointer or NULL, per the header.
            unsafe { $crate::service::create_context::<$abi>(ret) }
        }

        #[no_mangle]
        pub unsafe extern "C" fn S3_destroy_request_context(ctx: *mut S3RequestContext) {
            // SAFETY: made by S3_create_request_context, per the header.
            unsafe { $crate::service::destroy_context(ctx) }
        }

        /// Requests ran when they were issued: nothing is left to run.
        #[no_mangle]
        pub extern "C" fn S3_runall_request_context(_ctx: *mut S3RequestContext) -> S3Status {
            S3Status::OK
        }

        #[no_mangle]
        pub unsafe extern "C" fn S3_runonce_request_context(
            _ctx: *mut S3RequestContext,
            remaining: *mut ::std::ffi::c_int,
        ) -> S3Status {
            // SAFETY: a valid out pointer or NULL.
            unsafe { $crate::service::run_once::<$abi>(remaining) }
        }

        #[no_mangle]
        pub unsafe extern "C" fn S3_get_request_context_fdsets(
            _ctx: *mut S3RequestContext,
            _read: *mut ::std::ffi::c_void,
            _write: *mut ::std::ffi::c_void,
            _except: *mut ::std::ffi::c_void,
            max_fd: *mut ::std::ffi::c_int,
        ) -> S3Status {
            // SAFETY: a valid out pointer or NULL.
            unsafe { $crate::service::fdsets::<$abi>(max_fd) }
        }

        #[no_mangle]
        pub extern "C" fn S3_get_request_context_timeout(_ctx: *mut S3RequestContext) -> i64 {
            0
        }
    };
}
