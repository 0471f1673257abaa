//! `s3hpc bucket`: buckets on a data directory and their layouts, through
//! the engine in this process (as the user running it).

use anyhow::Context;
use clap::{Args, Subcommand};
use s3hpc_store::{Layout, Store, StoreConfig};
use std::path::PathBuf;

#[derive(Args)]
pub struct DataDir {
    /// The data directory (as `s3hpc serve --data` serves it).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
}

#[derive(Subcommand)]
pub enum BucketCommand {
    /// Make a bucket with a layout: plain (a file per object, what POSIX
    /// programs see) or packed (objects up to --pack-max appended to a few
    /// pack files; larger ones stay files).
    Create {
        #[command(flatten)]
        data: DataDir,
        #[arg(long, default_value = "plain")]
        layout: Layout,
        #[command(flatten)]
        pack_max: PackMax,
        name: String,
    },
    /// The buckets, with their layouts, owners and (packed) thresholds.
    List {
        #[command(flatten)]
        data: DataDir,
    },
    /// Make an existing bucket packed: new small objects are packed, the
    /// files already in it stay objects as they are. Servers on the
    /// bucket see the change within a second.
    Pack {
        #[command(flatten)]
        data: DataDir,
        #[command(flatten)]
        pack_max: PackMax,
        name: String,
    },
    /// A packed bucket's objects (under --prefix) out as ordinary files:
    /// into --to DIR (keys as paths), or into the bucket itself, where they
    /// become plain objects again.
    Unpack {
        #[command(flatten)]
        data: DataDir,
        name: String,
        #[arg(long, default_value = "")]
        prefix: String,
        #[arg(long, value_name = "DIR")]
        to: Option<PathBuf>,
    },
    /// Rewrite a packed bucket's closed packs (sealed by their writers at
    /// 64 MiB, or left by a process of this host that is gone) where at
    /// least --min-garbage of the pack is deleted or overwritten objects,
    /// and remove them. Readers and writers go on meanwhile.
    Compact {
        #[command(flatten)]
        data: DataDir,
        name: String,
        #[arg(long, default_value_t = 0.5)]
        min_garbage: f64,
    },
    /// Read every record of a packed bucket's packs, check each against its
    /// checksum, and report the damaged ones (exit status 1 if any).
    Check {
        #[command(flatten)]
        data: DataDir,
        name: String,
    },
}

#[derive(Args)]
pub struct PackMax {
    /// Pack objects up to this size (k, m suffixes; at most 64m); larger
    /// ones stay files. Default 1m. Objects already stored stay where they
    /// are; servers follow a new threshold within a second. For example 4m
    /// makes IOR's 2 MiB transfers appends.
    #[arg(long, value_name = "SIZE", value_parser = crate::parse_size)]
    pack_max: Option<u64>,
}

impl PackMax {
    fn apply(&self, store: &Store, bucket: &str) -> anyhow::Result<()> {
        if let Some(n) = self.pack_max {
            store.set_pack_max(bucket, n)?;
        }
        Ok(())
    }
}

fn open(data: &DataDir) -> anyhow::Result<Store> {
    Store::open(&data.dir, StoreConfig::default())
        .with_context(|| format!("opening the data directory {}", data.dir.display()))
}

pub fn run(command: BucketCommand) -> anyhow::Result<i32> {
    match command {
        BucketCommand::Create {
            data,
            layout,
            pack_max,
            name,
        } => {
            if pack_max.pack_max.is_some() && layout != Layout::Packed {
                anyhow::bail!("--pack-max is for --layout packed: a plain bucket packs nothing");
            }
            let store = open(&data)?;
            store.create_bucket_with(&name, layout)?;
            pack_max.apply(&store, &name)?;
            println!("{name}\t{}", describe(&store, &name, layout));
        }
        BucketCommand::List { data } => {
            let store = open(&data)?;
            for b in store.list_buckets()? {
                let layout = store.bucket_layout(&b.name)?;
                let owner = b.owner.map_or_else(|| "-".into(), |u| u.to_string());
                println!("{}\t{}\t{owner}", b.name, describe(&store, &b.name, layout));
            }
        }
        BucketCommand::Pack {
            data,
            pack_max,
            name,
        } => {
            let store = open(&data)?;
            store.pack_bucket(&name)?;
            pack_max.apply(&store, &name)?;
            println!("{name}\t{}", describe(&store, &name, Layout::Packed));
        }
        BucketCommand::Unpack {
            data,
            name,
            prefix,
            to,
        } => {
            let done = open(&data)?.unpack(&name, &prefix, to.as_deref())?;
            let whereto = to.map_or_else(|| format!("bucket {name}"), |d| d.display().to_string());
            println!("{} objects written as files into {whereto}", done.written);
            for key in &done.damaged {
                println!("damaged, not written: {key} (`s3hpc bucket check` says where)");
            }
            if !done.damaged.is_empty() {
                return Ok(1);
            }
        }
        BucketCommand::Compact {
            data,
            name,
            min_garbage,
        } => {
            let done = open(&data)?.compact_bucket(&name, min_garbage)?;
            println!(
                "{} packs rewritten, {} records kept, {} bytes of dead records freed",
                done.packs, done.records, done.bytes_freed
            );
            if done.skipped > 0 {
                println!(
                    "{} packs of other users left alone: only root may compact them (the copies \
                     keep their owner)",
                    done.skipped
                );
            }
        }
        BucketCommand::Check { data, name } => {
            let (objects, damage) = open(&data)?.check_packs(&name)?;
            println!("{objects} objects in the packs of {name}");
            for (pack, at) in &damage {
                println!("damaged: pack {pack} at byte {at}");
            }
            if !damage.is_empty() {
                return Ok(1);
            }
        }
    }
    Ok(0)
}

/// A bucket's layout as `list` prints it: `packed<=4MiB` for a packed one.
fn describe(store: &Store, bucket: &str, layout: Layout) -> String {
    match store.pack_max(bucket) {
        Some(max) if layout == Layout::Packed => {
            let size = s3hpc_bench::explain::size_label(max).replace(' ', "");
            format!("packed<={size}")
        }
        _ => layout.as_str().to_string(),
    }
}
