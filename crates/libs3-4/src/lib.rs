//! The libs3 4.x ABI (`libs3.so.4`, the interface of include/libs3.h,
//! which IOR/mdtest/md-workbench's S3-libs3 backend builds against) over
//! `s3hpc-libs3-core`, the core it shares with the 2.0 shim
//! (crates/libs3). Each exported function converts its C arguments and
//! calls the core.
//!
//! Every exported function is `unsafe extern "C"`: its safety contract is
//! the header's (valid pointers or NULL where allowed, NUL-terminated
//! strings, callbacks that honour their signatures).
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

mod bucket;
mod multipart;
mod object;
mod service;
mod unsupported;

/// The 4.x C types live in the core, shared with the bench's dlopen client.
use s3hpc_libs3_core::v4 as types;

pub use bucket::*;
pub use multipart::*;
pub use object::*;
pub use s3hpc_libs3_core::v4::*;
pub use service::*;
pub use unsupported::*;
