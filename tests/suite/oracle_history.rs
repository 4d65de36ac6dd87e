//! History parsing, no-lost-ack, external checker results and measurements.

use faultline::oracle::checker::Checker;
use faultline::oracle::history::parse_jsonl;
use faultline::oracle::measure::{fault_window_covered, monotonic, oracle_consumed, workload_rate};
use faultline::oracle::no_lost_ack::{self, NoLostAck, parse_final_state};
use faultline::oracle::parse_external_result;
use faultline::verdict::{AuditStatus, CheckerRun};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

/// A full 12-field record as one JSONL line.
#[allow(clippy::too_many_arguments)]
fn rec(
    id: u64,
    process: u64,
    invoke: u64,
    complete: Option<u64>,
    op_type: &str,
    key: &str,
    input: serde_json::Value,
    error: Option<&str>,
    timeout: bool,
) -> String {
    json!({
        "op_id": id, "process": process, "invoke_ts": invoke, "complete_ts": complete,
        "op_type": op_type, "key": key, "input": input,
        "output": if complete.is_some() && error.is_none() { json!("ok") } else { json!(null) },
        "error": error, "timeout": timeout, "node": "n1", "fault_epoch": null
    })
    .to_string()
}

fn lines(v: &[String]) -> String {
    let mut s = v.join("\n");
    s.push('\n');
    s
}

#[test]
fn parses_full_records() {
    let text = lines(&[
        rec(1, 0, 10, Some(20), "write", "a", json!(1), None, false),
        rec(2, 1, 15, None, "write", "a", json!(2), None, true),
    ]);
    let h = parse_jsonl("history.jsonl", &text).expect("parses");
    assert_eq!(h.ops.len(), 2);
    assert_eq!(h.present_fields.len(), 12);
    assert_eq!(h.ops[0].op_id, "1");
    assert!(h.ops[0].is_acked());
    assert!(!h.ops[1].is_acked());
    assert_eq!(h.ops[1].complete_ts, None);
}

#[test]
fn error_names_line_and_field() {
    let good = rec(1, 0, 10, Some(20), "write", "a", json!(1), None, false);
    let bad = good.replace("\"invoke_ts\":10", "\"invoke_ts\":\"ten\"");
    assert_ne!(good, bad);
    let text = lines(&[
        rec(0, 0, 1, Some(2), "read", "a", json!(null), None, false),
        bad,
    ]);
    let err = parse_jsonl("history.jsonl", &text).expect_err("bad type");
    assert_eq!(
        err.to_string(),
        "history.jsonl:2: field `invoke_ts`: expected an integer"
    );
}

/// An op cannot complete before it was invoked: the reader refuses it, naming the
/// line and field; equal times (an instant op) and an absent `invoke_ts` are fine.
#[test]
fn a_completion_before_its_invoke_is_refused() {
    let text = lines(&[
        rec(1, 0, 10, Some(10), "write", "a", json!(1), None, false),
        rec(2, 1, 50, Some(40), "write", "a", json!(2), None, false),
    ]);
    let err = parse_jsonl("history.jsonl", &text).expect_err("completes before invoke");
    assert_eq!(
        err.to_string(),
        "history.jsonl:2: field `complete_ts`: 40 is earlier than `invoke_ts` 50: an op \
         completes after it is invoked (are both read from one monotonic clock?)"
    );
    let mut untimed: serde_json::Value =
        serde_json::from_str(&rec(1, 0, 10, Some(5), "write", "a", json!(1), None, false))
            .expect("json");
    untimed.as_object_mut().expect("object").remove("invoke_ts");
    parse_jsonl("h", &lines(&[untimed.to_string()])).expect("no invoke time to compare");

    // Through the CLI: a malformed history, exit 66.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("back.jsonl");
    std::fs::write(&path, &text).expect("history");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["check", "--checker", "no-lost-ack"])
        .arg(&path)
        .output()
        .expect("faultline check");
    assert_eq!(out.status.code(), Some(66), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("back.jsonl:2: field `complete_ts`: 40 is earlier than `invoke_ts` 50"),
        "{said}"
    );
}

