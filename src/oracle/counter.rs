//! Counter: `add` ops change one counter (per key, if the ops have keys) by their
//! input, `read` ops return it. Each acknowledged read must lie between what the
//! adds surely did by its invoke and what they could have done by its return.
//!
//! For a read invoked at `i` and returning at `r`, an add counts surely when it was
//! acknowledged before `i`, maybe when it was invoked by `r` and not failed (still
//! running, acknowledged later, timed out or in flight at the end), never when it
//! failed or was invoked after `r`. A maybe-add of `d` widens the range by `d`
//! upward when `d > 0` and downward when `d < 0`, so
//! `lower = initial + Σ sure + Σ maybe min(d, 0)` and
//! `upper = initial + Σ sure + Σ maybe max(d, 0)`. Equal timestamps are concurrent.

use super::checker::{Anomaly, judged, missing_fields_report, unknown};
use super::history::{History, Op};
use super::params::Params;
use crate::oracle::CheckerReport;
use serde_json::Value;
use std::collections::BTreeMap;

pub const NAME: &str = "counter";
pub const PARAMS: &[&str] = &["initial"];
pub const REQUIRED: &[&str] = &[
    "op_id",
    "op_type",
    "input",
    "output",
    "invoke_ts",
    "complete_ts",
    "error",
    "timeout",
];
pub const SCOPE: &str = "each acknowledged read against the adds that surely or possibly \
    preceded it (per key if the ops have keys); does not judge reads against each other (a read \
    that sees a timed-out add and a later read that does not each fit their range), nor the \
    final value";

/// Sums of positive and of negative deltas, i128 so no history overflows them.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    up: i128,
    down: i128,
}

/// Prefix sums of adds ordered by a time: `at[n]` is the n-th time, `sums[n]` the
/// sums of the adds before it (so `sums` has one more entry).
struct Prefix {
    at: Vec<u64>,
    sums: Vec<Sums>,
}

impl Prefix {
    fn new(mut adds: Vec<(u64, i128)>) -> Prefix {
        adds.sort_by_key(|(t, _)| *t);
        let mut sums = vec![Sums::default()];
        let mut acc = Sums::default();
        for (_, d) in &adds {
            acc.up += (*d).max(0);
            acc.down += (*d).min(0);
            sums.push(acc);
        }
        Prefix {
            at: adds.into_iter().map(|(t, _)| t).collect(),
            sums,
        }
    }

    /// The sums of the adds whose time satisfies `before`.
    fn upto(&self, before: impl Fn(u64) -> bool) -> Sums {
        self.sums[self.at.partition_point(|t| before(*t))]
    }
}

fn is_add(op: &Op) -> bool {
    op.op_type == "add"
}

fn is_read(op: &Op) -> bool {
    op.op_type == "read"
}

/// An integer from a history value (a delta or a read).
fn integer(v: &Value) -> Option<i128> {
    v.as_i64()
        .map(i128::from)
        .or_else(|| v.as_u64().map(i128::from))
}

pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
    params.only(NAME, PARAMS)?;
    let initial = match params.str("initial") {
        Some(v) => v
            .parse::<i64>()
            .map_err(|_| format!("parameter `initial`: `{v}` is not an integer"))?,
        None => 0,
    };
    if let Some(r) = missing_fields_report(NAME, SCOPE, history, REQUIRED) {
        return Ok(r);
    }
    let mut counters: BTreeMap<Option<&str>, Vec<&Op>> = BTreeMap::new();
    for op in &history.ops {
        counters.entry(op.key.as_deref()).or_default().push(op);
    }
    let mut anomalies = Vec::new();
    let (mut checked, mut reads, mut adds) = (0u64, 0u64, 0u64);
    let mut unjudged: Vec<String> = Vec::new();
    for (key, ops) in &counters {
        let on = key.map(|k| format!(" of `{k}`")).unwrap_or_default();
        // A write or cas would move the counter by an amount no add states.
        if let Some(op) = ops.iter().find(|o| !is_add(o) && !is_read(o)) {
            unjudged.push(format!(
                "the counter{on} has a `{}` op ({}), which is neither add nor read",
                op.op_type, op.op_id
            ));
            continue;
        }
        let mut sure = Vec::new();
        let mut maybe = Vec::new();
        let mut bad_add = None;
        for op in ops.iter().filter(|o| is_add(o) && !o.is_failed()) {
            let Some(d) = integer(&op.input) else {
                bad_add = Some(op);
                break;
            };
            maybe.push((op.invoke_ts, d));
            if op.is_acked()
                && let Some(done) = op.complete_ts
            {
                sure.push((done, d));
            }
        }
        if let Some(op) = bad_add {
            // One add of unknown size leaves every read of its counter unbounded.
            unjudged.push(format!(
                "the counter{on} has an add ({}) whose input {} is not an integer",
                op.op_id, op.input
            ));
            continue;
        }
        let (sure, maybe) = (Prefix::new(sure), Prefix::new(maybe));
        for op in ops {
            if is_add(op) {
                adds += 1;
                checked += 1;
                continue;
            }
            let done = op.complete_ts.filter(|_| op.is_acked());
            let (Some(done), Some(v)) = (done, integer(&op.output)) else {
                // A read that failed or never returned says nothing; an acknowledged
                // one without an integer is not judged.
                checked += u64::from(!op.is_acked());
                continue;
            };
            checked += 1;
            reads += 1;
            let s = sure.upto(|t| t < op.invoke_ts);
            let m = maybe.upto(|t| t <= done);
            let lower = i128::from(initial) + s.up + m.down;
            let upper = i128::from(initial) + s.down + m.up;
            if v < lower || v > upper {
                let how = if v < lower {
                    "too low for the adds acknowledged before it was invoked"
                } else {
                    "too high for the adds invoked before it returned"
                };
                let by = match op.process.as_str() {
                    "" => String::new(),
                    p => format!(" by process {p}"),
                };
                anomalies.push(Anomaly {
                    counterexample: None,
                    ops: vec![op.op_id.clone()],
                    why: format!(
                        "read{by} returned {v} for the counter{on}, outside the allowed \
                         [{lower}, {upper}]: {how}"
                    ),
                });
            }
        }
    }
    if reads == 0 {
        let reason = match unjudged.as_slice() {
            [] => "no acknowledged read with an integer value: nothing to judge".into(),
            [one] => one.clone(),
            [first, rest @ ..] => format!("{first} (and {} more counters)", rest.len()),
        };
        return Ok(unknown(NAME, SCOPE, reason));
    }
    let mut report = judged(NAME, SCOPE, checked, history.ops.len() as u64, anomalies);
    report.evidence = format!(
        "{}; {reads} reads judged against {adds} adds",
        report.evidence
    );
    for why in unjudged {
        report.evidence.push_str(&format!("; unjudged: {why}"));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::history::DEFAULT_FIELDS;
    use crate::verdict::CheckerRun;
    use serde_json::json;

    fn op(id: u64, f: &str, call: u64, ret: Option<u64>, input: Value, output: Value) -> Op {
        Op {
            op_id: id.to_string(),
            process: id.to_string(),
            invoke_ts: call,
            complete_ts: ret,
            op_type: f.into(),
            key: None,
            input,
            output,
            error: None,
            timeout: ret.is_none(),
            node: None,
            fault_epoch: None,
        }
    }

    fn run(ops: Vec<Op>, params: &[&str]) -> CheckerReport {
        let h = History {
            ops,
            present_fields: DEFAULT_FIELDS.iter().map(|f| f.to_string()).collect(),
            ..History::default()
        };
        check(&h, &Params::parse(params).expect("params")).expect("runs")
    }

    #[test]
    fn negative_deltas_widen_the_range_downward() {
        // +5 acknowledged, then -3 concurrent with the read: 2 and 5 both fit.
        let base = || {
            vec![
                op(1, "add", 0, Some(1), json!(5), Value::Null),
                op(2, "add", 2, Some(9), json!(-3), Value::Null),
            ]
        };
        for v in [2, 5] {
            let mut ops = base();
            ops.push(op(3, "read", 3, Some(4), Value::Null, json!(v)));
            assert!(run(ops, &[]).anomalies.is_empty(), "{v}");
        }
        let mut ops = base();
        ops.push(op(3, "read", 3, Some(4), Value::Null, json!(1)));
        let r = run(ops, &["initial=10"]);
        assert_eq!(r.anomalies.len(), 1);
        assert!(r.anomalies[0].why.contains("[12, 15]"), "{:?}", r.anomalies);
    }

    #[test]
    fn failed_adds_count_for_nothing_and_no_read_is_unknown() {
        let mut failed = op(1, "add", 0, Some(1), json!(4), Value::Null);
        failed.error = Some("rejected".into());
        let read = op(2, "read", 2, Some(3), Value::Null, json!(4));
        let r = run(vec![failed.clone(), read], &[]);
        assert!(r.anomalies[0].why.contains("[0, 0]"), "{:?}", r.anomalies);
        let r = run(vec![failed], &[]);
        assert!(matches!(r.run, CheckerRun::Unknown { .. }), "{:?}", r.run);
    }

    #[test]
    fn a_counter_with_writes_is_not_judged() {
        let ops = vec![
            op(1, "write", 0, Some(1), json!(7), Value::Null),
            op(2, "read", 2, Some(3), Value::Null, json!(7)),
        ];
        let r = run(ops, &[]);
        match &r.run {
            CheckerRun::Unknown { reason } => {
                assert!(reason.contains("`write` op (1)"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }
}
