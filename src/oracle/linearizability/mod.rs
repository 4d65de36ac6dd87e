//! Linearizability of a register or a key-value map (one register per key,
//! checked key by key: a map history is linearizable iff every key's is).

pub mod append;
pub mod compile;
pub mod crashed;
pub mod search;

use super::checker::{
    Anomaly, CheckerReport, Counterexample, Stuck, evidence_line, missing_fields_report, plural,
};
use super::history::History;
use crate::verdict::CheckerRun;
use compile::{Compiled, Interner, MixHasher, NIL, Skip, compile};
use search::{Budget, Outcome, Stats, search};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Which object the history's ops act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// One register; keys, if any, are ignored.
    Register,
    /// A map: an independent register per key.
    Kv,
}

impl Model {
    pub fn checker_name(self) -> &'static str {
        match self {
            Model::Register => "linearizability-register",
            Model::Kv => "linearizability-kv",
        }
    }

    pub fn required_fields(self) -> &'static [&'static str] {
        match self {
            Model::Register => &[
                "op_id",
                "invoke_ts",
                "complete_ts",
                "op_type",
                "input",
                "output",
                "error",
                "timeout",
            ],
            Model::Kv => &[
                "op_id",
                "invoke_ts",
                "complete_ts",
                "op_type",
                "key",
                "input",
                "output",
                "error",
                "timeout",
            ],
        }
    }

    pub fn scope(self) -> &'static str {
        match self {
            Model::Register => {
                "read / write / cas on one register, initially null; does not judge ops of \
                 other types (counted as unchecked), durability after the history ends, or \
                 anything the recorder's clock misorders"
            }
            Model::Kv => {
                "read (get) / write (put) / append / cas per key, each key an independent value \
                 initially unset; an unset key and the empty string are one value (a get of an \
                 unset key may answer null or \"\"); append concatenates text (a number's \
                 digits); does not judge cross-key (transactional) ordering or ops of other types"
            }
        }
    }
}

/// Search limits for the whole history.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub time: Duration,
    pub max_configs: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: Duration::from_secs(60),
            max_configs: 50_000_000,
        }
    }
}

/// What the search did, beside the report (for the benchmark).
#[derive(Debug, Clone, Copy, Default)]
pub struct SearchFigures {
    pub partitions: usize,
    pub peak_configs: usize,
    pub steps: u64,
    /// Crashed writes nobody could observe, left out of the search.
    pub crashed_writes_dropped: usize,
}

/// Check `history` under `model`.
pub fn check(history: &History, model: Model, limits: Limits) -> CheckerReport {
    check_with_figures(history, model, limits).0
}

/// [`check`], also returning the search figures.
pub fn check_with_figures(
    history: &History,
    model: Model,
    limits: Limits,
) -> (CheckerReport, SearchFigures) {
    let name = model.checker_name();
    if let Some(r) = missing_fields_report(name, model.scope(), history, model.required_fields()) {
        return (r, SearchFigures::default());
    }
    let mut values = Interner::new();
    let (mut partitions, unsupported) = partition(history, model, &mut values);
    let budget = Budget {
        deadline: Instant::now().checked_add(limits.time),
        max_configs: limits.max_configs,
    };
    let mut figures = SearchFigures {
        partitions: partitions.len(),
        ..SearchFigures::default()
    };
    let mut anomalies = Vec::new();
    let mut unknown = None;
    for (_, ops) in partitions.iter_mut() {
        figures.crashed_writes_dropped += crashed::settle(ops);
    }
    let results = search_all(&partitions, budget, HELP_AFTER, &values);
    for ((key, ops), (outcome, stats)) in partitions.iter().zip(results) {
        figures.peak_configs = figures.peak_configs.max(stats.configs);
        figures.steps += stats.steps;
        match outcome {
            Outcome::Linearizable => {}
            Outcome::Illegal {
                blocked,
                prefix,
                state,
            } => anomalies.push(counterexample(
                history, &values, model, key, ops, blocked, &prefix, state,
            )),
            Outcome::Unknown { reason } => {
                let key_note = match model {
                    Model::Register => String::new(),
                    Model::Kv => format!(
                        " on key `{key}` ({} {})",
                        ops.len(),
                        plural(ops.len() as u64, "op", "ops")
                    ),
                };
                unknown.get_or_insert(format!("{reason}{key_note}"));
            }
        }
    }
    let produced = history.ops.len() as u64;
    let checked = produced - unsupported;
    let report = match unknown {
        // A violation found is a finding even if another key ran out of budget.
        Some(reason) if anomalies.is_empty() => CheckerReport {
            checker: name.into(),
            evidence: format!("unknown: {reason}"),
            run: CheckerRun::Unknown { reason },
            anomalies,
            scope: model.scope().into(),
        },
        _ => CheckerReport {
            checker: name.into(),
            evidence: format!(
                "{} ({} {}, {} {} at most)",
                evidence_line(checked, produced, anomalies.len()),
                partitions.len(),
                plural(partitions.len() as u64, "partition", "partitions"),
                figures.peak_configs,
                plural(
                    figures.peak_configs as u64,
                    "search configuration",
                    "search configurations"
                )
            ),
            run: CheckerRun::Judged {
                anomalies: anomalies.len() as u64,
                ops_checked: checked,
                ops_produced: produced,
            },
            anomalies,
            scope: model.scope().into(),
        },
    };
    (report, figures)
}

