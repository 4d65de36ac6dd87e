//! `faultline check`: exit codes 0 / 1 / 3, the `--json` result and `--help`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/histories")
        .join(name)
}

fn check(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("check")
        .args(args)
        .output()
        .expect("faultline runs")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// One JSONL record line of every default field (a write acknowledged), with
/// `changed` fields put over them.
fn record(changed: serde_json::Value) -> String {
    let mut record = serde_json::json!({"op_id": "1", "process": 0, "invoke_ts": 0,
        "complete_ts": 5, "op_type": "write", "key": "k", "input": 1, "output": null,
        "error": null, "timeout": false, "node": "n1", "fault_epoch": null});
    if let (Some(fields), Some(changed)) = (record.as_object_mut(), changed.as_object()) {
        fields.extend(changed.clone());
    }
    format!("{record}\n")
}

/// `faultline check --checker CHECKER [more] --final-state DUMP HISTORY`.
fn check_with_dump(checker: &str, more: &[&str], dump: &Path, history: &Path) -> Output {
    let mut args = vec!["--checker", checker];
    args.extend_from_slice(more);
    args.extend([
        "--final-state",
        dump.to_str().expect("utf-8"),
        history.to_str().expect("utf-8"),
    ]);
    check(&args)
}

#[test]
fn valid_invalid_and_unknown_exit_codes() {
    let ok = fixture("register-ok.edn");
    let out = check(&[
        "--checker",
        "linearizability-register",
        ok.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["valid"], true);
    assert_eq!(v["ops_checked"], 5);
    assert_eq!(v["coverage"], 1.0);

    let stale = fixture("register-stale.edn");
    let out = check(&[
        "--checker",
        "linearizability-register",
        "--format",
        "edn",
        stale.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["valid"], false);
    assert_eq!(v["anomalies"][0]["ops"][0], "4", "{v}");

    let dir = tempfile::tempdir().expect("tempdir");
    let no_timeout = dir.path().join("h.jsonl");
    std::fs::write(
        &no_timeout,
        "{\"op_id\":1,\"process\":0,\"invoke_ts\":1,\"complete_ts\":2,\"op_type\":\"write\",\"key\":\"k\",\"input\":1,\"output\":null,\"error\":null}\n",
    )
    .expect("write");
    let out = check(&[
        "--checker",
        "linearizability-register",
        no_timeout.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let v = json(&out);
    assert_eq!(v["valid"], "unknown");
    assert_eq!(v["missing_fields"], serde_json::json!(["timeout"]));
}

#[test]
fn porcupine_kv_log_and_mismatch() {
    let kv = fixture("kv.porcupine.jsonl");
    let path = kv.to_str().expect("utf-8");
    let out = check(&[
        "--checker",
        "linearizability-kv",
        "--format",
        "porcupine",
        path,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = check(&[
        "--checker",
        "linearizability-kv",
        "--format",
        "porcupine",
        path,
        "--model",
        "session",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        json(&out)["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("does not match")
    );
}

#[test]
fn unreadable_and_torn_inputs_exit_66_with_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let torn = dir.path().join("h.edn");
    std::fs::write(&torn, "{:type :invoke :f :read :process 0}\n{:type :ok :f").expect("write");
    let out = check(&[
        "--checker",
        "linearizability-register",
        torn.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(66));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("h.edn:2") && stderr.contains("truncated"),
        "{stderr}"
    );
}

/// `"error": false` is refused, naming the line and the field: read as an error it
/// made the op failed, and a history of such writes passed no-lost-ack with nothing
/// acknowledged to lose.
#[test]
fn a_boolean_error_is_refused_not_read_as_a_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("final.json");
    std::fs::write(&dump, "{}").expect("dump");
    for error in ["false", "true"] {
        let history = dir.path().join("h.jsonl");
        let error: serde_json::Value = serde_json::from_str(error).expect("a boolean");
        std::fs::write(&history, record(serde_json::json!({ "error": error }))).expect("history");
        let out = check_with_dump("no-lost-ack", &[], &dump, &history);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(66), "{error}: {stderr}");
        assert!(
            stderr.contains("h.jsonl:1") && stderr.contains("error") && stderr.contains("boolean"),
            "{error}: {stderr}"
        );
    }
}

/// A final-state dump the checker cannot read is the input's fault: exit 66, the
/// dump's file named; a checker asked for without its dump stays a usage error.
#[test]
fn a_dump_the_checker_cannot_read_exits_66_naming_its_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = dir.path().join("h.jsonl");
    let transfer = serde_json::json!({"op_type": "transfer", "key": null,
        "input": {"idempotency_key": "a"}, "output": "ok"});
    std::fs::write(&history, record(transfer)).expect("history");
    let deep = 200;
    let dumps = [
        // Valid JSON, nested past serde_json's limit inside a record.
        (
            "deep.json",
            format!(
                r#"[{{"idempotency_key": "a", "x": {}{}}}]"#,
                "[".repeat(deep),
                "]".repeat(deep)
            ),
            "recursion limit",
        ),
        (
            "nokey.json",
            r#"[{"other": "a"}]"#.to_string(),
            "has no `idempotency_key`",
        ),
        (
            "count.json",
            r#"{"a": -1}"#.to_string(),
            "non-negative integer",
        ),
        (
            "shape.json",
            "7".to_string(),
            "expected an array of records or an object",
        ),
    ];
    for (name, text, says) in dumps {
        let dump = dir.path().join(name);
        std::fs::write(&dump, text).expect("dump");
        let out = check_with_dump("exactly-once", &[], &dump, &history);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(66), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("{name}: effects dump")) && stderr.contains(says),
            "{name}: {stderr}"
        );
    }
    let nodump = check(&["--checker", "no-lost-ack", history.to_str().expect("utf-8")]);
    assert_eq!(
        nodump.status.code(),
        Some(64),
        "{}",
        String::from_utf8_lossy(&nodump.stderr)
    );
}

/// 8-bit controls (the C1 CSI and OSC) in a history and in a file name come out of
/// `--json` escaped: the lines still parse, with the texts as written, and no raw
/// C1 character reaches the terminal (the cleaning cut the JSON at them before).
#[test]
fn c1_controls_in_a_history_and_its_name_leave_json_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = dir.path().join("bad\u{9d}0;x.jsonl");
    let c1 = serde_json::json!({"op_id": "\u{9d}", "key": "x\u{9b}"});
    std::fs::write(&history, record(c1)).expect("history");
    let dump = dir.path().join("final.json");
    std::fs::write(&dump, "{}").expect("dump");
    let one = check_with_dump("no-lost-ack", &["--json"], &dump, &history);
    let many = check(&[
        "--checker",
        "monotonic-reads",
        "--json",
        dir.path().to_str().expect("utf-8"),
    ]);
    for out in [&one, &many] {
        let text = String::from_utf8(out.stdout.clone()).expect("utf-8");
        assert!(
            !text.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c)),
            "{text:?}"
        );
    }
    assert_eq!(one.status.code(), Some(1));
    let report = json(&one);
    assert_eq!(report["valid"], false, "{report}");
    assert_eq!(report["anomalies"][0]["ops"][0], "\u{9d}", "{report}");
    let why = report["anomalies"][0]["why"].as_str().expect("why");
    assert!(why.contains("x\u{9b}"), "{why:?}");
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&many.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    let files: Vec<&str> = rows.iter().filter_map(|r| r["file"].as_str()).collect();
    assert!(
        files.iter().any(|f| f.ends_with("bad\u{9d}0;x.jsonl")),
        "{files:?}"
    );
}

