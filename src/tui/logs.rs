//! The Run pane's log picker: a run row's logs by iteration, command and stream
//! (from the session's [`crate::session::view::View`], never from file names), the
//! log the pane shows when none is picked, and the picker's filter and highlight.
//! Pure: nothing here reads a file or a terminal.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::session::label::{CommandRole, IterationLabel};
use crate::session::view::{CommandLog, Live, RunRow};
use crate::tui::keymap::Action;
use crate::tui::state::{AppState, Step};

/// Which of a command's two logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stderr,
    Stdout,
}

impl Stream {
    pub fn as_str(self) -> &'static str {
        match self {
            Stream::Stderr => "stderr",
            Stream::Stdout => "stdout",
        }
    }
}

/// A log the operator picked: a command's stream in one iteration of the row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogPick {
    /// Index into the row's [`iterations`]; `None` for its newest, so the pick
    /// follows the run to its next seed.
    pub iteration: Option<usize>,
    pub name: String,
    pub stream: Stream,
}

/// One log of one iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// The command's name as journaled (sanitized by the view).
    pub name: String,
    pub stream: Stream,
    pub path: PathBuf,
    /// The held fault is aimed at this service.
    pub target: bool,
    /// When its command started (RFC 3339): the log was created then.
    pub started: String,
}

/// The log the pane shows and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// Index into the row's [`iterations`].
    pub iteration: usize,
    pub label: Option<IterationLabel>,
    pub entry: LogEntry,
}

/// The open picker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogPicker {
    /// Index into the row's [`iterations`].
    pub iteration: usize,
    /// What was typed; rows holding each of its words (case-insensitive) stay
    /// listed.
    pub filter: String,
    /// Index into [`AppState::picker_rows`].
    pub highlight: usize,
    /// The picker lists the row's iterations (Tab) instead of one iteration's logs.
    pub seeds: bool,
}

/// One row of the open picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerRow {
    Log(LogEntry),
    /// An iteration: its index in the row's [`iterations`], its label and how many
    /// commands it started.
    Iteration(usize, Option<IterationLabel>, usize),
}

impl PickerRow {
    /// The text the filter matches.
    fn text(&self) -> String {
        match self {
            PickerRow::Log(e) => format!("{} {}", e.name, e.stream.as_str()),
            PickerRow::Iteration(_, label, _) => {
                let short = label.map(|l| l.to_string()).unwrap_or_default();
                format!("{} {short}", iteration_words(*label))
            }
        }
    }
}

/// The iterations that started commands in `row`, in the order they ran: seeds,
/// re-runs and reduction steps.
pub fn iterations(row: &RunRow) -> Vec<Option<IterationLabel>> {
    let mut out = Vec::new();
    for c in &row.commands {
        if !out.contains(&c.label) {
            out.push(c.label);
        }
    }
    out
}

/// An iteration in words (`seed 1`, `re-run of seed 1`, `reduction run 2 (seed 1)`).
pub fn iteration_words(label: Option<IterationLabel>) -> String {
    label.map_or_else(|| "before any iteration".to_string(), |l| l.words())
}

/// The service the latest fault still held in `live` is aimed at.
pub fn fault_target(live: Option<&Live>) -> Option<&str> {
    live?
        .faults
        .iter()
        .rev()
        .filter(|f| !f.healed)
        .find_map(|f| f.target.as_deref())
}

/// The commands of iteration `at`, each name once (its latest start): `target`'s
/// first, then in the order started.
fn commands<'r>(row: &'r RunRow, at: usize, target: Option<&str>) -> Vec<&'r CommandLog> {
    let Some(label) = iterations(row).get(at).copied() else {
        return Vec::new();
    };
    let mut out: Vec<&'r CommandLog> = Vec::new();
    for c in row.commands.iter().filter(|c| c.label == label) {
        match out.iter_mut().find(|o| o.name == c.name) {
            Some(o) => *o = c,
            None => out.push(c),
        }
    }
    out.sort_by_key(|c| Some(c.name.as_str()) != target);
    out
}

