//! Prefix / order: every consumer's observed sequence is a prefix of the
//! producers' canonical order (acknowledged enqueues by completion time), except
//! for reorderings within `window` positions. Values from timed-out enqueues may
//! appear or not; values never enqueued, values of rejected enqueues, values
//! delivered twice to one consumer and skipped values are anomalies.
//!
//! The checker folds ops one by one ([`Fold`]): values are kept as interned ids of
//! their printed form, consumers' deliveries in one flat list.

use super::checker::{Anomaly, judged, missing_report};
use super::history::History;
use super::intern::{Interner, Texts};
use super::jsonl_read::Header;
use super::op_view::{OpSink, OpView};
use super::params::Params;
use crate::oracle::CheckerReport;
use std::collections::{HashMap, HashSet};

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

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type FastSet<K> = HashSet<K, foldhash::fast::RandomState>;

fn is_produce(op_type: &str) -> bool {
    matches!(
        op_type,
        "enqueue" | "send" | "produce" | "publish" | "append"
    )
}

fn is_consume(op_type: &str) -> bool {
    matches!(op_type, "dequeue" | "receive" | "consume" | "poll")
}

pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
    let mut fold = Fold::new(params)?;
    for op in &history.ops {
        fold.op(&op.view());
    }
    Ok(fold.finish(&history.header()))
}

/// An acknowledged enqueue.
struct Produced {
    complete_ts: Option<u64>,
    invoke_ts: u64,
    value: u32,
    id: u32,
}

/// An acknowledged dequeue: its values are `items[start..end]`.
struct Consumed {
    process: u32,
    invoke_ts: u64,
    id: u32,
    start: u32,
    end: u32,
}

/// The checker as a fold over ops: [`OpSink::op`] per op, then [`Fold::finish`].
pub struct Fold {
    window: usize,
    values: Interner,
    processes: Interner,
    ids: Texts,
    acked: Vec<Produced>,
    maybe: FastSet<u32>,
    rejected: FastSet<u32>,
    produces: u64,
    consumed: Vec<Consumed>,
    items: Vec<u32>,
}

impl Fold {
    pub fn new(params: &Params) -> Result<Fold, String> {
        params.only(NAME, PARAMS)?;
        Ok(Fold {
            window: params.u64("window")?.unwrap_or(0) as usize,
            values: Interner::default(),
            processes: Interner::default(),
            ids: Texts::default(),
            acked: Vec::new(),
            maybe: FastSet::default(),
            rejected: FastSet::default(),
            produces: 0,
            consumed: Vec::new(),
            items: Vec::new(),
        })
    }
}

impl OpSink for Fold {
    fn op(&mut self, o: &OpView<'_>) {
        if is_produce(o.op_type) {
            self.produces += 1;
            let value = self.values.id(&o.input.canonical());
            if o.is_acked() {
                let id = self.ids.push(o.op_id);
                self.acked.push(Produced {
                    complete_ts: o.complete_ts,
                    invoke_ts: o.invoke_ts,
                    value,
                    id,
                });
            } else if o.is_indeterminate() {
                self.maybe.insert(value);
            }
            if o.is_failed() {
                self.rejected.insert(value);
            }
        } else if is_consume(o.op_type) && o.is_acked() {
            let start = self.items.len() as u32;
            o.output.each_item(|item| {
                let value = self.values.id(&item.canonical());
                self.items.push(value);
            });
            let process = self.processes.id(o.process);
            let id = self.ids.push(o.op_id);
            self.consumed.push(Consumed {
                process,
                invoke_ts: o.invoke_ts,
                id,
                start,
                end: self.items.len() as u32,
            });
        }
    }
}

impl Fold {
    /// The report once every op of `header`'s history was folded.
    pub fn finish(mut self, header: &Header) -> CheckerReport {
        if let Some(r) = missing_report(NAME, SCOPE, header, REQUIRED) {
            return r;
        }
        let window = self.window;
        self.acked.sort_by_key(|o| (o.complete_ts, o.invoke_ts));
        let mut position: FastMap<u32, usize> = FastMap::default();
        for (i, o) in self.acked.iter().enumerate() {
            position.insert(o.value, i);
        }
        // Consumers in name order, each one's dequeues in invoke order.
        let by_process = self
            .processes
            .grouped_by_name(self.consumed.iter().map(|c| c.process));
        let mut anomalies = Vec::new();
        let mut checked = self.produces;
        let name = |v: u32| self.values.name(v);
        for (consumer, mut ops) in by_process {
            ops.sort_by_key(|i| self.consumed[*i as usize].invoke_ts);
            checked += ops.len() as u64;
            let mut found = Vec::new();
            let mut seen: FastMap<u32, u32> = FastMap::default();
            let mut observed: Vec<(usize, u32)> = Vec::new();
            for &i in ops.iter() {
                let op = &self.consumed[i as usize];
                let op_id = self.ids.get(op.id);
                for &k in &self.items[op.start as usize..op.end as usize] {
                    if let Some(first) = seen.get(&k) {
                        found.push(Anomaly {
                            counterexample: None,
                            ops: vec![self.ids.get(*first).to_string(), op_id.to_string()],
                            why: format!("consumer {consumer} received {} twice", name(k)),
                        });
                        seen.insert(k, op.id);
                    } else if let Some(p) = position.get(&k) {
                        seen.insert(k, op.id);
                        observed.push((*p, op.id));
                    } else {
                        seen.insert(k, op.id);
                        if !self.maybe.contains(&k) {
                            let why = if self.rejected.contains(&k) {
                                "whose enqueue was rejected"
                            } else {
                                "which no producer enqueued"
                            };
                            found.push(Anomaly {
                                counterexample: None,
                                ops: vec![op_id.to_string()],
                                why: format!("consumer {consumer} received {}, {why}", name(k)),
                            });
                        }
                    }
                }
            }
            self.order_anomalies(&consumer, &observed, window, &mut found);
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
        judged(NAME, SCOPE, checked, header.ops, anomalies)
    }

    /// Reorderings beyond the window, and canonical values skipped before the
    /// consumer's last `window` positions.
    fn order_anomalies(
        &self,
        consumer: &str,
        observed: &[(usize, u32)],
        window: usize,
        out: &mut Vec<Anomaly>,
    ) {
        let canonical = &self.acked;
        let id = |i: u32| self.ids.get(i).to_string();
        let value = |pos: usize| self.values.name(canonical[pos].value);
        let mut furthest: Option<(usize, u32)> = None;
        for &(pos, op) in observed {
            if let Some((far, far_op)) = furthest
                && pos + window < far
            {
                out.push(Anomaly {
                    counterexample: None,
                    ops: vec![id(canonical[pos].id), id(canonical[far].id), id(op)],
                    why: format!(
                        "consumer {consumer} received {} (position {pos}) after {} (position \
                         {far}, op {}): reordered by {} > window {window}",
                        value(pos),
                        value(far),
                        id(far_op),
                        far - pos
                    ),
                });
            }
            if furthest.is_none_or(|(far, _)| pos > far) {
                furthest = Some((pos, op));
            }
        }
        let got: FastSet<usize> = observed.iter().map(|(p, _)| *p).collect();
        let horizon = observed.len().saturating_sub(window);
        if let Some(skipped) = (0..horizon.min(canonical.len())).find(|p| !got.contains(p)) {
            out.push(Anomaly {
                counterexample: None,
                ops: vec![id(canonical[skipped].id)],
                why: format!(
                    "consumer {consumer} received {} values but not {} (position {skipped}): not \
                     a prefix",
                    observed.len(),
                    value(skipped)
                ),
            });
        }
    }
}
