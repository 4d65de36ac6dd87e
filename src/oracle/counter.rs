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
//!
//! Keys come from the ops, or from `[key value]` values when every op carries one
//! (current Jepsen's independent tuple). Without an anomaly, an acknowledged read
//! that cannot be judged (its value no integer, or its counter not judged) makes
//! the verdict unknown: it may hide one.

use super::checker::{Anomaly, judged, missing_fields_report, unknown};
use super::history::{History, Op};
use super::params::Params;
use crate::oracle::CheckerReport;
use serde_json::Value;
use std::borrow::Cow;
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

/// Why `v` is not an integer the checker can judge; `hint` follows a vector.
fn not_integer(v: &Value, hint: &str) -> String {
    match v {
        Value::Null => "no value".into(),
        // Past 64 bits JSON and EDN readers keep only a float's approximation.
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() >= i64::MAX as f64) =>
        {
            format!("{v}, an integer too large to judge exactly")
        }
        Value::Array(_) => format!("{v}, not an integer{hint}"),
        _ => format!("{v}, not an integer"),
    }
}

static NULL: Value = Value::Null;

/// An op as the checker reads it: the counter it is on and its values.
struct CounterOp<'a> {
    op: &'a Op,
    key: Option<Cow<'a, str>>,
    input: &'a Value,
    output: &'a Value,
}

impl<'a> CounterOp<'a> {
    fn plain(op: &'a Op) -> Self {
        CounterOp {
            op,
            key: op.key.as_deref().map(Cow::Borrowed),
            input: &op.input,
            output: &op.output,
        }
    }

    /// The op read as `[key value]` pairs (current Jepsen's independent tuple, a
    /// MapEntry printed as a plain vector): its input is one (a read's invoke
    /// carries `[k nil]`, or nil), and a read's output, if any, one of the same key.
    fn paired(op: &'a Op) -> Option<Self> {
        let input = pair(&op.input);
        let value = input.as_ref().map_or(&NULL, |(_, v)| *v);
        let (key, output) = if is_read(op) {
            let output = match &op.output {
                Value::Null => None,
                out => Some(pair(out)?),
            };
            match (input, output) {
                (Some((k, _)), Some((o, v))) if k == o => (k, v),
                (Some((k, _)), None) => (k, &NULL),
                (None, Some(out)) if op.input.is_null() => out,
                _ => return None,
            }
        } else {
            (input?.0, &op.output)
        };
        Some(CounterOp {
            op,
            key: Some(key),
            input: value,
            output,
        })
    }
}

