//! `session-log.md` written as it is rendered, from a pass over the journal file
//! (see [`super::journal_pass`]): the template is the one [`super::session_log`]
//! renders, its timeline read from the file record by record while the document is
//! written, and its other parts handed only the fields the template shows. What it
//! costs in memory does not grow with the journal.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};

use minijinja::value::{Enumerator, Object, ObjectRepr, Serde, Value};
use serde::Serialize;

use super::journal_pass::{Lines, Pass, Source};
use super::lazy::{self, Asks, Index, List};
use super::view::{self, Entry, NodeView};
use crate::plan::{Header, Plan, Requirement};
use crate::session::journal::Record;
use crate::session::outcome::{RunOutcome, ScenarioOutcome, SessionOutcome};
use crate::verdict::{ReasonStep, Tier, Verdict};

/// Writes the session log of `plan` and `outcome` to `out`: the journal's facts from
/// `pass`, its timeline read again from `pass.source`.
pub fn write(
    plan: &Plan,
    outcome: &SessionOutcome,
    pass: &Pass,
    out: &mut dyn Write,
) -> io::Result<()> {
    let failed = Arc::new(Mutex::new(None));
    let timeline = Timeline {
        source: pass.source.clone(),
        len: pass.timeline,
        failed: failed.clone(),
    };
    // Its scenarios, like its timeline, are made as the template reads them.
    let index = Index::new(plan, outcome);
    let rendered = lazy::rendering(&index, |asks| {
        let parts = LogView::of(plan, outcome, pass, asks);
        let context = minijinja::value::merge_maps([
            Value::from(Serde(&parts)),
            minijinja::context! { journal => Value::from_object(timeline) },
        ]);
        super::templates::render_to("session-log.md.j2", context, out)
    });
    // A timeline cut short by a read error is not a log: the previous one is kept.
    if let Some(e) = failed.lock().unwrap_or_else(PoisonError::into_inner).take() {
        return Err(e);
    }
    rendered.map_err(io::Error::other)
}

/// What the template reads of the plan.
#[derive(Serialize)]
struct PlanPart<'a> {
    header: &'a Header,
    requirements: &'a [Requirement],
}

/// What the template reads of the outcome: its session part, and of each scenario
/// the toolbox items its binding used.
#[derive(Serialize)]
struct OutcomePart<'a> {
    plan_slug: &'a str,
    sut_dir: &'a str,
    plan_path: &'a str,
    session_dir: &'a str,
    operator: &'a str,
    tier: Tier,
    started: &'a str,
    finished: Option<&'a str>,
    interrupted: Option<&'a str>,
    toolbox: &'a [crate::toolbox::ToolboxItem],
    capabilities: &'a [crate::capability::MatrixRow],
    /// Each scenario's [`ToolboxUse`].
    scenarios: Value,
}

#[derive(Serialize)]
pub struct ToolboxUse<'a> {
    id: &'a str,
    toolbox_used: &'a [String],
}

/// A scenario's verdict row and artifacts, as [`view::ScenarioView`] gives them.
#[derive(Serialize)]
pub struct ScenarioPart<'a> {
    outcome: VerdictPart<'a>,
    has_arms: bool,
    state: &'static str,
    last_step: Option<&'a ReasonStep>,
    runs: Vec<RunPart<'a>>,
}

#[derive(Serialize)]
struct VerdictPart<'a> {
    id: &'a str,
    tier_met: Option<Tier>,
    verdict: Option<Verdict>,
}

#[derive(Serialize)]
struct RunPart<'a> {
    run: RunIdPart<'a>,
    verdict: Option<Verdict>,
    tier_met: Option<Tier>,
    last_step: Option<&'a ReasonStep>,
}

#[derive(Serialize)]
struct RunIdPart<'a> {
    id: &'a str,
    artifacts: &'a [String],
}

