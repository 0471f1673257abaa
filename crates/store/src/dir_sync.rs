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
//! covered PUT's; what is the runner's own (it may not open the directory,
//! and its `syncfs` instead may send nothing on FUSE) is not, and leaves
//! the others queued.
//!
//! On ceph-fuse each directory sync asks the MDS to flush its journal and
//! waits for the unsafe requests of that directory. On ext4 the journal
//! already batches the commits of concurrent syncs.

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

/// What a run of `sync` gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The directory's sync itself: every PUT it covered gets it (also an
    /// error: the kernel reports a failed write-back once).
    Shared(Result<(), Errno>),
    /// Good for the runner alone (it failed before syncing, or synced in a
    /// way that covers nobody else): the others stay queued.
    Own(Result<(), Errno>),
}

impl DirSyncs {
    /// Makes the caller's rename in directory `dir` durable: returns once
    /// a sync of `dir` that began after this call has ended, running
    /// `sync` itself if no other caller is (see the module documentation).
    pub(crate) fn sync(&self, dir: DirId, sync: impl FnOnce() -> Outcome) -> Outcome {
        let queue = lock(&self.dirs).entry(dir).or_default().clone();
        let handle = Handle {
            syncs: self,
            dir,
            queue: Some(queue),
        };
        handle.queue.as_ref().unwrap().wait_or_run(sync)
    }

    /// Tests: how many directories have queues.
    #[cfg(test)]
    fn queues(&self) -> usize {
        lock(&self.dirs).len()
    }
}

/// A caller's handle on its directory's queue. Let go on return and on
/// unwinding from a panicking sync alike: a handle dropped outside the
/// map's lock could leave the queue in the map with nobody to remove it.
struct Handle<'s> {
    syncs: &'s DirSyncs,
    dir: DirId,
    queue: Option<Arc<Queue>>,
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        // Every clone and drop of a queue's handle happens under the map's
        // lock, so the last caller out sees only its own and the map's.
        let mut dirs = lock(&self.syncs.dirs);
        let Some(queue) = self.queue.take() else {
            return;
        };
        let last = Arc::strong_count(&queue) == 2 && lock(&queue.state).idle();
        drop(queue);
        if last {
            dirs.remove(&self.dir);
        }
    }
}

impl Queue {
    fn wait_or_run(&self, sync: impl FnOnce() -> Outcome) -> Outcome {
        let mut st = lock(&self.state);
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.waiting.push(ticket);
        let mut sync = Some(sync);
        loop {
            if let Some(outcome) = st.outcomes.remove(&ticket) {
                return Outcome::Shared(outcome);
            }
            if !st.running {
                if let Some(sync) = sync.take() {
                    st.running = true;
                    let covered = std::mem::take(&mut st.waiting);
                    drop(st);
                    // Should `sync` panic, the others are queued again and
                    // woken, not left waiting for a run that never ends.
                    let mut run = Running {
                        queue: self,
                        covered,
                        ticket,
                        outcome: None,
                    };
                    let out = sync();
                    run.outcome = Some(out);
                    return out;
                }
            }
            st = self.ended.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A running sync: when it ends (or unwinds), hands its outcome to the
/// PUTs it covered, or queues them again, and wakes every waiter.
struct Running<'q> {
    queue: &'q Queue,
    covered: Vec<u64>,
    ticket: u64,
    outcome: Option<Outcome>,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut st = lock(&self.queue.state);
        st.running = false;
        let others = self.covered.drain(..).filter(|&t| t != self.ticket);
        match self.outcome {
            Some(Outcome::Shared(outcome)) => {
                for t in others {
                    st.outcomes.insert(t, outcome);
                }
            }
            Some(Outcome::Own(_)) | None => st.waiting.extend(others),
        }
        self.queue.ended.notify_all();
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
                    syncs.sync((1, 2), || {
                        runs.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(100));
                        Outcome::Shared(Ok(()))
                    })
                })
            })
            .collect();
        for c in callers {
            assert_eq!(c.join().unwrap(), Outcome::Shared(Ok(())));
        }
        // The first sync, then one (rarely two, on a loaded machine) for
        // the seven that queued behind it.
        let n = runs.load(Ordering::SeqCst);
        assert!((2..=3).contains(&n), "{n} syncs for 8 callers");
        assert_eq!(syncs.queues(), 0);
    }

    /// A failed sync fails every caller it covered; a runner's own outcome
    /// (a failure before syncing, or a sync that covers only it) is its
    /// own, and another caller runs the sync for the rest.
    #[test]
    fn outcomes_reach_whom_they_concern() {
        for own in [Err(Errno::ACCESS), Ok(())] {
            let syncs = Arc::new(DirSyncs::default());
            let (a, b, c) = (syncs.clone(), syncs.clone(), syncs.clone());
            let first = std::thread::spawn(move || {
                a.sync((1, 2), || {
                    std::thread::sleep(Duration::from_millis(100));
                    Outcome::Shared(Ok(()))
                })
            });
            std::thread::sleep(Duration::from_millis(20));
            let mine = std::thread::spawn(move || b.sync((1, 2), || Outcome::Own(own)));
            std::thread::sleep(Duration::from_millis(20));
            // Queued behind the first sync beside `mine`; whichever of the
            // two runs next, this one's outcome is a sync of its own run
            // or one that covered it, never `mine`'s own.
            let shared =
                std::thread::spawn(move || c.sync((1, 2), || Outcome::Shared(Err(Errno::IO))));
            assert_eq!(first.join().unwrap(), Outcome::Shared(Ok(())));
            let mine = mine.join().unwrap();
            assert!(
                mine == Outcome::Own(own) || mine == Outcome::Shared(Err(Errno::IO)),
                "{mine:?}"
            );
            assert_eq!(shared.join().unwrap(), Outcome::Shared(Err(Errno::IO)));
            assert_eq!(syncs.queues(), 0);
        }
    }

    /// A runner that panics leaves the others queued, and one of them
    /// runs the sync.
    #[test]
    fn a_panicking_runner_strands_nobody() {
        let syncs = Arc::new(DirSyncs::default());
        let (a, b) = (syncs.clone(), syncs.clone());
        let first = std::thread::spawn(move || {
            a.sync((1, 2), || {
                std::thread::sleep(Duration::from_millis(100));
                panic!("a sync that panics")
            })
        });
        std::thread::sleep(Duration::from_millis(20));
        let second = std::thread::spawn(move || b.sync((1, 2), || Outcome::Shared(Ok(()))));
        assert!(first.join().is_err());
        assert_eq!(second.join().unwrap(), Outcome::Shared(Ok(())));
        assert_eq!(syncs.queues(), 0);
    }
}
