//! Entry points for fuzzing every decoder of peer input, shared by the
//! cargo-fuzz targets (`crates/rpc/fuzz`, nightly) and the bounded run on
//! stable (`tests/fuzz.rs`), so both exercise the same code. Each takes
//! arbitrary bytes; a panic (including the checks here) is a finding.

use crate::body::decode_error;
use crate::frame::{read_header, read_payload, Kind, MAX_CONTROL, MAX_DATA};
use crate::message::{Request, Response};

/// `data` as the bytes a peer sends on a connection: frame after frame,
/// each header checked, each payload read and decoded as its kind says,
/// until the input ends or a frame is refused.
pub fn frames(data: &[u8]) {
    let mut input = data;
    let mut buf = Vec::new();
    while let Ok(Some(h)) = read_header(&mut input) {
        // The header's bound, checked before the payload is allocated.
        let bound = match h.kind {
            Kind::Data | Kind::DataEnd => MAX_DATA,
            Kind::SharedBody => 8,
            _ => MAX_CONTROL,
        };
        assert!(h.len as usize <= bound, "{h:?} passed the header check");
        if read_payload(&mut input, &h, &mut buf).is_err() {
            return;
        }
        match h.kind {
            Kind::Request => request(h.op, &buf),
            Kind::Response => {
                let _ = postcard::from_bytes::<Response>(&buf);
            }
            Kind::Error => {
                let _ = decode_error(&buf);
            }
            Kind::Data | Kind::DataEnd | Kind::SharedBody => {}
        }
    }
}

/// `data` as one message payload, its first byte the op code: decoded as a
/// request, a reply and an error.
pub fn payloads(data: &[u8]) {
    let (op, payload) = match data.split_first() {
        Some((op, rest)) => (*op, rest),
        None => (0, data),
    };
    request(op, payload);
    request(op, data);
    let _ = postcard::from_bytes::<Response>(payload);
    let _ = decode_error(payload);
}

/// A request that decodes must encode again, to bytes that decode to the
/// same op: the gateway never holds a request it could not describe.
fn request(op: u8, payload: &[u8]) {
    if let Ok(req) = Request::decode(op, payload) {
        let again = postcard::to_allocvec(&req).expect("a decoded request encodes");
        assert!(again.len() <= payload.len(), "re-encoding grew the request");
        let back = Request::decode(op, &again).expect("a re-encoded request decodes");
        assert_eq!(back.op(), op);
    }
}
