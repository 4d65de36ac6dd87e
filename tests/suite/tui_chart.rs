//! The live chart drawn from a recorded history (demo D3's first seed: a pause of a
//! spare node, then the primary killed — two fault windows), alone and on the Run
//! screen at 80x24 while the iteration runs.

use std::collections::BTreeMap;

use crate::tui_snapshots::text;
use faultline::oracle::series;
use faultline::session::event::{self, Event};
use faultline::session::journal::{Record, Scope};
use faultline::tui::state::{AppState, Step};
use faultline::tui::theme::Theme;
use faultline::tui::view::{Chart, draw, live_series, refresh_chart};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::common::{D3_HISTORY as HISTORY, d3_marks as marks};

#[test]
fn the_chart_shades_both_fault_windows_of_a_recorded_history() {
    let source = std::fs::read_to_string(HISTORY).expect("fixture history");
    let history = faultline::oracle::history::parse_jsonl(HISTORY, &source).expect("history");
    let series = series::of_ops(
        &history.ops,
        series::bucket_for(std::time::Duration::from_secs(4)),
        &marks(),
    );
    assert_eq!(series.windows.len(), 2, "{:?}", series.windows);
    let theme = Theme::by_name("dark").expect("theme");
    let mut terminal = Terminal::new(TestBackend::new(56, 10)).expect("terminal");
    terminal
        .draw(|frame| {
            frame.render_widget(
                Chart {
                    series: &series,
                    faults: &[],
                    theme: &theme,
                },
                frame.area(),
            );
        })
        .expect("draw");
    let screen = text(terminal.backend().buffer());
    // Shaded cells lie in both windows, and the proven one is drawn solid, the other broken.
    let rows: Vec<&str> = screen.lines().collect();
    let timeline = rows[8];
    assert!(timeline.contains('━') && timeline.contains('╌'), "{screen}");
    assert!(screen.contains('░'), "{screen}");
    assert!(rows[9].contains("pause-spare proven"), "{screen}");
    assert!(rows[9].contains("kill-primary NOT"), "{screen}");
    insta::assert_snapshot!(screen);
}

#[test]
fn the_run_screen_charts_the_running_iteration_at_80x24() {
    let plan = faultline::plan::parse_plan(
        "examples/demo/plan.md",
        include_str!("../../examples/demo/plan.md"),
    );
    let mut state = AppState::new(plan);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(HISTORY);
    let scope = Scope {
        scenario: Some("D3".into()),
        arm: None,
    };
    let records = [
        Event::IterationStarted(event::IterationStarted {
            seed: 1,
            label: faultline::session::label::IterationLabel::seed(1),
            duration_ms: 4_000,
        }),
        Event::HistoryLive(event::HistoryLive {
            path: path.display().to_string(),
            fields: BTreeMap::new(),
        }),
        Event::FaultIntent(event::FaultIntent {
            fault: "pause-spare".into(),
            epoch: 1,
        }),
        Event::FaultIntent(event::FaultIntent {
            fault: "kill-primary".into(),
            epoch: 2,
        }),
    ];
    for (seq, event) in records.into_iter().enumerate() {
        state.apply(&Record {
            seq: seq as u64 + 1,
            ts: "2026-12-03T03:00:00Z".into(),
            scope: scope.clone(),
            event,
        });
    }
    state.ui.step = Step::Run;
    // The selection followed the engine to D3.
    assert_eq!(state.selected_run().map(|r| r.id.as_str()), Some("D3"));
    let live = state.view.live.values().next().expect("live iteration");
    let series = live_series(live).expect("the history reads");
    assert_eq!(series.ops, 195);
    // Drawing reads what the refresh tick read; before it, the chart says so.
    refresh_chart(&mut state);
    let theme = Theme::by_name("dark").expect("theme");
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    terminal
        .draw(|frame| draw(frame, &state, &theme))
        .expect("draw");
    let screen = text(terminal.backend().buffer());
    assert!(screen.contains("D3 seed-1 · 195 ops"), "{screen}");
    assert!(screen.contains("kill-primary"), "{screen}");
    assert!(screen.contains("D3: injecting kill-primary"), "{screen}");
}

/// An iteration with no history yet: when the run spec saved in the session declares
/// a JSONL history the chart says the workload has not started (or never did, once
/// the session ended), not that none was declared; when it declares none, it says so.
#[test]
fn no_history_yet_is_told_from_none_declared() {
    let plan = faultline::plan::parse_plan(
        "examples/demo/plan.md",
        include_str!("../../examples/demo/plan.md"),
    );
    let sidecar = include_str!("../../examples/demo/plan.run.yaml");
    let chart_says = |sidecar: &str, ended: bool| {
        let session = tempfile::tempdir().expect("session");
        let input = session.path().join("input");
        std::fs::create_dir_all(&input).expect("input");
        std::fs::write(input.join("plan.md"), "saved plan").expect("plan");
        std::fs::write(input.join("plan.run.yaml"), sidecar).expect("sidecar");
        let mut state = AppState::new(plan.clone());
        state.apply(&Record {
            seq: 1,
            ts: "2026-12-03T03:00:00Z".into(),
            scope: Scope {
                scenario: Some("D3".into()),
                arm: None,
            },
            event: Event::IterationStarted(event::IterationStarted {
                seed: 1,
                label: faultline::session::label::IterationLabel::seed(1),
                duration_ms: 4_000,
            }),
        });
        state.view.session_dir = Some(session.path().to_path_buf());
        if ended {
            state.view.session_verdict = Some("BLOCKED".into());
        }
        refresh_chart(&mut state);
        match state.chart.map(|c| c.series) {
            Some(Err(why)) => why,
            other => panic!("a chart without a history: {other:?}"),
        }
    };
    assert_eq!(
        chart_says(sidecar, false),
        "no history yet: the workload has not started"
    );
    assert_eq!(
        chart_says(sidecar, true),
        "no history: the workload never started in this iteration"
    );
    let edn = sidecar.replace("format: jsonl", "format: edn");
    assert_eq!(chart_says(&edn, false), "no JSONL history declared");
}
