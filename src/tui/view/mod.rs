//! Drawing: a pure function of ([`AppState`], [`Theme`]) onto a frame. Nothing here
//! reads the terminal or blocks; the Run screen's pane reads a capped tail of a log
//! file from disk.

mod diff;
mod overlay;
mod run;
mod screens;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::tui::state::{AppState, Badge, Step};
use crate::tui::theme::Theme;

pub use overlay::choices;
pub use run::tail;

/// At least this wide, screens put panes side by side and show more columns.
const WIDE: u16 = 120;

/// Draws the whole UI: step bar, the selected step's screen, status line, overlays.
pub fn draw(frame: &mut Frame, state: &AppState, theme: &Theme) {
    let [bar, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    step_bar(frame, bar, state, theme);
    match state.ui.step {
        Step::Plan => screens::plan(frame, body, state, theme),
        Step::Toolbox => screens::toolbox(frame, body, state, theme),
        Step::Checklist => screens::checklist(frame, body, state, theme),
        Step::Approvals => screens::approvals(frame, body, state, theme),
        Step::Run => run::run(frame, body, state, theme),
        Step::Finding => screens::finding(frame, body, state, theme),
        Step::Report => screens::report(frame, body, state, theme),
    }
    status_line(frame, status, state, theme);
    if state.ui.evidence {
        overlay::evidence(frame, body, state, theme);
    }
    if state.ui.diff {
        diff::staged(frame, body, state, theme);
    }
    if state.ui.help {
        overlay::help(frame, frame.area(), &state.keymap, theme);
    }
    if let Some(question) = &state.pending
        && !screens::asks_inline(state)
    {
        overlay::question(frame, frame.area(), question, &state.editor, theme);
    }
}

/// `ts` (RFC 3339, UTC as journaled) as `HH:MM:SS` in the operator's local zone.
pub fn local_time(ts: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(ts).map_or_else(
        |_| "--:--:--".to_string(),
        |t| {
            t.with_timezone(&chrono::Local)
                .format("%H:%M:%S")
                .to_string()
        },
    )
}

fn step_bar(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let mut spans = Vec::new();
    for (i, step) in Step::ALL.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(theme.symbols.step_sep, theme.dim));
        }
        let style = if *step == state.ui.step {
            theme.highlight
        } else if *step <= state.view.reached {
            theme.text
        } else {
            theme.dim
        };
        spans.push(Span::styled(format!(" {} ", step.title()), style));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn status_line(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let done = state
        .view
        .runs
        .iter()
        .filter(|r| matches!(r.badge, Badge::Verdict(_)))
        .count();
    let since = state
        .view
        .started
        .as_deref()
        .map(|t| format!(" since {}", local_time(t)))
        .unwrap_or_default();
    let verdict = match (&state.view.session_verdict, &state.view.interrupted) {
        _ if state.handed_back => "plan handed back: nothing runs".to_string(),
        (Some(v), _) => format!("session: {v}"),
        (None, Some(during)) => format!("session: interrupted during {during}"),
        (None, None) => format!(
            "session: running{since}, {done}/{} decided",
            state.view.runs.len()
        ),
    };
    let follow = if state.ui.follow { "follow" } else { "paused" };
    let search = match &state.ui.search {
        Some(q) => format!("  /{q}"),
        None => String::new(),
    };
    // Only a run where author mode staged something has a diff to show.
    let diff = if state.view.staged_diff.is_some() {
        " d diff"
    } else {
        ""
    };
    let mut spans = vec![Span::styled(format!(" {verdict} "), theme.highlight)];
    if let Some(notice) = &state.notice {
        spans.push(Span::styled(
            format!(" {} ", crate::sanitize::line(notice)),
            theme.text,
        ));
    }
    if state.participants.len() > 1
        || state
            .me
            .as_ref()
            .is_some_and(|m| m.role != crate::session::event::Role::Owner)
    {
        let names: Vec<String> = state
            .participants
            .iter()
            .map(|p| {
                let name = p.who.label.as_deref().unwrap_or(&p.who.user);
                format!("{} ({})", crate::sanitize::line(name), p.who.role)
            })
            .collect();
        spans.push(Span::styled(
            format!(" with: {} ", names.join(", ")),
            theme.text,
        ));
    }
    spans.push(Span::styled(
        format!(" {follow}{search} | ←→ step ↑↓ select Tab pane e evidence{diff} ? help q quit"),
        theme.dim,
    ));
    let line = Line::from(spans);
    frame.render_widget(Paragraph::new(line), area);
}

/// A bordered block in the theme's style.
pub fn block<'a>(title: &'a str, theme: &Theme) -> Block<'a> {
    Block::bordered()
        .border_set(theme.symbols.border)
        .border_style(theme.border)
        .title(Span::styled(format!(" {title} "), theme.text))
}

/// A badge as a styled span.
fn badge(b: Badge, theme: &Theme) -> Span<'static> {
    let style = match b {
        Badge::Verdict(v) => theme.verdict(v),
        Badge::LandingNotProven => theme.warning,
        Badge::Pending => theme.dim,
        _ => theme.text,
    };
    Span::styled(format!("[{}]", b.label()), style)
}
