//! Lifecycle rules (docs/src/design/lifecycle.md): a bucket's rules, kept as
//! one bucket document (`user.s3hpc.lifecycle` on its directory), and the
//! pass that applies them ([`apply`]).

mod apply;

use crate::bucket_config::{read_doc, write_doc};
use crate::meta::{put_str, Reader};
use crate::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use apply::{LifecycleClock, LifecycleDone};

/// The bucket document that holds the rules.
const DOC: &str = "lifecycle";
/// S3's limit on rules per bucket.
pub const MAX_RULES: usize = 1000;

/// What a rule applies to: every condition given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LifecycleFilter {
    pub prefix: String,
    /// Tags the object must have, each with this value.
    pub tags: BTreeMap<String, String>,
    /// Sizes in bytes, exclusive, as S3's ObjectSizeGreaterThan/LessThan.
    pub size_greater_than: Option<u64>,
    pub size_less_than: Option<u64>,
}

impl LifecycleFilter {
    fn matches_key(&self, key: &str) -> bool {
        key.starts_with(&self.prefix)
    }

    fn matches_size(&self, size: u64) -> bool {
        self.size_greater_than.is_none_or(|n| size > n)
            && self.size_less_than.is_none_or(|n| size < n)
    }

    /// Whether an object with tags `have` has every tag the filter names.
    fn matches_tags(&self, have: &BTreeMap<String, String>) -> bool {
        self.tags.iter().all(|(k, v)| have.get(k) == Some(v))
    }
}

/// When something made at `t` expires after `days` days of length `day`:
/// at the first day boundary after it (midnight UTC for real days), as S3
/// counts them.
pub(crate) fn expiry(t: SystemTime, days: u32, day: Duration) -> SystemTime {
    let day = day.as_secs().max(1);
    let end = t + Duration::from_secs(day * u64::from(days));
    let end = end.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    UNIX_EPOCH + Duration::from_secs(end.div_ceil(day) * day)
}

/// When a rule expires current versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiration {
    /// This many days after the version was written.
    Days(u32),
    /// From this date on (midnight UTC).
    Date(SystemTime),
}

/// One lifecycle rule, as S3 has it (transitions excepted: there is no
/// other storage class to move to).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LifecycleRule {
    pub id: String,
    pub enabled: bool,
    pub filter: LifecycleFilter,
    /// The rule named its prefix in the old way (`<Prefix>` beside
    /// `<Status>`, no `<Filter>`): given back the same way.
    pub legacy_prefix: bool,
    pub expiration: Option<Expiration>,
    /// Removes a delete marker that has no versions left behind it.
    pub expired_object_delete_marker: bool,
    /// Removes versions this many days after they stopped being current...
    pub noncurrent_days: Option<u32>,
    /// ...keeping this many newer noncurrent ones.
    pub newer_noncurrent_versions: Option<u32>,
    /// Aborts multipart uploads this many days after they began.
    pub abort_incomplete_upload_days: Option<u32>,
}

// Record tags of the document: each rule starts with RULE (its id).
const RULE: u8 = 1;
const ENABLED: u8 = 2;
const PREFIX: u8 = 3;
const LEGACY: u8 = 4;
const TAG_KEY: u8 = 5;
const TAG_VALUE: u8 = 6;
const SIZE_GT: u8 = 7;
const SIZE_LT: u8 = 8;
const EXP_DAYS: u8 = 9;
const EXP_DATE: u8 = 10;
const EXP_MARKER: u8 = 11;
const NONCURRENT_DAYS: u8 = 12;
const NEWER_NONCURRENT: u8 = 13;
const ABORT_DAYS: u8 = 14;
const FORMAT: u8 = 1;

