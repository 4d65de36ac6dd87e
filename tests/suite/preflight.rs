//! The capability preflight through the real CLI, with PATH shims standing in for the
//! package managers and probe targets: answers come before probes, nothing is
//! installed without a journaled approval, wait and substitute really change what runs.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PLAN: &str = r#"# Test Plan: preflight

## 1b. Claims under test

| ID | Claim | Category | Source | Inferred? |
|---|---|---|---|---|
| C1 | The tool answers. | liveness | test | no |

## 4. Failure hypotheses

- H1. **Silence** — the tool stops answering.
  - Could falsify: C1

## 6b. Environment requirements

| Requirement | Version floor | Used by scenarios | Install hint |
|---|---|---|---|
| docker + docker compose | — | P1 | apt |
| tc | — | P1 | apt |

## 7. Scenarios

### Scenario P1: tool_runs

- **Falsifies if it FAILs:** C1
- **Closes:** H1
- **Workload:** the tool writes a marker.
- **Faults:** none.
- **Oracle:** the external checker over the JSONL history reports no anomaly.
- **Smoke budget:** 1 seed, 1 s.
- **Hardening budget:** not applicable — no fault.
- **Release budget:** not provided — test fixture. Revisit when: never.
"#;

const SPEC: &str = r#"version: 1
requires:
  - need: "binary:fl-test-tool"
    scenarios: [P1]
    var: tool
    package: fl-test-tool
scenarios:
  P1:
    workload: { run: "${tool} > ran-with.txt", deadline: 10s }
    tiers: { smoke: { duration: 1s } }
"#;

/// A shim that logs `name argv` and whether the journal already held `marker` when
/// it was called; `extra` runs after (e.g. "installs" the tool).
fn shim(dir: &Path, name: &str, marker: &str, extra: &str) {
    let log = dir.join("calls.log");
    let script = format!(
        "#!/bin/sh\nseen=$(grep -l '\"{marker}\"' -r \"$FL_OUT\" --include=journal.jsonl 2>/dev/null | wc -l)\n\
         echo \"{name} $* {marker}=$seen\" >> {}\n{extra}\nexit 0\n",
        log.display()
    );
    let path = dir.join(name);
    std::fs::write(&path, script).expect("shim");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn tool(dir: &Path, name: &str, says: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\necho {says}\n")).expect("tool");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

struct Fixture {
    dir: tempfile::TempDir,
    shims: PathBuf,
    out: PathBuf,
}

fn fixture(spec: &str) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("plan.md"), PLAN).expect("plan");
    std::fs::write(dir.path().join("plan.run.yaml"), spec).expect("spec");
    let shims = dir.path().join("shims");
    std::fs::create_dir_all(&shims).expect("shims");
    let install = format!(
        "printf '#!/bin/sh\\necho installed\\n' > {0}/fl-test-tool; chmod +x {0}/fl-test-tool",
        shims.display()
    );
    for pm in ["apt-get", "dnf", "apk", "brew", "sudo"] {
        shim(
            &shims,
            pm,
            "install-approved",
            if pm == "apt-get" { &install } else { "" },
        );
    }
    for probe in ["which", "docker", "docker-compose", "tc"] {
        shim(&shims, probe, "checklist-complete", "");
    }
    let out = dir.path().join("sessions");
    Fixture { dir, shims, out }
}

impl Fixture {
    fn run(&self, args: &[&str], answers: Option<&str>) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_faultline"));
        cmd.args(["run", "plan.md", "--headless", "--out"])
            .arg(&self.out)
            .args(args)
            .current_dir(self.dir.path())
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin:/usr/sbin:/sbin", self.shims.display()),
            )
            .env("FL_OUT", &self.out);
        if let Some(text) = answers {
            let file = self.dir.path().join("answers.yaml");
            std::fs::write(&file, text).expect("answers");
            cmd.arg("--answers").arg(file);
        }
        cmd.output().expect("faultline runs")
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.shims.join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn package_calls(&self) -> Vec<String> {
        self.calls()
            .into_iter()
            .filter(|c| {
                ["apt-get", "dnf", "apk", "brew", "sudo"]
                    .iter()
                    .any(|p| c.starts_with(&format!("{p} ")))
            })
            .collect()
    }
}

