//! Service and bucket calls: list service, test/create/delete bucket, list
//! bucket.

use super::convert::{
    callback_status, context, cstring, req_str, run, send_properties, target, unix_seconds,
};
use super::types::*;
use crate::core::client_for;
use s3hpc_client::ListRequest;
use std::ffi::{c_char, c_int, c_void, CStr};

/// A C string for an error's resource field, whatever it holds.
unsafe fn lossy(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: NUL-terminated, per the header.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[no_mangle]
pub unsafe extern "C" fn S3_list_service(
    protocol: S3Protocol,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    host_name: *const c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ListServiceHandler,
    data: *mut c_void,
) {
    // SAFETY: NULL or valid, per the header.
    let h = unsafe { handler.as_ref() };
    let response = h.map_or(std::ptr::null(), |h| &h.response_handler as *const _);
    // SAFETY: pointers as the header documents them.
    unsafe {
        run(response, data, "/", || {
            let client = service_client(protocol, access_key_id, secret_access_key, host_name)?;
            let buckets = client.list_buckets()?;
            send_properties(response, data, None, 0)?;
            let Some(cb) = h.and_then(|h| h.list_service_callback) else {
                return Ok(());
            };
            for b in buckets {
                let name = cstring(&b.name);
                callback_status(cb(
                    c"".as_ptr(),
                    c"".as_ptr(),
                    name.as_ptr(),
                    unix_seconds(b.created),
                    data,
                ))?;
            }
            Ok(())
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn S3_test_bucket(
    protocol: S3Protocol,
    _uri_style: S3UriStyle,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    host_name: *const c_char,
    bucket_name: *const c_char,
    location_size: c_int,
    location_return: *mut c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        run(handler, data, &lossy(bucket_name), || {
            let client = service_client(protocol, access_key_id, secret_access_key, host_name)?;
            client.head_bucket(&req_str(bucket_name, "bucketName")?)?;
            // No locations here: an empty constraint, as for US Standard.
            if location_size > 0 && !location_return.is_null() {
                *location_return = 0;
            }
            send_properties(handler, data, None, 0)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn S3_create_bucket(
    protocol: S3Protocol,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    host_name: *const c_char,
    bucket_name: *const c_char,
    _canned_acl: S3CannedAcl,
    _location_constraint: *const c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        run(handler, data, &lossy(bucket_name), || {
            let client = service_client(protocol, access_key_id, secret_access_key, host_name)?;
            client.create_bucket(&req_str(bucket_name, "bucketName")?)?;
            send_properties(handler, data, None, 0)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn S3_delete_bucket(
    protocol: S3Protocol,
    _uri_style: S3UriStyle,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    host_name: *const c_char,
    bucket_name: *const c_char,
    _ctx: *mut S3RequestContext,
    handler: *const S3ResponseHandler,
    data: *mut c_void,
) {
    // SAFETY: pointers as the header documents them.
    unsafe {
        run(handler, data, &lossy(bucket_name), || {
            let client = service_client(protocol, access_key_id, secret_access_key, host_name)?;
            client.delete_bucket(&req_str(bucket_name, "bucketName")?)?;
            send_properties(handler, data, None, 0)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn S3_list_bucket(
    bucket_context: *const S3BucketContext,
    prefix: *const c_char,
    marker: *const c_char,
    delimiter: *const c_char,
    maxkeys: c_int,
    _ctx: *mut S3RequestContext,
    handler: *const S3ListBucketHandler,
    data: *mut c_void,
) {
    // SAFETY: NULL or valid, per the header.
    let h = unsafe { handler.as_ref() };
    let response = h.map_or(std::ptr::null(), |h| &h.response_handler as *const _);
    // SAFETY: NULL or a valid context whose name is NUL-terminated.
    let resource = unsafe { bucket_context.as_ref() }
        .map_or(String::new(), |c| unsafe { lossy(c.bucket_name) });
    // SAFETY: pointers as the header documents them.
    unsafe {
        run(response, data, &resource, || {
            let (target, bucket) = context(bucket_context)?;
            let client = client_for(&target)?;
            let req = ListRequest {
                prefix: super::convert::opt_str(prefix, "prefix")?.unwrap_or_default(),
                delimiter: super::convert::opt_str(delimiter, "delimiter")?
                    .filter(|d| !d.is_empty()),
                start_after: super::convert::opt_str(marker, "marker")?.filter(|m| !m.is_empty()),
                continuation_token: None,
                max_keys: maxkeys.max(0) as usize,
            };
            let page = client.list_objects(&bucket, &req)?;
            send_properties(response, data, None, 0)?;
            let Some(cb) = h.and_then(|h| h.list_bucket_callback) else {
                return Ok(());
            };
            let keys: Vec<_> = page
                .objects
                .iter()
                .map(|o| (cstring(&o.key), cstring(&o.etag)))
                .collect();
            let contents: Vec<S3ListBucketContent> = page
                .objects
                .iter()
                .zip(&keys)
                .map(|(o, (k, e))| S3ListBucketContent {
                    key: k.as_ptr(),
                    last_modified: unix_seconds(o.last_modified),
                    e_tag: e.as_ptr(),
                    size: o.size,
                    owner_id: std::ptr::null(),
                    owner_display_name: std::ptr::null(),
                })
                .collect();
            let prefixes: Vec<_> = page.common_prefixes.iter().map(|p| cstring(p)).collect();
            let prefix_ptrs: Vec<*const c_char> = prefixes.iter().map(|p| p.as_ptr()).collect();
            // The v1 marker to continue from: the last key or common prefix
            // this page returned, whichever sorts later.
            let next = page.is_truncated.then(|| {
                let last_key = page.objects.last().map(|o| o.key.as_str());
                let last_prefix = page.common_prefixes.last().map(|p| p.as_str());
                cstring(last_key.max(last_prefix).unwrap_or_default())
            });
            callback_status(cb(
                page.is_truncated as c_int,
                next.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
                contents.len() as c_int,
                if contents.is_empty() {
                    std::ptr::null()
                } else {
                    contents.as_ptr()
                },
                prefix_ptrs.len() as c_int,
                if prefix_ptrs.is_empty() {
                    std::ptr::null()
                } else {
                    prefix_ptrs.as_ptr()
                },
                data,
            ))
        })
    }
}

/// The client for a service-level call (no bucket context): the host and
/// keys the call names.
///
/// # Safety
/// The strings are NULL or NUL-terminated, as the header documents.
unsafe fn service_client(
    protocol: S3Protocol,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    host_name: *const c_char,
) -> Result<std::sync::Arc<dyn s3hpc_client::S3Client>, crate::core::Failure> {
    // SAFETY: forwarded contract.
    let t = unsafe { target(protocol, access_key_id, secret_access_key, host_name) }?;
    client_for(&t)
}
