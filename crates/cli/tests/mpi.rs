//! MPI ranks (feature `mpi`): `mpirun -np 2` and `-np 4` give the same
//! totals, merged on rank 0, as a run with as many thread ranks.
#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::Command;

const MDW: [&str; 12] = [
    "-D",
    "3",
    "-I",
    "20",
    "-P",
    "40",
    "-R",
    "2",
    "--backends",
    "posix,embedded",
    "--seed",
    "3",
];

fn run(cmd: &mut Command, json: &Path) -> serde_json::Value {
    let out = cmd.arg("--json").arg(json).output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// What must not depend on how ranks are made: per backend and phase, the
/// op, byte and object counts and the number of latency samples per op.
fn totals(doc: &serde_json::Value) -> Vec<String> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let counts: Vec<String> = ["read", "stat", "create", "delete"]
                .iter()
                .map(|op| r["op_latency"][op]["count"].to_string())
                .collect();
            format!(
                "{} {} ops={} bytes={} objects={} dsets={} samples={}",
                r["backend"],
                r["phase"],
                r["ops"],
                r["bytes"],
                r["objects"],
                r["dsets"],
                counts.join("/")
            )
        })
        .collect()
}

#[test]
fn mpirun_totals_equal_thread_runs() {
    let bin = env!("CARGO_BIN_EXE_s3hpc");
    for np in ["2", "4"] {
        let t = tempfile::tempdir().unwrap();
        let threads = run(
            Command::new(bin)
                .args(["bench", "mdworkbench", "--ranks", np])
                .args(MDW)
                .arg("--dir")
                .arg(t.path().join("threads")),
            &t.path().join("threads.json"),
        );
        let procs = run(
            Command::new("mpirun")
                .args(["--allow-run-as-root", "--oversubscribe", "-np", np, bin])
                .args(["bench", "mdworkbench"])
                .args(MDW)
                .arg("--dir")
                .arg(t.path().join("procs")),
            &t.path().join("procs.json"),
        );
        assert_eq!(procs["run"]["ranks"].to_string(), np);
        let (a, b) = (totals(&threads), totals(&procs));
        assert_eq!(a.len(), 6, "{a:?}");
        assert_eq!(a, b, "-np {np}");
        assert!(
            !t.path().join("procs").exists(),
            "rank 0 removed the run directory"
        );
    }
}
