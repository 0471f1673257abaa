#![recursion_limit = "256"]
//! What every libs3 ABI shim shares: transport selection, the C types both
//! ABIs lay out alike, and every request from C arguments to callbacks.
//! A shim (`libs3.so.2`, `libs3.so.4`) only declares its own statuses and
//! the structs that differ, and exports thin functions onto [`calls`],
//! [`multipart`] and [`service`].

pub mod cabi;
pub mod calls;
pub mod ctext;
pub mod layout;
pub mod multipart;
pub mod request;
pub mod service;
pub mod v4;

mod body;
mod failure;
mod presign;
mod status;
mod transport;

pub use body::{push_body, PullReader};
pub use failure::{BucketNameProblem, Failure};
pub use presign::{presigned_url_v2, presigned_url_v4};
pub use transport::{
    client_for, client_for_ref, forget_clients, set_default_host, with_client, Target, TargetRef,
    HOST_ENV,
};

/// Runs `f`, turning a panic into a failure so it never unwinds into C.
pub fn guarded<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            Err(Failure::Internal(format!("internal error: {msg}")))
        }
    }
}
