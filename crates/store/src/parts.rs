//! The parts of a completed multipart object: kept at completion in the
//! object's metadata attribute (part sizes as runs of equal sizes, and the
//! parts' checksums when the upload had an algorithm), so that GET and HEAD
//! with `partNumber` answer a part's bytes and GetObjectAttributes lists
//! the parts, as S3 does.
//!
//! The record is bounded so the attribute stays small: an upload whose
//! parts come in more than [`MAX_RUNS`] runs of one size, or whose part
//! checksums take more than [`MAX_SUMS_BYTES`], keeps no boundaries (or no
//! part checksums); `partNumber` then answers that they were not kept.

use crate::meta::StoredMeta;
use crate::*;
use std::io::{Seek, SeekFrom};

/// Most runs of equal part sizes kept (uploads cut by SDKs have 1 or 2).
const MAX_RUNS: usize = 32;
/// Most bytes of part checksums kept (about 30 SHA-256 or 120 CRC32 parts).
const MAX_SUMS_BYTES: usize = 1536;
/// S3's largest part number.
const MAX_PART_NUMBER: u32 = 10_000;

/// Part sizes and (optionally) part checksums of a multipart object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartsRecord {
    /// `(size, how many parts in a row have it)`.
    runs: Vec<(u64, u32)>,
    /// Each part's checksum (base64), in part order; empty if not kept.
    sums: Vec<String>,
}

/// One part of a completed multipart object.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ObjectPart {
    /// 1-based, as listed at completion (renumbered 1..=N in order).
    pub part_number: u32,
    /// Where the part's bytes start in the object.
    pub offset: u64,
    pub size: u64,
    /// The part's checksum, of the object's algorithm and type, if kept.
    pub checksum: Option<ObjectChecksum>,
}

impl PartsRecord {
    /// The record of parts of these sizes and checksums; None when it
    /// would not be small (see the module's note).
    pub fn new(sizes: &[u64], sums: Vec<String>) -> Option<PartsRecord> {
        let mut runs: Vec<(u64, u32)> = Vec::new();
        for &size in sizes {
            match runs.last_mut() {
                Some((s, n)) if *s == size => *n += 1,
                _ => runs.push((size, 1)),
            }
        }
        if runs.len() > MAX_RUNS {
            return None;
        }
        let sums_bytes: usize = sums.iter().map(|s| s.len() + 1).sum();
        let keep_sums = sums.len() == sizes.len() && sums_bytes <= MAX_SUMS_BYTES;
        Some(PartsRecord {
            runs,
            sums: if keep_sums { sums } else { Vec::new() },
        })
    }

    /// `SIZE*COUNT SIZE*COUNT...|SUM SUM...` (base64 has neither `|` nor
    /// a space).
    pub fn encode(&self) -> String {
        let runs: Vec<String> = self.runs.iter().map(|(s, n)| format!("{s}*{n}")).collect();
        format!("{}|{}", runs.join(" "), self.sums.join(" "))
    }

    pub fn decode(s: &str) -> Option<PartsRecord> {
        let (runs, sums) = s.split_once('|')?;
        let runs = runs
            .split(' ')
            .map(|r| {
                let (size, n) = r.split_once('*')?;
                Some((size.parse().ok()?, n.parse().ok()?))
            })
            .collect::<Option<Vec<(u64, u32)>>>()?;
        let sums: Vec<String> = sums
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let record = PartsRecord { runs, sums };
        (record.sums.is_empty() || record.sums.len() as u64 == record.count() as u64)
            .then_some(record)
    }

    pub fn count(&self) -> u32 {
        self.runs.iter().map(|(_, n)| n).sum()
    }

    /// Part `n` (1-based): its offset, size and kept checksum value.
    fn part(&self, n: u32) -> Option<(u64, u64, Option<&str>)> {
        let mut offset = 0;
        let mut first = 1;
        for &(size, count) in &self.runs {
            if n < first + count {
                let sum = self.sums.get(n as usize - 1).map(String::as_str);
                return Some((offset + (n - first) as u64 * size, size, sum));
            }
            offset += size * count as u64;
            first += count;
        }
        None
    }

    fn object_part(&self, n: u32, whole: Option<&ObjectChecksum>) -> Option<ObjectPart> {
        let (offset, size, sum) = self.part(n)?;
        Some(ObjectPart {
            part_number: n,
            offset,
            size,
            checksum: sum.zip(whole).map(|(v, w)| ObjectChecksum {
                algorithm: w.algorithm,
                kind: w.kind,
                value: v.to_string(),
            }),
        })
    }
}

/// What GET or HEAD with `partNumber` answers.
pub struct PartGet<T> {
    /// The object's info (its ETag, metadata) and the part's bytes or size.
    pub got: T,
    pub part: ObjectPart,
    /// How many parts the object has (`x-amz-mp-parts-count`); None for
    /// an object that was not uploaded in parts.
    pub parts_count: Option<u32>,
}

