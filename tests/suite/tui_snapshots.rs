//! The TUI drawn from a recorded demo journal (tests/fixtures/journal/demo.jsonl,
//! log paths rewritten to tests/fixtures/journal/demo-session) at 80x24 and 160x48.

use faultline::session::journal::{Record, Scope};
use faultline::session::operator::{Question, QuestionKind};
use faultline::tui::keymap::Action;
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
        include_str!("../../examples/demo/plan.md"),
    )
}

fn demo_state() -> AppState {
    let mut state = AppState::new(plan());
    for line in include_str!("../fixtures/journal/demo.jsonl").lines() {
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

pub(crate) fn text(buffer: &Buffer) -> String {
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
        event: faultline::session::event::Event::from_parts(kind.to_string(), data),
    }
}

fn select(state: &mut AppState, id: &str) {
    state.ui.selected = state
        .view
        .runs
        .iter()
        .position(|r| r.id == id)
        .expect("row");
}

#[test]
fn every_step_at_both_sizes() {
    let theme = dark();
    let mut state = demo_state();
    assert_eq!(state.view.reached, Step::Report);
    assert_eq!(state.view.session_verdict.as_deref(), Some("FAIL"));
    state.report_text = Some(
        "# Report\n\nD3 FAIL-reproducible: acknowledged writes lost after a pause.\n".to_string(),
    );
    select(&mut state, "D3");
    // What the UI's refresh tick reads for the live chart before a frame is drawn.
    faultline::tui::view::refresh_chart(&mut state);
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
    // A replay's keys are listed only in a replay, where they are listed first.
    let mut replay = state.clone();
    replay.replaying = true;
    let in_replay = text(&render(&replay, &dark(), 160, 48));
    insta::assert_snapshot!(
        "help_replay_80x24",
        scrub(&text(&render(&replay, &dark(), 80, 24)))
    );
    for (chord, action) in state.keymap.bindings() {
        let key = chord.to_string();
        let listed = |shown: &str| {
            shown
                .lines()
                .any(|l| l.contains(action.help()) && l.split([' ', '│']).any(|word| word == key))
        };
        let event = crossterm::event::KeyEvent::new(chord.code, chord.modifiers);
        if action.is_replay() {
            assert!(!listed(&shown), "{key} listed outside a replay:\n{shown}");
            assert!(
                listed(&in_replay),
                "{key} / {} missing:\n{in_replay}",
                action.help()
            );
            assert_eq!(state.keymap.replay_action_for(&event), Some(*action));
            assert_eq!(state.keymap.action_for(&event), None);
            continue;
        }
        assert!(
            listed(&shown),
            "{key} / {} missing:\n{shown}",
            action.help()
        );
        assert_eq!(state.keymap.action_for(&event), Some(*action));
    }
}

/// Toolbox and Checklist cells too long for their column end in an ellipsis at a
/// word (`...` without UTF-8), a path with its end kept; a log line wider than the
/// Run pane the same.
#[test]
fn long_cells_and_log_lines_end_in_an_ellipsis_at_a_word() {
    let mut state = AppState::new(plan());
    state.apply(&record(
        "toolbox-item",
        "",
        None,
        json!({
            "role": "sut-binary",
            "kind": "binary",
            "name": "redis-server",
            "path": "/opt/vendor/redis/7.2.4/installed/bin/redis-server",
            "evidence": "version 7.2.4 from redis-server --version, built with jemalloc and TLS support",
        }),
    ));
    let answer =
        json!({"question": "capability.docker", "answer": "have it on every node", "by": "test"});
    state.apply(&record("operator-answer", "", None, answer));
    let probe = json!({
        "need": "docker daemon reachable from the test runner for the partition nemesis",
        "capability": "docker",
        "present": false,
        "saw": "no socket at /var/run/docker.sock and DOCKER_HOST is not set",
    });
    state.apply(&record("capability", "", None, probe));
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("n1.stderr.log");
    std::fs::write(
        &log,
        "03:00:01.000 n1 replicated write k1-17 to n2 and n3 after waiting for both followers to acknowledge it\n",
    )
    .expect("log");
    let started =
        json!({"name": "n1", "command": "x", "pgid": 1, "log": log.display().to_string()});
    state.apply(&record("command-started", "D1", None, started));
    select(&mut state, "D1");
    let ascii = Theme::select("light", false, false).expect("theme");
    for (step, name) in [
        (Step::Toolbox, "toolbox_long"),
        (Step::Checklist, "checklist_long"),
    ] {
        state.ui.step = step;
        let shown = scrub(&text(&render(&state, &dark(), 80, 24)));
        assert!(shown.contains('…'), "{shown}");
        insta::assert_snapshot!(format!("{name}_80x24"), shown);
        let plain = text(&render(&state, &ascii, 80, 24));
        assert!(plain.contains("...") && !plain.contains('…'), "{plain}");
    }
    state.ui.step = Step::Run;
    let shown = text(&render(&state, &dark(), 80, 24));
    let row = shown
        .lines()
        .find(|l| l.contains("n1 replicated"))
        .unwrap_or_else(|| panic!("the log line:\n{shown}"));
    let cut = row
        .split('│')
        .find(|c| c.contains("n1 replicated"))
        .unwrap_or_default();
    assert!(cut.trim_end().ends_with('…'), "cut with an ellipsis: {row}");
    let before = cut.trim_end().trim_end_matches('…');
    assert!(
        "03:00:01.000 n1 replicated write k1-17 to n2 and n3 after waiting for both followers to acknowledge it"
            .split(' ')
            .any(|w| before.ends_with(&format!(" {w}"))),
        "cut at a word: {row}"
    );
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
    let question = Question {
        id: "install.libfaketime".to_string(),
        kind: QuestionKind::ApproveChange,
        prompt: "run `apt-get install -y libfaketime`?".to_string(),
        choices: faultline::engine::preflight::install_choices(),
        default: "decline".to_string(),
        editable: Some("apt-get install -y libfaketime".to_string()),
        ..Question::default()
    };
    state.ask(question.clone());
    for (w, h) in [(80, 24), (160, 48)] {
        let shown = text(&render(&state, &dark(), w, h));
        assert!(shown.contains("apt-get install -y libfaketime"), "{shown}");
        assert!(shown.contains("Ctrl-E"), "{shown}");
        for label in choices(&question) {
            assert!(shown.contains(&label), "{label} missing:\n{shown}");
        }
        insta::assert_snapshot!(format!("question_{w}x{h}"), scrub(&shown));
    }
    state.answered();
    assert!(state.pending.is_none());
}

#[test]
fn a_privileged_approval_is_asked_with_its_actions_and_listed_once_given() {
    let mut state = AppState::new(plan());
    state.ui.step = Step::Approvals;
    let actions = vec!["cut: 1 DROP rule(s) in network namespace `b` (iptables -w -t filter -I INPUT 1 -p tcp --dport 7000 -j DROP)".to_string()];
    let question = faultline::engine::privileged::question("D2", &actions);
    state.ask(question.clone());
    let shown = text(&render(&state, &dark(), 160, 48));
    assert!(
        shown.contains("waiting for approval: privileged.D2"),
        "{shown}"
    );
    assert!(shown.contains("--dport 7000"), "{shown}");
    assert!(
        shown.contains("1 approve") && shown.contains("▶ 2 decline (default)"),
        "{shown}"
    );
    assert_eq!(choices(&question), vec!["approve", "decline"]);
    insta::assert_snapshot!("privileged_question_160x48", scrub(&shown));
    state.answered();
    let data = json!({"scenario": "D2", "actions": actions, "by": "alice@host on /dev/pts/1"});
    state.apply(&record("privileged-approved", "", None, data));
    let shown = text(&render(&state, &dark(), 160, 48));
    let row = shown
        .lines()
        .find(|l| l.contains("privileged D2"))
        .unwrap_or_else(|| panic!("no approval row:\n{shown}"));
    assert!(row.contains("approved"), "{row}");
    assert!(row.contains("by alice@host"), "{row}");
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

#[test]
fn a_fail_is_classified_on_the_finding_screen_with_the_blame_tells() {
    let mut state = demo_state();
    state.ui.step = Step::Run;
    let questions = faultline::engine::driver::classification_questions("D3", true);
    state.ask(questions[0].clone());
    assert_eq!(
        state.ui.step,
        Step::Finding,
        "the classification moves to Finding"
    );
    assert_eq!(state.selected_run().map(|r| r.id.as_str()), Some("D3"));
    for (w, h) in [(80, 24), (160, 48)] {
        let shown = text(&render(&state, &dark(), w, h));
        assert!(
            shown.contains("survives swapping the workload generator"),
            "{shown}"
        );
        assert!(shown.contains("pending re-run on alternative"), "{shown}");
        insta::assert_snapshot!(format!("classify_{w}x{h}"), scrub(&shown));
    }
    let root_cause = questions
        .iter()
        .find(|q| q.id == "D3.root-cause")
        .expect("root cause asked");
    state.ask(root_cause.clone());
    for c in "lost on\nfailover".chars() {
        let code = if c == '\n' {
            crossterm::event::KeyCode::Enter
        } else {
            crossterm::event::KeyCode::Char(c)
        };
        let key = crossterm::event::KeyEvent::new(code, crossterm::event::KeyModifiers::NONE);
        assert_eq!(
            faultline::tui::answer::key(&mut state, key),
            faultline::tui::answer::Typed::Nothing
        );
    }
    let shown = text(&render(&state, &dark(), 160, 48));
    assert!(
        shown.contains("lost on") && shown.contains("failover"),
        "{shown}"
    );
    assert!(shown.contains("Ctrl-S sends"), "{shown}");
}

#[test]
fn the_evidence_of_a_verdict_is_one_key_away() {
    let mut state = demo_state();
    state.view.session_dir = Some("/sessions/demo/20261201".into());
    state.ui.step = Step::Report;
    select(&mut state, "D3");
    state.handle(Action::Evidence);
    for (w, h) in [(80, 24), (160, 48)] {
        let shown = text(&render(&state, &dark(), w, h));
        insta::assert_snapshot!(format!("evidence_{w}x{h}"), scrub(&shown));
    }
    let shown = text(&render(&state, &dark(), 160, 48));
    assert!(
        shown.contains("/sessions/demo/20261201/findings/D3.md"),
        "{shown}"
    );
    assert!(
        shown.contains("/sessions/demo/20261201/artifacts/D3/seed-1/history.jsonl"),
        "{shown}"
    );
    assert!(shown.contains("oracle-result"), "{shown}");
    state.handle(Action::Close);
    assert!(!state.ui.evidence);
    // On Report the arrows pick a verdict; Tab hands them to the report text.
    state.handle(Action::Down);
    assert_eq!(state.selected_run().map(|r| r.id.as_str()), Some("D4"));
    state.handle(Action::NextPane);
    state.handle(Action::Down);
    assert_eq!(state.ui.scroll, 1);
}

#[test]
fn a_handed_back_plan_lists_what_stops_the_run() {
    let text_of_plan = include_str!("../../examples/demo/plan.md");
    let broken = regex::Regex::new(r"(?m)^- \*\*Oracle:\*\*.*$")
        .expect("regex")
        .replace(text_of_plan, "- **Oracle:** looks fine to me");
    let plan = faultline::plan::parse_plan("plan.md", &broken);
    let state = AppState::new(plan);
    assert!(state.handed_back);
    for (w, h) in [(80, 24), (160, 48)] {
        let shown = text(&render(&state, &dark(), w, h));
        assert!(shown.contains("Handed back"), "{shown}");
        insta::assert_snapshot!(format!("hand_back_{w}x{h}"), scrub(&shown));
    }
}

#[test]
fn the_picker_lists_the_plans_and_enter_picks_one() {
    use faultline::tui::picker::{Picked, Picker, draw as draw_picker};
    let found = vec![
        faultline::plan::discover::Found {
            path: "/repo/docs/testing-plans/raft.md".into(),
            title: "Test Plan: Raft log".into(),
        },
        faultline::plan::discover::Found {
            path: "/repo/notes/kv.md".into(),
            title: "Test Plan: KV".into(),
        },
    ];
    let mut picker = Picker {
        sut: "/repo".into(),
        found,
        selected: 0,
    };
    assert_eq!(
        picker.key(crossterm::event::KeyCode::Char('j'), Some(Action::Down)),
        Picked::Pending
    );
    for (w, h) in [(80, 24), (160, 48)] {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        terminal
            .draw(|frame| draw_picker(frame, &picker, &dark()))
            .expect("draw");
        let shown = text(terminal.backend().buffer());
        assert!(shown.contains("docs/testing-plans/raft.md"), "{shown}");
        insta::assert_snapshot!(format!("picker_{w}x{h}"), shown);
    }
    assert_eq!(
        picker.key(crossterm::event::KeyCode::Enter, None),
        Picked::Plan("/repo/notes/kv.md".into())
    );
}

#[test]
fn the_staged_diff_of_author_mode_scrolls_styled_and_sanitized() {
    let session = tempfile::tempdir().expect("tempdir");
    let diff = session.path().join("artifacts/author/staged.diff");
    std::fs::create_dir_all(diff.parent().expect("parent")).expect("dirs");
    std::fs::write(
        &diff,
        "diff --git a/tests/kept_writes.rs b/tests/kept_writes.rs\n\
         new file mode 100644\nindex 0000000..1111111\n--- /dev/null\n\
         +++ b/tests/kept_writes.rs\n@@ -0,0 +1,4 @@\n\
         +// Provenance: written by faultline author mode\n\
         +fn writes_are_kept() {}\n\
         -// \u{1b}[2J\u{1b}]0;owned\u{7}gone\n \
         unchanged\n",
    )
    .expect("diff");
    let mut state = demo_state();
    // Before author mode staged anything there is no diff to open.
    state.handle(Action::StagedDiff);
    assert!(!state.ui.diff);
    state.view.session_dir = Some(session.path().to_path_buf());
    state.apply(&record(
        "author-staged",
        "",
        None,
        json!({"files": 1, "diff": "artifacts/author/staged.diff", "note": "staged"}),
    ));
    state.ui.step = Step::Run;
    state.handle(Action::StagedDiff);
    assert!(state.ui.diff);
    let theme = dark();
    for (w, h) in [(80, 24), (160, 48)] {
        let buffer = render(&state, &theme, w, h);
        let shown = text(&buffer);
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown}"
        );
        insta::assert_snapshot!(format!("staged_diff_{w}x{h}"), scrub(&shown));
    }
    let buffer = render(&state, &theme, 160, 48);
    let shown = text(&buffer);
    let style_of = |needle: &str| {
        let row = shown
            .lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("`{needle}` not shown:\n{shown}"));
        let column = shown
            .lines()
            .nth(row)
            .and_then(|l| l.find(needle))
            .unwrap_or(0);
        let x = u16::try_from(
            shown.lines().nth(row).unwrap_or("")[..column]
                .chars()
                .count(),
        )
        .expect("column");
        buffer[(x, u16::try_from(row).expect("row"))].fg
    };
    assert_eq!(
        style_of("+fn writes_are_kept"),
        theme.verdict(Verdict::PassHardening).fg.expect("colour")
    );
    assert_eq!(
        style_of("-// gone"),
        theme.verdict(Verdict::FailReproducible).fg.expect("colour")
    );
    assert_eq!(
        style_of("@@ -0,0 +1,4 @@"),
        theme.warning.fg.expect("colour")
    );
    assert!(shown.contains(" d diff "), "the status line offers it");
    state.handle(Action::Down);
    assert_eq!(state.ui.scroll, 1);
    let scrolled = text(&render(&state, &theme, 160, 48));
    assert!(!scrolled.contains("diff --git"), "{scrolled}");
    state.handle(Action::Close);
    assert!(!state.ui.diff);
    assert_eq!(state.ui.scroll, 0);
}

