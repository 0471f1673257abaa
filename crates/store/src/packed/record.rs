//! One record of a pack file: what a PUT, a DELETE or a move to a plain
//! file appends. A record is written with one `pwritev` and never changed;
//! a reader trusts it only when both of its checksums hold.
//!
//! ```text
//!  0  magic "S3PK"           16 data length (u64)
//!  4  format (1) | copies<<4 24 time stamp, ns since the epoch (u64)
//!  5  kind                   32 CRC32C of the data
//!  6  key length (u16)       36 CRC32C of bytes 0..36, the key and the metadata
//!  8  metadata length (u32)  40 key, metadata (StoredMeta's encoding), data
//! 12  writer's uid (u32)
//! ```
//!
//! All integers little-endian. The header's checksum covers everything an
//! index entry is made of, so a scan that skips the data still never
//! indexes a damaged name; the data's checksum is checked by every GET.
//! `copies` counts the compactions that copied the record (saturating at
//! 15): a copy wins over the record it was copied from, so every reader
//! moves on to it and lets the old pack go.

use crc_fast::CrcAlgorithm::Crc32Iscsi;

pub(crate) const MAGIC: &[u8; 4] = b"S3PK";
const FORMAT: u8 = 1;
/// The most compactions a record's header counts.
const MAX_COPIES: u8 = 15;
pub(crate) const HEADER: usize = 40;

/// What a record says of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The object, its data in the record.
    Object = 1,
    /// The key was deleted.
    Tombstone = 2,
    /// The object is the plain file at the key's path (too large to pack,
    /// or unpacked): the record only orders it among the key's records.
    Plain = 3,
    /// The pack's last record (no key): its writer went on to a new pack,
    /// so a compaction may rewrite this one.
    Seal = 4,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        match v {
            1 => Some(Kind::Object),
            2 => Some(Kind::Tombstone),
            3 => Some(Kind::Plain),
            4 => Some(Kind::Seal),
            _ => None,
        }
    }
}

/// A record's header, as parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    pub kind: Kind,
    pub key_len: usize,
    pub meta_len: usize,
    pub data_len: u64,
    pub stamp: u64,
    pub uid: u32,
    pub data_crc: u32,
    /// How many compactions copied it.
    pub copies: u8,
}

impl Header {
    /// The whole record's length.
    pub fn len(&self) -> u64 {
        (HEADER + self.key_len + self.meta_len) as u64 + self.data_len
    }

    /// Where the data starts, from the record's start.
    pub fn data_at(&self) -> u64 {
        (HEADER + self.key_len + self.meta_len) as u64
    }
}

pub(crate) fn crc(data: &[u8]) -> u32 {
    crc_fast::checksum(Crc32Iscsi, data) as u32
}

/// The bytes of one record.
pub(crate) fn encode(
    kind: Kind,
    key: &str,
    meta: &[u8],
    data: &[u8],
    stamp: u64,
    uid: u32,
) -> Vec<u8> {
    let mut out = head(kind, key, meta, stamp, uid, data.len(), crc(data));
    out.extend_from_slice(data);
    out
}

/// A record's bytes before its data (header, key, metadata), for data of
/// `data_len` bytes whose CRC32C is `data_crc`: written with the data in
/// one `pwritev`, the data never copied.
pub(crate) fn head(
    kind: Kind,
    key: &str,
    meta: &[u8],
    stamp: u64,
    uid: u32,
    data_len: usize,
    data_crc: u32,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + key.len() + meta.len());
    out.extend_from_slice(MAGIC);
    out.push(FORMAT);
    out.push(kind as u8);
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    out.extend_from_slice(&uid.to_le_bytes());
    out.extend_from_slice(&(data_len as u64).to_le_bytes());
    out.extend_from_slice(&stamp.to_le_bytes());
    out.extend_from_slice(&data_crc.to_le_bytes());
    let mut head = crc_fast::Digest::new(Crc32Iscsi);
    head.update(&out[..36]);
    head.update(key.as_bytes());
    head.update(meta);
    out.extend_from_slice(&(head.finalize() as u32).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(meta);
    out
}

/// A compaction's copy of the whole record `bytes`: the same record, its
/// copy count one higher. None if `bytes` is not a whole record.
pub(crate) fn copied(bytes: &[u8]) -> Option<Vec<u8>> {
    let Parsed::Record { header, .. } = parse(bytes) else {
        return None;
    };
    let mut out = bytes.to_vec();
    out[4] = FORMAT | (header.copies.saturating_add(1).min(MAX_COPIES) << 4);
    let named = header.data_at() as usize;
    let mut head = crc_fast::Digest::new(Crc32Iscsi);
    head.update(&out[..36]);
    head.update(&out[HEADER..named]);
    out[36..40].copy_from_slice(&(head.finalize() as u32).to_le_bytes());
    Some(out)
}

/// What a scan finds at one offset.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed<'a> {
    /// A whole header with its key and metadata.
    Record {
        header: Header,
        key: &'a str,
        meta: &'a [u8],
    },
    /// The buffer ends before the header, key and metadata do: read more
    /// (or, at the file's end, a record still being written, or one a
    /// killed writer left half done).
    Short { need: usize },
    /// Not a record: damage, or a writer's crash left other bytes.
    Damaged,
}

