//! One iteration of the demo's scenarios, for real: the demo store, the workload
//! client, the process nemesis, landing probes, quiesce and no-lost-ack.

mod common;

use std::path::Path;
use std::time::Duration;

use faultline::engine::iteration::{self, IterationCtx, IterationFacts};
use faultline::journal::{self, Journal, Scope};
use faultline::runspec::{self, vars::Vars};
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
    let records = journal::read(&dir.join("journal.jsonl"))
        .expect("journal")
        .records;
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
    let fault = &facts.faults[0];
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
