//! The S3 operations over the engine. s3s has parsed, authenticated and
//! validated the request; each method maps it onto `Store` calls and the
//! result back. File-system calls run on the blocking side of tokio.

use crate::body::{self, BodyFault, ChannelReader, GetStream, Incoming, Md5Check};
use crate::convert::{self, s3_error};
use crate::error_header::KernelCopiesBodies;
use crate::gather::BufferPool;
use crate::write_gate::WriteGate;
use base64::Engine as _;
use s3hpc_store::{ListRequest, PutBody, Store};
use s3s::dto::*;
use s3s::stream::ByteStream as _;
use s3s::{s3_error, S3Request, S3Response, S3Result, S3};
use std::sync::Arc;

pub(crate) struct Engine {
    pub store: Arc<Store>,
    pub writes: WriteGate,
    pub buffers: BufferPool,
}

/// Runs a short file-system call (a stat, an unlink, an open, one chunk
/// of data) right here on the async worker. Any hand-off costs more than
/// the call: `block_in_place` moves the worker's scheduler to another thread
/// every time, which was a quarter of the server's CPU time per request
/// (futex wake-ups, context switches; docs/benchmarks.md). The price is
/// nginx's: a file system that stalls holds up this worker's other
/// connections meanwhile. Writes ([`WriteGate`]) leave the worker when the
/// file system is slow; long calls (streamed bodies, multipart assembly,
/// batch deletes) always do.
fn run<T>(f: impl FnOnce() -> s3hpc_store::Result<T>) -> S3Result<T> {
    f().map_err(s3_error)
}

fn max_keys(n: Option<i32>) -> S3Result<usize> {
    match n {
        None => Ok(1000),
        Some(n) if n < 0 => Err(s3_error!(InvalidArgument, "max-keys must not be negative")),
        Some(n) => Ok(n as usize),
    }
}

fn content_md5(b64: Option<&str>) -> S3Result<Option<Md5Check>> {
    let Some(b64) = b64 else { return Ok(None) };
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()
        .and_then(|v| <[u8; 16]>::try_from(v).ok())
        .ok_or_else(|| {
            s3_error!(
                InvalidDigest,
                "Content-MD5 must be the base64 of a 16-byte MD5 digest"
            )
        })?;
    Ok(Some(Md5Check::new(raw)))
}

/// Receives a PUT body and hands it to `write`: from memory when it fits in
/// one chunk or can be gathered (where `WriteGate` says), else on a
/// blocking thread through a bounded channel while the rest arrives. A body that fails midway (client
/// gone, wrong MD5) fails the write, so the engine keeps nothing of it.
async fn with_body<T, F>(
    engine: &Engine,
    body: Option<StreamingBlob>,
    md5: Option<Md5Check>,
    write: F,
) -> S3Result<T>
where
    T: Send + 'static,
    F: for<'a> FnOnce(PutBody<'a>) -> s3hpc_store::Result<T> + Send + 'static,
{
    let Some(body) = body else {
        return engine.write_whole(&[], md5, write);
    };
    let len = body.remaining_length().exact();
    let incoming = body::receive(body, len, &engine.buffers)
        .await
        .map_err(|e| body::stream_error(&e))?;
    match incoming {
        Incoming::Whole(bytes) => engine.write_whole(&bytes, md5, write),
        Incoming::Gathered(pooled) => engine.write_whole(&pooled.buf, md5, write),
        Incoming::Partial { head, rest } => {
            let (tx, rx) = body::channel();
            let fault = Arc::new(BodyFault::default());
            let mut reader = ChannelReader::new(head, rx, md5, fault.clone());
            let pump = tokio::spawn(body::pump(rest, tx));
            let written = tokio::task::spawn_blocking(move || {
                write(PutBody::Stream {
                    reader: &mut reader,
                    len: None,
                })
            })
            .await;
            pump.abort();
            match written {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(fault.take().unwrap_or_else(|| s3_error(e))),
                Err(e) => Err(s3s::S3Error::internal_error(e)),
            }
        }
    }
}