#[test]
fn help_lists_every_checker() {
    let out = check(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for name in faultline::oracle::registry::names() {
        assert!(help.contains(name), "{name} missing from:\n{help}");
    }
}

/// `faultline check … | head -n 1` on a history with thousands of anomalies (far more
/// than a pipe holds): the reader leaving ends the output, not the check — no panic,
/// the exit code still says INVALID. Values from the history reach the terminal
/// sanitized: an escape sequence in a key is shown, never sent.
#[test]
fn a_closed_pipe_cuts_the_output_never_the_exit_code_and_history_text_is_sanitized() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("aborted-reads.txn.jsonl");
    let mut text = String::new();
    for i in 0..3000u64 {
        let key = if i == 0 {
            "k\u{1b}]0;owned\u{7}".to_string()
        } else {
            format!("k{i}")
        };
        let append = serde_json::json!({"op_id": 2 * i, "process": 0, "invoke_ts": 4 * i,
            "complete_ts": 4 * i + 1, "type": "fail", "value": [["append", key, 1]]});
        let read = serde_json::json!({"op_id": 2 * i + 1, "process": 1, "invoke_ts": 4 * i + 2,
            "complete_ts": 4 * i + 3, "type": "ok", "value": [["r", key, [1]]]});
        text.push_str(&format!("{append}\n{read}\n"));
    }
    std::fs::write(&path, text).expect("history");
    let args = ["check", "--checker", "list-append", "--format", "txn-jsonl"];
    let full = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .arg(&path)
        .output()
        .expect("faultline runs");
    assert_eq!(full.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&full.stdout);
    assert!(stdout.len() > 200_000, "{} bytes", stdout.len());
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "raw escape"
    );
    assert!(stdout.contains("G1a"), "{stdout:.400}");

    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("faultline starts");
    let stdout = child.stdout.take().expect("piped");
    let first = BufReader::new(stdout).lines().next();
    assert!(first.is_some_and(|l| l.is_ok_and(|l| l.starts_with("list-append: INVALID"))));
    // The reader is gone: the rest of the output has nowhere to go.
    let out = child.wait_with_output().expect("faultline ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A checker that judged none of the history's ops (a register history given to
/// list-append) answers unknown — never a valid nobody proved.
#[test]
fn nothing_judged_is_unknown_not_valid() {
    let register = fixture("register-ok.edn");
    let path = register.to_str().expect("utf-8");
    let out = check(&["--checker", "list-append", path]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains("unknown") && text.contains("nothing judged"),
        "{text}"
    );
    let out = check(&["--checker", "list-append", path, "--json"]);
    let v = json(&out);
    assert_eq!(v["valid"], "unknown", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("checked 0 of")),
        "{v}"
    );
    // The same history under the checker it is for stays valid.
    let out = check(&["--checker", "linearizability-register", path]);
    assert_eq!(out.status.code(), Some(0));
}

