//! The no-lost-ack checker: every acknowledged write is in the final state at
//! quiescence (unless a later write on the same key explains the value seen).

use super::checker::{Anomaly, Checker, CheckerReport, judged, missing_fields_report};
use super::history::{History, Op};
use serde_json::Value;
use std::collections::BTreeMap;

/// Marker type carrying the checker's declarations.
pub struct NoLostAck;

impl Checker for NoLostAck {
    fn name() -> &'static str {
        "no-lost-ack"
    }
    fn required_fields() -> &'static [&'static str] {
        &[
            "op_id",
            "op_type",
            "key",
            "input",
            "output",
            "error",
            "timeout",
            "invoke_ts",
            "complete_ts",
        ]
    }
    fn scope() -> &'static str {
        "detects acknowledged writes missing from the final state; does not judge reads, \
         ordering, stale reads, or writes lost and then rewritten with the same value"
    }
}

/// Fields the checker needs (see [`Checker::required_fields`]).
pub fn required_fields() -> &'static [&'static str] {
    NoLostAck::required_fields()
}

fn is_write(op: &Op) -> bool {
    op.op_type == "write" || op.op_type == "put"
}

/// Judge `history` against the quiescent `final_state` (key → value).
pub fn check(history: &History, final_state: &BTreeMap<String, Value>) -> CheckerReport {
    if let Some(r) = missing_fields_report(
        NoLostAck::name(),
        NoLostAck::scope(),
        history,
        NoLostAck::required_fields(),
    ) {
        return r;
    }
    let writes: Vec<&Op> = history.ops.iter().filter(|o| is_write(o)).collect();
    // For each key and value, the latest invocation of a write that may have put it
    // there (acknowledged, or timed out and so perhaps applied): one pass, so the
    // check is O(n log n) where asking every write about every other was O(n²).
    let mut latest: BTreeMap<(&str, String), u64> = BTreeMap::new();
    for o in writes.iter().filter(|o| o.is_acked() || o.timeout) {
        if let Some(key) = o.key.as_deref() {
            let at = latest.entry((key, o.input.to_string())).or_insert(0);
            *at = (*at).max(o.invoke_ts);
        }
    }
    let mut anomalies = Vec::new();
    for w in writes.iter().filter(|w| w.is_acked()) {
        let Some(key) = &w.key else {
            anomalies.push(Anomaly {
                counterexample: None,
                ops: vec![w.op_id.clone()],
                why: "acknowledged write has no key".into(),
            });
            continue;
        };
        match final_state.get(key) {
            None => anomalies.push(Anomaly {
                counterexample: None,
                ops: vec![w.op_id.clone()],
                why: format!(
                    "acknowledged write to `{key}` but the key is absent from the final state"
                ),
            }),
            Some(v) if *v == w.input => {}
            Some(v) => {
                // A write of the final value invoked at or after w can have overwritten it
                // (never w itself: its value is not the final one).
                let explained = latest
                    .get(&(key.as_str(), v.to_string()))
                    .is_some_and(|at| *at >= w.invoke_ts);
                if !explained {
                    anomalies.push(Anomaly {
 counterexample: None,
                        ops: vec![w.op_id.clone()],
                        why: format!(
                            "acknowledged write of {} to `{key}` lost: final value {v} written by no later write",
                            w.input
                        ),
                    });
                }
            }
        }
    }
    let produced = history.ops.len() as u64;
    // Every op produced is read: acknowledged writes against the final state.
    judged(
        NoLostAck::name(),
        NoLostAck::scope(),
        produced,
        produced,
        anomalies,
    )
}

/// Parse a final-state dump: a JSON object of key → value.
pub fn parse_final_state(text: &str) -> Result<BTreeMap<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m.into_iter().collect()),
        Ok(_) => Err("final state: expected a JSON object of key → value".into()),
        Err(e) => Err(format!("final state: invalid JSON: {e}")),
    }
}
