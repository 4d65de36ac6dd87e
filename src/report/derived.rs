//! Facts report.md derives from plan and outcome: hypothesis coverage, surface
//! coverage, release-budget disclosures, §7b adequacy and the §7d confidence delta.

use minijinja::value::Value;
use serde::Serialize;

use super::lazy::{Asks, Index, List, lazy};
use super::view::in_words;
use crate::plan::Plan;
use crate::session::outcome::{ScenarioOutcome, SessionOutcome};
use crate::verdict::Verdict;

/// A scenario id and how it ended, for coverage and adequacy rows.
#[derive(Serialize)]
pub struct Ran<'a> {
    pub id: &'a str,
    /// The session holds this scenario at all.
    pub present: bool,
    pub verdict: Option<Verdict>,
    /// The verdict's reason in words.
    pub reason: Option<String>,
}

/// One plan hypothesis and the scenarios that close it.
#[derive(Serialize)]
pub struct CoverageRow<'a> {
    pub id: &'a str,
    pub title: &'a str,
    /// The scenarios that close it, as [`Ran`].
    pub closed_by: Value,
    pub exercised: bool,
}

/// One planned §7.M.S arm: run or not, and why it fell short.
#[derive(Serialize)]
pub struct SurfaceRow<'a> {
    pub scenario: &'a str,
    pub arm: &'a str,
    pub description: &'a str,
    pub verdict: Option<Verdict>,
    pub executed: bool,
    /// The verdict's reason in words.
    pub reason: Option<String>,
}

/// A scenario whose Release budget is not provided.
#[derive(Serialize)]
pub struct Disclosure<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// The plan's Release budget text, verbatim; `None` when the field is absent.
    pub text: Option<&'a str>,
}

/// One §7b row: the scenarios argued for a claim and how they ended.
#[derive(Serialize)]
pub struct AdequacyView<'a> {
    pub claim: &'a str,
    pub claim_text: Option<&'a str>,
    pub threat_model: &'a str,
    pub argued: &'a str,
    pub why: &'a str,
    pub ran: Vec<Ran<'a>>,
    /// `holds`, `broken` or `not fully exercised`.
    pub assessment: &'static str,
}

/// The §7d statement and whether this session leaves less confidence than it claims.
#[derive(Serialize)]
pub struct Confidence<'a> {
    pub statement: Option<&'a str>,
    /// `less` or `unchanged`.
    pub delta: &'static str,
    /// The scenarios that moved it, with their verdicts, as [`Ran`].
    pub because: Value,
}

/// How scenario `id` ended in this session (`verdict: None` when absent or undecided).
fn ran<'a>(outcome: &'a SessionOutcome, id: &'a str) -> Ran<'a> {
    Ran::of(id, outcome.scenarios.iter().find(|s| s.id == id))
}

impl<'a> Ran<'a> {
    /// Scenario `id`, `found` in the session or not.
    pub fn of(id: &'a str, found: Option<&ScenarioOutcome>) -> Ran<'a> {
        Ran {
            id,
            present: found.is_some(),
            verdict: found.and_then(|s| s.verdict),
            reason: found.and_then(|s| in_words(&s.id, s.verdict, &s.reasons)),
        }
    }
}

/// Whether a scenario `found` in the session passed.
pub fn passed(found: Option<&ScenarioOutcome>) -> bool {
    found.and_then(|s| s.verdict).is_some_and(|v| v.is_pass())
}

/// Ran far enough to say something about its hypothesis.
fn exercised(verdict: Option<Verdict>) -> bool {
    verdict.is_some_and(|v| !matches!(v, Verdict::NotRun | Verdict::InconclusiveEnv))
}

/// Every hypothesis of the plan, exercised or not; the scenarios closing each are
/// made as the template reads them (see [`super::lazy`]).
pub fn coverage<'a>(index: &Index<'a>, asks: &Asks) -> Vec<CoverageRow<'a>> {
    let plan = index.plan;
    plan.hypotheses
        .iter()
        .enumerate()
        .map(|(at, h)| {
            let list = List::ClosedBy(at);
            CoverageRow {
                id: &h.id,
                title: &h.title,
                exercised: plan
                    .scenarios
                    .iter()
                    .filter(|s| s.closes.contains(&h.id))
                    .any(|s| exercised(index.outcome_of(&s.id).and_then(|o| o.verdict))),
                closed_by: lazy(list, index.len(list), asks),
            }
        })
        .collect()
}

