//! One connection's life on the gateway: handshake, then requests in
//! order until the client closes. A request that cannot be decoded gets an
//! error reply and the connection goes on (frames are self-delimiting); a
//! broken frame or a client gone inside a body ends the connection, and the
//! caller logs that one line.

use crate::addr::Stream;
use crate::body::{push_error, send_body, DataIn, ExactLen};
use crate::conn::Connection;
use crate::frame::{push_encoded, Header, Kind, ProtocolError};
use crate::message::{op_name, Request, Response};
use crate::server::{GatewayOptions, Observer, Served};
use crate::shm::SharedBuffer;
use s3hpc_client::{ErrorCode, GetObject, PutBody, S3Client, S3Error};
use std::os::fd::AsFd;
use std::time::{Instant, SystemTime};

/// Op codes whose requests carry a body, known without decoding the
/// payload, so a body behind an undecodable request is still skipped.
const OPS_WITH_BODY: [u8; 2] = [4, 11];

/// One connection's state on the gateway.
pub(super) struct Session {
    conn: Connection,
    /// The engine as this connection's peer.
    client: std::sync::Arc<dyn S3Client>,
    /// The last request's payload (requests borrow their strings from it).
    payload: Vec<u8>,
    /// The client's PUT buffer, once attached.
    shared: Option<SharedBuffer>,
    greeted: bool,
    /// The peer as an observer is told it, once it asked.
    observed_peer: Option<String>,
}

/// What serving one request left.
pub(super) enum Next {
    /// More may follow.
    Open,
    /// The client closed the connection cleanly.
    Closed,
}

impl Session {
    pub(super) fn new(stream: Stream, client: std::sync::Arc<dyn S3Client>) -> Session {
        Session {
            conn: Connection::new(stream),
            client,
            payload: Vec::new(),
            shared: None,
            greeted: false,
            observed_peer: None,
        }
    }

    pub(super) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.conn.stream().as_fd()
    }

    pub(super) fn peer(&self) -> String {
        self.conn.stream().peer()
    }

    /// Whether a whole request may already sit in the read buffer (read
    /// along with the last one), so waiting for the socket would stall it.
    pub(super) fn has_buffered_input(&self) -> bool {
        self.conn.has_buffered_input()
    }

    /// Serves the handshake (the first time) or one request, blocking
    /// until it is read and answered.
    pub(super) fn serve_one(&mut self, opts: &GatewayOptions) -> Result<Next, ProtocolError> {
        let client = self.client.as_ref();
        let conn = &mut self.conn;
        if !self.greeted {
            self.greeted = true;
            return match conn.server_handshake() {
                // A probe that connects and leaves (a health check, the
                // shutdown wake-up) is no error.
                Err(e) if e.is_clean_eof() => Ok(Next::Closed),
                r => r.map(|()| Next::Open),
            };
        }
        let Some(h) = conn.read_header()? else {
            return Ok(Next::Closed);
        };
        if h.kind != Kind::Request {
            return Err(ProtocolError::Unexpected {
                got: h.kind,
                wanted: "a request",
            });
        }
        conn.read_payload_into(&h, &mut self.payload)?;
        let decoded = Request::decode(h.op, &self.payload);
        if let Ok(Request::AttachSharedBuffer { size }) = decoded {
            let reply = attach_shared(conn, size).map(|b| self.shared = Some(b));
            send_reply(conn, &h, reply.map(|()| Response::Done))?;
            return Ok(Next::Open);
        }
        // Descriptors come only with AttachSharedBuffer: close any other.
        conn.stream().drop_fds();
        if let Some(req) = decoded.as_ref().ok().filter(|r| r.is_key_op()) {
            let peer = crate::server::peer_of(conn.stream());
            let reply = super::keys::serve(opts.keys.as_deref(), peer, req, |m| {
                if opts.log_errors {
                    use std::io::Write;
                    let _ = writeln!(std::io::stderr(), "s3hpc gateway: {m}");
                }
            });
            send_reply(conn, &h, reply)?;
            return Ok(Next::Open);
        }
        match decoded {
            Ok(req) => match opts.observer.as_deref() {
                None => {
                    handle(client, opts, conn, self.shared.as_ref(), &h, req)?;
                }
                Some(o) => {
                    let peer = self
                        .observed_peer
                        .get_or_insert_with(|| observed_peer(conn.stream()));
                    let shared = self.shared.as_ref();
                    let acted = (peer.as_str(), client.acting_uid());
                    observed(o, acted, &h, &req, || {
                        handle(client, opts, conn, shared, &h, req.clone())
                    })?;
                }
            },
            Err(why) => {
                if OPS_WITH_BODY.contains(&h.op) {
                    skip_body(conn, h.id)?;
                }
                let err = S3Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "malformed {} request (op {}): {why}; client and gateway must be the \
                         same s3hpc version",
                        op_name(h.op),
                        h.op
                    ),
                );
                push_error(&mut conn.out, h.op, h.id, &err);
                conn.flush_out()?;
            }
        }
        Ok(Next::Open)
    }
}

