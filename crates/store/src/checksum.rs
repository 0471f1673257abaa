//! Object checksums as AWS S3 defines them: CRC32, CRC32C, CRC64NVME, SHA1
//! and SHA256, computed while the data streams into the temporary and
//! compared with what the client sent before the object becomes visible.
//!
//! Values travel base64-encoded, as in S3's `x-amz-checksum-*` headers; a
//! CRC is its big-endian bytes. Multipart objects carry either a COMPOSITE
//! checksum (the algorithm over the concatenated raw part checksums, with a
//! `-N` suffix) or a FULL_OBJECT one (CRCs only: the part CRCs combined,
//! which needs no pass over the data).
//!
//! CRCs come from `crc-fast` (carry-less multiplication, VPCLMULQDQ/AVX-512
//! where present; already in the tree through s3s), SHA-1/SHA-256 from
//! RustCrypto's `sha1`/`sha2`, which use the SHA-NI instructions when the CPU
//! has them. See docs/src/results/local.md for the cost per GiB.

use crate::{s3err, Result, S3Error};
use base64::Engine as _;
use sha1::Digest as _;
use std::sync::{Arc, OnceLock};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// The checksum algorithms S3 offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ChecksumAlgorithm {
    Crc32,
    Crc32c,
    Crc64Nvme,
    Sha1,
    Sha256,
}

impl ChecksumAlgorithm {
    pub const ALL: [ChecksumAlgorithm; 5] = [
        ChecksumAlgorithm::Crc32,
        ChecksumAlgorithm::Crc32c,
        ChecksumAlgorithm::Crc64Nvme,
        ChecksumAlgorithm::Sha1,
        ChecksumAlgorithm::Sha256,
    ];

    /// S3's name: `CRC32`, `CRC32C`, `CRC64NVME`, `SHA1`, `SHA256`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChecksumAlgorithm::Crc32 => "CRC32",
            ChecksumAlgorithm::Crc32c => "CRC32C",
            ChecksumAlgorithm::Crc64Nvme => "CRC64NVME",
            ChecksumAlgorithm::Sha1 => "SHA1",
            ChecksumAlgorithm::Sha256 => "SHA256",
        }
    }

    /// The header (and trailer) that carries a value: `x-amz-checksum-crc32`.
    pub fn header_name(self) -> &'static str {
        match self {
            ChecksumAlgorithm::Crc32 => "x-amz-checksum-crc32",
            ChecksumAlgorithm::Crc32c => "x-amz-checksum-crc32c",
            ChecksumAlgorithm::Crc64Nvme => "x-amz-checksum-crc64nvme",
            ChecksumAlgorithm::Sha1 => "x-amz-checksum-sha1",
            ChecksumAlgorithm::Sha256 => "x-amz-checksum-sha256",
        }
    }

    /// The algorithm a header or trailer name carries, if any.
    pub fn from_header_name(name: &str) -> Option<ChecksumAlgorithm> {
        let suffix = name
            .get(..15)
            .filter(|p| p.eq_ignore_ascii_case("x-amz-checksum-"))
            .map(|_| &name[15..])?;
        suffix.parse().ok()
    }

    /// Bytes of a raw value.
    pub fn digest_len(self) -> usize {
        match self {
            ChecksumAlgorithm::Crc32 | ChecksumAlgorithm::Crc32c => 4,
            ChecksumAlgorithm::Crc64Nvme => 8,
            ChecksumAlgorithm::Sha1 => 20,
            ChecksumAlgorithm::Sha256 => 32,
        }
    }

    pub fn is_crc(self) -> bool {
        matches!(
            self,
            ChecksumAlgorithm::Crc32 | ChecksumAlgorithm::Crc32c | ChecksumAlgorithm::Crc64Nvme
        )
    }

    /// How S3 checksums a multipart object of this algorithm unless told.
    pub fn default_multipart_type(self) -> ChecksumType {
        match self {
            ChecksumAlgorithm::Crc64Nvme => ChecksumType::FullObject,
            _ => ChecksumType::Composite,
        }
    }

    fn crc(self) -> Option<crc_fast::CrcAlgorithm> {
        match self {
            ChecksumAlgorithm::Crc32 => Some(crc_fast::CrcAlgorithm::Crc32IsoHdlc),
            ChecksumAlgorithm::Crc32c => Some(crc_fast::CrcAlgorithm::Crc32Iscsi),
            ChecksumAlgorithm::Crc64Nvme => Some(crc_fast::CrcAlgorithm::Crc64Nvme),
            _ => None,
        }
    }

    /// The checksum of `data` in one call, base64.
    pub fn checksum_of(self, data: &[u8]) -> String {
        let mut h = Hasher::new(self);
        h.update(data);
        h.finish_base64()
    }
}

