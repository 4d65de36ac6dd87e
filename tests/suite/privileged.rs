//! No privileged fault action (iptables rule, tmpfs mount, Docker action) without an
//! approval the journal recorded first, naming who gave it.

use std::path::Path;
use std::process::Command;

use crate::common;

use crate::common::Line;
use serde_json::Value;

/// Runs twin T1 (a tmpfs mount filled to ENOSPC) of the twins plan headless with `args`.
fn run_t1(dir: &Path, args: &[&str]) -> (String, Vec<Line>, String) {
    let plan = dir.join("plan.md");
    std::fs::copy(common::twins_plan(), &plan).expect("plan copied");
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(&plan)
        .args(["--headless", "--only", "T1", "--sut"])
        .arg(dir)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("faultline runs");
    let session = common::session_of(&out);
    let records = crate::common::lines(&session.join("journal.jsonl"));
    (
        common::verdict_of(&session, "T1"),
        records,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn first<'a>(records: &'a [Line], kind: &str) -> Option<&'a Line> {
    records.iter().find(|r| r.kind == kind)
}

fn text<'a>(record: &'a Line, field: &str) -> &'a str {
    record.data.get(field).and_then(Value::as_str).unwrap_or("")
}

fn mounted_under(dir: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    mounts.lines().any(|l| {
        l.split(' ')
            .nth(1)
            .is_some_and(|m| m.starts_with(&*dir.to_string_lossy()))
    })
}

/// `--yes` never approves a privileged action: the scenario is INCONCLUSIVE-env with
/// the refusal journaled, and nothing is mounted. Needs no root: nothing is tried.
#[test]
fn yes_declines_and_nothing_privileged_happens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (verdict, records, stderr) = run_t1(dir.path(), &["--yes"]);
    assert_eq!(verdict, "INCONCLUSIVE-env", "{stderr}");
    let declined = first(&records, "privileged-declined").expect("refusal journaled");
    assert_eq!(text(declined, "scenario"), "T1");
    assert_eq!(
        text(declined, "by"),
        "--yes (never approves a privileged action)"
    );
    let actions = declined.data["actions"].to_string();
    assert!(actions.contains("1M tmpfs on `data`"), "{actions}");
    let missing = first(&records, "env-missing").expect("env-missing");
    assert!(
        text(missing, "reason").contains("privileged fault actions were not approved"),
        "{:?}",
        missing.data
    );
    for never in [
        "mount-created",
        "fault-intent",
        "fault-injected",
        "command-started",
    ] {
        assert!(first(&records, never).is_none(), "{never} after a refusal");
    }
    assert!(!mounted_under(dir.path()));
}

/// Without `--yes` and without an answer, the question stops the run before any
/// scenario starts, naming the way out.
#[test]
fn an_unanswered_approval_stops_the_run_and_names_the_flag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, records, stderr) = run_t1(dir.path(), &[]);
    assert!(stderr.contains("privileged.T1"), "{stderr}");
    assert!(stderr.contains("--approve-privileged"), "{stderr}");
    assert!(first(&records, "mount-created").is_none());
    assert!(first(&records, "iteration-started").is_none());
}

/// An approval is journaled, with who gave it, before the mount; the fault's
/// `fault-injected` record cites it.
fn assert_approved_before_acting(records: &[Line], by: &str) {
    let approved = first(records, "privileged-approved").expect("approval journaled");
    assert_eq!(text(approved, "by"), by);
    let mount = first(records, "mount-created").expect("mounted");
    assert!(approved.seq < mount.seq);
    let injected = first(records, "fault-injected").expect("injected");
    assert_eq!(injected.data["approved"], approved.seq);
    assert!(first(records, "mount-removed").is_some());
}

#[test]
fn approve_privileged_is_recorded_before_the_mount_and_cited_by_the_fault() {
    if !common::can_mount() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (verdict, records, stderr) = run_t1(dir.path(), &["--yes", "--approve-privileged"]);
    assert_eq!(verdict, "INCONCLUSIVE-fault-not-proven", "{stderr}");
    assert_approved_before_acting(&records, "--approve-privileged");
    assert!(!mounted_under(dir.path()));
}

