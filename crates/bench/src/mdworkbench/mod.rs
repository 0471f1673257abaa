//! MD-Workbench (`hpc/ior src/md-workbench.c`): small objects in datasets
//! used as FIFOs. Precreate fills each rank's D datasets with P objects;
//! every benchmark iteration then, for I objects of each dataset, stats,
//! reads and deletes the oldest object of another rank's dataset and
//! creates a new one in a third rank's (rank offsets O·(d+1)); cleanup
//! deletes what is left. Same parameters, op order, rates and output lines
//! as upstream, over any `StorageApi`.

pub mod layout;
pub mod rank;
pub mod report;
pub mod status;

use crate::backend::BackendConfig;
use crate::harness::ranks::on_root;
use crate::harness::{progress::Progress, Benchmark, Row, Target};
use crate::pattern::Pattern;
use crate::storage::S3Mode;
use layout::{DatasetMode, Layout};
use rank::{run_rank, PhaseStats};
use serde_json::{json, Value};
use std::io::Write;
use std::time::Instant;

/// Which of the three phases run (md-workbench `-1 -2 -3`; all by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phases {
    pub precreate: bool,
    pub benchmark: bool,
    pub cleanup: bool,
}

impl Phases {
    pub const ALL: Phases = Phases {
        precreate: true,
        benchmark: true,
        cleanup: true,
    };
}

/// md-workbench's parameters, with its defaults.
#[derive(Debug, Clone, Copy)]
pub struct MdwParams {
    /// `-D`: datasets per rank.
    pub datasets: usize,
    /// `-I`: objects per dataset per iteration.
    pub per_iteration: u64,
    /// `-P`: objects precreated per dataset.
    pub precreate: u64,
    /// `-S`: object size in bytes.
    pub size: usize,
    /// `-O`: rank offset.
    pub offset: usize,
    /// `-R`: benchmark iterations.
    pub iterations: usize,
    pub phases: Phases,
    pub dataset_mode: DatasetMode,
}

impl Default for MdwParams {
    fn default() -> Self {
        MdwParams {
            datasets: 10,
            per_iteration: 1000,
            precreate: 3000,
            size: 3901,
            offset: 1,
            iterations: 3,
            phases: Phases::ALL,
            dataset_mode: DatasetMode::SingleBucket,
        }
    }
}

impl MdwParams {
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.datasets > 0, "-D/--datasets must be at least 1");
        anyhow::ensure!(self.per_iteration > 0, "-I/--objects must be at least 1");
        anyhow::ensure!(self.iterations > 0, "-R/--iterations must be at least 1");
        // Each iteration reads objects made before it: precreated or created
        // by an earlier iteration (upstream reads missing objects otherwise).
        anyhow::ensure!(
            self.precreate >= self.per_iteration,
            "-P/--precreate ({}) must be at least -I/--objects ({}): each iteration reads \
             objects that exist before it starts",
            self.precreate,
            self.per_iteration
        );
        anyhow::ensure!(
            self.precreate < 1 << 31 && self.per_iteration < 1 << 31,
            "-P and -I must be below 2^31"
        );
        anyhow::ensure!(self.size <= 64 << 20, "-S/--size must be at most 64 MiB");
        let p = self.phases;
        anyhow::ensure!(
            p.precreate || p.benchmark || p.cleanup,
            "no phase selected (-1, -2, -3)"
        );
        Ok(())
    }

    /// Total objects as md-workbench's header counts them.
    pub fn total_objects(&self, ranks: usize) -> u64 {
        self.datasets as u64
            * (self.per_iteration * self.iterations as u64 + self.precreate)
            * ranks as u64
    }
}

pub struct MdWorkbench {
    pub params: MdwParams,
}

