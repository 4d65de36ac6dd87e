//! Lint tests: hand-back rules of method §8 "Plan intake".

use crate::common;

use common::fixture;
use faultline::plan::{Problem, Severity, hands_back, lint, lint_json, lint_text, parse_plan};
use std::path::Path;

fn hand_backs(problems: &[Problem]) -> Vec<(String, String)> {
    problems
        .iter()
        .filter(|p| p.severity == Severity::HandBack)
        .map(|p| (p.scenario.clone().unwrap_or_default(), p.field.clone()))
        .collect()
}

#[test]
fn corpus_hands_back_every_scenario_for_tiers_and_s11() {
    let Some(plan) = common::corpus() else {
        return;
    };
    let problems = lint(&plan);
    assert!(hands_back(&problems));
    for s in &plan.scenarios {
        let p = problems
            .iter()
            .find(|p| p.scenario.as_deref() == Some(&s.id) && p.field == "Budget tiers")
            .unwrap_or_else(|| panic!("{} not handed back for tiers", s.id));
        assert_eq!(p.severity, Severity::HandBack);
        assert_eq!(p.line, s.line);
        assert!(p.message.contains("older template"), "{}", p.message);
    }
    let s11: Vec<&Problem> = problems
        .iter()
        .filter(|p| p.field == "§7.M" && p.severity == Severity::HandBack)
        .collect();
    assert_eq!(s11.len(), 1, "{s11:?}");
    assert_eq!(s11[0].scenario.as_deref(), Some("S11"));
    assert!(s11[0].message.contains("C39") && s11[0].message.contains("ordering"));
    assert_eq!(s11[0].line, 1015);
    // No oracle in the corpus is weak enough to hand back.
    assert!(
        !problems
            .iter()
            .any(|p| p.field == "Oracle" && p.severity == Severity::HandBack)
    );
    let json = lint_json(&plan, &problems);
    assert_eq!(json["runnable"], false);
    assert_eq!(json["scenarios"][0]["seven_m"]["model_kind"], "register");
    assert_eq!(json["scenarios"][10]["gated"], true);
    assert_eq!(json["scenarios"][10]["seven_m"]["state"], "not-applicable");
}

#[test]
fn newer_template_lints_clean() {
    let plan = fixture("newer-template.md");
    let problems = lint(&plan);
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!hands_back(&problems));
    let text = lint_text(&plan, &problems);
    assert!(
        text.contains("S1 acked_writes_survive_crash — §7.M filled (model register"),
        "{text}"
    );
    assert!(text.contains("arms S2/api, S2/export"), "{text}");
    assert!(
        text.trim_end().ends_with("Result: runnable (0 warning(s))"),
        "{text}"
    );
    let json = lint_json(&plan, &problems);
    assert_eq!(json["runnable"], true);
    assert_eq!(json["slug"], "kv-newer");
    assert_eq!(json["claims"][1]["categories"][1], "liveness");
    assert_eq!(json["claims"][3]["gated"], false);
}

#[test]
fn older_template_parses_but_hands_back() {
    let plan = fixture("older-template.md");
    assert_eq!(plan.scenarios.len(), 1);
    assert!(plan.scenarios[0].tiers.exit_criteria.is_some());
    let problems = lint(&plan);
    assert_eq!(
        hand_backs(&problems),
        vec![("S1".into(), "Budget tiers".into())]
    );
    assert!(problems[0].message.contains("older template"));
    let text = lint_text(&plan, &problems);
    assert!(
        text.contains("tests/fixtures/plans/older-template.md:14: [hand-back] S1 Budget tiers:"),
        "{text}"
    );
    assert!(text.contains("handed back"), "{text}");
}

