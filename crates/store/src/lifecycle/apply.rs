//! The lifecycle pass: each bucket with rules is walked (ListObjectVersions
//! order, a key's versions together) and what the rules say is due goes
//! through the same calls as S3 requests, so locks, markers and permissions
//! hold as they do for a user. One process per period takes a bucket's
//! turn, by creating its turn file with O_EXCL, so several gateways on one
//! file system apply each rule once.

use super::{Expiration, LifecycleFilter, LifecycleRule};
use crate::meta::StoredMeta;
use crate::versions::{KeyVersion, VersionsRequest};
use crate::SweepPace;
use crate::*;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A bucket's turn files: `.s3hpc-lifecycle.N` for period N.
const TURN_PREFIX: &str = ".s3hpc-lifecycle.";

/// What a pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LifecycleDone {
    /// Current versions expired (deleted, or hidden by a delete marker).
    pub expired: usize,
    /// Noncurrent versions and lone delete markers removed.
    pub removed: usize,
    /// Multipart uploads aborted.
    pub aborted: usize,
    /// Versions due but refused (object lock, or the file system).
    pub refused: usize,
    /// Buckets whose pass failed (their walk or their uploads' listing).
    pub failed: usize,
}

impl LifecycleDone {
    fn add(&mut self, o: LifecycleDone) {
        self.expired += o.expired;
        self.removed += o.removed;
        self.aborted += o.aborted;
        self.refused += o.refused;
        self.failed += o.failed;
    }
}

/// The clock of a pass: now, and how long a rule's day is (a day, or
/// seconds in tests, as RGW's `rgw_lc_debug_interval`).
#[derive(Debug, Clone, Copy)]
pub struct LifecycleClock {
    pub now: SystemTime,
    pub day: Duration,
}

impl LifecycleClock {
    /// Whether `days` rule days after `t` have passed, counted as S3
    /// counts them: to the next day boundary (midnight UTC).
    fn due(&self, t: SystemTime, days: u32) -> bool {
        super::expiry(t, days, self.day) <= self.now
    }
}

/// Rules and what they need to know of one object.
struct Due<'a> {
    rules: Vec<&'a LifecycleRule>,
    clock: LifecycleClock,
}

impl Store {
    /// Applies the rules of every bucket that has some, where this process
    /// takes the bucket's turn for the current `period` (`clock` tells the
    /// time). The pace gives the part of its time the pass may work and
    /// the flag that ends it; a bucket that fails is counted, and the
    /// others still pass.
    pub fn apply_lifecycles(
        &self,
        clock: impl Fn() -> LifecycleClock,
        period: Duration,
        pace: &SweepPace<'_>,
    ) -> Result<LifecycleDone> {
        let stopped = || pace.stop.is_some_and(|s| s.load(Ordering::Relaxed));
        let mut done = LifecycleDone::default();
        for b in self.list_buckets()? {
            if stopped() {
                break;
            }
            let Ok(Some(rules)) = self.bucket_lifecycle(&b.name) else {
                continue;
            };
            if !rules.iter().any(|r| r.enabled) || !self.take_turn(&b.name, clock().now, period) {
                continue;
            }
            let started = Instant::now();
            match self.apply_lifecycle(&b.name, &rules, clock(), pace.stop) {
                Ok(d) => done.add(d),
                Err(_) => done.failed += 1,
            }
            // The rest of its time the pass sleeps, in steps that watch the flag.
            let share = pace.share.clamp(0.01, 1.0);
            let rest = started.elapsed().mul_f64(1.0 / share - 1.0);
            let until = Instant::now() + rest;
            while Instant::now() < until && !stopped() {
                std::thread::sleep(Duration::from_millis(50).min(rest));
            }
        }
        Ok(done)
    }

