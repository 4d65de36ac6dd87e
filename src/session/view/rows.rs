//! The rows the session's readers show: the toolbox, the checklist, approvals,
//! answers and one row per scenario / arm run, each folded from its records.

use std::path::PathBuf;

use serde_json::Value;

use super::View;
use crate::session::event::{Event, PrivilegedDecision};
use crate::session::journal::Record;
use crate::session::label::{CommandRole, IterationLabel};
use crate::session::outcome::Phase;
use crate::verdict::{ReasonStep, Verdict};

/// The stages of a session, in the order it reaches them (and the TUI's step bar
/// shows them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Stage {
    #[default]
    Plan,
    Toolbox,
    Checklist,
    Approvals,
    Run,
    Finding,
    Report,
}

impl Stage {
    pub const ALL: [Stage; 7] = [
        Stage::Plan,
        Stage::Toolbox,
        Stage::Checklist,
        Stage::Approvals,
        Stage::Run,
        Stage::Finding,
        Stage::Report,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Stage::Plan => "Plan",
            Stage::Toolbox => "Toolbox",
            Stage::Checklist => "Checklist",
            Stage::Approvals => "Approvals",
            Stage::Run => "Run",
            Stage::Finding => "Finding",
            Stage::Report => "Report",
        }
    }

    fn index(self) -> usize {
        Stage::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }

    /// The next step (stays on the last).
    pub fn next(self) -> Stage {
        Stage::ALL[(self.index() + 1).min(Stage::ALL.len() - 1)]
    }

    /// The previous step (stays on the first).
    pub fn prev(self) -> Stage {
        Stage::ALL[self.index().saturating_sub(1)]
    }
}

/// What a scenario / arm row shows next to its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Badge {
    Pending,
    Running,
    FaultInjected,
    LandingProven,
    LandingNotProven,
    Checking,
    Verdict(Verdict),
}

impl Badge {
    /// The badge's text (a verdict shows its own name).
    pub fn label(self) -> &'static str {
        match self {
            Badge::Pending => "pending",
            Badge::Running => "running",
            Badge::FaultInjected => "fault injected",
            Badge::LandingProven => "landing proven",
            Badge::LandingNotProven => "landing NOT proven",
            Badge::Checking => "checking",
            Badge::Verdict(v) => v.as_str(),
        }
    }
}

/// One discovered toolbox item, as journaled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolRow {
    pub path: String,
    pub kind: String,
    pub role: String,
    pub name: String,
    pub evidence: String,
}

/// One capability need: what the operator said, what the probe saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChecklistRow {
    /// The question key (`docker`, `binary:fl-client`, `row-47`).
    pub key: String,
    /// The need as the plan wrote it (from the probe record), else the key.
    pub need: String,
    pub answer: Option<String>,
    /// What the probe saw (version or output), if it ran.
    pub probe: Option<String>,
    pub present: Option<bool>,
    /// The operator said have / don't have and the probe disagreed.
    pub mismatch: bool,
}

/// One install / approval record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRow {
    /// `approved`, `declined`, `finished`, `not offered`.
    pub status: String,
    pub capability: String,
    pub detail: String,
}

/// A classification or other operator answer about a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerRow {
    pub question: String,
    /// Sanitized line by line; a multi-line answer keeps its `\n`s.
    pub answer: String,
    pub by: String,
}

