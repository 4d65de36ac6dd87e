//! The interactive session: the engine runs in its own task and is only ever talked
//! to through the journal tap (records in) and the [`Channel`] operator (questions in,
//! answers out). Drawing happens when something changed, never in a busy loop.

use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers, MouseEventKind};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio_util::sync::CancellationToken;

use super::keymap::{Action, Keymap};
use super::state::AppState;
use super::theme::{Theme, locale_is_utf8};
use crate::engine::driver::{self, DriverError, Ended, Request};
use crate::engine::operator::{
    Answer, Asked, Channel, Choice, Layered, Question, QuestionKind, Scripted, identity,
};

/// How often the live pane re-reads its log while a command runs.
const PANE_REFRESH: Duration = Duration::from_millis(250);

/// The theme for this terminal: `NO_COLOR` and the locale decide colour and symbols.
pub fn theme(name: &str) -> Result<Theme, super::theme::ThemeError> {
    let no_color = std::env::var("NO_COLOR").is_ok_and(|v| !v.is_empty());
    let utf8 = locale_is_utf8(
        std::env::var("LC_ALL").ok().as_deref(),
        std::env::var("LC_CTYPE").ok().as_deref(),
        std::env::var("LANG").ok().as_deref(),
    );
    let depth = super::palette::Depth::detect(
        std::env::var("COLORTERM").ok().as_deref(),
        std::env::var("TERM").ok().as_deref(),
    );
    Theme::select(name, no_color, utf8).map(|t| super::palette::fit(t, depth))
}

/// Keys read on a thread of their own (crossterm's read blocks), forwarded as events.
fn key_events() -> UnboundedReceiver<Event> {
    let (tx, rx) = unbounded_channel();
    std::thread::spawn(move || {
        // A terminal that went away (the pty's other end closed: a dropped SSH link,
        // `tmux kill-session`) reads as hang-up on poll; ending here closes the
        // channel, which the UI takes as the hang-up. Reading on would spin.
        while !terminal_gone() {
            match crossterm::event::poll(KEY_POLL) {
                Ok(true) => {
                    let Ok(event) = crossterm::event::read() else {
                        break;
                    };
                    if tx.send(event).is_err() {
                        break;
                    }
                }
                Ok(false) if tx.is_closed() => break,
                Ok(false) => {}
                Err(_) => break,
            }
        }
    });
    rx
}

/// How often the key reader looks whether the terminal is still there.
const KEY_POLL: Duration = Duration::from_millis(200);

/// The terminal on stdin hung up (or stdin is no terminal any more).
fn terminal_gone() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(_) => fds[0].revents().is_some_and(|r| {
            r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL)
        }),
        Err(_) => true,
    }
}

/// How the UI looks and reads keys: the theme, the keymap and whether the mouse
/// wheel scrolls (off by default so the terminal's own text selection keeps working).
#[derive(Debug, Clone)]
pub struct Setup {
    pub theme: Theme,
    pub keymap: Keymap,
    pub mouse: bool,
}

/// How long drawing took, summed up for the log when the UI ends (the latency bench
/// reads it): the count, mean and worst frame.
#[derive(Debug, Default)]
struct FrameTimes {
    count: u64,
    total: Duration,
    worst: Duration,
}

impl FrameTimes {
    fn record(&mut self, took: Duration) {
        self.count += 1;
        self.total += took;
        self.worst = self.worst.max(took);
    }

    fn log(&self) {
        let mean = self
            .total
            .checked_div(u32::try_from(self.count).unwrap_or(u32::MAX))
            .unwrap_or_default();
        tracing::info!(
            frames = self.count,
            mean_us = mean.as_micros(),
            worst_us = self.worst.as_micros(),
            "tui frame times"
        );
    }
}

/// Mouse capture on for the UI's lifetime, off again on drop (also on panic unwind).
struct MouseCapture(bool);

impl MouseCapture {
    fn start(on: bool) -> MouseCapture {
        if on {
            let _ = crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture);
        }
        MouseCapture(on)
    }
}

