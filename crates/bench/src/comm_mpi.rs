//! `Comm` over MPI (feature `mpi`): ranks are the processes `mpirun`
//! started, on one node or many. Collectives map one-to-one: barrier,
//! and `allgather_bytes` as an all-gather of the lengths followed by
//! `MPI_Allgatherv`, which carries every record (counters, histograms).

use crate::comm::Comm;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

pub struct MpiComm {
    world: SimpleCommunicator,
    /// Finalizes MPI when dropped, so it lives as long as the communicator.
    _universe: Universe,
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

impl MpiComm {
    /// Initializes MPI when launched by mpirun; `None` otherwise (ranks are
    /// threads then) or if MPI was already initialized.
    pub fn from_env() -> Option<MpiComm> {
        if !launched_by_mpirun() {
            return None;
        }
        let universe = mpi::initialize()?;
        Some(MpiComm {
            world: universe.world(),
            _universe: universe,
        })
    }
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
        let len = Count::try_from(data.len()).expect("a rank record under 2 GiB");
        let mut lens = vec![0 as Count; self.size()];
        self.world.all_gather_into(&len, &mut lens[..]);
        let displs: Vec<Count> = lens
            .iter()
            .scan(0, |at, &l| {
                let d = *at;
                *at += l;
                Some(d)
            })
            .collect();
        let total = lens.iter().map(|&l| l as usize).sum();
        let mut buf = vec![0u8; total];
        {
            let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
            self.world.all_gather_varcount_into(data, &mut part);
        }
        lens.iter()
            .zip(&displs)
            .map(|(&l, &d)| buf[d as usize..(d + l) as usize].to_vec())
            .collect()
    }
}
