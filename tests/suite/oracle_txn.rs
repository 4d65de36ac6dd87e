//! The transactional checkers (`list-append`, `rw-register`): known answers per
//! anomaly kind on hand-built histories, the consistency levels, the reading of
//! EDN / JSONL / txn-jsonl transaction histories with their errors, and property
//! tests: a serial execution is always accepted at strict-serializable, and one
//! read made stale is always rejected with a cycle through its txn.

use faultline::oracle::checker::CheckerReport;
use faultline::oracle::history::parse_jsonl;
use faultline::oracle::jepsen::parse_edn;
use faultline::oracle::params::Params;
use faultline::oracle::registry::{self, Inputs};
use faultline::oracle::txn::history::{Mop, Status, from_history, parse_txn_jsonl};
use faultline::oracle::txn::{FileError, list_append, rw_register};
use faultline::verdict::CheckerRun;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::process::Command;

/// A txn: its status and micro-ops; every txn is its own process and all of them
/// overlap in time (no real-time order) unless `sequential`.
fn jsonl(txns: &[(&str, Value)], sequential: bool) -> String {
    txns.iter()
        .enumerate()
        .map(|(i, (kind, value))| {
            let i = i as u64 + 1;
            let (invoke, complete) = if sequential {
                (i * 10, i * 10 + 5)
            } else {
                (i, 1000 + i)
            };
            let complete = if *kind == "info" {
                Value::Null
            } else {
                json!(complete)
            };
            json!({"op_id": i, "process": i, "invoke_ts": invoke, "complete_ts": complete,
                   "type": kind, "value": value})
            .to_string()
                + "\n"
        })
        .collect()
}

