//! Multipart uploads: create, upload a part, complete, abort, list parts and uploads.

use super::acls::{self, asked};
use super::{content_md5, run, run_long, with_body, Engine};
use crate::checksums::{body_checks, get_checksum, set_checksum};
use crate::convert::{self, s3_error};
use crate::owners;
use s3hpc_store::{ChecksumRequest, PutOptions};
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

pub(super) fn part_number(n: i32) -> S3Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| s3_error!(InvalidArgument, "part number {n} must be 1 to 10000"))
}

pub(super) async fn create_multipart_upload(
    engine: &Engine,
    req: S3Request<CreateMultipartUploadInput>,
) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
    let i = req.input;
    let asked = asked!(object i, i.acl.as_ref().map(|a| a.as_str()), None);
    let access = acls::for_new(engine, &asked, Some(&i.key))?;
    let mut opts = convert::put_options(i.content_type, i.metadata);
    opts.access = access;
    opts.headers = convert::object_headers!(i);
    (opts.retention, opts.legal_hold) = super::object_lock::asked_lock!(i)?;
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
    let id = run(|| {
        engine
            .store
            .create_multipart_upload(&i.bucket, &i.key, &opts)
    })?;
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

pub(super) async fn upload_part(
    engine: &Engine,
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
    let store = engine.store.clone();
    let (bucket, key, id) = (i.bucket, i.key, i.upload_id);
    let (etag, sum) = with_body(engine, i.body, framing, move |body| {
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

pub(super) async fn complete_multipart_upload(
    engine: &Engine,
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
        engine.store.complete_multipart_upload_checked(
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
        version_id: convert::written_version(info.version_id.clone()),
        ..Default::default()
    };
    let headers = convert::written_headers(&info);
    set_checksum!(out, info.checksum);
    let mut resp = S3Response::new(out);
    resp.headers = headers;
    Ok(resp)
}

pub(super) async fn abort_multipart_upload(
    engine: &Engine,
    req: S3Request<AbortMultipartUploadInput>,
) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
    let i = req.input;
    run(|| {
        engine
            .store
            .abort_multipart_upload(&i.bucket, &i.key, &i.upload_id)
    })?;
    Ok(S3Response::new(AbortMultipartUploadOutput::default()))
}

fn initiator(o: &Owner) -> Initiator {
    Initiator {
        display_name: o.display_name.clone(),
        id: o.id.clone(),
    }
}

pub(super) async fn list_parts(
    engine: &Engine,
    req: S3Request<ListPartsInput>,
) -> S3Result<S3Response<ListPartsOutput>> {
    let i = req.input;
    let all = run(|| engine.store.list_parts(&i.bucket, &i.key, &i.upload_id))?;
    let marker = i.part_number_marker.unwrap_or(0);
    let max = i.max_parts.unwrap_or(1000).clamp(0, 1000) as usize;
    let mut after: Vec<_> = all
        .into_iter()
        .filter(|p| i64::from(p.part_number) > i64::from(marker))
        .collect();
    let truncated = after.len() > max;
    after.truncate(max);
    let next = after.last().map(|p| p.part_number as i32);
    // An upload's staging directory is its initiator's alone (0700), so
    // whoever may list its parts acts as the initiator.
    let owner = engine.owners.of(owners::uid(engine.store.identity()));
    Ok(S3Response::new(ListPartsOutput {
        initiator: Some(initiator(&owner)),
        owner: Some(owner),
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

pub(super) async fn list_multipart_uploads(
    engine: &Engine,
    req: S3Request<ListMultipartUploadsInput>,
) -> S3Result<S3Response<ListMultipartUploadsOutput>> {
    let i = req.input;
    let prefix = i.prefix.clone().unwrap_or_default();
    let mut uploads = run(|| engine.store.list_multipart_uploads(&i.bucket, &prefix))?;
    // Key order, then upload id: a stable order for the markers to page
    // through, also when uploads of a key come and go between pages.
    uploads.sort_by(|a, b| (&a.key, &a.upload_id).cmp(&(&b.key, &b.upload_id)));
    let delimiter = i.delimiter.as_deref().filter(|d| !d.is_empty());
    if let Some(marker) = i.key_marker.as_deref().filter(|m| !m.is_empty()) {
        let id_marker = i.upload_id_marker.as_deref().filter(|m| !m.is_empty());
        // A marker that is a common prefix (the last entry of a page) skips
        // every key under it.
        let rolled = delimiter.is_some_and(|d| marker.ends_with(d));
        uploads.retain(|u| match id_marker {
            // The rest of the marker key's uploads, then the keys after it.
            Some(id) => u.key.as_str() > marker || (u.key == marker && u.upload_id.as_str() > id),
            None => u.key.as_str() > marker && !(rolled && u.key.starts_with(marker)),
        });
    }
    let max = i.max_uploads.unwrap_or(1000).clamp(0, 1000) as usize;
    // With a delimiter, keys that go on past it after the prefix roll up
    // into one common prefix each, which counts as one entry of the page.
    let mut page = Vec::new();
    let mut prefixes: Vec<String> = Vec::new();
    let mut truncated = false;
    let mut last: Option<(String, Option<String>)> = None;
    for u in uploads {
        let rolled = delimiter.and_then(|d| {
            u.key[prefix.len()..]
                .find(d)
                .map(|at| u.key[..prefix.len() + at + d.len()].to_string())
        });
        if let Some(p) = &rolled {
            if prefixes.last() == Some(p) {
                continue;
            }
        }
        if page.len() + prefixes.len() == max {
            truncated = true;
            break;
        }
        match rolled {
            Some(p) => {
                last = Some((p.clone(), None));
                prefixes.push(p);
            }
            None => {
                last = Some((u.key.clone(), Some(u.upload_id.clone())));
                page.push(u);
            }
        }
    }
    let (next_key, next_id) = match last.filter(|_| truncated) {
        Some((k, id)) => (Some(k), id),
        None => (None, None),
    };
    let uploads = page;
    Ok(S3Response::new(ListMultipartUploadsOutput {
        bucket: Some(i.bucket),
        prefix: i.prefix,
        delimiter: i.delimiter,
        key_marker: i.key_marker,
        upload_id_marker: i.upload_id_marker,
        max_uploads: Some(max as i32),
        is_truncated: Some(truncated),
        next_key_marker: next_key,
        next_upload_id_marker: next_id,
        common_prefixes: (!prefixes.is_empty()).then(|| {
            prefixes
                .into_iter()
                .map(|p| CommonPrefix { prefix: Some(p) })
                .collect()
        }),
        uploads: Some(
            uploads
                .into_iter()
                .map(|u| {
                    let owner = u.owner.map(|uid| engine.owners.of(uid));
                    MultipartUpload {
                        key: Some(u.key),
                        upload_id: Some(u.upload_id),
                        initiated: Some(convert::timestamp(u.initiated)),
                        initiator: owner.as_ref().map(initiator),
                        owner,
                        ..Default::default()
                    }
                })
                .collect(),
        ),
        ..Default::default()
    }))
}