impl Benchmark for MdWorkbench {
    fn name(&self) -> &'static str {
        "mdworkbench"
    }

    fn params(&self) -> Value {
        let p = &self.params;
        json!({
            "datasets": p.datasets,
            "objects_per_iteration": p.per_iteration,
            "precreate": p.precreate,
            "size": p.size,
            "offset": p.offset,
            "iterations": p.iterations,
            "phases": [p.phases.precreate, p.phases.benchmark, p.phases.cleanup],
            "dataset_mode": p.dataset_mode.as_str(),
        })
    }

    fn run(&self, t: &Target, out: &mut dyn Write) -> anyhow::Result<Vec<Row>> {
        let p = &self.params;
        p.validate()?;
        let ranks = t.opts.ranks;
        // A precreated set from an earlier run continues where it stopped.
        let (start_pos, seed) = if t.reused {
            anyhow::ensure!(
                !p.phases.precreate,
                "{} already holds a precreated set: run only -2 and/or -3 on it",
                t.dir.display()
            );
            let st = status::read(&t.dir)?;
            st.check(p, ranks)?;
            (st.pos, st.seed)
        } else {
            anyhow::ensure!(
                p.phases.precreate,
                "without -1 (precreate) give --reuse with the run directory of a --keep run"
            );
            (0, t.opts.seed)
        };
        // md-workbench keys carry `/` in one bucket: IOR's single-bucket mapping.
        let cfg = BackendConfig {
            s3_mode: S3Mode::SingleBucket,
            ..t.config.clone()
        };
        let storage = t.backend.open(&t.dir, &cfg)?;
        // Buckets per dataset need the client itself (kept alive, with any
        // gateway, until the run ends).
        let handle = match p.dataset_mode {
            DatasetMode::BucketPerDataset => t.backend.s3_client(&t.dir, &cfg)?,
            DatasetMode::SingleBucket => None,
        };
        let client = handle.as_ref().map(|h| h.client.clone());
        let layout = Layout::new(storage.clone(), client, p.dataset_mode, ranks, p.datasets);
        let root = t.opts.is_root();
        if !t.reused {
            on_root(t.opts.process_comm(), || {
                storage.setup().map(|()| Vec::new())
            })?;
        }
        let pattern = Pattern::new(seed, p.size);
        let started = Instant::now();
        report::header(out, p, ranks, t)?;
        let progress = if root {
            Progress::start("md-workbench")
        } else {
            Progress::silent()
        };
        let run = |comm: &dyn crate::comm::Comm| {
            run_rank(
                comm,
                &layout,
                p,
                &pattern,
                start_pos,
                &t.opts.stop,
                &progress,
            )
        };
        // Every rank returns the same outcome with the merged stats.
        let result = t.opts.each_rank(run);
        drop(progress);
        let (phases, pos) = result?;
        // Only rank 0 reports and cleans up, once every rank is done.
        t.opts.barrier();
        if !root {
            return Ok(Vec::new());
        }
        for ph in &phases {
            report::line(out, ph, p)?;
        }
        if p.phases.cleanup {
            // Cleanup deleted every object; what remains is the bucket.
            storage.remove_tree("")?;
            storage.teardown()?;
        } else {
            status::write(&t.dir, &status::Status::new(p, ranks, pos, seed))?;
        }
        writeln!(
            out,
            "Total runtime: {:.0}s time: {}",
            started.elapsed().as_secs_f64(),
            report::now()
        )?;
        Ok(rows(t, &phases, p))
    }
}

/// One `benchmark` row over all iterations (times, counts and latencies
/// add up); each iteration's rate goes into `iteration_rates`, as upstream
/// prints a line per iteration.
fn rows(t: &Target, phases: &[PhaseStats], p: &MdwParams) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut bench: Option<(PhaseStats, Vec<f64>)> = None;
    for ph in phases {
        if ph.name == "benchmark" {
            let rate = ph.rate();
            match &mut bench {
                None => bench = Some((ph.clone(), vec![rate])),
                Some((total, rates)) => {
                    total.absorb(ph);
                    rates.push(rate);
                }
            }
            continue;
        }
        if let Some((total, rates)) = bench.take() {
            rows.push(report::row(t, &total, p).with("iteration_rates", rates));
        }
        rows.push(report::row(t, ph, p));
    }
    if let Some((total, rates)) = bench.take() {
        rows.push(report::row(t, &total, p).with("iteration_rates", rates));
    }
    rows
}
