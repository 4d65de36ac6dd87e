//! Exactly-once by business idempotency key: every key a client used has at most
//! one committed effect in the final-state dump, an acknowledged key has one,
//! and a key whose every attempt was rejected has none.
//!
//! The key is read from each op's input object (`idempotency_key` unless the
//! `key_field` parameter names another field). Grouping by the op id instead
//! would make the check vacuous, so that is refused as a mismatch.
//!
//! The checker folds ops one by one ([`Fold`]): per op only its key's id and its
//! op id are kept.

use super::checker::{Anomaly, judged, mismatch, missing_report};
use super::history::History;
use super::intern::{Interner, Texts};
use super::jsonl_read::Header;
use super::op_view::{OpSink, OpView};
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
    let mut fold = match Fold::new(params)? {
        Ok(fold) => fold,
        Err(report) => return Ok(report),
    };
    for op in &history.ops {
        fold.op(&op.view());
    }
    fold.finish(&history.header(), effects)
}

/// What the attempts with one key came to.
#[derive(Clone, Copy)]
struct Attempts {
    acked: bool,
    all_failed: bool,
}

/// The checker as a fold over ops: [`OpSink::op`] per op, then [`Fold::finish`].
pub struct Fold {
    field: String,
    keys: Interner,
    ids: Texts,
    /// Each keyed op: its key's id and its op id's.
    attempts: Vec<(u32, u32)>,
    /// By key id.
    per_key: Vec<Attempts>,
    unkeyed: u64,
}

impl Fold {
    /// The fold for `params`; `Ok(Err(report))` when the check cannot be made
    /// (grouping by the op id).
    pub fn new(params: &Params) -> Result<Result<Fold, CheckerReport>, String> {
        params.only(NAME, PARAMS)?;
        let field = params.str("key_field").unwrap_or("idempotency_key");
        if field == "op_id" {
            return Ok(Err(mismatch(
                NAME,
                SCOPE,
                "grouping by the op id makes exactly-once vacuous: name the business \
                 idempotency key"
                    .into(),
            )));
        }
        Ok(Ok(Fold {
            field: field.to_string(),
            keys: Interner::default(),
            ids: Texts::default(),
            attempts: Vec::new(),
            per_key: Vec::new(),
            unkeyed: 0,
        }))
    }

    /// The report once every op of `header`'s history was folded.
    pub fn finish(self, header: &Header, effects: &Value) -> Result<CheckerReport, String> {
        if let Some(r) = missing_report(NAME, SCOPE, header, REQUIRED) {
            return Ok(r);
        }
        let mut effects_of = vec![0u64; self.per_key.len()];
        let mut anomalies = Vec::new();
        let mut phantoms = Vec::new();
        each_effect_count(effects, &self.field, |key, n| match self.keys.get(key) {
            Some(id) => effects_of[id as usize] = n,
            None => phantoms.push((key.to_string(), n)),
        })?;
        // In key order, whatever order the dump had.
        phantoms.sort();
        let phantoms = phantoms.into_iter().map(|(key, n)| Anomaly {
            counterexample: None,
            ops: Vec::new(),
            why: format!("phantom effect: key `{key}` has {n} effect(s) but no op used it"),
        });
        // Keys with an anomaly, reported in key order as they always were.
        let mut found: Vec<(String, u32)> = Vec::new();
        for (id, a) in self.per_key.iter().enumerate() {
            let n = effects_of[id];
            if n > 1 || (n == 0 && a.acked) || (n == 1 && a.all_failed) {
                found.push((self.keys.name(id as u32), id as u32));
            }
        }
        found.sort();
        let mut ops_of: BTreeMap<u32, Vec<String>> =
            found.iter().map(|(_, id)| (*id, Vec::new())).collect();
        if !ops_of.is_empty() {
            for (key, op) in &self.attempts {
                if let Some(ops) = ops_of.get_mut(key) {
                    ops.push(self.ids.get(*op).to_string());
                }
            }
        }
        for (key, id) in found {
            let n = effects_of[id as usize];
            let ops = ops_of.remove(&id).unwrap_or_default();
            let why = if n > 1 {
                format!(
                    "duplicate effect: key `{key}` has {n} committed effects after {} attempt(s)",
                    ops.len()
                )
            } else if n == 0 {
                format!("lost effect: key `{key}` was acknowledged but has no committed effect")
            } else {
                format!(
                    "effect of a rejected request: every attempt with key `{key}` failed, yet \
                     one effect is committed"
                )
            };
            anomalies.push(Anomaly {
                counterexample: None,
                ops,
                why,
            });
        }
        anomalies.extend(phantoms);
        let produced = header.ops;
        Ok(judged(
            NAME,
            SCOPE,
            produced - self.unkeyed,
            produced,
            anomalies,
        ))
    }
}

impl OpSink for Fold {
    fn op(&mut self, o: &OpView<'_>) {
        let Some(value) = o.input.field(&self.field) else {
            self.unkeyed += 1;
            return;
        };
        let key = self.keys.id(&value.text());
        let op = self.ids.push(o.op_id);
        self.attempts.push((key, op));
        let (acked, failed) = (o.is_acked(), o.is_failed());
        match self.per_key.get_mut(key as usize) {
            Some(a) => {
                a.acked |= acked;
                a.all_failed &= failed;
            }
            None => self.per_key.push(Attempts {
                acked,
                all_failed: failed,
            }),
        }
    }
}

fn render(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Effects per key, handed to `each`: an array of records carrying `field`, or an
/// object of key → count (number) or key → list of effects (read where it lies:
/// no copy of a dump of a million keys).
fn each_effect_count(
    effects: &Value,
    field: &str,
    mut each: impl FnMut(&str, u64),
) -> Result<(), String> {
    match effects {
        Value::Array(records) => {
            let mut counts = BTreeMap::new();
            for (i, r) in records.iter().enumerate() {
                let k = r
                    .get(field)
                    .ok_or_else(|| format!("effects dump: record {i} has no `{field}`"))?;
                *counts.entry(render(k)).or_insert(0) += 1;
            }
            for (k, n) in counts {
                each(&k, n);
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
                each(k, n);
            }
        }
        _ => return Err("effects dump: expected an array of records or an object".into()),
    }
    Ok(())
}
