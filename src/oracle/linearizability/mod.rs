//! Linearizability of a register or a key-value map (one register per key,
//! checked key by key: a map history is linearizable iff every key's is).

pub mod append;
pub mod compile;
pub mod crashed;
pub mod search;

use super::checker::{
    Anomaly, CheckerReport, Counterexample, RunOptions, Stuck, evidence_line,
    missing_fields_report, plural,
};
use super::history::{History, Op};
use crate::sanitize::clip;
use crate::verdict::CheckerRun;
use compile::{Compiled, Interner, MixHasher, NIL, Skip, compile};
pub use search::Pruning;
use search::{Budget, Outcome, Stats, search};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    /// Partitions whose search was cut (budget, `--first`) or never started.
    pub not_searched: usize,
    /// When the first anomaly was found, from the start of the check.
    pub first_anomaly_after: Option<Duration>,
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
    check_with_options(history, model, limits, &RunOptions::default())
}

/// [`check_with_figures`] run as `options` asks: with `first`, every partition's
/// search stops as soon as one partition is not linearizable (what was not searched
/// is counted in the evidence); `on_first_anomaly` hears of the first anomaly the
/// moment it is found; `threads` caps the searching threads.
///
/// Partitions are searched smallest first, so a cheap anomaly is found before a
/// hard valid key is done. When the budget ends the search with anomalies already
/// found, the verdict stays INVALID and the evidence says how many partitions were
/// not searched.
pub fn check_with_options(
    history: &History,
    model: Model,
    limits: Limits,
    options: &RunOptions,
) -> (CheckerReport, SearchFigures) {
    check_with_pruning(history, model, limits, options, Pruning::Full)
}

