//! MPI ranks (feature `mpi`): for every benchmark, `mpirun -np 2` and
//! `-np 4` give the same totals, merged on rank 0 (which alone prints and
//! writes the JSON), as a run with as many thread ranks; bad options fail
//! on every rank without hanging.
#![cfg(feature = "mpi")]

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_s3hpc");
/// Seconds any one mpirun may take before the test fails (`timeout`).
const LIMIT: &str = "120";

/// `s3hpc bench ARGS`, as `ranks` threads or under `mpirun -np ranks`.
fn bench(mpi: bool, ranks: usize, args: &[&str], dir: &Path) -> Output {
    let np = ranks.to_string();
    let mut cmd = Command::new("timeout");
    cmd.arg(LIMIT);
    if mpi {
        cmd.args([
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            &np,
        ]);
        cmd.args([BIN, "bench"]).args(args);
    } else {
        cmd.args([BIN, "bench"]).args(args).args(["--ranks", &np]);
    }
    cmd.arg("--dir").arg(dir).output().unwrap()
}

fn run(mpi: bool, ranks: usize, args: &[&str], t: &Path) -> (Value, String) {
    let name = if mpi { "procs" } else { "threads" };
    let json = t.join(format!("{name}.json"));
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--seed", "3", "--json", json.to_str().unwrap()]);
    let out = bench(mpi, ranks, &all, &t.join(name));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?} mpi={mpi} np={ranks}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!t.join(name).exists(), "rank 0 removed the run directory");
    let doc = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (doc, stdout)
}

/// The sum of a latency histogram: how many ops were timed.
fn samples(latency: &Value) -> u64 {
    latency["histogram"]
        .as_array()
        .map_or(0, |h| h.iter().map(|b| b[1].as_u64().unwrap()).sum())
}

/// What must not depend on how ranks are made, per row: the op, byte and
/// object counts and the timed ops. warp is time-boxed: its requests in the
/// analysis window vary, all requests of an op-bounded run do not.
fn totals(doc: &Value) -> Vec<String> {
    let rows = doc["results"].as_array().unwrap();
    rows.iter()
        .map(|r| {
            let id = format!("{} {} {}", r["benchmark"], r["backend"], r["phase"]);
            match r["benchmark"].as_str().unwrap() {
                "warp" => format!("{id} ops_all={}", r["ops_all"]),
                "io500" => format!("{id} ops={} bytes={}", r["ops"], r["bytes"]),
                _ => {
                    let per_op: Vec<String> = ["read", "stat", "create", "delete"]
                        .iter()
                        .map(|op| r["op_latency"][op]["count"].to_string())
                        .collect();
                    format!(
                        "{id} ops={} bytes={} objects={} dsets={} samples={} per_op={}",
                        r["ops"],
                        r["bytes"],
                        r["objects"],
                        r["dsets"],
                        samples(&r["latency"]),
                        per_op.join("/")
                    )
                }
            }
        })
        .collect()
}

