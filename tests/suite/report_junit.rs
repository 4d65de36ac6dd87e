//! `findings/junit.xml` for CI systems: valid against the JUnit schema in
//! tests/fixtures/junit/junit.xsd (checked with xmllint, Debian's libxml2-utils; CI
//! installs it and sets FAULTLINE_REQUIRE_XMLLINT=1), one testcase per scenario and
//! arm, FAIL a failure with its reason chain, INCONCLUSIVE / PARTIAL / NOT-RUN skipped,
//! PASS neither. The demo's own junit.xml is checked in demo_session.rs.

use crate::common;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use faultline::report;
use faultline::session::outcome::{Phase, SessionOutcome};
use quick_xml::XmlVersion;
use quick_xml::events::Event;
use quick_xml::name::QName;

use crate::report_render::full_outcome;

fn schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/junit/junit.xsd")
}

/// Validates `xml` against the JUnit schema: `None` when xmllint is missing (a loud
/// SKIP, or a failure under FAULTLINE_REQUIRE_XMLLINT=1), else xmllint's verdict with
/// its complaint.
pub fn validate(xml: &Path) -> Option<Result<(), String>> {
    let out = match Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schema())
        .arg(xml)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            let why = format!("xmllint cannot run ({e}): apt-get install libxml2-utils");
            common::skipped("XMLLINT", Some(why));
            return None;
        }
    };
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

/// One testcase as read back.
#[derive(Debug, Default)]
pub struct Case {
    pub classname: String,
    pub time: f64,
    /// `failure`, `skipped`, or empty for a pass.
    pub outcome: String,
    pub message: String,
    pub failure_type: String,
    pub failure_text: String,
    pub system_out: String,
}

/// The document read back: the root's counts, and each testcase by the run id its
/// name starts with.
#[derive(Debug, Default)]
pub struct Doc {
    pub counts: BTreeMap<String, String>,
    pub cases: BTreeMap<String, Case>,
    pub properties: BTreeMap<String, String>,
}

fn attrs(e: &quick_xml::events::BytesStart<'_>) -> BTreeMap<String, String> {
    e.attributes()
        .map(|a| {
            let a = a.expect("attribute");
            (
                a.key.into_inner().to_string(),
                a.normalized_value(XmlVersion::Explicit1_0)
                    .expect("attribute value")
                    .into_owned(),
            )
        })
        .collect()
}

pub fn parse(xml: &str) -> Doc {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut doc = Doc::default();
    let mut current: Option<String> = None;
    loop {
        let event = reader.read_event().expect("junit.xml parses");
        let (e, empty) = match &event {
            Event::Eof => break,
            Event::Start(e) => (e.clone(), false),
            Event::Empty(e) => (e.clone(), true),
            Event::End(e) if e.name() == QName("testcase") => {
                current = None;
                continue;
            }
            _ => continue,
        };
        let a = attrs(&e);
        let name = e.name();
        let text = |reader: &mut quick_xml::Reader<&[u8]>| -> String {
            if empty {
                return String::new();
            }
            let raw = reader.read_text(name).expect("element text");
            quick_xml::escape::unescape(&raw)
                .expect("text unescapes")
                .into_owned()
        };
        match name.into_inner() {
            "testsuites" => doc.counts = a,
            "property" => {
                doc.properties.insert(a["name"].clone(), a["value"].clone());
            }
            "testcase" => {
                let id = a["name"].split(' ').next().expect("a name").to_string();
                let case = Case {
                    classname: a["classname"].clone(),
                    time: a["time"].parse().expect("time is a number"),
                    ..Case::default()
                };
                assert!(
                    doc.cases.insert(id.clone(), case).is_none(),
                    "two testcases for {id}"
                );
                current = (!empty).then_some(id);
            }
            "failure" | "skipped" | "system-out" => {
                let id = current.clone().expect("inside a testcase");
                let body = text(&mut reader);
                let case = doc.cases.get_mut(&id).expect("case");
                if name.into_inner() == "system-out" {
                    case.system_out = body;
                } else {
                    case.outcome = name.into_inner().to_string();
                    case.message = a.get("message").cloned().unwrap_or_default();
                    case.failure_type = a.get("type").cloned().unwrap_or_default();
                    case.failure_text = body;
                }
            }
            _ => {}
        }
    }
    doc
}

/// What a verdict must be in JUnit terms.
pub fn junit_outcome(verdict: &str) -> &'static str {
    if verdict.starts_with("FAIL") {
        "failure"
    } else if verdict.starts_with("PASS") {
        ""
    } else {
        "skipped"
    }
}

