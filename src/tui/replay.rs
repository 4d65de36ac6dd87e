//! `faultline replay SESSION`: a session's journal shown in the TUI as a recording.
//! A position on the journal (how many records are applied) is the whole state: every
//! screen draws the reducer's view of the records up to it, the status line's clock
//! is the last applied record's time, and the live chart and every log shown are cut
//! at that moment (a log on the time its lines carry: `view::logcut`).
//! Stepping goes by record, by fault window (injected, held with its landing seen,
//! healed) and by scenario (its first iteration started, and its verdict); playing
//! applies records at their journaled pace, 1× to 16×. Nothing is written to the
//! session.

use std::path::Path;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyEvent, KeyEventKind};

use super::app::Setup;
use super::files::{self, Rebase};
use super::keymap::Action;
use super::state::AppState;
use crate::exit::Exit;
use crate::session::event::Event;
use crate::session::journal::Record;

/// A view kept every this many records, so stepping back re-folds at most this many.
const CHECKPOINT_EVERY: usize = 256;
/// The longest wait between two records while playing (idle stretches are skipped).
const MAX_GAP: Duration = Duration::from_secs(2);
/// The speeds `+` and `-` go through.
const SPEEDS: [u32; 5] = [1, 2, 4, 8, 16];

/// How far a step goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stride {
    Record,
    Fault,
    Scenario,
}

/// A journal being played back.
pub struct Player {
    records: Vec<Record>,
    /// Records applied.
    at: usize,
    state: AppState,
    /// `(records applied, state)`, every [`CHECKPOINT_EVERY`] records, the empty
    /// state first.
    checkpoints: Vec<(usize, AppState)>,
    pub playing: bool,
    speed: usize,
    /// The selected row's chart as read from its history, before the cut.
    whole: Option<super::view::LiveChart>,
    /// findings/report.md as the session left it, shown once the recording's end is
    /// reached.
    report: Option<String>,
    /// Where a scenario step stops, ascending: just after a scenario's (or arm's)
    /// first `iteration-started` — it shows running — and just after each verdict.
    scenario_marks: Vec<usize>,
}

impl Player {
    /// A player at the start of `records`, drawing `plan`'s screens.
    pub fn new(mut start: AppState, records: Vec<Record>) -> Player {
        start.replaying = true;
        let mut begun = std::collections::HashSet::new();
        let scenario_marks = records
            .iter()
            .enumerate()
            .filter(|(_, r)| match &r.event {
                Event::Verdict(_) => true,
                Event::IterationStarted(_) => {
                    begun.insert((r.scope.scenario.clone(), r.scope.arm.clone()))
                }
                _ => false,
            })
            .map(|(i, _)| i + 1)
            .collect();
        let mut player = Player {
            records,
            report: None,
            whole: None,
            scenario_marks,
            at: 0,
            checkpoints: vec![(0, start.clone())],
            state: start,
            playing: false,
            speed: 0,
        };
        player.settle();
        player
    }

    /// Shows `text` as the session's report once the recording reaches its verdict.
    pub fn with_report(mut self, text: Option<String>) -> Player {
        self.report = text;
        self.settle();
        self
    }

    /// Records applied so far, and in all.
    pub fn position(&self) -> (usize, usize) {
        (self.at, self.records.len())
    }

    /// The state as it was once `at` records were applied.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Mutable access for the keys that only move around the screens.
    pub fn state_mut(&mut self) -> &mut AppState {
        &mut self.state
    }

    /// The playing speed (1×–16×).
    pub fn speed(&self) -> u32 {
        SPEEDS[self.speed]
    }

