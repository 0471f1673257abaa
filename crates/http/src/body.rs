//! Bridges between async HTTP bodies and the engine's blocking `Read`s, with
//! bounded memory in both directions: at most a few chunks (or mapped
//! windows) per request are in flight whatever the object size, or a PUT
//! body of up to 8 MiB gathered whole (`gather.rs`, bounded in count).

use crate::chunked::{ChunkedError, Decoder};
use crate::gather::{gather, BufferPool, Pooled};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use s3hpc_store::{ChecksumAlgorithm, LateChecksum, ObjectReader};
use std::future::Future;
use std::io::{self, Read};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Chunk size for both directions. 4 KiB chunks (the s3s-fs example) cap a
/// GET at about 100 MiB/s; 1 MiB reaches about 1.4 GiB/s (stack notes).
pub const CHUNK: usize = 1 << 20;
/// Chunks queued between the network and the blocking writer.
const QUEUE: usize = 4;

/// Objects (or ranges) at least this long are served from memory mappings
/// when the connection allows it (HTTP/1): below it, one read of the page
/// cache costs less than mapping and unmapping.
pub const MAP_MIN: u64 = 256 << 10;
/// Bytes per mapping: bounds what one GET keeps mapped (hyper asks for the
/// next window only when it has sent most of the one before).
const MAP_WINDOW: u64 = 8 << 20;
/// The first mapping, made on the async worker, is smaller: on a cold file
/// `MAP_POPULATE` reads it from disk there. 2 MiB objects (IOR's transfer
/// size) still need no hand-off.
const FIRST_MAP: u64 = 2 << 20;

/// Where a GET's chunks come from: reads into fresh buffers, or mappings
/// of the file (see `mapped`).
struct Chunks {
    reader: ObjectReader,
    /// The file offset of the next mapping; `None` when reading.
    map_at: Option<u64>,
}

impl Chunks {
    fn chunk_size(&self) -> u64 {
        match self.map_at {
            Some(_) => MAP_WINDOW,
            None => CHUNK as u64,
        }
    }

    /// The next `want` bytes (at most one chunk).
    fn next(&mut self, want: usize) -> io::Result<Bytes> {
        match &mut self.map_at {
            Some(at) => {
                let chunk = crate::mapped::map_range(self.reader.file(), *at, want)?;
                *at += want as u64;
                Ok(chunk)
            }
            None => {
                let mut buf = Vec::new();
                self.reader.read_into(&mut buf, want)?;
                let chunk = Bytes::from(buf);
                check_not_short(&chunk, want as u64)?;
                Ok(chunk)
            }
        }
    }
}

/// A GET body: the first chunk, made with the open, and then one chunk at a
/// time on the blocking pool, each started as soon as the chunk before it
/// is handed to hyper, so reading the file and writing the socket overlap.
/// At most two chunks are in memory; a client that stops reading stops the
/// reads (backpressure), and dropping the stream closes the file.
pub struct GetStream {
    // A Mutex only to make the stream `Sync`, as s3s requires; never contended.
    state: Mutex<GetState>,
}

struct GetState {
    /// The first chunk, until it is sent.
    first: Option<Bytes>,
    /// The source, when no chunk is in flight.
    chunks: Option<Chunks>,
    /// The chunk in flight, which gives the source back with its chunk.
    reading: Option<JoinHandle<(Chunks, io::Result<Bytes>)>>,
    /// Bytes not yet asked of the file.
    unread: u64,
}

impl GetState {
    /// Starts making the next chunk, if any is left and none is in flight.
    fn read_ahead(&mut self) {
        if self.unread == 0 || self.reading.is_some() {
            return;
        }
        let Some(mut chunks) = self.chunks.take() else {
            return;
        };
        let want = self.unread.min(chunks.chunk_size()) as usize;
        self.unread -= want as u64;
        self.reading = Some(tokio::task::spawn_blocking(move || {
            let got = chunks.next(want);
            (chunks, got)
        }));
    }
}

impl GetStream {
    /// Starts a body of `length` bytes of `reader`, which stands at `offset`
    /// of its file; from mappings if `may_map` and the body is long enough.
    /// The first chunk is made here, on this thread (one read or mapping of
    /// the page cache, cheaper than a hand-off): objects that fit in one
    /// chunk need no trip to the blocking pool.
    pub fn start(
        reader: ObjectReader,
        offset: u64,
        length: u64,
        may_map: bool,
    ) -> io::Result<GetStream> {
        let map_at = (may_map && length >= MAP_MIN).then_some(offset);
        let mut chunks = Chunks { reader, map_at };
        let want = length.min(chunks.chunk_size()).min(FIRST_MAP);
        let first = chunks.next(want as usize)?;
        Ok(GetStream {
            state: Mutex::new(GetState {
                unread: length - first.len() as u64,
                first: (!first.is_empty()).then_some(first),
                chunks: Some(chunks),
                reading: None,
            }),
        })
    }
}

