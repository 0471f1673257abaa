//! The `s3hpc bench io500` contract, through the built binary.

use std::process::Command;

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
        .args([
            "--ranks",
            "2",
            "--ior-easy-max-bytes",
            "4m",
            "--ior-hard-max-segments",
            "20",
            "--mdtest-easy-max-files",
            "100",
            "--mdtest-hard-max-files",
            "120",
            "--etag",
            "md5",
        ])
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