/// The logs of iteration `at` of `row`: the fault's target first, then each
/// command in the order started, its stderr before its stdout.
pub fn entries(row: &RunRow, at: usize, target: Option<&str>) -> Vec<LogEntry> {
    let mut out = Vec::new();
    for c in commands(row, at, target) {
        let target = Some(c.name.as_str()) == target;
        out.push(LogEntry {
            name: c.name.clone(),
            stream: Stream::Stderr,
            path: c.stderr.clone(),
            target,
            started: c.started.clone(),
        });
        if let Some(path) = &c.stdout {
            out.push(LogEntry {
                name: c.name.clone(),
                stream: Stream::Stdout,
                path: path.clone(),
                target,
                started: c.started.clone(),
            });
        }
    }
    out
}

/// The log the pane shows for `row`: the pick, while the iteration has it; else, in
/// the newest iteration, the stderr log of the service the held fault targets, else
/// of the first service it started (the run spec's first), else of its newest
/// command.
pub fn shown(row: &RunRow, live: Option<&Live>, pick: Option<&LogPick>) -> Option<Shown> {
    let all = iterations(row);
    let newest = all.len().checked_sub(1)?;
    let target = fault_target(live);
    let at = |iteration: usize, entry: LogEntry| Shown {
        iteration,
        label: all.get(iteration).copied().flatten(),
        entry,
    };
    if let Some(pick) = pick {
        let iteration = pick.iteration.unwrap_or(newest);
        if let Some(entry) = entries(row, iteration, target)
            .into_iter()
            .find(|e| e.name == pick.name && e.stream == pick.stream)
        {
            return Some(at(iteration, entry));
        }
    }
    let stderr: Vec<LogEntry> = entries(row, newest, target)
        .into_iter()
        .filter(|e| e.stream == Stream::Stderr)
        .collect();
    let entry = stderr
        .iter()
        .find(|e| e.target)
        .or_else(|| stderr.iter().find(|e| CommandRole::of(&e.name).is_none()))
        .or(stderr.last())?;
    Some(at(newest, entry.clone()))
}

impl AppState {
    /// The log the Run pane shows for the selected row.
    pub fn shown_log(&self) -> Option<Shown> {
        shown(
            self.selected_run()?,
            self.view.live.get(&self.ui.selected),
            self.ui.log_pick.as_ref(),
        )
    }

    /// The open picker's rows, as its filter leaves them.
    pub fn picker_rows(&self) -> Vec<PickerRow> {
        let (Some(picker), Some(row)) = (&self.ui.logs, self.selected_run()) else {
            return Vec::new();
        };
        let rows: Vec<PickerRow> = if picker.seeds {
            iterations(row)
                .into_iter()
                .enumerate()
                .map(|(i, label)| {
                    let count = row.commands.iter().filter(|c| c.label == label).count();
                    PickerRow::Iteration(i, label, count)
                })
                .collect()
        } else {
            let target = fault_target(self.view.live.get(&self.ui.selected));
            entries(row, picker.iteration, target)
                .into_iter()
                .map(PickerRow::Log)
                .collect()
        };
        let filter = picker.filter.to_lowercase();
        rows.into_iter()
            .filter(|r| {
                let text = r.text().to_lowercase();
                filter.split_whitespace().all(|word| text.contains(word))
            })
            .collect()
    }

    /// Opens the log picker on the Run screen at the iteration shown, the shown log
    /// highlighted; pressed again, it closes.
    pub(crate) fn toggle_log_picker(&mut self) {
        if self.ui.logs.take().is_some() || self.ui.step != Step::Run {
            return;
        }
        let Some(shown) = self.shown_log() else {
            // Nothing started yet: an empty picker says so.
            self.ui.logs = Some(LogPicker::default());
            return;
        };
        self.ui.logs = Some(LogPicker {
            iteration: shown.iteration,
            ..LogPicker::default()
        });
        self.highlight_where(|r| matches!(r, PickerRow::Log(e) if *e == shown.entry));
    }

