//! A one-line progress display (phase, elapsed, ops/s) on the terminal for
//! phases longer than a couple of seconds. Silent unless stdout and stderr
//! are terminals (and not under mpirun), so logs and pipes get only the
//! results; when silent, counting is one branch.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Nothing is shown for phases shorter than this.
const QUIET_START: Duration = Duration::from_secs(2);
const REFRESH: Duration = Duration::from_millis(500);

pub struct Progress {
    shared: Option<Arc<Shared>>,
    painter: Option<JoinHandle<()>>,
}

struct Shared {
    ops: AtomicU64,
    done: AtomicBool,
}

impl Progress {
    /// Starts the display of `phase` when stdout is a terminal.
    pub fn start(phase: &str) -> Progress {
        // mpirun hands its ranks a pseudo-terminal and merges their
        // streams: a redrawn line would garble the results there.
        let under_mpirun = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
            .iter()
            .any(|v| std::env::var_os(v).is_some());
        if !std::io::stdout().is_terminal() || !std::io::stderr().is_terminal() || under_mpirun {
            return Progress::silent();
        }
        let shared = Arc::new(Shared {
            ops: AtomicU64::new(0),
            done: AtomicBool::new(false),
        });
        let s = shared.clone();
        let phase = phase.to_string();
        let painter = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || paint(&phase, &s))
            .ok();
        Progress {
            shared: Some(shared),
            painter,
        }
    }

    pub fn silent() -> Progress {
        Progress {
            shared: None,
            painter: None,
        }
    }

    /// Counts `n` finished operations.
    #[inline]
    pub fn add(&self, n: u64) {
        if let Some(s) = &self.shared {
            s.ops.fetch_add(n, Ordering::Relaxed);
        }
    }
}

fn paint(phase: &str, s: &Shared) {
    let start = Instant::now();
    let mut shown = false;
    while !s.done.load(Ordering::Relaxed) {
        std::thread::sleep(REFRESH);
        let t = start.elapsed();
        if t < QUIET_START {
            continue;
        }
        let ops = s.ops.load(Ordering::Relaxed);
        let rate = ops as f64 / t.as_secs_f64();
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[K{phase}: {:.0} s, {ops} ops, {rate:.0} ops/s",
            t.as_secs_f64()
        );
        let _ = err.flush();
        shown = true;
    }
    if shown {
        let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(s) = &self.shared {
            s.done.store(true, Ordering::Relaxed);
        }
        if let Some(h) = self.painter.take() {
            let _ = h.join();
        }
    }
}