/// A chunk shorter than asked for means the file lost bytes since its
/// length was taken; the answer's Content-Length can no longer be met.
fn check_not_short(chunk: &Bytes, wanted: u64) -> io::Result<()> {
    if (chunk.len() as u64) < wanted {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the object shrank while it was read",
        ));
    }
    Ok(())
}

impl Stream for GetStream {
    type Item = io::Result<Bytes>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(chunk) = state.first.take() {
            state.read_ahead();
            return Poll::Ready(Some(Ok(chunk)));
        }
        let Some(task) = state.reading.as_mut() else {
            return Poll::Ready(None);
        };
        let (chunks, got) = match Pin::new(task).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(e)) => {
                state.reading = None;
                return Poll::Ready(Some(Err(io::Error::other(e))));
            }
            Poll::Ready(Ok(done)) => done,
        };
        state.reading = None;
        match got {
            Ok(chunk) => {
                state.chunks = Some(chunks);
                state.read_ahead();
                Poll::Ready(Some(Ok(chunk)))
            }
            // The source is dropped: nothing more is read or sent.
            Err(e) => Poll::Ready(Some(Err(e))),
        }
    }
}

/// A PUT body as the network delivers it: complete if it fit in one chunk;
/// gathered into a pooled buffer if it is longer but of a known length the
/// pool takes; otherwise what arrived so far and the rest of the stream.
pub enum Incoming<'p, S> {
    Whole(Bytes),
    Gathered(Pooled<'p>),
    Partial { head: Vec<Bytes>, rest: S },
}

/// Buffers at most one chunk of `body` (of `len` bytes, if known) before
/// deciding how to hand it on: a small object is written from memory in one
/// go, a larger one from a gathered buffer, else it streams.
pub async fn receive<'p, S, E>(
    mut body: S,
    len: Option<usize>,
    pool: &'p BufferPool,
) -> Result<Incoming<'p, S>, E>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    let mut head = Vec::new();
    let mut size = 0;
    while size <= CHUNK {
        match body.next().await {
            None => {
                return Ok(Incoming::Whole(match head.len() {
                    0 => Bytes::new(),
                    1 => head.pop().unwrap(),
                    _ => Bytes::from(head.concat()),
                }))
            }
            Some(chunk) => {
                let chunk = chunk?;
                let more = len.filter(|&n| head.is_empty() && n > chunk.len());
                if let Some(mut buf) = more.and_then(|n| pool.take(n)) {
                    gather(&mut buf, chunk, body).await?;
                    return Ok(Incoming::Gathered(buf));
                }
                size += chunk.len();
                head.push(chunk);
            }
        }
    }
    Ok(Incoming::Partial { head, rest: body })
}

/// The S3 error for a request body that failed while it arrived: a forged
/// or broken `aws-chunked` chunk signature (s3s reports it only as text),
/// else a body cut short (client gone).
pub fn stream_error(e: &dyn std::fmt::Display) -> s3s::S3Error {
    let text = e.to_string();
    if text.contains("Sha256Mismatch") {
        crate::auth::content_sha256_mismatch()
    } else if text.contains("SignatureMismatch") {
        s3s::s3_error!(
            SignatureDoesNotMatch,
            "a chunk signature of the aws-chunked body does not match"
        )
    } else {
        s3s::s3_error!(IncompleteBody, "the request body ended early: {text}")
    }
}

/// The S3 error for a body the aws-chunked decoder refused.
fn chunked_error(e: ChunkedError) -> s3s::S3Error {
    match e {
        ChunkedError::Malformed(_) => s3s::s3_error!(InvalidRequest, "{e}"),
        _ => s3s::s3_error!(IncompleteBody, "{e}"),
    }
}

/// How a PUT body arrives and what is checked at its end.
#[derive(Default)]
pub struct Framing {
    /// Some: the body is aws-chunked and is decoded here (s3s decodes it
    /// only for SigV4 header-signed requests).
    pub decoder: Option<Decoder>,
    /// `x-amz-decoded-content-length`, checked whoever decodes.
    pub decoded_len: Option<u64>,
    /// The trailers of a body s3s decoded.
    pub s3s_trailers: Option<s3s::TrailingHeaders>,
    /// A checksum announced in `x-amz-trailer`: its value is handed to the
    /// engine when the body ends, before it compares.
    pub trailer_checksum: Option<(ChecksumAlgorithm, LateChecksum)>,
}

/// A PUT body with its framing undone and its length checked: the bytes
/// of the object and nothing else, or an S3 error. Data passes through as
/// the input's own `Bytes`, never copied.
pub struct Decoded<S> {
    inner: S,
    framing: Framing,
    pending: Bytes,
    seen: u64,
    ended: bool,
}

impl<S> Decoded<S> {
    pub fn new(inner: S, framing: Framing) -> Decoded<S> {
        Decoded {
            inner,
            framing,
            pending: Bytes::new(),
            seen: 0,
            ended: false,
        }
    }

