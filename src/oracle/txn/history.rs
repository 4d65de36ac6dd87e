//! Transaction histories: each op is one transaction (`:f :txn` in Jepsen EDN,
//! `op_type: "txn"` in faultline JSONL, or a `txn-jsonl` record) whose value is a
//! list of micro-ops `[:append k v]`, `[:r k v]`, `[:w k v]`.
//!
//! An `:ok` txn's micro-ops come from its completion (reads carry what they read);
//! `:info` and `:fail` txns keep their invoke's (reads unknown).

use crate::oracle::history::{History, HistoryError, Op, Text, converted_fields};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Committed.
    Ok,
    /// Unknown: may or may not have committed.
    Info,
    /// Did not commit.
    Fail,
}

/// One micro-op; keys and values in their printed form (`3`, `x`).
#[derive(Debug, Clone, PartialEq)]
pub enum Mop {
    Append {
        key: String,
        value: String,
    },
    Write {
        key: String,
        value: String,
    },
    /// `value` is what was read (`Null` when unknown or nil).
    Read {
        key: String,
        value: Value,
    },
}

/// One transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Txn {
    pub id: String,
    pub process: String,
    pub invoke: u64,
    pub complete: Option<u64>,
    pub status: Status,
    pub mops: Vec<Mop>,
}

/// The transactions of a history.
#[derive(Debug, Clone, Default)]
pub struct Txns {
    pub txns: Vec<Txn>,
    /// Every op in the history (txns and others): coverage's denominator.
    pub produced: u64,
}

