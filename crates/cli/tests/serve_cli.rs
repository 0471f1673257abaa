//! `s3hpc serve --rpc`, as a process: clean stop on SIGTERM, a kill in the
//! middle of an upload, the sweep of its leftovers at the next start, and
//! the bench against a running gateway; `serve --http` over TLS: setup
//! errors, and plain HTTP sent to its port; what an administrator runs it
//! with: the access log (a line per request, hostile keys escaped,
//! refusals logged; reopened on SIGHUP after logrotate renamed it) and the
//! Prometheus metrics endpoint.

use s3hpc_client::{HttpClient, HttpClientConfig, ListRequest, PutBody, PutOptions, S3Client};
use s3hpc_rpc::frame::{push_encoded, push_frame, Header, Kind};
use s3hpc_rpc::message::Request;
use s3hpc_rpc::RemoteClient;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    /// The start-up line on stderr.
    banner: String,
}

/// A failing test must not leave its server running (it would hold the
/// test's output pipes open, and the test command would never end).
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(data: &Path, args: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .arg("serve")
        .arg("--data")
        .arg(data)
        .args(["--durability", "none"])
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let banner = line(&mut child);
    assert!(banner.contains("listening on"), "{banner}");
    Server { child, banner }
}

/// The next line the server writes on stderr, read a byte at a time so
/// that nothing after it is taken from the pipe.
fn line(child: &mut Child) -> String {
    let mut out = Vec::new();
    let mut byte = [0u8];
    let err = child.stderr.as_mut().unwrap();
    while err.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        out.push(byte[0]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How many temporaries the server's background sweep removed, once done.
fn swept(s: &mut Server) -> usize {
    loop {
        let l = line(&mut s.child);
        assert!(!l.is_empty(), "the server ended before its sweep");
        if let Some(n) = l
            .strip_suffix(" stale temporaries removed")
            .and_then(|l| l.rsplit_once("; "))
        {
            return n.1.parse().unwrap();
        }
    }
}

fn sigterm(child: &Child) {
    signal(child, "-TERM");
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "server did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn temporaries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .contains("s3hpc-tmp")
        })
        .collect()
}

#[test]
fn sigterm_stops_cleanly_and_removes_the_socket() {
    let t = tempfile::tempdir().unwrap();
    // `{host}` in an address is the host's name (one gateway per node).
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let sock = t.path().join(format!("gw-{}.sock", host.trim()));
    let unix = format!("unix:{}", sock.display());
    let per_host = format!("unix:{}/gw-{{host}}.sock", t.path().display());
    let mut s = serve(
        &t.path().join("data"),
        &["--rpc", &per_host, "--rpc", "tcp:127.0.0.1:0"],
    );
    // The TCP address with its real port is in the banner.
    let tcp = s
        .banner
        .split_whitespace()
        .find(|w| w.starts_with("tcp:"))
        .unwrap()
        .trim_end_matches(',')
        .to_string();
    let a = RemoteClient::connect(&unix).unwrap();
    let b = RemoteClient::connect(&tcp).unwrap();
    a.create_bucket("both").unwrap();
    b.put_object(
        "both",
        "k",
        PutBody::Bytes(b"via tcp"),
        &PutOptions::default(),
    )
    .unwrap();
    assert_eq!(a.head_object("both", "k").unwrap().size, 7);
    sigterm(&s.child);
    let status = wait_exit(&mut s.child);
    assert!(status.success(), "{status:?}");
    let mut rest = String::new();
    s.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut rest)
        .unwrap();
    assert!(rest.contains("stopped"), "{rest}");
    assert!(!sock.exists(), "socket file left behind");
}

/// The body of version `n` of a key of writer `w`: its name, then filler,
/// 256 KiB in all (big enough to be in flight when the signal comes).
fn version_body(w: usize, n: usize) -> Vec<u8> {
    let mut b = format!("writer {w} version {n};").into_bytes();
    b.resize(256 << 10, b'a' + (n % 26) as u8);
    b
}

