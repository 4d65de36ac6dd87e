//! faultline's JSONL operation history: one JSON object per line, one line per
//! client operation, with the twelve default field names.
//!
//! Every field is expected in every record (unused ones are `null`); an absent
//! key means the recorder does not capture that field at all, which a checker
//! reports as a missing field. Timestamps are integer nanoseconds from a
//! per-recorder monotonic clock; a timed-out op has `complete_ts: null`, and no op
//! completes before it was invoked (`complete_ts` < `invoke_ts` is refused).
//! `timeout_marker` is accepted as another name of `timeout`.
//!
//! Truncation is checked, never assumed away: a torn last line is an error, an
//! optional trailer record `{"ops_total": N}` must match the ops read, and an op
//! with neither a completion nor a timeout marker is only legal as its process's
//! last op (it was in flight when recording stopped, so it is indeterminate).

use super::jsonl_read::{Header, read_jsonl};
use super::op_view::{OpSink, OpView};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The default field names, in record order.
pub const DEFAULT_FIELDS: [&str; 12] = [
    "op_id",
    "process",
    "invoke_ts",
    "complete_ts",
    "op_type",
    "key",
    "input",
    "output",
    "error",
    "timeout",
    "node",
    "fault_epoch",
];

/// A short text of an [`Op`]: held in place up to 24 bytes (ids, process names,
/// op types and keys nearly always are), so a history of millions of ops does
/// not make a heap allocation per field: at least 32 bytes each, four of them a
/// third of what a `History` read from a Jepsen EDN file held.
pub type Text = compact_str::CompactString;

/// One client operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// Unique id of the op (numbers are stored in their decimal form).
    pub op_id: Text,
    /// Client / session that issued it.
    pub process: Text,
    /// Invoke time, ns, recorder-monotonic.
    pub invoke_ts: u64,
    /// Completion time; `None` for a timeout / unknown outcome.
    pub complete_ts: Option<u64>,
    pub op_type: Text,
    pub key: Option<Text>,
    pub input: Value,
    pub output: Value,
    pub error: Option<String>,
    /// Timeout / unknown-commit marker: the op's effect is unknown.
    pub timeout: bool,
    /// Node the client saw answer.
    pub node: Option<String>,
    /// Fault epoch active at invoke, if any.
    pub fault_epoch: Option<u64>,
}

impl Op {
    /// Acknowledged: completed, no error, not timed out.
    pub fn is_acked(&self) -> bool {
        self.view().is_acked()
    }

    /// Its effect is unknown: timed out, or still in flight when recording stopped.
    pub fn is_indeterminate(&self) -> bool {
        self.view().is_indeterminate()
    }

    /// Definitely did not take effect: completed with an error.
    pub fn is_failed(&self) -> bool {
        self.view().is_failed()
    }
}

/// The name a field is stored under, whatever alias the recorder used.
pub fn canonical_field(key: &str) -> &str {
    match key {
        "timeout_marker" => "timeout",
        other => other,
    }
}

/// A parsed history.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct History {
    pub ops: Vec<Op>,
    /// Keys present in EVERY record (absent anywhere → not listed).
    pub present_fields: BTreeSet<String>,
    /// Keys some record has that the reader does not read (`process_id` for
    /// `process`): dropped, and named when a checker then lacks a field.
    pub unknown_fields: BTreeSet<String>,
    /// Where it came from (file name), for messages.
    pub source: String,
}

impl History {
    /// Required fields that are not present in every record, in the given order.
    ///
    /// An empty history lacks nothing (there is no record to lack a key); the
    /// decision tree treats "no ops produced" separately.
    pub fn missing_fields(&self, required: &[&str]) -> Vec<String> {
        missing_fields(&self.present_fields, self.ops.len() as u64, required)
    }

    /// What the history is besides its ops.
    pub fn header(&self) -> Header {
        Header {
            source: self.source.clone(),
            present_fields: self.present_fields.clone(),
            unknown_fields: self.unknown_fields.clone(),
            ops: self.ops.len() as u64,
        }
    }
}

impl Header {
    /// Required fields that are not present in every record (see
    /// [`History::missing_fields`]).
    pub fn missing_fields(&self, required: &[&str]) -> Vec<String> {
        missing_fields(&self.present_fields, self.ops, required)
    }
}

fn missing_fields(present: &BTreeSet<String>, ops: u64, required: &[&str]) -> Vec<String> {
    if ops == 0 {
        return Vec::new();
    }
    required
        .iter()
        .filter(|f| !present.contains(**f))
        .map(|f| f.to_string())
        .collect()
}

/// The fields every history converted from another format carries (EDN, Porcupine,
/// txn-jsonl); `key` and `node` only when every op has one.
pub const CORE_FIELDS: &[&str] = &[
    "op_id",
    "process",
    "invoke_ts",
    "complete_ts",
    "op_type",
    "input",
    "output",
    "error",
    "timeout",
];

/// The fields a history converted from another recorder (Jepsen EDN, Porcupine
/// logs) always carries; `key` and `node` only when every op had one.
pub fn converted_fields(every_op_keyed: bool, every_op_has_node: bool) -> BTreeSet<String> {
    let mut present: BTreeSet<String> = CORE_FIELDS.iter().map(|f| f.to_string()).collect();
    if every_op_keyed {
        present.insert("key".into());
    }
    if every_op_has_node {
        present.insert("node".into());
    }
    present
}