pub(crate) fn encode(rules: &[LifecycleRule]) -> Vec<u8> {
    let mut out = vec![FORMAT];
    let rec = |out: &mut Vec<u8>, tag: u8, v: &str| {
        out.push(tag);
        put_str(out, v);
    };
    for r in rules {
        rec(&mut out, RULE, &r.id);
        if r.enabled {
            rec(&mut out, ENABLED, "");
        }
        rec(&mut out, PREFIX, &r.filter.prefix);
        if r.legacy_prefix {
            rec(&mut out, LEGACY, "");
        }
        for (k, v) in &r.filter.tags {
            rec(&mut out, TAG_KEY, k);
            rec(&mut out, TAG_VALUE, v);
        }
        let numbers = [
            (SIZE_GT, r.filter.size_greater_than),
            (SIZE_LT, r.filter.size_less_than),
            (
                EXP_DAYS,
                match r.expiration {
                    Some(Expiration::Days(d)) => Some(u64::from(d)),
                    _ => None,
                },
            ),
            (
                EXP_DATE,
                match r.expiration {
                    Some(Expiration::Date(t)) => {
                        Some(t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
                    }
                    _ => None,
                },
            ),
            (NONCURRENT_DAYS, r.noncurrent_days.map(u64::from)),
            (NEWER_NONCURRENT, r.newer_noncurrent_versions.map(u64::from)),
            (ABORT_DAYS, r.abort_incomplete_upload_days.map(u64::from)),
        ];
        for (tag, n) in numbers {
            if let Some(n) = n {
                rec(&mut out, tag, &n.to_string());
            }
        }
        if r.expired_object_delete_marker {
            rec(&mut out, EXP_MARKER, "");
        }
    }
    out
}

pub(crate) fn decode(buf: &[u8]) -> Option<Vec<LifecycleRule>> {
    let mut r = Reader::new(buf);
    if r.take(1)?[0] != FORMAT {
        return None;
    }
    let mut rules: Vec<LifecycleRule> = Vec::new();
    let mut tag_key = None;
    while !r.done() {
        let tag = r.take(1)?[0];
        let v = r.string()?;
        if tag == RULE {
            rules.push(LifecycleRule {
                id: v,
                ..Default::default()
            });
            continue;
        }
        let rule = rules.last_mut()?;
        let n = || v.parse::<u64>().ok();
        let small = || v.parse::<u32>().ok();
        match tag {
            ENABLED => rule.enabled = true,
            PREFIX => rule.filter.prefix = v.clone(),
            LEGACY => rule.legacy_prefix = true,
            TAG_KEY => tag_key = Some(v.clone()),
            TAG_VALUE => {
                rule.filter.tags.insert(tag_key.take()?, v.clone());
            }
            SIZE_GT => rule.filter.size_greater_than = Some(n()?),
            SIZE_LT => rule.filter.size_less_than = Some(n()?),
            EXP_DAYS => rule.expiration = Some(Expiration::Days(small()?)),
            EXP_DATE => {
                rule.expiration = Some(Expiration::Date(UNIX_EPOCH + Duration::from_secs(n()?)))
            }
            EXP_MARKER => rule.expired_object_delete_marker = true,
            NONCURRENT_DAYS => rule.noncurrent_days = Some(small()?),
            NEWER_NONCURRENT => rule.newer_noncurrent_versions = Some(small()?),
            ABORT_DAYS => rule.abort_incomplete_upload_days = Some(small()?),
            _ => {}
        }
    }
    Some(rules)
}

/// A bucket's rules as this process last read them.
pub(crate) type Rules = Option<Arc<Vec<LifecycleRule>>>;

/// S3's day for announcing expirations, whatever a test's pass uses.
const DAY: Duration = Duration::from_secs(86_400);

impl Store {
    /// The bucket's rules, read at most once a second.
    fn known_lifecycle(&self, bucket: &str) -> Rules {
        if let Some((r, true)) = self.lifecycles.get(bucket) {
            return r;
        }
        let rules = self.bucket_lifecycle(bucket).ok().flatten().map(Arc::new);
        self.lifecycles.put(bucket, rules.clone());
        rules
    }

    /// When the bucket's rules will expire the current object `info` of
    /// `key`, and by which rule: S3's `x-amz-expiration` (the earliest,
    /// days counted from its time and rounded up to midnight UTC). None
    /// where no enabled rule expires it. Never an error: it only adds to
    /// an answer.
    pub fn object_expiration(
        &self,
        bucket: &str,
        info: &ObjectInfo,
    ) -> Result<Option<(SystemTime, String)>> {
        let Some(rules) = self.known_lifecycle(bucket) else {
            return Ok(None);
        };
        let mut tags = None;
        let mut best: Option<(SystemTime, String)> = None;
        for r in rules.iter().filter(|r| r.enabled) {
            let when = match r.expiration {
                Some(Expiration::Days(d)) => expiry(info.last_modified, d, DAY),
                Some(Expiration::Date(t)) => t,
                None => continue,
            };
            let f = &r.filter;
            if !f.matches_key(&info.key) || !f.matches_size(info.size) {
                continue;
            }
            if !f.tags.is_empty() {
                let have = tags.get_or_insert_with(|| {
                    self.get_object_tagging(bucket, &info.key)
                        .unwrap_or_default()
                });
                if !f.matches_tags(have) {
                    continue;
                }
            }
            if best.as_ref().is_none_or(|(t, _)| when < *t) {
                best = Some((when, r.id.clone()));
            }
        }
        Ok(best)
    }

    /// [`Store::object_expiration`] of the object now at `key` (after a
    /// write): it is looked at only where the bucket has rules.
    pub fn key_expiration(&self, bucket: &str, key: &str) -> Result<Option<(SystemTime, String)>> {
        if self.known_lifecycle(bucket).is_none() {
            return Ok(None);
        }
        match self.head_object(bucket, key) {
            Ok(info) => self.object_expiration(bucket, &info),
            Err(_) => Ok(None),
        }
    }

    /// The bucket's lifecycle rules; None when it has none.
    pub fn bucket_lifecycle(&self, bucket: &str) -> Result<Option<Vec<LifecycleRule>>> {
        let (fd, what) = self.open_target(bucket, None)?;
        match read_doc(&fd, DOC, &what)? {
            None => Ok(None),
            Some(doc) => decode(&doc).map(Some).ok_or_else(|| {
                s3err!(
                    InternalError,
                    "{what}: its lifecycle document is damaged; put the configuration again"
                )
            }),
        }
    }

    /// Replaces the bucket's lifecycle rules (owner or root only).
    pub fn put_bucket_lifecycle(&self, bucket: &str, rules: &[LifecycleRule]) -> Result<()> {
        if rules.is_empty() || rules.len() > MAX_RULES {
            return Err(s3err!(
                InvalidArgument,
                "a lifecycle configuration holds 1 to {MAX_RULES} rules, not {}",
                rules.len()
            ));
        }
        let (fd, what) = self.open_owned(bucket, DOC)?;
        write_doc(&fd, DOC, Some(&encode(rules)), &what)?;
        self.lifecycles.forget(bucket);
        Ok(())
    }

    /// Removes the bucket's lifecycle rules; having none is not an error.
    pub fn delete_bucket_lifecycle(&self, bucket: &str) -> Result<()> {
        let (fd, what) = self.open_owned(bucket, DOC)?;
        write_doc(&fd, DOC, None, &what)?;
        self.lifecycles.forget(bucket);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_back() {
        let rules = vec![
            LifecycleRule {
                id: "a".into(),
                enabled: true,
                filter: LifecycleFilter {
                    prefix: "logs/".into(),
                    tags: BTreeMap::from([("k".into(), "v".into())]),
                    size_greater_than: Some(5),
                    size_less_than: None,
                },
                legacy_prefix: true,
                expiration: Some(Expiration::Days(3)),
                noncurrent_days: Some(2),
                newer_noncurrent_versions: Some(1),
                ..Default::default()
            },
            LifecycleRule {
                id: "b".into(),
                expiration: Some(Expiration::Date(UNIX_EPOCH + Duration::from_secs(86_400))),
                expired_object_delete_marker: true,
                abort_incomplete_upload_days: Some(7),
                ..Default::default()
            },
        ];
        assert_eq!(decode(&encode(&rules)), Some(rules));
        assert_eq!(decode(b"\x02"), None);
    }
}
