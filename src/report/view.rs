//! What the templates lay out: plan and outcome joined per scenario and run.

use serde::Serialize;

use super::derived::{self, AdequacyView, Confidence, CoverageRow, Disclosure, SurfaceRow};
use crate::plan::{Plan, Scenario};
use crate::session::event::Event;
use crate::session::journal::Record;
use crate::session::outcome::{Phase, RunOutcome, ScenarioOutcome, SessionOutcome};
use crate::verdict::{ReasonStep, Tier, Verdict};

/// One scenario with its plan entry and its runs.
#[derive(Serialize)]
pub struct ScenarioView<'a> {
    pub outcome: &'a ScenarioOutcome,
    pub plan: Option<&'a Scenario>,
    pub has_arms: bool,
    /// `pending`, `running` or `done`.
    pub state: &'static str,
    /// The verdict's reason in words.
    pub reason: Option<String>,
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
    /// The verdict's reason in words.
    pub reason: Option<String>,
    pub last_step: Option<&'a ReasonStep>,
}

/// A plan item id with its text (claim text, hypothesis title).
#[derive(Serialize)]
pub struct Labelled<'a> {
    pub id: &'a str,
    pub text: Option<&'a str>,
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
    pub nodes: Vec<NodeView>,
}

/// A verdict's reason as one sentence (`None` while undecided).
pub fn in_words(id: &str, verdict: Option<Verdict>, reasons: &[ReasonStep]) -> Option<String> {
    verdict.map(|v| crate::verdict::words::sentence(id, v, reasons))
}

/// Joins one scenario's outcome with its plan entry.
pub fn scenario<'a>(plan: &'a Plan, outcome: &'a ScenarioOutcome) -> ScenarioView<'a> {
    let planned = plan.scenarios.iter().find(|s| s.id == outcome.id);
    let runs: Vec<RunView<'a>> = outcome
        .runs
        .iter()
        .map(|run| RunView {
            run,
            verdict: run.decision.as_ref().map(|d| d.verdict),
            tier_met: run.decision.as_ref().and_then(|d| d.tier_met),
            reason: run
                .decision
                .as_ref()
                .and_then(|d| in_words(&run.id, Some(d.verdict), &d.reasons)),
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
        reason: in_words(&outcome.id, outcome.verdict, &outcome.reasons),
        last_step: outcome.reasons.last(),
        runs,
        claims,
        hypotheses,
    }
}

/// The view report.md renders.
pub fn report<'a>(
    plan: &'a Plan,
    outcome: &'a SessionOutcome,
    journal: &[Record],
) -> ReportView<'a> {
    ReportView {
        plan,
        outcome,
        nodes: nodes(journal, &outcome.session_dir),
        exit_code: outcome.verdict.map(|v| v.exit_code()),
        scenarios: outcome
            .scenarios
            .iter()
            .map(|s| scenario(plan, s))
            .collect(),
        coverage: derived::coverage(plan, outcome),
        surface: derived::surface(plan, outcome),
        disclosures: derived::disclosures(plan),
        adequacy: derived::adequacy(plan, outcome),
        confidence: derived::confidence(plan, outcome),
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
    pub nodes: Vec<NodeView>,
}

/// A node of the run spec as the journal saw it: how it was reached (or why not) and
/// the logs of what ran on it.
#[derive(Serialize, Debug, PartialEq)]
pub struct NodeView {
    pub name: String,
    /// `user@host:port`; `None` while (or when) it was never reached.
    pub address: Option<String>,
    pub host_key: String,
    pub unreachable: Option<String>,
    /// Log files of the commands started on it, relative to the session directory.
    pub logs: Vec<String>,
}

/// Every node the journal names, in name order.
pub fn nodes(journal: &[Record], session_dir: &str) -> Vec<NodeView> {
    let mut out: std::collections::BTreeMap<String, NodeView> = Default::default();
    fn entry<'m>(
        out: &'m mut std::collections::BTreeMap<String, NodeView>,
        name: &str,
    ) -> &'m mut NodeView {
        out.entry(name.to_string()).or_insert_with(|| NodeView {
            name: name.to_string(),
            address: None,
            host_key: String::new(),
            unreachable: None,
            logs: Vec::new(),
        })
    }
    let relative = |path: &str| {
        std::path::Path::new(path)
            .strip_prefix(session_dir)
            .map_or_else(|_| path.to_string(), |p| p.display().to_string())
    };
    for record in journal {
        match &record.event {
            Event::NodeConnected(n) => {
                let node = entry(&mut out, &n.node);
                node.address = Some(format!("{}@{}:{}", n.user, n.hostname, n.port));
                node.host_key = n.fingerprints.join(", ");
                node.unreachable = None;
            }
            Event::Capability(c) if !c.present => {
                if let Some(name) = c
                    .capability
                    .strip_prefix("node:")
                    .and_then(|rest| rest.strip_suffix("/ssh"))
                {
                    entry(&mut out, name).unreachable = Some(c.saw.clone());
                }
            }
            Event::CommandStarted(c) => {
                let Some(name) = &c.node else { continue };
                let stderr = relative(&c.log);
                let stdout = stderr.replace(".stderr.log", ".stdout.log");
                let node = entry(&mut out, name);
                for log in [stdout, stderr] {
                    if !node.logs.contains(&log) {
                        node.logs.push(log);
                    }
                }
            }
            _ => {}
        }
    }
    out.into_values().collect()
}

/// A journal record with the scope it is shown under (`D5/api`, `D3`, `session`).
#[derive(Serialize)]
pub struct Entry<'a> {
    pub record: &'a Record,
    pub scope: &'a str,
}

/// The view session-log.md renders.
pub fn session_log<'a>(
    plan: &'a Plan,
    outcome: &'a SessionOutcome,
    journal: &'a [Record],
) -> SessionLogView<'a> {
    let entries = |keep: fn(&Event) -> bool| -> Vec<Entry<'a>> {
        journal
            .iter()
            .filter(|r| keep(&r.event))
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
        journal: entries(|e| !e.restates_outcome()),
        toolbox: entries(|e| matches!(e, Event::ToolboxItem(_))),
        capabilities: entries(|e| matches!(e, Event::Capability(_))),
        preconditions: entries(|e| matches!(e, Event::Precondition(_))),
        nodes: nodes(journal, &outcome.session_dir),
        scenarios: outcome
            .scenarios
            .iter()
            .map(|s| scenario(plan, s))
            .collect(),
    }
}
