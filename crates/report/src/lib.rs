//! `s3hpc report`: tables and figures from the bench's result JSON
//! (`s3hpc-bench/1`). Each figure appears when its rows exist; the page and
//! stdout say which were skipped and why.
//!
//! [`load`] reads files, [`model`] joins them, [`tables`] and [`figures`]
//! build the parts, [`html`] puts them on one page.

pub mod figures;
pub mod html;
pub mod kde;
pub mod load;
pub mod model;
pub mod roofline;
pub mod tables;

use figures::{render, Plot};
use html::Section;
use model::Dataset;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a report wrote.
#[derive(Debug, Default)]
pub struct Outcome {
    /// File stems of the figures (`DIR/<name>.png`, `.svg`).
    pub figures: Vec<String>,
    /// `(what, why)` for each figure or table left out.
    pub skipped: Vec<(String, String)>,
    pub index: PathBuf,
}

/// Loads every file (all errors reported at once, each naming its file).
pub fn load_all(inputs: &[PathBuf]) -> anyhow::Result<Dataset> {
    anyhow::ensure!(!inputs.is_empty(), "no result files given");
    let mut runs = Vec::new();
    let mut errors = Vec::new();
    for p in inputs {
        match load::load(p) {
            Ok(r) => runs.push(r),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if !errors.is_empty() {
        anyhow::bail!("{}", errors.join("\n"));
    }
    Ok(Dataset::new(runs))
}

/// Writes the report for `inputs` into `out` and a summary to `stdout`.
pub fn run(inputs: &[PathBuf], out: &Path, stdout: &mut dyn Write) -> anyhow::Result<Outcome> {
    let data = load_all(inputs)?;
    std::fs::create_dir_all(out).map_err(|e| anyhow::anyhow!("creating {}: {e}", out.display()))?;
    let sections = build(&data, out)?;

    // Every table as text, the IO500 comparison first (it is also the
    // one Markdown file of its own).
    for s in &sections {
        if let Section::Table(t) = s {
            writeln!(stdout, "{}", t.to_text())?;
            if t.title == tables::comparison::TITLE {
                std::fs::write(out.join("comparison.md"), t.to_markdown())?;
            }
        }
    }
    let all_tables: Vec<String> = sections
        .iter()
        .filter_map(|s| match s {
            Section::Table(t) => Some(t.to_markdown()),
            _ => None,
        })
        .collect();
    std::fs::write(
        out.join("tables.md"),
        format!("# s3hpc report\n\n{}", all_tables.join("\n")),
    )?;
    let index = out.join("index.html");
    std::fs::write(&index, html::page(&data, &sections))?;

    let mut outcome = Outcome {
        index: index.clone(),
        ..Outcome::default()
    };
    for s in &sections {
        match s {
            Section::Figure(f) => {
                writeln!(
                    stdout,
                    "figure {}: {}/{}.png, .svg",
                    f.title,
                    out.display(),
                    f.name
                )?;
                outcome.figures.push(f.name.clone());
            }
            Section::Skipped { what, why } => {
                writeln!(stdout, "skipped {what}: {why}")?;
                outcome.skipped.push((what.clone(), why.clone()));
            }
            Section::Table(_) => {}
        }
    }
    writeln!(stdout, "report: {}", index.display())?;
    Ok(outcome)
}

fn figure<P: Plot>(
    plot: Option<P>,
    dir: &Path,
    name: &str,
    title: &str,
    caption: &str,
    why_not: &str,
) -> anyhow::Result<Section> {
    Ok(match plot {
        Some(p) => Section::Figure(render(&p, dir, name, title, caption)?),
        None => skipped(title, why_not),
    })
}

fn skipped(what: &str, why: &str) -> Section {
    Section::Skipped {
        what: what.into(),
        why: why.into(),
    }
}

fn table(t: Option<tables::Table>, what: &str, why_not: &str) -> Section {
    t.map_or_else(|| skipped(what, why_not), Section::Table)
}

/// Every part of the page, in order.
fn build(data: &Dataset, dir: &Path) -> anyhow::Result<Vec<Section>> {
    let mut s = vec![table(
        tables::comparison::table(data),
        "IO500 comparison table",
        "no io500 rows (run `s3hpc bench io500`)",
    )];
    s.push(figure(
        figures::radar::plot(data),
        dir,
        "radar",
        "IO500 radar: % of POSIX per phase",
        "Each backend's median ratio to POSIX of the same run; the black ring is POSIX.",
        "needs io500 rows of a backend besides POSIX with ratios to POSIX on at least three phases",
    )?);
    s.push(figure(
        figures::explain::plot(data),
        dir,
        "explain",
        "Where the time of an S3 call goes",
        "From `s3hpc explain`: each op's median time through s3hpc's HTTP server with SigV4, split into what each layer adds over the one below (the file system's part is what the same work costs through POSIX calls); beside it, the file-system calls per op of POSIX and of the engine, with the metadata calls in brackets.",
        "no explain rows (run `s3hpc explain --json FILE`)",
    )?);
    let with_latency = figures::density::benchmarks(data);
    if with_latency.is_empty() {
        s.push(skipped("latency density", "no row has a latency histogram"));
    }
    for b in &with_latency {
        s.push(figure(
            figures::density::plot(data, b),
            dir,
            &format!("density-{b}"),
            &format!("{b}: latency density per operation"),
            "Gaussian kernel density over log10(latency) of the merged histograms of all repetitions (bandwidth: Silverman's rule, at least one bucket, 0.1 decade).",
            "no latency histogram",
        )?);
    }
    s.push(figure(
        figures::sweep::plot(data),
        dir,
        "sweep",
        "Throughput against object size",
        "Median MiB/s over repetitions per object size; log-log.",
        "no sweep rows with object_size (run the object-size sweep bench)",
    )?);
    let roofs = roofline::roofs(data);
    let roof_plot = (!roofs.is_empty()).then(|| figures::roofline::Roofline {
        roofs: roofs.clone(),
    });
    let why_no_roof = "no row with ops, bytes and seconds";
    s.push(figure(
        roof_plot,
        dir,
        "roofline",
        "I/O roofline",
        "attainable = min(peak IOPS, peak bandwidth × intensity); the ridge separates bandwidth-bound (left) from IOPS-bound (right) phases. Phases that move no data are in the table only.",
        why_no_roof,
    )?);
    s.push(table(
        tables::roofline::table(&roofs),
        "roofline table",
        why_no_roof,
    ));
    for (benchmark, title) in tables::benchmarks::benchmarks() {
        s.push(table(
            tables::benchmarks::table(data, benchmark),
            &format!("{title} table"),
            &format!("no {benchmark} rows"),
        ));
        if benchmark == "copy" {
            s.push(figure(
                figures::copy::plot(data),
                dir,
                "copy-scaling",
                "Copy scaling: throughput against workers",
                "Median MiB/s over repetitions; solid and dashed lines are the phases (put, get).",
                "no copy rows with workers",
            )?);
        }
    }
    Ok(s)
}