fn run(checker: &str, text: &str, consistency: &str) -> CheckerReport {
    let history = parse_txn_jsonl("h.jsonl", text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let params = Params::parse(&[format!("consistency={consistency}")]).expect("params");
    let report = match checker {
        "list-append" => list_append::check(&history, &params),
        _ => rw_register::check(&history, &params),
    };
    report.unwrap_or_else(|e| panic!("{e}"))
}

fn anomalies(report: &CheckerReport) -> u64 {
    match report.run {
        CheckerRun::Judged { anomalies, .. } => anomalies,
        ref other => panic!("not judged: {other:?}"),
    }
}

/// The failing anomaly whose explanation starts with `kind`.
fn has(report: &CheckerReport, kind: &str) -> bool {
    report
        .anomalies
        .iter()
        .any(|a| a.why.starts_with(&format!("{kind} (")))
}

/// A history that fails at `strong` with `kind` and passes at `weak`, listing
/// the kind in the evidence as allowed.
fn fails_from(checker: &str, text: &str, kind: &str, weak: Option<&str>, strong: &str) {
    let r = run(checker, text, strong);
    assert!(has(&r, kind), "{kind} at {strong}: {r:#?}");
    if let Some(weak) = weak {
        let r = run(checker, text, weak);
        assert_eq!(anomalies(&r), 0, "allowed at {weak}: {r:#?}");
        assert!(
            r.evidence.contains(&format!("allowed at {weak}: ")) && r.evidence.contains(kind),
            "{}",
            r.evidence
        );
    }
}

#[test]
fn a_serial_history_is_valid() {
    let text = jsonl(
        &[
            ("ok", json!([["append", 1, 1], ["r", 1, [1]]])),
            (
                "ok",
                json!([["r", 1, [1]], ["append", 1, 2], ["append", 2, 1]]),
            ),
            (
                "ok",
                json!([["r", 1, [1, 2]], ["r", 2, [1]], ["r", 3, null]]),
            ),
        ],
        true,
    );
    let r = run("list-append", &text, "strict-serializable");
    assert_eq!(anomalies(&r), 0, "{r:#?}");
    assert_eq!(
        r.evidence,
        "checked 3 ops, 0 anomalies at strict-serializable"
    );
}

#[test]
fn g0_write_cycle() {
    // Key 1's order puts T1 before T2, key 2's T2 before T1.
    let text = jsonl(
        &[
            ("ok", json!([["append", 1, 1], ["append", 2, 1]])),
            ("ok", json!([["append", 1, 2], ["append", 2, 2]])),
            ("ok", json!([["r", 1, [1, 2]], ["r", 2, [2, 1]]])),
        ],
        false,
    );
    fails_from("list-append", &text, "G0", None, "read-uncommitted");
    let r = run("list-append", &text, "read-uncommitted");
    let a = &r.anomalies[0];
    assert_eq!(a.ops.len(), 2);
    assert!(a.why.contains("violates read-uncommitted"), "{}", a.why);
    assert!(
        a.why
            .contains("(ww): key 1's order puts T1's append of 1 right before T2's append of 2")
            || a.why.contains(
                "(ww): key 2's order puts T2's append of 2 right before T1's append of 1"
            ),
        "{}",
        a.why
    );
}

#[test]
fn g1a_aborted_read() {
    let text = jsonl(
        &[
            ("fail", json!([["append", 1, 1]])),
            ("ok", json!([["r", 1, [1]]])),
        ],
        false,
    );
    fails_from(
        "list-append",
        &text,
        "G1a",
        Some("read-uncommitted"),
        "read-committed",
    );
    let r = run("list-append", &text, "read-committed");
    assert_eq!(r.anomalies[0].ops, vec!["1", "2"]);
    assert!(
        r.anomalies[0].why.contains("T1 failed"),
        "{}",
        r.anomalies[0].why
    );
}

#[test]
fn an_info_txn_may_have_committed() {
    let text = jsonl(
        &[
            ("info", json!([["append", 1, 1]])),
            ("ok", json!([["r", 1, [1]]])),
        ],
        false,
    );
    assert_eq!(
        anomalies(&run("list-append", &text, "strict-serializable")),
        0
    );
}

#[test]
fn g1b_intermediate_read() {
    let text = jsonl(
        &[
            ("ok", json!([["append", 1, 1], ["append", 1, 2]])),
            ("ok", json!([["r", 1, [1]]])),
        ],
        false,
    );
    fails_from(
        "list-append",
        &text,
        "G1b",
        Some("read-uncommitted"),
        "read-committed",
    );
}

#[test]
fn g1c_circular_information_flow() {
    // Each read the other's append.
    let text = jsonl(
        &[
            ("ok", json!([["append", 1, 1], ["r", 2, [1]]])),
            ("ok", json!([["append", 2, 1], ["r", 1, [1]]])),
        ],
        false,
    );
    fails_from(
        "list-append",
        &text,
        "G1c",
        Some("read-uncommitted"),
        "read-committed",
    );
    let r = run("list-append", &text, "read-committed");
    let why = &r.anomalies[0].why;
    assert!(
        why.contains("T1 < T2 (wr): T2 read T1's append of 1 to key 1"),
        "{why}"
    );
    assert!(
        why.contains("T2 < T1 (wr): T1 read T2's append of 1 to key 2"),
        "{why}"
    );
}

#[test]
fn g_single_read_skew() {
    // T2 sees T1's append to key 1 but not its append to key 2 (T3 shows it).
    let text = jsonl(
        &[
            ("ok", json!([["append", 1, 1], ["append", 2, 1]])),
            ("ok", json!([["r", 1, [1]], ["r", 2, null]])),
            ("ok", json!([["r", 2, [1]]])),
        ],
        false,
    );
    fails_from(
        "list-append",
        &text,
        "G-single",
        Some("read-committed"),
        "snapshot-isolation",
    );
    let r = run("list-append", &text, "serializable");
    let a = &r.anomalies[0];
    assert!(
        a.why.starts_with("G-single (violates snapshot-isolation"),
        "{}",
        a.why
    );
    assert!(
        a.why
            .contains("T1 < T2 (wr): T2 read T1's append of 1 to key 1"),
        "{}",
        a.why
    );
    assert!(
        a.why
            .contains("T2 < T1 (rw): T2 read key 2 as [], without T1's append of 1"),
        "{}",
        a.why
    );
    let mut ops = a.ops.clone();
    ops.sort();
    assert_eq!(ops, vec!["1", "2"]);
}

#[test]
fn g2_item_write_skew() {
    let text = jsonl(
        &[
            ("ok", json!([["r", 1, null], ["append", 2, 1]])),
            ("ok", json!([["r", 2, null], ["append", 1, 1]])),
            ("ok", json!([["r", 1, [1]], ["r", 2, [1]]])),
        ],
        false,
    );
    fails_from(
        "list-append",
        &text,
        "G2-item",
        Some("snapshot-isolation"),
        "serializable",
    );
}

/// The write skew's cycle drawn as a ring: both txns with their micro-ops, both
/// anti-dependencies as numbered arrows explained in the list below, the same bytes
/// on every render.
#[test]
fn a_dependency_cycle_is_drawn_as_a_ring_with_every_edge_explained() {
    let text = jsonl(
        &[
            ("ok", json!([["r", 1, null], ["append", 2, 1]])),
            ("ok", json!([["r", 2, null], ["append", 1, 1]])),
            ("ok", json!([["r", 1, [1]], ["r", 2, [1]]])),
        ],
        false,
    );
    let report = run("list-append", &text, "serializable");
    let history = parse_txn_jsonl("h.jsonl", &text).expect("parses");
    let draw = || faultline::report::figures::of_anomalies(&history.ops, &report, &[]);
    let files = draw().expect("figures");
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"cycle-1.svg"), "{names:?}");
    assert!(!names.contains(&"cycle-2.svg"), "{names:?}");
    let svg = files
        .iter()
        .find(|(n, _)| n == "cycle-1.svg")
        .map(|(_, b)| String::from_utf8(b.clone()).expect("utf-8"))
        .expect("the ring");
    assert_eq!(draw().expect("figures"), files, "a second render differs");
    assert!(svg.contains(">G2-item: a dependency cycle of 2 transactions</text>"));
    assert_eq!(svg.matches("class=\"txn\"").count(), 2);
    assert_eq!(svg.matches("class=\"hop hop-rw\"").count(), 2);
    assert_eq!(svg.matches("<polygon ").count(), 2, "one head per arrow");
    for mop in ["r 1 nil", "append 2 1", "r 2 nil", "append 1 1"] {
        assert!(svg.contains(&format!(">{mop}</text>")), "{mop}: {svg}");
    }
    // The numbered list below the ring carries each edge's reason as the anomaly does.
    let why = &report.anomalies[0].why;
    for (n, hop) in why
        .split(": ")
        .skip(1)
        .collect::<Vec<_>>()
        .join(": ")
        .split("; ")
        .enumerate()
    {
        let line = format!(">{}. {}", n + 1, quick_xml::escape::escape(hop));
        assert!(svg.contains(&line), "{line} not in {svg}");
    }
    insta::assert_snapshot!("oracle_txn_g2_item_cycle", svg);
}

