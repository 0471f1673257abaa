#![recursion_limit = "256"]
//! A libs3-compatible C library over `S3Client`.
//!
//! One core ([`core`]: which transport a host string names, how a request
//! runs, what can go wrong) and one thin shim per C ABI that only converts
//! between C types and the core. Today the shim is the libs3 2.0 ABI
//! ([`abi2`], Debian's `libs3.h`, soname `libs3.so.2`); a 4.x shim is meant
//! to sit beside it over the same core.
//!
//! Transport by host string (`S3HPC_LIBS3_HOST` overrides whatever the
//! program passes):
//! - `file:///path`: in-process, objects under /path;
//! - `unix:///path.sock`, `s3hpc://host:port`: the RPC gateway;
//! - anything else: S3 over HTTP to that host, signed with the caller's keys.

pub mod abi2;
pub mod core;