#[test]
fn absent_differs_from_null() {
    // fault_epoch null everywhere: present. node absent on one line: not present.
    let a = rec(1, 0, 10, Some(20), "write", "a", json!(1), None, false);
    let mut v: serde_json::Value = serde_json::from_str(&a).expect("json");
    v.as_object_mut().expect("object").remove("node");
    let b = rec(2, 0, 30, Some(40), "write", "a", json!(2), None, false);
    let h = parse_jsonl("h", &lines(&[v.to_string(), b])).expect("parses");
    assert!(h.present_fields.contains("fault_epoch"));
    assert!(!h.present_fields.contains("node"));
    assert_eq!(h.missing_fields(&["node", "key"]), vec!["node".to_string()]);
}

#[test]
fn truncated_final_line() {
    let full = rec(1, 0, 10, Some(20), "write", "a", json!(1), None, false);
    let text = format!("{full}\n{}", &full[..full.len() / 2]);
    let err = parse_jsonl("h.jsonl", &text).expect_err("truncated");
    let msg = err.to_string();
    assert!(msg.starts_with("h.jsonl:2:"), "{msg}");
    assert!(msg.contains("truncated"), "{msg}");
    // Invalid JSON in the middle is not called truncated.
    let text = format!("{}\n{full}\n", &full[..full.len() / 2]);
    let msg = parse_jsonl("h.jsonl", &text).expect_err("bad").to_string();
    assert!(msg.contains(":1:") && !msg.contains("truncated"), "{msg}");
}

#[test]
fn timeout_with_complete_ts_and_duplicate_op_id_rejected() {
    let t = rec(1, 0, 10, Some(20), "write", "a", json!(1), None, true);
    let msg = parse_jsonl("h", &lines(&[t]))
        .expect_err("timeout")
        .to_string();
    assert!(msg.contains("h:1") && msg.contains("complete_ts"), "{msg}");

    let a = rec(7, 0, 10, Some(20), "write", "a", json!(1), None, false);
    let msg = parse_jsonl("h", &lines(&[a.clone(), a]))
        .expect_err("dup")
        .to_string();
    assert!(
        msg.contains("h:2") && msg.contains("duplicate response (recorder error)"),
        "{msg}"
    );
}

fn state(pairs: &[(&str, serde_json::Value)]) -> BTreeMap<String, serde_json::Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[test]
fn no_lost_ack_clean_history_passes() {
    let text = lines(&[
        rec(1, 0, 10, Some(20), "write", "a", json!(1), None, false),
        rec(2, 1, 25, Some(30), "write", "a", json!(2), None, false),
        rec(3, 0, 40, Some(50), "read", "a", json!(null), None, false),
        rec(4, 1, 45, Some(55), "put", "b", json!("x"), None, false),
    ]);
    let h = parse_jsonl("h", &text).expect("parses");
    let r = no_lost_ack::check(&h, &state(&[("a", json!(2)), ("b", json!("x"))]));
    assert_eq!(
        r.run,
        CheckerRun::Judged {
            anomalies: 0,
            ops_checked: 4,
            ops_produced: 4
        }
    );
    assert_eq!(r.evidence, "checked 4 ops, 0 anomalies");
    assert_eq!(oracle_consumed(&r).status, AuditStatus::Passed);
}

#[test]
fn no_lost_ack_finds_lost_ack() {
    let text = lines(&[
        rec(1, 0, 10, Some(20), "write", "a", json!(1), None, false),
        rec(2, 1, 25, Some(30), "write", "b", json!(2), None, false),
    ]);
    let h = parse_jsonl("h", &text).expect("parses");
    // a holds a value nobody wrote later; b is gone.
    let r = no_lost_ack::check(&h, &state(&[("a", json!(0))]));
    assert!(matches!(r.run, CheckerRun::Judged { anomalies: 2, .. }));
    assert_eq!(r.anomalies[0].ops, vec!["1".to_string()]);
    assert_eq!(r.anomalies[1].ops, vec!["2".to_string()]);
}

