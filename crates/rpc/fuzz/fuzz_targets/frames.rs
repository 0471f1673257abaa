//! A connection's byte stream: frame headers, their bounds, and each
//! payload decoded as its kind says.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| s3hpc_rpc::fuzz::frames(data));