/// `[k v]` with a scalar key (a string or keyword, or an integer) and a value that is
/// not a collection.
fn pair(v: &Value) -> Option<(Cow<'_, str>, &Value)> {
    let Value::Array(items) = v else {
        return None;
    };
    let [k, v] = items.as_slice() else {
        return None;
    };
    let key = match k {
        Value::String(s) => Cow::Borrowed(s.as_str()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Cow::Owned(n.to_string()),
        _ => return None,
    };
    (!v.is_array() && !v.is_object()).then_some((key, v))
}

/// The ops as the checker reads them, and the hint for a vector value. Values are
/// read as `[key value]` pairs only when that is unambiguous: no op has a key of its
/// own and every op carries a pair.
fn counter_ops(history: &History) -> (Vec<CounterOp<'_>>, String) {
    let plain = || history.ops.iter().map(CounterOp::plain).collect();
    let hint = " (a [key value] pair? read as one only when every op carries one";
    if history.ops.iter().any(|o| o.key.is_some()) {
        return (plain(), format!("{hint} and no op has a `key` of its own)"));
    }
    let mut paired = Vec::with_capacity(history.ops.len());
    for op in &history.ops {
        match CounterOp::paired(op) {
            Some(p) => paired.push(p),
            None => return (plain(), format!("{hint}; op {} does not)", op.op_id)),
        }
    }
    (paired, String::new())
}

/// Up to five notes, and how many more.
fn listed(notes: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut out = notes[..notes.len().min(SHOWN)].join("; ");
    if notes.len() > SHOWN {
        out.push_str(&format!(" (and {} more)", notes.len() - SHOWN));
    }
    out
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
    let (all, hint) = counter_ops(history);
    let mut counters: BTreeMap<Option<&str>, Vec<&CounterOp>> = BTreeMap::new();
    for op in &all {
        counters.entry(op.key.as_deref()).or_default().push(op);
    }
    let mut anomalies = Vec::new();
    let (mut checked, mut reads, mut adds) = (0u64, 0u64, 0u64);
    // What was not judged, and how many acknowledged reads that leaves unjudged.
    let mut unjudged: Vec<String> = Vec::new();
    let mut hidden = 0u64;
    for (key, ops) in &counters {
        let on = key.map(|k| format!(" of `{k}`")).unwrap_or_default();
        let acked_reads = ops
            .iter()
            .filter(|o| is_read(o.op) && o.op.is_acked())
            .count() as u64;
        let unread = match acked_reads {
            0 => String::new(),
            1 => ": its acknowledged read is not judged".into(),
            n => format!(": its {n} acknowledged reads are not judged"),
        };
        // A write or cas would move the counter by an amount no add states.
        if let Some(o) = ops.iter().find(|o| !is_add(o.op) && !is_read(o.op)) {
            unjudged.push(format!(
                "the counter{on} has a `{}` op ({}), which is neither add nor read{unread}",
                o.op.op_type, o.op.op_id
            ));
            hidden += acked_reads;
            continue;
        }
        let mut sure = Vec::new();
        let mut maybe = Vec::new();
        let mut bad_add = None;
        for o in ops.iter().filter(|o| is_add(o.op) && !o.op.is_failed()) {
            let Some(d) = integer(o.input) else {
                bad_add = Some(o);
                break;
            };
            maybe.push((o.op.invoke_ts, d));
            if o.op.is_acked()
                && let Some(done) = o.op.complete_ts
            {
                sure.push((done, d));
            }
        }
        if let Some(o) = bad_add {
            // One add of unknown size leaves every read of its counter unbounded.
            unjudged.push(format!(
                "the counter{on} has an add ({}) whose input {} is {}{unread}",
                o.op.op_id,
                o.input,
                match o.input {
                    Value::Array(_) => format!("not an integer{hint}"),
                    _ => "not an integer".into(),
                }
            ));
            hidden += acked_reads;
            continue;
        }
        let (sure, maybe) = (Prefix::new(sure), Prefix::new(maybe));
        for o in ops {
            let op = o.op;
            if is_add(op) {
                adds += 1;
                checked += 1;
                continue;
            }
            let Some(done) = op.complete_ts.filter(|_| op.is_acked()) else {
                // A read that failed or never returned says nothing.
                checked += 1;
                continue;
            };
            let Some(v) = integer(o.output) else {
                // The read saw something: what it was is not known, so an anomaly
                // may hide in it.
                unjudged.push(format!(
                    "read {}{on} returned {}",
                    op.op_id,
                    not_integer(o.output, &hint)
                ));
                hidden += 1;
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
                    ops: vec![op.op_id.to_string()],
                    why: format!(
                        "read{by} returned {v} for the counter{on}, outside the allowed \
                         [{lower}, {upper}]: {how}"
                    ),
                });
            }
        }
    }
    // An anomaly found stands; without one, a read not judged may hide one.
    if anomalies.is_empty() && (reads == 0 || hidden > 0) {
        let reason = match (hidden, unjudged.as_slice()) {
            (_, []) => "no acknowledged read with an integer value: nothing to judge".into(),
            (0, notes) => listed(notes),
            (1, notes) => format!("1 acknowledged read could not be judged: {}", listed(notes)),
            (n, notes) => format!(
                "{n} acknowledged reads could not be judged: {}",
                listed(notes)
            ),
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
    use compact_str::ToCompactString;
    use serde_json::json;

    fn op(id: u64, f: &str, call: u64, ret: Option<u64>, input: Value, output: Value) -> Op {
        Op {
            op_id: id.to_compact_string(),
            process: id.to_compact_string(),
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

    #[test]
    fn plain_key_value_pairs_are_keys_when_every_op_carries_one() {
        // Current Jepsen: an independent tuple is a plain [k v]; a read invokes [k nil].
        let ops = || {
            vec![
                op(1, "add", 0, Some(1), json!(["a", 2]), json!(["a", 2])),
                op(2, "add", 0, Some(1), json!([7, 5]), json!([7, 5])),
                op(3, "read", 2, Some(3), json!(["a", null]), json!(["a", 2])),
                op(4, "read", 2, Some(3), json!([7, null]), json!([7, 4])),
                op(5, "read", 2, None, json!([7, null]), Value::Null),
            ]
        };
        let r = run(ops(), &[]);
        assert_eq!(r.anomalies.len(), 1, "{r:?}");
        assert_eq!(r.anomalies[0].ops, ["4"]);
        assert!(
            r.anomalies[0].why.contains("counter of `7`") && r.anomalies[0].why.contains("[5, 5]"),
            "{:?}",
            r.anomalies
        );
        // A read whose output names another key than its invoke: not a pair history.
        let mut crossed = ops();
        crossed[2].output = json!(["b", 2]);
        let r = run(crossed, &[]);
        match &r.run {
            CheckerRun::Unknown { reason } => assert!(
                reason.contains("whose input [\"a\",2] is not an integer (a [key value] pair?")
                    && reason.contains("op 3 does not)"),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
        // Ops with a key field of their own: a vector value is not a pair.
        let mut with_key = ops();
        with_key[0].key = Some("k".into());
        let r = run(with_key, &[]);
        match &r.run {
            CheckerRun::Unknown { reason } => {
                assert!(reason.contains("no op has a `key` of its own"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_acknowledged_read_not_judged_makes_the_verdict_unknown() {
        let add = op(1, "add", 0, Some(1), json!(1), Value::Null);
        let fits = op(2, "read", 2, Some(3), Value::Null, json!(1));
        let odd = op(3, "read", 4, Some(5), Value::Null, json!(1.5));
        let r = run(vec![add.clone(), fits.clone(), odd.clone()], &[]);
        match &r.run {
            CheckerRun::Unknown { reason } => assert_eq!(
                reason,
                "1 acknowledged read could not be judged: read 3 returned 1.5, not an integer"
            ),
            other => panic!("{other:?}"),
        }
        // A read that failed or never returned hides nothing.
        let mut failed = odd.clone();
        failed.error = Some("rejected".into());
        let r = run(vec![add.clone(), fits.clone(), failed], &[]);
        assert!(matches!(r.run, CheckerRun::Judged { .. }), "{:?}", r.run);
        // Reads on a counter that is not judged are not judged either.
        let mut other = vec![
            op(4, "write", 0, Some(1), json!(7), Value::Null),
            op(5, "read", 2, Some(3), Value::Null, json!(7)),
        ];
        for o in &mut other {
            o.key = Some("w".into());
        }
        let mut ops = vec![add, fits];
        for o in &mut ops {
            o.key = Some("c".into());
        }
        ops.extend(other);
        let r = run(ops, &[]);
        match &r.run {
            CheckerRun::Unknown { reason } => assert!(
                reason.starts_with("1 acknowledged read could not be judged: the counter of `w`")
                    && reason.ends_with("its acknowledged read is not judged"),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
    }
}
