//! `s3hpc explain` through the built binary: every layer runs, the JSON
//! carries each op's file-system calls, and `s3hpc report` draws it.

use serde_json::Value;
use std::process::Command;

fn s3hpc(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn row<'a>(doc: &'a Value, layer: &str, op: &str, size: Option<u64>) -> &'a Value {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["backend"] == layer && r["phase"] == op && r["object_size"].as_u64() == size)
        .unwrap_or_else(|| panic!("no row for {layer} {op} {size:?}"))
}

#[test]
fn explain_runs_every_layer_and_reports() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("data");
    let json = t.path().join("explain.json");
    let (ok, stdout, stderr) = s3hpc(&[
        "explain",
        "--dir",
        dir.to_str().unwrap(),
        "--sizes",
        "3901",
        "--repeat",
        "2",
        "--batch",
        "10",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(!dir.exists(), "explain made --dir, so it removes it");
    for layer in [
        "posix",
        "engine",
        "libs3",
        "rpc-unix",
        "rpc-tcp",
        "http",
        "http-sigv4",
        "http-chunked",
    ] {
        assert!(
            stdout.contains(&format!("\n{layer} ")),
            "no row for {layer}:\n{stdout}"
        );
    }
    assert!(stdout.contains("File-system calls per op"), "{stdout}");
    assert!(stdout.contains("largest:"), "{stdout}");

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["schema"], "s3hpc-bench/1");
    // 8 layers x (6 sized ops at one size + 3 others).
    assert_eq!(doc["results"].as_array().unwrap().len(), 8 * 9);
    // HEAD is one stat, through the engine and through POSIX alike; the
    // gateway's engine makes the same call on the client's behalf.
    for layer in ["posix", "engine", "rpc-unix", "http-sigv4"] {
        let head = row(&doc, layer, "head", Some(3901));
        assert_eq!(head["fs_calls"]["stat"], 1.0, "{layer}: {head}");
        assert_eq!(head["fs_calls_total"], 1.0, "{layer}: {head}");
    }
    // libs3.so.4 runs its own copy of the engine: its calls are not seen.
    assert!(row(&doc, "libs3", "head", Some(3901))["fs_calls"].is_null());
    let put = row(&doc, "http-sigv4", "put-new", Some(3901));
    assert_eq!(put["requests"], 1);
    assert_eq!(put["base"], "http");
    assert!(put["cpu_server_us"].as_f64().unwrap() > 0.0, "{put}");
    let mpu = row(&doc, "rpc-tcp", "multipart", None);
    assert_eq!(mpu["requests"], 5);
    let chunked = row(&doc, "http-chunked", "put-new", Some(3901));
    // One call publishes each new object: a link of the unnamed temporary,
    // or a rename of a named one where a server thread predicts overwrites
    // (on ext4 after a failed exchange: calls that fail publish nothing).
    let publish = |k: &str| {
        chunked["fs_calls"][k].as_f64().unwrap_or(0.0)
            - chunked["fs_failed"][k].as_f64().unwrap_or(0.0)
    };
    assert_eq!(publish("link") + publish("rename"), 1.0, "{chunked}");
    let parts: Vec<&str> = chunked["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["part"].as_str().unwrap())
        .collect();
    assert_eq!(
        parts,
        ["chunk signing", "SigV4", "HTTP", "engine", "file system"]
    );

    let out = t.path().join("report");
    let (ok, stdout, stderr) = s3hpc(&[
        "report",
        json.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(out.join("explain.svg").exists() && out.join("explain.png").exists());
    let svg = std::fs::read_to_string(out.join("explain.svg")).unwrap();
    assert!(svg.contains("head-missing") && svg.contains("SigV4"));
}

#[test]
fn explain_refuses_an_unknown_layer() {
    let (ok, _, stderr) = s3hpc(&["explain", "--layers", "posix,nfs"]);
    assert!(!ok);
    assert!(stderr.contains("unknown layer \"nfs\""), "{stderr}");
}
