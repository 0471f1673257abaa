//! The data written by the write phases, and its verification on read-back.
//!
//! A per-run random base buffer (cheap: filled once) carries a 16-byte stamp
//! every 4 KiB: the file's id and the absolute file offset of the stamp. A
//! read that returns another file's data, another offset's data, or data of
//! an earlier run (other base) fails the comparison. Stamping costs a few
//! stores per 4 KiB, and verifying is one `memcmp` against an expected
//! buffer built the same way, so the pattern never dominates a phase.

use std::fmt::Write as _;

pub const STAMP_EVERY: usize = 4096;
const STAMP_LEN: usize = 16;

/// The run's data pattern: shared read-only by all ranks.
#[derive(Clone)]
pub struct Pattern {
    base: Vec<u8>,
}

impl Pattern {
    /// A base of `max_len` bytes (the largest transfer) from `seed`.
    pub fn new(seed: u64, max_len: usize) -> Pattern {
        let mut base = vec![0u8; max_len.next_multiple_of(8)];
        // xorshift64*: fast and good enough to make stale data differ.
        // splitmix64 of the seed: distinct seeds give distinct, non-zero states.
        let mut x = {
            let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) | 1
        };
        for chunk in base.chunks_exact_mut(8) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            chunk.copy_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
        }
        base.truncate(max_len);
        Pattern { base }
    }

    /// A working buffer of `len` bytes holding the base; `stamp` then only
    /// rewrites the stamps, so a buffer is reused across every transfer.
    pub fn buffer(&self, len: usize) -> Vec<u8> {
        assert!(len <= self.base.len(), "transfer larger than the pattern");
        self.base[..len].to_vec()
    }

    /// The first `len` bytes of the base, unstamped.
    pub fn base(&self, len: usize) -> &[u8] {
        &self.base[..len]
    }

    /// Writes the stamps of `(file_id, offset)` into a buffer from `buffer`.
    #[inline]
    pub fn stamp(buf: &mut [u8], file_id: u64, offset: u64) {
        let mut pos = 0;
        while pos < buf.len() {
            let mut stamp = [0u8; STAMP_LEN];
            stamp[..8].copy_from_slice(&file_id.to_le_bytes());
            stamp[8..].copy_from_slice(&(offset + pos as u64).to_le_bytes());
            let n = STAMP_LEN.min(buf.len() - pos);
            buf[pos..pos + n].copy_from_slice(&stamp[..n]);
            pos += STAMP_EVERY;
        }
    }

    /// Compares what was read with what `(file_id, offset)` must hold.
    /// `expected` is a scratch buffer from `buffer` of the same length.
    pub fn verify(
        got: &[u8],
        expected: &mut [u8],
        file_id: u64,
        offset: u64,
        what: &str,
    ) -> Result<(), String> {
        Self::stamp(expected, file_id, offset);
        if got == expected {
            return Ok(());
        }
        let first = got
            .iter()
            .zip(expected.iter())
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(expected.len()));
        let mut msg = format!(
            "data verification failed for {what} at file offset {}: byte {first} of the {}-byte transfer differs",
            offset + first as u64,
            got.len()
        );
        // Say whose data it is when its stamp is readable.
        let block = first / STAMP_EVERY * STAMP_EVERY;
        if let Some(s) = got.get(block..block + STAMP_LEN) {
            let id = u64::from_le_bytes(s[..8].try_into().unwrap());
            let off = u64::from_le_bytes(s[8..].try_into().unwrap());
            let _ = write!(
                msg,
                " (expected file id {file_id:#x} offset {}, found stamp of file id {id:#x} offset {off})",
                offset + block as u64
            );
        }
        Err(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_wrong_file_offset_and_stale_data() {
        let p = Pattern::new(42, 10_000);
        let mut w = p.buffer(10_000);
        Pattern::stamp(&mut w, 7, 20_000);
        let mut exp = p.buffer(10_000);
        assert!(Pattern::verify(&w, &mut exp, 7, 20_000, "f").is_ok());
        assert!(Pattern::verify(&w, &mut exp, 8, 20_000, "f").is_err());
        let e = Pattern::verify(&w, &mut exp, 7, 30_000, "f").unwrap_err();
        assert!(e.contains("offset"), "{e}");
        // Same stamps over another run's base: stale data.
        let other = Pattern::new(43, 10_000);
        let mut stale = other.buffer(10_000);
        Pattern::stamp(&mut stale, 7, 20_000);
        assert!(Pattern::verify(&stale, &mut exp, 7, 20_000, "f").is_err());
        // One flipped byte between stamps.
        w[5000] ^= 1;
        assert!(Pattern::verify(&w, &mut exp, 7, 20_000, "f").is_err());
    }

    #[test]
    fn short_buffers_get_partial_stamps() {
        let p = Pattern::new(1, 3901);
        let mut b = p.buffer(10);
        Pattern::stamp(&mut b, 1, 0);
        let mut e = p.buffer(10);
        assert!(Pattern::verify(&b, &mut e, 1, 0, "f").is_ok());
    }
}
