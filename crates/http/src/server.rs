//! The listener: accepts connections and serves each with hyper (HTTP/1.1,
//! HTTP/2) and the s3s service, plain or over TLS (`tls.rs`), until told
//! to stop.

use crate::access_log::AccessLog;
use crate::auth::{AuthConfig, SignatureTimeLimits};
use crate::bucket_logs::BucketLogs;
use crate::error_header::WithErrorCode;
use crate::handle::ServerHandle;
use crate::keyring::{Keyring, KeyringAuth};
use crate::metrics::{Metrics, Transport};
use crate::observe::{Observed, Watch};
use crate::service::Service;
use crate::tls::TlsConfig;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use s3hpc_store::Store;
use s3s::host::{MultiDomain, S3Host, VirtualHost};
use s3s::service::S3ServiceBuilder;
use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

/// How long a stop waits for requests in flight before closing anyway.
const DRAIN: Duration = Duration::from_secs(10);
/// How old a bucket's oldest log record gets before its logs are written.
const BUCKET_LOG_ROLL: Duration = Duration::from_secs(300);

/// A bound S3 REST server, not yet serving.
pub struct HttpServer {
    listener: TcpListener,
    service: WithErrorCode,
    tls: Option<TlsConfig>,
    /// The access log and metrics, when either is on.
    watch: Watch,
    keyring: Option<Arc<Keyring>>,
}

impl HttpServer {
    /// Binds `addr` (port 0 picks a free one) and prepares the service over
    /// `store`. `virtual_hosts` are the domains under which
    /// `BUCKET.DOMAIN` addresses a bucket; path style always works.
    pub fn bind(
        addr: SocketAddr,
        store: Arc<Store>,
        auth: AuthConfig,
        virtual_hosts: &[String],
    ) -> io::Result<HttpServer> {
        let keyring = Keyring::new(&auth);
        let sts = Arc::new(match &auth {
            AuthConfig::Mapped(m) => crate::sts::Sts {
                oidc: m.oidc.clone().map(|c| Arc::new(crate::oidc::Oidc::new(c))),
                keys: m.store.clone(),
            },
            _ => crate::sts::Sts {
                oidc: None,
                keys: None,
            },
        });
        let cors = crate::cors::Cors {
            store: store.clone(),
        };
        let owners = Arc::new(crate::owners::Owners::new(&auth));
        let bucket_logs = Arc::new(BucketLogs::new(
            store.clone(),
            owners.clone(),
            BUCKET_LOG_ROLL,
        ));
        let mut builder = S3ServiceBuilder::new(Service {
            store,
            io: Default::default(),
            keyring: keyring.clone(),
            owners,
            bucket_logs: bucket_logs.clone(),
        });
        if let Some(k) = &keyring {
            let anonymous = k.anonymous.is_some();
            builder.set_auth(KeyringAuth(k.clone()));
            builder.set_access(SignatureTimeLimits { anonymous });
        }
        if !virtual_hosts.is_empty() {
            let domains = MultiDomain::new(virtual_hosts).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("virtual-host domains {virtual_hosts:?}: {e}"),
                )
            })?;
            builder.set_host(PortlessHost {
                domains,
                names: virtual_hosts.to_vec(),
            });
        }
        let listener = TcpListener::bind(addr)
            .map_err(|e| io::Error::new(e.kind(), format!("binding {addr}: {e}")))?;
        listener.set_nonblocking(true)?;
        Ok(HttpServer {
            listener,
            service: WithErrorCode {
                service: builder.build(),
                kernel_copies: true,
                virtual_hosts: virtual_hosts.into(),
                cors,
                sts,
            },
            tls: None,
            watch: Watch {
                bucket_logs: Some(bucket_logs),
                ..Watch::default()
            },
            keyring,
        })
    }

    /// The keys this server checks signatures with: for a reload of the
    /// credentials file (None on an anonymous server).
    pub fn keyring(&self) -> Option<Arc<Keyring>> {
        self.keyring.clone()
    }

    /// Writes a line per request to `log`.
    pub fn with_access_log(mut self, log: Arc<AccessLog>) -> HttpServer {
        self.watch.log = Some(log);
        self
    }

    /// Counts requests, bytes and latencies in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> HttpServer {
        self.watch.metrics = Some(metrics);
        self
    }

    /// Delivers a bucket's logs (PutBucketLogging) once the oldest record
    /// is `roll` old (default 5 minutes); None: bucket logging is off, its
    /// configuration still kept.
    pub fn with_bucket_log_roll(mut self, roll: Option<Duration>) -> HttpServer {
        match roll {
            Some(roll) => {
                if let Some(logs) = &self.watch.bucket_logs {
                    logs.set_roll(roll);
                }
            }
            None => self.watch.bucket_logs = None,
        }
        self
    }

    /// Serves HTTPS instead of HTTP on the bound port.
    pub fn with_tls(mut self, tls: TlsConfig) -> HttpServer {
        self.tls = Some(tls);
        self
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// Serves on a runtime of its own until `stop` completes, then stops
    /// accepting and lets requests in flight finish (up to 10 s).
    pub fn run_until(self, stop: impl Future<Output = ()> + Send) -> io::Result<()> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("s3hpc-http")
            // A thread starts as its creator, which may be a worker that
            // holds a user (Acting::held): a new thread is the server.
            .on_thread_start(s3hpc_store::identity::thread_start)
            .build()?;
        runtime.block_on(self.serve(stop))
    }

    /// Serves on a background thread; the handle stops it.
    pub fn spawn(self) -> io::Result<ServerHandle> {
        let (addr, scheme) = (self.local_addr(), self.scheme());
        ServerHandle::spawn(addr, scheme, "s3hpc-http-main", move |stop| {
            self.run_until(stop)
        })
    }

    async fn serve(self, stop: impl Future<Output = ()>) -> io::Result<()> {
        let listener = tokio::net::TcpListener::from_std(self.listener)?;
        let watch = (self.watch.log.is_some()
            || self.watch.metrics.is_some()
            || self.watch.bucket_logs.is_some())
        .then(|| Arc::new(self.watch));
        // Bucket logs nobody's request rolls are delivered by this ticker.
        let logs = watch.as_ref().and_then(|w| w.bucket_logs.clone());
        let ticker = logs.clone().map(|logs| {
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    let logs = logs.clone();
                    let _ = tokio::task::spawn_blocking(move || logs.roll_due(false)).await;
                }
            })
        });
        let transport = match self.tls {
            Some(_) => Transport::Https,
            None => Transport::Http,
        };
        let mut http = ConnBuilder::new(TokioExecutor::new());
        // Bodies go to the socket by `writev` straight from their `Bytes`,
        // never copied into hyper's buffer first: one copy less, and the
        // only safe way to send from a memory mapping (mapped.rs).
        http.http1().writev(true);
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let mut stop = std::pin::pin!(stop);
        loop {
            let (socket, client) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    // Out of descriptors or a connection reset before accept:
                    // keep serving the others, after a breath.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                },
                () = stop.as_mut() => break,
            };
            // Small requests and responses go out at once, not after 40 ms.
            let _ = socket.set_nodelay(true);
            let service = Observed {
                inner: self.service.clone(),
                watch: watch.clone(),
                client,
                transport,
            };
            if let Some(tls) = &self.tls {
                // The handshake runs in the connection's task, so a slow
                // client holds up no one else. rustls reads every byte of a
                // response body to encrypt it: no sending from mappings.
                let (tls, http, watcher) = (tls.clone(), http.clone(), graceful.watcher());
                let service = Observed {
                    inner: WithErrorCode {
                        kernel_copies: false,
                        ..service.inner
                    },
                    ..service
                };
                tokio::spawn(async move {
                    if let Some(stream) = tls.accept(socket).await {
                        let conn = http.serve_connection(TokioIo::new(stream), service);
                        let _ = watcher.watch(conn.into_owned()).await;
                    }
                });
                continue;
            }
            let conn = http.serve_connection(TokioIo::new(socket), service);
            let conn = graceful.watch(conn.into_owned());
            tokio::spawn(async move {
                let _ = conn.await;
            });
        }
        drop(listener);
        let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
        if let (Some(ticker), Some(logs)) = (ticker, logs) {
            ticker.abort();
            let _ = tokio::task::spawn_blocking(move || logs.roll_due(true)).await;
        }
        Ok(())
    }
}