#[test]
fn an_answers_file_approval_names_the_file() {
    if !common::can_mount() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let answers = dir.path().join("answers.yaml");
    std::fs::write(&answers, "privileged.T1: approve\n").expect("answers");
    let answers = answers.display().to_string();
    let (_, records, stderr) = run_t1(dir.path(), &["--yes", "--answers", &answers]);
    let approved = first(&records, "privileged-approved").unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        text(approved, "by").contains("answers.yaml"),
        "{:?}",
        approved.data
    );
    assert_approved_before_acting(&records, text(approved, "by"));
}

#[test]
fn the_answers_template_lists_the_approval() {
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(common::twins_plan())
        .arg("--answers-template")
        .output()
        .expect("faultline runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for id in ["privileged.T1:", "privileged.T5:"] {
        assert!(text.contains(id), "{id} missing from\n{text}");
    }
}

/// Below the preflight: an iteration handed no approval refuses the privileged step
/// before iptables is ever called (the namespace does not even exist).
#[tokio::test]
async fn an_iteration_without_approval_never_attempts_the_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = r#"
workload: { run: "sleep 1", deadline: 10s }
faults:
  - id: cut
    after: 100ms
    duration: 200ms
    net: { netns: fl-no-such-netns, drop: [ { dport: 9 } ] }
"#;
    let binding: faultline::runspec::Binding = serde_saphyr::from_str(yaml).expect("binding");
    let (facts, records) = common::run_binding_approved(&binding, dir.path(), false).await;
    assert!(!facts.faults[0].injected);
    let failed = first(&records, "fault-inject-failed").expect("refusal journaled");
    let error = text(failed, "error");
    assert!(error.contains("no approval was recorded"), "{error}");
    assert!(error.contains("privileged.X1"), "{error}");
    assert!(first(&records, "fault-injected").is_none());
}

/// `lint` shows what the run will ask approval for, before anything runs.
#[test]
fn lint_lists_each_scenarios_privileged_actions() {
    let lint = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_faultline"));
        cmd.arg("lint").arg(common::twins_plan());
        if json {
            cmd.arg("--json");
        }
        cmd.output().expect("lint runs")
    };
    let text = String::from_utf8_lossy(&lint(false).stdout).into_owned();
    assert!(
        text.contains("--approve-privileged approves them"),
        "{text}"
    );
    assert!(
        text.contains("  T1: fill: mount a 1M tmpfs on `data`"),
        "{text}"
    );
    assert!(
        !text.contains("  T2:"),
        "a clock fault is not privileged:\n{text}"
    );
    let json: Value = serde_json::from_slice(&lint(true).stdout).expect("lint --json");
    let listed: Vec<&str> = json["privileged"]
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(listed, ["T1", "T5"]);
}

/// Under `isolate: netns` a `net` rule without `netns:` goes in the run's own
/// namespace: the approval (and `lint`'s list) says so, never "the current network
/// namespace"; a rule naming its namespace keeps it.
#[test]
fn an_isolated_runs_approval_names_its_own_namespace() {
    let sidecar = |isolate: &str| {
        format!(
            "version: 1\n{isolate}scenarios:\n  S1:\n    faults:\n      - id: cut\n        \
             net: {{ drop: [ {{ destination: 127.0.0.3, dport: \"${{port:n3}}\" }} ] }}\n      \
             - id: named\n        net: {{ netns: b, drop: [ {{ dport: 9 }} ] }}\n"
        )
    };
    let actions = |text: &str| {
        let spec = faultline::runspec::load(
            &faultline::plan::Plan::default(),
            Some(("plan.run.yaml", text)),
        )
        .expect("loads");
        faultline::engine::privileged::by_binding(&spec)["S1"].join(" | ")
    };
    let isolated = actions(&sidecar("isolate: netns\n"));
    assert!(
        isolated.contains("cut: 1 DROP rule(s) in the run's own network namespace"),
        "{isolated}"
    );
    assert!(
        !isolated.contains("current network namespace"),
        "{isolated}"
    );
    assert!(
        isolated.contains("named: 1 DROP rule(s) in network namespace `b`"),
        "{isolated}"
    );
    let plain = actions(&sidecar(""));
    assert!(
        plain.contains("cut: 1 DROP rule(s) in the current network namespace"),
        "{plain}"
    );
}
