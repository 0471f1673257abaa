//! The report from recorded result files: which figures and tables appear,
//! which are skipped with a note, and that table numbers equal the JSON.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn report(inputs: &[PathBuf]) -> (tempfile::TempDir, s3hpc_report::Outcome, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    let outcome = s3hpc_report::run(inputs, dir.path(), &mut out).unwrap();
    (dir, outcome, String::from_utf8(out).unwrap())
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Markdown tables by title: header cells, then rows of cells.
fn markdown_tables(md: &str) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    let mut tables = Vec::new();
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().replace("\\|", "|"))
            .collect()
    };
    let mut lines = md.lines().peekable();
    while let Some(l) = lines.next() {
        if let Some(title) = l.strip_prefix("### ") {
            lines.next(); // blank
            let headers = cells(lines.next().unwrap());
            lines.next(); // alignment
            let mut rows = Vec::new();
            while let Some(r) = lines.peek().filter(|r| r.starts_with('|')) {
                rows.push(cells(r));
                lines.next();
            }
            tables.push((title.to_string(), headers, rows));
        }
    }
    tables
}

fn close(cell: &str, expected: f64) -> bool {
    let got: f64 = cell
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {cell:?}"));
    (got - expected).abs() <= 5e-4 * expected.abs().max(1e-12)
}

