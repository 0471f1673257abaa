//! Object metadata beyond what `stat` gives: ETag, content type and user
//! metadata, stored in one extended attribute, only when there is any.
//!
//! Reading an xattr costs a syscall (and an open, for HEAD). So an object that
//! has the attribute is marked with the sticky bit in its mode, which `stat`
//! returns for free and Linux ignores on regular files; objects without the
//! bit (including every file written by plain POSIX tools) need no xattr read.

use crate::fscalls::{self, fgetxattr, fsetxattr};
use crate::{s3err, ObjectInfo, PutOptions, Result};
use rustix::fs::{Stat, XattrFlags};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// `getxattrat(2)`: the same number on every architecture (added in 6.13).
const SYS_GETXATTRAT: libc::c_long = 464;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub(crate) const XATTR_NAME: &str = "user.s3hpc.meta";
/// The mode bit that says "this object has an xattr".
pub(crate) const META_BIT: u32 = libc::S_ISVTX;
/// S3's limit on user metadata (names and values together).
pub const MAX_USER_METADATA: usize = 2048;
const FORMAT_VERSION: u8 = 1;
/// MD5 of zero bytes: the ETag of every empty object.
pub(crate) const EMPTY_MD5: &str = "\"d41d8cd98f00b204e9800998ecf8427e\"";

/// What the xattr holds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct StoredMeta {
    pub etag: Option<String>,
    pub content_type: Option<String>,
    pub metadata: BTreeMap<String, String>,
    pub checksum: Option<crate::ObjectChecksum>,
    /// Object tags. Encoded after the metadata pairs only when there are
    /// any, so attributes written before tags existed decode unchanged.
    pub tags: BTreeMap<String, String>,
    /// A multipart object's part boundaries (and part checksums), kept at
    /// completion for GET/HEAD with `partNumber` and GetObjectAttributes.
    pub parts: Option<crate::parts::PartsRecord>,
    /// Standard headers (Cache-Control, ...), one record each when set.
    pub headers: crate::ObjectHeaders,
    /// The permissions a write gives its object (`PutOptions::access`):
    /// set on the temporary before it is published, never stored with the
    /// object; kept in a multipart upload's info until completion.
    pub access: Option<crate::PermissionChange>,
    /// The object's version id in a versioned bucket (None: `null`).
    pub version_id: Option<String>,
    /// Object lock: the version's retention and legal hold.
    pub retention: Option<crate::Retention>,
    pub legal_hold: Option<bool>,
}

/// S3's limits on object tags.
pub const MAX_TAGS: usize = 10;
const MAX_TAG_KEY: usize = 128;
const MAX_TAG_VALUE: usize = 256;

/// Checks a tag set against S3's limits (count, key and value lengths in
/// characters, no empty key).
pub fn validate_tags(tags: &BTreeMap<String, String>) -> Result<()> {
    validate_tag_set(tags, MAX_TAGS, "an object")
}

/// S3's rules for a tag set of at most `max` tags on `what` (an object
/// has 10, a bucket 50).
pub fn validate_tag_set(tags: &BTreeMap<String, String>, max: usize, what: &str) -> Result<()> {
    if tags.len() > max {
        return Err(s3err!(
            InvalidTag,
            "{} tags given; {what} can have at most {max}",
            tags.len()
        ));
    }
    for (k, v) in tags {
        if k.is_empty() || k.chars().count() > MAX_TAG_KEY {
            return Err(s3err!(
                InvalidTag,
                "tag key {k:?} must be 1 to {MAX_TAG_KEY} characters"
            ));
        }
        if v.chars().count() > MAX_TAG_VALUE {
            return Err(s3err!(
                InvalidTag,
                "the value of tag {k:?} is longer than {MAX_TAG_VALUE} characters"
            ));
        }
    }
    Ok(())
}

/// Fields added after format 1 follow the pairs as `tag, length-prefixed
/// bytes` records; a reader skips tags it does not know.
const TAG_CHECKSUM: u8 = 1;
/// An object tag: its key, and its value in the record that follows.
const TAG_TAG_KEY: u8 = 2;
const TAG_TAG_VALUE: u8 = 3;
/// A multipart object's parts (`parts::PartsRecord`).
const TAG_PARTS: u8 = 4;
/// A multipart upload's requested permissions (`PermissionChange::encode`).
const TAG_ACCESS: u8 = 10;
/// The version id (docs/src/design/versioning.md).
const TAG_VERSION: u8 = 11;
/// Object lock: the retention (`MODE MILLIS`) and the legal hold (`ON`, `OFF`).
const TAG_RETENTION: u8 = 12;
const TAG_LEGAL_HOLD: u8 = 13;
/// The standard headers, one record each (the value as sent).
const HEADER_TAGS: [(u8, &str); 5] = [
    (5, "cache-control"),
    (6, "content-disposition"),
    (7, "content-encoding"),
    (8, "content-language"),
    (9, "expires"),
];
/// The five standard headers together, in bytes: with S3's 2 KiB of user
/// metadata, 10 tags and the content type the attribute stays within
/// [`ATTR_MAX`].
pub const MAX_STANDARD_HEADERS: usize = 2048;
/// The largest attribute this engine writes, and its read buffer.
const ATTR_MAX: usize = 16 << 10;

