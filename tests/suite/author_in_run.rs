//! Author mode inside a run, through the real `faultline run` binary against a real
//! git repository holding a tiny Rust crate (no dependencies): without author mode the
//! SUT tree stays byte-identical; with it, the skeletons are written, journaled and
//! staged (never committed), each complete candidate is built, a built Rust test
//! drives its scenario's workload, a candidate that does not build leaves its scenario
//! INCONCLUSIVE-env through the failed precondition, and an incomplete one never
//! drives anything.

use crate::common;
use crate::common::Line;
use crate::support::repo;
use crate::support::tmux;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

const HISTORY_OP: &str = r#"{\"op_id\":\"1\",\"process\":\"p\",\"invoke_ts\":1,\"complete_ts\":2,\"op_type\":\"write\",\"key\":\"k\",\"input\":1,\"output\":null,\"error\":null,\"timeout\":false,\"node\":\"n\",\"fault_epoch\":null}"#;

/// One scenario: its target, skeleton language and body, and its run-spec block.
fn scenario(id: &str, target: &str, language: &str, skeleton: &str) -> String {
    format!(
        "\n### Scenario {id}: writes_are_kept_{id}\n\n\
         - **Falsifies if it FAILs:** C1\n- **Closes:** H1\n\
         - **Workload:** a client writing one key.\n- **Faults:** none.\n\
         - **Oracle:** the external checker over the JSONL history reports no anomaly.\n\
         - **Smoke budget:** 1 seed, 1 s.\n\
         - **Hardening budget:** not applicable — fixture.\n\
         - **Release budget:** not provided — fixture. Revisit when: never.\n\
         - **Target test file:** `{target}` (new)\n\
         - **Skeleton language:** {language}\n\
         - **Skeleton:**\n\n```{language}\n{skeleton}```\n\n\
         ```faultline\n\
         workload:\n  run: \"echo workload-ran-with-seed-${{seed}} in-$(basename $PWD); printf '%s\\\\n' '{HISTORY_OP}' > ${{artifacts}}/h.jsonl\"\n  deadline: 300s\n\
         history: {{ path: \"${{artifacts}}/h.jsonl\", format: jsonl }}\n\
         checker:\n  external: \"echo '{{\\\"valid\\\": true, \\\"ops_checked\\\": 1, \\\"ops_total\\\": 1, \\\"anomalies\\\": []}}'\"\n\
         tiers: {{ smoke: {{ duration: 1s }} }}\n```\n"
    )
}

/// S1: a complete Rust test; S2: a shell test that does not parse; S3: a Rust test
/// whose skeleton marks a faults region no binding fills (incomplete); S4: a complete
/// shell test; S5: a complete Python test two folders below the SUT root; S6: a
/// complete Go test in a package two folders below the SUT root.
fn plan() -> String {
    let mut text = String::from(
        "# Test Plan: authoring-in-run\n\n## 1b. Claims under test\n\n\
         | ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n\
         | C1 | Writes are kept. | liveness | test | no |\n\n\
         ## 4. Failure hypotheses\n\n- H1. **Loss** — a write is lost.\n  - Could falsify: C1\n\n\
         ## 7. Scenarios\n",
    );
    let header = |id: &str, c: &str| {
        format!("{c} AUTO-GENERATED from test plan: authoring-in-run\n{c} Scenario: {id}\n")
    };
    text.push_str(&scenario(
        "S1",
        "tests/kept_writes.rs",
        "rust",
        &format!(
            "{}#[test]\nfn writes_are_kept() {{\n    // TODO workload\n    // TODO oracle\n}}\n",
            header("S1", "//")
        ),
    ));
    text.push_str(&scenario(
        "S2",
        "tests/broken.sh",
        "shell",
        &format!("{}if then fi\n# TODO workload\n", header("S2", "#")),
    ));
    text.push_str(&scenario(
        "S3",
        "tests/partial.rs",
        "rust",
        &format!(
            "{}#[test]\nfn partial() {{\n    // TODO workload\n    // TODO faults\n}}\n",
            header("S3", "//")
        ),
    ));
    text.push_str(&scenario(
        "S4",
        "tests/kept_writes.sh",
        "shell",
        &format!("{}set -eu\n# TODO workload\n", header("S4", "#")),
    ));
    text.push_str(&scenario(
        "S5",
        "tests/chaos/test_kept.py",
        "python",
        &format!(
            "{}def test_writes_are_kept():\n    # TODO workload\n    # TODO oracle\n",
            header("S5", "#")
        ),
    ));
    text.push_str(&scenario(
        "S6",
        "pkg/kv/kept_test.go",
        "go",
        &format!(
            "{}package kv\n\nimport \"testing\"\n\nfunc TestWritesAreKept(t *testing.T) {{\n\t// TODO workload\n\t// TODO oracle\n}}\n",
            header("S6", "//")
        ),
    ));
    text
}

