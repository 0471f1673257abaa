//! Read-only memory mappings of an object's file, as `Bytes` for hyper.
//!
//! A GET body served from a mapping is copied once, by the kernel, from
//! the page cache into the socket; read into a buffer first, it is copied
//! twice (page cache to buffer, buffer to socket), and the first copy was
//! half of the server's CPU time of a 2 MiB GET.
//!
//! Only the kernel ever touches the mapped bytes: hyper hands `Bytes` to
//! `writev` without copying them (its queued write strategy, chosen for
//! sockets with vectored writes), and nothing on the way reads them. That
//! matters if another process truncates the file in place while it is
//! served (s3hpc never does: it replaces objects by renaming a new file over
//! the key, so an open file keeps its bytes). A user-space read past the
//! new end of a mapping raises SIGBUS and would kill the server; the
//! kernel's copy in `writev` instead fails with EFAULT, so that GET's
//! connection ends short, as it does when a read finds the file shrunk
//! (tested in tests/get_truncated.rs).

use bytes::Bytes;
use rustix::mm::{MapFlags, ProtFlags};
use std::fs::File;
use std::io;
use std::ptr::NonNull;

/// A multiple of every Linux page size (4, 16 and 64 KiB), so that a
/// mapping starting at such an offset is valid wherever this runs.
const ALIGN: u64 = 64 << 10;

/// One mapped range; unmapped when the last `Bytes` over it drops.
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a read-only mapping owned by this value alone; any thread may
// read it or unmap it.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl AsRef<[u8]> for Mapping {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `len` bytes mapped at `ptr`, alive until drop.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: exactly the range mapped in `map_range`, no longer
        // referenced (the `Bytes` over it are gone).
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Maps `len` bytes of `file` from `offset`, read-only, with the page
/// tables filled at once (`MAP_POPULATE`: one call instead of a fault per
/// 64 KiB later; on a cold file that is where the disk is read).
pub fn map_range(file: &File, offset: u64, len: usize) -> io::Result<Bytes> {
    if len == 0 {
        return Ok(Bytes::new());
    }
    let skip = (offset % ALIGN) as usize;
    let map_len = len + skip;
    // SAFETY: a fresh read-only mapping at an address the kernel picks;
    // nothing else refers to it, and `Mapping` unmaps exactly this range.
    let ptr = unsafe {
        rustix::mm::mmap(
            std::ptr::null_mut(),
            map_len,
            ProtFlags::READ,
            MapFlags::SHARED | MapFlags::POPULATE,
            file,
            offset - skip as u64,
        )?
    };
    let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave null"))?;
    let mapping = Mapping { ptr, len: map_len };
    Ok(Bytes::from_owner(mapping).slice(skip..))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn maps_unaligned_ranges() {
        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        f.write_all(&data).unwrap();
        for (off, len) in [
            (0, 300_000),
            (1, 10),
            (65_535, 70_000),
            (131_072, 1),
            (299_999, 1),
        ] {
            let got = map_range(&f, off as u64, len).unwrap();
            assert_eq!(&got[..], &data[off..off + len], "{off}+{len}");
        }
        assert!(map_range(&f, 0, 0).unwrap().is_empty());
    }
}