impl StoredMeta {
    pub fn from_put(opts: &PutOptions, etag: Option<String>) -> Result<StoredMeta> {
        let user: usize = opts.metadata.iter().map(|(k, v)| k.len() + v.len()).sum();
        if user > MAX_USER_METADATA {
            return Err(s3err!(
                MetadataTooLarge,
                "user metadata is {user} bytes; S3 allows at most {MAX_USER_METADATA}"
            ));
        }
        if opts.content_type.as_ref().is_some_and(|c| c.len() > 1024) {
            return Err(s3err!(
                InvalidArgument,
                "content type is longer than 1024 bytes"
            ));
        }
        validate_tags(&opts.tags)?;
        let headers: usize = opts.headers.iter().map(|(_, v)| v.len()).sum();
        if headers > MAX_STANDARD_HEADERS {
            return Err(s3err!(
                InvalidArgument,
                "Cache-Control, Content-Disposition, Content-Encoding, Content-Language and \
                 Expires are {headers} bytes together; at most {MAX_STANDARD_HEADERS} are stored"
            ));
        }
        Ok(StoredMeta {
            etag,
            content_type: opts.content_type.clone(),
            metadata: opts.metadata.clone(),
            checksum: None,
            tags: opts.tags.clone(),
            parts: None,
            headers: opts.headers.clone(),
            access: opts.access.clone(),
            version_id: None,
            retention: opts.retention,
            legal_hold: opts.legal_hold,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.etag.is_none()
            && self.content_type.is_none()
            && self.metadata.is_empty()
            && self.checksum.is_none()
            && self.tags.is_empty()
            && self.parts.is_none()
            && self.headers.is_empty()
            && self.access.is_none()
            && self.version_id.is_none()
            && self.retention.is_none()
            && self.legal_hold.is_none()
    }

    /// Length-prefixed fields: version, etag, content type, then pairs.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![FORMAT_VERSION];
        put_opt(&mut out, self.etag.as_deref());
        put_opt(&mut out, self.content_type.as_deref());
        out.extend_from_slice(&(self.metadata.len() as u16).to_le_bytes());
        for (k, v) in &self.metadata {
            put_str(&mut out, k);
            put_str(&mut out, v);
        }
        if let Some(c) = &self.checksum {
            out.push(TAG_CHECKSUM);
            put_str(&mut out, &c.encode());
        }
        // Each tag as two records: its key, then its value.
        for (k, v) in &self.tags {
            out.push(TAG_TAG_KEY);
            put_str(&mut out, k);
            out.push(TAG_TAG_VALUE);
            put_str(&mut out, v);
        }
        if let Some(p) = &self.parts {
            out.push(TAG_PARTS);
            put_str(&mut out, &p.encode());
        }
        for (name, v) in self.headers.iter() {
            if let Some((tag, _)) = HEADER_TAGS.iter().find(|(_, n)| *n == name) {
                out.push(*tag);
                put_str(&mut out, v);
            }
        }
        if let Some(a) = &self.access {
            out.push(TAG_ACCESS);
            put_str(&mut out, &a.encode());
        }
        if let Some(v) = &self.version_id {
            out.push(TAG_VERSION);
            put_str(&mut out, v);
        }
        if let Some(r) = &self.retention {
            out.push(TAG_RETENTION);
            put_str(&mut out, &r.encode());
        }
        if let Some(h) = self.legal_hold {
            out.push(TAG_LEGAL_HOLD);
            put_str(&mut out, if h { "ON" } else { "OFF" });
        }
        out
    }

    /// Decodes what [`encode`](Self::encode) wrote. A damaged attribute reads
    /// as no metadata rather than failing the object.
    pub fn decode(buf: &[u8]) -> StoredMeta {
        Self::try_decode(buf).unwrap_or_default()
    }

    fn try_decode(buf: &[u8]) -> Option<StoredMeta> {
        let mut r = Reader { buf, pos: 0 };
        if r.take(1)?[0] != FORMAT_VERSION {
            return None;
        }
        let etag = r.opt()?;
        let content_type = r.opt()?;
        let n = u16::from_le_bytes(r.take(2)?.try_into().ok()?);
        let mut metadata = BTreeMap::new();
        for _ in 0..n {
            let k = r.string()?;
            let v = r.string()?;
            metadata.insert(k, v);
        }
        let mut checksum = None;
        let mut parts = None;
        let mut tags = BTreeMap::new();
        let mut headers = crate::ObjectHeaders::default();
        let mut tag_key = None;
        let mut access = None;
        let mut version_id = None;
        let mut retention = None;
        let mut legal_hold = None;
        while r.pos < buf.len() {
            let tag = r.take(1)?[0];
            let value = r.string()?;
            if tag == TAG_CHECKSUM {
                checksum = crate::ObjectChecksum::decode(&value);
            } else if tag == TAG_TAG_KEY {
                tag_key = Some(value);
            } else if tag == TAG_TAG_VALUE {
                tags.insert(tag_key.take()?, value);
            } else if tag == TAG_PARTS {
                parts = crate::parts::PartsRecord::decode(&value);
            } else if tag == TAG_ACCESS {
                access = crate::PermissionChange::decode(&value);
            } else if tag == TAG_VERSION {
                version_id = Some(value);
            } else if tag == TAG_RETENTION {
                retention = crate::Retention::decode(&value);
            } else if tag == TAG_LEGAL_HOLD {
                legal_hold = Some(value == "ON");
            } else if let Some((_, name)) = HEADER_TAGS.iter().find(|(t, _)| *t == tag) {
                if let Some(field) = headers.field_mut(name) {
                    *field = Some(value);
                }
            }
        }
        Some(StoredMeta {
            etag,
            content_type,
            metadata,
            checksum,
            tags,
            parts,
            headers,
            access,
            version_id,
            retention,
            legal_hold,
        })
    }

    pub fn write_to(&self, fd: impl AsFd) -> std::io::Result<()> {
        fsetxattr(fd, XATTR_NAME, &self.encode(), XattrFlags::empty())?;
        Ok(())
    }

    /// Reads the attribute of `name` in directory `dir` without opening the
    /// file (`getxattrat`, Linux 6.13+; no symlink is followed). Returns None
    /// where the kernel lacks the call; the caller then opens the file.
    pub fn read_at(dir: BorrowedFd<'_>, name: &str) -> Option<std::io::Result<StoredMeta>> {
        static UNSUPPORTED: AtomicBool = AtomicBool::new(false);
        if UNSUPPORTED.load(Ordering::Relaxed) {
            return None;
        }
        let name = CString::new(name).ok()?;
        let attr = CString::new(XATTR_NAME).ok()?;
        let mut buf = [0u8; ATTR_MAX];
        #[repr(C)]
        struct XattrArgs {
            value: u64,
            size: u32,
            flags: u32,
        }
        let mut args = XattrArgs {
            value: buf.as_mut_ptr() as u64,
            size: buf.len() as u32,
            flags: 0,
        };
        // SAFETY: every pointer is valid for the call's duration and `args`
        // describes `buf` exactly; the kernel writes at most `size` bytes.
        let n = unsafe {
            libc::syscall(
                SYS_GETXATTRAT,
                dir.as_raw_fd(),
                name.as_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
                attr.as_ptr(),
                &mut args as *mut XattrArgs,
                std::mem::size_of::<XattrArgs>(),
            )
        };
        let _ = fscalls::count(
            fscalls::Kind::Getxattr,
            if n >= 0 { Ok(()) } else { Err(()) },
        );
        if n >= 0 {
            return Some(Ok(StoredMeta::decode(&buf[..n as usize])));
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::ENOSYS) | Some(libc::EINVAL) | Some(libc::EPERM) => {
                UNSUPPORTED.store(true, Ordering::Relaxed);
                None
            }
            Some(libc::ENODATA) => Some(Ok(StoredMeta::default())),
            _ => Some(Err(err)),
        }
    }

