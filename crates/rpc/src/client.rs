//! `RemoteClient`: the `S3Client` over a gateway.
//!
//! Connections are pooled: a call takes an idle connection (or opens one),
//! and gives it back when its reply, and for a GET its body, has been read.
//! With one call at a time per thread this is one connection per thread,
//! without tying connections to threads that may exit.
//!
//! After a gateway restart, pooled connections are dead. A call whose
//! request can be sent again (everything but a streamed body) that fails
//! on a reused connection before any reply arrived is retried once on a new
//! connection; before a streamed body, an idle connection is checked with
//! one `poll` instead, since the body cannot be read twice.

use crate::addr::Address;
use crate::body::{decode_error, send_body, DataIn};
use crate::conn::Connection;
use crate::frame::{push_encoded, push_frame, Kind, ProtocolError};
use crate::message::{Request, Response, VersionRef};
use crate::shm::{SharedBuffer, SHARED_BUFFER_BYTES};
use s3hpc_client::{
    op, ByteRange, ErrorCode, GetObject, ObjectBody, ObjectInfo, PutBody, Result, S3Client, S3Error,
};
use std::borrow::Cow;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};

/// Idle connections kept per client; more are closed when returned.
const MAX_IDLE: usize = 1024;
/// A GET body dropped unread is drained, to keep its connection, when at
/// most this much is left; a longer one costs a new connection instead.
const DRAIN_ON_DROP: u64 = 1 << 20;

pub struct RemoteClient {
    pool: Arc<Pool>,
}

struct Pool {
    addr: Address,
    idle: Mutex<Vec<Connection>>,
}

/// Why a call failed.
enum Failure {
    /// The gateway answered with an S3 error: the connection is fine.
    S3(S3Error),
    /// The connection failed. `replied`: some of the reply had arrived.
    Transport { err: ProtocolError, replied: bool },
}

/// A request's body, in a form that can be sent again when it is bytes.
enum Body<'a> {
    None,
    Bytes(&'a [u8]),
    Stream(&'a mut dyn Read, Option<u64>),
}

impl<'a> From<PutBody<'a>> for Body<'a> {
    fn from(b: PutBody<'a>) -> Self {
        match b {
            PutBody::Bytes(b) => Body::Bytes(b),
            PutBody::Stream { reader, len } => Body::Stream(reader, len),
        }
    }
}

impl RemoteClient {
    /// A client for the gateway at `addr` (any spelling [`Address`]
    /// accepts). Connects once, so a gateway that is down or speaks another
    /// version is reported here, with what to do about it.
    pub fn connect(addr: &str) -> Result<RemoteClient> {
        let addr: Address = addr
            .parse()
            .map_err(|e: String| S3Error::new(ErrorCode::InvalidArgument, e))?;
        let pool = Arc::new(Pool {
            addr,
            idle: Mutex::new(Vec::new()),
        });
        let conn = pool.open()?;
        pool.put_back(conn);
        Ok(RemoteClient { pool })
    }

    pub fn address(&self) -> &Address {
        &self.pool.addr
    }

    /// A key operation ([`Request::is_key_op`]): the gateway answers as
    /// this process's user, which the kernel tells it.
    pub fn key_request(&self, req: &Request<'_>) -> Result<Response> {
        let (reply, conn) = self.send(req, Body::None)?;
        self.pool.put_back(conn);
        Ok(reply)
    }

    /// Sends `req` (and its body) and reads the reply, on a pooled
    /// connection, retrying once as the module documentation says. Returns
    /// the connection with the reply; the caller gives it back.
    fn send(&self, req: &Request<'_>, body: Body<'_>) -> Result<(Response, Connection)> {
        let streamed = matches!(body, Body::Stream(..));
        let mut body = body;
        let (mut conn, reused) = self.pool.take(streamed)?;
        let mut result = exchange(&mut conn, req, &mut body);
        if let Err(Failure::Transport { replied: false, .. }) = &result {
            if reused && !streamed {
                conn = self.pool.open()?;
                result = exchange(&mut conn, req, &mut body);
            }
        }
        match result {
            Ok(r) => Ok((r, conn)),
            Err(Failure::S3(e)) => {
                self.pool.put_back(conn);
                Err(e)
            }
            Err(Failure::Transport { err, .. }) => Err(self.pool.transport_error(req.name(), err)),
        }
    }