fn verdict_of(out: &Output, id: &str) -> (String, String) {
    let session = common::session_of(out);
    let text = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let s = v["scenarios"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["id"] == id).cloned())
        .expect("scenario");
    let reason = s["reasons"]
        .as_array()
        .and_then(|r| r.last())
        .map(|r| r["answer"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    (
        s["verdict"].as_str().unwrap_or_default().to_string(),
        reason,
    )
}

#[test]
fn no_package_manager_call_after_a_decline_a_bare_yes_or_an_unanswered_question() {
    let f = fixture(SPEC);
    let declined = f.run(&["--yes"], Some("install.binary:fl-test-tool: decline\n"));
    let (verdict, reason) = verdict_of(&declined, "P1");
    assert_eq!(verdict, "INCONCLUSIVE-env", "{reason}");
    assert!(reason.contains("fl-test-tool"), "{reason}");
    let bare_yes = f.run(&["--yes"], None);
    assert_eq!(verdict_of(&bare_yes, "P1").0, "INCONCLUSIVE-env");
    let unanswered = f.run(&[], None);
    assert_eq!(unanswered.status.code(), Some(4), "nothing ran: BLOCKED");
    assert!(String::from_utf8_lossy(&unanswered.stderr).contains("capability."));
    assert_eq!(
        f.package_calls(),
        Vec::<String>::new(),
        "a package manager was called"
    );
}

#[test]
fn probes_run_only_after_every_checklist_answer_is_journaled() {
    let f = fixture(SPEC);
    let _ = f.run(&["--yes"], None);
    let probes: Vec<String> = f
        .calls()
        .into_iter()
        .filter(|c| {
            ["which ", "docker ", "docker-compose ", "tc "]
                .iter()
                .any(|p| c.starts_with(p))
        })
        .collect();
    assert!(
        !probes.is_empty(),
        "the docker / tc shims were never probed"
    );
    for call in &probes {
        assert!(
            call.ends_with("checklist-complete=1"),
            "probe before the answers: {call}"
        );
    }
    // With the question unanswered nothing is probed at all.
    let g = fixture(SPEC);
    let _ = g.run(&[], None);
    assert!(
        g.calls()
            .iter()
            .all(|c| c.starts_with("apt-get") || !c.is_empty())
    );
    assert!(g.calls().is_empty(), "{:?}", g.calls());
}

#[test]
fn an_approved_install_is_journaled_before_the_call_and_the_tool_is_reprobed() {
    let f = fixture(SPEC);
    let out = f.run(&["--yes"], Some("install.binary:fl-test-tool: approve\n"));
    let calls = f.package_calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        calls[0].starts_with("apt-get install -y fl-test-tool"),
        "{calls:?}"
    );
    assert!(
        calls[0].ends_with("install-approved=1"),
        "approval not journaled first: {calls:?}"
    );
    let (verdict, reason) = verdict_of(&out, "P1");
    assert_ne!(verdict, "INCONCLUSIVE-env", "{reason}");
    let ran = std::fs::read_to_string(f.dir.path().join("ran-with.txt")).expect("the workload ran");
    assert_eq!(ran.trim(), "installed");
}

#[test]
fn wait_then_the_capability_appearing_lets_the_scenario_run() {
    let f = fixture(SPEC);
    let shims = f.shims.clone();
    let late = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(2));
        tool(&shims, "fl-test-tool", "arrived-late");
    });
    let out = f.run(
        &["--yes"],
        Some("install.binary:fl-test-tool: decline\nmissing.binary:fl-test-tool: wait\n"),
    );
    late.join().expect("late tool");
    let (verdict, reason) = verdict_of(&out, "P1");
    assert_ne!(verdict, "INCONCLUSIVE-env", "{reason}");
    let ran = std::fs::read_to_string(f.dir.path().join("ran-with.txt")).expect("ran");
    assert_eq!(ran.trim(), "arrived-late");
}