#[test]
fn timed_out_write_not_counted_as_acked() {
    let text = lines(&[
        rec(1, 0, 10, Some(20), "write", "a", json!(1), None, false),
        // Timed out: unknown effect. Not acked, so missing "c" is no anomaly,
        // but it may explain the final value of "a".
        rec(2, 1, 15, None, "write", "a", json!(9), None, true),
        rec(3, 1, 16, None, "write", "c", json!(5), None, true),
        // Failed write: neither acked nor an explanation.
        rec(
            4,
            0,
            30,
            Some(31),
            "write",
            "d",
            json!(1),
            Some("rejected"),
            false,
        ),
    ]);
    let h = parse_jsonl("h", &text).expect("parses");
    let r = no_lost_ack::check(&h, &state(&[("a", json!(9))]));
    assert!(
        matches!(r.run, CheckerRun::Judged { anomalies: 0, .. }),
        "{r:?}"
    );
}

#[test]
fn no_lost_ack_missing_fields() {
    let a = rec(1, 0, 10, Some(20), "write", "a", json!(1), None, false);
    let mut v: serde_json::Value = serde_json::from_str(&a).expect("json");
    v.as_object_mut().expect("object").remove("timeout");
    let h = parse_jsonl("h", &lines(&[v.to_string()])).expect("parses");
    let r = no_lost_ack::check(&h, &state(&[("a", json!(1))]));
    assert_eq!(
        r.run,
        CheckerRun::MissingFields {
            fields: vec!["timeout".into()]
        }
    );
    assert!(NoLostAck::required_fields().contains(&"complete_ts"));
    assert_eq!(no_lost_ack::required_fields().len(), 9);
    assert!(!r.evidence.contains("does not know"), "{}", r.evidence);

    // The same field under a name the reader does not know: named, not dropped
    // silently, with the likely meaning.
    let renamed = a.replace("\"process\"", "\"process_id\"");
    let h = parse_jsonl("h", &lines(&[renamed])).expect("parses");
    assert!(h.unknown_fields.contains("process_id"));
    let r = faultline::oracle::checker::missing_fields_report("x", "", &h, &["process"])
        .expect("process is missing");
    assert!(
        r.evidence.contains("dropped: process_id")
            && r.evidence
                .contains("did you mean `process_id` for `process`?"),
        "{}",
        r.evidence
    );
}

