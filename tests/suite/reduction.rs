//! Reduction on the demo's planted bug: D3 injects two faults, a pause of the spare n4
//! (irrelevant: n4 replicates nothing) and the primary's kill. The reproducible FAIL is
//! reduced to the kill alone, the finding and the report carry "reduced from N events
//! to k over M re-runs", the kill's start offset and then the workload's length are
//! halved once, and the reduced reproducer, replayed with `faultline run`, still fails.

use crate::common;

use std::path::Path;
use std::process::Command;

fn faultline(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("faultline runs")
}

#[test]
fn the_demo_fail_is_reduced_to_the_kill_and_the_reduced_reproducer_still_fails() {
    let work = tempfile::tempdir().expect("tempdir");
    let out = faultline(
        &[
            "demo",
            "--headless",
            "--yes",
            "--only",
            "D3",
            "--out",
            work.path().join("sessions").to_str().expect("utf-8"),
        ],
        work.path(),
    );
    let session = common::session_of(&out);
    assert_eq!(common::verdict_of(&session, "D3"), "FAIL-reproducible");
    let all = common::records(&session);
    let result = all
        .iter()
        .find(|r| r.kind == "reduction-result")
        .expect("a reduction ran");
    assert_eq!(result.data["from"], 2);
    assert_eq!(result.data["to"], 1);
    assert_eq!(result.data["faults"], serde_json::json!(["kill-primary"]));
    let runs = result.data["runs"].as_u64().expect("runs");
    let candidates = all
        .iter()
        .filter(|r| r.kind == "reduction-candidate")
        .count();
    assert_eq!(runs as usize, candidates, "every re-run is journaled");
    // The irrelevant pause alone passed; the kill alone failed.
    assert!(all.iter().any(|r| r.kind == "reduction-candidate"
        && r.data["faults"] == serde_json::json!(["pause-spare"])
        && r.data["failed"] == false));
    // Then the kill's start offset (2 s) was tried at half, and kept if it still failed.
    let timed = all
        .iter()
        .find(|r| r.kind == "reduction-candidate" && r.data["timing"] != serde_json::json!([]))
        .expect("a timing candidate was tried");
    assert_eq!(timed.data["faults"], serde_json::json!(["kill-primary"]));
    assert_eq!(
        timed.data["timing"],
        serde_json::json!([{"fault": "kill-primary", "field": "after", "from_ms": 2000, "to_ms": 1000}])
    );
    let kept_half = timed.data["failed"] == true;
    assert_eq!(
        result.data["timing"],
        if kept_half {
            timed.data["timing"].clone()
        } else {
            serde_json::json!([])
        }
    );
    let spec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(session.join("artifacts/D3/reduced/plan.run.yaml"))
            .expect("reduced spec"),
    )
    .expect("the reduced spec is JSON");
    assert_eq!(
        spec["scenarios"]["D3"]["faults"][0]["after"],
        if kept_half { "1000ms" } else { "2000ms" }
    );
    // Then the workload's length, halved with the kill still inside it.
    let shorter = all
        .iter()
        .rfind(|r| r.kind == "reduction-candidate")
        .expect("candidates");
    assert_eq!(shorter.data["duration_ms"], 2000, "{:?}", shorter.data);
    let kept_shorter = shorter.data["failed"] == true;
    assert_eq!(
        result.data["workload"],
        if kept_shorter {
            serde_json::json!({"from_ms": 4000, "to_ms": 2000})
        } else {
            serde_json::Value::Null
        }
    );
    assert_eq!(
        spec["scenarios"]["D3"]["tiers"]["hardening"]["duration"],
        if kept_shorter { "2000ms" } else { "4000ms" }
    );
    let figure = format!("reduced from 2 events to 1 over {runs} re-runs");
    for file in ["findings/D3.md", "findings/report.md"] {
        let text = std::fs::read_to_string(session.join(file)).expect(file);
        assert!(text.contains(&figure), "{file} lacks `{figure}`:\n{text}");
    }

    // Replay the reduced reproducer exactly as the finding writes it.
    let reduced = session.join("artifacts/D3/reduced/plan.md");
    assert!(reduced.is_file());
    let replay = faultline(
        &[
            "run",
            reduced.to_str().expect("utf-8"),
            "--only",
            "D3",
            "--tier",
            "hardening",
            "--headless",
            "--yes",
            "--reduce-runs",
            "0",
            "--out",
            work.path().join("replay").to_str().expect("utf-8"),
        ],
        work.path(),
    );
    let replayed = common::session_of(&replay);
    assert!(
        common::verdict_of(&replayed, "D3").starts_with("FAIL"),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
    let injected: Vec<String> = common::records(&replayed)
        .iter()
        .filter(|r| r.kind == "fault-injected")
        .filter_map(|r| r.data["fault"].as_str().map(str::to_string))
        .collect();
    assert!(!injected.is_empty());
    assert!(injected.iter().all(|f| f == "kill-primary"), "{injected:?}");
}
