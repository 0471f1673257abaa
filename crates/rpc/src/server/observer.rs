//! What the gateway tells an observer about each request it answers: how
//! `s3hpc serve` feeds its access log and metrics (crates/http, which this
//! crate does not depend on) from RPC requests too.

use std::time::SystemTime;

/// One answered request.
#[derive(Debug, Clone)]
pub struct Served<'a> {
    /// When it had been read, and how long it took until its reply was
    /// written.
    pub time: SystemTime,
    pub micros: u64,
    /// `IP:PORT` over TCP; over a Unix socket `unix:pid=N,uid=U` as the
    /// kernel reports the peer; and the uid the request acted as (None: as
    /// the gateway itself).
    pub peer: &'a str,
    pub uid: Option<u32>,
    /// What was asked: the operation in S3's names, its bucket and key (a
    /// copy's destination).
    pub operation: &'static str,
    pub target: (Option<&'a str>, Option<&'a str>),
    /// The HTTP status S3 would have answered: 200 (206 for a range), the
    /// error's, or 499 when the connection broke first.
    pub status: u16,
    /// Body bytes in (a PUT's or part's announced length) and out (a GET's).
    pub bytes: (u64, u64),
}

/// Told of every request; shared by the gateway's threads.
pub trait Observer: Send + Sync + std::fmt::Debug {
    /// A request was read.
    fn begin(&self);
    /// It was answered, or its connection broke.
    fn end(&self, served: &Served<'_>);
}
