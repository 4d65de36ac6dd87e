//! Plan lint (method §8 "Plan intake"): finds what makes a plan unrunnable
//! (hand-back problems) and what is merely suspicious (warnings).

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::model::*;

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// The plan is not run; it goes back to plan design.
    HandBack,
    /// Reported, but the plan may still run.
    Warning,
}

/// One lint finding, pointing at a line of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// 1-based line: the scenario heading or the offending field.
    pub line: usize,
    /// 1-based column of the offending value, when known (run-spec YAML); 0 otherwise.
    #[serde(skip_serializing_if = "is_zero")]
    pub column: usize,
    /// The file the line is in, when it is not the plan (a sidecar run spec).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Scenario id, if the problem belongs to a scenario.
    pub scenario: Option<String>,
    /// Field name as the plan template spells it, e.g. `Oracle`, `§7.M`.
    pub field: String,
    pub message: String,
    pub severity: Severity,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Phrases whose oracle rests on reading logs, dashboards or eyes.
static WEAK_ORACLE: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"\blogs?\s+(?:look|looks|seem|seems|appear|appears|are|is|stay|stays)\s+(?:fine|ok|okay|good|clean|normal|healthy|quiet)",
        r"\bno\s+(?:errors?|exceptions?|warnings?|problems?|issues?)\b",
        r"\b(?:look|looks|looking|seem|seems|appear|appears)\s+(?:healthy|fine|good|ok|okay|normal|correct|right|stable)",
        r"\bvisual(?:ly)?\b",
        r"\bdashboards?\b",
        r"\bgrafana\s+(?:stays?|looks?|is|remains?)\b",
        r"\bmanual(?:ly)?\s+(?:check|checks|checking|inspection|inspect|verification|verify|review|confirm)",
        r"\beyeball",
        r"\bby\s+eye\b",
        r"\bhuman\s+(?:review|judg(?:e)?ment|inspection)",
        r"\b(?:check|inspect|read|review|scan|tail)(?:s|ing)?\s+(?:the\s+)?(?:logs?|dashboards?)\b",
        r"\bworks?\s+(?:fine|as expected|correctly)\b",
        r"\bnothing\s+(?:bad|unusual|weird|odd)\b",
        r"\beverything\s+(?:is\s+|looks\s+|stays\s+)?(?:fine|ok|okay|green|healthy)\b",
    ]
    .iter()
    .map(|p| {
        Regex::new(&format!("(?i){p}")).unwrap_or_else(|e| panic!("static regex {p}: {e}"))
    })
    .collect()
});

/// Splits an oracle into clauses: bullets, sentences, `;`, ` and `, ` but `, `, `.
static CLAUSE_SPLIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\n|\.\s+|\.$|;|,\s+|\s+and\s+|\s+but\s+")
        .unwrap_or_else(|e| panic!("static regex: {e}"))
});

/// Marks of a measurable clause (threshold, percentile, count, checker, status code):
/// a clause carrying one is never weak, e.g. "no errors (5xx count = 0)".
static MEASURABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)[<>=≤≥]|\bp\d{2}\b|\b\d+(?:\.\d+)?\s*(?:ms|s|%)(?:\W|$)|\bchecker\b|\bcount\b|\bexit code\b|\bhttp\s*\d{3}\b",
    )
    .unwrap_or_else(|e| panic!("static regex: {e}"))
});

/// A clause is weak when it rests on reading logs, dashboards or eyes and carries
/// nothing measurable.
fn is_weak_clause(clause: &str) -> bool {
    WEAK_ORACLE.iter().any(|r| r.is_match(clause)) && !MEASURABLE.is_match(clause)
}

/// Clauses of an oracle with at least two words, bullets and labels stripped.
fn clauses(text: &str) -> Vec<&str> {
    CLAUSE_SPLIT
        .split(text)
        .map(|c| c.trim().trim_start_matches(['-', '*', '•']).trim())
        .filter(|c| c.split_whitespace().count() >= 2)
        .collect()
}

