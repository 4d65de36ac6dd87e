//! `faultline replay` over the demo session the suite already runs: stepping by fault
//! and by scenario shows the session as it stood, the chart is cut at that moment, and
//! the session directory is byte for byte what it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common;
use crate::support::tmux::{self, Tmux};
use faultline::session::event::Event;
use faultline::tui::replay::{self, Player, Stride};
use faultline::tui::state::AppState;

/// Every file under `dir` with its bytes.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("read dir").flatten() {
            let path = entry.path();
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                out.insert(path.clone(), std::fs::read(&path).expect("read file"));
            }
        }
    }
    out
}

/// The screen `state` draws at 120x36, as text.
fn screen(state: &AppState) -> String {
    let theme = faultline::tui::app::theme("dark").expect("theme");
    let mut terminal = Terminal::new(TestBackend::new(120, 36)).expect("terminal");
    terminal
        .draw(|frame| faultline::tui::view::draw(frame, state, &theme))
        .expect("draw");
    let buffer = terminal.backend().buffer().clone();
    let mut text = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            text.push_str(buffer[(x, y)].symbol());
        }
        text.push('\n');
    }
    text
}

fn row_of(state: &AppState, id: &str) -> usize {
    state
        .view
        .runs
        .iter()
        .position(|r| r.id == id)
        .unwrap_or_else(|| panic!("no row {id}"))
}

#[test]
fn replay_steps_through_the_demo_as_it_was_and_writes_nothing() {
    let session = common::session_of(&common::demo_run().out);
    let before = contents(&session);

    let (plan, records) = replay::open(&session).expect("the demo session opens");
    let total = records.len();
    let mut player = replay::player(&session, AppState::new(plan), records);
    assert_eq!(player.position(), (0, total));

    // Forward by fault until D2's pause of n3 is held.
    let mut steps = 0;
    while !screen(player.state()).contains("holding pause-n3") {
        let at = player.position().0;
        player.step(Stride::Fault, true);
        steps += 1;
        assert!(
            player.position().0 > at && steps < 200,
            "never reached D2's fault window (at {at} of {total})"
        );
    }
    let d2 = row_of(player.state(), "D2");
    assert_eq!(
        player.state().view.active,
        Some(d2),
        "D2 is the running row"
    );
    let d1 = row_of(player.state(), "D1");
    assert!(
        player.state().view.runs[d1].decided.is_some(),
        "D1 has its verdict by D2's fault window"
    );
    // The chart is D2's, up to that moment: the full history is longer than what is
    // drawn once the fault's window is open.
    let at = player.position().0;
    let cut = player.state().chart.clone().expect("D2's chart");
    assert_eq!(cut.row, d2);
    let cut = cut.series.expect("D2's series");
    let mut whole = AppState::new(common::demo_plan());
    let (_, all) = replay::open(&session).expect("opens again");
    for record in &all {
        whole.apply(record);
    }
    whole.ui.selected = d2;
    faultline::tui::view::refresh_chart(&mut whole);
    let full = whole
        .chart
        .expect("D2's full chart")
        .series
        .expect("D2's full series");
    assert!(
        !cut.buckets.is_empty() && cut.buckets.len() < full.buckets.len(),
        "the chart at record {at} shows {} of the {} buckets",
        cut.buckets.len(),
        full.buckets.len()
    );

    // Every log shown is cut at that moment: of a D2 log written on after it, no
    // line stamped later is on screen, and the last one stamped before it is.
    let moment = player.state().now.expect("the moment replayed");
    let later = |path: &Path| -> (Vec<String>, Vec<String>) {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let stamped = text.lines().filter_map(|l| {
            let time = chrono::NaiveTime::parse_from_str(l.get(..12)?, "%H:%M:%S%.3f").ok()?;
            Some((moment.date_naive().and_time(time).and_utc(), l.to_string()))
        });
        let (after, before): (Vec<_>, Vec<_>) = stamped.partition(|(at, _)| *at > moment);
        (
            before.into_iter().map(|(_, l)| l).collect(),
            after.into_iter().map(|(_, l)| l).collect(),
        )
    };
    let commands = &player.state().view.runs[d2].commands;
    let newest = commands.last().map(|c| c.label);
    let written_on = commands
        .iter()
        .filter(|c| Some(c.label) == newest)
        .find(|c| {
            let (earlier, after) = later(&c.stderr);
            !earlier.is_empty() && !after.is_empty()
        })
        .expect("a D2 log written on after the moment")
        .clone();
    player.state_mut().ui.log_pick = Some(faultline::tui::logs::LogPick {
        iteration: None,
        name: written_on.name.clone(),
        stream: faultline::tui::logs::Stream::Stderr,
    });
    let shown = screen(player.state());
    let (earlier, after) = later(&written_on.stderr);
    for line in &after {
        assert!(
            !shown.contains(line.get(..15).unwrap_or(line)),
            "{line} (after {moment}) is shown:\n{shown}"
        );
    }
    let last = earlier.last().and_then(|l| l.get(..15)).unwrap_or_default();
    assert!(shown.contains(last), "{last} is not shown:\n{shown}");
    player.state_mut().ui.log_pick = None;

    // Back by scenario, past D1's verdict: D1 is running again.
    let mut steps = 0;
    while player.state().view.runs[d1].decided.is_some() {
        player.step(Stride::Scenario, false);
        steps += 1;
        assert!(steps < 50, "never got back before D1's verdict");
    }
    assert_eq!(player.state().view.active, Some(d1), "D1 runs again");
    assert!(screen(player.state()).contains("replay "));

    // Record by record back and forth lands on the same state.
    let here = player.position().0;
    let view = player.state().view.clone();
    player.step(Stride::Record, true);
    player.step(Stride::Record, false);
    assert_eq!(player.position().0, here);
    assert_eq!(player.state().view, view);

    // The real command in a real terminal, stepped and left: nothing written.
    if tmux::available("replay in a terminal") {
        let command = format!(
            "{} replay {}",
            env!("CARGO_BIN_EXE_faultline"),
            session.display()
        );
        let term = Tmux::start("replay", &command);
        term.wait_for("replay 0/", Duration::from_secs(20));
        for _ in 0..200 {
            if term.screen().contains("holding pause-n3") {
                break;
            }
            term.send(&["]"]);
            std::thread::sleep(Duration::from_millis(50));
        }
        term.wait_for("holding pause-n3", Duration::from_secs(10));
        term.send(&["q"]);
    }
    assert!(
        contents(&session) == before,
        "replay changed the session directory"
    );
}

