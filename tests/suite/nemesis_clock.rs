//! The clock nemesis against real processes started under libfaketime: an offset
//! lands (a `date` probe under the victim's environment and the clock the victim
//! prints itself both show it), heal removes it, a statically linked victim (which
//! ignores LD_PRELOAD, like a Go binary) yields landing NOT proven, a mis-aimed twin
//! ends INCONCLUSIVE-fault-not-proven, and `faultline heal` empties a control file a
//! killed session left. Needs libfaketime: with `FAULTLINE_REQUIRE_FAKETIME=1` its
//! absence fails the test, otherwise the test prints `SKIP: <reason>` and returns.
//! The static victim needs `cc -static` likewise (`FAULTLINE_REQUIRE_STATIC_CC=1`).

use crate::common;
use crate::common::AppendKind;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::Line;
use faultline::engine::iteration::IterationFacts;
use faultline::nemesis::clock;
use faultline::session::journal::{Journal, Scope};

fn capable() -> bool {
    if clock::library().is_some() {
        return true;
    }
    let why = "libfaketime is not installed (apt-get install libfaketime)";
    !common::skipped("FAKETIME", Some(why.to_string()))
}

/// A victim printing its own clock on stderr every 100 ms.
const PRINTS_CLOCK: &str = r#"while :; do echo "now=$(date +%s)" >&2; sleep 0.1; done"#;

fn binding(victim_run: &str, aimed_at: &str) -> faultline::runspec::Binding {
    let yaml = format!(
        r#"
cluster:
  services:
    - {{ name: victim, run: {victim_run:?}, faketime: true }}
    - {{ name: bystander, run: "sleep 30", faketime: true }}
workload:
  run: "sleep 4"
  deadline: 30s
faults:
  - id: skew
    after: 1s
    duration: 1s
    clock:
      service: {aimed_at}
      offset: 3600
      victim_clock: {{ service: victim, pattern: "now=(\\d+)" }}
    landing:
      - side: injector
        within: 2s
"#
    );
    serde_saphyr::from_str(&yaml).expect("binding")
}

async fn run(dir: &Path, binding: &faultline::runspec::Binding) -> (IterationFacts, Vec<Line>) {
    common::run_binding(binding, dir).await
}

fn record<'a>(records: &'a [Line], kind: &str) -> &'a serde_json::Value {
    &records
        .iter()
        .find(|r| r.kind == kind)
        .unwrap_or_else(|| panic!("no {kind} record"))
        .data
}

#[tokio::test]
async fn an_offset_lands_on_both_sides_and_heals() {
    if !capable() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (facts, records) = run(dir.path(), &binding(PRINTS_CLOCK, "victim")).await;
    let fault = facts.faults.first().expect("one fault");
    assert!(fault.injected, "{:?}", fault.detail);
    assert!(fault.injector_landed, "{:?}", fault.detail);
    assert!(fault.victim_side_seen, "{:?}", fault.detail);
    assert!(fault.declared_landed, "{:?}", fault.detail);
    assert!(fault.healed, "{:?}", fault.detail);
    let skew = record(&records, "landing-injector")["detail"]["skew_s"]
        .as_i64()
        .expect("injector skew");
    assert!((skew - 3600).abs() <= clock::TOLERANCE_S, "{skew}");
    let victim = record(&records, "landing-declared");
    assert_eq!(victim["side"], "victim");
    let skew = victim["skew_s"].as_i64().expect("victim skew");
    assert!((skew - 3600).abs() <= clock::TOLERANCE_S, "{skew}");
    let control = record(&records, "fault-injected")["undo"]["clock"]["control"]
        .as_str()
        .expect("control file in undo")
        .to_string();
    assert_eq!(std::fs::read_to_string(&control).expect("control"), "");

    // Healed: after the heal the victim printed real time again.
    let log =
        std::fs::read_to_string(dir.path().join("logs/victim.stderr.log")).expect("victim log");
    let clocks: Vec<i64> = log
        .lines()
        .filter_map(|l| l.strip_prefix("now=")?.parse().ok())
        .collect();
    let now = clock::real_now();
    assert!(
        clocks.iter().any(|c| c - now > 3000),
        "the offset never showed"
    );
    let last = clocks.last().copied().unwrap_or_default();
    assert!(
        (last - now).abs() <= 5,
        "the offset outlived its heal: {last} vs {now}"
    );
}

