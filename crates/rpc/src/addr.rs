//! Where a gateway listens and a client connects, and the socket over
//! either kind.
//!
//! Accepted spellings: `unix:/run/s3hpc.sock` and `unix:///run/s3hpc.sock`
//! (a Unix socket), `tcp:127.0.0.1:7070` and `s3hpc://127.0.0.1:7070` (TCP).

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::mem::MaybeUninit;
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    Unix(PathBuf),
    /// `host:port`, resolved at connect or bind time.
    Tcp(String),
}

impl std::str::FromStr for Address {
    type Err = String;

    fn from_str(s: &str) -> Result<Address, String> {
        let unix = |p: &str| {
            if p.is_empty() || !p.starts_with('/') && !p.starts_with('.') {
                return Err(format!(
                    "{s:?}: a Unix socket address needs a path, as in unix:/run/s3hpc.sock"
                ));
            }
            // sun_path holds 108 bytes with the terminating NUL.
            if p.len() > 107 {
                return Err(format!(
                    "{s:?}: a Unix socket path has at most 107 bytes; use a shorter one"
                ));
            }
            Ok(Address::Unix(PathBuf::from(p)))
        };
        let tcp = |hp: &str| match hp.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
                Ok(Address::Tcp(hp.to_string()))
            }
            _ => Err(format!(
                "{s:?}: a TCP address needs host:port, as in tcp:127.0.0.1:7070"
            )),
        };
        if let Some(p) = s.strip_prefix("unix://") {
            unix(p)
        } else if let Some(p) = s.strip_prefix("unix:") {
            unix(p)
        } else if let Some(hp) = s.strip_prefix("s3hpc://") {
            tcp(hp.trim_end_matches('/'))
        } else if let Some(hp) = s.strip_prefix("tcp:") {
            tcp(hp)
        } else {
            Err(format!(
                "{s:?} is no gateway address: use unix:PATH, unix:///PATH, tcp:HOST:PORT or \
                 s3hpc://HOST:PORT"
            ))
        }
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Unix(p) => write!(f, "unix:{}", p.display()),
            Address::Tcp(hp) => write!(f, "tcp:{hp}"),
        }
    }
}

impl Address {
    /// Whether the address is on this node (a Unix socket).
    pub fn is_local(&self) -> bool {
        matches!(self, Address::Unix(_))
    }

    /// Connects, with TCP_NODELAY on TCP: frames are whole messages, and
    /// Nagle's delay would add tens of milliseconds to each small request.
    pub fn connect(&self) -> io::Result<Stream> {
        match self {
            Address::Unix(p) => {
                UnixStream::connect(p).map(|s| Stream::UnixWithFds(s, RefCell::default()))
            }
            Address::Tcp(hp) => {
                let s = TcpStream::connect(hp.as_str())?;
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }
        }
    }
}

/// A connected socket of either kind.
#[derive(Debug)]
pub enum Stream {
    /// A Unix socket whose reads drop descriptors the peer sends (the
    /// kernel closes them): used only to shut connections down.
    Unix(UnixStream),
    /// A Unix socket whose reads also collect the descriptors the peer
    /// passes, to be taken in order: an object's file for a client's GET,
    /// a client's shared PUT buffer for the gateway.
    UnixWithFds(UnixStream, RefCell<VecDeque<OwnedFd>>),
    Tcp(TcpStream),
}

impl AsFd for Stream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Stream::Unix(s) | Stream::UnixWithFds(s, _) => s.as_fd(),
            Stream::Tcp(s) => s.as_fd(),
        }
    }
}

/// Descriptors one read can collect; the gateway sends one per reply.
const FDS_PER_READ: usize = 4;

