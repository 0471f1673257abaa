//! One connection: buffered reads, and writes that put a whole frame (or a
//! whole reply with its small body) into one `write`, so a small request
//! costs one syscall per direction on each side.

use crate::addr::Stream;
use crate::frame::{self, Header, Kind, ProtocolError};
use crate::message::{MIN_VERSION, VERSION};
use crate::shm::{SharedBuffer, SHARED_BUFFER_BYTES, SHARED_BUFFER_MIN_BODY};
use std::io::{self, BufReader, IoSlice, Read, Write};

/// First bytes each side sends: magic, protocol version, status (0: ok;
/// from the server, 1: version not supported).
const MAGIC: &[u8; 8] = b"S3HPCRPC";
const HANDSHAKE_LEN: usize = 16;
const STATUS_OK: u32 = 0;
const STATUS_BAD_VERSION: u32 = 1;

/// Read buffer: a whole small reply with its body fits, and large data
/// frames bypass it (reads of at least this size go straight to the caller).
const READ_BUFFER: usize = 64 << 10;

pub struct Connection {
    reader: BufReader<Stream>,
    /// Frames being built for the next write.
    pub out: Vec<u8>,
    /// The payload of the last control frame read.
    payload: Vec<u8>,
    /// Room for one data chunk, allocated on first use.
    pub scratch: Vec<u8>,
    next_id: u64,
    /// Client side: the PUT buffer shared with the gateway, once attached.
    pub shared: Option<SharedBuffer>,
    /// Client side: the gateway (or this system) refused a shared buffer.
    pub shared_refused: bool,
}

impl Connection {
    pub fn new(stream: Stream) -> Connection {
        Connection {
            reader: BufReader::with_capacity(READ_BUFFER, stream),
            out: Vec::with_capacity(4096),
            payload: Vec::new(),
            scratch: Vec::new(),
            next_id: 0,
            shared: None,
            shared_refused: false,
        }
    }

    /// Whether bytes already read from the socket wait in the buffer.
    pub fn has_buffered_input(&self) -> bool {
        !self.reader.buffer().is_empty()
    }

    /// Whether a PUT body of `len` bytes should go through a shared buffer:
    /// large enough to gain, small enough to fit, and the gateway on this
    /// node.
    pub fn wants_shared(&self, len: usize) -> bool {
        (SHARED_BUFFER_MIN_BODY..=SHARED_BUFFER_BYTES as usize).contains(&len)
            && !self.shared_refused
            && self.stream().is_local()
    }

    /// A fresh request id (ids are per connection).
    pub fn next_id(&mut self) -> u64 {
        self.next_id = self.next_id.wrapping_add(1);
        self.next_id
    }

    /// The id of the last request sent.
    pub fn last_id(&self) -> u64 {
        self.next_id
    }

    pub fn stream(&self) -> &Stream {
        self.reader.get_ref()
    }

    /// Sends and clears `out`.
    pub fn flush_out(&mut self) -> io::Result<()> {
        let r = self.reader.get_ref().write_all(&self.out);
        self.out.clear();
        r
    }

    /// Sends one data frame: its header and `chunk` in one vectored write,
    /// without copying the chunk.
    pub fn send_data(&mut self, id: u64, last: bool, chunk: &[u8]) -> io::Result<()> {
        let h = Header {
            len: chunk.len() as u32,
            kind: if last { Kind::DataEnd } else { Kind::Data },
            op: 0,
            id,
        }
        .encode();
        write_all_2(self.reader.get_ref(), &h, chunk)
    }

    pub fn read_header(&mut self) -> Result<Option<Header>, ProtocolError> {
        frame::read_header(&mut self.reader)
    }

    /// Reads the payload of control frame `h`.
    pub fn read_payload(&mut self, h: &Header) -> Result<&[u8], ProtocolError> {
        frame::read_payload(&mut self.reader, h, &mut self.payload)?;
        Ok(&self.payload)
    }

    /// Reads the payload of control frame `h` into a caller's buffer, which
    /// can then be borrowed while the connection is used again.
    pub fn read_payload_into(&mut self, h: &Header, buf: &mut Vec<u8>) -> io::Result<()> {
        frame::read_payload(&mut self.reader, h, buf)
    }

    /// Reads body bytes (of a data frame whose header was read).
    pub fn read_body(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }

    /// Client side: announce our version, check the server's.
    pub fn client_handshake(&mut self) -> Result<(), ProtocolError> {
        self.reader.get_ref().write_all(&handshake(STATUS_OK))?;
        let (version, status) = self.read_handshake()?;
        if status != STATUS_OK {
            return Err(ProtocolError::BadHandshake(format!(
                "the gateway speaks protocol version {version}, this client {VERSION}; use \
                 matching s3hpc versions"
            )));
        }
        Ok(())
    }

    /// Server side: check the client's greeting and answer it. A wrong
    /// version gets an answer saying so, then the caller closes.
    pub fn server_handshake(&mut self) -> Result<(), ProtocolError> {
        let (version, _) = self.read_handshake()?;
        let status = if (MIN_VERSION..=VERSION).contains(&version) {
            STATUS_OK
        } else {
            STATUS_BAD_VERSION
        };
        self.reader.get_ref().write_all(&handshake(status))?;
        if status != STATUS_OK {
            return Err(ProtocolError::BadHandshake(format!(
                "client speaks protocol version {version}, this gateway {VERSION}"
            )));
        }
        Ok(())
    }

    fn read_handshake(&mut self) -> Result<(u32, u32), ProtocolError> {
        let mut b = [0u8; HANDSHAKE_LEN];
        self.reader.read_exact(&mut b)?;
        if &b[..8] != MAGIC {
            return Err(ProtocolError::BadHandshake(
                "not an s3hpc RPC peer (wrong magic bytes)".into(),
            ));
        }
        let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Ok((word(8), word(12)))
    }
}

fn handshake(status: u32) -> [u8; HANDSHAKE_LEN] {
    let mut b = [0u8; HANDSHAKE_LEN];
    b[..8].copy_from_slice(MAGIC);
    b[8..12].copy_from_slice(&VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&status.to_le_bytes());
    b
}

/// Writes `a` then `b` with as few `writev` calls as the socket allows.
fn write_all_2(mut w: &Stream, a: &[u8], b: &[u8]) -> io::Result<()> {
    let mut done = 0;
    let total = a.len() + b.len();
    while done < total {
        let n = if done < a.len() {
            w.write_vectored(&[IoSlice::new(&a[done..]), IoSlice::new(b)])
        } else {
            w.write(&b[done - a.len()..])
        };
        match n {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