fn render(outcome: &SessionOutcome, dir: &Path) -> (PathBuf, String) {
    let text = report::junit(outcome, &[]).expect("junit renders");
    let path = dir.join("junit.xml");
    std::fs::write(&path, &text).expect("write junit.xml");
    (path, text)
}

#[test]
fn a_demo_like_session_is_valid_junit_with_one_case_per_scenario_and_arm() {
    let mut outcome = full_outcome();
    // Text from the decision tree may quote child output: markup, quotes, a CDATA
    // end, terminal escapes and characters XML 1.0 cannot hold at all.
    let hostile = "yes: 4 <lost> & \"acked\" 'writes' ]]> \u{1b}[31mred\u{1b}[0m \u{1}\u{ffff}end";
    let d3 = outcome
        .scenarios
        .iter_mut()
        .find(|s| s.id == "D3")
        .expect("D3");
    if let Some(d) = d3.runs[0].decision.as_mut() {
        d.reasons[0].answer = hostile.to_string();
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, text) = render(&outcome, dir.path());
    if let Some(valid) = validate(&path) {
        assert_eq!(valid, Ok(()), "junit.xml against the schema:\n{text}");
    }

    let doc = parse(&text);
    let got: BTreeMap<&str, &str> = doc
        .cases
        .iter()
        .map(|(id, c)| (id.as_str(), c.outcome.as_str()))
        .collect();
    let want: BTreeMap<&str, &str> = [
        ("D1", ""),
        ("D2", ""),
        ("D3", "failure"),
        ("D4", "skipped"),
        ("D5/api", ""),
        ("D5/admin", "skipped"),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want, "{text}");
    for (k, v) in [
        ("tests", "6"),
        ("failures", "1"),
        ("errors", "0"),
        ("skipped", "2"),
        ("time", "150.000"),
    ] {
        assert_eq!(doc.counts[k], v, "testsuites {k}");
    }
    assert_eq!(doc.properties["session_verdict"], "FAIL");
    assert_eq!(doc.cases["D5/admin"].classname, "demo-kv-replication.D5");

    // The failure: its verdict, the reason in words, the whole chain with its
    // citations, the finding, and the hostile text escaped yet intact.
    let d3 = &doc.cases["D3"];
    assert_eq!(d3.failure_type, "FAIL-reproducible");
    assert!(d3.message.starts_with("D3 failed"), "{}", d3.message);
    for part in [
        "1. did the checker find anomalies? yes: 4 <lost> & \"acked\" 'writes' ]]> red end",
        "2. did a same-seed re-run reproduce it? yes (journal #21)",
        "finding F1: 4 writes acked by n1",
        "reproducer: faultline run examples/demo/plan.md --only D3 --seed 7",
        "anomalies (4 in all):\n- acknowledged write missing",
    ] {
        assert!(d3.failure_text.contains(part), "{part:?} in\n{d3:#?}");
    }
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{1}') && !text.contains('\u{ffff}'),
        "control characters reached the XML"
    );

    // Skipped cases carry the reason in words; their chain and findings go to system-out.
    let admin = &doc.cases["D5/admin"];
    assert_eq!(
        admin.message,
        "admin arm has no run binding in the run spec"
    );
    assert!(
        admin
            .system_out
            .contains("1. was the arm reached? no: no run spec binding"),
        "{admin:#?}"
    );
    let d4 = &doc.cases["D4"];
    assert!(
        d4.message.starts_with("D4") && d4.message.contains("replication to"),
        "{d4:#?}"
    );
    let session = &outcome.session_dir;
    for (id, file) in [
        ("D3", "D3.md"),
        ("D5/api", "D5-api.md"),
        ("D5/admin", "D5-admin.md"),
    ] {
        let attachment = format!("[[ATTACHMENT|{session}/findings/{file}]]");
        assert!(
            doc.cases[id].system_out.contains(&attachment),
            "{id}: {attachment} in {:#?}",
            doc.cases[id]
        );
    }
    // A pass is neither failed nor skipped, and still names its verdict.
    assert!(
        doc.cases["D2"]
            .system_out
            .starts_with("D2: PASS-hardening (tier met: hardening)")
    );
}

