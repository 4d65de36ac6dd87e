//! The TUI drawn from a recorded demo journal (tests/fixtures/journal/demo.jsonl,
//! log paths rewritten to tests/fixtures/journal/demo-session) at 80x24 and 160x48.

use faultline::engine::operator::{Question, QuestionKind};
use faultline::journal::{Record, Scope};
use faultline::tui::keymap::{Action, KEYMAP, action_for};
use faultline::tui::state::{AppState, Step};
use faultline::tui::theme::Theme;
use faultline::tui::view::{choices, draw, tail};
use faultline::verdict::Verdict;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use serde_json::{Value, json};

fn plan() -> faultline::plan::Plan {
    faultline::plan::parse_plan(
        "examples/demo/plan.md",
        include_str!("../examples/demo/plan.md"),
    )
}

fn demo_state() -> AppState {
    let mut state = AppState::new(plan());
    for line in include_str!("fixtures/journal/demo.jsonl").lines() {
        let record: Record = serde_json::from_str(line).expect("fixture record");
        state.apply(&record);
    }
    state
}

fn dark() -> Theme {
    Theme::by_name("dark").expect("dark theme")
}

fn render(state: &AppState, theme: &Theme, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal
        .draw(|frame| draw(frame, state, theme))
        .expect("draw");
    terminal.backend().buffer().clone()
}

