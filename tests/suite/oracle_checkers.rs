//! Known-answer tests of the linear checkers: exactly-once, prefix-order,
//! monotonic reads, read-your-writes, reconciliation, invariant, SLO, fairness,
//! SLO during fault windows, and the registry / picker.

use crate::support::ops;

use faultline::oracle::CheckerReport;
use faultline::oracle::history::{History, Op};
use faultline::oracle::params::Params;
use faultline::oracle::registry::{self, Inputs, misfit, pick};
use faultline::verdict::CheckerRun;
use ops::{history, op};
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn run(
    name: &str,
    h: Option<&History>,
    final_state: Option<&Value>,
    params: &[&str],
) -> CheckerReport {
    let inputs = Inputs {
        history: h,
        final_state,
        ..Inputs::default()
    };
    registry::run(name, &inputs, &Params::parse(params).expect("params")).expect("runs")
}

fn count(r: &CheckerReport) -> u64 {
    match &r.run {
        CheckerRun::Judged { anomalies, .. } => *anomalies,
        other => panic!("{}: not judged: {other:?}", r.checker),
    }
}

fn pay(id: u64, key: &str, ok: bool) -> Op {
    let mut o = op(
        id,
        "c",
        id * 10,
        Some(id * 10 + 5),
        "pay",
        "acct",
        json!({"idempotency_key": key, "amount": 5}),
        json!("ok"),
    );
    if !ok {
        o.error = Some("declined".into());
    }
    o
}

#[test]
fn exactly_once_duplicates_lost_and_phantoms() {
    let h = history(vec![
        pay(1, "a", true),
        pay(2, "a", true),
        pay(3, "b", true),
        pay(4, "c", false),
    ]);
    let clean = json!([{"idempotency_key": "a"}, {"idempotency_key": "b"}]);
    assert_eq!(count(&run("exactly-once", Some(&h), Some(&clean), &[])), 0);
    let dup = json!([{"idempotency_key": "a"}, {"idempotency_key": "a"}, {"idempotency_key": "b"}]);
    let r = run("exactly-once", Some(&h), Some(&dup), &[]);
    assert_eq!(count(&r), 1);
    assert!(
        r.anomalies[0].why.starts_with("duplicate effect"),
        "{:?}",
        r.anomalies
    );
    let lost_and_phantom = json!({"a": 1, "c": 1, "zzz": 1});
    let r = run("exactly-once", Some(&h), Some(&lost_and_phantom), &[]);
    let whys: Vec<&str> = r
        .anomalies
        .iter()
        .map(|a| a.why.split(':').next().unwrap_or(""))
        .collect();
    assert_eq!(
        whys,
        [
            "lost effect",
            "effect of a rejected request",
            "phantom effect"
        ]
    );
}

#[test]
fn exactly_once_by_op_id_is_a_mismatch() {
    let h = history(vec![pay(1, "a", true)]);
    let r = run(
        "exactly-once",
        Some(&h),
        Some(&json!([])),
        &["key_field=op_id"],
    );
    assert!(matches!(r.run, CheckerRun::Mismatch { .. }), "{:?}", r.run);
}

fn enq(id: u64, v: i64, done: u64) -> Op {
    op(
        id,
        "producer",
        done - 5,
        Some(done),
        "enqueue",
        "q",
        json!(v),
        Value::Null,
    )
}

fn deq(id: u64, consumer: &str, at: u64, v: Value) -> Op {
    op(
        id,
        consumer,
        at,
        Some(at + 1),
        "dequeue",
        "q",
        Value::Null,
        v,
    )
}

#[test]
fn prefix_order_in_order_reordered_and_windowed() {
    let produce = vec![enq(1, 1, 10), enq(2, 2, 20), enq(3, 3, 30)];
    let mut ordered = produce.clone();
    ordered.extend([
        deq(4, "c1", 40, json!(1)),
        deq(5, "c1", 50, json!(2)),
        deq(6, "c1", 60, json!(3)),
    ]);
    assert_eq!(
        count(&run("prefix-order", Some(&history(ordered)), None, &[])),
        0
    );

    let mut swapped = produce.clone();
    swapped.extend([
        deq(4, "c1", 40, json!(2)),
        deq(5, "c1", 50, json!(1)),
        deq(6, "c1", 60, json!(3)),
    ]);
    let h = history(swapped);
    let r = run("prefix-order", Some(&h), None, &[]);
    assert_eq!(count(&r), 1, "{:?}", r.anomalies);
    assert!(
        r.anomalies[0].why.contains("reordered"),
        "{}",
        r.anomalies[0].why
    );
    assert_eq!(
        count(&run("prefix-order", Some(&h), None, &["window=1"])),
        0
    );
}