    /// Feeds a key to the open log picker; `true` when it took it. Typing filters,
    /// Up / Down move, Left / Right show the previous / next iteration's logs, Tab
    /// switches to the list of iterations and back, Enter picks, Esc closes. Keys
    /// with Ctrl or Alt and any other key go on to the keymap.
    pub fn log_picker_key(&mut self, key: KeyEvent) -> bool {
        let Some(picker) = self.ui.logs.as_mut() else {
            return false;
        };
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return false;
        }
        match key.code {
            KeyCode::Char(c) => {
                picker.filter.push(c);
                picker.highlight = 0;
            }
            KeyCode::Backspace => {
                picker.filter.pop();
                picker.highlight = 0;
            }
            KeyCode::Up => return self.log_picker_action(Action::Up),
            KeyCode::Down => return self.log_picker_action(Action::Down),
            KeyCode::Left => self.step_iteration(false),
            KeyCode::Right => self.step_iteration(true),
            KeyCode::Tab | KeyCode::BackTab => {
                picker.seeds = !picker.seeds;
                picker.filter.clear();
                let (seeds, at) = (picker.seeds, picker.iteration);
                if seeds {
                    self.highlight_where(|r| matches!(r, PickerRow::Iteration(i, ..) if *i == at));
                } else {
                    picker.highlight = 0;
                }
            }
            KeyCode::Enter => self.pick_highlighted(),
            KeyCode::Esc => self.ui.logs = None,
            _ => return false,
        }
        true
    }

    /// An action while the picker is open (arrows, the mouse wheel, paging, Esc);
    /// `true` when it was the picker's.
    pub(crate) fn log_picker_action(&mut self, action: Action) -> bool {
        let last = self.picker_rows().len().saturating_sub(1);
        let Some(picker) = self.ui.logs.as_mut() else {
            return false;
        };
        picker.highlight = match action {
            Action::Up => picker.highlight.saturating_sub(1),
            Action::Down => picker.highlight + 1,
            Action::ScrollUp => picker.highlight.saturating_sub(PAGE),
            Action::ScrollDown => picker.highlight + PAGE,
            Action::Top => 0,
            Action::Bottom => last,
            Action::Close | Action::PickLog => {
                self.ui.logs = None;
                return true;
            }
            _ => return false,
        }
        .min(last);
        true
    }

    /// Left / Right: the previous / next iteration's logs, the same log highlighted
    /// where it has one.
    fn step_iteration(&mut self, forward: bool) {
        let count = self.selected_run().map_or(0, |r| iterations(r).len());
        let highlighted = self.picker_rows().into_iter().nth(self.highlight());
        let Some(picker) = self.ui.logs.as_mut() else {
            return;
        };
        if picker.seeds {
            return;
        }
        picker.iteration = if forward {
            (picker.iteration + 1).min(count.saturating_sub(1))
        } else {
            picker.iteration.saturating_sub(1)
        };
        picker.highlight = 0;
        if let Some(PickerRow::Log(was)) = highlighted {
            self.highlight_where(
                |r| matches!(r, PickerRow::Log(e) if e.name == was.name && e.stream == was.stream),
            );
        }
    }

    fn highlight(&self) -> usize {
        self.ui.logs.as_ref().map_or(0, |p| p.highlight)
    }

    /// Moves the highlight to the first row `matches`, if any.
    fn highlight_where(&mut self, matches: impl Fn(&PickerRow) -> bool) {
        let at = self.picker_rows().iter().position(matches);
        if let (Some(picker), Some(at)) = (self.ui.logs.as_mut(), at) {
            picker.highlight = at;
        }
    }

    /// Enter: an iteration lists its logs; a log is shown in the pane (from its end)
    /// and the picker closes.
    fn pick_highlighted(&mut self) {
        let newest = self
            .selected_run()
            .map_or(0, |r| iterations(r).len().saturating_sub(1));
        let row = self.picker_rows().into_iter().nth(self.highlight());
        let Some(picker) = self.ui.logs.as_mut() else {
            return;
        };
        match row {
            Some(PickerRow::Iteration(i, ..)) => {
                *picker = LogPicker {
                    iteration: i,
                    ..LogPicker::default()
                };
            }
            Some(PickerRow::Log(entry)) => {
                self.ui.log_pick = Some(LogPick {
                    iteration: (picker.iteration != newest).then_some(picker.iteration),
                    name: entry.name,
                    stream: entry.stream,
                });
                self.ui.logs = None;
                self.ui.follow = true;
                self.ui.scroll = 0;
            }
            None => {}
        }
    }
}

