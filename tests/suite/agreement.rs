//! Every artifact of one session agrees with verdicts.json (issue 31). On the demo
//! session the suite already runs (all scenarios and arms): each run's verdict in
//! report.md, its finding and junit.xml; each fault's proof state per seed in the
//! journal's `fault-proof` records, verdicts.json's landing evidence, `metrics/`, the
//! figures' legends and the live chart's fault row (the reducer's `View`); who
//! classified each FAIL; the seeds that ran. An artifact added later joins this test (references/development.md).

use std::collections::BTreeMap;
use std::path::Path;

use faultline::session::journal::Record;
use serde_json::Value;

use crate::common;

/// (stem, label, fault) → proven, from the journal's `fault-proof` records; the label
/// is the scope's last `iteration-started`.
type Proofs = BTreeMap<(String, String, String), bool>;

fn stem(record: &Value) -> Option<String> {
    let scenario = record["scenario"].as_str()?;
    Some(match record["arm"].as_str() {
        Some(arm) => format!("{scenario}-{arm}"),
        None => scenario.to_string(),
    })
}

fn proofs(records: &[Value]) -> Proofs {
    let mut label: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Proofs::new();
    for record in records {
        let Some(stem) = stem(record) else { continue };
        match record["kind"].as_str() {
            Some("iteration-started") => {
                let l = record["data"]["label"].as_str().expect("label");
                label.insert(stem, l.to_string());
            }
            Some("fault-proof") => {
                let l = label
                    .get(&stem)
                    .expect("a proof inside an iteration")
                    .clone();
                let fault = record["data"]["fault"].as_str().expect("fault").to_string();
                let proven = record["data"]["proven"].as_bool().expect("proven");
                out.insert((stem, l, fault), proven);
            }
            _ => {}
        }
    }
    out
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// verdicts.json's landing evidence: (label, fault) → injected and declared seen.
fn evidence(run: &Value) -> BTreeMap<(String, String), bool> {
    let mut out = BTreeMap::new();
    let mut add = |label: String, landing: &Value| {
        for e in landing.as_array().into_iter().flatten() {
            let fault = e["fault"].as_str().expect("fault").to_string();
            let proven = e["injected"] == true && e["declared"] == true;
            out.insert((label.clone(), fault), proven);
        }
    };
    for seed in run["seeds"].as_array().into_iter().flatten() {
        let n = seed["seed"].as_u64().expect("seed");
        add(format!("seed-{n}"), &seed["landing"]);
        if run["rerun"].is_object() {
            add(format!("seed-{n}-rerun"), &run["rerun"]["landing"]);
        }
    }
    out
}

/// The testcase named `name …` in junit.xml, its opening tag to its end.
fn junit_case<'a>(junit: &'a str, name: &str) -> &'a str {
    let start = junit
        .find(&format!("<testcase name=\"{name} "))
        .unwrap_or_else(|| panic!("no testcase {name} in junit.xml"));
    let case = &junit[start..];
    &case[..case.find("</testcase>").unwrap_or(case.len())]
}

/// What junit.xml says of the testcase named `name …`: "pass", "failure", "skipped".
fn junit_outcome(junit: &str, name: &str) -> &'static str {
    let case = junit_case(junit, name);
    if case.contains("<failure") {
        "failure"
    } else if case.contains("<skipped") || case.contains("<error") {
        "skipped"
    } else {
        "pass"
    }
}

/// A testcase's `time` attribute, in seconds.
fn junit_time(junit: &str, name: &str) -> f64 {
    let case = junit_case(junit, name);
    let at = case.find(" time=\"").expect("time attribute") + " time=\"".len();
    let value = &case[at..at + case[at..].find('"').expect("closing quote")];
    value
        .parse()
        .unwrap_or_else(|e| panic!("time {value:?} of {name}: {e}"))
}

