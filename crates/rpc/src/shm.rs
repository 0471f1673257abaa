//! A shared-memory buffer between a client and the gateway on one node,
//! for PUT bodies: the client copies a body into it and the gateway writes
//! it to the object file straight from there. That is two copies of the
//! bytes (into the buffer, into the page cache) against three through the
//! socket (into the socket, out of it, into the page cache).
//!
//! The client creates the buffer as a sealed memfd and passes it once per
//! connection (`AttachSharedBuffer`). The gateway maps it read-only and
//! only after checking the seals: a client that could shrink the file
//! would make the gateway's reads fault (SIGBUS), so the size must be
//! sealed. What the client writes into the buffer while the gateway reads
//! it only spoils that client's own upload.

use rustix::fs::{MemfdFlags, SealFlags};
use rustix::mm::{MapFlags, ProtFlags};
use std::io;
use std::os::fd::{AsFd, OwnedFd};

/// Size of a connection's buffer: bodies up to this size go through it,
/// larger ones stream as data frames. Pages are allocated as they are
/// first written, so a connection that only sends 2 MiB bodies uses 2 MiB.
pub const SHARED_BUFFER_BYTES: u64 = 16 << 20;

/// Bodies smaller than this travel inline with their request: one write,
/// and nothing to gain from the buffer.
pub const SHARED_BUFFER_MIN_BODY: usize = 64 << 10;

/// Seals that make the size fixed for good.
fn required_seals() -> SealFlags {
    SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL
}

/// A mapping of the shared memfd.
pub struct SharedBuffer {
    ptr: *mut u8,
    len: usize,
    writable: bool,
}

// The mapping is plain memory owned by this value; the raw pointer only
// stops the auto traits.
unsafe impl Send for SharedBuffer {}

impl SharedBuffer {
    /// Client side: a new sealed memfd of `len` bytes, mapped read-write,
    /// and the descriptor to pass to the gateway.
    pub fn create(len: u64) -> io::Result<(SharedBuffer, OwnedFd)> {
        let fd = rustix::fs::memfd_create(
            "s3hpc-put-buffer",
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
        )?;
        rustix::fs::ftruncate(&fd, len)?;
        rustix::fs::fcntl_add_seals(&fd, required_seals())?;
        let buf = Self::map(&fd, len as usize, true)?;
        Ok((buf, fd))
    }

    /// Gateway side: maps a buffer a client passed, after checking it is a
    /// sealed memfd of exactly `len` bytes.
    pub fn attach(fd: &OwnedFd, len: u64) -> io::Result<SharedBuffer> {
        let refuse = |why: &str| io::Error::new(io::ErrorKind::InvalidInput, why.to_string());
        if len == 0 || len > SHARED_BUFFER_BYTES {
            return Err(refuse("the shared buffer size is out of range"));
        }
        let seals = rustix::fs::fcntl_get_seals(fd)
            .map_err(|_| refuse("the shared buffer is not a sealable memfd"))?;
        if !seals.contains(SealFlags::SHRINK | SealFlags::SEAL) {
            return Err(refuse("the shared buffer's size is not sealed"));
        }
        let st = rustix::fs::fstat(fd)?;
        if st.st_size as u64 != len {
            return Err(refuse(
                "the shared buffer's size differs from the announced one",
            ));
        }
        Self::map(fd, len as usize, false)
    }

    fn map(fd: &impl AsFd, len: usize, writable: bool) -> io::Result<SharedBuffer> {
        let prot = if writable {
            ProtFlags::READ | ProtFlags::WRITE
        } else {
            ProtFlags::READ
        };
        // SAFETY: a fresh mapping at an address the kernel picks; nothing
        // else refers to it, and Drop unmaps exactly this range.
        let ptr =
            unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, prot, MapFlags::SHARED, fd, 0)? };
        Ok(SharedBuffer {
            ptr: ptr.cast(),
            len,
            writable,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first `n` bytes (`None` past the end). The other process may
    /// write into them meanwhile; they are only ever copied as bytes (into
    /// a file or a hash), so that can only spoil the upload it belongs to.
    pub fn bytes(&self, n: usize) -> Option<&[u8]> {
        // SAFETY: within the mapping, which lives as long as `self`.
        (n <= self.len).then(|| unsafe { std::slice::from_raw_parts(self.ptr, n) })
    }

    /// Client side: copies `body` to the start of the buffer.
    pub fn fill(&mut self, body: &[u8]) -> bool {
        if !self.writable || body.len() > self.len {
            return false;
        }
        // SAFETY: within a writable mapping owned by `self`; `body` is a
        // different allocation.
        unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), self.ptr, body.len()) };
        true
    }
}

impl Drop for SharedBuffer {
    fn drop(&mut self) {
        // SAFETY: unmaps the range mapped in `map`, no longer referenced.
        let _ = unsafe { rustix::mm::munmap(self.ptr.cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_buffers_attach_and_others_do_not() {
        let (mut client, fd) = SharedBuffer::create(1 << 20).unwrap();
        assert!(client.fill(b"hello"));
        let gw = SharedBuffer::attach(&fd, 1 << 20).unwrap();
        assert_eq!(gw.bytes(5).unwrap(), b"hello");
        assert!(gw.bytes((1 << 20) + 1).is_none());
        // The size cannot change any more.
        assert!(rustix::fs::ftruncate(&fd, 10).is_err());
        // A wrong size, an unsealed memfd, a regular file: refused.
        assert!(SharedBuffer::attach(&fd, 1 << 19).is_err());
        let loose = rustix::fs::memfd_create("x", MemfdFlags::ALLOW_SEALING).unwrap();
        rustix::fs::ftruncate(&loose, 4096).unwrap();
        assert!(SharedBuffer::attach(&loose, 4096).is_err());
        let file: OwnedFd = tempfile::tempfile().unwrap().into();
        assert!(SharedBuffer::attach(&file, 4096).is_err());
    }
}
