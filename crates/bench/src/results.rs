//! What a suite run produced, as the printers and the summary read it: the
//! run's metadata and each backend's phase results. `suite` fills these in;
//! `summary` and `output` only read them, so data flows one way.

use crate::io500::score::Score;
use crate::io500::{Caps, PhaseResult};
use crate::slurm::SlurmJob;
use serde::Serialize;

/// The bench's version, as results record it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Run metadata, as it appears in the JSON.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub label: Option<String>,
    pub host: String,
    pub start_time: String,
    pub unix_time: u64,
    pub version: String,
    pub ranks: usize,
    pub stonewall_seconds: f64,
    pub dir: String,
    pub run_dir: String,
    pub filesystem: String,
    pub free_bytes: Option<u64>,
    pub etag: &'static str,
    pub durability: &'static str,
    /// The S3 backends' bucket layout (written only when packed).
    #[serde(skip_serializing_if = "is_plain")]
    pub layout: &'static str,
    /// The size up to which packed buckets packed objects, if not the
    /// engine's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pack_max: Option<u64>,
    pub s3_mode: &'static str,
    pub caps: Caps,
    pub caps_lowered: bool,
    pub seed: u64,
    pub backends: Vec<String>,
    pub repeat: usize,
    pub kept: bool,
    /// The Slurm job the run was part of; absent outside Slurm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slurm: Option<SlurmJob>,
}

/// One backend's results in one repetition.
#[derive(Debug, Clone)]
pub struct BackendReport {
    pub backend: String,
    /// The repetition, from 0.
    pub iteration: usize,
    pub transport: String,
    pub api: String,
    pub results: Vec<PhaseResult>,
    pub score: Score,
}

/// `YYYY-MM-DDTHH:MM:SSZ` from Unix seconds (civil-from-days, no crate).
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn is_plain(layout: &&'static str) -> bool {
    *layout == "plain"
}