impl std::str::FromStr for ChecksumAlgorithm {
    type Err = S3Error;
    fn from_str(s: &str) -> Result<Self> {
        ChecksumAlgorithm::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                s3err!(
                    InvalidRequest,
                    "checksum algorithm {s:?} is not one of CRC32, CRC32C, CRC64NVME, SHA1, SHA256"
                )
            })
    }
}

/// Whether a multipart object's checksum covers the whole object or is
/// composed of its parts' checksums. Single PUTs are always FULL_OBJECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ChecksumType {
    #[default]
    FullObject,
    Composite,
}

impl ChecksumType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChecksumType::FullObject => "FULL_OBJECT",
            ChecksumType::Composite => "COMPOSITE",
        }
    }
}

impl std::str::FromStr for ChecksumType {
    type Err = S3Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            t if t.eq_ignore_ascii_case("FULL_OBJECT") => Ok(ChecksumType::FullObject),
            t if t.eq_ignore_ascii_case("COMPOSITE") => Ok(ChecksumType::Composite),
            _ => Err(s3err!(
                InvalidRequest,
                "checksum type {s:?} is not FULL_OBJECT or COMPOSITE"
            )),
        }
    }
}

/// A stored checksum: algorithm, type and the base64 value (a composite
/// one ends in `-N`, N the number of parts).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ObjectChecksum {
    pub algorithm: ChecksumAlgorithm,
    pub kind: ChecksumType,
    pub value: String,
}

impl ObjectChecksum {
    /// `ALG TYPE VALUE`, for the metadata attribute.
    pub(crate) fn encode(&self) -> String {
        format!(
            "{} {} {}",
            self.algorithm.as_str(),
            self.kind.as_str(),
            self.value
        )
    }

    pub(crate) fn decode(s: &str) -> Option<ObjectChecksum> {
        let mut it = s.splitn(3, ' ');
        let algorithm = it.next()?.parse().ok()?;
        let kind = it.next()?.parse().ok()?;
        let value = it.next().unwrap_or("").to_string();
        Some(ObjectChecksum {
            algorithm,
            kind,
            value,
        })
    }

    /// The raw bytes of a full (not composite) value.
    pub fn raw(&self) -> Option<Vec<u8>> {
        decode_value(self.algorithm, &self.value)
    }
}

/// A checksum value that becomes known only after the body: an aws-chunked
/// trailer. The transport fills it when the body ends, before the engine
/// compares. Not carried by serialising transports.
#[derive(Clone, Default)]
pub struct LateChecksum(Arc<OnceLock<String>>);

impl LateChecksum {
    pub fn new() -> LateChecksum {
        LateChecksum::default()
    }
    /// Sets the value (base64); a second value is ignored.
    pub fn set(&self, value: String) {
        let _ = self.0.set(value);
    }
    pub fn get(&self) -> Option<&str> {
        self.0.get().map(String::as_str)
    }
}

impl std::fmt::Debug for LateChecksum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LateChecksum({:?})", self.get())
    }
}

impl PartialEq for LateChecksum {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for LateChecksum {}

/// A checksum the writer asks for: computed over the body while it is
/// written and, when an expected value is given (now or late), compared
/// before the object becomes visible (BadDigest and nothing kept if not
/// equal). Stored with the object either way.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ChecksumRequest {
    pub algorithm: ChecksumAlgorithm,
    /// For CreateMultipartUpload: how the object's checksum is formed.
    /// Ignored for single PUTs and parts (always FULL_OBJECT).
    pub kind: ChecksumType,
    /// The base64 value the client sent in a header.
    pub expected: Option<String>,
    /// A value that arrives after the body (aws-chunked trailer).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub late: Option<LateChecksum>,
}

impl ChecksumRequest {
    pub fn new(algorithm: ChecksumAlgorithm) -> ChecksumRequest {
        ChecksumRequest {
            algorithm,
            kind: ChecksumType::FullObject,
            expected: None,
            late: None,
        }
    }

