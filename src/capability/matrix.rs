//! The capability matrix row recorded in the session log.

use serde::{Deserialize, Serialize};

/// requirement → present? → version → source, with the scenarios depending on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixRow {
    pub requirement: String,
    pub capability: Option<String>,
    /// `None`: not probed (unrecognised or skipped).
    pub present: Option<bool>,
    pub version: Option<String>,
    /// `probe`, `operator`, `operator+probe`, or `unrecognised — confirm by hand`.
    pub source: String,
    pub used_by: Vec<String>,
    pub note: String,
}
