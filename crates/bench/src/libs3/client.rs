//! `S3Client` over the library's functions: each method one (or, for
//! listings that page and for results libs3 does not return, a few)
//! synchronous libs3 requests.

use super::call::*;
use super::*;
use s3hpc_client::{Request, Response};

/// `etag` quoted, as S3 sends it (libs3 hands over what the server sent).
fn quoted(etag: String) -> String {
    if etag.starts_with('"') || etag.is_empty() {
        etag
    } else {
        format!("\"{etag}\"")
    }
}

/// A put body as the data callback's source, and its length. libs3 needs
/// the length up front: a stream without one is read into `buffered`.
fn source<'a, 'b: 'a>(
    body: PutBody<'b>,
    buffered: &'a mut Vec<u8>,
    key: &str,
) -> Result<(Source<'a>, u64)> {
    Ok(match body {
        PutBody::Bytes(b) => (Source::Slice(b), b.len() as u64),
        PutBody::Stream {
            reader,
            len: Some(n),
        } => (Source::Reader(reader), n),
        PutBody::Stream { reader, len: None } => {
            reader
                .read_to_end(buffered)
                .map_err(|e| S3Error::from_io(&e, key))?;
            (Source::Slice(buffered), buffered.len() as u64)
        }
    })
}

/// The bucket-level calls, which share their arguments.
#[derive(Clone, Copy)]
enum BucketOp {
    Create,
    Delete,
    Test,
}

impl BucketOp {
    fn name(self) -> &'static str {
        match self {
            BucketOp::Create => "create",
            BucketOp::Delete => "delete",
            BucketOp::Test => "test",
        }
    }
}

impl Libs3Client {
    /// Runs a bucket-level call.
    fn bucket_call(&self, bucket: &str, op: BucketOp) -> Result<()> {
        let b = bucket_arg(bucket)?;
        let mut call = Call::new(Source::None);
        let (a, p, h, k, s) = (
            self.api(),
            self.protocol,
            self.host.as_ptr(),
            self.access.as_ptr(),
            self.secret.as_ptr(),
        );
        let (r, none, data) = (self.region.as_ptr(), std::ptr::null(), call.data());
        let ctx = std::ptr::null_mut();
        // SAFETY: valid strings and handler; `call` outlives the request.
        unsafe {
            match op {
                BucketOp::Create => (a.S3_create_bucket)(
                    p,
                    k,
                    s,
                    none,
                    h,
                    b.as_ptr(),
                    r,
                    0,
                    none,
                    ctx,
                    NO_TIMEOUT,
                    &RESPONSE_HANDLER,
                    data,
                ),
                BucketOp::Delete => (a.S3_delete_bucket)(
                    p,
                    S3_URI_STYLE_PATH,
                    k,
                    s,
                    none,
                    h,
                    b.as_ptr(),
                    r,
                    ctx,
                    NO_TIMEOUT,
                    &RESPONSE_HANDLER,
                    data,
                ),
                BucketOp::Test => (a.S3_test_bucket)(
                    p,
                    S3_URI_STYLE_PATH,
                    k,
                    s,
                    none,
                    h,
                    b.as_ptr(),
                    r,
                    0,
                    std::ptr::null_mut(),
                    ctx,
                    NO_TIMEOUT,
                    &RESPONSE_HANDLER,
                    data,
                ),
            }
        }
        self.finish(
            &mut call,
            || format!("{} bucket {bucket}", op.name()),
            false,
        )
    }

    /// One page of a listing.
    fn list_page(&self, bucket: &str, req: &ListRequest, max: c_int) -> Result<Call<'static>> {
        let b = bucket_arg(bucket)?;
        let ctx = self.context(&b);
        let prefix = arg(&req.prefix)?;
        // A continuation supersedes start-after (as in ListObjectsV2).
        let marker = req.continuation_token.as_ref().or(req.start_after.as_ref());
        let marker = marker.map(|m| arg(m)).transpose()?;
        let delimiter = req.delimiter.as_deref().map(arg).transpose()?;
        let mut call = Call::new(Source::None);
        // SAFETY: valid context, strings and handler; `call` outlives it.
        unsafe {
            (self.api().S3_list_bucket)(
                &ctx,
                prefix.as_ptr(),
                marker.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()),
                delimiter.as_ref().map_or(std::ptr::null(), |d| d.as_ptr()),
                max,
                std::ptr::null_mut(),
                NO_TIMEOUT,
                &LIST_HANDLER,
                call.data(),
            )
        };
        self.finish(&mut call, || format!("list {bucket}"), false)?;
        Ok(call)
    }
}

