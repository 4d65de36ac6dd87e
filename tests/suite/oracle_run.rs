//! Built-in checkers inside a real `faultline run`: a history that lacks the
//! timeout marker or the fault epoch the checker needs is
//! INCONCLUSIVE-oracle-too-weak, and an EDN history with every field the
//! checker needs is judged on all its ops.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the fixture plan `tests/fixtures/runs/<name>` headless; its session and stdout.
fn run_fixture(name: &str, dir: &Path) -> (PathBuf, String) {
    let plan = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs")
        .join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(&plan)
        .args(["--headless", "--yes", "--sut"])
        .arg(dir)
        .current_dir(dir)
        .output()
        .expect("faultline runs");
    (
        common::session_of(&out),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Scenario `id`'s entry in the session's `verdicts.json`.
fn scenario(session: &Path, id: &str) -> serde_json::Value {
    let verdicts = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts");
    let v: serde_json::Value = serde_json::from_str(&verdicts).expect("json");
    v["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == id))
        .cloned()
        .unwrap_or_else(|| panic!("{id} not in {verdicts}"))
}

/// The answers of scenario `id`'s decision-tree reason chain.
fn answers(session: &Path, id: &str) -> Vec<String> {
    scenario(session, id)["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .filter_map(|r| r["answer"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn missing_timeout_marker_is_oracle_too_weak_and_edn_and_txn_histories_are_judged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (session, stdout) = run_fixture("oracle-checkers.md", dir.path());
    assert_eq!(
        common::verdict_of(&session, "K1"),
        "INCONCLUSIVE-oracle-too-weak",
        "{stdout}"
    );
    let verdicts = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts");
    assert!(verdicts.contains("missing timeout"), "{verdicts}");
    // K2's oracle judged every op (its verdict then rests on the surface audits).
    let k2 = answers(&session, "K2");
    assert!(k2.iter().any(|a| a == "yes: 40 of 40 ops"), "{k2:?}");
    assert_ne!(
        scenario(&session, "K2")["verdict"],
        "INCONCLUSIVE-oracle-too-weak"
    );
    // K3's Knossos-style history has a stale read: FAIL, and its timeline is drawn
    // from the search's own counterexample (one bar per op, the stuck read marked).
    assert_eq!(
        common::verdict_of(&session, "K3"),
        "FAIL-reproducible",
        "{stdout}"
    );
    let figures = session.join("figures").join("K3");
    let timelines: Vec<_> = std::fs::read_dir(&figures)
        .expect("K3 figures")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with("-anomaly-1.svg"))
        .collect();
    assert!(
        !timelines.is_empty(),
        "no timeline in {}",
        figures.display()
    );
    for path in timelines {
        let svg = std::fs::read_to_string(&path).expect("timeline");
        assert_eq!(svg.matches("class=\"op ").count(), 80, "{}", path.display());
        assert_eq!(svg.matches("class=\"op blocked\"").count(), 1);
        let blocked = svg
            .split("class=\"op blocked\"><title>")
            .nth(1)
            .expect("blocked");
        assert!(
            blocked.starts_with("op ") && blocked.contains("output 28"),
            "{blocked:.200}"
        );
        // Three client rows, the 60 ops before the stale read all in the prefix.
        for client in ["client 0", "client 1", "client 2"] {
            assert!(svg.contains(&format!(">{client}</text>")), "{client}");
        }
        assert!(svg.matches("class=\"op prefix\"").count() >= 60);
    }
    // K4: a txn-jsonl history read through the run spec; the read skew is a G-single
    // (one wr, one rw), named in the verdict and drawn as a ring of its two txns.
    assert_eq!(
        common::verdict_of(&session, "K4"),
        "FAIL-reproducible",
        "{stdout}"
    );
    assert!(verdicts.contains("G-single"), "{verdicts}");
    let figures = session.join("figures").join("K4");
    let rings: Vec<_> = std::fs::read_dir(&figures)
        .expect("K4 figures")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with("-cycle-1.svg"))
        .collect();
    assert!(
        !rings.is_empty(),
        "no cycle figure in {}",
        figures.display()
    );
    for path in rings {
        let svg = std::fs::read_to_string(&path).expect("cycle");
        assert!(svg.contains(">G-single: a dependency cycle of 2 transactions</text>"));
        assert_eq!(svg.matches("class=\"txn\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("class=\"hop hop-wr\"").count(), 1, "{svg}");
        assert_eq!(svg.matches("class=\"hop hop-rw\"").count(), 1, "{svg}");
        // Each txn box lists its micro-ops as committed; the edge list says why.
        assert!(svg.contains(">r x []</text>") && svg.contains(">r y [1]</text>"));
        assert!(svg.contains(">append x 1</text>") && svg.contains(">append y 1</text>"));
        assert!(svg.contains("1. T"), "{svg}");
        assert!(svg.contains("2. T"), "{svg}");
    }
}

#[test]
fn missing_fault_epoch_is_oracle_too_weak() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (session, stdout) = run_fixture("oracle-fault-epoch.md", dir.path());
    assert_eq!(
        common::verdict_of(&session, "E1"),
        "INCONCLUSIVE-oracle-too-weak",
        "{stdout}"
    );
    // Only fault_epoch is missing: the history has the other fields the checker reads.
    let e1 = answers(&session, "E1");
    assert!(e1.iter().any(|a| a == "no: missing fault_epoch"), "{e1:?}");
}
