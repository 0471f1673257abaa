//! Prometheus metrics: counters and latency histograms per transport and
//! operation, kept in atomics, and the text exposition format on a
//! listener of their own (`/metrics`).
//!
//! Each (transport, operation) pair gets its own block of counters the
//! first time it is seen, in a fixed table found by hashing the name: after
//! that a request costs a hash, one atomic load to find its block and a few
//! relaxed atomic increments, with no lock anywhere (why not a crate:
//! ARCHITECTURE.md, "Access log and metrics").

use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, Response, StatusCode};
use std::fmt::Write as _;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

/// How a request came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Http,
    Https,
    Rpc,
}

impl Transport {
    const ALL: [Transport; 3] = [Transport::Http, Transport::Https, Transport::Rpc];

    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Http => "http",
            Transport::Https => "https",
            Transport::Rpc => "rpc",
        }
    }
}

/// Upper bounds of the latency buckets, in microseconds, and as Prometheus
/// writes them (seconds): from 100 µs (a small GET on tmpfs) to 10 s.
const BUCKETS_US: [u64; 16] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000,
];
const BUCKETS_LE: [&str; 16] = [
    "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
    "0.25", "0.5", "1", "2.5", "5", "10",
];

/// Status codes 100..=599, one counter each.
const STATUSES: usize = 500;

/// The counters of one (transport, operation).
struct OpStats {
    transport: Transport,
    operation: Box<str>,
    by_status: [AtomicU64; STATUSES],
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    /// Per bucket, not cumulative; the last one is above 10 s.
    latency: [AtomicU64; BUCKETS_US.len() + 1],
    latency_sum_us: AtomicU64,
}

/// Room for this many (transport, operation) pairs: s3s names about 100
/// operations, the RPC 20; requests beyond that count under `other`.
const SLOTS: usize = 512;

/// One finished request.
#[derive(Clone, Copy, Debug)]
pub struct Observation<'a> {
    pub transport: Transport,
    pub operation: &'a str,
    pub status: u16,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub micros: u64,
    /// Where the request's access key came from (`file`, `key`, `session`,
    /// `oidc`), `socket` for an RPC peer the kernel named, None unsigned.
    pub key_kind: Option<&'a str>,
}

/// The kinds of key requests are counted by; the last counts unsigned ones.
const KEY_KINDS: [&str; 6] = ["file", "key", "session", "oidc", "socket", "none"];

