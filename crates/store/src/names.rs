//! Bucket-name rules and the key → path mapping.
//!
//! A key splits on `/` into directories plus a final file name. Every segment
//! must be a name the file system can hold: not empty, not `.` or `..`, no NUL,
//! at most NAME_MAX bytes; only the last may be empty (a key ending in `/`).
//! Names beginning with [`RESERVED_PREFIX`] belong to the engine
//! (temporaries, multipart staging, the hidden entries below) and are neither
//! listed nor addressable. Together with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS` this keeps every request inside its bucket.
//!
//! Two kinds of keys have no plain file of their own:
//! - a key ending in `/` (a "folder" marker, `a/b/`) is the file [`DIR_ENTRY`]
//!   inside directory `a/b`;
//! - a key that is also a directory (`a/b` while `a/b/c` exists) is the file
//!   [`SELF_ENTRY`] inside that directory. Every other key is a plain file.

use crate::{s3err, Result};

/// S3's limit on a key, in UTF-8 bytes.
pub const MAX_KEY_LEN: usize = 1024;
/// The longest file name Linux file systems accept.
pub const NAME_MAX: usize = 255;
/// Entries whose names start with this are the engine's own.
pub const RESERVED_PREFIX: &str = ".s3hpc";
/// The file holding the object whose key is a directory's path plus `/`.
pub(crate) const DIR_ENTRY: &str = ".s3hpc-dir";
/// The file holding the object whose key is a directory's path, when that
/// directory also holds other keys.
pub(crate) const SELF_ENTRY: &str = ".s3hpc-self";

/// Checks a bucket name against the S3 naming rules for general-purpose buckets.
pub fn validate_bucket_name(name: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(s3err!(
            InvalidBucketName,
            "bucket name {name:?} is invalid: {why}; use 3-63 characters of a-z, 0-9, '.' \
             and '-', starting and ending with a letter or digit"
        ))
    };
    let b = name.as_bytes();
    if b.len() < 3 || b.len() > 63 {
        return bad("it must be 3 to 63 characters long");
    }
    if !b
        .iter()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'.' || *c == b'-')
    {
        return bad("it contains a character other than a-z, 0-9, '.' or '-'");
    }
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    if !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return bad("it must start and end with a letter or digit");
    }
    if name.contains("..") {
        return bad("it contains two adjacent periods");
    }
    // Each dot-separated label must be a DNS label, which starts and ends
    // with a letter or digit (virtual-host addressing needs it).
    if name.contains(".-") || name.contains("-.") {
        return bad("a period is next to a hyphen");
    }
    if name.split('.').count() == 4 && name.split('.').all(|p| p.parse::<u8>().is_ok()) {
        return bad("it is formatted as an IP address");
    }
    for prefix in ["xn--", "sthree-", "amzn-s3-demo-"] {
        if name.starts_with(prefix) {
            return bad("it starts with a prefix S3 reserves");
        }
    }
    for suffix in ["-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"] {
        if name.ends_with(suffix) {
            return bad("it ends with a suffix S3 reserves");
        }
    }
    Ok(())
}

/// Checks that a key maps onto a path inside its bucket. A key may end in
/// `/` (then it is held by [`DIR_ENTRY`] in that directory), but no other
/// segment may be empty.
pub fn validate_key(key: &str) -> Result<()> {
    match key.strip_suffix('/') {
        Some(dir) if !dir.is_empty() => validate_path(key, dir),
        _ => validate_path(key, key),
    }
}

/// Checks that `path` (the key `key`, or its directory part) is a path of
/// non-empty segments inside the bucket.
pub(crate) fn validate_path(key: &str, path: &str) -> Result<()> {
    if key.is_empty() {
        return Err(s3err!(
            InvalidKey,
            "the object key is empty; give a non-empty key"
        ));
    }
    if key.len() > MAX_KEY_LEN {
        return Err(s3err!(
            KeyTooLong,
            "the key is {} bytes long; S3 keys are at most {MAX_KEY_LEN} bytes",
            key.len()
        ));
    }
    for segment in path.split('/') {
        validate_segment(key, segment)?;
    }
    Ok(())
}

fn validate_segment(key: &str, segment: &str) -> Result<()> {
    let shown = || shorten(key);
    if segment.is_empty() {
        return Err(s3err!(
            InvalidKey,
            "key {:?} has an empty path segment (a leading or double '/'); \
             keys map to file paths here, so remove the extra '/'",
            shown()
        ));
    }
    if segment == "." || segment == ".." {
        return Err(s3err!(
            InvalidKey,
            "key {:?} has a '{segment}' segment, which cannot be a file name; rename the key",
            shown()
        ));
    }
    if segment.contains('\0') {
        return Err(s3err!(InvalidKey, "key {:?} contains a NUL byte", shown()));
    }
    if segment.len() > NAME_MAX {
        return Err(s3err!(
            KeyTooLong,
            "key {:?} has a segment of {} bytes; each '/'-separated segment is at most \
             {NAME_MAX} bytes here",
            shown(),
            segment.len()
        ));
    }
    if segment.starts_with(RESERVED_PREFIX) {
        return Err(s3err!(
            InvalidKey,
            "key {:?} has a segment starting with {RESERVED_PREFIX:?}, which the engine reserves \
             for its own files",
            shown()
        ));
    }
    if crate::temp::is_temp(segment.as_bytes()) {
        return Err(s3err!(
            InvalidKey,
            "key {:?} has a segment of the form .NAME.{}..., which the engine reserves for its \
             temporary files",
            shown(),
            crate::temp::TEMP_MARK
        ));
    }
    Ok(())
}

