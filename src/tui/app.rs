//! The interactive session: a client of the session server (the engine runs in its own
//! process), talked to only through the attach protocol (records and questions in,
//! answers out). Drawing happens when something changed, never in a busy loop.

use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers, MouseEventKind};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio_util::sync::CancellationToken;

use super::answer::Typed;
use super::keymap::{Action, Keymap};
use super::state::{AppState, Noted};
use super::theme::{Theme, locale_is_utf8};
use crate::session::client::Link;
use crate::session::operator::{Choice, Question, QuestionKind};
use crate::session::wire::{ClientMsg, Ending, ServerMsg};

/// How often the live pane re-reads its log while a command runs.
const PANE_REFRESH: Duration = Duration::from_millis(250);

/// How long a question the session asks ignores keys after it appears. Half a
/// second: seeing a change on screen and stopping the fingers takes a person about
/// 250 ms (plus a keystroke already on its way, and an SSH link's delay), so keys
/// meant for the screen beneath land inside it; reading even a one-line question
/// takes longer, so nobody answering it on purpose is held up.
pub const GRACE: Duration = Duration::from_millis(500);

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

/// How an attached TUI ended.
pub enum Left {
    /// The operator detached (or the terminal went away): the run goes on.
    Detached,
    /// The run ended and the operator left the report screen.
    Ended(Ending),
    /// The connection to the session's server was lost before the run ended.
    Lost(String),
}

