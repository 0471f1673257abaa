//! The manual and the guide's command-line reference come from the same
//! definitions as `--help`: the pages render, the reference chapter is the
//! binary's, and each command's `--help` is the block the chapter shows.

use std::path::Path;
use std::process::Command;

fn s3hpc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_s3hpc"));
    // clap wraps --help at the terminal's width; without a terminal (as
    // here) at 100 columns, the width the reference is written at.
    c.env_remove("COLUMNS");
    c
}

fn run(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}{}",
        c,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn chapter() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/reference/cli.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn man_writes_a_page_per_command_that_man_renders() {
    let t = tempfile::tempdir().unwrap();
    run(s3hpc().arg("man").arg("--out").arg(t.path()));
    let pages: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for page in [
        "s3hpc.1",
        "s3hpc-serve.1",
        "s3hpc-bench.1",
        "s3hpc-bench-io500.1",
        "s3hpc-explain.1",
        "s3hpc-probe.1",
        "s3hpc-report.1",
        "s3hpc-man.1",
    ] {
        assert!(pages.iter().any(|p| p == page), "{page} missing: {pages:?}");
    }
    // The hidden test agent has no page.
    assert!(!pages.iter().any(|p| p.contains("agent")), "{pages:?}");
    // man(1) renders it: the scripts/test setup installs man-db.
    let text = run(Command::new("man")
        .arg("-l")
        .arg(t.path().join("s3hpc-serve.1"))
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100"));
    assert!(text.contains("s3hpc-serve"), "{text}");
    assert!(text.contains("--credentials"), "{text}");
}

#[test]
fn the_reference_chapter_is_the_binarys() {
    let generated = run(s3hpc().args(["man", "--markdown", "-"]));
    assert!(
        generated == chapter(),
        "docs/src/reference/cli.md is stale: regenerate it with \
         `cargo run --release -- man --markdown docs/src/reference/cli.md`"
    );
}

#[test]
fn every_commands_help_is_its_block_in_the_reference() {
    let chapter = chapter();
    let mut checked = 0;
    for part in chapter.split("\n## ").skip(1) {
        let (title, rest) = part.split_once('\n').unwrap();
        let block = rest
            .split_once("```text\n")
            .and_then(|(_, b)| b.split_once("\n```"))
            .map(|(b, _)| b)
            .unwrap_or_else(|| panic!("no help block under {title}"));
        let mut args: Vec<&str> = title.split(' ').skip(1).collect();
        args.push("--help");
        let help = run(s3hpc().args(&args));
        assert_eq!(help.trim_end(), block, "`{title} --help`");
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} commands in the reference");
}