/// What a Slurm job's end does to a gateway (SIGTERM at the time limit):
/// writers busy overwriting keys at the moment of the signal. Every write
/// acknowledged is there, whole; every object there is a whole version; no
/// temporary is left (a clean stop, unlike a kill); the socket goes and
/// the server exits 0.
#[test]
fn sigterm_during_writes_finishes_cleanly_and_leaves_nothing_partial() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let sock = t.path().join("gw.sock");
    let unix = format!("unix:{}", sock.display());
    let mut s = serve(&data, &["--rpc", &unix]);
    RemoteClient::connect(&unix)
        .unwrap()
        .create_bucket("bkt")
        .unwrap();
    const WRITERS: usize = 4;
    const KEYS: usize = 3;
    const MAX_PUTS: usize = 5000;
    let acked = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (unix, acked) = (unix.clone(), acked.clone());
            std::thread::spawn(move || {
                let c = RemoteClient::connect(&unix).unwrap();
                // The last acknowledged version of each key.
                let mut last = vec![None; KEYS];
                for n in 0..MAX_PUTS {
                    let body = version_body(w, n);
                    let key = format!("w{w}-k{}", n % KEYS);
                    let put =
                        c.put_object("bkt", &key, PutBody::Bytes(&body), &PutOptions::default());
                    if put.is_err() {
                        return (last, true);
                    }
                    last[n % KEYS] = Some(n);
                    acked.fetch_add(1, Ordering::SeqCst);
                }
                (last, false)
            })
        })
        .collect();
    let t0 = Instant::now();
    while acked.load(Ordering::SeqCst) < 40 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    sigterm(&s.child);
    let status = wait_exit(&mut s.child);
    let lasts: Vec<_> = writers.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(status.success(), "{status:?}");
    assert!(
        lasts.iter().all(|(_, stopped)| *stopped),
        "every writer was still writing when the gateway stopped"
    );
    let mut rest = String::new();
    s.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut rest)
        .unwrap();
    assert!(
        rest.contains("finishing the requests in flight") && rest.contains("stopped"),
        "{rest}"
    );
    assert!(!sock.exists(), "socket file left behind");
    assert!(
        temporaries(&data.join("bkt")).is_empty(),
        "a clean stop leaves no temporary"
    );
    // A new gateway on the same data finds nothing to sweep and only
    // whole versions, none older than the last acknowledged one.
    let mut s = serve(&data, &["--rpc", &unix]);
    assert_eq!(swept(&mut s), 0);
    let c = RemoteClient::connect(&unix).unwrap();
    for (w, (last, _)) in lasts.iter().enumerate() {
        for (k, acked) in last.iter().enumerate() {
            let key = format!("w{w}-k{k}");
            let Ok(mut got) = c.get_object("bkt", &key, None) else {
                assert!(
                    acked.is_none(),
                    "{key}: acknowledged version {acked:?} lost"
                );
                continue;
            };
            let mut body = Vec::new();
            got.body.read_to_end(&mut body).unwrap();
            let head = String::from_utf8_lossy(&body[..body.len().min(40)]).into_owned();
            let n: usize = head
                .strip_prefix(&format!("writer {w} version "))
                .and_then(|v| v.split(';').next()?.parse().ok())
                .unwrap_or_else(|| panic!("{key}: not a version: {head:?}"));
            assert_eq!(body, version_body(w, n), "{key}: torn version {n}");
            assert!(
                n % KEYS == k && Some(n) >= *acked,
                "{key}: version {n}, acknowledged {acked:?}"
            );
        }
    }
    sigterm(&s.child);
    assert!(wait_exit(&mut s.child).success());
}

