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
            let key = w.key.as_deref().unwrap_or_default();
            match last.get(key) {
                None => true,
                Some(v) if *v == w.input => false,
                Some(v) => !writes.iter().any(|o| {
                    o.op_id != w.op_id
                        && o.key.as_deref() == Some(key)
                        && o.invoke_ts >= w.invoke_ts
                        && (o.is_acked() || o.timeout)
                        && o.input == *v
                }),
            }
        })
        .map(|w| w.op_id.to_string())
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

// The streaming reader (oracle/jsonl_read.rs) against the reader it replaced: each
// line read as a JSON value and converted by `op_from_map`, the cross-record checks
// after.

/// The reference: every line through `serde_json::Value` and `op_from_map`.
fn by_values(text: &str) -> Vec<faultline::oracle::history::Op> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            let map = match serde_json::from_str::<serde_json::Value>(l) {
                Ok(serde_json::Value::Object(m)) => m,
                other => panic!("line {}: {other:?}", i + 1),
            };
            faultline::oracle::history::op_from_map("h", i + 1, &map).expect("an op")
        })
        .collect()
}

/// One record in one of the forms recorders write: ids as numbers or strings,
/// values as integers, floats, strings with escapes, objects with keys out of
/// order, arrays, nulls; `timeout_marker` for `timeout`; fields absent.
fn varied_record(i: usize, form: u8, value: u8, absent: bool) -> String {
    let input = match value % 8 {
        0 => json!(value),
        1 => json!(f64::from(value) + 0.5),
        2 => json!(format!("v\"{value}\n")),
        3 => serde_json::from_str(&format!(
            r#"{{"z":{value},"idempotency_key":"k{}"}}"#,
            value % 3
        ))
        .expect("json"),
        4 => json!([value, "x", null]),
        5 => json!(null),
        6 => json!(-i64::from(value)),
        _ => json!(format!("é{value}")),
    };
    let op_type = ["write", "read", "enqueue", "dequeue", "transfer"][usize::from(value % 5)];
    let mut rec = json!({
        "op_id": if form.is_multiple_of(2) { json!(i) } else { json!(format!("op-{i}")) },
        "process": if form.is_multiple_of(3) { json!(format!("p{}", i % 3)) } else { json!(i % 3) },
        "invoke_ts": i * 10,
        "complete_ts": if form % 4 == 3 { json!(null) } else { json!(i * 10 + 5) },
        "op_type": op_type,
        "key": if form % 5 == 4 { json!(null) } else { json!(format!("k{}", value % 2)) },
        "input": input,
        "output": if value.is_multiple_of(2) { input.clone() } else { json!({"version": value, "value": "a\\b"}) },
        "error": if form % 7 == 6 { json!("refused") } else { json!(null) },
        "node": "n1",
        "fault_epoch": if form % 6 == 5 { json!(form) } else { json!(null) },
    });
    let timeout = form % 4 == 3;
    let name = if form % 8 == 7 {
        "timeout_marker"
    } else {
        "timeout"
    };
    rec[name] = json!(timeout);
    if absent && let Some(m) = rec.as_object_mut() {
        m.remove("node");
    }
    rec.to_string()
}

