//! Object lock (docs/src/design/object-lock.md): a bucket's lock is an
//! attribute of its directory beside its versioning state (read and cached
//! with it), and each version's retention and legal hold are records of
//! its metadata attribute, on the inode that the version's entry and the
//! key's path share. Every transport deletes through the engine, so every one of them
//! meets the same check.

use super::*;
use crate::meta::{self, StoredMeta};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, SystemTime};

/// S3's two retention modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum LockMode {
    /// Removable before its date by a request that bypasses governance.
    Governance,
    /// Removable by no one before its date.
    Compliance,
}

impl LockMode {
    pub fn as_str(self) -> &'static str {
        match self {
            LockMode::Governance => "GOVERNANCE",
            LockMode::Compliance => "COMPLIANCE",
        }
    }

    /// As S3 spells it (upper case only, as S3 takes it).
    pub fn parse(s: &str) -> Option<LockMode> {
        match s {
            "GOVERNANCE" => Some(LockMode::Governance),
            "COMPLIANCE" => Some(LockMode::Compliance),
            _ => None,
        }
    }
}

/// A version's retention: kept from deletion until `until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Retention {
    pub mode: LockMode,
    /// Kept to the millisecond, as S3's dates carry it.
    pub until: SystemTime,
}

impl Retention {
    fn in_force(&self, now: SystemTime) -> bool {
        self.until > now
    }

    /// S3's refusal of a retain-until date that has passed.
    fn must_be_future(&self) -> Result<()> {
        if self.in_force(SystemTime::now()) {
            return Ok(());
        }
        Err(s3err!(
            InvalidArgument,
            "the object lock retain-until date {} is in the past; it must be in the future",
            humantime::format_rfc3339_seconds(self.until)
        ))
    }

    /// `MODE MILLIS` (milliseconds since the epoch), as the attribute keeps it.
    pub(crate) fn encode(&self) -> String {
        let ms = self
            .until
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        format!("{} {ms}", self.mode.as_str())
    }

    pub(crate) fn decode(s: &str) -> Option<Retention> {
        let (mode, ms) = s.split_once(' ')?;
        Some(Retention {
            mode: LockMode::parse(mode)?,
            until: UNIX_EPOCH + Duration::from_millis(ms.parse().ok()?),
        })
    }
}

/// How long a bucket's default retention keeps a new version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetentionPeriod {
    Days(u32),
    Years(u32),
}

impl RetentionPeriod {
    /// S3 counts a year as 365 days.
    fn duration(self) -> Duration {
        let days = match self {
            RetentionPeriod::Days(d) => u64::from(d),
            RetentionPeriod::Years(y) => u64::from(y) * 365,
        };
        Duration::from_secs(days * 86_400)
    }
}

/// A bucket's object lock: enabled (it cannot be disabled), with an
/// optional default retention for new versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ObjectLockConfig {
    pub default: Option<(LockMode, RetentionPeriod)>,
}

impl ObjectLockConfig {
    /// `lock`, then `MODE 5d` or `MODE 2y` for a default.
    pub(super) fn encode(&self) -> String {
        match self.default {
            None => "lock".to_string(),
            Some((m, RetentionPeriod::Days(d))) => format!("lock {} {d}d", m.as_str()),
            Some((m, RetentionPeriod::Years(y))) => format!("lock {} {y}y", m.as_str()),
        }
    }

    pub(super) fn decode(doc: &[u8]) -> Option<ObjectLockConfig> {
        let mut words = std::str::from_utf8(doc).ok()?.split(' ');
        if words.next()? != "lock" {
            return None;
        }
        let default = match (words.next(), words.next()) {
            (Some(m), Some(p)) => {
                let mode = LockMode::parse(m)?;
                Some(if let Some(d) = p.strip_suffix('d') {
                    (mode, RetentionPeriod::Days(d.parse().ok()?))
                } else {
                    (
                        mode,
                        RetentionPeriod::Years(p.strip_suffix('y')?.parse().ok()?),
                    )
                })
            }
            _ => None,
        };
        Some(ObjectLockConfig { default })
    }
}

