//! Centred overlays: the help (generated from the keymap), a pending operator
//! question with its answer editor, and a verdict's evidence.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use ratatui::style::Modifier;
use ratatui_textarea::TextArea;

use super::{badge, block};
use crate::session::operator::{Question, QuestionKind};
use crate::tui::keymap::Keymap;
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

/// Every keymap entry; keys of the same action share a line (`Down / j`).
pub(super) fn help(frame: &mut Frame, area: Rect, keymap: &Keymap, theme: &Theme) {
    let mut lines: Vec<Line> = keymap
        .help_rows()
        .into_iter()
        .map(|(keys, help)| {
            Line::from(vec![
                Span::styled(format!("{keys:>16}  "), theme.highlight),
                Span::styled(help, theme.text),
            ])
        })
        .collect();
    lines.push(Line::default());
    lines.push(Line::styled(
        "answering: Enter sends · Tab next choice · Ctrl-E edit the command · \
         Ctrl-S sends several lines",
        theme.dim,
    ));
    let height = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_add(3);
    let rect = centred(area, 60, height);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block("Keys", theme)),
        rect,
    );
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

/// How the operator sends what they typed.
fn send_hint(kind: QuestionKind) -> &'static str {
    match kind {
        QuestionKind::Describe => "Enter new line · Ctrl-S sends (empty: the default)",
        _ => "Enter sends (empty: the default) · Tab next choice",
    }
}

/// The question's prompt, hints, default and choices, then its answer editor.
pub(super) fn question_form(
    frame: &mut Frame,
    area: Rect,
    q: &Question,
    editor: &TextArea<'static>,
    theme: &Theme,
) {
    let mut lines = vec![Line::styled(q.prompt.clone(), theme.text)];
    for hint in &q.hints {
        lines.push(Line::from(vec![
            Span::styled(format!("  {} ", theme.symbols.branch), theme.dim),
            Span::styled(hint.clone(), theme.text),
        ]));
    }
    lines.push(Line::from(vec![
        Span::styled("default: ", theme.dim),
        Span::styled(q.default.clone(), theme.highlight),
    ]));
    let choices = choices(q);
    if !choices.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("choices: ", theme.dim),
            Span::styled(choices.join(" / "), theme.text),
        ]));
    }
    if q.editable.is_some() {
        lines.push(Line::styled(
            "Ctrl-E puts the command in the editor to change it before approving",
            theme.dim,
        ));
    }
    lines.push(Line::styled(send_hint(q.kind), theme.dim));
    let title = format!("Question {}", q.id);
    let outer = block(&title, theme);
    let inner = outer.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(outer, area);
    let editor_height: u16 = if q.kind == QuestionKind::Describe {
        6
    } else {
        3
    };
    let [text, edit] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(editor_height)]).areas(inner);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), text);
    let mut editor = editor.clone();
    editor.set_block(block("answer", theme));
    editor.set_style(theme.text);
    editor.set_cursor_line_style(theme.text);
    editor.set_cursor_style(theme.highlight.add_modifier(Modifier::REVERSED));
    frame.render_widget(&editor, edit);
}

/// The pending question, centred over whatever screen is showing.
pub(super) fn question(
    frame: &mut Frame,
    area: Rect,
    q: &Question,
    editor: &TextArea<'static>,
    theme: &Theme,
) {
    let width = area.width.saturating_sub(4).min(100);
    let extra = u16::try_from(q.hints.len()).unwrap_or(0);
    let rect = centred(area, width, 16u16.saturating_add(extra));
    question_form(frame, rect, q, editor, theme);
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
        let from = tail.len().saturating_sub(6);
        for l in &tail[from..] {
            lines.push(Line::styled(format!("  {l}"), theme.text));
        }
    }
    let rect = centred(
        area,
        area.width.saturating_sub(4),
        area.height.saturating_sub(2),
    );
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block("Evidence (Esc closes)", theme)),
        rect,
    );
}
