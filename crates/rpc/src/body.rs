//! Object bodies on the wire: a run of data frames with the request's id,
//! the last one of kind `DataEnd`. A sender that fails midway (a local read
//! error) sends an `Error` frame instead of the rest, which ends the body
//! and keeps the connection in step; the receiver surfaces that error.
//!
//! Both directions stream through bounded buffers: at most one 1 MiB chunk
//! per connection is ever held.

use crate::conn::Connection;
use crate::frame::{push_encoded, push_frame, Header, Kind, ProtocolError, MAX_DATA};
use crate::message::WireError;
use s3hpc_client::{ErrorCode, S3Error};
use std::borrow::BorrowMut;
use std::io::{self, Read};

/// Bodies up to this size travel in the same write as the frame before
/// them: one syscall for a small PUT or a small GET reply.
pub const SMALL_BODY: usize = 64 << 10;

/// Reads a body from its data frames. Generic over how the connection is
/// held: borrowed by the gateway for a PUT, owned by a client's GET reply.
pub struct DataIn<C> {
    conn: C,
    id: u64,
    /// Bytes left in the current frame.
    left: usize,
    /// The last frame's header was read.
    ended: bool,
    /// The peer broke the protocol or went away: the connection is unusable.
    broken: bool,
    /// A header already read by the caller, taken before reading the next.
    pending: Option<Header>,
    pub received: u64,
}

impl<C: BorrowMut<Connection>> DataIn<C> {
    pub fn new(conn: C, id: u64) -> Self {
        DataIn {
            conn,
            id,
            left: 0,
            ended: false,
            broken: false,
            pending: None,
            received: 0,
        }
    }

    /// A body whose first frame header the caller has read already.
    pub fn starting_with(conn: C, id: u64, first: Header) -> Self {
        let mut d = DataIn::new(conn, id);
        d.pending = Some(first);
        d
    }

    /// Every frame of the body has been read.
    pub fn finished(&self) -> bool {
        self.ended && self.left == 0
    }

    pub fn broken(&self) -> bool {
        self.broken
    }

    /// Reads and drops the rest of the body, so the connection can carry
    /// the next request. Errors the sender put in the body are dropped too.
    pub fn drain(&mut self) -> io::Result<()> {
        let mut sink = [0u8; 16 << 10];
        while !self.finished() {
            match self.read(&mut sink) {
                Ok(_) => {}
                Err(e) if self.broken => return Err(e),
                Err(_) => {}
            }
        }
        Ok(())
    }

    pub fn into_inner(self) -> C {
        self.conn
    }

    fn fail(&mut self, kind: io::ErrorKind, msg: String) -> io::Error {
        self.broken = true;
        io::Error::new(kind, msg)
    }
}

impl<C: BorrowMut<Connection>> Read for DataIn<C> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.left > 0 {
                let want = buf.len().min(self.left);
                let n = match self.conn.borrow_mut().read_body(&mut buf[..want]) {
                    Ok(0) => {
                        return Err(self.fail(
                            io::ErrorKind::UnexpectedEof,
                            "connection closed inside an object body".into(),
                        ))
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(self.fail(e.kind(), e.to_string())),
                };
                self.left -= n;
                self.received += n as u64;
                return Ok(n);
            }
            if self.ended {
                return Ok(0);
            }
            let next = match self.pending.take() {
                Some(h) => Ok(Some(h)),
                None => self.conn.borrow_mut().read_header(),
            };
            let h = match next {
                Ok(Some(h)) => h,
                Ok(None) => {
                    return Err(self.fail(
                        io::ErrorKind::UnexpectedEof,
                        "connection closed inside an object body".into(),
                    ))
                }
                Err(e) => return Err(self.fail(io::ErrorKind::InvalidData, e.to_string())),
            };
            if h.id != self.id {
                return Err(self.fail(
                    io::ErrorKind::InvalidData,
                    format!("frame of request {} inside the body of {}", h.id, self.id),
                ));
            }
            match h.kind {
                Kind::Data | Kind::DataEnd => {
                    self.left = h.len as usize;
                    self.ended = h.kind == Kind::DataEnd;
                }
                Kind::Error => {
                    self.ended = true;
                    let err = match self.conn.borrow_mut().read_payload(&h) {
                        Ok(p) => decode_error(p),
                        Err(e) => return Err(self.fail(io::ErrorKind::InvalidData, e.to_string())),
                    };
                    return Err(io::Error::other(err));
                }
                // A whole body in the shared buffer, where a stream was
                // expected (a request that could not be decoded): it ends
                // the body all the same.
                Kind::SharedBody => {
                    self.ended = true;
                    if let Err(e) = self.conn.borrow_mut().read_payload(&h) {
                        return Err(self.fail(io::ErrorKind::InvalidData, e.to_string()));
                    }
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a shared-buffer body where a stream was expected",
                    ));
                }
                other => {
                    return Err(self.fail(
                        io::ErrorKind::InvalidData,
                        format!("{other:?} frame inside an object body"),
                    ))
                }
            }
        }
    }
}

/// Decodes an error frame's payload; an undecodable one is itself an error.
pub fn decode_error(payload: &[u8]) -> S3Error {
    match postcard::from_bytes::<WireError>(payload) {
        Ok(w) => w.into(),
        Err(e) => S3Error::new(
            ErrorCode::InternalError,
            format!("undecodable error reply from the peer: {e}"),
        ),
    }
}