/// `from` copied to `to`: its directories and regular files.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let kind = entry.file_type().expect("file type");
        let into = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &into);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &into).expect("copy");
        }
    }
}

/// Steps `player` forward by fault until D2's pause of n3 is held, with n3's stderr
/// log picked in the pane; that log's path as journaled.
fn at_d2_pause(player: &mut Player) -> PathBuf {
    let mut steps = 0;
    while !screen(player.state()).contains("holding pause-n3") {
        player.step(Stride::Fault, true);
        steps += 1;
        assert!(steps < 200, "never reached D2's fault window");
    }
    let d2 = row_of(player.state(), "D2");
    player.state_mut().ui.selected = d2;
    player.state_mut().ui.log_pick = Some(faultline::tui::logs::LogPick {
        iteration: None,
        name: "n3".into(),
        stream: faultline::tui::logs::Stream::Stderr,
    });
    let commands = &player.state().view.runs[d2].commands;
    let newest = commands.last().map(|c| c.label);
    commands
        .iter()
        .rev()
        .find(|c| c.name == "n3" && Some(c.label) == newest)
        .expect("D2's n3")
        .stderr
        .clone()
}

/// The screen drawn on a thread of its own: a read that blocks (a fifo) fails the
/// test instead of hanging it.
fn screen_within(state: &AppState, limit: Duration) -> String {
    let state = state.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(screen(&state));
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("drawing took more than {limit:?}: blocked on a read"))
}

