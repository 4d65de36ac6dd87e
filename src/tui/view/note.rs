//! The note editor (the note key): a note on the run, written over the screen it was
//! opened on, never over the step bar or the status line. Above the editor, the
//! selected row's earlier notes in full (the chart's line shows only the latest,
//! cut); below, its keys and how many bytes of the most a note may have it holds.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::block;
use crate::session::event::NOTE_MAX_BYTES;
use crate::session::outcome::Phase;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;

/// The widest the editor gets.
const WIDTH: u16 = 72;
/// The editor's rows, its border included (four lines of text show at once).
const EDITOR_ROWS: u16 = 6;
/// The most rows the earlier notes take.
const EARLIER_ROWS: u16 = 8;

pub(super) fn draw(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let Some(note) = &state.note else {
        return;
    };
    let width = WIDTH.min(area.width);
    let inner_width = usize::from(width.saturating_sub(2)).max(1);
    let room = area.height.saturating_sub(EDITOR_ROWS + 4);
    let (earlier, earlier_rows) = earlier(
        state,
        theme,
        inner_width,
        usize::from(room.min(EARLIER_ROWS)),
    );
    let earlier_rows = u16::try_from(earlier_rows).unwrap_or(0);
    let height = (earlier_rows + EDITOR_ROWS + 4).min(area.height);
    let [band] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(width)])
        .flex(Flex::Center)
        .areas(band);
    frame.render_widget(Clear, rect);
    let outer = block("Note on the run", theme);
    let inner = outer.inner(rect);
    frame.render_widget(outer, rect);
    let [earlier_area, on, edit, keys] = Layout::vertical([
        Constraint::Length(earlier_rows),
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(inner);
    frame.render_widget(
        Paragraph::new(earlier).wrap(Wrap { trim: false }),
        earlier_area,
    );
    let on_line = super::fit::words(
        &format!("journaled with your name, on {}", goes_on(state)),
        usize::from(on.width),
        theme,
    );
    frame.render_widget(Paragraph::new(Line::styled(on_line, theme.dim)), on);
    let bytes = note.lines().iter().map(String::len).sum::<usize>() + note.lines().len() - 1;
    let (count_style, over) = if bytes > NOTE_MAX_BYTES {
        (theme.warning, " too long: Enter will not send it")
    } else {
        (theme.text, "")
    };
    let mut editor = note.clone();
    editor.set_block(block("your note", theme).title_bottom(Line::styled(
        format!(" {bytes}/{NOTE_MAX_BYTES} bytes{over} "),
        count_style,
    )));
    editor.set_placeholder_text("what you see, for the others and the report");
    editor.set_placeholder_style(theme.dim);
    editor.set_style(theme.text);
    editor.set_cursor_line_style(theme.text);
    editor.set_cursor_style(theme.highlight.add_modifier(Modifier::REVERSED));
    frame.render_widget(&editor, edit);
    let hint = theme
        .symbols
        .hint("Enter send · Alt-Enter / Ctrl-J new line · Esc cancel");
    frame.render_widget(Paragraph::new(Line::styled(hint, theme.dim)), keys);
}

/// What the server attributes a note written now to (the reducer's rule in
/// `session::view::notes`): the run going on and its iteration, else the session.
fn goes_on(state: &AppState) -> String {
    let view = &state.view;
    let running = view
        .active
        .filter(|_| view.session_verdict.is_none())
        .and_then(|r| view.runs.get(r).map(|row| (r, row)))
        .filter(|(_, row)| row.phase != Phase::Pending);
    match running {
        Some((r, row)) => match view.live.get(&r).filter(|_| row.phase != Phase::Done) {
            Some(live) => format!("{} ({}), going on now", row.id, live.label),
            None => format!("{}, going on now", row.id),
        },
        None => "the session (no run is going on)".to_string(),
    }
}

/// The selected row's notes, oldest first, each its author, time and iteration
/// then its text: the latest that fit `rows` rows of `width` (wrapped), and the rows
/// they take.
fn earlier(
    state: &AppState,
    theme: &Theme,
    width: usize,
    rows: usize,
) -> (Vec<Line<'static>>, usize) {
    let selected = state.ui.selected;
    let mut out: Vec<Vec<Line<'static>>> = Vec::new();
    let mut used = 0;
    for n in state
        .view
        .notes
        .iter()
        .rev()
        .filter(|n| n.row == Some(selected))
    {
        let name = crate::sanitize::line(n.who.label.as_deref().unwrap_or(&n.who.user));
        let mut head = format!("{name} {}", super::local_time(&n.ts));
        if let Some(during) = n.during() {
            head.push_str(&format!(" · {during}"));
        }
        if let Some(ms) = n.iteration_ms {
            head.push_str(&format!(" +{:.1} s", ms as f64 / 1000.0));
        }
        let mut lines = vec![Line::styled(theme.symbols.hint(head), theme.dim)];
        lines.extend(
            n.text
                .lines()
                .map(|l| Line::styled(format!("  {l}"), theme.text)),
        );
        let height: usize = lines.iter().map(|l| l.width().max(1).div_ceil(width)).sum();
        if used + height > rows {
            break;
        }
        used += height;
        out.push(lines);
    }
    (out.into_iter().rev().flatten().collect(), used)
}
