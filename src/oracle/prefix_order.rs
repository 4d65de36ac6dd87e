//! Prefix / order: every consumer's observed sequence is a prefix of the
//! producers' canonical order (acknowledged enqueues by completion time), except
//! for reorderings within `window` positions. Values from timed-out enqueues may
//! appear or not; values never enqueued, values of rejected enqueues, values
//! delivered twice to one consumer and skipped values are anomalies.

use super::checker::{Anomaly, judged, missing_fields_report};
use super::history::{History, Op};
use super::params::Params;
use crate::oracle::CheckerReport;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

pub const NAME: &str = "prefix-order";
pub const PARAMS: &[&str] = &["window"];
pub const REQUIRED: &[&str] = &[
    "op_id",
    "process",
    "op_type",
    "input",
    "output",
    "invoke_ts",
    "complete_ts",
    "error",
    "timeout",
];
pub const SCOPE: &str = "per consumer (process): reorderings beyond the window, skips, duplicates \
    and foreign values against acknowledged enqueues ordered by completion time; does not judge \
    competing consumers sharing one queue, nor values consumed after the history ends";

/// At most this many anomalies are listed per consumer (the count is exact).
const LISTED_PER_CONSUMER: usize = 5;

fn is_produce(op: &Op) -> bool {
    matches!(
        op.op_type.as_str(),
        "enqueue" | "send" | "produce" | "publish" | "append"
    )
}

fn is_consume(op: &Op) -> bool {
    matches!(
        op.op_type.as_str(),
        "dequeue" | "receive" | "consume" | "poll"
    )
}

pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
    params.only(NAME, PARAMS)?;
    let window = params.u64("window")?.unwrap_or(0) as usize;
    if let Some(r) = missing_fields_report(NAME, SCOPE, history, REQUIRED) {
        return Ok(r);
    }
    let key = |v: &Value| v.to_string();
    let mut acked: Vec<&Op> = history
        .ops
        .iter()
        .filter(|o| is_produce(o) && o.is_acked())
        .collect();
    acked.sort_by_key(|o| (o.complete_ts, o.invoke_ts));
    let position: HashMap<String, usize> = acked
        .iter()
        .enumerate()
        .map(|(i, o)| (key(&o.input), i))
        .collect();
    let maybe: HashSet<String> = history
        .ops
        .iter()
        .filter(|o| is_produce(o) && o.is_indeterminate())
        .map(|o| key(&o.input))
        .collect();
    let rejected: HashSet<String> = history
        .ops
        .iter()
        .filter(|o| is_produce(o) && o.is_failed())
        .map(|o| key(&o.input))
        .collect();

    let mut consumers: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for op in history.ops.iter().filter(|o| is_consume(o) && o.is_acked()) {
        consumers.entry(op.process.as_str()).or_default().push(op);
    }
    let mut anomalies = Vec::new();
    let mut checked = history.ops.iter().filter(|o| is_produce(o)).count() as u64;
    for (consumer, mut ops) in consumers {
        ops.sort_by_key(|o| o.invoke_ts);
        checked += ops.len() as u64;
        let mut found = Vec::new();
        let mut seen: HashMap<String, &str> = HashMap::new();
        let mut observed: Vec<(usize, &Op)> = Vec::new();
        for op in ops {
            let values: Vec<&Value> = match &op.output {
                Value::Null => Vec::new(),
                Value::Array(items) => items.iter().collect(),
                v => vec![v],
            };
            for v in values {
                let k = key(v);
                if let Some(first) = seen.insert(k.clone(), op.op_id.as_str()) {
                    found.push(Anomaly {
                        counterexample: None,
                        ops: vec![first.to_string(), op.op_id.clone()],
                        why: format!("consumer {consumer} received {k} twice"),
                    });
                } else if let Some(p) = position.get(&k) {
                    observed.push((*p, op));
                } else if rejected.contains(&k) && !maybe.contains(&k) {
                    found.push(Anomaly {
                        counterexample: None,
                        ops: vec![op.op_id.clone()],
                        why: format!(
                            "consumer {consumer} received {k}, whose enqueue was rejected"
                        ),
                    });
                } else if !maybe.contains(&k) {
                    found.push(Anomaly {
                        counterexample: None,
                        ops: vec![op.op_id.clone()],
                        why: format!(
                            "consumer {consumer} received {k}, which no producer enqueued"
                        ),
                    });
                }
            }
        }
        order_anomalies(consumer, &observed, &acked, window, &mut found);
        let total = found.len();
        found.truncate(LISTED_PER_CONSUMER);
        if total > found.len() {
            found.push(Anomaly {
                counterexample: None,
                ops: Vec::new(),
                why: format!(
                    "consumer {consumer}: {} more anomalies not listed",
                    total - found.len()
                ),
            });
        }
        anomalies.extend(found);
    }
    Ok(judged(
        NAME,
        SCOPE,
        checked,
        history.ops.len() as u64,
        anomalies,
    ))
}

/// Reorderings beyond the window, and canonical values skipped before the
/// consumer's last `window` positions.
fn order_anomalies(
    consumer: &str,
    observed: &[(usize, &Op)],
    canonical: &[&Op],
    window: usize,
    out: &mut Vec<Anomaly>,
) {
    let mut furthest: Option<(usize, &Op)> = None;
    for &(pos, op) in observed {
        if let Some((far, far_op)) = furthest
            && pos + window < far
        {
            out.push(Anomaly {
 counterexample: None,
                ops: vec![canonical[pos].op_id.clone(), canonical[far].op_id.clone(), op.op_id.clone()],
                why: format!(
                    "consumer {consumer} received {} (position {pos}) after {} (position {far}, op {}): \
                     reordered by {} > window {window}",
                    canonical[pos].input,
                    canonical[far].input,
                    far_op.op_id,
                    far - pos
                ),
            });
        }
        if furthest.is_none_or(|(far, _)| pos > far) {
            furthest = Some((pos, op));
        }
    }
    let got: HashSet<usize> = observed.iter().map(|(p, _)| *p).collect();
    let horizon = observed.len().saturating_sub(window);
    if let Some(skipped) = (0..horizon.min(canonical.len())).find(|p| !got.contains(p)) {
        out.push(Anomaly {
 counterexample: None,
            ops: vec![canonical[skipped].op_id.clone()],
            why: format!(
                "consumer {consumer} received {} values but not {} (position {skipped}): not a prefix",
                observed.len(),
                canonical[skipped].input
            ),
        });
    }
}
