//! Every artifact of one session agrees with verdicts.json (issue 31). [`artifacts_agree`]
//! checks one session: each run's verdict in report.md, its findings and junit.xml,
//! and each scenario's and arm's badge (and the session's verdict) in report.html;
//! each run's own wall time in junit.xml; each fault's proof state per seed in the
//! journal's `fault-proof` records, verdicts.json's landing evidence, `metrics/`, the
//! figures' legends and the live chart's fault row (the reducer's `View`); who
//! classified each FAIL; the seeds that ran. It runs here on the demo session (all
//! scenarios and arms) and, in their own tests, on the sessions the Redis, PostgreSQL
//! and SSH-cluster examples already run. An artifact added later joins it
//! (references/development.md).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use faultline::session::journal::Record;
use serde_json::Value;

use crate::common;

/// (stem, label, fault) → proven, from the journal's `fault-proof` records; the label
/// is the scope's last `iteration-started`.
type Proofs = BTreeMap<(String, String, String), bool>;

/// How much [`artifacts_agree`] found to check in a session: a caller that knows its
/// session has faults, FAILs or figures asserts the counts are not zero, so the
/// check never passes on nothing.
#[derive(Debug, Default)]
pub struct Agreed {
    /// Runs (scenarios and arms) whose verdict was checked in every artifact.
    pub runs: usize,
    /// Seeds that ran, as verdicts.json and the journal both list them.
    pub seeds: usize,
    /// Faults of a seed or re-run whose proof agrees with the landing evidence.
    pub proofs: usize,
    /// Of those, the ones not proven.
    pub not_proven: usize,
    /// `metrics/` fault windows checked against the journal's proofs.
    pub windows: usize,
    /// Figure legend entries checked against the journal's proofs.
    pub legends: usize,
    /// Faults of the live chart's rows checked against the journal's proofs.
    pub live_faults: usize,
    /// FAIL scenarios whose classifier was checked in the finding and report.md.
    pub classified: usize,
    /// report.html's badges checked against verdicts.json (scenarios and arms).
    pub badges: usize,
}

/// The run (`D3`, `D5/api`) a record belongs to, if any.
fn run_id(record: &Value) -> Option<String> {
    let scenario = record["scenario"].as_str()?;
    Some(record["arm"].as_str().unwrap_or(scenario).to_string())
}

/// A run id as a file stem (`D5/api` → `D5-api`).
fn stem_of(id: &str) -> String {
    id.replace('/', "-")
}

fn proofs(records: &[Value]) -> Proofs {
    let mut label: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Proofs::new();
    for record in records {
        let Some(stem) = run_id(record).map(|id| stem_of(&id)) else {
            continue;
        };
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

/// The labels of every iteration the journal started, by run id, in order.
fn labels(records: &[Value]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for record in records.iter().filter(|r| r["kind"] == "iteration-started") {
        let id = run_id(record).expect("an iteration belongs to a run");
        let label = record["data"]["label"].as_str().expect("label");
        out.entry(id).or_default().push(label.to_string());
    }
    out
}

/// `seed-N` → N; None for a re-run or a reduction step (`seed-N-rerun`, `seed-N-reduce-K`).
fn plain_seed(label: &str) -> Option<u64> {
    label.strip_prefix("seed-")?.parse().ok()
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// verdicts.json's landing evidence: (label, fault) → injected and declared seen. A
/// re-run's evidence is under the label the journal gave it (`rerun`).
fn evidence(run: &Value, rerun: Option<&str>) -> BTreeMap<(String, String), bool> {
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
    }
    if let Some(label) = rerun {
        add(label.to_string(), &run["rerun"]["landing"]);
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

/// The value of attribute `name` in the tag starting at `tag`.
fn attribute<'a>(tag: &'a str, name: &str) -> &'a str {
    let tag = &tag[..tag.find('>').expect("end of tag")];
    let key = format!(" {name}=\"");
    let at = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + key.len();
    &tag[at..at + tag[at..].find('"').expect("closing quote")]
}

/// A testcase's `time` attribute, in seconds.
fn junit_time(junit: &str, name: &str) -> f64 {
    let value = attribute(junit_case(junit, name), "time");
    value
        .parse()
        .unwrap_or_else(|e| panic!("time {value:?} of {name}: {e}"))
}

/// A run's own wall time as the journal says it, read here apart from the reducer:
/// its first `iteration-started` to its last `verdict` record.
fn own_seconds(records: &[Value], id: &str) -> f64 {
    let ours = |r: &&Value| run_id(r).as_deref() == Some(id);
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

/// The part of a markdown text from the line `heading` to the next heading of its
/// level or above.
fn section<'a>(text: &'a str, heading: &str) -> Option<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let mut at = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end();
        match start {
            None if bare == heading => start = Some(at),
            Some(s) => {
                let hashes = bare.chars().take_while(|c| *c == '#').count();
                if hashes > 0 && hashes <= level && bare[hashes..].starts_with(' ') {
                    return Some(&text[s..at]);
                }
            }
            None => {}
        }
        at += line.len();
    }
    start.map(|s| &text[s..])
}

