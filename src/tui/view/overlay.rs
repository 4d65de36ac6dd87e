//! Centred overlays: the help (generated from the keymap table) and a pending
//! operator question.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::block;
use crate::engine::operator::{Question, QuestionKind};
use crate::tui::keymap::KEYMAP;
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

/// Every keymap entry; keys with the same help share a line (`↑ / k`).
pub(super) fn help(frame: &mut Frame, area: Rect, theme: &Theme) {
    let mut grouped: Vec<(Vec<&str>, &str)> = Vec::new();
    for b in KEYMAP {
        match grouped.last_mut() {
            Some((keys, help)) if *help == b.help => keys.push(b.key),
            _ => grouped.push((vec![b.key], b.help)),
        }
    }
    let lines: Vec<Line> = grouped
        .iter()
        .map(|(keys, help)| {
            Line::from(vec![
                Span::styled(format!("{:>13}  ", keys.join(" / ")), theme.highlight),
                Span::styled(*help, theme.text),
            ])
        })
        .collect();
    let height = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    let rect = centred(area, 48, height);
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block("Keys", theme)), rect);
}

/// The answers a question offers (free text for a classification).
pub fn choices(kind: QuestionKind) -> &'static [&'static str] {
    match kind {
        QuestionKind::ConfirmCapability => &[
            "have",
            "don't have",
            "skip",
            "substitute <with what>",
            "defer",
        ],
        QuestionKind::ApproveChange => &["approve", "decline"],
        QuestionKind::ClassifyFailure => &["<blame class>; <bug type>"],
    }
}

/// The pending question: prompt, default, choices.
pub(super) fn question(frame: &mut Frame, area: Rect, q: &Question, input: &str, theme: &Theme) {
    let lines = vec![
        Line::styled(q.prompt.clone(), theme.text),
        Line::default(),
        Line::from(vec![
            Span::styled("default: ", theme.dim),
            Span::styled(q.default.clone(), theme.highlight),
        ]),
        Line::from(vec![
            Span::styled("choices: ", theme.dim),
            Span::styled(choices(q.kind).join(" / "), theme.text),
        ]),
        Line::default(),
        Line::from(vec![
            Span::styled("answer: ", theme.dim),
            Span::styled(format!("{input}_"), theme.highlight),
        ]),
        Line::styled("Enter sends (empty: the default)", theme.dim),
    ];
    let width = area.width.saturating_sub(8).min(90);
    let rect = centred(area, width, 13);
    frame.render_widget(Clear, rect);
    let title = format!("Question {}", q.id);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block(&title, theme)),
        rect,
    );
}