impl Store {
    /// GET with `partNumber`: the bytes of one part of a multipart object.
    /// Part 1 of an object that was not uploaded in parts is the whole
    /// object; any other part of it, or one past the last, is InvalidPart.
    pub fn get_object_part(
        &self,
        bucket: &str,
        key: &str,
        part_number: u32,
    ) -> Result<PartGet<GetResult>> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        check_part_number(part_number)?;
        let (info, mut file) = self.open_unchecked(bucket, key)?;
        let (part, parts_count) = self.part_of(bucket, key, &info, &file, part_number)?;
        file.seek(SeekFrom::Start(part.offset))
            .map_err(|e| S3Error::from_io(&e, key))?;
        Ok(PartGet {
            got: GetResult {
                info,
                offset: part.offset,
                length: part.size,
                body: ObjectReader::new(file, part.size),
            },
            part,
            parts_count,
        })
    }

    /// HEAD with `partNumber`: as [`Store::get_object_part`], no bytes.
    pub fn head_object_part(
        &self,
        bucket: &str,
        key: &str,
        part_number: u32,
    ) -> Result<PartGet<ObjectInfo>> {
        let got = self.get_object_part(bucket, key, part_number)?;
        Ok(PartGet {
            got: got.got.info,
            part: got.part,
            parts_count: got.parts_count,
        })
    }

    /// Every part of a multipart object (GetObjectAttributes' ObjectParts);
    /// None for an object not uploaded in parts, or whose parts were not
    /// kept.
    pub fn object_parts(&self, bucket: &str, key: &str) -> Result<Option<Vec<ObjectPart>>> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        let (info, file) = self.open_unchecked(bucket, key)?;
        let Some(record) = self.parts_record(bucket, key, &info, &file)? else {
            return Ok(None);
        };
        Ok(Some(
            (1..=record.count())
                .filter_map(|n| record.object_part(n, info.checksum.as_ref()))
                .collect(),
        ))
    }

    fn parts_record(
        &self,
        bucket: &str,
        key: &str,
        info: &ObjectInfo,
        file: &std::fs::File,
    ) -> Result<Option<PartsRecord>> {
        if !multipart_etag(&info.etag) {
            return Ok(None);
        }
        let stored = StoredMeta::read_from(file)
            .map_err(|e| S3Error::from_io(&e, &format!("{bucket}/{key}: reading its parts")))?;
        Ok(stored.parts)
    }

    fn part_of(
        &self,
        bucket: &str,
        key: &str,
        info: &ObjectInfo,
        file: &std::fs::File,
        n: u32,
    ) -> Result<(ObjectPart, Option<u32>)> {
        match self.parts_record(bucket, key, info, file)? {
            Some(record) => match record.object_part(n, info.checksum.as_ref()) {
                Some(part) => Ok((part, Some(record.count()))),
                None => Err(s3err!(
                    InvalidPart,
                    "{bucket}/{key} has {} parts; there is no part {n}",
                    record.count()
                )),
            },
            // One part, or none: part 1 is the whole object.
            None if n == 1 && etag_parts(&info.etag) <= 1 => Ok((
                ObjectPart {
                    part_number: 1,
                    offset: 0,
                    size: info.size,
                    checksum: info.checksum.clone(),
                },
                None,
            )),
            None if etag_parts(&info.etag) > 1 => Err(s3err!(
                InvalidPart,
                "{bucket}/{key} was completed before s3hpc kept part boundaries (or from \
                 parts of too many sizes): its parts cannot be read one by one; read it with \
                 a Range instead"
            )),
            None => Err(s3err!(
                InvalidPart,
                "{bucket}/{key} was not uploaded in parts: part 1 is the whole object, there \
                 is no part {n}"
            )),
        }
    }
}

/// A part number S3 accepts (1 to 10000).
fn check_part_number(n: u32) -> Result<()> {
    if (1..=MAX_PART_NUMBER).contains(&n) {
        Ok(())
    } else {
        Err(s3err!(
            InvalidArgument,
            "partNumber {n} is outside 1 to {MAX_PART_NUMBER}"
        ))
    }
}

/// Whether an ETag may be a multipart one (`"…-N"`). The fast ETag
/// policy's end in `-1` too, so a record decides; this only saves reading
/// it for the others.
fn multipart_etag(etag: &str) -> bool {
    etag.trim_matches('"').contains('-')
}

/// The `N` of an ETag `"…-N"`, 0 without one.
fn etag_parts(etag: &str) -> u32 {
    etag.trim_matches('"')
        .rsplit_once('-')
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trip_and_lookup() {
        let r = PartsRecord::new(
            &[5, 5, 5, 2],
            vec!["a".into(), "b".into(), "c".into(), "d".into()],
        )
        .unwrap();
        assert_eq!(PartsRecord::decode(&r.encode()), Some(r.clone()));
        assert_eq!(r.count(), 4);
        assert_eq!(r.part(1), Some((0, 5, Some("a"))));
        assert_eq!(r.part(3), Some((10, 5, Some("c"))));
        assert_eq!(r.part(4), Some((15, 2, Some("d"))));
        assert_eq!(r.part(5), None);
        let no_sums = PartsRecord::new(&[7], Vec::new()).unwrap();
        assert_eq!(PartsRecord::decode(&no_sums.encode()), Some(no_sums));
        let sizes: Vec<u64> = (0..MAX_RUNS as u64 + 1).collect();
        assert_eq!(PartsRecord::new(&sizes, Vec::new()), None);
        assert_eq!(PartsRecord::decode("5*x|"), None);
        assert_eq!(
            PartsRecord::decode("5*2|a"),
            None,
            "sums and parts disagree"
        );
    }
}
