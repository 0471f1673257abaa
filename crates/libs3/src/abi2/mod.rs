//! The libs3 2.0 ABI (Debian's `libs3.h`, soname `libs3.so.2`): C types and
//! the exported functions, each a thin conversion onto [`crate::core`].
//!
//! Every exported function is `unsafe extern "C"`: its safety contract is
//! the one libs3's header documents (valid pointers or NULL where allowed,
//! NUL-terminated strings, callbacks that honour their signatures).

// Each exported function's `# Safety` is the header's contract, stated once
// above rather than 27 times.
#![allow(clippy::missing_safety_doc)]

mod bucket;
mod object;
mod service;
mod status;
mod types;
mod unsupported;

pub use bucket::*;
pub use object::*;
pub use s3hpc_libs3_core::service::validate_bucket_name;
pub use service::*;
pub use status::{S3Status, ALL as ALL_STATUSES};
pub use types::*;
pub use unsupported::*;