#[test]
fn drift_forms_lint() {
    let plan = fixture("drift-forms.md");
    let problems = lint(&plan);
    let hb = hand_backs(&problems);
    assert_eq!(
        hb,
        vec![
            ("S01".to_string(), "Release budget".to_string()),
            (
                "S01".to_string(),
                "§7.M Nemesis + landing evidence".to_string()
            ),
            ("D3".to_string(), "§7.M".to_string()),
            ("D4".to_string(), "§7.M".to_string()),
        ]
    );
    let d3 = problems
        .iter()
        .find(|p| p.scenario.as_deref() == Some("D3"))
        .map(|p| &p.message);
    assert!(
        d3.is_some_and(|m| m.contains("C2") && m.contains("membership")),
        "{d3:?}"
    );
    let warnings: Vec<&str> = problems
        .iter()
        .filter(|p| p.severity == Severity::Warning)
        .map(|p| p.message.as_str())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|m| m.contains("C3") && m.contains("observability")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|m| m.contains("S01") && m.contains("C9")),
        "{warnings:?}"
    );
}

#[test]
fn weak_oracles_hand_back() {
    for (file, phrase) in [
        ("weak-oracle-logs-look-fine.md", "logs look fine"),
        (
            "weak-oracle-no-errors-observed-in-the-logs.md",
            "no errors observed in the logs",
        ),
        (
            "weak-oracle-visually-confirm-recovery.md",
            "visually confirm recovery",
        ),
        (
            "weak-oracle-dashboards-stay-green.md",
            "dashboards stay green",
        ),
    ] {
        let plan = fixture(file);
        let problems = lint(&plan);
        assert!(hands_back(&problems), "{file}");
        assert_eq!(
            hand_backs(&problems),
            vec![("S1".into(), "Oracle".into())],
            "{file}"
        );
        let p = &problems[0];
        assert_eq!(p.line, 16, "{file}: line points at the Oracle field");
        assert!(
            p.message.contains("S1") && p.message.contains(phrase),
            "{file}: {}",
            p.message
        );
    }
}

#[test]
fn one_weak_clause_among_measurable_is_a_warning() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/plans/weak-oracle-logs-look-fine.md"),
    )
    .unwrap_or_else(|e| panic!("fixture unreadable: {e}"));
    let text = text.replace(
        "**Oracle:** logs look fine.",
        "**Oracle:** a leader is elected within 5 s of each kill; logs look fine.",
    );
    let problems = lint(&parse_plan("mixed.md", &text));
    assert!(!hands_back(&problems), "{problems:?}");
    assert!(
        problems
            .iter()
            .any(|p| p.field == "Oracle" && p.severity == Severity::Warning)
    );
}

/// A §1b heading the parser does not recognise (no section number) loses every claim
/// without any broken table: the scenarios that falsify claims are handed back
/// rather than taken for ungated; with the heading numbered they are runnable again.
#[test]
fn falsified_claims_with_no_claims_read_are_handed_back() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plans/newer-template.md"),
    )
    .expect("fixture");
    let heading = text
        .lines()
        .find(|l| l.starts_with("## 1b"))
        .expect("§1b heading")
        .to_string();
    let before = lint(&parse_plan("p.md", &text));
    assert!(
        !before.iter().any(|p| p.field == "§1b Claims"),
        "{before:?}"
    );
    let renamed = text.replace(&heading, "## Claims under test");
    let plan = parse_plan("p.md", &renamed);
    assert!(plan.claims.is_empty() && plan.broken_tables.is_empty());
    let problems = lint(&plan);
    let lost = problems
        .iter()
        .find(|p| p.field == "§1b Claims")
        .unwrap_or_else(|| panic!("not handed back: {problems:?}"));
    assert_eq!(lost.severity, Severity::HandBack);
    let first = plan
        .scenarios
        .iter()
        .find(|s| !s.falsifies.is_empty())
        .expect("a scenario falsifying a claim");
    assert_eq!(
        lost.line,
        first.falsifies_raw.as_ref().expect("falsifies field").line
    );
    assert!(lost.message.contains(&first.id), "{}", lost.message);
}
