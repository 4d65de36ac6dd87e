//! History readers: Jepsen EDN, Porcupine logs, the `timeout_marker` alias and
//! truncation detection in every format.

use faultline::oracle::format::{Format, read_history};
use faultline::oracle::history::parse_jsonl;
use faultline::oracle::jepsen::parse_edn;
use faultline::oracle::porcupine_log::parse_porcupine;
use std::path::Path;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/histories")
        .join(name);
    std::fs::read_to_string(path).expect("fixture")
}

#[test]
fn edn_pairs_invokes_with_completions() {
    let h = parse_edn("register-ok.edn", &fixture("register-ok.edn")).expect("parses");
    assert_eq!(h.ops.len(), 5, "nemesis entries are skipped");
    let crashed = &h.ops[1];
    assert_eq!(
        (
            crashed.op_type.as_str(),
            crashed.timeout,
            crashed.complete_ts
        ),
        ("write", true, None)
    );
    let read = &h.ops[2];
    assert_eq!(
        (read.invoke_ts, read.complete_ts, read.output.clone()),
        (30, Some(40), serde_json::json!(1))
    );
    assert_eq!(h.ops[3].input, serde_json::json!([3, 4]));
    assert!(h.present_fields.contains("timeout"));
    assert!(!h.present_fields.contains("fault_epoch"));
}

#[test]
fn edn_independent_tuples_carry_keys() {
    let text = "{:type :invoke :f :write :value #jepsen.independent/tuple [\"k1\" 5] :process 0}\n\
                {:type :ok :f :write :value #jepsen.independent/tuple [\"k1\" 5] :process 0}\n";
    let h = parse_edn("t.edn", text).expect("parses");
    assert_eq!(h.ops[0].key.as_deref(), Some("k1"));
    assert_eq!(h.ops[0].input, serde_json::json!(5));
    assert!(h.present_fields.contains("key"));
    // No :time: file order is the clock.
    assert_eq!((h.ops[0].invoke_ts, h.ops[0].complete_ts), (0, Some(1)));
}

#[test]
fn edn_errors_name_line_and_field() {
    let text = "{:type :invoke :f :read :process 0 :index 0}\n{:type :invoke :f :read :process 0 :index 1}\n";
    let err = parse_edn("h.edn", text).expect_err("double invoke");
    assert!(
        err.to_string()
            .starts_with("h.edn:2: field `:type`: process 0 invokes again"),
        "{err}"
    );
    let gap =
        "{:type :invoke :f :read :process 0 :index 0}\n{:type :ok :f :read :process 0 :index 3}\n";
    let err = parse_edn("h.edn", gap).expect_err("index gap");
    assert!(
        err.to_string()
            .contains("h.edn:2: field `:index`: truncated or edited"),
        "{err}"
    );
    let torn = "[{:type :invoke :f :read :process 0}\n {:type :ok :f :re";
    let err = parse_edn("h.edn", torn).expect_err("torn");
    assert!(err.to_string().contains("truncated"), "{err}");
    let orphan = "{:type :ok :f :read :process 4 :value 1}\n";
    let err = parse_edn("h.edn", orphan).expect_err("orphan completion");
    assert!(err.to_string().contains("h.edn:1"), "{err}");
}

#[test]
fn edn_open_invoke_at_end_is_indeterminate() {
    let text = "{:type :invoke :f :write :value 1 :process 0}\n";
    let h = parse_edn("h.edn", text).expect("parses");
    assert!(h.ops[0].is_indeterminate());
}

#[test]
fn porcupine_log_reads_kv_ops_and_crashes() {
    let h = parse_porcupine("kv", &fixture("kv.porcupine.jsonl")).expect("parses");
    assert_eq!(h.ops.len(), 4);
    assert_eq!(
        (h.ops[0].op_type.as_str(), h.ops[0].key.as_deref()),
        ("write", Some("x"))
    );
    assert!(h.ops[1].timeout, "a null return is a crash");
    assert_eq!(h.ops[2].output, serde_json::json!("a"));
    let torn = "{\"ClientId\": 0, \"Input\": 1, \"Call\": 0, \"Output\": null, \"Return\": 5}\n{\"ClientId\": 1, \"Inp";
    let err = parse_porcupine("p", torn).expect_err("torn");
    assert!(
        err.to_string().starts_with("p:2: truncated final line"),
        "{err}"
    );
    let backwards =
        "{\"ClientId\": 0, \"Input\": 1, \"Call\": 9, \"Output\": null, \"Return\": 5}\n";
    let err = parse_porcupine("p", backwards).expect_err("return before call");
    assert_eq!(
        err.to_string(),
        "p:1: field `return`: return time is before the call time"
    );
}

fn record(
    id: u64,
    process: u64,
    complete: Option<u64>,
    timeout_key: &str,
    timeout: bool,
) -> String {
    serde_json::json!({
        "op_id": id, "process": process, "invoke_ts": id * 10, "complete_ts": complete,
        "op_type": "write", "key": "k", "input": id, "output": null, "error": null,
        timeout_key: timeout, "node": null, "fault_epoch": null
    })
    .to_string()
}

#[test]
fn jsonl_accepts_timeout_marker_alias() {
    let text = format!(
        "{}\n{}\n",
        record(1, 0, Some(15), "timeout_marker", false),
        record(2, 1, None, "timeout_marker", true)
    );
    let h = parse_jsonl("h", &text).expect("parses");
    assert!(h.present_fields.contains("timeout"));
    assert!(h.ops[1].timeout);
}

#[test]
fn jsonl_trailer_cross_checks_the_op_count() {
    let ops = format!(
        "{}\n{}\n",
        record(1, 0, Some(15), "timeout", false),
        record(2, 0, Some(25), "timeout", false)
    );
    assert!(parse_jsonl("h", &format!("{ops}{{\"ops_total\": 2}}\n")).is_ok());
    let err = parse_jsonl("h", &format!("{ops}{{\"ops_total\": 3}}\n")).expect_err("short");
    assert_eq!(
        err.to_string(),
        "h:3: truncated: the trailer counts 3 ops but 2 were read"
    );
}

#[test]
fn jsonl_lost_completion_in_the_middle_vs_in_flight_at_the_end() {
    // Process 0's op 1 never completes, yet process 0 issues op 2: lost record.
    let middle = format!(
        "{}\n{}\n",
        record(1, 0, None, "timeout", false),
        record(2, 0, Some(25), "timeout", false)
    );
    let err = parse_jsonl("h", &middle).expect_err("lost completion");
    assert!(
        err.to_string()
            .starts_with("h:1: field `complete_ts`: op 1 has no completion"),
        "{err}"
    );
    // As the process's last op it was merely in flight: indeterminate.
    let end = format!(
        "{}\n{}\n",
        record(2, 0, Some(25), "timeout", false),
        record(3, 0, None, "timeout", false)
    );
    let h = parse_jsonl("h", &end).expect("in flight at the end");
    assert!(h.ops[1].is_indeterminate());
}

#[test]
fn format_names_and_guess() {
    assert_eq!(Format::from_name("porcupine"), Some(Format::Porcupine));
    assert_eq!(Format::from_path(Path::new("x/history.edn")), Format::Edn);
    let h = read_history(Format::Edn, "s", &fixture("register-stale.edn")).expect("parses");
    assert_eq!(h.ops.len(), 3);
}