impl Libs3Client {
    /// One GET of `count` bytes from `start` (0: to the end) into `call`'s
    /// sink.
    fn get(&self, bucket: &str, key: &str, start: u64, count: u64, call: &mut Call) -> Result<()> {
        let (b, k) = object_args(bucket, key)?;
        let ctx = self.context(&b);
        // SAFETY: valid context, strings and handler; `call` outlives it.
        unsafe {
            (self.api().S3_get_object)(
                &ctx,
                k.as_ptr(),
                std::ptr::null(),
                start,
                count,
                std::ptr::null_mut(),
                NO_TIMEOUT,
                &GET_HANDLER,
                call.data(),
            )
        };
        self.finish(call, || format!("get {bucket}/{key}"), true)
    }
}

impl S3Client for Libs3Client {
    fn transport(&self) -> &'static str {
        "libs3"
    }

    /// What libs3 has no call for (tags, GET by part) is NotImplemented,
    /// and a condition it cannot carry is refused rather than dropped.
    fn call(&self, req: Request<'_>) -> Result<Response> {
        let refuse = |cond| s3hpc_client::refuse_condition(self.transport(), cond);
        let not_carried = |what| Err(s3hpc_client::not_carried(self.transport(), what));
        match req {
            Request::CreateBucket { bucket } => {
                s3hpc_client::owned_is_created(self.s3_create_bucket(bucket)).map(Response::done)
            }
            Request::DeleteBucket { bucket } => self.s3_delete_bucket(bucket).map(Response::done),
            Request::HeadBucket { bucket } => self.s3_head_bucket(bucket).map(Response::done),
            Request::ListBuckets => self.s3_list_buckets().map(Response::Buckets),
            Request::PutObject(r) => self
                .s3_put_object(r.bucket, r.key, r.body, r.opts)
                .map(Response::ETag),
            Request::GetObject { bucket, key, range } => {
                self.s3_get_object(bucket, key, range).map(Response::Object)
            }
            Request::GetObjectPart(_) => not_carried("GET with partNumber"),
            Request::HeadObject { bucket, key } => {
                self.s3_head_object(bucket, key).map(Response::Info)
            }
            Request::DeleteObject(r) => {
                if !r.condition.is_none() {
                    return not_carried("delete conditions");
                }
                self.s3_delete_object(r.bucket, r.key).map(Response::done)
            }
            Request::ListObjects { bucket, list } => {
                self.s3_list_objects(bucket, list).map(Response::List)
            }
            Request::CopyObject(r) => {
                refuse(r.condition)?;
                self.s3_copy_object(r.src_bucket, r.src_key, r.dst_bucket, r.dst_key, r.opts)
                    .map(Response::Info)
            }
            Request::GetObjectTagging { .. }
            | Request::PutObjectTagging { .. }
            | Request::DeleteObjectTagging { .. } => not_carried("object tagging"),
            Request::CreateMultipartUpload { bucket, key, opts } => self
                .s3_create_multipart_upload(bucket, key, opts)
                .map(Response::UploadId),
            Request::UploadPart(r) => self
                .s3_upload_part(r.bucket, r.key, r.upload_id, r.part_number, r.body)
                .map(Response::ETag),
            Request::CompleteMultipartUpload(r) => {
                refuse(r.condition)?;
                self.s3_complete_multipart_upload(r.bucket, r.key, r.upload_id, r.parts)
                    .map(Response::Info)
            }
            Request::AbortMultipartUpload(u) => self
                .s3_abort_multipart_upload(u.bucket, u.key, u.upload_id)
                .map(Response::done),
            Request::ListParts(u) => self
                .s3_list_parts(u.bucket, u.key, u.upload_id)
                .map(Response::Parts),
            // libs3 has no call that carries a version.
            Request::PutBucketVersioning { .. }
            | Request::GetBucketVersioning { .. }
            | Request::ListObjectVersions { .. }
            | Request::GetObjectVersion { .. }
            | Request::HeadObjectVersion(_)
            | Request::DeleteObjectVersion(_) => {
                Err(s3hpc_client::op::no_versions(self.transport()))
            }
            Request::ListMultipartUploads { bucket, prefix } => self
                .s3_list_multipart_uploads(bucket, prefix)
                .map(Response::Uploads),
        }
    }
    fn get_object_into(&self, bucket: &str, key: &str, buf: &mut [u8]) -> Result<ObjectInfo> {
        let want = buf.len();
        let mut call = Call::with_sink(Source::None, Sink::Slice { buf, filled: 0 });
        let got = self.get(bucket, key, 0, 0, &mut call);
        let filled = match call.sink {
            Sink::Slice { filled, .. } => filled,
            Sink::Vec(_) | Sink::None => 0,
        };
        if call.overflow || (got.is_ok() && filled != want) {
            return Err(S3Error::new(
                ErrorCode::IncompleteBody,
                format!(
                    "object {bucket}/{key} has {} bytes, expected {want}",
                    if call.overflow {
                        "more".to_string()
                    } else {
                        filled.to_string()
                    }
                ),
            ));
        }
        got?;
        Ok(info(key, &mut call, want as u64))
    }
}