/// A run's own wall time as the journal says it, read here apart from the reducer:
/// its first `iteration-started` to its last `verdict` record.
fn own_seconds(records: &[Value], id: &str) -> f64 {
    let (scenario, arm) = match id.split_once('/') {
        Some(_) => (id.split('/').next().unwrap_or(id), Some(id)),
        None => (id, None),
    };
    let ours = |r: &&Value| r["scenario"].as_str() == Some(scenario) && r["arm"].as_str() == arm;
    let ts = |r: &Value| {
        chrono::DateTime::parse_from_rfc3339(r["ts"].as_str().expect("ts")).expect("rfc 3339")
    };
    let first = records
        .iter()
        .filter(ours)
        .find(|r| r["kind"] == "iteration-started");
    let last = records
        .iter()
        .filter(ours)
        .rfind(|r| r["kind"] == "verdict");
    match (first, last) {
        (Some(a), Some(b)) => (ts(b) - ts(a)).num_milliseconds() as f64 / 1000.0,
        _ => 0.0,
    }
}

/// The `<testsuite …>`'s `time` attribute, in seconds.
fn junit_time_of_suite(junit: &str) -> f64 {
    let tag = &junit[junit.find("<testsuite ").expect("testsuite")..];
    let tag = &tag[..tag.find('>').expect("end of tag")];
    let at = tag.find(" time=\"").expect("time attribute") + " time=\"".len();
    tag[at..at + tag[at..].find('"').expect("closing quote")]
        .parse()
        .expect("seconds")
}

