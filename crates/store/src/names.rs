//! Bucket-name rules and the key → path mapping.
use crate::Result;
pub const MAX_KEY_LEN: usize = 1024;
pub fn validate_bucket_name(_name: &str) -> Result<()> { Ok(()) }
pub fn validate_key(_key: &str) -> Result<()> { Ok(()) }