#[test]
fn prefix_order_skips_duplicates_and_foreign_values() {
    let mut ops = vec![enq(1, 1, 10), enq(2, 2, 20), enq(3, 3, 30)];
    ops.extend([
        deq(4, "c1", 40, json!(1)),
        deq(5, "c1", 50, json!(3)),
        deq(6, "c1", 60, json!(3)),
    ]);
    ops.push(deq(7, "c2", 40, json!(99)));
    let r = run("prefix-order", Some(&history(ops)), None, &[]);
    let text = format!("{:?}", r.anomalies);
    assert!(text.contains("twice"), "{text}");
    assert!(text.contains("not a prefix"), "{text}");
    assert!(text.contains("no producer enqueued"), "{text}");
}

#[test]
fn prefix_order_timed_out_enqueue_may_or_may_not_appear() {
    let mut ops = vec![
        enq(1, 1, 10),
        op(
            2,
            "producer",
            15,
            None,
            "enqueue",
            "q",
            json!(2),
            Value::Null,
        ),
        enq(3, 3, 30),
    ];
    ops.extend([
        deq(4, "c1", 40, json!(1)),
        deq(5, "c1", 50, json!(2)),
        deq(6, "c1", 60, json!(3)),
    ]);
    assert_eq!(
        count(&run("prefix-order", Some(&history(ops)), None, &[])),
        0
    );
}

fn read(id: u64, p: &str, at: u64, key: &str, v: Value) -> Op {
    op(id, p, at, Some(at + 1), "read", key, Value::Null, v)
}

fn write(id: u64, p: &str, at: u64, key: &str, v: i64) -> Op {
    op(id, p, at, Some(at + 1), "write", key, json!(v), Value::Null)
}

#[test]
fn monotonic_reads_going_back_is_an_anomaly() {
    let ok = vec![
        read(1, "s1", 10, "x", json!(1)),
        read(2, "s1", 20, "x", json!(3)),
        read(3, "s2", 30, "x", json!(2)),
    ];
    assert_eq!(
        count(&run("monotonic-reads", Some(&history(ok)), None, &[])),
        0
    );
    let back = vec![
        read(1, "s1", 10, "x", json!({"version": 3, "value": "c"})),
        read(2, "s1", 20, "x", json!({"version": 2, "value": "b"})),
    ];
    let r = run("monotonic-reads", Some(&history(back)), None, &[]);
    assert_eq!(count(&r), 1);
    assert_eq!(r.anomalies[0].ops, ["1", "2"]);
}

#[test]
fn read_your_writes_stale_and_explained_reads() {
    let ok = vec![write(1, "s1", 10, "x", 5), read(2, "s1", 20, "x", json!(5))];
    assert_eq!(
        count(&run("read-your-writes", Some(&history(ok)), None, &[])),
        0
    );
    let overwritten = vec![
        write(1, "s1", 10, "x", 5),
        write(2, "s2", 12, "x", 6),
        read(3, "s1", 20, "x", json!(6)),
    ];
    assert_eq!(
        count(&run(
            "read-your-writes",
            Some(&history(overwritten)),
            None,
            &[]
        )),
        0
    );
    let stale = vec![
        write(0, "s2", 0, "x", 4),
        write(1, "s1", 10, "x", 5),
        read(2, "s1", 20, "x", json!(4)),
    ];
    let r = run("read-your-writes", Some(&history(stale)), None, &[]);
    assert_eq!(count(&r), 1);
    assert!(
        r.anomalies[0].why.starts_with("stale read"),
        "{}",
        r.anomalies[0].why
    );
}

