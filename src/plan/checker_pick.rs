//! The checker picker in lint: each §7.M block's model and the scenario's claim
//! categories name the built-in checker that serves them (shown in lint's scenario
//! lines); a block whose checker does not fit is warned about (the run would end
//! INCONCLUSIVE-oracle-too-weak), with that suggestion.

use super::lint::{Problem, Severity};
use super::model::{Plan, Scenario, SevenM};
use crate::oracle::registry::{misfit, pick, pick_for_model};

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
    ("list-append", &["list-append"]),
    ("list append", &["list-append"]),
    ("rw-register", &["rw-register"]),
    ("serializab", &["list-append", "rw-register"]),
];

/// Words of a claim's text that make it transactional whatever its category cell
/// says ("no lost update across accounts", "serializable transfers").
const TRANSACTIONAL: &[&str] = &[
    "serializab",
    "snapshot isolation",
    "isolation level",
    "lost update",
    "transfer",
    "write skew",
    "read skew",
    "transaction",
];

/// The claim categories of the claims `s` falsifies, as the registry spells them;
/// `isolation` last when a claim's text is transactional and no cell said so.
fn categories(plan: &Plan, s: &Scenario) -> Vec<String> {
    let claims: Vec<_> = plan
        .claims
        .iter()
        .filter(|c| s.falsifies.contains(&c.id))
        .collect();
    let mut out: Vec<String> = claims
        .iter()
        .flat_map(|c| c.categories.iter())
        .filter_map(|c| serde_json::to_value(c).ok()?.as_str().map(str::to_string))
        .collect();
    let transactional = claims.iter().any(|c| {
        let text = c.text.to_lowercase();
        TRANSACTIONAL.iter().any(|w| text.contains(w))
    });
    if transactional && !out.iter().any(|c| c == "isolation") {
        out.push("isolation".into());
    }
    out
}

/// A plan's checker field as a name to quote in backticks: trimmed, without the full
/// stop (or other sentence punctuation) that ends the plan's sentence, which would
/// otherwise read as part of the name (`no-lost-ack.`), and without backticks of its
/// own, which would close the quote early.
pub fn quotable(text: &str) -> String {
    text.replace('`', "")
        .trim()
        .trim_end_matches(['.', ';', ',', ':', '!', '?'])
        .trim_end()
        .to_string()
}

/// The built-in checker the picker suggests for `s`'s §7.M model and claim
/// categories, with the category it serves: a checker made for the model first,
/// then one for any model. `None` when the block states no model or nothing fits.
pub fn suggested(plan: &Plan, s: &Scenario) -> Option<(&'static str, String)> {
    let SevenM::Filled(block) = &s.seven_m else {
        return None;
    };
    let model = block.model_kind.as_deref()?;
    let categories = categories(plan, s);
    let for_model = |c: &String| pick_for_model(model, c).map(|p| (p, c.clone()));
    let for_any = |c: &String| pick(model, c).map(|p| (p, c.clone()));
    categories
        .iter()
        .find_map(for_model)
        .or_else(|| categories.iter().find_map(for_any))
}

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
    let categories = categories(plan, s);
    let fits = |name: &str| {
        categories.is_empty() && misfit(name, Some(model), None).is_none()
            || categories
                .iter()
                .any(|c| misfit(name, Some(model), Some(c)).is_none())
    };
    if named.iter().any(|n| fits(n)) {
        return;
    }
    let suggestion = suggested(plan, s)
        .map(|(p, _)| format!("; the picker suggests `{p}`"))
        .unwrap_or_default();
    out.push(Problem {
        file: None,
        line: checker.line,
        column: 0,
        scenario: Some(s.id.clone()),
        field: "Checker".into(),
        message: format!(
            "checker `{}` does not match model `{model}` and claim categories [{}]: the run would \
             end INCONCLUSIVE-oracle-too-weak{suggestion}",
            quotable(&checker.text),
            categories.join(", ")
        ),
        severity: Severity::Warning,
    });
}