/// A faultline JSONL op on `key`: a write of `value`, or (`output` set) a read of it.
fn kv_op(
    id: u64,
    process: u64,
    at: (u64, u64),
    key: &str,
    write: Option<i64>,
    read: Option<i64>,
) -> String {
    let (op_type, input, output) = match write {
        Some(v) => ("write", serde_json::json!(v), serde_json::Value::Null),
        None => ("read", serde_json::Value::Null, serde_json::json!(read)),
    };
    format!(
        "{}\n",
        serde_json::json!({"op_id": id, "process": process, "invoke_ts": at.0,
            "complete_ts": at.1, "op_type": op_type, "key": key, "input": input,
            "output": output, "error": null, "timeout": false})
    )
}

/// Key `a` (2 ops) and key `b` (3 ops) each read a value nobody wrote; key `c` (4
/// ops) is fine. Smallest key first: `a` is the first anomaly found.
fn two_bad_keys() -> String {
    [
        kv_op(1, 0, (0, 1), "a", Some(1), None),
        kv_op(2, 0, (2, 3), "a", None, Some(9)),
        kv_op(3, 1, (0, 1), "b", Some(1), None),
        kv_op(4, 1, (2, 3), "b", Some(2), None),
        kv_op(5, 1, (4, 5), "b", None, Some(1)),
        kv_op(6, 2, (0, 1), "c", Some(1), None),
        kv_op(7, 2, (2, 3), "c", None, Some(1)),
        kv_op(8, 2, (4, 5), "c", Some(2), None),
        kv_op(9, 2, (6, 7), "c", None, Some(2)),
    ]
    .concat()
}

