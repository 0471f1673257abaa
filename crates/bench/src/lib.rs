//! s3hpc-bench: HPC access patterns (the IO500 phases) over POSIX and S3,
//! side by side, with per-op latency and IO500-comparable output.
//!
//! Layers: phases (`io500`) → `StorageApi` (`storage::posix`, `storage::s3`
//! over any `S3Client`) with ranks coordinating through `Comm`. `backend`
//! names the storage stacks; `suite` runs them one after another in a run
//! directory it owns, and `output` prints and saves the results.

pub mod backend;
pub mod comm;
#[cfg(feature = "mpi")]
pub mod comm_mpi;
pub mod explain;
pub mod harness;
pub mod io500;
pub mod latency;
pub mod libs3;
pub mod mdworkbench;
pub mod objbench;
pub mod output;
pub mod pattern;
pub mod results;
pub mod rundir;
pub mod slurm;
pub mod stats;
pub mod stop;
pub mod storage;
pub mod suite;
pub mod summary;
pub mod warp;
