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

fn s3hpc(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn bench_all_writes_one_file_with_complete_rows() {
    let t = tempfile::tempdir().unwrap();
    let json = t.path().join("all.json");
    let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .args([
            "bench",
            "all",
            "--ranks",
            "2",
            "--warp-duration",
            "0.5",
            "--label",
            "ci run",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--dir")
        .arg(t.path().join("data"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("MD-Workbench total objects:"), "{stdout}");
    assert!(stdout.contains("Report: Total."), "{stdout}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["schema"], "s3hpc-bench/1");
    assert_eq!(doc["run"]["label"], "ci run");
    let rows = doc["results"].as_array().unwrap();
    let phases = |bench: &str| -> Vec<String> {
        let mut v: Vec<String> = rows
            .iter()
            .filter(|r| r["benchmark"] == bench && r["backend"] == "embedded")
            .map(|r| r["phase"].as_str().unwrap().to_string())
            .collect();
        v.dedup();
        v
    };
    assert_eq!(phases("mdworkbench"), ["precreate", "benchmark", "cleanup"]);
    for p in [
        "mixed",
        "mixed.GET",
        "mixed.PUT",
        "mixed.STAT",
        "mixed.DELETE",
        "get",
        "get.GET",
    ] {
        assert!(phases("warp").iter().any(|x| x == p), "warp {p}");
    }
    for p in ["put", "list", "get", "head", "head-missing", "delete"] {
        assert!(phases("kv").iter().any(|x| x == p), "kv {p}");
    }
    assert!(phases("copy").contains(&"put".to_string()));
    assert!(phases("sweep").contains(&"read".to_string()));
    assert_eq!(phases("visibility"), ["visible"]);
    for r in rows {
        for key in s3hpc_bench::harness::row::FIELDS {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
        for key in ["min", "p50", "p90", "p99", "max"] {
            assert!(r["latency"][key].is_number(), "{r}");
        }
        let extra: &[&str] = match r["benchmark"].as_str().unwrap() {
            "mdworkbench" => &["obj_per_s", "mib_per_s"],
            "warp" => &["mib_per_s"],
            "kv" => &["value_size", "latency_median", "latency_stddev"],
            "copy" => &["workers", "object_size"],
            "sweep" => &["object_size"],
            _ => &[],
        };
        for key in extra {
            assert!(r.get(*key).is_some(), "{key} missing in {r}");
        }
    }
    assert!(!t.path().join("data").exists());
}

#[test]
fn bad_benchmark_options_fail_clearly() {
    for (args, msg) in [
        (
            &["bench", "warp", "mixed", "--delete-distrib", "20"][..],
            "must not exceed --put-distrib",
        ),
        (&["bench", "warp", "sideways"][..], "unknown warp workload"),
        (
            &[
                "bench",
                "warp",
                "get",
                "--objects",
                "2",
                "--concurrent",
                "4",
            ][..],
            "must exceed --concurrent",
        ),
        (
            &["bench", "mdworkbench", "-I", "20", "-P", "10"][..],
            "must be at least -I",
        ),
        (&["bench", "mdworkbench", "-2"][..], "--reuse"),
        (
            &["bench", "kv", "--keys", "0"][..],
            "--keys must be between",
        ),
        (
            &["bench", "sweep", "--sizes", "1q"][..],
            "unknown size suffix",
        ),
        (
            &["bench", "copy", "--workers", "0"][..],
            "--workers must list",
        ),
        (
            &["bench", "visibility", "--timeout=0"][..],
            "--timeout must be",
        ),
        (&["bench", "kv", "--backends", "ftp"][..], "unknown backend"),
        // Refused before the run, not after it.
        (
            &["bench", "kv", "--json", "/nonexistent-s3hpc/kv.json"][..],
            "is not a directory",
        ),
    ] {
        let out = s3hpc(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(msg), "{args:?}: {stderr}");
    }
}

/// The libs3 backend with its defaults: s3hpc's own libs3.so.4 (found
/// beside the binary) on `file://<run dir>`. Every IO500 phase gives a
/// row with a positive value, through the libs3 transport.
#[test]
fn bench_io500_over_libs3() {
    let t = tempfile::tempdir().unwrap();
    let json = t.path().join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .args(["bench", "io500", "--backends", "libs3", "--dir"])
        .arg(t.path().join("data"))
        .args(["--stonewall", "0.2", "--json"])
        .arg(&json)
        .args(tiny("100"))
        .env_remove("S3HPC_LIBS3_HOST")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = doc["results"].as_array().unwrap();
    assert_eq!(rows.len(), 12, "{rows:?}");
    for r in rows {
        assert_eq!(r["backend"], "libs3", "{r}");
        assert_eq!(r["transport"], "libs3", "{r}");
        assert!(r["value"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["ops"].as_u64().unwrap() > 0, "{r}");
    }
    // find matched exactly the files it should, although libs3 reports
    // object times in whole seconds and this run takes less than one.
    let find = rows.iter().find(|r| r["phase"] == "find").unwrap();
    assert_eq!(find["valid"], true, "{find}");
    // A library that is not libs3 is refused with a clear message.
    let out = Command::new(env!("CARGO_BIN_EXE_s3hpc"))
        .args(["bench", "io500", "--backends", "libs3", "--libs3"])
        .arg(env!("CARGO_BIN_EXE_s3hpc"))
        .arg("--dir")
        .arg(t.path().join("data2"))
        .args(["--stonewall", "0.1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("loading") || err.contains("not a libs3"),
        "{err}"
    );
}

/// Inside a Slurm job the run records the job's geometry, in the JSON
/// (`run.slurm`) and in the text; outside Slurm, nothing of it.
#[test]
fn slurm_job_geometry_is_recorded_only_inside_slurm() {
    let run = |slurm: &[(&str, &str)]| {
        let t = tempfile::tempdir().unwrap();
        let json = t.path().join("r.json");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_s3hpc"));
        // This test may itself run in a Slurm job.
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SLURM_")) {
            cmd.env_remove(k);
        }
        let out = cmd
            .envs(slurm.iter().copied())
            .args(["bench", "io500", "--backends", "posix", "--dir"])
            .arg(t.path().join("data"))
            .args(["--stonewall", "0.2", "--json"])
            .arg(&json)
            .args(tiny("20"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (stdout, doc)
    };
    let (stdout, doc) = run(&[
        ("SLURM_JOB_ID", "4242"),
        ("SLURM_CLUSTER_NAME", "testcluster"),
        ("SLURM_JOB_NUM_NODES", "3"),
        ("SLURM_JOB_NODELIST", "node[1-3]"),
        ("SLURM_NTASKS", "6"),
        ("SLURM_TASKS_PER_NODE", "2(x3)"),
    ]);
    let job = &doc["run"]["slurm"];
    assert_eq!(job["job_id"], "4242", "{doc}");
    assert_eq!(job["cluster"], "testcluster");
    assert_eq!(job["nodes"], 3);
    assert_eq!(job["nodelist"], "node[1-3]");
    assert_eq!(job["ntasks"], 6);
    assert_eq!(job["tasks_per_node"], "2(x3)");
    assert!(
        stdout.contains(
            "Slurm job 4242 on cluster testcluster: 3 nodes (node[1-3]), 6 tasks, tasks per node 2(x3)"
        ),
        "{stdout}"
    );
    let (stdout, doc) = run(&[]);
    assert!(doc["run"].get("slurm").is_none(), "{}", doc["run"]);
    assert!(!stdout.contains("Slurm"), "{stdout}");
}