/// One row of the run list: a scenario, or one arm of a scenario with arms.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// `D3`, or `D5/api` for an arm.
    pub id: String,
    pub scenario: String,
    /// The arm's short name; `None` for the scenario row itself.
    pub arm: Option<String>,
    pub name: String,
    pub phase: Phase,
    pub badge: Badge,
    pub seeds_started: u32,
    pub seeds_done: u32,
    /// Seeds its budget plans (0 until its `budget` record).
    pub seeds_planned: u32,
    /// Human lines: what was seen of each planned fault.
    pub landing: Vec<String>,
    /// Services that ended with no fault to explain it, one line each with its
    /// iteration and record (`seed-1: n1 exited 3 at +0.1 s: … (#12)`).
    pub ended: Vec<String>,
    /// The latest decision's reason chain.
    pub reasons: Vec<ReasonStep>,
    /// Why it did not run, if it did not.
    pub not_run: Option<String>,
    /// stderr logs of its commands, oldest first.
    pub logs: Vec<PathBuf>,
    /// Its commands with their iteration and logs, in the order started.
    pub commands: Vec<CommandLog>,
    /// One line per evidence record (`#33 oracle-result: checked 150 ops…`).
    pub evidence: Vec<String>,
    /// Iterations started (`seed-1`, `seed-1-rerun`): each has its own history.
    pub labels: Vec<IterationLabel>,
    /// When its first iteration started (UTC, as journaled).
    pub started: Option<String>,
    /// When its latest verdict was journaled (UTC): with `started`, its own wall
    /// time, whatever else the session did before or after it.
    pub decided: Option<String>,
}

/// One command a run row started: which iteration, its name as journaled (a
/// service's own, or a [`CommandRole`]'s), its process group and its logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLog {
    /// `None` for a command journaled before any iteration started.
    pub label: Option<IterationLabel>,
    pub name: String,
    pub pgid: i32,
    pub stderr: PathBuf,
    /// Beside the stderr log; `None` when the record's log is not `*.stderr.log`.
    pub stdout: Option<PathBuf>,
    /// When it started (its `command-started` record's time, RFC 3339): its logs
    /// were created then.
    pub started: String,
}

impl RunRow {
    /// Its own wall time: its first iteration's start to its latest verdict (to the
    /// last record seen, while it runs); 0 when it never started.
    pub fn seconds(&self) -> f64 {
        let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
        match (
            self.started.as_deref().and_then(parse),
            self.decided.as_deref().and_then(parse),
        ) {
            (Some(from), Some(to)) => ((to - from).num_milliseconds().max(0) as f64) / 1000.0,
            _ => 0.0,
        }
    }
}

impl RunRow {
    pub(super) fn new(id: String, scenario: String, arm: Option<String>, name: String) -> RunRow {
        RunRow {
            id,
            scenario,
            arm,
            name,
            phase: Phase::Pending,
            badge: Badge::Pending,
            seeds_started: 0,
            seeds_done: 0,
            seeds_planned: 0,
            landing: Vec::new(),
            ended: Vec::new(),
            reasons: Vec::new(),
            not_run: None,
            logs: Vec::new(),
            commands: Vec::new(),
            evidence: Vec::new(),
            labels: Vec::new(),
            started: None,
            decided: None,
        }
    }
}

/// Whether a `landing-declared` record's `seen` says the signal was seen: the
/// matching line or `true`; null, `false` or an empty line when nothing matched.
pub(super) fn declared_seen(seen: &Value) -> bool {
    !matches!(seen, Value::Null | Value::Bool(false)) && seen.as_str() != Some("")
}

/// Whether a verdict's evidence overlay lists this record.
fn is_evidence(event: &Event) -> bool {
    matches!(
        event,
        Event::AuthorBuild(_)
            | Event::AuthorDriver(_)
            | Event::Precondition(_)
            | Event::Budget(_)
            | Event::FaultInjected(_)
            | Event::ServiceExited(_)
            | Event::LandingInjector(_)
            | Event::LandingDeclared(_)
            | Event::FaultHealed(_)
            | Event::OracleResult(_)
            | Event::RerunResult(_)
            | Event::NotRun(_)
            | Event::EnvMissing(_)
            | Event::Verdict(_)
    )
}

fn text(data: &Value, field: &str) -> String {
    data.get(field).map(text_of).unwrap_or_default()
}

/// A JSON value as one sanitized line (a string without its quotes).
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => clean(s),
        Value::Null => String::new(),
        other => clean(&other.to_string()),
    }
}

fn clean(text: &str) -> String {
    crate::sanitize::line(text)
}