/// A version's lock as the engine reads it: its retention, and its legal
/// hold (None where it was never set; S3 then has no legal hold to show).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ObjectLockState {
    pub retention: Option<Retention>,
    pub legal_hold: Option<bool>,
}

fn no_lock(bucket: &str) -> S3Error {
    s3err!(
        InvalidRequest,
        "Bucket is missing Object Lock Configuration: bucket {bucket:?} was not created \
         with object lock (create it with x-amz-bucket-object-lock-enabled, or enable \
         versioning and put an object lock configuration)"
    )
}

/// Whether a version locked as `stored` says may go now.
pub(crate) fn check_removable(stored: &StoredMeta, bypass: bool, what: &str) -> Result<()> {
    if stored.legal_hold == Some(true) {
        return Err(s3err!(
            AccessDenied,
            "{what} is under a legal hold: it cannot be deleted or overwritten until the \
             hold is removed (PutObjectLegalHold with Status OFF)"
        ));
    }
    match stored.retention {
        Some(r) if r.in_force(SystemTime::now()) => match r.mode {
            LockMode::Governance if bypass => Ok(()),
            LockMode::Governance => Err(s3err!(
                AccessDenied,
                "{what} is under GOVERNANCE retention until {}; send \
                 x-amz-bypass-governance-retention: true to delete it before then",
                humantime::format_rfc3339_seconds(r.until)
            )),
            LockMode::Compliance => Err(s3err!(
                AccessDenied,
                "{what} is under COMPLIANCE retention until {}: no one can delete it \
                 before then",
                humantime::format_rfc3339_seconds(r.until)
            )),
        },
        _ => Ok(()),
    }
}

impl Store {
    /// The bucket's object lock (read now, not cached); None if it has none.
    pub fn object_lock_configuration(&self, bucket: &str) -> Result<Option<ObjectLockConfig>> {
        Ok(self.bucket_setting(bucket)?.lock)
    }

    /// Enables object lock on the bucket, or replaces its default
    /// retention. Versioning must be enabled (a bucket created with object
    /// lock has it); only the bucket's owner or root may.
    pub fn put_object_lock_configuration(
        &self,
        bucket: &str,
        config: &ObjectLockConfig,
    ) -> Result<()> {
        let setting = self.bucket_setting(bucket)?;
        if setting.state != Versioning::Enabled {
            return Err(s3err!(
                InvalidBucketState,
                "bucket {bucket:?} does not have versioning enabled: object lock keeps \
                 versions, so enable versioning first"
            ));
        }
        self.write_setting(
            bucket,
            Setting {
                state: Versioning::Enabled,
                lock: Some(*config),
            },
        )
    }

    /// The lock of version `id` of `key` (None: the current version).
    pub fn object_lock_state(
        &self,
        bucket: &str,
        key: &str,
        id: Option<&str>,
    ) -> Result<ObjectLockState> {
        self.locked_bucket(bucket)?;
        let (_, stored, _) = self.lock_target(bucket, key, id)?;
        Ok(ObjectLockState {
            retention: stored.retention,
            legal_hold: stored.legal_hold,
        })
    }

    /// Sets (or with None removes) the retention of version `id` of `key`.
    /// As in S3: a GOVERNANCE retention in force may be shortened, removed
    /// or changed in mode only with `bypass`; a COMPLIANCE one in force only
    /// lengthened.
    pub fn put_object_retention(
        &self,
        bucket: &str,
        key: &str,
        id: Option<&str>,
        retention: Option<Retention>,
        bypass: bool,
    ) -> Result<()> {
        self.locked_bucket(bucket)?;
        if let Some(r) = &retention {
            r.must_be_future()?;
        }
        let now = SystemTime::now();
        let (file, mut stored, what) = self.lock_target(bucket, key, id)?;
        if let Some(old) = stored.retention.filter(|o| o.in_force(now)) {
            let weakened = match retention {
                None => true,
                Some(new) => new.mode != old.mode || new.until < old.until,
            };
            if weakened {
                match old.mode {
                    LockMode::Compliance => {
                        return Err(s3err!(
                            AccessDenied,
                            "{what} is under COMPLIANCE retention until {}: its retention \
                             can only be lengthened",
                            humantime::format_rfc3339_seconds(old.until)
                        ))
                    }
                    LockMode::Governance if !bypass => {
                        return Err(s3err!(
                            AccessDenied,
                            "{what} is under GOVERNANCE retention until {}: shortening, \
                             removing or changing it needs x-amz-bypass-governance-retention: \
                             true",
                            humantime::format_rfc3339_seconds(old.until)
                        ))
                    }
                    LockMode::Governance => {}
                }
            }
        }
        stored.retention = retention;
        rewrite_meta(&file, &stored, &what)
    }

