//! The whole method on the embedded demo, for real: `faultline demo` / `faultline run`
//! as child processes, then the session directory they leave is read back.
//! Tests run one at a time, and not beside another module's demo: the demo's rate
//! checks should not compete for 2 cores.

use crate::common;
use crate::common::Line;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::tree;

fn faultline(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("faultline runs")
}

fn verdicts(session: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts.json");
    serde_json::from_str(&text).expect("verdicts.json is JSON")
}

/// Every process group the journal says was started is gone, and every injected
/// fault has a heal event.
fn assert_clean_exit(records: &[Line]) {
    for r in records.iter().filter(|r| r.kind == "command-started") {
        assert!(
            !common::journaled_group_alive(r),
            "process group {} ({}) is still alive",
            r.data["pgid"],
            r.data["name"]
        );
    }
    let count = |kind: &str| records.iter().filter(|r| r.kind == kind).count();
    assert!(count("fault-injected") > 0, "no fault was injected at all");
    assert_eq!(
        count("fault-injected"),
        count("fault-healed"),
        "every injected fault needs a heal event"
    );
}

/// The process groups `records` say were started that are alive now.
fn live_groups(records: &[Line]) -> Vec<i32> {
    records
        .iter()
        .filter(|r| r.kind == "command-started" && common::journaled_group_alive(r))
        .filter_map(|r| r.data["pgid"].as_i64())
        .map(|p| p as i32)
        .collect()
}

/// The first run is the shared one (`common::demo_run`, the same command in a tree of
/// its own with a `README`); the rerun goes into the same session root.
/// Every seed whose history was checked left its throughput and latency series under
/// `metrics/<id>/<label>.json|csv`, and the series adds up to the history's ops.
fn assert_metrics_per_seed(session: &Path, records: &[Line]) {
    let mut label: BTreeMap<String, String> = BTreeMap::new();
    let mut checked: BTreeSet<(String, String)> = BTreeSet::new();
    for r in records {
        let id = r
            .scope
            .arm
            .clone()
            .or_else(|| r.scope.scenario.clone())
            .unwrap_or_default();
        match r.kind.as_str() {
            "iteration-started" => {
                let l = r.data["label"].as_str().unwrap_or_default().to_string();
                label.insert(id, l);
            }
            "oracle-result" => {
                if let Some(l) = label.get(&id) {
                    checked.insert((id, l.clone()));
                }
            }
            _ => {}
        }
    }
    assert!(checked.len() >= 8, "seeds checked: {checked:?}");
    for (id, l) in &checked {
        let dir = session
            .join("metrics")
            .join(faultline::session::dir::file_stem_for_id(id));
        let json = std::fs::read_to_string(dir.join(format!("{l}.json")))
            .unwrap_or_else(|e| panic!("{id} {l}: no metrics json: {e}"));
        let series: faultline::oracle::series::Series =
            serde_json::from_str(&json).expect("metrics json reads as a series");
        let counted: u32 = series.buckets.iter().map(|b| b.total()).sum();
        assert!(
            series.ops > 0 && counted as usize == series.ops,
            "{id} {l}: {counted} ops in buckets of {}",
            series.ops
        );
        assert!(
            series.buckets.iter().any(|b| b.p99_ms.is_some()),
            "{id} {l}: no latency"
        );
        let csv = std::fs::read_to_string(dir.join(format!("{l}.csv"))).expect("metrics csv");
        assert_eq!(csv.lines().count(), series.buckets.len() + 1, "{id} {l}");
    }
    // D3's first seed pauses a spare and kills the primary: two windows, named.
    let d3: faultline::oracle::series::Series = serde_json::from_str(
        &std::fs::read_to_string(session.join("metrics/D3/seed-1.json")).expect("D3 seed-1"),
    )
    .expect("series");
    let names: Vec<&str> = d3.windows.iter().map(|w| w.fault.as_str()).collect();
    assert_eq!(names, ["pause-spare", "kill-primary"], "{:?}", d3.windows);
}

