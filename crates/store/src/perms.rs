//! Who owns a bucket or an object and what its permissions grant, read and
//! changed on the file itself: the mode bits and, where the file system
//! keeps them, the POSIX ACL (`system.posix_acl_access`). S3 ACLs are a view
//! of these (the HTTP layer maps them), never a second store.
//!
//! The ACL is read and written in the kernel's own xattr format
//! (`include/uapi/linux/posix_acl_xattr.h`: a 4-byte version, then 8-byte
//! entries `tag: u16, perm: u16, id: u32`, little-endian, sorted by tag and
//! id). The crates that wrap it (`posix-acl`, `exacl`) link libacl, a C
//! library (and `exacl` bindgen), and take paths; here every call goes
//! through a descriptor opened beneath the data root without following
//! symlinks, as the rest of the engine does, for some 60 lines of format.
//!
//! Changes are made by the acting user's own calls (`fchmod`,
//! `fsetxattr`): the kernel lets only the owner (or root) make them.

use crate::names::{validate_bucket_name, validate_key};
use crate::*;
use rustix::fs::{Mode, XattrFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, OwnedFd};

const ACL_XATTR: &str = "system.posix_acl_access";
const ACL_VERSION: u32 = 2;
const UNDEFINED_ID: u32 = u32::MAX;

/// The kind of a POSIX ACL entry (the kernel's tag values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AclTag {
    UserObj = 0x01,
    User = 0x02,
    GroupObj = 0x04,
    Group = 0x08,
    Mask = 0x10,
    Other = 0x20,
}

/// One entry of a POSIX ACL: `perm` is `rwx` as 4, 2, 1; `id` the uid or
/// gid of a named entry (`User`, `Group`), unused otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AclEntry {
    pub tag: AclTag,
    pub id: u32,
    pub perm: u8,
}

/// A bucket's or object's owner and permissions, as the file system has
/// them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permissions {
    pub uid: u32,
    pub gid: u32,
    /// The permission bits (`0o777`; with an ACL, the group bits are its mask).
    pub mode: u32,
    /// The ACL's named entries (`User`, `Group`), `GroupObj` and `Mask`; empty
    /// when the file has no ACL beyond its mode bits, or the file system
    /// keeps none.
    pub acl: Vec<AclEntry>,
}

impl Permissions {
    /// The ACL's mask (what named entries and the group may at most do).
    pub fn mask(&self) -> u8 {
        self.acl
            .iter()
            .find(|e| e.tag == AclTag::Mask)
            .map_or(((self.mode >> 3) & 7) as u8, |e| e.perm)
    }
}

/// What a PutBucketAcl, PutObjectAcl or canned ACL sets: the group and
/// other classes' bits and the named entries; the owner's bits stay. Given
/// with a write (`PutOptions::access`), it is set on the temporary before
/// the object is published, so the object never has other permissions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PermissionChange {
    /// `rwx` of the owning group (4, 2, 1).
    pub group: u8,
    /// `rwx` of everyone else.
    pub other: u8,
    /// Named `User` and `Group` entries; none removes the file's ACL.
    pub named: Vec<AclEntry>,
    /// `rwx` for the owner of the object's bucket, as a named `User` entry
    /// (the bucket-owner-* canned ACLs), unless it is the object's owner:
    /// the engine looks the bucket's owner up only when this is not 0.
    pub bucket_owner: u8,
}

impl PermissionChange {
    /// An S3 canned ACL's permissions on a bucket or (`bucket` false) an
    /// object, as mode bits (see `http/src/acl.rs` for the mapping's reasons);
    /// None for a canned ACL that grants to a service group s3hpc has not.
    /// `authenticated-read` is other `r`: every caller that is not anonymous.
    pub fn canned(name: &str, bucket: bool) -> Option<PermissionChange> {
        const R: u8 = 4;
        let read = if bucket { R | 1 } else { R };
        let (other, bucket_owner) = match name {
            "private" => (0, 0),
            "public-read" | "authenticated-read" => (read, 0),
            "public-read-write" if bucket => (7, 0),
            "public-read-write" => (R, 0),
            "bucket-owner-read" | "bucket-owner-full-control" if bucket => (0, 0),
            "bucket-owner-read" | "bucket-owner-full-control" => (0, R),
            _ => return None,
        };
        Some(PermissionChange {
            group: other,
            other,
            named: Vec::new(),
            bucket_owner,
        })
    }

