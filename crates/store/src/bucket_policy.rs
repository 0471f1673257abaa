//! A bucket's policy, kept on its directory next to the permissions it
//! stands for: the HTTP layer turns a policy document into a
//! [`PermissionChange`] (the policy is a view of the permissions, as ACLs
//! are) and a record of what it changed, and the engine writes both as the
//! acting user: the change with `fchmod`/`fsetxattr(system.posix_acl_access)`
//! (only the owner, or root, gets it through), then the record in the
//! directory's `user.s3hpc.policy` attribute. If the record cannot be
//! written, the permissions go back to what they were, so a failed
//! PutBucketPolicy changes nothing.

use crate::bucket_config::{read_doc, write_doc};
use crate::perms::{apply, read_permissions};
use crate::*;
use rustix::fs::XattrFlags;
use std::os::fd::OwnedFd;

/// The bucket document the record is (`user.s3hpc.policy`).
const POLICY: &str = "policy";
const ACL_XATTR: &str = "system.posix_acl_access";

impl Store {
    /// The bucket's owner and permissions and its stored policy record
    /// (None: no policy). Opens the directory for reading, as a listing.
    pub fn bucket_policy(&self, bucket: &str) -> Result<(Permissions, Option<Vec<u8>>)> {
        let (fd, what) = self.open_target(bucket, None)?;
        let p = read_permissions(&fd, &what)?;
        Ok((p, read_doc(&fd, POLICY, &what)?))
    }

    /// Applies `change` (if any) to the bucket's directory, then stores
    /// `record` (None removes it), as the acting identity. Where the
    /// record cannot be stored, the permissions are put back.
    pub fn set_bucket_policy(
        &self,
        bucket: &str,
        change: Option<&PermissionChange>,
        record: Option<&[u8]>,
    ) -> Result<()> {
        let (fd, what) = self.open_target(bucket, None)?;
        let st = crate::fscalls::fstat(&fd).map_err(|e| S3Error::from_io(&e.into(), &what))?;
        let acl_before = raw_acl(&fd);
        if let Some(c) = change {
            apply(&fd, &st, c, None, &what)?;
        }
        let stored = write_doc(&fd, POLICY, record, &what);
        if stored.is_err() && change.is_some() {
            restore(&fd, st.st_mode, acl_before.as_deref());
        }
        stored
    }
}

/// The file's ACL attribute as it is (None: it has none).
fn raw_acl(fd: &OwnedFd) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4 + 8 * 64];
    let n = crate::fscalls::fgetxattr(fd, ACL_XATTR, &mut buf).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// Puts back the mode and ACL a failed change started from (best effort:
/// the same user just changed them, so it may).
fn restore(fd: &OwnedFd, st_mode: u32, acl: Option<&[u8]>) {
    let _ = crate::fscalls::fchmod(fd, rustix::fs::Mode::from_bits_truncate(st_mode & 0o7777));
    let _ = match acl {
        Some(raw) => crate::fscalls::fsetxattr(fd, ACL_XATTR, raw, XattrFlags::empty()),
        None => rustix::fs::fremovexattr(fd, ACL_XATTR),
    };
}
