//! Operation histories (faultline JSONL, Jepsen EDN, Porcupine logs) and the
//! built-in checkers.

pub mod availability;
pub mod checker;
pub mod cli;
pub mod counter;
pub mod edn;
pub mod exactly_once;
pub mod external;
pub mod fault_window;
pub mod final_state;
pub mod format;
pub mod history;
pub mod intern;
pub mod jepsen;
pub mod jepsen_log;
pub mod jsonl_read;
pub mod linear;
pub mod linearizability;
pub mod measure;
pub mod no_lost_ack;
pub mod op_view;
pub mod params;
pub mod porcupine_log;
pub mod prefix_order;
pub mod registry;
pub mod series;
pub mod session;
pub mod slo;
pub mod txn;

pub use checker::{Anomaly, Checker, CheckerReport};
pub use external::parse_external_result;
pub use format::{Format, read_history};
pub use history::{DEFAULT_FIELDS, History, HistoryError, Op, parse_jsonl};
pub use no_lost_ack::NoLostAck;
