//! The PostgreSQL example (`examples/postgres/`), run the way its README runs it: one
//! `faultline run` starts a private PostgreSQL server per seed and drives the
//! list-append workload at read committed (P1), repeatable read (P2) and serializable
//! (P3), each judged by the `list-append` checker at serializable, the plan's claim.
//! PostgreSQL's levels make the verdicts: read skew (G-single) fails P1, write skew
//! (G2-item, and no G-single: repeatable read is snapshot isolation) fails P2, and P3
//! passes with its serialization failures recorded as failed txns. `faultline check`
//! then holds each weaker history to the level PostgreSQL does promise for it.
//! Needs /usr/bin/python3 with psycopg2 and the PostgreSQL server binaries (root or
//! not): with `FAULTLINE_REQUIRE_POSTGRES=1` (CI) a missing one fails the test,
//! otherwise it prints `SKIP: <reason>` and returns.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The interpreter Debian's python3-psycopg2 is built for (the run spec names it too).
const PYTHON: &str = "/usr/bin/python3";

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/postgres")
}

/// Why this machine cannot run the example, if it cannot: the helper's own `check`
/// (psycopg2 importable, initdb and postgres found, a `postgres` user when root).
fn missing() -> Option<String> {
    if !Path::new(PYTHON).is_file() {
        return Some(format!(
            "{PYTHON} is missing (apt-get install python3 python3-psycopg2 postgresql)"
        ));
    }
    let out = Command::new(PYTHON)
        .arg(example().join("pg_append.py"))
        .arg("check")
        .output();
    match out {
        Err(e) => Some(format!("{PYTHON}: {e}")),
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(format!(
            "pg_append.py check: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} unreadable: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines of a JSONL history: its ops, and the `ops_total` of its trailer.
fn history(path: &Path) -> (Vec<Value>, Option<u64>) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} unreadable: {e}", path.display()));
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("history line is JSON"))
        .collect();
    let trailer = lines.iter().find_map(|l| l["ops_total"].as_u64());
    let ops = lines
        .into_iter()
        .filter(|op| op.get("op_id").is_some())
        .collect();
    (ops, trailer)
}

/// The scenario entry `id` of a session's verdicts.json.
fn scenario<'a>(verdicts: &'a Value, id: &str) -> &'a Value {
    verdicts["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no scenario {id} in verdicts.json"))
}

/// The checker's evidence of a scenario's first seed.
fn evidence(entry: &Value) -> &str {
    entry["runs"][0]["seeds"][0]["oracle"]["evidence"]
        .as_str()
        .unwrap_or_default()
}

/// The anomaly counts that failed the check: "101 G-single, 20 G2-item" out of
/// "… anomalies at serializable (101 G-single, 20 G2-item); allowed at …".
fn failing_counts(evidence: &str) -> &str {
    evidence
        .split_once("at serializable (")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map_or("", |(counts, _)| counts)
}

/// `faultline check --checker list-append --json` on a history at `level`: its exit
/// code and report.
fn check(history: &Path, level: &str) -> (Option<i32>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["check", "--checker", "list-append", "--format", "jsonl"])
        .arg(history)
        .args(["--param", &format!("consistency={level}"), "--json"])
        .output()
        .expect("faultline check runs");
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check --json at {level}: {e}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), report)
}

/// The `why` of every anomaly of a `check --json` report.
fn whys(report: &Value) -> Vec<&str> {
    report["anomalies"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["why"].as_str()).collect())
        .unwrap_or_default()
}

/// A txn's shape: its keys and whether each micro-op appends.
fn shape(op: &Value) -> Vec<(Value, bool)> {
    op["input"]
        .as_array()
        .map(|mops| {
            mops.iter()
                .map(|m| (m[1].clone(), m[0] == "append"))
                .collect()
        })
        .unwrap_or_default()
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| {
            let raw = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
            cmdline
                .contains(needle)
                .then(|| format!("{}: {cmdline}", e.file_name().to_string_lossy()))
        })
        .collect()
}

/// Runs anywhere (no PostgreSQL needed): the example's plan and run spec lint clean,
/// with no privileged action (loopback only, no faults).
#[test]
fn postgres_example_plan_lints_clean() {
    let stdout = common::lint_example(&example().join("plan.md"), "P1, P2, P3");
    assert!(
        stdout.contains("picker: list-append for isolation"),
        "{stdout}"
    );
    assert!(!stdout.contains("Privileged fault actions"), "{stdout}");
}

