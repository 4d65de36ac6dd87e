//! The checker picker in lint: a §7.M block whose checker does not fit its model
//! and the scenario's claim categories is warned about (the run would end
//! INCONCLUSIVE-oracle-too-weak), with the checker the picker suggests.

use super::lint::{Problem, Severity};
use super::model::{Plan, Scenario, SevenM};
use crate::oracle::registry::{misfit, pick};

/// Words in a §7.M checker field → the built-in checkers they name.
const NAMED_BY: &[(&str, &[&str])] = &[
    (
        "linearizab",
        &["linearizability-register", "linearizability-kv"],
    ),
    ("no-lost-ack", &["no-lost-ack"]),
    ("lost ack", &["no-lost-ack"]),
    ("exactly-once", &["exactly-once"]),
    ("exactly once", &["exactly-once"]),
    ("prefix", &["prefix-order"]),
    ("monotonic read", &["monotonic-reads"]),
    ("monotonic-read", &["monotonic-reads"]),
    ("read-your-writes", &["read-your-writes"]),
    ("read your writes", &["read-your-writes"]),
    ("reconcil", &["reconciliation"]),
    ("invariant", &["invariant"]),
    ("fairness", &["fairness"]),
];

/// Warnings for `s` (none when the block, its model or its checker is not stated).
pub fn lint_checker_pick(plan: &Plan, s: &Scenario, out: &mut Vec<Problem>) {
    let SevenM::Filled(block) = &s.seven_m else {
        return;
    };
    let (Some(model), Some(checker)) = (block.model_kind.as_deref(), &block.checker) else {
        return;
    };
    let text = checker.text.to_lowercase();
    let Some((_, named)) = NAMED_BY.iter().find(|(word, _)| text.contains(word)) else {
        return;
    };
    let categories: Vec<String> = plan
        .claims
        .iter()
        .filter(|c| s.falsifies.contains(&c.id))
        .flat_map(|c| c.categories.iter())
        .filter_map(|c| serde_json::to_value(c).ok()?.as_str().map(str::to_string))
        .collect();
    let fits = |name: &str| {
        categories.is_empty() && misfit(name, Some(model), None).is_none()
            || categories
                .iter()
                .any(|c| misfit(name, Some(model), Some(c)).is_none())
    };
    if named.iter().any(|n| fits(n)) {
        return;
    }
    let suggestion = categories
        .iter()
        .find_map(|c| pick(model, c))
        .map(|p| format!("; the picker suggests `{p}`"))
        .unwrap_or_default();
    out.push(Problem {
        line: checker.line,
        scenario: Some(s.id.clone()),
        field: "Checker".into(),
        message: format!(
            "checker `{}` does not match model `{model}` and claim categories [{}]: the run would \
             end INCONCLUSIVE-oracle-too-weak{suggestion}",
            checker.text.trim(),
            categories.join(", ")
        ),
        severity: Severity::Warning,
    });
}
