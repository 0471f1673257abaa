pub const STALE_AGE: std::time::Duration = std::time::Duration::from_secs(3600);
pub struct TempNames;
impl TempNames { pub fn new() -> Self { TempNames } }
