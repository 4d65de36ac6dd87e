//! Centred overlays: the help (generated from the keymap), a pending operator
//! question with its answer editor, and a verdict's evidence.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use ratatui::style::Modifier;

use super::{badge, block};
use crate::session::operator::Question;
use crate::tui::answer::{picks, prose, shown, single_keys};
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

/// Wraps `line` into rows of at most `width` characters at spaces (a word longer
/// than a row is cut), keeping each span's style. Overlays that scroll wrap
/// themselves so they know their row count.
pub(super) fn wrap(line: Line<'static>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    // Words with their style; a word keeps the spaces before it.
    let mut words: Vec<(String, ratatui::style::Style)> = Vec::new();
    for span in &line.spans {
        let mut word = String::new();
        for c in span.content.chars() {
            if c == ' ' && !word.trim().is_empty() {
                words.push((std::mem::take(&mut word), span.style));
            }
            word.push(c);
        }
        if !word.is_empty() {
            words.push((word, span.style));
        }
    }
    let mut rows = vec![Line::default()];
    let mut used = 0;
    for (word, style) in words {
        let mut word = word;
        let len = word.chars().count();
        if used > 0 && used + len > width {
            rows.push(Line::default());
            used = 0;
            word = word.trim_start().to_string();
        }
        // Cut what still does not fit a whole row.
        while used + word.chars().count() > width {
            let head: String = word.chars().take(width - used).collect();
            word = word.chars().skip(width - used).collect();
            if let Some(row) = rows.last_mut() {
                row.spans.push(Span::styled(head, style));
            }
            rows.push(Line::default());
            used = 0;
        }
        used += word.chars().count();
        if let Some(row) = rows.last_mut() {
            row.spans.push(Span::styled(word, style));
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
        (true, true) => " - Up/Down PgUp/PgDn: more",
        (false, true) => " - Down PgDn: more",
        (true, false) => " - Up PgUp: more",
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
    // Between the step bar and the status line, which stay readable.
    let area = Rect {
        y: area.y.saturating_add(1),
        height: area.height.saturating_sub(2),
        ..area
    };
    // Narrow terminals give it the whole width: no border of the screen beneath
    // shows beside it.
    let width = if area.width < NARROW {
        area.width
    } else {
        HELP_WIDTH
    };
    let rect = centred(area, width, height);
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
fn send_hint(q: &Question) -> String {
    if prose(q) {
        "Enter new line · Ctrl-S sends (empty: default) · F1 help · F2 evidence".into()
    } else if q.choices.is_empty() {
        "type, Enter send (empty: default) · F1 help · F2 evidence · Ctrl-C leave".into()
    } else if let Some(keys) = single_keys(q) {
        let keys: Vec<String> = keys.iter().map(char::to_string).collect();
        format!(
            "{} act at once · ↑↓ pick · Enter send · ? help",
            keys.join(" / ")
        )
    } else if picks(q) {
        "↑↓ 1-9 pick · type to filter · Enter send · ? help · F2 evidence".into()
    } else {
        "↑↓ pick · Enter send · or type · ? help · F2 evidence · Ctrl-C leave".into()
    }
}

/// Said in place of the answer box to a viewer.
const WATCHING: &str = "watching (viewer): the owner or an approver answers";

/// The hint that explains the choice `value` (`value: why`), without the value.
fn tell<'a>(q: &'a Question, value: &str) -> Option<&'a str> {
    q.hints
        .iter()
        .find_map(|h| h.strip_prefix(value)?.strip_prefix(": "))
}

/// What the question says: prompt, why the last answer was refused (the allowed
/// answers, whole) and the hints no choice row explains.
fn about_lines(q: &Question, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(q.prompt.clone(), theme.text)];
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
    let explained = |hint: &String| {
        q.choices.iter().any(|c| {
            hint.strip_prefix(c.value.as_str())
                .is_some_and(|rest| rest.starts_with(": "))
        })
    };
    for hint in q.hints.iter().filter(|h| !explained(h)) {
        lines.push(Line::from(vec![
            Span::styled(format!("  {} ", theme.symbols.branch), theme.dim),
            Span::styled(hint.clone(), theme.text),
        ]));
    }
    lines
}

