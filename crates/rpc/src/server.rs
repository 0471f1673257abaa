//! The gateway: listens on Unix and TCP sockets and runs each request on an
//! `S3Client` (the engine in this process, through `EmbeddedClient`), so
//! every request, hostile keys included, behaves exactly as embedded.
//!
//! One thread per connection, blocking I/O. A client holds one connection
//! per thread and waits for each reply, so a connection is never idle with
//! work queued behind it; a thread blocked in `read` costs only its stack,
//! and the request runs on the thread that received it, with no hand-off
//! to a pool (ARCHITECTURE.md has the measurement against the
//! alternatives).

mod keys;
mod observer;
mod session;
mod workers;

pub use observer::{Observer, Served};

use crate::addr::{Address, Stream};
use s3hpc_client::S3Client;
use std::collections::HashMap;
use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// Connections beyond this many are closed at once (and logged).
    pub max_connections: usize,
    /// Write one line per client error to stderr.
    pub log_errors: bool,
    /// 0: a thread per connection (the default, and the faster here);
    /// N: N worker threads that wait on their connections with epoll.
    pub workers: usize,
    /// GET replies of at least this many bytes reach clients on a Unix
    /// socket as the object's open file (`u64::MAX`: never). Passing the
    /// descriptor costs a few microseconds; two more copies of the bytes
    /// (into the socket and out) cost more above this size.
    pub fd_min_bytes: u64,
    /// Told of every request (the access log and metrics).
    pub observer: Option<Arc<dyn Observer>>,
    /// The users' keys, for the key operations (`--key-store`).
    pub keys: Option<Arc<s3hpc_keys::KeyStore>>,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        GatewayOptions {
            max_connections: 4096,
            log_errors: true,
            fd_min_bytes: 32 << 10,
            workers: 0,
            observer: None,
            keys: None,
        }
    }
}

/// How long in-flight requests may run after a stop before their
/// connections are cut.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// Who is at the other end of a connection, as far as the gateway can
/// tell: over a Unix socket the kernel says (`SO_PEERCRED`); over TCP no
/// one does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Unix { pid: u32, uid: u32, gid: u32 },
    Tcp,
}

/// The client a connection's requests run on, chosen by its peer: the
/// engine acting as the peer's user, on a gateway serving many users.
pub type ClientFor = Arc<dyn Fn(Peer) -> Arc<dyn S3Client> + Send + Sync>;

pub struct Gateway {
    shared: Arc<Shared>,
    listeners: Vec<Bound>,
    accept_threads: Vec<JoinHandle<()>>,
    stopped: bool,
}

struct Shared {
    client_for: ClientFor,
    opts: GatewayOptions,
    stopping: AtomicBool,
    next_conn: AtomicU64,
    /// Open connections, to cut them at shutdown.
    open: Mutex<HashMap<u64, Stream>>,
    closed: Condvar,
    /// The worker threads, when not a thread per connection.
    workers: std::sync::OnceLock<workers::Workers>,
}

/// A listening socket as bound: the address clients use (the real port for
/// `:0`), and for Unix sockets the file's identity, so shutdown removes the
/// socket file only if it is still ours.
struct Bound {
    address: Address,
    unix_file: Option<(PathBuf, u64, u64)>,
}

enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

impl Gateway {
    /// Binds every address and starts accepting. Fails, binding nothing,
    /// if one address cannot be bound.
    pub fn start(
        client: Arc<dyn S3Client>,
        addrs: &[Address],
        opts: GatewayOptions,
    ) -> io::Result<Gateway> {
        Self::start_per_peer(Arc::new(move |_| client.clone()), addrs, opts)
    }

