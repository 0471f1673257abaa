//! The alternative to a thread per connection: a fixed number of worker
//! threads, each waiting on its connections with epoll and serving a
//! request when one arrives (`s3hpc serve --workers N`). Fewer threads for
//! thousands of mostly idle connections, at the price of one `epoll_wait`
//! per request and of a worker being busy with one connection's request
//! while another of its connections waits. ARCHITECTURE.md compares both.

use super::session::{Next, Session};
use super::Shared;
use crate::addr::Stream;
use rustix::event::epoll;
use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

pub(super) struct Workers {
    workers: Vec<Arc<Worker>>,
    next: AtomicUsize,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

struct Worker {
    epoll: std::os::fd::OwnedFd,
    /// Sessions by connection id; a session is taken out while served.
    sessions: Mutex<HashMap<u64, Session>>,
}

impl Workers {
    pub(super) fn start(shared: &Arc<Shared>, n: usize) -> io::Result<Workers> {
        let mut workers = Vec::new();
        let mut threads = Vec::new();
        for i in 0..n.max(1) {
            let w = Arc::new(Worker {
                epoll: epoll::create(epoll::CreateFlags::CLOEXEC)?,
                sessions: Mutex::new(HashMap::new()),
            });
            let (me, shared) = (w.clone(), shared.clone());
            threads.push(
                std::thread::Builder::new()
                    .name(format!("rpc-worker-{i}"))
                    .spawn(move || me.run(&shared))?,
            );
            workers.push(w);
        }
        Ok(Workers {
            workers,
            next: AtomicUsize::new(0),
            threads: Mutex::new(threads),
        })
    }

    /// Hands a new connection to the next worker.
    pub(super) fn add(
        &self,
        id: u64,
        stream: Stream,
        client: Arc<dyn s3hpc_client::S3Client>,
    ) -> io::Result<()> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.workers.len();
        let w = &self.workers[i];
        let session = Session::new(stream, client);
        let data = epoll::EventData::new_u64(id);
        epoll::add(&w.epoll, session.fd(), data, epoll::EventFlags::IN)?;
        w.sessions.lock().expect("not poisoned").insert(id, session);
        Ok(())
    }

    /// Waits for the workers, which end once stopping and idle.
    pub(super) fn join(&self) {
        for t in self.threads.lock().expect("not poisoned").drain(..) {
            let _ = t.join();
        }
    }
}

impl Worker {
    fn run(&self, shared: &Shared) {
        let mut events = Vec::with_capacity(64);
        let tick = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        };
        loop {
            events.clear();
            if let Err(e) = epoll::wait(
                &self.epoll,
                rustix::buffer::spare_capacity(&mut events),
                Some(&tick),
            ) {
                if e != rustix::io::Errno::INTR {
                    shared.log(format_args!("epoll_wait failed: {e}"));
                    return;
                }
            }
            for ev in &events {
                self.serve(shared, ev.data.u64());
            }
            if shared.stopping() && self.sessions.lock().expect("not poisoned").is_empty() {
                return;
            }
        }
    }

    /// Serves what connection `id` sent: one request, and any others that
    /// arrived with it in the same read.
    fn serve(&self, shared: &Shared, id: u64) {
        // Registered before its session is inserted: the next event finds it.
        let Some(mut session) = self.sessions.lock().expect("not poisoned").remove(&id) else {
            return;
        };
        loop {
            match session.serve_one(&shared.opts) {
                Ok(Next::Open) if session.has_buffered_input() => continue,
                Ok(Next::Open) => {
                    self.sessions
                        .lock()
                        .expect("not poisoned")
                        .insert(id, session);
                    return;
                }
                Ok(Next::Closed) => {}
                Err(e) => shared.log(format_args!("{}: {e}; connection closed", session.peer())),
            }
            let _ = epoll::delete(&self.epoll, session.fd());
            drop(session);
            shared.forget(id);
            return;
        }
    }
}
