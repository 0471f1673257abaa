//! The S3 operations over the engine. s3s has parsed, authenticated and
//! validated the request; each method maps it onto `Store` calls and the
//! result back. File-system calls run on the blocking side of tokio.

use crate::acl;
use crate::body::{self, BodyFault, ChannelReader, Decoded, Framing, GetStream, Incoming};
use crate::checksums::{body_checks, get_checksum, known_value, set_checksum};
use crate::convert::{self, s3_error};
use crate::error_header::KernelCopiesBodies;
use crate::gather::BufferPool;
use crate::write_gate::WriteGate;
use base64::Engine as _;
use s3hpc_store::{ChecksumRequest, ChecksumType, ListRequest, PutBody, PutOptions, Store};
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

/// Runs a long call (multipart assembly, UploadPartCopy) on this thread
/// after handing the worker's other tasks to another one. Not on tokio's
/// blocking pool: the engine caches directory handles per thread, and a
/// pool thread that had not seen the upload's directories opened them
/// again (4-5 opens more per multipart upload than in-process).
fn run_long<T>(f: impl FnOnce() -> s3hpc_store::Result<T>) -> S3Result<T> {
    tokio::task::block_in_place(f).map_err(s3_error)
}

fn max_keys(n: Option<i32>) -> S3Result<usize> {
    match n {
        None => Ok(1000),
        Some(n) if n < 0 => Err(s3_error!(InvalidArgument, "max-keys must not be negative")),
        Some(n) => Ok(n as usize),
    }
}

fn content_md5(b64: Option<&str>) -> S3Result<Option<[u8; 16]>> {
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
    Ok(Some(raw))
}

/// Whether GET/HEAD should return the stored checksum.
fn checksum_mode(mode: Option<&ChecksumMode>) -> bool {
    mode.is_some_and(|m| m.as_str().eq_ignore_ascii_case(ChecksumMode::ENABLED))
}