    /// A GET answered with the object's open file: read it directly.
    fn object_from_file(
        &self,
        conn: Connection,
        info: ObjectInfo,
        offset: u64,
        length: u64,
    ) -> Result<GetObject> {
        let Some(fd) = conn.stream().take_fd() else {
            return Err(self.pool.transport_error(
                "GetObject",
                ProtocolError::Decode("a file reply came without its descriptor".into()),
            ));
        };
        self.pool.put_back(conn);
        let body = FileBody {
            file: std::fs::File::from(fd),
            pos: offset,
            end: offset + length,
            key: info.key.clone(),
        };
        Ok(GetObject {
            info,
            offset,
            length,
            body: Box::new(body),
        })
    }

    /// A GET answered with data frames: the body reads them from `conn`.
    fn streamed(&self, conn: Connection, info: ObjectInfo, offset: u64, length: u64) -> GetObject {
        let id = conn.last_id();
        let body = RemoteBody {
            data: Some(DataIn::new(conn, id)),
            pool: self.pool.clone(),
            length,
            key: info.key.clone(),
        };
        GetObject {
            info,
            offset,
            length,
            body: Box::new(body),
        }
    }

    /// A call whose only answer is `Done`.
    fn done(&self, req: Request<'_>) -> Result<()> {
        let name = req.name();
        let r = self.simple(req, Body::None)?;
        match r {
            Response::Done => Ok(()),
            other => Err(unexpected(name, &other)),
        }
    }

    /// A call whose reply carries no body.
    fn simple(&self, req: Request<'_>, body: Body<'_>) -> Result<Response> {
        let (r, conn) = self.send(&req, body)?;
        self.pool.put_back(conn);
        Ok(r)
    }
}

/// One request and its reply on `conn`.
fn exchange(
    conn: &mut Connection,
    req: &Request<'_>,
    body: &mut Body<'_>,
) -> std::result::Result<Response, Failure> {
    let transport = |err: ProtocolError, replied| Failure::Transport { err, replied };
    let shared = match body {
        Body::Bytes(b) if conn.wants_shared(b.len()) => {
            attach_shared(conn).map_err(|e| transport(e, false))?
        }
        _ => false,
    };
    let op = req.op();
    let id = conn.next_id();
    conn.out.clear();
    push_encoded(&mut conn.out, Kind::Request, op, id, req).map_err(|e| {
        Failure::S3(S3Error::new(
            ErrorCode::InvalidArgument,
            format!("the {} request is too large to send: {e}", req.name()),
        ))
    })?;
    let local_failure = match body {
        Body::None => {
            conn.flush_out().map_err(|e| transport(e.into(), false))?;
            None
        }
        Body::Bytes(b) if shared && conn.shared.as_mut().is_some_and(|s| s.fill(b)) => {
            let count = (b.len() as u64).to_le_bytes();
            push_frame(&mut conn.out, Kind::SharedBody, 0, id, &count);
            conn.flush_out().map_err(|e| transport(e.into(), false))?;
            None
        }
        Body::Bytes(b) => {
            let len = Some(b.len() as u64);
            send_body(conn, op, id, &mut &b[..], len).map_err(|e| transport(e.into(), false))?
        }
        Body::Stream(r, len) => {
            send_body(conn, op, id, *r, *len).map_err(|e| transport(e.into(), false))?
        }
    };
    let h = match conn.read_header() {
        Ok(Some(h)) => h,
        Ok(None) => {
            let eof = io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the gateway closed the connection",
            );
            return Err(transport(eof.into(), false));
        }
        Err(e) => return Err(transport(e, false)),
    };
    if h.id != id {
        return Err(transport(
            ProtocolError::WrongId {
                got: h.id,
                wanted: id,
            },
            true,
        ));
    }
    let payload = conn.read_payload(&h).map_err(|e| transport(e, true))?;
    let reply = match h.kind {
        Kind::Response => {
            postcard::from_bytes::<Response>(payload).map_err(|e| transport(e.into(), true))?
        }
        Kind::Error => {
            return Err(Failure::S3(
                local_failure.unwrap_or_else(|| decode_error(payload)),
            ))
        }
        other => {
            return Err(transport(
                ProtocolError::Unexpected {
                    got: other,
                    wanted: "a reply",
                },
                true,
            ))
        }
    };
    // The body failed here, yet the gateway accepted what it got: report
    // the local failure all the same.
    match local_failure {
        Some(e) => Err(Failure::S3(e)),
        None => Ok(reply),
    }
}