proptest::proptest! {
    /// The typed reader reads every form a recorder writes as the reader by JSON
    /// values did: the same ops, the same fields present.
    #[test]
    fn the_streaming_reader_reads_what_the_value_reader_read(
        recs in proptest::collection::vec((0u8..16, 0u8..16, proptest::bool::ANY), 1..30),
    ) {
        let text = lines(&recs
            .iter()
            .enumerate()
            .map(|(i, (form, value, absent))| varied_record(i, *form, *value, *absent))
            .collect::<Vec<_>>());
        // A process's op with no completion is only legal as its last: such
        // histories are refused by both, which the error tests cover.
        let Ok(h) = parse_jsonl("h", &text) else {
            return Ok(());
        };
        proptest::prop_assert_eq!(&h.ops, &by_values(&text));
        let node_everywhere = !recs.iter().any(|(_, _, absent)| *absent);
        proptest::prop_assert_eq!(h.present_fields.contains("node"), node_everywhere);
        proptest::prop_assert_eq!(h.present_fields.len(), 11 + usize::from(node_everywhere));
    }

    /// Each folding checker gives the same report on the history read as a stream
    /// (values as raw JSON text) as on the parsed `History` (values as trees).
    #[test]
    fn the_folded_checks_agree_with_the_checks_of_the_parsed_history(
        recs in proptest::collection::vec((0u8..16, 0u8..16, proptest::bool::ANY), 1..30),
        window in 0u64..3,
    ) {
        let text = lines(&recs
            .iter()
            .enumerate()
            .map(|(i, (form, value, _))| varied_record(i, *form, *value, false))
            .collect::<Vec<_>>());
        let Ok(h) = parse_jsonl("h", &text) else {
            return Ok(());
        };
        let dump = json!({"k0": 3, "k1": [1, 2], "k2": null});
        for checker in faultline::oracle::linear::NAMES {
            let raw = if checker == "prefix-order" { vec![format!("window={window}")] } else { Vec::new() };
            let params = faultline::oracle::params::Params::parse(&raw).expect("params");
            let inputs = faultline::oracle::registry::Inputs {
                history: Some(&h),
                final_state: Some(&dump),
                ..Default::default()
            };
            let options = faultline::oracle::checker::RunOptions::default();
            let whole = faultline::oracle::registry::run_with(checker, &inputs, &params, &options)
                .expect("checks");
            let mut fold = faultline::oracle::linear::Linear::new(checker, &params, None)
                .expect("folds");
            let header = fold.read("h", text.as_bytes()).expect("reads");
            let folded = fold.finish(&header, Some(&dump.to_string())).expect("checks");
            proptest::prop_assert_eq!(&folded.anomalies, &whole.anomalies, "{}", checker);
            proptest::prop_assert_eq!(&folded.evidence, &whole.evidence, "{}", checker);
            proptest::prop_assert_eq!(folded.run, whole.run, "{}", checker);
        }
    }
}

/// A line the typed reader does not take (a field of the wrong type) is read again
/// as a JSON value and refused naming the file, the line and the field, whichever
/// reader meets it.
#[test]
fn a_malformed_field_is_refused_naming_line_and_field_when_streamed() {
    let good = rec(1, 0, 10, Some(20), "write", "a", json!(1), None, false);
    for (from, to, field) in [
        ("\"invoke_ts\":10", "\"invoke_ts\":-3", "invoke_ts"),
        ("\"timeout\":false", "\"timeout\":\"no\"", "timeout"),
        ("\"key\":\"a\"", "\"key\":[1]", "key"),
        ("\"complete_ts\":20", "\"complete_ts\":5", "complete_ts"),
    ] {
        let bad = good.replace(from, to).replace("\"op_id\":1", "\"op_id\":2");
        assert_ne!(bad, good.replace("\"op_id\":1", "\"op_id\":2"), "{from}");
        let text = lines(&[good.clone(), bad]);
        let mut fold = faultline::oracle::linear::Linear::new(
            "no-lost-ack",
            &faultline::oracle::params::Params::parse::<&str>(&[]).expect("params"),
            None,
        )
        .expect("folds");
        let e = fold
            .read("h.jsonl", text.as_bytes())
            .expect_err("refused")
            .to_string();
        assert!(e.starts_with(&format!("h.jsonl:2: field `{field}`")), "{e}");
    }
}