/// The `| id | …` row of report.md's results table.
fn report_row<'a>(report: &'a str, id: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.starts_with(&format!("| {id} | ")))
        .unwrap_or_else(|| panic!("report.md has no row of {id}"))
}

/// The `fault X (state)` legend entries of an SVG figure.
fn legends(svg: &str) -> Vec<(String, String)> {
    svg.split("<text ")
        .skip(1)
        .filter_map(|rest| {
            let text = rest[rest.find('>')? + 1..rest.find("</text>")?].trim();
            let text = text.strip_prefix("fault ")?;
            let (fault, state) = text.rsplit_once(" (")?;
            Some((fault.to_string(), state.strip_suffix(')')?.to_string()))
        })
        .collect()
}

/// report.html's dashboard: each badge's run and verdict, in page order, and the
/// session's verdict.
fn badges(html: &str) -> (Vec<(String, String)>, Option<String>) {
    let unescape = |v: &str| {
        v.replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    };
    let badges = html
        .split("<a class=\"badge ")
        .skip(1)
        .map(|tag| {
            (
                unescape(attribute(tag, "data-run")),
                unescape(attribute(tag, "data-verdict")),
            )
        })
        .collect();
    let session = html
        .split_once(" data-session-verdict=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(v, _)| unescape(v));
    (badges, session)
}

/// How the figures name a proof state.
fn state_word(proven: Option<bool>) -> &'static str {
    match proven {
        Some(true) => "proven",
        Some(false) => "NOT proven",
        None => "undecided",
    }
}

