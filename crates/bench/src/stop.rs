//! The stop flag: how a run is asked to end early (Ctrl-C, SIGTERM).
//!
//! The phases check it where they check the stonewall, once per operation
//! (one relaxed atomic load), and turn it into an ordinary rank error, so the
//! existing collectives bring every rank out of the phase together and the
//! suite cleans up as after any failure. The library installs no signal
//! handler itself; the binary does, and stores the signal number here.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Shared between the signal handler and every rank. Holds 0 while the run
/// may go on, else the number of the signal that asked it to stop.
#[derive(Clone, Default, Debug)]
pub struct Stop(Arc<AtomicUsize>);

impl Stop {
    pub fn new() -> Stop {
        Stop::default()
    }

    /// The cell a signal handler writes the signal number into.
    pub fn cell(&self) -> Arc<AtomicUsize> {
        self.0.clone()
    }

    /// Asks the run to stop, as if `signal` had arrived.
    pub fn request(&self, signal: i32) {
        self.0.store(signal.max(1) as usize, Ordering::SeqCst);
    }

    /// The signal that asked the run to stop, if any.
    pub fn requested(&self) -> Option<i32> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            s => Some(s as i32),
        }
    }

    /// `Err(Interrupted)` once a stop was requested.
    pub fn check(&self) -> Result<(), Interrupted> {
        match self.requested() {
            None => Ok(()),
            Some(signal) => Err(Interrupted { signal }),
        }
    }
}

/// The error of a run that was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted by {}", signal_name(*.signal))]
pub struct Interrupted {
    pub signal: i32,
}

impl Interrupted {
    /// The shell's convention for death by a signal: 128 + its number (130
    /// for SIGINT, 143 for SIGTERM).
    pub fn exit_code(&self) -> i32 {
        128 + self.signal
    }
}

/// `SIGINT`, `SIGTERM`, ... or `signal N`.
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGQUIT => "SIGQUIT".into(),
        n => format!("signal {n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_and_codes() {
        let s = Stop::new();
        assert_eq!(s.requested(), None);
        assert!(s.check().is_ok());
        s.clone().request(libc::SIGINT);
        let e = s.check().unwrap_err();
        assert_eq!(e.exit_code(), 130);
        assert_eq!(e.to_string(), "interrupted by SIGINT");
        s.request(libc::SIGTERM);
        assert_eq!(s.check().unwrap_err().exit_code(), 143);
    }
}
