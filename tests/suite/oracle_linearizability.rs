//! Known-answer and property tests of the linearizability checkers.

use crate::support::ops;

use faultline::oracle::history::Op;
use faultline::oracle::linearizability::{Limits, Model, check};
use faultline::verdict::CheckerRun;
use ops::{history, op};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::time::Duration;

fn w(id: u64, call: u64, ret: Option<u64>, v: i64) -> Op {
    op(id, id, call, ret, "write", "k", json!(v), Value::Null)
}

fn r(id: u64, call: u64, ret: u64, v: Value) -> Op {
    op(id, id, call, Some(ret), "read", "k", Value::Null, v)
}

fn verdict(ops: Vec<Op>, model: Model) -> CheckerRun {
    check(&history(ops), model, Limits::default()).run
}

fn anomalies(run: &CheckerRun) -> u64 {
    match run {
        CheckerRun::Judged { anomalies, .. } => *anomalies,
        other => panic!("not judged: {other:?}"),
    }
}

#[test]
fn concurrent_writes_either_order() {
    // Two overlapping writes; reads after both see either, consistently.
    let ops = vec![
        w(1, 0, Some(10), 1),
        w(2, 5, Some(15), 2),
        r(3, 20, 25, json!(1)),
        r(4, 30, 35, json!(1)),
    ];
    assert_eq!(anomalies(&verdict(ops, Model::Register)), 0);
}

#[test]
fn stale_read_is_rejected_with_counterexample() {
    let ops = vec![
        w(1, 0, Some(10), 1),
        w(2, 20, Some(30), 2),
        r(3, 40, 50, json!(1)),
    ];
    let report = check(&history(ops), Model::Register, Limits::default());
    assert_eq!(anomalies(&report.run), 1);
    let a = &report.anomalies[0];
    assert_eq!(
        a.ops[0], "3",
        "the stale read is the op that cannot take effect: {a:?}"
    );
    assert!(a.why.contains("read 1"), "{}", a.why);
}

#[test]
fn reads_flip_back_is_rejected() {
    // Both reads overlap the write, but 2 then null is impossible.
    let ops = vec![
        w(1, 0, Some(100), 2),
        r(2, 10, 20, json!(2)),
        r(3, 30, 40, Value::Null),
    ];
    assert_eq!(anomalies(&verdict(ops, Model::Register)), 1);
}

#[test]
fn crashed_write_may_take_effect_late_or_never() {
    let late = vec![
        w(1, 0, None, 7),
        r(2, 10, 20, Value::Null),
        r(3, 30, 40, json!(7)),
    ];
    assert_eq!(anomalies(&verdict(late, Model::Register)), 0);
    let never = vec![
        w(1, 0, None, 7),
        r(2, 10, 20, Value::Null),
        r(3, 30, 40, Value::Null),
    ];
    assert_eq!(anomalies(&verdict(never, Model::Register)), 0);
    // ...but not before its invoke.
    let early = vec![r(2, 0, 5, json!(7)), w(1, 10, None, 7)];
    assert_eq!(anomalies(&verdict(early, Model::Register)), 1);
}

#[test]
fn failed_write_never_takes_effect() {
    let mut failed = w(1, 0, Some(10), 5);
    failed.error = Some("rejected".into());
    let ops = vec![failed, r(2, 20, 30, json!(5))];
    assert_eq!(anomalies(&verdict(ops, Model::Register)), 1);
}

#[test]
fn cas_success_and_refusal() {
    let ok = vec![
        w(1, 0, Some(10), 1),
        op(2, 2, 20, Some(30), "cas", "k", json!([1, 2]), json!(true)),
        r(3, 40, 50, json!(2)),
    ];
    assert_eq!(anomalies(&verdict(ok, Model::Register)), 0);
    let refused_wrongly = vec![
        w(1, 0, Some(10), 1),
        op(2, 2, 20, Some(30), "cas", "k", json!([1, 2]), json!(false)),
    ];
    assert_eq!(anomalies(&verdict(refused_wrongly, Model::Register)), 1);
}