/// How a reply went, for an observer.
pub(super) struct Answered {
    status: u16,
    bytes_out: u64,
}

/// Runs `run` (the request's handling) and tells `o` about it: `peer` as
/// the log shows it, and the uid the request acts as (None: the gateway's).
fn observed(
    o: &dyn Observer,
    (peer, uid): (&str, Option<u32>),
    h: &Header,
    req: &Request<'_>,
    run: impl FnOnce() -> Result<Answered, ProtocolError>,
) -> Result<(), ProtocolError> {
    o.begin();
    let (time, start) = (SystemTime::now(), Instant::now());
    let result = run();
    let (status, bytes_out) = match &result {
        Ok(a) => (a.status, a.bytes_out),
        Err(_) => (499, 0),
    };
    let bytes_in = match req {
        Request::PutObject { len, .. } | Request::UploadPart { len, .. } => len.unwrap_or(0),
        _ => 0,
    };
    o.end(&Served {
        time,
        micros: u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
        peer,
        uid,
        operation: op_name(h.op),
        target: req.target(),
        status,
        bytes: (bytes_in, bytes_out),
    });
    result.map(|_| ())
}

/// `IP:PORT`, or for a Unix socket the peer's pid and uid.
fn observed_peer(stream: &crate::addr::Stream) -> String {
    if !stream.is_local() {
        return stream.peer();
    }
    match rustix::net::sockopt::socket_peercred(stream.as_fd()) {
        Ok(c) => format!("unix:pid={},uid={}", c.pid.as_raw_nonzero(), c.uid.as_raw()),
        Err(_) => "unix".into(),
    }
}

/// Serves a connection on this thread until the client closes it.
pub(super) fn serve(
    client: std::sync::Arc<dyn S3Client>,
    opts: &GatewayOptions,
    stream: Stream,
) -> Result<(), ProtocolError> {
    let mut session = Session::new(stream, client);
    while let Next::Open = session.serve_one(opts)? {}
    Ok(())
}

fn skip_body(conn: &mut Connection, id: u64) -> Result<(), ProtocolError> {
    DataIn::new(conn, id).drain()?;
    Ok(())
}