#[test]
fn realtime_stale_read() {
    // T1 committed before T2 began, yet T2 does not see its append.
    let text = jsonl(
        &[
            ("ok", json!([["append", 1, 1]])),
            ("ok", json!([["r", 1, null]])),
            ("ok", json!([["r", 1, [1]]])),
        ],
        true,
    );
    fails_from(
        "list-append",
        &text,
        "G-single-realtime",
        Some("serializable"),
        "strict-serializable",
    );
    let r = run("list-append", &text, "strict-serializable");
    assert!(
        r.anomalies[0]
            .why
            .contains("T1 < T2 (realtime): T1 completed (at 15) before T2 was invoked (at 20)"),
        "{}",
        r.anomalies[0].why
    );
}

#[test]
fn internal_duplicate_incompatible_and_garbage_fail_every_level() {
    let cases = [
        ("internal", "internal"),
        ("duplicate", "duplicate-elements"),
        ("incompatible", "incompatible-order"),
        ("garbage", "garbage-read"),
    ];
    for (name, kind) in cases {
        let txns: Vec<(&str, Value)> = match name {
            "internal" => vec![
                ("ok", json!([["append", 1, 7]])),
                ("ok", json!([["append", 1, 5], ["r", 1, [7]]])),
            ],
            "duplicate" => vec![
                ("ok", json!([["append", 1, 1]])),
                ("ok", json!([["r", 1, [1, 1]]])),
            ],
            "incompatible" => vec![
                ("ok", json!([["append", 1, 1]])),
                ("ok", json!([["append", 1, 2]])),
                ("ok", json!([["r", 1, [1, 2]]])),
                ("ok", json!([["r", 1, [2, 1]]])),
            ],
            _ => vec![("ok", json!([["r", 1, [9]]]))],
        };
        let text = jsonl(&txns, false);
        let r = run("list-append", &text, "read-uncommitted");
        assert!(has(&r, kind), "{name}: {r:#?}");
        assert!(
            r.anomalies
                .iter()
                .any(|a| a.why.contains("violates every level")),
            "{name}: {r:#?}"
        );
    }
}

#[test]
fn rw_register_known_answers() {
    let g1c = jsonl(
        &[
            ("ok", json!([["w", "x", 1], ["r", "y", 2]])),
            ("ok", json!([["w", "y", 2], ["r", "x", 1]])),
        ],
        false,
    );
    fails_from(
        "rw-register",
        &g1c,
        "G1c",
        Some("read-uncommitted"),
        "read-committed",
    );
    // Write skew: each read nil (the initial version) and wrote what the other read.
    let skew = jsonl(
        &[
            ("ok", json!([["r", "x", null], ["w", "y", 1]])),
            ("ok", json!([["r", "y", null], ["w", "x", 1]])),
        ],
        false,
    );
    fails_from(
        "rw-register",
        &skew,
        "G2-item",
        Some("snapshot-isolation"),
        "serializable",
    );
    let r = run("rw-register", &skew, "serializable");
    assert!(
        r.anomalies[0]
            .why
            .contains("read key x as nil, the initial version, which T2's write of 1 overwrites"),
        "{}",
        r.anomalies[0].why
    );
    // Lost update: both read 1 and wrote over it.
    let lost = jsonl(
        &[
            ("ok", json!([["w", "x", 1]])),
            ("ok", json!([["r", "x", 1], ["w", "x", 2]])),
            ("ok", json!([["r", "x", 1], ["w", "x", 3]])),
        ],
        false,
    );
    fails_from(
        "rw-register",
        &lost,
        "lost-update",
        Some("read-committed"),
        "snapshot-isolation",
    );
    let r = run("rw-register", &lost, "snapshot-isolation");
    assert!(
        r.anomalies[0]
            .why
            .contains("2 txns read key x as 1 and each overwrote it: T2 wrote 2, T3 wrote 3"),
        "{}",
        r.anomalies[0].why
    );
    let g1a = jsonl(
        &[
            ("fail", json!([["w", "x", 1]])),
            ("ok", json!([["r", "x", 1]])),
        ],
        false,
    );
    fails_from("rw-register", &g1a, "G1a", None, "read-committed");
    let g1b = jsonl(
        &[
            ("ok", json!([["w", "x", 1], ["w", "x", 2]])),
            ("ok", json!([["r", "x", 1]])),
        ],
        false,
    );
    fails_from("rw-register", &g1b, "G1b", None, "read-committed");
    let internal = jsonl(&[("ok", json!([["w", "x", 1], ["r", "x", 2]]))], false);
    fails_from(
        "rw-register",
        &internal,
        "internal",
        None,
        "read-uncommitted",
    );
    let serial = jsonl(
        &[
            ("ok", json!([["r", "x", null], ["w", "x", 1]])),
            (
                "ok",
                json!([["r", "x", 1], ["w", "x", 2], ["r", "y", null]]),
            ),
            ("ok", json!([["r", "x", 2]])),
        ],
        true,
    );
    assert_eq!(
        anomalies(&run("rw-register", &serial, "strict-serializable")),
        0
    );
}