    /// Whether this process takes `bucket`'s turn for the period `now`
    /// falls in: the one that creates its turn file does. Turn files of
    /// periods long past go; the last two stay, so that a server whose
    /// clock lags cannot take a turn that was just taken.
    fn take_turn(&self, bucket: &str, now: SystemTime, period: Duration) -> bool {
        // Files of the bucket's own directory (a directory of them would be
        // the server's, which a user deleting the bucket could not clear).
        let Ok((dir, _)) = self.open_target(bucket, None) else {
            return false;
        };
        let n =
            now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() / period.as_secs().max(1);
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC;
        let mine = crate::fscalls::openat(
            &dir,
            format!("{TURN_PREFIX}{n}").as_str(),
            flags,
            Mode::from_bits_truncate(0o600),
        )
        .is_ok();
        if mine {
            for old in n.saturating_sub(6)..n.saturating_sub(2) {
                let name = format!("{TURN_PREFIX}{old}");
                let _ = crate::fscalls::unlinkat(&dir, name.as_str(), AtFlags::empty());
            }
        }
        mine
    }

    /// Applies `rules` to `bucket` now, whoever else may (no turn taken).
    pub fn apply_lifecycle(
        &self,
        bucket: &str,
        rules: &[LifecycleRule],
        clock: LifecycleClock,
        stop: Option<&AtomicBool>,
    ) -> Result<LifecycleDone> {
        let due = Due {
            rules: rules.iter().filter(|r| r.enabled).collect(),
            clock,
        };
        let mut done = LifecycleDone::default();
        let mut req = VersionsRequest {
            max_keys: 1000,
            ..Default::default()
        };
        // A key's versions may span pages: each key is applied once whole.
        let mut group: Vec<KeyVersion> = Vec::new();
        let mut group_key = String::new();
        // Uploads first: a walk that fails still leaves them done.
        let uploads = self.abort_stale_uploads(bucket, &due, &mut done);
        loop {
            if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return Ok(done);
            }
            let page = self.list_object_versions(bucket, &req)?;
            for (key, v) in page.versions {
                if key != group_key && !group.is_empty() {
                    self.apply_to_key(bucket, &group_key, &group, &due, &mut done);
                    group.clear();
                }
                group_key = key;
                group.push(v);
            }
            if !page.is_truncated {
                break;
            }
            req.key_marker = page.next_key_marker;
            req.version_id_marker = page.next_version_id_marker;
        }
        if !group.is_empty() {
            self.apply_to_key(bucket, &group_key, &group, &due, &mut done);
        }
        uploads?;
        Ok(done)
    }

    /// One key's versions (the latest first, then newest first).
    fn apply_to_key(
        &self,
        bucket: &str,
        key: &str,
        versions: &[KeyVersion],
        due: &Due<'_>,
        done: &mut LifecycleDone,
    ) {
        let clock = &due.clock;
        let rules: Vec<_> = due
            .rules
            .iter()
            .filter(|r| r.filter.matches_key(key))
            .collect();
        if rules.is_empty() {
            return;
        }
        let mut tags = TagsOf::default();
        // The current version.
        if let Some(cur) = versions.iter().find(|v| v.is_latest && !v.delete_marker) {
            let size = cur.info.as_ref().map_or(0, |i| i.size);
            let expired = rules.iter().any(|r| {
                let when = match r.expiration {
                    Some(Expiration::Days(d)) => clock.due(cur.last_modified, d),
                    Some(Expiration::Date(t)) => t <= clock.now,
                    None => false,
                };
                when && r.filter.matches_size(size) && tags.have(self, bucket, key, cur, &r.filter)
            });
            if expired && self.expire_current(bucket, key, cur).is_ok() {
                done.expired += 1;
            }
        }
        // A delete marker with nothing behind it.
        if let [only] = versions {
            if only.delete_marker {
                // Markers have no tags and no size: rules that filter by
                // tags never match them.
                let gone = rules.iter().any(|r| {
                    r.filter.tags.is_empty()
                        && r.filter.matches_size(0)
                        && (r.expired_object_delete_marker
                            || matches!(r.expiration, Some(Expiration::Days(d))
                                if clock.due(only.last_modified, d)))
                });
                if gone
                    && self
                        .delete_object_version(bucket, key, &only.version_id)
                        .is_ok()
                {
                    done.removed += 1;
                }
            }
        }
        // Noncurrent versions: each stopped being current when the one
        // before it (newer) was written.
        let mut newer_noncurrent = 0u32;
        for pair in versions.windows(2) {
            let (newer, v) = (&pair[0], &pair[1]);
            if v.is_latest || v.delete_marker {
                continue;
            }
            let size = v.info.as_ref().map_or(0, |i| i.size);
            let remove = rules.iter().any(|r| {
                r.noncurrent_days
                    .is_some_and(|d| clock.due(newer.last_modified, d))
                    && r.newer_noncurrent_versions
                        .is_none_or(|n| newer_noncurrent >= n)
                    && r.filter.matches_size(size)
                    && tags.have(self, bucket, key, v, &r.filter)
            });
            newer_noncurrent += 1;
            if !remove {
                continue;
            }
            match self.delete_object_version(bucket, key, &v.version_id) {
                Ok(_) => done.removed += 1,
                Err(e) if e.code == ErrorCode::AccessDenied => done.refused += 1,
                Err(_) => {}
            }
        }
    }

    /// Expires `key`'s current version `cur`, as listed: only if it is
    /// still the one at the key (a write since then is not the rule's to
    /// expire), and only once (a second server's pass finds it expired).
    fn expire_current(&self, bucket: &str, key: &str, cur: &KeyVersion) -> Result<()> {
        let Some(info) = &cur.info else {
            return Ok(());
        };
        if self.versioning_of(bucket)? == crate::Versioning::Off {
            let cond = DeleteCondition {
                etag: Some(info.etag.clone()),
                last_modified: Some(info.last_modified),
                size: Some(info.size),
                ..Default::default()
            };
            return self.delete_object_if(bucket, key, &cond);
        }
        let now = self.head_object(bucket, key)?;
        if now.version_id != info.version_id || now.etag != info.etag {
            return Err(s3err!(
                PreconditionFailed,
                "{bucket}/{key} was written again"
            ));
        }
        self.delete_object_versioned(bucket, key).map(drop)
    }

    fn abort_stale_uploads(
        &self,
        bucket: &str,
        due: &Due<'_>,
        done: &mut LifecycleDone,
    ) -> Result<()> {
        let rules: Vec<_> = due
            .rules
            .iter()
            .filter_map(|r| Some((&r.filter.prefix, r.abort_incomplete_upload_days?)))
            .collect();
        if rules.is_empty() {
            return Ok(());
        }
        for u in self.list_multipart_uploads(bucket, "")? {
            let stale = rules.iter().any(|(prefix, days)| {
                u.key.starts_with(prefix.as_str()) && due.clock.due(u.initiated, *days)
            });
            if stale
                && self
                    .abort_multipart_upload(bucket, &u.key, &u.upload_id)
                    .is_ok()
            {
                done.aborted += 1;
            }
        }
        Ok(())
    }
}

/// The tags of a key's versions, read once each and only for rules that
/// filter by tags.
#[derive(Default)]
struct TagsOf(BTreeMap<String, BTreeMap<String, String>>);

impl TagsOf {
    fn have(
        &mut self,
        store: &Store,
        bucket: &str,
        key: &str,
        v: &KeyVersion,
        want: &LifecycleFilter,
    ) -> bool {
        if want.tags.is_empty() {
            return true;
        }
        let tags = self.0.entry(v.version_id.clone()).or_insert_with(|| {
            let read = |file: std::fs::File| StoredMeta::read_from(&file).ok().map(|m| m.tags);
            store
                .open_version(bucket, key, &v.version_id)
                .ok()
                .and_then(|(_, f)| read(f))
                .unwrap_or_default()
        });
        want.matches_tags(tags)
    }
}