impl Stream {
    /// A second handle, for shutting the connection down from elsewhere.
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Unix(s) | Stream::UnixWithFds(s, _) => Stream::Unix(s.try_clone()?),
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
        })
    }

    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            Stream::Unix(s) | Stream::UnixWithFds(s, _) => s.shutdown(how),
            Stream::Tcp(s) => s.shutdown(how),
        }
    }

    /// Whether the peer is on this node (a Unix socket): it can then be
    /// handed open files instead of their bytes.
    pub fn is_local(&self) -> bool {
        !matches!(self, Stream::Tcp(_))
    }

    /// Drops every descriptor received and not taken.
    pub fn drop_fds(&self) {
        if let Stream::UnixWithFds(_, fds) = self {
            fds.borrow_mut().clear();
        }
    }

    /// The oldest descriptor received and not yet taken.
    pub fn take_fd(&self) -> Option<OwnedFd> {
        match self {
            Stream::UnixWithFds(_, fds) => fds.borrow_mut().pop_front(),
            _ => None,
        }
    }

    /// Sends `buf` with `fd` attached (the first byte carries it).
    pub fn send_with_fd(&self, buf: &[u8], fd: BorrowedFd<'_>) -> io::Result<()> {
        let fds = [fd];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        control.push(SendAncillaryMessage::ScmRights(&fds));
        let n = rustix::net::sendmsg(
            self.fd(),
            &[io::IoSlice::new(buf)],
            &mut control,
            SendFlags::NOSIGNAL,
        )?;
        let mut w: &Stream = self;
        w.write_all(&buf[n..])
    }

    /// Who is on the other end, for log lines.
    pub fn peer(&self) -> String {
        match self {
            Stream::Unix(_) | Stream::UnixWithFds(..) => "local client".to_string(),
            Stream::Tcp(s) => s
                .peer_addr()
                .map_or_else(|_| "tcp client".to_string(), |a| a.to_string()),
        }
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.as_fd()
    }

    /// A read that keeps the descriptors arriving with the bytes.
    fn read_collecting_fds(
        s: &UnixStream,
        fds: &RefCell<VecDeque<OwnedFd>>,
        buf: &mut [u8],
    ) -> io::Result<usize> {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(FDS_PER_READ))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let got = rustix::net::recvmsg(
            s,
            &mut [io::IoSliceMut::new(buf)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        )?;
        for msg in control.drain() {
            if let RecvAncillaryMessage::ScmRights(received) = msg {
                fds.borrow_mut().extend(received);
            }
        }
        Ok(got.bytes)
    }

    /// Whether an idle connection is still usable: it must have nothing to
    /// read (a closed or reset peer makes it readable). One `poll`, no wait.
    pub fn looks_idle(&self) -> bool {
        use rustix::event::{poll, PollFd, PollFlags};
        let fd = self.fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        matches!(
            poll(&mut fds, Some(&rustix::event::Timespec::default())),
            Ok(0)
        )
    }
}

impl Read for &Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match *self {
            Stream::Unix(s) => (&*s).read(buf),
            Stream::UnixWithFds(s, fds) => Stream::read_collecting_fds(s, fds, buf),
            Stream::Tcp(s) => (&*s).read(buf),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self).read(buf)
    }
}

/// Writes use `send`/`sendmsg` with MSG_NOSIGNAL: a peer that went away
/// must give EPIPE, not a SIGPIPE that kills the process (the client runs
/// inside C programs through the libs3 drop-in, which may not ignore it).
impl Write for &Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        rustix::net::send(self.fd(), buf, SendFlags::NOSIGNAL).map_err(io::Error::from)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        rustix::net::sendmsg(
            self.fd(),
            bufs,
            &mut rustix::net::SendAncillaryBuffer::default(),
            SendFlags::NOSIGNAL,
        )
        .map_err(io::Error::from)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        let u = Address::Unix("/run/s.sock".into());
        assert_eq!("unix:/run/s.sock".parse::<Address>().unwrap(), u);
        assert_eq!("unix:///run/s.sock".parse::<Address>().unwrap(), u);
        let t = Address::Tcp("127.0.0.1:7070".into());
        assert_eq!("tcp:127.0.0.1:7070".parse::<Address>().unwrap(), t);
        assert_eq!("s3hpc://127.0.0.1:7070".parse::<Address>().unwrap(), t);
        assert_eq!(
            "s3hpc://[::1]:70/".parse::<Address>().unwrap(),
            Address::Tcp("[::1]:70".into())
        );
        for bad in [
            "",
            "unix:",
            "tcp:host",
            "tcp::80",
            "http://x:1",
            "s3hpc://x:99999",
        ] {
            let e = bad.parse::<Address>().unwrap_err();
            assert!(e.contains("unix:") || e.contains("host:port"), "{bad}: {e}");
        }
        let long = format!("unix:/{}", "a".repeat(120));
        assert!(long.parse::<Address>().unwrap_err().contains("107"));
    }
}
