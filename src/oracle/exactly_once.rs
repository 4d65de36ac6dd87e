//! Exactly-once by business idempotency key: every key a client used has at most
//! one committed effect in the final-state dump, an acknowledged key has one,
//! and a key whose every attempt was rejected has none.
//!
//! The key is read from each op's input object (`idempotency_key` unless the
//! `key_field` parameter names another field). Grouping by the op id instead
//! would make the check vacuous, so that is refused as a mismatch.

use super::checker::{Anomaly, judged, mismatch, missing_fields_report};
use super::history::{History, Op};
use super::params::Params;
use crate::oracle::CheckerReport;
use serde_json::Value;
use std::collections::BTreeMap;

pub const NAME: &str = "exactly-once";
pub const PARAMS: &[&str] = &["key_field"];
pub const REQUIRED: &[&str] = &[
    "op_id",
    "op_type",
    "input",
    "error",
    "timeout",
    "complete_ts",
];
pub const SCOPE: &str = "counts committed effects per idempotency key in the final-state dump; \
    does not see effects the dump omits, effects merged under another key, or ordering";

/// Judge `history` against the dump of committed effects.
pub fn check(history: &History, effects: &Value, params: &Params) -> Result<CheckerReport, String> {
    params.only(NAME, PARAMS)?;
    let field = params.str("key_field").unwrap_or("idempotency_key");
    if field == "op_id" {
        return Ok(mismatch(
            NAME,
            SCOPE,
            "grouping by the op id makes exactly-once vacuous: name the business idempotency key"
                .into(),
        ));
    }
    if let Some(r) = missing_fields_report(NAME, SCOPE, history, REQUIRED) {
        return Ok(r);
    }
    let counts = effect_counts(effects, field)?;
    let mut attempts: BTreeMap<String, Vec<&Op>> = BTreeMap::new();
    let mut unkeyed = 0u64;
    for op in &history.ops {
        match op.input.get(field).map(render) {
            Some(k) => attempts.entry(k).or_default().push(op),
            None => unkeyed += 1,
        }
    }
    let mut anomalies = Vec::new();
    for (key, ops) in &attempts {
        let n = counts.get(key).copied().unwrap_or(0);
        let ids = || ops.iter().map(|o| o.op_id.clone()).collect::<Vec<_>>();
        if n > 1 {
            anomalies.push(Anomaly {
                counterexample: None,
                ops: ids(),
                why: format!(
                    "duplicate effect: key `{key}` has {n} committed effects after {} attempt(s)",
                    ops.len()
                ),
            });
        } else if n == 0 && ops.iter().any(|o| o.is_acked()) {
            anomalies.push(Anomaly {
                counterexample: None,
                ops: ids(),
                why: format!(
                    "lost effect: key `{key}` was acknowledged but has no committed effect"
                ),
            });
        } else if n == 1 && ops.iter().all(|o| o.is_failed()) {
            anomalies.push(Anomaly {
 counterexample: None,
                ops: ids(),
                why: format!(
                    "effect of a rejected request: every attempt with key `{key}` failed, yet one effect is committed"
                ),
            });
        }
    }
    for (key, n) in &counts {
        if !attempts.contains_key(key) {
            anomalies.push(Anomaly {
                counterexample: None,
                ops: Vec::new(),
                why: format!("phantom effect: key `{key}` has {n} effect(s) but no op used it"),
            });
        }
    }
    let produced = history.ops.len() as u64;
    Ok(judged(NAME, SCOPE, produced - unkeyed, produced, anomalies))
}

fn render(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Effects per key: an array of records carrying `field`, or an object of
/// key → count (number) or key → list of effects.
fn effect_counts(effects: &Value, field: &str) -> Result<BTreeMap<String, u64>, String> {
    let mut counts = BTreeMap::new();
    match effects {
        Value::Array(records) => {
            for (i, r) in records.iter().enumerate() {
                let k = r
                    .get(field)
                    .ok_or_else(|| format!("effects dump: record {i} has no `{field}`"))?;
                *counts.entry(render(k)).or_insert(0) += 1;
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                let n = match v {
                    Value::Number(n) => n.as_u64().ok_or_else(|| {
                        format!("effects dump: `{k}`: count must be a non-negative integer")
                    })?,
                    Value::Array(a) => a.len() as u64,
                    Value::Null => 0,
                    _ => 1,
                };
                counts.insert(k.clone(), n);
            }
        }
        _ => return Err("effects dump: expected an array of records or an object".into()),
    }
    Ok(counts)
}
