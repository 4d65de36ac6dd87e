//! The TUI's state: a fold over journal records (the engine's truth) plus a small
//! UI-only part (selection, scrolling, overlays). Pure: nothing here touches a
//! terminal, a clock or a file, so every transition is unit-testable.

use std::path::PathBuf;

use ratatui_textarea::TextArea;
use serde_json::Value;

use crate::engine::operator::{Question, QuestionKind};
use crate::engine::outcome::Phase;
use crate::plan::{Plan, Problem};
use crate::session::event::{Event, PrivilegedDecision};
use crate::session::journal::Record;
use crate::tui::keymap::{Action, Keymap};
use crate::verdict::{ReasonStep, Verdict};

/// The steps of a session, in the order the step bar shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Plan,
    Toolbox,
    Checklist,
    Approvals,
    Run,
    Finding,
    Report,
}

impl Step {
    pub const ALL: [Step; 7] = [
        Step::Plan,
        Step::Toolbox,
        Step::Checklist,
        Step::Approvals,
        Step::Run,
        Step::Finding,
        Step::Report,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Step::Plan => "Plan",
            Step::Toolbox => "Toolbox",
            Step::Checklist => "Checklist",
            Step::Approvals => "Approvals",
            Step::Run => "Run",
            Step::Finding => "Finding",
            Step::Report => "Report",
        }
    }

    fn index(self) -> usize {
        Step::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }

    /// The next step (stays on the last).
    pub fn next(self) -> Step {
        Step::ALL[(self.index() + 1).min(Step::ALL.len() - 1)]
    }

    /// The previous step (stays on the first).
    pub fn prev(self) -> Step {
        Step::ALL[self.index().saturating_sub(1)]
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

/// Whether a verdict's evidence overlay lists this record.
fn is_evidence(event: &Event) -> bool {
    matches!(
        event,
        Event::AuthorBuild(_)
            | Event::AuthorDriver(_)
            | Event::Precondition(_)
            | Event::Budget(_)
            | Event::FaultInjected(_)
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
    /// Human lines: what was seen of each planned fault.
    pub landing: Vec<String>,
    /// The latest decision's reason chain.
    pub reasons: Vec<ReasonStep>,
    /// Why it did not run, if it did not.
    pub not_run: Option<String>,
    /// stderr logs of its commands, oldest first.
    pub logs: Vec<PathBuf>,
    /// One line per evidence record (`#33 oracle-result: checked 150 ops…`).
    pub evidence: Vec<String>,
    /// Seed labels started (`seed-1`, `seed-1-rerun`): each has its own history.
    pub labels: Vec<String>,
    /// When its first iteration started (UTC, as journaled).
    pub started: Option<String>,
}

impl RunRow {
    fn new(id: String, scenario: String, arm: Option<String>, name: String) -> RunRow {
        RunRow {
            id,
            scenario,
            arm,
            name,
            phase: Phase::Pending,
            badge: Badge::Pending,
            seeds_started: 0,
            seeds_done: 0,
            landing: Vec::new(),
            reasons: Vec::new(),
            not_run: None,
            logs: Vec::new(),
            evidence: Vec::new(),
            labels: Vec::new(),
            started: None,
        }
    }
}

/// Which pane of the Run screen has the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    List,
    Pane,
}

/// The UI-only part: nothing here comes from the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ui {
    pub step: Step,
    /// Index into [`AppState::runs`].
    pub selected: usize,
    pub focus: Focus,
    /// The live pane follows the log's end.
    pub follow: bool,
    /// Lines scrolled up from the end when not following (or from the top for
    /// text screens).
    pub scroll: u16,
    pub help: bool,
    pub reasons: bool,
    /// The selected verdict's evidence overlay.
    pub evidence: bool,
    /// The staged diff view (author mode); `scroll` is its first line while open.
    pub diff: bool,
    /// The search query, when one is being typed or applied.
    pub search: Option<String>,
    pub quit: bool,
}

