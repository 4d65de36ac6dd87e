//! Engine paths the demo does not take, through the real CLI: a failed precondition,
//! an external checker (with a same-seed re-run of its FAIL), an unbound scenario,
//! `--only`, and FAIL classification from an answers file.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/engine-paths.md")
}

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(fixture())
        .args(["--headless", "--sut"])
        .arg(cwd)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("faultline runs")
}

/// id → (verdict, last reason answer)
fn verdicts(session: &Path) -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| {
            let last = s["reasons"]
                .as_array()
                .and_then(|r| r.last())
                .map(|r| r["answer"].as_str().unwrap_or_default().to_string())
                .unwrap_or_default();
            (
                s["id"].as_str().unwrap_or_default().to_string(),
                (s["verdict"].as_str().unwrap_or_default().to_string(), last),
            )
        })
        .collect()
}

#[test]
fn precondition_external_checker_unbound_and_answers_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let answers = dir.path().join("answers.yaml");
    std::fs::write(
        &answers,
        "E2.blame: checker\nE2.bug-type: fault-handling\nE2.tags: durability, safety\n\
         E2.severity: P0\nE2.root-cause: |\n  the checker reads the dump\n  before the flush\n\
         E2.next-action: flush before the dump\n",
    )
    .expect("answers");
    let out = run(&["--answers", answers.to_str().expect("utf-8")], dir.path());
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let session = common::session_of(&out);
    let v = verdicts(&session);
    assert_eq!(v["E1"].0, "INCONCLUSIVE-env");
    assert!(
        v["E1"].1.contains("fault plane responsive"),
        "{:?}",
        v["E1"]
    );
    assert_eq!(v["E2"].0, "FAIL-reproducible");
    assert_eq!(v["E3"].0, "NOT-RUN");
    assert!(v["E3"].1.contains("no run spec binding"), "{:?}", v["E3"]);

    let journal = std::fs::read_to_string(session.join("journal.jsonl")).expect("journal");
    assert!(
        journal.contains("\"rerun-result\""),
        "the FAIL was not re-run"
    );
    assert!(
        journal.contains("answers file"),
        "answers not journaled with their source"
    );
    let report = std::fs::read_to_string(session.join("findings/report.md")).expect("report");
    assert!(
        report.contains("fault-handling") && report.contains("checker"),
        "{report}"
    );
    for said in [
        "tags: durability, safety",
        "**Severity:** P0",
        "> the checker reads the dump\n> before the flush",
        "> flush before the dump",
    ] {
        assert!(report.contains(said), "`{said}` missing:\n{report}");
    }
}

#[test]
fn only_excludes_the_rest_and_no_fail_needs_no_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(&["--only", "E1"], dir.path());
    assert_eq!(out.status.code(), Some(3), "session INCONCLUSIVE expected");
    let v = verdicts(&common::session_of(&out));
    assert_eq!(v["E1"].0, "INCONCLUSIVE-env");
    for id in ["E2", "E3"] {
        assert_eq!(v[id].0, "NOT-RUN");
        assert!(v[id].1.contains("excluded by --only"), "{id}: {:?}", v[id]);
    }
}

#[test]
fn a_fail_without_yes_or_answers_stops_and_names_the_question() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(&["--only", "E2,E3"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("E2.blame"), "{stderr}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "the FAIL still decides the exit code"
    );
    let v = verdicts(&common::session_of(&out));
    assert!(v["E3"].1.contains("E2.blame"), "{:?}", v["E3"]);
}
