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
    common::verdict_scenarios(session)
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

/// A one-scenario plan (`T1`) around `block` (a run spec block), in `dir`.
fn plan_with(dir: &Path, block: &str) -> PathBuf {
    let plan = format!(
        "# Test Plan: issue-30\n\n**Date:** 2026-12-04\n**Plan mode:** project-wide\n\
         **SUT:** a shell pretending to be a cluster\n**Plan author:** faultline tests\n\
         **Status:** reviewed\n\n## 1b. Claims under test\n\n\
         | ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n\
         | C1 | The service answers every request. | liveness | test | no |\n\n\
         ## 4. Failure hypotheses\n\n- H1. **Dies** — a member ends on its own.\n  \
         - Could falsify: C1\n\n## 7. Scenarios\n\n### Scenario T1: issue_30\n\n\
         - **Falsifies if it FAILs:** C1\n- **Closes:** H1\n\
         - **Workload:** one op written by the shell.\n\
         - **Faults:** as the block says.\n\
         - **Oracle:** the external checker over the JSONL history reports no anomaly.\n\
         - **Smoke budget:** 1 seed, 1 s.\n\
         - **Hardening budget:** not applicable — test fixture.\n\
         - **Release budget:** not provided — test fixture. Revisit when: never.\n\n\
         ```faultline\n{block}```\n"
    );
    let path = dir.join("plan.md");
    std::fs::write(&path, plan).expect("plan");
    path
}

/// `faultline run <plan> --headless --yes --sut <dir>` in `dir`: output and session.
fn run_plan(plan: &Path, dir: &Path) -> (Output, PathBuf) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(plan)
        .args(["--headless", "--yes", "--sut"])
        .arg(dir)
        .current_dir(dir)
        .output()
        .expect("faultline runs");
    let session = common::session_of(&out);
    (out, session)
}

/// Issue 30 (2): a `command` target that fails means the fault was never injected;
/// the verdict says so (not that a landing signal was missing), and what the command
/// printed, and how it ended in words, reach the journal and the headless lines.
#[test]
fn a_failing_target_command_is_a_fault_never_injected_saying_what_it_printed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let block = r#"cluster:
  services:
    - { name: n1, run: "exec sleep 30" }
  health: { run: "true" }
workload:
  run: "sleep 1.5; printf '%s\n' '{\"op_id\":\"1\",\"process\":\"p\",\"invoke_ts\":1,\"complete_ts\":2,\"op_type\":\"write\",\"key\":\"k\",\"input\":1,\"output\":null,\"error\":null,\"timeout\":false,\"node\":\"n\",\"fault_epoch\":null}' > ${artifacts}/h.jsonl"
history: { path: "${artifacts}/h.jsonl", format: jsonl }
checker:
  external: "echo '{\"valid\": true, \"ops_checked\": 1, \"ops_total\": 1, \"anomalies\": []}'"
faults:
  - id: kill-leader
    after: 300ms
    process: { signal: SIGKILL, target: { command: "echo nobody-is-leader; printf 'no quorum\\033[31m: 2 of 3 down\\n' >&2; exit 1" } }
    landing:
      - side: victim
        log: { service: n1, pattern: "leader gone" }
        within: 500ms
tiers: { smoke: { duration: 1s } }
"#;
    let plan = plan_with(dir.path(), block);
    let (out, session) = run_plan(&plan, dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let records = common::lines(&session.join("journal.jsonl"));
    let failed = records
        .iter()
        .find(|l| l.kind == "fault-inject-failed")
        .unwrap_or_else(|| panic!("no fault-inject-failed:\n{stdout}"));
    let error = failed.data["error"].as_str().unwrap_or_default();
    for said in [
        "failed (exited 1)",
        "`nobody-is-leader` on stdout",
        "`no quorum: 2 of 3 down` on stderr",
    ] {
        assert!(error.contains(said), "`{said}` missing: {error}");
    }
    assert!(!error.contains("Exited("), "{error}");
    assert!(!error.contains('\u{1b}'), "{error:?}");

    let (verdict, reasons) = reasons_of(&session, "T1");
    assert_eq!(verdict, "INCONCLUSIVE-fault-not-proven", "{reasons:#?}");
    let answer = step_citing(
        &reasons,
        failed.seq,
        &[
            "the fault was never injected",
            "kill-leader",
            "nobody-is-leader",
        ],
    );
    assert!(!answer.contains("landing signal"), "{answer}");
    let verdict_line = stdout
        .lines()
        .find(|l| l.contains("INCONCLUSIVE-fault-not-proven —"))
        .unwrap_or_else(|| panic!("no verdict line:\n{stdout}"));
    for said in [
        "T1: the fault was never injected: kill-leader: target command",
        "failed (exited 1)",
        "`nobody-is-leader` on stdout",
    ] {
        assert!(
            verdict_line.contains(said),
            "`{said}` missing: {verdict_line}"
        );
    }
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("kill-leader could not be injected") && l.contains("exited 1")),
        "{stdout}"
    );
}

/// Issue 30 (3): a member that says why it dies and then writes one 70 KB line is
/// reported with its reason, the long line cut to its start.
#[test]
fn a_huge_last_stderr_line_does_not_hide_why_a_service_died() {
    let dir = tempfile::tempdir().expect("tempdir");
    let block = r#"cluster:
  services:
    - { name: n1, run: "echo 'FATAL: cannot bind: permission denied' >&2; head -c 71680 /dev/zero | tr -c A A >&2; echo >&2; exit 1" }
  health: { run: "sleep 30; exit 1", deadline: 40s }
workload: { run: "true" }
tiers: { smoke: { duration: 1s } }
"#;
    let plan = plan_with(dir.path(), block);
    let (out, session) = run_plan(&plan, dir.path());
    let exit = exit_record(&session, "n1");
    assert_eq!(exit.data["code"], 1, "{:?}", exit.data);
    let tail: Vec<&str> = exit.data["stderr_tail"]
        .as_array()
        .expect("tail")
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert_eq!(tail.len(), 2, "{tail:?}");
    assert_eq!(tail[0], "FATAL: cannot bind: permission denied");
    assert!(
        tail[1].starts_with("AAAA") && tail[1].ends_with('…') && tail[1].chars().count() <= 201,
        "{tail:?}"
    );
    let (verdict, _) = reasons_of(&session, "T1");
    assert_eq!(
        verdict,
        "INCONCLUSIVE-env",
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
