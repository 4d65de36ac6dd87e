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