/// Makes sure `conn` has a shared PUT buffer the gateway accepted; `false`
/// if it cannot have one (the gateway or the system refused: remembered).
fn attach_shared(conn: &mut Connection) -> std::result::Result<bool, ProtocolError> {
    if conn.shared.is_some() {
        return Ok(true);
    }
    let Ok((buffer, fd)) = SharedBuffer::create(SHARED_BUFFER_BYTES) else {
        conn.shared_refused = true;
        return Ok(false);
    };
    let req = Request::AttachSharedBuffer {
        size: SHARED_BUFFER_BYTES,
    };
    let id = conn.next_id();
    conn.out.clear();
    push_encoded(&mut conn.out, Kind::Request, req.op(), id, &req)?;
    conn.stream().send_with_fd(&conn.out, fd.as_fd())?;
    conn.out.clear();
    let h = conn.read_header()?.ok_or_else(|| {
        ProtocolError::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the gateway closed the connection",
        ))
    })?;
    if h.id != id {
        return Err(ProtocolError::WrongId {
            got: h.id,
            wanted: id,
        });
    }
    conn.read_payload(&h)?;
    match h.kind {
        Kind::Response => {
            conn.shared = Some(buffer);
            Ok(true)
        }
        Kind::Error => {
            conn.shared_refused = true;
            Ok(false)
        }
        other => Err(ProtocolError::Unexpected {
            got: other,
            wanted: "a reply",
        }),
    }
}

impl Pool {
    /// An idle connection, or a new one; `true` if it was idle (reused).
    fn take(&self, check: bool) -> Result<(Connection, bool)> {
        loop {
            let conn = self.idle.lock().expect("not poisoned").pop();
            match conn {
                Some(c) if !check || c.stream().looks_idle() => return Ok((c, true)),
                Some(_) => continue,
                None => return Ok((self.open()?, false)),
            }
        }
    }

    fn put_back(&self, conn: Connection) {
        let mut idle = self.idle.lock().expect("not poisoned");
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }

    fn open(&self) -> Result<Connection> {
        let stream = self.addr.connect().map_err(|e| {
            S3Error::new(
                ErrorCode::ServiceUnavailable,
                format!(
                    "cannot reach the s3hpc gateway at {}: {e}; is `s3hpc serve --rpc {}` \
                     running?",
                    self.addr, self.addr
                ),
            )
        })?;
        let mut conn = Connection::new(stream);
        conn.client_handshake().map_err(|e| {
            S3Error::new(
                ErrorCode::ServiceUnavailable,
                format!("the gateway at {} refused the connection: {e}", self.addr),
            )
        })?;
        Ok(conn)
    }

    fn transport_error(&self, op: &str, err: ProtocolError) -> S3Error {
        match err {
            ProtocolError::Io(e) => S3Error::new(
                ErrorCode::ServiceUnavailable,
                format!(
                    "lost the connection to the gateway at {} during {op}: {e}",
                    self.addr
                ),
            ),
            other => S3Error::new(
                ErrorCode::InternalError,
                format!(
                    "the gateway at {} broke the protocol during {op}: {other}",
                    self.addr
                ),
            ),
        }
    }
}