impl Engine {
    /// Checks the Content-MD5 of a body that is all in memory and writes it,
    /// where the write gate says.
    fn write_whole<T>(
        &self,
        bytes: &[u8],
        md5: Option<Md5Check>,
        write: impl FnOnce(PutBody<'_>) -> s3hpc_store::Result<T>,
    ) -> S3Result<T> {
        if let Some(mut m) = md5 {
            m.update(bytes);
            m.verify().map_err(s3_error)?;
        }
        self.writes
            .run(|| write(PutBody::Bytes(bytes)))
            .map_err(s3_error)
    }
}

fn object(info: s3hpc_store::ObjectInfo, encode: bool) -> Object {
    Object {
        key: Some(if encode {
            s3hpc_store::url_encode(&info.key)
        } else {
            info.key
        }),
        size: Some(info.size as i64),
        e_tag: Some(convert::etag(&info.etag)),
        last_modified: Some(convert::timestamp(info.last_modified)),
        storage_class: Some(ObjectStorageClass::from_static(
            ObjectStorageClass::STANDARD,
        )),
        ..Default::default()
    }
}

/// Keys and prefixes of a listing, encoded if the client asked for it.
struct Listed {
    contents: Vec<Object>,
    prefixes: Vec<CommonPrefix>,
    last_name: Option<String>,
}

fn listed(page: s3hpc_store::ListPage, encoding: Option<&EncodingType>) -> S3Result<Listed> {
    let encode = match encoding.map(|e| e.as_str()) {
        None => false,
        Some(EncodingType::URL) => true,
        Some(other) => {
            return Err(s3_error!(
                InvalidArgument,
                "encoding-type {other:?} is not supported: use url"
            ))
        }
    };
    let enc = |s: String| {
        if encode {
            s3hpc_store::url_encode(&s)
        } else {
            s
        }
    };
    // v1's NextMarker: the greatest key or prefix on the page.
    let last_name = page
        .objects
        .last()
        .map(|o| o.key.clone())
        .into_iter()
        .chain(page.common_prefixes.last().cloned())
        .max();
    Ok(Listed {
        contents: page
            .objects
            .into_iter()
            .map(|o| object(o, encode))
            .collect(),
        prefixes: page
            .common_prefixes
            .into_iter()
            .map(|p| CommonPrefix {
                prefix: Some(enc(p)),
            })
            .collect(),
        last_name: last_name.map(enc),
    })
}

fn encode_opt(s: Option<String>, encoding: Option<&EncodingType>) -> Option<String> {
    match encoding {
        Some(_) => s.map(|s| s3hpc_store::url_encode(&s)),
        None => s,
    }
}

#[async_trait::async_trait]
impl S3 for Engine {
    async fn list_buckets(
        &self,
        _req: S3Request<ListBucketsInput>,
    ) -> S3Result<S3Response<ListBucketsOutput>> {
        let buckets = run(|| self.store.list_buckets())?
            .into_iter()
            .map(|b| Bucket {
                name: Some(b.name),
                creation_date: Some(convert::timestamp(b.created)),
                ..Default::default()
            })
            .collect();
        Ok(S3Response::new(ListBucketsOutput {
            buckets: Some(buckets),
            owner: Some(Owner {
                display_name: Some("s3hpc".into()),
                id: Some("s3hpc".into()),
            }),
            ..Default::default()
        }))
    }

    async fn create_bucket(
        &self,
        req: S3Request<CreateBucketInput>,
    ) -> S3Result<S3Response<CreateBucketOutput>> {
        let bucket = req.input.bucket;
        run(|| self.store.create_bucket(&bucket))?;
        Ok(S3Response::new(CreateBucketOutput {
            location: Some(format!("/{bucket}")),
        }))
    }

    async fn delete_bucket(
        &self,
        req: S3Request<DeleteBucketInput>,
    ) -> S3Result<S3Response<DeleteBucketOutput>> {
        run(|| self.store.delete_bucket(&req.input.bucket))?;
        Ok(S3Response::new(DeleteBucketOutput {}))
    }