    /// Sets the legal hold of version `id` of `key` on or off.
    pub fn put_object_legal_hold(
        &self,
        bucket: &str,
        key: &str,
        id: Option<&str>,
        on: bool,
    ) -> Result<()> {
        self.locked_bucket(bucket)?;
        let (file, mut stored, what) = self.lock_target(bucket, key, id)?;
        stored.legal_hold = Some(on);
        rewrite_meta(&file, &stored, &what)
    }

    /// The bucket's lock, or S3's InvalidRequest for a bucket without one.
    fn locked_bucket(&self, bucket: &str) -> Result<ObjectLockConfig> {
        validate_bucket_name(bucket)?;
        self.bucket_setting(bucket)?
            .lock
            .ok_or_else(|| no_lock(bucket))
    }

    /// Version `id` of `key` (the current one for None), open, with its
    /// metadata.
    fn lock_target(
        &self,
        bucket: &str,
        key: &str,
        id: Option<&str>,
    ) -> Result<(File, StoredMeta, String)> {
        let (info, file) = match id.filter(|v| !v.is_empty()) {
            Some(v) => self.open_version(bucket, key, v)?,
            None => {
                validate_key(key)?;
                self.open_unchecked(bucket, key)?
            }
        };
        let what = match &info.version_id {
            Some(v) => format!("{bucket}/{key} (version {v})"),
            None => format!("{bucket}/{key}"),
        };
        let stored = StoredMeta::read_from(&file)
            .map_err(|e| S3Error::from_io(&e, &format!("{what}: reading its metadata")))?;
        Ok((file, stored, what))
    }

    /// Sets a new version's id, and its lock from the bucket's: the
    /// default retention where it gives none, S3's refusal where the
    /// bucket has no lock.
    pub(crate) fn stamp_version(
        &self,
        bucket: &str,
        key: &str,
        stored: &mut StoredMeta,
    ) -> Result<()> {
        stored.version_id = self.new_write_version(bucket, key)?;
        self.apply_lock(bucket, stored, true)
    }

    /// The lock a new version of `bucket` gets (see [`Store::stamp_version`]).
    /// `check_date`: refuse a retain-until date in the past (not at a
    /// multipart upload's completion: S3 checks it when the upload begins).
    pub(crate) fn apply_lock(
        &self,
        bucket: &str,
        stored: &mut StoredMeta,
        check_date: bool,
    ) -> Result<()> {
        let asks = stored.retention.is_some() || stored.legal_hold.is_some();
        let lock = match self.setting_of(bucket)?.lock {
            Some(l) => l,
            None if asks => return Err(no_lock(bucket)),
            None => return Ok(()),
        };
        if let Some(r) = stored.retention.as_ref().filter(|_| check_date) {
            r.must_be_future()?;
        }
        if let (None, Some((mode, period))) = (stored.retention, lock.default) {
            stored.retention = Some(Retention {
                mode,
                until: SystemTime::now() + period.duration(),
            });
        }
        Ok(())
    }

    /// [`check_file_unlocked`] of the object at a key's path, open as `fd`
    /// (None: this user may not read it, so where the bucket has object
    /// lock it cannot be shown unlocked).
    pub(crate) fn check_path_unlocked(
        &self,
        bucket: &str,
        fd: Option<&OwnedFd>,
        bypass: bool,
        what: &str,
    ) -> Result<()> {
        match fd {
            Some(fd) => check_file_unlocked(fd, bypass, what),
            None if self.setting_of(bucket)?.lock.is_some() => Err(s3err!(
                AccessDenied,
                "{what}: you may not read it, so its object lock cannot be checked"
            )),
            None => Ok(()),
        }
    }
}

