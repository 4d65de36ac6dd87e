//! Centred overlays: the help (generated from the keymap), a pending operator
//! question with its answer editor, and a verdict's evidence.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use ratatui::style::Modifier;

use super::{badge, block};
use crate::session::operator::Question;
use crate::tui::answer::prose;
use crate::tui::keymap;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;

/// A `width` x `height` rectangle centred in `area` (clipped to it).
fn centred(area: Rect, width: u16, height: u16) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [cell] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    cell
}

/// Cuts `line` into rows of at most `width` characters, keeping each span's style
/// (overlays that scroll need to know their row count, so they wrap themselves).
pub(super) fn wrap(line: Line<'static>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut rows = vec![Line::default()];
    let mut used = 0;
    for span in line.spans {
        let mut piece = String::new();
        for c in span.content.chars() {
            if used == width {
                if let Some(row) = rows.last_mut() {
                    row.spans
                        .push(Span::styled(std::mem::take(&mut piece), span.style));
                }
                rows.push(Line::default());
                used = 0;
            }
            piece.push(c);
            used += 1;
        }
        if let Some(row) = rows.last_mut() {
            row.spans.push(Span::styled(piece, span.style));
        }
    }
    rows
}

/// Draws `lines` (wrapped to fit) in a bordered `rect` from the overlay's scroll,
/// recording how far it can scroll; the title says when more is above or below.
fn scrolled(
    frame: &mut Frame,
    rect: Rect,
    lines: Vec<Line<'static>>,
    title: &str,
    state: &AppState,
    theme: &Theme,
) {
    let inner_width = rect.width.saturating_sub(2);
    let visible = rect.height.saturating_sub(2);
    let rows: Vec<Line> = lines
        .into_iter()
        .flat_map(|l| wrap(l, inner_width))
        .collect();
    let total = u16::try_from(rows.len()).unwrap_or(u16::MAX);
    let max = total.saturating_sub(visible);
    state.ui.overlay_max.set(max);
    let first = state.ui.overlay_scroll.min(max);
    let more = match (first > 0, first < max) {
        (true, true) => " · ↑↓ PgUp PgDn: more",
        (false, true) => " · ↓ PgDn: more",
        (true, false) => " · ↑ PgUp: more",
        (false, false) => "",
    };
    let title = format!("{title}{more}");
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(rows)
            .scroll((first, 0))
            .block(block(&title, theme)),
        rect,
    );
}

/// The keys, the current screen's first (then every other key, then answering a
/// question; that comes first while one is open), paged to fit the terminal.
pub(super) fn help(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let mut lines: Vec<Line> = Vec::new();
    for (title, rows) in keymap::help_sections(state) {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::styled(title, theme.highlight));
        for (keys, help) in rows {
            lines.push(Line::from(vec![
                Span::styled(format!("{keys:>12}  "), theme.highlight),
                Span::styled(help, theme.text),
            ]));
        }
    }
    let height = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    let rect = centred(area, area.width.saturating_sub(2).min(78), height);
    scrolled(frame, rect, lines, "Keys (Esc closes)", state, theme);
}

/// The answers a question offers, in the order Tab cycles through them.
pub fn choices(q: &Question) -> Vec<String> {
    q.choices
        .iter()
        .map(|c| match (&c.with_text, &q.editable) {
            // An editable install offers its own command to start from.
            (Some(_), Some(text)) if c.value == "edit" => format!("edit: {text}"),
            _ => c.label(),
        })
        .collect()
}

/// How the operator answers, one line under the form.
fn send_hint(q: &Question) -> &'static str {
    if prose(q) {
        "Enter new line · Ctrl-S sends (empty: the default) · F1 help · F2 evidence"
    } else if q.choices.is_empty() {
        "type, Enter sends (empty: the default) · F1 help · F2 evidence · Ctrl-C leave"
    } else {
        "↑↓ pick · Enter sends · or type a name · ? help · F2 evidence · Ctrl-C leave"
    }
}

/// The question's lines above its editor: prompt, hints, why the last answer was
/// refused, the choice list (highlighted row, default marked) and how to answer.
fn form_lines(q: &Question, state: &AppState, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(q.prompt.clone(), theme.text)];
    for hint in &q.hints {
        lines.push(Line::from(vec![
            Span::styled(format!("  {} ", theme.symbols.branch), theme.dim),
            Span::styled(hint.clone(), theme.text),
        ]));
    }
    if let Some(why) = &q.error {
        lines.push(Line::styled(
            format!(
                "{}refused: {}",
                theme.symbols.warn,
                crate::sanitize::line(why)
            ),
            theme.mismatch,
        ));
    }
    let offered = choices(q);
    if offered.is_empty() || prose(q) {
        lines.push(Line::from(vec![
            Span::styled("default: ", theme.dim),
            Span::styled(q.default.clone(), theme.highlight),
        ]));
    }
    if !prose(q) {
        for (i, (label, choice)) in offered.iter().zip(&q.choices).enumerate() {
            let on = state.ui.choice == Some(i);
            let pointer = if on { theme.symbols.pointer } else { "  " };
            let mark = if choice.value == q.default {
                " (default)"
            } else {
                ""
            };
            let style = if on { theme.highlight } else { theme.text };
            lines.push(Line::from(vec![
                Span::styled(format!("{pointer}{label}"), style),
                Span::styled(mark, theme.dim),
                Span::styled(format!("  {}", choice.meaning), theme.dim),
            ]));
        }
    }
    if q.editable.is_some() {
        lines.push(Line::styled(
            "Ctrl-E puts the command in the editor to change it before approving",
            theme.dim,
        ));
    }
    lines.push(Line::styled(send_hint(q), theme.dim));
    lines
}