    pub fn expecting(algorithm: ChecksumAlgorithm, value: impl Into<String>) -> ChecksumRequest {
        ChecksumRequest {
            expected: Some(value.into()),
            ..ChecksumRequest::new(algorithm)
        }
    }

    /// Compares the computed base64 value with the expected one, if any.
    pub(crate) fn verify(&self, computed: &str) -> Result<()> {
        let late = self.late.as_ref().map(|l| {
            l.get().ok_or_else(|| {
                s3err!(
                    InvalidRequest,
                    "the {} trailer announced in x-amz-trailer did not arrive",
                    self.algorithm.header_name()
                )
            })
        });
        for want in self
            .expected
            .as_deref()
            .into_iter()
            .chain(late.transpose()?)
        {
            if want.trim() != computed {
                return Err(bad_digest(self.algorithm));
            }
        }
        Ok(())
    }
}

/// S3's answer to a checksum that does not match, in AWS's words.
pub fn bad_digest(algorithm: ChecksumAlgorithm) -> S3Error {
    s3err!(
        BadDigest,
        "The {} you specified did not match the calculated checksum.",
        algorithm.as_str()
    )
}

/// Checks that `value` is the base64 of a value of `algorithm`'s length,
/// before the body is read. One that is not can match no body: BadDigest,
/// as S3 answers (s3-tests `test_object_checksum_sha256`).
pub fn check_value(algorithm: ChecksumAlgorithm, value: &str) -> Result<()> {
    decode_value(algorithm, value).map(|_| ()).ok_or_else(|| {
        s3err!(
            BadDigest,
            "The {} you specified did not match the calculated checksum: {:?} in {} is not \
             the base64 of a {}-byte value.",
            algorithm.as_str(),
            value.get(..64).unwrap_or(value),
            algorithm.header_name(),
            algorithm.digest_len()
        )
    })
}

fn decode_value(algorithm: ChecksumAlgorithm, value: &str) -> Option<Vec<u8>> {
    B64.decode(value.trim())
        .ok()
        .filter(|v| v.len() == algorithm.digest_len())
}

pub fn to_base64(raw: &[u8]) -> String {
    B64.encode(raw)
}

/// A running checksum of one algorithm.
pub enum Hasher {
    Crc(crc_fast::Digest, ChecksumAlgorithm),
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

impl Hasher {
    pub fn new(algorithm: ChecksumAlgorithm) -> Hasher {
        match (algorithm, algorithm.crc()) {
            (_, Some(crc)) => Hasher::Crc(crc_fast::Digest::new(crc), algorithm),
            (ChecksumAlgorithm::Sha1, _) => Hasher::Sha1(sha1::Sha1::new()),
            _ => Hasher::Sha256(sha2::Sha256::new()),
        }
    }

    pub fn update(&mut self, data: &[u8]) {
        match self {
            Hasher::Crc(d, _) => d.update(data),
            Hasher::Sha1(h) => h.update(data),
            Hasher::Sha256(h) => h.update(data),
        }
    }

    /// The raw value: a CRC's big-endian bytes, or the digest.
    pub fn finish(self) -> Vec<u8> {
        match self {
            Hasher::Crc(d, ChecksumAlgorithm::Crc64Nvme) => d.finalize().to_be_bytes().to_vec(),
            Hasher::Crc(d, _) => (d.finalize() as u32).to_be_bytes().to_vec(),
            Hasher::Sha1(h) => h.finalize().to_vec(),
            Hasher::Sha256(h) => h.finalize().to_vec(),
        }
    }