fn press(state: &mut AppState, code: crossterm::event::KeyCode) -> faultline::tui::answer::Typed {
    let key = crossterm::event::KeyEvent::new(code, crossterm::event::KeyModifiers::NONE);
    faultline::tui::answer::key(state, key)
}

/// The bug-type question asked while the operator reads the Run screen: an overlay.
fn asked_elsewhere() -> AppState {
    let mut state = demo_state();
    state.handle(Action::Jump(4));
    let questions = faultline::engine::driver::classification_questions("D3", true);
    state.ask(questions[1].clone());
    state
}

#[test]
fn a_question_offers_its_choices_as_a_list_with_the_default_picked() {
    let mut state = asked_elsewhere();
    assert_eq!(
        state.ui.step,
        Step::Run,
        "the question did not move the screen"
    );
    let shown = text(&render(&state, &dark(), 80, 24));
    let picked = shown
        .lines()
        .find(|l| l.contains('▶') && l.contains("unknown"))
        .unwrap_or_else(|| panic!("the default is not highlighted:\n{shown}"));
    assert!(picked.contains("(default)"), "{picked}");
    for label in ["timing", "crash-recovery", "performance"] {
        assert!(shown.contains(label), "{label}:\n{shown}");
    }
    insta::assert_snapshot!("question_list_80x24", scrub(&shown));
    // Up from the default (the last) highlights the one above it, and Enter sends it.
    press(&mut state, crossterm::event::KeyCode::Up);
    let shown = text(&render(&state, &dark(), 80, 24));
    assert!(shown.contains("▶ 8 performance"), "{shown}");
    assert_eq!(
        press(&mut state, crossterm::event::KeyCode::Enter),
        faultline::tui::answer::Typed::Send("performance".into())
    );
}