/// Checks that every artifact of `session` agrees with its verdicts.json and journal,
/// for every scenario and arm; what a session lacks (faults, FAILs, seeds, figures) is
/// left out, and the counts returned say what was checked.
pub fn artifacts_agree(session: &Path) -> Agreed {
    let records = common::journal_values(session);
    assert!(!records.is_empty(), "{}: no journal", session.display());
    let proofs = proofs(&records);
    let labels = labels(&records);
    let verdicts = json(&session.join("verdicts.json"));
    let report = read(&session.join("findings/report.md"));
    let junit = read(&session.join("findings/junit.xml"));
    let (badges, session_badge) = badges(&read(&session.join("findings/report.html")));
    let badge = |id: &str| {
        let found: Vec<&str> = badges
            .iter()
            .filter(|(run, _)| run == id)
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(found.len(), 1, "report.html's badges of {id}: {found:?}");
        found[0].to_string()
    };
    assert_eq!(
        session_badge.as_deref(),
        verdicts["session_verdict"].as_str(),
        "report.html's session verdict"
    );
    let mut agreed = Agreed::default();

    let mut junit_total = 0.0;
    let mut fails = 0;
    let mut run_ids = BTreeSet::new();
    for scenario in verdicts["scenarios"].as_array().expect("scenarios") {
        let scenario_id = scenario["id"].as_str().expect("id");
        let scenario_verdict = scenario["verdict"].as_str().expect("verdict");
        let runs = scenario["runs"].as_array().expect("runs");
        let has_arms = runs.iter().any(|r| r["id"] != scenario_id);
        // Its badge on report.html's dashboard, and each arm's.
        assert_eq!(
            badge(scenario_id),
            scenario_verdict,
            "report.html's badge of {scenario_id}"
        );
        agreed.badges += 1;
        for arm in runs.iter().filter(|r| r["id"] != scenario_id) {
            let id = arm["id"].as_str().expect("id");
            assert_eq!(
                badge(id),
                arm["verdict"].as_str().expect("verdict"),
                "report.html's badge of {id}"
            );
            agreed.badges += 1;
        }
        // The scenario's verdict: its finding's head, and its arms' row in report.md.
        let scenario_finding = read(&session.join(format!("findings/{scenario_id}.md")));
        assert!(
            scenario_finding.contains(&format!("**Verdict:** {scenario_verdict} — ")),
            "findings/{scenario_id}.md does not say {scenario_verdict}"
        );
        if has_arms {
            let row = report_row(&report, &format!("{scenario_id} (all arms)"));
            assert!(
                row.contains(&format!("| {scenario_verdict} — ")),
                "report.md's row of {scenario_id}'s arms does not say {scenario_verdict}: {row}"
            );
        }
        for run in runs {
            let id = run["id"].as_str().expect("id");
            let verdict = run["verdict"].as_str().expect("verdict");
            let stem = stem_of(id);
            run_ids.insert(id.to_string());
            // The verdict, as report.md's table row, the findings and junit.xml say it.
            let row = report_row(&report, id);
            assert!(
                row.contains(&format!("| {verdict} — ")),
                "report.md's row of {id} does not say {verdict}: {row}"
            );
            for file in [scenario_id.to_string(), stem.clone()] {
                let text = read(&session.join(format!("findings/{file}.md")));
                let part = section(&text, &format!("## Run {id}"))
                    .unwrap_or_else(|| panic!("findings/{file}.md has no `## Run {id}`"));
                assert!(
                    part.contains(&format!("- **Verdict:** {verdict} — ")),
                    "findings/{file}.md's run {id} does not say {verdict}"
                );
            }
            // As junit.rs maps them: a PARTIAL run is skipped, not passed (a demo
            // run under load may end PARTIAL).
            let expected = match verdict {
                v if v.starts_with("PASS") => "pass",
                v if v.starts_with("FAIL") => "failure",
                _ => "skipped",
            };
            fails += usize::from(expected == "failure");
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

            // The seeds that ran: verdicts.json's against the journal's `seed-N`
            // iterations, and report.md's row naming each (or none); a re-run in
            // verdicts.json iff the journal started one, of a seed that ran.
            let ran = labels.get(id).cloned().unwrap_or_default();
            let journal_seeds: BTreeSet<u64> = ran.iter().filter_map(|l| plain_seed(l)).collect();
            let said_seeds: BTreeSet<u64> = run["seeds"]
                .as_array()
                .expect("seeds")
                .iter()
                .map(|s| s["seed"].as_u64().expect("seed"))
                .collect();
            assert_eq!(
                said_seeds, journal_seeds,
                "{id}: verdicts.json's seeds against the journal's iterations {ran:?}"
            );
            if said_seeds.is_empty() {
                assert!(row.contains("| no seed ran |"), "report.md on {id}: {row}");
            } else {
                assert!(!row.contains("no seed ran"), "report.md on {id}: {row}");
                for n in &said_seeds {
                    assert!(
                        row.contains(&format!("seed {n}: ")),
                        "report.md's row of {id} does not name seed {n}: {row}"
                    );
                }
            }
            agreed.seeds += said_seeds.len();
            let reruns: Vec<&String> = ran.iter().filter(|l| l.ends_with("-rerun")).collect();
            assert!(reruns.len() <= 1, "{id}: {reruns:?}");
            let rerun = reruns.first().map(|l| l.as_str());
            assert_eq!(
                run["rerun"].is_object(),
                rerun.is_some(),
                "{id}: verdicts.json's re-run against the journal's iterations {ran:?}"
            );
            if let Some(label) = rerun {
                let of = label
                    .strip_suffix("-rerun")
                    .and_then(plain_seed)
                    .expect("a re-run of a seed");
                assert!(said_seeds.contains(&of), "{id}: {label} of a seed not run");
            }

            // Each fault of each seed: proven in the journal iff verdicts.json's
            // evidence says injected and declared seen.
            let said = evidence(run, rerun);
            for ((label, fault), proven) in &said {
                let key = (stem.clone(), label.clone(), fault.clone());
                assert_eq!(
                    proofs.get(&key),
                    Some(proven),
                    "{id} {label} {fault}: the journal's proof against verdicts.json"
                );
                agreed.proofs += 1;
                agreed.not_proven += usize::from(!proven);
            }
            // And the other way: every proof of a seed or re-run is in verdicts.json.
            for (s, label, fault) in proofs.keys() {
                if *s == stem && (plain_seed(label).is_some() || Some(label.as_str()) == rerun) {
                    assert!(
                        said.contains_key(&(label.clone(), fault.clone())),
                        "{id} {label} {fault}: proven in the journal, not in verdicts.json"
                    );
                }
            }
            // A verdict that rests on a proof has one: INCONCLUSIVE-fault-not-proven
            // has a fault not proven; a PASS with faults has every one proven.
            if verdict == "INCONCLUSIVE-fault-not-proven" {
                assert!(said.values().any(|p| !p), "{id}: {said:?}");
            }
            if verdict.starts_with("PASS") && !said.is_empty() {
                assert!(said.values().all(|p| *p), "{id}: {said:?}");
            }
            agreed.runs += 1;
        }

        // Who classified a FAIL, as the journal's answer records say: in the
        // scenario's finding and its section of report.md's findings.
        if scenario_verdict.starts_with("FAIL") {
            let prefix = format!("{scenario_id}.");
            let answers: Vec<&Value> = records
                .iter()
                .filter(|r| r["kind"] == "operator-answer")
                .filter(|r| r["scenario"] == scenario_id && r["arm"].is_null())
                .filter(|r| {
                    r["data"]["question"]
                        .as_str()
                        .is_some_and(|q| q.starts_with(&prefix))
                })
                .collect();
            let mut by: Vec<String> = Vec::new();
            for answer in &answers {
                let how = answer["data"]["by"].as_str().expect("by");
                let who = match answer["data"]["who"].as_str() {
                    Some(who) => format!("{who} ({how})"),
                    None => how.to_string(),
                };
                if !by.contains(&who) {
                    by.push(who);
                }
            }
            let blame = answers
                .iter()
                .rfind(|r| r["data"]["question"] == format!("{scenario_id}.blame"))
                .and_then(|r| r["data"]["answer"].as_str());
            let heading = report
                .lines()
                .find(|l| l.starts_with("### F") && l.contains(&format!(": {scenario_id} ")))
                .unwrap_or_else(|| panic!("report.md has no finding of {scenario_id}"));
            let in_report = section(&report, heading).expect("its section");
            for (name, text) in [
                (
                    format!("findings/{scenario_id}.md"),
                    scenario_finding.as_str(),
                ),
                ("report.md".to_string(), in_report),
            ] {
                let line = text
                    .lines()
                    .find(|l| l.starts_with("- **Blame:** "))
                    .unwrap_or_else(|| panic!("{name} has no blame of {scenario_id}"));
                match blame {
                    Some(blame) => assert_eq!(
                        line,
                        format!("- **Blame:** {blame} (answered by {})", by.join(", ")),
                        "{name}: who classified {scenario_id}"
                    ),
                    None => assert!(
                        !line.contains("(answered by"),
                        "{name}: {scenario_id} was not classified, yet: {line}"
                    ),
                }
            }
            agreed.classified += usize::from(blame.is_some());
        }
    }
    // report.html has a badge per scenario and arm, no more.
    assert_eq!(
        badges.len(),
        agreed.badges,
        "report.html's badges: {badges:?}"
    );
    // junit.xml has a testcase per run, no more; its counts are the runs'.
    let suite_tag = &junit[junit.find("<testsuite ").expect("testsuite")..];
    assert_eq!(
        attribute(suite_tag, "tests"),
        run_ids.len().to_string(),
        "junit.xml's tests against verdicts.json's runs"
    );
    assert_eq!(
        junit.matches("<testcase ").count(),
        run_ids.len(),
        "junit.xml's testcases"
    );
    assert_eq!(
        attribute(suite_tag, "failures"),
        fails.to_string(),
        "junit.xml's failures"
    );
    // The runs happen one after another: their own times fit in the suite's.
    let suite: f64 = attribute(suite_tag, "time").parse().expect("seconds");
    assert!(
        junit_total <= suite + 0.01,
        "junit.xml's testcases add up to {junit_total} s in a {suite} s suite"
    );
    // Every run the journal started an iteration of is in verdicts.json.
    for id in labels.keys() {
        assert!(run_ids.contains(id), "{id} ran but is not in verdicts.json");
    }

    // metrics/ and the figures' legends say each window as the journal does (a
    // window of a fault with no proof: undecided).
    for (id, ran) in &labels {
        let stem = stem_of(id);
        let figures: Vec<String> = std::fs::read_dir(session.join(format!("figures/{stem}")))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".svg"))
            .collect();
        for label in ran {
            let proof = |fault: &str| {
                proofs
                    .get(&(stem.clone(), label.clone(), fault.to_string()))
                    .copied()
            };
            let metrics = session.join(format!("metrics/{stem}/{label}.json"));
            if metrics.exists() {
                let series = json(&metrics);
                for window in series["windows"].as_array().expect("windows") {
                    let fault = window["fault"].as_str().expect("fault");
                    assert_eq!(
                        window["proven"].as_bool(),
                        proof(fault),
                        "{}: {fault}",
                        metrics.display()
                    );
                    agreed.windows += 1;
                }
            }
            // This label's figures: `<label>-<kind>.svg`, no longer label matching.
            let ours = figures.iter().filter(|name| {
                name.strip_prefix(&format!("{label}-")).is_some()
                    && !ran.iter().any(|other| {
                        other.len() > label.len()
                            && other.starts_with(label.as_str())
                            && name.starts_with(&format!("{other}-"))
                    })
            });
            for name in ours {
                let path = session.join(format!("figures/{stem}/{name}"));
                let svg = read(&path);
                for (fault, state) in legends(&svg) {
                    assert_eq!(
                        state,
                        state_word(proof(&fault)),
                        "{}: legend of {fault}",
                        path.display()
                    );
                    agreed.legends += 1;
                }
            }
        }
    }

    // The live chart's fault rows, as the reducer folds the journal: at the end of
    // each iteration (the next one's start, or the journal's end) its faults carry
    // that iteration's proofs.
    let typed: Vec<Record> = read(&session.join("journal.jsonl"))
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let mut view = faultline::session::view::View::default();
    let mut check_live = |view: &faultline::session::view::View, row: usize| {
        let Some(live) = view.live.get(&row) else {
            return;
        };
        let stem = stem_of(&view.runs[row].id);
        for line in &live.faults {
            let key = (
                stem.clone(),
                live.label.to_string(),
                line.mark.fault.clone(),
            );
            assert_eq!(
                line.mark.proven,
                proofs.get(&key).copied(),
                "live chart of {key:?}"
            );
            agreed.live_faults += 1;
        }
    };
    for record in &typed {
        let starts = matches!(
            record.event,
            faultline::session::event::Event::IterationStarted(_)
        );
        if starts {
            let id = record.scope.arm.clone().or(record.scope.scenario.clone());
            if let Some(row) = view.runs.iter().position(|r| Some(&r.id) == id.as_ref()) {
                check_live(&view, row);
            }
        }
        view.apply(record);
    }
    for row in 0..view.runs.len() {
        check_live(&view, row);
    }
    agreed
}

#[test]
fn every_artifact_of_the_demo_session_agrees_with_verdicts_json() {
    let run = common::demo_run();
    let session = common::session_of(&run.out);
    let agreed = artifacts_agree(&session);
    // The demo has every kind of fact to check: none of them passed on nothing.
    assert!(
        agreed.not_proven > 0,
        "the demo has a fault not proven (D4)"
    );
    assert!(agreed.runs >= 9, "{agreed:?}");
    assert!(agreed.seeds > 0, "{agreed:?}");
    assert!(agreed.proofs > 0, "the demo proves faults: {agreed:?}");
    assert!(
        agreed.windows > 0,
        "no fault window was checked: {agreed:?}"
    );
    assert!(
        agreed.legends > 0,
        "no figure legend was checked: {agreed:?}"
    );
    assert!(
        agreed.live_faults > 0,
        "no live fault row was checked: {agreed:?}"
    );
    assert!(
        agreed.classified > 0,
        "the demo classifies its FAILs: {agreed:?}"
    );
    assert!(
        agreed.badges >= 10,
        "a badge per scenario and arm: {agreed:?}"
    );
}