#[test]
fn edn_txn_histories() {
    let text = "\
{:type :invoke, :f :txn, :process 0, :time 1, :value [[:append :x 1] [:r :y nil]], :index 0}
{:type :invoke, :f :txn, :process 1, :time 2, :value [[:append :y 1] [:r :x nil]], :index 1}
{:type :ok, :f :txn, :process 0, :time 3, :value [[:append :x 1] [:r :y [1]]], :index 2}
{:type :info, :f :txn, :process 1, :time 4, :value [[:append :y 1] [:r :x nil]], :index 3}
{:type :invoke, :f :txn, :process 0, :time 5, :value [[:append :x 2]], :index 4}
{:type :fail, :f :txn, :process 0, :time 6, :value [[:append :x 2]], :index 5}
";
    let history = parse_edn("h.edn", text).expect("parses");
    let txns = from_history(&history).expect("txns");
    assert_eq!(txns.txns.len(), 3);
    let t = &txns.txns[0];
    assert_eq!((t.id.as_str(), t.status), ("0", Status::Ok));
    assert_eq!(
        t.mops[1],
        Mop::Read {
            key: "y".into(),
            value: json!([1])
        }
    );
    assert_eq!(txns.txns[1].status, Status::Info);
    assert_eq!(txns.txns[2].status, Status::Fail);
    let params = Params::parse(&["consistency=serializable"]).expect("params");
    let r = list_append::check(&history, &params).expect("judged");
    assert_eq!(anomalies(&r), 0, "{r:#?}");

    let bad = "{:type :invoke, :f :txn, :process 0, :value [[:append :x 1] [:frob :y 2]]}\n\
               {:type :ok, :f :txn, :process 0, :value [[:append :x 1] [:frob :y 2]]}\n";
    let history = parse_edn("bad.edn", bad).expect("parses");
    let err = list_append::check(&history, &params).expect_err("a bad micro-op");
    assert!(
        err.starts_with("bad.edn: op L1: field `output`[1]: expected"),
        "{err}"
    );
    assert!(err.contains("[:append k v] [:r k v] [:w k v]"), "{err}");
}

#[test]
fn edn_txns_without_process_have_no_process_order() {
    // T1 (process 0) appends x 1 and ends :info; T2 (process 0, after it) reads x
    // empty; T3 (process 1) reads x [1], so T1 committed. T1 <process T2 <rw T1 is
    // a cycle only through process order.
    let with = "\
{:type :invoke, :f :txn, :process 0, :time 1, :value [[:append :x 1]]}
{:type :info, :f :txn, :process 0, :time 2, :value [[:append :x 1]], :error :timeout}
{:type :invoke, :f :txn, :process 0, :time 3, :value [[:r :x nil]]}
{:type :ok, :f :txn, :process 0, :time 4, :value [[:r :x nil]]}
{:type :invoke, :f :txn, :process 1, :time 5, :value [[:r :x nil]]}
{:type :ok, :f :txn, :process 1, :time 6, :value [[:r :x [1]]]}
";
    let strict = Params::parse(&["consistency=strict-serializable"]).expect("params");
    let history = parse_edn("with.edn", with).expect("parses");
    let r = list_append::check(&history, &strict).expect("judged");
    assert!(has(&r, "G-single-process"), "{r:#?}");
    assert!(!r.scope.contains("process order not used"), "{}", r.scope);

    let without = with.replace(", :process 0", "").replace(", :process 1", "");
    let history = parse_edn("without.edn", &without).expect("parses without :process");
    assert!(!history.present_fields.contains("process"));
    let r = list_append::check(&history, &strict).expect("judged, not refused");
    assert_eq!(anomalies(&r), 0, "{r:#?}");
    assert!(
        r.scope.ends_with(
            "process order not used: the history records no process, so no \
                        process-order edges (cycles through one, the *-process kinds, are not \
                        seen)"
        ),
        "{}",
        r.scope
    );

    // txn-jsonl without `process` reads the same way.
    let text = "{\"op_id\": 1, \"invoke_ts\": 1, \"complete_ts\": 2, \"type\": \"ok\", \"value\": [[\"append\", \"x\", 1]]}\n\
                {\"op_id\": 2, \"process\": 0, \"invoke_ts\": 3, \"complete_ts\": 4, \"type\": \"ok\", \"value\": [[\"r\", \"x\", [1]]]}\n";
    let history = parse_txn_jsonl("t.jsonl", text).expect("parses");
    let r = list_append::check(&history, &strict).expect("judged");
    assert_eq!(anomalies(&r), 0, "{r:#?}");
    assert!(
        r.scope.contains("process order not used for 1 of 2 txns"),
        "{}",
        r.scope
    );
}

