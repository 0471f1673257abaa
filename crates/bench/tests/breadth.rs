//! The benchmarks beyond IO500 end to end with tiny parameters: md-workbench
//! op counts and FIFO behaviour, warp's exact mix, KV on missing keys,
//! verified reads, and complete result rows.

use s3hpc_bench::backend::{Backend, BackendConfig};
use s3hpc_bench::harness::objects::{pattern_len, Objects};
use s3hpc_bench::harness::{self, Benchmark, HarnessOptions, Row, Target};
use s3hpc_bench::mdworkbench::layout::DatasetMode;
use s3hpc_bench::mdworkbench::{MdWorkbench, MdwParams, Phases};
use s3hpc_bench::objbench::kv::{Kv, KvParams};
use s3hpc_bench::pattern::Pattern;
use s3hpc_bench::warp::{Warp, WarpMode, WarpParams};
use std::path::{Path, PathBuf};
use std::time::Duration;

const BOTH: [Backend; 2] = [Backend::Posix, Backend::Embedded];

fn options(dir: &Path, ranks: usize) -> HarnessOptions {
    let mut o = HarnessOptions::new();
    o.backends = BOTH.to_vec();
    o.dir = Some(dir.to_path_buf());
    o.ranks = ranks;
    o.seed = 11;
    o
}

fn run(o: &HarnessOptions, b: &dyn Benchmark) -> (Vec<Row>, String) {
    let mut out = Vec::new();
    let rows = harness::run(o, &[b], &mut out).unwrap_or_else(|e| panic!("{e:#}"));
    (rows, String::from_utf8(out).unwrap())
}

fn row<'a>(rows: &'a [Row], backend: &str, phase: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.backend == backend && r.phase == phase)
        .unwrap_or_else(|| panic!("no row {backend} {phase}"))
}

fn tiny_mdw(phases: Phases, mode: DatasetMode) -> MdWorkbench {
    MdWorkbench {
        params: MdwParams {
            datasets: 3,
            per_iteration: 7,
            precreate: 10,
            size: 3901,
            offset: 1,
            iterations: 2,
            phases,
            dataset_mode: mode,
        },
    }
}

#[test]
fn mdworkbench_op_counts_match_upstream() {
    let t = tempfile::tempdir().unwrap();
    let ranks = 3;
    for mode in [DatasetMode::SingleBucket, DatasetMode::BucketPerDataset] {
        let dir = t.path().join(mode.as_str());
        let b = tiny_mdw(Phases::ALL, mode);
        let (rows, text) = run(&options(&dir, ranks), &b);
        let (d, i, p, r, n) = (3u64, 7u64, 10u64, 2u64, ranks as u64);
        for backend in ["posix", "embedded"] {
            let pre = row(&rows, backend, "precreate");
            assert_eq!(pre.ops, d * n + d * p * n, "{mode:?}");
            assert_eq!(pre.extra["objects"], d * p * n);
            let bench = row(&rows, backend, "benchmark");
            assert_eq!(bench.extra["objects"], d * i * r * n);
            assert_eq!(bench.ops, 4 * d * i * r * n);
            assert_eq!(bench.bytes, 2 * d * i * r * n * 3901);
            assert_eq!(bench.extra["iteration_rates"].as_array().unwrap().len(), 2);
            let counts = &bench.extra["op_latency"];
            for op in ["read", "stat", "create", "delete"] {
                assert_eq!(counts[op]["count"], d * i * r * n, "{op}");
            }
            let clean = row(&rows, backend, "cleanup");
            assert_eq!(clean.extra["objects"], d * p * n);
            assert_eq!(clean.ops, d * p * n + d * n);
            assert!(pre.value > 0.0 && bench.value > 0.0 && clean.value > 0.0);
        }
        assert!(text.contains(&format!(
            "MD-Workbench total objects: {}",
            b.params.total_objects(ranks)
        )));
        assert_eq!(text.matches("benchmark process max:").count(), 4, "{text}");
        assert!(
            text.contains(" read(") && text.contains(" delete("),
            "{text}"
        );
        assert!(!dir.exists(), "the run removes the directory it created");
    }
}

