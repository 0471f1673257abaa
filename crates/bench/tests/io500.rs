//! The IO500 suite end to end with tiny parameters: op counts and bytes,
//! read-back verification, cleanup, and the JSON.

use s3hpc_bench::backend::{Backend, BackendConfig};
use s3hpc_bench::io500::{self, Caps, Io500Params, PhaseResult};
use s3hpc_bench::stop::Interrupted;
use s3hpc_bench::storage::S3Mode;
use s3hpc_bench::suite::{self, SuiteOptions, SuiteReport};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const RANKS: usize = 3;

fn tiny_caps() -> Caps {
    Caps {
        ior_easy_bytes_per_rank: 6 << 20, // 3 transfers
        ior_hard_segments_per_rank: 40,
        mdtest_easy_files_per_rank: 250,
        mdtest_hard_files_per_rank: 150,
    }
}

fn options(dir: &Path, backends: Vec<Backend>) -> SuiteOptions {
    let mut o = SuiteOptions::new(dir.to_path_buf());
    o.backends = backends;
    o.ranks = RANKS;
    o.stonewall = Duration::from_millis(200);
    o.caps = tiny_caps();
    o.auto_caps = false;
    o.seed = Some(7);
    o
}

fn phase<'a>(rs: &'a [PhaseResult], name: &str) -> &'a PhaseResult {
    rs.iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
}

/// Reads process exactly what the writes wrote, in the IO500 order.
fn check_counts(rs: &[PhaseResult], ranks: u64) {
    let names: Vec<_> = rs.iter().map(|r| r.name).collect();
    assert_eq!(names, io500::PHASES, "phases in the standard order");
    for (w, readers) in [
        ("ior-easy-write", &["ior-easy-read"][..]),
        ("ior-hard-write", &["ior-hard-read"][..]),
        (
            "mdtest-easy-write",
            &["mdtest-easy-stat", "mdtest-easy-delete"][..],
        ),
        (
            "mdtest-hard-write",
            &["mdtest-hard-stat", "mdtest-hard-read", "mdtest-hard-delete"][..],
        ),
    ] {
        let w = phase(rs, w);
        assert!(w.ops > 0, "{} did nothing", w.name);
        // Wear-out: every rank did the same count.
        assert_eq!(
            w.ops % ranks,
            0,
            "{} ops {} not a multiple of the ranks",
            w.name,
            w.ops
        );
        assert!(w.stonewall_ops <= w.ops);
        for r in readers {
            let r = phase(rs, r);
            assert_eq!(r.ops, w.ops, "{} vs {}", r.name, w.name);
            assert!(r.value > 0.0 && r.seconds > 0.0, "{r:?}");
            assert!(r.latency.min > 0.0 && r.latency.min <= r.latency.p50);
            assert!(r.latency.p50 <= r.latency.p99 && r.latency.p99 <= r.latency.max);
        }
    }
    let easy = phase(rs, "ior-easy-write");
    assert_eq!(easy.bytes, easy.ops * (2 << 20));
    assert_eq!(phase(rs, "ior-easy-read").bytes, easy.bytes);
    let hard = phase(rs, "ior-hard-write");
    assert_eq!(hard.bytes, hard.ops * 47008);
    assert_eq!(phase(rs, "ior-hard-read").bytes, hard.bytes);
    let md = phase(rs, "mdtest-hard-write");
    assert_eq!(md.bytes, md.ops * 3901);
    assert_eq!(phase(rs, "mdtest-hard-read").bytes, md.bytes);
    assert_eq!(phase(rs, "mdtest-easy-write").bytes, 0);
    let find = phase(rs, "find");
    assert!(find.valid, "find: {:?}", find.notes);
    // Every mdtest file at least is scanned (S3 also sees each ior transfer).
    let files = phase(rs, "mdtest-easy-write").ops + md.ops + ranks + 1;
    assert!(find.ops >= files, "find scanned {} < {files}", find.ops);
    // find's count is checked inside the suite (invalid if it differs from
    // the mdtest-hard files named *01*); there are some once a rank has 101.
    if md.ops / ranks > 101 {
        assert!(find.matches.unwrap() > 0);
    }
}

fn run_suite(o: &SuiteOptions) -> anyhow::Result<(SuiteReport, String)> {
    let mut out = Vec::new();
    let r = suite::run(o, &mut out)?;
    Ok((r, String::from_utf8(out).unwrap()))
}

