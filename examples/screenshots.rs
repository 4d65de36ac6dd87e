//! Renders every TUI screen from the recorded demo journal with the real draw
//! function, and writes each one as an SVG into `screenshots/`.
//!
//! `cargo run --example screenshots` (from the repository root: the fixture's log
//! paths are relative to it).

use std::fmt::Write as _;

use faultline::session::journal::Record;
use faultline::tui::keymap::Action;
use faultline::tui::state::{AppState, Step};
use faultline::tui::theme::Theme;
use faultline::tui::view::draw;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 36;
const CELL_W: f32 = 8.4;
const CELL_H: f32 = 17.0;

/// A fixed 16-colour palette for named colours, and the RGB ones as they are.
fn hex(color: Color, fallback: &str) -> String {
    let named = match color {
        Color::Reset => return fallback.to_string(),
        Color::Black => "#1d1f21",
        Color::Red => "#cc6666",
        Color::Green => "#b5bd68",
        Color::Yellow => "#f0c674",
        Color::Blue => "#81a2be",
        Color::Magenta => "#b294bb",
        Color::Cyan => "#8abeb7",
        Color::Gray => "#c5c8c6",
        Color::DarkGray => "#666666",
        Color::LightRed => "#ff7b7b",
        Color::LightGreen => "#d0e08a",
        Color::LightYellow => "#ffe08a",
        Color::LightBlue => "#a3c4e0",
        Color::LightMagenta => "#d4b0dd",
        Color::LightCyan => "#a8dcd5",
        Color::White => "#ffffff",
        Color::Rgb(r, g, b) => return format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(i) => return format!("#{0:02x}{0:02x}{0:02x}", i),
    };
    named.to_string()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn svg(buffer: &Buffer) -> String {
    let (w, h) = (f32::from(WIDTH) * CELL_W, f32::from(HEIGHT) * CELL_H);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"14\">\n<rect width=\"100%\" height=\"100%\" fill=\"#1d1f21\"/>\n"
    );
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let Some(cell) = buffer.cell((x, y)) else {
                continue;
            };
            let (px, py) = (f32::from(x) * CELL_W, f32::from(y) * CELL_H);
            if cell.bg != Color::Reset {
                let _ = writeln!(
                    out,
                    "<rect x=\"{px}\" y=\"{py}\" width=\"{CELL_W}\" height=\"{CELL_H}\" fill=\"{}\"/>",
                    hex(cell.bg, "#1d1f21")
                );
            }
            let symbol = cell.symbol();
            if !symbol.trim().is_empty() {
                let _ = writeln!(
                    out,
                    "<text x=\"{px}\" y=\"{}\" fill=\"{}\">{}</text>",
                    py + CELL_H * 0.78,
                    hex(cell.fg, "#c5c8c6"),
                    escape(symbol)
                );
            }
        }
    }
    out.push_str("</svg>\n");
    out
}

fn main() {
    let plan = faultline::plan::parse_plan("examples/demo/plan.md", include_str!("demo/plan.md"));
    let mut state = AppState::new(plan);
    for line in include_str!("../tests/fixtures/journal/demo.jsonl").lines() {
        match serde_json::from_str::<Record>(line) {
            Ok(record) => state.apply(&record),
            Err(e) => eprintln!("skipping a fixture line: {e}"),
        }
    }
    let theme = match Theme::by_name("dark") {
        Ok(theme) => theme,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = std::fs::create_dir_all("screenshots") {
        eprintln!("screenshots/: {e}");
        std::process::exit(1);
    }
    faultline::tui::view::refresh_chart(&mut state);
    for step in Step::ALL {
        state.ui.step = step;
        shoot(&state, &theme, &step.title().to_lowercase());
    }
    // The evidence of D3's verdict, one key away on the Report screen.
    if let Some(d3) = state.view.runs.iter().position(|r| r.id == "D3") {
        state.ui.selected = d3;
    }
    state.ui.step = Step::Report;
    state.handle(Action::Evidence);
    shoot(&state, &theme, "evidence");
    state.handle(Action::Close);
    // D3's classification, asked on the Finding screen with each blame class's tells.
    if let Some(blame) = faultline::engine::driver::classification_questions("D3", true)
        .into_iter()
        .next()
    {
        state.ask(blame);
        shoot(&state, &theme, "classify");
    }
    staged_diff(state, &theme);
    live_chart(&theme);
}

/// The Run screen while D3's workload runs with its primary killed: the recorded
/// journal up to D3's workload, then the faults of the current plan and the live
/// history (a recorded seed of D3) the chart reads.
fn live_chart(theme: &Theme) {
    let plan = faultline::plan::parse_plan("examples/demo/plan.md", include_str!("demo/plan.md"));
    let mut state = AppState::new(plan);
    for line in include_str!("../tests/fixtures/journal/demo.jsonl").lines() {
        let Ok(record) = serde_json::from_str::<Record>(line) else {
            continue;
        };
        let seq = record.seq;
        state.apply(&record);
        if seq == 137 {
            break;
        }
    }
    let history = "tests/fixtures/histories/demo-d3-two-faults.jsonl";
    let live = [
        (
            "54.600",
            "history-live",
            serde_json::json!({"path": history}),
        ),
        (
            "54.800",
            "fault-intent",
            serde_json::json!({"fault": "pause-spare", "epoch": 1}),
        ),
        (
            "54.801",
            "fault-injected",
            serde_json::json!({"fault": "pause-spare", "pid": 2263}),
        ),
        (
            "54.802",
            "landing-injector",
            serde_json::json!({"fault": "pause-spare", "landed": true, "text": "pid 2263 is Stopped in /proc"}),
        ),
        (
            "55.800",
            "fault-healed",
            serde_json::json!({"fault": "pause-spare", "result": {"Ok": "SIGCONT sent"}}),
        ),
        (
            "56.571",
            "fault-intent",
            serde_json::json!({"fault": "kill-primary", "epoch": 2}),
        ),
        (
            "56.572",
            "fault-injected",
            serde_json::json!({"fault": "kill-primary", "pid": 2261}),
        ),
        (
            "56.572",
            "landing-injector",
            serde_json::json!({"fault": "kill-primary", "landed": true, "text": "pid 2261 is Zombie in /proc"}),
        ),
        (
            "57.468",
            "landing-declared",
            serde_json::json!({"fault": "kill-primary", "side": "victim", "pattern": "no contact from primary", "seen": "n2 WARN no contact from primary for 1067ms"}),
        ),
    ];
    for (i, (at, kind, data)) in live.into_iter().enumerate() {
        let line = serde_json::json!({"seq": 200 + i, "ts": format!("2026-12-01T04:20:{at}Z"),
            "scenario": "D3", "arm": null, "kind": kind, "data": data});
        match serde_json::from_value::<Record>(line) {
            Ok(record) => state.apply(&record),
            Err(e) => eprintln!("{kind}: {e}"),
        }
    }
    state.now = chrono::DateTime::parse_from_rfc3339("2026-12-01T04:20:57.900Z")
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc));
    state.ui.step = Step::Run;
    faultline::tui::view::refresh_chart(&mut state);
    shoot(&state, theme, "run-live");
}

