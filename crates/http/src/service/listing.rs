//! Listings: ListObjects (v1 and v2) and ListObjectVersions, and how a page of the engine becomes S3's answer (encoding, markers).

use super::{run, Engine};
use crate::convert;
use crate::owners::Owners;
use s3hpc_store::{ListPage, ListRequest, VersionsRequest};
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

fn max_keys(n: Option<i32>) -> S3Result<usize> {
    match n {
        None => Ok(1000),
        Some(n) if n < 0 => Err(s3_error!(InvalidArgument, "max-keys must not be negative")),
        Some(n) => Ok(n as usize),
    }
}

/// `owners`: name each key's owner (from the listing's own stat).
pub(super) fn object(
    info: s3hpc_store::ObjectInfo,
    encode: bool,
    owners: Option<&Owners>,
) -> Object {
    Object {
        owner: owners.zip(info.owner).map(|(o, uid)| o.of(uid)),
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

/// The parameters every listing checks alike. AWS and Ceph refuse
/// `allow-unordered` (a Ceph extension, which s3hpc serves in order) with
/// a delimiter; an empty delimiter is no delimiter, and is not echoed.
fn delimiter(uri: &hyper::Uri, d: Option<String>) -> S3Result<Option<String>> {
    let d = d.filter(|d| !d.is_empty());
    let unordered = uri
        .query()
        .unwrap_or("")
        .split('&')
        .any(|p| p.split('=').next() == Some("allow-unordered"));
    if unordered && d.is_some() {
        return Err(s3_error!(
            InvalidArgument,
            "allow-unordered cannot be used with a delimiter; drop one of them"
        ));
    }
    Ok(d)
}

/// Whether the client asked for keys URL-encoded (the one encoding S3 has).
fn url_encoded(encoding: Option<&EncodingType>) -> S3Result<bool> {
    match encoding.map(|e| e.as_str()) {
        None => Ok(false),
        Some(EncodingType::URL) => Ok(true),
        Some(other) => Err(s3_error!(
            InvalidArgument,
            "encoding-type {other:?} is not supported: use url"
        )),
    }
}

fn listed(
    page: s3hpc_store::ListPage,
    encoding: Option<&EncodingType>,
    owners: Option<&Owners>,
) -> S3Result<Listed> {
    let encode = url_encoded(encoding)?;
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
            .map(|o| object(o, encode, owners))
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

/// One page of the engine's listing, for any of the three listing calls:
/// empty marker and token mean none, and `max-keys=0` reads nothing.
fn page(
    engine: &Engine,
    bucket: &str,
    prefix: Option<&String>,
    delimiter: Option<&String>,
    start_after: Option<&String>,
    token: Option<&String>,
    max_keys: usize,
) -> S3Result<ListPage> {
    if max_keys == 0 {
        return Ok(ListPage::default());
    }
    let some = |s: Option<&String>| s.filter(|s| !s.is_empty()).cloned();
    let request = ListRequest {
        prefix: prefix.cloned().unwrap_or_default(),
        delimiter: delimiter.cloned(),
        start_after: some(start_after),
        continuation_token: some(token),
        max_keys,
    };
    run(|| engine.store.list_objects(bucket, &request))
}

pub(super) async fn list_objects(
    engine: &Engine,
    req: S3Request<ListObjectsInput>,
) -> S3Result<S3Response<ListObjectsOutput>> {
    let mut i = req.input;
    i.delimiter = delimiter(&req.uri, i.delimiter)?;
    let max = max_keys(i.max_keys)?;
    let page = page(
        engine,
        &i.bucket,
        i.prefix.as_ref(),
        i.delimiter.as_ref(),
        i.marker.as_ref(),
        None,
        max,
    )?;
    let truncated = page.is_truncated;
    // v1 always names each key's owner.
    let l = listed(page, i.encoding_type.as_ref(), Some(&engine.owners))?;
    let enc = i.encoding_type.as_ref();
    Ok(S3Response::new(ListObjectsOutput {
        name: Some(i.bucket),
        // v1 sends its Prefix as given, encoded or not: SDKs decode only
        // Delimiter, Marker, NextMarker and the keys (botocore, as AWS).
        prefix: Some(i.prefix.unwrap_or_default()),
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

pub(super) async fn list_objects_v2(
    engine: &Engine,
    req: S3Request<ListObjectsV2Input>,
) -> S3Result<S3Response<ListObjectsV2Output>> {
    let mut i = req.input;
    i.delimiter = delimiter(&req.uri, i.delimiter)?;
    let max = max_keys(i.max_keys)?;
    let page = page(
        engine,
        &i.bucket,
        i.prefix.as_ref(),
        i.delimiter.as_ref(),
        i.start_after.as_ref(),
        i.continuation_token.as_ref(),
        max,
    )?;
    let truncated = page.is_truncated;
    let next = page.next_token.clone().filter(|_| truncated);
    let owners = (i.fetch_owner == Some(true)).then_some(&*engine.owners);
    let l = listed(page, i.encoding_type.as_ref(), owners)?;
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

pub(super) async fn list_object_versions(
    engine: &Engine,
    req: S3Request<ListObjectVersionsInput>,
) -> S3Result<S3Response<ListObjectVersionsOutput>> {
    let mut i = req.input;
    i.delimiter = delimiter(&req.uri, i.delimiter)?;
    let max = max_keys(i.max_keys)?;
    let encode = url_encoded(i.encoding_type.as_ref())?;
    let enc = i.encoding_type.as_ref();
    let ask = VersionsRequest {
        prefix: i.prefix.clone().unwrap_or_default(),
        delimiter: i.delimiter.clone(),
        key_marker: i.key_marker.clone().filter(|k| !k.is_empty()),
        version_id_marker: i.version_id_marker.clone().filter(|v| !v.is_empty()),
        max_keys: max,
    };
    let page = run(|| engine.store.list_object_versions(&i.bucket, &ask))?;
    let key_of = |k: String| {
        if encode {
            s3hpc_store::url_encode(&k)
        } else {
            k
        }
    };
    let (mut versions, mut markers) = (Vec::new(), Vec::new());
    for (key, v) in page.versions {
        let time = Some(convert::timestamp(v.last_modified));
        match v.info {
            Some(info) if !v.delete_marker => versions.push(ObjectVersion {
                owner: info.owner.map(|uid| engine.owners.of(uid)),
                e_tag: Some(convert::etag(&info.etag)),
                is_latest: Some(v.is_latest),
                key: Some(key_of(key)),
                last_modified: time,
                size: Some(info.size as i64),
                storage_class: Some(ObjectVersionStorageClass::from_static(
                    ObjectVersionStorageClass::STANDARD,
                )),
                version_id: Some(v.version_id),
                ..Default::default()
            }),
            // A marker, or a version this user may not read: by name.
            _ if v.delete_marker => markers.push(DeleteMarkerEntry {
                is_latest: Some(v.is_latest),
                key: Some(key_of(key)),
                last_modified: time,
                owner: None,
                version_id: Some(v.version_id),
            }),
            _ => versions.push(ObjectVersion {
                is_latest: Some(v.is_latest),
                key: Some(key_of(key)),
                last_modified: time,
                version_id: Some(v.version_id),
                ..Default::default()
            }),
        }
    }
    let prefixes = page
        .common_prefixes
        .into_iter()
        .map(|p| CommonPrefix {
            prefix: Some(key_of(p)),
        })
        .collect();
    Ok(S3Response::new(ListObjectVersionsOutput {
        name: Some(i.bucket),
        prefix: Some(encode_opt(i.prefix, enc).unwrap_or_default()),
        key_marker: Some(encode_opt(i.key_marker, enc).unwrap_or_default()),
        version_id_marker: Some(i.version_id_marker.unwrap_or_default()),
        delimiter: encode_opt(i.delimiter, enc),
        max_keys: Some(max.min(1000) as i32),
        is_truncated: Some(page.is_truncated),
        next_key_marker: page.next_key_marker.map(key_of),
        next_version_id_marker: page.next_version_id_marker,
        versions: Some(versions),
        delete_markers: Some(markers),
        common_prefixes: Some(prefixes),
        encoding_type: i.encoding_type,
        ..Default::default()
    }))
}