    pub fn finish_base64(self) -> String {
        to_base64(&self.finish())
    }
}

/// The COMPOSITE checksum of parts with these raw checksums:
/// the algorithm over their concatenation, then `-N`.
pub fn composite(algorithm: ChecksumAlgorithm, parts: &[Vec<u8>]) -> String {
    let mut h = Hasher::new(algorithm);
    for p in parts {
        h.update(p);
    }
    format!("{}-{}", h.finish_base64(), parts.len())
}

/// The FULL_OBJECT CRC of the concatenation of parts with these raw CRCs
/// and lengths, without reading the data. None for SHA algorithms, which
/// do not combine.
pub fn combine_full(algorithm: ChecksumAlgorithm, parts: &[(Vec<u8>, u64)]) -> Option<String> {
    let crc = algorithm.crc()?;
    let mut acc: Option<u64> = None;
    for (raw, len) in parts {
        let v = raw.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b));
        acc = Some(match acc {
            None => v,
            Some(a) => crc_fast::checksum_combine(crc, a, v, *len),
        });
    }
    let v = acc.unwrap_or_else(|| crc_fast::checksum(crc, b""));
    Some(match algorithm {
        ChecksumAlgorithm::Crc64Nvme => to_base64(&v.to_be_bytes()),
        _ => to_base64(&(v as u32).to_be_bytes()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // "123456789", the CRC catalogue's check input; SHA values from sha*sum.
        let data = b"123456789";
        let hex = |a: ChecksumAlgorithm| {
            let mut h = Hasher::new(a);
            h.update(&data[..4]);
            h.update(&data[4..]);
            h.finish()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        assert_eq!(hex(ChecksumAlgorithm::Crc32), "cbf43926");
        assert_eq!(hex(ChecksumAlgorithm::Crc32c), "e3069283");
        assert_eq!(hex(ChecksumAlgorithm::Crc64Nvme), "ae8b14860a799888");
        assert_eq!(
            hex(ChecksumAlgorithm::Sha1),
            "f7c3bc1d808e04732adf679965ccc34ca7ae3441"
        );
        assert_eq!(
            hex(ChecksumAlgorithm::Sha256),
            "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"
        );
        // AWS's documented CRC32 of an empty body.
        assert_eq!(ChecksumAlgorithm::Crc32.checksum_of(b""), "AAAAAA==");
    }

    #[test]
    fn names_parse() {
        for a in ChecksumAlgorithm::ALL {
            assert_eq!(a.as_str().parse::<ChecksumAlgorithm>().unwrap(), a);
            assert_eq!(
                ChecksumAlgorithm::from_header_name(a.header_name()),
                Some(a)
            );
        }
        assert_eq!(
            ChecksumAlgorithm::from_header_name("X-Amz-Checksum-CRC32C"),
            Some(ChecksumAlgorithm::Crc32c)
        );
        assert!(ChecksumAlgorithm::from_header_name("x-amz-checksum-md5").is_none());
        assert!("md5".parse::<ChecksumAlgorithm>().is_err());
        let c = ObjectChecksum {
            algorithm: ChecksumAlgorithm::Sha1,
            kind: ChecksumType::Composite,
            value: "abc=-3".into(),
        };
        assert_eq!(ObjectChecksum::decode(&c.encode()), Some(c));
    }

    #[test]
    fn combined_crcs_equal_the_crc_of_the_whole() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for a in [
            ChecksumAlgorithm::Crc32,
            ChecksumAlgorithm::Crc32c,
            ChecksumAlgorithm::Crc64Nvme,
        ] {
            let parts: Vec<(Vec<u8>, u64)> = data
                .chunks(30_000)
                .map(|c| {
                    let mut h = Hasher::new(a);
                    h.update(c);
                    (h.finish(), c.len() as u64)
                })
                .collect();
            assert_eq!(
                combine_full(a, &parts).unwrap(),
                a.checksum_of(&data),
                "{a:?}"
            );
        }
        assert!(combine_full(ChecksumAlgorithm::Sha256, &[]).is_none());
    }

    #[test]
    fn verify_compares_expected_and_late_values() {
        let a = ChecksumAlgorithm::Crc32;
        let good = a.checksum_of(b"x");
        assert!(ChecksumRequest::expecting(a, good.clone())
            .verify(&good)
            .is_ok());
        let e = ChecksumRequest::expecting(a, "AAAAAA==")
            .verify(&good)
            .unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::BadDigest);
        assert_eq!(
            e.message,
            "The CRC32 you specified did not match the calculated checksum."
        );
        let late = LateChecksum::new();
        let r = ChecksumRequest {
            late: Some(late.clone()),
            ..ChecksumRequest::new(a)
        };
        assert_eq!(
            r.verify(&good).unwrap_err().code,
            crate::ErrorCode::InvalidRequest
        );
        late.set(good.clone());
        assert!(r.verify(&good).is_ok());
        assert!(check_value(a, &good).is_ok());
        assert!(check_value(a, "AAAA").is_err());
    }
}