/// Parses the record starting at `buf[0]`, if `buf` holds its header, key
/// and metadata.
pub(crate) fn parse(buf: &[u8]) -> Parsed<'_> {
    if buf.len() < HEADER {
        // A partial header is checked as far as it goes: zeros a crash
        // left, or other bytes, are damage, not a record still coming.
        let n = buf.len().min(4);
        if buf[..n] != MAGIC[..n] {
            return Parsed::Damaged;
        }
        return Parsed::Short { need: HEADER };
    }
    if &buf[..4] != MAGIC || buf[4] & 0x0f != FORMAT {
        return Parsed::Damaged;
    }
    let Some(kind) = Kind::from_u8(buf[5]) else {
        return Parsed::Damaged;
    };
    let u32_at = |i: usize| u32::from_le_bytes(buf[i..i + 4].try_into().unwrap());
    let u64_at = |i: usize| u64::from_le_bytes(buf[i..i + 8].try_into().unwrap());
    let key_len = u16::from_le_bytes([buf[6], buf[7]]) as usize;
    let meta_len = u32_at(8) as usize;
    // Bounds no record of this engine passes (a pack's objects are at
    // most PACK_MAX_LIMIT), so a crafted header cannot make a reader
    // allocate or overflow.
    if meta_len > 1 << 20 || u64_at(16) > 1 << 30 {
        return Parsed::Damaged;
    }
    let need = HEADER + key_len + meta_len;
    if buf.len() < need {
        return Parsed::Short { need };
    }
    let mut head = crc_fast::Digest::new(Crc32Iscsi);
    head.update(&buf[..36]);
    head.update(&buf[HEADER..need]);
    if head.finalize() as u32 != u32_at(36) {
        return Parsed::Damaged;
    }
    let Ok(key) = std::str::from_utf8(&buf[HEADER..HEADER + key_len]) else {
        return Parsed::Damaged;
    };
    Parsed::Record {
        header: Header {
            kind,
            key_len,
            meta_len,
            data_len: u64_at(16),
            stamp: u64_at(24),
            uid: u32_at(12),
            data_crc: u32_at(32),
            copies: buf[4] >> 4,
        },
        key,
        meta: &buf[HEADER + key_len..need],
    }
}

/// Where the next record may start after damage at `buf[0]`: the next
/// magic whose header parses, or None if `buf` holds none.
pub(crate) fn resync(buf: &[u8]) -> Option<usize> {
    let mut from = 1;
    while let Some(i) = buf[from..].windows(4).position(|w| w == MAGIC) {
        let at = from + i;
        match parse(&buf[at..]) {
            Parsed::Record { .. } | Parsed::Short { .. } => return Some(at),
            Parsed::Damaged => from = at + 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let rec = encode(Kind::Object, "a/b", b"meta", b"hello", 42, 1000);
        match parse(&rec) {
            Parsed::Record { header, key, meta } => {
                assert_eq!(key, "a/b");
                assert_eq!(meta, b"meta");
                assert_eq!(header.kind, Kind::Object);
                assert_eq!(header.stamp, 42);
                assert_eq!(header.uid, 1000);
                assert_eq!(header.len(), rec.len() as u64);
                let data = &rec[header.data_at() as usize..];
                assert_eq!(data, b"hello");
                assert_eq!(crc(data), header.data_crc);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_cut_is_short_and_every_flip_is_caught() {
        let rec = encode(Kind::Object, "key", b"m", b"data", 7, 0);
        let head = HEADER + 3 + 1;
        for cut in 0..head {
            assert!(
                matches!(parse(&rec[..cut]), Parsed::Short { .. }),
                "cut at {cut}"
            );
        }
        for i in 0..head {
            let mut bad = rec.clone();
            bad[i] ^= 0x10;
            assert!(
                !matches!(parse(&bad), Parsed::Record { .. }),
                "flip at {i} parsed"
            );
        }
        // A flip in the data parses (the header holds) but fails its CRC.
        let mut bad = rec.clone();
        *bad.last_mut().unwrap() ^= 1;
        let Parsed::Record { header, .. } = parse(&bad) else {
            panic!()
        };
        assert_ne!(crc(&bad[header.data_at() as usize..]), header.data_crc);
    }

    #[test]
    fn a_copy_is_the_same_record_counted_once_more() {
        let rec = encode(Kind::Object, "k", b"meta", b"data", 9, 5);
        let mut bytes = rec.clone();
        for n in 1..=20u8 {
            bytes = copied(&bytes).unwrap();
            let (
                Parsed::Record { header: a, .. },
                Parsed::Record {
                    header: b,
                    key,
                    meta,
                },
            ) = (parse(&rec), parse(&bytes))
            else {
                panic!("copy {n} does not parse")
            };
            assert_eq!((key, meta), ("k", &b"meta"[..]));
            assert_eq!(b.copies, n.min(MAX_COPIES));
            assert_eq!(Header { copies: 0, ..b }, a);
            assert_eq!(&bytes[HEADER + 5..], b"data");
        }
        assert_eq!(copied(&rec[..30]), None);
    }

    #[test]
    fn zeros_are_damage_and_resync_finds_the_next_record() {
        assert_eq!(parse(&[0u8; 3]), Parsed::Damaged);
        assert_eq!(parse(&[0u8; 64]), Parsed::Damaged);
        let mut buf = vec![0u8; 10];
        buf.extend(encode(Kind::Tombstone, "k", b"", b"", 1, 0));
        assert_eq!(resync(&buf), Some(10));
        assert_eq!(resync(&[0u8; 100]), None);
    }
}