#[test]
fn kv_partitions_by_key() {
    let mut a = w(1, 0, Some(10), 1);
    a.key = Some("a".into());
    let mut b = w(2, 0, Some(10), 2);
    b.key = Some("b".into());
    let mut ra = r(3, 20, 30, json!(1));
    ra.key = Some("a".into());
    let mut rb = r(4, 20, 30, json!(2));
    rb.key = Some("b".into());
    assert_eq!(
        anomalies(&verdict(
            vec![a.clone(), b.clone(), ra.clone(), rb.clone()],
            Model::Kv
        )),
        0
    );
    // As one register the same history is not linearizable.
    assert_eq!(anomalies(&verdict(vec![a, b, ra, rb], Model::Register)), 1);
}

#[test]
fn unsupported_ops_lower_coverage() {
    let ops = vec![
        w(1, 0, Some(10), 1),
        op(2, 2, 20, Some(30), "delete", "k", Value::Null, Value::Null),
    ];
    match verdict(ops, Model::Register) {
        CheckerRun::Judged {
            ops_checked,
            ops_produced,
            ..
        } => assert_eq!((ops_checked, ops_produced), (1, 2)),
        other => panic!("{other:?}"),
    }
}

/// The ops the model cannot check are named, not only counted: the first with
/// its type, input and why (a cas that is not `[old new]`, an unknown type).
#[test]
fn unchecked_ops_are_named_with_why() {
    let ops = vec![
        w(1, 0, Some(10), 1),
        op(
            2,
            2,
            20,
            Some(30),
            "cas",
            "k",
            serde_json::json!([1]),
            Value::Null,
        ),
        op(3, 3, 40, Some(50), "delete", "k", Value::Null, Value::Null),
    ];
    let report = check(&history(ops), Model::Register, Limits::default());
    assert!(
        report
            .evidence
            .contains("2 ops unchecked, the first op `2` (cas [1]): a cas's input is [old new]"),
        "{}",
        report.evidence
    );
    // A type (or id, or input) as long as a line is shown by its first 60 characters.
    let long = "x".repeat(100);
    let ops = vec![op(2, 2, 20, Some(30), &long, "k", Value::Null, Value::Null)];
    let evidence = check(&history(ops), Model::Register, Limits::default()).evidence;
    assert!(
        evidence.contains(&format!("({}… null)", "x".repeat(60))),
        "{evidence}"
    );
}

#[test]
fn missing_timeout_field_refuses() {
    let mut h = history(vec![w(1, 0, Some(10), 1)]);
    h.present_fields.remove("timeout");
    let run = check(&h, Model::Register, Limits::default()).run;
    assert_eq!(
        run,
        CheckerRun::MissingFields {
            fields: vec!["timeout".into()]
        }
    );
}

#[test]
fn budget_exhausted_is_unknown_never_pass() {
    // Many concurrent crashed writes kept pending (a refused cas could see any
    // of them) and an impossible read: a large search.
    let mut ops: Vec<Op> = (0..40).map(|i| w(i, 0, None, i as i64)).collect();
    ops.push(op(
        99,
        99,
        1,
        Some(2),
        "cas",
        "k",
        json!([-5, 0]),
        json!(false),
    ));
    ops.push(r(100, 1, 1000, json!(-1)));
    let limits = Limits {
        time: Duration::from_millis(50),
        max_configs: 1000,
    };
    let run = check(&history(ops), Model::Register, limits).run;
    assert!(matches!(run, CheckerRun::Unknown { .. }), "{run:?}");
}

