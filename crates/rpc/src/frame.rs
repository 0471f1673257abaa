//! Frames: the unit of the wire. Every frame is a 16-byte header and a
//! payload of `len` bytes (docs/src/reference/rpc-protocol.md has the byte layout):
//!
//! ```text
//! u32 len | u8 kind | u8 op | u16 reserved (0) | u64 request id
//! ```
//!
//! Lengths are bounded before anything is allocated: a control frame
//! (request or response) carries at most [`MAX_CONTROL`] bytes and a data
//! frame at most [`MAX_DATA`], so a peer can never make the other side
//! allocate more than that, whatever it sends.

use std::io::{self, Read};

pub const HEADER_LEN: usize = 16;
/// Largest request or response payload: a full list page (1000 keys of
/// 1024 bytes with their fields) or a 10000-part completion fits.
pub const MAX_CONTROL: usize = 4 << 20;
/// Largest data chunk. 1 MiB matches the engine's copy buffer: bigger
/// chunks do not raise throughput, smaller ones add syscalls.
pub const MAX_DATA: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A request: `op` names it, the payload is the encoded request.
    Request = 1,
    /// A successful reply to the request with the same id.
    Response = 2,
    /// A failed reply: the payload is an encoded error (S3 code, message).
    Error = 3,
    /// A chunk of an object body.
    Data = 4,
    /// The last chunk of an object body (may be empty).
    DataEnd = 5,
    /// A whole PUT body that lies in the connection's shared buffer: the
    /// payload is its length (`u64`), the bytes are at the buffer's start.
    SharedBody = 6,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Request,
            2 => Kind::Response,
            3 => Kind::Error,
            4 => Kind::Data,
            5 => Kind::DataEnd,
            6 => Kind::SharedBody,
            _ => return None,
        })
    }

    fn max_len(self) -> usize {
        match self {
            Kind::Data | Kind::DataEnd => MAX_DATA,
            Kind::SharedBody => 8,
            _ => MAX_CONTROL,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub len: u32,
    pub kind: Kind,
    pub op: u8,
    pub id: u64,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&self.len.to_le_bytes());
        b[4] = self.kind as u8;
        b[5] = self.op;
        b[8..16].copy_from_slice(&self.id.to_le_bytes());
        b
    }

    /// Checks a received header: known kind, zero reserved bits, and a
    /// length within the kind's bound.
    pub fn decode(b: &[u8; HEADER_LEN]) -> Result<Header, ProtocolError> {
        let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let kind = Kind::from_u8(b[4]).ok_or(ProtocolError::UnknownKind(b[4]))?;
        if b[6] != 0 || b[7] != 0 {
            return Err(ProtocolError::Reserved);
        }
        if len as usize > kind.max_len() {
            return Err(ProtocolError::TooLong {
                kind,
                len: len as u64,
            });
        }
        let id = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes"));
        Ok(Header {
            len,
            kind,
            op: b[5],
            id,
        })
    }
}

