//! What every ABI shim shares: transport selection, request execution and
//! the ABI-neutral outcome of a request.

mod body;
mod failure;
mod presign;
mod transport;

pub use body::{push_body, PullReader};
pub use failure::Failure;
pub use presign::presigned_url;
pub use transport::{client_for, forget_clients, set_default_host, Target, HOST_ENV};

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