#[test]
fn a_gateway_killed_mid_upload_leaves_no_partial_object_and_its_leftovers_go() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let sock = t.path().join("gw.sock");
    let unix = format!("unix:{}", sock.display());
    let mut s = serve(&data, &["--rpc", &unix]);
    let c = RemoteClient::connect(&unix).unwrap();
    c.create_bucket("bkt").unwrap();
    // Overwrites from one connection run on one gateway thread, which then
    // writes the next overwrite into a named temporary.
    let mut raw = UnixStream::connect(&sock).unwrap();
    let mut hello = b"S3HPCRPC".to_vec();
    hello.extend_from_slice(&s3hpc_rpc::message::VERSION.to_le_bytes());
    hello.extend_from_slice(&[0; 4]);
    raw.write_all(&hello).unwrap();
    raw.read_exact(&mut [0u8; 16]).unwrap();
    let opts = PutOptions::default();
    let put = |id: u64, body: &[u8], end: bool| {
        let req = Request::PutObject {
            bucket: "bkt".into(),
            key: "k".into(),
            len: None,
            opts: Cow::Borrowed(&opts),
        };
        let mut out = Vec::new();
        push_encoded(&mut out, Kind::Request, req.op(), id, &req).unwrap();
        let kind = if end { Kind::DataEnd } else { Kind::Data };
        push_frame(&mut out, kind, 0, id, body);
        out
    };
    for id in 1..=3u64 {
        raw.write_all(&put(id, format!("version {id}").as_bytes(), true))
            .unwrap();
        let mut h = [0u8; 16];
        raw.read_exact(&mut h).unwrap();
        let h = Header::decode(&h).unwrap();
        assert_eq!(h.kind, Kind::Response);
        raw.read_exact(&mut vec![0u8; h.len as usize]).unwrap();
    }
    raw.write_all(&put(4, &vec![b'x'; 1 << 20], false)).unwrap();
    let dir = data.join("bkt");
    let t0 = Instant::now();
    while temporaries(&dir).is_empty() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    let left = temporaries(&dir);
    assert_eq!(left.len(), 1, "the upload reached its named temporary");
    // Killed: the object is the last complete version, and the temporary
    // the kill left is hidden, then removed at the next start (its writer
    // is a process of this host that no longer exists).
    // The server answers before its sweep is done (the temporary is hidden
    // meanwhile), and the sweep in the background removes it.
    let mut s = serve(&data, &["--rpc", &unix]);
    assert_eq!(swept(&mut s), left.len());
    assert!(temporaries(&dir).is_empty());
    let c = RemoteClient::connect(&unix).unwrap();
    let mut body = String::new();
    c.get_object("bkt", "k", None)
        .unwrap()
        .body
        .read_to_string(&mut body)
        .unwrap();
    assert_eq!(body, "version 3");
    let page = c
        .list_objects(
            "bkt",
            &ListRequest {
                max_keys: 1000,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(page.objects.len(), 1);
    sigterm(&s.child);
    assert!(wait_exit(&mut s.child).success());
}

#[test]
fn bench_against_a_running_gateway_and_bad_serve_options() {
    let t = tempfile::tempdir().unwrap();
    let sock = t.path().join("gw.sock");
    let unix = format!("unix://{}", sock.display());
    let mut s = serve(&t.path().join("data"), &["--rpc", &unix]);
    let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .args([
            "bench",
            "io500",
            "--backends",
            "posix,embedded,remote",
            "--remote",
            &unix,
        ])
        .arg("--dir")
        .arg(t.path().join("bench"))
        .args([
            "--stonewall",
            "0.2",
            "--ranks",
            "2",
            "--ior-easy-max-bytes",
            "2m",
        ])
        .args([
            "--ior-hard-max-segments",
            "10",
            "--mdtest-easy-max-files",
            "50",
        ])
        .args(["--mdtest-hard-max-files", "50"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("remote/posix"), "{stdout}");
    // What the transport costs against the engine in the process.
    let cost = stdout
        .split("transport cost")
        .nth(1)
        .expect("transport table");
    assert!(cost.contains("remote/embedded"), "{stdout}");
    assert!(cost.contains("mdtest-easy-stat") && cost.contains("score total"));
    // The bench removed what it wrote through the gateway.
    let c = RemoteClient::connect(&unix).unwrap();
    for b in c.list_buckets().unwrap() {
        let page = c.list_objects(
            &b.name,
            &ListRequest {
                max_keys: 10,
                ..Default::default()
            },
        );
        assert!(page.unwrap().objects.is_empty(), "{} not emptied", b.name);
    }
    sigterm(&s.child);
    assert!(wait_exit(&mut s.child).success());

    // No address, a bad address, a gateway that is not there.
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let data = t.path().join("d2");
    let data = data.to_str().unwrap();
    assert!(run(&["serve", "--data", data]).contains("--rpc unix:PATH"));
    assert!(run(&["serve", "--data", data, "--rpc", "http://x:1"]).contains("no gateway address"));
    let e = run(&[
        "bench",
        "io500",
        "--backends",
        "remote",
        "--remote",
        &unix,
        "--dir",
        data,
    ]);
    assert!(e.contains("cannot reach the s3hpc gateway"), "{e}");
}

#[test]
fn https_setup_errors_and_plain_http_to_the_tls_port() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let c = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    let cert = write("cert.pem", &c.cert.pem());
    let key = write("key.pem", &c.signing_key.serialize_pem());
    let other = rcgen::generate_simple_self_signed(vec!["x".into()]).unwrap();
    let other_key = write("other.pem", &other.signing_key.serialize_pem());
    let missing = dir.path().join("none.pem").to_str().unwrap().to_string();
    let data = dir.path().join("data");
    let refused = |cert: &str, key: &str, why: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
            .args(["serve", "--anonymous", "--http", "127.0.0.1:0"])
            .args(["--tls-cert", cert, "--tls-key", key])
            .arg("--data")
            .arg(&data)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(why), "{err}");
    };
    refused(&missing, &key, "reading the TLS certificate");
    refused(&cert, &other_key, "does not match the certificate");
    refused(&key, &key, "no PEM CERTIFICATE");

    let mut server = serve(
        &data,
        &[
            "--anonymous",
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
        ],
    );
    let addr = server
        .banner
        .split("https://")
        .nth(1)
        .expect("an https endpoint in the banner")
        .trim()
        .to_string();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /bkt/key HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("This port speaks HTTPS"), "{answer}");
    sigterm(&server.child);
    assert!(wait_exit(&mut server.child).success());
}

