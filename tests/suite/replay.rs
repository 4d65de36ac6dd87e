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
    let _slot = common::demo_lock();
    let session = common::session_of(&common::demo_run().out);
    let before = contents(&session);

    let (plan, records) = replay::open(&session).expect("the demo session opens");
    let total = records.len();
    let mut player = Player::new(AppState::new(plan), records);
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