/// Whether an iteration's label is a seed of the budget (`seed-3`), not the re-run
/// of a FAIL (`seed-3-rerun`) nor a reduction's candidate (`seed-3-reduce-2`): only
/// those count as seeds that ran.
/// The phase a record moves its scenario or arm into, if any: the one fold of the
/// phase, for the rows here and the outcome the documents are written from.
pub fn phase_of(event: &Event) -> Option<Phase> {
    match event {
        Event::IterationStarted(i) if i.label.is_rerun() => Some(Phase::Rerun),
        Event::IterationStarted(_) => Some(Phase::Preconditions),
        Event::FaultHealed(_) => Some(Phase::Workload),
        Event::CommandStarted(c) => match CommandRole::of(&c.name)? {
            CommandRole::Workload => Some(Phase::Workload),
            CommandRole::Quiesce => Some(Phase::Quiesce),
            CommandRole::FinalState | CommandRole::Checker => Some(Phase::Oracle),
        },
        Event::FaultIntent(_) => Some(Phase::Fault),
        Event::Quiesce(_) => Some(Phase::Quiesce),
        Event::OracleResult(_) => Some(Phase::Oracle),
        Event::Verdict(_) => Some(Phase::Audits),
        _ => None,
    }
}

/// A run's badge after one more landing signal: any unproven one keeps it unproven.
fn landing_badge(seen: bool, badge: Badge) -> Badge {
    match (seen, badge) {
        (false, _) | (true, Badge::LandingNotProven) => Badge::LandingNotProven,
        (true, _) => Badge::LandingProven,
    }
}

impl View {
    /// The run row a record's scope names, if any.
    /// A scenario or arm the plan does not name (a journal from another plan version)
    /// gets a row of its own rather than being dropped.
    pub(super) fn row_index(&mut self, record: &Record) -> Option<usize> {
        let scenario = record.scope.scenario.as_deref()?;
        let key = (scenario.to_string(), record.scope.arm.clone());
        // Remembered per scope: a search of every row per record would make a
        // record's cost grow with the plan.
        if let Some(&at) = self.row_of.get(&key) {
            return Some(at);
        }
        let found = match record.scope.arm.as_deref() {
            Some(arm) => self.runs.iter().position(|r| {
                r.scenario == scenario && (r.arm.as_deref() == Some(arm) || r.id == arm)
            }),
            None => self
                .runs
                .iter()
                .position(|r| r.scenario == scenario && r.arm.is_none()),
        };
        let at = found.unwrap_or_else(|| {
            let arm = record
                .scope
                .arm
                .as_deref()
                .map(|a| a.rsplit('/').next().unwrap_or(a).to_string());
            let id = match &arm {
                Some(a) => format!("{scenario}/{a}"),
                None => scenario.to_string(),
            };
            self.runs
                .push(RunRow::new(id, scenario.to_string(), arm, String::new()));
            self.runs.len() - 1
        });
        self.row_of.insert(key, at);
        Some(at)
    }

    /// The session reached `stage` (it never goes back).
    fn reach(&mut self, stage: Stage) {
        self.reached = self.reached.max(stage);
    }

    fn checklist_row(&mut self, key: &str) -> &mut ChecklistRow {
        let index = match self.checklist.iter().position(|r| r.key == key) {
            Some(i) => i,
            None => {
                self.checklist.push(ChecklistRow {
                    key: key.to_string(),
                    need: key.to_string(),
                    ..ChecklistRow::default()
                });
                self.checklist.len() - 1
            }
        };
        &mut self.checklist[index]
    }