/// The `http://` addresses in a banner: the S3 endpoint first, then the
/// metrics URL if any.
fn urls(banner: &str) -> Vec<String> {
    banner
        .split_whitespace()
        .filter(|w| w.starts_with("http://"))
        .map(|w| w.trim_end_matches(',').to_string())
        .collect()
}

fn client(endpoint: &str, credentials: Option<(&str, &str)>) -> HttpClient {
    HttpClient::new(HttpClientConfig {
        endpoint: endpoint.into(),
        credentials: credentials.map(|(a, s)| (a.into(), s.into())),
        ..Default::default()
    })
    .unwrap()
}

/// The lines of the log once it holds at least `n` (the writer flushes as
/// soon as its queue is empty).
fn lines(log: &Path, n: usize) -> Vec<String> {
    let t = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(String::from).collect();
        if lines.len() >= n {
            assert!(text.ends_with('\n'), "{text}");
            return lines;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{} holds {} lines, not {n}:\n{text}",
            log.display(),
            lines.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A scrape of `url` (`http://HOST:PORT/metrics`): each series with its
/// value, the `# TYPE` lines checked on the way.
fn scrape(url: &str) -> HashMap<String, f64> {
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_once('/').unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    let mut series = HashMap::new();
    for line in body.lines() {
        if let Some(t) = line.strip_prefix("# TYPE ") {
            let kind = t.split(' ').nth(1).unwrap();
            assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (name, value) = line.rsplit_once(' ').unwrap();
        series.insert(name.to_string(), value.parse::<f64>().unwrap());
    }
    series
}

fn get(m: &HashMap<String, f64>, series: &str) -> f64 {
    m.get(series).copied().unwrap_or(0.0)
}

fn fields(line: &str) -> Vec<&str> {
    let f: Vec<&str> = line.split(' ').collect();
    assert_eq!(f.len(), 14, "{line}");
    f
}

#[test]
fn access_log_and_metrics_follow_every_request() {
    let t = tempfile::tempdir().unwrap();
    let creds = t.path().join("credentials");
    std::fs::write(&creds, "alice alice-secret\n").unwrap();
    let log = t.path().join("access.log");
    let s = serve(
        &t.path().join("data"),
        &[
            "--http",
            "127.0.0.1:0",
            "--credentials",
            creds.to_str().unwrap(),
            "--access-log",
            log.to_str().unwrap(),
            "--metrics",
            "127.0.0.1:0",
        ],
    );
    let urls = urls(&s.banner);
    let (endpoint, metrics) = (&urls[0], &urls[1]);
    assert!(metrics.ends_with("/metrics"), "{}", s.banner);
    let before = scrape(metrics);
    let alice = client(endpoint, Some(("alice", "alice-secret")));
    let mallory = client(endpoint, Some(("alice", "wrong")));
    let hostile = "a b\nc\u{1}%é";
    alice.create_bucket("logs").unwrap();
    alice
        .put_object(
            "logs",
            hostile,
            PutBody::Bytes(b"hello"),
            &PutOptions::default(),
        )
        .unwrap();
    let mut body = Vec::new();
    let mut got = alice.get_object("logs", hostile, None).unwrap();
    got.body.read_to_end(&mut body).unwrap();
    assert_eq!(body, b"hello");
    assert!(alice.get_object("logs", "missing", None).is_err());
    let refused = mallory.put_object("logs", "k", PutBody::Bytes(b"x"), &PutOptions::default());
    assert!(refused.is_err());

    let lines = lines(&log, 5);
    assert_eq!(lines.len(), 5, "{lines:#?}");
    let uid = rustix::process::geteuid().as_raw().to_string();
    let expect = [
        // operation, bucket, key, status, key, uid, bytes in, min bytes out
        (
            "CreateBucket",
            "logs",
            "-",
            "200",
            "alice",
            uid.as_str(),
            "0",
            0,
        ),
        (
            "PutObject",
            "logs",
            "a%20b%0Ac%01%25%C3%A9",
            "200",
            "alice",
            &uid,
            "5",
            0,
        ),
        (
            "GetObject",
            "logs",
            "a%20b%0Ac%01%25%C3%A9",
            "200",
            "alice",
            &uid,
            "0",
            5,
        ),
        ("GetObject", "logs", "missing", "404", "alice", &uid, "0", 1),
        // A bad signature: no key was verified, so none is named.
        ("PutObject", "logs", "k", "403", "-", "-", "", 1),
    ];
    for (line, (op, bucket, key, status, access_key, uid, bytes_in, min_out)) in
        lines.iter().zip(expect)
    {
        let f = fields(line);
        let (time, transport, client) = (f[0], f[1], f[2]);
        assert!(
            time.len() == 27 && time.ends_with('Z') && time.as_bytes()[19] == b'.',
            "{line}"
        );
        assert_eq!(transport, "http", "{line}");
        assert!(client.starts_with("127.0.0.1:"), "{line}");
        assert_eq!(
            &f[3..9],
            [access_key, uid, op, bucket, key, status],
            "{line}"
        );
        if !bytes_in.is_empty() {
            assert_eq!(f[9], bytes_in, "{line}");
        }
        assert!(f[10].parse::<u64>().unwrap() >= min_out, "{line}");
        assert!(f[11].parse::<u64>().unwrap() > 0, "{line}");
        assert_eq!(f[12].len(), 16, "the request id: {line}");
    }

    let after = scrape(metrics);
    let series = |op: &str, status: &str| {
        format!("s3hpc_requests_total{{transport=\"http\",operation=\"{op}\",status=\"{status}\"}}")
    };
    let delta = |s: &str| get(&after, s) - get(&before, s);
    assert_eq!(delta(&series("PutObject", "200")), 1.0);
    assert_eq!(delta(&series("PutObject", "403")), 1.0);
    assert_eq!(delta(&series("GetObject", "200")), 1.0);
    assert_eq!(delta(&series("GetObject", "404")), 1.0);
    let labels = "transport=\"http\",operation=\"PutObject\"";
    assert!(delta(&format!("s3hpc_received_bytes_total{{{labels}}}")) >= 5.0);
    let get_labels = "transport=\"http\",operation=\"GetObject\"";
    assert!(delta(&format!("s3hpc_sent_bytes_total{{{get_labels}}}")) >= 5.0);
    let count = format!("s3hpc_request_duration_seconds_count{{{labels}}}");
    let inf = format!("s3hpc_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}}");
    assert_eq!(delta(&count), 2.0);
    assert_eq!(get(&after, &inf), get(&after, &count));
    assert!(
        get(
            &after,
            &format!("s3hpc_request_duration_seconds_sum{{{labels}}}")
        ) > 0.0
    );
    assert_eq!(
        get(&after, "s3hpc_requests_in_flight{transport=\"http\"}"),
        0.0
    );
    // The metrics listener answers nothing but /metrics.
    let mut other = TcpStream::connect(
        metrics
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap(),
    )
    .unwrap();
    other.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut answer = String::new();
    other.read_to_string(&mut answer).unwrap();
    assert!(
        answer.starts_with("HTTP/1.0 404") || answer.starts_with("HTTP/1.1 404"),
        "{answer}"
    );
}

#[test]
fn sighup_reopens_the_access_log_after_logrotate_renamed_it() {
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("access.log");
    let rotated = t.path().join("access.log.1");
    let s = serve(
        &t.path().join("data"),
        &[
            "--http",
            "127.0.0.1:0",
            "--anonymous",
            "--access-log",
            log.to_str().unwrap(),
        ],
    );
    let anyone = client(&urls(&s.banner)[0], None);
    anyone.create_bucket("pub").unwrap();
    assert!(anyone.head_object("pub", "-").is_err());
    let first = lines(&log, 2);
    // Anonymous: no key, no uid; operations told from the request.
    let f = fields(&first[1]);
    assert_eq!(
        &f[3..9],
        ["-", "-", "HeadObject", "pub", "%2D", "404"],
        "{}",
        first[1]
    );
    std::fs::rename(&log, &rotated).unwrap();
    signal(&s.child, "-HUP");
    // Requests until one lands in the new file (the reopen is queued
    // behind lines already waiting), each logged exactly once.
    let t0 = Instant::now();
    let mut sent = 2;
    while !log.exists() || std::fs::read_to_string(&log).unwrap().is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no new access log after SIGHUP"
        );
        anyone.head_bucket("pub").unwrap();
        sent += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    anyone.head_bucket("pub").unwrap();
    sent += 1;
    let old = std::fs::read_to_string(&rotated).unwrap().lines().count();
    let new = lines(&log, sent - old);
    assert_eq!(old + new.len(), sent, "{new:#?}");
    assert!(new.iter().all(|l| fields(l)[5] == "HeadBucket"), "{new:#?}");
    // The server still runs, and stops cleanly.
    sigterm(&s.child);
    let mut s = s;
    let status = wait_exit(&mut s.child);
    assert!(status.success(), "{status:?}");
}

#[test]
fn gateway_requests_are_logged_and_counted_too() {
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("access.log");
    let sock = t.path().join("gw.sock");
    let unix = format!("unix:{}", sock.display());
    let s = serve(
        &t.path().join("data"),
        &[
            "--rpc",
            &unix,
            "--access-log",
            log.to_str().unwrap(),
            "--metrics",
            "127.0.0.1:0",
        ],
    );
    s.banner.contains(&unix).then_some(()).expect(&s.banner);
    let gw = RemoteClient::connect(&unix).unwrap();
    gw.create_bucket("rpc").unwrap();
    gw.put_object(
        "rpc",
        "k y",
        PutBody::Bytes(b"hello"),
        &PutOptions::default(),
    )
    .unwrap();
    let mut body = Vec::new();
    let mut got = gw.get_object("rpc", "k y", None).unwrap();
    got.body.read_to_end(&mut body).unwrap();
    assert!(gw.head_object("rpc", "missing").is_err());
    let logged = lines(&log, 4);
    assert_eq!(logged.len(), 4, "{logged:#?}");
    let me = format!(
        "unix:pid={},uid={}",
        std::process::id(),
        rustix::process::getuid().as_raw()
    );
    let uid = rustix::process::geteuid().as_raw().to_string();
    for (line, (op, key, status, bytes_in, bytes_out)) in logged.iter().zip([
        ("CreateBucket", "-", "200", "0", "0"),
        ("PutObject", "k%20y", "200", "5", "0"),
        ("GetObject", "k%20y", "200", "0", "5"),
        ("HeadObject", "missing", "404", "0", "0"),
    ]) {
        let f = fields(line);
        assert_eq!(
            &f[1..11],
            ["rpc", &me, "-", &uid, op, "rpc", key, status, bytes_in, bytes_out],
            "{line}"
        );
        assert_eq!(f[12], "-", "{line}");
    }
    let m = scrape(&urls(&s.banner)[0]);
    let rpc = |op: &str, status: &str| {
        let series = format!(
            "s3hpc_requests_total{{transport=\"rpc\",operation=\"{op}\",status=\"{status}\"}}"
        );
        get(&m, &series)
    };
    assert_eq!(rpc("PutObject", "200"), 1.0);
    assert_eq!(rpc("HeadObject", "404"), 1.0);
    let sent = "s3hpc_sent_bytes_total{transport=\"rpc\",operation=\"GetObject\"}";
    assert_eq!(get(&m, sent), 5.0);
    assert_eq!(get(&m, "s3hpc_requests_in_flight{transport=\"rpc\"}"), 0.0);
    // A peer that is another user: its line carries the uid the request
    // acted as, not the server's (as root, which can connect as nobody).
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped the other-user line: connecting as nobody needs root");
        return;
    }
    let nobody = s3hpc_store::Identity::parse("nobody").unwrap();
    let uid = nobody.user().unwrap().uid;
    for (p, mode) in [(t.path(), 0o755), (sock.as_path(), 0o777)] {
        std::fs::set_permissions(
            p,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(mode),
        )
        .unwrap();
    }
    let other = nobody
        .act(|| RemoteClient::connect(&unix).unwrap())
        .unwrap();
    other.head_bucket("rpc").unwrap();
    let f = fields(&lines(&log, 5)[4])
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    assert_eq!(
        f[1..6],
        [
            "rpc",
            &format!("unix:pid={},uid={uid}", std::process::id()),
            "-",
            &uid.to_string(),
            "HeadBucket"
        ],
        "{f:?}"
    );
}

#[test]
fn sighup_without_an_access_log_leaves_the_server_running() {
    let t = tempfile::tempdir().unwrap();
    let unix = format!("unix:{}", t.path().join("gw.sock").display());
    let mut s = serve(&t.path().join("data"), &["--rpc", &unix]);
    signal(&s.child, "-HUP");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        s.child.try_wait().unwrap().is_none(),
        "SIGHUP ended the server"
    );
    RemoteClient::connect(&unix)
        .unwrap()
        .create_bucket("still")
        .unwrap();
    sigterm(&s.child);
    assert!(wait_exit(&mut s.child).success());
}