#[test]
fn posix_and_embedded_counts_output_json_and_cleanup() {
    let t = tempfile::tempdir().unwrap();
    // A file that is not ours must survive.
    let precious = t.path().join("precious.txt");
    std::fs::write(&precious, b"keep me").unwrap();
    let mut o = options(t.path(), vec![Backend::Posix, Backend::Embedded]);
    let json_path = t.path().join("out/result.json");
    std::fs::create_dir(t.path().join("out")).unwrap();

    // Non-empty: refused unless allowed.
    let err = run_suite(&o)
        .err()
        .expect("refuses a non-empty dir")
        .to_string();
    assert!(
        err.contains("not empty") && err.contains("--allow-nonempty"),
        "{err}"
    );

    o.allow_nonempty = true;
    o.json = Some(json_path.clone());
    let (report, text) = run_suite(&o).unwrap();
    assert_eq!(report.backends.len(), 2);
    for b in &report.backends {
        check_counts(&b.results, RANKS as u64);
        assert!(b.score.total > 0.0);
    }
    // Both backends did the same work.
    let (p, e) = (&report.backends[0].results, &report.backends[1].results);
    let caps = tiny_caps();
    for (name, cap) in [
        ("ior-easy-write", caps.ior_easy_bytes_per_rank / (2 << 20)),
        ("mdtest-hard-write", caps.mdtest_hard_files_per_rank),
        ("mdtest-easy-write", caps.mdtest_easy_files_per_rank),
    ] {
        // Tiny caps: usually every rank stops at the cap before the
        // stonewall, which IO500 calls invalid (a slow file system may
        // reach the stonewall first).
        for rs in [p, e] {
            let r = phase(rs, name);
            assert!(r.ops <= cap * RANKS as u64);
            assert_eq!(r.valid, r.seconds >= 0.2, "{name} {r:?}");
            if !r.valid {
                assert_eq!(r.ops, cap * RANKS as u64, "{name}");
            }
        }
    }

    // Only what we made is gone.
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep me");
    let left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut left = left;
    left.sort();
    assert_eq!(left, ["out", "precious.txt"]);

    // stdout: IO500 lines per backend, then the comparison.
    assert!(text.contains("IO500 version s3hpc-0.1.0 (standard) backend posix"));
    assert!(text.contains("IO500 version s3hpc-0.1.0 (standard) backend embedded"));
    assert_eq!(text.matches("[RESULT]").count(), 24);
    assert_eq!(text.matches("[SCORE ]").count(), 2);
    assert!(text.contains("[      ]            timestamp"));
    assert!(text.contains("embedded/posix"));
    let ior_line = text
        .lines()
        .find(|l| l.starts_with("[RESULT]       ior-easy-write "))
        .unwrap();
    assert!(ior_line.contains(" GiB/s : time "), "{ior_line}");

    // JSON: the contract fields.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(
        doc["results"].as_array().unwrap().len(),
        report.json["results"].as_array().unwrap().len()
    );
    assert_eq!(doc["schema"], "s3hpc-bench/1");
    for k in [
        "host",
        "start_time",
        "version",
        "ranks",
        "stonewall_seconds",
        "etag",
        "durability",
        "s3_mode",
        "caps",
        "filesystem",
    ] {
        assert!(!doc["run"][k].is_null(), "run.{k}");
    }
    let rows = doc["results"].as_array().unwrap();
    assert_eq!(rows.len(), 24);
    for row in rows {
        for k in s3hpc_bench::harness::row::FIELDS {
            assert!(!row[k].is_null(), "{k} in {row}");
        }
        assert_eq!(row["benchmark"], "io500");
        let unit = row["unit"].as_str().unwrap();
        assert!(unit == "GiB/s" || unit == "kIOPS");
        assert_eq!(
            unit == "GiB/s",
            row["phase"].as_str().unwrap().starts_with("ior")
        );
        for q in ["min", "p50", "p90", "p99", "max"] {
            assert!(row["latency"][q].as_f64().unwrap() > 0.0, "{q} in {row}");
        }
    }
    let embedded_rows = rows.iter().filter(|r| r["backend"] == "embedded");
    for r in embedded_rows {
        assert!(r["ratio_to_posix"].as_f64().unwrap() > 0.0);
        assert_eq!(r["transport"], "embedded");
    }
    assert_eq!(doc["scores"].as_array().unwrap().len(), 2);
}

