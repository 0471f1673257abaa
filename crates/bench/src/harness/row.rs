//! The flat result row every benchmark writes: the same fields as the IO500
//! rows (`benchmark`, `backend`, `phase`, `value`, `unit`, `ops`, `bytes`,
//! `seconds`, `latency`, `iteration`, `transport`), plus the benchmark's own
//! extras (`obj_per_s`, `object_size`, ...) at the same level.

use crate::backend::Backend;
use crate::latency::{Latency, LatencySummary};
use serde::Serialize;
use serde_json::{Map, Value};

/// The fields every result row has, of every benchmark (IO500's too):
/// what readers of the JSON can rely on.
pub const FIELDS: [&str; 11] = [
    "benchmark",
    "backend",
    "phase",
    "value",
    "unit",
    "ops",
    "bytes",
    "seconds",
    "latency",
    "iteration",
    "transport",
];

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub benchmark: &'static str,
    pub backend: String,
    pub phase: String,
    pub value: f64,
    pub unit: &'static str,
    pub ops: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub latency: LatencySummary,
    pub iteration: usize,
    pub transport: &'static str,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Row {
    pub fn new(
        benchmark: &'static str,
        backend: Backend,
        phase: impl Into<String>,
        unit: &'static str,
    ) -> Row {
        Row {
            benchmark,
            backend: backend.name().to_string(),
            phase: phase.into(),
            value: 0.0,
            unit,
            ops: 0,
            bytes: 0,
            seconds: 0.0,
            latency: LatencySummary::default(),
            iteration: 0,
            // Benchmarks outside StorageApi talk to the file system or to
            // the backend's S3 client; both are named by the backend.
            transport: backend.name(),
            extra: Map::new(),
        }
    }

    /// Sets ops, bytes, seconds and the latency; `value` stays the caller's.
    pub fn measured(mut self, ops: u64, bytes: u64, seconds: f64, latency: &Latency) -> Row {
        self.ops = ops;
        self.bytes = bytes;
        self.seconds = seconds;
        self.latency = latency.summary();
        self
    }

    pub fn value(mut self, value: f64) -> Row {
        self.value = if value.is_finite() { value } else { 0.0 };
        self
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Row {
        self.extra.insert(key.to_string(), value.into());
        self
    }
}

/// `n / seconds`, 0 for an empty interval.
pub fn rate(n: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n / seconds
    } else {
        0.0
    }
}

pub const MIB: f64 = (1u64 << 20) as f64;