/// A committed git repository with a dependency-free crate and its Cargo.lock.
fn sut(work: &Path) -> PathBuf {
    let repo = work.join("sut");
    std::fs::create_dir_all(repo.join("src")).expect("src");
    std::fs::create_dir_all(repo.join("tests")).expect("tests");
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"kv\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .expect("manifest");
    std::fs::write(repo.join("src/lib.rs"), "pub fn put() {}\n").expect("lib");
    std::fs::write(
        repo.join("go.mod"),
        "module example.invalid/kv\n\ngo 1.19\n",
    )
    .expect("go.mod");
    std::fs::write(
        repo.join("tests/smoke.rs"),
        "#[test]\nfn smoke() {\n    kv::put();\n}\n",
    )
    .expect("sibling");
    let lock = Command::new("cargo")
        .args(["generate-lockfile", "--offline"])
        .current_dir(&repo)
        .output()
        .expect("cargo runs");
    assert!(
        lock.status.success(),
        "{}",
        String::from_utf8_lossy(&lock.stderr)
    );
    repo::git(&repo, &["init", "-q"]);
    repo::git(&repo, &["config", "user.email", "t@example.invalid"]);
    repo::git(&repo, &["config", "user.name", "t"]);
    repo::git(&repo, &["add", "."]);
    repo::git(&repo, &["commit", "-q", "-m", "base"]);
    repo
}

fn run(work: &Path, repo: &Path, args: &[&str], author_env: Option<&str>) -> Output {
    std::fs::write(work.join("plan.md"), plan()).expect("plan");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_faultline"));
    cmd.args(["run", "plan.md", "--headless", "--sut"])
        .arg(repo)
        .arg("--out")
        .arg(work.join("sessions"))
        .args(args)
        .current_dir(work)
        .env_remove("DIST_TEST_AUTHOR_MODE");
    if let Some(value) = author_env {
        cmd.env("DIST_TEST_AUTHOR_MODE", value);
    }
    cmd.output().expect("faultline runs")
}

/// The records of `kind` for scenario `id`.
fn of<'a>(all: &'a [Line], kind: &str, id: &str) -> Vec<&'a Line> {
    all.iter()
        .filter(|r| r.kind == kind && r.scope.scenario.as_deref() == Some(id))
        .collect()
}

fn verdict(session: &Path, id: &str) -> (String, String) {
    let text = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    let s = v["scenarios"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["id"] == id))
        .cloned()
        .unwrap_or_default();
    (
        s["verdict"].as_str().unwrap_or_default().to_string(),
        s["reasons"].to_string(),
    )
}

#[test]
fn without_author_mode_the_sut_tree_stays_byte_identical() {
    let work = tempfile::tempdir().expect("tempdir");
    let repo = sut(work.path());
    let before = repo::tree(&repo);
    let out = run(work.path(), &repo, &["--yes"], Some("0"));
    let session = common::session_of(&out);
    assert_eq!(repo::tree(&repo), before, "the run wrote into the SUT");
    assert_eq!(
        repo::git(&repo, &["status", "--porcelain"]),
        "",
        "nothing staged"
    );
    let all = common::records(&session);
    assert!(
        !all.iter().any(|r| r.kind.starts_with("author-")),
        "author mode ran without being asked"
    );
    // The run spec's own workload ran.
    let started = of(&all, "command-started", "S1");
    assert!(
        started.iter().any(|r| r.data["name"] == "workload"
            && r.data["command"]
                .as_str()
                .is_some_and(|c| c.starts_with("echo"))),
        "{started:?}"
    );
}