/// The operations, one libs3 call each (or a few, for pages), for
/// [`S3Client::call`].
impl Libs3Client {
    fn s3_create_bucket(&self, bucket: &str) -> Result<()> {
        s3hpc_client::owned_is_created(self.bucket_call(bucket, BucketOp::Create))
    }

    fn s3_delete_bucket(&self, bucket: &str) -> Result<()> {
        self.bucket_call(bucket, BucketOp::Delete)
    }

    fn s3_head_bucket(&self, bucket: &str) -> Result<()> {
        self.bucket_call(bucket, BucketOp::Test)
    }

    fn s3_list_buckets(&self) -> Result<Vec<BucketInfo>> {
        let mut call = Call::new(Source::None);
        // SAFETY: valid strings and handler; `call` outlives the request.
        unsafe {
            (self.api().S3_list_service)(
                self.protocol,
                self.access.as_ptr(),
                self.secret.as_ptr(),
                std::ptr::null(),
                self.host.as_ptr(),
                self.region.as_ptr(),
                std::ptr::null_mut(),
                NO_TIMEOUT,
                &SERVICE_HANDLER,
                call.data(),
            )
        };
        self.finish(&mut call, || "list buckets".into(), false)?;
        Ok(call
            .names
            .into_iter()
            .map(|(name, created)| BucketInfo {
                name,
                created: system_time(created),
                owner: None,
            })
            .collect())
    }

    fn s3_put_object(
        &self,
        bucket: &str,
        key: &str,
        body: PutBody<'_>,
        opts: &PutOptions,
    ) -> Result<String> {
        let mut buffered = Vec::new();
        let (source, len) = source(body, &mut buffered, key)?;
        let (b, k) = object_args(bucket, key)?;
        let ctx = self.context(&b);
        let (mut keep, mut meta) = (Vec::new(), Vec::new());
        let props = put_properties(opts, &mut keep, &mut meta)?;
        let mut call = Call::new(source);
        // SAFETY: valid context, strings, properties and handler; `call`
        // (and the source it borrows) outlives the request.
        unsafe {
            (self.api().S3_put_object)(
                &ctx,
                k.as_ptr(),
                len,
                &props,
                std::ptr::null_mut(),
                NO_TIMEOUT,
                &PUT_HANDLER,
                call.data(),
            )
        };
        self.finish(&mut call, || format!("put {bucket}/{key}"), true)?;
        Ok(quoted(call.props.map(|p| p.e_tag).unwrap_or_default()))
    }

