//! Session guarantees, grouped by process (one process = one session):
//! monotonic reads and read-your-writes.

use super::checker::{Anomaly, judged, missing_fields_report};
use super::history::{History, Op};
use super::params::Params;
use crate::oracle::CheckerReport;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

fn is_read(op: &Op) -> bool {
    matches!(op.op_type.as_str(), "read" | "get" | "r")
}

fn is_write(op: &Op) -> bool {
    matches!(op.op_type.as_str(), "write" | "put" | "w")
}

/// Ops of each process, in invoke order.
fn sessions(history: &History) -> BTreeMap<&str, Vec<&Op>> {
    let mut by: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for op in &history.ops {
        by.entry(op.process.as_str()).or_default().push(op);
    }
    for ops in by.values_mut() {
        ops.sort_by_key(|o| o.invoke_ts);
    }
    by
}

pub mod monotonic_reads {
    use super::*;

    pub const NAME: &str = "monotonic-reads";
    pub const REQUIRED: &[&str] = &[
        "op_id",
        "process",
        "key",
        "op_type",
        "output",
        "invoke_ts",
        "complete_ts",
        "error",
        "timeout",
    ];
    pub const SCOPE: &str = "per (process, key), the versions reads return never go back; needs a \
        numeric version (the output, or its `version` field; null reads as before any version); \
        does not judge reads across sessions or a reconnect not recorded as a new process";

    /// The SUT's version of a read: the number itself, or a `version` field.
    fn version(output: &Value) -> Option<f64> {
        match output {
            Value::Null => Some(f64::NEG_INFINITY),
            Value::Number(n) => n.as_f64(),
            Value::Object(o) => o.get("version").and_then(Value::as_f64),
            _ => None,
        }
    }

    pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
        params.only(NAME, &[])?;
        if let Some(r) = missing_fields_report(NAME, SCOPE, history, REQUIRED) {
            return Ok(r);
        }
        let mut anomalies = Vec::new();
        let mut unchecked = 0u64;
        for (process, ops) in sessions(history) {
            let mut last: HashMap<&str, (f64, &Op)> = HashMap::new();
            for op in ops.into_iter().filter(|o| is_read(o)) {
                if !op.is_acked() {
                    continue;
                }
                let (Some(key), Some(v)) = (op.key.as_deref(), version(&op.output)) else {
                    unchecked += 1;
                    continue;
                };
                if let Some((prev, prev_op)) = last.get(key)
                    && v < *prev
                {
                    anomalies.push(Anomaly {
                        counterexample: None,
                        ops: vec![prev_op.op_id.clone(), op.op_id.clone()],
                        why: format!(
                            "process {process} read `{key}` at version {} then at the older {}",
                            prev_op.output, op.output
                        ),
                    });
                }
                if last.get(key).is_none_or(|(prev, _)| v >= *prev) {
                    last.insert(key, (v, op));
                }
            }
        }
        let produced = history.ops.len() as u64;
        Ok(judged(
            NAME,
            SCOPE,
            produced - unchecked,
            produced,
            anomalies,
        ))
    }
}

pub mod read_your_writes {
    use super::*;

    pub const NAME: &str = "read-your-writes";
    pub const REQUIRED: &[&str] = &[
        "op_id",
        "process",
        "key",
        "op_type",
        "input",
        "output",
        "invoke_ts",
        "complete_ts",
        "error",
        "timeout",
    ];
    pub const SCOPE: &str = "per process, a read after the session's acknowledged write to a key \
        returns that value or one a concurrent or later write could have put there; does not judge \
        reads with no earlier write in the session, or a reconnect not recorded as a new process";

    pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
        params.only(NAME, &[])?;
        if let Some(r) = missing_fields_report(NAME, SCOPE, history, REQUIRED) {
            return Ok(r);
        }
        // Writes that could have taken effect, per key.
        let mut writes: HashMap<&str, Vec<&Op>> = HashMap::new();
        for op in history.ops.iter().filter(|o| is_write(o) && !o.is_failed()) {
            if let Some(k) = op.key.as_deref() {
                writes.entry(k).or_default().push(op);
            }
        }
        let mut anomalies = Vec::new();
        for (process, ops) in sessions(history) {
            let mut own: HashMap<&str, &Op> = HashMap::new();
            for op in ops {
                let Some(key) = op.key.as_deref() else {
                    continue;
                };
                if is_write(op) && op.is_acked() {
                    own.insert(key, op);
                    continue;
                }
                if !is_read(op) || !op.is_acked() {
                    continue;
                }
                let Some(w) = own.get(key) else { continue };
                if op.output == w.input || overwritten(&writes, key, w, op) {
                    continue;
                }
                anomalies.push(Anomaly {
                    counterexample: None,
                    ops: vec![w.op_id.clone(), op.op_id.clone()],
                    why: format!(
                        "stale read: process {process} wrote {} to `{key}`, then read {}, which no \
                         concurrent or later write explains",
                        w.input, op.output
                    ),
                });
            }
        }
        let produced = history.ops.len() as u64;
        Ok(judged(NAME, SCOPE, produced, produced, anomalies))
    }

    /// Another write of the value read, not finished before `w` began and begun
    /// before the read returned, may legitimately have replaced `w`'s value.
    fn overwritten(writes: &HashMap<&str, Vec<&Op>>, key: &str, w: &Op, read: &Op) -> bool {
        let read_end = read.complete_ts.unwrap_or(u64::MAX);
        writes.get(key).is_some_and(|ws| {
            ws.iter().any(|o| {
                o.op_id != w.op_id
                    && o.input == read.output
                    && o.invoke_ts <= read_end
                    && o.complete_ts.is_none_or(|c| c >= w.invoke_ts)
            })
        })
    }
}