/// Every planned arm, in plan order.
pub fn surface<'a>(plan: &'a Plan, outcome: &'a SessionOutcome) -> Vec<SurfaceRow<'a>> {
    let runs = || outcome.scenarios.iter().flat_map(|s| s.runs.iter());
    plan.scenarios
        .iter()
        .flat_map(|s| s.arms.iter().map(move |arm| (s, arm)))
        .map(|(s, arm)| {
            let run = runs().find(|r| r.id == arm.id);
            let decision = run.and_then(|r| r.decision.as_ref());
            let verdict = decision.map(|d| d.verdict);
            SurfaceRow {
                scenario: &s.id,
                arm: &arm.id,
                description: &arm.description,
                verdict,
                executed: exercised(verdict),
                reason: decision.and_then(|d| in_words(&arm.id, Some(d.verdict), &d.reasons)),
            }
        })
        .collect()
}

/// A Release budget that is missing or written in a "not provided" form.
pub fn disclosures(plan: &Plan) -> Vec<Disclosure<'_>> {
    plan.scenarios
        .iter()
        .filter_map(|s| {
            let text = s.tiers.release.as_ref().map(|f| f.text.as_str());
            let undeclared = text.is_none_or(|t| {
                t.trim_start()
                    .to_ascii_lowercase()
                    .starts_with("not provided")
            });
            undeclared.then_some(Disclosure {
                id: &s.id,
                name: &s.name,
                text,
            })
        })
        .collect()
}

/// The plan's §7b rows against what ran.
pub fn adequacy<'a>(plan: &'a Plan, outcome: &'a SessionOutcome) -> Vec<AdequacyView<'a>> {
    plan.adequacy
        .iter()
        .map(|row| {
            let ran: Vec<Ran<'a>> = plan
                .scenarios
                .iter()
                .filter(|s| names_scenario(&row.scenarios, &s.id))
                .map(|s| ran(outcome, &s.id))
                .collect();
            let verdicts: Vec<Option<Verdict>> = ran.iter().map(|r| r.verdict).collect();
            let assessment = if verdicts.iter().flatten().any(|v| v.is_fail()) {
                "broken"
            } else if !verdicts.is_empty()
                && verdicts.iter().all(|v| v.is_some_and(|v| v.is_pass()))
            {
                "holds"
            } else {
                "not fully exercised"
            };
            AdequacyView {
                claim: &row.claim,
                claim_text: plan
                    .claims
                    .iter()
                    .find(|c| c.id == row.claim)
                    .map(|c| c.text.as_str()),
                threat_model: &row.threat_model,
                argued: &row.scenarios,
                why: &row.why_sufficient,
                ran,
                assessment,
            }
        })
        .collect()
}

/// Whether a §7b "Scenarios" cell names scenario `id` as a whole word.
fn names_scenario(cell: &str, id: &str) -> bool {
    cell.split(|c: char| !(c.is_alphanumeric() || c == '/' || c == '_'))
        .any(|word| word == id)
}

/// `unchanged` only when every planned scenario passed; otherwise `less`, naming why
/// (the scenarios that did not pass made as the template reads them).
pub fn confidence<'a>(index: &Index<'a>, asks: &Asks) -> Confidence<'a> {
    let plan = index.plan;
    let because = index.len(List::Because);
    Confidence {
        statement: plan.confidence.as_deref(),
        delta: if because == 0 && !plan.scenarios.is_empty() {
            "unchanged"
        } else {
            "less"
        },
        because: lazy(List::Because, because, asks),
    }
}