/// A sequential run of a register model: each op's result is what the model
/// says, intervals may overlap only when `overlap` is set (still linearizable
/// because each op takes effect at its recorded point).
fn sequential(script: &[(u8, i64)], clients: u64, crash_every: usize) -> Vec<Op> {
    let mut state = Value::Null;
    let mut ops = Vec::new();
    for (i, (kind, v)) in script.iter().enumerate() {
        let id = i as u64;
        let p = id % clients;
        // Op i takes effect at 10*i+5; its interval straddles that point and its
        // neighbours', so ops overlap the way concurrent clients do.
        let (call, ret) = (10 * id, 10 * id + 12);
        let crashed = crash_every > 0 && i % crash_every == crash_every - 1;
        match kind % 3 {
            0 => {
                state = json!(v);
                ops.push(op(
                    id,
                    p,
                    call,
                    (!crashed).then_some(ret),
                    "write",
                    "k",
                    json!(v),
                    Value::Null,
                ));
            }
            1 => ops.push(op(
                id,
                p,
                call,
                Some(ret),
                "read",
                "k",
                Value::Null,
                state.clone(),
            )),
            _ => {
                let success = state == json!(v % 3);
                if success {
                    state = json!(v + 100);
                }
                ops.push(op(
                    id,
                    p,
                    call,
                    Some(ret),
                    "cas",
                    "k",
                    json!([v % 3, v + 100]),
                    json!(success),
                ));
            }
        }
    }
    ops
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sequential_execution_is_accepted(script in prop::collection::vec((0u8..3, 0i64..4), 1..60), crash in 0usize..5) {
        let ops = sequential(&script, 4, crash);
        prop_assert_eq!(anomalies(&verdict(ops, Model::Register)), 0);
    }

    #[test]
    fn impossible_read_is_rejected(script in prop::collection::vec((0u8..3, 0i64..4), 1..60), at in 0usize..60) {
        let mut ops = sequential(&script, 4, 0);
        // A value no write ever produces, read by some op.
        let i = at % ops.len();
        let victim = &mut ops[i];
        victim.op_type = "read".into();
        victim.input = Value::Null;
        victim.output = json!("never-written");
        let report = check(&history(ops.clone()), Model::Register, Limits::default());
        prop_assert_eq!(anomalies(&report.run), 1);
        let cx = report.anomalies[0]
            .counterexample
            .as_deref()
            .and_then(|c| c.stuck())
            .expect("a stuck search");
        assert_partial_linearization(&ops, cx);
    }
}

/// The counterexample's prefix is what the search claims: distinct ops of the
/// object, not the stuck one, in an order real time allows (an op returned before
/// another was called comes first) and that the register model accepts from null.
/// Its timeline draws each of the object's ops once, in its role.
fn assert_partial_linearization(ops: &[Op], cx: &faultline::oracle::checker::Stuck) {
    let mut seen = std::collections::BTreeSet::new();
    for &i in &cx.prefix {
        assert!(seen.insert(i), "op {i} twice in the prefix");
        assert!(cx.ops.contains(&i), "op {i} is not the object's");
    }
    assert!(!seen.contains(&cx.blocked), "the stuck op is in the prefix");
    for (k, &a) in cx.prefix.iter().enumerate() {
        for &c in &cx.ops {
            if ops[c].complete_ts.is_some_and(|ret| ret < ops[a].invoke_ts) {
                let at = cx.prefix.iter().position(|&p| p == c);
                assert!(
                    at.is_some_and(|at| at < k),
                    "op {c} returned before op {a} was called"
                );
            }
        }
    }
    let mut state = Value::Null;
    for &i in &cx.prefix {
        let op = &ops[i];
        match op.op_type.as_str() {
            "read" => assert_eq!(op.output, state, "op {i} reads what the prefix left"),
            "write" => state = op.input.clone(),
            "cas" => {
                let (from, to) = (&op.input[0], &op.input[1]);
                if op.output == json!(true) {
                    assert_eq!(&state, from, "op {i}: cas from the value there");
                    state = to.clone();
                } else {
                    assert_ne!(&state, from, "op {i}: a refused cas");
                }
            }
            other => panic!("op {i}: {other}"),
        }
    }
    // Drawn: every op called before the stuck op returned (the prefix among them),
    // and at most 24 called after it.
    let svg = faultline::report::timeline::anomaly_svg(ops, cx, &[]);
    let stuck_ret = ops[cx.blocked].complete_ts.unwrap_or(u64::MAX);
    let relevant = cx
        .ops
        .iter()
        .filter(|&&i| ops[i].invoke_ts <= stuck_ret)
        .count();
    let drawn = svg.matches("class=\"op ").count();
    assert!(
        (relevant..=relevant + 24).contains(&drawn),
        "{drawn} drawn, {relevant} relevant"
    );
    assert_eq!(drawn.min(cx.ops.len()), drawn);
    assert_eq!(svg.matches("class=\"op blocked\"").count(), 1);
    assert_eq!(svg.matches("class=\"op prefix\"").count(), cx.prefix.len());
}

#[test]
fn crashed_writes_nobody_reads_do_not_blow_up_the_search() {
    // 60 concurrent crashed writes nobody reads, then a stale read: without the
    // reduction the search would explore 2^60 subsets before saying no.
    let mut ops: Vec<Op> = (0..60).map(|i| w(i, 0, None, 1000 + i as i64)).collect();
    ops.push(w(100, 1, Some(2), 1));
    ops.push(w(101, 3, Some(4), 2));
    ops.push(r(102, 5, 6, json!(1)));
    let limits = Limits {
        time: Duration::from_secs(10),
        max_configs: 100_000,
    };
    let report = check(&history(ops), Model::Register, limits);
    assert_eq!(anomalies(&report.run), 1, "{:?}", report.run);
    assert_eq!(report.anomalies[0].ops[0], "102");
}