/// The TUI as a client of a session server: records and questions come in on `link`,
/// answers and a stop go out on it. The engine runs in the server process, so
/// nothing here can stop, hang or slow the run; leaving only ends this client.
/// `leave` (a signal to this process) detaches.
pub async fn attach(
    link: Link,
    plan: crate::plan::Plan,
    setup: Setup,
    leave: CancellationToken,
) -> Left {
    let theme = setup.theme;
    let mut state = AppState::new(plan);
    state.keymap = setup.keymap;
    let Link {
        mut rx,
        tx,
        who,
        status,
        ..
    } = link;
    state.participants = status.participants;
    state.me = Some(who);
    let mut terminal = ratatui::init();
    let mouse = MouseCapture::start(setup.mouse);
    let mut keys = key_events();
    // The question on screen, and those asked while it was.
    let mut pending: Option<Question> = None;
    let mut queued: std::collections::VecDeque<Question> = std::collections::VecDeque::new();
    let mut ended: Option<Ending> = None;
    let mut server_gone = false;
    let mut refresh = tokio::time::interval(PANE_REFRESH);
    let mut dirty = true;
    let mut confirming_quit = false;
    // When the question on screen stops settling (see [`GRACE`]).
    let mut settle: Option<tokio::time::Instant> = None;
    let mut frames = FrameTimes::default();
    let mut announced: Option<String> = None;
    let left = loop {
        announce(&state, &mut announced);
        if dirty {
            state.now = Some(chrono::Utc::now());
            let started = std::time::Instant::now();
            let _ = terminal.draw(|frame| super::view::draw(frame, &state, &theme));
            frames.record(started.elapsed());
        }
        dirty = true;
        tokio::select! {
            msg = rx.recv(), if !server_gone => {
                let Some(msg) = msg else {
                    // After the end the server goes: the report stays on screen.
                    if ended.is_some() {
                        server_gone = true;
                        continue;
                    }
                    break Left::Lost("the session's server went away before the run ended".into());
                };
                match msg {
                    // The welcome came with the link; a server sends one only.
                    ServerMsg::Welcome { .. } => {}
                    ServerMsg::Record { record } => state.apply(&record),
                    ServerMsg::Live { .. } => {}
                    ServerMsg::Question { question } => {
                        let shown = pending.as_ref().is_some_and(|p| p.id == question.id);
                        if shown || queued.iter().any(|q| q.id == question.id) {
                            continue;
                        }
                        // The note being written keeps its keys: the question waits.
                        if pending.is_none() && !confirming_quit && state.note.is_none() {
                            show(&mut state, question.clone(), &mut settle);
                            pending = Some(question);
                        } else {
                            queued.push_back(question);
                        }
                    }
                    ServerMsg::Answered { id, answer, by } => {
                        state.notice = Some(format!("{id}: {answer} — answered by {by}"));
                        queued.retain(|q| q.id != id);
                        if pending.as_ref().is_some_and(|p| p.id == id) {
                            pending = None;
                            if !confirming_quit {
                                state.answered();
                                if state.note.is_none() {
                                    pending = next_question(&mut state, &mut queued, &mut settle);
                                }
                            }
                        }
                    }
                    ServerMsg::Withdrawn { id, why } => {
                        state.notice = Some(format!("{id} withdrawn: {why}"));
                        queued.retain(|q| q.id != id);
                        if pending.as_ref().is_some_and(|p| p.id == id) {
                            pending = None;
                            if !confirming_quit {
                                state.answered();
                                if state.note.is_none() {
                                    pending = next_question(&mut state, &mut queued, &mut settle);
                                }
                            }
                        }
                    }
                    ServerMsg::Refused { id, why } => {
                        state.notice = Some(why.clone());
                        if let (Some(id), Some(question)) = (id, &pending)
                            && question.id == id
                            && !why.starts_with("already answered")
                        {
                            state.ask(Question { error: Some(why), ..question.clone() });
                        }
                    }
                    ServerMsg::Joined { participant } => state.participants.push(participant),
                    ServerMsg::Left { participant } => {
                        if let Some(i) = state.participants.iter().position(|p| *p == participant) {
                            state.participants.remove(i);
                        }
                    }
                    ServerMsg::Ended { ending } => {
                        if let Some(report) = &ending.report {
                            state.report_text = std::fs::read_to_string(report).ok();
                            state.report_path = Some(report.into());
                        }
                        pending = None;
                        queued.clear();
                        if !confirming_quit {
                            state.answered();
                        }
                        if state.note.take().is_some() {
                            state.notice = Some("the run ended: the note was not sent".into());
                        }
                        ended = Some(ending);
                    }
                    ServerMsg::Bye { why } => break Left::Lost(why),
                }
            }
            event = keys.recv() => {
                // The terminal is gone (a dropped SSH link): this client leaves; the
                // run goes on and its question waits for the next operator.
                let Some(event) = event else {
                    break Left::Detached;
                };
                // A viewer's keys and wheel stay the screen's: no question is theirs.
                let answering = pending.as_ref().is_some_and(|q| state.may_answer(q));
                let key = match event {
                    Event::Key(key) => key,
                    Event::Mouse(m) if !answering => {
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
                if settle.is_some_and(|at| tokio::time::Instant::now() >= at) {
                    settle = None;
                    state.ui.settling = false;
                }
                if confirming_quit {
                    let choice = match super::answer::key(&mut state, key) {
                        // Checked against "quit?" already: a wrong answer stays, with why.
                        Typed::Send(choice) => Some(choice),
                        Typed::Global(Action::Quit) | Typed::Nothing => None,
                        Typed::Global(action) => {
                            state.handle(action);
                            None
                        }
                    };
                    if let Some(choice) = choice {
                        confirming_quit = false;
                        state.answered();
                        match choice.as_str() {
                            "detach" => break Left::Detached,
                            "stop" => {
                                // The server stops the step, heals, writes the
                                // documents and sends `ended`; the UI shows it.
                                let _ = tx.send(ClientMsg::Stop);
                                state.notice = Some("stopping: healing and writing the documents".into());
                            }
                            _ => {}
                        }
                        if ended.is_none() {
                            if let Some(question) = &pending {
                                state.ask(question.clone());
                            } else if state.note.is_none() {
                                pending = next_question(&mut state, &mut queued, &mut settle);
                            }
                        }
                    }
                    continue;
                }
                // Ctrl-C asks to leave even while a question waits (the editor takes every other key).
                let ctrl_c = key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
                if ctrl_c && ended.is_none() {
                    confirming_quit = true;
                    state.ask(quit_question(state.watching()));
                    continue;
                }
                // The note being written takes every key but Ctrl-C, even over a
                // question (opened with `m` while it waited).
                if let Some(noted) = state.note_key(key) {
                    // Journaled by the server, which sends the record (or `refused`).
                    if let Noted::Send(text) = noted {
                        let _ = tx.send(ClientMsg::Note { text });
                    }
                    // Closed: a question asked meanwhile shows now, settling.
                    if state.note.is_none() && pending.is_none() {
                        pending = next_question(&mut state, &mut queued, &mut settle);
                    }
                    continue;
                }
                if let Some(question) = pending.as_ref().filter(|_| answering) {
                    match super::answer::key(&mut state, key) {
                        Typed::Send(text) => {
                            // Shown as sent; the server's `answered` (or `refused`) settles it.
                            state.notice = Some(format!("{}: sent {}", question.id, crate::sanitize::line(&text)));
                            let _ = tx.send(ClientMsg::Answer { id: question.id.clone(), text });
                        }
                        Typed::Global(Action::Quit) if ended.is_none() => {
                            state.ui.help = false;
                            state.ui.evidence = false;
                            confirming_quit = true;
                            state.ask(quit_question(state.watching()));
                        }
                        Typed::Global(action) => state.handle(action),
                        Typed::Nothing => {}
                    }
                    continue;
                }
                if state.search_key(key) {
                    continue;
                }
                match state.keymap.action_for(&key) {
                    Some(Action::Quit) if ended.is_some() => {
                        break Left::Ended(ended.take().unwrap_or_default());
                    }
                    Some(Action::Quit) => {
                        confirming_quit = true;
                        state.ask(quit_question(state.watching()));
                    }
                    Some(Action::Note) if ended.is_some() => {
                        state.notice = Some("the run has ended: notes are no longer journaled".into());
                    }
                    Some(action) => state.handle(action),
                    None => {}
                }
            }
            // A signal to this client (SIGHUP from a closing terminal, SIGTERM): it
            // leaves; the run is the server's.
            () = leave.cancelled() => break Left::Detached,
            // The question on screen is ready for keys: its answer box says so.
            () = tokio::time::sleep_until(settle.unwrap_or_else(tokio::time::Instant::now)), if settle.is_some() => {
                settle = None;
                state.ui.settling = false;
            }
            _ = refresh.tick() => {
                super::view::refresh_chart(&mut state);
                // The live pane tails files on disk; redraw only while something runs.
                dirty = ended.is_none() && state.selected_run().is_some();
            }
        }
    };
    drop(mouse);
    set_title(TITLE);
    ratatui::restore();
    frames.log();
    left
}

/// The window title while nothing waits for the operator.
const TITLE: &str = "faultline";

/// A question the engine asks rings the bell once and names itself in the window
/// title (another window, another tmux pane, still sees it); the title goes back
/// when none waits. `announced` is the question last announced.
fn announce(state: &AppState, announced: &mut Option<String>) {
    // "quit?" is the operator's own question: no bell, the title stays as it was.
    if state
        .pending
        .as_ref()
        .is_some_and(|q| q.kind == QuestionKind::Quit)
    {
        return;
    }
    // A viewer is not called: no question waits for them.
    let now = state
        .pending
        .as_ref()
        .filter(|q| state.may_answer(q))
        .map(|q| q.id.clone());
    if now == *announced {
        return;
    }
    match &now {
        Some(id) => {
            use std::io::Write;
            let mut out = std::io::stdout();
            let _ = out.write_all(b"\x07");
            let _ = out.flush();
            set_title(&format!(
                "{TITLE}: waiting for you — {}",
                crate::sanitize::line(id)
            ));
        }
        None => set_title(TITLE),
    }
    *announced = now;
}

fn set_title(title: &str) {
    let _ = crossterm::execute!(std::io::stdout(), crossterm::terminal::SetTitle(title));
}

/// Shows a question the session asks, settling for [`GRACE`] from now.
fn show(state: &mut AppState, question: Question, settle: &mut Option<tokio::time::Instant>) {
    state.ask(question);
    state.ui.settling = true;
    *settle = Some(tokio::time::Instant::now() + GRACE);
}

/// Shows the next queued question, if any.
fn next_question(
    state: &mut AppState,
    queued: &mut std::collections::VecDeque<Question>,
    settle: &mut Option<tokio::time::Instant>,
) -> Option<Question> {
    let question = queued.pop_front()?;
    show(state, question.clone(), settle);
    Some(question)
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

/// Asked locally (never sent to the engine) before leaving a running session. Its
/// choices start with distinct letters, so each acts on its one key. A viewer is
/// not offered `stop` (the server would refuse it).
fn quit_question(watching: bool) -> Question {
    let mut choices = vec![Choice::new("detach", "leave; the run goes on").alias("d")];
    if !watching {
        choices.push(
            Choice::new("stop", "heal, write the documents, end the run")
                .alias("s")
                .alias("y")
                .alias("yes"),
        );
    }
    choices.push(
        Choice::new("cancel", "back to the run")
            .alias("c")
            .alias("n")
            .alias("no"),
    );
    let prompt = if watching {
        "Leave the session? detach: the run goes on (`faultline attach` comes back); \
         a viewer cannot stop it."
    } else {
        "Leave the session? detach: the run goes on (`faultline attach` comes back); \
         stop: the running step stops, every injected fault is healed and the \
         documents are written, then it ends."
    };
    Question {
        id: "quit".into(),
        kind: QuestionKind::Quit,
        prompt: prompt.into(),
        choices,
        default: "cancel".into(),
        ..Question::default()
    }
}

/// Theme, keymap and mouse from a `--theme` and a `--config` (`run`, `demo`,
/// `attach`): the flag, then the config file, then the compiled-in defaults. A bad
/// config file is a usage error naming file and line.
pub fn setup_for(
    flag: Option<&str>,
    config: Option<&std::path::Path>,
) -> Result<Setup, crate::exit::Halt> {
    let config = match super::config::locate(config) {
        Some(path) => super::config::load(&path).map_err(|e| {
            crate::say_err!("faultline: config {e}");
            crate::exit::Halt(crate::exit::Exit::USAGE)
        })?,
        None => super::config::Config::default(),
    };
    let name = flag
        .map(str::to_string)
        .or(config.theme)
        .unwrap_or_else(|| "dark".to_string());
    let theme = theme(&name).map_err(|e| {
        crate::say_err!("faultline: {e}");
        crate::exit::Halt(crate::exit::Exit::USAGE)
    })?;
    Ok(Setup {
        theme,
        keymap: config.keymap,
        mouse: config.mouse,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEvent;

    fn asked(watching: bool) -> AppState {
        let plan = crate::plan::parse_plan(
            "examples/demo/plan.md",
            include_str!("../../examples/demo/plan.md"),
        );
        let mut state = AppState::new(plan);
        state.ui.settling = true;
        state.ask(quit_question(watching));
        state
    }

    fn press(state: &mut AppState, c: char) -> Typed {
        super::super::answer::key(state, KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
    }

    #[test]
    fn the_quit_dialog_acts_on_one_key_at_once() {
        for (c, sent) in [('d', "detach"), ('s', "stop"), ('c', "cancel")] {
            let mut state = asked(false);
            assert!(!state.ui.settling, "asked by the operator: no grace");
            assert_eq!(press(&mut state, c), Typed::Send(sent.into()), "{c}");
        }
    }

    #[test]
    fn a_viewer_is_not_offered_stop() {
        let mut state = asked(true);
        assert_eq!(press(&mut state, 'd'), Typed::Send("detach".into()));
        let mut state = asked(true);
        assert_ne!(press(&mut state, 's'), Typed::Send("stop".into()));
        assert!(state.typed().is_empty());
    }
}
