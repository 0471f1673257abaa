//! The libs3 4.x C types (`crates/libs3-4/include/libs3.h`): statuses and
//! the structs 4.x extends. Here rather than in the `libs3.so.4` shim
//! because two sides use them: the shim that exports the 4.x functions,
//! and the bench's `libs3` backend that calls any 4.x library by dlopen
//! (and must not link the shim's exported symbols).

mod status;
mod types;

pub use status::{S3Status, ALL as ALL_STATUSES};
pub use types::*;
