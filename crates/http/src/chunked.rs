//! The `aws-chunked` content encoding, decoded incrementally and without
//! I/O, so one decoder serves every way a body arrives and can be fuzzed on
//! its own (`crates/http/fuzz`).
//!
//! ```text
//! <hex size>[;chunk-signature=<64 hex>]\r\n <size bytes> \r\n   ... repeated
//! 0[;chunk-signature=<64 hex>]\r\n
//! [<name>:<value>\r\n ...]             trailers (x-amz-checksum-*, x-amz-trailer-signature)
//! \r\n
//! ```
//!
//! Memory is bounded whatever the input: data is handed on as slices of the
//! input (never buffered per chunk), a size or trailer line may hold at most
//! [`MAX_LINE`] bytes, the trailers [`MAX_TRAILERS`] bytes in
//! [`MAX_TRAILER_COUNT`] lines. The decoded length is checked against
//! `x-amz-decoded-content-length` as data passes (more is refused at once)
//! and at the end (less is refused).
//!
//! Chunk and trailer signatures are not checked here: s3s checks them for
//! SigV4 header-signed requests (and decodes those bodies itself); on the
//! other paths (anonymous, presigned, SigV2) there is no seed signature to
//! chain them from.

use bytes::{Buf, Bytes};

/// Longest chunk-size line (`size;chunk-signature=...`) or trailer line.
pub const MAX_LINE: usize = 1024;
/// Total bytes of trailer lines.
pub const MAX_TRAILERS: usize = 16 << 10;
/// Trailer lines.
pub const MAX_TRAILER_COUNT: usize = 100;

/// Why a body was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkedError {
    /// Not aws-chunked framing.
    Malformed(&'static str),
    /// The chunks hold more than `x-amz-decoded-content-length`.
    TooLong { expected: u64 },
    /// The body ended before the framing did.
    Truncated,
    /// The chunks hold fewer bytes than `x-amz-decoded-content-length`.
    Short { decoded: u64, expected: u64 },
}

impl std::fmt::Display for ChunkedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkedError::Malformed(why) => write!(f, "malformed aws-chunked body: {why}"),
            ChunkedError::TooLong { expected } => write!(
                f,
                "the aws-chunked body holds more than the {expected} bytes of \
                 x-amz-decoded-content-length"
            ),
            ChunkedError::Truncated => f.write_str("the aws-chunked body ended inside a chunk"),
            ChunkedError::Short { decoded, expected } => write!(
                f,
                "the aws-chunked body holds {decoded} bytes, x-amz-decoded-content-length \
                 says {expected}"
            ),
        }
    }
}

impl std::error::Error for ChunkedError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a chunk-size line.
    Size,
    /// Inside a chunk's data.
    Data,
    /// After a chunk's data: its CRLF.
    DataEnd,
    /// After the last (empty) chunk: trailer lines until an empty one.
    Trailers,
    Done,
}

/// One aws-chunked body being decoded.
pub struct Decoder {
    state: State,
    /// The current line so far (size or trailer), or the CRLF after data.
    line: Vec<u8>,
    /// Data bytes left in the current chunk.
    left: u64,
    decoded: u64,
    expected: Option<u64>,
    trailers: Vec<(String, String)>,
    trailer_bytes: usize,
}

impl Decoder {
    /// A decoder for a body of `expected` decoded bytes, if known.
    pub fn new(expected: Option<u64>) -> Decoder {
        Decoder {
            state: State::Size,
            line: Vec::new(),
            left: 0,
            decoded: 0,
            expected,
            trailers: Vec::new(),
            trailer_bytes: 0,
        }
    }

    /// Data bytes decoded so far.
    pub fn decoded(&self) -> u64 {
        self.decoded
    }

    /// Bytes the decoder holds (line buffer and trailers): bounded by
    /// [`MAX_LINE`] and [`MAX_TRAILERS`] whatever the input.
    pub fn buffered(&self) -> usize {
        self.line.capacity()
            + self
                .trailers
                .iter()
                .map(|(k, v)| k.capacity() + v.capacity())
                .sum::<usize>()
    }