#[test]
fn an_invalid_answer_is_refused_with_the_allowed_ones_shown() {
    let mut state = asked_elsewhere();
    for c in "threads".chars() {
        press(&mut state, crossterm::event::KeyCode::Char(c));
    }
    assert_eq!(
        press(&mut state, crossterm::event::KeyCode::Enter),
        faultline::tui::answer::Typed::Nothing
    );
    assert!(state.pending.is_some(), "the question stays open");
    let shown = text(&render(&state, &dark(), 80, 24));
    assert!(
        shown.contains("refused: `threads` is not an answer"),
        "{shown}"
    );
    assert!(shown.contains("allowed: timing,"), "{shown}");
    insta::assert_snapshot!("question_refused_80x24", scrub(&shown));
}

#[test]
fn help_opens_over_a_question_and_closes_back_to_it() {
    let mut state = asked_elsewhere();
    let action = press(&mut state, crossterm::event::KeyCode::Char('?'));
    assert_eq!(action, faultline::tui::answer::Typed::Global(Action::Help));
    state.handle(Action::Help);
    let shown = text(&render(&state, &dark(), 80, 24));
    assert!(shown.contains("Keys"), "{shown}");
    assert!(shown.contains("answering a question"), "{shown}");
    assert!(
        shown.lines().all(|l| l.chars().count() <= 80),
        "fits 80 columns"
    );
    insta::assert_snapshot!("help_over_question_80x24", scrub(&shown));
    state.handle(Action::Close);
    let shown = text(&render(&state, &dark(), 80, 24));
    assert!(shown.contains("Question D3.bug-type"), "{shown}");
}

