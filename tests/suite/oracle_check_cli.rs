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
