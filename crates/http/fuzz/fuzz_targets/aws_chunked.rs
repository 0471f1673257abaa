//! The aws-chunked decoder on arbitrary bytes, fed in arbitrary pieces:
//! no panic, no hang, memory within the decoder's bounds, never more data
//! out than the decoded length allows.
//!
//! ```sh
//! cd crates/http/fuzz && cargo +nightly fuzz run aws_chunked -- -max_total_time=60
//! ```
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;

// The decoder alone (it depends on `bytes` only), so the fuzz build does
// not compile the server.
#[path = "../../src/chunked.rs"]
#[allow(dead_code)]
mod chunked;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    // First bytes: the decoded length (or none) and the piece size.
    let expected = match data[0] {
        0 => None,
        n => Some(u64::from(n) * 37),
    };
    let step = usize::from(data[1]).max(1);
    let body = &data[2..];
    let mut d = chunked::Decoder::new(expected);
    let mut out = 0u64;
    for piece in body.chunks(step) {
        let mut input = Bytes::copy_from_slice(piece);
        loop {
            match d.next(&mut input) {
                Ok(Some(got)) => {
                    assert!(!got.is_empty());
                    out += got.len() as u64;
                }
                Ok(None) => break,
                Err(_) => return,
            }
            assert!(d.buffered() <= 2 * chunked::MAX_LINE + chunked::MAX_TRAILERS);
        }
        assert!(input.is_empty());
    }
    if let Some(n) = expected {
        assert!(out <= n);
    }
    if d.finish().is_ok() {
        if let Some(n) = expected {
            assert_eq!(out, n);
        }
    }
});
