//! The S3 data model shared by the engine and every transport.

use std::collections::BTreeMap;
use std::io::Read;
use std::time::SystemTime;

/// A bucket as listed by ListBuckets.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BucketInfo {
    pub name: String,
    pub created: SystemTime,
    /// The uid owning the bucket's directory, where the engine read it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub owner: Option<u32>,
}

/// What HEAD returns about an object, and what listings carry per key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ObjectInfo {
    pub key: String,
    pub size: u64,
    pub last_modified: SystemTime,
    /// Quoted, as S3 sends it: `"9b2cf535f27731c974343645a3985328"`.
    pub etag: String,
    pub content_type: Option<String>,
    /// `x-amz-meta-*` pairs, names lower-cased and without the prefix.
    pub metadata: BTreeMap<String, String>,
    /// The checksum stored with the object, if it was written with one.
    pub checksum: Option<crate::ObjectChecksum>,
    /// How many tags the object has (`x-amz-tagging-count`); 0 for none.
    pub tag_count: u16,
    /// The standard headers stored with the object (protocol version 3).
    pub headers: ObjectHeaders,
    /// The uid owning the object's file, where the engine stat'ed it (HEAD,
    /// GET, listings: from the stat they make anyway); None from clients
    /// that cannot tell.
    #[cfg_attr(feature = "serde", serde(default))]
    pub owner: Option<u32>,
    /// The version id where the bucket has versioning (`null` for one
    /// written while it was suspended); None where it never had.
    #[cfg_attr(feature = "serde", serde(default))]
    pub version_id: Option<String>,
    /// The version's object lock (none outside buckets with object lock).
    /// The RPC protocol does not carry it yet.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub lock: crate::ObjectLockState,
}

impl ObjectInfo {
    /// What every listing gives of a key (name, size, time, ETag), the rest
    /// unknown: what a client learns from a ListObjects entry.
    pub fn new(key: String, size: u64, last_modified: SystemTime, etag: String) -> ObjectInfo {
        ObjectInfo {
            key,
            size,
            last_modified,
            etag,
            content_type: None,
            metadata: BTreeMap::new(),
            checksum: None,
            tag_count: 0,
            headers: ObjectHeaders::default(),
            owner: None,
            version_id: None,
            lock: Default::default(),
        }
    }
}

/// The standard HTTP headers S3 stores with an object and returns on GET
/// and HEAD, as the writer sent them. They are metadata in S3's sense: a
/// copy keeps them, a copy with new metadata (REPLACE) replaces them, a
/// multipart upload takes them at its creation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ObjectHeaders {
    pub cache_control: Option<String>,
    pub content_disposition: Option<String>,
    pub content_encoding: Option<String>,
    pub content_language: Option<String>,
    /// An HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`), as S3 returns it.
    pub expires: Option<String>,
}

