#![recursion_limit = "256"]
//! The libs3 2.0 ABI (`libs3.so.2`, Debian's `libs3.h`) over
//! `s3hpc-libs3-core`, which holds everything this shim shares with the
//! 4.x one (`libs3.so.4`, crates/libs3-4): transport selection, requests,
//! callbacks.
//!
//! Transport by host string (`S3HPC_LIBS3_HOST` overrides whatever the
//! program passes):
//! - `file:///path`: in-process, objects under /path;
//! - `unix:///path.sock`, `s3hpc://host:port`: the RPC gateway;
//! - anything else: S3 over HTTP to that host, signed with the caller's keys.

pub mod abi2;
