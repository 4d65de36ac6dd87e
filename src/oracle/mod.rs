//! Operation histories and the built-in checkers.

pub mod checker;
pub mod external;
pub mod history;
pub mod measure;
pub mod no_lost_ack;

pub use checker::{Anomaly, Checker, CheckerReport};
pub use external::parse_external_result;
pub use history::{DEFAULT_FIELDS, History, HistoryError, Op, parse_jsonl};
pub use no_lost_ack::NoLostAck;