#[test]
fn txn_jsonl_errors_name_line_field_and_what_is_allowed() {
    let good = r#"{"op_id": 1, "process": 0, "invoke_ts": 1, "complete_ts": 2, "type": "ok", "value": [["append", "x", 1]]}"#;
    let cases = [
        (
            r#"{"op_id": 2, "process": 0, "invoke_ts": 3, "complete_ts": 4, "type": "done", "value": []}"#,
            "h.jsonl:2: field `type`: \"done\" is not one of \"ok\", \"info\", \"fail\"",
        ),
        (
            r#"{"op_id": 2, "process": 0, "invoke_ts": 3, "complete_ts": 4, "type": "ok", "value": [["cas", "x", 1]]}"#,
            "h.jsonl:2: field `value`: [0]: expected [\"append\", k, v]",
        ),
        (
            r#"{"op_id": 2, "process": 0, "invoke_ts": 3, "complete_ts": 4, "value": []}"#,
            "h.jsonl:2: field `type`: expected \"ok\", \"info\" or \"fail\"",
        ),
        (
            r#"{"op_id": 2, "process": 0, "invoke_ts": 3, "complete_ts": null, "type": "ok", "value": []}"#,
            "h.jsonl:2: field `complete_ts`: null, but only an \"info\" txn may lack one",
        ),
        (
            r#"{"op_id": 1, "process": 0, "invoke_ts": 3, "complete_ts": 4, "type": "ok", "value": []}"#,
            "h.jsonl:2: field `op_id`: op_id 1 repeated",
        ),
    ];
    let params = Params::default();
    // The streaming reader the checkers use says the same, as a file it cannot read.
    let streamed = |text: &str| {
        faultline::oracle::txn::check_txn_jsonl("list-append", "h.jsonl", text.as_bytes(), &params)
    };
    for (line, want) in cases {
        let text = format!("{good}\n{line}\n");
        let err = parse_txn_jsonl("h.jsonl", &text)
            .expect_err(line)
            .to_string();
        assert!(err.starts_with(want), "{err}\nwanted {want}");
        assert_eq!(streamed(&text), Err(FileError::Unreadable(err)));
    }
    let torn = format!("{good}\n{{\"op_id\": 2, \"pro");
    let err = parse_txn_jsonl("h.jsonl", &torn)
        .expect_err("torn")
        .to_string();
    assert!(err.contains("h.jsonl:2: truncated final line"), "{err}");
    assert_eq!(streamed(&torn), Err(FileError::Unreadable(err)));
    // What the checker cannot judge is its unknown answer, as it always was.
    let w = format!(
        "{good}\n{}\n",
        good.replace("\"append\"", "\"w\"")
            .replace("\"op_id\": 1", "\"op_id\": 2")
    );
    let r = streamed(&w).expect("judged");
    assert_eq!(
        r.run,
        CheckerRun::Unknown {
            reason: "op 2: [\"w\", x, …] in a list-append history (use rw-register)".into()
        }
    );
    let err = faultline::oracle::txn::check_txn_jsonl("linearizability-kv", "h", &b""[..], &params)
        .expect_err("not a txn checker");
    assert!(matches!(err, FileError::Usage(_)), "{err:?}");
    let err = faultline::oracle::txn::check_file(
        "list-append",
        std::path::Path::new("/nonexistent/h.jsonl"),
        &params,
    )
    .expect_err("no file");
    assert!(
        matches!(&err, FileError::Unreadable(m) if m.starts_with("/nonexistent/h.jsonl: ")),
        "{err:?}"
    );
}