#[test]
fn the_help_pages_at_80x24() {
    let mut state = demo_state();
    state.handle(Action::Help);
    let first = text(&render(&state, &dark(), 80, 24));
    assert!(first.contains("PgDn: more"), "{first}");
    state.handle(Action::Bottom);
    let last = text(&render(&state, &dark(), 80, 24));
    assert!(last.contains("Ctrl-C"), "{last}");
    assert!(last.contains("PgUp: more"), "{last}");
    assert_ne!(first, last);
}

#[test]
fn the_evidence_overlay_scrolls_its_own_text_inside_the_body() {
    let mut state = demo_state();
    state.view.session_dir = Some("/sessions/demo/20261201".into());
    state.ui.step = Step::Report;
    select(&mut state, "D3");
    state.handle(Action::Evidence);
    let before = text(&render(&state, &dark(), 80, 24));
    assert!(before.contains("D3 [FAIL-reproducible]"), "{before}");
    state.handle(Action::ScrollDown);
    assert_eq!(state.selected_run().map(|r| r.id.as_str()), Some("D3"));
    let shown = text(&render(&state, &dark(), 80, 24));
    assert!(!shown.contains("D3 [FAIL-reproducible]"), "{shown}");
    let rows: Vec<&str> = shown.lines().collect();
    // One box: the body's first row opens it, its last row closes it, nothing beneath shows.
    assert!(rows[1].starts_with("╭ Evidence"), "{shown}");
    assert!(
        rows[22].starts_with('╰') && rows[22].ends_with('╯'),
        "{shown}"
    );
    for row in &rows[2..22] {
        assert!(row.starts_with('│') && row.ends_with('│'), "{row}");
        assert_eq!(row.matches('│').count(), 2, "{row}");
    }
    insta::assert_snapshot!("evidence_scrolled_80x24", scrub(&shown));
}

/// A report.md with a 7-column table like the real one's.
const REPORT: &str = "# Findings report: demo-kv-replication\n\nResult: FAIL\n\n## Verdicts\n\n\
| ID | Scenario | Verdict | Oracle | Oracle execution evidence | Nemesis landing evidence | Artifacts |\n\
|---|---|---|---|---|---|---|\n\
| D1 | leader pause keeps acknowledged writes | PASS-hardening | linearizable history | checked 199 of 199 ops | pause-n1 landed | [findings/D1.md](findings/D1.md) |\n\
| D3 | kill the primary mid-write | FAIL-reproducible | no acknowledged write lost | 19 anomalies: lost writes | kill-primary landed | [findings/D3.md](findings/D3.md) |\n\
\nD3 lost acknowledged writes after the primary was killed.\n";

