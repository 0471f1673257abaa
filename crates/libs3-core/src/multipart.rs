//! Multipart uploads as libs3 4.x exposes them: initiate, upload a part
//! (data pulled like a put), complete (the caller streams the
//! CompleteMultipartUpload XML document), abort, list parts, list uploads.
//! Listing markers and limits are applied here over the client's full
//! lists.
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

use crate::cabi::{has_response, *};
use crate::calls::{c_array, context_client, destination, on_object, pull_reader, written};
use crate::request::{
    callback_status, cstring, opt_str, put_options, req_ref, run, send_properties, unix_seconds,
    ContextArgs,
};
use crate::Failure;
use s3hpc_client::{ErrorCode, PutBody, S3Error};
use std::ffi::{c_char, c_int, c_void};
use std::io::Read;

#[repr(C)]
pub struct S3ListMultipartUpload {
    pub key: *const c_char,
    pub upload_id: *const c_char,
    pub initiator_id: *const c_char,
    pub initiator_display_name: *const c_char,
    pub owner_id: *const c_char,
    pub owner_display_name: *const c_char,
    pub storage_class: *const c_char,
    pub initiated: i64,
}

#[repr(C)]
pub struct S3ListPart {
    pub e_tag: *const c_char,
    pub last_modified: i64,
    pub part_number: u64,
    pub size: u64,
}

pub type InitialCallback<A> =
    Option<unsafe extern "C" fn(*const c_char, *mut c_void) -> <A as Abi>::Status>;
pub type CommitCallback<A> =
    Option<unsafe extern "C" fn(*const c_char, *const c_char, *mut c_void) -> <A as Abi>::Status>;
pub type ListUploadsCallback<A> = Option<
    unsafe extern "C" fn(
        c_int,
        *const c_char,
        *const c_char,
        c_int,
        *const S3ListMultipartUpload,
        c_int,
        *const *const c_char,
        *mut c_void,
    ) -> <A as Abi>::Status,
>;
pub type ListPartsCallback<A> = Option<
    unsafe extern "C" fn(
        c_int,
        *const c_char,
        *const c_char,
        *const c_char,
        *const c_char,
        *const c_char,
        *const c_char,
        c_int,
        c_int,
        *const S3ListPart,
        *mut c_void,
    ) -> <A as Abi>::Status,
>;

#[repr(C)]
pub struct MultipartInitialHandler<A: Abi> {
    pub response_handler: ResponseHandler<A>,
    pub response_xml_callback: InitialCallback<A>,
}

#[repr(C)]
pub struct MultipartCommitHandler<A: Abi> {
    pub response_handler: ResponseHandler<A>,
    pub put_object_data_callback: S3PutObjectDataCallback,
    pub response_xml_callback: CommitCallback<A>,
}

#[repr(C)]
pub struct ListMultipartUploadsHandler<A: Abi> {
    pub response_handler: ResponseHandler<A>,
    pub response_xml_callback: ListUploadsCallback<A>,
}

#[repr(C)]
pub struct ListPartsHandler<A: Abi> {
    pub response_handler: ResponseHandler<A>,
    pub response_xml_callback: ListPartsCallback<A>,
}

#[repr(C)]
pub struct AbortMultipartUploadHandler<A: Abi> {
    pub response_handler: ResponseHandler<A>,
}

has_response!(
    MultipartInitialHandler,
    MultipartCommitHandler,
    ListMultipartUploadsHandler,
    ListPartsHandler,
    AbortMultipartUploadHandler
);

pub unsafe fn initiate<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    put_properties: *const PutProperties,
    handler: *const MultipartInitialHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: the pointers are as libs3's header describes them.
    unsafe {
        let response = response_of(handler);
        on_object(response, data, ctx, key, |client, bucket, key| {
            let opts = put_options(put_properties)?.unwrap_or_default();
            let id = client.create_multipart_upload(bucket, key, &opts)?;
            send_properties(response, data, None, 0)?;
            match handler.as_ref().and_then(|h| h.response_xml_callback) {
                Some(cb) => callback_status::<A>(cb(cstring(&id).as_ptr(), data)),
                None => Ok(()),
            }
        })
    }
}