#[test]
fn a_wait_taken_back_over_attach_json_asks_again_and_says_one_interval() {
    let f = fixture(SPEC);
    // Started detached: the questions wait for an attached operator (after the
    // answers file, which declines the install).
    let answers = f.dir.path().join("answers.yaml");
    std::fs::write(&answers, "install.binary:fl-test-tool: decline\n").expect("answers");
    let started = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["run", "plan.md", "--detach", "--out"])
        .arg(&f.out)
        .arg("--answers")
        .arg(&answers)
        .current_dir(f.dir.path())
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin:/usr/sbin:/sbin", f.shims.display()),
        )
        .env("FL_OUT", &f.out)
        .output()
        .expect("faultline --detach runs");
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let session = common::session_of(&started);
    let mut client = crate::support::attach::JsonClient::start(&session, &[], &[]);
    let within = std::time::Duration::from_secs(60);
    let missing = "missing.binary:fl-test-tool";
    let waiting = "waiting.binary:fl-test-tool";
    let mut asked_missing = 0;
    let ended = loop {
        let msg = client.next(within).expect("the run goes on to its end");
        match msg["type"].as_str() {
            Some("question") => {
                let q = &msg["question"];
                let id = q["id"].as_str().expect("id").to_string();
                if id == missing {
                    asked_missing += 1;
                    let prompt = q["prompt"].as_str().unwrap_or_default();
                    assert!(prompt.contains("every 1 s"), "{prompt}");
                    let wait = q["choices"]
                        .as_array()
                        .and_then(|c| c.iter().find(|c| c["value"] == "wait"))
                        .expect("wait is a choice");
                    assert!(
                        wait["meaning"]
                            .as_str()
                            .is_some_and(|m| m.contains("every 1 s")),
                        "{wait}"
                    );
                    // Wait the first time, then proceed once asked again.
                    client.answer(
                        &id,
                        if asked_missing == 1 {
                            "wait"
                        } else {
                            "proceed"
                        },
                    );
                } else if id == waiting {
                    assert_eq!(q["kind"], "stop-waiting", "{q}");
                    assert!(
                        q["prompt"]
                            .as_str()
                            .is_some_and(|p| p.contains("every 1 s")),
                        "{q}"
                    );
                    client.answer(&id, "stop waiting");
                } else {
                    client.answer(&id, q["default"].as_str().unwrap_or_default());
                }
            }
            Some("ended") => break msg,
            _ => {}
        }
    };
    assert_eq!(
        asked_missing, 2,
        "asked again after the wait was taken back: {ended}"
    );
    let lines = common::lines(&session.join("journal.jsonl"));
    let kinds_for = |kind: &str, id: &str| {
        lines
            .iter()
            .filter(|l| {
                l.kind == kind && (l.data["question"]["id"] == id || l.data["question"] == id)
            })
            .count()
    };
    assert_eq!(kinds_for("question-asked", missing), 2);
    assert_eq!(kinds_for("operator-answer", missing), 2);
    assert_eq!(kinds_for("operator-answer", waiting), 1);
    let at = |kind: &str| lines.iter().position(|l| l.kind == kind);
    let wait = lines
        .iter()
        .find(|l| l.kind == "capability-wait")
        .expect("the wait is journaled");
    assert_eq!(wait.data["every_ms"], 1000, "the status line's interval");
    assert!(
        at("capability-wait") < at("capability-wait-stopped"),
        "{:?}",
        lines.iter().map(|l| &l.kind).collect::<Vec<_>>()
    );
    let (verdict, reason) = {
        let text = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts");
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        let s = v["scenarios"][0].clone();
        (
            s["verdict"].as_str().unwrap_or_default().to_string(),
            s.to_string(),
        )
    };
    assert_eq!(
        verdict, "INCONCLUSIVE-env",
        "proceed after the take-back: {reason}"
    );
}

#[test]
fn a_substitute_really_runs_and_the_findings_call_it_degraded() {
    let f = fixture(SPEC);
    tool(&f.shims, "fl-other-tool", "substitute-ran");
    let out = f.run(
        &["--yes"],
        Some("capability.binary:fl-test-tool: substitute fl-other-tool\n"),
    );
    let ran = std::fs::read_to_string(f.dir.path().join("ran-with.txt")).expect("ran");
    assert_eq!(ran.trim(), "substitute-ran");
    let session = common::session_of(&out);
    let finding = std::fs::read_to_string(session.join("findings/P1.md")).expect("finding");
    assert!(finding.contains("Degraded approximation"), "{finding}");
    let report = std::fs::read_to_string(session.join("findings/report.md")).expect("report");
    assert!(report.contains("fl-other-tool"), "{report}");
    assert!(f.package_calls().is_empty());
}

