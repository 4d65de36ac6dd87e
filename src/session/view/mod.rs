//! The reducer: folds journal records, in order, into what a session stands at —
//! what is still injected, mounted or held in a cgroup, which process groups it
//! started, what was answered, what was decided, and the rows every screen shows
//! (toolbox, checklist, approvals, one row per scenario / arm with its badge and
//! evidence). It is the only reader of the journal: the TUI, headless output, `heal`,
//! `resume` and the driver's restart all read a session through it. Adding an event
//! kind touches [`super::event`] and this fold, nothing else.

mod activity;
mod nodes;
mod notes;
mod rows;

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use activity::{Activity, FaultLine, Live};
pub use nodes::NodeRow;
pub use notes::NoteRow;
pub use rows::{
    AnswerRow, ApprovalRow, Badge, ChecklistRow, CommandLog, RunRow, Stage, ToolRow, phase_of,
};

use super::event::{
    CgroupCreated, CommandStarted, Event, FaultInjected, MountCreated, OperatorAnswer, Participant,
    SessionRoles, VerdictEvent,
};
use super::journal::{Record, Scope};
use super::outcome::{ScenarioOutcome, SessionOutcome};

/// A record's payload with the scope it was journaled under.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoped<T> {
    pub seq: u64,
    pub scope: Scope,
    pub item: T,
}

/// What a session stands at after the records applied so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    /// Faults injected and not (yet) healed, in journal order.
    pub open_faults: Vec<Scoped<FaultInjected>>,
    /// tmpfs mounts made and not removed.
    pub open_mounts: Vec<Scoped<MountCreated>>,
    /// The run's network namespace, made and not yet deleted.
    pub open_netns: Vec<Scoped<super::event::NetnsCreated>>,
    /// cgroups made and not removed, in journal order (an iteration's before its
    /// services').
    pub open_cgroups: Vec<Scoped<CgroupCreated>>,
    /// Every process group the session started, first record per node and pgid.
    pub groups: Vec<Scoped<CommandStarted>>,
    /// The nodes reached over SSH, last record per node: how `heal` reaches them.
    pub nodes: BTreeMap<String, super::event::NodeConnected>,
    /// Every node the journal names, by name: how it was reached or why not, and
    /// its commands' logs.
    pub node_rows: BTreeMap<String, NodeRow>,
    /// The last answer to each question, by question id.
    pub answers: BTreeMap<String, OperatorAnswer>,
    /// Questions asked and neither answered nor withdrawn, by id.
    pub pending: BTreeMap<String, super::operator::Question>,
    /// Operators attached now, in the order they joined.
    pub participants: Vec<Participant>,
    /// Who may attach, once the server said.
    pub roles: Option<SessionRoles>,
    /// Every `verdict` record, in order.
    pub verdicts: Vec<Scoped<VerdictEvent>>,
    /// Records of kinds this build does not read: (seq, kind, why).
    pub unread: Vec<(u64, String, String)>,
    /// The last seq applied.
    pub seq: u64,
    /// How far the session got.
    pub reached: Stage,
    pub toolbox: Vec<ToolRow>,
    pub checklist: Vec<ChecklistRow>,
    pub approvals: Vec<ApprovalRow>,
    /// One row per scenario and arm: the plan's, in plan order (see
    /// [`View::for_plan`]), then any a record names that the plan does not.
    pub runs: Vec<RunRow>,
    /// Answers other than the checklist's, in the order given.
    pub answer_rows: Vec<AnswerRow>,
    /// The notes operators left (`operator-note`), in journal order, each with who,
    /// when and the run it was written during (see [`NoteRow`]).
    pub notes: Vec<NoteRow>,
    pub session_verdict: Option<String>,
    /// Set when a signal or a stop ended the run early: during what.
    pub interrupted: Option<String>,
    /// The row the engine works on now (the last to start an iteration, a command
    /// or a fault).
    pub active: Option<usize>,
    /// What the engine is doing now.
    pub activity: Option<Activity>,
    /// Each row's running (or last) iteration, by row index.
    pub live: BTreeMap<usize, Live>,
    /// The session directory, from the `session-started` record.
    pub session_dir: Option<PathBuf>,
    /// The staged diff author mode saved in this run, from `author-staged`.
    pub staged_diff: Option<PathBuf>,
    /// When the session started (UTC, as journaled).
    pub started: Option<String>,
    /// The outcome's session part and scenario order, as last journaled.
    outcome_session: Option<(SessionOutcome, Vec<String>)>,
    /// Each scenario's outcome as last journaled, by id (boxed as the record has it:
    /// a map's node then holds pointers, not half-empty room for large outcomes).
    outcome_scenarios: BTreeMap<String, Box<ScenarioOutcome>>,
    /// Which row each (scenario, arm) scope folds into.
    row_of: std::collections::HashMap<(String, Option<String>), usize>,
    /// Set by [`View::rows_only`]: the outcome records and the verdict history are
    /// not kept.
    rows_only: bool,
}