#[test]
fn every_figure_with_data_appears_and_the_rest_are_skipped_with_a_note() {
    // IO500 only: no sweep, copy, md-workbench, warp, kv, visibility rows.
    let (dir, outcome, stdout) = report(&[fixture("io500-posix-embedded.json")]);
    assert_eq!(outcome.figures, ["radar", "density-io500", "roofline"]);
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    for f in &outcome.figures {
        for ext in ["png", "svg"] {
            let file = dir.path().join(format!("{f}.{ext}"));
            assert!(std::fs::metadata(&file).unwrap().len() > 1000, "{file:?}");
            assert!(
                html.contains(&format!("href=\"{f}.{ext}\"")),
                "{f}.{ext} not linked"
            );
        }
        assert!(
            html.contains(&format!("<figure id=\"{f}\">")),
            "{f} not on the page"
        );
    }
    for skipped in [
        "Throughput against object size",
        "md-workbench table",
        "Copy scaling",
        "warp",
        "key-value",
    ] {
        assert!(
            outcome
                .skipped
                .iter()
                .any(|(what, _)| what.starts_with(skipped)),
            "{skipped} not skipped: {:?}",
            outcome.skipped
        );
        assert!(
            html.contains(&format!("<li><b>{skipped}")),
            "no note for {skipped}"
        );
        assert!(
            stdout.contains(&format!("skipped {skipped}")),
            "stdout: {stdout}"
        );
    }
    assert!(html.contains("data:image/svg+xml;base64,"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the page must need no network"
    );
    assert!(dir.path().join("comparison.md").exists() && dir.path().join("tables.md").exists());
}

#[test]
fn breadth_benchmarks_get_their_figures_and_tables() {
    let (dir, outcome, _) = report(&[fixture("breadth.json")]);
    for f in [
        "sweep",
        "roofline",
        "copy-scaling",
        "density-kv",
        "density-warp",
        "density-mdworkbench",
        "density-visibility",
    ] {
        assert!(
            outcome.figures.iter().any(|x| x == f),
            "{f} missing: {:?}",
            outcome.figures
        );
        assert!(dir.path().join(format!("{f}.png")).exists());
    }
    // No io500 rows in this file: no comparison and no radar.
    let skipped: Vec<&str> = outcome.skipped.iter().map(|s| s.0.as_str()).collect();
    assert!(skipped.contains(&"IO500 comparison table"), "{skipped:?}");
    assert!(
        skipped.iter().any(|s| s.starts_with("IO500 radar")),
        "{skipped:?}"
    );
    let md = std::fs::read_to_string(dir.path().join("tables.md")).unwrap();
    let titles: Vec<String> = markdown_tables(&md).into_iter().map(|t| t.0).collect();
    for t in [
        "md-workbench",
        "warp",
        "key-value",
        "copy scaling",
        "throughput by object size",
        "time until",
        "I/O roofline",
    ] {
        assert!(
            titles.iter().any(|x| x.starts_with(t)),
            "{t} not in {titles:?}"
        );
    }
}

#[test]
fn comparison_numbers_equal_the_json_summary() {
    let path = fixture("io500-posix-embedded.json");
    let (dir, _, stdout) = report(std::slice::from_ref(&path));
    let doc = json(&path);
    let md = std::fs::read_to_string(dir.path().join("comparison.md")).unwrap();
    let tables = markdown_tables(&md);
    let (_, headers, rows) = &tables[0];
    assert_eq!(
        headers,
        &["phase", "unit", "posix", "embedded", "embedded % POSIX"]
    );
    let summary = doc["summary"].as_array().unwrap();
    let scores = doc["score_summary"].as_array().unwrap();
    assert_eq!(rows.len(), summary.len() / 2 + scores.len() / 2);
    for s in summary.iter().chain(scores) {
        let name = s.get("phase").or(s.get("score")).unwrap().as_str().unwrap();
        let row = rows
            .iter()
            .find(|r| r[0] == name || r[0] == format!("score {name}"))
            .unwrap_or_else(|| panic!("no row for {name}"));
        let col = headers
            .iter()
            .position(|h| h == s["backend"].as_str().unwrap())
            .unwrap();
        assert!(
            close(&row[col], s["median"].as_f64().unwrap()),
            "{name}: {} vs {}",
            row[col],
            s["median"]
        );
        if let Some(m) = s["ratio_median"].as_f64() {
            // "93.3 (88.0-98.6)": median, min, max as % with one decimal.
            let cell = &row[col + 1];
            let nums: Vec<f64> = cell
                .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .filter(|x| !x.is_empty())
                .map(|x| x.parse().unwrap())
                .collect();
            let want = [
                m,
                s["ratio_min"].as_f64().unwrap(),
                s["ratio_max"].as_f64().unwrap(),
            ];
            for (got, want) in nums.iter().zip(want) {
                assert!(
                    (got - want * 100.0).abs() <= 0.051,
                    "{name}: {cell} vs {want}"
                );
            }
        }
    }
    // The same table on stdout.
    assert!(stdout.contains("IO500: each backend and its % of POSIX"));
    assert!(stdout.lines().any(|l| l.starts_with("mdtest-easy-stat")));
}

/// Medians of `field` over repetitions, per (backend, phase), from the raw
/// JSON rows.
fn medians(doc: &Value, benchmark: &str, field: &str) -> Vec<(String, String, f64)> {
    let rows: Vec<&Value> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["benchmark"] == benchmark)
        .collect();
    let mut out: Vec<(String, String, f64)> = Vec::new();
    for r in &rows {
        let key = (
            r["backend"].as_str().unwrap().to_string(),
            r["phase"].as_str().unwrap().to_string(),
        );
        if out.iter().any(|o| (o.0.clone(), o.1.clone()) == key) {
            continue;
        }
        let mut v: Vec<f64> = rows
            .iter()
            .filter(|x| x["backend"] == key.0.as_str() && x["phase"] == key.1.as_str())
            .map(|x| x[field].as_f64().unwrap())
            .collect();
        v.sort_by(f64::total_cmp);
        let m = if v.len() % 2 == 1 {
            v[v.len() / 2]
        } else {
            (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
        };
        out.push((key.0, key.1, m));
    }
    out
}

#[test]
fn benchmark_table_numbers_equal_the_json() {
    let path = fixture("breadth.json");
    let (dir, _, _) = report(std::slice::from_ref(&path));
    let doc = json(&path);
    let md = std::fs::read_to_string(dir.path().join("tables.md")).unwrap();
    let tables = markdown_tables(&md);
    for (benchmark, title, column, field) in [
        ("mdworkbench", "md-workbench", "IOPS", "value"),
        ("mdworkbench", "md-workbench", "obj/s", "obj_per_s"),
        ("warp", "warp", "obj/s", "value"),
        ("warp", "warp", "MiB/s", "mib_per_s"),
        ("kv", "key-value", "ops/s", "value"),
        ("kv", "key-value", "value size (B)", "value_size"),
    ] {
        let (_, headers, rows) = tables.iter().find(|t| t.0.starts_with(title)).unwrap();
        let col = headers.iter().position(|h| h == column).unwrap();
        let expected = medians(&doc, benchmark, field);
        assert_eq!(rows.len(), expected.len(), "{title}");
        for (backend, phase, m) in expected {
            let row = rows
                .iter()
                .find(|r| r[0] == backend && r[1] == phase)
                .unwrap();
            assert!(
                close(&row[col], m),
                "{title} {backend} {phase} {column}: {} vs {m}",
                row[col]
            );
        }
    }
}

#[test]
fn same_backends_of_different_runs_are_kept_apart_by_label() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = json(&fixture("io500-posix-embedded.json"));
    let mut inputs = Vec::new();
    for (label, scale) in [("monday", 1.0), ("tuesday", 2.0)] {
        doc["run"]["label"] = label.into();
        for s in doc["summary"].as_array_mut().unwrap() {
            s["median"] = (s["median"].as_f64().unwrap() * scale).into();
        }
        let p = dir.path().join(format!("{label}.json"));
        std::fs::write(&p, doc.to_string()).unwrap();
        inputs.push(p);
    }
    let (out, _, stdout) = report(&inputs);
    let md = std::fs::read_to_string(out.path().join("comparison.md")).unwrap();
    let (_, headers, rows) = &markdown_tables(&md)[0];
    for h in [
        "posix@monday",
        "embedded@monday",
        "posix@tuesday",
        "embedded@tuesday",
    ] {
        assert!(headers.iter().any(|x| x == h), "{h} not in {headers:?}");
    }
    // Tuesday's copy has doubled medians after monday's doubling: 1x and 2x.
    let row = rows.iter().find(|r| r[0] == "ior-easy-write").unwrap();
    let a: f64 = row[headers.iter().position(|h| h == "posix@monday").unwrap()]
        .parse()
        .unwrap();
    let b: f64 = row[headers.iter().position(|h| h == "posix@tuesday").unwrap()]
        .parse()
        .unwrap();
    assert!((b / a - 2.0).abs() < 1e-3, "{a} {b}");
    assert!(stdout.contains("embedded@tuesday"));
}