/// True when the text is empty or a placeholder such as `TBD` or `-`.
fn is_placeholder(text: &str) -> bool {
    let t = text
        .trim()
        .trim_matches(|c: char| c == '.' || c == '*' || c == '`')
        .to_lowercase();
    matches!(
        t.as_str(),
        "" | "tbd" | "-" | "—" | "–" | "todo" | "?" | "n/a" | "none"
    )
}

/// Kebab-case name of a category, as in the plan template.
pub fn category_name(c: Category) -> &'static str {
    match c {
        Category::Safety => "safety",
        Category::Liveness => "liveness",
        Category::Durability => "durability",
        Category::PerformanceSlo => "performance-SLO",
        Category::Operational => "operational",
        Category::Idempotency => "idempotency",
        Category::Isolation => "isolation",
        Category::Ordering => "ordering",
        Category::Membership => "membership",
        Category::Boundary => "boundary",
        Category::Fairness => "fairness",
    }
}

/// First falsified claim of `s` in a gated category, with that category.
pub fn gated_claim<'p>(plan: &'p Plan, s: &Scenario) -> Option<(&'p Claim, Category)> {
    s.falsifies.iter().find_map(|id| {
        let claim = plan.claims.iter().find(|c| &c.id == id)?;
        let cat = claim.categories.iter().copied().find(|c| c.is_gated())?;
        Some((claim, cat))
    })
}