/// A line longer than the reader's limit is refused, saying what it is, and is
/// never held whole; bytes that are not UTF-8 are refused with line, column and
/// byte; an unterminated object on the last line is a truncated history.
#[test]
fn a_huge_line_bad_bytes_and_a_torn_line_are_refused_clearly() {
    use faultline::oracle::jsonl_read::LINE_LIMIT;
    let good = rec(1, 0, 10, Some(20), "write", "a", json!(1), None, false);
    let mut huge = format!("{good}\n{{\"op_id\":\"");
    huge.push_str(&"x".repeat(LINE_LIMIT + 10));
    let e = parse_jsonl("h", &huge).expect_err("refused").to_string();
    assert!(
        e.starts_with("h:2: longer than") && e.contains("refused"),
        "{}",
        &e[..e.len().min(200)]
    );
    let mut bytes = format!("{good}\n").into_bytes();
    let at = bytes.len() + 3;
    bytes.extend_from_slice(b"{\"o\xff\"}\n");
    let mut fold = faultline::oracle::linear::Linear::new(
        "prefix-order",
        &faultline::oracle::params::Params::parse::<&str>(&[]).expect("params"),
        None,
    )
    .expect("folds");
    let e = fold
        .read("h", bytes.as_slice())
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains(&format!("not UTF-8 at line 2, column 4 (byte {at})")),
        "{e}"
    );
    let torn = format!("{good}\n{}", &good[..good.len() / 2]);
    let e = parse_jsonl("h", &torn).expect_err("refused").to_string();
    assert!(e.starts_with("h:2: truncated final line"), "{e}");
}

/// A lost completion is reported only when nothing else in the file is wrong, as
/// when the whole file was parsed before the cross-record checks: a later
/// malformed line is what is reported.
#[test]
fn a_lost_completion_yields_to_a_later_malformed_line() {
    let open = rec(1, 0, 10, None, "write", "a", json!(1), None, false);
    let next = rec(2, 0, 30, Some(40), "write", "a", json!(2), None, false);
    let e = parse_jsonl("h", &lines(&[open.clone(), next.clone()]))
        .expect_err("refused")
        .to_string();
    assert!(e.starts_with("h:1: field `complete_ts`"), "{e}");
    let e = parse_jsonl("h", &lines(&[open, next, "{not json".into()]))
        .expect_err("refused")
        .to_string();
    assert!(e.starts_with("h:3: invalid JSON"), "{e}");
}

