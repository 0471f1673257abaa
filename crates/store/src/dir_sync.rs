//! Directory syncs shared between the PUTs of one directory (group commit).
//!
//! With `--durability fsync` every PUT makes its new name durable with a
//! sync of its directory after the rename. PUTs that land in one directory
//! at once need only one sync between them: one that starts after all
//! their renames covers them all. So a PUT whose rename is done joins its
//! directory's queue; if no sync of that directory is running, it runs one
//! for everybody queued, else it waits for that sync to end and then for
//! the next, which another queued PUT (or it) runs. A sync's outcome
//! (also an error: the kernel reports a failed write-back once) is every
//! covered PUT's; a failure that is the runner's own (it may not open the
//! directory or its object) is not, and leaves the others queued.
//!
//! On ceph-fuse each directory sync asks the MDS to flush its journal and
//! waits for the unsafe requests of that directory; under 8 writers the
//! flushes queued at the one MDS.

use rustix::io::Errno;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// A directory, by device and inode: the one directory whatever path or
/// handle each PUT reached it by.
pub(crate) type DirId = (u64, u64);

/// The queues of the directories being synced. Each goes when nobody
/// waits on it.
#[derive(Default)]
pub(crate) struct DirSyncs {
    dirs: Mutex<HashMap<DirId, Arc<Queue>>>,
}

#[derive(Default)]
struct Queue {
    state: Mutex<State>,
    ended: Condvar,
}

#[derive(Default)]
struct State {
    next_ticket: u64,
    /// Tickets of PUTs waiting for a sync that has not started.
    waiting: Vec<u64>,
    running: bool,
    /// Outcomes of ended syncs for PUTs that have not taken them yet.
    outcomes: HashMap<u64, Result<(), Errno>>,
}

/// What a sync run for a queue gave: `Ok` with the sync's own outcome,
/// shared by every PUT it covered, or `Err` with the runner's own failure
/// before the sync (shared with nobody).
pub(crate) type Run<E> = std::result::Result<Result<(), Errno>, E>;

impl DirSyncs {
    /// Makes the caller's rename in directory `dir` durable: returns once
    /// a sync of `dir` that began after this call has ended, running
    /// `sync` itself if no other caller is (see the module documentation).
    pub(crate) fn sync<E>(&self, dir: DirId, sync: impl FnOnce() -> Run<E>) -> Run<E> {
        let queue = lock(&self.dirs).entry(dir).or_default().clone();
        let out = queue.wait_or_run(sync);
        let mut dirs = lock(&self.dirs);
        // Ours and the map's: nobody else can be queued on it.
        if Arc::strong_count(&queue) == 2 && lock(&queue.state).idle() {
            dirs.remove(&dir);
        }
        out
    }

    /// Tests: how many directories have queues.
    #[cfg(test)]
    fn queues(&self) -> usize {
        lock(&self.dirs).len()
    }
}

impl Queue {
    fn wait_or_run<E>(&self, sync: impl FnOnce() -> Run<E>) -> Run<E> {
        let mut st = lock(&self.state);
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.waiting.push(ticket);
        let mut sync = Some(sync);
        loop {
            if let Some(outcome) = st.outcomes.remove(&ticket) {
                return Ok(outcome);
            }
            if !st.running {
                if let Some(sync) = sync.take() {
                    st.running = true;
                    let covered = std::mem::take(&mut st.waiting);
                    drop(st);
                    let out = sync();
                    st = lock(&self.state);
                    st.running = false;
                    match &out {
                        Ok(outcome) => {
                            for t in covered.into_iter().filter(|&t| t != ticket) {
                                st.outcomes.insert(t, *outcome);
                            }
                        }
                        Err(_) => st
                            .waiting
                            .extend(covered.into_iter().filter(|&t| t != ticket)),
                    }
                    self.ended.notify_all();
                    return out;
                }
            }
            st = self.ended.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl State {
    fn idle(&self) -> bool {
        !self.running && self.waiting.is_empty() && self.outcomes.is_empty()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Callers that arrive while a sync runs share the next one, each gets
    /// its outcome, and the queue goes when all are done.
    #[test]
    fn callers_during_a_sync_share_the_next() {
        let syncs = Arc::new(DirSyncs::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let callers: Vec<_> = (0..8)
            .map(|i| {
                let (syncs, runs) = (syncs.clone(), runs.clone());
                std::thread::spawn(move || {
                    // The first runs a slow sync; the rest queue behind it.
                    std::thread::sleep(Duration::from_millis(if i == 0 { 0 } else { 20 }));
                    syncs.sync::<()>((1, 2), || {
                        runs.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(100));
                        Ok(Ok(()))
                    })
                })
            })
            .collect();
        for c in callers {
            assert_eq!(c.join().unwrap(), Ok(Ok(())));
        }
        // The first sync, then one (rarely two, on a loaded machine) for
        // the seven that queued behind it.
        let n = runs.load(Ordering::SeqCst);
        assert!((2..=3).contains(&n), "{n} syncs for 8 callers");
        assert_eq!(syncs.queues(), 0);
    }

    /// A failed sync fails every caller it covered; a runner's own failure
    /// is its own, and another caller runs the sync for the rest.
    #[test]
    fn failures_reach_whom_they_concern() {
        let syncs = Arc::new(DirSyncs::default());
        let (a, b) = (syncs.clone(), syncs.clone());
        let first = std::thread::spawn(move || {
            a.sync::<&str>((1, 2), || {
                std::thread::sleep(Duration::from_millis(100));
                Ok(Ok(()))
            })
        });
        std::thread::sleep(Duration::from_millis(20));
        let own = std::thread::spawn(move || b.sync::<&str>((1, 2), || Err("mine")));
        std::thread::sleep(Duration::from_millis(20));
        // Queued behind the first sync beside `own`, whose run fails
        // before syncing; this one then runs, and its error is shared by
        // nobody else.
        let c = syncs.clone();
        let shared = std::thread::spawn(move || c.sync::<&str>((1, 2), || Ok(Err(Errno::IO))));
        assert_eq!(first.join().unwrap(), Ok(Ok(())));
        let own = own.join().unwrap();
        let shared = shared.join().unwrap();
        // Whichever of the two ran first: `own` fails on its own, and the
        // other gets the outcome of a sync that covered it.
        assert!(matches!(own, Err("mine") | Ok(Err(Errno::IO))), "{own:?}");
        assert_eq!(shared, Ok(Err(Errno::IO)));
        assert_eq!(syncs.queues(), 0);
    }
}