/// `findings/junit.xml` is valid JUnit with one testcase per scenario and arm, each
/// failed, skipped or passed as its verdict in `verdicts.json` says, its time taken
/// from the journal and its attachments files that exist.
fn assert_junit(session: &Path, v: &serde_json::Value) {
    use crate::report_junit::{junit_outcome, parse, validate};
    let path = session.join("findings/junit.xml");
    if let Some(valid) = validate(&path) {
        assert_eq!(valid, Ok(()), "the demo's junit.xml against the schema");
    }
    let doc = parse(&std::fs::read_to_string(&path).expect("junit.xml"));
    let mut want: BTreeMap<&str, &str> = BTreeMap::new();
    for s in v["scenarios"].as_array().expect("scenarios") {
        let runs = s["runs"].as_array().map(|r| r.iter().collect::<Vec<_>>());
        let decided = runs.filter(|r| !r.is_empty()).unwrap_or_else(|| vec![s]);
        for r in decided {
            let id = r["id"].as_str().expect("id");
            want.insert(id, junit_outcome(r["verdict"].as_str().unwrap_or("none")));
        }
    }
    let got: BTreeMap<&str, &str> = doc
        .cases
        .iter()
        .map(|(id, c)| (id.as_str(), c.outcome.as_str()))
        .collect();
    assert_eq!(got, want, "junit.xml testcases against verdicts.json");
    assert!(
        want.contains_key("D5/api"),
        "arms are testcases of their own"
    );
    let d3 = &doc.cases["D3"];
    assert!(
        d3.failure_type.starts_with("FAIL") && d3.failure_text.contains("(journal #"),
        "D3's failure carries its reason chain: {d3:#?}"
    );
    assert!(doc.cases["D1"].time > 0.0, "D1 took no time");
    for (id, case) in &doc.cases {
        let attached: Vec<&str> = case
            .system_out
            .lines()
            .filter_map(|l| l.strip_prefix("[[ATTACHMENT|")?.strip_suffix("]]"))
            .collect();
        assert!(!attached.is_empty(), "{id} attaches nothing");
        if id == "D3" {
            assert!(
                attached.iter().any(|f| f.ends_with("-throughput.svg")),
                "D3 attaches its figures: {attached:?}"
            );
        }
        for file in attached {
            assert!(
                Path::new(file).is_file(),
                "{id} attaches {file}, not a file"
            );
        }
    }
}

