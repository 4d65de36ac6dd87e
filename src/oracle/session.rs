//! Session guarantees, grouped by process (one process = one session):
//! monotonic reads and read-your-writes.

use super::checker::{Anomaly, judged, missing_fields_report, missing_report};
use super::history::{History, Op};
use super::params::Params;
use crate::oracle::CheckerReport;
use std::collections::{BTreeMap, HashMap};

fn is_read(op_type: &str) -> bool {
    matches!(op_type, "read" | "get" | "r")
}

fn is_write(op_type: &str) -> bool {
    matches!(op_type, "write" | "put" | "w")
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
    use crate::oracle::intern::{Interner, Texts};
    use crate::oracle::jsonl_read::Header;
    use crate::oracle::op_view::{OpSink, OpView, Val, printed};

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
    fn version(output: Val<'_>) -> Option<f64> {
        if output.is_null() {
            return Some(f64::NEG_INFINITY);
        }
        output
            .as_f64()
            .or_else(|| output.field("version").and_then(Val::as_f64))
    }

    pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
        let mut fold = Fold::new(params)?;
        for op in &history.ops {
            fold.op(&op.view());
        }
        Ok(fold.finish(&history.header()))
    }

    /// An acknowledged read with a key and a version.
    struct Read {
        process: u32,
        key: u32,
        invoke_ts: u64,
        version: f64,
        /// Its op id and its output printed, in [`Fold::texts`].
        id: u32,
        output: u32,
    }

    /// The checker as a fold over ops: [`OpSink::op`] per op, then [`Fold::finish`].
    pub struct Fold {
        processes: Interner,
        keys: Interner,
        texts: Texts,
        reads: Vec<Read>,
        unchecked: u64,
    }

    impl Fold {
        pub fn new(params: &Params) -> Result<Fold, String> {
            params.only(NAME, &[])?;
            Ok(Fold {
                processes: Interner::default(),
                keys: Interner::default(),
                texts: Texts::default(),
                reads: Vec::new(),
                unchecked: 0,
            })
        }

        /// The report once every op of `header`'s history was folded.
        pub fn finish(self, header: &Header) -> CheckerReport {
            if let Some(r) = missing_report(NAME, SCOPE, header, REQUIRED) {
                return r;
            }
            // Sessions in process name order, each one's reads in invoke order.
            let by_process = self
                .processes
                .grouped_by_name(self.reads.iter().map(|r| r.process));
            let mut anomalies = Vec::new();
            let mut last: HashMap<u32, (f64, u32), foldhash::fast::RandomState> =
                HashMap::default();
            for (process, mut reads) in by_process {
                if !reads.is_sorted_by_key(|i| self.reads[*i as usize].invoke_ts) {
                    reads.sort_by_key(|i| self.reads[*i as usize].invoke_ts);
                }
                last.clear();
                for &i in reads.iter() {
                    let op = &self.reads[i as usize];
                    let v = op.version;
                    let prev = last.get(&op.key).copied();
                    if let Some((before, prev_i)) = prev
                        && v < before
                    {
                        let prev_op = &self.reads[prev_i as usize];
                        anomalies.push(Anomaly {
                            counterexample: None,
                            ops: vec![
                                self.texts.get(prev_op.id).to_string(),
                                self.texts.get(op.id).to_string(),
                            ],
                            why: format!(
                                "process {process} read `{}` at version {} then at the older {}",
                                self.keys.name(op.key),
                                printed(self.texts.get(prev_op.output)),
                                printed(self.texts.get(op.output))
                            ),
                        });
                    }
                    if prev.is_none_or(|(before, _)| v >= before) {
                        last.insert(op.key, (v, i));
                    }
                }
            }
            let produced = header.ops;
            judged(NAME, SCOPE, produced - self.unchecked, produced, anomalies)
        }
    }

    impl OpSink for Fold {
        fn op(&mut self, op: &OpView<'_>) {
            if !is_read(op.op_type) || !op.is_acked() {
                return;
            }
            let (Some(key), Some(version)) = (op.key, version(op.output)) else {
                self.unchecked += 1;
                return;
            };
            let process = self.processes.id(op.process);
            let key = self.keys.id(key);
            let id = self.texts.push(op.op_id);
            // As read: printed canonically only if an anomaly names it.
            let output = self.texts.push(&op.output.as_read());
            self.reads.push(Read {
                process,
                key,
                invoke_ts: op.invoke_ts,
                version,
                id,
                output,
            });
        }
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
        for op in history
            .ops
            .iter()
            .filter(|o| is_write(&o.op_type) && !o.is_failed())
        {
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
                if is_write(&op.op_type) && op.is_acked() {
                    own.insert(key, op);
                    continue;
                }
                if !is_read(&op.op_type) || !op.is_acked() {
                    continue;
                }
                let Some(w) = own.get(key) else { continue };
                if op.output == w.input || overwritten(&writes, key, w, op) {
                    continue;
                }
                anomalies.push(Anomaly {
                    counterexample: None,
                    ops: vec![w.op_id.to_string(), op.op_id.to_string()],
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