pub unsafe fn upload_part<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    handler: *const PutObjectHandler<A>,
    part_number: c_int,
    upload_id: *const c_char,
    content_length: c_int,
    data: *mut c_void,
) {
    // SAFETY: the pointers are as libs3's header describes them.
    unsafe {
        let response = response_of(handler);
        on_object(response, data, ctx, key, |client, bucket, key| {
            let upload_id = req_ref(upload_id, "upload_id")?;
            let part = u32::try_from(part_number).map_err(|_| Failure::BadArgument("seq"))?;
            let len =
                u64::try_from(content_length).map_err(|_| Failure::BadArgument("contentLength"))?;
            let pull = handler.as_ref().and_then(|h| h.put_object_data_callback);
            let mut reader = pull_reader(pull, len, data);
            let body = PutBody::Stream {
                reader: &mut reader,
                len: Some(len),
            };
            let put = client.upload_part(bucket, key, upload_id, part, body);
            if reader.aborted {
                return Err(Failure::Aborted);
            }
            let info = written(len, put?);
            send_properties(response, data, Some(&info), 0)
        })
    }
}

pub unsafe fn complete<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    handler: *const MultipartCommitHandler<A>,
    upload_id: *const c_char,
    content_length: c_int,
    data: *mut c_void,
) {
    // SAFETY: the pointers are as libs3's header describes them.
    unsafe {
        let response = response_of(handler);
        on_object(response, data, ctx, key, |client, bucket, key| {
            let upload_id = req_ref(upload_id, "upload_id")?;
            let len =
                u64::try_from(content_length).map_err(|_| Failure::BadArgument("contentLength"))?;
            let pull = handler.as_ref().and_then(|h| h.put_object_data_callback);
            let mut reader = pull_reader(pull, len, data);
            let mut doc = String::new();
            let read = reader.read_to_string(&mut doc);
            if reader.aborted {
                return Err(Failure::Aborted);
            }
            read.map_err(|e| malformed(&format!("the completion document: {e}")))?;
            let parts = parse_completion(&doc)?;
            let info = client.complete_multipart_upload(bucket, key, upload_id, &parts)?;
            send_properties(response, data, Some(&info), 0)?;
            match handler.as_ref().and_then(|h| h.response_xml_callback) {
                Some(cb) => {
                    let location = cstring(&format!("/{bucket}/{key}"));
                    let etag = cstring(&info.etag);
                    callback_status::<A>(cb(location.as_ptr(), etag.as_ptr(), data))
                }
                None => Ok(()),
            }
        })
    }
}

fn malformed(what: &str) -> Failure {
    Failure::S3(S3Error::new(
        ErrorCode::InvalidArgument,
        format!("malformed {what}"),
    ))
}

/// `(part number, ETag)` of each `<Part>` in a CompleteMultipartUpload
/// document, in document order.
pub fn parse_completion(doc: &str) -> Result<Vec<(u32, String)>, Failure> {
    use s3hpc_client::http::xml;
    let doc: xml::CompleteMultipartUpload =
        xml::read(doc).map_err(|e| malformed(&format!("completion document: {e}")))?;
    if doc.parts.is_empty() {
        return Err(malformed("completion document: no <Part>"));
    }
    Ok(doc
        .parts
        .into_iter()
        .map(|p| (p.part_number, p.etag.trim().to_string()))
        .collect())
}

pub unsafe fn abort<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    upload_id: *const c_char,
    handler: *const AbortMultipartUploadHandler<A>,
) {
    // libs3 passes no callback data to an abort's callbacks.
    let data = std::ptr::null_mut();
    // SAFETY: the pointers are as libs3's header describes them.
    unsafe {
        let response = response_of(handler);
        on_object(response, data, ctx, key, |client, bucket, key| {
            client.abort_multipart_upload(bucket, key, req_ref(upload_id, "uploadId")?)?;
            send_properties(response, data, None, 0)
        })
    }
}