impl ObjectHeaders {
    /// `(header name, value)` of each header that is set, in a fixed order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("cache-control", &self.cache_control),
            ("content-disposition", &self.content_disposition),
            ("content-encoding", &self.content_encoding),
            ("content-language", &self.content_language),
            ("expires", &self.expires),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.as_deref()?)))
    }

    /// The field a header name (lower-case) is kept in, if it is one of them.
    pub fn field_mut(&mut self, name: &str) -> Option<&mut Option<String>> {
        match name {
            "cache-control" => Some(&mut self.cache_control),
            "content-disposition" => Some(&mut self.content_disposition),
            "content-encoding" => Some(&mut self.content_encoding),
            "content-language" => Some(&mut self.content_language),
            "expires" => Some(&mut self.expires),
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

/// Options of a PUT beyond the body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PutOptions {
    pub content_type: Option<String>,
    pub metadata: BTreeMap<String, String>,
    /// A checksum to compute, store and (if a value is given) verify before
    /// the object becomes visible. None costs nothing.
    pub checksum: Option<crate::ChecksumRequest>,
    /// The body's MD5 as sent in Content-MD5: compared before the object
    /// becomes visible (BadDigest otherwise).
    pub content_md5: Option<[u8; 16]>,
    /// Object tags (`x-amz-tagging`), stored with the object. At most 10,
    /// keys up to 128 and values up to 256 characters, as in S3.
    pub tags: BTreeMap<String, String>,
    /// PutObject only: `If-None-Match: *` or `If-Match: ETAG`. CopyObject and
    /// CompleteMultipartUpload take their condition as an argument, and
    /// CreateMultipartUpload refuses one (S3 checks at completion).
    pub condition: WriteCondition,
    /// Standard headers to store and return on GET and HEAD (version 3).
    pub headers: ObjectHeaders,
    /// The permissions the new object gets (an ACL given with the write:
    /// `x-amz-acl`, `x-amz-grant-*`, libs3's `cannedAcl`), set on the
    /// temporary before it is published, so the object never appears with
    /// others and a refused change leaves any object it would replace as
    /// it was. None: a new file's mode (umask, the directory's default
    /// ACL). CreateMultipartUpload keeps it with the upload for its
    /// completion (RPC version 5).
    pub access: Option<crate::PermissionChange>,
    /// Object lock of the new version (`x-amz-object-lock-*`): only in a
    /// bucket with object lock, which otherwise gives its default retention.
    /// The RPC protocol does not carry them yet (its client refuses them).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub retention: Option<crate::Retention>,
    #[cfg_attr(feature = "serde", serde(skip))]
    pub legal_hold: Option<bool>,
}

/// The precondition of a write (PutObject, CopyObject's destination,
/// CompleteMultipartUpload), checked atomically with the write itself: two
/// conditional writers racing on one key never both succeed, whether they
/// are threads, processes or nodes sharing the file system (see
/// ARCHITECTURE.md, "Conditional writes").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum WriteCondition {
    /// Write whatever is there (an ordinary PUT; costs nothing extra).
    #[default]
    Always,
    /// `If-None-Match: *`: create only if no object has the key, else
    /// PreconditionFailed (412) and the existing object is untouched.
    IfNoneMatch,
    /// `If-Match: ETAG`: replace only if the current object's ETag is this
    /// one (quoted or not; `*` matches any object), else PreconditionFailed;
    /// NoSuchKey if there is no object.
    IfMatch(String),
    /// `If-None-Match: ETAG[, ETAG]`: write unless the current object's
    /// ETag is one of these (PreconditionFailed, and it is untouched); an
    /// absent key is created. Checked under the lock If-Match takes.
    IfNoneMatchEtag(String),
}

impl WriteCondition {
    pub fn is_always(&self) -> bool {
        matches!(self, WriteCondition::Always)
    }
}

/// The conditions of a DeleteObject (S3's `If-Match`,
/// `x-amz-if-match-last-modified-time`, `x-amz-if-match-size`, and the
/// `ETag`, `LastModifiedTime`, `Size` of a DeleteObjects entry): the object
/// is deleted only if every one given holds, checked atomically with the
/// delete (PreconditionFailed, 412, otherwise). A missing key is deleted
/// whatever the conditions, as in S3.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeleteCondition {
    /// The ETag the object must have (quotes optional; `*` any object).
    pub etag: Option<String>,
    /// Its last-modified time, to the second (what S3 dates carry).
    pub last_modified: Option<SystemTime>,
    /// Its size in bytes.
    pub size: Option<u64>,
    /// Not a condition: `x-amz-bypass-governance-retention`, which removes
    /// a version under GOVERNANCE retention. RPC deletes no versions, so
    /// it does not carry this.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub bypass_governance: bool,
}

impl DeleteCondition {
    /// No condition: an ordinary delete.
    pub fn is_none(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none() && self.size.is_none()
    }
}

/// The body of a PUT. A slice is written without an intermediate copy; a stream
/// is pulled through a bounded buffer until it ends (or `len` bytes, if given,
/// which is then checked: a short stream fails with IncompleteBody).
pub enum PutBody<'a> {
    Bytes(&'a [u8]),
    Stream {
        reader: &'a mut dyn Read,
        len: Option<u64>,
    },
}

/// A byte range as in the HTTP Range header: `bytes=first-last`, `bytes=first-`
/// or `bytes=-suffix_len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ByteRange {
    /// Inclusive on both ends; `last: None` means to the end.
    FromTo { first: u64, last: Option<u64> },
    /// The last `n` bytes.
    Suffix(u64),
}

impl ByteRange {
    /// Resolves the range against an object size into `(offset, length)`, or
    /// InvalidRange when it starts past the end, as S3 does.
    pub fn resolve(self, size: u64) -> crate::Result<(u64, u64)> {
        match self {
            ByteRange::FromTo { first, last } => {
                if first >= size {
                    return Err(crate::s3err!(
                        InvalidRange,
                        "range starts at byte {first} but the object has {size} bytes"
                    ));
                }
                let last = last.map_or(size - 1, |l| l.min(size - 1));
                if last < first {
                    return Err(crate::s3err!(
                        InvalidRange,
                        "range end {last} is before its start {first}"
                    ));
                }
                Ok((first, last - first + 1))
            }
            ByteRange::Suffix(n) => {
                if n == 0 {
                    return Err(crate::s3err!(
                        InvalidRange,
                        "a suffix range of 0 bytes is empty"
                    ));
                }
                let n = n.min(size);
                Ok((size - n, n))
            }
        }
    }
}