/// A copied session replays its own logs and history, not the original's (which
/// still exists), and never reads through a symlink, a fifo or a path its journal
/// names outside it: the pane says why instead.
#[test]
fn a_copied_session_replays_its_own_files_and_nothing_outside_it() {
    let session = common::session_of(&common::demo_run().out);
    let before = contents(&session);
    let tmp = tempfile::tempdir().expect("tempdir");
    let copy = tmp.path().join("copy");
    copy_dir(&session, &copy);
    let secret = tmp.path().join("secret.txt");
    std::fs::write(&secret, "03:00:00.000 SECRET-LINE\n").expect("secret");

    let (plan, records) = replay::open(&copy).expect("the copy opens");
    let mut player = replay::player(&copy, AppState::new(plan.clone()), records.clone());
    let journaled = at_d2_pause(&mut player);
    let rel = journaled
        .strip_prefix(&session)
        .expect("the journal names logs under the session")
        .to_path_buf();
    let n3 = copy.join(&rel);
    // The copy's log, marked: each stamped line says COPY after its stamp.
    let text = std::fs::read_to_string(&n3).expect("n3's log");
    let marked: String = text
        .lines()
        .map(|l| match (l.get(..12), l.get(12..)) {
            (Some(stamp), Some(rest)) if stamp.contains(':') => format!("{stamp} COPY{rest}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&n3, marked).expect("mark the copy's log");
    let shown = screen(player.state());
    assert!(
        shown.contains(" COPY"),
        "the copy's own log is shown:\n{shown}"
    );
    assert!(
        player
            .state()
            .html_report()
            .is_some_and(|h| h.starts_with(&copy.display().to_string())),
        "{:?}",
        player.state().html_report()
    );

    // The chart is the copy's history: gone from the copy, it is gone from the
    // chart, said in words that fit (cut at a word, never mid-word).
    let d2 = row_of(player.state(), "D2");
    assert!(
        player
            .state()
            .chart
            .as_ref()
            .is_some_and(|c| c.row == d2 && c.series.is_ok()),
        "the copy's history charts"
    );
    for label in &player.state().view.runs[d2].labels {
        let _ = std::fs::remove_file(copy.join(format!("artifacts/D2/{label}/history.jsonl")));
    }
    player.step(Stride::Record, true);
    player.step(Stride::Record, false);
    let series = player.state().chart.clone().expect("D2's chart").series;
    assert!(
        series.as_ref().is_err_and(|e| e.contains("No such file")),
        "{series:?}"
    );
    let theme = faultline::tui::app::theme("dark").expect("theme");
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    terminal
        .draw(|frame| faultline::tui::view::draw(frame, player.state(), &theme))
        .expect("draw");
    let narrow: String = (0..24u16)
        .map(|y| {
            let row: String = (0..80u16)
                .map(|x| terminal.backend().buffer()[(x, y)].symbol().to_string())
                .collect();
            row + "\n"
        })
        .collect();
    let said = narrow
        .lines()
        .find(|l| l.contains("history not readable"))
        .unwrap_or_else(|| panic!("the chart says why:\n{narrow}"));
    assert!(
        said.contains("No such file or directory") || said.contains('…'),
        "cut mid-word: {said}"
    );
    assert!(!said.contains("direct│"), "cut mid-word: {said}");

    // A symlink in its place is not followed.
    std::fs::remove_file(&n3).expect("rm");
    std::os::unix::fs::symlink(&secret, &n3).expect("symlink");
    let shown = screen_within(player.state(), Duration::from_secs(10));
    assert!(!shown.contains("SECRET"), "followed a symlink:\n{shown}");
    assert!(shown.contains("cannot read"), "{shown}");

    // A fifo in its place does not block the draw.
    std::fs::remove_file(&n3).expect("rm");
    nix::unistd::mkfifo(
        &n3,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
    )
    .expect("mkfifo");
    let shown = screen_within(player.state(), Duration::from_secs(10));
    assert!(shown.contains("cannot read"), "{shown}");

    // A journal naming a log outside its session directory (or leaving it by `..`)
    // is refused, and says so.
    for outside in [
        secret.display().to_string(),
        format!("{}/logs/../../secret.txt", session.display()),
    ] {
        let mut forged = records.clone();
        for r in &mut forged {
            if let Event::CommandStarted(c) = &mut r.event
                && Path::new(&c.log) == journaled
            {
                c.log.clone_from(&outside);
            }
        }
        let mut player = replay::player(&copy, AppState::new(plan.clone()), forged);
        at_d2_pause(&mut player);
        let shown = screen_within(player.state(), Duration::from_secs(10));
        assert!(!shown.contains("SECRET"), "read {outside}:\n{shown}");
        assert!(
            shown.contains("outside the session"),
            "{outside} refused in words:\n{shown}"
        );
    }
    assert!(contents(&session) == before, "the original changed");
}