    /// [`Gateway::start`] with each connection's requests on the client
    /// `client_for` gives for its peer.
    pub fn start_per_peer(
        client_for: ClientFor,
        addrs: &[Address],
        opts: GatewayOptions,
    ) -> io::Result<Gateway> {
        let mut bound = Vec::new();
        let mut listeners = Vec::new();
        for a in addrs {
            match bind(a) {
                Ok((l, b)) => {
                    listeners.push(l);
                    bound.push(b);
                }
                Err(e) => {
                    remove_socket_files(&bound);
                    return Err(io::Error::new(e.kind(), format!("{a}: {e}")));
                }
            }
        }
        let shared = Arc::new(Shared {
            client_for,
            opts,
            stopping: AtomicBool::new(false),
            next_conn: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
            closed: Condvar::new(),
            workers: std::sync::OnceLock::new(),
        });
        if shared.opts.workers > 0 {
            let w = workers::Workers::start(&shared, shared.opts.workers)?;
            let _ = shared.workers.set(w);
        }
        let mut accept_threads = Vec::new();
        for (l, b) in listeners.into_iter().zip(&bound) {
            let shared = shared.clone();
            let name = format!("rpc-accept {}", b.address);
            accept_threads.push(
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || accept_loop(&shared, l))?,
            );
        }
        Ok(Gateway {
            shared,
            listeners: bound,
            accept_threads,
            stopped: false,
        })
    }

    /// The addresses clients can connect to (with real port numbers).
    pub fn addresses(&self) -> Vec<Address> {
        self.listeners.iter().map(|b| b.address.clone()).collect()
    }

    /// Connections open now.
    pub fn connections(&self) -> usize {
        self.shared.open.lock().expect("not poisoned").len()
    }

    /// Stops accepting, lets requests in flight finish (up to a grace
    /// period), closes every connection and removes the socket files.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        self.shared.stopping.store(true, Ordering::SeqCst);
        for b in &self.listeners {
            wake_accept(&b.address);
        }
        for t in self.accept_threads.drain(..) {
            let _ = t.join();
        }
        // Ending the read side lets a request in flight send its reply;
        // the session then sees end-of-stream and finishes.
        self.cut_connections(Shutdown::Read);
        if !self.wait_closed(DRAIN_GRACE) {
            self.cut_connections(Shutdown::Both);
            self.wait_closed(Duration::from_secs(1));
        }
        if let Some(w) = self.shared.workers.get() {
            w.join();
        }
        remove_socket_files(&self.listeners);
    }

    fn cut_connections(&self, how: Shutdown) {
        for s in self.shared.open.lock().expect("not poisoned").values() {
            let _ = s.shutdown(how);
        }
    }

    fn wait_closed(&self, limit: Duration) -> bool {
        let open = self.shared.open.lock().expect("not poisoned");
        let (open, _) = self
            .shared
            .closed
            .wait_timeout_while(open, limit, |o| !o.is_empty())
            .expect("not poisoned");
        open.is_empty()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn bind(a: &Address) -> io::Result<(Listener, Bound)> {
    match a {
        Address::Unix(path) => {
            clear_stale_socket(path)?;
            let l = UnixListener::bind(path)?;
            // Any local user may connect (a connection acts as its peer's
            // user, nothing more): the socket's directory decides who
            // reaches it, not a server's umask (systemd's UMask=0077).
            std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o666))?;
            let m = std::fs::metadata(path)?;
            Ok((
                Listener::Unix(l),
                Bound {
                    address: a.clone(),
                    unix_file: Some((path.clone(), m.dev(), m.ino())),
                },
            ))
        }
        Address::Tcp(hp) => {
            let l = TcpListener::bind(hp.as_str())?;
            let local = l.local_addr()?;
            Ok((
                Listener::Tcp(l),
                Bound {
                    address: Address::Tcp(local.to_string()),
                    unix_file: None,
                },
            ))
        }
    }
}

/// A socket file left by a gateway that died is removed; a live gateway's
/// socket, or any file that is not a socket, is an error and stays.
fn clear_stale_socket(path: &std::path::Path) -> io::Result<()> {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !m.file_type().is_socket() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "the path exists and is not a socket; choose another path",
        ));
    }
    match UnixStream::connect(path) {
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            "another gateway is listening there; stop it or choose another path",
        )),
        Err(_) => std::fs::remove_file(path),
    }
}

