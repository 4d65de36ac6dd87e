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

/// Runs one scenario of the early-deaths fixture headless: its output and session.
fn run_deaths(id: &str, cwd: &Path) -> (Output, PathBuf) {
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/early-deaths.md");
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(plan)
        .args(["--headless", "--only", id, "--sut"])
        .arg(cwd)
        .current_dir(cwd)
        .output()
        .expect("faultline runs");
    let session = common::session_of(&out);
    (out, session)
}

/// The one `service-exited` record of `service`.
fn exit_record(session: &Path, service: &str) -> common::Line {
    let records = common::lines(&session.join("journal.jsonl"));
    let mut exits = records
        .into_iter()
        .filter(|r| r.kind == "service-exited" && r.data["name"] == service);
    let exit = exits.next().expect("the service's end is journaled");
    assert!(exits.next().is_none(), "journaled once");
    exit
}

/// The reason steps of scenario `id` in verdicts.json.
fn reasons_of(session: &Path, id: &str) -> (String, Vec<serde_json::Value>) {
    let text = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let s = v["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .find(|s| s["id"] == id)
        .expect("the scenario")
        .clone();
    let reasons = s["reasons"].as_array().cloned().unwrap_or_default();
    (
        s["verdict"].as_str().unwrap_or_default().to_string(),
        reasons,
    )
}

/// The step citing record `seq`, which must say every one of `said`.
fn step_citing(reasons: &[serde_json::Value], seq: u64, said: &[&str]) -> String {
    let step = reasons
        .iter()
        .find(|r| {
            r["cites"]
                .as_array()
                .is_some_and(|c| c.iter().any(|s| s.as_u64() == Some(seq)))
        })
        .unwrap_or_else(|| panic!("no reason cites #{seq}: {reasons:#?}"));
    let answer = step["answer"].as_str().unwrap_or_default().to_string();
    for s in said {
        assert!(answer.contains(s), "`{s}` missing from {answer:?}");
    }
    answer
}

#[test]
fn a_service_that_exits_at_start_is_named_with_its_status_and_last_stderr_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = std::time::Instant::now();
    let (out, session) = run_deaths("K1", dir.path());
    // The health wait ends when the member does, not when its blocking check (30 s)
    // or its 40 s deadline would.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let line = "failed to list data directory /var/lib/n1: permission denied";
    let exit = exit_record(&session, "n1");
    assert_eq!(exit.data["code"], 3, "{:?}", exit.data);
    assert_eq!(exit.data["during"], "start");
    // Seen within a few looks of its end, not when the health check returned.
    assert!(
        exit.data["elapsed_ms"]
            .as_u64()
            .is_some_and(|ms| ms < 5_000),
        "{:?}",
        exit.data
    );
    let tail = exit.data["stderr_tail"].as_array().expect("tail");
    assert_eq!(tail.last().and_then(|l| l.as_str()), Some(line), "{tail:?}");
    assert!(exit.data.get("explained_by").is_none(), "{:?}", exit.data);

    let (verdict, reasons) = reasons_of(&session, "K1");
    assert_eq!(verdict, "INCONCLUSIVE-env");
    let said = ["n1", "exited 3", line];
    step_citing(&reasons, exit.seq, &said);

    let stdout = String::from_utf8_lossy(&out.stdout);
    let verdict_line = stdout
        .lines()
        .find(|l| l.contains("INCONCLUSIVE-env —"))
        .unwrap_or_else(|| panic!("no verdict line:\n{stdout}"));
    for s in said {
        assert!(verdict_line.contains(s), "`{s}` missing: {verdict_line}");
    }
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("service n1 exited 3") && l.contains(line)),
        "{stdout}"
    );
    let finding = std::fs::read_to_string(session.join("findings/K1.md")).expect("finding");
    for s in said {
        assert!(
            finding.contains(s),
            "`{s}` missing from the finding:\n{finding}"
        );
    }
    assert!(
        finding.contains(&format!("#{}", exit.seq)),
        "the finding cites the record:\n{finding}"
    );
}

#[test]
fn a_service_that_dies_mid_run_with_no_fault_caps_the_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (out, session) = run_deaths("K2", dir.path());
    let exit = exit_record(&session, "n2");
    assert_eq!(exit.data["code"], 4, "{:?}", exit.data);
    assert_eq!(exit.data["during"], "workload");
    let (verdict, reasons) = reasons_of(&session, "K2");
    assert_eq!(verdict, "PARTIAL-surface", "{reasons:#?}");
    let said = ["n2", "exited 4", "lost the lease, giving up"];
    step_citing(&reasons, exit.seq, &said);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("PARTIAL-surface —") && l.contains("n2 exited 4")),
        "{stdout}"
    );
    let finding = std::fs::read_to_string(session.join("findings/K2.md")).expect("finding");
    assert!(
        finding.contains("service n2 exited 4") && finding.contains("no fault explains it"),
        "{finding}"
    );
}