    async fn head_bucket(
        &self,
        req: S3Request<HeadBucketInput>,
    ) -> S3Result<S3Response<HeadBucketOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::new(HeadBucketOutput::default()))
    }

    async fn get_bucket_location(
        &self,
        req: S3Request<GetBucketLocationInput>,
    ) -> S3Result<S3Response<GetBucketLocationOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        // Empty means us-east-1, the region SigV4 clients default to.
        Ok(S3Response::new(GetBucketLocationOutput::default()))
    }

    async fn list_objects(
        &self,
        req: S3Request<ListObjectsInput>,
    ) -> S3Result<S3Response<ListObjectsOutput>> {
        let i = req.input;
        let max = max_keys(i.max_keys)?;
        let request = ListRequest {
            prefix: i.prefix.clone().unwrap_or_default(),
            delimiter: i.delimiter.clone().filter(|d| !d.is_empty()),
            start_after: i.marker.clone().filter(|m| !m.is_empty()),
            continuation_token: None,
            max_keys: max,
        };
        let page = if max == 0 {
            Default::default()
        } else {
            run(|| self.store.list_objects(&i.bucket, &request))?
        };
        let truncated = page.is_truncated;
        let l = listed(page, i.encoding_type.as_ref())?;
        let enc = i.encoding_type.as_ref();
        Ok(S3Response::new(ListObjectsOutput {
            name: Some(i.bucket),
            prefix: Some(encode_opt(i.prefix, enc).unwrap_or_default()),
            marker: Some(encode_opt(i.marker, enc).unwrap_or_default()),
            delimiter: encode_opt(i.delimiter, enc),
            max_keys: Some(max.min(1000) as i32),
            is_truncated: Some(truncated),
            next_marker: if truncated { l.last_name } else { None },
            contents: Some(l.contents),
            common_prefixes: Some(l.prefixes),
            encoding_type: i.encoding_type,
            ..Default::default()
        }))
    }

    async fn list_objects_v2(
        &self,
        req: S3Request<ListObjectsV2Input>,
    ) -> S3Result<S3Response<ListObjectsV2Output>> {
        let i = req.input;
        let max = max_keys(i.max_keys)?;
        let request = ListRequest {
            prefix: i.prefix.clone().unwrap_or_default(),
            delimiter: i.delimiter.clone().filter(|d| !d.is_empty()),
            start_after: i.start_after.clone().filter(|m| !m.is_empty()),
            continuation_token: i.continuation_token.clone().filter(|t| !t.is_empty()),
            max_keys: max,
        };
        let page = if max == 0 {
            Default::default()
        } else {
            run(|| self.store.list_objects(&i.bucket, &request))?
        };
        let truncated = page.is_truncated;
        let next = page.next_token.clone().filter(|_| truncated);
        let l = listed(page, i.encoding_type.as_ref())?;
        let enc = i.encoding_type.as_ref();
        Ok(S3Response::new(ListObjectsV2Output {
            name: Some(i.bucket),
            prefix: Some(encode_opt(i.prefix, enc).unwrap_or_default()),
            delimiter: encode_opt(i.delimiter, enc),
            start_after: encode_opt(i.start_after, enc),
            max_keys: Some(max.min(1000) as i32),
            key_count: Some((l.contents.len() + l.prefixes.len()) as i32),
            continuation_token: i.continuation_token,
            next_continuation_token: next,
            is_truncated: Some(truncated),
            contents: Some(l.contents),
            common_prefixes: Some(l.prefixes),
            encoding_type: i.encoding_type,
            ..Default::default()
        }))
    }

    async fn put_object(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        let i = req.input;
        let md5 = content_md5(i.content_md5.as_deref())?;
        let opts = convert::put_options(i.content_type, i.metadata);
        let store = self.store.clone();
        let (bucket, key) = (i.bucket, i.key);
        let etag = with_body(self, i.body, md5, move |body| {
            store.put_object(&bucket, &key, body, &opts)
        })
        .await?;
        Ok(S3Response::new(PutObjectOutput {
            e_tag: Some(convert::etag(&etag)),
            ..Default::default()
        }))
    }

    async fn get_object(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        let i = req.input;
        let range = i.range.map(convert::range);
        let (info, offset, length, stream) = run(|| {
            let got = self.store.get_object(&i.bucket, &i.key, range)?;
            let (info, offset, length) = (got.info, got.offset, got.length);
            Ok((info, offset, length, got.body))
        })?;
        convert::check_preconditions(
            &info,
            i.if_match.as_ref(),
            i.if_none_match.as_ref(),
            i.if_modified_since.as_ref(),
            i.if_unmodified_since.as_ref(),
        )?;
        // Never on FUSE: when another node has replaced the file, GlusterFS
        // answers each FUSE read with ENOENT and the kernel retries a
        // MAP_POPULATE fault without end; the thread hung and SIGTERM never
        // finished (issue 16). A read fails instead.
        let may_map =
            req.extensions.get::<KernelCopiesBodies>().is_some() && !self.store.profile().fuse;
        let stream = GetStream::start(stream, offset, length, may_map)
            .map_err(|e| s3_error(s3hpc_store::S3Error::from_io(&e, &info.key)))?;
        let content_range = range.map(|_| {
            format!(
                "bytes {offset}-{}/{}",
                (offset + length).saturating_sub(1),
                info.size
            )
        });
        Ok(S3Response::new(GetObjectOutput {
            body: Some(StreamingBlob::wrap(stream)),
            content_length: Some(length as i64),
            content_range,
            accept_ranges: Some("bytes".into()),
            e_tag: Some(convert::etag(&info.etag)),
            last_modified: Some(convert::timestamp(info.last_modified)),
            metadata: convert::metadata(&info),
            content_type: info.content_type,
            ..Default::default()
        }))
    }

    async fn head_object(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        let i = req.input;
        let info = run(|| self.store.head_object(&i.bucket, &i.key))?;
        convert::check_preconditions(
            &info,
            i.if_match.as_ref(),
            i.if_none_match.as_ref(),
            i.if_modified_since.as_ref(),
            i.if_unmodified_since.as_ref(),
        )?;
        Ok(S3Response::new(HeadObjectOutput {
            content_length: Some(info.size as i64),
            accept_ranges: Some("bytes".into()),
            e_tag: Some(convert::etag(&info.etag)),
            last_modified: Some(convert::timestamp(info.last_modified)),
            metadata: convert::metadata(&info),
            content_type: info.content_type,
            ..Default::default()
        }))
    }

    async fn delete_object(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        run(|| self.store.delete_object(&req.input.bucket, &req.input.key))?;
        Ok(S3Response::new(DeleteObjectOutput::default()))
    }

    async fn delete_objects(
        &self,
        req: S3Request<DeleteObjectsInput>,
    ) -> S3Result<S3Response<DeleteObjectsOutput>> {
        let i = req.input;
        run(|| self.store.head_bucket(&i.bucket))?;
        let quiet = i.delete.quiet.unwrap_or(false);
        let (mut deleted, mut errors) = (Vec::new(), Vec::new());
        tokio::task::block_in_place(|| {
            for o in i.delete.objects {
                match self.store.delete_object(&i.bucket, &o.key) {
                    Ok(()) if quiet => {}
                    Ok(()) => deleted.push(DeletedObject {
                        key: Some(o.key),
                        ..Default::default()
                    }),
                    Err(e) => errors.push(Error {
                        code: Some(e.code.as_str().to_string()),
                        message: Some(e.message),
                        key: Some(o.key),
                        version_id: None,
                    }),
                }
            }
        });
        Ok(S3Response::new(DeleteObjectsOutput {
            deleted: Some(deleted),
            errors: Some(errors),
            ..Default::default()
        }))
    }

    async fn copy_object(
        &self,
        req: S3Request<CopyObjectInput>,
    ) -> S3Result<S3Response<CopyObjectOutput>> {
        let i = req.input;
        let (src_bucket, src_key) = copy_source(i.copy_source)?;
        let replace = i
            .metadata_directive
            .as_ref()
            .is_some_and(|d| d.as_str() == MetadataDirective::REPLACE);
        let opts = replace.then(|| convert::put_options(i.content_type, i.metadata));
        let info = run(|| {
            self.store
                .copy_object(&src_bucket, &src_key, &i.bucket, &i.key, opts.as_ref())
        })?;
        Ok(S3Response::new(CopyObjectOutput {
            copy_object_result: Some(CopyObjectResult {
                e_tag: Some(convert::etag(&info.etag)),
                last_modified: Some(convert::timestamp(info.last_modified)),
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    async fn create_multipart_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        let i = req.input;
        let opts = convert::put_options(i.content_type, i.metadata);
        let id = run(|| self.store.create_multipart_upload(&i.bucket, &i.key, &opts))?;
        Ok(S3Response::new(CreateMultipartUploadOutput {
            bucket: Some(i.bucket),
            key: Some(i.key),
            upload_id: Some(id),
            ..Default::default()
        }))
    }

    async fn upload_part(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        let i = req.input;
        let md5 = content_md5(i.content_md5.as_deref())?;
        let part = part_number(i.part_number)?;
        let store = self.store.clone();
        let (bucket, key, id) = (i.bucket, i.key, i.upload_id);
        let etag = with_body(self, i.body, md5, move |body| {
            store.upload_part(&bucket, &key, &id, part, body)
        })
        .await?;
        Ok(S3Response::new(UploadPartOutput {
            e_tag: Some(convert::etag(&etag)),
            ..Default::default()
        }))
    }

    async fn upload_part_copy(
        &self,
        req: S3Request<UploadPartCopyInput>,
    ) -> S3Result<S3Response<UploadPartCopyOutput>> {
        let i = req.input;
        let (src_bucket, src_key) = copy_source(i.copy_source)?;
        let range = i
            .copy_source_range
            .as_deref()
            .map(convert::copy_source_range)
            .transpose()?;
        let part = part_number(i.part_number)?;
        let store = self.store.clone();
        let etag = tokio::task::spawn_blocking(move || {
            let mut src = store.get_object(&src_bucket, &src_key, range)?;
            let len = src.length;
            store.upload_part(
                &i.bucket,
                &i.key,
                &i.upload_id,
                part,
                PutBody::Stream {
                    reader: &mut src.body,
                    len: Some(len),
                },
            )
        })
        .await
        .map_err(s3s::S3Error::internal_error)?
        .map_err(s3_error)?;
        Ok(S3Response::new(UploadPartCopyOutput {
            copy_part_result: Some(CopyPartResult {
                e_tag: Some(convert::etag(&etag)),
                last_modified: Some(convert::timestamp(std::time::SystemTime::now())),
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    async fn complete_multipart_upload(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        let i = req.input;
        let Some(parts) = i.multipart_upload.and_then(|m| m.parts) else {
            return Err(s3_error!(
                MalformedXML,
                "CompleteMultipartUpload needs a body listing the parts"
            ));
        };
        let parts = parts
            .into_iter()
            .map(|p| {
                let n = p
                    .part_number
                    .ok_or_else(|| s3_error!(MalformedXML, "a Part has no PartNumber"))?;
                let etag = p
                    .e_tag
                    .ok_or_else(|| s3_error!(MalformedXML, "part {n} has no ETag"))?;
                Ok((part_number(n)?, convert::quote(etag.value())))
            })
            .collect::<S3Result<Vec<_>>>()?;
        let store = self.store.clone();
        let (bucket, key) = (i.bucket.clone(), i.key.clone());
        // Concatenating parts can take a while: off the async workers.
        let info = tokio::task::spawn_blocking(move || {
            store.complete_multipart_upload(&bucket, &key, &i.upload_id, &parts)
        })
        .await
        .map_err(s3s::S3Error::internal_error)?
        .map_err(s3_error)?;
        Ok(S3Response::new(CompleteMultipartUploadOutput {
            bucket: Some(i.bucket.clone()),
            location: Some(format!("/{}/{}", i.bucket, i.key)),
            key: Some(i.key),
            e_tag: Some(convert::etag(&info.etag)),
            ..Default::default()
        }))
    }

    async fn abort_multipart_upload(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        let i = req.input;
        run(|| {
            self.store
                .abort_multipart_upload(&i.bucket, &i.key, &i.upload_id)
        })?;
        Ok(S3Response::new(AbortMultipartUploadOutput::default()))
    }

    async fn list_parts(
        &self,
        req: S3Request<ListPartsInput>,
    ) -> S3Result<S3Response<ListPartsOutput>> {
        let i = req.input;
        let all = run(|| self.store.list_parts(&i.bucket, &i.key, &i.upload_id))?;
        let marker = i.part_number_marker.unwrap_or(0);
        let max = i.max_parts.unwrap_or(1000).clamp(0, 1000) as usize;
        let mut after: Vec<_> = all
            .into_iter()
            .filter(|p| i64::from(p.part_number) > i64::from(marker))
            .collect();
        let truncated = after.len() > max;
        after.truncate(max);
        let next = after.last().map(|p| p.part_number as i32);
        Ok(S3Response::new(ListPartsOutput {
            bucket: Some(i.bucket),
            key: Some(i.key),
            upload_id: Some(i.upload_id),
            part_number_marker: i.part_number_marker,
            next_part_number_marker: next,
            max_parts: Some(max as i32),
            is_truncated: Some(truncated),
            parts: Some(
                after
                    .into_iter()
                    .map(|p| Part {
                        part_number: Some(p.part_number as i32),
                        size: Some(p.size as i64),
                        e_tag: Some(convert::etag(&p.etag)),
                        last_modified: Some(convert::timestamp(p.last_modified)),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }))
    }

    async fn list_multipart_uploads(
        &self,
        req: S3Request<ListMultipartUploadsInput>,
    ) -> S3Result<S3Response<ListMultipartUploadsOutput>> {
        let i = req.input;
        let prefix = i.prefix.clone().unwrap_or_default();
        let mut uploads = run(|| self.store.list_multipart_uploads(&i.bucket, &prefix))?;
        if let Some(marker) = i.key_marker.as_deref().filter(|m| !m.is_empty()) {
            uploads.retain(|u| u.key.as_str() > marker);
        }
        let max = i.max_uploads.unwrap_or(1000).clamp(0, 1000) as usize;
        let truncated = uploads.len() > max;
        uploads.truncate(max);
        let next_key = uploads.last().map(|u| u.key.clone()).filter(|_| truncated);
        let next_id = uploads
            .last()
            .map(|u| u.upload_id.clone())
            .filter(|_| truncated);
        Ok(S3Response::new(ListMultipartUploadsOutput {
            bucket: Some(i.bucket),
            prefix: i.prefix,
            key_marker: i.key_marker,
            max_uploads: Some(max as i32),
            is_truncated: Some(truncated),
            next_key_marker: next_key,
            next_upload_id_marker: next_id,
            uploads: Some(
                uploads
                    .into_iter()
                    .map(|u| MultipartUpload {
                        key: Some(u.key),
                        upload_id: Some(u.upload_id),
                        initiated: Some(convert::timestamp(u.initiated)),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }))
    }
}

fn copy_source(source: CopySource) -> S3Result<(Box<str>, Box<str>)> {
    match source {
        CopySource::Bucket { bucket, key, .. } => Ok((bucket, key)),
        _ => Err(s3_error!(
            NotImplemented,
            "copy sources must be BUCKET/KEY, not access points"
        )),
    }
}

fn part_number(n: i32) -> S3Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| s3_error!(InvalidArgument, "part number {n} must be 1 to 10000"))
}