/// Everything the screens draw.
#[derive(Debug, Clone)]
pub struct AppState {
    pub plan: Plan,
    pub problems: Vec<Problem>,
    /// The plan was handed back: nothing runs, the Plan screen lists why.
    pub handed_back: bool,
    /// How far the session itself got.
    pub current: Step,
    pub toolbox: Vec<ToolRow>,
    pub checklist: Vec<ChecklistRow>,
    pub approvals: Vec<ApprovalRow>,
    pub runs: Vec<RunRow>,
    pub answers: Vec<AnswerRow>,
    pub session_verdict: Option<String>,
    pub interrupted: Option<String>,
    /// A question waiting for the operator.
    pub pending: Option<Question>,
    /// report.md, when the caller knows the session directory.
    pub report_text: Option<String>,
    /// The session directory, from the `session-started` record.
    pub session_dir: Option<PathBuf>,
    /// The staged diff author mode saved in this run, from `author-staged`.
    pub staged_diff: Option<PathBuf>,
    /// When the session started (UTC, as journaled).
    pub started: Option<String>,
    /// Operators attached to the session now (the server says), and who this is.
    pub participants: Vec<crate::session::event::Participant>,
    pub me: Option<crate::session::event::Who>,
    /// One line of news for this operator: who answered, why an answer was refused.
    pub notice: Option<String>,
    /// The answer being typed to the pending question.
    pub editor: TextArea<'static>,
    pub keymap: Keymap,
    pub ui: Ui,
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

/// A run's badge after one more landing signal: any unproven one keeps it unproven.
fn landing_badge(seen: bool, badge: Badge) -> Badge {
    match (seen, badge) {
        (false, _) | (true, Badge::LandingNotProven) => Badge::LandingNotProven,
        (true, _) => Badge::LandingProven,
    }
}

impl AppState {
    /// A state with the plan's scenarios pending and nothing journaled yet.
    pub fn new(plan: Plan) -> AppState {
        let problems = crate::plan::lint(&plan);
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
        AppState {
            handed_back: crate::plan::hands_back(&problems),
            plan,
            problems,
            current: Step::Plan,
            toolbox: Vec::new(),
            checklist: Vec::new(),
            approvals: Vec::new(),
            runs,
            answers: Vec::new(),
            session_verdict: None,
            interrupted: None,
            pending: None,
            report_text: None,
            session_dir: None,
            staged_diff: None,
            started: None,
            participants: Vec::new(),
            me: None,
            notice: None,
            editor: TextArea::default(),
            keymap: Keymap::default(),
            ui: Ui {
                step: Step::Plan,
                selected: 0,
                focus: Focus::List,
                follow: true,
                scroll: 0,
                help: false,
                reasons: false,
                evidence: false,
                diff: false,
                search: None,
                quit: false,
            },
        }
    }

    /// Shows `question` until [`AppState::answered`], with an empty answer editor. A
    /// FAIL's classification is asked on the Finding screen, beside the failure.
    pub fn ask(&mut self, question: Question) {
        if matches!(
            question.kind,
            QuestionKind::ClassifyFailure | QuestionKind::Describe
        ) {
            self.ui.step = Step::Finding;
            self.ui.scroll = 0;
            if let Some(i) = self.runs.iter().position(|r| {
                question
                    .id
                    .rsplit_once('.')
                    .is_some_and(|(id, _)| id == r.id)
            }) {
                self.ui.selected = i;
            }
        }
        self.editor = TextArea::default();
        self.pending = Some(question);
    }

    /// The answer typed so far (lines joined with newlines).
    pub fn typed(&self) -> String {
        self.editor.lines().join("\n")
    }

    /// The pending question got its answer.
    pub fn answered(&mut self) {
        self.pending = None;
    }