/// Several histories in one process: a directory gives one row per file (sorted,
/// a subdirectory not entered, a symlink listed and not followed), the exit code
/// is the worst verdict's (invalid over unreadable over unknown over valid), the
/// table fits COLUMNS, and `--json` gives one object per line and history with
/// `file` and `valid`.
#[test]
fn a_directory_of_histories_gives_a_row_each_and_the_worst_exit_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).expect("runs");
    let copy = |name: &str, to: &str| {
        std::fs::copy(fixture(name), runs.join(to)).expect("copy");
    };
    copy("register-ok.edn", "a-ok.edn");
    copy("register-stale.edn", "b-stale.edn");
    copy("register-ok.edn", "c-ok.edn");
    std::fs::write(runs.join("d-torn.edn"), "{:type :invoke, :f :read").expect("torn");
    std::os::unix::fs::symlink(fixture("register-ok.edn"), runs.join("e-link.edn"))
        .expect("symlink");
    std::fs::create_dir(runs.join("f-sub")).expect("subdir");
    std::fs::copy(fixture("register-stale.edn"), runs.join("f-sub/x.edn")).expect("copy");
    let runs_arg = runs.to_str().expect("utf-8");
    let run = |args: &[&str], columns: &str| {
        Command::new(env!("CARGO_BIN_EXE_faultline"))
            .args(["check", "--checker", "linearizability-register"])
            .args(args)
            .env("COLUMNS", columns)
            .output()
            .expect("faultline runs")
    };

    let out = run(&[runs_arg], "80");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("file "))
        .collect();
    let rows: Vec<&str> = table
        .iter()
        .copied()
        .filter(|l| l.contains("/runs/"))
        .collect();
    let expected = [
        ("a-ok.edn", "valid"),
        ("b-stale.edn", "INVALID"),
        ("c-ok.edn", "valid"),
        ("d-torn.edn", "unreadable"),
        ("e-link.edn", "unreadable"),
    ];
    let row_lines: Vec<&str> = rows
        .iter()
        .copied()
        .filter(|l| !l.starts_with(' '))
        .collect();
    assert_eq!(row_lines.len(), expected.len(), "{text}");
    for (line, (name, verdict)) in row_lines.iter().zip(expected) {
        assert!(
            line.contains(name) && line.contains(verdict),
            "{line}\n{text}"
        );
    }
    assert!(
        !text.contains("x.edn"),
        "a subdirectory is not entered: {text}"
    );
    assert!(text.contains("symbolic link: not followed"), "{text}");
    assert!(text.contains("truncated"), "{text}");
    assert!(
        table.last().is_some_and(|l| l.contains("5 histories")
            && l.contains("2 valid, 1 INVALID, 2 unreadable")
            && l.ends_with("exit 1")),
        "{text}"
    );
    // The invalid one's report comes before the table, named.
    let report = text
        .find("linearizability-register: INVALID")
        .expect("its report");
    assert!(report < text.find("file ").expect("the table"), "{text}");

    // Narrow: every line within 40 columns, nothing lost.
    let narrow = run(&[runs_arg], "40");
    let narrow_text = String::from_utf8_lossy(&narrow.stdout);
    let closing: Vec<&str> = narrow_text
        .lines()
        .skip_while(|l| !l.starts_with("file "))
        .collect();
    assert!(
        closing.iter().all(|l| l.chars().count() <= 40),
        "{narrow_text}"
    );
    let joined: String = closing.iter().map(|l| l.trim()).collect();
    assert!(
        joined.contains(&format!("{runs_arg}/b-stale.edn")),
        "{narrow_text}"
    );

    // Without the invalid one: the unreadable files decide (66); without those,
    // valid (0).
    let out = run(
        &[
            &format!("{runs_arg}/a-ok.edn"),
            &format!("{runs_arg}/d-torn.edn"),
        ],
        "80",
    );
    assert_eq!(
        out.status.code(),
        Some(66),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let pattern = format!("{runs_arg}/?-ok.edn");
    let out = run(&[&pattern], "80");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a quoted glob is expanded: {text}"
    );
    assert!(text.contains("2 histories: 2 valid; exit 0"), "{text}");

    // --json: one object per line and history, in the order given, with the path.
    let out = run(&[runs_arg, "--json", "--jobs", "2"], "80");
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 5, "{lines:?}");
    let valid: Vec<&serde_json::Value> = lines.iter().map(|v| &v["valid"]).collect();
    assert_eq!(
        valid,
        [
            &serde_json::json!(true),
            &serde_json::json!(false),
            &serde_json::json!(true),
            &serde_json::Value::Null,
            &serde_json::Value::Null
        ]
    );
    for (v, (name, _)) in lines.iter().zip(expected) {
        let file = v["file"].as_str().expect("file");
        assert!(file.ends_with(&format!("/runs/{name}")), "{v}");
    }
    assert_eq!(lines[1]["anomalies"][0]["ops"][0], "4", "{}", lines[1]);
    assert!(
        lines[3]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("truncated"))
    );

    // `**` enters the subdirectory, not a symbolic link to a directory (found by a
    // review: it checked what a link planted in the tree pointed at).
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).expect("outside");
    std::fs::copy(fixture("register-ok.edn"), outside.join("y.edn")).expect("copy");
    std::os::unix::fs::symlink(&outside, runs.join("g-link")).expect("dir symlink");
    let deep = format!("{runs_arg}/**/*.edn");
    // --jobs far past the cores is capped, not a thread per history.
    let out = run(&[&deep, "--json", "--jobs", "100000"], "80");
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let row = |suffix: &str| {
        rows.iter()
            .find(|v| v["file"].as_str().is_some_and(|f| f.ends_with(suffix)))
            .unwrap_or_else(|| panic!("no row for {suffix}: {rows:?}"))
    };
    assert_eq!(row("/f-sub/x.edn")["valid"], false, "{rows:?}");
    let linked = row("/g-link/y.edn");
    assert_eq!(linked["valid"], serde_json::Value::Null, "{linked}");
    assert!(
        linked["reason"]
            .as_str()
            .is_some_and(|r| r.contains("symbolic link")),
        "{linked}"
    );
}