    fn s3_get_object(
        &self,
        bucket: &str,
        key: &str,
        range: Option<ByteRange>,
    ) -> Result<GetObject> {
        let (start, count) = match range {
            None => (0, 0),
            Some(ByteRange::FromTo { first, last: None }) => (first, 0),
            Some(ByteRange::FromTo {
                first,
                last: Some(last),
            }) if last >= first => (first, last - first + 1),
            Some(ByteRange::Suffix(n)) if n > 0 => {
                let size = self.s3_head_object(bucket, key)?.size;
                (size.saturating_sub(n), n.min(size))
            }
            Some(r) => {
                return Err(S3Error::new(
                    ErrorCode::InvalidRange,
                    format!("{bucket}/{key}: range {r:?}"),
                ))
            }
        };
        let mut call = Call::with_sink(Source::None, Sink::Vec(Vec::new()));
        self.get(bucket, key, start, count, &mut call)?;
        let Sink::Vec(data) = std::mem::replace(&mut call.sink, Sink::None) else {
            unreachable!("a Vec sink was given")
        };
        let length = data.len() as u64;
        // libs3 reports the bytes of this response, not the object's size:
        // for a range that is all that is known.
        Ok(GetObject {
            info: info(key, &mut call, length),
            offset: start,
            length,
            body: Box::new(Buffered(std::io::Cursor::new(data))),
        })
    }

    fn s3_head_object(&self, bucket: &str, key: &str) -> Result<ObjectInfo> {
        let (b, k) = object_args(bucket, key)?;
        let ctx = self.context(&b);
        let mut call = Call::new(Source::None);
        // SAFETY: valid context, strings and handler; `call` outlives it.
        unsafe {
            (self.api().S3_head_object)(
                &ctx,
                k.as_ptr(),
                std::ptr::null_mut(),
                NO_TIMEOUT,
                &RESPONSE_HANDLER,
                call.data(),
            )
        };
        self.finish(&mut call, || format!("head {bucket}/{key}"), true)?;
        let size = call.props.as_ref().map_or(0, |p| p.content_length);
        let mut info = info(key, &mut call, size);
        info.etag = quoted(info.etag);
        Ok(info)
    }

    fn s3_delete_object(&self, bucket: &str, key: &str) -> Result<()> {
        let (b, k) = object_args(bucket, key)?;
        let ctx = self.context(&b);
        let mut call = Call::new(Source::None);
        // SAFETY: valid context, strings and handler; `call` outlives it.
        unsafe {
            (self.api().S3_delete_object)(
                &ctx,
                k.as_ptr(),
                std::ptr::null_mut(),
                NO_TIMEOUT,
                &RESPONSE_HANDLER,
                call.data(),
            )
        };
        self.finish(&mut call, || format!("delete {bucket}/{key}"), true)
    }

    fn s3_list_objects(&self, bucket: &str, req: &ListRequest) -> Result<ListPage> {
        let max = match req.max_keys {
            0 => 1000,
            n => n.min(1000),
        };
        let call = self.list_page(bucket, req, max as c_int)?;
        let objects: Vec<ObjectInfo> = call
            .objects
            .into_iter()
            .map(|(key, size, mtime, etag)| {
                ObjectInfo::new(key, size, system_time(mtime), quoted(etag))
            })
            .collect();
        // The v1 marker to continue from: libs3's nextMarker, else (S3
        // sends none without a delimiter) the last key or prefix.
        let next_token = call.truncated.then(|| {
            call.next.clone().unwrap_or_else(|| {
                let last_key = objects.last().map(|o| o.key.as_str());
                let last_prefix = call.prefixes.last().map(|p| p.as_str());
                last_key.max(last_prefix).unwrap_or_default().to_string()
            })
        });
        Ok(ListPage {
            objects,
            common_prefixes: call.prefixes,
            is_truncated: call.truncated,
            next_token,
        })
    }

