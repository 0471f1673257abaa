//! `s3hpc probe DIR`: what the file system under DIR can do, which paths
//! the engine takes there, what each metadata call costs, and settings that
//! break guarantees across nodes.

use anyhow::Context;
use clap::Args;
use s3hpc_store::{client_inode_cache, measure_costs, warnings, FsProfile};
use std::os::fd::AsFd;
use std::path::PathBuf;

#[derive(Args)]
pub struct ProbeArgs {
    /// A directory on the file system to probe (created if missing); the
    /// probe works in a hidden scratch directory inside it and removes it.
    dir: PathBuf,
    /// Calls timed per operation (the median is printed).
    #[arg(long, default_value_t = 50)]
    count: usize,
}

pub fn run(a: ProbeArgs, out: &mut impl std::io::Write) -> anyhow::Result<()> {
    std::fs::create_dir_all(&a.dir).with_context(|| format!("creating {}", a.dir.display()))?;
    let dir =
        std::fs::File::open(&a.dir).with_context(|| format!("opening {}", a.dir.display()))?;
    let p = FsProfile::probe(dir.as_fd());
    writeln!(out, "s3hpc probe {}", a.dir.display())?;
    write!(out, "{}", p.describe())?;
    writeln!(out, "engine paths:")?;
    writeln!(
        out,
        "  new keys:      {}",
        if p.tmpfile {
            "unnamed O_TMPFILE, linked in (linkat)"
        } else {
            "named temporary, renamed into place"
        }
    )?;
    writeln!(
        out,
        "  overwrites:    {}",
        if p.fs_name == "ext4" && p.rename_exchange {
            "rename-exchange (no ext4 replace-via-rename writeback)"
        } else {
            "rename over the key"
        }
    )?;
    if p.shared {
        writeln!(
            out,
            "  shared:        temporaries {}; no listing cache; directory handles checked against \
             the path on a miss; DELETE leaves emptied directories to listings; ESTALE {} \
             retried on GET/HEAD",
            if p.fcntl_locks {
                "fcntl-locked (sweeps leave live writers' ones)"
            } else {
                "NOT locked (no fcntl locks): only --sweep-age protects other nodes' writers"
            },
            match (p.rename_gap, p.rename_exchange) {
                (true, _) => "and ENOENT (3 times, 7 ms: a rename can leave the name missing)",
                (false, false) =>
                    "and ENOENT (3 times, 7 ms: nesting a key has no RENAME_EXCHANGE)",
                (false, true) => "(ENOENT not: renames are one step)",
            }
        )?;
    }
    writeln!(
        out,
        "  paging:        {}",
        if p.coherent_dir_stamps {
            "sorted windows reused while the directory's forced stat is unchanged"
        } else {
            "every page reads the directory (its stat may not show other clients' changes)"
        }
    )?;
    if p.stat_with_readdir {
        writeln!(
            out,
            "  listings:      files stat'ed as the readdir returns them (the client answers from what it brought)"
        )?;
    }
    if p.readdir_order_stats {
        let cache =
            client_inode_cache(&a.dir).map_or("not readable here".to_string(), |n| n.to_string());
        writeln!(
            out,
            "  listings:      a directory larger than the client's inode cache ({cache}) is stat'ed in readdir order beside the pages"
        )?;
    }
    if p.fuse {
        writeln!(out, "  HTTP GETs:     read, never mapped (FUSE)")?;
    }
    writeln!(out, "cost per call (median of {}, µs):", a.count)?;
    let costs = measure_costs(dir.as_fd(), a.count.max(1)).context("timing metadata calls")?;
    for (name, us) in costs {
        writeln!(out, "  {name:<14} {us:>10.1}")?;
    }
    let warns = warnings(&a.dir, &p);
    if warns.is_empty() {
        writeln!(
            out,
            "cross-node settings: nothing found that breaks read-after-write across nodes"
        )?;
    }
    for w in warns {
        writeln!(out, "WARNING: {w}")?;
    }
    Ok(())
}