/// The server's metrics; share it (`Arc`) between the transports.
pub struct Metrics {
    slots: Box<[OnceLock<Box<OpStats>>]>,
    /// Per transport, for requests beyond the table's room.
    other: [OnceLock<Box<OpStats>>; Transport::ALL.len()],
    in_flight: [AtomicI64; Transport::ALL.len()],
    by_key_kind: [AtomicU64; KEY_KINDS.len()],
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            slots: (0..SLOTS).map(|_| OnceLock::new()).collect(),
            other: Default::default(),
            in_flight: Default::default(),
            by_key_kind: Default::default(),
        }
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// A request of `transport` started.
    pub fn begin(&self, transport: Transport) {
        self.in_flight[transport as usize].fetch_add(1, Relaxed);
    }

    /// A request that `begin` counted ended with `o`.
    pub fn end(&self, o: &Observation<'_>) {
        self.in_flight[o.transport as usize].fetch_sub(1, Relaxed);
        let s = self.stats(o.transport, o.operation);
        let status = usize::from(o.status.clamp(100, 599) - 100);
        s.by_status[status].fetch_add(1, Relaxed);
        if o.bytes_in > 0 {
            s.bytes_in.fetch_add(o.bytes_in, Relaxed);
        }
        if o.bytes_out > 0 {
            s.bytes_out.fetch_add(o.bytes_out, Relaxed);
        }
        let bucket = BUCKETS_US.partition_point(|&le| le < o.micros);
        s.latency[bucket].fetch_add(1, Relaxed);
        s.latency_sum_us.fetch_add(o.micros, Relaxed);
        let kind = o.key_kind.unwrap_or("none");
        let i = KEY_KINDS
            .iter()
            .position(|k| *k == kind)
            .unwrap_or(KEY_KINDS.len() - 1);
        self.by_key_kind[i].fetch_add(1, Relaxed);
    }

    /// The block of (transport, operation): found by open addressing in the
    /// fixed table, created on first use.
    fn stats(&self, transport: Transport, operation: &str) -> &OpStats {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ transport as u64;
        for b in operation.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let matches = |s: &OpStats| s.transport == transport && &*s.operation == operation;
        for i in 0..SLOTS {
            let slot = &self.slots[(h as usize).wrapping_add(i) % SLOTS];
            let s = slot.get_or_init(|| OpStats::new(transport, operation));
            if matches(s) {
                return s;
            }
        }
        // Full (never with S3's operations alone).
        self.other[transport as usize].get_or_init(|| OpStats::new(transport, "other"))
    }

    /// The metrics in Prometheus's text format (version 0.0.4).
    pub fn render(&self) -> String {
        let mut blocks: Vec<&OpStats> = (self.slots.iter().chain(&self.other))
            .filter_map(|s| s.get())
            .map(|b| &**b)
            .collect();
        blocks.sort_by(|a, b| {
            (a.transport as usize, &a.operation).cmp(&(b.transport as usize, &b.operation))
        });
        let mut out = String::with_capacity(4096 + blocks.len() * 2048);
        let labels = |s: &OpStats| {
            format!(
                "transport=\"{}\",operation=\"{}\"",
                s.transport.as_str(),
                escape(&s.operation)
            )
        };
        header(&mut out, "s3hpc_requests_total", "counter", "Requests answered, by transport, operation and HTTP status (499: the client left first).");
        for s in &blocks {
            for (i, n) in s.by_status.iter().enumerate() {
                let n = n.load(Relaxed);
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "s3hpc_requests_total{{{},status=\"{}\"}} {n}",
                        labels(s),
                        i + 100
                    );
                }
            }
        }
        for (name, help, get) in [
            (
                "s3hpc_received_bytes_total",
                "Request body bytes received.",
                (|s: &OpStats| s.bytes_in.load(Relaxed)) as fn(&OpStats) -> u64,
            ),
            (
                "s3hpc_sent_bytes_total",
                "Response body bytes sent.",
                |s: &OpStats| s.bytes_out.load(Relaxed),
            ),
        ] {
            header(&mut out, name, "counter", help);
            for s in &blocks {
                let _ = writeln!(out, "{name}{{{}}} {}", labels(s), get(s));
            }
        }
        let name = "s3hpc_request_duration_seconds";
        header(
            &mut out,
            name,
            "histogram",
            "Time from a request's arrival to the last byte of its answer handed to the socket.",
        );
        for s in &blocks {
            let l = labels(s);
            let mut cumulative = 0;
            for (le, n) in BUCKETS_LE.iter().zip(&s.latency) {
                cumulative += n.load(Relaxed);
                let _ = writeln!(out, "{name}_bucket{{{l},le=\"{le}\"}} {cumulative}");
            }
            cumulative += s.latency[BUCKETS_US.len()].load(Relaxed);
            let _ = writeln!(out, "{name}_bucket{{{l},le=\"+Inf\"}} {cumulative}");
            let sum = s.latency_sum_us.load(Relaxed) as f64 / 1e6;
            let _ = writeln!(out, "{name}_sum{{{l}}} {sum}");
            let _ = writeln!(out, "{name}_count{{{l}}} {cumulative}");
        }
        header(
            &mut out,
            "s3hpc_requests_by_key_kind_total",
            "counter",
            "Requests answered, by where their access key came from: the credentials file, a \
             user's own key, a session (s3hpc creds), an OIDC login, an RPC socket's peer, or \
             none (unsigned).",
        );
        for (kind, n) in KEY_KINDS.iter().zip(&self.by_key_kind) {
            let _ = writeln!(
                out,
                "s3hpc_requests_by_key_kind_total{{kind=\"{kind}\"}} {}",
                n.load(Relaxed)
            );
        }
        header(
            &mut out,
            "s3hpc_requests_in_flight",
            "gauge",
            "Requests received and not yet answered in full.",
        );
        for t in Transport::ALL {
            let n = self.in_flight[t as usize].load(Relaxed);
            let _ = writeln!(
                out,
                "s3hpc_requests_in_flight{{transport=\"{}\"}} {n}",
                t.as_str()
            );
        }
        out
    }
}