/// [`check_with_options`] with the search's prunings chosen: the benchmark and the
/// differential test compare [`Pruning::Full`] (what a check uses) with the cache
/// alone.
pub fn check_with_pruning(
    history: &History,
    model: Model,
    limits: Limits,
    options: &RunOptions,
    pruning: Pruning,
) -> (CheckerReport, SearchFigures) {
    let started = Instant::now();
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
    let mut stopped = 0usize;
    for (_, ops) in partitions.iter_mut() {
        figures.crashed_writes_dropped += crashed::settle(ops);
    }
    let first_found = OnceLock::new();
    let on_illegal = |i: usize, outcome: &Outcome| {
        if first_found.set(started.elapsed()).is_err() {
            return;
        }
        if let (Some(tell), Outcome::Illegal { blocked, .. }) = (options.on_first_anomaly, outcome)
            && let Some((key, ops)) = partitions.get(i)
            && let Some(op) = ops.get(*blocked)
        {
            tell(&format!(
                "{} on {}",
                what(history, &values, op),
                place(model, key)
            ));
        }
    };
    let control = Control {
        first: options.first,
        threads: match options.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        },
        on_illegal: &on_illegal,
        pruning,
    };
    let results = search_all(&partitions, budget, HELP_AFTER, &values, &control);
    figures.first_anomaly_after = first_found.get().copied();
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
            Outcome::Stopped => stopped += 1,
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
                figures.not_searched += 1;
            }
        }
    }
    figures.not_searched += stopped;
    let produced = history.ops.len() as u64;
    let checked = produced - unsupported.count;
    let report = match unknown {
        // A violation found is a finding even if another key ran out of budget.
        Some(reason) if anomalies.is_empty() => CheckerReport {
            checker: name.into(),
            evidence: format!("unknown: {reason}{}", unsupported.said()),
            run: CheckerRun::Unknown { reason },
            anomalies,
            scope: model.scope().into(),
        },
        unknown => {
            // Partitions cut or never started: more anomalies may be there.
            let n = figures.not_searched;
            let first = "stopped at the first anomaly (--first)";
            let cut = match (stopped, unknown) {
                (0, None) => String::new(),
                (0, Some(reason)) => format!("; {n} more not searched: {reason}"),
                (_, None) => format!("; {n} more not searched: {first}"),
                (_, Some(reason)) => format!("; {n} more not searched: {first}; {reason}"),
            };
            CheckerReport {
                checker: name.into(),
                evidence: format!(
                    "{} ({} {}, {} {} at most){cut}{}",
                    evidence_line(checked, produced, anomalies.len()),
                    partitions.len(),
                    plural(partitions.len() as u64, "partition", "partitions"),
                    figures.peak_configs,
                    plural(
                        figures.peak_configs as u64,
                        "search configuration",
                        "search configurations"
                    ),
                    unsupported.said()
                ),
                run: CheckerRun::Judged {
                    anomalies: anomalies.len() as u64,
                    ops_checked: checked,
                    ops_produced: produced,
                },
                anomalies,
                scope: model.scope().into(),
            }
        }
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
) -> (Vec<(&'h str, Vec<Compiled>)>, Unchecked) {
    // Key → index in `partitions`: a hash lookup per op, sorted once at the end.
    let mut index: HashMap<&str, usize, BuildHasherDefault<MixHasher>> = HashMap::default();
    let mut partitions: Vec<(&str, Vec<Compiled>)> = Vec::new();
    let mut unsupported = Unchecked::default();
    for (i, op) in history.ops.iter().enumerate() {
        let key = match model {
            Model::Register => "",
            Model::Kv => match &op.key {
                Some(k) => k.as_str(),
                None => {
                    unsupported.note(op, "a kv op names its key");
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
            Err(Skip::Unsupported(why)) => unsupported.note(op, why),
        }
    }
    partitions.sort_unstable_by(|a, b| a.0.cmp(b.0));
    (partitions, unsupported)
}

/// The ops the model does not know: how many, and the first named with why (the
/// coverage line would otherwise say only that some went unchecked).
#[derive(Default)]
struct Unchecked {
    count: u64,
    first: Option<String>,
}

impl Unchecked {
    fn note(&mut self, op: &Op, why: &str) {
        self.count += 1;
        self.first.get_or_insert_with(|| {
            format!(
                "op `{}` ({} {}): {why}",
                clip(&op.op_id, 60),
                clip(&op.op_type, 60),
                clip(&op.input.to_string(), 60)
            )
        });
    }

    /// `; N ops unchecked, the first …` for the evidence line, or nothing.
    fn said(&self) -> String {
        match &self.first {
            Some(first) => format!(
                "; {} {} unchecked, the first {first}",
                self.count,
                plural(self.count, "op", "ops")
            ),
            None => String::new(),
        }
    }
}

/// How [`search_all`] runs beside the budget.
struct Control<'a> {
    /// Stop every search once one partition is not linearizable.
    first: bool,
    /// Most threads searching at once (at least 1: the calling thread).
    threads: usize,
    /// Called with a partition's index and outcome when it is not linearizable,
    /// from the thread that searched it, as soon as it is known.
    on_illegal: &'a (dyn Fn(usize, &Outcome) + Sync),
    pruning: Pruning,
}

/// Search every partition; results come back in partition order.
///
/// Partitions are taken from one queue, smallest first: a cheap anomaly is found
/// before a hard valid key is done (and, with `first`, stops it).
///
/// The calling thread starts alone: most histories are searched in a few
/// milliseconds, where starting threads on a busy machine costs more than it
/// saves (kv 10k ops under a load of 4: 1.7 ms alone, 2.5–4.3 ms on two
/// threads from the start; at load 1.7, helpers from 0.2 ms gained at most
/// 10%). Once it has spent `help_after` ([`HELP_AFTER`] in a check) and
/// partitions remain — between partitions, or from inside a long search —
/// helper threads (up to `threads` in all) take partitions from the same queue.
/// Partitions are never split: one large key gains nothing from helpers.
///
/// A partition taken once the time budget is over, or once `first` has stopped
/// the search, is not started (unknown, or [`Outcome::Stopped`]).
fn search_all(
    partitions: &[(&str, Vec<Compiled>)],
    budget: Budget,
    help_after: Duration,
    values: &Interner,
    control: &Control,
) -> Vec<(Outcome, Stats)> {
    let start = Instant::now();
    // Stable: partitions of one size keep key order.
    let mut order: Vec<usize> = (0..partitions.len()).collect();
    order.sort_by_key(|&i| partitions[i].1.len());
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let take = || order.get(next.fetch_add(1, Ordering::Relaxed)).copied();
    let remaining = || order.len().saturating_sub(next.load(Ordering::Relaxed));
    // One partition, searched; `poll` is called now and then during the search.
    let one = |i: usize, poll: &dyn Fn()| -> (Outcome, Stats) {
        let result = if stop.load(Ordering::Relaxed) {
            (Outcome::Stopped, Stats::default())
        } else if budget.deadline.is_some_and(|d| Instant::now() > d) {
            let reason = "time budget exceeded before its search started".to_string();
            (Outcome::Unknown { reason }, Stats::default())
        } else {
            let asked_to_stop = || {
                poll();
                stop.load(Ordering::Relaxed)
            };
            search(
                &partitions[i].1,
                NIL,
                budget,
                values,
                &asked_to_stop,
                control.pruning,
            )
        };
        if matches!(result.0, Outcome::Illegal { .. }) {
            if control.first {
                stop.store(true, Ordering::Relaxed);
            }
            (control.on_illegal)(i, &result.0);
        }
        result
    };
    let helper = || {
        let mut done = Vec::new();
        while let Some(i) = take() {
            done.push((i, one(i, &|| {})));
        }
        done
    };
    let mut results: Vec<Option<(Outcome, Stats)>> = vec![None; partitions.len()];
    std::thread::scope(|scope| {
        let helpers = std::cell::RefCell::new(Vec::new());
        let called = std::cell::Cell::new(false);
        // Helpers once `help_after` has passed, if at least `least` partitions remain.
        let call_for_help = |least: usize| {
            if called.get() || start.elapsed() <= help_after {
                return;
            }
            let remaining = remaining();
            if remaining < least.max(1) {
                return;
            }
            called.set(true);
            let spawned = (1..control.threads.min(remaining + 1)).map(|_| scope.spawn(helper));
            helpers.borrow_mut().extend(spawned);
        };
        let mut mine = Vec::new();
        while let Some(i) = take() {
            mine.push((i, one(i, &|| call_for_help(1))));
            // Between partitions this thread takes the next one itself.
            call_for_help(2);
        }
        // A helper that panicked leaves its partitions unanswered (unknown below).
        let helped = helpers
            .into_inner()
            .into_iter()
            .filter_map(|h| h.join().ok());
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

/// Where a partition's ops act: `the register` or ``key `k` ``.
fn place(model: Model, key: &str) -> String {
    match model {
        Model::Register => "the register".to_string(),
        Model::Kv => format!("key `{key}`"),
    }
}

/// An op and what it did, in words: `op 7 read 3`, `op 9 cas 1→2`.
fn what(history: &History, values: &Interner, c: &Compiled) -> String {
    let id = history
        .ops
        .get(c.origin)
        .map_or("?", |op| op.op_id.as_str());
    match c.step {
        compile::Step::Read(v) => format!("op {id} read {}", values.name(v)),
        compile::Step::Write(v) => format!("op {id} wrote {}", values.name(v)),
        compile::Step::Cas(a, b) => format!("op {id} cas {}→{}", values.name(a), values.name(b)),
        compile::Step::CasRefused(a) => format!("op {id} cas from {} refused", values.name(a)),
        compile::Step::Append(v) => format!("op {id} appended {}", values.name(v)),
    }
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
        let ret = if c.indeterminate {
            "never returned".to_string()
        } else {
            format!(
                "returned {} after the first call",
                since(c.ret.saturating_sub(origin))
            )
        };
        format!("{} ({ret})", what(history, values, c))
    };
    // Ops that could be ordered just before the stuck one: they overlap it.
    let mut overlapping: Vec<&Compiled> = ops
        .iter()
        .filter(|c| c.origin != stuck.origin && c.call <= stuck.ret && c.ret >= stuck.call)
        .collect();
    overlapping.sort_by_key(|c| stuck.call.abs_diff(c.call));
    overlapping.truncate(MAX_OVERLAPPING);
    let mut ids = vec![history.ops[stuck.origin].op_id.to_string()];
    ids.extend(
        overlapping
            .iter()
            .map(|c| history.ops[c.origin].op_id.to_string()),
    );
    let place = place(model, key);
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

    fn control<'a>(
        first: bool,
        threads: usize,
        on_illegal: &'a (dyn Fn(usize, &Outcome) + Sync),
    ) -> Control<'a> {
        Control {
            first,
            threads,
            on_illegal,
            pruning: Pruning::Full,
        }
    }

    fn outcomes(results: Vec<(Outcome, Stats)>) -> Vec<Outcome> {
        results.into_iter().map(|(o, _)| o).collect()
    }

    /// A write and a read of what it wrote (or, `bad`, of a value nobody wrote), then
    /// `extra` sequential writes.
    fn small(bad: bool, extra: u64) -> Vec<Compiled> {
        let mut ops = vec![
            op(Step::Write(1), 0, 10, 0),
            op(Step::Read(if bad { 1_000 } else { 1 }), 20, 30, 1),
        ];
        ops.extend(
            (0..extra).map(|i| op(Step::Write(2 + i), 40 + 10 * i, 45 + 10 * i, 2 + i as usize)),
        );
        ops
    }

    /// `n` concurrent writes, then a read of the value of the first: linearizable,
    /// but only with that write last, which a depth-first search tries after about
    /// n·2^(n-1) configurations (17: over a million, seconds unoptimised).
    fn hard(n: u64) -> Vec<Compiled> {
        let mut ops: Vec<Compiled> = (0..n)
            .map(|i| op(Step::Write(100 + i), 0, 10, i as usize))
            .collect();
        ops.push(op(Step::Read(100), 20, 30, n as usize));
        ops
    }

    const NO_BUDGET: Budget = Budget {
        deadline: None,
        max_configs: usize::MAX,
    };

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
        let told = AtomicUsize::new(0);
        let tell = |_: usize, _: &Outcome| {
            told.fetch_add(1, Ordering::Relaxed);
        };
        let alone = outcomes(search_all(
            &partitions,
            budget,
            Duration::MAX,
            &values,
            &control(false, 4, &tell),
        ));
        let helped = outcomes(search_all(
            &partitions,
            budget,
            Duration::ZERO,
            &values,
            &control(false, 4, &tell),
        ));
        assert_eq!(alone, helped);
        let illegal = alone
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o, Outcome::Illegal { .. }))
            .map(|(i, _)| i)
            .collect::<Vec<_>>();
        assert_eq!(illegal, (0..64).step_by(3).collect::<Vec<_>>());
        // Each illegal partition told as soon as found, in both runs.
        assert_eq!(told.load(Ordering::Relaxed), 2 * illegal.len());
    }

    /// The smallest partition is searched first; with `first`, the partitions after
    /// the first illegal one are never started, and say so.
    #[test]
    fn first_stops_after_the_smallest_illegal_partition() {
        // Key order: the valid big key, then two illegal ones, the second the smallest.
        let partitions: Vec<(&str, Vec<Compiled>)> = vec![
            ("a", small(false, 40)),
            ("b", small(true, 5)),
            ("c", small(true, 0)),
        ];
        let values = Interner::new();
        let first = std::sync::Mutex::new(Vec::new());
        let tell = |i: usize, _: &Outcome| first.lock().expect("lock").push(i);
        let stopped = outcomes(search_all(
            &partitions,
            NO_BUDGET,
            Duration::MAX,
            &values,
            &control(true, 1, &tell),
        ));
        assert!(matches!(stopped[2], Outcome::Illegal { .. }), "{stopped:?}");
        assert_eq!(stopped[0], Outcome::Stopped);
        assert_eq!(stopped[1], Outcome::Stopped);
        assert_eq!(*first.lock().expect("lock"), vec![2]);
        // Without `first` every partition is searched; the smallest still goes first.
        first.lock().expect("lock").clear();
        let all = outcomes(search_all(
            &partitions,
            NO_BUDGET,
            Duration::MAX,
            &values,
            &control(false, 1, &tell),
        ));
        assert_eq!(all[0], Outcome::Linearizable);
        assert!(matches!(all[1], Outcome::Illegal { .. }), "{all:?}");
        assert_eq!(*first.lock().expect("lock"), vec![2, 1]);
    }

    /// A hard partition taken first (it is the smallest) does not hide a cheap
    /// anomaly: helpers are called from inside its search, one finds the anomaly,
    /// and with `first` the hard search stops.
    #[test]
    fn a_helper_called_from_inside_a_long_search_stops_it() {
        let partitions: Vec<(&str, Vec<Compiled>)> =
            vec![("hard", hard(17)), ("bad", small(true, 30))];
        assert!(partitions[0].1.len() < partitions[1].1.len());
        let values = Interner::new();
        let budget = Budget {
            deadline: Instant::now().checked_add(Duration::from_secs(60)),
            max_configs: usize::MAX,
        };
        let tell = |_: usize, _: &Outcome| {};
        let started = Instant::now();
        let results = search_all(
            &partitions,
            budget,
            Duration::ZERO,
            &values,
            &control(true, 2, &tell),
        );
        assert!(
            matches!(results[1].0, Outcome::Illegal { .. }),
            "{:?}",
            results[1].0
        );
        assert_eq!(
            results[0].0,
            Outcome::Stopped,
            "after {:?}",
            started.elapsed()
        );
        assert!(results[0].1.steps > 0, "the hard search had started");
        // Stopped long before the search could have ended by itself.
        assert!(results[0].1.configs < 1 << 17, "{:?}", results[0].1);
    }
}