/// How tall the answer editor is.
fn editor_height(q: &Question) -> u16 {
    if prose(q) { 6 } else { 3 }
}

/// The question's form in `area`: its lines, then its answer editor.
pub(super) fn question_form(
    frame: &mut Frame,
    area: Rect,
    q: &Question,
    state: &AppState,
    theme: &Theme,
) {
    let title = format!("Question {}", q.id);
    let outer = block(&title, theme);
    let inner = outer.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(outer, area);
    let [text, edit] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(editor_height(q))]).areas(inner);
    let rows: Vec<Line> = form_lines(q, state, theme)
        .into_iter()
        .flat_map(|l| wrap(l, text.width))
        .collect();
    // A long list keeps its highlighted row in view.
    let at = rows
        .iter()
        .position(|l| l.spans.first().is_some_and(|s| s.style == theme.highlight))
        .unwrap_or(0);
    let first = at.saturating_sub(usize::from(text.height.saturating_sub(2)));
    frame.render_widget(
        Paragraph::new(rows).scroll((u16::try_from(first).unwrap_or(0), 0)),
        text,
    );
    let mut editor = state.editor.clone();
    editor.set_block(block("answer", theme));
    editor.set_style(theme.text);
    editor.set_cursor_line_style(theme.text);
    editor.set_cursor_style(theme.highlight.add_modifier(Modifier::REVERSED));
    frame.render_widget(&editor, edit);
}

/// The pending question, centred over whatever screen is showing, as tall as it
/// needs (within the screen).
pub(super) fn question(
    frame: &mut Frame,
    area: Rect,
    q: &Question,
    state: &AppState,
    theme: &Theme,
) {
    let width = area.width.saturating_sub(4).min(100);
    let height = form_height(q, state, theme, width);
    let rect = centred(area, width, height.min(area.height.saturating_sub(2)));
    question_form(frame, rect, q, state, theme);
}

/// How tall the question's form is at `width`, all of it shown.
pub(super) fn form_height(q: &Question, state: &AppState, theme: &Theme, width: u16) -> u16 {
    let rows: usize = form_lines(q, state, theme)
        .into_iter()
        .map(|l| wrap(l, width.saturating_sub(2)).len())
        .sum();
    u16::try_from(rows)
        .unwrap_or(u16::MAX)
        .saturating_add(editor_height(q) + 2)
}

/// The selected row's verdict and where its evidence is: the cited journal records,
/// the findings file, each seed's history and the end of its newest log.
pub(super) fn evidence(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let Some(row) = state.selected_run() else {
        return;
    };
    let session = state
        .view
        .session_dir
        .as_ref()
        .map_or_else(|| "<session>".to_string(), |d| d.display().to_string());
    let stem = row.id.replace('/', "-");
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{} ", row.id), theme.text),
        badge(row.badge, theme),
    ])];
    lines.extend(super::screens::reason_lines(row, theme));
    lines.push(Line::styled("files:", theme.dim));
    lines.push(Line::styled(
        format!("  findings  {session}/findings/{stem}.md"),
        theme.text,
    ));
    for label in &row.labels {
        lines.push(Line::styled(
            format!("  history   {session}/artifacts/{stem}/{label}/history.jsonl"),
            theme.text,
        ));
    }
    lines.push(Line::styled("journal records:", theme.dim));
    for e in &row.evidence {
        lines.push(Line::styled(format!("  {e}"), theme.text));
    }
    if let Some(log) = row.logs.last() {
        lines.push(Line::styled(
            format!("end of {}:", log.display()),
            theme.dim,
        ));
        let tail = super::run::tail(log, 4096);
        let from = tail.len().saturating_sub(EVIDENCE_LOG_LINES);
        for l in &tail[from..] {
            lines.push(Line::styled(format!("  {l}"), theme.text));
        }
    }
    // The whole body, cleared: no border of the screen beneath shows through.
    scrolled(frame, area, lines, "Evidence (Esc closes)", state, theme);
}

/// How much of the newest log the evidence shows (it scrolls).
const EVIDENCE_LOG_LINES: usize = 40;
