//! `Comm` over MPI (feature `mpi`): ranks are the processes `mpirun`
//! started, on one node or many. Collectives map one-to-one: barrier,
//! `allgather_bytes` as an all-gather of the lengths followed by
//! `MPI_Allgatherv`, and `gather_bytes` as `MPI_Gatherv` to rank 0 (so
//! large records, such as warp's per-request log, land on rank 0 only).
//!
//! MPI is initialized once per process (`world`) and finalized only by
//! `finalize`, after a run that every rank completed: a rank that fails
//! or panics exits without finalizing, which makes mpirun end the other
//! ranks instead of leaving them waiting in a collective.

use crate::comm::Comm;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use std::sync::{Arc, Mutex, OnceLock};

pub struct MpiComm {
    world: SimpleCommunicator,
    /// Finalizes MPI when dropped; taken out only by `finalize`.
    universe: Mutex<Option<Universe>>,
}

// `Comm` is `Send + Sync` because thread ranks share one. An `MpiComm` is
// one rank per process, and only the thread that runs that rank calls into
// MPI (initialized single-threaded), so no MPI call is ever concurrent.
unsafe impl Send for MpiComm {}
unsafe impl Sync for MpiComm {}

/// Whether this process was started by mpirun (Open MPI, or any PMI/PMIx
/// launcher).
pub fn launched_by_mpirun() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// The process's world; held in a static so that nothing (no unwinding
/// panic) finalizes MPI behind `finalize`'s back.
static WORLD: OnceLock<Option<Arc<MpiComm>>> = OnceLock::new();

/// This process's rank when launched by mpirun (MPI initialized on the
/// first call); `None` otherwise (ranks are threads then).
pub fn world() -> Option<Arc<MpiComm>> {
    WORLD
        .get_or_init(|| {
            if !launched_by_mpirun() {
                return None;
            }
            let universe = mpi::initialize()?;
            Some(Arc::new(MpiComm {
                world: universe.world(),
                universe: Mutex::new(Some(universe)),
            }))
        })
        .clone()
}

/// Finalizes MPI after a run every rank finished (a no-op without MPI).
pub fn finalize() {
    if let Some(Some(c)) = WORLD.get() {
        let universe = c.universe.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(universe);
    }
}

/// Displacements of consecutive parts of the given lengths.
fn displacements(lens: &[Count]) -> Vec<Count> {
    lens.iter()
        .scan(0, |at, &l| {
            let d = *at;
            *at += l;
            Some(d)
        })
        .collect()
}

/// Splits a gathered buffer into the contributions of each rank.
fn split(buf: &[u8], lens: &[Count], displs: &[Count]) -> Vec<Vec<u8>> {
    lens.iter()
        .zip(displs)
        .map(|(&l, &d)| buf[d as usize..(d + l) as usize].to_vec())
        .collect()
}

fn count(data: &[u8]) -> Count {
    Count::try_from(data.len()).expect("a rank record under 2 GiB")
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn barrier(&self) {
        self.world.barrier();
    }

    fn allgather_bytes(&self, data: &[u8]) -> Vec<Vec<u8>> {
        let mut lens = vec![0 as Count; self.size()];
        self.world.all_gather_into(&count(data), &mut lens[..]);
        let displs = displacements(&lens);
        let mut buf = vec![0u8; lens.iter().map(|&l| l as usize).sum()];
        // Open MPI rejects an all-empty gather (no buffer to point at).
        if !buf.is_empty() {
            let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
            self.world.all_gather_varcount_into(data, &mut part);
        }
        split(&buf, &lens, &displs)
    }

    fn gather_bytes(&self, data: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0);
        // Everyone learns whether anything is sent at all (see above).
        let mut total: Count = 0;
        self.world.all_reduce_into(
            &count(data),
            &mut total,
            mpi::collective::SystemOperation::sum(),
        );
        if self.rank() != 0 {
            root.gather_into(&count(data));
            if total > 0 {
                root.gather_varcount_into(data);
            }
            return None;
        }
        let mut lens = vec![0 as Count; self.size()];
        root.gather_into_root(&count(data), &mut lens[..]);
        let displs = displacements(&lens);
        let mut buf = vec![0u8; lens.iter().map(|&l| l as usize).sum()];
        if total > 0 {
            let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
            root.gather_varcount_into_root(data, &mut part);
        }
        Some(split(&buf, &lens, &displs))
    }
}