fn text(buffer: &Buffer) -> String {
    let width = usize::from(buffer.area.width);
    buffer
        .content
        .chunks(width)
        .map(|row| {
            row.iter()
                .map(|c| c.symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Times and temporary paths vary from run to run.
fn scrub(text: &str) -> String {
    let time = regex::Regex::new(r"\d\d:\d\d:\d\d(\.\d+)?").expect("regex");
    let tmp = regex::Regex::new(r"/tmp/[^\s│|]*").expect("regex");
    let pid = regex::Regex::new(r"pid \d+").expect("regex");
    let text = time.replace_all(text, "HH:MM:SS");
    let text = tmp.replace_all(&text, "<tmp>");
    pid.replace_all(&text, "pid <n>").into_owned()
}

fn record(kind: &str, scenario: &str, arm: Option<&str>, data: Value) -> Record {
    Record {
        seq: 1,
        ts: String::new(),
        scope: Scope {
            scenario: (!scenario.is_empty()).then(|| scenario.to_string()),
            arm: arm.map(str::to_string),
        },
        kind: kind.to_string(),
        data,
    }
}

fn select(state: &mut AppState, id: &str) {
    state.ui.selected = state.runs.iter().position(|r| r.id == id).expect("row");
}

#[test]
fn every_step_at_both_sizes() {
    let theme = dark();
    let mut state = demo_state();
    assert_eq!(state.current, Step::Report);
    assert_eq!(state.session_verdict.as_deref(), Some("FAIL"));
    state.report_text = Some(
        "# Report\n\nD3 FAIL-reproducible: acknowledged writes lost after a pause.\n".to_string(),
    );
    select(&mut state, "D3");
    state.ui.reasons = true;
    for step in Step::ALL {
        state.ui.step = step;
        for (w, h) in [(80, 24), (160, 48)] {
            let shown = scrub(&text(&render(&state, &theme, w, h)));
            insta::assert_snapshot!(format!("{}_{w}x{h}", step.title().to_lowercase()), shown);
        }
    }
}

#[test]
fn a_badge_for_each_of_the_ten_verdicts() {
    let theme = dark();
    let mut state = AppState::new(plan());
    for (i, v) in Verdict::ALL.iter().enumerate() {
        state.apply(&record(
            "verdict",
            "X",
            Some(&format!("X/a{i}")),
            json!({"id": format!("X/a{i}"), "verdict": v, "reasons": []}),
        ));
    }
    state.ui.step = Step::Run;
    let shown = text(&render(&state, &theme, 160, 48));
    for v in Verdict::ALL {
        assert!(
            shown.contains(&format!("[{}]", v.as_str())),
            "{v} missing:\n{shown}"
        );
    }
}

#[test]
fn the_checklist_highlights_a_mismatch() {
    let theme = dark();
    let mut state = AppState::new(plan());
    let answer = json!({"question": "capability.docker", "answer": "have", "by": "test"});
    state.apply(&record("operator-answer", "", None, answer));
    let probe = json!({"need": "docker daemon", "capability": "docker", "present": false, "saw": "no socket"});
    state.apply(&record("capability", "", None, probe));
    let disagree = json!({"capability": "docker", "operator": "have", "probe_present": false});
    state.apply(&record("capability-disagreement", "", None, disagree));
    state.ui.step = Step::Checklist;
    let buffer = render(&state, &theme, 80, 24);
    let shown = text(&buffer);
    let y = shown
        .lines()
        .position(|l| l.contains("docker daemon"))
        .expect("row drawn");
    let line = shown.lines().nth(y).unwrap_or_default();
    let x = line.find("docker").expect("cell");
    let column = line[..x].chars().count();
    let cell = &buffer[(
        u16::try_from(column).unwrap_or(0),
        u16::try_from(y).unwrap_or(0),
    )];
    assert_eq!(cell.symbol(), "d");
    assert_eq!(cell.bg, theme.mismatch.bg.expect("mismatch background"));
    let plain = shown
        .lines()
        .position(|l| l.contains("Capability checklist"))
        .unwrap_or(0);
    assert_ne!(
        buffer[(1, u16::try_from(plain + 1).unwrap_or(0))].bg,
        cell.bg
    );
}

#[test]
fn d3_shows_its_reason_chain() {
    let mut state = demo_state();
    state.ui.step = Step::Finding;
    let shown = text(&render(&state, &dark(), 160, 48));
    assert!(
        shown.contains("did a re-run with the same seed reproduce it?"),
        "{shown}"
    );
    state.ui.step = Step::Run;
    select(&mut state, "D3");
    state.handle(Action::ShowReasons);
    let shown = text(&render(&state, &dark(), 160, 48));
    assert!(
        shown.contains("did a re-run with the same seed reproduce it?"),
        "{shown}"
    );
}

#[test]
fn a_search_highlights_its_matches_in_the_pane() {
    let theme = dark();
    let mut state = demo_state();
    state.ui.step = Step::Run;
    select(&mut state, "D3");
    state.ui.search = Some("listening".to_string());
    let buffer = render(&state, &theme, 160, 48);
    let shown = text(&buffer);
    let y = shown
        .lines()
        .position(|l| l.contains("listening"))
        .expect("match drawn");
    let x = shown
        .lines()
        .nth(y)
        .and_then(|l| l.find("listening"))
        .expect("match");
    // Columns count characters, not bytes: the line starts with box drawing.
    let column = shown.lines().nth(y).map_or(0, |l| l[..x].chars().count());
    let cell = &buffer[(
        u16::try_from(column).unwrap_or(0),
        u16::try_from(y).unwrap_or(0),
    )];
    assert_eq!(cell.bg, theme.highlight.bg.expect("highlight background"));
    assert!(
        shown.contains("/listening"),
        "the status line shows the query"
    );
}

#[test]
fn the_help_overlay_lists_every_keymap_entry() {
    let mut state = demo_state();
    state.handle(Action::Help);
    let small = scrub(&text(&render(&state, &dark(), 80, 24)));
    insta::assert_snapshot!("help_80x24", small);
    let shown = text(&render(&state, &dark(), 160, 48));
    for b in KEYMAP {
        let line = shown
            .lines()
            .find(|l| l.contains(b.help) && l.split([' ', '│']).any(|word| word == b.key));
        assert!(line.is_some(), "{} / {} missing:\n{shown}", b.key, b.help);
        let event = crossterm::event::KeyEvent::new(b.code, b.modifiers);
        assert_eq!(action_for(&event), Some(b.action));
    }
}

#[test]
fn hostile_log_text_never_reaches_the_buffer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("n1.stderr.log");
    let hostile = "before \u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m after\n";
    std::fs::write(&log, hostile).expect("write log");
    let mut state = AppState::new(plan());
    let started =
        json!({"name": "n1", "command": "x", "pgid": 1, "log": log.display().to_string()});
    state.apply(&record("command-started", "D1", None, started));
    state.ui.step = Step::Run;
    select(&mut state, "D1");
    for (w, h) in [(80, 24), (160, 48)] {
        let buffer = render(&state, &dark(), w, h);
        let shown = text(&buffer);
        assert!(shown.contains("before"), "{shown}");
        assert!(!shown.contains('\u{1b}') && !shown.contains('\u{9b}') && !shown.contains('\u{7}'));
        assert!(!shown.contains("pwned"));
    }
    // The C1 CSI takes its parameters with it.
    assert_eq!(tail(&log, 64 * 1024), vec!["before  after".to_string()]);
}

#[test]
fn a_pending_question_is_an_overlay_with_its_choices() {
    let mut state = demo_state();
    state.ui.step = Step::Approvals;
    state.ask(Question {
        id: "install.libfaketime".to_string(),
        kind: QuestionKind::ApproveChange,
        prompt: "run `apt-get install -y libfaketime`?".to_string(),
        default: "decline".to_string(),
    });
    for (w, h) in [(80, 24), (160, 48)] {
        let shown = text(&render(&state, &dark(), w, h));
        assert!(shown.contains("apt-get install -y libfaketime"), "{shown}");
        assert!(shown.contains(&choices(QuestionKind::ApproveChange).join(" / ")));
        insta::assert_snapshot!(format!("question_{w}x{h}"), scrub(&shown));
    }
    state.answered();
    assert!(state.pending.is_none());
}

#[test]
fn tiny_terminals_and_ascii_do_not_panic() {
    let mut state = demo_state();
    let ascii = Theme::select("light", false, false).expect("theme");
    let mono = Theme::select("high-contrast", true, true).expect("theme");
    state.handle(Action::Help);
    for step in Step::ALL {
        state.ui.step = step;
        for (w, h) in [(1, 1), (20, 5), (80, 24)] {
            let shown = text(&render(&state, &ascii, w, h));
            let bar = shown.lines().next().unwrap_or_default();
            assert!(bar.is_ascii(), "non-ASCII step bar at {w}x{h}: {bar}");
            render(&state, &mono, w, h);
        }
    }
}
