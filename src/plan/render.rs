//! Human and JSON renderings of a linted plan.

use serde_json::{Value, json};

use super::lint::{Problem, Severity, gated_claim, hands_back};
use super::model::*;

/// Categories (deduplicated, plan order) of the claims a scenario falsifies.
fn scenario_categories(plan: &Plan, s: &Scenario) -> Vec<Category> {
    let mut out = Vec::new();
    for id in &s.falsifies {
        if let Some(c) = plan.claims.iter().find(|c| &c.id == id) {
            for cat in &c.categories {
                if !out.contains(cat) {
                    out.push(*cat);
                }
            }
        }
    }
    out
}

fn first_line(f: &Option<Field>, max: usize) -> String {
    let t = f
        .as_ref()
        .map_or("", |f| f.text.lines().next().unwrap_or_default().trim());
    if t.chars().count() > max {
        format!("{}…", t.chars().take(max).collect::<String>())
    } else {
        t.to_string()
    }
}

fn seven_m_summary(plan: &Plan, s: &Scenario) -> String {
    match &s.seven_m {
        SevenM::Filled(b) => format!(
            "§7.M filled (model {}, checker {}{})",
            b.model_kind.as_deref().unwrap_or("?"),
            if b.checker.is_some() {
                // The plan's words in backticks, without its sentence's full stop:
                // nothing after the name reads as part of it.
                format!(
                    "`{}`",
                    super::checker_pick::quotable(&first_line(&b.checker, 40))
                )
            } else {
                "MISSING".into()
            },
            super::checker_pick::suggested(plan, s)
                .map(|(p, category)| format!("; picker: {p} for {category}"))
                .unwrap_or_default()
        ),
        SevenM::NotApplicable { .. } => "§7.M not applicable".into(),
        SevenM::Missing => "§7.M missing".into(),
    }
}

fn tiers_summary(t: &BudgetTiers) -> String {
    let names: Vec<&str> = [
        ("smoke", &t.smoke),
        ("hardening", &t.hardening),
        ("release", &t.release),
    ]
    .into_iter()
    .filter(|(_, f)| f.is_some())
    .map(|(n, _)| n)
    .collect();
    match (names.is_empty(), t.exit_criteria.is_some()) {
        (false, _) => format!("tiers {}", names.join("+")),
        (true, true) => "tiers none (exit criteria only)".into(),
        (true, false) => "tiers none".into(),
    }
}

/// Plain-text lint report: plan summary, one line per scenario, one per problem,
/// then the verdict line.
pub fn lint_text(plan: &Plan, problems: &[Problem]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Plan: {} ({})\n",
        plan.title.as_deref().unwrap_or(&plan.slug),
        plan.source
    ));
    let gated = plan.claims.iter().filter(|c| c.is_gated()).count();
    out.push_str(&format!("Claims: {} ({gated} gated)\n", plan.claims.len()));
    out.push_str(&format!("Scenarios: {}\n", plan.scenarios.len()));
    for s in &plan.scenarios {
        let arms = if s.arms.is_empty() {
            "arms none".to_string()
        } else {
            format!(
                "arms {}",
                s.arms
                    .iter()
                    .map(|a| a.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        out.push_str(&format!(
            "  {} {} — {} | {} | {}\n",
            s.id,
            s.name,
            seven_m_summary(plan, s),
            tiers_summary(&s.tiers),
            arms
        ));
    }
    if !problems.is_empty() {
        out.push_str("Problems:\n");
    }
    for p in problems {
        let sev = match p.severity {
            Severity::HandBack => "hand-back",
            Severity::Warning => "warning",
        };
        let scen = p
            .scenario
            .as_deref()
            .map(|s| format!("{s} "))
            .unwrap_or_default();
        // `file:line:column:` where the column is known (run-spec YAML).
        let column = match p.column {
            0 => String::new(),
            c => format!("{c}:"),
        };
        out.push_str(&format!(
            "{}:{}:{column} [{sev}] {scen}{}: {}\n",
            p.file.as_deref().unwrap_or(&plan.source),
            p.line,
            p.field,
            p.message
        ));
    }
    let hb = problems
        .iter()
        .filter(|p| p.severity == Severity::HandBack)
        .count();
    let warnings = problems.len() - hb;
    if hands_back(problems) {
        out.push_str(&format!("Result: handed back to plan design ({hb} hand-back problem(s), {warnings} warning(s))\n"));
    } else {
        out.push_str(&format!("Result: runnable ({warnings} warning(s))\n"));
    }
    out
}

fn field_text(f: &Option<Field>) -> Value {
    f.as_ref()
        .map_or(Value::Null, |f| Value::String(f.text.clone()))
}

fn seven_m_json(s: &Scenario) -> Value {
    match &s.seven_m {
        SevenM::Filled(b) => json!({
            "state": "filled",
            "line": b.line,
            "model": field_text(&b.model),
            "model_kind": b.model_kind,
            "history": field_text(&b.history),
            "checker": field_text(&b.checker),
            "nemesis": field_text(&b.nemesis),
            "ambiguous_outcomes": field_text(&b.ambiguous_outcomes),
            "reduction_plan": field_text(&b.reduction_plan),
        }),
        SevenM::NotApplicable { text, line } => {
            json!({"state": "not-applicable", "text": text, "line": line})
        }
        SevenM::Missing => json!({"state": "missing"}),
    }
}

/// Machine-readable lint report.
pub fn lint_json(plan: &Plan, problems: &[Problem]) -> Value {
    let claims: Vec<Value> = plan
        .claims
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "line": c.line,
                "category_raw": c.category_raw,
                "categories": c.categories,
                "unknown_categories": c.unknown_categories,
                "gated": c.is_gated(),
            })
        })
        .collect();
    let scenarios: Vec<Value> = plan
        .scenarios
        .iter()
        .map(|s| {
            json!({
                "id": s.id,
                "name": s.name,
                "line": s.line,
                "falsifies": s.falsifies,
                "gated": gated_claim(plan, s).is_some(),
                "categories": scenario_categories(plan, s),
                "seven_m": seven_m_json(s),
                "suggested_checker": super::checker_pick::suggested(plan, s)
                    .map(|(checker, category)| json!({"checker": checker, "for": category})),
                "arms": s.arms,
                "tiers": {
                    "smoke": field_text(&s.tiers.smoke),
                    "hardening": field_text(&s.tiers.hardening),
                    "release": field_text(&s.tiers.release),
                    "exit_criteria": field_text(&s.tiers.exit_criteria),
                },
                "oracle": field_text(&s.oracle),
            })
        })
        .collect();
    json!({
        "source": plan.source,
        "title": plan.title,
        "slug": plan.slug,
        "header": plan.header,
        "claims": claims,
        "scenarios": scenarios,
        "problems": problems,
        "runnable": !hands_back(problems),
    })
}