/// Lint a parsed plan. Problems come in plan order: claims, then scenarios.
pub fn lint(plan: &Plan) -> Vec<Problem> {
    let mut out = Vec::new();
    if let Some(line) = plan.unclosed_fence {
        out.push(hand_back(
            line,
            None,
            "code fence",
            "this code fence is never closed: everything after it is read as code, so no \
             heading, table or scenario below it is seen; close it with a matching fence line"
                .into(),
        ));
    }
    for t in &plan.broken_tables {
        out.push(broken_table(plan, t));
    }
    if let Some(p) = claims_lost(plan) {
        out.push(p);
    }
    if plan.scenarios.is_empty() {
        // Line 1: the whole plan is at fault, and every problem points into it.
        out.push(hand_back(
            1,
            None,
            "§7 Scenarios",
            "the plan has no scenario (`### Scenario <id>: <name>` under §7): nothing would run"
                .into(),
        ));
    }
    for claim in &plan.claims {
        if !claim.unknown_categories.is_empty() {
            out.push(Problem {
                file: None,
                line: claim.line,
                column: 0,
                scenario: None,
                field: "Category".into(),
                message: format!(
                    "claim {} has unknown category word(s) {} (kept, treated as not gated)",
                    claim.id,
                    claim.unknown_categories.join(", ")
                ),
                severity: Severity::Warning,
            });
        }
    }
    for h in &plan.hypotheses {
        for id in h.could_falsify.iter().filter(|id| !has_claim(plan, id)) {
            out.push(warn(
                h.line,
                None,
                "Could falsify",
                format!(
                    "hypothesis {} references claim {id}, which is not in §1b",
                    h.id
                ),
            ));
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for s in &plan.scenarios {
        if seen.contains(&s.id.as_str()) {
            out.push(warn(
                s.line,
                Some(s),
                "Scenario",
                format!("duplicate scenario id {}", s.id),
            ));
        }
        seen.push(&s.id);
        lint_scenario(plan, s, &mut out);
    }
    out
}

/// The table a section holds, as the template names it, and what is lost with it.
fn table_of(section: &str) -> (&'static str, &'static str) {
    match section {
        "1b" => (
            "§1b Claims table",
            "no claim in it is read, so a scenario that falsifies a gated claim escapes its \
             §7.M check",
        ),
        "1c" => ("§1c Missing claims table", "none of its rows is read"),
        "3" => ("§3 Test inventory table", "none of its rows is read"),
        "4" => ("§4 Hypotheses table", "none of its rows is read"),
        "5" | "5a" | "5b" => ("§5 Coverage matrix", "none of its rows is read"),
        "6b" => (
            "§6b Environment requirements table",
            "none of its requirements is probed before the run",
        ),
        "7b" => ("§7b Coverage adequacy table", "none of its rows is read"),
        "7c" => ("§7c Residual uncertainty table", "none of its rows is read"),
        _ => ("table", "none of its rows is read"),
    }
}

/// A table without its delimiter row is handed back: markdown reads it as a paragraph.
fn broken_table(plan: &Plan, t: &BrokenTable) -> Problem {
    let (field, lost) = table_of(&t.section);
    let claims = if t.section == "1b" {
        format!(" (the plan reads as Claims: {})", plan.claims.len())
    } else {
        String::new()
    };
    hand_back(
        t.line,
        None,
        field,
        format!(
            "these {} line(s) are written as a table but are not one: markdown needs a \
             delimiter row (`|---|---|`, one cell per header column) right under the header \
             row; without it they are plain text and {lost}{claims}",
            t.rows
        ),
    )
}

/// Scenarios that falsify claims while §1b yields none: whether they are gated (and so
/// need §7.M) cannot be told, and must not pass for "not gated".
fn claims_lost(plan: &Plan) -> Option<Problem> {
    if !plan.claims.is_empty() {
        return None;
    }
    let citing: Vec<&Scenario> = plan
        .scenarios
        .iter()
        .filter(|s| !s.falsifies.is_empty())
        .collect();
    let first = citing.first()?;
    let ids: Vec<&str> = citing.iter().map(|s| s.id.as_str()).collect();
    let line = first.falsifies_raw.as_ref().map_or(first.line, |f| f.line);
    Some(hand_back(
        line,
        Some(first),
        "§1b Claims",
        format!(
            "no claim is read from §1b, yet {} falsif{} claims: without their categories the \
             §7.M gate cannot be judged; §1b needs a `## 1b.` heading and a \
             `| ID | Claim | Category | Source | Inferred? |` table with its `|---|` row",
            ids.join(", "),
            if ids.len() == 1 { "ies" } else { "y" }
        ),
    ))
}

fn has_claim(plan: &Plan, id: &str) -> bool {
    plan.claims.iter().any(|c| c.id == id)
}

fn problem(
    line: usize,
    s: Option<&Scenario>,
    field: &str,
    message: String,
    sev: Severity,
) -> Problem {
    Problem {
        line,
        column: 0,
        file: None,
        scenario: s.map(|s| s.id.clone()),
        field: field.to_string(),
        message,
        severity: sev,
    }
}

fn hand_back(line: usize, s: Option<&Scenario>, field: &str, message: String) -> Problem {
    problem(line, s, field, message, Severity::HandBack)
}

fn warn(line: usize, s: Option<&Scenario>, field: &str, message: String) -> Problem {
    problem(line, s, field, message, Severity::Warning)
}

fn lint_scenario(plan: &Plan, s: &Scenario, out: &mut Vec<Problem>) {
    let id = &s.id;
    if let Some(raw) = &s.falsifies_raw {
        for c in s.falsifies.iter().filter(|c| !has_claim(plan, c)) {
            out.push(warn(
                raw.line,
                Some(s),
                "Falsifies if it FAILs",
                format!("{id} references claim {c}, which is not in §1b"),
            ));
        }
    }
    lint_oracle(s, out);
    super::checker_pick::lint_checker_pick(plan, s, out);
    lint_tiers(s, out);
    lint_seven_m(plan, s, out);
}

fn lint_oracle(s: &Scenario, out: &mut Vec<Problem>) {
    let id = &s.id;
    let Some(oracle) = s.oracle.as_ref().filter(|o| !is_placeholder(&o.text)) else {
        let line = s.oracle.as_ref().map_or(s.line, |o| o.line);
        out.push(hand_back(
            line,
            Some(s),
            "Oracle",
            format!("{id} has no Oracle: a scenario needs a machine-checkable PASS/FAIL condition"),
        ));
        return;
    };
    let cl = clauses(&oracle.text);
    let weak: Vec<&str> = cl.iter().copied().filter(|c| is_weak_clause(c)).collect();
    if cl.is_empty() || weak.len() == cl.len() {
        out.push(hand_back(oracle.line, Some(s), "Oracle", format!(
            "{id} Oracle is not machine-checkable (rests on reading logs, dashboards or eyes: \"{}\"); counts as missing",
            oracle.text.trim()
        )));
    } else if !weak.is_empty() {
        out.push(warn(oracle.line, Some(s), "Oracle", format!(
            "{id} Oracle has a clause that is not machine-checkable (\"{}\"); only the measurable clauses will be judged",
            weak.join("\"; \"")
        )));
    }
}

fn lint_tiers(s: &Scenario, out: &mut Vec<Problem>) {
    let id = &s.id;
    let t = &s.tiers;
    let tiers = [
        ("Smoke budget", &t.smoke),
        ("Hardening budget", &t.hardening),
        ("Release budget", &t.release),
    ];
    if tiers.iter().all(|(_, f)| f.is_none()) {
        let message = if t.exit_criteria.is_some() {
            format!(
                "{id} has no budget tiers (Smoke / Hardening / Release); the plan uses the older template (Exit criteria only), which does not count as tiers"
            )
        } else {
            format!("{id} has no budget tiers (Smoke / Hardening / Release)")
        };
        out.push(hand_back(s.line, Some(s), "Budget tiers", message));
        return;
    }
    for (name, field) in tiers {
        match field {
            None => out.push(hand_back(s.line, Some(s), name, format!(
                "{id} has no {name}; a tier that cannot be given is written \"not provided — <reason>. Revisit when: <condition>\""
            ))),
            Some(f) if is_placeholder(&f.text) => out.push(hand_back(f.line, Some(s), name, format!(
                "{id} {name} is empty or a placeholder (\"{}\")",
                f.text.trim()
            ))),
            Some(f) => {
                let lower = f.text.to_lowercase();
                if lower.starts_with("not provided") && !lower.contains("revisit when") {
                    out.push(warn(f.line, Some(s), name, format!(
                        "{id} {name} is \"not provided\" without a \"Revisit when:\" condition"
                    )));
                }
            }
        }
    }
}

fn lint_seven_m(plan: &Plan, s: &Scenario, out: &mut Vec<Problem>) {
    let id = &s.id;
    let gated = gated_claim(plan, s);
    match (&s.seven_m, gated) {
        (SevenM::Missing, Some((claim, cat))) => out.push(hand_back(
            s.line,
            Some(s),
            "§7.M",
            format!(
                "{id} falsifies {} ({}, a gated category) but has no §7.M block",
                claim.id,
                category_name(cat)
            ),
        )),
        (SevenM::NotApplicable { line, .. }, Some((claim, cat))) => out.push(hand_back(
            *line,
            Some(s),
            "§7.M",
            format!(
                "{id} falsifies {} ({}, a gated category) but its §7.M says not applicable",
                claim.id,
                category_name(cat)
            ),
        )),
        (SevenM::Filled(b), _) => {
            let empty = |f: &Option<Field>| f.as_ref().is_none_or(|f| f.text.trim().is_empty());
            if empty(&b.checker) {
                out.push(hand_back(b.line, Some(s), "§7.M Checker", format!(
                    "{id} §7.M block has no Checker (or justification why an assertion suffices)"
                )));
            }
            if empty(&b.nemesis) {
                out.push(hand_back(
                    b.line,
                    Some(s),
                    "§7.M Nemesis + landing evidence",
                    format!("{id} §7.M block has no Nemesis + landing evidence field"),
                ));
            }
        }
        _ => {}
    }
}

/// True if any problem is a hand-back (the plan must not run).
pub fn hands_back(problems: &[Problem]) -> bool {
    problems.iter().any(|p| p.severity == Severity::HandBack)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weak_only_when_all_clauses_weak() {
        let weak = |t: &str| {
            let c = clauses(t);
            !c.is_empty() && c.iter().all(|c| is_weak_clause(c))
        };
        assert!(weak("logs look fine"));
        assert!(weak("No errors observed in the logs."));
        assert!(weak("visually confirm recovery"));
        assert!(weak("dashboards stay green"));
        assert!(!weak("Knossos accepts the history; logs look fine"));
        assert!(!weak("p99 commit latency below 1.5 s"));
        assert!(!weak("no errors returned to clients (5xx count = 0)"));
        assert!(weak("manual inspection of the cluster"));
        assert!(weak("everything looks healthy"));
    }
}
