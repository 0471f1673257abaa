//! Library setup, status helpers, bucket-name validation and request
//! contexts (requests run synchronously, so a context only has to exist):
//! all shared with the 4.x ABI word for word.

use super::types::*;
use super::S3Status;

s3hpc_libs3_core::shared_service_exports!(Abi2);
