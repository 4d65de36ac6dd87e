//! The history formats faultline reads, by name.

use super::history::{History, HistoryError, parse_jsonl};
use super::jepsen::parse_edn;
use super::jepsen_log::parse_jepsen_log;
use super::porcupine_log::parse_porcupine;
use super::txn::history::parse_txn_jsonl;

/// A history file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// faultline's JSONL records (the default fields).
    Jsonl,
    /// Jepsen / Knossos EDN.
    Edn,
    /// Porcupine-style operation log (JSONL).
    Porcupine,
    /// One JSON object per transaction (`type`, `value` micro-ops).
    TxnJsonl,
    /// Jepsen's operation log (`jepsen.util - 0\t:invoke\t:read\tnil` lines).
    JepsenLog,
}

impl Format {
    pub const NAMES: [&'static str; 5] = ["jsonl", "edn", "porcupine", "txn-jsonl", "jepsen-log"];

    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "jsonl" => Some(Format::Jsonl),
            "edn" => Some(Format::Edn),
            "porcupine" => Some(Format::Porcupine),
            "txn-jsonl" => Some(Format::TxnJsonl),
            "jepsen-log" => Some(Format::JepsenLog),
            _ => None,
        }
    }

    /// Guess from a file name: `.edn` is EDN, anything else faultline's JSONL.
    pub fn from_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("edn") => Format::Edn,
            _ => Format::Jsonl,
        }
    }
}

/// Parse `text` in `format`; `source` names it in errors.
pub fn read_history(format: Format, source: &str, text: &str) -> Result<History, HistoryError> {
    match format {
        Format::Jsonl => parse_jsonl(source, text),
        Format::Edn => parse_edn(source, text),
        Format::Porcupine => parse_porcupine(source, text),
        Format::TxnJsonl => parse_txn_jsonl(source, text),
        Format::JepsenLog => parse_jepsen_log(source, text),
    }
}
