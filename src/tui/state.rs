//! The TUI's state: the session's [`View`] (the one reducer over journal records)
//! plus a small UI-only part (selection, scrolling, overlays). Pure: nothing here
//! touches a terminal, a clock or a file, so every transition is unit-testable.

use ratatui_textarea::TextArea;

use crate::plan::{Plan, Problem};
use crate::session::event::NOTE_MAX_BYTES;
use crate::session::journal::Record;
use crate::session::operator::{Question, QuestionKind};
use crate::session::view::View;
pub use crate::session::view::{
    AnswerRow, ApprovalRow, Badge, ChecklistRow, RunRow, Stage as Step, ToolRow,
};
use crate::tui::keymap::{Action, Keymap};

/// What a key did to the note being written ([`AppState::note_key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Noted {
    /// It typed, or Enter was refused with a notice: the editor stays open.
    Typing,
    /// This text goes out as the note (`ClientMsg::Note`); the editor closed.
    Send(String),
    /// Esc: the editor closed, nothing goes out.
    Cancelled,
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
    /// The highlighted row of the Toolbox or Checklist table: its cells, cut to fit
    /// the table, are shown whole below it.
    pub table_row: usize,
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
    /// The log the Run pane tails, as picked; `None`: the default
    /// ([`crate::tui::logs::shown`]).
    pub log_pick: Option<crate::tui::logs::LogPick>,
    /// The log picker, while it is open.
    pub logs: Option<crate::tui::logs::LogPicker>,
    /// The query is being typed (Enter keeps it, Esc drops it).
    pub searching: bool,
    /// The source line of the match `n` / `N` last moved to (Report, Finding).
    pub match_line: Option<usize>,
    /// The screen follows the session's stage (and a FAIL's classification) until
    /// the operator moves; the follow key turns it back on.
    pub follow_session: bool,
    /// The highlighted row of the pending question's choice list (none while its
    /// default is no choice and the arrows were not used: Enter sends the default).
    pub choice: Option<usize>,
    /// The pending question has just appeared: the keys that would answer it are
    /// dropped until the app's grace timer ends this (`app::GRACE`), so what was
    /// typed for the screen beneath never answers it.
    pub settling: bool,
    /// The first line shown of the open help or evidence overlay.
    pub overlay_scroll: u16,
    /// How far that overlay can scroll, as it was last drawn. The renderer writes it
    /// (like a ratatui `ListState`), so `G` and the clamp need no guess at wrapping.
    pub overlay_max: std::cell::Cell<u16>,
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
    /// Where the session's report was written, once it ended (it may be elsewhere
    /// than `findings/report.md`: `run --report PATH`).
    pub report_path: Option<std::path::PathBuf>,
    /// Operators attached to the session now (the server says), and who this is.
    pub participants: Vec<crate::session::event::Participant>,
    pub me: Option<crate::session::event::Who>,
    /// One line of news for this operator: who answered, why an answer was refused.
    pub notice: Option<String>,
    /// The answer being typed to the pending question.
    pub editor: TextArea<'static>,
    /// The note being written, while its editor is open ([`AppState::note_key`]).
    pub note: Option<TextArea<'static>>,
    pub keymap: Keymap,
    pub ui: Ui,
    /// The selected row's live chart, read off the drawing path
    /// ([`crate::tui::view::refresh_chart`]).
    pub chart: Option<crate::tui::view::LiveChart>,
    /// The wall clock the status line counts from, set by the caller before each
    /// draw (kept out of the drawing so a frame is a function of the state).
    pub now: Option<chrono::DateTime<chrono::Utc>>,
    /// A recording (`faultline replay`): `now` is the moment replayed, logs are cut
    /// at it, and the replay's keys are listed in the help.
    pub replaying: bool,
    /// A replay's session directory and where its journal says it was: every path
    /// the journal names is read under the directory replayed, or refused
    /// ([`crate::tui::files::Rebase`]). `None` live: paths are read as journaled.
    pub rebase: Option<crate::tui::files::Rebase>,
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
            report_path: None,
            participants: Vec::new(),
            me: None,
            notice: None,
            editor: TextArea::default(),
            note: None,
            keymap: Keymap::default(),
            ui: Ui {
                step: Step::Plan,
                selected: 0,
                table_row: 0,
                focus: Focus::List,
                follow: true,
                scroll: 0,
                help: false,
                reasons: false,
                evidence: false,
                diff: false,
                search: None,
                log_pick: None,
                logs: None,
                searching: false,
                match_line: None,
                follow_session: true,
                choice: None,
                settling: false,
                overlay_scroll: 0,
                overlay_max: std::cell::Cell::new(0),
                quit: false,
            },
            now: None,
            chart: None,
            replaying: false,
            rebase: None,
        }
    }

    /// Shows `question` until [`AppState::answered`], with an empty answer editor and
    /// its default choice highlighted. A FAIL's classification is asked on the Finding
    /// screen, beside the failure, while the screen follows the session; someone
    /// reading elsewhere gets it as an overlay instead. It takes keys at once: the
    /// app sets [`Ui::settling`] for a question the session asks.
    pub fn ask(&mut self, question: Question) {
        if self.ui.follow_session
            && matches!(
                question.kind,
                QuestionKind::ClassifyFailure | QuestionKind::Describe
            )
        {
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
        self.ui.choice = question
            .choices
            .iter()
            .position(|c| c.value == question.default);
        self.ui.settling = false;
        self.pending = Some(question);
    }

    /// This operator may answer `q`: anyone the UI's own quit dialog, a viewer
    /// nothing the session asks (the server would refuse it).
    pub fn may_answer(&self, q: &Question) -> bool {
        q.kind == QuestionKind::Quit || !self.watching()
    }

    /// This operator attached as a viewer: they see everything and answer nothing.
    pub fn watching(&self) -> bool {
        self.me
            .as_ref()
            .is_some_and(|m| m.role == crate::session::event::Role::Viewer)
    }

    /// This operator may leave notes: attached to a session as its owner or an
    /// approver (a viewer may not; a replay is attached to nothing).
    pub fn may_note(&self) -> bool {
        self.me
            .as_ref()
            .is_some_and(|m| m.role != crate::session::event::Role::Viewer)
    }

    /// The note key: the note editor opens for an operator who may leave notes;
    /// anyone else is told why not.
    fn open_note(&mut self) {
        if self.may_note() {
            self.note = Some(TextArea::default());
        } else if self.watching() {
            self.notice = Some("viewers do not leave notes".into());
        } else {
            self.notice = Some("notes are left on a session one is attached to".into());
        }
    }

    /// Feeds a key to the note being written; `None` when no note is open (the key
    /// is not taken). Enter sends it (a blank note, or one over
    /// [`NOTE_MAX_BYTES`] bytes, is not sent: the editor stays open and the notice
    /// says why); Alt-Enter or Ctrl-J starts a new line; Esc drops it.
    pub fn note_key(&mut self, key: crossterm::event::KeyEvent) -> Option<Noted> {
        use crossterm::event::{KeyCode, KeyModifiers};
        let editor = self.note.as_mut()?;
        let newline = match key.code {
            KeyCode::Enter => !key.modifiers.is_empty(),
            KeyCode::Char('j') => key.modifiers.contains(KeyModifiers::CONTROL),
            _ => false,
        };
        if newline {
            editor.insert_newline();
            return Some(Noted::Typing);
        }
        match key.code {
            KeyCode::Esc => {
                self.note = None;
                self.notice = Some("note dropped: nothing was sent".into());
                Some(Noted::Cancelled)
            }
            KeyCode::Enter => {
                let text = editor.lines().join("\n");
                if text.trim().is_empty() {
                    self.notice = Some("an empty note is not sent".into());
                    return Some(Noted::Typing);
                }
                if text.len() > NOTE_MAX_BYTES {
                    self.notice = Some(format!(
                        "not sent: the note has {} bytes, at most {NOTE_MAX_BYTES} go in one",
                        text.len()
                    ));
                    return Some(Noted::Typing);
                }
                self.note = None;
                self.notice = Some("note sent".into());
                Some(Noted::Send(text))
            }
            _ => {
                editor.input(key);
                Some(Noted::Typing)
            }
        }
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
    /// stage until the operator moves (see [`Ui::follow_session`]).
    pub fn apply(&mut self, record: &Record) {
        let before = self.view.reached;
        self.view.apply(record);
        // Following the session's stage (issue 17); the rest of apply() is the view's.
        if self.view.reached > before && self.ui.follow_session {
            self.ui.step = self.view.reached;
            self.ui.scroll = 0;
        }
        // The Run screen shows the row the engine works on, on the same terms.
        if self.ui.follow_session
            && let Some(active) = self.view.active
            && active != self.ui.selected
        {
            self.ui.selected = active;
            self.ui.log_pick = None;
            self.ui.logs = None;
        }
    }

    /// Feeds a key to the search query being typed; `true` when it took the key.
    /// Enter keeps the query (and moves to its first match), Esc drops it.
    /// The open log picker takes keys first ([`AppState::log_picker_key`]).
    pub fn search_key(&mut self, key: crossterm::event::KeyEvent) -> bool {
        use crossterm::event::{KeyCode, KeyModifiers};
        if self.ui.logs.is_some() {
            return self.log_picker_key(key);
        }
        if !self.ui.searching {
            return false;
        }
        let Some(query) = self.ui.search.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => query.push(c),
            KeyCode::Backspace => {
                query.pop();
            }
            KeyCode::Enter => {
                self.ui.searching = false;
                self.ui.match_line = None;
                self.find(true);
            }
            KeyCode::Esc => {
                self.ui.searching = false;
                self.ui.search = None;
            }
            _ => return false,
        }
        true
    }

    /// Where report.html is (or will be written): beside the report the session
    /// ended with, with its stem, else `<session>/findings/report.html`; `None` for a
    /// report itself named `*.html`, which gets none. (The documents' rule,
    /// `report::html::html_path`, restated: the UI does not import that layer.)
    pub fn html_report(&self) -> Option<String> {
        if let Some(report) = &self.report_path {
            let html = report.with_extension("html");
            return (&html != report).then(|| html.display().to_string());
        }
        let session = self
            .session_dir_shown()
            .map_or_else(|| "<session>".to_string(), |d| d.display().to_string());
        Some(format!("{session}/findings/report.html"))
    }

    /// The session directory shown: a replay's own (wherever the session was when
    /// it ran), else the one the journal names.
    pub fn session_dir_shown(&self) -> Option<&std::path::Path> {
        match &self.rebase {
            Some(rebase) => Some(&rebase.shown),
            None => self.view.session_dir.as_deref(),
        }
    }

    /// Where a path the journal names is read: as journaled, or in a replay under
    /// the directory replayed; `Err` says why it is not read.
    pub fn place(&self, journaled: &std::path::Path) -> Result<std::path::PathBuf, String> {
        match &self.rebase {
            Some(rebase) => rebase.place(journaled),
            None => Ok(journaled.to_path_buf()),
        }
    }

    /// The lines `/` searches on the current screen (Report: report.md; Finding: the
    /// findings as drawn); the Run pane highlights its log itself.
    pub fn searchable(&self) -> Vec<String> {
        match self.ui.step {
            Step::Report => self
                .report_text
                .as_deref()
                .map(|t| t.lines().map(crate::sanitize::line).collect())
                .unwrap_or_default(),
            Step::Finding => crate::tui::view::finding_text(self),
            _ => Vec::new(),
        }
    }

    /// Moves to the next (or previous) line holding the query, wrapping around, and
    /// scrolls so it shows near the top.
    fn find(&mut self, forward: bool) {
        let Some(query) = self.ui.search.clone().filter(|q| !q.is_empty()) else {
            return;
        };
        let lines = self.searchable();
        let hits: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.contains(&query))
            .map(|(i, _)| i)
            .collect();
        let (Some(first), Some(last)) = (hits.first(), hits.last()) else {
            return;
        };
        let at = self.ui.match_line;
        let next = if forward {
            let from = at.map_or(usize::from(self.ui.scroll), |l| l + 1);
            hits.iter().find(|h| **h >= from).unwrap_or(first)
        } else {
            let before = at.unwrap_or(usize::from(self.ui.scroll));
            hits.iter().rev().find(|h| **h < before).unwrap_or(last)
        };
        self.ui.match_line = Some(*next);
        self.ui.scroll = u16::try_from(next.saturating_sub(MATCH_CONTEXT)).unwrap_or(u16::MAX);
        self.ui.focus = Focus::Pane;
    }

    /// The selected run row, if the plan has any.
    pub fn selected_run(&self) -> Option<&RunRow> {
        self.view.runs.get(self.ui.selected)
    }

    /// Applies a UI action (never touches the journal-derived part).
    pub fn handle(&mut self, action: Action) {
        if (self.ui.help || self.ui.evidence) && self.ui.scroll_overlay(action) {
            return;
        }
        if self.ui.logs.is_some() && self.log_picker_action(action) {
            return;
        }
        if action.navigates() {
            self.ui.follow_session = false;
        }
        match action {
            Action::NextMatch => return self.find(true),
            Action::PrevMatch => return self.find(false),
            Action::ToggleFollow => return self.toggle_follow(),
            Action::PickLog => return self.toggle_log_picker(),
            Action::Note => return self.open_note(),
            _ => {}
        }
        let last = self.view.runs.len().saturating_sub(1);
        // The Toolbox and Checklist tables' rows, which the arrows pick there.
        let table = match self.ui.step {
            Step::Toolbox => Some(self.view.toolbox.len()),
            Step::Checklist => Some(self.view.checklist.len()),
            _ => None,
        };
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
            Action::Up | Action::Down | Action::Top | Action::Bottom if table.is_some() => {
                let last = table.unwrap_or(0).saturating_sub(1);
                ui.table_row = match action {
                    Action::Up => ui.table_row.min(last).saturating_sub(1),
                    Action::Down => (ui.table_row + 1).min(last),
                    Action::Top => 0,
                    _ => last,
                };
            }
            Action::Up | Action::Down | Action::Top | Action::Bottom if !scrolls => {
                ui.selected = match action {
                    Action::Up => ui.selected.saturating_sub(1),
                    Action::Down => (ui.selected + 1).min(last),
                    Action::Top => 0,
                    _ => last,
                };
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
            Action::Jump(n) => {
                ui.step = Step::ALL[usize::from(n).min(Step::ALL.len() - 1)];
                ui.scroll = 0;
            }
            Action::Search => {
                ui.search = Some(String::new());
                ui.searching = true;
                ui.match_line = None;
            }
            Action::Help => {
                ui.help = !ui.help;
                ui.overlay_scroll = 0;
            }
            Action::Evidence => {
                ui.evidence = !ui.evidence;
                ui.overlay_scroll = 0;
            }
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
                ui.searching = false;
                ui.match_line = None;
            }
            Action::Quit => ui.quit = true,
            // A replay's moves are the player's (`tui::replay::key`).
            Action::ReplayNext
            | Action::ReplayPrev
            | Action::ReplayNextFault
            | Action::ReplayPrevFault
            | Action::ReplayNextScenario
            | Action::ReplayPrevScenario
            | Action::ReplayPlay
            | Action::ReplayFaster
            | Action::ReplaySlower => {}
            Action::ToggleFollow
            | Action::PickLog
            | Action::Note
            | Action::NextMatch
            | Action::PrevMatch => {}
        }
    }

    /// `f`: back to following the session: the running row on the Run screen (the
    /// session's stage before the run), its log's end; pressed while following
    /// there, it pauses.
    fn toggle_follow(&mut self) {
        let step = self.view.reached.min(Step::Run);
        let ui = &mut self.ui;
        if ui.follow_session && ui.follow && ui.step == step {
            ui.follow_session = false;
            ui.follow = false;
            return;
        }
        ui.follow_session = true;
        ui.follow = true;
        ui.step = step;
        ui.scroll = 0;
        // A log picked in an older iteration gives way to the running one's.
        if ui.log_pick.as_ref().is_some_and(|p| p.iteration.is_some()) {
            ui.log_pick = None;
        }
        if let Some(active) = self.view.active
            && active != ui.selected
        {
            ui.selected = active;
            ui.log_pick = None;
            ui.logs = None;
        }
    }
}