#[test]
fn author_mode_builds_the_authored_test_and_runs_the_workload_through_it() {
    let work = tempfile::tempdir().expect("tempdir");
    let repo = sut(work.path());
    let before = repo::tree(&repo);
    let out = run(work.path(), &repo, &["--author", "--yes"], None);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let session = common::session_of(&out);
    let all = common::records(&session);

    // Written, journaled with its sha, staged — never committed; nothing else written.
    let written = of(&all, "author-written", "S1");
    assert_eq!(written.len(), 1, "{said}");
    assert_eq!(written[0].data["path"], "tests/kept_writes.rs");
    assert_eq!(written[0].data["incomplete"], false);
    assert_eq!(written[0].data["sha256"].as_str().map(str::len), Some(64));
    assert_eq!(of(&all, "author-written", "S3")[0].data["incomplete"], true);
    let mut staged: Vec<String> = repo::git(&repo, &["diff", "--cached", "--name-only"])
        .lines()
        .map(str::to_string)
        .collect();
    staged.sort();
    assert_eq!(
        staged,
        [
            "pkg/kv/kept_test.go",
            "tests/broken.sh",
            "tests/chaos/test_kept.py",
            "tests/kept_writes.rs",
            "tests/kept_writes.sh",
            "tests/partial.rs"
        ]
    );
    assert_eq!(
        repo::git(&repo, &["rev-list", "--count", "HEAD"]).trim(),
        "1"
    );
    let mut after = repo::tree(&repo);
    for file in &staged {
        assert!(after.remove(&repo.join(file)).is_some(), "{file}");
    }
    assert_eq!(
        after, before,
        "author mode wrote outside its declared targets"
    );
    let diff = std::fs::read_to_string(session.join("artifacts/author/staged.diff"))
        .expect("staged diff saved");
    assert!(diff.contains("+++ b/tests/kept_writes.rs"), "{diff}");

    // The workload region is real code.
    let source = std::fs::read_to_string(repo.join("tests/kept_writes.rs")).expect("authored");
    assert!(
        source.contains("std::process::Command::new(\"sh\")"),
        "{source}"
    );

    // Built before it ran, the command and exit code journaled.
    let built = of(&all, "author-build", "S1");
    assert_eq!(built[0].data["exit_code"], 0, "{built:?}");
    assert!(
        built[0].data["command"]
            .as_str()
            .is_some_and(|c| c.contains(
                "cargo test --locked --manifest-path Cargo.toml --no-run --test kept_writes"
            )),
        "{built:?}"
    );
    // S1's workload ran through the authored test: cargo ran it, and the bound
    // command inside it saw the seed faultline set.
    let driver = of(&all, "author-driver", "S1");
    assert_eq!(driver[0].data["driver"], true, "{driver:?}");
    let workload = of(&all, "command-started", "S1")
        .into_iter()
        .find(|r| r.data["name"] == "workload")
        .expect("workload started");
    let command = workload.data["command"].as_str().unwrap_or_default();
    assert!(
        command.contains("--test kept_writes -- --nocapture"),
        "{command}"
    );
    let log = std::fs::read_to_string(session.join("logs/S1/seed-1/workload.stdout.log"))
        .expect("workload log");
    assert!(log.contains("workload-ran-with-seed-1"), "{log}");
    assert!(log.contains("test writes_are_kept ... ok"), "{log}");
    assert!(!of(&all, "oracle-result", "S1").is_empty(), "{said}");
    let preconditions = of(&all, "precondition", "S1");
    assert_eq!(preconditions[0].data["ok"], true, "{preconditions:?}");
    assert_ne!(verdict(&session, "S1").0, "INCONCLUSIVE-env");

    // S2 does not parse: its build failed, and the decision tree says so.
    assert_ne!(of(&all, "author-build", "S2")[0].data["exit_code"], 0);
    let (s2, reasons) = verdict(&session, "S2");
    assert_eq!(s2, "INCONCLUSIVE-env", "{reasons}");
    assert!(
        reasons.contains("authored test broken.sh builds"),
        "{reasons}"
    );
    let findings = std::fs::read_to_string(session.join("findings/S2.md")).expect("findings");
    assert!(
        findings.contains("authored test broken.sh builds"),
        "{findings}"
    );

    // S3 is incomplete: never built, never the driver; the spec's workload ran it.
    assert!(of(&all, "author-build", "S3").is_empty());
    let refused = of(&all, "author-driver", "S3");
    assert_eq!(refused[0].data["driver"], false);
    assert!(said.contains("incomplete"), "{said}");
    assert!(
        of(&all, "command-started", "S3")
            .iter()
            .any(|r| r.data["name"] == "workload"
                && r.data["command"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("echo"))),
        "{all:?}"
    );
}

