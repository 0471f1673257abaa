//! The functions of a libs3 4.x library, looked up once by dlopen
//! (libloading: the maintained wrapper of dlopen/dlsym, which keeps the
//! library loaded as long as the pointers are used).

use libloading::Library;
use s3hpc_libs3_core::cabi::{S3CannedAcl, S3Protocol, S3RequestContext, S3UriStyle};
use s3hpc_libs3_core::v4::*;
use std::ffi::{c_char, c_int, c_void};
use std::path::Path;

type Ctx = *mut S3RequestContext;
type Str = *const c_char;
type Data = *mut c_void;

/// Declares the table of function pointers and its loader: one field per
/// C function, with its signature from the 4.x header.
macro_rules! api {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        #[allow(non_snake_case)]
        pub struct Api {
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            /// Last: dropped after the table, so no pointer outlives it.
            _lib: Library,
        }

        impl Api {
            /// Loads `path` and looks up every function.
            pub fn load(path: &Path) -> Result<Api, String> {
                // SAFETY: loading runs the library's initialisers; the
                // caller names a libs3 4.x library, whose initialisers are
                // plain C.
                let lib = unsafe { Library::new(path) }
                    .map_err(|e| format!("loading {}: {e}", path.display()))?;
                // SAFETY: each symbol is a function with the signature the
                // 4.x header declares for that name.
                unsafe {
                    Ok(Api {
                        $($name: *lib
                            .get(concat!(stringify!($name), "\0").as_bytes())
                            .map_err(|e| format!(
                                "{} is not a libs3 4.x library: {e}", path.display()))?,)*
                        _lib: lib,
                    })
                }
            }
        }
    };
}

api! {
    S3_initialize: fn(Str, c_int, Str) -> S3Status;
    S3_deinitialize: fn();
    S3_get_status_name: fn(S3Status) -> Str;
    S3_list_service: fn(S3Protocol, Str, Str, Str, Str, Str, Ctx, c_int,
        *const S3ListServiceHandler, Data);
    S3_test_bucket: fn(S3Protocol, S3UriStyle, Str, Str, Str, Str, Str, Str, c_int,
        *mut c_char, Ctx, c_int, *const S3ResponseHandler, Data);
    S3_create_bucket: fn(S3Protocol, Str, Str, Str, Str, Str, Str, S3CannedAcl, Str, Ctx,
        c_int, *const S3ResponseHandler, Data);
    S3_delete_bucket: fn(S3Protocol, S3UriStyle, Str, Str, Str, Str, Str, Str, Ctx, c_int,
        *const S3ResponseHandler, Data);
    S3_list_bucket: fn(*const S3BucketContext, Str, Str, Str, c_int, Ctx, c_int,
        *const S3ListBucketHandler, Data);
    S3_put_object: fn(*const S3BucketContext, Str, u64, *const S3PutProperties, Ctx, c_int,
        *const S3PutObjectHandler, Data);
    S3_get_object: fn(*const S3BucketContext, Str, *const S3GetConditions, u64, u64, Ctx,
        c_int, *const S3GetObjectHandler, Data);
    S3_head_object: fn(*const S3BucketContext, Str, Ctx, c_int, *const S3ResponseHandler,
        Data);
    S3_delete_object: fn(*const S3BucketContext, Str, Ctx, c_int, *const S3ResponseHandler,
        Data);
    S3_copy_object: fn(*const S3BucketContext, Str, Str, Str, *const S3PutProperties,
        *mut i64, c_int, *mut c_char, Ctx, c_int, *const S3ResponseHandler, Data);
    S3_initiate_multipart: fn(*const S3BucketContext, Str, *const S3PutProperties,
        *const S3MultipartInitialHandler, Ctx, c_int, Data);
    S3_upload_part: fn(*const S3BucketContext, Str, *const S3PutProperties,
        *const S3PutObjectHandler, c_int, Str, c_int, Ctx, c_int, Data);
    S3_complete_multipart_upload: fn(*const S3BucketContext, Str,
        *const S3MultipartCommitHandler, Str, c_int, Ctx, c_int, Data);
    S3_abort_multipart_upload: fn(*const S3BucketContext, Str, Str, c_int,
        *const S3AbortMultipartUploadHandler);
    S3_list_parts: fn(*const S3BucketContext, Str, Str, Str, Str, c_int, Ctx, c_int,
        *const S3ListPartsHandler, Data);
    S3_list_multipart_uploads: fn(*const S3BucketContext, Str, Str, Str, Str, Str, c_int, Ctx,
        c_int, *const S3ListMultipartUploadsHandler, Data);
}
