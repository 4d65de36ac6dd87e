//! What the templates lay out: plan and outcome joined per scenario / run, plus the
//! facts the report derives (coverage, surface, adequacy, confidence) computed once.

use serde::Serialize;

use crate::engine::outcome::{Phase, RunOutcome, ScenarioOutcome, SessionOutcome};
use crate::journal::Record;
use crate::plan::{Plan, Scenario};
use crate::verdict::{ReasonStep, Tier, Verdict};

/// One scenario with its plan entry and its runs.
#[derive(Serialize)]
pub struct ScenarioView<'a> {
    pub outcome: &'a ScenarioOutcome,
    pub plan: Option<&'a Scenario>,
    pub has_arms: bool,
    /// `pending`, `running` or `done`.
    pub state: &'static str,
    pub reason: Option<&'a str>,
    /// The last reason step, shown as a verdict's note.
    pub last_step: Option<&'a ReasonStep>,
    pub runs: Vec<RunView<'a>>,
    pub claims: Vec<Labelled<'a>>,
    pub hypotheses: Vec<Labelled<'a>>,
}

/// One arm or scenario run with its own verdict.
#[derive(Serialize)]
pub struct RunView<'a> {
    pub run: &'a RunOutcome,
    pub verdict: Option<Verdict>,
    pub tier_met: Option<Tier>,
    pub reason: Option<&'a str>,
    pub last_step: Option<&'a ReasonStep>,
}

/// A plan item id with its text (claim text, hypothesis title).
#[derive(Serialize)]
pub struct Labelled<'a> {
    pub id: &'a str,
    pub text: Option<&'a str>,
}

/// A scenario id and how it ended, for coverage and adequacy rows.
#[derive(Serialize)]
pub struct Ran<'a> {
    pub id: &'a str,
    /// The session holds this scenario at all.
    pub present: bool,
    pub verdict: Option<Verdict>,
    pub reason: Option<&'a str>,
}

#[derive(Serialize)]
pub struct CoverageRow<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub closed_by: Vec<Ran<'a>>,
    pub exercised: bool,
}

#[derive(Serialize)]
pub struct SurfaceRow<'a> {
    pub scenario: &'a str,
    pub arm: &'a str,
    pub description: &'a str,
    pub verdict: Option<Verdict>,
    pub executed: bool,
    pub reason: Option<&'a str>,
}

#[derive(Serialize)]
pub struct Disclosure<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// The plan's Release budget text, verbatim; `None` when the field is absent.
    pub text: Option<&'a str>,
}

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

#[derive(Serialize)]
pub struct Confidence<'a> {
    pub statement: Option<&'a str>,
    /// `less` or `unchanged`.
    pub delta: &'static str,
    /// The scenarios that moved it, with their verdicts.
    pub because: Vec<Ran<'a>>,
}

/// Everything report.md shows.
#[derive(Serialize)]
pub struct ReportView<'a> {
    pub plan: &'a Plan,
    pub outcome: &'a SessionOutcome,
    pub exit_code: Option<i32>,
    pub scenarios: Vec<ScenarioView<'a>>,
    pub coverage: Vec<CoverageRow<'a>>,
    pub surface: Vec<SurfaceRow<'a>>,
    pub disclosures: Vec<Disclosure<'a>>,
    pub adequacy: Vec<AdequacyView<'a>>,
    pub confidence: Confidence<'a>,
}

/// The last reason step's answer: the one-line why of a verdict.
fn last_answer(reasons: &[ReasonStep]) -> Option<&str> {
    reasons.last().map(|r| r.answer.as_str())
}

pub fn scenario<'a>(plan: &'a Plan, outcome: &'a ScenarioOutcome) -> ScenarioView<'a> {
    let planned = plan.scenarios.iter().find(|s| s.id == outcome.id);
    let runs: Vec<RunView<'a>> = outcome
        .runs
        .iter()
        .map(|run| RunView {
            run,
            verdict: run.decision.as_ref().map(|d| d.verdict),
            tier_met: run.decision.as_ref().and_then(|d| d.tier_met),
            reason: run.decision.as_ref().and_then(|d| last_answer(&d.reasons)),
            last_step: run.decision.as_ref().and_then(|d| d.reasons.last()),
        })
        .collect();
    let has_arms = planned.is_some_and(|s| !s.arms.is_empty())
        || outcome.runs.iter().any(|r| r.id != outcome.id);
    let state = match outcome.phase {
        Phase::Pending => "pending",
        Phase::Done => "done",
        _ => "running",
    };
    let claims = planned.map_or_else(Vec::new, |s| {
        s.falsifies
            .iter()
            .map(|id| Labelled {
                id,
                text: plan
                    .claims
                    .iter()
                    .find(|c| &c.id == id)
                    .map(|c| c.text.as_str()),
            })
            .collect()
    });
    let hypotheses = planned.map_or_else(Vec::new, |s| {
        s.closes
            .iter()
            .map(|id| Labelled {
                id,
                text: plan
                    .hypotheses
                    .iter()
                    .find(|h| &h.id == id)
                    .map(|h| h.title.as_str()),
            })
            .collect()
    });
    ScenarioView {
        outcome,
        plan: planned,
        has_arms,
        state,
        reason: last_answer(&outcome.reasons),
        last_step: outcome.reasons.last(),
        runs,
        claims,
        hypotheses,
    }
}