#[test]
fn a_crashed_write_read_by_someone_must_precede_that_read() {
    // 9 is written only by the crashed op 1, so op 1 took effect before op 2
    // returned; op 3 then reading null after op 2 is impossible.
    let ops = vec![
        w(1, 0, None, 9),
        r(2, 10, 20, json!(9)),
        r(3, 30, 40, Value::Null),
    ];
    assert_eq!(anomalies(&verdict(ops, Model::Register)), 1);
    let ok = vec![
        w(1, 0, None, 9),
        r(3, 5, 8, Value::Null),
        r(2, 10, 20, json!(9)),
    ];
    assert_eq!(anomalies(&verdict(ok, Model::Register)), 0);
}

/// Exhaustive reference: some order of the ops respects real time and the
/// register, with every completed op placed and each crashed op placed or not.
fn brute_force(ops: &[Op]) -> bool {
    fn go(ops: &[Op], placed: &mut Vec<bool>, state: &Value) -> bool {
        let pending_completed = ops
            .iter()
            .zip(placed.iter())
            .any(|(o, p)| !p && o.complete_ts.is_some() && o.error.is_none());
        if !pending_completed {
            return true;
        }
        for i in 0..ops.len() {
            if placed[i] || ops[i].error.is_some() {
                continue;
            }
            // Every unplaced completed op that returned before i's call must go first.
            let blocked = ops.iter().zip(placed.iter()).any(|(o, p)| {
                !p && o.error.is_none() && o.complete_ts.is_some_and(|c| c < ops[i].invoke_ts)
            });
            if blocked {
                continue;
            }
            let next = match ops[i].op_type.as_str() {
                "write" => Some(ops[i].input.clone()),
                "read" if ops[i].complete_ts.is_none() => Some(state.clone()),
                "read" => (ops[i].output == *state).then(|| state.clone()),
                _ => None,
            };
            if let Some(next) = next {
                placed[i] = true;
                if go(ops, placed, &next) {
                    return true;
                }
                placed[i] = false;
            }
        }
        false
    }
    go(ops, &mut vec![false; ops.len()], &Value::Null)
}

fn small_history() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec((any::<bool>(), 0i64..3, 0u64..20, 1u64..10, 0u8..8), 1..8).prop_map(
        |specs| {
            specs
                .into_iter()
                .enumerate()
                .map(|(i, (is_write, v, call, dur, fate))| {
                    let id = i as u64;
                    let ret = (fate != 0).then_some(call + dur);
                    if is_write {
                        w(id, call, ret, v)
                    } else {
                        let out = if v == 0 { Value::Null } else { json!(v) };
                        let mut read = r(id, call, call + dur, out);
                        read.complete_ts = ret;
                        read.timeout = ret.is_none();
                        read
                    }
                })
                .collect()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The search and its reductions agree with exhaustive enumeration.
    #[test]
    fn agrees_with_brute_force(ops in small_history()) {
        let expected = brute_force(&ops);
        let got = anomalies(&verdict(ops, Model::Register)) == 0;
        prop_assert_eq!(got, expected);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A map is linearizable iff every key's register is: the per-key
    /// partitioning agrees with exhaustive enumeration key by key.
    #[test]
    fn kv_agrees_with_brute_force_per_key(
        parts in prop::collection::vec(small_history(), 1..4)
    ) {
        // One small history per key (keys named against history order), the
        // keys' ops interleaved by index.
        let mut ops: Vec<Op> = Vec::new();
        for at in 0..8 {
            for (k, part) in parts.iter().enumerate() {
                if let Some(o) = part.get(at) {
                    let mut o = o.clone();
                    o.op_id = ops.len().to_string().into();
                    o.key = Some(format!("k{}", 2 - k).into());
                    ops.push(o);
                }
            }
        }
        let expected = (0..3).all(|k| {
            let key = format!("k{k}");
            let on_key: Vec<Op> = ops.iter().filter(|o| o.key.as_deref() == Some(key.as_str())).cloned().collect();
            brute_force(&on_key)
        });
        let got = anomalies(&verdict(ops, Model::Kv)) == 0;
        prop_assert_eq!(got, expected);
    }
}