/// Refuses to remove version `name` of directory `dir` (an entry of a
/// versions directory) while its lock holds.
pub(crate) fn check_entry_unlocked(
    dir: BorrowedFd<'_>,
    name: &str,
    bypass: bool,
    what: &str,
) -> Result<()> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    match crate::fscalls::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => check_file_unlocked(&fd, bypass, what),
        Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(S3Error::from_io(&e.into(), what)),
    }
}

/// Refuses to remove the version open as `fd` while its lock holds. Its
/// own records decide, whatever its bucket's setting says (a lock set a
/// moment ago in another process counts).
pub(crate) fn check_file_unlocked(fd: &impl AsFd, bypass: bool, what: &str) -> Result<()> {
    let st = crate::fscalls::fstat(fd).map_err(|e| S3Error::from_io(&e.into(), what))?;
    if !meta::has_meta(&st) {
        return Ok(());
    }
    let stored = StoredMeta::read_from(fd)
        .map_err(|e| S3Error::from_io(&e, &format!("{what}: reading its lock")))?;
    check_removable(&stored, bypass, what)
}

/// Writes a version's metadata back (marking the file as having some).
pub(crate) fn rewrite_meta(fd: &impl AsFd, stored: &StoredMeta, what: &str) -> Result<()> {
    match stored.write_to(fd) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
            return Err(s3err!(
                NotImplemented,
                "{what}: the data file system does not support user extended attributes, \
                 where s3hpc keeps an object's tags and lock; mount it with xattr support"
            ))
        }
        Err(e) => return Err(S3Error::from_io(&e, what)),
    }
    let st = crate::fscalls::fstat(fd).map_err(|e| S3Error::from_io(&e.into(), what))?;
    if !meta::has_meta(&st) {
        let mode = Mode::from_bits_truncate((st.st_mode & 0o7777) | meta::META_BIT);
        rustix::fs::fchmod(fd, mode).map_err(|e| S3Error::from_io(&e.into(), what))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn configs_and_retentions_read_back() {
        for c in [
            ObjectLockConfig { default: None },
            ObjectLockConfig {
                default: Some((LockMode::Governance, RetentionPeriod::Days(1))),
            },
            ObjectLockConfig {
                default: Some((LockMode::Compliance, RetentionPeriod::Years(30))),
            },
        ] {
            let s = c.encode();
            assert_eq!(ObjectLockConfig::decode(s.as_bytes()), Some(c), "{s}");
            assert_eq!(
                ObjectLockConfig::decode("lock GOVERNANCE 5é".as_bytes()),
                None
            );
        }
        let r = Retention {
            mode: LockMode::Compliance,
            until: UNIX_EPOCH + Duration::from_millis(1_893_456_000_123),
        };
        assert_eq!(Retention::decode(&r.encode()), Some(r));
        assert_eq!(Retention::decode("governance 5"), None);
    }

    #[test]
    fn holds_and_retentions_refuse_removal() {
        let later = SystemTime::now() + Duration::from_secs(60);
        let earlier = SystemTime::now() - Duration::from_secs(60);
        let with = |mode, until, hold| StoredMeta {
            retention: Some(Retention { mode, until }),
            legal_hold: hold,
            ..Default::default()
        };
        let code = |m: &StoredMeta, bypass| check_removable(m, bypass, "k").err().map(|e| e.code);
        let denied = Some(ErrorCode::AccessDenied);
        assert_eq!(
            code(&with(LockMode::Governance, later, None), false),
            denied
        );
        assert_eq!(code(&with(LockMode::Governance, later, None), true), None);
        assert_eq!(code(&with(LockMode::Compliance, later, None), true), denied);
        assert_eq!(
            code(&with(LockMode::Compliance, earlier, None), false),
            None
        );
        assert_eq!(
            code(&with(LockMode::Governance, earlier, Some(true)), true),
            denied
        );
        assert_eq!(
            code(&with(LockMode::Governance, earlier, Some(false)), false),
            None
        );
    }
}
