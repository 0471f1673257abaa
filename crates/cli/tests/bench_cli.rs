//! The `s3hpc bench io500` contract, through the built binary.

use std::process::Command;

/// Two ranks and caps that keep a run tiny, but for mdtest-easy's.
fn tiny(mdtest_easy_max_files: &str) -> [&str; 10] {
    [
        "--ranks",
        "2",
        "--ior-easy-max-bytes",
        "4m",
        "--ior-hard-max-segments",
        "20",
        "--mdtest-easy-max-files",
        mdtest_easy_max_files,
        "--mdtest-hard-max-files",
        "120",
    ]
}

#[test]
fn bench_io500_cli_contract() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("data");
    let json = t.path().join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .args(["bench", "io500", "--backends", "posix,embedded", "--dir"])
        .arg(&dir)
        .args(["--stonewall", "0.2", "--json"])
        .arg(&json)
        .args(tiny("100"))
        .args(["--etag", "md5"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("IO500 version s3hpc-"), "{stdout}");
    assert_eq!(stdout.matches("[SCORE ]").count(), 2);
    assert!(stdout.contains("embedded/posix"));
    assert!(!dir.exists(), "the bench created --dir, so it removes it");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["run"]["etag"], "md5");
    assert_eq!(doc["run"]["ranks"], 2);
    assert_eq!(doc["results"].as_array().unwrap().len(), 24);

    // A non-empty --dir is refused, and left alone.
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("mine"), b"1").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .args(["bench", "io500", "--dir"])
        .arg(&dir)
        .args(["--stonewall", "0.1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not empty"), "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

/// Ctrl-C: the bench stops within a moment, removes its run directory (and
/// nothing else), says so and exits with 130.
#[test]
fn sigint_stops_cleans_up_and_exits_130() {
    use std::time::{Duration, Instant};
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("sentinel"), b"not the bench's").unwrap();
    // ior-easy ends at its tiny cap; mdtest-easy-write then runs toward a
    // stonewall far beyond the signal.
    let mut child = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .args(["bench", "io500", "--allow-nonempty", "--dir"])
        .arg(&dir)
        .args(["--stonewall", "60"])
        .args(tiny("1000000"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let running: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(running.len(), 2, "sentinel and the run directory");
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let sent = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if sent.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("the bench did not stop within 30 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = std::io::read_to_string(child.stderr.take().unwrap()).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert!(err.contains("removed the run directory"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["sentinel"]);
    assert_eq!(
        std::fs::read(dir.join("sentinel")).unwrap(),
        b"not the bench's"
    );
}