pub unsafe fn list_parts<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    part_number_marker: *const c_char,
    upload_id: *const c_char,
    max_parts: c_int,
    handler: *const ListPartsHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: the pointers are as libs3's header describes them.
    unsafe {
        let response = response_of(handler);
        on_object(response, data, ctx, key, |client, bucket, key| {
            let marker = match opt_str(part_number_marker, "partnumbermarker")?.as_deref() {
                None | Some("") => 0,
                Some(m) => m
                    .parse::<u32>()
                    .map_err(|_| Failure::BadArgument("partnumbermarker (a number)"))?,
            };
            let all = client.list_parts(bucket, key, req_ref(upload_id, "uploadid")?)?;
            let after: Vec<_> = all.iter().filter(|p| p.part_number > marker).collect();
            let (page, truncated) = limit(&after, max_parts);
            send_properties(response, data, None, 0)?;
            let Some(cb) = handler.as_ref().and_then(|h| h.response_xml_callback) else {
                return Ok(());
            };
            let etags: Vec<_> = page.iter().map(|p| cstring(&p.etag)).collect();
            let parts: Vec<S3ListPart> = page
                .iter()
                .zip(&etags)
                .map(|(p, e)| S3ListPart {
                    e_tag: e.as_ptr(),
                    last_modified: unix_seconds(p.last_modified),
                    part_number: p.part_number as u64,
                    size: p.size,
                })
                .collect();
            let last = page.last().map_or(0, |p| p.part_number);
            let next = truncated.then(|| cstring(&last.to_string()));
            callback_status::<A>(cb(
                truncated as c_int,
                next.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null(),
                c"STANDARD".as_ptr(),
                parts.len() as c_int,
                last as c_int,
                c_array(&parts),
                data,
            ))
        })
    }
}

/// The first `max` items (all when `max` <= 0) and whether more remain.
fn limit<T>(items: &[T], max: c_int) -> (&[T], bool) {
    match usize::try_from(max) {
        Ok(m) if m > 0 && m < items.len() => (&items[..m], true),
        _ => (items, false),
    }
}

/// The arguments of a multipart-uploads listing, still as C strings.
#[derive(Clone, Copy)]
pub struct UploadsQuery {
    pub prefix: *const c_char,
    pub key_marker: *const c_char,
    pub upload_id_marker: *const c_char,
    pub delimiter: *const c_char,
    pub max_uploads: c_int,
}

pub unsafe fn list_uploads<A: Abi>(
    ctx: ContextArgs,
    q: UploadsQuery,
    handler: *const ListMultipartUploadsHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: the pointers are as libs3's header describes them.
    unsafe {
        let response = response_of(handler);
        run(
            response,
            data,
            || ctx.resource(std::ptr::null()),
            || {
                let (client, bucket) = context_client(&ctx)?;
                let prefix = opt_str(q.prefix, "prefix")?.unwrap_or_default();
                let key_marker = opt_str(q.key_marker, "keymarker")?.unwrap_or_default();
                let id_marker = opt_str(q.upload_id_marker, "uploadidmarker")?.unwrap_or_default();
                let delimiter = opt_str(q.delimiter, "delimiter")?.filter(|d| !d.is_empty());
                let mut all = client.list_multipart_uploads(bucket, &prefix)?;
                all.sort_by(|a, b| (&a.key, &a.upload_id).cmp(&(&b.key, &b.upload_id)));
                // S3: past the key marker, or at it and past the upload marker.
                let after = |u: &&s3hpc_client::UploadInfo| {
                    key_marker.is_empty()
                        || u.key > key_marker
                        || (u.key == key_marker && !id_marker.is_empty() && u.upload_id > id_marker)
                };
                let mut uploads = Vec::new();
                let mut prefixes: Vec<String> = Vec::new();
                for u in all.iter().filter(after) {
                    let rolled = delimiter.as_deref().and_then(|d| {
                        let rest = &u.key[prefix.len().min(u.key.len())..];
                        rest.find(d)
                            .map(|i| u.key[..prefix.len() + i + d.len()].to_string())
                    });
                    match rolled {
                        Some(p) if prefixes.last() == Some(&p) => {}
                        Some(p) => prefixes.push(p),
                        None => uploads.push(u),
                    }
                }
                let (page, truncated) = limit(&uploads, q.max_uploads);
                send_properties(response, data, None, 0)?;
                let Some(cb) = handler.as_ref().and_then(|h| h.response_xml_callback) else {
                    return Ok(());
                };
                let strings: Vec<_> = page
                    .iter()
                    .map(|u| (cstring(&u.key), cstring(&u.upload_id)))
                    .collect();
                let entries: Vec<S3ListMultipartUpload> = page
                    .iter()
                    .zip(&strings)
                    .map(|(u, (k, id))| S3ListMultipartUpload {
                        key: k.as_ptr(),
                        upload_id: id.as_ptr(),
                        initiator_id: std::ptr::null(),
                        initiator_display_name: std::ptr::null(),
                        owner_id: std::ptr::null(),
                        owner_display_name: std::ptr::null(),
                        storage_class: c"STANDARD".as_ptr(),
                        initiated: unix_seconds(u.initiated),
                    })
                    .collect();
                let cps: Vec<_> = prefixes.iter().map(|p| cstring(p)).collect();
                let cp_ptrs: Vec<*const c_char> = cps.iter().map(|p| p.as_ptr()).collect();
                let (next_key, next_id) = match (truncated, strings.last()) {
                    (true, Some((k, id))) => (k.as_ptr(), id.as_ptr()),
                    _ => (std::ptr::null(), std::ptr::null()),
                };
                callback_status::<A>(cb(
                    truncated as c_int,
                    next_key,
                    next_id,
                    entries.len() as c_int,
                    c_array(&entries),
                    cp_ptrs.len() as c_int,
                    c_array(&cp_ptrs),
                    data,
                ))
            },
        )
    }
}