/// How long the calling thread searches alone before helpers join (see
/// [`search_all`]); the kv 10k benchmark histories take about 1 ms in all.
const HELP_AFTER: Duration = Duration::from_millis(5);

/// Compile the ops into one partition per key (one in all for a register), in
/// key order, and count the ops the model does not know.
fn partition<'h>(
    history: &'h History,
    model: Model,
    values: &mut Interner,
) -> (Vec<(&'h str, Vec<Compiled>)>, u64) {
    // Key → index in `partitions`: a hash lookup per op, sorted once at the end.
    let mut index: HashMap<&str, usize, BuildHasherDefault<MixHasher>> = HashMap::default();
    let mut partitions: Vec<(&str, Vec<Compiled>)> = Vec::new();
    let mut unsupported = 0u64;
    for (i, op) in history.ops.iter().enumerate() {
        let key = match model {
            Model::Register => "",
            Model::Kv => match &op.key {
                Some(k) => k.as_str(),
                None => {
                    unsupported += 1;
                    continue;
                }
            },
        };
        match compile(op, i, values, model) {
            Ok(c) => {
                let slot = *index.entry(key).or_insert_with(|| {
                    partitions.push((key, Vec::new()));
                    partitions.len() - 1
                });
                partitions[slot].1.push(c);
            }
            Err(Skip::NoEffect) => {}
            Err(Skip::Unsupported) => unsupported += 1,
        }
    }
    partitions.sort_unstable_by(|a, b| a.0.cmp(b.0));
    (partitions, unsupported)
}

/// Search every partition; results come back in partition order.
///
/// The calling thread starts alone: most histories are searched in a few
/// milliseconds, where starting threads on a busy machine costs more than it
/// saves (kv 10k ops under a load of 4: 1.7 ms alone, 2.5–4.3 ms on two
/// threads from the start; at load 1.7, helpers from 0.2 ms gained at most
/// 10%). Once it has
/// spent `help_after` ([`HELP_AFTER`] in a check) and partitions remain, helper
/// threads (up to the machine's cores) take partitions from the same queue.
/// Partitions are never split: one large key gains nothing from helpers.
fn search_all(
    partitions: &[(&str, Vec<Compiled>)],
    budget: Budget,
    help_after: Duration,
    values: &Interner,
) -> Vec<(Outcome, Stats)> {
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let work = |done: &mut Vec<(usize, (Outcome, Stats))>| {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let (_, ops) = partitions.get(i)?;
        done.push((i, search(ops, NIL, budget, values)));
        Some(())
    };
    let mut results: Vec<Option<(Outcome, Stats)>> = vec![None; partitions.len()];
    std::thread::scope(|scope| {
        let mut mine = Vec::new();
        let mut helpers = Vec::new();
        while work(&mut mine).is_some() {
            let remaining = partitions
                .len()
                .saturating_sub(next.load(Ordering::Relaxed));
            if helpers.is_empty() && remaining > 1 && start.elapsed() > help_after {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                helpers = (1..cores.min(remaining))
                    .map(|_| {
                        scope.spawn(|| {
                            let mut done = Vec::new();
                            while work(&mut done).is_some() {}
                            done
                        })
                    })
                    .collect();
            }
        }
        // A helper that panicked leaves its partitions unanswered (unknown below).
        let helped = helpers.into_iter().filter_map(|h| h.join().ok());
        for (i, result) in helped.flatten().chain(mine) {
            results[i] = Some(result);
        }
    });
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                (
                    Outcome::Unknown {
                        reason: "the search thread failed".into(),
                    },
                    Stats::default(),
                )
            })
        })
        .collect()
}

/// `ns` nanoseconds in words: `2.781 ms`, `1.250 s`.
fn since(ns: u64) -> String {
    if ns < 1_000_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.3} s", ns as f64 / 1e9)
    }
}