#[test]
fn check_file_reads_a_txn_jsonl_file_line_by_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("skew.jsonl");
    let text = jsonl(
        &[
            ("ok", json!([["r", 1, null], ["append", 2, 1]])),
            ("ok", json!([["r", 2, null], ["append", 1, 1]])),
            ("ok", json!([["r", 1, [1]], ["r", 2, [1]]])),
        ],
        false,
    );
    std::fs::write(&path, &text).expect("write");
    for level in ["serializable", "snapshot-isolation"] {
        let params = Params::parse(&[format!("consistency={level}")]).expect("params");
        let from_file =
            faultline::oracle::txn::check_file("list-append", &path, &params).expect("checked");
        let history = parse_txn_jsonl(&path.display().to_string(), &text).expect("parses");
        assert_eq!(
            from_file,
            list_append::check(&history, &params).expect("judged")
        );
    }
    let bad = Params::parse(&["consistency=linearizable"]).expect("params");
    let err = faultline::oracle::txn::check_file("list-append", &path, &bad).expect_err("level");
    assert!(matches!(&err, FileError::Usage(m) if m.contains("one of: read-uncommitted")));
}

#[test]
fn faultline_jsonl_txns_missing_fields_and_coverage() {
    // faultline's own records: op_type "txn", the micro-ops in input / output.
    let rec = |id: u64, op: &str, input: Value, output: Value| {
        json!({"op_id": id, "process": id, "invoke_ts": id, "complete_ts": id + 100,
               "op_type": op, "key": null, "input": input, "output": output, "error": null,
               "timeout": false, "node": null, "fault_epoch": null})
        .to_string()
    };
    let text = [
        rec(
            1,
            "txn",
            json!([["append", 1, 1]]),
            json!([["append", 1, 1]]),
        ),
        rec(2, "txn", json!([["r", 1, null]]), json!([["r", 1, [1]]])),
        rec(3, "read", json!(null), json!(1)),
    ]
    .join("\n")
        + "\n";
    let history = parse_jsonl("h.jsonl", &text).expect("parses");
    let inputs = Inputs {
        history: Some(&history),
        ..Default::default()
    };
    let r = registry::run("list-append", &inputs, &Params::default()).expect("runs");
    assert_eq!(
        r.run,
        CheckerRun::Judged {
            anomalies: 0,
            ops_checked: 2,
            ops_produced: 3
        },
        "the read is not a txn: coverage below 100 %"
    );
    let err = registry::run(
        "list-append",
        &inputs,
        &Params::parse(&["consistency=linearizable"]).expect("params"),
    )
    .expect_err("unknown level");
    assert!(err.contains("one of: read-uncommitted"), "{err}");

    let without_output: String = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("json");
            v.as_object_mut().expect("object").remove("output");
            v.to_string() + "\n"
        })
        .collect();
    let history = parse_jsonl("h.jsonl", &without_output).expect("parses");
    let inputs = Inputs {
        history: Some(&history),
        ..Default::default()
    };
    let r = registry::run("rw-register", &inputs, &Params::default()).expect("runs");
    assert_eq!(
        r.run,
        CheckerRun::MissingFields {
            fields: vec!["output".into()]
        }
    );
}

#[test]
fn faultline_check_reads_txn_jsonl() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("skew.jsonl");
    let text = jsonl(
        &[
            ("ok", json!([["r", 1, null], ["append", 2, 1]])),
            ("ok", json!([["r", 2, null], ["append", 1, 1]])),
            ("ok", json!([["r", 1, [1]], ["r", 2, [1]]])),
        ],
        false,
    );
    std::fs::write(&path, text).expect("write");
    let check = |level: &str| {
        Command::new(env!("CARGO_BIN_EXE_faultline"))
            .args(["check", "--checker", "list-append", "--format", "txn-jsonl"])
            .arg(&path)
            .args(["--param", &format!("consistency={level}"), "--json"])
            .output()
            .expect("runs")
    };
    let out = check("serializable");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = check("snapshot-isolation");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn is_cycle(why: &str) -> bool {
    ["G0", "G1c", "G-single", "G2-item"]
        .iter()
        .any(|k| why.starts_with(&format!("{k} (")) || why.starts_with(&format!("{k}-")))
}

#[test]
fn the_picker_suggests_them_for_isolation_claims() {
    assert_eq!(registry::pick("map", "isolation"), Some("list-append"));
    assert_eq!(registry::pick("ledger", "isolation"), Some("list-append"));
    assert_eq!(registry::pick("register", "isolation"), Some("rw-register"));
    assert_eq!(registry::pick("session", "isolation"), Some("list-append"));
    assert_eq!(
        registry::misfit("list-append", Some("map"), Some("isolation")),
        None
    );
}