#[test]
fn reconciliation_diffs_replicas() {
    let dump = |pairs: &[(&str, i64)]| -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect()
    };
    let same = vec![
        ("r1".to_string(), dump(&[("a", 1), ("b", 2)])),
        ("r2".to_string(), dump(&[("a", 1), ("b", 2)])),
    ];
    let inputs = Inputs {
        replicas: &same,
        ..Inputs::default()
    };
    let r = registry::run("reconciliation", &inputs, &Params::default()).expect("runs");
    assert_eq!(count(&r), 0);
    let differ = vec![
        ("r1".to_string(), dump(&[("a", 1), ("b", 2)])),
        ("r2".to_string(), dump(&[("a", 1)])),
    ];
    let inputs = Inputs {
        replicas: &differ,
        ..Inputs::default()
    };
    let r = registry::run("reconciliation", &inputs, &Params::default()).expect("runs");
    assert_eq!(count(&r), 1);
    assert!(
        r.anomalies[0].why.contains("r2=(absent)"),
        "{}",
        r.anomalies[0].why
    );
}

#[test]
fn invariant_over_final_state_needs_quiescence() {
    let state = json!({"alice": 60, "bob": 40});
    assert_eq!(
        count(&run("invariant", None, Some(&state), &["sum=100", "min=0"])),
        0
    );
    let broken = json!({"alice": 70, "bob": -10});
    let r = run("invariant", None, Some(&broken), &["sum=100", "min=0"]);
    assert_eq!(count(&r), 2, "sum 60 and bob below 0: {:?}", r.anomalies);
    // An op still in flight: the dump proves nothing yet.
    let mut in_flight = write(1, "s1", 10, "alice", 5);
    in_flight.complete_ts = None;
    in_flight.timeout = false;
    let h = history(vec![in_flight]);
    let r = run("invariant", Some(&h), Some(&state), &["sum=100"]);
    assert!(matches!(r.run, CheckerRun::Unknown { .. }), "{:?}", r.run);
}

fn timed(id: u64, p: &str, start_ms: u64, latency_ms: u64, error: bool) -> Op {
    let mut o = op(
        id,
        p,
        start_ms * 1_000_000,
        Some((start_ms + latency_ms) * 1_000_000),
        "write",
        "k",
        json!(id),
        Value::Null,
    );
    if error {
        o.error = Some("boom".into());
    }
    o
}

#[test]
fn slo_thresholds() {
    let ops: Vec<Op> = (0..100)
        .map(|i| timed(i, "c", i * 10, if i == 99 { 500 } else { 5 }, false))
        .collect();
    let h = history(ops);
    assert_eq!(count(&run("slo", Some(&h), None, &["p99_ms=10"])), 0);
    assert_eq!(count(&run("slo", Some(&h), None, &["max_ms=100"])), 1);
    assert_eq!(
        count(&run("slo", Some(&h), None, &["min_throughput=1000"])),
        1
    );
    let r = run("slo", Some(&h), None, &["p99_ms=10", "min_window_s=60"]);
    assert!(matches!(r.run, CheckerRun::Unknown { .. }), "{:?}", r.run);
}

#[test]
fn fairness_formulas() {
    let mut ops: Vec<Op> = (0..50)
        .map(|i| timed(i, "tenant-a", i * 10, 5, false))
        .collect();
    ops.extend((50..100).map(|i| timed(i, "tenant-b", (i - 50) * 10, 50, i % 10 == 0)));
    let h = history(ops);
    let r = run(
        "fairness",
        Some(&h),
        None,
        &["group=process", "worst_p99_ratio=1.5"],
    );
    assert_eq!(count(&r), 0, "{:?}", r.anomalies);
    let r = run(
        "fairness",
        Some(&h),
        None,
        &["group=process", "max_group_error_rate=0"],
    );
    assert_eq!(count(&r), 1);
    assert!(
        r.anomalies[0].why.contains("tenant-b"),
        "{}",
        r.anomalies[0].why
    );
    let r = run(
        "fairness",
        Some(&h),
        None,
        &["group=op_type", "max_group_error_rate=0"],
    );
    assert!(
        matches!(r.run, CheckerRun::Unknown { .. }),
        "one group is too coarse: {:?}",
        r.run
    );
}