/// The blocked op and the ops overlapping it on its key, with why.
#[allow(clippy::too_many_arguments)]
fn counterexample(
    history: &History,
    values: &Interner,
    model: Model,
    key: &str,
    ops: &[Compiled],
    blocked: usize,
    prefix: &[usize],
    state: String,
) -> Anomaly {
    const MAX_OVERLAPPING: usize = 8;
    let stuck = ops[blocked];
    // Times as the reader sees them: from the history's first call, with a unit
    // (recorders write nanoseconds).
    let origin = history.ops.iter().map(|o| o.invoke_ts).min().unwrap_or(0);
    let describe = |c: &Compiled| {
        let op = &history.ops[c.origin];
        let ret = if c.indeterminate {
            "never returned".to_string()
        } else {
            format!(
                "returned {} after the first call",
                since(c.ret.saturating_sub(origin))
            )
        };
        match c.step {
            compile::Step::Read(v) => format!("op {} read {} ({ret})", op.op_id, values.name(v)),
            compile::Step::Write(v) => {
                format!("op {} wrote {} ({ret})", op.op_id, values.name(v))
            }
            compile::Step::Cas(a, b) => format!(
                "op {} cas {}→{} ({ret})",
                op.op_id,
                values.name(a),
                values.name(b)
            ),
            compile::Step::CasRefused(a) => {
                format!(
                    "op {} cas from {} refused ({ret})",
                    op.op_id,
                    values.name(a)
                )
            }
            compile::Step::Append(v) => {
                format!("op {} appended {} ({ret})", op.op_id, values.name(v))
            }
        }
    };
    // Ops that could be ordered just before the stuck one: they overlap it.
    let mut overlapping: Vec<&Compiled> = ops
        .iter()
        .filter(|c| c.origin != stuck.origin && c.call <= stuck.ret && c.ret >= stuck.call)
        .collect();
    overlapping.sort_by_key(|c| stuck.call.abs_diff(c.call));
    overlapping.truncate(MAX_OVERLAPPING);
    let mut ids = vec![history.ops[stuck.origin].op_id.clone()];
    ids.extend(
        overlapping
            .iter()
            .map(|c| history.ops[c.origin].op_id.clone()),
    );
    let place = match model {
        Model::Register => "the register".to_string(),
        Model::Kv => format!("key `{key}`"),
    };
    let others = if overlapping.is_empty() {
        "no op overlaps it".to_string()
    } else {
        overlapping
            .iter()
            .map(|c| describe(c))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let depth = format!(
        "{} {}",
        prefix.len(),
        plural(prefix.len() as u64, "op", "ops")
    );
    let why = format!(
        "not linearizable on {place}: {} cannot take effect in any order of the ops before it \
         (deepest linearizable prefix: {depth}, leaving the value {state}); overlapping: {others}",
        describe(&stuck),
    );
    let origin = |i: &usize| ops[*i].origin;
    Anomaly {
        ops: ids,
        why,
        counterexample: Some(std::sync::Arc::new(Counterexample::Stuck(Stuck {
            place,
            ops: ops.iter().map(|c| c.origin).collect(),
            prefix: prefix.iter().map(origin).collect(),
            blocked: stuck.origin,
            state,
        }))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compile::Step;

    fn op(step: Step, call: u64, ret: u64, origin: usize) -> Compiled {
        Compiled {
            step,
            call,
            ret,
            indeterminate: false,
            origin,
        }
    }

    /// Helpers that join from the first partition on give the answers, in
    /// partition order, of one thread doing everything.
    #[test]
    fn helpers_keep_partition_order_and_answers() {
        let partitions: Vec<(&str, Vec<Compiled>)> = (0..64u64)
            .map(|k| {
                // Every third key reads a value nobody wrote: not linearizable.
                let read = if k % 3 == 0 { 1_000 } else { k + 1 };
                let ops = vec![
                    op(Step::Write(k + 1), 0, 10, 0),
                    op(Step::Read(read), 20, 30, 1),
                ];
                ("k", ops)
            })
            .collect();
        let budget = Budget {
            deadline: None,
            max_configs: 1_000,
        };
        let values = Interner::new();
        let alone: Vec<Outcome> = search_all(&partitions, budget, Duration::MAX, &values)
            .into_iter()
            .map(|(o, _)| o)
            .collect();
        let helped: Vec<Outcome> = search_all(&partitions, budget, Duration::ZERO, &values)
            .into_iter()
            .map(|(o, _)| o)
            .collect();
        assert_eq!(alone, helped);
        let illegal = alone
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o, Outcome::Illegal { .. }))
            .map(|(i, _)| i)
            .collect::<Vec<_>>();
        assert_eq!(illegal, (0..64).step_by(3).collect::<Vec<_>>());
    }
}