/// Receives a PUT body and hands it to `write`: from memory when it fits in
/// one chunk or can be gathered (where `WriteGate` says), else on a
/// blocking thread through a bounded channel while the rest arrives. The
/// body is decoded as `framing` says (aws-chunked, its decoded length, its
/// trailer checksum) on the way. A body that fails midway (client gone,
/// broken framing, wrong length) fails the write, and so does a wrong
/// checksum or Content-MD5 (the engine compares before it publishes), so
/// the engine keeps nothing of it.
async fn with_body<T, F>(
    engine: &Engine,
    body: Option<StreamingBlob>,
    framing: Framing,
    write: F,
) -> S3Result<T>
where
    T: Send + 'static,
    F: for<'a> FnOnce(PutBody<'a>) -> s3hpc_store::Result<T> + Send + 'static,
{
    let Some(body) = body else {
        if framing.decoder.is_some() || framing.decoded_len.is_some_and(|n| n > 0) {
            return Err(s3_error!(
                IncompleteBody,
                "the aws-chunked body is empty: not even its final chunk arrived"
            ));
        }
        return engine.write_whole(&[], write);
    };
    let len = match framing.decoded_len {
        Some(n) => Some(n),
        None if framing.decoder.is_some() => None,
        None => body.remaining_length().exact().map(|n| n as u64),
    };
    let body = Decoded::new(body, framing);
    let len = len.and_then(|n| usize::try_from(n).ok());
    let incoming = body::receive(body, len, &engine.buffers).await?;
    match incoming {
        Incoming::Whole(bytes) => engine.write_whole(&bytes, write),
        Incoming::Gathered(pooled) => engine.write_whole(&pooled.buf, write),
        Incoming::Partial { head, rest } => {
            let (tx, rx) = body::channel();
            let fault = Arc::new(BodyFault::default());
            let mut reader = ChannelReader::new(head, rx, fault.clone());
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
    /// The `x-amz-copy-source-if-*` conditions of CopyObject and
    /// UploadPartCopy (If-Match, If-None-Match; If-Modified-Since,
    /// If-Unmodified-Since), checked against the source before the copy;
    /// any that fails is 412, as S3 answers for copies.
    fn check_copy_source(
        &self,
        bucket: &str,
        key: &str,
        etags: [Option<&ETagCondition>; 2],
        times: [Option<&Timestamp>; 2],
    ) -> S3Result<()> {
        if etags.iter().all(Option::is_none) && times.iter().all(Option::is_none) {
            return Ok(());
        }
        let src = run(|| self.store.head_object(bucket, key))?;
        convert::check_preconditions(&src, etags[0], etags[1], times[0], times[1]).map_err(|_| {
            s3_error!(
                PreconditionFailed,
                "the copy source {bucket}/{key} does not meet the x-amz-copy-source-if-* \
                 conditions; nothing was copied"
            )
        })
    }

    /// Writes a body that is all in memory, where the write gate says.
    fn write_whole<T>(
        &self,
        bytes: &[u8],
        write: impl FnOnce(PutBody<'_>) -> s3hpc_store::Result<T>,
    ) -> S3Result<T> {
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
        acl::check_bucket_canned(req.input.acl.as_ref())?;
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
        let (framing, checksum) = body_checks(&req.headers, req.trailing_headers)?;
        let i = req.input;
        acl::check_object_canned(i.acl.as_ref())?;
        let mut opts = convert::put_options(i.content_type, i.metadata);
        opts.content_md5 = content_md5(i.content_md5.as_deref())?;
        opts.checksum = checksum.clone();
        opts.tags = convert::tagging_header(i.tagging.as_deref())?;
        opts.condition = convert::write_condition(i.if_match.as_ref(), i.if_none_match.as_ref())?;
        let store = self.store.clone();
        let (bucket, key) = (i.bucket, i.key);
        let etag = with_body(self, i.body, framing, move |body| {
            store.put_object(&bucket, &key, body, &opts)
        })
        .await?;
        let mut out = PutObjectOutput {
            e_tag: Some(convert::etag(&etag)),
            ..Default::default()
        };
        set_checksum!(out, checksum.as_ref().and_then(known_value));
        Ok(S3Response::new(out))
    }

    async fn get_object(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        let i = req.input;
        null_version(i.version_id.as_deref())?;
        let range = i.range.map(convert::range);
        let with_checksum = checksum_mode(i.checksum_mode.as_ref()) && range.is_none();
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
        let mut out = GetObjectOutput {
            body: Some(StreamingBlob::wrap(stream)),
            content_length: Some(length as i64),
            content_range,
            accept_ranges: Some("bytes".into()),
            e_tag: Some(convert::etag(&info.etag)),
            last_modified: Some(convert::timestamp(info.last_modified)),
            metadata: convert::metadata(&info),
            tag_count: (info.tag_count > 0).then_some(info.tag_count as i32),
            ..Default::default()
        };
        if with_checksum {
            set_checksum!(out, info.checksum);
        }
        out.content_type = info.content_type;
        Ok(S3Response::new(out))
    }

    async fn head_object(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        let i = req.input;
        null_version(i.version_id.as_deref())?;
        let info = run(|| self.store.head_object(&i.bucket, &i.key))?;
        convert::check_preconditions(
            &info,
            i.if_match.as_ref(),
            i.if_none_match.as_ref(),
            i.if_modified_since.as_ref(),
            i.if_unmodified_since.as_ref(),
        )?;
        let tag_count = info.tag_count;
        let mut out = HeadObjectOutput {
            content_length: Some(info.size as i64),
            accept_ranges: Some("bytes".into()),
            e_tag: Some(convert::etag(&info.etag)),
            last_modified: Some(convert::timestamp(info.last_modified)),
            metadata: convert::metadata(&info),
            ..Default::default()
        };
        if checksum_mode(i.checksum_mode.as_ref()) {
            set_checksum!(out, info.checksum);
        }
        out.content_type = info.content_type;
        let mut resp = S3Response::new(out);
        // HeadObjectOutput has no field for it; GET's header, as tools expect.
        if tag_count > 0 {
            resp.headers.insert(
                "x-amz-tagging-count",
                hyper::header::HeaderValue::from(tag_count),
            );
        }
        Ok(resp)
    }

    async fn delete_object(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        null_version(req.input.version_id.as_deref())?;
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
                let result = match null_version(o.version_id.as_deref()) {
                    Ok(()) => self.store.delete_object(&i.bucket, &o.key),
                    Err(_) => Err(s3hpc_store::S3Error::new(
                        s3hpc_store::ErrorCode::InvalidArgument,
                        NO_VERSIONS,
                    )),
                };
                match result {
                    Ok(()) if quiet => {}
                    Ok(()) => deleted.push(DeletedObject {
                        key: Some(o.key),
                        version_id: o.version_id,
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
        let cond = convert::write_condition_headers(&req.headers)?;
        let i = req.input;
        acl::check_object_canned(i.acl.as_ref())?;
        let (src_bucket, src_key) = copy_source(i.copy_source)?;
        let replace = i
            .metadata_directive
            .as_ref()
            .is_some_and(|d| d.as_str() == MetadataDirective::REPLACE);
        let replace_tags = i
            .tagging_directive
            .as_ref()
            .is_some_and(|d| d.as_str() == TaggingDirective::REPLACE);
        let tags = convert::tagging_header(i.tagging.as_deref())?;
        self.check_copy_source(
            &src_bucket,
            &src_key,
            [
                i.copy_source_if_match.as_ref(),
                i.copy_source_if_none_match.as_ref(),
            ],
            [
                i.copy_source_if_modified_since.as_ref(),
                i.copy_source_if_unmodified_since.as_ref(),
            ],
        )?;
        let info = run(|| {
            let opts = match (replace, replace_tags) {
                (false, false) => None,
                (true, _) => {
                    let mut o = convert::put_options(i.content_type, i.metadata);
                    o.tags = if replace_tags {
                        tags
                    } else {
                        self.store.get_object_tagging(&src_bucket, &src_key)?
                    };
                    Some(o)
                }
                (false, true) => {
                    let src = self.store.head_object(&src_bucket, &src_key)?;
                    Some(s3hpc_store::PutOptions {
                        content_type: src.content_type,
                        metadata: src.metadata,
                        tags,
                        ..Default::default()
                    })
                }
            };
            self.store.copy_object_if(
                &src_bucket,
                &src_key,
                &i.bucket,
                &i.key,
                opts.as_ref(),
                &cond,
            )
        })?;
        let mut resp = S3Response::new(CopyObjectOutput {
            copy_object_result: Some(CopyObjectResult {
                e_tag: Some(convert::etag(&info.etag)),
                last_modified: Some(convert::timestamp(info.last_modified)),
                ..Default::default()
            }),
            ..Default::default()
        });
        resp.headers = convert::written_headers(&info);
        Ok(resp)
    }

    async fn create_multipart_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        let i = req.input;
        acl::check_object_canned(i.acl.as_ref())?;
        let mut opts = convert::put_options(i.content_type, i.metadata);
        if let Some(a) = &i.checksum_algorithm {
            let algorithm: s3hpc_store::ChecksumAlgorithm = a.as_str().parse().map_err(s3_error)?;
            let kind = match &i.checksum_type {
                Some(t) => t.as_str().parse().map_err(s3_error)?,
                None => algorithm.default_multipart_type(),
            };
            opts.checksum = Some(ChecksumRequest {
                kind,
                ..ChecksumRequest::new(algorithm)
            });
        } else if i.checksum_type.is_some() {
            return Err(s3_error!(
                InvalidRequest,
                "x-amz-checksum-type needs x-amz-checksum-algorithm"
            ));
        }
        opts.tags = convert::tagging_header(i.tagging.as_deref())?;
        let id = run(|| self.store.create_multipart_upload(&i.bucket, &i.key, &opts))?;
        let c = opts.checksum.as_ref();
        Ok(S3Response::new(CreateMultipartUploadOutput {
            bucket: Some(i.bucket),
            key: Some(i.key),
            upload_id: Some(id),
            checksum_algorithm: i.checksum_algorithm,
            checksum_type: c.map(|c| crate::checksums::checksum_type(c.kind)),
            ..Default::default()
        }))
    }

    async fn upload_part(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        let (framing, checksum) = body_checks(&req.headers, req.trailing_headers)?;
        let i = req.input;
        let opts = PutOptions {
            content_md5: content_md5(i.content_md5.as_deref())?,
            checksum,
            ..Default::default()
        };
        let part = part_number(i.part_number)?;
        let store = self.store.clone();
        let (bucket, key, id) = (i.bucket, i.key, i.upload_id);
        let (etag, sum) = with_body(self, i.body, framing, move |body| {
            store.upload_part_checked(&bucket, &key, &id, part, body, &opts)
        })
        .await?;
        let mut out = UploadPartOutput {
            e_tag: Some(convert::etag(&etag)),
            ..Default::default()
        };
        set_checksum!(out, sum, value_only);
        Ok(S3Response::new(out))
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
        self.check_copy_source(
            &src_bucket,
            &src_key,
            [
                i.copy_source_if_match.as_ref(),
                i.copy_source_if_none_match.as_ref(),
            ],
            [
                i.copy_source_if_modified_since.as_ref(),
                i.copy_source_if_unmodified_since.as_ref(),
            ],
        )?;
        let store = &self.store;
        let etag = run_long(|| {
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
        })?;
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
        let whole = get_checksum!(i).map(|(a, v)| ChecksumRequest::expecting(a, v));
        let cond = convert::write_condition(i.if_match.as_ref(), i.if_none_match.as_ref())?;
        let Some(parts) = i.multipart_upload.and_then(|m| m.parts) else {
            return Err(s3_error!(
                MalformedXML,
                "CompleteMultipartUpload needs a body listing the parts"
            ));
        };
        let part_sums: Vec<Option<String>> = parts
            .iter()
            .map(|p| get_checksum!(p).map(|(_, v)| v))
            .collect();
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
        // Concatenating parts can take a while: off the async worker.
        let info = run_long(|| {
            self.store.complete_multipart_upload_checked(
                &i.bucket,
                &i.key,
                &i.upload_id,
                &parts,
                &part_sums,
                whole.as_ref(),
                &cond,
            )
        })?;
        let mut out = CompleteMultipartUploadOutput {
            bucket: Some(i.bucket.clone()),
            location: Some(format!("/{}/{}", i.bucket, i.key)),
            key: Some(i.key),
            e_tag: Some(convert::etag(&info.etag)),
            ..Default::default()
        };
        let headers = convert::written_headers(&info);
        set_checksum!(out, info.checksum);
        let mut resp = S3Response::new(out);
        resp.headers = headers;
        Ok(resp)
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
                    .map(|p| {
                        let mut part = Part {
                            part_number: Some(p.part_number as i32),
                            size: Some(p.size as i64),
                            e_tag: Some(convert::etag(&p.etag)),
                            last_modified: Some(convert::timestamp(p.last_modified)),
                            ..Default::default()
                        };
                        set_checksum!(part, p.checksum, value_only);
                        part
                    })
                    .collect(),
            ),
            ..Default::default()
        }))
    }

    async fn get_object_attributes(
        &self,
        req: S3Request<GetObjectAttributesInput>,
    ) -> S3Result<S3Response<GetObjectAttributesOutput>> {
        let i = req.input;
        let info = run(|| self.store.head_object(&i.bucket, &i.key))?;
        // One header, comma-separated (s3s may keep it as one item).
        let want = |a: &str| {
            i.object_attributes
                .iter()
                .flat_map(|x| x.as_str().split(','))
                .any(|x| x.trim() == a)
        };
        let mut out = GetObjectAttributesOutput {
            last_modified: Some(convert::timestamp(info.last_modified)),
            ..Default::default()
        };
        if want(ObjectAttributes::ETAG) {
            out.e_tag = Some(convert::etag(&info.etag));
        }
        if want(ObjectAttributes::OBJECT_SIZE) {
            out.object_size = Some(info.size as i64);
        }
        if want(ObjectAttributes::STORAGE_CLASS) {
            out.storage_class = Some(StorageClass::from_static(StorageClass::STANDARD));
        }
        if want(ObjectAttributes::CHECKSUM) {
            if let Some(c) = &info.checksum {
                let mut sum = Checksum::default();
                // The attribute gives a composite value without its `-N`.
                let mut c = c.clone();
                if c.kind == ChecksumType::Composite {
                    c.value = c.value.split('-').next().unwrap_or_default().to_string();
                }
                set_checksum!(sum, Some(c));
                out.checksum = Some(sum);
            }
        }
        // A multipart object: its part count (from the ETag's `-N`); the
        // parts themselves are not kept after completion.
        let parts = convert::unquote(&info.etag)
            .rsplit_once('-')
            .and_then(|(_, n)| n.parse::<i32>().ok())
            .filter(|_| info.checksum.is_some() || !info.etag.contains("-1\""));
        if want(ObjectAttributes::OBJECT_PARTS) {
            if let Some(n) = parts {
                out.object_parts = Some(GetObjectAttributesParts {
                    total_parts_count: Some(n),
                    ..Default::default()
                });
            }
        }
        Ok(S3Response::new(out))
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

    async fn get_object_tagging(
        &self,
        req: S3Request<GetObjectTaggingInput>,
    ) -> S3Result<S3Response<GetObjectTaggingOutput>> {
        let i = req.input;
        null_version(i.version_id.as_deref())?;
        let tags = run(|| self.store.get_object_tagging(&i.bucket, &i.key))?;
        Ok(S3Response::new(GetObjectTaggingOutput {
            tag_set: tags
                .into_iter()
                .map(|(k, v)| Tag {
                    key: Some(k),
                    value: Some(v),
                })
                .collect(),
            version_id: None,
        }))
    }

    async fn put_object_tagging(
        &self,
        req: S3Request<PutObjectTaggingInput>,
    ) -> S3Result<S3Response<PutObjectTaggingOutput>> {
        let i = req.input;
        null_version(i.version_id.as_deref())?;
        let mut tags = std::collections::BTreeMap::new();
        for t in i.tagging.tag_set {
            let key = t.key.unwrap_or_default();
            if tags
                .insert(key.clone(), t.value.unwrap_or_default())
                .is_some()
            {
                return Err(s3_error!(
                    InvalidTag,
                    "tag {key:?} appears twice; each key may appear once"
                ));
            }
        }
        run(|| self.store.put_object_tagging(&i.bucket, &i.key, &tags))?;
        Ok(S3Response::new(PutObjectTaggingOutput::default()))
    }

    async fn delete_object_tagging(
        &self,
        req: S3Request<DeleteObjectTaggingInput>,
    ) -> S3Result<S3Response<DeleteObjectTaggingOutput>> {
        let i = req.input;
        null_version(i.version_id.as_deref())?;
        run(|| self.store.delete_object_tagging(&i.bucket, &i.key))?;
        Ok(S3Response::with_status(
            DeleteObjectTaggingOutput::default(),
            hyper::StatusCode::NO_CONTENT,
        ))
    }

    async fn get_bucket_versioning(
        &self,
        req: S3Request<GetBucketVersioningInput>,
    ) -> S3Result<S3Response<GetBucketVersioningOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        // Never versioned: an empty VersioningConfiguration, as S3 answers
        // for a bucket whose versioning was never enabled.
        Ok(S3Response::new(GetBucketVersioningOutput::default()))
    }

    async fn put_bucket_versioning(
        &self,
        req: S3Request<PutBucketVersioningInput>,
    ) -> S3Result<S3Response<PutBucketVersioningOutput>> {
        let i = req.input;
        run(|| self.store.head_bucket(&i.bucket))?;
        let c = i.versioning_configuration;
        if c.mfa_delete
            .as_ref()
            .is_some_and(|m| m.as_str() == MFADelete::ENABLED)
        {
            return Err(s3_error!(
                NotImplemented,
                "MFA delete is not supported: s3hpc keeps no versions to protect"
            ));
        }
        match c.status.as_ref().map(|s| s.as_str()) {
            // Suspending versioning on a bucket that never had it changes nothing.
            None | Some(BucketVersioningStatus::SUSPENDED) => {
                Ok(S3Response::new(PutBucketVersioningOutput::default()))
            }
            Some(other) => Err(s3_error!(
                NotImplemented,
                "versioning ({other}) is not supported: s3hpc stores each key as one file and \
                 keeps only its latest version; GetBucketVersioning answers unversioned, and \
                 Suspended is accepted as it changes nothing"
            )),
        }
    }

    async fn list_object_versions(
        &self,
        req: S3Request<ListObjectVersionsInput>,
    ) -> S3Result<S3Response<ListObjectVersionsOutput>> {
        let i = req.input;
        let max = max_keys(i.max_keys)?;
        let request = ListRequest {
            prefix: i.prefix.clone().unwrap_or_default(),
            delimiter: i.delimiter.clone().filter(|d| !d.is_empty()),
            start_after: i.key_marker.clone().filter(|m| !m.is_empty()),
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
        // Every object is its only version: id "null", the latest.
        let versions = l
            .contents
            .into_iter()
            .map(|o| ObjectVersion {
                e_tag: o.e_tag,
                is_latest: Some(true),
                key: o.key,
                last_modified: o.last_modified,
                owner: Some(acl::owner()),
                size: o.size,
                storage_class: Some(ObjectVersionStorageClass::from_static(
                    ObjectVersionStorageClass::STANDARD,
                )),
                version_id: Some("null".into()),
                ..Default::default()
            })
            .collect();
        Ok(S3Response::new(ListObjectVersionsOutput {
            name: Some(i.bucket),
            prefix: Some(encode_opt(i.prefix, enc).unwrap_or_default()),
            key_marker: Some(encode_opt(i.key_marker, enc).unwrap_or_default()),
            version_id_marker: Some(i.version_id_marker.unwrap_or_default()),
            delimiter: encode_opt(i.delimiter, enc),
            max_keys: Some(max.min(1000) as i32),
            is_truncated: Some(truncated),
            next_key_marker: if truncated { l.last_name } else { None },
            next_version_id_marker: truncated.then(|| "null".into()),
            versions: Some(versions),
            common_prefixes: Some(l.prefixes),
            encoding_type: i.encoding_type,
            ..Default::default()
        }))
    }

    async fn get_bucket_acl(
        &self,
        req: S3Request<GetBucketAclInput>,
    ) -> S3Result<S3Response<GetBucketAclOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::new(GetBucketAclOutput {
            grants: Some(acl::owner_full_control()),
            owner: Some(acl::owner()),
        }))
    }

    async fn put_bucket_acl(
        &self,
        req: S3Request<PutBucketAclInput>,
    ) -> S3Result<S3Response<PutBucketAclOutput>> {
        let i = req.input;
        run(|| self.store.head_bucket(&i.bucket))?;
        acl::check_bucket_canned(i.acl.as_ref())?;
        acl::check_grants(
            i.access_control_policy.as_ref(),
            [
                &i.grant_full_control,
                &i.grant_read,
                &i.grant_read_acp,
                &i.grant_write,
                &i.grant_write_acp,
            ],
        )?;
        Ok(S3Response::new(PutBucketAclOutput {}))
    }

    async fn get_object_acl(
        &self,
        req: S3Request<GetObjectAclInput>,
    ) -> S3Result<S3Response<GetObjectAclOutput>> {
        let i = req.input;
        null_version(i.version_id.as_deref())?;
        run(|| self.store.head_object(&i.bucket, &i.key))?;
        Ok(S3Response::new(GetObjectAclOutput {
            grants: Some(acl::owner_full_control()),
            owner: Some(acl::owner()),
            ..Default::default()
        }))
    }

    async fn put_object_acl(
        &self,
        req: S3Request<PutObjectAclInput>,
    ) -> S3Result<S3Response<PutObjectAclOutput>> {
        let i = req.input;
        null_version(i.version_id.as_deref())?;
        run(|| self.store.head_object(&i.bucket, &i.key))?;
        acl::check_object_canned(i.acl.as_ref())?;
        acl::check_grants(
            i.access_control_policy.as_ref(),
            [
                &i.grant_full_control,
                &i.grant_read,
                &i.grant_read_acp,
                &i.grant_write,
                &i.grant_write_acp,
            ],
        )?;
        Ok(S3Response::new(PutObjectAclOutput::default()))
    }

    async fn get_bucket_ownership_controls(
        &self,
        req: S3Request<GetBucketOwnershipControlsInput>,
    ) -> S3Result<S3Response<GetBucketOwnershipControlsOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::new(GetBucketOwnershipControlsOutput {
            ownership_controls: Some(OwnershipControls {
                rules: vec![OwnershipControlsRule {
                    object_ownership: ObjectOwnership::from_static(
                        ObjectOwnership::BUCKET_OWNER_ENFORCED,
                    ),
                }],
            }),
        }))
    }

    async fn put_bucket_ownership_controls(
        &self,
        req: S3Request<PutBucketOwnershipControlsInput>,
    ) -> S3Result<S3Response<PutBucketOwnershipControlsOutput>> {
        let i = req.input;
        run(|| self.store.head_bucket(&i.bucket))?;
        for r in &i.ownership_controls.rules {
            if r.object_ownership.as_str() != ObjectOwnership::BUCKET_OWNER_ENFORCED {
                return Err(s3_error!(
                    NotImplemented,
                    "object ownership {} is not supported: s3hpc has one owner and no ACLs, \
                     which is BucketOwnerEnforced (the only setting accepted)",
                    r.object_ownership.as_str()
                ));
            }
        }
        Ok(S3Response::new(PutBucketOwnershipControlsOutput {}))
    }

    async fn get_bucket_policy(
        &self,
        req: S3Request<GetBucketPolicyInput>,
    ) -> S3Result<S3Response<GetBucketPolicyOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(s3_error!(
            NoSuchBucketPolicy,
            "bucket {:?} has no policy: s3hpc does not model bucket policies (access is \
             decided by the server's credentials)",
            req.input.bucket
        ))
    }

    async fn put_bucket_policy(
        &self,
        req: S3Request<PutBucketPolicyInput>,
    ) -> S3Result<S3Response<PutBucketPolicyOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(s3_error!(
            NotImplemented,
            "bucket policies are not supported: s3hpc does not model them; access is decided \
             by the server's credentials and the file system's permissions"
        ))
    }

    async fn delete_bucket_policy(
        &self,
        req: S3Request<DeleteBucketPolicyInput>,
    ) -> S3Result<S3Response<DeleteBucketPolicyOutput>> {
        // There is never a policy to delete: success, as S3 answers then.
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::with_status(
            DeleteBucketPolicyOutput::default(),
            hyper::StatusCode::NO_CONTENT,
        ))
    }

    // Bucket configurations s3hpc has none of: the Get calls tools make
    // when reading a bucket (Terraform's provider, the console, s3-tests)
    // answer exactly as AWS does for a bucket without that configuration,
    // and the Deletes succeed, as there is nothing to delete.

    async fn get_bucket_cors(
        &self,
        req: S3Request<GetBucketCorsInput>,
    ) -> S3Result<S3Response<GetBucketCorsOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(not_configured(
            "NoSuchCORSConfiguration",
            &req.input.bucket,
            "CORS configuration",
        ))
    }

    async fn get_bucket_lifecycle_configuration(
        &self,
        req: S3Request<GetBucketLifecycleConfigurationInput>,
    ) -> S3Result<S3Response<GetBucketLifecycleConfigurationOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(not_configured(
            "NoSuchLifecycleConfiguration",
            &req.input.bucket,
            "lifecycle configuration",
        ))
    }

    async fn get_bucket_tagging(
        &self,
        req: S3Request<GetBucketTaggingInput>,
    ) -> S3Result<S3Response<GetBucketTaggingOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(not_configured("NoSuchTagSet", &req.input.bucket, "tag set"))
    }

    async fn get_bucket_encryption(
        &self,
        req: S3Request<GetBucketEncryptionInput>,
    ) -> S3Result<S3Response<GetBucketEncryptionOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(not_configured(
            "ServerSideEncryptionConfigurationNotFoundError",
            &req.input.bucket,
            "server-side encryption configuration",
        ))
    }

    async fn get_bucket_website(
        &self,
        req: S3Request<GetBucketWebsiteInput>,
    ) -> S3Result<S3Response<GetBucketWebsiteOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(not_configured(
            "NoSuchWebsiteConfiguration",
            &req.input.bucket,
            "website configuration",
        ))
    }

    async fn get_bucket_replication(
        &self,
        req: S3Request<GetBucketReplicationInput>,
    ) -> S3Result<S3Response<GetBucketReplicationOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(not_configured(
            "ReplicationConfigurationNotFoundError",
            &req.input.bucket,
            "replication configuration",
        ))
    }

    async fn get_object_lock_configuration(
        &self,
        req: S3Request<GetObjectLockConfigurationInput>,
    ) -> S3Result<S3Response<GetObjectLockConfigurationOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(not_configured(
            "ObjectLockConfigurationNotFoundError",
            &req.input.bucket,
            "object lock configuration",
        ))
    }

    async fn get_public_access_block(
        &self,
        req: S3Request<GetPublicAccessBlockInput>,
    ) -> S3Result<S3Response<GetPublicAccessBlockOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(not_configured(
            "NoSuchPublicAccessBlockConfiguration",
            &req.input.bucket,
            "public access block configuration",
        ))
    }

    async fn get_bucket_logging(
        &self,
        req: S3Request<GetBucketLoggingInput>,
    ) -> S3Result<S3Response<GetBucketLoggingOutput>> {
        // Never configured (logging is off): the empty answer.
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::new(GetBucketLoggingOutput::default()))
    }

    async fn get_bucket_accelerate_configuration(
        &self,
        req: S3Request<GetBucketAccelerateConfigurationInput>,
    ) -> S3Result<S3Response<GetBucketAccelerateConfigurationOutput>> {
        // Never configured (transfer acceleration was never configured): the empty answer.
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::new(
            GetBucketAccelerateConfigurationOutput::default(),
        ))
    }

    async fn get_bucket_notification_configuration(
        &self,
        req: S3Request<GetBucketNotificationConfigurationInput>,
    ) -> S3Result<S3Response<GetBucketNotificationConfigurationOutput>> {
        // Never configured (no notifications): the empty answer.
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::new(
            GetBucketNotificationConfigurationOutput::default(),
        ))
    }

    async fn get_bucket_request_payment(
        &self,
        req: S3Request<GetBucketRequestPaymentInput>,
    ) -> S3Result<S3Response<GetBucketRequestPaymentOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::new(GetBucketRequestPaymentOutput {
            payer: Some(Payer::from_static(Payer::BUCKET_OWNER)),
        }))
    }

    async fn get_bucket_policy_status(
        &self,
        req: S3Request<GetBucketPolicyStatusInput>,
    ) -> S3Result<S3Response<GetBucketPolicyStatusOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Err(not_configured(
            "NoSuchBucketPolicy",
            &req.input.bucket,
            "policy",
        ))
    }

    async fn delete_bucket_cors(
        &self,
        req: S3Request<DeleteBucketCorsInput>,
    ) -> S3Result<S3Response<DeleteBucketCorsOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::with_status(
            DeleteBucketCorsOutput::default(),
            hyper::StatusCode::NO_CONTENT,
        ))
    }

    async fn delete_bucket_lifecycle(
        &self,
        req: S3Request<DeleteBucketLifecycleInput>,
    ) -> S3Result<S3Response<DeleteBucketLifecycleOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::with_status(
            DeleteBucketLifecycleOutput::default(),
            hyper::StatusCode::NO_CONTENT,
        ))
    }

    async fn delete_bucket_tagging(
        &self,
        req: S3Request<DeleteBucketTaggingInput>,
    ) -> S3Result<S3Response<DeleteBucketTaggingOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::with_status(
            DeleteBucketTaggingOutput::default(),
            hyper::StatusCode::NO_CONTENT,
        ))
    }

    async fn delete_bucket_encryption(
        &self,
        req: S3Request<DeleteBucketEncryptionInput>,
    ) -> S3Result<S3Response<DeleteBucketEncryptionOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::with_status(
            DeleteBucketEncryptionOutput::default(),
            hyper::StatusCode::NO_CONTENT,
        ))
    }

    async fn delete_public_access_block(
        &self,
        req: S3Request<DeletePublicAccessBlockInput>,
    ) -> S3Result<S3Response<DeletePublicAccessBlockOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::with_status(
            DeletePublicAccessBlockOutput::default(),
            hyper::StatusCode::NO_CONTENT,
        ))
    }

    async fn delete_bucket_website(
        &self,
        req: S3Request<DeleteBucketWebsiteInput>,
    ) -> S3Result<S3Response<DeleteBucketWebsiteOutput>> {
        run(|| self.store.head_bucket(&req.input.bucket))?;
        Ok(S3Response::with_status(
            DeleteBucketWebsiteOutput::default(),
            hyper::StatusCode::NO_CONTENT,
        ))
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

const NO_VERSIONS: &str = "s3hpc keeps one version of each object, whose version id is \"null\"; \
                           versioning is not supported";

/// A `versionId` may only name the one version there is.
fn null_version(v: Option<&str>) -> S3Result<()> {
    match v {
        None | Some("null") | Some("") => Ok(()),
        Some(v) => Err(s3_error!(NoSuchVersion, "no version {v:?}: {NO_VERSIONS}")),
    }
}

/// AWS's 404 for a bucket configuration that was never set.
fn not_configured(code: &str, bucket: &str, what: &str) -> s3s::S3Error {
    let Ok(code) = code.parse::<s3s::S3ErrorCode>();
    let mut e = s3s::S3Error::with_message(
        code,
        format!(
            "bucket {bucket:?} has no {what}: s3hpc does not keep bucket configurations \
             beyond what its server is started with"
        ),
    );
    e.set_status_code(hyper::StatusCode::NOT_FOUND);
    e
}

fn part_number(n: i32) -> S3Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| s3_error!(InvalidArgument, "part number {n} must be 1 to 10000"))
}