#[test]
fn the_environment_variable_turns_author_mode_on() {
    let work = tempfile::tempdir().expect("tempdir");
    let repo = sut(work.path());
    let out = run(work.path(), &repo, &["--only", "S2", "--yes"], Some("1"));
    let session = common::session_of(&out);
    let all = common::records(&session);
    assert_eq!(of(&all, "author-written", "S2").len(), 1);
    assert!(
        of(&all, "author-written", "S1").is_empty(),
        "--only honoured"
    );
    assert_eq!(
        repo::git(&repo, &["diff", "--cached", "--name-only"]).trim(),
        "tests/broken.sh"
    );
}

/// Runs scenario `id` alone in author mode against a fresh SUT: the work directory
/// (kept alive by the caller), the SUT, the session and its journal.
fn author_only(id: &str) -> (tempfile::TempDir, PathBuf, PathBuf, Vec<Line>) {
    let work = tempfile::tempdir().expect("tempdir");
    let repo = sut(work.path());
    let out = run(
        work.path(),
        &repo,
        &["--author", "--yes", "--only", id],
        None,
    );
    let session = common::session_of(&out);
    let all = common::records(&session);
    (work, repo, session, all)
}

#[test]
fn a_shell_test_drives_its_workload_too() {
    let (_work, _, session, all) = author_only("S4");
    assert_eq!(
        of(&all, "author-build", "S4")[0].data["command"],
        "bash -n tests/kept_writes.sh"
    );
    let workload = of(&all, "command-started", "S4")
        .into_iter()
        .find(|r| r.data["name"] == "workload")
        .expect("workload started");
    assert_eq!(
        workload.data["command"],
        format!(
            "seed='1' artifacts='{}' bash tests/kept_writes.sh",
            session.join("artifacts/S4/seed-1").display()
        )
    );
    let log = std::fs::read_to_string(session.join("logs/S4/seed-1/workload.stdout.log"))
        .expect("workload log");
    assert!(log.contains("workload-ran-with-seed-1"), "{log}");
    assert!(!of(&all, "oracle-result", "S4").is_empty());
}