/// A GET body arriving as data frames. Its connection goes back to the
/// pool when the body has been read, or drained on drop if little is left.
struct RemoteBody {
    data: Option<DataIn<Connection>>,
    pool: Arc<Pool>,
    length: u64,
    key: String,
}

impl Read for RemoteBody {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(data) = self.data.as_mut() else {
            return Ok(0);
        };
        let n = data.read(buf)?;
        if data.received > self.length {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the gateway sent more than the {} bytes of {}",
                    self.length, self.key
                ),
            ));
        }
        if n == 0 && !buf.is_empty() {
            let got = data.received;
            self.finish();
            if got != self.length {
                return Err(io::Error::other(S3Error::new(
                    ErrorCode::IncompleteBody,
                    format!("{} ended after {got} of {} bytes", self.key, self.length),
                )));
            }
        }
        Ok(n)
    }
}

impl ObjectBody for RemoteBody {}

/// A GET body read straight from the object's file, which the gateway
/// passed: the bytes come from the page cache as in the embedded path.
struct FileBody {
    file: std::fs::File,
    pos: u64,
    end: u64,
    key: String,
}

impl Read for FileBody {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let want = (buf.len() as u64).min(self.end - self.pos) as usize;
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        if n == 0 {
            // Shortened under us by a POSIX writer.
            return Err(io::Error::other(S3Error::new(
                ErrorCode::IncompleteBody,
                format!("{} ended {} bytes early", self.key, self.end - self.pos),
            )));
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl ObjectBody for FileBody {
    fn file(&self) -> Option<&std::fs::File> {
        Some(&self.file)
    }
}

impl RemoteBody {
    /// Gives the connection back if the body ended cleanly.
    fn finish(&mut self) {
        if let Some(data) = self.data.take() {
            if data.finished() && !data.broken() {
                self.pool.put_back(data.into_inner());
            }
        }
    }
}

impl Drop for RemoteBody {
    fn drop(&mut self) {
        if let Some(data) = self.data.as_mut() {
            let left = self.length.saturating_sub(data.received);
            if !data.finished() && !data.broken() && left <= DRAIN_ON_DROP {
                let _ = data.drain();
            }
        }
        self.finish();
    }
}

/// The error for a reply of the wrong kind: a protocol error.
fn unexpected(req: &str, got: &Response) -> S3Error {
    let mut got = format!("{got:?}");
    got.truncate(80);
    S3Error::new(
        ErrorCode::InternalError,
        format!("the gateway answered {req} with {got}"),
    )
}

/// Maps the reply to what the caller expects; any other reply is a
/// protocol error (described only then).
macro_rules! reply {
    ($req:expr, $r:expr, $pat:pat => $out:expr) => {
        match $r {
            $pat => Ok($out),
            other => Err(unexpected($req, &other)),
        }
    };
}

impl S3Client for RemoteClient {
    fn transport(&self) -> &'static str {
        "remote"
    }

    fn call(&self, req: op::Request<'_>) -> Result<op::Response> {
        use op::Request as Op;
        use op::Response as Answer;
        let name = req.name();
        let r = match req {
            Op::CreateBucket { bucket } => {
                let wire = Request::CreateBucket {
                    bucket: bucket.into(),
                };
                return s3hpc_client::owned_is_created(self.done(wire)).map(Answer::done);
            }
            Op::DeleteBucket { bucket } => self.simple(
                Request::DeleteBucket {
                    bucket: bucket.into(),
                },
                Body::None,
            )?,
            Op::HeadBucket { bucket } => self.simple(
                Request::HeadBucket {
                    bucket: bucket.into(),
                },
                Body::None,
            )?,
            Op::ListBuckets => self.simple(Request::ListBuckets, Body::None)?,
            Op::PutObject(r) => {
                s3hpc_client::refuse_lock(self.transport(), r.opts)?;
                let req = Request::PutObject {
                    bucket: r.bucket.into(),
                    key: r.key.into(),
                    len: body_len(&r.body),
                    opts: Cow::Borrowed(r.opts),
                };
                self.simple(req, r.body.into())?
            }
            Op::GetObject { bucket, key, range } => {
                return self.fetch_object(bucket, key, range).map(Answer::Object);
            }
            Op::GetObjectPart(r) => {
                let req = Request::GetObjectPart {
                    bucket: r.bucket.into(),
                    key: r.key.into(),
                    part_number: r.part_number,
                };
                let (r, conn) = self.send(&req, Body::None)?;
                let (info, offset, length, count) = reply!(name, r,
                    Response::ObjectPart { info, offset, length, parts_count } =>
                        (info, offset, length, parts_count))?;
                let got = self.streamed(conn, info, offset, length);
                return Ok(Answer::ObjectPart(got, count));
            }
            Op::HeadObject { bucket, key } => self.simple(
                Request::HeadObject {
                    bucket: bucket.into(),
                    key: key.into(),
                },
                Body::None,
            )?,
            // Without conditions as DeleteObject, which gateways of every
            // version take.
            Op::DeleteObject(r) if r.condition.is_none() => self.simple(
                Request::DeleteObject {
                    bucket: r.bucket.into(),
                    key: r.key.into(),
                },
                Body::None,
            )?,
            Op::DeleteObject(r) => self.simple(
                Request::DeleteObjectIf {
                    bucket: r.bucket.into(),
                    key: r.key.into(),
                    condition: Cow::Borrowed(r.condition),
                },
                Body::None,
            )?,
            Op::ListObjects { bucket, list } => self.simple(
                Request::ListObjects {
                    bucket: bucket.into(),
                    list: Cow::Borrowed(list),
                },
                Body::None,
            )?,
            Op::CopyObject(r) => {
                let req = Request::CopyObject {
                    src_bucket: r.src_bucket.into(),
                    src_key: r.src_key.into(),
                    dst_bucket: r.dst_bucket.into(),
                    dst_key: r.dst_key.into(),
                    opts: r.opts.map(Cow::Borrowed),
                    condition: r.condition.clone(),
                };
                self.simple(req, Body::None)?
            }
            Op::GetObjectTagging { bucket, key } => self.simple(
                Request::GetObjectTagging {
                    bucket: bucket.into(),
                    key: key.into(),
                },
                Body::None,
            )?,
            Op::PutObjectTagging { bucket, key, tags } => self.simple(
                Request::PutObjectTagging {
                    bucket: bucket.into(),
                    key: key.into(),
                    tags: Cow::Borrowed(tags),
                },
                Body::None,
            )?,
            Op::DeleteObjectTagging { bucket, key } => self.simple(
                Request::DeleteObjectTagging {
                    bucket: bucket.into(),
                    key: key.into(),
                },
                Body::None,
            )?,
            Op::CreateMultipartUpload { bucket, key, opts } => {
                s3hpc_client::refuse_lock(self.transport(), opts)?;
                self.simple(
                    Request::CreateMultipartUpload {
                        bucket: bucket.into(),
                        key: key.into(),
                        opts: Cow::Borrowed(opts),
                    },
                    Body::None,
                )?
            }
            Op::UploadPart(r) => {
                let req = Request::UploadPart {
                    bucket: r.bucket.into(),
                    key: r.key.into(),
                    upload_id: r.upload_id.into(),
                    part_number: r.part_number,
                    len: body_len(&r.body),
                };
                self.simple(req, r.body.into())?
            }
            Op::CompleteMultipartUpload(r) => {
                let req = Request::CompleteMultipartUpload {
                    bucket: r.bucket.into(),
                    key: r.key.into(),
                    upload_id: r.upload_id.into(),
                    parts: Cow::Borrowed(r.parts),
                    condition: r.condition.clone(),
                };
                self.simple(req, Body::None)?
            }
            Op::AbortMultipartUpload(u) => self.simple(
                Request::AbortMultipartUpload {
                    bucket: u.bucket.into(),
                    key: u.key.into(),
                    upload_id: u.upload_id.into(),
                },
                Body::None,
            )?,
            Op::ListParts(u) => self.simple(
                Request::ListParts {
                    bucket: u.bucket.into(),
                    key: u.key.into(),
                    upload_id: u.upload_id.into(),
                },
                Body::None,
            )?,
            Op::PutBucketVersioning { bucket, state } => self.simple(
                Request::PutBucketVersioning {
                    bucket: bucket.into(),
                    state,
                },
                Body::None,
            )?,
            Op::GetBucketVersioning { bucket } => self.simple(
                Request::GetBucketVersioning {
                    bucket: bucket.into(),
                },
                Body::None,
            )?,
            Op::ListObjectVersions { bucket, list } => self.simple(
                Request::ListObjectVersions {
                    bucket: bucket.into(),
                    list: list.clone(),
                },
                Body::None,
            )?,
            Op::GetObjectVersion { version, range } => {
                let req = Request::GetObjectVersion {
                    version: version_ref(version),
                    range,
                };
                let (r, conn) = self.send(&req, Body::None)?;
                let (info, offset, length) = reply!(name, r,
                    Response::Object { info, offset, length } => (info, offset, length))?;
                return Ok(Answer::Object(self.streamed(conn, info, offset, length)));
            }
            Op::HeadObjectVersion(v) => {
                self.simple(Request::HeadObjectVersion(version_ref(v)), Body::None)?
            }
            Op::DeleteObjectVersion(v) => {
                self.simple(Request::DeleteObjectVersion(version_ref(v)), Body::None)?
            }
            Op::ListMultipartUploads { bucket, prefix } => self.simple(
                Request::ListMultipartUploads {
                    bucket: bucket.into(),
                    prefix: prefix.into(),
                },
                Body::None,
            )?,
        };
        answer(name, r)
    }
}

fn version_ref(v: op::ObjectVersion<'_>) -> VersionRef<'_> {
    VersionRef {
        bucket: v.bucket.into(),
        key: v.key.into(),
        version_id: v.version_id.into(),
    }
}

/// The length a PUT body announces, if it knows it.
fn body_len(body: &PutBody<'_>) -> Option<u64> {
    match body {
        PutBody::Bytes(b) => Some(b.len() as u64),
        PutBody::Stream { len, .. } => *len,
    }
}

/// The client's answer for a reply that carries no body. The reply's
/// kind is checked where the caller unpacks it (`op::answer`), so
/// a gateway answering an op with another op's kind is still an error.
fn answer(name: &str, r: Response) -> Result<op::Response> {
    use op::Response as Answer;
    Ok(match r {
        Response::Done => Answer::Done,
        Response::Buckets(b) => Answer::Buckets(b),
        Response::ETag(e) => Answer::ETag(e),
        Response::Info(i) => Answer::Info(i),
        Response::List(p) => Answer::List(p),
        Response::UploadId(u) => Answer::UploadId(u),
        Response::Parts(p) => Answer::Parts(p),
        Response::Uploads(u) => Answer::Uploads(u),
        Response::Tags(t) => Answer::Tags(t),
        Response::Versioning(v) => Answer::Versioning(v),
        Response::Versions(v) => Answer::Versions(v),
        other @ (Response::Object { .. }
        | Response::ObjectFd { .. }
        | Response::ObjectPart { .. }
        | Response::NewKey(_)
        | Response::Keys(_)
        | Response::Session(_)) => return Err(unexpected(name, &other)),
    })
}

impl RemoteClient {
    fn fetch_object(&self, bucket: &str, key: &str, range: Option<ByteRange>) -> Result<GetObject> {
        let req = Request::GetObject {
            bucket: bucket.into(),
            key: key.into(),
            range,
            fd_ok: self.pool.addr.is_local(),
        };
        let (r, conn) = self.send(&req, Body::None)?;
        if let Response::ObjectFd {
            info,
            offset,
            length,
        } = r
        {
            return self.object_from_file(conn, info, offset, length);
        }
        // On any other reply the connection is dropped: what follows on it
        // is unknown.
        let (info, offset, length) = reply!("GetObject", r,
            Response::Object { info, offset, length } => (info, offset, length))?;
        Ok(self.streamed(conn, info, offset, length))
    }
}