/// How to answer it: the choice list (highlighted row, default marked) or the
/// default, then the keys. Also the index of the highlighted line, if any. A
/// choice's explanation is cut to its row at `width`, but the highlighted one's.
fn answer_lines(
    q: &Question,
    state: &AppState,
    theme: &Theme,
    width: u16,
) -> (Vec<Line<'static>>, Option<usize>) {
    let mut lines = Vec::new();
    let mut picked = None;
    let offered = choices(q);
    let answers = state.may_answer(q);
    if offered.is_empty() || prose(q) {
        lines.push(Line::from(vec![
            Span::styled("default: ", theme.dim),
            Span::styled(q.default.clone(), theme.highlight),
        ]));
    } else {
        // Each choice with the key that picks it: a dialog's letter, a list's digit.
        let keys = single_keys(q);
        for i in shown(q, &state.typed()) {
            let (Some(label), Some(choice)) = (offered.get(i), q.choices.get(i)) else {
                continue;
            };
            let on = answers && state.ui.choice == Some(i);
            if on {
                picked = Some(lines.len());
            }
            let pointer = if on { theme.symbols.pointer } else { "  " };
            let key = match &keys {
                Some(keys) if answers => keys.get(i).map(|k| format!("{k} ")).unwrap_or_default(),
                None if answers && picks(q) && i < 9 => format!("{} ", i + 1),
                None if answers && picks(q) => "  ".to_string(),
                _ => String::new(),
            };
            let mark = if choice.value == q.default {
                " (default)"
            } else {
                ""
            };
            let style = if on { theme.highlight } else { theme.text };
            let head = Line::from(vec![
                Span::styled(pointer, style),
                Span::styled(key, if on { theme.highlight } else { theme.dim }),
                Span::styled(label.clone(), style),
                Span::styled(mark, theme.dim),
            ]);
            let why: Vec<&str> = [Some(choice.meaning.as_str()), tell(q, &choice.value)]
                .into_iter()
                .flatten()
                .filter(|w| !w.is_empty())
                .collect();
            let room = usize::from(width);
            // The choice itself is never cut: only an explanation beside it.
            let cut = !on && head.width() + 3 <= room;
            let mut line = head;
            if !why.is_empty() {
                line.spans
                    .push(Span::styled(format!("  {}", why.join(" · ")), theme.dim));
            }
            lines.push(if cut {
                super::fit::line(line, room, theme)
            } else {
                line
            });
        }
    }
    if !answers {
        lines.push(Line::styled(WATCHING, theme.warning));
        return (lines, picked);
    }
    if q.editable.is_some() {
        lines.push(Line::styled(
            "Ctrl-E puts the command in the editor to change it before approving",
            theme.dim,
        ));
    }
    lines.push(Line::styled(theme.symbols.hint(send_hint(q)), theme.dim));
    (lines, picked)
}

/// How tall the answer editor is: none for a viewer, who answers nothing.
fn editor_height(q: &Question, state: &AppState) -> u16 {
    match (state.may_answer(q), prose(q)) {
        (false, _) => 0,
        (true, true) => 6,
        (true, false) => 3,
    }
}

/// `lines` wrapped to `width`, and where line `at` starts among the rows.
fn rows_of(
    lines: Vec<Line<'static>>,
    width: u16,
    at: Option<usize>,
) -> (Vec<Line<'static>>, usize) {
    let mut rows = Vec::new();
    let mut start = 0;
    for (i, line) in lines.into_iter().enumerate() {
        if Some(i) == at {
            start = rows.len();
        }
        rows.extend(wrap(line, width));
    }
    (rows, start)
}

fn height_of(rows: usize) -> u16 {
    u16::try_from(rows).unwrap_or(u16::MAX)
}

/// The question's form in `area`: what it says (cut when short of room), how to
/// answer it (the list scrolled to keep the highlighted row), its answer editor.
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
    let (about, _) = rows_of(about_lines(q, theme), inner.width, None);
    let (lines, picked) = answer_lines(q, state, theme, inner.width);
    let (answer, at) = rows_of(lines, inner.width, picked);
    // The answer part first: at least a few rows stay for what the question says.
    let room = inner.height.saturating_sub(editor_height(q, state));
    let kept = height_of(about.len()).min(ABOUT_ROWS).min(room / 2);
    let answer_height = height_of(answer.len()).min(room.saturating_sub(kept));
    let [text, list, edit] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(answer_height),
        Constraint::Length(editor_height(q, state)),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(cut_rows(about, text, theme)), text);
    let first = (at + 2).saturating_sub(usize::from(list.height));
    frame.render_widget(Paragraph::new(answer).scroll((height_of(first), 0)), list);
    if !state.may_answer(q) {
        return;
    }
    let mut editor = state.editor.clone();
    if state.ui.settling {
        // Just asked: keys are dropped for a moment, and the box says so.
        editor.set_block(
            Block::bordered()
                .border_set(theme.symbols.border)
                .border_style(theme.dim)
                .title(Span::styled(" answer: ready in a moment ", theme.dim)),
        );
    } else {
        editor.set_block(block("answer", theme));
    }
    editor.set_style(theme.text);
    editor.set_cursor_line_style(theme.text);
    editor.set_cursor_style(theme.highlight.add_modifier(Modifier::REVERSED));
    frame.render_widget(&editor, edit);
}

