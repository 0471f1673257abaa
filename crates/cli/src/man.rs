//! `s3hpc man`: the manual pages and the guide's command-line reference,
//! both rendered from the clap definitions that `--help` prints, so the
//! three never disagree.

use clap::{Args, Command};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct ManArgs {
    /// Directory for the man pages: s3hpc.1 and one page per command
    /// (s3hpc-serve.1, s3hpc-bench-io500.1, ...). Made if absent.
    #[arg(long, value_name = "DIR", required_unless_present = "markdown")]
    out: Option<PathBuf>,
    /// Write the guide's command-line reference (Markdown: every command's
    /// --help) to FILE instead, or to stdout with `-`.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
}

/// Width the reference is wrapped at: fixed, so the chapter does not
/// depend on the terminal it was generated in.
const REFERENCE_WIDTH: usize = 100;

pub fn run(args: ManArgs, cli: Command) -> anyhow::Result<()> {
    if let Some(file) = args.markdown {
        let text = reference(cli);
        if file.as_os_str() == "-" {
            print!("{text}");
        } else {
            std::fs::write(&file, text)
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", file.display()))?;
        }
        return Ok(());
    }
    let out = args.out.expect("clap requires --out without --markdown");
    write_pages(cli, &out)?;
    let pages = std::fs::read_dir(&out)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".1"))
        .count();
    crate::say!(
        "{pages} pages in {} (read one with: man -l {}/s3hpc.1)",
        out.display(),
        out.display()
    );
    Ok(())
}

fn write_pages(cli: Command, out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).map_err(|e| anyhow::anyhow!("creating {}: {e}", out.display()))?;
    clap_mangen::generate_to(cli, out)
        .map_err(|e| anyhow::anyhow!("writing man pages to {}: {e}", out.display()))
}

/// Every visible command, depth first, with its full name and exactly
/// what its `--help` prints (clap's own rendering of the help request, so
/// the short/long choice is clap's too).
fn reference(cli: Command) -> String {
    let cli = cli
        .term_width(REFERENCE_WIDTH)
        .max_term_width(REFERENCE_WIDTH);
    let mut text = String::from(
        "# Command line\n\n\
         Every command's `--help`, generated from the same definitions by\n\
         `s3hpc man --markdown docs/src/reference/cli.md` (a test checks that\n\
         this page matches the binary). `s3hpc man --out DIR` writes them as\n\
         man pages.\n",
    );
    let mut paths = Vec::new();
    command_paths(&cli, vec![cli.get_name().to_owned()], &mut paths);
    for path in paths {
        let help = match cli
            .clone()
            .try_get_matches_from(path.iter().chain(["--help".to_owned()].iter()))
        {
            Err(e) => e.render().to_string(),
            Ok(_) => unreachable!("--help always ends parsing"),
        };
        let _ = write!(
            text,
            "\n## {}\n\n```text\n{}\n```\n",
            path.join(" "),
            help.trim_end()
        );
    }
    text
}

fn command_paths(cmd: &Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(path.clone());
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let mut p = path.clone();
        p.push(sub.get_name().to_owned());
        command_paths(sub, p, out);
    }
}
