//! `s3hpc serve --rpc`, as a process: clean stop on SIGTERM, a kill in the
//! middle of an upload, the sweep of its leftovers at the next start, and
//! the bench against a running gateway; `serve --http` over TLS: setup
//! errors, and plain HTTP sent to its port.

use s3hpc_client::{ListRequest, PutBody, PutOptions, S3Client};
use s3hpc_rpc::frame::{push_encoded, push_frame, Header, Kind};
use s3hpc_rpc::message::Request;
use s3hpc_rpc::RemoteClient;
use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read, Write};
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
    let mut banner = String::new();
    BufReader::new(child.stderr.as_mut().unwrap())
        .read_line(&mut banner)
        .unwrap();
    assert!(banner.contains("listening on"), "{banner}");
    Server { child, banner }
}

fn sigterm(child: &Child) {
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
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
    assert!(
        s.banner.contains(" 0 stale temporaries removed"),
        "{}",
        s.banner
    );
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
    let mut s = serve(&data, &["--rpc", &unix]);
    assert!(
        s.banner
            .contains(&format!("{} stale temporaries removed", left.len())),
        "{} left: {}",
        left.len(),
        s.banner
    );
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