/// A real package from Debian's mirror (CI sets FAULTLINE_REQUIRE_INSTALL=1 and runs as
/// root; elsewhere this says SKIP loudly).
#[test]
fn a_real_approved_install_turns_the_capability_present() {
    let root = nix::unistd::geteuid().is_root();
    let apt = Path::new("/usr/bin/apt-get").exists();
    if common::skipped(
        "INSTALL",
        (!(root && apt))
            .then(|| format!("a real install needs root and apt-get (root={root}, apt-get={apt})")),
    ) {
        return;
    }
    // Start from the package being absent, so the install is what makes it present.
    let _ = Command::new("apt-get")
        .args(["remove", "-y", "-q", "tree"])
        .output();
    let spec = r#"version: 1
requires:
  - need: "binary:tree"
    scenarios: [P1]
    var: tool
    package: tree
scenarios:
  P1:
    workload: { run: "${tool} --version > ran-with.txt", deadline: 10s }
    tiers: { smoke: { duration: 1s } }
"#;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("plan.md"),
        PLAN.replace(
            "| docker + docker compose | — | P1 | apt |\n| tc | — | P1 | apt |\n",
            "",
        ),
    )
    .expect("plan");
    std::fs::write(dir.path().join("plan.run.yaml"), spec).expect("spec");
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args([
            "run",
            "plan.md",
            "--headless",
            "--yes",
            "--approve-installs",
        ])
        .current_dir(dir.path())
        .output()
        .expect("faultline runs");
    let session = common::session_of(&out);
    let journal = std::fs::read_to_string(session.join("journal.jsonl")).expect("journal");
    let approved = journal
        .find("\"install-approved\"")
        .expect("approval journaled");
    let finished = journal.find("\"install-finished\"").expect("install ran");
    assert!(approved < finished);
    let (verdict, reason) = verdict_of(&out, "P1");
    assert_ne!(verdict, "INCONCLUSIVE-env", "{reason}\n{journal}");
    let ran = std::fs::read_to_string(dir.path().join("ran-with.txt")).expect("ran");
    assert!(ran.contains("tree v"), "{ran}");
}

#[test]
fn a_deferred_question_comes_up_when_its_scenario_is_reached() {
    let f = fixture(SPEC);
    tool(&f.shims, "fl-other-tool", "substitute-ran");
    let out = f.run(
        &["--yes"],
        Some(
            "capability.binary:fl-test-tool: defer\ndeferred.binary:fl-test-tool: substitute fl-other-tool\n",
        ),
    );
    let session = common::session_of(&out);
    let journal = std::fs::read_to_string(session.join("journal.jsonl")).expect("journal");
    let deferred = journal
        .find("\"capability-deferred\"")
        .expect("deferral journaled");
    let first_matrix = journal.find("\"capability-matrix\"").expect("matrix");
    let asked = journal
        .find("deferred.binary:fl-test-tool")
        .expect("the deferred question was asked");
    assert!(
        deferred < first_matrix && first_matrix < asked,
        "asked mid-run, after the preflight"
    );
    let ran = std::fs::read_to_string(f.dir.path().join("ran-with.txt")).expect("ran");
    assert_eq!(ran.trim(), "substitute-ran");
}

#[test]
fn the_answers_template_lists_every_question_and_starts_nothing() {
    let f = fixture(SPEC);
    let out = f.run(&["--answers-template"], None);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for id in [
        "capability.binary:fl-test-tool:",
        "install.binary:fl-test-tool: \"decline\"",
        "missing.binary:fl-test-tool: \"proceed\"",
        "capability.docker:",
        "P1.blame:",
    ] {
        assert!(text.contains(id), "{id} missing from:\n{text}");
    }
    // It is valid YAML the answers parser accepts.
    let parsed = faultline::session::operator::parse_answers("template", &text).expect("parses");
    assert!(parsed.contains_key("P1.bug-type"));
    assert!(!f.out.exists(), "a session directory was created");
    assert!(
        f.calls().is_empty(),
        "something was probed: {:?}",
        f.calls()
    );
}
