//! Bucket configuration documents (CORS, ...): each kept as one extended
//! attribute `user.s3hpc.<name>` on the bucket's directory, so a change is
//! seen by every node at once and goes wherever the directory goes. The
//! engine keeps the bytes; what they mean belongs to the face that serves
//! them (CORS is the HTTP server's).

use crate::fscalls::{fgetxattr, fsetxattr, fstat};
use crate::*;
use rustix::fs::XattrFlags;
use rustix::io::Errno;
use std::os::fd::OwnedFd;

/// The largest document kept: S3's 64 KiB limit on a CORS configuration.
/// A file system may keep less (ext4: about 4 KiB of attributes per inode);
/// a larger one is refused with the reason.
pub const MAX_BUCKET_CONFIG: usize = 64 * 1024;

fn attribute(name: &str) -> String {
    format!("user.s3hpc.{name}")
}

/// Document `name` of an open bucket directory (`what` names it in errors).
pub(crate) fn read_doc(fd: &OwnedFd, name: &str, what: &str) -> Result<Option<Vec<u8>>> {
    let mut buf = vec![0u8; MAX_BUCKET_CONFIG];
    match fgetxattr(fd, attribute(name), &mut buf) {
        Ok(n) => {
            buf.truncate(n);
            Ok(Some(buf))
        }
        // No user attributes on this file system: nothing was ever set.
        Err(Errno::NODATA | Errno::NOTSUP) => Ok(None),
        Err(e) => Err(S3Error::from_io(
            &e.into(),
            &format!("{what}: reading its {name}"),
        )),
    }
}

/// Writes document `name` of an open bucket directory (None removes it;
/// having none is not an error), with S3's answers for what the file
/// system cannot keep.
pub(crate) fn write_doc(fd: &OwnedFd, name: &str, value: Option<&[u8]>, what: &str) -> Result<()> {
    let done = match value {
        Some(v) if v.len() > MAX_BUCKET_CONFIG => {
            return Err(s3err!(
                EntityTooLarge,
                "{what}: its {name} is {} bytes; at most {MAX_BUCKET_CONFIG} are kept",
                v.len()
            ))
        }
        Some(v) => fsetxattr(fd, attribute(name), v, XattrFlags::empty()),
        None => match rustix::fs::fremovexattr(fd, attribute(name)) {
            Err(Errno::NODATA | Errno::NOTSUP) => Ok(()),
            r => r,
        },
    };
    done.map_err(|e| match e {
        Errno::NOTSUP => s3err!(
            NotImplemented,
            "{what}: the data file system keeps no user extended attributes, where \
             s3hpc keeps a bucket's {name}; mount it with user_xattr"
        ),
        Errno::NOSPC | Errno::TOOBIG | Errno::RANGE => s3err!(
            EntityTooLarge,
            "{what}: the data file system cannot keep a {name} of {} bytes in an \
             extended attribute (ext4 keeps about 4 KiB per inode); make it shorter",
            value.map_or(0, <[u8]>::len)
        ),
        e => S3Error::from_io(&e.into(), &format!("{what}: setting its {name}")),
    })
}

impl Store {
    /// The bucket's `name` document; None when it has none.
    pub fn bucket_config(&self, bucket: &str, name: &str) -> Result<Option<Vec<u8>>> {
        let (fd, what) = self.open_target(bucket, None)?;
        read_doc(&fd, name, &what)
    }

    /// Sets the bucket's `name` document. Only the bucket's owner (or root)
    /// may, as only S3's bucket owner may: the kernel would let anyone who
    /// may write the directory.
    pub fn put_bucket_config(&self, bucket: &str, name: &str, value: &[u8]) -> Result<()> {
        let (fd, what) = self.open_owned(bucket, name)?;
        write_doc(&fd, name, Some(value), &what)
    }

    /// Removes the bucket's `name` document; having none is not an error.
    pub fn delete_bucket_config(&self, bucket: &str, name: &str) -> Result<()> {
        let (fd, what) = self.open_owned(bucket, name)?;
        write_doc(&fd, name, None, &what)
    }

    /// The bucket's directory, when the acting identity owns it (or is
    /// root).
    pub(crate) fn open_owned(&self, bucket: &str, name: &str) -> Result<(OwnedFd, String)> {
        let (fd, what) = self.open_target(bucket, None)?;
        let st = fstat(&fd).map_err(|e| S3Error::from_io(&e.into(), &what))?;
        let me = rustix::process::geteuid().as_raw();
        if me != 0 && st.st_uid != me {
            return Err(s3err!(
                AccessDenied,
                "only the owner of bucket {bucket:?} (uid {}) may change its {name}",
                st.st_uid
            ));
        }
        Ok((fd, what))
    }
}