#[test]
fn keys_mapped_to_users_check_users_and_refuse_an_anonymous_tcp_gateway() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("d");
    let data = data.to_str().unwrap();
    let refused = |credentials: &str, extra: &[&str]| {
        let file = t.path().join("credentials");
        std::fs::write(&file, credentials).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
            .args([
                "serve",
                "--data",
                data,
                "--http",
                "127.0.0.1:0",
                "--credentials",
            ])
            .arg(&file)
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{credentials} {extra:?} started");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = refused("k s no-such-user-s3hpc\n", &[]);
    assert!(
        e.contains("line 1") && e.contains("no-such-user-s3hpc"),
        "{e}"
    );
    let e = refused("k s 0:0\n", &[]);
    assert!(e.contains("0:0!"), "{e}");
    let e = refused("k s 4242:4242\n", &["--rpc", "tcp:127.0.0.1:0"]);
    assert!(e.contains("--rpc-tcp-as"), "{e}");
    let e = refused("k s\n", &["--rpc-tcp-as", "4242:4242"]);
    assert!(e.contains("--rpc tcp:"), "{e}");
}

/// `explain --endpoint` works in a bucket of its own run and removes it:
/// twice against the same server, and nothing of either run stays behind.
#[test]
fn explain_against_an_endpoint_leaves_nothing_behind() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let keys = t.path().join("keys");
    std::fs::write(&keys, "explain-key explain-secret\n").unwrap();
    let keys = keys.to_str().unwrap();
    let server = serve(&data, &["--credentials", keys, "--http", "127.0.0.1:0"]);
    let url = server
        .banner
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("an http endpoint in the banner")
        .trim_end_matches(',')
        .to_string();
    for run in 0..2 {
        let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
            .args(["explain", "--endpoint", &url, "--layers", "ext1"])
            .args([
                "--access-key",
                "explain-key",
                "--secret-key",
                "explain-secret",
            ])
            .args(["--sizes", "4096", "--repeat", "1", "--batch", "2"])
            .arg("--dir")
            .arg(t.path().join(format!("run{run}")))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "run {run}: {err}");
        let left: Vec<_> = std::fs::read_dir(&data)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        assert!(left.is_empty(), "run {run} left buckets behind: {left:?}");
    }
}