/// Everything session-log.md shows but its timeline.
#[derive(Serialize)]
struct LogView<'a> {
    plan: PlanPart<'a>,
    outcome: OutcomePart<'a>,
    commit: String,
    toolbox: Vec<Entry<'a>>,
    capabilities: Vec<Entry<'a>>,
    preconditions: Vec<Entry<'a>>,
    /// Each scenario's [`ScenarioPart`].
    scenarios: Value,
    nodes: Vec<NodeView>,
}

impl<'a> LogView<'a> {
    fn of(plan: &'a Plan, outcome: &'a SessionOutcome, pass: &'a Pass, asks: &Asks) -> LogView<'a> {
        let entries = |records: &'a [Record]| records.iter().map(view::entry).collect();
        let scenarios = |list| lazy::lazy(list, outcome.scenarios.len(), asks);
        LogView {
            plan: PlanPart {
                header: &plan.header,
                requirements: &plan.requirements,
            },
            outcome: OutcomePart {
                plan_slug: &outcome.plan_slug,
                sut_dir: &outcome.sut_dir,
                plan_path: &outcome.plan_path,
                session_dir: &outcome.session_dir,
                operator: &outcome.operator,
                tier: outcome.tier,
                started: &outcome.started,
                finished: outcome.finished.as_deref(),
                interrupted: outcome.interrupted.as_deref(),
                toolbox: &outcome.toolbox,
                capabilities: &outcome.capabilities,
                scenarios: scenarios(List::ToolboxUse),
            },
            commit: view::commit(outcome),
            toolbox: entries(&pass.toolbox),
            capabilities: entries(&pass.capabilities),
            preconditions: entries(&pass.preconditions),
            scenarios: scenarios(List::LogScenarios),
            nodes: view::nodes(&pass.view, &outcome.session_dir),
        }
    }
}

/// A scenario's toolbox items, as the log lists them.
pub fn toolbox_use(outcome: &ScenarioOutcome) -> ToolboxUse<'_> {
    ToolboxUse {
        id: &outcome.id,
        toolbox_used: &outcome.toolbox_used,
    }
}

/// A scenario's part; `arms_planned` says whether the plan gives it arms (the first
/// scenario of its id, as in [`view::scenario`]).
pub fn scenario<'a>(arms_planned: bool, outcome: &'a ScenarioOutcome) -> ScenarioPart<'a> {
    let run = |r: &'a RunOutcome| RunPart {
        run: RunIdPart {
            id: &r.id,
            artifacts: &r.artifacts,
        },
        verdict: r.decision.as_ref().map(|d| d.verdict),
        tier_met: r.decision.as_ref().and_then(|d| d.tier_met),
        last_step: r.decision.as_ref().and_then(|d| d.reasons.last()),
    };
    ScenarioPart {
        outcome: VerdictPart {
            id: &outcome.id,
            tier_met: outcome.tier_met,
            verdict: outcome.verdict,
        },
        has_arms: view::has_arms(arms_planned, outcome),
        state: view::state(outcome),
        last_step: outcome.reasons.last(),
        runs: outcome.runs.iter().map(run).collect(),
    }
}

/// The timeline's records, read from the journal file each time the template
/// iterates them; a read error ends the iteration and is kept in `failed`.
#[derive(Debug)]
struct Timeline {
    source: Source,
    len: usize,
    failed: Arc<Mutex<Option<io::Error>>>,
}

impl Object for Timeline {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.len)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let failed = self.failed.clone();
        let fail = move |e: io::Error| {
            *failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
        };
        let lines = match Lines::of(&self.source) {
            Ok(lines) => lines,
            Err(e) => {
                fail(e);
                return Enumerator::Empty;
            }
        };
        Enumerator::Iter(Box::new(
            lines
                .map_while(move |r| r.map_err(&fail).ok())
                .filter(|r| !r.event.restates_outcome())
                .map(|r| Value::from(Serde(view::entry(&r)))),
        ))
    }
}