impl View {
    /// An empty view with a pending row for each of the plan's scenarios and arms.
    pub fn for_plan(plan: &crate::plan::Plan) -> View {
        let mut runs = Vec::new();
        for s in &plan.scenarios {
            runs.push(RunRow::new(
                s.id.clone(),
                s.id.clone(),
                None,
                s.name.clone(),
            ));
            for a in &s.arms {
                let short = a.id.rsplit('/').next().unwrap_or(&a.id).to_string();
                runs.push(RunRow::new(
                    a.id.clone(),
                    s.id.clone(),
                    Some(short),
                    a.description.clone(),
                ));
            }
        }
        View {
            runs,
            ..View::default()
        }
    }

    /// An empty view for a reader of its rows alone (the headless closing table): it
    /// folds every record as any view does but keeps neither the outcomes the
    /// records restate ([`View::outcome`] stays `None`) nor every `verdict` record
    /// ([`View::verdicts`] stays empty), which a long session would hold once more
    /// beside the engine's own.
    pub fn rows_only() -> View {
        View {
            rows_only: true,
            ..View::default()
        }
    }

    /// Who answered `questions` (the last answer to each), each answerer once in
    /// the order first seen: what a finding says classified it.
    pub fn answered_by<'q>(&self, questions: impl IntoIterator<Item = &'q str>) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for answer in questions.into_iter().filter_map(|q| self.answers.get(q)) {
            let by = answer.answerer();
            if !out.contains(&by) {
                out.push(by);
            }
        }
        out
    }

    /// The view of `records`, applied in order.
    pub fn of(records: &[Record]) -> View {
        let mut view = View::default();
        for record in records {
            view.apply(record);
        }
        view
    }

    /// Folds one record in.
    pub fn apply(&mut self, record: &Record) {
        self.seq = record.seq;
        self.fold_rows(record);
        self.fold_activity(record);
        self.fold_nodes(record);
        self.fold_notes(record);
        match &record.event {
            Event::FaultInjected(f) => self.open_faults.push(scoped(record, f)),
            Event::FaultHealed(h) => {
                if let Some(i) = self
                    .open_faults
                    .iter()
                    .position(|o| o.scope == record.scope && o.item.fault == h.fault)
                {
                    self.open_faults.remove(i);
                }
            }
            Event::MountCreated(m) => self.open_mounts.push(scoped(record, m)),
            Event::MountRemoved(m) => self.open_mounts.retain(|o| o.item.path != m.path),
            Event::NetnsCreated(n) => self.open_netns.push(scoped(record, n)),
            Event::NetnsRemoved(n) => self.open_netns.retain(|o| o.item.name != n.name),
            Event::CgroupCreated(c) => self.open_cgroups.push(scoped(record, c)),
            Event::CgroupRemoved(c) => self.open_cgroups.retain(|o| o.item.path != c.path),
            Event::CommandStarted(c)
                if !self
                    .groups
                    .iter()
                    .any(|g| g.item.pgid == c.pgid && g.item.node == c.node) =>
            {
                self.groups.push(scoped(record, c));
            }
            Event::NodeConnected(n) => {
                self.nodes.insert(n.node.clone(), n.clone());
            }
            Event::OperatorAnswer(a) => {
                self.pending.remove(&a.question);
                self.answers.insert(a.question.clone(), a.clone());
            }
            Event::QuestionAsked(q) => {
                self.pending
                    .insert(q.question.id.clone(), q.question.clone());
            }
            Event::QuestionWithdrawn(w) => {
                self.pending.remove(&w.question);
            }
            Event::ParticipantJoined(p) => self.participants.push(p.clone()),
            Event::ParticipantLeft(p) => {
                if let Some(i) = self.participants.iter().position(|o| o == p) {
                    self.participants.remove(i);
                }
            }
            Event::SessionRoles(r) => self.roles = Some(r.clone()),
            Event::Verdict(_) | Event::OutcomeSession(_) | Event::OutcomeScenario(_)
                if self.rows_only => {}
            Event::Verdict(v) => self.verdicts.push(scoped(record, v)),
            Event::OutcomeSession(o) => {
                if let Some(outcome) = &o.outcome {
                    self.outcome_session = Some((outcome.as_ref().clone(), o.order.clone()));
                }
            }
            Event::OutcomeScenario(o) => {
                if let Some(outcome) = &o.outcome {
                    self.outcome_scenarios
                        .insert(outcome.id.clone(), outcome.clone());
                }
            }
            Event::Unknown(u) => self
                .unread
                .push((record.seq, u.kind.clone(), u.why.clone())),
            _ => {}
        }
    }
}

impl View {
    /// The session's outcome as its records left it: what `resume` continues from and
    /// `report` renders. `None` before the first `outcome-session` record (a journal
    /// older than format 3 has none, and so does one cut before every scenario it
    /// orders was journaled).
    pub fn outcome(&self) -> Option<SessionOutcome> {
        let (head, order) = self.outcome_session.as_ref()?;
        let scenarios = order
            .iter()
            .map(|id| self.outcome_scenarios.get(id).map(|o| o.as_ref().clone()))
            .collect::<Option<Vec<_>>>()?;
        Some(SessionOutcome {
            scenarios,
            ..head.clone()
        })
    }
}

fn scoped<T: Clone>(record: &Record, item: &T) -> Scoped<T> {
    Scoped {
        seq: record.seq,
        scope: record.scope.clone(),
        item: item.clone(),
    }
}