#[test]
fn the_report_draws_its_tables_as_columns_and_searches_them() {
    let theme = dark();
    let mut state = demo_state();
    state.report_text = Some(REPORT.to_string());
    state.ui.step = Step::Report;
    let buffer = render(&state, &theme, 80, 24);
    let shown = text(&buffer);
    let row = shown
        .lines()
        .find(|l| l.contains("│D3 ") && l.contains(" │ "))
        .unwrap_or_else(|| panic!("the D3 row is one line:\n{shown}"));
    assert!(row.contains('…'), "cells are cut, not wrapped: {row}");
    assert!(!shown.contains("|---"), "{shown}");
    assert!(
        !shown.contains("# Verdicts") && shown.contains("Verdicts"),
        "{shown}"
    );
    insta::assert_snapshot!("report_table_80x24", scrub(&shown));
    // `/` then n: the match scrolls into view, highlighted.
    state.handle(Action::Search);
    for c in "acknowledged writes after".chars() {
        state.search_key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char(c),
            crossterm::event::KeyModifiers::NONE,
        ));
    }
    state.search_key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Enter,
        crossterm::event::KeyModifiers::NONE,
    ));
    let buffer = render(&state, &theme, 80, 24);
    let shown = text(&buffer);
    let y = shown
        .lines()
        .position(|l| l.contains("acknowledged writes after"))
        .unwrap_or_else(|| panic!("the match is shown:\n{shown}"));
    let line = shown.lines().nth(y).unwrap_or_default();
    let x = line[..line.find("acknowledged writes after").unwrap_or(0)]
        .chars()
        .count();
    let cell = &buffer[(u16::try_from(x).unwrap_or(0), u16::try_from(y).unwrap_or(0))];
    assert_eq!(cell.bg, theme.highlight.bg.expect("highlight background"));
    assert!(
        !shown.contains("Result: FAIL"),
        "scrolled to the match:\n{shown}"
    );
}

#[test]
fn an_unexplained_death_is_said_on_the_run_screen_and_the_status_line() {
    let theme = dark();
    let mut state = AppState::new(plan());
    for line in include_str!("../fixtures/journal/demo.jsonl")
        .lines()
        .take_while(|l| !l.contains("\"kind\":\"verdict\""))
    {
        let record: Record = serde_json::from_str(line).expect("fixture record");
        state.apply(&record);
    }
    let scope = state
        .view
        .runs
        .first()
        .map(|r| r.id.clone())
        .expect("a row");
    // Hostile bytes in the tail are the service's own: they never reach the buffer.
    state.apply(&record(
        "service-exited",
        &scope,
        None,
        serde_json::json!({
            "name": "n1", "pgid": 4242, "code": 3, "elapsed_ms": 120, "during": "start",
            "stderr_tail": ["cannot open data directory /var/lib/kv: permission denied\u{1b}[2J"],
        }),
    ));
    select(&mut state, &scope);
    state.ui.step = Step::Run;
    let shown = scrub(&text(&render(&state, &theme, 80, 24)));
    assert!(shown.contains("ended: "), "{shown}");
    assert!(shown.contains("n1 exited 3"), "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown}");
    insta::assert_snapshot!("run_service_died_80x24", shown);
}

#[test]
fn the_log_picker_lists_the_fault_target_first_and_its_seeds_one_level_down() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let theme = dark();
    // D2's seed 1 while pause-n3 is held (injected at #54, healed at #57).
    let mut state = AppState::new(plan());
    for line in include_str!("../fixtures/journal/demo.jsonl").lines() {
        let record: Record = serde_json::from_str(line).expect("fixture record");
        if record.seq > 56 {
            break;
        }
        state.apply(&record);
    }
    assert_eq!(state.ui.step, Step::Run, "following the session");
    state.handle(Action::PickLog);
    let shown = scrub(&text(&render(&state, &theme, 80, 24)));
    assert!(
        shown.contains("n3        stderr  fault target  shown"),
        "{shown}"
    );
    assert!(shown.contains("Esc: close"), "{shown}");
    insta::assert_snapshot!("log_picker_80x24", shown);
    // One level down: D3's seed and its re-run, the re-run shown.
    let mut state = demo_state();
    state.ui.step = Step::Run;
    select(&mut state, "D3");
    state.handle(Action::PickLog);
    assert!(state.log_picker_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE)));
    let shown = scrub(&text(&render(&state, &theme, 80, 24)));
    assert!(
        shown.contains("re-run of seed 1 (7 commands)  shown"),
        "{shown}"
    );
    insta::assert_snapshot!("log_picker_seeds_80x24", shown);
}

#[test]
fn typed_text_filters_the_choices_and_a_new_question_says_when_it_takes_keys() {
    let mut state = asked_elsewhere();
    for c in "p".chars() {
        press(&mut state, crossterm::event::KeyCode::Char(c));
    }
    let shown = text(&render(&state, &dark(), 80, 24));
    assert!(shown.contains("▶ 3 partition"), "{shown}");
    assert!(shown.contains("8 performance"), "{shown}");
    for hidden in ["1 timing", "4 crash-recovery", "5 upgrade"] {
        assert!(
            !shown.contains(hidden),
            "{hidden} is not filtered out:\n{shown}"
        );
    }
    // Just asked: the answer box is dimmed and says it is not ready yet.
    let mut state = asked_elsewhere();
    state.ui.settling = true;
    let shown = text(&render(&state, &dark(), 80, 24));
    assert!(shown.contains("answer: ready in a moment"), "{shown}");
    state.ui.settling = false;
    let shown = text(&render(&state, &dark(), 80, 24));
    assert!(!shown.contains("ready in"), "{shown}");
}

/// Alice attached as a viewer (the server's welcome says her role).
fn as_viewer(state: &mut AppState) {
    use faultline::session::event::{Participant, Role, Who};
    let who = |user: &str, role| Who {
        uid: 1000,
        user: user.to_string(),
        role,
        ..Who::default()
    };
    state.me = Some(who("alice", Role::Viewer));
    state.participants = vec![
        Participant {
            who: who("bob", Role::Owner),
            client: "tui".into(),
        },
        Participant {
            who: who("alice", Role::Viewer),
            client: "tui".into(),
        },
    ];
}

