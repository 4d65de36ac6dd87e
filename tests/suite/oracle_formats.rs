//! History readers: Jepsen EDN, Porcupine logs, the `timeout_marker` alias and
//! truncation detection in every format.

use faultline::oracle::checker::CheckerReport;
use faultline::oracle::format::{Format, read_history};
use faultline::oracle::history::History;
use faultline::oracle::history::parse_jsonl;
use faultline::oracle::jepsen::{FaultWindow, parse_edn, parse_fault_windows};
use faultline::oracle::params::Params;
use faultline::oracle::porcupine_log::parse_porcupine;
use faultline::oracle::registry::{self, Inputs};
use faultline::verdict::CheckerRun;
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
    // The nemesis is recorded (its :start at 85 never completes), so fault_epoch is
    // known: every client op was invoked before the fault.
    assert!(h.present_fields.contains("fault_epoch"));
    assert!(h.ops.iter().all(|o| o.fault_epoch.is_none()));
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

/// `checker` (with `params`) on `history`.
fn check(checker: &str, history: &History, params: &[&str]) -> CheckerReport {
    let inputs = Inputs {
        history: Some(history),
        ..Default::default()
    };
    let params =
        Params::parse(&params.iter().map(|p| p.to_string()).collect::<Vec<_>>()).expect("params");
    registry::run(checker, &inputs, &params).unwrap_or_else(|e| panic!("{checker}: {e}"))
}

fn judged_anomalies(report: &CheckerReport) -> u64 {
    match report.run {
        CheckerRun::Judged { anomalies, .. } => anomalies,
        ref other => panic!("{}: not judged: {other:?}", report.checker),
    }
}

#[test]
fn edn_index_may_be_absent_or_skip_numbers_but_never_repeat_or_go_back() {
    // Hand-edited test histories number ops 10, 11, 20, 21: file order is the order.
    let gaps = "{:type :invoke :f :write :value 1 :process 0 :index 10}\n\
                {:type :ok :f :write :value 1 :process 0 :index 11}\n\
                {:type :invoke :f :read :value nil :process 1 :index 20}\n\
                {:type :ok :f :read :value 1 :process 1 :index 21}\n";
    let h = parse_edn("gaps.edn", gaps).expect("gaps are not lost lines");
    let ids: Vec<&str> = h.ops.iter().map(|o| o.op_id.as_str()).collect();
    assert_eq!(ids, ["10", "20"]);
    assert_eq!(
        judged_anomalies(&check("linearizability-register", &h, &[])),
        0
    );
    let stale = gaps.replace(
        ":value 1 :process 1 :index 21",
        ":value 7 :process 1 :index 21",
    );
    let h = parse_edn("gaps.edn", &stale).expect("parses");
    assert_eq!(
        judged_anomalies(&check("linearizability-register", &h, &[])),
        1,
        "a read of a value never written is found with gapped indexes too"
    );

    // No :index at all: op ids are the invokes' lines.
    let none = "{:type :invoke :f :write :value 1 :process 0}\n\
                {:type :ok :f :write :value 1 :process 0}\n\
                {:type :invoke :f :read :value nil :process 0}\n\
                {:type :ok :f :read :value 1 :process 0}\n";
    let h = parse_edn("none.edn", none).expect("no :index");
    let ids: Vec<&str> = h.ops.iter().map(|o| o.op_id.as_str()).collect();
    assert_eq!(ids, ["L1", "L3"]);

    let back = gaps.replace(":index 20", ":index 5");
    let err = parse_edn("back.edn", &back).expect_err("backwards");
    assert_eq!(
        err.to_string(),
        "back.edn:3: field `:index`: :index 5 goes back from :index 11 on line 2: indexes must \
         increase in file order (they may skip numbers, or be absent)"
    );
    let repeat = gaps.replace(":index 20", ":index 11");
    let err = parse_edn("repeat.edn", &repeat).expect_err("repeated");
    assert!(
        err.to_string()
            .starts_with("repeat.edn:3: field `:index`: :index 11 repeats :index 11 on line 2"),
        "{err}"
    );
    let word = gaps.replace(":index 20", ":index :twenty");
    let err = parse_edn("word.edn", &word).expect_err("not an integer");
    assert!(
        err.to_string()
            .starts_with("word.edn:3: field `:index`: expected a non-negative integer"),
        "{err}"
    );
}