/// How far PgUp / PgDn move an overlay.
const OVERLAY_PAGE: u16 = 10;

/// Lines shown above a match `n` / `N` moved to.
const MATCH_CONTEXT: usize = 2;

impl Action {
    /// The operator moved on their own: the screen stops following the session.
    fn navigates(self) -> bool {
        matches!(
            self,
            Action::NextStep
                | Action::PrevStep
                | Action::Jump(_)
                | Action::Up
                | Action::Down
                | Action::Top
                | Action::Bottom
                | Action::ScrollUp
                | Action::ScrollDown
                | Action::NextMatch
                | Action::PrevMatch
        )
    }
}

impl Ui {
    /// Moves the open help / evidence overlay's text rather than what is beneath it;
    /// `true` when `action` was such a move.
    fn scroll_overlay(&mut self, action: Action) -> bool {
        let max = self.overlay_max.get();
        let to = match action {
            Action::Up => self.overlay_scroll.saturating_sub(1),
            Action::Down => self.overlay_scroll.saturating_add(1),
            Action::ScrollUp => self.overlay_scroll.saturating_sub(OVERLAY_PAGE),
            Action::ScrollDown => self.overlay_scroll.saturating_add(OVERLAY_PAGE),
            Action::Top => 0,
            Action::Bottom => max,
            _ => return false,
        };
        self.overlay_scroll = to.min(max);
        true
    }

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