#[test]
fn a_viewer_sees_the_question_but_no_answer_box_and_is_told_they_watch() {
    let mut state = asked_elsewhere();
    as_viewer(&mut state);
    let shown = scrub(&text(&render(&state, &dark(), 80, 24)));
    let status = shown.lines().last().unwrap_or_default();
    assert!(status.contains("watching (viewer)"), "{status}");
    assert!(!shown.contains("waiting for you"), "{shown}");
    assert!(shown.contains("Question D3.bug-type"), "{shown}");
    assert!(
        shown.contains("crash-recovery"),
        "the choices show:\n{shown}"
    );
    // No answer box, no keys to answer with, no highlight to move.
    for invite in ["╭ answer", "Enter send", "↑↓", "▶ unknown", "9 unknown"] {
        assert!(
            !shown.contains(invite),
            "{invite} drawn for a viewer:\n{shown}"
        );
    }
    assert!(
        shown.contains("watching (viewer): the owner or an approver answers"),
        "{shown}"
    );
    insta::assert_snapshot!("viewer_question_80x24", shown);
    // The classification asked beside the finding: no answer box there either.
    let mut state = demo_state();
    as_viewer(&mut state);
    let questions = faultline::engine::driver::classification_questions("D3", true);
    state.ask(questions[0].clone());
    assert_eq!(state.ui.step, Step::Finding);
    let shown = text(&render(&state, &dark(), 80, 24));
    assert!(shown.contains("Question D3.blame"), "{shown}");
    assert!(
        !shown.contains("Enter send") && !shown.contains("╭ answer"),
        "{shown}"
    );
    assert!(shown.contains("watching (viewer)"), "{shown}");
}

/// Panics when `buffer` (drawn from `state` at 80x24) cuts a verdict name, or shows
/// a path or an allowed answer of `state` neither whole nor with an explicit
/// ellipsis. Wrapped text counts as whole: rows are read as one flow, spaces and
/// borders dropped.
fn assert_nothing_cut(state: &AppState, buffer: &Buffer, what: &str) {
    let shown = text(buffer);
    let names: Vec<&str> = Verdict::ALL.iter().map(|v| v.as_str()).collect();
    for row in shown.lines() {
        let chars: Vec<char> = row.chars().collect();
        let mut at = 0;
        while at < chars.len() {
            if !(chars[at].is_ascii_alphabetic() || chars[at] == '-') {
                at += 1;
                continue;
            }
            let start = at;
            while at < chars.len() && (chars[at].is_ascii_alphabetic() || chars[at] == '-') {
                at += 1;
            }
            let token: String = chars[start..at].iter().collect();
            let in_badge = start > 0 && chars[start - 1] == '[';
            let cut = !names.contains(&token.as_str())
                && (in_badge || token.contains('-'))
                && names.iter().any(|n| n.starts_with(&token));
            assert!(!cut, "{what}: verdict cut as `{token}` in: {row}\n{shown}");
        }
    }
    // The text as one flow, spaces dropped, with where each bordered stretch of a
    // row ends: wrapped text reads on across rows, a cut one stops at an end.
    let borders = ['│', '╭', '╮', '╰', '╯', '─'];
    let mut flow: Vec<char> = Vec::new();
    let mut ends = std::collections::HashSet::new();
    for row in shown.lines() {
        for stretch in row.split(|c| borders.contains(&c)) {
            let before = flow.len();
            flow.extend(stretch.chars().filter(|c| !c.is_whitespace()));
            if flow.len() > before {
                ends.insert(flow.len());
            }
        }
    }
    let mut needles: Vec<String> = state.html_report().into_iter().collect();
    for row in &state.view.runs {
        needles.extend(row.logs.iter().map(|l| l.display().to_string()));
    }
    if let Some(q) = &state.pending {
        needles.extend(choices(q));
        if let Some((_, allowed)) = q.error.as_deref().and_then(|e| e.split_once("allowed: ")) {
            needles.push(allowed.to_string());
        }
    }
    for needle in needles {
        let whole: Vec<char> = needle.chars().filter(|c| !c.is_whitespace()).collect();
        let n = whole.len();
        if n == 0 || flow.windows(n).any(|w| w == whole.as_slice()) {
            continue;
        }
        // A start of it (long enough to be it) that runs into the end of a stretch.
        for p in 0..flow.len() {
            let k = flow[p..]
                .iter()
                .zip(&whole)
                .take_while(|(a, b)| a == b)
                .count();
            assert!(
                k < n.min(12) || !ends.contains(&(p + k)),
                "{what}: `{needle}` cut without an ellipsis:\n{shown}"
            );
        }
    }
}

/// The demo's longest paths: a session directory as deep as a real one.
const SESSION: &str =
    "/home/operator/.local/state/faultline/sessions/demo-kv-replication/20261201T101112Z";

