//! What a run prints (IO500-format text, the comparison table) and saves
//! (the result JSON).

pub mod json;
pub mod text;
