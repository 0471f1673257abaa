//! A bucket's policy, kept on its directory next to the permissions it
//! stands for: the HTTP layer turns a policy document into a
//! [`PermissionChange`] (the policy is a view of the permissions, as ACLs
//! are) and a record of what it changed, and the engine writes both as the
//! acting user: the change with `fchmod`/`fsetxattr(system.posix_acl_access)`
//! (only the owner, or root, gets it through), then the record in the
//! directory's `user.s3hpc.policy` attribute. If the record cannot be
//! written, the permissions go back to what they were, so a failed
//! PutBucketPolicy changes nothing.

use crate::perms::{apply_change, read_permissions};
use crate::*;
use rustix::fs::XattrFlags;
use rustix::io::Errno;
use std::os::fd::OwnedFd;

const POLICY_XATTR: &str = "user.s3hpc.policy";
const ACL_XATTR: &str = "system.posix_acl_access";
/// The largest record read back (a 20 KB policy and its bookkeeping fit).
const MAX_RECORD: usize = 64 * 1024;

impl Store {
    /// The bucket's owner and permissions and its stored policy record
    /// (None: no policy). Opens the directory for reading, as a listing.
    pub fn bucket_policy(&self, bucket: &str) -> Result<(Permissions, Option<Vec<u8>>)> {
        let (fd, what) = self.open_target(bucket, None)?;
        let p = read_permissions(&fd, &what)?;
        let mut buf = vec![0u8; MAX_RECORD];
        match crate::fscalls::fgetxattr(&fd, POLICY_XATTR, &mut buf) {
            Ok(n) => {
                buf.truncate(n);
                Ok((p, Some(buf)))
            }
            Err(Errno::NODATA) | Err(Errno::OPNOTSUPP) => Ok((p, None)),
            Err(e) => Err(S3Error::from_io(&e.into(), &what)),
        }
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
            apply_change(&fd, st.st_mode, c, &what)?;
        }
        let stored = match record {
            Some(r) => crate::fscalls::fsetxattr(&fd, POLICY_XATTR, r, XattrFlags::empty()),
            None => match rustix::fs::fremovexattr(&fd, POLICY_XATTR) {
                Ok(()) | Err(Errno::NODATA) => Ok(()),
                Err(e) => Err(e),
            },
        };
        let Err(e) = stored else { return Ok(()) };
        if change.is_some() {
            restore(&fd, st.st_mode, acl_before.as_deref());
        }
        Err(match e {
            Errno::NOSPC | Errno::TOOBIG | Errno::RANGE => s3err!(
                EntityTooLarge,
                "{what}: the file system cannot keep a policy record of {} bytes as an \
                 extended attribute of the bucket's directory (ext4 keeps about 4 KB of \
                 attributes per file); make the policy shorter",
                record.map_or(0, <[u8]>::len)
            ),
            Errno::OPNOTSUPP => s3err!(
                NotImplemented,
                "{what}: the data file system keeps no user extended attributes, where \
                 s3hpc keeps a bucket's policy document"
            ),
            e => S3Error::from_io(&e.into(), &what),
        })
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
