//! `faultline replay SESSION`: a session's journal shown in the TUI as a recording.
//! A position on the journal (how many records are applied) is the whole state: every
//! screen draws the reducer's view of the records up to it, the status line's clock
//! is the last applied record's time, and the live chart is cut at that moment.
//! Stepping goes by record, by fault window (injected, held with its landing seen,
//! healed) and by scenario (its first iteration started, and its verdict); playing
//! applies records at their journaled pace, 1× to 16×. Nothing is written to the
//! session.

use std::path::Path;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyEventKind};

use super::app::Setup;
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

/// The replay's own keys (`.` `,` record, `]` `[` fault, `}` `{` scenario, space play,
/// `+` `-` speed), taken before the keymap's: none of them is bound there.
const KEYS: &[char] = &['.', ',', ']', '[', '}', '{', ' ', '+', '-'];

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
    pub fn new(start: AppState, records: Vec<Record>) -> Player {
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

    /// The moment the state stands at: the clock, the chart cut to it, the replay's
    /// line.
    fn settle(&mut self) {
        let last = self.at.checked_sub(1).and_then(|i| self.records.get(i));
        let moment = last.and_then(|r| time_of(&r.ts));
        self.state.now = moment;
        // The whole chart as last read, so the history is read again only when what
        // it shows changed (another row or iteration, a fault's state), never on
        // every record played; the state's chart is that one cut to the moment.
        self.state.chart = self.whole.take();
        super::view::refresh_chart(&mut self.state);
        self.whole = self.state.chart.clone();
        if let (Some(moment), Some(chart)) = (moment, self.state.chart.as_mut()) {
            let history = self
                .state
                .view
                .live
                .get(&chart.row)
                .and_then(|l| l.history.clone());
            let origin = self.records[..self.at]
                .iter()
                .rev()
                .find(|r| match &r.event {
                    Event::HistoryLive(h) => {
                        history.as_ref().is_some_and(|p| Path::new(&h.path) == p)
                    }
                    _ => false,
                })
                .and_then(|r| time_of(&r.ts));
            if let (Ok(series), Some(origin)) = (chart.series.as_mut(), origin) {
                let seen = (moment - origin).num_milliseconds().max(0) as f64 / 1000.0;
                series.buckets.retain(|b| b.start_s < seen);
                series.windows.retain(|w| w.from_s < seen);
                for w in &mut series.windows {
                    w.to_s = w.to_s.min(seen);
                }
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
            "replay {at}/{of} {when} {play} {}× · keys . , ] [ }} {{ space + -",
            self.speed()
        ));
    }
}

fn time_of(ts: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(ts)
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// What a key does in a replay: a replay key moves the recording; any other key the
/// keymap knows moves around the screens; `true` to leave.
pub fn key(player: &mut Player, key: KeyEvent) -> bool {
    // A search being typed takes every key first.
    if player.state().ui.searching {
        player.state_mut().search_key(key);
        return false;
    }
    if let KeyCode::Char(c) = key.code
        && KEYS.contains(&c)
    {
        match c {
            '.' => player.step(Stride::Record, true),
            ',' => player.step(Stride::Record, false),
            ']' => player.step(Stride::Fault, true),
            '[' => player.step(Stride::Fault, false),
            '}' => player.step(Stride::Scenario, true),
            '{' => player.step(Stride::Scenario, false),
            ' ' => player.toggle(),
            '+' => player.faster(),
            _ => player.slower(),
        }
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
    let report = std::fs::read_to_string(session.join("findings").join("report.md")).ok();
    let mut player = Player::new(start, records).with_report(report);
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

/// The plan and journal records of `session`, read and never written.
pub fn open(session: &Path) -> Result<(crate::plan::Plan, Vec<Record>), String> {
    let saved = crate::session::resume::load(session)?;
    let source = saved.input.plan_label.display().to_string();
    let plan = crate::plan::parse::parse_plan(&source, &saved.input.plan_text);
    let journal =
        crate::session::journal::read(&session.join("journal.jsonl")).map_err(|e| e.to_string())?;
    if journal.records.is_empty() {
        return Err("its journal holds no record".into());
    }
    Ok((plan, journal.records))
}