/// How far PgUp / PgDn move the picker's highlight.
const PAGE: usize = 10;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::journal::Record;
    use crossterm::event::KeyCode;

    fn plan() -> crate::plan::Plan {
        crate::plan::parse_plan(
            "examples/demo/plan.md",
            include_str!("../../examples/demo/plan.md"),
        )
    }

    fn demo() -> Vec<Record> {
        include_str!("../../tests/fixtures/journal/demo.jsonl")
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The demo session applied up to (and with) record `seq`, on the Run screen.
    fn at(seq: u64) -> AppState {
        let mut s = AppState::new(plan());
        for r in demo().iter().take_while(|r| r.seq <= seq) {
            s.apply(r);
        }
        s.ui.step = Step::Run;
        s
    }

    fn key(s: &mut AppState, code: KeyCode) -> bool {
        s.log_picker_key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn typed(s: &mut AppState, text: &str) {
        for c in text.chars() {
            assert!(key(s, KeyCode::Char(c)));
        }
    }

    fn shown_name(s: &AppState) -> Option<(String, Stream)> {
        s.shown_log().map(|l| (l.entry.name, l.entry.stream))
    }

    fn names(s: &AppState) -> Vec<String> {
        s.picker_rows()
            .into_iter()
            .map(|r| match r {
                PickerRow::Log(e) => format!("{} {}", e.name, e.stream.as_str()),
                PickerRow::Iteration(_, label, _) => iteration_words(label),
            })
            .collect()
    }

    #[test]
    fn the_default_log_is_the_held_faults_target_else_the_first_service() {
        // D2 seed 1: pause-n3 injected (#54), healed at #57.
        let s = at(56);
        assert_eq!(s.view.runs[s.ui.selected].id, "D2");
        assert_eq!(
            s.view.live[&s.ui.selected].faults[0].target.as_deref(),
            Some("n3"),
            "the view knows the fault's target from its pid"
        );
        assert_eq!(shown_name(&s), Some(("n3".into(), Stream::Stderr)));
        let s = at(57);
        assert_eq!(
            shown_name(&s),
            Some(("n2".into(), Stream::Stderr)),
            "healed: the run spec's first service"
        );
        // Before the fault, the first service too; before any command, nothing.
        assert_eq!(shown_name(&at(52)).map(|n| n.0), Some("n2".into()));
        assert_eq!(at(0).shown_log(), None);
    }

    #[test]
    fn the_picker_lists_the_target_first_and_the_filter_narrows_it() {
        let mut s = at(56);
        s.handle(Action::PickLog);
        let listed = names(&s);
        assert_eq!(listed[..2], ["n3 stderr", "n3 stdout"], "{listed:?}");
        assert!(listed.contains(&"workload stderr".to_string()));
        // Each command once for the iteration shown, whatever seeds ran before.
        assert_eq!(listed.len(), 2 * 6, "{listed:?}");
        assert_eq!(
            s.ui.logs.as_ref().map(|p| p.highlight),
            Some(0),
            "the shown log"
        );
        typed(&mut s, "N1");
        assert_eq!(names(&s), ["n1 stderr", "n1 stdout"]);
        typed(&mut s, " out");
        assert_eq!(names(&s), ["n1 stdout"]);
        assert!(key(&mut s, KeyCode::Backspace));
        typed(&mut s, "zzz");
        assert!(names(&s).is_empty());
        assert!(key(&mut s, KeyCode::Enter), "nothing to pick: stays open");
        assert!(s.ui.logs.is_some());
        assert!(key(&mut s, KeyCode::Esc));
        assert!(s.ui.logs.is_none());
        assert!(
            !key(&mut s, KeyCode::Char('x')),
            "closed: keys are the keymap's"
        );
    }

    #[test]
    fn enter_picks_the_highlighted_log_and_the_pick_follows_the_next_seed() {
        let mut s = at(56);
        s.ui.follow = false;
        s.ui.scroll = 5;
        s.handle(Action::PickLog);
        typed(&mut s, "n");
        assert!(key(&mut s, KeyCode::Down));
        assert!(key(&mut s, KeyCode::Down));
        assert!(key(&mut s, KeyCode::Enter));
        assert!(s.ui.logs.is_none(), "Enter closes");
        assert_eq!(shown_name(&s), Some(("n2".into(), Stream::Stderr)));
        assert!(s.ui.follow && s.ui.scroll == 0, "shown from its end");
        // D2's seed 2 starts its commands: the pick is the newest seed's n2.
        let mut s2 = s.clone();
        for r in demo().iter().filter(|r| (57..=75).contains(&r.seq)) {
            s2.apply(r);
        }
        let shown = s2.shown_log().expect("a log");
        assert_eq!(
            shown.label.map(|l| l.to_string()).as_deref(),
            Some("seed-2")
        );
        assert_eq!(shown.entry.name, "n2");
    }

    #[test]
    fn left_right_and_tab_reach_every_seed_rerun_and_reduction_step() {
        let mut s = at(u64::MAX);
        s.ui.selected = s.view.runs.iter().position(|r| r.id == "D3").expect("D3");
        s.handle(Action::PickLog);
        let shown = s.shown_log().expect("a log");
        assert_eq!(
            shown.label.map(|l| l.to_string()).as_deref(),
            Some("seed-1-rerun")
        );
        assert!(key(&mut s, KeyCode::Left));
        assert_eq!(s.ui.logs.as_ref().map(|p| p.iteration), Some(0));
        assert!(key(&mut s, KeyCode::Left), "stays at the first");
        assert!(key(&mut s, KeyCode::Tab));
        assert_eq!(names(&s), ["seed 1", "re-run of seed 1"]);
        typed(&mut s, "re-run");
        assert!(key(&mut s, KeyCode::Enter));
        let picker = s.ui.logs.clone().expect("open");
        assert!(!picker.seeds && picker.iteration == 1, "{picker:?}");
        assert!(key(&mut s, KeyCode::Left));
        assert!(key(&mut s, KeyCode::Enter));
        let shown = s.shown_log().expect("a log");
        assert_eq!(
            shown.label.map(|l| l.to_string()).as_deref(),
            Some("seed-1")
        );
        assert_eq!(
            s.ui.log_pick.as_ref().and_then(|p| p.iteration),
            Some(0),
            "an older iteration stays picked"
        );
    }

    #[test]
    fn the_picker_opens_on_the_run_screen_only_and_ctrl_keys_pass() {
        let mut s = at(56);
        s.ui.step = Step::Finding;
        s.handle(Action::PickLog);
        assert!(s.ui.logs.is_none());
        s.ui.step = Step::Run;
        s.handle(Action::PickLog);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert!(!s.log_picker_key(ctrl_c));
        s.handle(Action::Bottom);
        assert_eq!(s.ui.logs.as_ref().map(|p| p.highlight), Some(11));
        assert!(
            s.ui.follow_session,
            "moving in the picker is not moving away"
        );
        s.handle(Action::Close);
        assert!(s.ui.logs.is_none());
    }
}