/// `--first` stops at the first anomaly (the smallest key's) and says what was not
/// searched; the default run reports every anomaly, and tells the first one on
/// stderr before the report is written.
#[test]
fn first_stops_at_the_first_anomaly_and_the_default_tells_it_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("two-bad-keys.jsonl");
    std::fs::write(&path, two_bad_keys()).expect("history");
    let path = path.to_str().expect("utf-8");
    let out = check(&["--checker", "linearizability-kv", path, "--first", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["valid"], false, "{v}");
    let anomalies = v["anomalies"].as_array().expect("anomalies");
    assert_eq!(anomalies.len(), 1, "{v}");
    assert!(
        anomalies[0]["why"]
            .as_str()
            .is_some_and(|w| w.contains("key `a`")),
        "{v}"
    );
    let evidence = v["evidence"].as_str().expect("evidence");
    assert!(
        evidence.contains("2 more not searched") && evidence.contains("--first"),
        "{evidence}"
    );

    let out = check(&["--checker", "linearizability-kv", path, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["anomalies"].as_array().map(Vec::len), Some(2), "{v}");
    assert!(
        !v["evidence"]
            .as_str()
            .unwrap_or_default()
            .contains("not searched"),
        "{v}"
    );
    // --json prints nothing else.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Text: stdout and stderr into one file, in the order written.
    let both = dir.path().join("both.txt");
    let file = std::fs::File::create(&both).expect("output file");
    let status = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["check", "--checker", "linearizability-kv", path])
        .stdout(file.try_clone().expect("clone"))
        .stderr(file)
        .status()
        .expect("faultline runs");
    assert_eq!(status.code(), Some(1));
    let said = std::fs::read_to_string(&both).expect("output");
    let first = said
        .find("first anomaly: ")
        .expect("the first anomaly line");
    let line = said[first..].lines().next().unwrap_or_default();
    assert!(line.contains("op 2 read 9 on key `a` after "), "{said}");
    let report = said
        .find("linearizability-kv: INVALID")
        .expect("the report");
    assert!(
        first < report,
        "the first anomaly is told before the report:\n{said}"
    );
    assert_eq!(said.matches("first anomaly").count(), 1, "{said}");
}

/// When the budget ends the search with an anomaly already found, the verdict is
/// still INVALID and the evidence says how many keys were not searched.
#[test]
fn a_budget_that_ends_the_search_after_an_anomaly_keeps_it_invalid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cheap-bad-hard-good.jsonl");
    // Key `a`: a cheap anomaly. Key `h`: 14 concurrent writes, then a read of the
    // first one's value — linearizable, but only with that write last, which the
    // search reaches after far more configurations than the budget below.
    let mut text =
        kv_op(1, 0, (0, 1), "a", Some(1), None) + &kv_op(2, 0, (2, 3), "a", None, Some(9));
    for i in 0..14u64 {
        text += &kv_op(10 + i, 10 + i, (0, 10), "h", Some(100 + i as i64), None);
    }
    text += &kv_op(99, 1, (20, 30), "h", None, Some(100));
    std::fs::write(&path, text).expect("history");
    let path = path.to_str().expect("utf-8");
    let out = check(&[
        "--checker",
        "linearizability-kv",
        path,
        "--param",
        "max_configs=10",
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(out.status.code(), Some(1), "{v}");
    assert_eq!(v["valid"], false, "{v}");
    assert_eq!(v["anomalies"].as_array().map(Vec::len), Some(1), "{v}");
    let evidence = v["evidence"].as_str().expect("evidence");
    assert!(
        evidence.contains("1 more not searched: memory budget exceeded"),
        "{evidence}"
    );
    // With room, the hard key is decided: still the one anomaly, nothing cut.
    let out = check(&["--checker", "linearizability-kv", path, "--json"]);
    let v = json(&out);
    assert_eq!(v["anomalies"].as_array().map(Vec::len), Some(1), "{v}");
    assert!(
        !v["evidence"]
            .as_str()
            .unwrap_or_default()
            .contains("not searched"),
        "{v}"
    );
}
