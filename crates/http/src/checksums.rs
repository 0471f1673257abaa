//! What a request's headers say about its body: how it is framed
//! (aws-chunked or not, who decodes it, its decoded length) and which
//! checksum it carries (a header value, a trailer announced in
//! `x-amz-trailer`, or only an algorithm), for the engine to verify.

use crate::body::Framing;
use crate::chunked::Decoder;
use hyper::HeaderMap;
use s3hpc_store::{check_value, ChecksumAlgorithm, ChecksumRequest, LateChecksum, ObjectChecksum};
use s3s::{s3_error, S3Result};

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// Whether the body is aws-chunked: a `STREAMING-*` payload hash, or
/// `aws-chunked` among the content encodings.
pub fn is_aws_chunked(h: &HeaderMap) -> bool {
    header(h, "x-amz-content-sha256").is_some_and(|v| v.starts_with("STREAMING-"))
        || h.get_all(hyper::header::CONTENT_ENCODING).iter().any(|v| {
            v.to_str().is_ok_and(|v| {
                v.split(',')
                    .any(|e| e.trim().eq_ignore_ascii_case("aws-chunked"))
            })
        })
}

/// The body's framing and checksum, from the request headers. `trailers`
/// is s3s's handle when s3s decoded the body (SigV4 header signatures);
/// otherwise an aws-chunked body is decoded by [`Decoder`].
pub fn body_checks(
    h: &HeaderMap,
    trailers: Option<s3s::TrailingHeaders>,
) -> S3Result<(Framing, Option<ChecksumRequest>)> {
    let chunked = is_aws_chunked(h);
    let decoded_len = match header(h, "x-amz-decoded-content-length").filter(|_| chunked) {
        None => None,
        Some(v) => Some(v.trim().parse::<u64>().map_err(|_| {
            s3_error!(
                InvalidArgument,
                "x-amz-decoded-content-length {v:?} is not a number of bytes"
            )
        })?),
    };
    let mut framing = Framing::default();
    if chunked {
        if decoded_len.is_none() {
            return Err(s3_error!(
                MissingContentLength,
                "an aws-chunked body needs x-amz-decoded-content-length"
            ));
        }
        framing.decoded_len = decoded_len;
        match trailers {
            Some(t) => framing.s3s_trailers = Some(t),
            None => framing.decoder = Some(Decoder::new(decoded_len)),
        }
    }
    // One pass over the names instead of seven lookups: most PUTs from
    // tools other than the AWS SDKs carry no checksum at all.
    let asks = h.keys().any(|k| {
        let k = k.as_str();
        k.starts_with("x-amz-checksum-")
            || k == "x-amz-trailer"
            || k == "x-amz-sdk-checksum-algorithm"
    });
    if !asks {
        return Ok((framing, None));
    }
    let mut checksum: Option<ChecksumRequest> = None;
    let mut one = |c: ChecksumRequest| {
        if checksum.replace(c).is_some() {
            return Err(s3_error!(
                InvalidRequest,
                "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."
            ));
        }
        Ok(())
    };
    for alg in ChecksumAlgorithm::ALL {
        if let Some(v) = header(h, alg.header_name()) {
            check_value(alg, v).map_err(crate::convert::s3_error)?;
            one(ChecksumRequest::expecting(alg, v.trim()))?;
        }
    }
    if let Some(names) = header(h, "x-amz-trailer") {
        for alg in names
            .split(',')
            .filter_map(|n| ChecksumAlgorithm::from_header_name(n.trim()))
        {
            if !chunked {
                return Err(s3_error!(
                    InvalidRequest,
                    "x-amz-trailer {names:?} needs an aws-chunked body to carry it"
                ));
            }
            let late = LateChecksum::new();
            framing.trailer_checksum = Some((alg, late.clone()));
            one(ChecksumRequest {
                late: Some(late),
                ..ChecksumRequest::new(alg)
            })?;
        }
    }
    if checksum.is_none() {
        if let Some(a) = header(h, "x-amz-sdk-checksum-algorithm") {
            let alg = a.parse().map_err(crate::convert::s3_error)?;
            checksum = Some(ChecksumRequest::new(alg));
        }
    }
    Ok((framing, checksum))
}

/// The value a request's checksum had, once its body is written.
pub fn known_value(c: &ChecksumRequest) -> Option<ObjectChecksum> {
    let v = c
        .expected
        .as_deref()
        .or(c.late.as_ref().and_then(|l| l.get()))?;
    Some(ObjectChecksum {
        algorithm: c.algorithm,
        kind: s3hpc_store::ChecksumType::FullObject,
        value: v.trim().to_string(),
    })
}

pub fn checksum_type(kind: s3hpc_store::ChecksumType) -> s3s::dto::ChecksumType {
    s3s::dto::ChecksumType::from(kind.as_str().to_string())
}

/// Sets the `checksum_*` field of `$c`'s algorithm and `checksum_type` on
/// any s3s output struct that has them (`value_only`: structs without a
/// `checksum_type`, such as UploadPart's and a listed Part).
macro_rules! set_checksum {
    ($out:expr, $c:expr, value_only) => {
        if let Some(c) = $c {
            let v = Some(c.value.clone());
            match c.algorithm {
                s3hpc_store::ChecksumAlgorithm::Crc32 => $out.checksum_crc32 = v,
                s3hpc_store::ChecksumAlgorithm::Crc32c => $out.checksum_crc32c = v,
                s3hpc_store::ChecksumAlgorithm::Crc64Nvme => $out.checksum_crc64nvme = v,
                s3hpc_store::ChecksumAlgorithm::Sha1 => $out.checksum_sha1 = v,
                s3hpc_store::ChecksumAlgorithm::Sha256 => $out.checksum_sha256 = v,
            }
        }
    };
    ($out:expr, $c:expr) => {
        if let Some(c) = $c {
            let kind = c.kind;
            $crate::checksums::set_checksum!($out, Some(c), value_only);
            $out.checksum_type = Some($crate::checksums::checksum_type(kind));
        }
    };
}
pub(crate) use set_checksum;

/// The one `checksum_*` value of a struct that has them (CompletedPart,
/// CompleteMultipartUpload's input), with its algorithm.
macro_rules! get_checksum {
    ($x:expr) => {
        [
            (s3hpc_store::ChecksumAlgorithm::Crc32, &$x.checksum_crc32),
            (s3hpc_store::ChecksumAlgorithm::Crc32c, &$x.checksum_crc32c),
            (
                s3hpc_store::ChecksumAlgorithm::Crc64Nvme,
                &$x.checksum_crc64nvme,
            ),
            (s3hpc_store::ChecksumAlgorithm::Sha1, &$x.checksum_sha1),
            (s3hpc_store::ChecksumAlgorithm::Sha256, &$x.checksum_sha256),
        ]
        .into_iter()
        .find_map(|(a, v)| v.as_ref().map(|v| (a, v.trim().to_string())))
    };
}
pub(crate) use get_checksum;