#[test]
fn a_stopped_session_skips_what_it_never_decided_and_attaches_nothing_unwritten() {
    let mut outcome = full_outcome();
    outcome.verdict = None;
    outcome.finished = None;
    outcome.interrupted = Some("interrupted by the operator".to_string());
    let d4 = outcome
        .scenarios
        .iter_mut()
        .find(|s| s.id == "D4")
        .expect("D4");
    d4.phase = Phase::Pending;
    d4.verdict = None;
    d4.runs.clear();
    let d3 = outcome
        .scenarios
        .iter_mut()
        .find(|s| s.id == "D3")
        .expect("D3");
    d3.phase = Phase::Oracle;
    d3.runs[0].decision = None;
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, text) = render(&outcome, dir.path());
    if let Some(valid) = validate(&path) {
        assert_eq!(valid, Ok(()), "{text}");
    }
    let doc = parse(&text);
    assert_eq!(doc.cases.len(), 6, "{text}");
    let (d3, d4) = (&doc.cases["D3"], &doc.cases["D4"]);
    assert_eq!(d3.outcome, "skipped");
    assert_eq!(
        d3.message,
        "D3 has no verdict: the session was stopped (interrupted by the operator) at oracle"
    );
    assert!(d3.system_out.contains("findings/D3.md"), "{d3:#?}");
    assert_eq!(d4.outcome, "skipped");
    assert!(
        !d4.system_out.contains("[[ATTACHMENT|"),
        "a pending scenario has no findings file: {d4:#?}"
    );
    assert_eq!(doc.counts["failures"], "0");
    assert_eq!(doc.counts["skipped"], "3");
    assert_eq!(doc.properties["interrupted"], "interrupted by the operator");
    assert_eq!(doc.properties["session_verdict"], "none yet");
}

/// Each testcase's time is its own: its first iteration's start to its verdict —
/// not the session's records before it (its outcome journaled at the start) nor
/// the questions asked after it.
#[test]
fn a_case_takes_its_own_wall_time() {
    let outcome = full_outcome();
    let at =
        |seq: u64, ts: &str, scope: (&str, Option<&str>), kind: &str, data: serde_json::Value| {
            faultline::session::journal::Record {
                seq,
                ts: ts.to_string(),
                scope: faultline::session::journal::Scope {
                    scenario: Some(scope.0.to_string()),
                    arm: scope.1.map(str::to_string),
                },
                event: faultline::session::event::Event::from_parts(kind.to_string(), data),
            }
        };
    let started = |seed: u64| serde_json::json!({"seed": seed, "label": format!("seed-{seed}"), "duration_ms": 1000});
    let verdict = |id: &str| serde_json::json!({"id": id, "verdict": "PASS-smoke", "reasons": []});
    let precondition = serde_json::json!({"name": "up", "ok": true, "cites": []});
    let (d1, api) = (("D1", None), ("D5", Some("D5/api")));
    let journal = vec![
        at(
            1,
            "2026-12-01T10:00:00.000Z",
            d1,
            "precondition",
            precondition.clone(),
        ),
        at(
            2,
            "2026-12-01T10:15:01.000Z",
            d1,
            "iteration-started",
            started(1),
        ),
        at(
            3,
            "2026-12-01T10:15:02.000Z",
            d1,
            "iteration-started",
            started(2),
        ),
        at(4, "2026-12-01T10:15:03.250Z", d1, "verdict", verdict("D1")),
        at(
            5,
            "2026-12-01T10:20:00.000Z",
            d1,
            "precondition",
            precondition,
        ),
        at(
            6,
            "2026-12-01T10:15:04.000Z",
            api,
            "iteration-started",
            started(1),
        ),
        at(
            7,
            "2026-12-01T10:15:05.500Z",
            api,
            "verdict",
            verdict("D5/api"),
        ),
    ];
    let text = report::junit(&outcome, &journal).expect("junit renders");
    let doc = parse(&text);
    assert_eq!(doc.cases["D1"].time, 2.25);
    assert_eq!(doc.cases["D5/api"].time, 1.5);
    assert_eq!(doc.cases["D2"].time, 0.0);
}

/// The schema is not a rubber stamp: a case with two outcomes, a missing name, a
/// negative time or a count that is not a number are refused.
#[test]
fn the_schema_refuses_what_ci_systems_would_misread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = report::junit(&full_outcome(), &[]).expect("junit renders");
    let bad = [
        (
            "two outcomes",
            good.replacen("<skipped ", "<failure/><skipped ", 1),
        ),
        (
            "no name",
            good.replacen("<testcase name=", "<testcase title=", 1),
        ),
        (
            "negative time",
            good.replacen("time=\"0.000\"", "time=\"-1\"", 1),
        ),
        ("count", good.replacen("tests=\"6\"", "tests=\"six\"", 1)),
        (
            "root",
            good.replacen("<testsuites", "<testsuitez", 1).replacen(
                "</testsuites>",
                "</testsuitez>",
                1,
            ),
        ),
    ];
    for (what, xml) in bad {
        assert_ne!(xml, good, "{what}: the mutation changed nothing");
        let path = dir.path().join("bad.xml");
        std::fs::write(&path, &xml).expect("write");
        if let Some(valid) = validate(&path) {
            assert!(valid.is_err(), "{what}: accepted\n{xml}");
        }
    }
}
