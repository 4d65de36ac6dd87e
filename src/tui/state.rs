//! The TUI's state: the session's [`View`] (the one reducer over journal records)
//! plus a small UI-only part (selection, scrolling, overlays). Pure: nothing here
//! touches a terminal, a clock or a file, so every transition is unit-testable.

use ratatui_textarea::TextArea;

use crate::plan::{Plan, Problem};
use crate::session::journal::Record;
use crate::session::operator::{Question, QuestionKind};
use crate::session::view::View;
pub use crate::session::view::{
    AnswerRow, ApprovalRow, Badge, ChecklistRow, RunRow, Stage as Step, ToolRow,
};
use crate::tui::keymap::{Action, Keymap};

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
    /// The operator picked a run row: the selection no longer follows the row the
    /// engine works on (until `f` follows again).
    pub pinned: bool,
    /// Which of the selected row's logs the pane tails (`s` cycles); `None` for the
    /// newest.
    pub log_pick: Option<usize>,
    pub quit: bool,
}

/// Everything the screens draw.
#[derive(Debug, Clone)]
pub struct AppState {
    pub plan: Plan,
    pub problems: Vec<Problem>,
    /// The plan was handed back: nothing runs, the Plan screen lists why.
    pub handed_back: bool,
    /// What the journal says, folded by the session's reducer.
    pub view: View,
    /// A question waiting for the operator.
    pub pending: Option<Question>,
    /// report.md, when the caller knows the session directory.
    pub report_text: Option<String>,
    /// Operators attached to the session now (the server says), and who this is.
    pub participants: Vec<crate::session::event::Participant>,
    pub me: Option<crate::session::event::Who>,
    /// One line of news for this operator: who answered, why an answer was refused.
    pub notice: Option<String>,
    /// The answer being typed to the pending question.
    pub editor: TextArea<'static>,
    pub keymap: Keymap,
    pub ui: Ui,
    /// The wall clock the status line counts from, set by the caller before each
    /// draw (kept out of the drawing so a frame is a function of the state).
    pub now: Option<chrono::DateTime<chrono::Utc>>,
}

impl AppState {
    /// A state with the plan's scenarios pending and nothing journaled yet.
    pub fn new(plan: Plan) -> AppState {
        let problems = crate::plan::lint(&plan);
        AppState {
            handed_back: crate::plan::hands_back(&problems),
            view: View::for_plan(&plan),
            plan,
            problems,
            pending: None,
            report_text: None,
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
                pinned: false,
                log_pick: None,
                quit: false,
            },
            now: None,
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
            if let Some(i) = self.view.runs.iter().position(|r| {
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

    /// Folds one journal record in. The screen shown follows the session to each new
    /// stage while the operator is on the stage it had reached (not reading elsewhere).
    pub fn apply(&mut self, record: &Record) {
        let before = self.view.reached;
        self.view.apply(record);
        if self.view.reached > before && self.ui.step == before {
            self.ui.step = self.view.reached;
        }
        // The Run screen shows the row the engine works on until the operator picks one.
        if !self.ui.pinned
            && let Some(active) = self.view.active
            && active != self.ui.selected
        {
            self.ui.selected = active;
            self.ui.log_pick = None;
        }
    }

    /// The selected run row, if the plan has any.
    pub fn selected_run(&self) -> Option<&RunRow> {
        self.view.runs.get(self.ui.selected)
    }

    /// Applies a UI action (never touches the journal-derived part).
    pub fn handle(&mut self, action: Action) {
        let last = self.view.runs.len().saturating_sub(1);
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
            Action::Up | Action::Down | Action::Top | Action::Bottom if !scrolls => {
                ui.selected = match action {
                    Action::Up => ui.selected.saturating_sub(1),
                    Action::Down => (ui.selected + 1).min(last),
                    Action::Top => 0,
                    _ => last,
                };
                ui.pinned = true;
                ui.follow = false;
                ui.log_pick = None;
            }
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
            // Following is both: the running row and its log's end.
            Action::ToggleFollow => {
                ui.follow = !ui.follow;
                if ui.follow {
                    ui.scroll = 0;
                    ui.pinned = false;
                    if let Some(active) = self.view.active {
                        ui.selected = active;
                    }
                }
            }
            Action::NextLog => {
                let count = self.view.runs.get(ui.selected).map_or(0, |r| r.logs.len());
                ui.log_pick = match ui.log_pick {
                    _ if count == 0 => None,
                    None => Some(0),
                    Some(i) if i + 1 >= count => None,
                    Some(i) => Some(i + 1),
                };
            }
            Action::Search => ui.search = Some(String::new()),
            Action::Help => ui.help = !ui.help,
            Action::Evidence => ui.evidence = !ui.evidence,
            Action::StagedDiff if self.view.staged_diff.is_some() => {
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
    use crate::session::event::Event;
    use crate::session::journal::Scope;
    use serde_json::Value;

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
        assert_eq!(s.view.checklist.len(), 1);
        assert!(s.view.checklist[0].mismatch);
        assert_eq!(s.ui.step, Step::Checklist);
    }

    #[test]
    fn landing_not_seen_wins_over_seen() {
        let mut s = AppState::new(plan());
        let id = s.view.runs[0].scenario.clone();
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
        assert_eq!(s.view.runs[0].badge, Badge::LandingNotProven);
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
            kind: crate::session::operator::QuestionKind::ApproveChange,
            prompt: "p".into(),
            default: "decline".into(),
            ..Question::default()
        });
        assert!(s.pending.is_some());
        s.answered();
        assert!(s.pending.is_none());
    }
}