impl Drop for MouseCapture {
    fn drop(&mut self) {
        if self.0 {
            let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
        }
    }
}

/// Runs `request` under the terminal UI; returns when the engine has finished and the
/// operator has left the report screen (or quit, after the engine healed everything).
pub async fn run(
    request: Request,
    scripted: Scripted,
    setup: Setup,
    cancel: CancellationToken,
) -> Result<Ended, DriverError> {
    let theme = setup.theme;
    let mut state = AppState::new(request.plan.clone());
    state.keymap = setup.keymap;
    let (records_tx, mut records) = unbounded_channel();
    let (asked_tx, mut asked) = unbounded_channel::<Asked>();
    let engine_cancel = cancel.clone();
    let mut engine = tokio::spawn(async move {
        let mut operator = Layered {
            scripted,
            interactive: Channel { tx: asked_tx },
        };
        driver::run(&request, &mut operator, engine_cancel, Some(records_tx)).await
    });
    let mut terminal = ratatui::init();
    let mouse = MouseCapture::start(setup.mouse);
    let mut keys = key_events();
    let mut pending: Option<Asked> = None;
    let mut ended: Option<Result<Ended, DriverError>> = None;
    let mut refresh = tokio::time::interval(PANE_REFRESH);
    let by = identity();
    let mut dirty = true;
    let mut confirming_quit = false;
    let mut hung_up = false;
    let mut frames = FrameTimes::default();
    let mut quitting = false;
    loop {
        // Every branch below decides whether what it did needs a redraw.
        if dirty {
            let started = std::time::Instant::now();
            let _ = terminal.draw(|frame| super::view::draw(frame, &state, &theme));
            frames.record(started.elapsed());
        }
        tokio::select! {
            Some(record) = records.recv() => {
                state.apply(&record);
                dirty = true;
            }
            // Once stopping, a new question is let go at once (dropping its reply
            // leaves it unanswered), so the engine never waits on a UI that is leaving.
            Some(question) = asked.recv(), if pending.is_none() => {
                if !quitting {
                    state.ask(question.question.clone());
                    pending = Some(question);
                    dirty = true;
                }
            }
            event = keys.recv(), if !hung_up => {
                let Some(event) = event else {
                    // The terminal is gone (a dropped SSH link): stop as if the
                    // operator quit; the engine heals and ends, then the UI does.
                    hung_up = true;
                    quitting = true;
                    pending = None;
                    cancel.cancel();
                    if ended.is_some() {
                        break;
                    }
                    continue;
                };
                dirty = true;
                let key = match event {
                    Event::Key(key) => key,
                    Event::Mouse(m) if pending.is_none() => {
                        match m.kind {
                            MouseEventKind::ScrollUp => state.handle(Action::Up),
                            MouseEventKind::ScrollDown => state.handle(Action::Down),
                            _ => {}
                        }
                        continue;
                    }
                    // A resize (SIGWINCH) redraws at once: `dirty` is already set.
                    _ => continue,
                };
                if key.kind != KeyEventKind::Press {
                    continue;
                }
                if confirming_quit {
                    if let Some(text) = super::answer::key(&mut state, key) {
                        let question = quit_question();
                        let choice = match question.check(&text) {
                            Ok(choice) => choice,
                            // Not an answer to "quit?": asked again, with why.
                            Err(why) => {
                                state.ask(Question { error: Some(why), ..question });
                                continue;
                            }
                        };
                        confirming_quit = false;
                        state.answered();
                        if choice == "stop" {
                            // The engine stops the step, heals, writes its documents, ends;
                            // a question it waits on goes unanswered.
                            quitting = true;
                            pending = None;
                            cancel.cancel();
                        } else if let Some(question) = &pending {
                            state.ask(question.question.clone());
                        }
                    }
                    continue;
                }
                // Ctrl-C quits even while a question waits (the editor takes every other key).
                let ctrl_c = key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
                if ctrl_c && pending.is_some() && ended.is_none() {
                    confirming_quit = true;
                    state.ask(quit_question());
                    continue;
                }
                if let Some(question) = pending.take() {
                    match super::answer::key(&mut state, key) {
                        Some(text) => {
                            let text = if text.trim().is_empty() { question.question.default.clone() } else { text };
                            let _ = question.reply.send(Ok(Answer { text, by: by.clone() }));
                            state.answered();
                        }
                        None => pending = Some(question),
                    }
                    continue;
                }
                if let Some(query) = state.ui.search.as_mut()
                    && let KeyCode::Char(c) = key.code
                    && !key.modifiers.contains(KeyModifiers::CONTROL)
                {
                    query.push(c);
                    continue;
                }
                match state.keymap.action_for(&key) {
                    Some(Action::Quit) if ended.is_some() => break,
                    Some(Action::Quit) => {
                        confirming_quit = true;
                        state.ask(quit_question());
                    }
                    Some(action) => state.handle(action),
                    None => {}
                }
            }
            result = &mut engine, if ended.is_none() => {
                let result = result.unwrap_or_else(|e| Err(DriverError::Engine(
                    crate::engine::iteration::EngineError::Io { id: "session".into(), message: e.to_string() },
                )));
                if let Ok(done) = &result {
                    state.report_text = std::fs::read_to_string(report_path(done)).ok();
                }
                ended = Some(result);
                if quitting {
                    break;
                }
                dirty = true;
            }
            // A signal after the engine ended (nothing left to heal) ends the UI too.
            () = cancel.cancelled(), if ended.is_some() => break,
            // A signal while it runs: the engine stops, heals and writes its documents;
            // a question it waits on is let go so it can.
            () = cancel.cancelled(), if ended.is_none() && !quitting => {
                quitting = true;
                confirming_quit = false;
                pending = None;
                state.answered();
                dirty = true;
            }
            _ = refresh.tick(), if ended.is_none() => {
                // The live pane tails files on disk; redraw only while something runs.
                dirty = state.selected_run().is_some();
            }
        }
    }
    drop(mouse);
    ratatui::restore();
    frames.log();
    match ended {
        Some(result) => result,
        None => engine.await.unwrap_or_else(|e| {
            Err(DriverError::Engine(
                crate::engine::iteration::EngineError::Io {
                    id: "session".into(),
                    message: e.to_string(),
                },
            ))
        }),
    }
}