    fn s3_copy_object(
        &self,
        src_bucket: &str,
        src_key: &str,
        dst_bucket: &str,
        dst_key: &str,
        opts: Option<&PutOptions>,
    ) -> Result<ObjectInfo> {
        let (b, k) = object_args(src_bucket, src_key)?;
        let (db, dk) = object_args(dst_bucket, dst_key)?;
        let ctx = self.context(&b);
        let (mut keep, mut meta) = (Vec::new(), Vec::new());
        let props = opts
            .map(|o| put_properties(o, &mut keep, &mut meta))
            .transpose()?;
        let mut call = Call::new(Source::None);
        let mut etag = [0 as c_char; 256];
        let mut mtime = -1i64;
        // SAFETY: valid context, strings, buffers and handler; `call`
        // outlives the request.
        unsafe {
            (self.api().S3_copy_object)(
                &ctx,
                k.as_ptr(),
                db.as_ptr(),
                dk.as_ptr(),
                props.as_ref().map_or(std::ptr::null(), |p| p as *const _),
                &mut mtime,
                etag.len() as c_int,
                etag.as_mut_ptr(),
                std::ptr::null_mut(),
                NO_TIMEOUT,
                &RESPONSE_HANDLER,
                call.data(),
            )
        };
        let what = || format!("copy {src_bucket}/{src_key} to {dst_bucket}/{dst_key}");
        self.finish(&mut call, what, true)?;
        // libs3 returns the ETag and time only: the rest from a HEAD.
        self.s3_head_object(dst_bucket, dst_key)
    }