impl ByteRange {
    /// InvalidRange unless the range lies wholly inside an object of
    /// `size` bytes: UploadPartCopy's `x-amz-copy-source-range` may not
    /// reach past the source's end, as a GET's Range may.
    pub fn check_within(self, size: u64) -> crate::Result<()> {
        match self {
            ByteRange::FromTo {
                first,
                last: Some(last),
            } if last >= size || first >= size => Err(crate::s3err!(
                InvalidRange,
                "the range bytes={first}-{last} reaches past the source's end: it has {size} \
                 bytes, so the last byte a copy range can name is {}",
                size.saturating_sub(1)
            )),
            r => r.resolve(size).map(drop),
        }
    }
}

/// Parameters of ListObjects (v1 and v2 map onto the same request).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ListRequest {
    pub prefix: String,
    pub delimiter: Option<String>,
    /// v1 `marker` or v2 `start-after`: only keys strictly after it.
    pub start_after: Option<String>,
    /// v2 continuation token, as returned in `ListPage::next_token`.
    pub continuation_token: Option<String>,
    /// Capped at 1000; 0 means the default of 1000.
    pub max_keys: usize,
}

/// One page of a listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ListPage {
    pub objects: Vec<ObjectInfo>,
    pub common_prefixes: Vec<String>,
    pub is_truncated: bool,
    /// Pass back as `continuation_token` to get the next page (v2), or use the
    /// last key or prefix as the v1 marker.
    pub next_token: Option<String>,
}

/// One part of a multipart upload.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PartInfo {
    pub part_number: u32,
    pub size: u64,
    pub etag: String,
    pub last_modified: SystemTime,
    /// The part's checksum, if the upload has a checksum algorithm.
    pub checksum: Option<crate::ObjectChecksum>,
}

/// A multipart upload in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UploadInfo {
    pub key: String,
    pub upload_id: String,
    pub initiated: SystemTime,
    /// The uid of whoever initiated it (its info file's owner).
    #[cfg_attr(feature = "serde", serde(default))]
    pub owner: Option<u32>,
}

/// How ETags are produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EtagPolicy {
    /// MD5 of the content, computed while streaming and stored with the object:
    /// what S3 clients expect.
    #[default]
    Md5,
    /// No hashing: derived from inode, size and mtime. Always contains a `-`,
    /// so clients treat it as opaque (as for multipart ETags) and never compare
    /// it with a content MD5.
    Fast,
}

/// Whether a PUT reaches stable storage before it is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// fsync the data and the directory entry before acknowledging.
    #[default]
    Fsync,
    /// Trust the page cache, as IOR without `-e`.
    None,
}

impl std::str::FromStr for EtagPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "md5" => Ok(EtagPolicy::Md5),
            "fast" => Ok(EtagPolicy::Fast),
            _ => Err(format!("unknown ETag policy {s:?}: use md5 or fast")),
        }
    }
}

impl std::str::FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fsync" => Ok(Durability::Fsync),
            "none" => Ok(Durability::None),
            _ => Err(format!("unknown durability {s:?}: use fsync or none")),
        }
    }
}

impl EtagPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            EtagPolicy::Md5 => "md5",
            EtagPolicy::Fast => "fast",
        }
    }
}

impl Durability {
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Fsync => "fsync",
            Durability::None => "none",
        }
    }
}

/// Engine settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreConfig {
    pub etag: EtagPolicy,
    pub durability: Durability,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_ranges_lie_within_the_source() {
        let r = |first, last| ByteRange::FromTo {
            first,
            last: Some(last),
        };
        assert!(r(0, 4).check_within(5).is_ok());
        assert!(r(4, 4).check_within(5).is_ok());
        // s3-tests test_multipart_copy_invalid_range: 0-21 of 5 bytes.
        let e = r(0, 21).check_within(5).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::InvalidRange);
        assert_eq!(
            r(5, 6).check_within(5).unwrap_err().code,
            crate::ErrorCode::InvalidRange
        );
        // A GET's range may reach past the end.
        assert_eq!(r(0, 21).resolve(5).unwrap(), (0, 5));
    }
}
