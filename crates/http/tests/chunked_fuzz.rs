//! A bounded, deterministic fuzz of the aws-chunked decoder on stable Rust
//! (the cargo-fuzz target in `crates/http/fuzz` runs the same checks for
//! longer): random bodies and mutations of valid ones, split at random
//! points. No panic, no hang (bounded work per input), the decoder's memory
//! within its bounds, and never more data than the decoded length allows.

use bytes::Bytes;
use s3hpc_http::chunked::{Decoder, MAX_LINE, MAX_TRAILERS};
use std::time::{Duration, Instant};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn valid(rng: &mut Rng) -> (Vec<u8>, u64) {
    let mut body = Vec::new();
    let mut total = 0u64;
    let signed = rng.below(2) == 0;
    for _ in 0..rng.below(5) {
        let n = 1 + rng.below(3000);
        let sig = if signed {
            format!(";chunk-signature={}", "a".repeat(64))
        } else {
            String::new()
        };
        body.extend(format!("{n:x}{sig}\r\n").bytes());
        body.extend((0..n).map(|i| (i * 7) as u8));
        body.extend(b"\r\n");
        total += n as u64;
    }
    body.extend(b"0\r\n");
    if rng.below(2) == 0 {
        body.extend(b"x-amz-checksum-crc32:AAAAAA==\r\n");
    }
    body.extend(b"\r\n");
    (body, total)
}

fn mutate(rng: &mut Rng, body: &mut Vec<u8>) {
    const INTERESTING: &[&[u8]] = &[
        b"\r\n",
        b";",
        b":",
        b"ffffffffffffffff",
        b"fffffffffffffffff",
        b"0\r\n",
        b"\n",
        b"\r",
        b"x-amz-trailer-signature:",
    ];
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(body.len() + 1);
        match rng.below(6) {
            0 if at < body.len() => body[at] ^= 1 << rng.below(8),
            1 if at < body.len() => {
                body.remove(at);
            }
            2 => body.insert(at, rng.next() as u8),
            3 => body.truncate(at),
            4 => {
                let s = INTERESTING[rng.below(INTERESTING.len())];
                body.splice(at..at, s.iter().copied());
            }
            _ => {
                // A long run of one byte: long lines, long chunks.
                let b = [b'1', b'a', b'\r', b'x'][rng.below(4)];
                body.splice(at..at, std::iter::repeat_n(b, rng.below(3 * MAX_LINE)));
            }
        }
    }
}

/// Decodes `body` in random pieces; checks the invariants.
fn run(rng: &mut Rng, body: &[u8], expected: Option<u64>) -> bool {
    let mut d = Decoder::new(expected);
    let mut out = 0u64;
    let mut at = 0;
    while at < body.len() {
        let n = 1 + rng.below(body.len() - at);
        let mut input = Bytes::copy_from_slice(&body[at..at + n]);
        at += n;
        // Each call consumes input or returns: at most len+1 calls a piece.
        for _ in 0..=n {
            match d.next(&mut input) {
                Ok(Some(data)) => {
                    assert!(!data.is_empty());
                    out += data.len() as u64;
                }
                Ok(None) => break,
                Err(_) => return false,
            }
            assert!(
                d.buffered() <= 2 * MAX_LINE + MAX_TRAILERS,
                "{}",
                d.buffered()
            );
        }
        assert!(input.is_empty(), "the decoder stopped without consuming");
        if let Some(e) = expected {
            assert!(out <= e, "{out} bytes out, {e} allowed");
        }
    }
    match d.finish() {
        Ok(_) => {
            if let Some(e) = expected {
                assert_eq!(out, e);
            }
            true
        }
        Err(_) => false,
    }
}

#[test]
fn random_and_mutated_bodies() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut accepted, mut refused, mut cases) = (0, 0, 0);
    while cases < 20_000 && Instant::now() < deadline {
        cases += 1;
        let (mut body, total) = valid(&mut rng);
        let pristine = rng.below(8) == 0;
        if !pristine && rng.below(10) == 0 {
            body = (0..rng.below(4096)).map(|_| rng.next() as u8).collect();
        } else if !pristine {
            mutate(&mut rng, &mut body);
        }
        let expected = match rng.below(4) {
            0 => None,
            1 => Some(total + rng.below(3) as u64),
            _ => Some(total),
        };
        let ok = run(&mut rng, &body, expected);
        if pristine && expected == Some(total) {
            assert!(ok, "a valid body was refused");
        }
        if ok {
            accepted += 1;
        } else {
            refused += 1;
        }
    }
    assert!(cases >= 1000, "only {cases} cases in the time limit");
    assert!(
        accepted > 0 && refused > 0,
        "{accepted} accepted, {refused} refused"
    );
}
