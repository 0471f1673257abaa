//! Object versions on POSIX (docs/src/design/versioning.md): a bucket's
//! versioning state, version ids, and the names of versions in a
//! directory's `.s3hpc-versions`. Each entry there is `NAME~ID` (a hard link
//! to that version's file) or `NAME~ID.marker` (a delete marker, an empty
//! file); ids sort newest first, so a byte sort of a key's entries is its
//! history.

mod index;
mod keep;
mod list;
mod lock;
mod read;

use crate::bucket_config::{read_doc, write_doc};
use crate::*;
pub(crate) use index::IndexCache;
pub use list::{VersionsPage, VersionsRequest};
pub(crate) use lock::rewrite_meta;
pub use lock::{LockMode, ObjectLockConfig, ObjectLockState, Retention, RetentionPeriod};
pub use read::KeyVersion;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The hidden directory of versions in each directory that holds
/// versioned keys.
pub const VERSIONS_DIR: &str = ".s3hpc-versions";
/// The id of a version written while versioning was off or suspended.
pub const NULL_VERSION: &str = "null";
/// Hex digits in an id: 16 of the inverted time, 4 of the writer.
const ID_LEN: usize = 20;
const MARKER_SUFFIX: &str = ".marker";
/// The longest last segment of a key a versioned bucket takes: its
/// entries must fit NAME_MAX (255) with `~`, an id and the marker suffix.
pub const MAX_VERSIONED_NAME: usize = 255 - 1 - ID_LEN - MARKER_SUFFIX.len();
/// The bucket settings that hold the state and the lock (xattrs on its
/// directory).
const SETTING: &str = "versioning";
const LOCK_SETTING: &str = "object-lock";

/// A bucket's versioning state, as S3 has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Versioning {
    /// Never enabled: each key has one version, `null`.
    Off,
    Enabled,
    /// Enabled once, now writing `null` versions that replace each other.
    Suspended,
}

impl Versioning {
    /// As S3 spells it (`Off` is a bucket with no `Status`).
    pub fn as_str(self) -> &'static str {
        match self {
            Versioning::Off => "",
            Versioning::Enabled => "Enabled",
            Versioning::Suspended => "Suspended",
        }
    }
}

/// A bucket's versioning state and object lock, kept in two attributes of
/// its directory (`user.s3hpc.versioning`: `Enabled` or `Suspended`;
/// `user.s3hpc.object-lock`: `lock`, with a default retention), read and
/// cached together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Setting {
    pub state: Versioning,
    pub lock: Option<ObjectLockConfig>,
}

impl Setting {
    pub(super) const OFF: Setting = Setting {
        state: Versioning::Off,
        lock: None,
    };
}

fn state_of(doc: &[u8]) -> Versioning {
    match doc {
        b"Enabled" => Versioning::Enabled,
        b"Suspended" => Versioning::Suspended,
        _ => Versioning::Off,
    }
}

/// One entry of a `.s3hpc-versions` directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VersionEntry<'a> {
    /// The key's last segment.
    pub name: &'a str,
    /// Its id, or [`NULL_VERSION`].
    pub id: &'a str,
    pub marker: bool,
}

impl VersionEntry<'_> {
    /// The entry's file name.
    pub fn file_name(&self) -> String {
        let suffix = if self.marker { MARKER_SUFFIX } else { "" };
        format!("{}~{}{suffix}", self.name, self.id)
    }

    /// Parses an entry's file name, from the right (a `~` in the key's
    /// name is harmless); None for anything that is not an entry.
    pub fn parse(file: &str) -> Option<VersionEntry<'_>> {
        let (rest, marker) = match file.strip_suffix(MARKER_SUFFIX) {
            Some(r) => (r, true),
            None => (file, false),
        };
        let (name, id) = rest.rsplit_once('~')?;
        (!name.is_empty() && is_version_id(id)).then_some(VersionEntry { name, id, marker })
    }
}