    /// The run row a record's scope names, if any.
    /// A scenario or arm the plan does not name (a journal from another plan version)
    /// gets a row of its own rather than being dropped.
    fn row_index(&mut self, record: &Record) -> Option<usize> {
        let scenario = record.scope.scenario.as_deref()?;
        let found = match record.scope.arm.as_deref() {
            Some(arm) => self.runs.iter().position(|r| {
                r.scenario == scenario && (r.arm.as_deref() == Some(arm) || r.id == arm)
            }),
            None => self
                .runs
                .iter()
                .position(|r| r.scenario == scenario && r.arm.is_none()),
        };
        if found.is_some() {
            return found;
        }
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
        Some(self.runs.len() - 1)
    }

    /// The session reached `step`; the selected step follows while the user has not
    /// gone elsewhere.
    fn reach(&mut self, step: Step) {
        if step > self.current {
            if self.ui.step == self.current {
                self.ui.step = step;
            }
            self.current = step;
        }
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

    /// Folds one journal record into the state.
    pub fn apply(&mut self, record: &Record) {
        match &record.event {
            Event::ToolboxItem(data) => {
                self.reach(Step::Toolbox);
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
                    self.reach(Step::Checklist);
                    self.checklist_row(key).answer = Some(answer);
                } else {
                    self.answers.push(AnswerRow {
                        question: clean(&a.question),
                        answer,
                        by: clean(&a.by),
                    });
                }
            }
            Event::ChecklistComplete(_) => self.reach(Step::Checklist),
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
                self.reach(Step::Report);
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
        self.reach(Step::Approvals);
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
        self.reach(Step::Approvals);
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
            self.reach(Step::Run);
        }
        let row = &mut self.runs[index];
        if is_evidence(&record.event) {
            row.evidence.push(format!(
                "#{} {}: {}",
                record.seq,
                record.kind(),
                clean(&crate::report::summary_of(&record.event.data()))
            ));
        }
        match &record.event {
            Event::IterationStarted(i) => {
                row.labels.push(clean(&i.label));
                row.started.get_or_insert_with(|| record.ts.clone());
                let rerun = i.label.ends_with("rerun");
                row.phase = if rerun {
                    Phase::Rerun
                } else {
                    Phase::Preconditions
                };
                row.seeds_started += u32::from(!rerun);
                row.badge = Badge::Running;
                row.landing.clear();
            }
            Event::CommandStarted(c) => {
                match c.name.as_str() {
                    "workload" => row.phase = Phase::Workload,
                    "quiesce" => row.phase = Phase::Quiesce,
                    "final-state" | "checker" => {
                        row.phase = Phase::Oracle;
                        row.badge = Badge::Checking;
                    }
                    _ => {}
                }
                if !c.log.is_empty() {
                    // The record names the stderr log; stdout sits beside it.
                    if let Some(stdout) = c.log.strip_suffix(".stderr.log") {
                        row.logs.push(PathBuf::from(format!("{stdout}.stdout.log")));
                    }
                    row.logs.push(PathBuf::from(&c.log));
                }
                if row.badge == Badge::Pending {
                    row.badge = Badge::Running;
                }
            }
            Event::FaultIntent(_) => row.phase = Phase::Fault,
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
                let (seen, verdict) = match &l.seen {
                    Value::Bool(true) => (true, "seen".to_string()),
                    Value::Null | Value::Bool(false) => (false, "NOT seen".to_string()),
                    Value::String(s) if s.is_empty() => (false, "NOT seen".to_string()),
                    other => (true, format!("seen: {}", text_of(other))),
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
                row.phase = Phase::Workload;
                row.landing.push(format!("{}: healed", clean(&h.fault)));
            }
            Event::Quiesce(_) => {
                row.phase = Phase::Quiesce;
                row.badge = Badge::Checking;
            }
            Event::OracleResult(_) => {
                row.phase = Phase::Oracle;
                row.badge = Badge::Checking;
                row.seeds_done = row.seeds_done.saturating_add(1).min(row.seeds_started);
            }
            Event::Verdict(v) => {
                if let Some(v) = v.verdict {
                    row.badge = Badge::Verdict(v);
                    row.phase = Phase::Done;
                }
                row.reasons = v.reasons.clone();
                if v.verdict.is_some_and(Verdict::is_fail) {
                    self.reach(Step::Finding);
                }
            }
            Event::ArmsAggregated(a) => {
                if let Some(v) = a.verdict {
                    row.badge = Badge::Verdict(v);
                    row.phase = Phase::Done;
                    if v.is_fail() {
                        self.reach(Step::Finding);
                    }
                }
            }
            Event::NotRun(r) | Event::EnvMissing(r) => row.not_run = Some(clean(&r.reason)),
            _ => {}
        }
    }