/// A serial execution of random txns over a few keys: every read sees every
/// append before it. The last txn reads every key (it fixes each key's order).
fn serial(spec: &[Vec<(bool, u8)>], processes: &[u8]) -> Vec<(u64, Value)> {
    let mut lists: [Vec<u64>; 4] = Default::default();
    let mut next = 0u64;
    let mut out = Vec::new();
    for (i, mops) in spec.iter().enumerate() {
        let value: Vec<Value> = mops
            .iter()
            .map(|&(append, k)| {
                let k = (k % 4) as usize;
                if append {
                    next += 1;
                    lists[k].push(next);
                    json!(["append", k, next])
                } else {
                    json!(["r", k, lists[k].clone()])
                }
            })
            .collect();
        out.push((
            u64::from(processes[i % processes.len()]),
            Value::Array(value),
        ));
    }
    let all: Vec<Value> = (0..4).map(|k| json!(["r", k, lists[k].clone()])).collect();
    out.push((0, Value::Array(all)));
    out
}

/// Sequential txn-jsonl records of (process, micro-ops).
fn sequential(txns: &[(u64, Value)]) -> String {
    txns.iter()
        .enumerate()
        .map(|(i, (p, v))| {
            let i = i as u64 + 1;
            json!({"op_id": i, "process": p, "invoke_ts": i * 10, "complete_ts": i * 10 + 5,
                   "type": "ok", "value": v})
            .to_string()
                + "\n"
        })
        .collect()
}