/// Builds a statically linked clock printer, which libfaketime cannot reach.
fn static_victim(dir: &Path) -> Option<PathBuf> {
    let src = dir.join("clock.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include <time.h>\n#include <unistd.h>\n\
         int main(void){for(;;){fprintf(stderr,\"now=%ld\\n\",(long)time(NULL));usleep(100000);}}\n",
    )
    .expect("source");
    let bin = dir.join("clock-static");
    let built = Command::new("cc")
        .args(["-static", "-O", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    let why = "cannot build a static binary here: `cc -static` failed (a C compiler and \
               a static libc, e.g. apt-get install gcc libc6-dev)";
    if common::skipped("STATIC_CC", (!built).then(|| why.to_string())) {
        None
    } else {
        Some(bin)
    }
}

#[tokio::test]
async fn a_static_victim_ignores_faketime_and_landing_is_not_proven() {
    if !capable() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(bin) = static_victim(dir.path()) else {
        return;
    };
    let run_static = format!("exec {}", bin.display());
    let (facts, records) = run(dir.path(), &binding(&run_static, "victim")).await;
    let fault = facts.faults.first().expect("one fault");
    assert!(fault.injected, "{:?}", fault.detail);
    // libfaketime itself works (the probe under the same environment moved) …
    assert!(fault.injector_landed, "{:?}", fault.detail);
    // … but the victim's own clock never did: not proven, never assumed.
    assert!(!fault.victim_side_seen, "{:?}", fault.detail);
    assert!(!fault.declared_landed, "{:?}", fault.detail);
    assert!(record(&records, "landing-declared")["seen"].is_null());
    assert!(fault.healed, "{:?}", fault.detail);
}

#[tokio::test]
async fn a_fault_aimed_at_a_service_not_under_faketime_fails_to_inject() {
    if !capable() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut spec = binding(PRINTS_CLOCK, "victim");
    if let Some(cluster) = spec.cluster.as_mut() {
        cluster.services[0].faketime = false;
    }
    let (facts, _) = run(dir.path(), &spec).await;
    let fault = facts.faults.first().expect("one fault");
    assert!(!fault.injected);
    assert!(!fault.declared_landed);
    assert!(
        fault.detail.iter().any(|d| d.contains("faketime: true")),
        "{:?}",
        fault.detail
    );
}

#[test]
fn the_mis_aimed_twin_ends_inconclusive_fault_not_proven() {
    if !capable() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let run = common::run_scenario(&common::twins_plan(), "T2", dir.path());
    assert_eq!(
        run.verdict, "INCONCLUSIVE-fault-not-proven",
        "{}",
        run.stderr
    );
}

#[test]
fn faultline_heal_empties_a_control_file_a_killed_session_left() {
    let dir = tempfile::tempdir().expect("tempdir");
    let control = dir.path().join("victim.control");
    std::fs::write(&control, "+3600\n").expect("control");
    let mut journal = Journal::open(&dir.path().join("journal.jsonl")).expect("journal");
    journal
        .append_kind(
            Scope::default(),
            "fault-injected",
            &serde_json::json!({"fault": "skew", "pid": null,
                "undo": {"clock": {"control": control.display().to_string()}}}),
        )
        .expect("append");
    drop(journal);
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("heal")
        .arg(dir.path())
        .output()
        .expect("faultline heal runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("emptied"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&control).expect("control"), "");
}

#[test]
fn a_tiny_offset_is_refused_with_its_line() {
    let spec = "\
version: 1
scenarios:
  K1:
    workload:
      run: client
    faults:
      - id: nudge
        after: 1s
        clock:
          service: n1
          offset: 3
          victim_clock: { service: n1, pattern: 'now=(\\d+)' }
";
    let errors = faultline::runspec::load(
        &faultline::plan::Plan::default(),
        Some(("plan.run.yaml", spec)),
    )
    .expect_err("offset too small");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field.as_deref(), Some("clock.offset"));
    assert!(
        errors[0].to_string().starts_with("plan.run.yaml:7:"),
        "{}",
        errors[0]
    );
}