#[test]
fn picker_suggests_and_flags_misfits() {
    assert_eq!(pick("register", "safety"), Some("linearizability-register"));
    assert_eq!(pick("queue", "ordering"), Some("prefix-order"));
    assert_eq!(pick("ledger", "idempotency"), Some("exactly-once"));
    assert_eq!(pick("tenant", "fairness"), Some("fairness"));
    let why = misfit("linearizability-register", Some("session"), Some("safety")).expect("misfit");
    assert!(why.contains("monotonic-reads"), "{why}");
    assert_eq!(
        misfit("linearizability-kv", Some("map"), Some("safety")),
        None
    );
    let h = history(vec![write(1, "s", 0, "k", 1)]);
    let inputs = Inputs {
        history: Some(&h),
        model: Some("session"),
        ..Inputs::default()
    };
    let r = registry::run("linearizability-register", &inputs, &Params::default()).expect("runs");
    assert!(matches!(r.run, CheckerRun::Mismatch { .. }), "{:?}", r.run);
}

#[test]
fn every_checker_reports_missing_fields() {
    for name in registry::names() {
        let needs_history = !matches!(name, "reconciliation" | "invariant");
        if !needs_history {
            continue;
        }
        let mut h = history(vec![write(1, "s", 0, "k", 1)]);
        h.present_fields.remove("timeout");
        let params: &[&str] = match name {
            "slo" => &["p99_ms=1"],
            "fairness" => &["group=process", "max_group_error_rate=0"],
            "slo-during-fault" => &["error_rate=0"],
            _ => &[],
        };
        let r = run(name, Some(&h), Some(&json!({})), params);
        assert_eq!(
            r.run,
            CheckerRun::MissingFields {
                fields: vec!["timeout".into()]
            },
            "{name}"
        );
    }
}

/// 20 ops outside any fault (5 ms each), then `inside` ops in fault epoch 1
/// lasting `latency_ms`, of which every `fail_every`-th fails (the 4th, 8th, … for 4).
fn fault_history(inside: u64, latency_ms: u64, fail_every: u64) -> History {
    let mut ops: Vec<Op> = (0..20).map(|i| timed(i, "c", i * 10, 5, false)).collect();
    ops.extend((20..20 + inside).map(|i| {
        let mut o = timed(i, "c", i * 10, latency_ms, (i - 19) % fail_every == 0);
        o.fault_epoch = Some(1);
        o
    }));
    history(ops)
}

#[test]
fn slo_during_fault_judges_each_window() {
    // 20 ops in the window, 1 in 4 failed: error rate 0.25.
    let h = fault_history(20, 5, 4);
    let r = run("slo-during-fault", Some(&h), None, &["error_rate=0.3"]);
    assert_eq!(count(&r), 0, "{:?}", r.anomalies);
    assert_eq!(r.ops_checked(), 40);
    let r = run("slo-during-fault", Some(&h), None, &["error_rate=0.2"]);
    assert_eq!(count(&r), 1, "{:?}", r.anomalies);
    assert!(
        r.anomalies[0].why.contains("fault epoch 1") && r.anomalies[0].why.contains("0.250"),
        "{}",
        r.anomalies[0].why
    );
    // The same error rate spread over the whole history would pass: 5 of 40.
    let r = run("slo", Some(&h), None, &["error_rate=0.2"]);
    assert_eq!(count(&r), 0, "{:?}", r.anomalies);
}

#[test]
fn slo_during_fault_latency_against_outside() {
    let h = fault_history(20, 50, 1000);
    let r = run("slo-during-fault", Some(&h), None, &["p99_ratio=5"]);
    assert_eq!(count(&r), 1, "{:?}", r.anomalies);
    assert!(
        r.anomalies[0].why.contains("10.000"),
        "{}",
        r.anomalies[0].why
    );
    let r = run("slo-during-fault", Some(&h), None, &["p99_ratio=11"]);
    assert_eq!(count(&r), 0, "{:?}", r.anomalies);
    let r = run("slo-during-fault", Some(&h), None, &["p99_ms=40"]);
    assert_eq!(count(&r), 1, "{:?}", r.anomalies);
}