/// Whether `id` is a version id this engine makes (or `null`).
pub fn is_version_id(id: &str) -> bool {
    id == NULL_VERSION || (id.len() == ID_LEN && id.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A new version id: newer ids sort first, and no two are equal. The
/// time is this process's clock in nanoseconds, made strictly increasing
/// within the process; the last four digits tell writers apart, so ids
/// of two nodes differ even at the same nanosecond.
pub(crate) fn new_version_id() -> String {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut prev = LAST.load(Ordering::Relaxed);
    let t = loop {
        let t = now.max(prev + 1);
        match LAST.compare_exchange_weak(prev, t, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break t,
            Err(p) => prev = p,
        }
    };
    format!("{:016x}{:04x}", u64::MAX - t, writer_salt())
}

/// Four hex digits of this host and process.
fn writer_salt() -> u16 {
    static SALT: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
    *SALT.get_or_init(|| {
        let who = format!("{}.{}", crate::temp::host_field(), std::process::id());
        use std::hash::{Hash, Hasher};
        // SipHash with fixed keys: the same salt for the same writer.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        who.hash(&mut h);
        let c = h.finish();
        (c ^ (c >> 16) ^ (c >> 32) ^ (c >> 48)) as u16
    })
}

impl Store {
    /// The bucket's versioning state.
    pub fn bucket_versioning(&self, bucket: &str) -> Result<Versioning> {
        Ok(self.bucket_setting(bucket)?.state)
    }

    /// The bucket's setting, read now.
    pub(crate) fn bucket_setting(&self, bucket: &str) -> Result<Setting> {
        let (fd, what) = self.open_target(bucket, None)?;
        let state = read_doc(&fd, SETTING, &what)?.map_or(Versioning::Off, |d| state_of(&d));
        // A lock that reads wrongly is still a lock (with no default).
        let lock = read_doc(&fd, LOCK_SETTING, &what)?
            .map(|d| ObjectLockConfig::decode(&d).unwrap_or_default());
        Ok(Setting { state, lock })
    }

    /// Enables or suspends versioning; only the bucket's owner or root
    /// may. A bucket cannot go back to never versioned (as in S3), a
    /// packed bucket keeps one version per key, and a bucket with object
    /// lock keeps versioning enabled.
    pub fn put_bucket_versioning(&self, bucket: &str, state: Versioning) -> Result<()> {
        if state == Versioning::Off {
            return Err(s3err!(
                IllegalVersioningConfiguration,
                "a bucket's versioning is Enabled or Suspended; once enabled it \
                 cannot be turned off, only suspended"
            ));
        }
        let lock = self.bucket_setting(bucket)?.lock;
        if lock.is_some() && state != Versioning::Enabled {
            return Err(s3err!(
                InvalidBucketState,
                "bucket {bucket:?} has object lock: its versioning stays enabled, as \
                 locked versions must be kept"
            ));
        }
        self.write_setting(bucket, Setting { state, lock })
    }

    /// Writes the bucket's setting (owner or root only), unless it is
    /// packed: a packed bucket keeps one version of each key.
    pub(super) fn write_setting(&self, bucket: &str, setting: Setting) -> Result<()> {
        let packed = || {
            s3err!(
                InvalidBucketState,
                "bucket {bucket:?} is packed: a packed bucket keeps one version of \
                 each key (`s3hpc bucket unpack` makes it plain)"
            )
        };
        if self.packed(bucket).is_some() {
            return Err(packed());
        }
        let (fd, what) = self.open_owned(bucket, SETTING)?;
        write_doc(&fd, SETTING, Some(setting.state.as_str().as_bytes()), &what)?;
        if let Some(lock) = &setting.lock {
            write_doc(&fd, LOCK_SETTING, Some(lock.encode().as_bytes()), &what)?;
        }
        // Packed since the check above (by another process): undo.
        if self.packed(bucket).is_some() {
            write_doc(&fd, SETTING, None, &what)?;
            write_doc(&fd, LOCK_SETTING, None, &what)?;
            return Err(packed());
        }
        self.versionings.put(bucket, setting);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_ids_sort_first_and_never_repeat() {
        let ids: Vec<String> = (0..1000).map(|_| new_version_id()).collect();
        for pair in ids.windows(2) {
            assert!(pair[1] < pair[0], "{} then {}", pair[0], pair[1]);
        }
        assert!(ids.iter().all(|id| is_version_id(id)));
    }

    #[test]
    fn entries_parse_from_the_right() {
        let id = new_version_id();
        for name in ["a", "a~b", "x~0123456789abcdef0123", "ends.marker", "~"] {
            for marker in [false, true] {
                for id in [id.as_str(), NULL_VERSION] {
                    let e = VersionEntry { name, id, marker };
                    let file = e.file_name();
                    assert_eq!(VersionEntry::parse(&file), Some(e), "{file}");
                }
            }
        }
        for junk in [
            "plain",
            "a~",
            "~0123456789abcdef0123",
            "a~xyz",
            "a~0123.marker",
        ] {
            assert_eq!(VersionEntry::parse(junk), None, "{junk}");
        }
    }

    #[test]
    fn the_longest_name_fits_name_max() {
        let name = "n".repeat(MAX_VERSIONED_NAME);
        let id = new_version_id();
        let e = VersionEntry {
            name: &name,
            id: &id,
            marker: true,
        };
        assert_eq!(e.file_name().len(), 255);
    }
}
