//! The TUI's state: a fold over journal records (the engine's truth) plus a small
//! UI-only part (selection, scrolling, overlays). Pure: nothing here touches a
//! terminal, a clock or a file, so every transition is unit-testable.

use std::path::PathBuf;

use ratatui_textarea::TextArea;
use serde_json::Value;

use crate::engine::operator::{Question, QuestionKind};
use crate::engine::outcome::Phase;
use crate::journal::Record;
use crate::plan::{Plan, Problem};
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

/// Journal record kinds a verdict's evidence overlay lists.
const EVIDENCE_KINDS: [&str; 13] = [
    "author-build",
    "author-driver",
    "precondition",
    "budget",
    "fault-injected",
    "landing-injector",
    "landing-declared",
    "fault-healed",
    "oracle-result",
    "rerun-result",
    "not-run",
    "env-missing",
    "verdict",
];

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
    /// The answer being typed to the pending question.
    pub editor: TextArea<'static>,
    pub keymap: Keymap,
    pub ui: Ui,
}

fn text(data: &Value, field: &str) -> String {
    match data.get(field) {
        Some(Value::String(s)) => crate::sanitize::line(s),
        Some(Value::Null) | None => String::new(),
        Some(other) => crate::sanitize::line(&other.to_string()),
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
        let data = &record.data;
        match record.kind.as_str() {
            "toolbox-item" => {
                self.reach(Step::Toolbox);
                self.toolbox.push(ToolRow {
                    path: text(data, "path"),
                    kind: text(data, "kind"),
                    role: text(data, "role"),
                    name: text(data, "name"),
                    evidence: text(data, "evidence"),
                });
            }
            "operator-answer" => {
                let question = text(data, "question");
                let answer = text(data, "answer");
                if let Some(key) = question.strip_prefix("capability.") {
                    self.reach(Step::Checklist);
                    self.checklist_row(key).answer = Some(answer);
                } else {
                    self.answers.push(AnswerRow {
                        question,
                        answer,
                        by: text(data, "by"),
                    });
                }
            }
            "checklist-complete" => self.reach(Step::Checklist),
            "capability" => {
                let row = self.checklist_row(&text(data, "capability"));
                row.need = text(data, "need");
                row.present = data.get("present").and_then(Value::as_bool);
                let version = text(data, "version");
                row.probe = Some(if version.is_empty() {
                    text(data, "saw")
                } else {
                    version
                });
            }
            "capability-disagreement" => {
                self.checklist_row(&text(data, "capability")).mismatch = true;
            }
            kind @ ("install-approved"
            | "install-declined"
            | "install-finished"
            | "install-not-offered") => {
                self.reach(Step::Approvals);
                let status = kind.trim_start_matches("install-").replace('-', " ");
                let detail = ["what", "shown", "command", "outcome", "why", "error"]
                    .iter()
                    .map(|f| text(data, f))
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join("; ");
                self.approvals.push(ApprovalRow {
                    status,
                    capability: text(data, "capability"),
                    detail,
                });
            }
            kind @ ("privileged-approved" | "privileged-declined") => {
                self.reach(Step::Approvals);
                let actions = data
                    .get("actions")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>())
                    .unwrap_or_default();
                self.approvals.push(ApprovalRow {
                    status: kind.trim_start_matches("privileged-").to_string(),
                    capability: format!("privileged {}", text(data, "scenario")),
                    detail: format!("{} (by {})", actions.join("; "), text(data, "by")),
                });
            }
            "session-started" => {
                let dir = text(data, "session");
                self.session_dir = (!dir.is_empty()).then(|| PathBuf::from(dir));
                self.started = Some(record.ts.clone());
            }
            "session-verdict" => {
                self.reach(Step::Report);
                self.session_verdict = Some(text(data, "verdict"));
            }
            "interrupted" => self.interrupted = Some(text(data, "during")),
            // Raw, not sanitized: it is a path under the session, read by the diff view.
            "author-staged" => {
                let diff = data.get("diff").and_then(Value::as_str);
                let written = data.get("files").and_then(Value::as_u64).unwrap_or(0);
                self.staged_diff = match (&self.session_dir, diff) {
                    (Some(dir), Some(diff)) if written > 0 => Some(dir.join(diff)),
                    _ => None,
                };
            }
            _ => self.apply_run(record),
        }
    }

    /// Records about one scenario / arm run.
    fn apply_run(&mut self, record: &Record) {
        let Some(index) = self.row_index(record) else {
            return;
        };
        let data = &record.data;
        let kind = record.kind.as_str();
        if kind == "iteration-started" || kind == "command-started" {
            self.reach(Step::Run);
        }
        let row = &mut self.runs[index];
        if EVIDENCE_KINDS.contains(&kind) {
            row.evidence.push(format!(
                "#{} {kind}: {}",
                record.seq,
                crate::sanitize::line(&crate::report::summary_of(data))
            ));
        }
        match kind {
            "iteration-started" => {
                row.labels.push(text(data, "label"));
                row.started.get_or_insert_with(|| record.ts.clone());
                let rerun = text(data, "label").ends_with("rerun");
                row.phase = if rerun {
                    Phase::Rerun
                } else {
                    Phase::Preconditions
                };
                row.seeds_started += u32::from(!rerun);
                row.badge = Badge::Running;
                row.landing.clear();
            }
            "command-started" => {
                let name = text(data, "name");
                match name.as_str() {
                    "workload" => row.phase = Phase::Workload,
                    "quiesce" => row.phase = Phase::Quiesce,
                    "final-state" | "checker" => {
                        row.phase = Phase::Oracle;
                        row.badge = Badge::Checking;
                    }
                    _ => {}
                }
                let log = text(data, "log");
                if !log.is_empty() {
                    // The record names the stderr log; stdout sits beside it.
                    if let Some(stdout) = log.strip_suffix(".stderr.log") {
                        row.logs.push(PathBuf::from(format!("{stdout}.stdout.log")));
                    }
                    row.logs.push(PathBuf::from(log));
                }
                if row.badge == Badge::Pending {
                    row.badge = Badge::Running;
                }
            }
            "fault-intent" => row.phase = Phase::Fault,
            "fault-injected" => {
                row.badge = Badge::FaultInjected;
                row.landing
                    .push(format!("{}: injected", text(data, "fault")));
            }
            "landing-injector" | "landing-declared" => {
                // `seen` is the matching line, or null / false when nothing matched.
                let matched = text(data, "seen");
                let seen = match data.get("landed").or_else(|| data.get("seen")) {
                    Some(Value::Bool(b)) => *b,
                    Some(Value::String(s)) => !s.is_empty(),
                    _ => false,
                };
                let what = if kind == "landing-injector" {
                    // Older journals carry the text as `detail` itself.
                    let said = Some(text(data, "text"))
                        .filter(|t| !t.is_empty())
                        .unwrap_or_else(|| text(data, "detail"));
                    format!("injector side: {said}")
                } else {
                    format!(
                        "declared on {}: /{}/",
                        text(data, "side"),
                        text(data, "pattern")
                    )
                };
                let verdict = match (seen, kind) {
                    (true, "landing-declared") if matched != "true" => format!("seen: {matched}"),
                    (true, _) => "seen".to_string(),
                    (false, _) => "NOT seen".to_string(),
                };
                row.landing
                    .push(format!("{}: {what} — {verdict}", text(data, "fault")));
                row.badge = match (seen, row.badge) {
                    (false, _) | (true, Badge::LandingNotProven) => Badge::LandingNotProven,
                    (true, _) => Badge::LandingProven,
                };
            }
            "fault-healed" => {
                row.phase = Phase::Workload;
                row.landing.push(format!("{}: healed", text(data, "fault")));
            }
            "quiesce" => {
                row.phase = Phase::Quiesce;
                row.badge = Badge::Checking;
            }
            "oracle-result" => {
                row.phase = Phase::Oracle;
                row.badge = Badge::Checking;
                row.seeds_done = row.seeds_done.saturating_add(1).min(row.seeds_started);
            }
            "verdict" | "arms-aggregated" => {
                let verdict = data
                    .get("verdict")
                    .cloned()
                    .and_then(|v| serde_json::from_value::<Verdict>(v).ok());
                if let Some(v) = verdict {
                    row.badge = Badge::Verdict(v);
                    row.phase = Phase::Done;
                    if v.is_fail() {
                        self.reach(Step::Finding);
                    }
                }
                if let Some(reasons) = data
                    .get("reasons")
                    .cloned()
                    .and_then(|r| serde_json::from_value::<Vec<ReasonStep>>(r).ok())
                {
                    self.runs[index].reasons = reasons;
                }
            }
            "not-run" | "env-missing" => row.not_run = Some(text(data, "reason")),
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
    use crate::journal::Scope;
    use serde_json::json;

    fn rec(kind: &str, scenario: Option<&str>, data: Value) -> Record {
        Record {
            seq: 1,
            ts: String::new(),
            scope: Scope {
                scenario: scenario.map(str::to_string),
                arm: None,
            },
            kind: kind.to_string(),
            data,
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
            "operator-answer",
            None,
            json!({"question": "capability.docker", "answer": "have", "by": "t"}),
        ));
        s.apply(&rec(
            "capability-disagreement",
            None,
            json!({"capability": "docker", "operator": "have", "probe_present": false}),
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
                "landing-declared",
                Some(&id),
                json!({"fault": "f1", "side": "victim", "pattern": "x", "seen": seen}),
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