#[test]
fn a_python_test_drives_its_workload_from_the_sut_root_without_pytest() {
    let (_work, repo, session, all) = author_only("S5");
    let build = of(&all, "author-build", "S5");
    assert_eq!(build.len(), 1, "{all:?}");
    assert!(
        build[0].data["command"]
            .as_str()
            .is_some_and(|c| c.contains("python3 -m py_compile tests/chaos/test_kept.py")),
        "{:?}",
        build[0].data
    );
    let workload = of(&all, "command-started", "S5")
        .into_iter()
        .find(|r| r.data["name"] == "workload")
        .unwrap_or_else(|| {
            panic!(
                "workload never started: {}\n{}",
                std::fs::read_to_string(session.join("logs/author/S5-build.stderr.log"))
                    .unwrap_or_default(),
                std::fs::read_to_string(repo.join("tests/chaos/test_kept.py")).unwrap_or_default()
            )
        });
    let command = workload.data["command"].as_str().expect("command");
    assert!(
        command.contains("python3 -c") && command.contains("test_kept.py"),
        "{command}"
    );
    // The authored test ran the bound workload command, from the SUT root.
    let log = std::fs::read_to_string(session.join("logs/S5/seed-1/workload.stdout.log"))
        .expect("workload log");
    assert!(log.contains("workload-ran-with-seed-1 in-sut"), "{log}");
    assert!(!of(&all, "oracle-result", "S5").is_empty());
    // Only the declared target is new in the SUT: no bytecode cache beside it.
    let status = repo::git(&repo, &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(status.trim(), "A  tests/chaos/test_kept.py", "{status}");
}

/// Whether `go` is installed; says so loudly when not, fails under FAULTLINE_REQUIRE_GO=1.
fn go_available() -> bool {
    let found = Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    !common::skipped("GO", (!found).then(|| "go is not installed".to_string()))
}

#[test]
fn a_go_test_drives_its_workload_from_the_sut_root() {
    if !go_available() {
        return;
    }
    let (_work, repo, session, all) = author_only("S6");
    let written = std::fs::read_to_string(repo.join("pkg/kv/kept_test.go")).expect("written");
    let build = of(&all, "author-build", "S6");
    assert_eq!(build.len(), 1, "{all:?}");
    assert_eq!(
        build[0].data["exit_code"], 0,
        "{:?}\n{written}",
        build[0].data
    );
    let workload = of(&all, "command-started", "S6")
        .into_iter()
        .find(|r| r.data["name"] == "workload")
        .unwrap_or_else(|| panic!("workload never started\n{written}"));
    let command = workload.data["command"].as_str().expect("command");
    assert!(
        command.contains("go test -count=1 -v -run '^(TestWritesAreKept)$' ./pkg/kv"),
        "{command}"
    );
    let log = std::fs::read_to_string(session.join("logs/S6/seed-1/workload.stdout.log"))
        .expect("workload log");
    assert!(log.contains("workload-ran-with-seed-1 in-sut"), "{log}");
    assert!(log.contains("--- PASS: TestWritesAreKept"), "{log}");
    assert_ne!(verdict(&session, "S6").0, "INCONCLUSIVE-env", "{log}");
    assert!(!of(&all, "oracle-result", "S6").is_empty());
    // Only the declared target is new in the SUT: the build cache is the session's.
    let status = repo::git(&repo, &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(status.trim(), "A  pkg/kv/kept_test.go", "{status}");
}

#[test]
fn an_existing_target_nobody_answers_for_stops_the_session_before_any_scenario() {
    let work = tempfile::tempdir().expect("tempdir");
    let repo = sut(work.path());
    std::fs::write(repo.join("tests/kept_writes.rs"), "// the team's own\n").expect("own");
    repo::git(&repo, &["add", "."]);
    repo::git(&repo, &["commit", "-q", "-m", "own test"]);
    let before = repo::tree(&repo);
    // The answers template lists the question, with its default.
    let template = run(
        work.path(),
        &repo,
        &["--author", "--answers-template"],
        None,
    );
    let listed = String::from_utf8_lossy(&template.stdout);
    assert!(listed.contains("\nauthor.S1: \"skip\"\n"), "{listed}");
    assert!(
        !listed.contains("author.S2"),
        "only existing targets are asked about"
    );
    let out = run(work.path(), &repo, &["--author", "--only", "S1"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("author.S1"), "{stderr}");
    assert_eq!(
        repo::tree(&repo),
        before,
        "nothing may be written without an answer"
    );
    let session = common::session_of(&out);
    let (verdict, reasons) = verdict(&session, "S1");
    assert_eq!(verdict, "NOT-RUN");
    assert!(reasons.contains("author.S1"), "{reasons}");
}

/// The real binary in tmux: once the run ended, `d` opens the staged diff.
#[test]
fn in_the_terminal_ui_d_opens_the_staged_diff() {
    if !tmux::available("the staged-diff terminal test") {
        return;
    }
    let work = tempfile::tempdir().expect("tempdir");
    let repo = sut(work.path());
    std::fs::write(work.path().join("plan.md"), plan()).expect("plan");
    let command = format!(
        "cd {} && LANG=C.UTF-8 {} run plan.md --sut {} --out {} --author --only S4; sleep 60",
        work.path().display(),
        env!("CARGO_BIN_EXE_faultline"),
        repo.display(),
        work.path().join("sessions").display()
    );
    let tmux = tmux::Tmux::start("fl-author", &command);
    // The status line offers the diff once author mode staged something.
    tmux.wait_for("d diff", Duration::from_secs(60));
    tmux.send(&["d"]);
    let shown = tmux.wait_for("Staged by author mode", Duration::from_secs(60));
    tmux.send(&["q"]);
    assert!(shown.contains("+++ b/tests/kept_writes.sh"), "{shown}");
    assert!(shown.contains("+# Provenance"), "{shown}");
}
