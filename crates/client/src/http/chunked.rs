//! A body sent as signed aws-chunked chunks (SigV4 streaming,
//! `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`), as the AWS SDKs send uploads:
//! each chunk carries a signature chained from the one before, so the
//! server can verify the data as it arrives.
//!
//! `<hex size>;chunk-signature=<64 hex>\r\n<data>\r\n`, ending with a
//! chunk of size 0.

use super::sigv4::{Signed, Signer};
use std::io::{self, Read};

/// Data bytes per chunk: the SDKs' default.
pub const CHUNK: usize = 64 << 10;

const SIG_FIELD: &str = ";chunk-signature=";
const SIG_LEN: usize = 64;

/// The encoded length of `len` data bytes (the request's Content-Length).
pub fn encoded_len(len: u64) -> u64 {
    let frame = |n: u64| format!("{n:x}").len() as u64 + (SIG_FIELD.len() + SIG_LEN + 4) as u64 + n;
    let full = len / CHUNK as u64;
    let rest = len % CHUNK as u64;
    full * frame(CHUNK as u64) + if rest > 0 { frame(rest) } else { 0 } + frame(0)
}

/// Reads `inner` (exactly `left` bytes) and yields it framed and signed.
pub struct ChunkEncoder<'a> {
    inner: &'a mut dyn Read,
    left: u64,
    signer: &'a Signer,
    seed: &'a Signed,
    previous: String,
    data: Vec<u8>,
    /// The current frame, and how much of it was read.
    frame: Vec<u8>,
    at: usize,
    done: bool,
}

impl<'a> ChunkEncoder<'a> {
    pub fn new(inner: &'a mut dyn Read, len: u64, signer: &'a Signer, seed: &'a Signed) -> Self {
        ChunkEncoder {
            inner,
            left: len,
            signer,
            seed,
            previous: seed.signature.clone(),
            data: Vec::with_capacity(CHUNK),
            frame: Vec::with_capacity(CHUNK + 100),
            at: 0,
            done: false,
        }
    }

    /// Frames the next chunk (the empty one last).
    fn next_frame(&mut self) -> io::Result<()> {
        let want = self.left.min(CHUNK as u64) as usize;
        self.data.resize(want, 0);
        self.inner.read_exact(&mut self.data).map_err(|e| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the body ended before its declared length: {e}"),
            )
        })?;
        self.left -= want as u64;
        let sig = self
            .signer
            .chunk_signature(self.seed, &self.previous, &self.data);
        self.frame.clear();
        self.frame
            .extend_from_slice(format!("{want:x}{SIG_FIELD}{sig}\r\n").as_bytes());
        self.frame.extend_from_slice(&self.data);
        self.frame.extend_from_slice(b"\r\n");
        self.at = 0;
        self.done = want == 0;
        self.previous = sig;
        Ok(())
    }
}

impl Read for ChunkEncoder<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.frame.len() {
            if self.done {
                return Ok(0);
            }
            self.next_frame()?;
        }
        let n = buf.len().min(self.frame.len() - self.at);
        buf[..n].copy_from_slice(&self.frame[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_have_the_announced_length() {
        let signer = Signer::new("a".into(), "s".into(), "us-east-1".into());
        let seed = Signed {
            amz_date: "20130524T000000Z".into(),
            authorization: String::new(),
            scope: "20130524/us-east-1/s3/aws4_request".into(),
            signature: "0".repeat(64),
        };
        for len in [0u64, 1, 65535, 65536, 65537, 3 * 65536 + 5] {
            let data = vec![7u8; len as usize];
            let mut src = &data[..];
            let mut out = Vec::new();
            ChunkEncoder::new(&mut src, len, &signer, &seed)
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out.len() as u64, encoded_len(len), "len {len}");
            assert!(out.ends_with(b"\r\n\r\n"));
            let text = String::from_utf8_lossy(&out);
            assert_eq!(
                text.matches(SIG_FIELD).count() as u64,
                len.div_ceil(CHUNK as u64) + 1
            );
        }
        // A body shorter than announced fails the upload.
        let mut short = &[1u8; 10][..];
        let mut out = Vec::new();
        let err = ChunkEncoder::new(&mut short, 20, &signer, &seed)
            .read_to_end(&mut out)
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