#[test]
fn every_screen_and_overlay_at_80x24_cuts_no_verdict_path_or_answer() {
    let theme = dark();
    let check = |state: &AppState, what: &str| {
        let buffer = render(state, &theme, 80, 24);
        assert_nothing_cut(state, &buffer, what);
        scrub(&text(&buffer))
    };
    let mut state = demo_state();
    state.report_text = Some(REPORT.to_string());
    select(&mut state, "D3");
    faultline::tui::view::refresh_chart(&mut state);
    state.ui.reasons = true;
    for step in Step::ALL {
        state.ui.step = step;
        check(&state, step.title());
    }
    state.handle(Action::Help);
    check(&state, "help");
    state.handle(Action::Close);
    state.view.session_dir = Some(SESSION.into());
    state.ui.step = Step::Report;
    let shown = check(&state, "report with a deep session directory");
    assert!(
        shown.contains("findings/report.html"),
        "the HTML report's path is shown:\n{shown}"
    );
    insta::assert_snapshot!("report_long_path_80x24", shown);
    state.handle(Action::Evidence);
    check(&state, "evidence");
    state.handle(Action::ScrollDown);
    check(&state, "evidence scrolled");
    state.handle(Action::Close);
    // A long notice and search: the status line ends in an ellipsis, never mid-word.
    state.ui.step = Step::Run;
    state.notice = Some(
        "the owner stopped waiting for D3.blame; the classification goes to the report as unknown"
            .to_string(),
    );
    let shown = check(&state, "status line");
    let status = shown.lines().last().unwrap_or_default();
    assert!(status.contains('…'), "{status}");
    state.notice = None;
    state.handle(Action::PickLog);
    check(&state, "log picker");

    // Every question the demo asks, over the screens they open on.
    for (i, question) in faultline::engine::driver::classification_questions("D3", true)
        .into_iter()
        .enumerate()
    {
        let mut inline = demo_state();
        inline.ask(question.clone());
        check(&inline, &format!("classify {i} inline"));
        let mut over = demo_state();
        over.handle(Action::Jump(4));
        over.ask(question);
        check(&over, &format!("classify {i} over the Run screen"));
    }
    let mut refused = asked_elsewhere();
    for c in "threads".chars() {
        press(&mut refused, crossterm::event::KeyCode::Char(c));
    }
    press(&mut refused, crossterm::event::KeyCode::Enter);
    check(&refused, "refused");
    as_viewer(&mut refused);
    check(&refused, "viewer");
}

#[test]
fn a_blame_question_over_the_run_screen_keeps_the_step_bar_and_status_line() {
    let mut state = demo_state();
    state.handle(Action::Jump(4));
    select(&mut state, "D8");
    let blame = faultline::engine::driver::classification_questions("D8", true)
        .into_iter()
        .next()
        .expect("blame asked");
    state.ask(blame);
    assert_eq!(state.ui.step, Step::Run, "asked over the Run screen");
    let buffer = render(&state, &dark(), 80, 24);
    assert_nothing_cut(&state, &buffer, "D8 blame");
    let shown = scrub(&text(&buffer));
    let rows: Vec<&str> = shown.lines().collect();
    assert!(rows[0].starts_with(" Plan "), "step bar kept:\n{shown}");
    assert!(
        rows[23].contains("waiting for you"),
        "status kept:\n{shown}"
    );
    // Whole width: no border of the screen beneath shows beside it.
    let top = rows
        .iter()
        .position(|r| r.starts_with("╭ Question D8.blame"))
        .unwrap_or_else(|| panic!("the question is drawn:\n{shown}"));
    assert!(top >= 1);
    // Every tell shows beside its choice, the highlighted one's whole.
    for tell in [
        "survives swapping",
        "vanishes with another",
        "known-good history",
    ] {
        assert!(shown.contains(tell), "{tell}:\n{shown}");
    }
    assert!(shown.contains("always allowed"), "{shown}");
    insta::assert_snapshot!("blame_overlay_80x24", shown);
}

#[test]
fn a_hand_back_of_many_problems_says_how_many_show_and_scrolls_with_the_arrows() {
    let text_of_plan = include_str!("../../examples/demo/plan.md");
    let broken = regex::Regex::new(r"(?m)^- \*\*Oracle:\*\*.*$")
        .expect("regex")
        .replace_all(
            text_of_plan,
            "- **Oracle:** looks fine to me, judging by the dashboards we watch during the run",
        );
    let plan = faultline::plan::parse_plan("plan.md", &broken);
    let mut state = AppState::new(plan);
    assert!(state.handed_back);
    let stops = state
        .problems
        .iter()
        .filter(|p| p.severity == faultline::plan::Severity::HandBack)
        .count();
    assert!(stops > 2, "{stops}");
    let buffer = render(&state, &dark(), 80, 24);
    assert_nothing_cut(&state, &buffer, "hand-back");
    let shown = scrub(&text(&buffer));
    assert!(
        shown.contains("1-") && shown.contains(&format!("of {stops} shown, ↓ for more")),
        "{shown}"
    );
    insta::assert_snapshot!("hand_back_many_80x24", shown);
    state.handle(Action::Down);
    state.handle(Action::Down);
    let shown = scrub(&text(&render(&state, &dark(), 80, 24)));
    assert!(!shown.contains("Handed back: 1-"), "moved on:\n{shown}");
}