/// The run directory of a suite in progress under `dir`.
fn run_dir(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("s3hpc-io500-")
        })
        .expect("run directory")
}

fn corrupt(path: &Path, offset: u64) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    f.write_all_at(b"garbage!", offset).unwrap();
}

/// Corrupts `file` (relative to the backend's directory) after `phase`;
/// the suite must then fail with a verification error.
fn expect_verification_failure(
    backend: Backend,
    after: &'static str,
    file: &'static str,
    offset: u64,
) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("bench");
    let mut o = options(&dir, vec![backend]);
    let d = dir.clone();
    o.after_phase = Some(Arc::new(move |name: &str| {
        if name == after {
            corrupt(
                &run_dir(&d).join(suite::backend_dir(backend, 0)).join(file),
                offset,
            );
        }
    }));
    let err = run_suite(&o).err().expect("corruption must fail the run");
    let msg = format!("{err:#}");
    assert!(msg.contains("verification failed"), "{msg}");
    // The run directory is removed even so, and --dir too (we created it).
    assert!(!dir.exists(), "left {}", dir.display());
}

#[test]
fn posix_ior_easy_corruption_is_detected() {
    // Rank 0 reads rank 1's file (rank shifting).
    expect_verification_failure(
        Backend::Posix,
        "ior-easy-write",
        "ior-easy/ior_file_easy.00000001",
        (2 << 20) + 100,
    );
}

#[test]
fn embedded_ior_hard_corruption_is_detected() {
    // Segment 1 of rank 2 lives in its own object.
    expect_verification_failure(
        Backend::Embedded,
        "ior-hard-write",
        "io500/ior-hard/file-235040-47008",
        9000,
    );
}

#[test]
fn embedded_mdtest_hard_corruption_is_detected() {
    expect_verification_failure(
        Backend::Embedded,
        "mdtest-hard-stat",
        // A low index: under load a 200 ms stonewall may stop the ranks
        // before their 18th file.
        "io500/mdtest-hard/test-dir.0-0/mdtest_tree.0/file.mdtest.1.2",
        0,
    );
}

#[test]
fn stonewall_strikes_first_then_wear_out_evens_ranks() {
    let t = tempfile::tempdir().unwrap();
    let storage = Backend::Posix
        .open(t.path(), &BackendConfig::default())
        .unwrap();
    let mut caps = tiny_caps();
    caps.mdtest_easy_files_per_rank = u64::MAX;
    let ts = tempfile::NamedTempFile::new().unwrap();
    let p = Io500Params::new(Duration::from_millis(100), caps, 1, ts.path().to_path_buf());
    let rs = io500::run(&*storage, 2, &p).unwrap();
    let w = phase(&rs, "mdtest-easy-write");
    assert!(w.valid, "{:?}", w.notes);
    assert!(w.seconds >= 0.1);
    assert_eq!(w.ops % 2, 0);
    assert_eq!(phase(&rs, "mdtest-easy-delete").ops, w.ops);
}

#[test]
fn s3_backends_clean_up_through_the_api() {
    for mode in [S3Mode::SingleBucket, S3Mode::BucketPerFile] {
        let t = tempfile::tempdir().unwrap();
        let cfg = BackendConfig {
            s3_mode: mode,
            ..Default::default()
        };
        let storage = Backend::Embedded.open(t.path(), &cfg).unwrap();
        storage.setup().unwrap();
        let mut caps = tiny_caps();
        caps.mdtest_easy_files_per_rank = 40;
        caps.mdtest_hard_files_per_rank = 30;
        caps.ior_hard_segments_per_rank = 10;
        let ts = tempfile::NamedTempFile::new().unwrap();
        let p = Io500Params::new(Duration::from_millis(100), caps, 3, ts.path().to_path_buf());
        let rs = io500::run(&*storage, 2, &p).unwrap();
        check_counts(&rs, 2);
        storage.remove_tree("").unwrap();
        storage.teardown().unwrap();
        let left: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| !n.to_string_lossy().starts_with('.'))
            .collect();
        assert!(left.is_empty(), "{mode:?} left {left:?}");
    }
}

