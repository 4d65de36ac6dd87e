//! One iteration of the demo's scenarios, for real: the demo store, the workload
//! client, the process nemesis, landing probes, quiesce and no-lost-ack.

use crate::common;

use std::path::Path;
use std::time::Duration;

use faultline::engine::iteration::{self, IterationCtx, IterationFacts};
use faultline::runspec::{self, vars::Vars};
use faultline::session::journal::{Journal, Scope};
use faultline::verdict::CheckerRun;

async fn run_demo(id: &str, dir: &Path) -> IterationFacts {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let plan = common::demo_plan();
    let yaml = std::fs::read_to_string(root.join("examples/demo/plan.run.yaml")).expect("spec");
    let spec = runspec::load(&plan, Some(("plan.run.yaml", &yaml))).expect("valid spec");
    let mut vars = Vars::default();
    for (k, v) in &spec.vars {
        vars.set(k, v.clone());
    }
    vars.set("faultline", env!("CARGO_BIN_EXE_faultline"));
    let (binding, _) = &spec.bindings[id];
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).expect("logs dir");
    let mut journal = Journal::open(&dir.join("journal.jsonl")).expect("journal");
    let mut ctx = IterationCtx {
        id: id.into(),
        scope: Scope {
            scenario: Some(id.into()),
            arm: None,
        },
        cwd: dir.to_path_buf(),
        logs,
        artifacts: dir.join("artifacts"),
        vars,
        seed: 1,
        duration: Duration::from_secs(3),
        cancel: Default::default(),
        privileged: None,
        hosts: Default::default(),
    };
    let facts = iteration::run(binding, &mut ctx, &mut journal)
        .await
        .expect("iteration runs");
    for pgid in &facts.pgids {
        assert!(
            !common::pid_alive(*pgid),
            "process group {pgid} outlived the iteration"
        );
    }
    // A member the schedule kills is that fault's victim, never an unexplained death.
    let unexplained: Vec<(String, u64)> = facts.unexplained_ends().collect();
    assert!(unexplained.is_empty(), "{unexplained:?}");
    let records = crate::common::lines(&dir.join("journal.jsonl"));
    let count = |kind: &str| records.iter().filter(|r| r.kind == kind).count();
    assert_eq!(
        count("fault-injected"),
        count("fault-healed"),
        "a fault was left unhealed"
    );
    facts
}

#[tokio::test]
async fn the_planted_bug_is_caught_after_a_proven_primary_kill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let facts = run_demo("D3", dir.path()).await;
    assert!(facts.env_missing.is_none(), "{:?}", facts.env_missing);
    let fault = facts
        .faults
        .iter()
        .find(|f| f.id == "kill-primary")
        .expect("the kill ran");
    assert!(
        fault.injected && fault.injector_landed && fault.declared_landed,
        "{fault:?}"
    );
    let (report, _) = facts.checker.expect("checker ran");
    assert!(
        matches!(report.run, CheckerRun::Judged { anomalies, .. } if anomalies > 0),
        "{:?}",
        report.run
    );
}

#[tokio::test]
async fn a_misaimed_pause_lands_on_its_victim_but_not_its_declared_signal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let facts = run_demo("D4", dir.path()).await;
    let fault = &facts.faults[0];
    assert!(fault.injected && fault.injector_landed, "{fault:?}");
    assert!(
        !fault.declared_landed,
        "the declared signal cannot appear: {fault:?}"
    );
    let (report, _) = facts.checker.expect("checker ran");
    assert!(
        matches!(report.run, CheckerRun::Judged { anomalies: 0, .. }),
        "{:?}",
        report.run
    );
}

#[tokio::test]
async fn a_long_workload_gets_checkpoints_and_periodic_status_pulls() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (facts, records) = common::run_inline(
        r#"
workload:
  run: "for i in 1 2 3 4 5 6; do echo step $i > progress; sleep 0.25; done"
  deadline: 10s
  expected_duration: 1500ms
  status: "cat progress"
  status_every: 400ms
"#,
        dir.path(),
    )
    .await;
    let kinds: Vec<&str> = records.iter().map(|r| r.kind.as_str()).collect();
    let start = kinds.iter().position(|k| *k == "checkpoint-start");
    let end = kinds.iter().position(|k| *k == "checkpoint-end");
    assert!(start.is_some() && end > start, "{kinds:?}");
    let pulls: Vec<&crate::common::Line> =
        records.iter().filter(|r| r.kind == "status-pull").collect();
    assert!(pulls.len() >= 2, "expected periodic pulls: {kinds:?}");
    assert!(
        pulls[0].data["last_line"]
            .as_str()
            .is_some_and(|l| l.starts_with("step ")),
        "{:?}",
        pulls[0].data
    );
    let (elapsed, exited_ok, _) = facts.workload.expect("workload ran");
    assert!(
        exited_ok && elapsed >= Duration::from_millis(1400),
        "{elapsed:?}"
    );
    assert!(facts.expired_step.is_none());
}

