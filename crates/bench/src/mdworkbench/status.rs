//! The run-info file a kept md-workbench set carries (upstream's
//! `md-workbench.status`): where the FIFOs stand and what shaped the set, so
//! a later `-2`/`-3` run on it continues correctly or refuses clearly.

use super::MdwParams;
use anyhow::Context;
use std::path::Path;

pub const FILE: &str = "md-workbench.status";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The first object index still present in every dataset.
    pub pos: u64,
    pub ranks: usize,
    pub datasets: usize,
    pub precreate: u64,
    pub size: usize,
    pub offset: usize,
    pub seed: u64,
    pub dataset_mode: String,
}

impl Status {
    pub fn new(p: &MdwParams, ranks: usize, pos: u64, seed: u64) -> Status {
        Status {
            pos,
            ranks,
            datasets: p.datasets,
            precreate: p.precreate,
            size: p.size,
            offset: p.offset,
            seed,
            dataset_mode: p.dataset_mode.as_str().to_string(),
        }
    }

    /// Refuses parameters the kept set was not made with.
    pub fn check(&self, p: &MdwParams, ranks: usize) -> anyhow::Result<()> {
        let want = Status::new(p, ranks, self.pos, self.seed);
        anyhow::ensure!(
            *self == want,
            "the kept set was made with ranks={} -D {} -P {} -S {} -O {} --dataset-mode {}; \
             run with the same values",
            self.ranks,
            self.datasets,
            self.precreate,
            self.size,
            self.offset,
            self.dataset_mode
        );
        Ok(())
    }
}

pub fn write(dir: &Path, s: &Status) -> anyhow::Result<()> {
    let text = format!(
        "pos: {}\nranks: {}\ndatasets: {}\nprecreate: {}\nsize: {}\noffset: {}\nseed: {}\ndataset_mode: {}\n",
        s.pos, s.ranks, s.datasets, s.precreate, s.size, s.offset, s.seed, s.dataset_mode
    );
    let path = dir.join(FILE);
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

pub fn read(dir: &Path) -> anyhow::Result<Status> {
    let path = dir.join(FILE);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "reading {} (was the set kept by a run without -3?)",
            path.display()
        )
    })?;
    let field = |name: &str| -> anyhow::Result<&str> {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
            .with_context(|| format!("{}: no {name}", path.display()))
    };
    let num = |name: &str| -> anyhow::Result<u64> {
        field(name)?
            .parse()
            .with_context(|| format!("{}: bad {name}", path.display()))
    };
    Ok(Status {
        pos: num("pos")?,
        ranks: num("ranks")? as usize,
        datasets: num("datasets")? as usize,
        precreate: num("precreate")?,
        size: num("size")? as usize,
        offset: num("offset")? as usize,
        seed: num("seed")?,
        dataset_mode: field("dataset_mode")?.to_string(),
    })
}