/// The run directory a kept run leaves in `dir`.
fn kept_run_dir(dir: &Path) -> PathBuf {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries.pop().unwrap()
}

#[test]
fn mdworkbench_datasets_are_fifos_and_a_kept_set_is_reused() {
    let t = tempfile::tempdir().unwrap();
    let ranks = 2;
    let mut o = options(&t.path().join("d"), ranks);
    o.backends = vec![Backend::Posix];
    o.keep = true;
    let create_and_bench = Phases {
        precreate: true,
        benchmark: true,
        cleanup: false,
    };
    run(&o, &tiny_mdw(create_and_bench, DatasetMode::SingleBucket));
    let run_dir = kept_run_dir(&t.path().join("d"));
    let tree = run_dir.join("mdworkbench.posix");
    // After 2 iterations of 7, objects 14..24 remain in every dataset: the
    // oldest were read and deleted, the newest created, each exactly once.
    let names = |rank: usize, d: usize| -> Vec<u64> {
        let mut v: Vec<u64> = std::fs::read_dir(tree.join(format!("{rank}_{d}")))
            .unwrap()
            .map(|e| {
                let n = e.unwrap().file_name().into_string().unwrap();
                n.strip_prefix("file-").unwrap().parse().unwrap()
            })
            .collect();
        v.sort();
        v
    };
    for rank in 0..ranks {
        for d in 0..3 {
            assert_eq!(names(rank, d), (14..24).collect::<Vec<_>>(), "{rank}_{d}");
        }
    }
    // Other parameters than the set's are refused.
    o.reuse = Some(run_dir.clone());
    let mut wrong = tiny_mdw(
        Phases {
            precreate: false,
            benchmark: true,
            cleanup: false,
        },
        DatasetMode::SingleBucket,
    );
    wrong.params.precreate = 12;
    let e = harness::run(&o, &[&wrong], &mut Vec::new()).unwrap_err();
    assert!(format!("{e:#}").contains("-P 10"), "{e:#}");
    // A regression run on the kept set: one more iteration, then cleanup.
    let mut again = tiny_mdw(
        Phases {
            precreate: false,
            benchmark: true,
            cleanup: true,
        },
        DatasetMode::SingleBucket,
    );
    again.params.iterations = 1;
    let (rows, _) = run(&o, &again);
    assert_eq!(row(&rows, "posix", "benchmark").extra["objects"], 3 * 7 * 2);
    assert_eq!(row(&rows, "posix", "cleanup").extra["objects"], 3 * 10 * 2);
    assert_eq!(
        std::fs::read_dir(&tree).unwrap().count(),
        0,
        "cleanup leaves nothing"
    );
}

#[test]
fn warp_mixed_has_the_exact_mix() {
    let t = tempfile::tempdir().unwrap();
    let mut p = WarpParams::new(WarpMode::Mixed);
    p.duration = Duration::from_secs(60);
    p.max_ops = Some(2000);
    p.object_size = 10_000;
    p.objects = 20;
    p.concurrency = 3;
    let (rows, text) = run(&options(&t.path().join("w"), 1), &Warp { params: p });
    for backend in ["posix", "embedded"] {
        for (op, n) in [("GET", 900), ("STAT", 600), ("PUT", 300), ("DELETE", 200)] {
            let r = row(&rows, backend, &format!("mixed.{op}"));
            assert_eq!(r.extra["ops_all"], n, "{backend} {op}");
        }
        let total = row(&rows, backend, "mixed");
        assert_eq!(total.extra["ops_all"], 2000);
        assert!(total.value > 0.0 && total.extra["mib_per_s"].as_f64().unwrap() > 0.0);
        assert!(row(&rows, backend, "mixed.GET").extra.contains_key("ttfb"));
    }
    assert!(text.contains("Report: GET (45.0% of operations)") || text.contains("Report: GET ("));
    assert!(text.contains(" * TTFB: Avg:"), "{text}");
    assert!(text.contains("Report: Total. Concurrency: 3."), "{text}");
}