    /// Moves to `to` records applied (clamped to the journal).
    pub fn seek(&mut self, to: usize) {
        let to = to.min(self.records.len());
        if to < self.at {
            let ui = self.state.ui.clone();
            let (from, state) = self
                .checkpoints
                .iter()
                .rev()
                .find(|(n, _)| *n <= to)
                .cloned()
                .unwrap_or_else(|| (0, self.checkpoints[0].1.clone()));
            self.state = state;
            // Where the operator looks is theirs, not the recording's.
            self.state.ui = ui;
            self.at = from;
        }
        while self.at < to {
            self.state.apply(&self.records[self.at]);
            self.at += 1;
            if self.at.is_multiple_of(CHECKPOINT_EVERY)
                && self.checkpoints.iter().all(|(n, _)| *n != self.at)
            {
                self.checkpoints.push((self.at, self.state.clone()));
            }
        }
        self.settle();
    }

    /// One step of `stride` forward or back; stays put when there is none.
    pub fn step(&mut self, stride: Stride, forward: bool) {
        let marks = |j: &usize| self.is_mark(*j, stride);
        let to = if forward {
            (self.at + 1..=self.records.len()).find(marks)
        } else {
            (0..self.at).rev().find(marks)
        };
        if let Some(to) = to {
            self.seek(to);
        }
    }

    /// Whether position `j` (records applied) is where a step of `stride` stops: just
    /// after the record that makes it one.
    fn is_mark(&self, j: usize, stride: Stride) -> bool {
        if j == 0 {
            return true;
        }
        let Some(record) = self.records.get(j - 1) else {
            return false;
        };
        match stride {
            Stride::Record => true,
            Stride::Fault => matches!(
                record.event,
                Event::FaultInjected(_) | Event::LandingDeclared(_) | Event::FaultHealed(_)
            ),
            Stride::Scenario => self.scenario_marks.binary_search(&j).is_ok(),
        }
    }

    /// How long the next record waits at this speed, while playing.
    pub fn due_in(&self) -> Option<Duration> {
        let next = self.records.get(self.at)?;
        let Some(last) = self.at.checked_sub(1).and_then(|i| self.records.get(i)) else {
            return Some(Duration::ZERO);
        };
        let gap = time_of(&next.ts)
            .zip(time_of(&last.ts))
            .and_then(|(n, l)| (n - l).to_std().ok())
            .unwrap_or_default()
            .min(MAX_GAP);
        Some(gap / self.speed())
    }

    pub fn faster(&mut self) {
        self.speed = (self.speed + 1).min(SPEEDS.len() - 1);
        self.settle();
    }

    pub fn slower(&mut self) {
        self.speed = self.speed.saturating_sub(1);
        self.settle();
    }

    pub fn toggle(&mut self) {
        self.playing = !self.playing && self.at < self.records.len();
        self.settle();
    }

    /// Does a replay move ([`Action::is_replay`]); `false` for any other action.
    pub fn act(&mut self, action: Action) -> bool {
        match action {
            Action::ReplayNext => self.step(Stride::Record, true),
            Action::ReplayPrev => self.step(Stride::Record, false),
            Action::ReplayNextFault => self.step(Stride::Fault, true),
            Action::ReplayPrevFault => self.step(Stride::Fault, false),
            Action::ReplayNextScenario => self.step(Stride::Scenario, true),
            Action::ReplayPrevScenario => self.step(Stride::Scenario, false),
            Action::ReplayPlay => self.toggle(),
            Action::ReplayFaster => self.faster(),
            Action::ReplaySlower => self.slower(),
            _ => return false,
        }
        true
    }

