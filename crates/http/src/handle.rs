//! A server running on a thread of its own (the S3 listener, the metrics
//! listener), stopped and joined by its handle.

use std::io;
use std::net::SocketAddr;

/// A server running on a background thread. Dropping it stops the server.
pub struct ServerHandle {
    addr: SocketAddr,
    scheme: &'static str,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
}

impl ServerHandle {
    /// Runs `serve` on a thread named `name`; `serve` returns once the
    /// future it is given completes (the handle's stop).
    pub(crate) fn spawn(
        addr: SocketAddr,
        scheme: &'static str,
        name: &str,
        serve: impl FnOnce(futures_util::future::BoxFuture<'static, ()>) -> io::Result<()>
            + Send
            + 'static,
    ) -> io::Result<ServerHandle> {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                serve(Box::pin(async {
                    let _ = rx.await;
                }))
            })?;
        Ok(ServerHandle {
            addr,
            scheme,
            stop: Some(tx),
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` (or `https://ADDR`), for clients.
    pub fn endpoint(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// Stops accepting, waits for requests in flight, and joins the thread.
    pub fn shutdown(mut self) -> io::Result<()> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> io::Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| io::Error::other("the HTTP server thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}