/// A key cut short for error messages, so a hostile 1 MiB key cannot flood logs.
fn shorten(key: &str) -> String {
    const MAX: usize = 80;
    if key.len() <= MAX {
        return key.to_string();
    }
    let mut end = MAX;
    while !key.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &key[..end])
}

/// A validated key, split into the directory part (relative to the bucket,
/// maybe empty) and the final file name.
pub(crate) struct KeyPath<'a> {
    pub dir: &'a str,
    pub name: &'a str,
}

/// Where a validated key lives: a key ending in `/` is [`DIR_ENTRY`] in the
/// directory it names. (A key that turns out to be a directory is looked up
/// again as [`SELF_ENTRY`] inside it, on the miss path only.)
pub(crate) fn split_key(key: &str) -> KeyPath<'_> {
    if let Some(dir) = key.strip_suffix('/') {
        return KeyPath {
            dir,
            name: DIR_ENTRY,
        };
    }
    match key.rfind('/') {
        Some(i) => KeyPath {
            dir: &key[..i],
            name: &key[i + 1..],
        },
        None => KeyPath { dir: "", name: key },
    }
}

/// Whether a directory entry is the engine's own and must stay hidden.
pub(crate) fn is_reserved(name: &[u8]) -> bool {
    name.starts_with(RESERVED_PREFIX.as_bytes()) || crate::temp::is_temp(name)
}

/// The path of directory `dir` of `bucket`, relative to the data root (the
/// key of the directory-handle cache).
pub(crate) fn dir_rel(bucket: &str, dir: &str) -> String {
    if dir.is_empty() {
        bucket.to_string()
    } else {
        let mut s = String::with_capacity(bucket.len() + 1 + dir.len());
        s.push_str(bucket);
        s.push('/');
        s.push_str(dir);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn bucket_names() {
        for ok in ["abc", "my-bucket.1", "a".repeat(63).as_str(), "1-2"] {
            assert!(validate_bucket_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "ab",
            "Abc",
            "a_b",
            "-ab",
            "ab-",
            "a..b",
            "foo.-bar",
            "foo-.bar",
            "192.168.1.1",
            "xn--abc",
            "abc-s3alias",
            &"a".repeat(64),
            "a/b",
            "",
            "..",
        ] {
            let e = validate_bucket_name(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidBucketName, "{bad}");
        }
    }

    #[test]
    fn hostile_keys() {
        let long_seg = "x".repeat(256);
        let long_key = "a/".repeat(600);
        for (key, code) in [
            ("", ErrorCode::InvalidKey),
            ("..", ErrorCode::InvalidKey),
            ("../etc/passwd", ErrorCode::InvalidKey),
            ("a/../../b", ErrorCode::InvalidKey),
            ("./a", ErrorCode::InvalidKey),
            ("/abs", ErrorCode::InvalidKey),
            ("a//b", ErrorCode::InvalidKey),
            ("/", ErrorCode::InvalidKey),
            ("a//", ErrorCode::InvalidKey),
            ("a/.s3hpc-self", ErrorCode::InvalidKey),
            (".s3hpc-dir/", ErrorCode::InvalidKey),
            ("a\0b", ErrorCode::InvalidKey),
            (".s3hpc-tmp.x", ErrorCode::InvalidKey),
            ("a/.b.s3hpc-tmp-h-1-2", ErrorCode::InvalidKey),
            ("a/.s3hpc-uploads/x", ErrorCode::InvalidKey),
            (long_seg.as_str(), ErrorCode::KeyTooLong),
            (long_key.as_str(), ErrorCode::KeyTooLong),
        ] {
            assert_eq!(validate_key(key).unwrap_err().code, code, "{key:?}");
        }
        for ok in [
            "a",
            "a/b/c",
            "a/",
            "a/b/",
            ".hidden",
            ".foo.AbC123",
            "a/.foo.s3hpc-tmp",
            "a..b",
            "...",
            "ü/ß",
            &"x".repeat(255),
        ] {
            assert!(validate_key(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn split() {
        let k = split_key("a/b/c");
        assert_eq!((k.dir, k.name), ("a/b", "c"));
        let k = split_key("c");
        assert_eq!((k.dir, k.name), ("", "c"));
        let k = split_key("a/b/");
        assert_eq!((k.dir, k.name), ("a/b", DIR_ENTRY));
    }
}

/// Percent-encodes a key as S3 does for `encoding-type=url` and in
/// `x-amz-copy-source`: all but unreserved characters and `/`.
pub fn url_encode(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod url_tests {
    #[test]
    fn url_encoding() {
        assert_eq!(super::url_encode("a b/c+\u{1}é~"), "a%20b/c%2B%01%C3%A9~");
    }
}