impl HistoryError {
    /// A bad `field` on `line` of `source`.
    pub fn field(source: &str, line: usize, field: &str, message: impl Into<String>) -> Self {
        HistoryError::Field {
            source_name: source.to_string(),
            line,
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// Why a history could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    #[error("{source_name}:{line}: field `{field}`: {message}")]
    Field {
        source_name: String,
        line: usize,
        field: String,
        message: String,
    },
    #[error("{source_name}:{line}: {message}")]
    Line {
        source_name: String,
        line: usize,
        message: String,
    },
}

/// Parse a JSONL history. `source` names it in error messages.
pub fn parse_jsonl(source: &str, text: &str) -> Result<History, HistoryError> {
    parse_jsonl_renamed(source, text, &BTreeMap::new())
}

/// [`parse_jsonl`] of a recorder that names some fields its own way: `renames` maps
/// the reader's field to the recorder's name for it (`process` ← `process_id`).
pub fn parse_jsonl_renamed(
    source: &str,
    text: &str,
    renames: &BTreeMap<String, String>,
) -> Result<History, HistoryError> {
    read_jsonl_history(source, text.as_bytes(), renames)
}

/// A JSONL history read from `reader` as a stream (see `jsonl_read`) into a
/// [`History`].
pub fn read_jsonl_history(
    source: &str,
    reader: impl std::io::BufRead,
    renames: &BTreeMap<String, String>,
) -> Result<History, HistoryError> {
    let mut ops = Collect(Vec::new());
    let header = read_jsonl(source, reader, renames, &mut ops)?;
    Ok(History {
        ops: ops.0,
        present_fields: header.present_fields,
        unknown_fields: header.unknown_fields,
        source: header.source,
    })
}

/// Ops kept as they are read.
struct Collect(Vec<Op>);

impl OpSink for Collect {
    fn op(&mut self, op: &OpView<'_>) {
        self.0.push(op.to_op());
    }
}

/// Field readers for one record; absent keys read as their "unused" value.
struct Rec<'a> {
    source: &'a str,
    line: usize,
    map: &'a Map<String, Value>,
}

impl Rec<'_> {
    fn err(&self, field: &str, message: &str) -> HistoryError {
        HistoryError::field(self.source, self.line, field, message)
    }

    fn get(&self, field: &str) -> Option<&Value> {
        let found = self.map.get(field).or_else(|| match field {
            "timeout" => self.map.get("timeout_marker"),
            _ => None,
        });
        match found {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    /// String or number, rendered as a string; absent / null → empty.
    fn id(&self, field: &str) -> Result<String, HistoryError> {
        match self.get(field) {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(_) => Err(self.err(field, "expected a string or a number")),
        }
    }

    fn opt_u64(&self, field: &str) -> Result<Option<u64>, HistoryError> {
        match self.get(field) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.err(field, "expected an integer")),
        }
    }

    fn opt_string(&self, field: &str) -> Result<Option<String>, HistoryError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(self.err(field, "expected a string")),
        }
    }

    fn value(&self, field: &str) -> Value {
        self.map.get(field).cloned().unwrap_or(Value::Null)
    }
}

/// One record's op, read from its JSON value (the reader of lines the typed
/// reader does not take as they are).
pub fn op_from_map(
    source: &str,
    line: usize,
    map: &Map<String, Value>,
) -> Result<Op, HistoryError> {
    let r = Rec { source, line, map };
    // An absent key means "not captured" (checkers report it as missing);
    // a present one must be well-typed.
    let invoke_ts = if map.contains_key("invoke_ts") {
        r.opt_u64("invoke_ts")?
            .ok_or_else(|| r.err("invoke_ts", "expected an integer"))?
    } else {
        0
    };
    let op_type = if map.contains_key("op_type") {
        r.opt_string("op_type")?
            .ok_or_else(|| r.err("op_type", "expected a string"))?
    } else {
        String::new()
    };
    let timeout = match r.get("timeout") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(r.err("timeout", "expected a boolean")),
    };
    let error = match r.get("error") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        // `false` would read as an error and make every op failed: a recorder that
        // writes it for "no error" hides its lost writes; `true` names no error.
        Some(Value::Bool(_)) => {
            return Err(r.err(
                "error",
                "expected null (the op did not fail) or the error (a string, or any JSON \
                 value but a boolean, kept as its text); a boolean would read as an error",
            ));
        }
        Some(other) => Some(other.to_string()),
    };
    let complete_ts = r.opt_u64("complete_ts")?;
    if let Some(done) = complete_ts
        && done < invoke_ts
    {
        return Err(r.err(
            "complete_ts",
            &format!(
                "{done} is earlier than `invoke_ts` {invoke_ts}: an op completes after it is \
                 invoked (are both read from one monotonic clock?)"
            ),
        ));
    }
    Ok(Op {
        op_id: r.id("op_id")?.into(),
        process: r.id("process")?.into(),
        invoke_ts,
        complete_ts,
        op_type: op_type.into(),
        key: r.opt_string("key")?.map(Into::into),
        input: r.value("input"),
        output: r.value("output"),
        error,
        timeout,
        node: r.opt_string("node")?,
        // Epochs count from 1: a client that writes 0 for "no fault" is outside one.
        fault_epoch: r.opt_u64("fault_epoch")?.filter(|e| *e != 0),
    })
}