/// Shows a handed-back plan (its tree with every problem that stops the run) until
/// the operator leaves with `q` / Esc / Enter. Nothing is started.
pub fn hand_back(plan: crate::plan::Plan, setup: &Setup) {
    let mut state = AppState::new(plan);
    state.keymap = setup.keymap.clone();
    let mut terminal = ratatui::init();
    loop {
        let _ = terminal.draw(|frame| super::view::draw(frame, &state, &setup.theme));
        let Ok(event) = crossterm::event::read() else {
            break;
        };
        let Event::Key(key) = event else { continue };
        if key.kind != KeyEventKind::Press {
            continue;
        }
        match state.keymap.action_for(&key) {
            Some(Action::Quit | Action::Close) => break,
            _ if key.code == KeyCode::Enter => break,
            Some(action) => state.handle(action),
            None => {}
        }
    }
    ratatui::restore();
}

/// Asked locally (never sent to the engine) before quitting a running session.
fn quit_question() -> Question {
    Question {
        id: "quit".into(),
        kind: QuestionKind::Quit,
        prompt: "Quit now? The running step stops, every injected fault is healed and the \
                 documents are written first."
            .into(),
        choices: vec![
            Choice::new("stop", "heal, write the documents, exit")
                .alias("y")
                .alias("yes"),
            Choice::new("cancel", "back to the run")
                .alias("n")
                .alias("no"),
        ],
        default: "cancel".into(),
        ..Question::default()
    }
}

fn report_path(ended: &Ended) -> PathBuf {
    match &ended.report {
        Ok(path) => path.clone(),
        Err(_) => PathBuf::from(&ended.outcome.session_dir)
            .join("findings")
            .join("report.md"),
    }
}