    fn s3_create_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        opts: &PutOptions,
    ) -> Result<String> {
        let (b, k) = object_args(bucket, key)?;
        let ctx = self.context(&b);
        let (mut keep, mut meta) = (Vec::new(), Vec::new());
        let props = put_properties(opts, &mut keep, &mut meta)?;
        let mut call = Call::new(Source::None);
        // SAFETY: valid context, strings, properties and handler.
        unsafe {
            (self.api().S3_initiate_multipart)(
                &ctx,
                k.as_ptr(),
                &props,
                &INITIAL_HANDLER,
                std::ptr::null_mut(),
                NO_TIMEOUT,
                call.data(),
            )
        };
        self.finish(&mut call, || format!("initiate {bucket}/{key}"), true)?;
        call.reply.ok_or_else(|| {
            S3Error::new(
                ErrorCode::InternalError,
                format!("initiate {bucket}/{key}: no upload id"),
            )
        })
    }

    fn s3_upload_part(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        part_number: u32,
        body: PutBody<'_>,
    ) -> Result<String> {
        let what = format!("upload part {part_number} of {bucket}/{key}");
        let too_large = || S3Error::new(ErrorCode::EntityTooLarge, format!("{what}: over 2 GiB"));
        let mut buffered = Vec::new();
        let (source, len) = source(body, &mut buffered, key)?;
        let len = c_int::try_from(len).map_err(|_| too_large())?;
        let number = c_int::try_from(part_number).map_err(|_| too_large())?;
        let ((b, k), id) = (object_args(bucket, key)?, arg(upload_id)?);
        let ctx = self.context(&b);
        let mut call = Call::new(source);
        // SAFETY: valid context, strings and handler; `call` outlives it.
        unsafe {
            (self.api().S3_upload_part)(
                &ctx,
                k.as_ptr(),
                std::ptr::null(),
                &PUT_HANDLER,
                number,
                id.as_ptr(),
                len,
                std::ptr::null_mut(),
                NO_TIMEOUT,
                call.data(),
            )
        };
        self.finish(&mut call, || what, true)?;
        Ok(quoted(call.props.map(|p| p.e_tag).unwrap_or_default()))
    }

    fn s3_complete_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
    ) -> Result<ObjectInfo> {
        let doc = s3hpc_client::http::complete_multipart_document(parts);
        let ((b, k), id) = (object_args(bucket, key)?, arg(upload_id)?);
        let ctx = self.context(&b);
        let mut call = Call::new(Source::Slice(doc.as_bytes()));
        // SAFETY: valid context, strings and handler; `call` outlives it.
        unsafe {
            (self.api().S3_complete_multipart_upload)(
                &ctx,
                k.as_ptr(),
                &COMMIT_HANDLER,
                id.as_ptr(),
                doc.len() as c_int,
                std::ptr::null_mut(),
                NO_TIMEOUT,
                call.data(),
            )
        };
        self.finish(&mut call, || format!("complete {bucket}/{key}"), true)?;
        self.s3_head_object(bucket, key)
    }

    fn s3_abort_multipart_upload(&self, bucket: &str, key: &str, upload_id: &str) -> Result<()> {
        let ((b, k), id) = (object_args(bucket, key)?, arg(upload_id)?);
        let ctx = self.context(&b);
        ABORT_STATUS.with(|a| a.set(None));
        // SAFETY: valid context, strings and handler.
        unsafe {
            (self.api().S3_abort_multipart_upload)(
                &ctx,
                k.as_ptr(),
                id.as_ptr(),
                NO_TIMEOUT,
                &ABORT_HANDLER,
            )
        };
        // libs3 4.1 never reports an abort's outcome to the caller: no
        // report counts as done.
        match ABORT_STATUS.with(|a| a.take()) {
            Some((s, message)) if s != S3Status::OK => Err(status::error(
                self.api(),
                s,
                &message,
                &format!("abort {bucket}/{key}"),
                true,
            )),
            _ => Ok(()),
        }
    }

    fn s3_list_parts(&self, bucket: &str, key: &str, upload_id: &str) -> Result<Vec<PartInfo>> {
        let ((b, k), id) = (object_args(bucket, key)?, arg(upload_id)?);
        let ctx = self.context(&b);
        let mut out = Vec::new();
        let mut marker: Option<CArg> = None;
        loop {
            let mut call = Call::new(Source::None);
            // SAFETY: valid context, strings and handler.
            unsafe {
                (self.api().S3_list_parts)(
                    &ctx,
                    k.as_ptr(),
                    marker.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()),
                    id.as_ptr(),
                    std::ptr::null(),
                    1000,
                    std::ptr::null_mut(),
                    NO_TIMEOUT,
                    &PARTS_HANDLER,
                    call.data(),
                )
            };
            self.finish(&mut call, || format!("list parts of {bucket}/{key}"), true)?;
            out.extend(
                call.parts
                    .into_iter()
                    .map(|(n, size, mtime, etag)| PartInfo {
                        part_number: n as u32,
                        size,
                        etag: quoted(etag),
                        last_modified: system_time(mtime),
                        checksum: None,
                    }),
            );
            match (call.truncated, call.next) {
                (true, Some(next)) => marker = Some(arg(&next)?),
                _ => return Ok(out),
            }
        }
    }

    fn s3_list_multipart_uploads(&self, bucket: &str, prefix: &str) -> Result<Vec<UploadInfo>> {
        let b = bucket_arg(bucket)?;
        let ctx = self.context(&b);
        let p = arg(prefix)?;
        let mut out = Vec::new();
        let (mut key_marker, mut id_marker): (Option<CArg>, Option<CArg>) = (None, None);
        loop {
            let mut call = Call::new(Source::None);
            let ptr = |m: &Option<CArg>| m.as_ref().map_or(std::ptr::null(), |m| m.as_ptr());
            // SAFETY: valid context, strings and handler.
            unsafe {
                (self.api().S3_list_multipart_uploads)(
                    &ctx,
                    p.as_ptr(),
                    ptr(&key_marker),
                    ptr(&id_marker),
                    std::ptr::null(),
                    std::ptr::null(),
                    1000,
                    std::ptr::null_mut(),
                    NO_TIMEOUT,
                    &UPLOADS_HANDLER,
                    call.data(),
                )
            };
            self.finish(&mut call, || format!("list uploads of {bucket}"), false)?;
            out.extend(
                call.objects
                    .into_iter()
                    .map(|(key, _, initiated, upload_id)| UploadInfo {
                        key,
                        upload_id,
                        initiated: system_time(initiated),
                        owner: None,
                    }),
            );
            match (call.truncated, call.next, call.next2) {
                (true, Some(k), id) => {
                    key_marker = Some(arg(&k)?);
                    id_marker = id.map(|i| arg(&i)).transpose()?;
                }
                _ => return Ok(out),
            }
        }
    }
}