    /// At the end of the body: complete framing, the stated length, and
    /// the trailer checksum's value handed on.
    fn finish(&mut self) -> Result<(), s3s::S3Error> {
        let trailers: Vec<(String, String)> = match self.framing.decoder.as_mut() {
            Some(d) => d.finish().map_err(chunked_error)?,
            None => {
                if let Some(n) = self.framing.decoded_len.filter(|&n| n != self.seen) {
                    return Err(chunked_error(ChunkedError::Short {
                        decoded: self.seen,
                        expected: n,
                    }));
                }
                let map = self.framing.s3s_trailers.as_ref().and_then(|t| t.take());
                map.iter()
                    .flat_map(|m| m.iter())
                    .filter_map(|(k, v)| {
                        Some((k.as_str().to_string(), v.to_str().ok()?.to_string()))
                    })
                    .collect()
            }
        };
        if let Some((alg, late)) = &self.framing.trailer_checksum {
            if let Some((_, v)) = trailers.iter().find(|(k, _)| k == alg.header_name()) {
                late.set(v.trim().to_string());
            }
        }
        Ok(())
    }
}

impl<S, E> Stream for Decoded<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    type Item = Result<Bytes, s3s::S3Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            if let Some(d) = this.framing.decoder.as_mut() {
                match d.next(&mut this.pending) {
                    Ok(Some(data)) => return Poll::Ready(Some(Ok(data))),
                    Ok(None) => {}
                    Err(e) => {
                        this.ended = true;
                        return Poll::Ready(Some(Err(chunked_error(e))));
                    }
                }
            }
            let next = match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(next) => next,
            };
            match next {
                Some(Ok(bytes)) if this.framing.decoder.is_some() => this.pending = bytes,
                Some(Ok(bytes)) => {
                    this.seen += bytes.len() as u64;
                    if let Some(n) = this.framing.decoded_len.filter(|&n| this.seen > n) {
                        this.ended = true;
                        let e = ChunkedError::TooLong { expected: n };
                        return Poll::Ready(Some(Err(chunked_error(e))));
                    }
                    return Poll::Ready(Some(Ok(bytes)));
                }
                Some(Err(e)) => {
                    this.ended = true;
                    return Poll::Ready(Some(Err(stream_error(&e))));
                }
                None => {
                    this.ended = true;
                    return Poll::Ready(this.finish().err().map(Err));
                }
            }
        }
    }
}

/// Why a streamed body failed, as seen by the network side; the engine only
/// sees an I/O error from its reader.
#[derive(Default)]
pub struct BodyFault(Mutex<Option<s3s::S3Error>>);

impl BodyFault {
    pub fn set(&self, err: s3s::S3Error) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(err);
    }
    pub fn take(&self) -> Option<s3s::S3Error> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// What the channel between the network and the blocking writer carries.
pub type Item = Result<Bytes, s3s::S3Error>;

/// The blocking side of a streamed PUT: yields the buffered head, then the
/// chunks a pump task receives from the network. A network or framing
/// error fails the read, so the engine discards its temporary and nothing
/// becomes visible; checksums and Content-MD5 are the engine's to verify.
pub struct ChannelReader {
    head: std::vec::IntoIter<Bytes>,
    rx: mpsc::Receiver<Item>,
    current: Bytes,
    fault: Arc<BodyFault>,
}

impl ChannelReader {
    pub fn new(head: Vec<Bytes>, rx: mpsc::Receiver<Item>, fault: Arc<BodyFault>) -> ChannelReader {
        ChannelReader {
            head: head.into_iter(),
            rx,
            current: Bytes::new(),
            fault,
        }
    }

    fn next_chunk(&mut self) -> io::Result<Option<Bytes>> {
        if let Some(c) = self.head.next() {
            return Ok(Some(c));
        }
        match self.rx.blocking_recv() {
            Some(Ok(c)) => Ok(Some(c)),
            Some(Err(e)) => {
                let msg = e.message().unwrap_or("the request body failed").to_string();
                self.fault.set(e);
                Err(io::Error::other(msg))
            }
            None => Ok(None),
        }
    }
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.next_chunk()? {
                Some(c) => self.current = c,
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        let _ = self.current.split_to(n);
        Ok(n)
    }
}

/// Moves the rest of a network body into the channel; stops when the
/// reader side hangs up (the PUT failed) or the body ends.
pub async fn pump<S>(mut rest: S, tx: mpsc::Sender<Item>)
where
    S: Stream<Item = Item> + Unpin,
{
    while let Some(item) = rest.next().await {
        let failed = item.is_err();
        if tx.send(item).await.is_err() || failed {
            return;
        }
    }
}

/// The channel for [`ChannelReader`] and [`pump`].
pub fn channel() -> (mpsc::Sender<Item>, mpsc::Receiver<Item>) {
    mpsc::channel(QUEUE)
}