    fn demo() -> Vec<Record> {
        include_str!("../../tests/fixtures/journal/demo.jsonl")
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    #[test]
    fn the_screen_follows_the_session_until_the_operator_moves() {
        let records = demo();
        let half = records.len() / 2;
        let mut s = AppState::new(plan());
        for r in &records[..half] {
            s.apply(r);
        }
        assert!(s.ui.follow_session);
        assert_eq!(s.ui.step, s.view.reached, "following");
        let reading = s.ui.step.prev();
        s.handle(Action::PrevStep);
        assert!(!s.ui.follow_session, "moving stops following");
        for r in &records[half..] {
            s.apply(r);
        }
        assert_eq!(s.view.reached, Step::Report);
        assert_eq!(s.ui.step, reading, "the session did not move the screen");
        s.handle(Action::ToggleFollow);
        assert!(s.ui.follow_session && s.ui.follow);
        assert_eq!(s.ui.step, Step::Run, "following again shows the run");
        s.handle(Action::ToggleFollow);
        assert!(
            !s.ui.follow_session && !s.ui.follow,
            "pressed again, it pauses"
        );
    }

    #[test]
    fn f_follows_the_running_row_on_the_run_screen_not_the_finding() {
        let records = demo();
        let d4 = records
            .iter()
            .position(|r| {
                r.scope.scenario.as_deref() == Some("D4")
                    && matches!(r.event, Event::IterationStarted(_))
            })
            .expect("D4 ran");
        let mut s = AppState::new(plan());
        for r in &records[..=d4] {
            s.apply(r);
        }
        assert_eq!(s.view.reached, Step::Finding, "D3 failed before");
        s.handle(Action::Jump(0));
        s.ui.selected = 0;
        assert!(!s.ui.follow_session);
        s.handle(Action::ToggleFollow);
        let running = s.view.active.expect("a running row");
        assert_eq!(s.view.runs[running].id, "D4");
        assert_eq!((s.ui.step, s.ui.selected), (Step::Run, running));
        assert!(s.ui.follow_session && s.ui.follow);
        for r in &records[d4 + 1..d4 + 6] {
            s.apply(r);
        }
        assert_eq!((s.ui.step, s.ui.selected), (Step::Run, running), "it stays");
        s.handle(Action::ToggleFollow);
        assert!(!s.ui.follow_session, "pressed again there, it pauses");
    }

    #[test]
    fn selecting_or_scrolling_stops_following_too() {
        for action in [
            Action::Down,
            Action::ScrollDown,
            Action::Jump(0),
            Action::Top,
        ] {
            let mut s = AppState::new(plan());
            s.handle(action);
            assert!(!s.ui.follow_session, "{action:?}");
        }
        let mut s = AppState::new(plan());
        for action in [Action::Help, Action::Help, Action::NextPane, Action::Search] {
            s.handle(action);
        }
        assert!(s.ui.follow_session, "looking around is not moving");
    }

    #[test]
    fn a_classification_moves_to_finding_only_while_following() {
        let classify = || Question {
            id: "D3.blame".into(),
            kind: QuestionKind::ClassifyFailure,
            ..Question::default()
        };
        let mut s = AppState::new(plan());
        s.ask(classify());
        assert_eq!(s.ui.step, Step::Finding);
        let mut s = AppState::new(plan());
        s.handle(Action::Jump(4));
        s.ask(classify());
        assert_eq!(s.ui.step, Step::Run, "someone reading the run keeps it");
        assert!(s.pending.is_some());
    }

    #[test]
    fn number_keys_jump_to_their_step() {
        let mut s = AppState::new(plan());
        for (i, step) in Step::ALL.iter().enumerate() {
            s.ui.scroll = 3;
            s.handle(Action::Jump(u8::try_from(i).expect("seven steps")));
            assert_eq!(s.ui.step, *step);
            assert_eq!(s.ui.scroll, 0);
        }
    }

    #[test]
    fn the_html_report_is_named_beside_the_report_or_in_the_session() {
        let mut s = AppState::new(plan());
        assert_eq!(
            s.html_report().as_deref(),
            Some("<session>/findings/report.html")
        );
        s.view.session_dir = Some("/s/demo/1".into());
        assert_eq!(
            s.html_report().as_deref(),
            Some("/s/demo/1/findings/report.html")
        );
        s.report_path = Some("/elsewhere/kv-report.md".into());
        assert_eq!(
            s.html_report().as_deref(),
            Some("/elsewhere/kv-report.html")
        );
        s.report_path = Some("/elsewhere/report.html".into());
        assert_eq!(s.html_report(), None, "a report named .html gets none");
    }

    #[test]
    fn an_open_overlay_scrolls_its_own_text_within_its_length() {
        let mut s = AppState::new(plan());
        s.ui.step = Step::Run;
        s.handle(Action::Evidence);
        s.ui.overlay_max.set(12);
        s.handle(Action::Down);
        s.handle(Action::Down);
        assert_eq!((s.ui.overlay_scroll, s.ui.selected), (2, 0));
        s.handle(Action::ScrollDown);
        assert_eq!(s.ui.overlay_scroll, 12, "clamped to the end");
        s.handle(Action::Top);
        assert_eq!(s.ui.overlay_scroll, 0);
        s.handle(Action::Bottom);
        s.handle(Action::Up);
        assert_eq!(s.ui.overlay_scroll, 11);
        assert!(s.ui.follow_session, "scrolling an overlay is not moving");
        s.handle(Action::Close);
        s.handle(Action::Down);
        assert_eq!(s.ui.selected, 1, "closed, the list moves again");
    }

    fn key(code: crossterm::event::KeyCode) -> crossterm::event::KeyEvent {
        crossterm::event::KeyEvent::new(code, crossterm::event::KeyModifiers::NONE)
    }

    #[test]
    fn a_report_search_jumps_between_matches_both_ways_and_wraps() {
        use crossterm::event::KeyCode;
        let mut s = AppState::new(plan());
        let mut text: Vec<String> = (0..40).map(|i| format!("line {i}")).collect();
        for at in [5, 20, 33] {
            text[at] = format!("D3 lost a write ({at})");
        }
        s.report_text = Some(text.join("\n"));
        s.ui.step = Step::Report;
        s.handle(Action::Search);
        assert!(s.search_key(key(KeyCode::Char('l'))));
        for c in "ostx".chars() {
            s.search_key(key(KeyCode::Char(c)));
        }
        assert!(s.search_key(key(KeyCode::Backspace)));
        assert_eq!(s.ui.search.as_deref(), Some("lost"));
        assert!(s.search_key(key(KeyCode::Enter)));
        assert!(!s.ui.searching);
        assert_eq!(s.ui.match_line, Some(5));
        assert_eq!(s.ui.scroll, 3, "shown with two lines above");
        assert!(
            !s.search_key(key(KeyCode::Char('n'))),
            "kept: n is a key again"
        );
        s.handle(Action::NextMatch);
        assert_eq!(s.ui.match_line, Some(20));
        s.handle(Action::NextMatch);
        s.handle(Action::NextMatch);
        assert_eq!(s.ui.match_line, Some(5), "wraps to the first");
        s.handle(Action::PrevMatch);
        assert_eq!(s.ui.match_line, Some(33), "and back to the last");
        assert_eq!(s.ui.scroll, 31);
        s.handle(Action::Close);
        assert_eq!((s.ui.search.as_ref(), s.ui.match_line), (None, None));
    }

    #[test]
    fn esc_while_typing_a_search_drops_it() {
        let mut s = AppState::new(plan());
        s.handle(Action::Search);
        s.search_key(key(crossterm::event::KeyCode::Char('x')));
        assert!(s.search_key(key(crossterm::event::KeyCode::Esc)));
        assert!(s.ui.search.is_none() && !s.ui.searching);
    }

    fn attached(role: crate::session::event::Role) -> AppState {
        let mut s = AppState::new(plan());
        s.me = Some(crate::session::event::Who {
            user: "alice".into(),
            role,
            ..Default::default()
        });
        s
    }

    #[test]
    fn the_note_key_opens_the_editor_for_an_approver_not_a_viewer() {
        use crate::session::event::Role;
        for role in [Role::Approver, Role::Owner] {
            let mut s = attached(role);
            s.handle(Action::Note);
            assert!(s.note.is_some(), "{role}");
        }
        let mut s = attached(Role::Viewer);
        s.handle(Action::Note);
        assert!(s.note.is_none());
        assert_eq!(s.notice.as_deref(), Some("viewers do not leave notes"));
        // A replay is attached to nothing: nowhere to send a note.
        let mut s = AppState::new(plan());
        s.handle(Action::Note);
        assert!(s.note.is_none() && s.notice.is_some());
    }

    fn with_mods(
        code: crossterm::event::KeyCode,
        m: crossterm::event::KeyModifiers,
    ) -> crossterm::event::KeyEvent {
        crossterm::event::KeyEvent::new(code, m)
    }

    #[test]
    fn enter_sends_the_note_and_alt_enter_or_ctrl_j_start_a_line() {
        use crossterm::event::{KeyCode, KeyModifiers};
        let mut s = attached(crate::session::event::Role::Approver);
        assert_eq!(s.note_key(key(KeyCode::Char('x'))), None, "no note open");
        s.handle(Action::Note);
        for c in "n2 slow".chars() {
            assert_eq!(s.note_key(key(KeyCode::Char(c))), Some(Noted::Typing));
        }
        s.note_key(with_mods(KeyCode::Enter, KeyModifiers::ALT));
        s.note_key(key(KeyCode::Char('a')));
        s.note_key(with_mods(KeyCode::Char('j'), KeyModifiers::CONTROL));
        s.note_key(key(KeyCode::Char('b')));
        assert_eq!(
            s.note_key(key(KeyCode::Enter)),
            Some(Noted::Send("n2 slow\na\nb".into()))
        );
        assert!(s.note.is_none(), "sent: the editor closed");
        assert_eq!(
            s.note_key(key(KeyCode::Enter)),
            None,
            "Enter is the screen's again"
        );
    }

    #[test]
    fn a_blank_or_too_long_note_is_not_sent_and_esc_drops_it() {
        use crossterm::event::KeyCode;
        let mut s = attached(crate::session::event::Role::Owner);
        s.handle(Action::Note);
        assert_eq!(s.note_key(key(KeyCode::Enter)), Some(Noted::Typing));
        assert!(s.note.is_some(), "blank: still open");
        assert_eq!(s.notice.as_deref(), Some("an empty note is not sent"));
        s.note = Some(TextArea::new(vec!["é".repeat(NOTE_MAX_BYTES / 2 + 1)]));
        assert_eq!(s.note_key(key(KeyCode::Enter)), Some(Noted::Typing));
        let notice = s.notice.clone().unwrap_or_default();
        assert!(
            notice.starts_with("not sent: the note has 4098 bytes, at most 4096"),
            "{notice}"
        );
        assert!(s.note.is_some(), "too long: still open to shorten");
        assert_eq!(s.note_key(key(KeyCode::Esc)), Some(Noted::Cancelled));
        assert!(s.note.is_none());
    }

    #[test]
    fn a_finding_search_finds_the_reason_chain() {
        let mut s = AppState::new(plan());
        for r in &demo() {
            s.apply(r);
        }
        s.ui.step = Step::Finding;
        s.ui.search = Some("reproduce".into());
        s.handle(Action::NextMatch);
        let at = s.ui.match_line.expect("a match");
        assert!(s.searchable()[at].contains("reproduce"));
    }
}