/// Runs one request and sends its reply.
fn handle(
    client: &dyn S3Client,
    opts: &GatewayOptions,
    conn: &mut Connection,
    shared: Option<&SharedBuffer>,
    h: &Header,
    req: Request<'_>,
) -> Result<Answered, ProtocolError> {
    let reply = match req {
        Request::CreateBucket { bucket } => client.create_bucket(&bucket).map(|()| Response::Done),
        Request::DeleteBucket { bucket } => client.delete_bucket(&bucket).map(|()| Response::Done),
        Request::HeadBucket { bucket } => client.head_bucket(&bucket).map(|()| Response::Done),
        Request::ListBuckets => client.list_buckets().map(Response::Buckets),
        Request::PutObject {
            bucket,
            key,
            len,
            opts,
        } => with_body(conn, shared, h.id, len, |body| {
            client.put_object(&bucket, &key, body, &opts)
        })?
        .map(Response::ETag),
        Request::UploadPart {
            bucket,
            key,
            upload_id,
            part_number,
            len,
        } => with_body(conn, shared, h.id, len, |body| {
            client.upload_part(&bucket, &key, &upload_id, part_number, body)
        })?
        .map(Response::ETag),
        Request::GetObject {
            bucket,
            key,
            range,
            fd_ok,
        } => match client.get_object(&bucket, &key, range) {
            Ok(g) => {
                let answered = Answered {
                    status: if range.is_some() { 206 } else { 200 },
                    bytes_out: g.length,
                };
                send_object(conn, h, g, fd_ok.then_some(opts.fd_min_bytes))?;
                return Ok(answered);
            }
            Err(e) => Err(e),
        },
        Request::GetObjectPart {
            bucket,
            key,
            part_number,
        } => match client.get_object_part(&bucket, &key, part_number) {
            Ok((g, parts_count)) => {
                let answered = Answered {
                    status: 206,
                    bytes_out: g.length,
                };
                send_part(conn, h, g, parts_count)?;
                return Ok(answered);
            }
            Err(e) => Err(e),
        },
        Request::HeadObject { bucket, key } => {
            client.head_object(&bucket, &key).map(Response::Info)
        }
        Request::PutBucketVersioning { bucket, state } => client
            .put_bucket_versioning(&bucket, state)
            .map(|()| Response::Done),
        Request::GetBucketVersioning { bucket } => client
            .get_bucket_versioning(&bucket)
            .map(Response::Versioning),
        Request::ListObjectVersions { bucket, list } => client
            .list_object_versions(&bucket, &list)
            .map(Response::Versions),
        Request::GetObjectVersion { version: v, range } => {
            match client.get_object_version(&v.bucket, &v.key, &v.version_id, range) {
                Ok(g) => {
                    let answered = Answered {
                        status: if range.is_some() { 206 } else { 200 },
                        bytes_out: g.length,
                    };
                    send_object(conn, h, g, None)?;
                    return Ok(answered);
                }
                Err(e) => Err(e),
            }
        }
        Request::HeadObjectVersion(v) => client
            .head_object_version(&v.bucket, &v.key, &v.version_id)
            .map(Response::Info),
        Request::DeleteObjectVersion(v) => client
            .delete_object_version(&v.bucket, &v.key, &v.version_id)
            .map(|()| Response::Done),
        Request::DeleteObject { bucket, key } => {
            client.delete_object(&bucket, &key).map(|()| Response::Done)
        }
        Request::DeleteObjectIf {
            bucket,
            key,
            condition,
        } => client
            .delete_object_if(&bucket, &key, &condition)
            .map(|()| Response::Done),
        Request::ListObjects { bucket, list } => {
            client.list_objects(&bucket, &list).map(Response::List)
        }
        Request::CopyObject {
            src_bucket,
            src_key,
            dst_bucket,
            dst_key,
            opts,
            condition,
        } => client
            .copy_object_if(
                &src_bucket,
                &src_key,
                &dst_bucket,
                &dst_key,
                opts.as_deref(),
                &condition,
            )
            .map(Response::Info),
        Request::CreateMultipartUpload { bucket, key, opts } => client
            .create_multipart_upload(&bucket, &key, &opts)
            .map(Response::UploadId),
        Request::CompleteMultipartUpload {
            bucket,
            key,
            upload_id,
            parts,
            condition,
        } => client
            .complete_multipart_upload_if(&bucket, &key, &upload_id, &parts, &condition)
            .map(Response::Info),
        Request::AbortMultipartUpload {
            bucket,
            key,
            upload_id,
        } => client
            .abort_multipart_upload(&bucket, &key, &upload_id)
            .map(|()| Response::Done),
        Request::ListParts {
            bucket,
            key,
            upload_id,
        } => client
            .list_parts(&bucket, &key, &upload_id)
            .map(Response::Parts),
        Request::ListMultipartUploads { bucket, prefix } => client
            .list_multipart_uploads(&bucket, &prefix)
            .map(Response::Uploads),
        Request::GetObjectTagging { bucket, key } => {
            client.get_object_tagging(&bucket, &key).map(Response::Tags)
        }
        Request::PutObjectTagging { bucket, key, tags } => client
            .put_object_tagging(&bucket, &key, &tags)
            .map(|()| Response::Done),
        Request::DeleteObjectTagging { bucket, key } => client
            .delete_object_tagging(&bucket, &key)
            .map(|()| Response::Done),
        // Handled by the session, which owns the buffer.
        Request::KeyCreate { .. }
        | Request::KeyList { .. }
        | Request::KeyRevoke { .. }
        | Request::KeyRevokeAll { .. }
        | Request::SessionCreate { .. }
        | Request::AttachSharedBuffer { .. } => Err(S3Error::new(
            ErrorCode::InternalError,
            format!("{} reached the request handler", req.name()),
        )),
    };
    let status = reply
        .as_ref()
        .map_or_else(|e| e.code.http_status(), |_| 200);
    send_reply(conn, h, reply)?;
    Ok(Answered {
        status,
        bytes_out: 0,
    })
}

/// Sends a reply without a body (or the error).
fn send_reply(
    conn: &mut Connection,
    h: &Header,
    reply: s3hpc_client::Result<Response>,
) -> Result<(), ProtocolError> {
    match reply {
        Ok(r) => {
            if let Err(e) = push_encoded(&mut conn.out, Kind::Response, h.op, h.id, &r) {
                let err = S3Error::new(
                    ErrorCode::InternalError,
                    format!("the reply to {} does not fit a frame: {e}", op_name(h.op)),
                );
                push_error(&mut conn.out, h.op, h.id, &err);
            }
        }
        Err(e) => push_error(&mut conn.out, h.op, h.id, &e),
    }
    conn.flush_out()?;
    Ok(())
}