#[test]
fn slo_during_fault_unknown_without_a_judgeable_window() {
    // Every epoch null: the key is there, but no op ran under a fault.
    let h = fault_history(0, 5, 1);
    let r = run("slo-during-fault", Some(&h), None, &["error_rate=0"]);
    assert!(
        matches!(&r.run, CheckerRun::Unknown { reason } if reason.contains("no op ran inside")),
        "{:?}",
        r.run
    );
    // A window thinner than min_ops (default 10) is not judged...
    let h = fault_history(5, 5, 1000);
    let r = run("slo-during-fault", Some(&h), None, &["error_rate=0"]);
    assert!(
        matches!(&r.run, CheckerRun::Unknown { reason } if reason.contains("epoch 1 (5 ops)")),
        "{:?}",
        r.run
    );
    let r = run(
        "slo-during-fault",
        Some(&h),
        None,
        &["error_rate=0", "min_ops=5"],
    );
    assert_eq!(count(&r), 0, "{:?}", r.run);
    // ...and a ratio needs acknowledged ops outside the windows.
    let mut h = fault_history(20, 5, 1000);
    h.ops.retain(|o| o.fault_epoch.is_some());
    let r = run("slo-during-fault", Some(&h), None, &["p99_ratio=2"]);
    assert!(matches!(r.run, CheckerRun::Unknown { .. }), "{:?}", r.run);
}

#[test]
fn slo_during_fault_needs_the_fault_epoch_key() {
    let mut h = fault_history(20, 5, 1000);
    h.present_fields.remove("fault_epoch");
    let r = run("slo-during-fault", Some(&h), None, &["error_rate=0"]);
    assert_eq!(
        r.run,
        CheckerRun::MissingFields {
            fields: vec!["fault_epoch".into()]
        }
    );
    // The whole-history SLO does not need it.
    let r = run("slo", Some(&h), None, &["error_rate=0"]);
    assert!(matches!(r.run, CheckerRun::Judged { .. }), "{:?}", r.run);
}

/// Three repeats (`input.run` 1–3) a second apart, each 10 ops of tenant a;
/// tenant b has `b_ops[r]` ops in repeat r.
fn repeated(b_ops: [u64; 3]) -> History {
    let mut ops = Vec::new();
    for (r, b) in (1..=3u64).zip(b_ops) {
        for (tenant, count) in [("a", 10), ("b", b)] {
            for i in 0..count {
                let mut o = timed(ops.len() as u64, tenant, r * 1000 + i * 10, 5, false);
                o.input = json!({ "run": r });
                ops.push(o);
            }
        }
    }
    history(ops)
}

#[test]
fn fairness_repeat_spread() {
    // Tenant b: 10, 10 then 2 ops in the same span: its throughput spread is 5.
    let h = repeated([10, 10, 2]);
    let args = |t: &'static str| ["group=process", "repeat=input.run", t];
    let r = run("fairness", Some(&h), None, &args("repeat_spread=2"));
    assert_eq!(count(&r), 1, "{:?}", r.anomalies);
    assert!(
        r.anomalies[0].why.contains("process b") && r.anomalies[0].why.contains("5.000"),
        "{}",
        r.anomalies[0].why
    );
    let r = run("fairness", Some(&h), None, &args("repeat_spread=5.5"));
    assert_eq!(count(&r), 0, "{:?}", r.anomalies);
    // Missing from one repeat altogether: unbounded spread.
    let h = repeated([10, 10, 0]);
    let r = run("fairness", Some(&h), None, &args("repeat_spread=100"));
    assert_eq!(count(&r), 1, "{:?}", r.anomalies);
    assert!(r.anomalies[0].why.contains("inf"), "{}", r.anomalies[0].why);
}

#[test]
fn fairness_repeat_spread_needs_two_repeats_and_the_dimension() {
    let mut h = repeated([10, 10, 10]);
    h.ops.retain(|o| o.input["run"] == 1);
    let r = run(
        "fairness",
        Some(&h),
        None,
        &["group=process", "repeat=input.run", "repeat_spread=2"],
    );
    assert!(
        matches!(&r.run, CheckerRun::Unknown { reason } if reason.contains("1 repeat(s)")),
        "{:?}",
        r.run
    );
    // ...unless another formula already found a violation: that stands.
    h.ops[0].error = Some("boom".into());
    let r = run(
        "fairness",
        Some(&h),
        None,
        &[
            "group=process",
            "repeat=input.run",
            "repeat_spread=2",
            "max_group_error_rate=0",
        ],
    );
    assert_eq!(count(&r), 1, "{:?}", r.anomalies);
    let inputs = Inputs {
        history: Some(&h),
        ..Inputs::default()
    };
    let no_dimension = Params::parse(&["group=process", "repeat_spread=2"]).expect("params");
    let err = registry::run("fairness", &inputs, &no_dimension).expect_err("usage error");
    assert!(err.contains("repeat="), "{err}");
    let mut h = repeated([10, 10, 10]);
    h.present_fields.remove("node");
    let r = run(
        "fairness",
        Some(&h),
        None,
        &["group=process", "repeat=node", "repeat_spread=2"],
    );
    assert_eq!(
        r.run,
        CheckerRun::MissingFields {
            fields: vec!["node".into()]
        }
    );
}