#[test]
fn edn_without_process_pairs_each_completion_with_its_own_invoke() {
    // No :process anywhere: a write and a read overlap, each completion pairs with
    // the one open invoke of its :f.
    let text = "{:type :invoke :f :write :value 1 :time 10}\n\
                {:type :invoke :f :read :value nil :time 20}\n\
                {:type :ok :f :read :value 1 :time 30}\n\
                {:type :ok :f :write :value 1 :time 40}\n\
                {:type :invoke :f :read :value nil :time 50}\n\
                {:type :ok :f :read :value 1 :time 60}\n";
    let h = parse_edn("np.edn", text).expect("no :process");
    assert!(!h.present_fields.contains("process"));
    assert_eq!(h.ops.len(), 3);
    assert_eq!(
        (h.ops[0].invoke_ts, h.ops[0].complete_ts),
        (10, Some(40)),
        "the write's completion is line 4, not the read's on line 3"
    );
    assert_eq!(h.ops[0].process, "");
    assert_eq!(
        judged_anomalies(&check("linearizability-register", &h, &[])),
        0
    );
    // The last read sees a value nobody wrote: invalid.
    let h = parse_edn(
        "np.edn",
        &text.replace(":value 1 :time 60", ":value 2 :time 60"),
    )
    .expect("parses");
    let r = check("linearizability-register", &h, &[]);
    assert_eq!(judged_anomalies(&r), 1, "{r:#?}");
    // A checker that needs sessions refuses: the field is missing, not guessed.
    let r = check("monotonic-reads", &h, &[]);
    assert_eq!(
        r.run,
        CheckerRun::MissingFields {
            fields: vec!["process".into(), "key".into()]
        }
    );

    // Two writes open at once: which :ok is whose cannot be told.
    let ambiguous = "{:type :invoke :f :write :value 1}\n\
                     {:type :invoke :f :write :value 2}\n\
                     {:type :ok :f :write :value 1}\n";
    let err = parse_edn("amb.edn", ambiguous).expect_err("ambiguous");
    assert!(
        err.to_string().starts_with(
            "amb.edn:3: field `:process`: absent, and the invokes of :write on lines 1, 2 are \
             all open"
        ),
        "{err}"
    );
    let orphan = "{:type :ok :f :write :value 1}\n";
    let err = parse_edn("orphan.edn", orphan).expect_err("orphan");
    assert!(
        err.to_string()
            .starts_with("orphan.edn:1: field `:process`: absent, and no invoke"),
        "{err}"
    );
}

#[test]
fn edn_time_is_nanoseconds() {
    let h = parse_edn("j.edn", &fixture("jepsen-nemesis.edn")).expect("parses");
    let read = &h.ops[3];
    assert_eq!(
        (read.invoke_ts, read.complete_ts),
        (1_800_000_000, Some(1_850_000_000))
    );
    // 50 ms: above a 40 ms ceiling, under a 60 ms one.
    let over = check("slo", &h, &["max_ms=40"]);
    assert_eq!(judged_anomalies(&over), 1, "{over:#?}");
    assert!(over.anomalies[0].why.contains("50.000"), "{over:#?}");
    assert_eq!(judged_anomalies(&check("slo", &h, &["max_ms=60"])), 0);
}

