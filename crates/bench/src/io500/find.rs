//! find: `-newer <timestamp> -size 3901c -name "*01*"` over the whole tree.
//! POSIX walks directories (readdir + stat, as pfind); S3 lists (paged,
//! 1000 keys, with `/` as delimiter), taking size and mtime from the listing.
//!
//! Ranks split the walk level by level: every directory of a level goes to
//! one rank (round robin over the sorted level), and the subdirectories found
//! are exchanged with an allgather. That is deterministic and needs nothing
//! but `Comm`, so it works unchanged under MPI; the cost is that a single
//! huge directory (mdtest-hard's) is listed by one rank, for both backends.

use super::phase::{finish, RankStats};
use super::{Group, PhaseResult};
use crate::comm::Comm;
use crate::stop::Stop;
use crate::storage::{join, Entry, StorageApi};
use std::time::{Instant, SystemTime};

/// What find looks for.
pub struct Filter {
    pub newer: SystemTime,
    pub size: u64,
    pub name_contains: &'static str,
}

impl Filter {
    pub fn io500(newer: SystemTime) -> Filter {
        Filter {
            newer,
            size: super::mdtest::HARD_FILE_SIZE as u64,
            name_contains: "01",
        }
    }
}

/// Runs find. `ops` counts files scanned (the IO500 score), `matches` hits.
/// Latency is recorded per directory listed.
pub fn run(
    comm: &dyn Comm,
    storage: &dyn StorageApi,
    filter: &Filter,
    stop: &Stop,
) -> anyhow::Result<Option<PhaseResult>> {
    let (rank, ranks) = (comm.rank(), comm.size());
    let mut st = RankStats::new(stop);
    let mut level: Vec<String> = vec![String::new()];

    comm.barrier();
    let start = Instant::now();
    while !level.is_empty() {
        let mut found = String::new();
        for dir in level.iter().skip(rank).step_by(ranks) {
            if !st.keep_going() {
                break;
            }
            let t0 = Instant::now();
            let (mut scanned, mut matches) = (0u64, 0u64);
            let r = storage.list_dir(dir, &mut |e| match e {
                Entry::File { name, stat } => {
                    scanned += 1;
                    if stat.mtime > filter.newer
                        && stat.size == filter.size
                        && name.contains(filter.name_contains)
                    {
                        matches += 1;
                    }
                }
                Entry::Dir { name } => {
                    found.push_str(&join(dir, name));
                    found.push('\n');
                }
            });
            st.latency.record(t0.elapsed());
            st.ops += scanned;
            st.matches += matches;
            if let Err(e) = r {
                st.fail(e);
            }
        }
        // Every rank gets the next level, in the same order.
        let all = comm.allgather_bytes(found.as_bytes());
        level = all
            .iter()
            .flat_map(|b| {
                String::from_utf8_lossy(b)
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        level.sort();
    }
    st.elapsed = start.elapsed();
    finish(comm, "find", Group::Metadata, st)
}
