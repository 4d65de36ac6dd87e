//! The fault schedule on real processes: faults that overlap, a fault that waits for
//! an event the victim writes, repetitions, and a heal that does not wait for a slow
//! proof. The order of journal records is the evidence. The schedule's timing rules
//! (these faults to the millisecond, a trigger that never comes, an interruption) are
//! tested on tokio's paused clock against an in-process SUT, in
//! `src/engine/iteration/schedule/sim.rs`.

use crate::common;
use crate::common::Line;

/// Two services ticking into their own logs; a four-second workload.
const CLUSTER: &str = r#"
cluster:
  services:
    - { name: a, run: 'i=0; while :; do i=$((i+1)); echo "a tick $i" >&2; sleep 0.1; done' }
    - { name: b, run: 'i=0; while :; do i=$((i+1)); echo "b tick $i" >&2; sleep 0.1; done' }
workload: { run: "sleep 4", deadline: 30s }
"#;

/// The seq of the first record of `kind` about `fault`.
fn seq(records: &[Line], kind: &str, fault: &str) -> u64 {
    records
        .iter()
        .find(|r| r.kind == kind && r.data["fault"] == fault)
        .map(|r| r.seq)
        .unwrap_or_else(|| panic!("no {kind} for {fault}"))
}

#[tokio::test]
async fn faults_overlap_wait_for_events_and_repeat() {
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = format!(
        r#"{CLUSTER}
faults:
  - id: hold-a
    after: 200ms
    duration: 2s
    process: {{ signal: SIGSTOP, target: {{ service: a }} }}
  - id: kick-b
    on: {{ log: {{ service: b, pattern: "b tick 8$" }} }}
    after: 100ms
    duration: 300ms
    process: {{ signal: SIGSTOP, target: {{ service: b }} }}
  - id: again
    after: 2500ms
    duration: 100ms
    repeat: 3
    gap: 200ms
    process: {{ signal: SIGSTOP, target: {{ service: b }} }}
"#
    );
    let (facts, records) = common::run_inline(&yaml, dir.path()).await;

    // kick-b waited for b's own eighth tick, then ran entirely inside hold-a's window.
    let trigger = records
        .iter()
        .find(|r| r.kind == "fault-trigger-seen")
        .expect("the trigger was seen");
    assert!(
        trigger.data["seen"]
            .as_str()
            .is_some_and(|s| s.contains("b tick 8")),
        "{:?}",
        trigger.data
    );
    let a_in = seq(&records, "fault-injected", "hold-a");
    let b_in = seq(&records, "fault-injected", "kick-b");
    let b_out = seq(&records, "fault-healed", "kick-b");
    let a_out = seq(&records, "fault-healed", "hold-a");
    assert!(
        a_in < trigger.seq && trigger.seq < b_in,
        "waited for the event"
    );
    assert!(b_in < b_out && b_out < a_out, "kick-b held inside hold-a");

    // Three repetitions, each healed before the next one is injected.
    let mut last = 0;
    for id in ["again", "again#2", "again#3"] {
        let (inj, heal) = (
            seq(&records, "fault-injected", id),
            seq(&records, "fault-healed", id),
        );
        assert!(last < inj && inj < heal, "{id} follows the previous one");
        last = heal;
    }

    // Every injection is accounted for, landed on the injector side and healed.
    assert_eq!(facts.faults.len(), 5);
    for fault in &facts.faults {
        assert!(fault.injected && fault.injector_landed, "{fault:?}");
        assert!(fault.healed, "{fault:?}");
    }
    // Each injection had its own epoch.
    let mut epochs: Vec<u64> = records
        .iter()
        .filter(|r| r.kind == "fault-intent")
        .filter_map(|r| r.data["epoch"].as_u64())
        .collect();
    epochs.sort_unstable();
    assert_eq!(epochs, vec![1, 2, 3, 4, 5]);
}

#[test]
fn a_trigger_names_one_signal_and_repeat_is_at_least_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("plan.md");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/plan.md"),
        &plan,
    )
    .expect("plan copied");
    std::fs::write(
        dir.path().join("plan.run.yaml"),
        r#"version: 1
scenarios:
  D2:
    workload: { run: "true" }
    faults:
      - id: twice-named
        on: { log: { service: n1, pattern: x }, counter: { run: "echo 1" } }
        process: { signal: SIGKILL, target: { pid: 1 } }
      - id: never-injected
        repeat: 0
        process: { signal: SIGKILL, target: { pid: 1 } }
"#,
    )
    .expect("sidecar");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("lint")
        .arg(&plan)
        .output()
        .expect("lint runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("field `on`") && text.contains("`on` needs exactly one of"),
        "{text}"
    );
    assert!(
        text.contains("field `repeat`") && text.contains("must be at least 1"),
        "{text}"
    );
}

/// Milliseconds from the `fault-injected` to the `fault-healed` record of `fault`.
fn held_ms(records: &[Line], fault: &str) -> i64 {
    let at = |kind: &str| {
        let ts = records
            .iter()
            .find(|r| r.kind == kind && r.data["fault"] == fault)
            .map(|r| r.ts.clone())
            .unwrap_or_else(|| panic!("no {kind} for {fault}"));
        chrono::DateTime::parse_from_rfc3339(&ts).expect("an RFC 3339 time")
    };
    (at("fault-healed") - at("fault-injected")).num_milliseconds()
}

/// `duration` runs from injection to heal, whatever the landing proof is doing: a
/// proof that takes 1.5 s of a 2 s fault, and one that never succeeds within its
/// 4 s window, are both healed 2 s after injection; the first is proven, the second
/// is not.
#[tokio::test]
async fn a_fault_is_healed_its_duration_after_injection_whatever_its_proof_takes() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The victim notices a flag 1.5 s after it appears; nobody ever sets `never`.
    let yaml = r#"
cluster:
  services:
    - { name: v, run: 'while :; do if [ -e flag ]; then sleep 1.5; echo "flag seen" >&2; rm -f flag; fi; sleep 0.05; done' }
workload: { run: "sleep 7", deadline: 30s }
faults:
  - id: slow-proof
    after: 300ms
    duration: 2s
    command: { inject: "touch flag", heal: "true" }
    landing:
      - side: victim
        log: { service: v, pattern: "flag seen" }
        within: 4s
  - id: no-proof
    after: 3s
    duration: 2s
    command: { inject: "true", heal: "true" }
    landing:
      - side: victim
        log: { service: v, pattern: "never" }
        within: 4s
"#;
    let (facts, records) = common::run_inline(yaml, dir.path()).await;
    for fault in ["slow-proof", "no-proof"] {
        let held = held_ms(&records, fault);
        // A heal that waited for the proof would come at 4 s or later; the slack above
        // 2 s is the heal command and the journal's fsync on a loaded machine.
        assert!(
            (1800..=2700).contains(&held),
            "{fault} held {held} ms, declared 2000"
        );
    }
    let landed = |id: &str| {
        facts
            .faults
            .iter()
            .find(|f| f.id == id)
            .is_some_and(|f| f.victim_side_seen)
    };
    assert!(landed("slow-proof"), "{:?}", facts.faults);
    assert!(!landed("no-proof"), "{:?}", facts.faults);
}