#[test]
fn edn_info_and_fail_completions_carry_errors_of_any_shape() {
    let h = parse_edn("j.edn", &fixture("jepsen-nemesis.edn")).expect("parses");
    let (read, write, cas) = (&h.ops[1], &h.ops[2], &h.ops[4]);
    assert!(read.is_failed());
    assert_eq!(read.error.as_deref(), Some(r#"["timeout","no leader"]"#));
    assert!(write.is_indeterminate() && !write.is_failed());
    assert_eq!(write.error.as_deref(), Some("timeout"));
    assert!(cas.is_failed());
    assert_eq!(
        cas.error.as_deref(),
        Some(r#"{"node":"n1","type":"conn-refused"}"#)
    );
    let string = "{:type :invoke :f :read :process 0}\n\
                  {:type :fail :f :read :process 0 :error \"connection reset\"}\n";
    let h = parse_edn("s.edn", string).expect("string error");
    assert_eq!(h.ops[0].error.as_deref(), Some("connection reset"));
    // The failed read and cas took no effect, the indeterminate write of 2 did: valid.
    let h = parse_edn("j.edn", &fixture("jepsen-nemesis.edn")).expect("parses");
    assert_eq!(
        judged_anomalies(&check("linearizability-register", &h, &[])),
        0
    );
    // Had the failed cas [2 3] taken effect the last read could see 3; it did not.
    let bad = fixture("jepsen-nemesis.edn").replace(
        ":type :ok, :process 2, :f :read, :value 2",
        ":type :ok, :process 2, :f :read, :value 3",
    );
    let h = parse_edn("j.edn", &bad).expect("parses");
    assert_eq!(
        judged_anomalies(&check("linearizability-register", &h, &[])),
        1
    );
}

#[test]
fn edn_nemesis_ops_are_fault_windows_not_client_ops() {
    let text = fixture("jepsen-nemesis.edn");
    let h = parse_edn("j.edn", &text).expect("parses");
    assert_eq!(h.ops.len(), 6, "the 8 nemesis entries are no client ops");
    assert!(h.ops.iter().all(|o| !o.op_type.contains("partition")));
    let windows = parse_fault_windows("j.edn", &text).expect("windows");
    assert_eq!(
        windows,
        [
            FaultWindow {
                epoch: 1,
                f: "start-partition".into(),
                start: 3_000_000,
                end: Some(1_700_000_000)
            },
            FaultWindow {
                epoch: 2,
                f: "kill".into(),
                start: 1_900_000_000,
                end: Some(2_200_000_000)
            },
        ],
        "start-partition … stop-partition, then kill … start"
    );
    let epochs: Vec<Option<u64>> = h.ops.iter().map(|o| o.fault_epoch).collect();
    assert_eq!(
        epochs,
        [None, Some(1), Some(1), None, Some(2), None],
        "each op carries the window it was invoked in"
    );
    assert!(h.present_fields.contains("fault_epoch"));
    // So slo-during-fault judges the windows: both failed every op they held.
    let r = check("slo-during-fault", &h, &["error_rate=0.5", "min_ops=1"]);
    assert_eq!(judged_anomalies(&r), 2, "{r:#?}");
    assert!(
        r.anomalies[0].why.starts_with("fault epoch 1 (2 ops)"),
        "{r:#?}"
    );

    // A fault never healed stays open to the end; an op of its own (bump-clock
    // until reset-clock, strobe-clock for its duration) is a window too.
    let open = "{:type :info :process :nemesis :f :start :time 5}\n\
                {:type :info :process :nemesis :f :start :time 6}\n\
                {:type :invoke :process 0 :f :read :time 7}\n\
                {:type :ok :process 0 :f :read :value nil :time 8}\n\
                {:type :info :process :nemesis :f :strobe-clock :time 9}\n\
                {:type :info :process :nemesis :f :strobe-clock :time 12}\n";
    let windows = parse_fault_windows("o.edn", open).expect("windows");
    assert_eq!(
        windows.iter().map(|w| (w.start, w.end)).collect::<Vec<_>>(),
        [(5, None), (9, Some(12))]
    );
    let h = parse_edn("o.edn", open).expect("parses");
    assert_eq!(h.ops[0].fault_epoch, Some(1));
}

/// `faultline check` on a history holding bytes that are not UTF-8 names the file, the
/// line, the column and the byte where they are (exit 66), as `lint` does for plans.
#[test]
fn a_history_that_is_not_utf8_is_refused_with_its_line_and_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.edn");
    let first = b"{:type :invoke, :f :write, :value 1, :process 0, :index 0}\n".to_vec();
    let mut bytes = first.clone();
    bytes.extend_from_slice(b"{:type :ok, :f :write, :value \"");
    let at = bytes.len();
    bytes.extend_from_slice(b"\xff\xfe\x80\", :process 0, :index 1}\n");
    std::fs::write(&path, &bytes).expect("history");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["check", "--checker", "no-lost-ack"])
        .arg(&path)
        .output()
        .expect("faultline check");
    assert_eq!(out.status.code(), Some(66), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    let column = at - first.len() + 1;
    assert!(
        said.contains("bad.edn")
            && said.contains(&format!("not UTF-8 at line 2, column {column} (byte {at})")),
        "{said}"
    );
    assert!(!said.contains("stream did not contain"), "{said}");
}

/// `read_history_file`, the reader `faultline check` uses, reads every fixture in
/// every format as the reader of a whole text does.
#[test]
fn the_file_reader_reads_every_format_as_the_text_reader() {
    use faultline::oracle::format::read_history_file;
    for (name, format) in [
        ("register-ok.edn", Format::Edn),
        ("jepsen-nemesis.edn", Format::Edn),
        ("counter-lost.edn", Format::Edn),
        ("kv.porcupine.jsonl", Format::Porcupine),
        ("demo-d3-two-faults.jsonl", Format::Jsonl),
    ] {
        let text = fixture(name);
        let whole = read_history(format, name, &text).expect("parses");
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/histories")
            .join(name);
        let file = std::io::BufReader::new(std::fs::File::open(path).expect("fixture"));
        let read = read_history_file(format, name, file).expect("reads");
        assert!(!read.ops.is_empty(), "{name}");
        assert_eq!(read, whole, "{name}");
    }
}

/// An EDN completion with no invoke open before it (the completion first in the
/// file) is refused, naming the file and the line.
#[test]
fn an_edn_completion_before_its_invoke_is_refused() {
    let text = "{:type :ok, :f :write, :value 1, :process 0, :index 0}\n\
                {:type :invoke, :f :write, :value 1, :process 0, :index 1}\n";
    let e = parse_edn("early.edn", text)
        .expect_err("refused")
        .to_string();
    assert!(
        e.starts_with("early.edn:1:") && e.contains("no open invoke"),
        "{e}"
    );
}