#[test]
fn final_state_parsing() {
    assert_eq!(
        parse_final_state(r#"{"a": 1}"#).expect("ok"),
        state(&[("a", json!(1))])
    );
    assert!(parse_final_state("[1]").is_err());
    assert!(parse_final_state("{").is_err());
}

#[test]
fn external_results() {
    let out = "progress...\n{\"valid\": true, \"ops_checked\": 4217, \"ops_total\": 4217, \"anomalies\": []}\n\n";
    let r = parse_external_result("elle", out).expect("ok");
    assert_eq!(
        r.run,
        CheckerRun::Judged {
            anomalies: 0,
            ops_checked: 4217,
            ops_produced: 4217
        }
    );
    assert_eq!(r.evidence, "checked 4,217 ops, 0 anomalies");

    let r = parse_external_result(
        "elle",
        r#"{"valid": false, "ops_checked": 10, "ops_total": 12, "anomalies": [{"ops": ["3", 4], "why": "G1c"}]}"#,
    )
    .expect("ok");
    assert!(matches!(
        r.run,
        CheckerRun::Judged {
            anomalies: 1,
            ops_checked: 10,
            ops_produced: 12
        }
    ));
    assert_eq!(r.anomalies[0].ops, vec!["3".to_string(), "4".to_string()]);

    let r = parse_external_result("k", r#"{"valid": false, "ops_checked": 1, "ops_total": 1}"#)
        .expect("ok");
    assert!(matches!(r.run, CheckerRun::Judged { anomalies: 1, .. }));

    let r = parse_external_result(
        "k",
        r#"{"valid": "unknown", "reason": "search budget exhausted"}"#,
    )
    .expect("ok");
    assert_eq!(
        r.run,
        CheckerRun::Unknown {
            reason: "search budget exhausted".into()
        }
    );

    let r = parse_external_result("k", r#"{"valid": true, "missing_fields": ["fault_epoch"]}"#)
        .expect("ok");
    assert_eq!(
        r.run,
        CheckerRun::MissingFields {
            fields: vec!["fault_epoch".into()]
        }
    );

    assert!(parse_external_result("k", "").is_err());
    assert!(parse_external_result("k", "not json").is_err());
    assert!(parse_external_result("k", r#"{"valid": 3}"#).is_err());
}

/// One write every 100 ms for `secs` seconds.
fn steady(secs: u64) -> String {
    let v: Vec<String> = (0..secs * 10)
        .map(|i| {
            let t = i * 100_000_000;
            rec(
                i,
                i % 3,
                t,
                Some(t + 1000),
                "write",
                "k",
                json!(i),
                None,
                false,
            )
        })
        .collect();
    lines(&v)
}

#[test]
fn workload_rate_passes_steady_and_fails_halfway_stop() {
    let h = parse_jsonl("h", &steady(60)).expect("parses");
    let item = workload_rate(&h, Duration::from_secs(60));
    assert_eq!(item.id, "gbb-1-workload-rate");
    assert_eq!(item.status, AuditStatus::Passed, "{}", item.evidence);
    assert!(item.evidence.contains("ops/s"));

    let h = parse_jsonl("h", &steady(30)).expect("parses");
    let item = workload_rate(&h, Duration::from_secs(60));
    assert_eq!(item.status, AuditStatus::Failed, "{}", item.evidence);

    let empty = parse_jsonl("h", "").expect("parses");
    assert_eq!(
        workload_rate(&empty, Duration::from_secs(1)).status,
        AuditStatus::Failed
    );
}

#[test]
fn workload_rate_detects_collapse() {
    // Steady for 60 s except nothing between 20 s and 30 s, one op at 59.9 s.
    let v: Vec<String> = (0..600u64)
        .filter(|i| !(200..300).contains(i))
        .map(|i| {
            let t = i * 100_000_000;
            rec(i, 0, t, Some(t + 1), "write", "k", json!(i), None, false)
        })
        .collect();
    let h = parse_jsonl("h", &lines(&v)).expect("parses");
    let item = workload_rate(&h, Duration::from_secs(60));
    assert_eq!(item.status, AuditStatus::Failed);
    assert!(item.evidence.contains("collapse"), "{}", item.evidence);
}

/// Ten clients at 10 ops/s each for 60 s; between 20 s and 30 s `outage` decides what
/// each client does instead of its usual fast op.
fn ten_clients(outage: impl Fn(u64, u64) -> Option<Stand>) -> String {
    let mut v: Vec<(u64, String)> = Vec::new();
    let mut id = 0;
    for p in 0..10u64 {
        let mut t = p * 10_000_000;
        while t < 60_000_000_000 {
            id += 1;
            if (20_000_000_000..30_000_000_000).contains(&t) {
                match outage(p, t) {
                    Some(stand) => {
                        let error = stand.error.then_some("connection refused");
                        let r = rec(
                            id,
                            p,
                            t,
                            stand.complete,
                            "write",
                            "k",
                            json!(id),
                            error,
                            stand.timeout,
                        );
                        v.push((t, r));
                        t += stand.next;
                    }
                    None => t += 100_000_000,
                }
                continue;
            }
            let r = rec(
                id,
                p,
                t,
                Some(t + 2_000_000),
                "write",
                "k",
                json!(id),
                None,
                false,
            );
            v.push((t, r));
            t += 100_000_000;
        }
    }
    v.sort_by_key(|(t, _)| *t);
    lines(&v.into_iter().map(|(_, r)| r).collect::<Vec<_>>())
}

/// What a client's op during the outage did: when its next op starts, when (if ever)
/// this one completed, and whether it timed out or failed.
struct Stand {
    next: u64,
    complete: Option<u64>,
    timeout: bool,
    error: bool,
}

#[test]
fn workload_rate_calls_a_sut_outage_an_outage_not_a_collapse() {
    // Every client blocks 1 s in each op and records a timeout: the SUT is down.
    let text = ten_clients(|_, _| {
        Some(Stand {
            next: 1_000_000_000,
            complete: None,
            timeout: true,
            error: false,
        })
    });
    let h = parse_jsonl("h", &text).expect("parses");
    let item = workload_rate(&h, Duration::from_secs(60));
    assert_eq!(item.status, AuditStatus::Passed, "{}", item.evidence);
    assert!(
        item.evidence.contains("SUT outages") && item.evidence.contains("at +20.0 s for 10."),
        "{}",
        item.evidence
    );
    assert!(item.evidence.contains("timed out"), "{}", item.evidence);

    // The same outage answered late (5 s per op, acknowledged) is an outage too.
    let text = ten_clients(|_, t| {
        Some(Stand {
            next: 5_000_000_000,
            complete: Some(t + 5_000_000_000),
            timeout: false,
            error: false,
        })
    });
    let h = parse_jsonl("h", &text).expect("parses");
    let item = workload_rate(&h, Duration::from_secs(60));
    assert_eq!(item.status, AuditStatus::Passed, "{}", item.evidence);
}

#[test]
fn workload_rate_names_no_outage_when_the_sut_keeps_acknowledging_through_refusals() {
    // A busy database: about half the ops refused (serialization failures), the rest
    // acknowledged, clients trying again at once. For 10 s some client is always in a
    // refused op, but half of what is invoked commits: no outage of the SUT.
    let text = ten_clients(|p, t| {
        Some(Stand {
            next: 60_000_000,
            complete: Some(t + 60_000_000),
            timeout: false,
            error: (t / 60_000_000 + p) % 2 == 0,
        })
    });
    let h = parse_jsonl("h", &text).expect("parses");
    let item = workload_rate(&h, Duration::from_secs(60));
    assert_eq!(item.status, AuditStatus::Passed, "{}", item.evidence);
    assert!(!item.evidence.contains("SUT outages"), "{}", item.evidence);
}

#[test]
fn workload_rate_fails_when_most_clients_die_and_the_rest_run_fast() {
    // Nine clients invoke nothing for 10 s; client 0 keeps its fast, acknowledged ops.
    let text = ten_clients(|p, t| {
        (p == 0).then_some(Stand {
            next: 100_000_000,
            complete: Some(t + 2_000_000),
            timeout: false,
            error: false,
        })
    });
    let h = parse_jsonl("h", &text).expect("parses");
    let item = workload_rate(&h, Duration::from_secs(60));
    assert_eq!(item.status, AuditStatus::Failed, "{}", item.evidence);
    assert!(item.evidence.contains("collapse"), "{}", item.evidence);
    assert!(!item.evidence.contains("SUT outages"), "{}", item.evidence);
}

#[test]
fn workload_rate_fails_when_clients_sleep_through_the_outage() {
    // A quick refusal, then 2 s asleep before the next attempt: idle, not stalled.
    let text = ten_clients(|_, t| {
        Some(Stand {
            next: 2_000_000_000,
            complete: Some(t + 50_000_000),
            timeout: false,
            error: true,
        })
    });
    let h = parse_jsonl("h", &text).expect("parses");
    let item = workload_rate(&h, Duration::from_secs(60));
    assert_eq!(item.status, AuditStatus::Failed, "{}", item.evidence);
}

#[test]
fn monotonic_and_fault_window() {
    let h = parse_jsonl("h", &steady(2)).expect("parses");
    assert_eq!(monotonic(&h).status, AuditStatus::Passed);
    assert!(!fault_window_covered(&h));

    let text = lines(&[
        rec(1, 0, 50, Some(60), "write", "a", json!(1), None, false),
        rec(2, 0, 40, Some(45), "write", "a", json!(1), None, false),
    ]);
    let h = parse_jsonl("h", &text).expect("parses");
    assert_eq!(monotonic(&h).status, AuditStatus::Failed);

    // The reader refuses an op that completes before its invoke; the audit still
    // catches one in a history assembled otherwise.
    let mut h = parse_jsonl("h", &steady(2)).expect("parses");
    h.ops[1].complete_ts = Some(h.ops[1].invoke_ts - 1);
    assert_eq!(monotonic(&h).status, AuditStatus::Failed);

    let faulted = rec(1, 0, 50, Some(60), "write", "a", json!(1), None, false)
        .replace("\"fault_epoch\":null", "\"fault_epoch\":2");
    let h = parse_jsonl("h", &lines(&[faulted])).expect("parses");
    assert!(fault_window_covered(&h));
    assert_eq!(h.ops[0].fault_epoch, Some(2));

    // A client that writes 0 for "no fault" ran outside every window.
    let zero = rec(1, 0, 50, Some(60), "write", "a", json!(1), None, false)
        .replace("\"fault_epoch\":null", "\"fault_epoch\":0");
    let h = parse_jsonl("h", &lines(&[zero])).expect("parses");
    assert_eq!(h.ops[0].fault_epoch, None);
    assert!(!fault_window_covered(&h));
}

#[test]
fn empty_history_is_judged_with_zero_ops() {
    let h = parse_jsonl("h", "").expect("parses");
    let r = no_lost_ack::check(&h, &BTreeMap::new());
    assert_eq!(
        r.run,
        CheckerRun::Judged {
            anomalies: 0,
            ops_checked: 0,
            ops_produced: 0
        }
    );
    assert_eq!(oracle_consumed(&r).status, AuditStatus::Failed);
}

/// The checker's rule, as the reference states it, asked of every pair of writes:
/// the acknowledged writes whose value is lost (absent key, or a final value no
/// write on that key invoked at or after it — acknowledged or timed out — wrote).
fn lost_by_definition(
    h: &faultline::oracle::history::History,
    last: &BTreeMap<String, serde_json::Value>,
) -> Vec<String> {
    let writes: Vec<_> = h
        .ops
        .iter()
        .filter(|o| o.op_type == "write" || o.op_type == "put")
        .collect();
    writes
        .iter()
        .filter(|w| w.is_acked())
        .filter(|w| {
            let key = w.key.clone().unwrap_or_default();
            match last.get(&key) {
                None => true,
                Some(v) if *v == w.input => false,
                Some(v) => !writes.iter().any(|o| {
                    o.op_id != w.op_id
                        && o.key.as_deref() == Some(key.as_str())
                        && o.invoke_ts >= w.invoke_ts
                        && (o.is_acked() || o.timeout)
                        && o.input == *v
                }),
            }
        })
        .map(|w| w.op_id.clone())
        .collect()
}

proptest::proptest! {
    /// The one-pass checker finds exactly the writes the pairwise definition does,
    /// on histories with few keys and values so that overwrites, timeouts and
    /// failures explain (or fail to explain) each other often.
    #[test]
    fn no_lost_ack_agrees_with_its_pairwise_definition(
        ops in proptest::collection::vec((0u8..2, 0u8..3, 0u64..20, 0u8..4), 0..24),
        last in proptest::collection::vec(proptest::option::of(0u8..3), 2),
    ) {
        let text = lines(&ops
            .iter()
            .enumerate()
            .map(|(i, (key, value, invoke, how))| {
                let key = ["a", "b"][usize::from(*key)];
                let (complete, error, timeout) = match how {
                    0 | 1 => (Some(invoke + 5), None, false),
                    2 => (None, None, true),
                    _ => (Some(invoke + 5), Some("refused"), false),
                };
                rec(i as u64, i as u64, *invoke, complete, "write", key, json!(value), error, timeout)
            })
            .collect::<Vec<_>>());
        let h = parse_jsonl("h", &text).expect("parses");
        let last: BTreeMap<String, serde_json::Value> = ["a", "b"]
            .iter()
            .zip(&last)
            .filter_map(|(k, v)| v.map(|v| (k.to_string(), json!(v))))
            .collect();
        let r = no_lost_ack::check(&h, &last);
        let found: Vec<String> = r.anomalies.iter().flat_map(|a| a.ops.clone()).collect();
        proptest::prop_assert_eq!(found, lost_by_definition(&h, &last));
    }
}

#[test]
fn a_recorder_s_own_field_names_are_renamed_before_reading() {
    let text = "{\"op_id\":1,\"process_id\":7,\"invoke_ts\":1,\"complete_ts\":2,\"op_type\":\"write\",\"key\":\"k\",\"input\":1,\"output\":\"ok\",\"error\":null,\"timeout\":false,\"node_seen\":\"n2\",\"fault_epoch\":null}\n";
    let plain = parse_jsonl("h", text).expect("parses");
    assert!(plain.unknown_fields.contains("process_id"));
    assert_eq!(plain.ops[0].process, "");
    let renames: std::collections::BTreeMap<String, String> = [
        ("process".to_string(), "process_id".to_string()),
        ("node".to_string(), "node_seen".to_string()),
    ]
    .into();
    let h = faultline::oracle::history::parse_jsonl_renamed("h", text, &renames).expect("parses");
    assert_eq!(h.ops[0].process, "7");
    assert_eq!(h.ops[0].node.as_deref(), Some("n2"));
    assert!(h.unknown_fields.is_empty(), "{:?}", h.unknown_fields);
    assert!(h.present_fields.contains("process") && h.present_fields.contains("node"));
}
