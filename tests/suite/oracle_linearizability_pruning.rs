//! Differential test of the linearizability search's prunings: on random small
//! key-value histories (two keys; read / write / cas, and appends or not; crashed
//! ops; valid by construction and then perturbed) the pruned search
//! ([`Pruning::Full`], what a check uses) gives the verdict of the cache alone
//! ([`Pruning::CacheOnly`]) and names the same keys not linearizable.

use crate::support::ops::{history, op};

use faultline::oracle::checker::RunOptions;
use faultline::oracle::history::Op;
use faultline::oracle::linearizability::{Limits, Model, Pruning, check_with_pruning};
use faultline::verdict::CheckerRun;
use proptest::prelude::*;
use serde_json::{Value, json};

/// One generated op: what it does on which key, when, and how it ended.
#[derive(Debug, Clone)]
struct Spec {
    key: u8,
    /// 0 read, 1 write, 2 cas, 3 append.
    kind: u8,
    value: u8,
    call: u64,
    took: u64,
    crashed: bool,
    /// Takes effect at `call + effect` (≤ `took`) in the simulated store.
    effect: u64,
}

/// `specs` run against an atomic store (each op at its effect point, a crashed one
/// there or never), then with `perturb` one read answered with another value (the
/// history may stay linearizable or not).
fn build(specs: &[Spec], appends: bool, perturb: Option<(usize, u8)>) -> Vec<Op> {
    let mut order: Vec<usize> = (0..specs.len()).collect();
    order.sort_by_key(|&i| (specs[i].call + specs[i].effect, i));
    let mut store: std::collections::HashMap<u8, String> = Default::default();
    let mut answers: Vec<Value> = vec![Value::Null; specs.len()];
    let mut cas_ok = vec![true; specs.len()];
    for &i in &order {
        let s = &specs[i];
        if s.crashed && s.value.is_multiple_of(2) {
            continue;
        }
        let current = store.get(&s.key).cloned();
        let text = format!("{}", s.value);
        match (s.kind, appends) {
            (0, _) => answers[i] = current.map_or(Value::Null, Value::String),
            (1, _) => {
                store.insert(s.key, text);
            }
            (2, _) => {
                let old = format!("{}", s.value / 2);
                cas_ok[i] = current.as_deref() == Some(old.as_str());
                if cas_ok[i] {
                    store.insert(s.key, text);
                }
            }
            (_, true) => store.entry(s.key).or_default().push_str(&text),
            (_, false) => {
                store.insert(s.key, text);
            }
        }
    }
    if let Some((at, v)) = perturb {
        let reads: Vec<usize> = (0..specs.len())
            .filter(|&i| specs[i].kind == 0 && !specs[i].crashed)
            .collect();
        if !reads.is_empty() {
            let r = reads[at % reads.len()];
            answers[r] = if v == 0 {
                Value::Null
            } else {
                json!(format!("{v}"))
            };
        }
    }
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let ret = (!s.crashed).then_some(s.call + s.took);
            let key = format!("k{}", s.key);
            let v = json!(format!("{}", s.value));
            let mut o = match (s.kind, appends) {
                (0, _) => op(
                    i as u64,
                    i,
                    s.call,
                    ret,
                    "read",
                    &key,
                    Value::Null,
                    answers[i].clone(),
                ),
                (2, _) => {
                    let old = json!(format!("{}", s.value / 2));
                    let out = if s.crashed {
                        Value::Null
                    } else {
                        json!(cas_ok[i])
                    };
                    op(i as u64, i, s.call, ret, "cas", &key, json!([old, v]), out)
                }
                (3, true) => op(i as u64, i, s.call, ret, "append", &key, v, Value::Null),
                _ => op(i as u64, i, s.call, ret, "write", &key, v, Value::Null),
            };
            if s.crashed && s.kind == 0 {
                // A crashed read constrains nothing; keep it a read all the same.
                o.output = Value::Null;
            }
            o
        })
        .collect()
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        0u8..2,
        0u8..4,
        0u8..6,
        0u64..30,
        1u64..12,
        0u8..12,
        0u64..12,
    )
        .prop_map(|(key, kind, value, call, took, fate, effect)| Spec {
            key,
            kind,
            value,
            call,
            took,
            crashed: fate == 0,
            effect: effect.min(took - 1),
        })
}

/// The verdict and the keys named not linearizable, under `pruning`.
fn judged(ops: &[Op], model: Model, pruning: Pruning) -> (bool, Vec<String>) {
    let (report, _) = check_with_pruning(
        &history(ops.to_vec()),
        model,
        Limits::default(),
        &RunOptions::default(),
        pruning,
    );
    let valid = match report.run {
        CheckerRun::Judged { anomalies, .. } => anomalies == 0,
        other => panic!("not judged: {other:?}"),
    };
    let mut keys: Vec<String> = report
        .anomalies
        .iter()
        .map(|a| {
            a.why
                .split(" on ")
                .nth(1)
                .and_then(|w| w.split(':').next())
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    keys.sort();
    (valid, keys)
}

/// Both searches on one history; returns whether it was valid.
fn agree(ops: &[Op], model: Model) -> Result<bool, TestCaseError> {
    let full = judged(ops, model, Pruning::Full);
    let plain = judged(ops, model, Pruning::CacheOnly);
    prop_assert_eq!(&full, &plain, "pruned vs cache alone on {:?}", ops);
    Ok(full.0)
}

fn case(
    specs: &[Spec],
    appends: bool,
    perturb: Option<(usize, u8)>,
) -> Result<bool, TestCaseError> {
    // Per key either way: without appends the keys are plain registers.
    agree(&build(specs, appends, perturb), Model::Kv)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Keys with and without appends, as built and perturbed.
    #[test]
    fn the_pruned_search_agrees_with_the_cache_alone(
        specs in prop::collection::vec(spec(), 1..10),
        appends in any::<bool>(),
        perturb in prop::option::of((0usize..10, 0u8..6)),
    ) {
        case(&specs, appends, perturb)?;
    }
}

/// The generator above is not vacuous: over a fixed sample it makes both valid and
/// invalid histories of both models, and the searches agree on every one.
#[test]
fn the_differential_sample_holds_valid_and_invalid_histories() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (
        prop::collection::vec(spec(), 4..10),
        any::<bool>(),
        prop::option::of((0usize..10, 1u8..6)),
    );
    // (appends, valid) → histories
    let mut seen = std::collections::HashMap::<(bool, bool), usize>::new();
    for _ in 0..800 {
        let (specs, appends, perturb) = strategy.new_tree(&mut runner).expect("a sample").current();
        let valid = case(&specs, appends, perturb).expect("the searches agree");
        *seen.entry((appends, valid)).or_default() += 1;
        if perturb.is_none() {
            assert!(valid, "built against an atomic store: {specs:?}");
        }
    }
    for appends in [false, true] {
        for valid in [false, true] {
            let n = seen.get(&(appends, valid)).copied().unwrap_or(0);
            assert!(
                n >= 40,
                "appends {appends}, valid {valid}: {n} of 800 ({seen:?})"
            );
        }
    }
}