    /// The selected run row, if the plan has any.
    pub fn selected_run(&self) -> Option<&RunRow> {
        self.runs.get(self.ui.selected)
    }

    /// Applies a UI action (never touches the journal-derived part).
    pub fn handle(&mut self, action: Action) {
        let last = self.runs.len().saturating_sub(1);
        let ui = &mut self.ui;
        let scrolls = ui.step == Step::Run && ui.focus == Focus::Pane;
        // Finding reads as text; on Report the arrows pick a verdict (its evidence is
        // one key away) until Tab moves the focus to the report text; pages always scroll.
        let report = ui.diff
            || ui.step == Step::Finding
            || (ui.step == Step::Report
                && (ui.focus == Focus::Pane
                    || matches!(action, Action::ScrollUp | Action::ScrollDown)));
        match action {
            // The report and findings read from the top: `scroll` is its first line.
            Action::Down | Action::ScrollDown if report => {
                let by = if action == Action::Down { 1 } else { 10 };
                ui.scroll = ui.scroll.saturating_add(by);
            }
            Action::Up | Action::ScrollUp if report => {
                let by = if action == Action::Up { 1 } else { 10 };
                ui.scroll = ui.scroll.saturating_sub(by);
            }
            Action::Top if report => ui.scroll = 0,
            Action::NextStep => {
                ui.step = ui.step.next();
                ui.scroll = 0;
            }
            Action::PrevStep => {
                ui.step = ui.step.prev();
                ui.scroll = 0;
            }
            Action::Up if !scrolls => ui.selected = ui.selected.saturating_sub(1),
            Action::Down if !scrolls => ui.selected = (ui.selected + 1).min(last),
            Action::Top if !scrolls => ui.selected = 0,
            Action::Bottom if !scrolls => ui.selected = last,
            Action::Up => ui.scroll_up(1),
            Action::ScrollUp => ui.scroll_up(10),
            Action::Top => ui.scroll_up(u16::MAX),
            Action::Down => ui.scroll_down(1),
            Action::ScrollDown => ui.scroll_down(10),
            Action::Bottom => ui.scroll_down(u16::MAX),
            Action::NextPane => {
                ui.focus = match ui.focus {
                    Focus::List => Focus::Pane,
                    Focus::Pane => Focus::List,
                }
            }
            Action::ToggleFollow => {
                ui.follow = !ui.follow;
                if ui.follow {
                    ui.scroll = 0;
                }
            }
            Action::Search => ui.search = Some(String::new()),
            Action::Help => ui.help = !ui.help,
            Action::Evidence => ui.evidence = !ui.evidence,
            Action::StagedDiff if self.staged_diff.is_some() => {
                ui.diff = !ui.diff;
                ui.scroll = 0;
            }
            Action::StagedDiff => {}
            Action::ShowReasons => ui.reasons = !ui.reasons,
            Action::Close => {
                ui.help = false;
                ui.evidence = false;
                if ui.diff {
                    ui.diff = false;
                    ui.scroll = 0;
                }
                ui.search = None;
            }
            Action::Quit => ui.quit = true,
        }
    }
}

impl Ui {
    /// Scrolls away from the end (the live pane stops following).
    fn scroll_up(&mut self, by: u16) {
        self.follow = false;
        self.scroll = self.scroll.saturating_add(by);
    }

