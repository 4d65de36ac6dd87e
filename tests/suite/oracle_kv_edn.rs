//! Porcupine's kv histories (EDN with `:key` beside `:value`, `:f` get / put /
//! append): generated equivalents of its c01 / c10 / c50 files judged through
//! the binary, known answers of the append model, malformed lines, and property
//! tests against construction and against exhaustive enumeration.

mod generate;

use faultline::oracle::jepsen::parse_edn;
use faultline::oracle::linearizability::{Limits, Model, check};
use faultline::verdict::CheckerRun;
use generate::{KvOp, PORCUPINE_SHAPES, Shape, generate, to_edn};
use proptest::prelude::*;
use std::process::Command;

/// Anomalies found by the kv checker in EDN `text`.
fn kv_anomalies(text: &str) -> u64 {
    let history = parse_edn("h.edn", text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    match check(&history, Model::Kv, Limits::default()).run {
        CheckerRun::Judged {
            anomalies,
            ops_checked,
            ops_produced,
        } => {
            assert_eq!(ops_checked, ops_produced, "every op is understood");
            anomalies
        }
        other => panic!("not judged: {other:?}"),
    }
}

/// The get the stale variant changed (same seed, so every other op is equal).
fn planted_get(ok: &[KvOp], bad: &[KvOp]) -> KvOp {
    let changed: Vec<&KvOp> = bad
        .iter()
        .zip(ok)
        .filter(|(b, o)| b.value != o.value)
        .map(|(b, _)| b)
        .collect();
    assert_eq!(changed.len(), 1, "one get changed");
    changed[0].clone()
}

#[test]
fn porcupine_shaped_histories_through_the_binary() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, shape) in PORCUPINE_SHAPES {
        let (ok, _) = generate(shape, false, 7);
        let (bad, planted) = generate(shape, true, 7);
        assert!(planted, "{name}: a stale get was planted");
        let stale = planted_get(&ok, &bad);
        for (variant, ops) in [("ok", &ok), ("bad", &bad)] {
            let path = dir.path().join(format!("{name}-{variant}.txt"));
            std::fs::write(&path, to_edn(ops)).expect("write history");
            let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
                .args([
                    "check",
                    "--checker",
                    "linearizability-kv",
                    "--format",
                    "edn",
                ])
                .arg(&path)
                .arg("--json")
                .output()
                .expect("faultline runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{name}-{variant}: {e}: {stderr}"));
            assert_eq!(v["ops_produced"], shape.ops, "{name}-{variant}: {v}");
            assert_eq!(v["coverage"], 1.0, "{name}-{variant}: {v}");
            if variant == "ok" {
                assert_eq!(out.status.code(), Some(0), "{name}-ok: {v} {stderr}");
                assert_eq!(v["valid"], true, "{name}-ok: {v}");
            } else {
                assert_eq!(out.status.code(), Some(1), "{name}-bad: {v} {stderr}");
                assert_eq!(v["valid"], false, "{name}-bad: {v}");
                let anomalies = v["anomalies"].as_array().expect("anomalies");
                assert_eq!(anomalies.len(), 1, "{name}-bad: {v}");
                let why = anomalies[0]["why"].as_str().expect("why");
                assert!(
                    why.contains(&format!("key `{}`", stale.key)),
                    "{name}-bad: the anomaly is on the stale get's key {}: {why}",
                    stale.key
                );
            }
        }
    }
    // The text output too.
    let (bad, _) = generate(PORCUPINE_SHAPES[1].1, true, 7);
    let path = dir.path().join("c10-bad.edn");
    std::fs::write(&path, to_edn(&bad)).expect("write history");
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["check", "--checker", "linearizability-kv"])
        .arg(&path)
        .output()
        .expect("faultline runs");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("linearizability-kv: INVALID"), "{text}");
    assert!(text.contains("not linearizable on key"), "{text}");
}

/// Porcupine's lines for one op: invoke and ok.
fn pair(process: u32, f: &str, key: &str, input: &str, output: &str) -> String {
    let invoke = if f == "get" { "nil" } else { input };
    format!(
        "{{:process {process}, :type :invoke, :f :{f}, :key \"{key}\", :value {invoke}}}\n\
         {{:process {process}, :type :ok, :f :{f}, :key \"{key}\", :value {output}}}\n"
    )
}

#[test]
fn append_concatenates_and_an_unset_key_reads_empty() {
    let base = [
        pair(0, "get", "1", "", "\"\""),
        pair(0, "append", "1", "\"x 0 0 y\"", "\"x 0 0 y\""),
        pair(0, "append", "1", "\"x 0 1 y\"", "\"x 0 1 y\""),
    ]
    .concat();
    let read = |v: &str| format!("{base}{}", pair(1, "get", "1", "", v));
    assert_eq!(kv_anomalies(&read("\"x 0 0 yx 0 1 y\"")), 0);
    // Both appends returned before the get began: their order is fixed.
    assert_eq!(kv_anomalies(&read("\"x 0 1 yx 0 0 y\"")), 1);
    assert_eq!(kv_anomalies(&read("\"x 0 0 y\"")), 1);
    assert_eq!(kv_anomalies(&read("\"\"")), 1);
    // A get of an unset key may also answer nil; other keys are independent.
    assert_eq!(
        kv_anomalies(&format!(
            "{}{}",
            read("\"x 0 0 yx 0 1 y\""),
            pair(1, "get", "2", "", "nil")
        )),
        0
    );
    // A put replaces; an append after it extends the put value.
    let put = format!(
        "{base}{}{}{}",
        pair(0, "put", "1", "\"p\"", "\"p\""),
        pair(0, "append", "1", "\"q\"", "\"q\""),
        pair(1, "get", "1", "", "\"pq\"")
    );
    assert_eq!(kv_anomalies(&put), 0);
    // Overlapping appends may land in either order.
    let overlapping = "\
        {:process 0, :type :invoke, :f :append, :key \"k\", :value \"a\"}\n\
        {:process 1, :type :invoke, :f :append, :key \"k\", :value \"b\"}\n\
        {:process 0, :type :ok, :f :append, :key \"k\", :value \"a\"}\n\
        {:process 1, :type :ok, :f :append, :key \"k\", :value \"b\"}\n";
    for (seen, anomalies) in [("\"ba\"", 0), ("\"ab\"", 0), ("\"a\"", 1), ("\"aba\"", 1)] {
        let text = format!("{overlapping}{}", pair(2, "get", "k", "", seen));
        assert_eq!(kv_anomalies(&text), anomalies, "get → {seen}");
    }
}