#[test]
fn repetitions_alternate_and_fold_into_medians() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("bench");
    let mut o = options(&dir, vec![Backend::Posix, Backend::Embedded]);
    o.repeat = 3;
    o.ranks = 2;
    o.stonewall = Duration::from_millis(50);
    let (report, text) = run_suite(&o).unwrap();
    let order: Vec<_> = report
        .backends
        .iter()
        .map(|b| (b.iteration, b.backend.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            (0, "posix"),
            (0, "embedded"),
            (1, "embedded"),
            (1, "posix"),
            (2, "posix"),
            (2, "embedded"),
        ]
    );
    for b in &report.backends {
        check_counts(&b.results, 2);
    }
    assert!(!dir.exists());

    // Text: a block per backend and repetition, one comparison table.
    assert!(text.contains("(standard) backend embedded repetition 2/3\n"));
    assert_eq!(text.matches("[SCORE ]").count(), 6);
    assert_eq!(text.matches("Comparison:").count(), 1);
    assert!(text.contains("Medians of 3 repetitions"));
    let stat = text
        .lines()
        .find(|l| l.starts_with("mdtest-easy-stat "))
        .unwrap();
    let range = stat.split_whitespace().last().unwrap();
    let (lo, hi) = range.split_once('-').expect("a min-max range");
    assert!(
        lo.parse::<f64>().unwrap() <= hi.parse::<f64>().unwrap(),
        "{stat}"
    );
    assert!(text.lines().any(|l| l.starts_with("score total ")));

    // JSON: flat rows with their iteration, and the summary.
    let doc = &report.json;
    assert_eq!(doc["run"]["repeat"], 3);
    let rows = doc["results"].as_array().unwrap();
    assert_eq!(rows.len(), 3 * 2 * 12);
    for it in 0..3 {
        assert_eq!(rows.iter().filter(|r| r["iteration"] == it).count(), 24);
    }
    assert!(rows.iter().all(|r| !r["latency"]["p50"].is_null()));
    let scores = doc["scores"].as_array().unwrap();
    assert_eq!(scores.len(), 6);
    assert!(scores.iter().all(|r| r["iteration"].is_u64()));
    let summary = doc["summary"].as_array().unwrap();
    assert_eq!(summary.len(), 2 * 12);
    for row in summary {
        let (min, med, max) = (
            row["min"].as_f64().unwrap(),
            row["median"].as_f64().unwrap(),
            row["max"].as_f64().unwrap(),
        );
        assert!(min <= med && med <= max, "{row}");
        assert_eq!(row["n"], 3);
        assert!(!row["unit"].is_null() && !row["phase"].is_null());
        let has_ratio = !row["ratio_median"].is_null();
        assert_eq!(has_ratio, row["backend"] == "embedded", "{row}");
        if has_ratio {
            let q = |k: &str| row[k].as_f64().unwrap();
            assert!(q("ratio_min") <= q("ratio_median") && q("ratio_median") <= q("ratio_max"));
        }
    }
    // The median ratio is the median of the per-repetition ratios.
    let ratios: Vec<f64> = rows
        .iter()
        .filter(|r| r["phase"] == "mdtest-easy-stat" && r["backend"] == "embedded")
        .map(|r| r["ratio_to_posix"].as_f64().unwrap())
        .collect();
    let row = summary
        .iter()
        .find(|r| r["phase"] == "mdtest-easy-stat" && r["backend"] == "embedded")
        .unwrap();
    assert_eq!(
        row["ratio_median"].as_f64(),
        s3hpc_bench::stats::median(ratios)
    );
    assert_eq!(doc["score_summary"].as_array().unwrap().len(), 2 * 3);
}

#[test]
fn a_stop_ends_the_run_and_removes_only_its_directory() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("sentinel"), b"x").unwrap();
    let mut o = options(t.path(), vec![Backend::Posix, Backend::Embedded]);
    o.allow_nonempty = true;
    o.repeat = 2;
    // Stop in the middle of the first backend, as a signal handler would;
    // the other phases and backends never start.
    let stop = o.stop.clone();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    o.after_phase = Some(Arc::new(move |name: &str| {
        log.lock().unwrap().push(name.to_string());
        if name == "mdtest-easy-write" {
            stop.request(2);
        }
    }));
    let err = run_suite(&o).err().expect("a stop fails the run");
    let i = err.downcast_ref::<Interrupted>().expect("Interrupted");
    assert_eq!(i.exit_code(), 130);
    assert!(
        err.to_string().contains("removed the run directory"),
        "{err}"
    );
    // The timestamp phase (one file) has no loop; the next loop stops.
    assert_eq!(
        *seen.lock().unwrap(),
        ["ior-easy-write", "mdtest-easy-write", "timestamp"]
    );
    let left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["sentinel"]);
}
