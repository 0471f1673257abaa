//! One payload (first byte: the op code) as a request, a reply and an error.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| s3hpc_rpc::fuzz::payloads(data));