/// Virtual-host parsing that ignores the port (clients send
/// `Host: bucket.domain:9000`, which s3s's `MultiDomain` would take as a
/// domain it does not serve), and that treats any host outside the
/// configured domains as path style (MultiDomain would take `localhost` as
/// the name of a bucket).
struct PortlessHost {
    domains: MultiDomain,
    names: Vec<String>,
}

impl S3Host for PortlessHost {
    fn parse_host_header<'a>(&'a self, host: &'a str) -> s3s::S3Result<VirtualHost<'a>> {
        let name = without_port(host);
        let ours = self.names.iter().any(|d| {
            name == d
                || name
                    .strip_suffix(d.as_str())
                    .is_some_and(|b| b.ends_with('.'))
        });
        if ours {
            self.domains.parse_host_header(name)
        } else {
            Ok(VirtualHost::new(name))
        }
    }
}

/// `name:port` → `name`; `[v6]:port` → `[v6]`; anything else unchanged.
fn without_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port))
            if !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!name.contains(':') || name.ends_with(']')) =>
        {
            name
        }
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ports_are_stripped() {
        use super::without_port;
        assert_eq!(without_port("b.s3.local:9000"), "b.s3.local");
        assert_eq!(without_port("b.s3.local"), "b.s3.local");
        assert_eq!(without_port("[::1]:9000"), "[::1]");
        assert_eq!(without_port("::1"), "::1");
    }
}