pub fn report<'a>(plan: &'a Plan, outcome: &'a SessionOutcome) -> ReportView<'a> {
    ReportView {
        plan,
        outcome,
        exit_code: outcome.verdict.map(|v| v.exit_code()),
        scenarios: outcome
            .scenarios
            .iter()
            .map(|s| scenario(plan, s))
            .collect(),
        coverage: coverage(plan, outcome),
        surface: surface(plan, outcome),
        disclosures: disclosures(plan),
        adequacy: adequacy(plan, outcome),
        confidence: confidence(plan, outcome),
    }
}

/// How scenario `id` ended in this session (`verdict: None` when absent or undecided).
fn ran<'a>(outcome: &'a SessionOutcome, id: &'a str) -> Ran<'a> {
    let found = outcome.scenarios.iter().find(|s| s.id == id);
    Ran {
        id,
        present: found.is_some(),
        verdict: found.and_then(|s| s.verdict),
        reason: found.and_then(|s| last_answer(&s.reasons)),
    }
}

/// Ran far enough to say something about its hypothesis.
fn exercised(verdict: Option<Verdict>) -> bool {
    verdict.is_some_and(|v| !matches!(v, Verdict::NotRun | Verdict::InconclusiveEnv))
}

fn coverage<'a>(plan: &'a Plan, outcome: &'a SessionOutcome) -> Vec<CoverageRow<'a>> {
    plan.hypotheses
        .iter()
        .map(|h| {
            let closed_by: Vec<Ran<'a>> = plan
                .scenarios
                .iter()
                .filter(|s| s.closes.contains(&h.id))
                .map(|s| ran(outcome, &s.id))
                .collect();
            CoverageRow {
                id: &h.id,
                title: &h.title,
                exercised: closed_by.iter().any(|r| exercised(r.verdict)),
                closed_by,
            }
        })
        .collect()
}

fn surface<'a>(plan: &'a Plan, outcome: &'a SessionOutcome) -> Vec<SurfaceRow<'a>> {
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
                reason: decision.and_then(|d| last_answer(&d.reasons)),
            }
        })
        .collect()
}

/// A Release budget that is missing or written in a "not provided" form.
fn disclosures(plan: &Plan) -> Vec<Disclosure<'_>> {
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

fn adequacy<'a>(plan: &'a Plan, outcome: &'a SessionOutcome) -> Vec<AdequacyView<'a>> {
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

fn confidence<'a>(plan: &'a Plan, outcome: &'a SessionOutcome) -> Confidence<'a> {
    let because: Vec<Ran<'a>> = plan
        .scenarios
        .iter()
        .map(|s| ran(outcome, &s.id))
        .filter(|r| !r.verdict.is_some_and(|v| v.is_pass()))
        .collect();
    Confidence {
        statement: plan.confidence.as_deref(),
        delta: if because.is_empty() && !plan.scenarios.is_empty() {
            "unchanged"
        } else {
            "less"
        },
        because,
    }
}

/// Everything session-log.md shows.
#[derive(Serialize)]
pub struct SessionLogView<'a> {
    pub plan: &'a Plan,
    pub outcome: &'a SessionOutcome,
    /// Commit under test, `(dirty)` appended, or "not a git work tree".
    pub commit: String,
    pub journal: Vec<Entry<'a>>,
    pub toolbox: Vec<Entry<'a>>,
    pub capabilities: Vec<Entry<'a>>,
    pub preconditions: Vec<Entry<'a>>,
    pub scenarios: Vec<ScenarioView<'a>>,
}

/// A journal record with the scope it is shown under (`D5/api`, `D3`, `session`).
#[derive(Serialize)]
pub struct Entry<'a> {
    pub record: &'a Record,
    pub scope: &'a str,
}

pub fn session_log<'a>(
    plan: &'a Plan,
    outcome: &'a SessionOutcome,
    journal: &'a [Record],
) -> SessionLogView<'a> {
    let entries = |kind: Option<&str>| -> Vec<Entry<'a>> {
        journal
            .iter()
            .filter(|r| kind.is_none_or(|k| r.kind == k))
            .map(|record| Entry {
                record,
                scope: record
                    .scope
                    .arm
                    .as_deref()
                    .or(record.scope.scenario.as_deref())
                    .unwrap_or("session"),
            })
            .collect()
    };
    let commit = match &outcome.revision {
        Some(rev) if rev.dirty => format!("{} (dirty)", rev.commit),
        Some(rev) => rev.commit.clone(),
        None => "not a git work tree".to_string(),
    };
    SessionLogView {
        plan,
        outcome,
        commit,
        journal: entries(None),
        toolbox: entries(Some("toolbox-item")),
        capabilities: entries(Some("capability")),
        preconditions: entries(Some("precondition")),
        scenarios: outcome
            .scenarios
            .iter()
            .map(|s| scenario(plan, s))
            .collect(),
    }
}
