//! `c/calls4.c`, compiled against include/libs3.h and linked against this
//! crate's libs3.so.4, run on each transport: embedded (`file://`), remote
//! (a gateway on a Unix socket, started here) and HTTP (our server,
//! started here). The program checks every call and its failures itself;
//! this test fails if it reports a failed check, crashes or hangs.

use s3hpc_client::EmbeddedClient;
use s3hpc_http::{AuthConfig, HttpServer};
use s3hpc_rpc::{Address, Gateway, GatewayOptions};
use s3hpc_store::{Store, StoreConfig};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const ACCESS: &str = "calls4-user";
const SECRET: &str = "calls4-secret-0123456789";
/// Far above the program's run time (well under a second per transport).
const TIMEOUT: Duration = Duration::from_secs(120);

/// The compiled program, built once: a directory holding the library as
/// `libs3.so.4` (its soname) and the program linked against it.
fn program() -> &'static Path {
    static BUILT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            // target/<profile>/deps/<this test> → target/<profile>/libs3_4.so
            let exe = std::env::current_exe().unwrap();
            let lib = exe.parent().unwrap().parent().unwrap().join("libs3_4.so");
            assert!(lib.exists(), "{} not built", lib.display());
            std::os::unix::fs::symlink(&lib, dir.path().join("libs3.so.4")).unwrap();
            let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
            let bin = dir.path().join("calls4");
            let out = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
                .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O1", "-I"])
                .arg(crate_dir.join("include"))
                .arg(crate_dir.join("c/calls4.c"))
                .arg("-o")
                .arg(&bin)
                .arg("-L")
                .arg(dir.path())
                .arg("-l:libs3.so.4")
                .output()
                .expect("a C compiler (cc)");
            assert!(
                out.status.success(),
                "compiling calls4.c: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            (dir, bin)
        })
        .1
        .as_path()
}

/// Runs the program on `host`; returns its stdout.
fn run(host: &str) -> String {
    let bin = program();
    let mut child = Command::new(bin)
        .args([host, ACCESS, SECRET])
        .env("LD_LIBRARY_PATH", bin.parent().unwrap())
        .env_remove(s3hpc_libs3_core::HOST_ENV)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > TIMEOUT {
            child.kill().unwrap();
            panic!("calls4 on {host} did not finish in {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "calls4 on {host}: {}\n{stdout}{stderr}",
        out.status
    );
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("calls4: ") && last.ends_with(" passed, 0 failed"),
        "{last}"
    );
    stdout
}

/// A store with the default settings (MD5 ETags), as `file://` opens it.
fn store(dir: &Path) -> Arc<Store> {
    Arc::new(Store::open(dir, StoreConfig::default()).unwrap())
}

#[test]
fn embedded() {
    let dir = tempfile::tempdir().unwrap();
    run(&format!("file://{}", dir.path().display()));
}

#[test]
fn remote() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("gw.sock");
    let client = EmbeddedClient::new(store(&dir.path().join("root")));
    let opts = GatewayOptions {
        log_errors: false,
        ..GatewayOptions::default()
    };
    let gw = Gateway::start(Arc::new(client), &[Address::Unix(sock.clone())], opts).unwrap();
    run(&format!("unix://{}", sock.display()));
    gw.stop();
}

#[test]
fn http() {
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthConfig::single(ACCESS, SECRET);
    let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), store(dir.path()), auth, &[])
        .unwrap()
        .spawn()
        .unwrap();
    // A bare host:port with protocol HTTP, as IOR passes it.
    let out = run(&server.addr().to_string());
    // The presigned URL the program printed must fetch the object it
    // names... which the program deleted: the server must find the
    // signature valid and answer NoSuchBucket, not AccessDenied.
    let url = out
        .lines()
        .find_map(|l| l.strip_prefix("presigned "))
        .expect("a presigned URL");
    let (status, body) = http_get(url);
    assert!(status.contains("404"), "{status}: {body}");
    assert!(body.contains("NoSuchBucket"), "{body}");
    server.shutdown().unwrap();
}

/// A plain HTTP/1.0 GET of `url`: (status line, body).
fn http_get(url: &str) -> (String, String) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = std::net::TcpStream::connect(authority).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {authority}\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").unwrap_or((&resp, ""));
    (
        head.lines().next().unwrap_or_default().to_string(),
        body.to_string(),
    )
}