#[test]
fn postgres_example_gives_its_three_verdicts() {
    if common::skipped("POSTGRES", missing()) {
        return;
    }
    let out = tempfile::tempdir().expect("tempdir");
    let run = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(example().join("plan.md"))
        .arg("--sut")
        .arg(example())
        .arg("--out")
        .arg(out.path())
        .args(["--headless", "--yes"])
        .output()
        .expect("faultline run runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    // Exit 1: the session verdict is FAIL, as P1 and P2 must make it.
    assert_eq!(run.status.code(), Some(1), "faultline run: {stderr}");
    let session = common::session_of(&run);

    let by_id = common::verdicts_by_id(&session);
    let verdict = |id: &str| by_id.get(id).cloned().unwrap_or_default();
    assert!(verdict("P1").starts_with("FAIL-"), "{by_id:?}");
    assert!(verdict("P2").starts_with("FAIL-"), "{by_id:?}");
    assert_eq!(verdict("P3"), "PASS-smoke", "{by_id:?}");
    // Every artifact says so (no faults here: nothing to prove), P1's and P2's
    // classifiers with it.
    let agreed = crate::agreement::artifacts_agree(&session);
    assert_eq!((agreed.runs, agreed.classified), (3, 2), "{agreed:?}");
    let verdicts = json(&session.join("verdicts.json"));
    let history_of = |id: &str| session.join(format!("artifacts/{id}/seed-1/history.jsonl"));

    // P1, read committed: read skew. The run's checker counts G-single among what
    // failed the check, the finding lists one, and the full report explains one hop
    // by hop: a read without a later txn's append (rw), a read of an append (wr).
    let p1 = scenario(&verdicts, "P1");
    let p1_evidence = evidence(p1);
    assert!(
        failing_counts(p1_evidence).contains("G-single"),
        "{p1_evidence}"
    );
    let finding = &p1["finding"];
    assert_eq!(
        finding["anomalies_total"], p1["runs"][0]["oracle"]["anomalies"],
        "{finding}"
    );
    assert!(
        finding["anomalies"].as_array().is_some_and(|a| a
            .iter()
            .any(|x| x.as_str().is_some_and(|t| t.starts_with("G-single (")))),
        "no G-single listed in P1's finding: {finding}"
    );
    let (code, report) = check(&history_of("P1"), "serializable");
    assert_eq!(code, Some(1), "{report}");
    let read_skew = whys(&report).into_iter().find(|why| {
        why.starts_with("G-single (violates snapshot-isolation and stronger): ")
            && why.contains(" (rw): ")
            && why.contains(", without T")
            && why.contains(" (wr): ")
            && why.contains("'s append of ")
    });
    assert!(
        read_skew.is_some(),
        "no G-single explained with its rw and wr edges: {report}"
    );
    // One history, one report: a second check finds the same cycles, in the same
    // words (hundreds of them here, over eight processes and many keys).
    let (_, again) = check(&history_of("P1"), "serializable");
    assert_eq!(again, report, "two checks of P1's history differ");
    // What PostgreSQL does promise at read committed holds: no G0, G1a, G1b, G1c.
    let (code, report) = check(&history_of("P1"), "read-committed");
    assert_eq!(code, Some(0), "P1's history at read-committed: {report}");
    assert_eq!(report["valid"], true, "{report}");

    // P2, repeatable read: write skew, and nothing snapshot isolation forbids.
    let p2 = scenario(&verdicts, "P2");
    let p2_evidence = evidence(p2);
    assert!(
        failing_counts(p2_evidence).contains("G2-item"),
        "{p2_evidence}"
    );
    for forbidden in ["G-single", "G0", "G1"] {
        assert!(
            !p2_evidence.contains(forbidden),
            "{forbidden} at repeatable read: {p2_evidence}"
        );
    }
    let (code, report) = check(&history_of("P2"), "serializable");
    assert_eq!(code, Some(1), "{report}");
    let p2_whys = whys(&report);
    assert!(!p2_whys.is_empty(), "{report}");
    let not_write_skew: Vec<&&str> = p2_whys
        .iter()
        .filter(|why| !why.starts_with("G2-item (violates serializable and stronger): "))
        .collect();
    assert!(not_write_skew.is_empty(), "{not_write_skew:?}");
    assert!(
        p2_whys
            .iter()
            .any(|why| why.matches(" (rw): ").count() >= 2),
        "a write skew has two rw edges: {p2_whys:?}"
    );
    let (code, report) = check(&history_of("P2"), "snapshot-isolation");
    assert_eq!(
        code,
        Some(0),
        "P2's history at snapshot-isolation: {report}"
    );
    assert_eq!(report["valid"], true, "{report}");

    // P3, serializable: no anomaly over every op of a busy history, in which the
    // server aborted txns (40001) that the client recorded as failed and ran again.
    let p3 = scenario(&verdicts, "P3");
    let oracle = &p3["runs"][0]["oracle"];
    assert_eq!(oracle["anomalies"], 0, "{oracle}");
    let (ops, trailer) = history(&history_of("P3"));
    assert_eq!(oracle["ops_produced"].as_u64(), Some(ops.len() as u64));
    assert_eq!(oracle["ops_checked"], oracle["ops_produced"], "{oracle}");
    assert_eq!(trailer, Some(ops.len() as u64), "the ops_total trailer");
    let committed = ops
        .iter()
        .filter(|op| op["error"].is_null() && op["timeout"] == false)
        .count();
    assert!(committed >= 300, "{committed} committed txns in 5 s");
    let failed: Vec<&Value> = ops.iter().filter(|op| !op["error"].is_null()).collect();
    assert!(
        failed.iter().any(|op| op["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("40001: "))),
        "no serialization failure recorded"
    );
    let other: Vec<&&Value> = failed
        .iter()
        .filter(|op| {
            !op["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("40001: ") || e.starts_with("40P01: "))
        })
        .collect();
    assert!(other.is_empty(), "failed for another reason: {other:?}");
    let unknown = ops.iter().filter(|op| op["timeout"] == true).count();
    assert_eq!(unknown, 0, "no fault, yet txns of unknown outcome");
    // Each aborted txn is run again by its process as a new txn of the same shape
    // with fresh values (the process's last op may have had no time left to retry).
    let mut by_process: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for op in &ops {
        by_process
            .entry(op["process"].to_string())
            .or_default()
            .push(op);
    }
    for (process, txns) in &by_process {
        for pair in txns.windows(2) {
            let (aborted, next) = (pair[0], pair[1]);
            if aborted["error"].is_null() {
                continue;
            }
            assert_eq!(
                shape(aborted),
                shape(next),
                "process {process}: {aborted} → {next}"
            );
            assert_ne!(aborted["op_id"], next["op_id"], "{next}");
            let appends = |op: &Value| -> Vec<Value> {
                op["input"]
                    .as_array()
                    .map(|m| {
                        m.iter()
                            .filter(|x| x[0] == "append")
                            .map(|x| x[2].clone())
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let again: Vec<Value> = appends(aborted)
                .into_iter()
                .filter(|v| appends(next).contains(v))
                .collect();
            assert!(again.is_empty(), "a retry reused {again:?}: {next}");
        }
    }
    let (code, report) = check(&history_of("P3"), "serializable");
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["coverage"], 1.0, "{report}");

    // Every node stopped its server and deleted its data directory: one note per
    // iteration (P1 and P2 ran twice: the same-seed re-run of a FAIL).
    let mut notes = Vec::new();
    for id in ["P1", "P2", "P3"] {
        for entry in std::fs::read_dir(session.join(format!("artifacts/{id}")))
            .expect("artifacts dir")
            .flatten()
        {
            let note = entry.path().join("pg-node.json");
            if note.is_file() {
                notes.push(json(&note));
            }
        }
    }
    assert_eq!(notes.len(), 5, "{notes:?}");
    for note in &notes {
        let data = note["data_dir"].as_str().expect("data_dir");
        assert!(!Path::new(data).exists(), "{data} left behind");
        // Under the seed's artifacts, as any user would put it (run as root, it is the
        // postgres user's: the session lets the system under test in there).
        assert!(
            Path::new(data).starts_with(session.join("artifacts")),
            "{data} is not under the session's artifacts"
        );
        let home = note["node_dir"].as_str().expect("node_dir");
        assert!(!Path::new(home).exists(), "{home} left behind");
        let left = processes_mentioning(data);
        assert!(left.is_empty(), "still running: {left:?}");
    }
}