/// A peer broke the protocol. The connection cannot continue after one.
#[derive(Debug)]
pub enum ProtocolError {
    UnknownKind(u8),
    Reserved,
    TooLong { kind: Kind, len: u64 },
    Unexpected { got: Kind, wanted: &'static str },
    WrongId { got: u64, wanted: u64 },
    Decode(String),
    BadHandshake(String),
    Io(io::Error),
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtocolError::UnknownKind(k) => write!(f, "unknown frame kind {k}"),
            ProtocolError::Reserved => f.write_str("reserved header bits are not zero"),
            ProtocolError::TooLong { kind, len } => write!(
                f,
                "{kind:?} frame of {len} bytes exceeds the limit of {}",
                kind.max_len()
            ),
            ProtocolError::Unexpected { got, wanted } => {
                write!(f, "got a {got:?} frame where {wanted} was expected")
            }
            ProtocolError::WrongId { got, wanted } => {
                write!(f, "reply for request {got} while waiting for {wanted}")
            }
            ProtocolError::Decode(m) => write!(f, "undecodable payload: {m}"),
            ProtocolError::BadHandshake(m) => write!(f, "handshake failed: {m}"),
            ProtocolError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ProtocolError {}

impl From<io::Error> for ProtocolError {
    fn from(e: io::Error) -> Self {
        ProtocolError::Io(e)
    }
}

impl From<postcard::Error> for ProtocolError {
    fn from(e: postcard::Error) -> Self {
        ProtocolError::Decode(e.to_string())
    }
}

impl ProtocolError {
    /// The peer closed the connection at a frame boundary: an orderly end.
    pub fn is_clean_eof(&self) -> bool {
        matches!(self, ProtocolError::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof)
    }
}

/// Reads one header. `Ok(None)` means the peer closed the connection before
/// the first byte of a frame; a close inside a header is an error.
pub fn read_header(r: &mut impl Read) -> Result<Option<Header>, ProtocolError> {
    let mut b = [0u8; HEADER_LEN];
    let mut got = 0;
    while got < HEADER_LEN {
        match r.read(&mut b[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => {
                return Err(ProtocolError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed inside a frame header",
                )))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Header::decode(&b).map(Some)
}

/// Reads a control frame's payload into `buf` (replacing its contents).
pub fn read_payload(r: &mut impl Read, h: &Header, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    buf.resize(h.len as usize, 0);
    r.read_exact(buf)
}

/// Appends a frame holding `payload` to `out`.
pub fn push_frame(out: &mut Vec<u8>, kind: Kind, op: u8, id: u64, payload: &[u8]) {
    let h = Header {
        len: payload.len() as u32,
        kind,
        op,
        id,
    };
    out.extend_from_slice(&h.encode());
    out.extend_from_slice(payload);
}

/// Appends a frame whose payload is `value`, encoded in place (no
/// intermediate buffer).
pub fn push_encoded<T: serde::Serialize>(
    out: &mut Vec<u8>,
    kind: Kind,
    op: u8,
    id: u64,
    value: &T,
) -> Result<(), ProtocolError> {
    let start = out.len();
    out.extend_from_slice(&[0u8; HEADER_LEN]);
    let taken = std::mem::take(out);
    *out = postcard::to_extend(value, taken)?;
    let len = out.len() - start - HEADER_LEN;
    if len > kind.max_len() {
        out.truncate(start);
        return Err(ProtocolError::TooLong {
            kind,
            len: len as u64,
        });
    }
    let h = Header {
        len: len as u32,
        kind,
        op,
        id,
    };
    out[start..start + HEADER_LEN].copy_from_slice(&h.encode());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_bounds() {
        let h = Header {
            len: 42,
            kind: Kind::Request,
            op: 7,
            id: u64::MAX - 1,
        };
        assert_eq!(Header::decode(&h.encode()).unwrap(), h);
        let mut big = Header {
            len: MAX_DATA as u32 + 1,
            kind: Kind::Data,
            op: 0,
            id: 1,
        }
        .encode();
        assert!(matches!(
            Header::decode(&big),
            Err(ProtocolError::TooLong { .. })
        ));
        big[4] = 99;
        assert!(matches!(
            Header::decode(&big),
            Err(ProtocolError::UnknownKind(99))
        ));
        let mut reserved = h.encode();
        reserved[7] = 1;
        assert!(matches!(
            Header::decode(&reserved),
            Err(ProtocolError::Reserved)
        ));
    }

    #[test]
    fn eof_inside_a_header_is_an_error() {
        let h = Header {
            len: 0,
            kind: Kind::DataEnd,
            op: 0,
            id: 3,
        }
        .encode();
        assert!(read_header(&mut &[][..]).unwrap().is_none());
        assert!(read_header(&mut &h[..5]).is_err());
        assert_eq!(read_header(&mut &h[..]).unwrap().unwrap().id, 3);
    }
}