#[test]
fn warp_get_ranged_reads_verify() {
    let t = tempfile::tempdir().unwrap();
    let mut p = WarpParams::new(WarpMode::Get);
    p.duration = Duration::from_millis(300);
    p.object_size = 3 << 20;
    p.objects = 6;
    p.concurrency = 2;
    p.range = true;
    let (rows, _) = run(&options(&t.path().join("w"), 1), &Warp { params: p });
    for backend in ["posix", "embedded"] {
        assert!(
            row(&rows, backend, "get.GET").extra["ops_all"]
                .as_u64()
                .unwrap()
                > 0
        );
        // The PUTs are the prepare step's, one per object, as warp reports.
        let put = row(&rows, backend, "get.PUT");
        assert_eq!(put.extra["ops_all"], 6, "{put:?}");
        assert!(put.extra["mib_per_s"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn kv_reports_every_op_and_missing_keys_are_missing() {
    let t = tempfile::tempdir().unwrap();
    let b = Kv {
        params: KvParams {
            keys: 50,
            value_sizes: vec![100, 5000],
        },
    };
    let (rows, _) = run(&options(&t.path().join("k"), 1), &b);
    assert_eq!(rows.len(), 2 * 2 * 6);
    for r in &rows {
        assert_eq!(r.unit, "ops/s");
        assert!(r.extra["latency_median"].as_f64().unwrap() > 0.0, "{r:?}");
        assert!(r.extra.contains_key("latency_stddev"));
        assert_eq!(r.ops, if r.phase == "list" { 1 } else { 50 }, "{r:?}");
    }
}

/// A target over `backend` in `dir`, for driving `Objects` directly.
fn target<'a>(o: &'a HarnessOptions, backend: Backend, dir: &Path) -> Target<'a> {
    std::fs::create_dir_all(dir).unwrap();
    Target {
        backend,
        dir: dir.to_path_buf(),
        reused: false,
        config: o.config.clone(),
        opts: o,
    }
}

#[test]
fn reads_are_verified_and_missing_keys_report_none() {
    let t = tempfile::tempdir().unwrap();
    let o = HarnessOptions {
        config: BackendConfig::default(),
        ..HarnessOptions::new()
    };
    for backend in BOTH {
        let tg = target(&o, backend, &t.path().join(backend.name()));
        let objects = Objects::open(&tg).unwrap();
        let size = (2 << 20) + 17;
        let pattern = Pattern::new(5, pattern_len(size));
        objects.put(&pattern, "a/b", size).unwrap();
        assert_eq!(objects.head("a/b").unwrap(), Some(size));
        assert_eq!(objects.head("a/missing").unwrap(), None);
        assert_eq!(objects.head("nowhere/x").unwrap(), None);
        let mut scratch = Vec::new();
        objects.get(&pattern, "a/b", 0, size, &mut scratch).unwrap();
        objects
            .get(&pattern, "a/b", (1 << 20) - 3, 100, &mut scratch)
            .unwrap();
        // Another key's data under this name fails verification.
        objects.put(&pattern, "a/c", size).unwrap();
        let path = Objects::posix_root(&tg);
        std::fs::rename(path.join("a/c"), path.join("a/b")).unwrap();
        let e = objects
            .get(&pattern, "a/b", 0, size, &mut scratch)
            .unwrap_err();
        assert!(format!("{e:#}").contains("verification failed"), "{e:#}");
        // So does a short object.
        objects.put(&pattern, "a/d", size - 1).unwrap();
        assert!(objects.get(&pattern, "a/d", 0, size, &mut scratch).is_err());
        objects.remove_all().unwrap();
    }
}