/// Sends a GET reply: the object's open file to a same-node client that
/// accepts files of this size (`fd_min`), else the header and the bytes as
/// data frames.
fn send_object(
    conn: &mut Connection,
    h: &Header,
    mut g: GetObject,
    fd_min: Option<u64>,
) -> Result<(), ProtocolError> {
    let passable = fd_min.is_some_and(|min| g.length >= min) && conn.stream().is_local();
    if let Some(file) = g.body.file().filter(|_| passable) {
        let head = Response::ObjectFd {
            info: g.info,
            offset: g.offset,
            length: g.length,
        };
        push_encoded(&mut conn.out, Kind::Response, h.op, h.id, &head)?;
        conn.stream().send_with_fd(&conn.out, file.as_fd())?;
        conn.out.clear();
        return Ok(());
    }
    let head = Response::Object {
        info: g.info,
        offset: g.offset,
        length: g.length,
    };
    push_encoded(&mut conn.out, Kind::Response, h.op, h.id, &head)?;
    // A read error midway goes to the client as an error frame that ends
    // the body; the connection stays usable.
    send_body(conn, h.op, h.id, &mut g.body, Some(g.length))?;
    Ok(())
}

/// Sends a GetObjectPart reply: the header, then the part's bytes as data
/// frames (parts are read as a whole object is, through the stream).
fn send_part(
    conn: &mut Connection,
    h: &Header,
    mut g: GetObject,
    parts_count: Option<u32>,
) -> Result<(), ProtocolError> {
    let head = Response::ObjectPart {
        info: g.info,
        offset: g.offset,
        length: g.length,
        parts_count,
    };
    push_encoded(&mut conn.out, Kind::Response, h.op, h.id, &head)?;
    // A read error midway ends the body with an error frame, as for GET.
    send_body(conn, h.op, h.id, &mut g.body, Some(g.length))?;
    Ok(())
}

/// Maps the buffer a client passed with AttachSharedBuffer.
fn attach_shared(conn: &Connection, size: u64) -> s3hpc_client::Result<SharedBuffer> {
    let refuse = |why: String| S3Error::new(ErrorCode::InvalidArgument, why);
    if !conn.stream().is_local() {
        return Err(refuse("a shared buffer needs a Unix socket".into()));
    }
    let fd = conn
        .stream()
        .take_fd()
        .ok_or_else(|| refuse("AttachSharedBuffer came without a descriptor".into()))?;
    conn.stream().drop_fds();
    SharedBuffer::attach(&fd, size).map_err(|e| refuse(format!("shared buffer refused: {e}")))
}

/// Runs `op` with the request's body, then makes sure the body was consumed
/// to its end, so the next frame is the next request. The body is either
/// data frames, passed on as a stream, or one frame naming bytes in the
/// connection's shared buffer, passed on as a slice (written to the file
/// from there). A client gone inside the body ends the connection (the
/// engine has already discarded the partial object).
fn with_body<T>(
    conn: &mut Connection,
    shared: Option<&SharedBuffer>,
    id: u64,
    len: Option<u64>,
    op: impl FnOnce(PutBody<'_>) -> s3hpc_client::Result<T>,
) -> Result<s3hpc_client::Result<T>, ProtocolError> {
    let Some(first) = conn.read_header()? else {
        return Err(ProtocolError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "client went away before the request body",
        )));
    };
    if first.kind == Kind::SharedBody && first.id == id {
        let mut count = [0u8; 8];
        let payload = conn.read_payload(&first)?;
        let Some(bytes) = payload.get(..8) else {
            return Err(ProtocolError::Decode(
                "a SharedBody frame needs 8 bytes".into(),
            ));
        };
        count.copy_from_slice(bytes);
        let count = u64::from_le_bytes(count);
        let body = shared.and_then(|b| b.bytes(usize::try_from(count).ok()?));
        return Ok(match (body, len) {
            (None, _) => Err(S3Error::new(
                ErrorCode::InvalidArgument,
                format!("a body of {count} bytes in a shared buffer that is not there or smaller"),
            )),
            (Some(b), Some(n)) if n != b.len() as u64 => Err(S3Error::new(
                ErrorCode::IncompleteBody,
                format!("the body holds {} bytes where {n} were announced", b.len()),
            )),
            (Some(b), _) => op(PutBody::Bytes(b)),
        });
    }
    let mut data = DataIn::starting_with(&mut *conn, id, first);
    // With a length announced, the body must hold exactly that many bytes:
    // the engine would read only those and store a longer body cut short.
    let r = match len {
        None => op(PutBody::Stream {
            reader: &mut data,
            len,
        }),
        Some(n) => {
            let mut exact = ExactLen::new(&mut data, n);
            let r = match if n == 0 { exact.check_end() } else { Ok(()) } {
                Ok(()) => op(PutBody::Stream {
                    reader: &mut exact,
                    len,
                }),
                Err(e) => Err(S3Error::from_io(&e, "request body")),
            };
            if exact.too_long {
                Err(exact.error())
            } else {
                r
            }
        }
    };
    if data.broken() {
        let why = r.err().map_or_else(String::new, |e| e.message);
        return Err(ProtocolError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("client went away inside a request body ({why})"),
        )));
    }
    if !data.finished() {
        data.drain()?;
    }
    Ok(r)
}