    /// Folds one record into the rows.
    pub(super) fn fold_rows(&mut self, record: &Record) {
        match &record.event {
            Event::ToolboxItem(data) => {
                self.reach(Stage::Toolbox);
                self.toolbox.push(ToolRow {
                    path: text(data, "path"),
                    kind: text(data, "kind"),
                    role: text(data, "role"),
                    name: text(data, "name"),
                    evidence: text(data, "evidence"),
                });
            }
            Event::OperatorAnswer(a) => {
                let answer = clean(&a.answer);
                if let Some(key) = a.question.strip_prefix("capability.") {
                    self.reach(Stage::Checklist);
                    self.checklist_row(key).answer = Some(answer);
                } else {
                    // A written answer (a root cause) keeps its lines, each sanitized.
                    let answer = a.answer.lines().map(clean).collect::<Vec<_>>().join("\n");
                    self.answer_rows.push(AnswerRow {
                        question: clean(&a.question),
                        answer,
                        by: clean(&a.by),
                    });
                }
            }
            Event::ChecklistComplete(_) => self.reach(Stage::Checklist),
            Event::Capability(c) => {
                let row = self.checklist_row(&c.capability);
                row.need = clean(&c.need);
                row.present = Some(c.present);
                row.probe = Some(clean(
                    c.version
                        .as_deref()
                        .filter(|v| !v.is_empty())
                        .unwrap_or(&c.saw),
                ));
            }
            Event::CapabilityDisagreement(c) => {
                self.checklist_row(&c.capability).mismatch = true;
            }
            Event::InstallApproved(d) => self.install_row("approved", &d.capability, &[&d.what]),
            Event::InstallDeclined(d) => self.install_row("declined", &d.capability, &[&d.what]),
            Event::InstallNotOffered(n) => self.install_row(
                "not offered",
                &n.capability,
                &[n.shown.as_deref().unwrap_or(""), &n.why],
            ),
            Event::InstallFinished(f) => self.install_row(
                "finished",
                &f.capability,
                &[
                    f.command.as_deref().unwrap_or(""),
                    f.outcome.as_deref().unwrap_or(""),
                    f.error.as_deref().unwrap_or(""),
                ],
            ),
            Event::PrivilegedApproved(p) => self.privileged_row("approved", p),
            Event::PrivilegedDeclined(p) => self.privileged_row("declined", p),
            Event::SessionStarted(s) => {
                self.session_dir = (!s.session.is_empty()).then(|| PathBuf::from(&s.session));
                self.started = Some(record.ts.clone());
            }
            Event::SessionVerdict(v) => {
                self.reach(Stage::Report);
                self.session_verdict = v.verdict.map(|v| v.to_string());
            }
            Event::Interrupted(i) => self.interrupted = Some(clean(&i.during)),
            // Raw, not sanitized: it is a path under the session, read by the diff view.
            Event::AuthorStaged(a) => {
                self.staged_diff = match &self.session_dir {
                    Some(dir) if a.files > 0 && !a.diff.is_empty() => Some(dir.join(&a.diff)),
                    _ => None,
                };
            }
            _ => self.apply_run(record),
        }
    }

    fn install_row(&mut self, status: &str, capability: &str, details: &[&str]) {
        self.reach(Stage::Approvals);
        let detail = details
            .iter()
            .filter(|t| !t.is_empty())
            .map(|t| clean(t))
            .collect::<Vec<_>>()
            .join("; ");
        self.approvals.push(ApprovalRow {
            status: status.to_string(),
            capability: clean(capability),
            detail,
        });
    }

    fn privileged_row(&mut self, status: &str, p: &PrivilegedDecision) {
        self.reach(Stage::Approvals);
        self.approvals.push(ApprovalRow {
            status: status.to_string(),
            capability: format!("privileged {}", clean(&p.scenario)),
            detail: clean(&format!("{} (by {})", p.actions.join("; "), p.by)),
        });
    }

