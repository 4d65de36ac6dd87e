//! The checker picker in `lint`: a §7.M checker that does not fit the model and
//! claim is warned about, naming the suggested checker; a fitting one is not.

use faultline::plan::lint::{Severity, lint};
use faultline::plan::parse::parse_plan;

fn plan(model: &str, checker: &str) -> String {
    format!(
        "# Test Plan: picker\n\n## 1b. Claims under test\n\n\
         | ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n\
         | C1 | A session reads its writes. | safety | s.rs | no |\n\n\
         ## 7. Scenarios\n\n### Scenario S1: x\n\n\
         - **Falsifies if it FAILs:** C1\n\
         - **Oracle:** the checker reports no anomaly over the history.\n\
         - **Smoke budget:** 1 seed, 1 s.\n- **Hardening budget:** 3 seeds.\n- **Release budget:** 10 seeds.\n\n\
         #### §7.M\n- **Model under test:** {model}\n- **Operation history:** JSONL.\n\
         - **Checker:** {checker}\n- **Nemesis:** pause; landing evidence: heartbeat gap.\n\
         - **Ambiguous outcomes:** timeouts are indeterminate.\n- **Reduction plan:** shrink the seed.\n"
    )
}

fn picker_warnings(text: &str) -> Vec<String> {
    lint(&parse_plan("p.md", text))
        .into_iter()
        .filter(|p| p.field == "Checker" && p.severity == Severity::Warning)
        .map(|p| p.message)
        .collect()
}

#[test]
fn linearizability_on_a_session_claim_is_warned_with_a_suggestion() {
    let warnings = picker_warnings(&plan("session", "linearizability (WGL)."));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("the picker suggests `monotonic-reads`"),
        "{}",
        warnings[0]
    );
}

#[test]
fn a_fitting_checker_is_not_warned() {
    assert!(picker_warnings(&plan("session", "read-your-writes per process.")).is_empty());
    assert!(picker_warnings(&plan("register", "linearizability (WGL).")).is_empty());
}

/// The suggestion is shown for every block that states a model, with the category it
/// serves — also when the plan's own checker is a custom one the picker cannot judge.
#[test]
fn every_block_with_a_model_gets_the_pickers_suggestion_in_lint() {
    let text = plan("session", "custom script over the history.");
    let parsed = parse_plan("p.md", &text);
    let scenario = &parsed.scenarios[0];
    assert_eq!(
        faultline::plan::checker_pick::suggested(&parsed, scenario),
        Some(("monotonic-reads", "safety".to_string()))
    );
    let problems = lint(&parsed);
    let shown = faultline::plan::render::lint_text(&parsed, &problems);
    assert!(
        shown.contains("picker: monotonic-reads for safety"),
        "{shown}"
    );
    let json = faultline::plan::render::lint_json(&parsed, &problems);
    assert_eq!(
        json["scenarios"][0]["suggested_checker"],
        serde_json::json!({"checker": "monotonic-reads", "for": "safety"})
    );
    // A model no built-in checker serves for this claim: no suggestion at all.
    let none = parse_plan("p.md", &plan("parser", "custom script over the history."));
    assert_eq!(
        faultline::plan::checker_pick::suggested(&none, &none.scenarios[0]),
        None
    );
}

/// A counter is judged by `counter`: the WGL checkers cannot judge an add, so lint
/// warns about one on a counter and the picker suggests `counter`.
#[test]
fn a_counter_plan_is_pointed_at_the_counter_checker() {
    let warnings = picker_warnings(&plan("counter", "linearizability (WGL)."));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("the picker suggests `counter`"),
        "{}",
        warnings[0]
    );
    let parsed = parse_plan("p.md", &plan("counter", "custom script over the history."));
    assert_eq!(
        faultline::plan::checker_pick::suggested(&parsed, &parsed.scenarios[0]),
        Some(("counter", "safety".to_string()))
    );
    let shown = faultline::plan::render::lint_text(&parsed, &lint(&parsed));
    assert!(shown.contains("picker: counter for safety"), "{shown}");
}