/// D3's first seed running with its recorded history (two fault windows) and a note
/// alice (an approver) left 2.5 s into it, as the server journals it: session-wide.
fn noted_run() -> AppState {
    use faultline::session::event::{self, Event, OperatorNote, Role, Who};
    let mut state = AppState::new(plan());
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(crate::common::D3_HISTORY);
    let d3 = Scope {
        scenario: Some("D3".into()),
        arm: None,
    };
    let alice = Who {
        uid: 1001,
        user: "alice".into(),
        role: Role::Approver,
        ..Who::default()
    };
    let records = [
        (
            d3.clone(),
            "2026-12-03T03:00:00Z",
            Event::IterationStarted(event::IterationStarted {
                seed: 1,
                label: faultline::session::label::IterationLabel::seed(1),
                duration_ms: 4_000,
            }),
        ),
        (
            d3.clone(),
            "2026-12-03T03:00:00Z",
            Event::HistoryLive(event::HistoryLive {
                path: path.display().to_string(),
                fields: std::collections::BTreeMap::new(),
            }),
        ),
        // The workload half a second in: the chart's clock starts there.
        (
            d3.clone(),
            "2026-12-03T03:00:00.500Z",
            Event::CommandStarted(event::CommandStarted {
                name: "workload".into(),
                command: "fl-client".into(),
                pgid: 4242,
                // No log: the pane stays on the services'.
                ..Default::default()
            }),
        ),
        (
            d3.clone(),
            "2026-12-03T03:00:01Z",
            Event::FaultIntent(event::FaultIntent {
                fault: "pause-spare".into(),
                epoch: 1,
            }),
        ),
        (
            d3,
            "2026-12-03T03:00:01Z",
            Event::FaultIntent(event::FaultIntent {
                fault: "kill-primary".into(),
                epoch: 2,
            }),
        ),
        (
            Scope::default(),
            "2026-12-03T03:00:02.500Z",
            Event::OperatorNote(OperatorNote {
                text: "n2 stalls right after the kill: the client sees timeouts before the \
                       primary is gone\nsecond line"
                    .into(),
                who: alice.clone(),
                client: "tui".into(),
            }),
        ),
    ];
    for (seq, (scope, ts, event)) in records.into_iter().enumerate() {
        state.apply(&Record {
            seq: seq as u64 + 1,
            ts: ts.into(),
            scope,
            event,
        });
    }
    state.me = Some(alice);
    state.ui.step = Step::Run;
    faultline::tui::view::refresh_chart(&mut state);
    state
}

/// A note of the shown iteration: a mark on the chart's timeline at its time, and
/// the row's latest note in the chart's lower border, cut at a word.
#[test]
fn a_note_shows_on_the_run_screens_chart_at_80x24() {
    let state = noted_run();
    let note = state.view.notes.first().expect("the note folded in");
    assert_eq!(note.iteration_ms, Some(2_500));
    assert_eq!(
        state
            .view
            .runs
            .get(note.row.unwrap_or(usize::MAX))
            .map(|r| r.id.as_str()),
        Some("D3")
    );
    let shown = scrub(&text(&render(&state, &dark(), 80, 24)));
    let rows: Vec<&str> = shown.lines().collect();
    let timeline = rows
        .iter()
        .find(|r| r.contains("│fault "))
        .unwrap_or_else(|| panic!("a timeline row:\n{shown}"));
    assert!(timeline.contains('◆'), "the note's mark:\n{shown}");
    let line = rows
        .iter()
        .find(|r| r.contains("note by alice HH:MM:SS: n2 stalls"))
        .unwrap_or_else(|| panic!("the note's line:\n{shown}"));
    assert!(line.contains("…"), "cut with an ellipsis: {line}");
    insta::assert_snapshot!("run_note_80x24", shown);
}

/// The note key opens the editor over the screen (not the step bar or the status
/// line) with the row's earlier notes in full, its keys and the byte count.
#[test]
fn the_note_editor_shows_earlier_notes_its_keys_and_the_byte_limit() {
    let mut state = noted_run();
    state.handle(Action::Note);
    for c in "seen too".chars() {
        state.note_key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char(c),
            crossterm::event::KeyModifiers::NONE,
        ));
    }
    let shown = scrub(&text(&render(&state, &dark(), 80, 24)));
    let rows: Vec<&str> = shown.lines().collect();
    assert!(rows[0].contains("Plan"), "the step bar stays:\n{shown}");
    assert!(rows[23].contains("Enter send note"), "{shown}");
    for said in [
        "Note on the run",
        "on D3 (seed-1), going on now",
        "alice HH:MM:SS · D3 (seed-1) +2.5 s",
        "  second line",
        "8/4096 bytes",
        "Enter send · Alt-Enter / Ctrl-J new line · Esc cancel",
    ] {
        assert!(shown.contains(said), "{said}:\n{shown}");
    }
    insta::assert_snapshot!("note_editor_80x24", shown);
}

/// A Toolbox or Checklist cell cut with an ellipsis is shown whole once its row is
/// picked with the arrows: the detail below the table holds every field of it.
#[test]
fn a_picked_table_row_is_shown_whole_below_the_table() {
    let mut state = AppState::new(plan());
    for (name, evidence) in [
        (
            "redis-server",
            "version 7.2.4 from redis-server --version, built with jemalloc",
        ),
        (
            "redis-cli",
            "version 7.2.4 from redis-cli --version, found on PATH at the end of the long search",
        ),
    ] {
        state.apply(&record(
            "toolbox-item",
            "",
            None,
            json!({"role": "client", "kind": "binary", "name": name,
                   "path": format!("/opt/vendor/redis/7.2.4/installed/bin/{name}"),
                   "evidence": evidence}),
        ));
    }
    state.ui.step = Step::Toolbox;
    let whole = "found on PATH at the end of the long search";
    let shown = text(&render(&state, &dark(), 80, 24));
    assert!(
        !shown.contains(whole),
        "the second row shown whole before it is picked:\n{shown}"
    );
    state.handle(Action::Down);
    assert_eq!(state.ui.table_row, 1);
    let shown = text(&render(&state, &dark(), 80, 24));
    let detail: String = shown
        .lines()
        .skip_while(|l| !l.contains("Selected row"))
        .map(|l| l.trim_matches(|c| c == '│' || c == ' ').to_string() + " ")
        .collect();
    assert!(
        detail.contains(whole),
        "the picked row's evidence whole:\n{shown}"
    );
    assert!(
        detail.contains("/opt/vendor/redis/7.2.4/installed/bin/redis-cli"),
        "its path whole:\n{shown}"
    );
    // The arrows stop at the ends.
    state.handle(Action::Down);
    assert_eq!(state.ui.table_row, 1);
    state.handle(Action::Up);
    state.handle(Action::Up);
    assert_eq!(state.ui.table_row, 0);
}