    /// The attribute of an open object. Missing (ENODATA) is no metadata;
    /// any other failure is an error, never defaults: on a shared file
    /// system the file can be gone under the fd (ESTALE after another
    /// node replaced it), and defaults would answer a made-up ETag.
    pub fn read_from(fd: impl AsFd) -> std::io::Result<StoredMeta> {
        let mut buf = [0u8; ATTR_MAX];
        match fgetxattr(fd, XATTR_NAME, &mut buf[..]) {
            Ok(n) => Ok(StoredMeta::decode(&buf[..n])),
            Err(rustix::io::Errno::NODATA) => Ok(StoredMeta::default()),
            Err(e) => Err(e.into()),
        }
    }
}

pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u16).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_opt(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => {
            out.push(1);
            put_str(out, s);
        }
        None => out.push(0),
    }
}

pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }
    pub(crate) fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.buf.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    pub(crate) fn string(&mut self) -> Option<String> {
        let n = u16::from_le_bytes(self.take(2)?.try_into().ok()?) as usize;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
    fn opt(&mut self) -> Option<Option<String>> {
        match self.take(1)?[0] {
            0 => Some(None),
            1 => Some(Some(self.string()?)),
            _ => None,
        }
    }
}

/// An ETag that needs no hashing: a mix of inode, size and mtime, which change
/// whenever the object is replaced. It carries a `-` so that clients treat it
/// as opaque, as they do multipart ETags, and never compare it with an MD5.
#[allow(clippy::unnecessary_cast)] // stat field types differ between architectures
pub(crate) fn fast_etag(st: &Stat) -> String {
    let a = mix(st.st_ino ^ mix(st.st_size as u64));
    let b = mix(st.st_mtime as u64 ^ mix(st.st_mtime_nsec as u64 ^ a));
    let mut digest = [0u8; 16];
    digest[..8].copy_from_slice(&a.to_be_bytes());
    digest[8..].copy_from_slice(&b.to_be_bytes());
    quoted_hex(&digest, "-1")
}