impl OpStats {
    fn new(transport: Transport, operation: &str) -> Box<OpStats> {
        Box::new(OpStats {
            transport,
            operation: operation.into(),
            by_status: [const { AtomicU64::new(0) }; STATUSES],
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            latency: Default::default(),
            latency_sum_us: AtomicU64::new(0),
        })
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A label value as the text format wants it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The `/metrics` listener, not yet serving.
pub struct MetricsServer {
    listener: TcpListener,
    metrics: Arc<Metrics>,
}

impl MetricsServer {
    /// Binds `addr` (port 0 picks a free one).
    pub fn bind(addr: SocketAddr, metrics: Arc<Metrics>) -> io::Result<MetricsServer> {
        let listener = TcpListener::bind(addr).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("binding the metrics listener {addr}: {e}"),
            )
        })?;
        listener.set_nonblocking(true)?;
        Ok(MetricsServer { listener, metrics })
    }

    /// Serves on a thread of its own (a one-thread runtime: scrapes are
    /// rare) until the handle stops it.
    pub fn spawn(self) -> io::Result<crate::ServerHandle> {
        let addr = self.listener.local_addr()?;
        crate::handle::ServerHandle::spawn(addr, "http", "s3hpc-metrics", move |stop| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(self.serve(stop))
        })
    }

    async fn serve(self, stop: impl std::future::Future<Output = ()>) -> io::Result<()> {
        let listener = tokio::net::TcpListener::from_std(self.listener)?;
        let mut stop = std::pin::pin!(stop);
        loop {
            let socket = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((socket, _)) => socket,
                    Err(_) => {
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                        continue;
                    }
                },
                () = stop.as_mut() => return Ok(()),
            };
            let metrics = self.metrics.clone();
            let service = hyper::service::service_fn(move |req| {
                let answer = answer(&metrics, req.method(), req.uri().path());
                async move { Ok::<_, std::convert::Infallible>(answer) }
            });
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(socket);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    }
}

fn answer(metrics: &Metrics, method: &Method, path: &str) -> Response<s3s::Body> {
    let (status, body) = match (method, path) {
        (&Method::GET | &Method::HEAD, "/metrics") => (StatusCode::OK, metrics.render()),
        _ => (
            StatusCode::NOT_FOUND,
            "s3hpc serves its metrics at GET /metrics\n".to_string(),
        ),
    };
    let mut resp = Response::new(s3s::Body::from(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_render_as_prometheus_text() {
        let m = Metrics::new();
        let put = |status, micros| Observation {
            key_kind: Some("key"),
            transport: Transport::Http,
            operation: "PutObject",
            status,
            bytes_in: 10,
            bytes_out: 0,
            micros,
        };
        for o in [
            put(200, 90),
            put(200, 100),
            put(403, 101),
            put(200, 20_000_000),
        ] {
            m.begin(Transport::Http);
            m.end(&o);
        }
        m.begin(Transport::Rpc);
        let text = m.render();
        let l = "transport=\"http\",operation=\"PutObject\"";
        for line in [
            format!("s3hpc_requests_total{{{l},status=\"200\"}} 3"),
            format!("s3hpc_requests_total{{{l},status=\"403\"}} 1"),
            format!("s3hpc_received_bytes_total{{{l}}} 40"),
            format!("s3hpc_request_duration_seconds_bucket{{{l},le=\"0.0001\"}} 2"),
            format!("s3hpc_request_duration_seconds_bucket{{{l},le=\"0.00025\"}} 3"),
            format!("s3hpc_request_duration_seconds_bucket{{{l},le=\"10\"}} 3"),
            format!("s3hpc_request_duration_seconds_bucket{{{l},le=\"+Inf\"}} 4"),
            format!("s3hpc_request_duration_seconds_count{{{l}}} 4"),
            format!("s3hpc_request_duration_seconds_sum{{{l}}} 20.000291"),
            "s3hpc_requests_in_flight{transport=\"http\"} 0".into(),
            "s3hpc_requests_in_flight{transport=\"rpc\"} 1".into(),
        ] {
            assert!(text.lines().any(|x| x == line), "{line} missing in\n{text}");
        }
    }

    #[test]
    fn many_operations_find_their_own_blocks() {
        let m = Metrics::new();
        let names: Vec<String> = (0..SLOTS + 10).map(|i| format!("Op{i}")).collect();
        for (i, op) in names.iter().enumerate() {
            for _ in 0..=(i % 3) {
                m.end(&Observation {
                    key_kind: None,
                    transport: Transport::Rpc,
                    operation: op,
                    status: 200,
                    bytes_in: 0,
                    bytes_out: 1,
                    micros: 1,
                });
            }
        }
        let text = m.render();
        assert!(
            text.contains("operation=\"Op7\",status=\"200\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("operation=\"other\",status=\"200\"}"),
            "{text}"
        );
    }
}