#[test]
fn slo_during_fault_breach_beside_a_thin_window() {
    let mut h = fault_history(20, 5, 4);
    h.ops.extend((100..103).map(|i| {
        let mut o = timed(i, "c", i * 10, 5, false);
        o.fault_epoch = Some(2);
        o
    }));
    let r = run("slo-during-fault", Some(&h), None, &["error_rate=0.2"]);
    assert_eq!(count(&r), 1, "{:?}", r.anomalies);
    // Epoch 2's three ops were not judged.
    assert_eq!(
        r.run,
        CheckerRun::Judged {
            anomalies: 1,
            ops_checked: 40,
            ops_produced: 43
        }
    );
    // A malformed threshold is a usage error even when no window is judged.
    let thin = fault_history(5, 5, 1000);
    let inputs = Inputs {
        history: Some(&thin),
        ..Inputs::default()
    };
    let bad = Params::parse(&["p99_ms=fast"]).expect("params");
    let err = registry::run("slo-during-fault", &inputs, &bad).expect_err("usage error");
    assert!(err.contains("p99_ms"), "{err}");
}

/// `faultline check --checker counter FILE --json`: the exit code and the result.
fn check_counter(path: &std::path::Path) -> (Option<i32>, Value) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["check", "--checker", "counter", "--json"])
        .arg(path)
        .output()
        .expect("faultline runs");
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), v)
}

/// A counter op as a faultline JSONL record: `add` of `n` or `read` returning `n`;
/// `done: None` timed out; `fail` completed with an error.
fn counter_op(id: u64, p: u64, f: &str, n: i64, at: u64, done: Option<u64>, fail: bool) -> String {
    let (input, output) = match f {
        "add" => (json!(n), Value::Null),
        _ => (Value::Null, json!(n)),
    };
    json!({
        "op_id": id, "process": p, "invoke_ts": at, "complete_ts": done, "op_type": f,
        "key": null, "input": input, "output": output,
        "error": if fail { json!("rejected") } else { Value::Null },
        "timeout": done.is_none(), "node": null, "fault_epoch": null,
    })
    .to_string()
}

fn counter_history(dir: &std::path::Path, name: &str, ops: &[String]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, ops.join("\n") + "\n").expect("write");
    path
}

fn only_anomaly(v: &Value) -> (&Value, &str) {
    let anomalies = v["anomalies"].as_array().expect("anomalies");
    assert_eq!(anomalies.len(), 1, "{v}");
    (
        &anomalies[0]["ops"],
        anomalies[0]["why"].as_str().unwrap_or_default(),
    )
}

