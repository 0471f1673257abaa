//! `Comm`: how ranks coordinate (rank, size, barrier, reductions, gathers).
//!
//! The benchmark phases only ever talk to this trait, so the thread ranks of
//! today and the MPI ranks of a later issue are interchangeable. Collectives
//! are byte-based (`allgather_bytes`) because that maps one-to-one onto
//! `MPI_Allgatherv` and lets any record (histograms, phase results) travel.

use std::sync::{Arc, Condvar, Mutex};

/// The reduction of `allreduce_u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    Max,
    Min,
    Sum,
}

/// Rank-to-rank coordination. Every rank must call the collectives in the
/// same order, as with MPI.
pub trait Comm: Send + Sync {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    fn barrier(&self);
    /// Every rank contributes `data`; every rank receives all contributions,
    /// indexed by rank.
    fn allgather_bytes(&self, data: &[u8]) -> Vec<Vec<u8>>;

    /// Contributions of all ranks on rank 0, `None` elsewhere.
    fn gather_bytes(&self, data: &[u8]) -> Option<Vec<Vec<u8>>> {
        let all = self.allgather_bytes(data);
        (self.rank() == 0).then_some(all)
    }

    fn allreduce_u64(&self, v: u64, op: ReduceOp) -> u64 {
        let all = self.allgather_bytes(&v.to_le_bytes());
        let vals = all
            .iter()
            .map(|b| u64::from_le_bytes(b[..8].try_into().expect("8-byte contribution")));
        match op {
            ReduceOp::Max => vals.max().unwrap_or(0),
            ReduceOp::Min => vals.min().unwrap_or(0),
            ReduceOp::Sum => vals.sum(),
        }
    }

    fn allreduce_max(&self, v: u64) -> u64 {
        self.allreduce_u64(v, ReduceOp::Max)
    }

    fn allreduce_sum(&self, v: u64) -> u64 {
        self.allreduce_u64(v, ReduceOp::Sum)
    }
}

/// State shared by the thread ranks of one run.
struct Shared {
    size: usize,
    state: Mutex<BarrierState>,
    cv: Condvar,
    slots: Mutex<Vec<Vec<u8>>>,
}

struct BarrierState {
    arrived: usize,
    generation: u64,
    /// Set when a rank panicked: the others would wait forever otherwise.
    aborted: bool,
}

/// Ranks as threads of one process.
pub struct ThreadComm {
    rank: usize,
    shared: Arc<Shared>,
}

impl ThreadComm {
    /// One communicator per rank, to be moved into the rank threads.
    pub fn create(size: usize) -> Vec<ThreadComm> {
        assert!(size > 0, "at least one rank");
        let shared = Arc::new(Shared {
            size,
            state: Mutex::new(BarrierState {
                arrived: 0,
                generation: 0,
                aborted: false,
            }),
            cv: Condvar::new(),
            slots: Mutex::new(vec![Vec::new(); size]),
        });
        (0..size)
            .map(|rank| ThreadComm {
                rank,
                shared: shared.clone(),
            })
            .collect()
    }

    /// Releases every rank waiting in a collective; they panic in turn, so a
    /// failed rank never leaves the others hanging.
    fn abort(&self) {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        st.aborted = true;
        self.shared.cv.notify_all();
    }
}

impl Comm for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.shared.size
    }

    fn barrier(&self) {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.aborted {
            panic!("another rank failed");
        }
        let gen = st.generation;
        st.arrived += 1;
        if st.arrived == self.shared.size {
            st.arrived = 0;
            st.generation += 1;
            self.shared.cv.notify_all();
            return;
        }
        while st.generation == gen {
            st = self.shared.cv.wait(st).unwrap_or_else(|e| e.into_inner());
            if st.aborted {
                panic!("another rank failed");
            }
        }
    }

    fn allgather_bytes(&self, data: &[u8]) -> Vec<Vec<u8>> {
        {
            let mut slots = self.shared.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots[self.rank].clear();
            slots[self.rank].extend_from_slice(data);
        }
        self.barrier();
        let all = self
            .shared
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        // Nobody may overwrite a slot before everyone has read it.
        self.barrier();
        all
    }
}

/// Runs `f` on `ranks` threads, each with its own `ThreadComm`, and returns
/// the results indexed by rank. A panicking rank aborts the others (instead
/// of deadlocking them in a barrier) and the first panic is re-raised.
pub fn run_threads<R, F>(ranks: usize, f: F) -> Vec<R>
where
    R: Send,
    F: Fn(&dyn Comm) -> R + Sync,
{
    let comms = ThreadComm::create(ranks);
    std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .into_iter()
            .map(|comm| {
                let f = &f;
                std::thread::Builder::new()
                    .name(format!("rank-{}", comm.rank))
                    .spawn_scoped(s, move || {
                        let out =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&comm)));
                        if out.is_err() {
                            comm.abort();
                        }
                        out
                    })
                    .expect("spawn rank thread")
            })
            .collect();
        let mut results = Vec::with_capacity(ranks);
        let mut first_panic = None;
        for h in handles {
            match h.join().expect("rank thread") {
                Ok(r) => results.push(r),
                Err(p) => {
                    // Keep the root cause, not the "another rank failed" echoes.
                    let echo = p
                        .downcast_ref::<&str>()
                        .is_some_and(|m| *m == "another rank failed");
                    let replace = match &first_panic {
                        None => true,
                        Some((_, first_is_echo)) => *first_is_echo && !echo,
                    };
                    if replace {
                        first_panic = Some((p, echo));
                    }
                }
            }
        }
        if let Some((p, _)) = first_panic {
            std::panic::resume_unwind(p);
        }
        results
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions_and_gathers() {
        let out = run_threads(4, |c| {
            let r = c.rank() as u64;
            let max = c.allreduce_max(r);
            let sum = c.allreduce_sum(r + 1);
            let min = c.allreduce_u64(r + 5, ReduceOp::Min);
            let g = c.gather_bytes(&[c.rank() as u8]);
            c.barrier();
            (max, sum, min, g)
        });
        for (rank, (max, sum, min, g)) in out.into_iter().enumerate() {
            assert_eq!((max, sum, min), (3, 10, 5));
            if rank == 0 {
                assert_eq!(g.unwrap(), vec![vec![0], vec![1], vec![2], vec![3]]);
            } else {
                assert!(g.is_none());
            }
        }
    }

    #[test]
    fn a_failing_rank_does_not_hang_the_others() {
        let r = std::panic::catch_unwind(|| {
            run_threads(3, |c| {
                if c.rank() == 1 {
                    panic!("boom");
                }
                c.barrier();
            })
        });
        let p = r.expect_err("must propagate the panic");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"boom"));
    }
}