/// The printed form of a key or value: strings bare, anything else as JSON.
pub fn printed(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

const ALLOWED: &str = "expected [\"append\", k, v], [\"r\", k, v] or [\"w\", k, v] \
                       (EDN: [:append k v] [:r k v] [:w k v])";

/// Parse one micro-op list; `Err` says which element and what is allowed.
pub fn parse_mops(value: &Value) -> Result<Vec<Mop>, String> {
    let Value::Array(items) = value else {
        return Err(format!("expected a list of micro-ops, got {value}"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| parse_mop(item).ok_or_else(|| format!("[{i}]: {ALLOWED}, got {item}")))
        .collect()
}

fn parse_mop(item: &Value) -> Option<Mop> {
    let Value::Array(parts) = item else {
        return None;
    };
    let [f, k, v] = parts.as_slice() else {
        return None;
    };
    let key = match k {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => printed(k),
        _ => return None,
    };
    match f.as_str()? {
        "append" => Some(Mop::Append {
            key,
            value: scalar(v)?,
        }),
        "w" | "write" => Some(Mop::Write {
            key,
            value: scalar(v)?,
        }),
        "r" | "read" => Some(Mop::Read {
            key,
            value: v.clone(),
        }),
        _ => None,
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => Some(printed(v)),
        _ => None,
    }
}

/// The transactions of `history` (ops whose `op_type` is `txn`; others are left
/// unjudged). `Err` names the source, the op and the field.
pub fn from_history(history: &History) -> Result<Txns, String> {
    let mut txns = Vec::new();
    for op in &history.ops {
        if op.op_type != "txn" {
            continue;
        }
        let status = if op.is_acked() {
            Status::Ok
        } else if op.is_failed() {
            Status::Fail
        } else {
            Status::Info
        };
        // An ok txn's completion carries the reads; without one, its invoke.
        let (field, value) = match (status, &op.output) {
            (Status::Ok, Value::Array(_)) => ("output", &op.output),
            _ => ("input", &op.input),
        };
        let mops = parse_mops(value)
            .map_err(|e| format!("{}: op {}: field `{field}`{e}", history.source, op.op_id))?;
        txns.push(Txn {
            id: op.op_id.to_string(),
            process: op.process.to_string(),
            invoke: op.invoke_ts,
            complete: op.complete_ts,
            status,
            mops,
        });
    }
    Ok(Txns {
        txns,
        produced: history.ops.len() as u64,
    })
}

/// Parse a `txn-jsonl` history: one object per transaction, `{op_id, process,
/// invoke_ts, complete_ts, type: ok|info|fail, value: [[op, k, v] …]}` (`error`
/// optional; `process` optional, without it a txn is in no process order). Each
/// becomes a `txn` op of a [`History`]. The checkers read such a file without a
/// `History` (`super::check_file`); this is for the other callers.
pub fn parse_txn_jsonl(source: &str, text: &str) -> Result<History, HistoryError> {
    let mut ops = Vec::new();
    let mut seen: HashSet<Text> = HashSet::new();
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len().saturating_sub(1);
    for (i, raw) in lines.iter().enumerate() {
        let line = i + 1;
        let raw = raw.trim_end_matches('\r');
        if raw.trim().is_empty() {
            continue;
        }
        let map: Map<String, Value> = match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(line_err(source, line, "expected a JSON object".into())),
            Err(e) if i == last => {
                return Err(line_err(
                    source,
                    line,
                    format!("truncated final line (no trailing newline, invalid JSON: {e})"),
                ));
            }
            Err(e) => return Err(line_err(source, line, format!("invalid JSON: {e}"))),
        };
        let op = txn_op(source, line, &map)?;
        if !seen.insert(op.op_id.clone()) {
            return Err(HistoryError::field(
                source,
                line,
                "op_id",
                format!("op_id {} repeated (a duplicate response)", op.op_id),
            ));
        }
        ops.push(op);
    }
    let mut present = converted_fields(false, false);
    if ops.iter().any(|o| o.process.is_empty()) {
        present.remove("process");
    }
    Ok(History {
        ops,
        present_fields: present,
        unknown_fields: Default::default(),
        source: source.to_string(),
    })
}

fn line_err(source: &str, line: usize, message: String) -> HistoryError {
    HistoryError::Line {
        source_name: source.to_string(),
        line,
        message,
    }
}

/// One txn-jsonl record as a `txn` op; `Err` names the line and the field.
pub(crate) fn txn_op(
    source: &str,
    line: usize,
    map: &Map<String, Value>,
) -> Result<Op, HistoryError> {
    let err = |field: &str, message: &str| HistoryError::field(source, line, field, message);
    let id = |field: &str| match map.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) if n.is_u64() || n.is_i64() => Ok(n.to_string()),
        _ => Err(err(field, "expected a string or an integer")),
    };
    let op_id = id("op_id")?;
    // Absent or null: not recorded (no process order for this txn).
    let process = match map.get("process") {
        None | Some(Value::Null) => String::new(),
        Some(_) => id("process")?,
    };
    let invoke_ts = map
        .get("invoke_ts")
        .and_then(Value::as_u64)
        .ok_or_else(|| err("invoke_ts", "expected a non-negative integer (ns)"))?;
    let complete_ts = match map.get("complete_ts") {
        Some(Value::Null) => None,
        Some(v) => Some(v.as_u64().ok_or_else(|| {
            err(
                "complete_ts",
                "expected a non-negative integer (ns) or null",
            )
        })?),
        None => {
            return Err(err(
                "complete_ts",
                "absent (null if the txn never completed)",
            ));
        }
    };
    let kind = map
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| err("type", "expected \"ok\", \"info\" or \"fail\""))?;
    let value = map
        .get("value")
        .ok_or_else(|| err("value", "absent: expected a list of micro-ops"))?;
    parse_mops(value).map_err(|e| HistoryError::field(source, line, "value", e))?;
    let (output, error, timeout) = match kind {
        "ok" => (value.clone(), None, false),
        "fail" => (
            Value::Null,
            Some(map.get("error").map_or_else(|| "fail".to_string(), printed)),
            false,
        ),
        "info" => (Value::Null, None, true),
        other => {
            return Err(err(
                "type",
                &format!("\"{other}\" is not one of \"ok\", \"info\", \"fail\""),
            ));
        }
    };
    if kind != "info" && complete_ts.is_none() {
        return Err(err(
            "complete_ts",
            "null, but only an \"info\" txn may lack one",
        ));
    }
    Ok(Op {
        op_id: op_id.into(),
        process: process.into(),
        invoke_ts,
        complete_ts: if timeout { None } else { complete_ts },
        op_type: "txn".into(),
        key: None,
        input: value.clone(),
        output,
        error,
        timeout,
        node: None,
        fault_epoch: None,
    })
}