/// A value nested deeper than serde_json parses is refused naming its line, never
/// read as null (the typed reader cuts raw text out without that limit; found by a
/// review: a 200-deep write read as a write of null flipped no-lost-ack's verdict).
#[test]
fn a_value_nested_past_the_parser_s_limit_is_refused_not_read_as_null() {
    let line = |depth: usize| {
        format!(
            "{{\"op_id\":1,\"process\":0,\"invoke_ts\":1,\"complete_ts\":2,\"op_type\":\"write\",\
             \"key\":\"k\",\"input\":{}1{},\"output\":null,\"error\":null,\"timeout\":false,\
             \"node\":\"n1\",\"fault_epoch\":null}}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    let Err(e) = parse_jsonl("deep.jsonl", &line(200)) else {
        panic!("a 200-deep input was accepted");
    };
    assert!(e.to_string().starts_with("deep.jsonl:1:"), "{e}");
    let ok = parse_jsonl("deep.jsonl", &line(100)).expect("100 levels are read");
    let mut want = serde_json::Value::from(1);
    for _ in 0..100 {
        want = serde_json::Value::Array(vec![want]);
    }
    assert_eq!(ok.ops[0].input, want);
}

/// A random effects dump's text: an object whose keys may repeat, with counts,
/// lists, nulls, bad counts and other values; or an array of records, some
/// without the key field.
fn effects_dump(form: bool, entries: &[(u8, u8)]) -> String {
    let value = |v: u8| match v % 9 {
        0 => "0".to_string(),
        1 => format!("{}", v / 9),
        2 => "-1".into(),
        3 => "1.5".into(),
        4 => "[1, {\"a\": [2]}, null]".into(),
        5 => "null".into(),
        6 => "{\"x\": 1}".into(),
        7 => "\"s\"".into(),
        _ => "true".into(),
    };
    // Keys an op used (k0..k3), phantoms, and one that needs unescaping.
    let key = |k: u8| match k % 7 {
        6 => "k\\u0031".to_string(),
        k => format!("k{k}"),
    };
    let items: Vec<String> = entries
        .iter()
        .map(|(k, v)| match form {
            false => format!("\"{}\": {}", key(*k), value(*v)),
            true if v % 5 == 0 => format!("{{\"other\": \"{}\"}}", key(*k)),
            true => format!(
                "{{\"idempotency_key\": \"{}\", \"n\": {}}}",
                key(*k),
                value(*v)
            ),
        })
        .collect();
    match form {
        false => format!("{{{}}}", items.join(", ")),
        true => format!("[{}]", items.join(", ")),
    }
}

proptest::proptest! {
    /// exactly-once reads a dump's text where it lies as it reads the dump parsed
    /// whole: the same report, or the same refusal (a repeated key counts as its
    /// last value; the first bad key in key order is the one named).
    #[test]
    fn exactly_once_reads_a_dump_streamed_as_it_reads_it_parsed(
        form in proptest::bool::ANY,
        entries in proptest::collection::vec((0u8..12, 0u8..40), 0..12),
    ) {
        use faultline::oracle::exactly_once::{Effects, check};
        let history = parse_jsonl("h", &lines(&(0..4u64)
            .map(|i| serde_json::json!({
                "op_id": format!("{i}"), "process": i, "invoke_ts": i * 10,
                "complete_ts": (i != 3).then_some(i * 10 + 5), "op_type": "pay",
                "key": null, "input": {"idempotency_key": format!("k{i}")},
                "output": null, "error": (i == 2).then_some("refused"), "timeout": i == 3,
                "node": "n1", "fault_epoch": null,
            }).to_string())
            .collect::<Vec<_>>())).expect("history");
        let params = faultline::oracle::params::Params::parse::<&str>(&[]).expect("params");
        let text = effects_dump(form, &entries);
        let tree: serde_json::Value = serde_json::from_str(&text).expect("the dump is JSON");
        let whole = check(&history, Effects::Tree(&tree), &params);
        let streamed = check(&history, Effects::Text(&text), &params);
        match (whole, streamed) {
            (Ok(w), Ok(s)) => {
                proptest::prop_assert_eq!(&s.anomalies, &w.anomalies);
                proptest::prop_assert_eq!(&s.evidence, &w.evidence);
                proptest::prop_assert_eq!(s.run, w.run);
            }
            (w, s) => proptest::prop_assert_eq!(w.err(), s.err()),
        }
    }
}

/// An idempotency key of one of six shapes: short; long with the same first
/// eight bytes as its neighbours; a JSON number (its text is the key); exactly
/// eight bytes; a short key of the first shape with a NUL after it (equal to it
/// in its first eight bytes, not in length); a short key in Cyrillic (two bytes
/// a letter, at most eight in all).
fn idempotency_key(k: u8) -> serde_json::Value {
    match k % 6 {
        0 => serde_json::json!(format!("k{k}")),
        1 => serde_json::json!(format!("idempotency-{k:04}")),
        2 => serde_json::json!(u64::from(k) * 1000),
        3 => serde_json::json!(format!("key-{k:04}")),
        4 => serde_json::json!(format!("k{}\u{0}", k - 4)),
        _ => serde_json::json!(format!("клю{}", k % 10)),
    }
}

fn key_text(k: u8) -> String {
    match idempotency_key(k) {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    }
}

proptest::proptest! {
    /// exactly-once against a model written the plain way (maps keyed by the
    /// key's text): the same anomalies, in the same order, naming the same ops,
    /// whatever the keys' shapes, retries, outcomes and repeated dump entries.
    #[test]
    fn exactly_once_finds_what_a_plain_model_finds(
        ops in proptest::collection::vec((0u8..24, 0u8..3), 0..40),
        dump in proptest::collection::vec((0u8..30, 0u64..4), 0..40),
    ) {
        use faultline::oracle::exactly_once::{Effects, check};
        use std::collections::BTreeMap;
        let history = parse_jsonl("h", &lines(&ops.iter().enumerate()
            .map(|(i, (k, outcome))| serde_json::json!({
                "op_id": format!("op{i}"), "process": i % 3, "invoke_ts": i * 10,
                "complete_ts": (*outcome != 2).then_some(i * 10 + 5), "op_type": "pay",
                "key": null, "input": {"idempotency_key": idempotency_key(*k)},
                "output": null, "error": (*outcome == 1).then_some("refused"),
                "timeout": *outcome == 2, "node": "n1", "fault_epoch": null,
            }).to_string())
            .collect::<Vec<_>>())).expect("history");
        let text = format!("{{{}}}", dump.iter()
            .map(|(k, n)| format!("{}: {n}", serde_json::json!(key_text(*k))))
            .collect::<Vec<_>>().join(", "));
        let params = faultline::oracle::params::Params::parse::<&str>(&[]).expect("params");
        let report = check(&history, Effects::Text(&text), &params).expect("checks");

        // The model: (acked, all failed, op ids) per key; the last count per key.
        let mut keys: BTreeMap<String, (bool, bool, Vec<String>)> = BTreeMap::new();
        for (i, (k, outcome)) in ops.iter().enumerate() {
            let e = keys.entry(key_text(*k)).or_insert((false, true, Vec::new()));
            e.0 |= *outcome == 0;
            e.1 &= *outcome == 1;
            e.2.push(format!("op{i}"));
        }
        let counts: BTreeMap<String, u64> = dump.iter().map(|(k, n)| (key_text(*k), *n)).collect();
        let mut want: Vec<(String, Vec<String>)> = Vec::new();
        for (key, (acked, all_failed, ids)) in &keys {
            let n = counts.get(key).copied().unwrap_or(0);
            let why = if n > 1 {
                format!("duplicate effect: key `{key}` has {n} committed effects after {} attempt(s)", ids.len())
            } else if n == 0 && *acked {
                format!("lost effect: key `{key}` was acknowledged but has no committed effect")
            } else if n == 1 && *all_failed {
                format!("effect of a rejected request: every attempt with key `{key}` failed, yet one effect is committed")
            } else {
                continue;
            };
            want.push((why, ids.clone()));
        }
        // A key no op used is a phantom only when something was committed under it.
        for (key, n) in counts.iter().filter(|(k, n)| !keys.contains_key(*k) && **n > 0) {
            want.push((format!("phantom effect: key `{key}` has {n} effect(s) but no op used it"), Vec::new()));
        }
        let got: Vec<(String, Vec<String>)> = report.anomalies.iter()
            .map(|a| (a.why.clone(), a.ops.clone()))
            .collect();
        proptest::prop_assert_eq!(got, want);
    }
}

/// A dump that is not a container, or not JSON, is refused by the streamed read.
#[test]
fn exactly_once_refuses_a_streamed_dump_that_is_no_dump() {
    use faultline::oracle::exactly_once::{Effects, check};
    let history = parse_jsonl("h", "").expect("empty history");
    let params = faultline::oracle::params::Params::parse::<&str>(&[]).expect("params");
    for (text, said) in [
        ("42", "expected an array of records or an object"),
        ("\"x\"", "expected an array of records or an object"),
        ("{\"a\": 1,", "invalid JSON"),
        ("{\"a\": 1} x", "invalid JSON"),
    ] {
        let err = check(&history, Effects::Text(text), &params).expect_err(text);
        assert!(err.contains(said), "{text}: {err}");
    }
}