    /// Consumes `input` up to the next piece of data and returns it (a
    /// slice of `input`, not a copy); `None` once `input` is used up.
    pub fn next(&mut self, input: &mut Bytes) -> Result<Option<Bytes>, ChunkedError> {
        while !input.is_empty() {
            match self.state {
                State::Size => {
                    if self.take_line(input)? {
                        self.size_line()?;
                    }
                }
                State::Data => {
                    let n = (input.len() as u64).min(self.left) as usize;
                    let data = input.split_to(n);
                    self.left -= n as u64;
                    self.decoded += n as u64;
                    if self.left == 0 {
                        self.state = State::DataEnd;
                    }
                    return Ok(Some(data));
                }
                State::DataEnd => {
                    while self.line.len() < 2 && !input.is_empty() {
                        self.line.push(input[0]);
                        input.advance(1);
                    }
                    if self.line.len() == 2 {
                        if self.line != b"\r\n" {
                            return Err(ChunkedError::Malformed("chunk data not followed by CRLF"));
                        }
                        self.line.clear();
                        self.state = State::Size;
                    }
                }
                State::Trailers => {
                    if self.take_line(input)? {
                        self.trailer_line()?;
                    }
                }
                State::Done => {
                    return Err(ChunkedError::Malformed("bytes after the final chunk"));
                }
            }
        }
        Ok(None)
    }

    /// The body has ended: checks that the framing is complete and the
    /// length right, and returns the trailers (names lower-cased, without
    /// `x-amz-trailer-signature`).
    pub fn finish(&mut self) -> Result<Vec<(String, String)>, ChunkedError> {
        match self.state {
            State::Done => {}
            // Trailers not closed by an empty line, or a last line without
            // its CRLF: taken as they are, as S3 and s3s do.
            State::Trailers => {
                if !self.line.is_empty() {
                    let mut line = std::mem::take(&mut self.line);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    self.line = line;
                    self.trailer_line()?;
                }
                self.state = State::Done;
            }
            _ => return Err(ChunkedError::Truncated),
        }
        if let Some(expected) = self.expected {
            if self.decoded != expected {
                return Err(ChunkedError::Short {
                    decoded: self.decoded,
                    expected,
                });
            }
        }
        Ok(std::mem::take(&mut self.trailers))
    }

    /// Moves bytes of `input` into `self.line` up to a LF. True when the
    /// line is complete; it is then in `self.line` without its CRLF.
    fn take_line(&mut self, input: &mut Bytes) -> Result<bool, ChunkedError> {
        let (n, complete) = match memchr(b'\n', input) {
            Some(i) => (i + 1, true),
            None => (input.len(), false),
        };
        if self.line.len() + n > MAX_LINE {
            return Err(ChunkedError::Malformed(
                "a chunk-size or trailer line is too long",
            ));
        }
        self.line.extend_from_slice(&input[..n]);
        input.advance(n);
        if complete {
            if !self.line.ends_with(b"\r\n") {
                return Err(ChunkedError::Malformed("a line does not end in CRLF"));
            }
            self.line.truncate(self.line.len() - 2);
        }
        Ok(complete)
    }

    fn size_line(&mut self) -> Result<(), ChunkedError> {
        let line = std::mem::take(&mut self.line);
        let hex = match line.iter().position(|&b| b == b';') {
            Some(i) => &line[..i],
            None => &line[..],
        };
        if hex.is_empty() || hex.len() > 16 || !hex.iter().all(u8::is_ascii_hexdigit) {
            return Err(ChunkedError::Malformed("a chunk size is not hexadecimal"));
        }
        // 16 hex digits at most: fits.
        let size = hex.iter().fold(0u64, |a, &b| {
            (a << 4) | (b as char).to_digit(16).unwrap_or(0) as u64
        });
        self.line = line;
        self.line.clear();
        if size == 0 {
            self.state = State::Trailers;
            return Ok(());
        }
        let total = self.decoded.checked_add(size);
        if let Some(expected) = self.expected {
            if total.is_none_or(|t| t > expected) {
                return Err(ChunkedError::TooLong { expected });
            }
        }
        self.left = size;
        self.state = State::Data;
        Ok(())
    }

    fn trailer_line(&mut self) -> Result<(), ChunkedError> {
        if self.line.is_empty() {
            self.state = State::Done;
            return Ok(());
        }
        self.trailer_bytes += self.line.len();
        if self.trailer_bytes > MAX_TRAILERS || self.trailers.len() >= MAX_TRAILER_COUNT {
            return Err(ChunkedError::Malformed("too many trailers"));
        }
        let line = std::mem::take(&mut self.line);
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(ChunkedError::Malformed("a trailer has no colon"))?;
        let name = std::str::from_utf8(&line[..colon])
            .ok()
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_graphic()))
            .ok_or(ChunkedError::Malformed(
                "a trailer name is not a header name",
            ))?
            .to_ascii_lowercase();
        let value = std::str::from_utf8(&line[colon + 1..])
            .map_err(|_| ChunkedError::Malformed("a trailer value is not text"))?
            .trim()
            .to_string();
        if name != "x-amz-trailer-signature" {
            self.trailers.push((name, value));
        }
        self.line = line;
        self.line.clear();
        Ok(())
    }
}

fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Decoded = (Vec<u8>, Vec<(String, String)>);

    /// Decodes `body` fed in pieces of `step` bytes.
    pub(crate) fn decode(
        body: &[u8],
        expected: Option<u64>,
        step: usize,
    ) -> Result<Decoded, ChunkedError> {
        let mut d = Decoder::new(expected);
        let mut out = Vec::new();
        for piece in body.chunks(step.max(1)) {
            let mut input = Bytes::copy_from_slice(piece);
            while let Some(data) = d.next(&mut input)? {
                out.extend_from_slice(&data);
            }
        }
        Ok((out, d.finish()?))
    }

    const SIG: &str = "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648";

    fn encode(data: &[u8], chunk: usize, signed: bool, trailers: &str) -> Vec<u8> {
        let ext = |_: usize| {
            if signed {
                format!(";chunk-signature={SIG}")
            } else {
                String::new()
            }
        };
        let mut out = Vec::new();
        for c in data.chunks(chunk) {
            out.extend(format!("{:x}{}\r\n", c.len(), ext(c.len())).bytes());
            out.extend_from_slice(c);
            out.extend_from_slice(b"\r\n");
        }
        out.extend(format!("0{}\r\n{trailers}\r\n", ext(0)).bytes());
        out
    }

    #[test]
    fn every_framing_decodes_to_the_data() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 31) as u8).collect();
        let n = data.len() as u64;
        for signed in [false, true] {
            for trailers in [
                "",
                "x-amz-checksum-crc32:AAAAAA==\r\n",
                &format!("X-Amz-Checksum-Crc32:AAAAAA==\r\nx-amz-trailer-signature:{SIG}\r\n"),
            ] {
                let body = encode(&data, 65536, signed, trailers);
                for step in [1, 7, 4096, body.len()] {
                    let (got, t) = decode(&body, Some(n), step).unwrap();
                    assert_eq!(got, data);
                    let want: Vec<(String, String)> = if trailers.is_empty() {
                        vec![]
                    } else {
                        vec![("x-amz-checksum-crc32".into(), "AAAAAA==".into())]
                    };
                    assert_eq!(t, want);
                }
            }
        }
        // An empty body, and one without the closing empty line.
        assert_eq!(decode(b"0\r\n\r\n", Some(0), 1).unwrap().0, b"");
        let (_, t) = decode(b"0\r\nx-amz-checksum-crc32:AAAAAA==\r\n", Some(0), 3).unwrap();
        assert_eq!(t.len(), 1);
        let (_, t) = decode(b"0\r\nx-amz-checksum-crc32:AAAAAA==", Some(0), 3).unwrap();
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn lengths_must_match_the_decoded_length() {
        let data = vec![7u8; 1000];
        let body = encode(&data, 300, false, "");
        assert_eq!(
            decode(&body, Some(990), 64).unwrap_err(),
            ChunkedError::TooLong { expected: 990 }
        );
        assert_eq!(
            decode(&body, Some(1010), 64).unwrap_err(),
            ChunkedError::Short {
                decoded: 1000,
                expected: 1010
            }
        );
        assert!(decode(&body, None, 64).is_ok());
    }

    #[test]
    fn broken_framing_is_refused() {
        let data = vec![1u8; 100];
        let body = encode(&data, 40, true, "x-amz-checksum-crc32:AAAAAA==\r\n");
        // Every cut short of the end is refused (a cut inside the trailers
        // section is a body that simply ends there, as S3 takes it).
        let trailers_at = body.len() - "x-amz-checksum-crc32:AAAAAA==\r\n\r\n".len();
        for cut in 0..trailers_at {
            assert!(decode(&body[..cut], Some(100), 5).is_err(), "cut at {cut}");
        }
        for bad in [
            &b"zz\r\nab\r\n0\r\n\r\n"[..],
            b"2\r\nabc\r\n0\r\n\r\n",
            b"2\nab\r\n0\r\n\r\n",
            b"2\r\nab\r\n0\r\n\r\nextra",
            b"\r\n",
            b"ffffffffffffffffff\r\n",
            b"0\r\nno colon here\r\n\r\n",
        ] {
            assert!(
                decode(bad, None, 3).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let long = vec![b'1'; MAX_LINE + 1];
        assert!(matches!(
            decode(&long, None, 100),
            Err(ChunkedError::Malformed(_))
        ));
    }
}