    /// A compact text form, kept with a multipart upload until completion:
    /// `GROUP OTHER BUCKET_OWNER` digits, then `u:ID:PERM` / `g:ID:PERM`.
    pub(crate) fn encode(&self) -> String {
        let mut out = format!("{} {} {}", self.group, self.other, self.bucket_owner);
        for e in &self.named {
            let tag = if e.tag == AclTag::Group { 'g' } else { 'u' };
            out.push_str(&format!(" {tag}:{}:{}", e.id, e.perm));
        }
        out
    }

    pub(crate) fn decode(s: &str) -> Option<PermissionChange> {
        let mut it = s.split(' ');
        let mut bits = || it.next()?.parse::<u8>().ok().filter(|b| *b <= 7);
        let (group, other, bucket_owner) = (bits()?, bits()?, bits()?);
        let named = it
            .map(|e| {
                let mut f = e.split(':');
                let tag = match f.next()? {
                    "u" => AclTag::User,
                    "g" => AclTag::Group,
                    _ => return None,
                };
                Some(AclEntry {
                    tag,
                    id: f.next()?.parse().ok()?,
                    perm: f.next()?.parse::<u8>().ok()? & 7,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(PermissionChange {
            group,
            other,
            named,
            bucket_owner,
        })
    }
}

impl Store {
    /// The owner and permissions of bucket `bucket` (`key` None) or of
    /// object `key`. Opens it for reading, as GET does: one may see the
    /// permissions of what one may read.
    pub fn permissions(&self, bucket: &str, key: Option<&str>) -> Result<Permissions> {
        let (fd, what) = self.open_target(bucket, key)?;
        read_permissions(&fd, &what)
    }

    /// The uid owning bucket `bucket`: a `stat`, which needs no right on
    /// the bucket itself (a writer into a write-only bucket asks it for
    /// `bucket-owner-full-control`).
    pub fn bucket_owner(&self, bucket: &str) -> Result<u32> {
        validate_bucket_name(bucket)?;
        match crate::fscalls::statat(&self.root_fd, bucket, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => Ok(st.st_uid),
            Ok(_) | Err(Errno::NOENT) => {
                Err(s3err!(NoSuchBucket, "bucket {bucket:?} does not exist"))
            }
            Err(e) => Err(S3Error::from_io(&e.into(), &format!("bucket {bucket}"))),
        }
    }

    /// Sets the group and other bits and the named ACL entries of a
    /// bucket or object, as the acting identity (only the owner, or root,
    /// may). Without named entries this is a `chmod` (any file system) and
    /// the file's ACL goes; with them, an ACL (NotImplemented where the
    /// file system keeps none).
    pub fn set_permissions(
        &self,
        bucket: &str,
        key: Option<&str>,
        change: &PermissionChange,
    ) -> Result<()> {
        if let Some(key) = key {
            validate_bucket_name(bucket)?;
            validate_key(key)?;
            self.unpack_for_acl(bucket, key)?;
        }
        let (fd, what) = self.open_target(bucket, key)?;
        let st = crate::fscalls::fstat(&fd).map_err(|e| S3Error::from_io(&e.into(), &what))?;
        let bucket_owner = match key {
            Some(_) if change.bucket_owner != 0 => Some(self.bucket_owner(bucket)?),
            _ => None,
        };
        apply(&fd, &st, change, bucket_owner, &what)
    }

    /// The permissions of version `id` of `key` (its own file: the key's
    /// path shares it while it is the current version).
    pub fn version_permissions(&self, bucket: &str, key: &str, id: &str) -> Result<Permissions> {
        let (fd, what) = self.open_version_fd(bucket, key, id)?;
        read_permissions(&fd, &what)
    }

    /// Changes the permissions of version `id` of `key`, as
    /// [`Store::set_permissions`] does those of the current one.
    pub fn set_version_permissions(
        &self,
        bucket: &str,
        key: &str,
        id: &str,
        change: &PermissionChange,
    ) -> Result<()> {
        let (fd, what) = self.open_version_fd(bucket, key, id)?;
        let st = crate::fscalls::fstat(&fd).map_err(|e| S3Error::from_io(&e.into(), &what))?;
        let bucket_owner = match change.bucket_owner {
            0 => None,
            _ => Some(self.bucket_owner(bucket)?),
        };
        apply(&fd, &st, change, bucket_owner, &what)
    }

    fn open_version_fd(&self, bucket: &str, key: &str, id: &str) -> Result<(OwnedFd, String)> {
        let (_, file) = self.open_version(bucket, key, id)?;
        Ok((
            OwnedFd::from(file),
            format!("{bucket}/{key} (version {id})"),
        ))
    }

    /// [`apply`] to a new object's temporary, before it is published: the
    /// bucket's owner looked up if the change names it.
    pub(crate) fn apply_to_new(
        &self,
        fd: &OwnedFd,
        st: &rustix::fs::Stat,
        change: &PermissionChange,
        bucket: &str,
        what: &str,
    ) -> Result<()> {
        let bucket_owner = match change.bucket_owner {
            0 => None,
            _ => Some(self.bucket_owner(bucket)?),
        };
        apply(fd, st, change, bucket_owner, what)
    }

    /// The bucket's directory or the object's file, open for reading.
    pub(crate) fn open_target(&self, bucket: &str, key: Option<&str>) -> Result<(OwnedFd, String)> {
        validate_bucket_name(bucket)?;
        match key {
            None => {
                let what = format!("bucket {bucket}");
                let fd =
                    crate::dirs::open_dir_readable(self.root_fd.as_fd(), bucket).map_err(|e| {
                        match e.kind() {
                            std::io::ErrorKind::NotFound => {
                                s3err!(NoSuchBucket, "bucket {bucket:?} does not exist")
                            }
                            _ => S3Error::from_io(&e, &what),
                        }
                    })?;
                Ok((fd, what))
            }
            Some(key) => {
                validate_key(key)?;
                if let Some(pack) = self.packed_target(bucket, key) {
                    return Ok((pack?, format!("{bucket}/{key}")));
                }
                let (_, file) = self.open_unchecked(bucket, key)?;
                Ok((OwnedFd::from(file), format!("{bucket}/{key}")))
            }
        }
    }
}

/// The owner and permissions of an open file.
pub(crate) fn read_permissions(fd: &OwnedFd, what: &str) -> Result<Permissions> {
    let st = crate::fscalls::fstat(fd).map_err(|e| S3Error::from_io(&e.into(), what))?;
    let mut buf = [0u8; 4 + 8 * 64];
    let acl = match crate::fscalls::fgetxattr(fd, ACL_XATTR, &mut buf) {
        Ok(n) => decode(&buf[..n])
            .into_iter()
            .filter(|e| !matches!(e.tag, AclTag::UserObj | AclTag::Other))
            .collect(),
        // No ACL, or a file system that keeps none.
        Err(Errno::NODATA) => Vec::new(),
        Err(Errno::OPNOTSUPP) => Vec::new(),
        Err(Errno::RANGE) => {
            return Err(s3err!(
                NotImplemented,
                "{what}: its POSIX ACL has more than 63 entries, more than s3hpc reads"
            ))
        }
        Err(e) => return Err(S3Error::from_io(&e.into(), what)),
    };
    Ok(Permissions {
        uid: st.st_uid,
        gid: st.st_gid,
        mode: st.st_mode & 0o777,
        acl,
    })
}

/// Sets `change` on the open file `fd` (whose `fstat` is `st`): without
/// named entries a `chmod` (any file system) and the file's ACL goes; with
/// them, an ACL (NotImplemented where the file system keeps none, and
/// InvalidArgument where it refuses the entries).
pub(crate) fn apply(
    fd: &OwnedFd,
    st: &rustix::fs::Stat,
    change: &PermissionChange,
    bucket_owner: Option<u32>,
    what: &str,
) -> Result<()> {
    let io = |e: Errno| S3Error::from_io(&e.into(), what);
    let mut change = std::borrow::Cow::Borrowed(change);
    if let Some(b) = bucket_owner.filter(|b| *b != st.st_uid) {
        let c = change.to_mut();
        let perm = c.bucket_owner | c.other;
        match c
            .named
            .iter_mut()
            .find(|e| e.tag == AclTag::User && e.id == b)
        {
            Some(e) => e.perm |= perm,
            None => c.named.push(AclEntry {
                tag: AclTag::User,
                id: b,
                perm,
            }),
        }
    }
    if change.named.is_empty() {
        match crate::fscalls::fremovexattr(fd, ACL_XATTR) {
            Ok(()) | Err(Errno::NODATA) | Err(Errno::OPNOTSUPP) => {}
            Err(e) => return Err(io(e)),
        }
        let mode =
            (st.st_mode & 0o7700) | u32::from(change.group & 7) << 3 | u32::from(change.other & 7);
        return crate::fscalls::fchmod(fd, Mode::from_bits_truncate(mode)).map_err(io);
    }
    let value = encode(&full_acl((st.st_mode >> 6) as u8 & 7, &change));
    match crate::fscalls::fsetxattr(fd, ACL_XATTR, &value, XattrFlags::empty()) {
        Ok(()) => Ok(()),
        Err(Errno::OPNOTSUPP) => Err(s3err!(
            NotImplemented,
            "{what}: the data file system keeps no POSIX ACLs (setting {ACL_XATTR} is not \
             supported), so a grant to a named user cannot be written; grant through the \
             owning group or everyone (canned ACLs), or mount it with ACL support"
        )),
        Err(Errno::INVAL) => Err(s3err!(
            InvalidArgument,
            "{what}: the file system refused the POSIX ACL {:?} (a uid or gid it does not \
             know?)",
            change.named
        )),
        Err(e) => Err(io(e)),
    }
}

/// The whole ACL the kernel takes: owner, owning group, named entries, the
/// mask (the union of what the group and named entries get, so that none
/// is cut), and other; sorted as the kernel requires.
fn full_acl(owner: u8, change: &PermissionChange) -> Vec<AclEntry> {
    let entry = |tag, perm| AclEntry {
        tag,
        id: UNDEFINED_ID,
        perm,
    };
    let mask = change
        .named
        .iter()
        .fold(change.group & 7, |m, e| m | (e.perm & 7));
    let mut all = vec![
        entry(AclTag::UserObj, owner),
        entry(AclTag::GroupObj, change.group & 7),
        entry(AclTag::Mask, mask),
        entry(AclTag::Other, change.other & 7),
    ];
    all.extend(change.named.iter().map(|e| AclEntry {
        perm: e.perm & 7,
        ..*e
    }));
    all.sort_by_key(|e| (e.tag, e.id));
    all.dedup_by_key(|e| (e.tag, e.id));
    all
}

fn encode(entries: &[AclEntry]) -> Vec<u8> {
    let mut out = ACL_VERSION.to_le_bytes().to_vec();
    for e in entries {
        out.extend_from_slice(&(e.tag as u16).to_le_bytes());
        out.extend_from_slice(&u16::from(e.perm).to_le_bytes());
        out.extend_from_slice(&e.id.to_le_bytes());
    }
    out
}

/// The entries of an ACL attribute; nothing if it is not version 2.
fn decode(raw: &[u8]) -> Vec<AclEntry> {
    if raw.len() < 4 || raw[..4] != ACL_VERSION.to_le_bytes() {
        return Vec::new();
    }
    raw[4..]
        .chunks_exact(8)
        .filter_map(|c| {
            let tag = match u16::from_le_bytes([c[0], c[1]]) {
                0x01 => AclTag::UserObj,
                0x02 => AclTag::User,
                0x04 => AclTag::GroupObj,
                0x08 => AclTag::Group,
                0x10 => AclTag::Mask,
                0x20 => AclTag::Other,
                _ => return None,
            };
            Some(AclEntry {
                tag,
                perm: (u16::from_le_bytes([c[2], c[3]]) & 7) as u8,
                id: u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acl_format_round_trips_sorted_with_a_mask() {
        let change = PermissionChange {
            group: 0,
            other: 4,
            named: vec![
                AclEntry {
                    tag: AclTag::User,
                    id: 1002,
                    perm: 4,
                },
                AclEntry {
                    tag: AclTag::User,
                    id: 1001,
                    perm: 6,
                },
            ],
            bucket_owner: 0,
        };
        assert_eq!(
            PermissionChange::decode(&change.encode()),
            Some(change.clone())
        );
        assert_eq!(PermissionChange::decode("0 4"), None);
        let acl = full_acl(6, &change);
        let tags: Vec<_> = acl.iter().map(|e| (e.tag, e.id)).collect();
        assert_eq!(
            tags,
            vec![
                (AclTag::UserObj, UNDEFINED_ID),
                (AclTag::User, 1001),
                (AclTag::User, 1002),
                (AclTag::GroupObj, UNDEFINED_ID),
                (AclTag::Mask, UNDEFINED_ID),
                (AclTag::Other, UNDEFINED_ID),
            ]
        );
        assert_eq!(acl[4].perm, 6, "the mask covers every named entry");
        let raw = encode(&acl);
        assert_eq!(raw.len(), 4 + 8 * 6);
        // What setfacl writes for u:1001:rw-: tag 2, perm 6, id 1001.
        assert_eq!(&raw[12..20], &[2, 0, 6, 0, 0xe9, 3, 0, 0]);
        assert_eq!(decode(&raw), acl);
        assert!(decode(&[1, 0, 0, 0, 2, 0, 6, 0, 0, 0, 0, 0]).is_empty());
    }
}