/// Appends an error frame for request `id` to `conn.out`.
pub fn push_error(out: &mut Vec<u8>, op: u8, id: u64, err: &S3Error) {
    let mut err = WireError::from(err);
    // A message longer than a control frame is cut, never left unsent.
    if err.message.len() > 64 << 10 {
        let mut end = 64 << 10;
        while !err.message.is_char_boundary(end) {
            end -= 1;
        }
        err.message = err.message[..end].to_string().into();
    }
    push_encoded(out, Kind::Error, op, id, &err).expect("a bounded error message fits a frame");
}

/// Sends `len` bytes from `body` after whatever `conn.out` holds (the
/// request or the reply the body belongs to). A small body goes in the
/// same write. A failing `body` ends the stream with an error frame, and
/// that error is returned as `Ok(Some(..))`: the connection is still in
/// step. `Err` means the connection failed.
pub fn send_body(
    conn: &mut Connection,
    op: u8,
    id: u64,
    body: &mut dyn Read,
    len: Option<u64>,
) -> io::Result<Option<S3Error>> {
    if let Some(n) = len.filter(|&n| n <= SMALL_BODY as u64) {
        let start = conn.out.len();
        push_frame(&mut conn.out, Kind::DataEnd, 0, id, &[]);
        let data = conn.out.len();
        conn.out.resize(data + n as usize, 0);
        let failure = match read_full(body, &mut conn.out[data..]) {
            Ok(got) if got == n as usize && at_end(body) => None,
            Ok(got) => Some(length_error(got as u64, n)),
            Err(e) => Some(S3Error::from_io(&e, "body")),
        };
        if let Some(err) = &failure {
            conn.out.truncate(start);
            push_error(&mut conn.out, op, id, err);
        } else {
            let h = crate::frame::Header {
                len: n as u32,
                kind: Kind::DataEnd,
                op: 0,
                id,
            };
            conn.out[start..data].copy_from_slice(&h.encode());
        }
        conn.flush_out()?;
        return Ok(failure);
    }
    conn.flush_out()?;
    let mut chunk = std::mem::take(&mut conn.scratch);
    chunk.resize(MAX_DATA, 0);
    let r = stream_chunks(conn, op, id, body, len, &mut chunk);
    conn.scratch = chunk;
    r
}

fn stream_chunks(
    conn: &mut Connection,
    op: u8,
    id: u64,
    body: &mut dyn Read,
    len: Option<u64>,
    chunk: &mut [u8],
) -> io::Result<Option<S3Error>> {
    let mut sent = 0u64;
    loop {
        let want = match len {
            Some(n) => (n - sent).min(chunk.len() as u64) as usize,
            None => chunk.len(),
        };
        let got = match read_full(body, &mut chunk[..want]) {
            Ok(g) => g,
            Err(e) => return fail_stream(conn, op, id, S3Error::from_io(&e, "body")),
        };
        sent += got as u64;
        let last = match len {
            Some(n) if sent == n => true,
            Some(n) if got < want => return fail_stream(conn, op, id, length_error(sent, n)),
            Some(_) => false,
            None => got < want,
        };
        if last && len.is_some() && !at_end(body) {
            return fail_stream(conn, op, id, length_error(sent + 1, len.unwrap_or(0)));
        }
        conn.send_data(id, last, &chunk[..got])?;
        if last {
            return Ok(None);
        }
    }
}

fn fail_stream(
    conn: &mut Connection,
    op: u8,
    id: u64,
    err: S3Error,
) -> io::Result<Option<S3Error>> {
    push_error(&mut conn.out, op, id, &err);
    conn.flush_out()?;
    Ok(Some(err))
}

/// A received body that must hold exactly `len` bytes. The engine stops
/// reading at `len`; so that a longer body is refused rather than cut
/// short, the read that delivers the last announced byte first checks that
/// the body ends there, and fails if it does not (the engine then keeps
/// nothing). A shorter body the engine refuses itself (IncompleteBody).
pub struct ExactLen<'a> {
    inner: &'a mut dyn Read,
    announced: u64,
    left: u64,
    /// The body went on past `announced` bytes.
    pub too_long: bool,
}

impl<'a> ExactLen<'a> {
    pub fn new(inner: &'a mut dyn Read, announced: u64) -> Self {
        ExactLen {
            inner,
            announced,
            left: announced,
            too_long: false,
        }
    }

    /// Fails if the body holds anything more (called once all announced
    /// bytes are read, or at once for an empty body, which the engine
    /// creates without reading).
    pub fn check_end(&mut self) -> io::Result<()> {
        let mut probe = [0u8; 1];
        if read_full(self.inner, &mut probe)? == 0 {
            return Ok(());
        }
        self.too_long = true;
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            self.error().message,
        ))
    }

    /// The refusal of a body that went on past its announced length.
    pub fn error(&self) -> S3Error {
        S3Error::new(
            ErrorCode::IncompleteBody,
            format!(
                "the body holds more than the {} bytes announced",
                self.announced
            ),
        )
    }
}

impl Read for ExactLen<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 || buf.is_empty() {
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        if n > 0 && self.left == 0 {
            self.check_end()?;
        }
        Ok(n)
    }
}

fn length_error(got: u64, want: u64) -> S3Error {
    let what = if got > want { "more than" } else { "only" };
    S3Error::new(
        ErrorCode::IncompleteBody,
        format!("the body holds {what} {got} bytes where {want} were announced"),
    )
}

/// Reads until `buf` is full or the reader ends; returns the bytes read.
pub fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Whether a reader that delivered all announced bytes has nothing more.
fn at_end(r: &mut dyn Read) -> bool {
    let mut probe = [0u8; 1];
    matches!(read_full(r, &mut probe), Ok(0))
}

impl From<ProtocolError> for io::Error {
    fn from(e: ProtocolError) -> io::Error {
        match e {
            ProtocolError::Io(e) => e,
            other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}
