//! The conformance suite every transport runs: the same S3 behaviour checked
//! through the [`S3Client`] trait alone, so the embedded, RPC, HTTP and libs3
//! transports are held to one contract instead of one copy of the tests each.
//!
//! Compiled only with the `conformance` feature. A transport's test file is a
//! few lines:
//!
//! ```ignore
//! use s3hpc_conformance::{run_all, Fixture};
//!
//! #[test]
//! fn conformance() {
//!     run_all("default", &|| {
//!         let dir = tempfile::tempdir().unwrap();
//!         let client = MyTransport::start(dir.path()); // over a fresh data root
//!         Fixture::new(client, dir) // the guard keeps the directory alive
//!     });
//! }
//! ```
//!
//! [`run_all`] builds a fresh fixture for every check, creates a bucket of the
//! check's own in it, runs the check and goes on after a failure; at the end
//! it panics with one line per failed check, `<transport> (<label>) <check>:
//! <message>`. `S3HPC_CONFORMANCE=name,name` runs only the named checks.
//!
//! Checks use only the trait (never the file system), and each states the
//! contract it holds a transport to in its doc comment.

mod access;
mod buckets;
mod client_api;
mod conditions;
mod headers;
mod helpers;
mod hostile;
mod listing;
mod multipart;
mod objects;
mod versioning;

use access::*;
use buckets::*;
use client_api::*;
use conditions::*;
use headers::*;
use hostile::*;
use listing::*;
use multipart::*;
use objects::*;
use s3hpc_client::S3Client;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use versioning::*;

/// One check: a client and the name of a bucket that exists, is empty and
/// belongs to this check alone. A check panics (assert) when the transport
/// breaks the contract.
pub type Check = fn(&dyn S3Client, &str);

/// A client over a fresh data root, and whatever must live as long as it (a
/// temporary directory, a server thread).
pub struct Fixture {
    pub client: Box<dyn S3Client>,
    pub guard: Box<dyn Any>,
}

impl Fixture {
    pub fn new(client: impl S3Client + 'static, guard: impl Any) -> Fixture {
        Fixture {
            client: Box::new(client),
            guard: Box::new(guard),
        }
    }
}

/// Every check, by name.
pub const CHECKS: &[(&str, Check)] = &[
    ("bucket_lifecycle", bucket_lifecycle),
    ("bucket_name_rules", bucket_name_rules),
    ("missing_bucket", missing_bucket),
    ("put_get_head_round_trip", put_get_head_round_trip),
    ("empty_object", empty_object),
    ("missing_key", missing_key),
    ("special_character_keys", special_character_keys),
    ("max_length_key", max_length_key),
    ("folder_markers", folder_markers),
    ("object_and_prefix", object_and_prefix),
    ("put_stream_with_len", put_stream_with_len),
    ("put_stream_without_len", put_stream_without_len),
    (
        "put_stream_short_is_incomplete",
        put_stream_short_is_incomplete,
    ),
    ("ranged_get", ranged_get),
    ("invalid_range", invalid_range),
    ("delete_is_idempotent", delete_is_idempotent),
    ("delete_prunes_prefixes", delete_prunes_prefixes),
    ("copy_keeps_metadata", copy_keeps_metadata),
    ("copy_replaces_metadata", copy_replaces_metadata),
    ("overwrite_replaces", overwrite_replaces),
    ("list_byte_order", list_byte_order),
    ("list_prefix", list_prefix),
    ("list_delimiter", list_delimiter),
    ("list_start_after", list_start_after),
    ("list_paging", list_paging),
    ("list_paging_with_delimiter", list_paging_with_delimiter),
    ("hostile_keys", hostile_keys),
    ("multipart_round_trip", multipart_round_trip),
    ("multipart_abort", multipart_abort),
    ("multipart_complete_retried", multipart_complete_retried),
    (
        "multipart_parts_after_completion",
        multipart_parts_after_completion,
    ),
    ("multipart_invalid_part_order", multipart_invalid_part_order),
    ("multipart_entity_too_small", multipart_entity_too_small),
    ("multipart_invalid_part", multipart_invalid_part),
    ("read_exact_body_length", read_exact_body_length),
    ("put_checksum_verified", put_checksum_verified),
    ("conditional_put", conditional_put),
    (
        "conditional_put_none_match_etag",
        conditional_put_none_match_etag,
    ),
    ("conditional_delete", conditional_delete),
    (
        "conditional_copy_and_complete",
        conditional_copy_and_complete,
    ),
    ("conditional_races", conditional_races),
    ("object_tagging", object_tagging),
    ("versions_kept", versions_kept),
    ("standard_headers", standard_headers),
    ("acl_refused_changes_nothing", acl_refused_changes_nothing),
    ("acl_given_with_writes", acl_given_with_writes),
    (
        "error_messages_reach_the_caller",
        error_messages_reach_the_caller,
    ),
];

/// Runs every check (or those named in `S3HPC_CONFORMANCE`), each against a
/// fresh fixture from `make`, and panics naming every check that failed and
/// the transport. `label` tells runs of one transport apart (`md5`, `fast`).
pub fn run_all(label: &str, make: &dyn Fn() -> Fixture) {
    run_all_except(label, make, &[]);
}

/// As [`run_all`], leaving out the checks in `except`: `(name, why)` pairs
/// for what a client's API cannot express (the reason is printed).
pub fn run_all_except(label: &str, make: &dyn Fn() -> Fixture, except: &[(&str, &str)]) {
    let only = std::env::var("S3HPC_CONFORMANCE").unwrap_or_default();
    let only: Vec<&str> = only.split(',').filter(|s| !s.is_empty()).collect();
    let named = only.iter().chain(except.iter().map(|(n, _)| n));
    if let Some(bad) = named
        .into_iter()
        .find(|n| !CHECKS.iter().any(|c| c.0 == **n))
    {
        panic!("{bad:?} names no conformance check");
    }
    let mut failed = Vec::new();
    let mut ran = 0;
    let mut transport = "?";
    for (i, &(name, check)) in CHECKS.iter().enumerate() {
        if !only.is_empty() && !only.contains(&name) {
            continue;
        }
        if let Some((_, why)) = except.iter().find(|(n, _)| *n == name) {
            eprintln!("conformance ({label}): {name} left out: {why}");
            continue;
        }
        ran += 1;
        let fixture = make();
        let client = fixture.client.as_ref();
        transport = client.transport();
        let bucket = format!("conformance-{i:02}");
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            client
                .create_bucket(&bucket)
                .unwrap_or_else(|e| panic!("creating the check's bucket {bucket}: {e}"));
            check(client, &bucket);
        }));
        if let Err(panic) = outcome {
            let msg = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            failed.push(format!("{transport} ({label}) {name}: {msg}"));
        }
        drop(fixture);
    }
    eprintln!(
        "conformance {transport} ({label}): {} of {ran} checks passed",
        ran - failed.len()
    );
    if !failed.is_empty() {
        panic!(
            "{} of {ran} conformance checks failed:\n{}",
            failed.len(),
            failed.join("\n")
        );
    }
}
