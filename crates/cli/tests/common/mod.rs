//! What the CLI tests share.

/// The fields every result row of every benchmark has.
pub const ROW_FIELDS: [&str; 11] = [
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