/// Which part a ranged copy writes, and which source bytes.
#[derive(Clone, Copy)]
pub struct PartCopy {
    pub part_number: c_int,
    pub upload_id: *const c_char,
    pub start: u64,
    pub count: u64,
}

/// Copies `count` bytes of `bucket/key` from `start` into a part of an
/// upload of `destination_bucket/destination_key` (S3's UploadPartCopy).
pub unsafe fn copy_range<A: Abi>(
    ctx: ContextArgs,
    key: *const c_char,
    destination_bucket: *const c_char,
    destination_key: *const c_char,
    part: PartCopy,
    out: crate::calls::CopyReturn,
    handler: *const ResponseHandler<A>,
    data: *mut c_void,
) {
    // SAFETY: the pointers are as libs3's header describes them.
    unsafe {
        on_object(handler, data, ctx, key, |client, bucket, key| {
            let (dst_bucket, dst_key) =
                destination(bucket, key, destination_bucket, destination_key)?;
            let number =
                u32::try_from(part.part_number).map_err(|_| Failure::BadArgument("partNo"))?;
            let upload_id = req_ref(part.upload_id, "uploadId")?;
            if part.count == 0 {
                return Err(Failure::BadArgument("count (at least one byte)"));
            }
            let range = s3hpc_client::ByteRange::FromTo {
                first: part.start,
                last: Some(part.start.saturating_add(part.count - 1)),
            };
            let mut src = client.get_object(bucket, key, Some(range))?;
            let body = PutBody::Stream {
                reader: &mut src.body,
                len: Some(src.length),
            };
            let etag = client.upload_part(&dst_bucket, &dst_key, upload_id, number, body)?;
            let info = written(src.length, etag);
            if !out.last_modified.is_null() {
                *out.last_modified = unix_seconds(info.last_modified);
            }
            crate::calls::copy_to_buffer(&info.etag, out.e_tag, out.e_tag_size);
            send_properties(handler, data, Some(&info), 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::parse_completion;

    #[test]
    fn completion_documents() {
        let doc = "<?xml version=\"1.0\"?>\n<CompleteMultipartUpload>\
            <Part><PartNumber>1</PartNumber><ETag>\"a1\"</ETag></Part>\
            <Part><ETag>b2</ETag><PartNumber> 2 </PartNumber></Part>\
            </CompleteMultipartUpload>";
        let parts = parse_completion(doc).unwrap();
        assert_eq!(
            parts,
            vec![(1, "\"a1\"".to_string()), (2, "b2".to_string())]
        );
        for bad in [
            "",
            "<CompleteMultipartUpload/>",
            "<Part><PartNumber>x</PartNumber><ETag>e</ETag></Part>",
            "<Part><PartNumber>1</PartNumber></Part>",
            "<Part><PartNumber>1</PartNumber><ETag>e</ETag>",
        ] {
            assert!(parse_completion(bad).is_err(), "{bad:?}");
        }
    }
}