#[test]
fn the_file_stem_labels_a_run_without_a_label() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("io500-posix-embedded.json");
    let copy = dir.path().join("second-node.json");
    std::fs::copy(&src, &copy).unwrap();
    let (out, _, _) = report(&[src, copy]);
    let md = std::fs::read_to_string(out.path().join("comparison.md")).unwrap();
    assert!(md.contains("embedded@second-node"), "{md}");
    assert!(md.contains("embedded@io500-posix-embedded"), "{md}");
}

#[test]
fn a_null_value_shows_as_a_dash() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = json(&fixture("io500-posix-embedded.json"));
    doc["summary"][0]["median"] = Value::Null;
    let p = dir.path().join("nan.json");
    std::fs::write(&p, doc.to_string()).unwrap();
    let (out, _, _) = report(&[p]);
    let md = std::fs::read_to_string(out.path().join("comparison.md")).unwrap();
    let (_, _, rows) = &markdown_tables(&md)[0];
    let name = doc["summary"][0]["phase"].as_str().unwrap();
    let row = rows.iter().find(|r| r[0] == name).unwrap();
    assert!(row.contains(&"-".to_string()), "{row:?}");
}

#[test]
fn bad_input_names_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let cases = [
        (write("garbage.json", "this is not json"), "not JSON"),
        (write("empty.json", ""), "empty file"),
        (write("blank.json", "  \n"), "empty file"),
        (
            write("other.json", r#"{"schema": "other/2", "results": []}"#),
            "schema is \"other/2\"",
        ),
        (
            write("noschema.json", r#"{"results": []}"#),
            "no \"schema\" field",
        ),
        (write("array.json", "[1, 2]"), "expected a JSON object"),
        (
            write(
                "badrow.json",
                r#"{"schema": "s3hpc-bench/1", "results": [{"backend": "posix", "value": 1}]}"#,
            ),
            "results[0]: missing string field \"benchmark\"",
        ),
        (
            write(
                "badresults.json",
                r#"{"schema": "s3hpc-bench/1", "results": 3}"#,
            ),
            "\"results\" must be an array",
        ),
        (
            write(
                "badvalue.json",
                r#"{"schema": "s3hpc-bench/1", "results": [{"benchmark": "io500", "backend": "posix", "phase": "find", "value": "fast"}]}"#,
            ),
            "results[0]: field \"value\" is not a number",
        ),
        (dir.path().join("missing.json"), "cannot read"),
    ];
    for (path, what) in cases {
        let err = s3hpc_report::run(
            std::slice::from_ref(&path),
            &dir.path().join("out"),
            &mut Vec::new(),
        )
        .expect_err("bad input must fail")
        .to_string();
        assert!(
            err.contains(&path.display().to_string()),
            "{err} does not name {path:?}"
        );
        assert!(err.contains(what), "{err} does not say {what}");
    }
}