    /// Records about one scenario / arm run.
    fn apply_run(&mut self, record: &Record) {
        let Some(index) = self.row_index(record) else {
            return;
        };
        if matches!(
            record.event,
            Event::IterationStarted(_) | Event::CommandStarted(_)
        ) {
            self.reach(Stage::Run);
        }
        let row = &mut self.runs[index];
        if is_evidence(&record.event) {
            row.evidence.push(format!(
                "#{} {}: {}",
                record.seq,
                record.kind(),
                clean(&crate::session::summary::summary_of(&record.event.data()))
            ));
        }
        // A row is done at its verdict (below), not in its audits.
        if let Some(phase) =
            phase_of(&record.event).filter(|_| !matches!(record.event, Event::Verdict(_)))
        {
            row.phase = phase;
        }
        match &record.event {
            Event::Budget(b) => row.seeds_planned = b.seeds,
            Event::IterationStarted(i) => {
                row.labels.push(i.label);
                row.started.get_or_insert_with(|| record.ts.clone());
                row.seeds_started += u32::from(i.label.is_seed());
                row.badge = Badge::Running;
                row.landing.clear();
            }
            Event::CommandStarted(c) => {
                if CommandRole::of(&c.name).is_some_and(CommandRole::judges) {
                    row.badge = Badge::Checking;
                }
                if !c.log.is_empty() {
                    // The record names the stderr log; stdout sits beside it.
                    let stdout = c
                        .log
                        .strip_suffix(".stderr.log")
                        .map(|stem| PathBuf::from(format!("{stem}.stdout.log")));
                    row.logs.extend(stdout.clone());
                    row.logs.push(PathBuf::from(&c.log));
                    row.commands.push(CommandLog {
                        label: row.labels.last().copied(),
                        name: clean(&c.name),
                        pgid: c.pgid,
                        stderr: PathBuf::from(&c.log),
                        stdout,
                        started: record.ts.clone(),
                    });
                }
                if row.badge == Badge::Pending {
                    row.badge = Badge::Running;
                }
            }
            Event::ServiceExited(e) => match &e.fault {
                // A fault's victim ending is that fault's evidence.
                Some(fault) if e.explained_by.is_some() => {
                    row.landing.push(format!("{}: {}", clean(fault), e.said()))
                }
                _ => {
                    let label = row
                        .labels
                        .last()
                        .map(ToString::to_string)
                        .unwrap_or_default();
                    row.ended
                        .push(format!("{label}: {} (#{})", e.said(), record.seq));
                }
            },
            Event::FaultInjected(f) => {
                row.badge = Badge::FaultInjected;
                row.landing.push(format!("{}: injected", clean(&f.fault)));
            }
            Event::LandingInjector(l) => {
                // Older journals carry the text as `detail` itself.
                let said = if l.text.is_empty() {
                    text_of(&l.detail)
                } else {
                    clean(&l.text)
                };
                let verdict = if l.landed { "seen" } else { "NOT seen" };
                row.landing.push(format!(
                    "{}: injector side: {said} — {verdict}",
                    clean(&l.fault)
                ));
                row.badge = landing_badge(l.landed, row.badge);
            }
            Event::LandingDeclared(l) => {
                // `seen` is the matching line, or null / false when nothing matched.
                let seen = declared_seen(&l.seen);
                let verdict = match &l.seen {
                    _ if !seen => "NOT seen".to_string(),
                    Value::Bool(true) => "seen".to_string(),
                    other => format!("seen: {}", text_of(other)),
                };
                let side = l
                    .side
                    .map(|s| format!("{s:?}").to_lowercase())
                    .unwrap_or_default();
                row.landing.push(format!(
                    "{}: declared on {side}: /{}/ — {verdict}",
                    clean(&l.fault),
                    clean(&l.pattern)
                ));
                row.badge = landing_badge(seen, row.badge);
            }
            Event::FaultHealed(h) => {
                row.landing.push(format!("{}: healed", clean(&h.fault)));
            }
            Event::Quiesce(_) => row.badge = Badge::Checking,
            Event::OracleResult(_) => {
                row.badge = Badge::Checking;
                // A re-run's or a reduction's checker ends no seed of the budget.
                if row.labels.last().is_some_and(IterationLabel::is_seed) {
                    row.seeds_done = row.seeds_done.saturating_add(1).min(row.seeds_started);
                }
            }
            Event::Verdict(v) => {
                row.decided = Some(record.ts.clone());
                if let Some(v) = v.verdict {
                    row.badge = Badge::Verdict(v);
                    row.phase = Phase::Done;
                }
                row.reasons = v.reasons.clone();
                if v.verdict.is_some_and(Verdict::is_fail) {
                    self.reach(Stage::Finding);
                }
            }
            Event::ArmsAggregated(a) => {
                if let Some(v) = a.verdict {
                    row.badge = Badge::Verdict(v);
                    row.phase = Phase::Done;
                    if v.is_fail() {
                        self.reach(Stage::Finding);
                    }
                }
            }
            Event::NotRun(r) | Event::EnvMissing(r) => row.not_run = Some(clean(&r.reason)),
            _ => {}
        }
    }
}