#[test]
fn the_demo_reaches_all_five_verdicts_from_evidence_and_again_on_rerun() {
    let run = common::demo_run();
    let root = &run.root;
    let demo = || {
        faultline(
            &[
                "demo",
                "--headless",
                "--yes",
                "--out",
                root.to_str().expect("utf-8"),
            ],
            &run.work,
        )
    };
    let (out, took, before) = (&run.out, run.took, &run.before);
    assert_eq!(
        out.status.code(),
        Some(1),
        "session FAIL expected\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < Duration::from_secs(180), "the demo took {took:?}");
    let session = common::session_of(out);
    assert!(session.starts_with(root));
    assert_eq!(
        &tree(&run.work, root),
        before,
        "the demo wrote outside the session root"
    );

    let v = verdicts(&session);
    assert_eq!(v["session_verdict"], "FAIL");
    let expected: BTreeMap<String, String> = [
        ("D1", "PASS-smoke"),
        ("D2", "PASS-hardening"),
        ("D3", "FAIL-reproducible"),
        ("D4", "INCONCLUSIVE-fault-not-proven"),
        ("D5", "PARTIAL-surface"),
        // fl-client: a session-local install --yes never approves.
        ("D6", "INCONCLUSIVE-env"),
        // demo-skewd: nothing can install it.
        ("D7", "INCONCLUSIVE-env"),
        // n2 serves reads half a second behind the primary's acknowledgements.
        ("D8", "FAIL-reproducible"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(common::verdicts_by_id(&session), expected);

    // Every reason chain cites journal records that exist.
    let records = common::whole_records(&session);
    let seqs: BTreeSet<u64> = records.iter().map(|r| r.seq).collect();
    for scenario in v["scenarios"].as_array().expect("scenarios") {
        let reasons = scenario["reasons"].as_array().expect("reasons");
        assert!(
            !reasons.is_empty(),
            "{} has no reason chain",
            scenario["id"]
        );
        let cited: Vec<u64> = reasons
            .iter()
            .flat_map(|r| r["cites"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c.as_u64())
            .collect();
        assert!(
            !cited.is_empty(),
            "{} cites no journal event",
            scenario["id"]
        );
        assert!(
            cited.iter().all(|c| seqs.contains(c)),
            "{} cites a missing record",
            scenario["id"]
        );
    }
    assert_clean_exit(&records);
    assert_metrics_per_seed(&session, &records);
    let d7 = v["scenarios"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["id"] == "D7"))
        .expect("D7")
        .to_string();
    assert!(
        d7.contains("demo-skewd"),
        "D7 names the missing capability: {d7}"
    );
    let report = std::fs::read_to_string(session.join("findings/report.md")).expect("report");
    assert!(
        report.contains("INCONCLUSIVE-env") && report.contains("demo-skewd"),
        "the report gives D7's one-line reason"
    );
    // It names the SUT and the session root, so it runs from any directory.
    let (work, root) = (&common::demo_run().work, &common::demo_run().root);
    assert!(
        report.contains(&format!(
            "faultline demo --sut {} --out {} --only D3 --tier hardening",
            work.display(),
            root.display()
        )),
        "the reproducer re-runs the demo's D3 from anywhere"
    );
    // D3's finding lists its lost writes: op id, key, value, and the fault window.
    let finding = v["scenarios"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["id"] == "D3"))
        .map(|s| s["finding"].clone())
        .expect("D3's finding in verdicts.json");
    let listed: Vec<&str> = finding["anomalies"]
        .as_array()
        .map(|a| a.iter().filter_map(|l| l.as_str()).collect())
        .unwrap_or_default();
    let total = finding["anomalies_total"].as_u64().unwrap_or(0);
    assert!(
        !listed.is_empty() && listed.len() as u64 <= total && listed.len() <= 20,
        "{} listed of {total}: {finding}",
        listed.len()
    );
    for line in &listed {
        let key = line
            .split(") write ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .unwrap_or_else(|| panic!("no key in {line}"));
        assert!(
            line.starts_with(&format!("acknowledged write to `{key}`"))
                && line.contains(&format!("op {} (process ", &key[1..]))
                && line.contains("\u{2190} \"v")
                && (line.contains("outside every fault window") || line.contains("during ")),
            "{line}"
        );
    }
    let d3 = std::fs::read_to_string(session.join("findings/D3.md")).expect("D3.md");
    assert!(
        d3.contains(&format!("- **Anomalies:** {total}")) && d3.contains(listed[0]),
        "the finding file lists the anomalies"
    );
    assert!(report.contains(listed[0]), "the report lists them too");
    let log = std::fs::read_to_string(session.join("session-log.md")).expect("session log");
    assert!(
        log.contains("binary:fl-client") && log.contains("install"),
        "matrix in the session log"
    );
    for file in [
        "session-log.md",
        "findings/report.md",
        "findings/D3.md",
        "findings/D5.md",
    ] {
        assert!(session.join(file).is_file(), "{file} missing");
    }
    assert_junit(&session, &v);

    let again = demo();
    assert_eq!(again.status.code(), Some(1));
    let second = common::session_of(&again);
    assert_ne!(second, session, "a rerun gets its own session directory");
    assert_eq!(common::verdicts_by_id(&second), expected);
}

/// A copy of the demo plan and run spec in `dir`, with `edit` applied to the run spec.
fn mutated_demo(dir: &Path, edit: impl Fn(&str) -> String) -> PathBuf {
    let plan = dir.join("plan.md");
    std::fs::write(&plan, faultline::launch::DEMO_PLAN).expect("plan copy");
    let spec = edit(faultline::launch::DEMO_RUN_SPEC);
    assert_ne!(
        spec,
        faultline::launch::DEMO_RUN_SPEC,
        "the mutation changed nothing"
    );
    std::fs::write(dir.join("plan.run.yaml"), spec).expect("spec copy");
    plan
}

fn run_mutant(
    edit: impl Fn(&str) -> String,
    only: &str,
) -> (PathBuf, BTreeMap<String, String>, tempfile::TempDir) {
    run_mutant_at(edit, only, "hardening")
}

fn run_mutant_at(
    edit: impl Fn(&str) -> String,
    only: &str,
    tier: &str,
) -> (PathBuf, BTreeMap<String, String>, tempfile::TempDir) {
    let work = tempfile::tempdir().expect("tempdir");
    let plan = mutated_demo(work.path(), edit);
    let out = faultline(
        &[
            "run",
            plan.to_str().expect("utf-8"),
            "--headless",
            "--yes",
            "--tier",
            tier,
            "--only",
            only,
        ],
        work.path(),
    );
    let session = common::session_of(&out);
    let v = common::verdicts_by_id(&session);
    (session, v, work)
}

#[test]
fn aiming_the_misaimed_pause_at_a_follower_turns_it_into_pass_hardening() {
    let (_, v, _keep) = run_mutant(
        |s| s.replace("target: { service: n4 }", "target: { service: n3 }"),
        "D4",
    );
    assert_eq!(v["D4"], "PASS-hardening");
    assert_eq!(v["D1"], "NOT-RUN");
}

#[test]
fn removing_the_planted_bug_removes_the_fail() {
    let (session, v, _keep) = run_mutant(|s| s.replace(" --ack-before-replicate", ""), "D3");
    assert!(!v["D3"].starts_with("FAIL"), "D3 still {}", v["D3"]);
    let records = common::whole_records(&session);
    assert!(
        records.iter().any(|r| r.kind == "oracle-result"),
        "the checker never ran"
    );
}

#[test]
fn stopping_the_workload_halfway_fails_check_one_and_allows_no_pass() {
    let (session, v, _keep) = run_mutant(
        |s| s.replace("--rate 50", "--rate 50 --halt-at 0.5"),
        "D1,D2",
    );
    assert!(!v["D1"].starts_with("PASS"), "D1 {}", v["D1"]);
    assert!(!v["D2"].starts_with("PASS"), "D2 {}", v["D2"]);
    let all = verdicts(&session);
    let d1 = &all["scenarios"][0];
    let text = d1.to_string();
    assert!(
        text.contains("gbb-1-workload-rate") && text.contains("failed"),
        "gbb-1 should fail: {text}"
    );
}

/// D1 with a second checker whose threshold no run can meet: both judge the same
/// history (two oracle results per seed), and the scenario fails on the second alone.
#[test]
fn a_second_checker_judges_the_same_history_and_its_anomaly_fails_the_scenario() {
    let (session, v, _keep) = run_mutant_at(
        |s| {
            s.replace(
                "      final_state: \"${store} dump --target 127.0.0.1:${port:n2} --out ${artifacts}/final.json\"\n",
                "      final_state: \"${store} dump --target 127.0.0.1:${port:n2} --out ${artifacts}/final.json\"\n    checkers:\n      - { builtin: \"slo max_ms=0\" }\n",
            )
        },
        "D1",
        "smoke",
    );
    assert!(v["D1"].starts_with("FAIL"), "D1 {}", v["D1"]);
    let results: Vec<String> = common::whole_records(&session)
        .iter()
        .filter(|r| r.kind == "oracle-result")
        .map(|r| r.data["checker"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        &results[..2],
        ["no-lost-ack", "slo"],
        "both checkers judged the first seed"
    );
    let finding = std::fs::read_to_string(session.join("findings/D1.md")).expect("D1.md");
    assert!(
        finding.contains("- **Anomalies:** 1\n  - slo: max_ms is"),
        "{finding}"
    );
}

/// The primary paused for 5 s of a 9 s run: the client's writes time out one after
/// another and it invokes about 2 ops/s instead of 50 — an outage of the SUT, not of the
/// workload. gbb-1 passes, and the outage is in the finding with its start and length.
#[test]
fn a_workload_that_keeps_trying_through_a_sut_outage_passes_check_one() {
    let (session, v, _keep) = run_mutant_at(
        |s| {
            s.replace(
                "process: { signal: SIGSTOP, target: { service: n3 } }",
                "process: { signal: SIGSTOP, target: { service: n1 } }",
            )
            .replace("after: 1s\n        duration: 1500ms", "after: 2s\n        duration: 5s")
            .replace(
                "log: { service: n1, pattern: \"replication to n3 timed out\" }\n            within: 2s",
                "history: { path: \"${artifacts}/history.jsonl\" }\n            within: 3s",
            )
            .replace(
                "tiers: &fault_tiers\n      smoke: { duration: 3s }",
                "tiers: &fault_tiers\n      smoke: { duration: 9s }",
            )
        },
        "D2",
        "smoke",
    );
    let finding = std::fs::read_to_string(session.join("findings").join("D2.md")).expect("D2.md");
    let line = finding
        .lines()
        .find(|l| l.contains("gbb-1-workload-rate"))
        .expect("gbb-1 in the finding's audit table");
    assert!(v["D2"].starts_with("PASS"), "D2 {}: {line}", v["D2"]);
    assert!(line.contains("| passed |"), "gbb-1 should pass: {line}");
    // "at +2.0 s for 5.1 s: 11 ops invoked (0 acked, 10 timed out, 1 failed)"
    let outage = line
        .split("SUT outages (clients stalled in ops, not idle): at +")
        .nth(1)
        .unwrap_or_else(|| panic!("no outage in: {line}"));
    let number = |after: &str| -> f64 {
        outage
            .split(after)
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no number after {after:?} in {outage}"))
    };
    let start: f64 = outage
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("start");
    let length = number("for ");
    let invoked = number(": ");
    assert!(
        (1.5..=2.6).contains(&start),
        "outage start {start}: {outage}"
    );
    assert!(
        (4.6..=6.0).contains(&length),
        "outage length {length}: {outage}"
    );
    assert!(
        (5.0..=20.0).contains(&invoked),
        "ops invoked in it {invoked}: {outage}"
    );
    assert!(outage.contains("timed out"), "{outage}");
}

/// Starts D2 of a mutated demo (its pause held long) and waits until the journal
/// holds `marker`; returns the child and the journal's path. `watchdog: false` runs
/// it without its watchdog, to see what a killed faultline leaves behind.
// The caller signals and waits for the child it gets back.
#[allow(clippy::zombie_processes)]
fn start_paused_d2(
    work: &Path,
    plan: &Path,
    marker: &str,
    watchdog: bool,
) -> (std::process::Child, PathBuf) {
    let root = work.join("sessions");
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .env(
            faultline::session::watchdog::ENV_SWITCH,
            if watchdog { "on" } else { "off" },
        )
        .args(["run", plan.to_str().expect("utf-8"), "--headless", "--yes"])
        .args(["--tier", "hardening", "--only", "D2", "--out"])
        .arg(&root)
        .current_dir(work)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("faultline starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = std::fs::read_dir(root.join("demo-kv-replication"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path().join("journal.jsonl"));
        if let Some(path) = found
            && std::fs::read_to_string(&path).is_ok_and(|t| t.contains(marker))
        {
            return (child, path);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{marker} not journaled within 30 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn sigint_with_a_fault_active_heals_it_and_leaves_no_process_group() {
    let work = tempfile::tempdir().expect("tempdir");
    let plan = mutated_demo(work.path(), |s| {
        s.replace("duration: 1500ms", "duration: 20s")
    });
    let (child, journal_path) = start_paused_d2(work.path(), &plan, "\"fault-injected\"", true);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    // The scenario's findings file is already written, mid-run, at the fault phase.
    let findings = journal_path.with_file_name("findings").join("D2.md");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(&findings).unwrap_or_default();
        if text.contains("now at: fault") {
            assert!(text.contains("not decided yet"), "{text}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "findings/D2.md not at the fault phase: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    // An impatient second Ctrl-C while it heals must not skip the healing.
    std::thread::sleep(Duration::from_millis(20));
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
    let out = child.wait_with_output().expect("faultline exits");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let session = journal_path.parent().expect("session dir").to_path_buf();
    assert_eq!(common::session_of(&out), session);
    let records = common::whole_records(&session);
    assert!(records.iter().any(|r| r.kind == "interrupted"));
    assert_clean_exit(&records);
    let v = verdicts(&session);
    assert!(
        !v["interrupted"].is_null(),
        "verdicts.json must say it was interrupted"
    );
}

/// D2 with its pause held 30 s, started and landed (the injector saw it).
fn held_pause(work: &Path, watchdog: bool) -> (std::process::Child, PathBuf) {
    let plan = mutated_demo(work, |s| s.replace("duration: 1500ms", "duration: 30s"));
    start_paused_d2(work, &plan, "\"landing-injector\"", watchdog)
}

#[test]
fn after_sigkill_with_a_pause_active_heal_restores_everything_from_the_journal() {
    let work = tempfile::tempdir().expect("tempdir");
    let (mut child, journal_path) = held_pause(work.path(), false);
    child.kill().expect("SIGKILL faultline");
    let _ = child.wait();
    let session = journal_path.parent().expect("session").to_path_buf();
    let before = common::whole_records(&session);
    assert!(before.iter().any(|r| r.kind == "fault-injected"));
    assert!(
        !before.iter().any(|r| r.kind == "fault-healed"),
        "faultline died before healing"
    );
    // The kernel SIGHUPs a stopped process whose group is orphaned, so the paused
    // victim itself may be gone; the other services are left running without owner.
    assert!(
        !live_groups(&before).is_empty(),
        "nothing was left behind to heal"
    );

    let healed = faultline(&["heal", session.to_str().expect("utf-8")], work.path());
    assert_eq!(
        healed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&healed.stdout)
    );
    let text = String::from_utf8_lossy(&healed.stdout);
    assert!(
        text.contains("pause-n3"),
        "the fault is accounted for: {text}"
    );
    assert!(text.contains("process group"), "{text}");
    let after = common::whole_records(&session);
    assert_clean_exit(&after);
}

#[test]
fn after_sigkill_with_a_pause_active_the_watchdog_heals_and_ends_every_child() {
    let work = tempfile::tempdir().expect("tempdir");
    let (mut child, journal_path) = held_pause(work.path(), true);
    let session = journal_path.parent().expect("session").to_path_buf();
    let before = common::whole_records(&session);
    let mut armed: Vec<i32> = before
        .iter()
        .filter(|r| r.kind == "watchdog" && r.data["armed"] == true)
        .filter_map(|r| r.data["pid"].as_i64().and_then(|p| i32::try_from(p).ok()))
        .collect();
    armed.sort_unstable();
    assert_eq!(
        armed.len(),
        faultline::session::watchdog::WATCHDOGS,
        "the run journals its watchdogs"
    );
    let mut running = common::watchdogs_of(&session);
    running.sort_unstable();
    assert_eq!(running, armed);
    assert!(!live_groups(&before).is_empty());

    let killed = Instant::now();
    child.kill().expect("SIGKILL faultline");
    let _ = child.wait();
    // Nobody runs `heal` or `resume`: the watchdog alone must clean up.
    common::await_watchdogs(&session, Duration::from_secs(30));
    eprintln!(
        "the watchdog healed and exited {:?} after the SIGKILL",
        killed.elapsed()
    );
    let after = common::whole_records(&session);
    assert_clean_exit(&after);
    assert_eq!(faultline::exec::mark::marked(&session), vec![]);
    let healed = after
        .iter()
        .filter(|r| r.kind == "fault-healed")
        .collect::<Vec<_>>();
    assert!(
        healed
            .iter()
            .all(|r| r.data["by"] == faultline::session::watchdog::HEALER),
        "{healed:?}"
    );
    let finished = after
        .iter()
        .find(|r| r.kind == "heal-finished")
        .expect("the watchdog journals its heal");
    assert_eq!(finished.data["by"], faultline::session::watchdog::HEALER);
    assert_eq!(finished.data["failures"], serde_json::json!([]));
}

#[test]
fn a_run_that_ends_normally_stands_its_watchdog_down() {
    // Any edit will do: D1 alone runs, and D2's pause is not reached.
    let (session, _, _keep) =
        run_mutant(|s| s.replace("duration: 1500ms", "duration: 1400ms"), "D1");
    let all = common::whole_records(&session);
    let armed = all
        .iter()
        .find(|r| r.kind == "watchdog")
        .expect("watchdog record");
    let pid = armed.data["pid"].as_i64().expect("pid") as i32;
    assert!(!common::pid_alive(pid), "the watchdog outlived the run");
    assert!(
        !all.iter().any(|r| r.kind == "heal-started"),
        "a clean end needs no heal by the watchdog"
    );
}