fn spec() -> impl Strategy<Value = (Vec<Vec<(bool, u8)>>, Vec<u8>)> {
    (
        prop::collection::vec(prop::collection::vec((any::<bool>(), 0u8..4), 1..5), 1..30),
        prop::collection::vec(0u8..4, 1..4),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn serial_executions_are_strict_serializable((spec, processes) in spec()) {
        let text = sequential(&serial(&spec, &processes));
        let r = run("list-append", &text, "strict-serializable");
        prop_assert_eq!(anomalies(&r), 0, "{:#?}", r);
    }

    /// One read (its txn's only op on that key) loses its last element: the txn
    /// now precedes the append it missed, which completed before it began.
    #[test]
    fn one_stale_read_is_rejected_with_its_cycle((spec, processes) in spec(), pick in any::<prop::sample::Index>()) {
        let mut txns = serial(&spec, &processes);
        let last = txns.len() - 1;
        let mut candidates = Vec::new();
        for (t, (_, value)) in txns[..last].iter().enumerate() {
            let mops = value.as_array().expect("mops");
            for (m, mop) in mops.iter().enumerate() {
                let (f, k, list) = (&mop[0], &mop[1], &mop[2]);
                let only = mops.iter().filter(|o| &o[1] == k).count() == 1;
                if f == "r" && only && list.as_array().is_some_and(|l| !l.is_empty()) {
                    candidates.push((t, m));
                }
            }
        }
        prop_assume!(!candidates.is_empty());
        let (t, m) = candidates[pick.index(candidates.len())];
        if let Some(list) = txns[t].1[m][2].as_array_mut() {
            list.pop();
        }
        let text = sequential(&txns);
        let r = run("list-append", &text, "strict-serializable");
        let id = (t + 1).to_string();
        prop_assert!(anomalies(&r) > 0, "accepted: {}", text);
        prop_assert!(
            r.anomalies.iter().any(|a| is_cycle(&a.why) && a.ops.contains(&id)),
            "no cycle through T{}: {:#?}\n{}", id, r, text
        );
    }
}

/// Random txns over a few keys, with every kind of trouble: stale, reordered,
/// duplicated and invented reads, failed and indeterminate txns, overlapping
/// times, shared and missing processes. `register`: writes and single-value
/// reads (rw-register); else appends and list reads (list-append).
/// A messy txn: its status, process and timing bytes, and its micro-ops (write?,
/// key, how a read goes wrong).
type Messy = (u8, u8, u8, Vec<(bool, u8, u8)>);

fn messy(register: bool, spec: &[Messy]) -> String {
    let mut lists: [Vec<u64>; 3] = Default::default();
    let mut next = 0u64;
    let mut out = String::new();
    for (i, (status, process, timing, mops)) in spec.iter().enumerate() {
        let i = i as u64;
        let value: Vec<Value> = mops
            .iter()
            .map(|&(write, k, how)| {
                let k = (k % 3) as usize;
                if write {
                    next += 1;
                    lists[k].push(next);
                    json!([if register { "w" } else { "append" }, k, next])
                } else {
                    let list = &lists[k];
                    let seen: Vec<u64> = match how % 8 {
                        // Stale: a shorter prefix.
                        0 | 1 => list[..list.len() / 2].to_vec(),
                        // Reordered.
                        2 if list.len() > 1 => {
                            let mut l = list.clone();
                            l.swap(0, 1);
                            l
                        }
                        // A value twice, or one nobody wrote.
                        3 => list.iter().chain(list.first()).copied().collect(),
                        4 => list.iter().copied().chain([999]).collect(),
                        _ => list.clone(),
                    };
                    if register {
                        match (how % 8, list.len()) {
                            (_, 0) | (5, _) => json!(["r", k, null]),
                            (4, _) => json!(["r", k, 999]),
                            (0 | 1, n) => json!(["r", k, list[n / 2]]),
                            (_, n) => json!(["r", k, list[n - 1]]),
                        }
                    } else if seen.is_empty() && how % 2 == 0 {
                        json!(["r", k, null])
                    } else {
                        json!(["r", k, seen])
                    }
                }
            })
            .collect();
        let (kind, complete) = match status % 10 {
            0 => ("fail", json!(i * 10 + 3 + u64::from(timing % 40))),
            1 => ("info", Value::Null),
            _ => ("ok", json!(i * 10 + 3 + u64::from(timing % 40))),
        };
        let mut rec = json!({"op_id": i + 1, "invoke_ts": i * 10 + u64::from(timing % 3),
                             "complete_ts": complete, "type": kind, "value": value});
        if process % 5 != 4 {
            rec["process"] = json!(process % 5);
        }
        out.push_str(&rec.to_string());
        out.push('\n');
    }
    out
}

fn messy_spec() -> impl Strategy<Value = Vec<Messy>> {
    prop::collection::vec(
        (
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            prop::collection::vec((any::<bool>(), 0u8..3, any::<u8>()), 1..5),
        ),
        1..60,
    )
}

/// The checker on `text` three ways: the pre-issue-33 checker (`baseline`) on
/// the parsed history, the compact checker on the parsed history, and the
/// compact checker reading the txn-jsonl text line by line.
fn three_ways(checker: &str, text: &str, params: &Params) -> [Result<CheckerReport, String>; 3] {
    use faultline::oracle::txn::baseline;
    let history = parse_txn_jsonl("h.jsonl", text).expect("parses");
    let (old, new) = match checker {
        "list-append" => (
            baseline::list_append::check(&history, params),
            list_append::check(&history, params),
        ),
        _ => (
            baseline::rw_register::check(&history, params),
            rw_register::check(&history, params),
        ),
    };
    let streamed =
        faultline::oracle::txn::check_txn_jsonl(checker, "h.jsonl", text.as_bytes(), params)
            .map_err(|e| e.to_string());
    [old, new, streamed]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Same anomalies, same cycles, same explanations, same figures' data as the
    /// checkers before issue 33, whichever way the history is read.
    #[test]
    fn compact_checkers_report_what_the_baseline_reports(
        spec in messy_spec(),
        register in any::<bool>(),
        level in 0usize..5,
    ) {
        let levels = ["read-uncommitted", "read-committed", "snapshot-isolation",
                      "serializable", "strict-serializable"];
        let params = Params::parse(&[format!("consistency={}", levels[level])]).expect("params");
        let text = messy(register, &spec);
        let checker = if register { "rw-register" } else { "list-append" };
        let [old, new, streamed] = three_ways(checker, &text, &params);
        prop_assert_eq!(&old, &new, "{}", text);
        prop_assert_eq!(&old, &streamed, "{}", text);
        // The wrong checker refuses the same way too.
        let other = if register { "list-append" } else { "rw-register" };
        let [old, new, streamed] = three_ways(other, &text, &params);
        prop_assert_eq!(&old, &new, "{}", text);
        prop_assert_eq!(&old, &streamed, "{}", text);
    }
}

#[test]
fn the_compact_checkers_find_anomalies_in_messy_histories() {
    // The differential test above is only as good as the anomalies its histories
    // hold: make sure they hold cycles of every family and the other kinds.
    let mut kinds = std::collections::BTreeSet::new();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut byte = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 24) as u8
    };
    let params = Params::parse(&["consistency=strict-serializable"]).expect("params");
    for round in 0..400 {
        let spec: Vec<Messy> = (0..20)
            .map(|_| {
                let n = 1 + byte() % 4;
                let mops = (0..n)
                    .map(|_| (byte() % 2 == 0, byte() % 3, byte()))
                    .collect();
                (byte(), byte(), byte(), mops)
            })
            .collect();
        let register = round % 2 == 1;
        let checker = if register {
            "rw-register"
        } else {
            "list-append"
        };
        let text = messy(register, &spec);
        let [old, new, _] = three_ways(checker, &text, &params);
        assert_eq!(old, new, "{text}");
        for a in new.expect("judged").anomalies {
            kinds.insert(a.why.split(" (").next().unwrap_or_default().to_string());
        }
    }
    for kind in [
        "G0",
        "G1a",
        "G1b",
        "G1c",
        "G-single",
        "G2-item",
        "G0-realtime",
        "G1c-realtime",
        "G-single-realtime",
        "G-single-process",
        "internal",
        "duplicate-elements",
        "incompatible-order",
        "garbage-read",
        "lost-update",
    ] {
        assert!(kinds.contains(kind), "no {kind} among {kinds:?}");
    }
}