/// Every row has the fields every benchmark writes.
fn complete(doc: &Value) {
    for r in doc["results"].as_array().unwrap() {
        for key in s3hpc_bench::harness::row::FIELDS {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
        assert!(r["value"].as_f64().unwrap() >= 0.0, "{r}");
    }
}

/// Threads and processes, with 2 and 4 ranks, give the same totals;
/// `report` is a line rank 0 prints once per backend.
fn same_totals(args: &[&str], report: &str, rows: usize) {
    for np in [2, 4] {
        let t = tempfile::tempdir().unwrap();
        let (threads, _) = run(false, np, args, t.path());
        let (procs, stdout) = run(true, np, args, t.path());
        assert_eq!(procs["run"]["ranks"], np, "{args:?}");
        complete(&procs);
        let (a, b) = (totals(&threads), totals(&procs));
        assert_eq!(a.len(), rows, "{args:?}: {a:#?}");
        assert_eq!(a, b, "{args:?} -np {np}");
        let backends = procs["run"]["backends"].as_array().unwrap().len();
        assert_eq!(
            stdout.matches(report).count(),
            backends,
            "only rank 0 prints: {stdout}"
        );
    }
}

#[test]
fn mdworkbench() {
    let args = [
        "mdworkbench",
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
    ];
    same_totals(&args, "MD-Workbench total objects", 6);
}

#[test]
fn io500() {
    // Caps strike long before the stonewall: fixed work.
    let args = [
        "io500",
        "--backends",
        "posix,embedded",
        "--stonewall",
        "20",
        "--ior-easy-max-bytes",
        "4m",
        "--ior-hard-max-segments",
        "20",
        "--mdtest-easy-max-files",
        "60",
        "--mdtest-hard-max-files",
        "60",
    ];
    same_totals(&args, "IO500 version s3hpc-", 24);
}

#[test]
fn warp_mixed_has_exact_proportions() {
    // Op-bounded: every process hands out its interleaved part of the
    // schedule, together exactly the first 2000 operations.
    let args = [
        "warp",
        "mixed",
        "--max-ops",
        "2000",
        "--duration",
        "60",
        "--concurrent",
        "4",
        "--objects",
        "40",
        "--obj-size",
        "4k",
        "--backends",
        "posix,embedded",
    ];
    same_totals(&args, "Report: Total.", 10);
    let t = tempfile::tempdir().unwrap();
    let (doc, _) = run(true, 2, &args, t.path());
    let all: Vec<(String, u64)> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["backend"] == "posix")
        .map(|r| {
            (
                r["phase"].as_str().unwrap().into(),
                r["ops_all"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [("mixed", 2000), ("mixed.GET", 900), ("mixed.PUT", 300)];
    for (phase, n) in want {
        assert!(all.contains(&(phase.to_string(), n)), "{all:?}");
    }
}

#[test]
fn warp_get() {
    let args = [
        "warp",
        "get",
        "--max-ops",
        "400",
        "--duration",
        "60",
        "--concurrent",
        "4",
        "--objects",
        "20",
        "--obj-size",
        "8k",
        "--backends",
        "posix",
    ];
    // The GETs, and the prepare step's PUTs (get.PUT, seed 001's write column).
    same_totals(&args, "Report: Total.", 3);
}

#[test]
fn kv_over_every_transport() {
    // remote and http start one server per node under mpirun.
    let args = [
        "kv",
        "--keys",
        "20",
        "--value-sizes",
        "64,4k",
        "--backends",
        "posix,embedded,remote,http",
    ];
    same_totals(&args, "kv on ", 48);
}

#[test]
fn copy_sweep_and_visibility() {
    let copy = [
        "copy",
        "--workers",
        "1,3",
        "--obj-size",
        "1m",
        "--backends",
        "posix,remote-tcp",
    ];
    same_totals(&copy, "copy on ", 8);
    // A generous time limit: the byte budget bounds each size.
    let sweep = [
        "sweep",
        "--sizes",
        "1k,64k",
        "--bytes-per-size",
        "512k",
        "--seconds-per-size",
        "60",
        "--backends",
        "posix,embedded",
    ];
    same_totals(&sweep, "sweep on ", 8);
    let vis = [
        "visibility",
        "--objects",
        "10",
        "--backends",
        "posix,embedded",
    ];
    same_totals(&vis, "visibility on ", 2);
}

#[test]
fn bench_all_writes_every_row_once() {
    let args = ["all", "--warp-duration", "0.3", "--backends", "posix"];
    let t = tempfile::tempdir().unwrap();
    let (threads, _) = run(false, 2, &args, t.path());
    let (procs, stdout) = run(true, 2, &args, t.path());
    complete(&procs);
    let phases = |doc: &Value| -> Vec<String> {
        let rows = doc["results"].as_array().unwrap();
        rows.iter()
            .map(|r| format!("{} {}", r["benchmark"], r["phase"]))
            .collect()
    };
    assert_eq!(phases(&threads), phases(&procs));
    // The fixed-work benchmarks have the same totals.
    let fixed = |doc: &Value| -> Vec<String> {
        totals(doc)
            .into_iter()
            .filter(|l| {
                ["\"mdworkbench\"", "\"kv\"", "\"copy\""]
                    .iter()
                    .any(|b| l.starts_with(b))
            })
            .collect()
    };
    assert_eq!(fixed(&threads), fixed(&procs));
    assert_eq!(stdout.matches("MD-Workbench total objects").count(), 1);
}

#[test]
fn bad_options_fail_on_every_rank_without_hanging() {
    let t = tempfile::tempdir().unwrap();
    let full = t.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("data"), "x").unwrap();
    for (args, dir, msg, every_rank) in [
        // Refused before MPI starts, by every process.
        (
            &["kv", "--backends", "ftp"][..],
            t.path().join("a"),
            "unknown backend",
            false,
        ),
        // Only known once the ranks are counted.
        (
            &["warp", "get", "--concurrent", "1", "--backends", "posix"][..],
            t.path().join("b"),
            "must be at least the number of processes",
            true,
        ),
        // Found by rank 0, reported by all.
        (
            &["kv", "--backends", "posix"][..],
            full.clone(),
            "is not empty",
            true,
        ),
    ] {
        let out = bench(true, 2, args, &dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(124), "{args:?} hung: {stderr}");
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(stderr.matches(msg).count(), 2, "{args:?}: {stderr}");
        if every_rank {
            for rank in 0..2 {
                let who = format!("s3hpc (rank {rank}): error:");
                assert!(stderr.contains(&who), "{args:?}: {stderr}");
            }
        }
    }
    assert!(full.join("data").exists());
}