#[test]
fn counter_reads_within_the_adds_around_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Process 1's add of 2 overlaps both of the first reads: 1 and 3 both fit; the
    // failed add of 4 counts for nothing; the last read sees exactly 3.
    let concurrent = counter_history(
        dir.path(),
        "concurrent.jsonl",
        &[
            counter_op(1, 0, "add", 1, 0, Some(10), false),
            counter_op(2, 1, "add", 2, 5, Some(30), false),
            counter_op(3, 2, "read", 3, 12, Some(20), false),
            counter_op(4, 3, "read", 1, 12, Some(14), false),
            counter_op(5, 0, "add", 4, 15, Some(16), true),
            counter_op(6, 2, "read", 3, 31, Some(40), false),
        ],
    );
    let (code, v) = check_counter(&concurrent);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["ops_checked"], 6, "{v}");

    // A read of 2 when only 1 had been invoked (the second add comes after it).
    let high = counter_history(
        dir.path(),
        "high.jsonl",
        &[
            counter_op(1, 0, "add", 1, 0, Some(10), false),
            counter_op(2, 2, "read", 2, 20, Some(30), false),
            counter_op(3, 1, "add", 1, 40, Some(50), false),
        ],
    );
    let (code, v) = check_counter(&high);
    assert_eq!(code, Some(1), "{v}");
    let (ops, why) = only_anomaly(&v);
    assert_eq!(ops, &json!(["2"]));
    assert!(
        why.contains("process 2") && why.contains("returned 2") && why.contains("[1, 1]"),
        "{why}"
    );

    // Two acknowledged adds of 1 before the read, which sees one: a lost add.
    let low = counter_history(
        dir.path(),
        "low.jsonl",
        &[
            counter_op(1, 0, "add", 1, 0, Some(10), false),
            counter_op(2, 1, "add", 1, 11, Some(20), false),
            counter_op(3, 2, "read", 1, 30, Some(40), false),
        ],
    );
    let (code, v) = check_counter(&low);
    assert_eq!(code, Some(1), "{v}");
    let (ops, why) = only_anomaly(&v);
    assert_eq!(ops, &json!(["3"]));
    assert!(
        why.contains("returned 1") && why.contains("[2, 2]"),
        "{why}"
    );

    // An add of 5 that timed out may have landed or not: reads of 1 and 6 both fit.
    // Had it failed, 6 would be too high.
    let maybe = |fail: bool| {
        [
            counter_op(1, 0, "add", 1, 0, Some(10), false),
            counter_op(2, 1, "add", 5, 12, fail.then_some(13), fail),
            counter_op(3, 2, "read", 1, 20, Some(30), false),
            counter_op(4, 3, "read", 6, 40, Some(50), false),
        ]
    };
    let timed_out = counter_history(dir.path(), "maybe.jsonl", &maybe(false));
    let (code, v) = check_counter(&timed_out);
    assert_eq!(code, Some(0), "{v}");
    let failed = counter_history(dir.path(), "failed.jsonl", &maybe(true));
    let (code, v) = check_counter(&failed);
    assert_eq!(code, Some(1), "{v}");
    let (ops, why) = only_anomaly(&v);
    assert_eq!(ops, &json!(["4"]));
    assert!(why.contains("[1, 1]"), "{why}");

    // Adds and no read: nothing to judge.
    let no_read = counter_history(
        dir.path(),
        "adds.jsonl",
        &[counter_op(1, 0, "add", 1, 0, Some(10), false)],
    );
    let (code, v) = check_counter(&no_read);
    assert_eq!(code, Some(3), "{v}");
    assert_eq!(v["valid"], "unknown");
}

#[test]
fn counter_checks_jepsen_edn_histories_as_they_are() {
    let fixture = |name: &str| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/histories")
            .join(name)
    };
    let (code, v) = check_counter(&fixture("counter-ok.edn"));
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["ops_checked"], 7, "{v}");
    assert_eq!(v["coverage"], 1.0, "{v}");

    let (code, v) = check_counter(&fixture("counter-lost.edn"));
    assert_eq!(code, Some(1), "{v}");
    let (ops, why) = only_anomaly(&v);
    // The read invoked at :index 8.
    assert_eq!(ops, &json!(["8"]));
    assert!(
        why.contains("process 2") && why.contains("returned 3") && why.contains("[8, 8]"),
        "{why}"
    );

    // It fits a counter model, and the picker suggests it there; the WGL checkers
    // cannot judge an add (they call counter-ok.edn invalid), so they do not fit one.
    assert_eq!(misfit("counter", Some("counter"), Some("safety")), None);
    assert!(misfit("counter", Some("queue"), Some("ordering")).is_some());
    assert_eq!(pick("counter", "safety"), Some("counter"));
    for wgl in ["linearizability-register", "linearizability-kv"] {
        let why = misfit(wgl, Some("counter"), Some("safety")).expect("misfit");
        assert!(why.contains("the picker suggests `counter`"), "{why}");
    }
}