#[test]
fn every_artifact_of_the_demo_session_agrees_with_verdicts_json() {
    let _slot = common::demo_lock();
    let run = common::demo_run();
    let session = common::session_of(&run.out);
    let records = common::journal_values(&session);
    let proofs = proofs(&records);
    assert!(!proofs.is_empty(), "the demo proves faults");
    let verdicts = json(&session.join("verdicts.json"));
    let report = std::fs::read_to_string(session.join("findings/report.md")).expect("report");
    let junit = std::fs::read_to_string(session.join("findings/junit.xml")).expect("junit");

    let mut checked_windows = 0;
    let mut junit_total = 0.0;
    let mut seen_not_proven = false;
    for scenario in verdicts["scenarios"].as_array().expect("scenarios") {
        for run in scenario["runs"].as_array().expect("runs") {
            let id = run["id"].as_str().expect("id");
            let verdict = run["verdict"].as_str().expect("verdict");
            let stem = id.replace('/', "-");
            // The verdict, as report.md's table row and junit.xml say it.
            assert!(
                report.contains(&format!("| {id} | ")) && {
                    let row = report
                        .lines()
                        .find(|l| l.starts_with(&format!("| {id} | ")))
                        .unwrap_or_default();
                    row.contains(&format!("| {verdict} — "))
                },
                "report.md's row of {id} does not say {verdict}"
            );
            let expected = match verdict {
                v if v.starts_with("PASS") || v.starts_with("PARTIAL") => "pass",
                v if v.starts_with("FAIL") => "failure",
                _ => "skipped",
            };
            assert_eq!(
                junit_outcome(&junit, id),
                expected,
                "junit.xml on {id} ({verdict})"
            );
            // Its own wall time, not counted from the session's start.
            let own = own_seconds(&records, id);
            let said = junit_time(&junit, id);
            assert!(
                (said - own).abs() < 0.0015,
                "junit.xml gives {id} {said} s; its own iterations to its verdict took {own} s"
            );
            junit_total += said;
            if !id.contains('/') {
                let finding = std::fs::read_to_string(session.join(format!("findings/{id}.md")))
                    .expect("finding");
                let scenario_verdict = scenario["verdict"].as_str().expect("verdict");
                assert!(
                    finding.contains(&format!("**Verdict:** {scenario_verdict} — ")),
                    "findings/{id}.md does not say {scenario_verdict}"
                );
            }

            // Who classified a FAIL, as the journal's answer records say.
            if verdict.starts_with("FAIL") {
                let by = records
                    .iter()
                    .filter(|r| r["kind"] == "operator-answer")
                    .find(|r| r["data"]["question"] == format!("{id}.blame"))
                    .and_then(|r| r["data"]["by"].as_str())
                    .unwrap_or_else(|| panic!("{id}.blame was answered"));
                let finding = std::fs::read_to_string(session.join(format!("findings/{stem}.md")))
                    .expect("finding");
                for (name, text) in [("the finding", &finding), ("report.md", &report)] {
                    assert!(
                        text.contains(&format!("(answered by {by})")),
                        "{name} does not say who classified {id} ({by})"
                    );
                }
            }

            // Each fault of each seed: proven in the journal iff verdicts.json's
            // evidence says injected and declared seen.
            let said = evidence(run);
            for ((label, fault), proven) in &said {
                let key = (stem.clone(), label.clone(), fault.clone());
                assert_eq!(
                    proofs.get(&key),
                    Some(proven),
                    "{id} {label} {fault}: the journal's proof against verdicts.json"
                );
                seen_not_proven |= !proven;
            }
            // A verdict that rests on a proof has one: INCONCLUSIVE-fault-not-proven
            // has a fault not proven; a PASS with faults has every one proven.
            if verdict == "INCONCLUSIVE-fault-not-proven" {
                assert!(said.values().any(|p| !p), "{id}: {said:?}");
            }
            if verdict.starts_with("PASS") && !said.is_empty() {
                assert!(said.values().all(|p| *p), "{id}: {said:?}");
            }
        }
    }
    assert!(seen_not_proven, "the demo has a fault not proven (D4)");
    // The runs happen one after another: their own times fit in the suite's.
    let suite = junit_time_of_suite(&junit);
    assert!(
        junit_total <= suite + 0.01,
        "junit.xml's testcases add up to {junit_total} s in a {suite} s suite"
    );

    // metrics/ and the figures' legends say each window as the journal does.
    for ((stem, label, fault), proven) in &proofs {
        let metrics = session.join(format!("metrics/{stem}/{label}.json"));
        if !metrics.exists() {
            continue;
        }
        let series = json(&metrics);
        for window in series["windows"].as_array().expect("windows") {
            if window["fault"] != fault.as_str() {
                continue;
            }
            assert_eq!(
                window["proven"].as_bool(),
                Some(*proven),
                "{}: {fault}",
                metrics.display()
            );
            let figure = session.join(format!("figures/{stem}/{label}-throughput.svg"));
            let svg = std::fs::read_to_string(&figure).expect("figure");
            let state = if *proven { "proven" } else { "NOT proven" };
            assert!(
                svg.contains(&format!("fault {fault} ({state})")),
                "{}: legend of {fault} is not `{state}`",
                figure.display()
            );
            checked_windows += 1;
        }
    }
    assert!(checked_windows > 0, "no fault window was checked");

    // The live chart's fault row, as the reducer folds the journal: each row's last
    // iteration's faults carry that iteration's proofs.
    let typed: Vec<Record> = std::fs::read_to_string(session.join("journal.jsonl"))
        .expect("journal")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let plan = faultline::plan::parse_plan(
        "examples/demo/plan.md",
        include_str!("../../examples/demo/plan.md"),
    );
    let mut view = faultline::session::view::View::for_plan(&plan);
    for record in &typed {
        view.apply(record);
    }
    let mut rows_checked = 0;
    for (row, live) in &view.live {
        let stem = view.runs[*row].id.replace('/', "-");
        for line in &live.faults {
            let key = (
                stem.clone(),
                live.label.to_string(),
                line.mark.fault.clone(),
            );
            if let Some(proven) = proofs.get(&key) {
                assert_eq!(line.mark.proven, Some(*proven), "live chart of {key:?}");
                rows_checked += 1;
            }
        }
    }
    assert!(rows_checked > 0, "no live fault row was checked");
}