/// `rows` that fit `area`, the last one shown ending in an ellipsis when some are left out.
fn cut_rows(mut rows: Vec<Line<'static>>, area: Rect, theme: &Theme) -> Vec<Line<'static>> {
    let shown = usize::from(area.height);
    if rows.len() <= shown || shown == 0 {
        return rows;
    }
    rows.truncate(shown);
    let room = usize::from(area.width);
    if let Some(last) = rows.pop() {
        let last = if last.width() < room {
            let mut last = last;
            last.spans
                .push(Span::styled(super::fit::ellipsis(theme), theme.dim));
            last
        } else {
            super::fit::line(last, room.saturating_sub(1), theme)
        };
        rows.push(last);
    }
    rows
}

/// Below this width the help and a question take the whole width.
const NARROW: u16 = 100;
/// The help's width on wider terminals.
const HELP_WIDTH: u16 = 78;

/// Rows kept for what the question says when the form is short of room.
const ABOUT_ROWS: u16 = 4;

/// The pending question, centred over whatever screen is showing, as tall as it
/// needs (within the screen).
pub(super) fn question(
    frame: &mut Frame,
    area: Rect,
    q: &Question,
    state: &AppState,
    theme: &Theme,
) {
    // Narrow terminals give it the whole width: no border of the screen beneath
    // shows beside it.
    let width = if area.width < NARROW {
        area.width
    } else {
        area.width.saturating_sub(4).min(100)
    };
    let height = form_height(q, state, theme, width);
    let rect = centred(area, width, height.min(area.height));
    // A blank gutter around it: the screen beneath does not touch its border.
    let gutter = Rect {
        x: rect.x.saturating_sub(1),
        y: rect.y.saturating_sub(1),
        width: rect.width.saturating_add(2),
        height: rect.height.saturating_add(2),
    }
    .intersection(area);
    frame.render_widget(Clear, gutter);
    question_form(frame, rect, q, state, theme);
}

/// How tall the question's form is at `width`, all of it shown.
pub(super) fn form_height(q: &Question, state: &AppState, theme: &Theme, width: u16) -> u16 {
    let inner = width.saturating_sub(2);
    let (about, _) = rows_of(about_lines(q, theme), inner, None);
    let (answer, _) = rows_of(answer_lines(q, state, theme, inner).0, inner, None);
    height_of(about.len() + answer.len()).saturating_add(editor_height(q, state) + 2)
}

/// The selected row's verdict and where its evidence is: the cited journal records,
/// the findings file, each seed's history and the end of its newest log.
pub(super) fn evidence(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let Some(row) = state.selected_run() else {
        return;
    };
    let session = state
        .session_dir_shown()
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
    if let Some(html) = state.html_report() {
        lines.push(Line::styled(format!("  report    {html}"), theme.text));
    }
    lines.push(Line::styled("journal records:", theme.dim));
    for e in &row.evidence {
        lines.push(Line::styled(format!("  {e}"), theme.text));
    }
    if let Some(log) = row.logs.last() {
        let shown = state.place(log).unwrap_or_else(|_| log.clone());
        lines.push(Line::styled(
            crate::sanitize::line(&format!("end of {}:", shown.display())),
            theme.dim,
        ));
        let started = row.commands.last().map(|c| c.started.as_str());
        let tail = super::run::log_tail(state, log, 4096, started);
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

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Style;

    fn plain(rows: &[Line]) -> Vec<String> {
        rows.iter()
            .map(|l| {
                let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
                text.trim_end().to_string()
            })
            .collect()
    }

    #[test]
    fn wrapping_breaks_at_spaces_keeps_styles_and_cuts_long_words() {
        let bold = Style::new().bold();
        let line = Line::from(vec![
            Span::raw("one two "),
            Span::styled("three", bold),
            Span::raw(" abcdefghijkl"),
        ]);
        let rows = wrap(line, 8);
        assert_eq!(plain(&rows), vec!["one two", "three", "abcdefgh", "ijkl"]);
        assert_eq!(rows[1].spans[0].style, bold);
        assert!(rows.iter().all(|r| r.width() <= 8));
        assert_eq!(plain(&wrap(Line::default(), 8)), vec![""]);
    }
}