/// Author mode's staged diff (`d`), over the Run screen, from a diff like the one
/// `run --author` saves.
fn staged_diff(mut state: AppState, theme: &Theme) {
    let Ok(session) = tempfile::tempdir() else {
        eprintln!("no temporary directory for the staged diff");
        return;
    };
    let diff = session.path().join("artifacts/author/staged.diff");
    let written = std::fs::create_dir_all(session.path().join("artifacts/author"))
        .and_then(|()| std::fs::write(&diff, STAGED_DIFF));
    if let Err(e) = written {
        eprintln!("{}: {e}", diff.display());
        return;
    }
    state.answered();
    state.view.session_dir = Some(session.path().to_path_buf());
    let staged = serde_json::json!({"seq": 9999, "ts": "2026-12-01T00:00:00.000Z",
        "kind": "author-staged",
        "data": {"files": 1, "diff": "artifacts/author/staged.diff", "note": "staged with git add, never committed"}});
    match serde_json::from_value::<Record>(staged) {
        Ok(record) => state.apply(&record),
        Err(e) => {
            eprintln!("author-staged record: {e}");
            return;
        }
    }
    state.ui.step = Step::Run;
    state.handle(Action::StagedDiff);
    shoot(&state, theme, "diff");
}

const STAGED_DIFF: &str = "\
diff --git a/tests/kept_writes.rs b/tests/kept_writes.rs
new file mode 100644
index 0000000..5b1d3a0
--- /dev/null
+++ b/tests/kept_writes.rs
@@ -0,0 +1,16 @@
+// Provenance: written by faultline author mode from docs/testing-plans/kv.md, scenario S1
+// plan sha-256 at generation: 1d06a592a1be6c334b4e2dd56d36cbeed84a8330b4425edff5337e6605eea26e
+// candidate — review before committing
+// AUTO-GENERATED from test plan: kv-replication
+#[test]
+fn writes_are_kept() {
+    // workload: from the scenario's run-spec binding
+    //   workload: ./scripts/load.sh --seed ${seed} --history ${artifacts}/h.jsonl
+    let workload = std::process::Command::new(\"sh\")
+        .arg(\"-c\")
+        .arg(\"./scripts/load.sh --seed ${seed} --history ${artifacts}/h.jsonl\")
+        .current_dir(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/..\"))
+        .status()
+        .expect(\"the workload command starts\");
+    assert!(workload.success(), \"the workload command failed: {workload}\");
+}
";

/// Draws `state` and writes it as `screenshots/<name>.svg`.
fn shoot(state: &AppState, theme: &Theme, name: &str) {
    let Ok(mut terminal) = Terminal::new(TestBackend::new(WIDTH, HEIGHT));
    if terminal.draw(|frame| draw(frame, state, theme)).is_err() {
        eprintln!("drawing {name} failed");
        return;
    }
    let name = format!("screenshots/{name}.svg");
    match std::fs::write(&name, svg(terminal.backend().buffer())) {
        Ok(()) => println!("{name}"),
        Err(e) => eprintln!("{name}: {e}"),
    }
}