/// `"<hex of bytes><suffix>"`, built without the formatting machinery: this
/// runs on every HEAD, GET and listed key.
pub(crate) fn quoted_hex(bytes: &[u8], suffix: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2 + suffix.len() + 2);
    s.push('"');
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s.push_str(suffix);
    s.push('"');
    s
}

/// splitmix64's finaliser: a cheap, well-spread 64-bit mix.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub(crate) fn md5_etag(digest: &[u8]) -> String {
    quoted_hex(digest, "")
}

pub(crate) fn mtime(st: &Stat) -> SystemTime {
    let secs = st.st_mtime;
    let nanos = st.st_mtime_nsec as u32;
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nanos)
    } else {
        UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()) + Duration::from_nanos(nanos as u64)
    }
}

/// Builds what HEAD returns from `stat` and, if present, the stored metadata.
pub(crate) fn object_info(key: &str, st: &Stat, stored: Option<StoredMeta>) -> ObjectInfo {
    let stored = stored.unwrap_or_default();
    let etag = stored.etag.unwrap_or_else(|| {
        if st.st_size == 0 {
            EMPTY_MD5.to_string()
        } else {
            fast_etag(st)
        }
    });
    ObjectInfo {
        key: key.to_string(),
        size: st.st_size as u64,
        last_modified: mtime(st),
        etag,
        content_type: stored.content_type,
        metadata: stored.metadata,
        checksum: stored.checksum,
        tag_count: stored.tags.len() as u16,
        headers: stored.headers,
        owner: Some(st.st_uid),
        version_id: stored.version_id,
        lock: crate::ObjectLockState {
            retention: stored.retention,
            legal_hold: stored.legal_hold,
        },
    }
}

pub(crate) fn has_meta(st: &Stat) -> bool {
    st.st_mode & META_BIT != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let mut m = StoredMeta {
            etag: Some("\"abc\"".into()),
            content_type: Some("text/plain".into()),
            ..Default::default()
        };
        m.metadata.insert("k".into(), "välue".into());
        assert_eq!(StoredMeta::decode(&m.encode()), m);
        m.checksum = Some(crate::ObjectChecksum {
            algorithm: crate::ChecksumAlgorithm::Crc64Nvme,
            kind: crate::ChecksumType::FullObject,
            value: "AAAAAAAAAAA=".into(),
        });
        assert_eq!(StoredMeta::decode(&m.encode()), m);
        m.tags.insert("project".into(), "x".into());
        m.tags.insert("owner".into(), "".into());
        assert_eq!(StoredMeta::decode(&m.encode()), m);
        m.headers.cache_control = Some("public, max-age=14400".into());
        m.headers.expires = Some("Wed, 21 Oct 2026 07:28:00 GMT".into());
        assert_eq!(StoredMeta::decode(&m.encode()), m);
        m.headers.content_disposition = Some("attachment; filename=\"a b\"".into());
        m.headers.content_encoding = Some("gzip".into());
        m.headers.content_language = Some("de".into());
        assert_eq!(StoredMeta::decode(&m.encode()), m);
        let empty = StoredMeta::default();
        assert_eq!(StoredMeta::decode(&empty.encode()), empty);
    }

    #[test]
    fn damaged_attribute_reads_as_empty() {
        let m = StoredMeta {
            etag: Some("\"abc\"".into()),
            ..Default::default()
        };
        let enc = m.encode();
        for cut in 0..enc.len() {
            assert_eq!(StoredMeta::decode(&enc[..cut]), StoredMeta::default());
        }
        assert_eq!(StoredMeta::decode(&[1, 7, 255, 255]), StoredMeta::default());
    }

    #[test]
    fn metadata_limit() {
        let mut opts = PutOptions::default();
        opts.metadata
            .insert("k".into(), "v".repeat(MAX_USER_METADATA));
        assert_eq!(
            StoredMeta::from_put(&opts, None).unwrap_err().code,
            crate::ErrorCode::MetadataTooLarge
        );
    }
}
