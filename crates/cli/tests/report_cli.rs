//! The `s3hpc report` contract, through the built binary: files in, a page
//! and figures out, the comparison on stdout; bad input fails naming the
//! file, with a non-zero exit.

use std::path::Path;
use std::process::Command;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/fixtures")
        .join(name)
}

#[test]
fn report_writes_the_page_and_prints_the_comparison() {
    let t = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .arg("report")
        .arg(fixture("io500-posix-embedded.json"))
        .arg(fixture("breadth.json"))
        .arg("-o")
        .arg(t.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("IO500: each backend and its % of POSIX"),
        "{stdout}"
    );
    assert!(stdout.contains("embedded@breadth-day2"), "{stdout}");
    for f in [
        "index.html",
        "comparison.md",
        "tables.md",
        "radar.png",
        "radar.svg",
        "sweep.png",
        "roofline.svg",
    ] {
        assert!(t.path().join(f).exists(), "{f} missing");
    }
}

#[test]
fn report_fails_on_bad_input_naming_the_file() {
    let t = tempfile::tempdir().unwrap();
    let bad = t.path().join("broken.json");
    std::fs::write(&bad, "{ nope").unwrap();
    let missing = t.path().join("absent.json");
    for (input, what) in [(&bad, "not JSON"), (&missing, "cannot read")] {
        let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
            .arg("report")
            .arg(fixture("io500-posix-embedded.json"))
            .arg(input)
            .arg("-o")
            .arg(t.path().join("out"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&input.display().to_string()) && stderr.contains(what),
            "{stderr}"
        );
        assert!(
            !t.path().join("out/index.html").exists(),
            "no report from bad input"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .args(["report", "-o"])
        .arg(t.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "results are required");
}