    /// The moment the state stands at: the clock, the chart cut to it, the replay's
    /// line.
    fn settle(&mut self) {
        let last = self.at.checked_sub(1).and_then(|i| self.records.get(i));
        let moment = last.and_then(|r| time_of(&r.ts));
        self.state.now = moment;
        // The whole chart as last read (with its reader), so the history is read
        // again only when what it shows changed (another row or iteration), never on
        // every record played; the state's chart is a copy of it cut to the moment.
        self.state.chart = self.whole.take();
        super::view::refresh_chart(&mut self.state);
        self.whole = self.state.chart.take();
        self.state.chart = self.whole.as_ref().map(super::view::LiveChart::shown);
        let origin = self.state.chart.as_ref().and_then(|c| self.origin(c.row));
        if let (Some(moment), Some(origin), Some(Ok(series))) = (
            moment,
            origin,
            self.state.chart.as_mut().map(|c| c.series.as_mut()),
        ) {
            let seen = (moment - origin).num_milliseconds().max(0) as f64 / 1000.0;
            series.buckets.retain(|b| b.start_s < seen);
            series.windows.retain(|w| w.from_s < seen);
            for w in &mut series.windows {
                w.to_s = w.to_s.min(seen);
            }
        }
        // The report as the session wrote it, once the recording reaches its end.
        self.state.report_text = self
            .state
            .view
            .session_verdict
            .as_ref()
            .and(self.report.clone());
        let (at, of) = self.position();
        let when = last.map_or_else(|| "start".to_string(), |r| super::view::local_time(&r.ts));
        let play = if self.playing { "playing" } else { "paused" };
        // Short enough for 80 columns beside what the engine did: the keys in full
        // are in references/cli.md and `faultline replay --help`.
        self.state.notice = Some(format!(
            "replay {at}/{of} {when} {play} {}× · keys {}",
            self.speed(),
            self.state.keymap.replay_keys()
        ));
    }

    /// Where the chart of `row`'s iteration starts on the wall clock: its workload's
    /// start (the chart counts from the first invoke), else its history's
    /// announcement, just before the workload was started.
    fn origin(&self, row: usize) -> Option<chrono::DateTime<chrono::Utc>> {
        let live = self.state.view.live.get(&row)?;
        if let Some(started) = live.workload_started.as_deref() {
            return time_of(started);
        }
        let history = live.history.as_ref()?;
        self.records[..self.at]
            .iter()
            .rev()
            .find(|r| matches!(&r.event, Event::HistoryLive(h) if Path::new(&h.path) == history))
            .and_then(|r| time_of(&r.ts))
    }
}

fn time_of(ts: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(ts)
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// What a key does in a replay: a replay key (the keymap's replay moves, listed
/// first in its help) moves the recording; any other key the keymap knows moves
/// around the screens; `true` to leave.
pub fn key(player: &mut Player, key: KeyEvent) -> bool {
    // The open log picker takes the keys it knows first (typing filters it: `.` or
    // space is text there, not a step), then a search being typed takes every key.
    if player.state().ui.logs.is_some() && player.state_mut().log_picker_key(key) {
        return false;
    }
    if player.state().ui.searching {
        player.state_mut().search_key(key);
        return false;
    }
    if let Some(action) = player.state().keymap.replay_action_for(&key) {
        player.act(action);
        return false;
    }
    let state = player.state_mut();
    if state.search_key(key) {
        return false;
    }
    match state.keymap.action_for(&key) {
        Some(Action::Quit) => true,
        Some(action) => {
            state.handle(action);
            false
        }
        None => false,
    }
}

/// Opens `session`'s journal as a recording in the terminal.
pub fn run(session: &Path, setup: Setup) -> Exit {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        crate::say_err!("faultline: replay needs a terminal (stdin and stdout)");
        return Exit::USAGE;
    }
    let (plan, records) = match open(session) {
        Ok(opened) => opened,
        Err(why) => {
            crate::say_err!("faultline: replay {}: {why}", session.display());
            return Exit::UNREADABLE;
        }
    };
    let mut start = AppState::new(plan);
    start.keymap = setup.keymap;
    // A recording answers nothing and watches every stage as it was reached.
    start.ui.follow_session = true;
    let mut player = player(session, start, records);
    let theme = setup.theme;
    let mut terminal = ratatui::init();
    let mut due: Option<Instant> = None;
    loop {
        let _ = terminal.draw(|frame| super::view::draw(frame, player.state(), &theme));
        let wait = match (player.playing, player.due_in()) {
            (true, Some(gap)) => {
                let at = *due.get_or_insert_with(|| Instant::now() + gap);
                at.saturating_duration_since(Instant::now())
            }
            _ => Duration::from_millis(250),
        };
        match crossterm::event::poll(wait) {
            Ok(true) => match crossterm::event::read() {
                Ok(TermEvent::Key(k)) if k.kind != KeyEventKind::Release => {
                    due = None;
                    if key(&mut player, k) {
                        break;
                    }
                }
                Ok(_) => {}
                // The terminal went away: nothing is left to show.
                Err(_) => break,
            },
            Ok(false) if player.playing => {
                due = None;
                let (at, of) = player.position();
                player.seek(at + 1);
                if at + 1 >= of {
                    player.toggle();
                }
            }
            Ok(false) => {}
            Err(_) => break,
        }
    }
    ratatui::restore();
    Exit::OK
}