fn remove_socket_files(bound: &[Bound]) {
    for (path, dev, ino) in bound.iter().filter_map(|b| b.unix_file.as_ref()) {
        if let Ok(m) = std::fs::symlink_metadata(path) {
            if m.dev() == *dev && m.ino() == *ino {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Unblocks an accept loop by connecting to it once.
fn wake_accept(a: &Address) {
    match a {
        Address::Unix(p) => drop(UnixStream::connect(p)),
        Address::Tcp(hp) => {
            if let Ok(mut addr) = hp.parse::<std::net::SocketAddr>() {
                if addr.ip().is_unspecified() {
                    addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
                }
                drop(TcpStream::connect_timeout(&addr, Duration::from_secs(1)));
            }
        }
    }
}

fn accept_loop(shared: &Arc<Shared>, l: Listener) {
    loop {
        let accepted = match &l {
            // Clients pass their shared PUT buffer as a descriptor.
            Listener::Unix(l) => l
                .accept()
                .map(|(s, _)| Stream::UnixWithFds(s, Default::default())),
            Listener::Tcp(l) => l.accept().and_then(|(s, _)| {
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }),
        };
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let stream = match accepted {
            Ok(s) => s,
            Err(e) => {
                // Out of descriptors or a connection reset before accept:
                // log, breathe, go on.
                shared.log(format_args!("accepting a connection failed: {e}"));
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        if let Err(e) = shared.clone().spawn_session(stream) {
            shared.log(format_args!("cannot serve a new connection: {e}"));
        }
    }
}

/// The peer of a connection; a Unix socket whose peer the kernel cannot
/// name (it always can, on Linux) counts as an unknown TCP peer.
pub(crate) fn peer_of(stream: &Stream) -> Peer {
    let fd = match stream {
        Stream::Unix(s) | Stream::UnixWithFds(s, _) => s,
        Stream::Tcp(_) => return Peer::Tcp,
    };
    match rustix::net::sockopt::socket_peercred(fd) {
        Ok(c) => Peer::Unix {
            pid: c.pid.as_raw_nonzero().get() as u32,
            uid: c.uid.as_raw(),
            gid: c.gid.as_raw(),
        },
        Err(_) => Peer::Tcp,
    }
}

impl Shared {
    fn log(&self, msg: std::fmt::Arguments<'_>) {
        if self.opts.log_errors {
            // A closed stderr must not take the gateway down (eprintln!
            // panics when it cannot write).
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "s3hpc gateway: {msg}");
        }
    }

    fn spawn_session(self: Arc<Self>, stream: Stream) -> io::Result<()> {
        let id = self.next_conn.fetch_add(1, Ordering::Relaxed);
        {
            let mut open = self.open.lock().expect("not poisoned");
            if open.len() >= self.opts.max_connections {
                return Err(io::Error::other(format!(
                    "{} connections are open, the limit (--max-connections)",
                    open.len()
                )));
            }
            open.insert(id, stream.try_clone()?);
        }
        let client = (self.client_for)(peer_of(&stream));
        if let Some(w) = self.workers.get() {
            let added = w.add(id, stream, client);
            if added.is_err() {
                self.forget(id);
            }
            return added;
        }
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("rpc-conn-{id}"))
            .spawn(move || {
                let peer = stream.peer();
                if let Err(e) = session::serve(client, &me.opts, stream) {
                    me.log(format_args!("{peer}: {e}; connection closed"));
                }
                me.forget(id);
            });
        if let Err(e) = spawned {
            self.forget(id);
            return Err(e);
        }
        Ok(())
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    fn forget(&self, id: u64) {
        self.open.lock().expect("not poisoned").remove(&id);
        self.closed.notify_all();
    }
}
