//! Built-in checkers inside a real `faultline run`: a history that lacks the
//! timeout marker or the fault epoch the checker needs is
//! INCONCLUSIVE-oracle-too-weak, and an EDN history with every field the
//! checker needs is judged on all its ops.

mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn missing_timeout_marker_is_oracle_too_weak_and_edn_is_judged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/oracle-checkers.md");
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(&plan)
        .args(["--headless", "--yes", "--sut"])
        .arg(dir.path())
        .current_dir(dir.path())
        .output()
        .expect("faultline runs");
    let session = common::session_of(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        common::verdict_of(&session, "K1"),
        "INCONCLUSIVE-oracle-too-weak",
        "{stdout}"
    );
    let verdicts = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts");
    assert!(verdicts.contains("missing timeout"), "{verdicts}");
    // K2's oracle judged every op (its verdict then rests on the surface audits).
    let v: serde_json::Value = serde_json::from_str(&verdicts).expect("json");
    let k2 = v["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "K2"))
        .expect("K2");
    let answers: Vec<&str> = k2["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .filter_map(|r| r["answer"].as_str())
        .collect();
    assert!(answers.contains(&"yes: 40 of 40 ops"), "{answers:?}");
    assert_ne!(k2["verdict"], "INCONCLUSIVE-oracle-too-weak");
}

#[test]
fn missing_fault_epoch_is_oracle_too_weak() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/oracle-fault-epoch.md");
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(&plan)
        .args(["--headless", "--yes", "--sut"])
        .arg(dir.path())
        .current_dir(dir.path())
        .output()
        .expect("faultline runs");
    let session = common::session_of(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        common::verdict_of(&session, "E1"),
        "INCONCLUSIVE-oracle-too-weak",
        "{stdout}"
    );
    let verdicts = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts");
    let v: serde_json::Value = serde_json::from_str(&verdicts).expect("json");
    let e1 = v["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "E1"))
        .expect("E1");
    let answers: Vec<&str> = e1["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .filter_map(|r| r["answer"].as_str())
        .collect();
    // Only fault_epoch is missing: the history has the other fields the checker reads.
    assert!(answers.contains(&"no: missing fault_epoch"), "{answers:?}");
}