/// Current Jepsen writes `jepsen.independent` tuples as plain `[key value]` vectors
/// (a MapEntry), not tagged: each key is its own counter.
#[test]
fn counter_reads_plain_key_value_pairs_as_keys() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/histories/counter-independent.edn");
    let (code, v) = check_counter(&fixture);
    assert_eq!(code, Some(1), "{v}");
    let (ops, why) = only_anomaly(&v);
    // Key 1's read invoked at :index 8, after its add of 2 was acknowledged.
    assert_eq!(ops, &json!(["8"]));
    assert!(
        why.contains("counter of `1`") && why.contains("returned 0") && why.contains("[2, 2]"),
        "{why}"
    );
    assert_eq!(v["ops_checked"], 6, "{v}");

    // One op without a pair: no op's pair is read as a key, and the error says why.
    let dir = tempfile::tempdir().expect("tempdir");
    let mixed = dir.path().join("mixed.edn");
    let text = std::fs::read_to_string(&fixture).expect("fixture")
        + "{:index 12, :time 80, :type :invoke, :process 4, :f :add, :value 1}\n\
           {:index 13, :time 85, :type :ok, :process 4, :f :add, :value 1}\n";
    std::fs::write(&mixed, text).expect("write");
    let (code, v) = check_counter(&mixed);
    assert_eq!(code, Some(3), "{v}");
    let reason = v["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("input [0,1] is not an integer (a [key value] pair?")
            && reason.contains("only when every op carries one; op 12 does not"),
        "{v}"
    );
}

/// `faultline check --checker counter` on JSONL `records` (one counter, no keys).
fn counter_records(dir: &std::path::Path, name: &str, records: &[Value]) -> (Option<i32>, Value) {
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    check_counter(&counter_history(dir, name, &lines))
}

/// An acknowledged read of `output` (any JSON) as a faultline record.
fn read_of(id: u64, at: u64, output: Value) -> Value {
    json!({
        "op_id": id, "process": id, "invoke_ts": at, "complete_ts": at + 1, "op_type": "read",
        "key": null, "input": null, "output": output, "error": null, "timeout": false,
        "node": null, "fault_epoch": null,
    })
}

/// An acknowledged read whose value the checker cannot represent (past 64 bits, a
/// fraction, a string, nothing) is named, and the history is not called valid.
#[test]
fn counter_reads_it_cannot_judge_leave_the_verdict_unknown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let add: Value =
        serde_json::from_str(&counter_op(1, 0, "add", 1, 0, Some(10), false)).expect("json");
    let fits = read_of(2, 20, json!(1));
    // 1e20 is past u64: serde_json reads it as a float, as EDN reads a big `N`.
    let huge: Value = serde_json::from_str("100000000000000000000").expect("json");
    let records = [
        add.clone(),
        fits.clone(),
        read_of(3, 30, huge),
        read_of(4, 40, json!(1.5)),
        read_of(5, 50, json!("77")),
        read_of(6, 60, Value::Null),
    ];
    let (code, v) = counter_records(dir.path(), "odd.jsonl", &records);
    assert_eq!(code, Some(3), "{v}");
    assert_eq!(v["valid"], "unknown", "{v}");
    let reason = v["reason"].as_str().unwrap_or_default();
    for named in [
        "read 3 returned 1e+20, an integer too large to judge exactly",
        "read 4 returned 1.5, not an integer",
        "read 5 returned \"77\", not an integer",
        "read 6 returned no value",
    ] {
        assert!(reason.contains(named), "{named}: {reason}");
    }
    assert!(
        reason.starts_with("4 acknowledged reads could not be judged"),
        "{reason}"
    );

    // An anomaly among them is still found: the history is invalid whatever the rest.
    let lost = read_of(7, 70, json!(0));
    let (code, v) = counter_records(dir.path(), "lost.jsonl", &[&records[..], &[lost]].concat());
    assert_eq!(code, Some(1), "{v}");
    assert!(
        v["evidence"]
            .as_str()
            .unwrap_or_default()
            .contains("read 4 returned 1.5"),
        "{v}"
    );

    // Every acknowledged read an integer: judged as before.
    let (code, v) = counter_records(dir.path(), "ok.jsonl", &[add, fits]);
    assert_eq!(code, Some(0), "{v}");

    // Jepsen's bigint: an `N` integer past i64.
    let edn = dir.path().join("big.edn");
    std::fs::write(
        &edn,
        "{:type :invoke, :f :add, :value 1, :process 0, :time 0}\n\
         {:type :ok, :f :add, :value 1, :process 0, :time 10}\n\
         {:type :invoke, :f :read, :value nil, :process 1, :time 20}\n\
         {:type :ok, :f :read, :value 9223372036854775808N, :process 1, :time 30}\n",
    )
    .expect("write");
    let (code, v) = check_counter(&edn);
    assert_eq!(code, Some(3), "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("too large to judge exactly"),
        "{v}"
    );
}