/// A player of `session`'s journal `records` from `start`: every path the journal
/// names is read under `session` (wherever the session was when it ran) or refused,
/// and its report is shown once the recording reaches its end.
pub fn player(session: &Path, mut start: AppState, records: Vec<Record>) -> Player {
    start.rebase = Some(Rebase::of(session, &records));
    let report =
        files::read_text(&session.join("findings").join("report.md"), files::TEXT_CAP).ok();
    Player::new(start, records).with_report(report)
}

/// The plan and journal records of `session`, read and never written: each file
/// opened never through a symlink, a regular file only, its size capped.
pub fn open(session: &Path) -> Result<(crate::plan::Plan, Vec<Record>), String> {
    let read = |rel: &str, cap: u64| {
        let path = session.join(rel);
        files::open_beneath(session, Path::new(rel))
            .and_then(|f| files::read_capped(f, cap))
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    let request = read("input/request.json", files::TEXT_CAP)?;
    let request: crate::session::resume::SavedRequest = serde_json::from_slice(&request)
        .map_err(|e| format!("{}: {e}", session.join("input/request.json").display()))?;
    let plan_text = String::from_utf8_lossy(&read("input/plan.md", files::TEXT_CAP)?).into_owned();
    let source = request.plan_label.display().to_string();
    let plan = crate::plan::parse::parse_plan(&source, &plan_text);
    let journal = read("journal.jsonl", files::JOURNAL_CAP)?;
    // Read as `session::journal::read` does (a torn or unreadable line is left out).
    let records: Vec<Record> = String::from_utf8_lossy(&journal)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if records.is_empty() {
        return Err("its journal holds no record".into());
    }
    Ok((plan, records))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keymap::{Chord, help_sections};

    /// The demo's journal, played to its middle (faults and verdicts on both sides).
    fn middle() -> Player {
        let plan = crate::plan::parse_plan(
            "examples/demo/plan.md",
            include_str!("../../examples/demo/plan.md"),
        );
        let records: Vec<Record> = include_str!("../../tests/fixtures/journal/demo.jsonl")
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let mut player = Player::new(AppState::new(plan), records);
        player.seek(player.position().1 / 2);
        player
    }

    /// Every key `?` lists under "replay" moves the recording as its line says;
    /// the status line names the same keys.
    #[test]
    fn every_replay_key_the_help_lists_does_what_it_says() {
        let base = middle();
        let sections = help_sections(base.state());
        let (title, rows) = &sections[0];
        assert_eq!(title, "replay");
        assert_eq!(rows.len(), 9, "{rows:?}");
        let notice = base.state().notice.clone().unwrap_or_default();
        for (keys, help) in rows {
            for k in keys.split(" / ") {
                assert!(notice.split(' ').any(|w| w == k), "`{k}` not in {notice}");
                let chord = Chord::parse(k).unwrap_or_else(|| panic!("help lists `{k}`"));
                let event = KeyEvent::new(chord.code, chord.modifiers);
                let action = base
                    .state()
                    .keymap
                    .replay_action_for(&event)
                    .unwrap_or_else(|| panic!("`{k}` moves nothing"));
                assert_eq!(action.help(), help.as_str());
                let mut p = middle();
                if action == Action::ReplaySlower {
                    p.faster();
                }
                let (at, speed, playing) = (p.position().0, p.speed(), p.playing);
                assert!(!key(&mut p, event), "`{k}` left the replay");
                let now = p.position().0;
                let landed = |stride| p.is_mark(now, stride);
                let did = match action {
                    Action::ReplayNext => now == at + 1,
                    Action::ReplayPrev => now + 1 == at,
                    Action::ReplayNextFault => now > at && landed(Stride::Fault) && now > at + 1,
                    Action::ReplayPrevFault => now < at && landed(Stride::Fault),
                    Action::ReplayNextScenario => now > at && landed(Stride::Scenario),
                    Action::ReplayPrevScenario => now < at && landed(Stride::Scenario),
                    Action::ReplayPlay => p.playing != playing,
                    Action::ReplayFaster => p.speed() == speed * 2,
                    Action::ReplaySlower => p.speed() * 2 == speed,
                    _ => false,
                };
                assert!(did, "`{k}` does not {help} ({at} -> {now})");
            }
        }
    }

    /// While the log picker is open, the replay's keys that are characters go to
    /// its filter: the recording stays where it is.
    #[test]
    fn the_open_log_picker_takes_the_replay_keys_as_its_filter() {
        use crossterm::event::{KeyCode, KeyModifiers};
        let mut p = middle();
        p.state_mut().ui.step = crate::tui::state::Step::Run;
        p.state_mut().toggle_log_picker();
        assert!(p.state().ui.logs.is_some(), "the picker opens");
        let (at, speed) = (p.position().0, p.speed());
        let typed = ". , ] [ } { + - ";
        for c in typed.chars() {
            let k = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
            assert!(!key(&mut p, k), "`{c}` left the replay");
        }
        assert_eq!(p.position().0, at, "the recording moved");
        assert_eq!((p.speed(), p.playing), (speed, false));
        assert_eq!(
            p.state().ui.logs.as_ref().map(|l| l.filter.as_str()),
            Some(typed)
        );
        // Closed, the same keys move the recording again.
        assert!(!key(
            &mut p,
            KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)
        ));
        assert!(p.state().ui.logs.is_none());
        assert!(!key(
            &mut p,
            KeyEvent::new(KeyCode::Char('.'), KeyModifiers::NONE)
        ));
        assert_eq!(p.position().0, at + 1);
    }

    /// The bottom row of `state` drawn at `width` x 24 in `theme`.
    fn drawn(state: &AppState, theme: &crate::tui::theme::Theme, width: u16) -> Vec<String> {
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, 24)).expect("term");
        terminal
            .draw(|frame| crate::tui::view::draw(frame, state, theme))
            .expect("draw");
        let buffer = terminal.backend().buffer().clone();
        (0..24)
            .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect())
            .collect()
    }

    /// The status line keeps the replay's position and time first at 80 and 60
    /// columns, shows the keys' reminder whole or not at all, and without a UTF-8
    /// locale nothing on the Run screen is drawn outside ASCII.
    #[test]
    fn the_replay_line_keeps_its_position_and_time_and_follows_the_locale() {
        let mut p = middle();
        p.state_mut().ui.step = crate::tui::state::Step::Run;
        p.seek(p.position().0);
        let (at, of) = p.position();
        let when = p
            .state()
            .now
            .map(|t| crate::tui::view::local_time(&t.to_rfc3339()))
            .expect("a moment");
        let keys = p.state().keymap.replay_keys();
        for utf8 in [true, false] {
            let theme = crate::tui::theme::Theme::select("dark", false, utf8).expect("theme");
            for width in [80u16, 60] {
                let rows = drawn(p.state(), &theme, width);
                let status = rows.last().cloned().unwrap_or_default();
                assert!(
                    status.contains(&format!("replay {at}/{of} {when}")),
                    "{width} columns: {status}"
                );
                if status.contains(" keys ") {
                    let plain_keys = if utf8 {
                        keys.clone()
                    } else {
                        keys.replace('…', "...")
                    };
                    assert!(status.contains(&plain_keys), "a cut reminder: {status}");
                }
                if !utf8 {
                    for row in &rows {
                        assert!(row.is_ascii(), "{width} columns, LANG=C: {row}");
                    }
                }
            }
        }
    }
}