    /// Scrolls toward the end; reaching it resumes following.
    fn scroll_down(&mut self, by: u16) {
        self.scroll = self.scroll.saturating_sub(by);
        if self.scroll == 0 {
            self.follow = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::journal::Scope;

    fn rec(scenario: Option<&str>, event: Event) -> Record {
        Record {
            seq: 1,
            ts: String::new(),
            scope: Scope {
                scenario: scenario.map(str::to_string),
                arm: None,
            },
            event,
        }
    }

    fn plan() -> Plan {
        crate::plan::parse_plan(
            "examples/demo/plan.md",
            include_str!("../../examples/demo/plan.md"),
        )
    }

    #[test]
    fn steps_walk_both_ways_and_stop_at_the_ends() {
        assert_eq!(Step::Plan.prev(), Step::Plan);
        assert_eq!(Step::Report.next(), Step::Report);
        assert_eq!(Step::Toolbox.next(), Step::Checklist);
    }

    #[test]
    fn a_disagreement_marks_the_checklist_row() {
        let mut s = AppState::new(plan());
        s.apply(&rec(
            None,
            Event::OperatorAnswer(crate::session::event::OperatorAnswer {
                question: "capability.docker".into(),
                prompt: None,
                answer: "have".into(),
                by: "t".into(),
                who: None,
            }),
        ));
        s.apply(&rec(
            None,
            Event::CapabilityDisagreement(crate::session::event::CapabilityDisagreement {
                capability: "docker".into(),
                operator: "have".into(),
                probe_present: false,
                resolution: String::new(),
            }),
        ));
        assert_eq!(s.checklist.len(), 1);
        assert!(s.checklist[0].mismatch);
        assert_eq!(s.ui.step, Step::Checklist);
    }

    #[test]
    fn landing_not_seen_wins_over_seen() {
        let mut s = AppState::new(plan());
        let id = s.runs[0].scenario.clone();
        for seen in [true, false, true] {
            s.apply(&rec(
                Some(&id),
                Event::LandingDeclared(crate::session::event::LandingDeclared {
                    fault: "f1".into(),
                    side: Some(crate::runspec::model::Side::Victim),
                    pattern: "x".into(),
                    seen: Value::Bool(seen),
                    skew_s: None,
                }),
            ));
        }
        assert_eq!(s.runs[0].badge, Badge::LandingNotProven);
    }

    #[test]
    fn scrolling_the_pane_pauses_and_the_end_resumes_following() {
        let mut s = AppState::new(plan());
        s.handle(Action::NextStep);
        assert_eq!(s.ui.step, Step::Toolbox);
        s.ui.step = Step::Run;
        s.handle(Action::Down);
        assert_eq!(s.ui.selected, 1);
        s.handle(Action::NextPane);
        s.handle(Action::Up);
        assert!(!s.ui.follow && s.ui.scroll == 1);
        s.handle(Action::Bottom);
        assert!(s.ui.follow && s.ui.scroll == 0);
        s.handle(Action::Search);
        assert_eq!(s.ui.search.as_deref(), Some(""));
        s.handle(Action::Close);
        assert!(s.ui.search.is_none());
        s.handle(Action::Quit);
        assert!(s.ui.quit);
    }

    #[test]
    fn a_question_shows_until_answered() {
        let mut s = AppState::new(plan());
        s.ask(Question {
            id: "q".into(),
            kind: crate::engine::operator::QuestionKind::ApproveChange,
            prompt: "p".into(),
            default: "decline".into(),
            ..Question::default()
        });
        assert!(s.pending.is_some());
        s.answered();
        assert!(s.pending.is_none());
    }
}
