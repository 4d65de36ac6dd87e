//! The no-lost-ack checker: every acknowledged write is in the final state at
//! quiescence (unless a later write on the same key explains the value seen).
//!
//! The checker folds ops one by one ([`Fold`]), so a history is judged while it is
//! read: per write only interned ids are kept (key, printed value, op id).

use super::checker::{Anomaly, Checker, CheckerReport, judged, missing_report};
use super::history::History;
use super::intern::{Interner, Texts};
use super::jsonl_read::Header;
use super::op_view::{OpSink, OpView};
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

fn is_write(op_type: &str) -> bool {
    op_type == "write" || op_type == "put"
}

/// Judge `history` against the quiescent `final_state` (key → value).
pub fn check(history: &History, final_state: &BTreeMap<String, Value>) -> CheckerReport {
    let mut fold = Fold::default();
    for op in &history.ops {
        fold.op(&op.view());
    }
    fold.finish(&history.header(), final_state)
}

/// A write that may have taken effect (acknowledged, or timed out and so perhaps
/// applied): its key (`None`: it had none), value and invoke, and for an
/// acknowledged one its op id.
struct Write {
    acked: Option<u32>,
    key: Option<u32>,
    value: u32,
    invoke_ts: u64,
}

/// The checker as a fold over ops: [`OpSink::op`] per op, then [`Fold::finish`].
#[derive(Default)]
pub struct Fold {
    keys: Interner,
    values: Interner,
    ids: Texts,
    writes: Vec<Write>,
}

impl OpSink for Fold {
    fn op(&mut self, o: &OpView<'_>) {
        let acked = o.is_acked();
        if !is_write(o.op_type) || !(acked || o.timeout) {
            return;
        }
        let value = self.values.id(&o.input.canonical());
        let key = o.key.map(|k| self.keys.id(k));
        self.writes.push(Write {
            acked: acked.then(|| self.ids.push(o.op_id)),
            key,
            value,
            invoke_ts: o.invoke_ts,
        });
    }
}

impl Fold {
    /// The report once every op of `header`'s history was folded.
    pub fn finish(self, header: &Header, final_state: &BTreeMap<String, Value>) -> CheckerReport {
        if let Some(r) = missing_report(
            NoLostAck::name(),
            NoLostAck::scope(),
            header,
            NoLostAck::required_fields(),
        ) {
            return r;
        }
        // Each final value by key id: the value, and its id if some write wrote it.
        let mut finals: Vec<Option<(&Value, Option<u32>)>> = vec![None; self.keys.len()];
        for (k, v) in final_state {
            if let Some(slot) = self
                .keys
                .get(k)
                .and_then(|key| finals.get_mut(key as usize))
            {
                *slot = Some((v, self.values.get(&v.to_string())));
            }
        }
        // For each key, the latest invocation of a write of its final value: one
        // pass, so the check is O(n) where asking every write about every other
        // was O(n²).
        let mut latest: Vec<Option<u64>> = vec![None; self.keys.len()];
        for w in &self.writes {
            if let Some(k) = w.key.map(|k| k as usize)
                && let Some(Some((_, f))) = finals.get(k)
                && *f == Some(w.value)
            {
                latest[k] = Some(latest[k].unwrap_or(0).max(w.invoke_ts));
            }
        }
        let mut anomalies = Vec::new();
        for w in &self.writes {
            let Some(id) = w.acked else {
                continue;
            };
            let op = || vec![self.ids.get(id).to_string()];
            let Some(key) = w.key else {
                anomalies.push(Anomaly {
                    counterexample: None,
                    ops: op(),
                    why: "acknowledged write has no key".into(),
                });
                continue;
            };
            // Printed only for an anomaly.
            let name = || self.keys.name(key);
            match finals.get(key as usize).copied().flatten() {
                None => anomalies.push(Anomaly {
                    counterexample: None,
                    ops: op(),
                    why: format!(
                        "acknowledged write to `{}` but the key is absent from the final state",
                        name()
                    ),
                }),
                Some((_, Some(found))) if found == w.value => {}
                Some((v, found)) => {
                    // A write of the final value invoked at or after w can have
                    // overwritten it (never w itself: its value is not the final one).
                    let explained =
                        found.is_some() && latest[key as usize].is_some_and(|at| at >= w.invoke_ts);
                    if !explained {
                        anomalies.push(Anomaly {
                            counterexample: None,
                            ops: op(),
                            why: format!(
                                "acknowledged write of {} to `{}` lost: final value {v} \
                                 written by no later write",
                                self.values.name(w.value),
                                name()
                            ),
                        });
                    }
                }
            }
        }
        // Every op produced is read: acknowledged writes against the final state.
        judged(
            NoLostAck::name(),
            NoLostAck::scope(),
            header.ops,
            header.ops,
            anomalies,
        )
    }
}

/// Parse a final-state dump: a JSON object of key → value.
pub fn parse_final_state(text: &str) -> Result<BTreeMap<String, Value>, String> {
    super::final_state::parse_dump("final state", text)
}