#[tokio::test]
async fn an_expired_workload_deadline_ends_the_group_and_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (facts, records) = common::run_inline(
        r#"
workload: { run: "sleep 30 & sleep 30", deadline: 500ms }
"#,
        dir.path(),
    )
    .await;
    assert_eq!(facts.expired_step.as_deref(), Some("workload"));
    // SIGKILL went to the whole group; on a loaded machine a member may take a few
    // milliseconds to be scheduled and die. Two seconds is far beyond that.
    let until = std::time::Instant::now() + Duration::from_secs(2);
    for pgid in &facts.pgids {
        while common::group_alive(*pgid) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !common::group_alive(*pgid),
            "group {pgid} outlived its deadline by 2 s"
        );
    }
    assert!(
        records
            .iter()
            .any(|r| r.kind == "command-exited" && r.data["outcome"] == "DeadlineExpired"),
        "the expiry is journaled"
    );
}

#[tokio::test]
async fn a_command_fault_is_injected_proven_from_both_sides_and_healed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (facts, records) = common::run_inline(
        r#"
workload: { run: "sleep 1.5", deadline: 10s }
faults:
  - id: flag
    after: 200ms
    duration: 300ms
    command:
      inject: "echo 'flag raised' >> fault.log && touch flag"
      heal: "rm flag && echo 'flag lowered' >> fault.log"
    landing:
      - { side: injector, log: { file: "fault.log", pattern: "flag raised" }, within: 1s }
      - { side: victim, log: { file: "fault.log", pattern: "flag raised" }, within: 1s }
"#,
        dir.path(),
    )
    .await;
    let fault = &facts.faults[0];
    assert!(
        fault.injected && fault.injector_landed && fault.victim_side_seen && fault.declared_landed,
        "{fault:?}"
    );
    assert!(fault.healed, "{fault:?}");
    assert!(
        !dir.path().join("flag").exists(),
        "the heal command did not run"
    );
    let log = std::fs::read_to_string(dir.path().join("fault.log")).expect("fault log");
    assert!(log.contains("flag lowered"), "{log}");
    let kinds: Vec<&str> = records.iter().map(|r| r.kind.as_str()).collect();
    let injected = kinds.iter().position(|k| *k == "fault-injected");
    let healed = kinds.iter().position(|k| *k == "fault-healed");
    assert!(injected.is_some() && healed > injected, "{kinds:?}");
}

#[tokio::test]
async fn a_command_fault_whose_inject_fails_is_journaled_and_not_landed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (facts, records) = common::run_inline(
        r#"
workload: { run: "sleep 0.5", deadline: 10s }
faults:
  - id: broken
    after: 100ms
    command: { inject: "exit 4", heal: "touch healed" }
    landing:
      - { side: victim, log: { file: "never.log", pattern: "x" }, within: 200ms }
"#,
        dir.path(),
    )
    .await;
    let fault = &facts.faults[0];
    assert!(!fault.injected && !fault.declared_landed, "{fault:?}");
    assert!(records.iter().any(|r| r.kind == "fault-inject-failed"));
    assert!(
        dir.path().join("healed").exists(),
        "a failed inject is still healed"
    );
}

#[tokio::test]
async fn a_service_a_kill_fault_ends_is_explained_and_another_death_is_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (facts, records) = common::run_inline(
        r#"
cluster:
  services:
    - { name: victim, run: "exec sleep 30" }
    - { name: bystander, run: "sleep 0.6; echo 'bystander gave up' >&2; exit 5" }
workload: { run: "sleep 1.5", deadline: 10s }
faults:
  - id: kill-victim
    after: 200ms
    process: { signal: SIGKILL, target: { service: victim } }
"#,
        dir.path(),
    )
    .await;
    let injected = records
        .iter()
        .find(|r| r.kind == "fault-injected")
        .expect("the kill was injected");
    let ended = |name: &str| {
        facts
            .services_ended
            .iter()
            .find(|(e, _)| e.name == name)
            .unwrap_or_else(|| panic!("{name} not journaled as ended: {:?}", facts.services_ended))
            .0
            .clone()
    };
    let victim = ended("victim");
    assert_eq!(victim.explained_by, Some(injected.seq), "{victim:?}");
    assert_eq!(victim.fault.as_deref(), Some("kill-victim"));
    assert_eq!(victim.signal, Some(9), "{victim:?}");
    let bystander = ended("bystander");
    assert_eq!(bystander.explained_by, None, "{bystander:?}");
    assert_eq!(bystander.code, Some(5));
    assert_eq!(bystander.during, "workload");
    assert!(
        (500..1500).contains(&bystander.elapsed_ms),
        "seen within the watch interval of its end: {bystander:?}"
    );
    let unexplained: Vec<(String, u64)> = facts.unexplained_ends().collect();
    assert_eq!(unexplained.len(), 1, "{unexplained:?}");
    assert!(
        unexplained[0].0.contains("bystander exited 5") && unexplained[0].0.contains("gave up"),
        "{unexplained:?}"
    );
    // The teardown's own ends are no deaths.
    assert_eq!(
        records
            .iter()
            .filter(|r| r.kind == "service-exited")
            .count(),
        2
    );
}