#[test]
fn register_checker_counts_appends_unchecked() {
    let text = [
        pair(0, "put", "1", "\"a\"", "\"a\""),
        pair(0, "append", "1", "\"b\"", "\"b\""),
    ]
    .concat();
    let history = parse_edn("h.edn", &text).expect("parses");
    let run = check(&history, Model::Register, Limits::default()).run;
    assert!(
        matches!(
            run,
            CheckerRun::Judged {
                anomalies: 0,
                ops_checked: 1,
                ops_produced: 2
            }
        ),
        "{run:?}"
    );
}

#[test]
fn malformed_kv_lines_name_file_line_and_field() {
    let cases = [
        (
            "{:process 0, :type :invoke, :f :get, :key [1 2], :value nil}\n",
            "h.edn:1: field `:key`: expected a string, keyword or integer",
        ),
        (
            "{:process 0, :type :invoke, :f :get, :key \"1\", :value nil}\n\
             {:process 0, :type :ok, :f :get, :key \"2\", :value \"\"}\n",
            "h.edn:2: field `:key`: names key \"2\" but its invoke on line 1 names key \"1\"",
        ),
        (
            "{:process 0, :type :invoke, :f :get, :key \"1\", :value nil}\n\
             {:process 0, :type :ok, :f :put, :key \"1\", :value \"\"}\n",
            "h.edn:2: field `:f`: :put differs from the :get of its invoke on line 1",
        ),
        (
            "{:process 0, :type :invoke, :key \"1\", :value nil}\n",
            "h.edn:1: field `:f`: expected a keyword naming the op",
        ),
        (
            "{:process 0, :type :invoke, :f :put, :key \"1\", \
             :value #jepsen.independent/tuple [\"2\" \"v\"]}\n",
            "h.edn:1: field `:key`: names key \"1\" but the :value tuple names key \"2\"",
        ),
    ];
    for (text, expected) in cases {
        let err = parse_edn("h.edn", text).expect_err(text).to_string();
        assert!(err.starts_with(expected), "{err}\nexpected: {expected}");
    }
}

/// Exhaustive check of a small one-key history: some order of the ops that
/// keeps real-time order runs on a string store with every get's answer.
fn brute_force(ops: &[KvOp]) -> bool {
    fn place(ops: &[KvOp], done: &mut Vec<bool>, state: &str) -> bool {
        if done.iter().all(|d| *d) {
            return true;
        }
        for i in 0..ops.len() {
            // Op i may go next if every op that returned before its call is placed.
            let ready = !done[i]
                && ops
                    .iter()
                    .enumerate()
                    .all(|(j, o)| done[j] || j == i || o.ret >= ops[i].call);
            if !ready {
                continue;
            }
            let next = match ops[i].kind {
                generate::Kind::Get if ops[i].value != state => continue,
                generate::Kind::Get => state.to_string(),
                generate::Kind::Put => ops[i].value.clone(),
                generate::Kind::Append => format!("{state}{}", ops[i].value),
            };
            done[i] = true;
            if place(ops, done, &next) {
                return true;
            }
            done[i] = false;
        }
        false
    }
    place(ops, &mut vec![false; ops.len()], "")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Histories of an atomic store are accepted; with a stale get planted
    /// they are refused.
    #[test]
    fn generated_histories_judged_as_built(
        clients in 1u32..8,
        keys in 1u32..4,
        ops in 1usize..120,
        seed in any::<u64>(),
    ) {
        let shape = Shape { clients, keys, ops };
        let (good, _) = generate(shape, false, seed);
        prop_assert_eq!(kv_anomalies(&to_edn(&good)), 0);
        let (bad, planted) = generate(shape, true, seed);
        if planted {
            prop_assert_eq!(kv_anomalies(&to_edn(&bad)), 1);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// On one key of a few ops, with gets answering any value some prefix of
    /// the key's writes could make, the search agrees with enumeration.
    #[test]
    fn agrees_with_brute_force(
        clients in 1u32..4,
        ops in 1usize..7,
        seed in any::<u64>(),
        answers in prop::collection::vec(0usize..4, 7),
    ) {
        let (mut history, _) = generate(Shape { clients, keys: 1, ops }, false, seed);
        let writes: Vec<String> = history
            .iter()
            .filter(|o| o.kind != generate::Kind::Get)
            .map(|o| o.value.clone())
            .collect();
        for (op, pick) in history.iter_mut().zip(&answers) {
            if op.kind == generate::Kind::Get && *pick > 0 {
                // A wrong-ish answer: a concatenation of some writes' values.
                op.value = writes.iter().take(*pick).rev().cloned().collect();
            }
        }
        let expected = brute_force(&history);
        prop_assert_eq!(kv_anomalies(&to_edn(&history)) == 0, expected);
    }
}
