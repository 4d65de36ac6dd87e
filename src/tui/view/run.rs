//! The Run screen: scenario / arm list with badges; the selected row's live pane
//! (a sanitized tail of one of its command logs, picked in the log picker), landing
//! evidence and, on `r`, the reason chain.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::screens::reason_lines;
use super::{WIDE, badge, block};
use crate::tui::files::Rebase;
use crate::tui::logs::{LogPicker, PickerRow, Shown, iteration_words, iterations};
use crate::tui::state::{AppState, Focus};
use crate::tui::theme::Theme;

/// The most of a log file the pane ever reads.
const TAIL_BYTES: u64 = 64 * 1024;

/// The last `cap` bytes of `file` before `end`, a partial first line dropped.
pub(super) fn bytes_before(
    file: &mut std::fs::File,
    end: u64,
    cap: u64,
) -> std::io::Result<Vec<u8>> {
    let start = end.saturating_sub(cap);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(end - start).read_to_end(&mut bytes)?;
    if start > 0 {
        let cut = bytes.iter().position(|b| *b == b'\n').map_or(0, |i| i + 1);
        bytes.drain(..cut);
    }
    Ok(bytes)
}

/// The last `cap` bytes of `path` as sanitized lines (a partial first line dropped).
/// An unreadable file gives one line saying so.
pub fn tail(path: &Path, cap: u64) -> Vec<String> {
    tail_in(None, path, cap)
}

/// [`tail`] of `path` as placed for a replay ([`crate::tui::files::Rebase`]): never
/// through a symlink, a regular file only.
pub(super) fn tail_in(rebase: Option<&Rebase>, path: &Path, cap: u64) -> Vec<String> {
    let read = || {
        let mut file = crate::tui::files::open_placed(rebase, path)?;
        let len = file.metadata()?.len();
        bytes_before(&mut file, len, cap)
    };
    match read() {
        Ok(bytes) => lines_of(&bytes),
        Err(e) => vec![unreadable(path, &e)],
    }
}

/// `bytes` as sanitized lines, tabs expanded.
pub(super) fn lines_of(bytes: &[u8]) -> Vec<String> {
    crate::sanitize::decode(bytes)
        .lines()
        .map(|l| expand_tabs(&crate::sanitize::line(l)))
        .collect()
}

/// Columns between tab stops, as a terminal sets them.
const TAB_STOP: usize = 8;

/// `line` with each tab turned into the spaces up to the next tab stop: the
/// terminal buffer drops a tab as a control character, which ran a log's
/// tab-separated columns together.
fn expand_tabs(line: &str) -> String {
    if !line.contains('\t') {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len() + TAB_STOP);
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let spaces = TAB_STOP - column % TAB_STOP;
            out.extend(std::iter::repeat_n(' ', spaces));
            column += spaces;
        } else {
            out.push(c);
            column += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        }
    }
    out
}

/// The pane's line for a log it cannot read: why first (a narrow pane cuts the
/// path, not the reason).
pub(super) fn unreadable(path: &Path, e: &std::io::Error) -> String {
    crate::sanitize::line(&format!("(cannot read: {e}: {})", path.display()))
}

/// What a pane shows of the log at `path` (as journaled), written by a command
/// started at `started`: its tail, cut at the moment replayed when the state is a
/// replay's; a replay's path outside its session directory is not read.
pub(super) fn log_tail(
    state: &AppState,
    path: &Path,
    cap: u64,
    started: Option<&str>,
) -> Vec<String> {
    let path = match state.place(path) {
        Ok(path) => path,
        Err(why) => return vec![format!("(not shown: {why})")],
    };
    let rebase = state.rebase.as_ref();
    match state.now.filter(|_| state.replaying) {
        Some(at) => super::logcut::tail_at(rebase, &path, cap, at, started),
        None => tail_in(rebase, &path, cap),
    }
}

/// `line` with every match of `query` in the highlight style.
fn highlighted(line: String, query: Option<&str>, theme: &Theme) -> Line<'static> {
    let Some(q) = query.filter(|q| !q.is_empty()) else {
        return Line::styled(line, theme.text);
    };
    let mut spans = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find(q) {
        spans.push(Span::styled(rest[..at].to_string(), theme.text));
        spans.push(Span::styled(q.to_string(), theme.highlight));
        rest = &rest[at + q.len()..];
    }
    spans.push(Span::styled(rest.to_string(), theme.text));
    Line::from(spans)
}

pub(super) fn run(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let wide = area.width >= WIDE;
    // As wide as the longest id and badge (a verdict is never cut), within limits.
    let needed = state
        .view
        .runs
        .iter()
        .map(|r| {
            let indent = if r.arm.is_some() { 2 } else { 0 };
            2 + indent + super::fit::width(&r.id) + 1 + super::fit::width(r.badge.label()) + 2
        })
        .max()
        .unwrap_or(0)
        .saturating_add(2);
    let list_width = if wide {
        48
    } else {
        u16::try_from(needed)
            .unwrap_or(u16::MAX)
            .clamp(30, (area.width / 2).max(30))
    };
    let [list, right] =
        Layout::horizontal([Constraint::Length(list_width), Constraint::Min(0)]).areas(area);
    let room = usize::from(list_width.saturating_sub(2));

    let rows: Vec<Line> = state
        .view
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let selected = i == state.ui.selected;
            let pointer = if selected {
                theme.symbols.pointer
            } else {
                "  "
            };
            let indent = if r.arm.is_some() { "  " } else { "" };
            let id_style = if selected && state.ui.focus == Focus::List {
                theme.highlight
            } else {
                theme.text
            };
            let badge = badge(r.badge, theme);
            // The id gives way (cut with an ellipsis) before the badge does.
            let id_room = room.saturating_sub(badge.width() + 1);
            let id = super::fit::line(
                Line::styled(format!("{pointer}{indent}{}", r.id), id_style),
                id_room,
                theme,
            );
            let mut spans = id.spans;
            spans.push(Span::styled(" ", id_style));
            spans.push(badge);
            // Seeds done of those the budget plans, then when it started: each only
            // when it fits whole.
            if wide && r.seeds_planned > 0 {
                let mut extra = vec![format!(" {}/{} seeds", r.seeds_done, r.seeds_planned)];
                if let Some(ts) = &r.started {
                    extra.push(format!(" {}", super::local_time(ts)));
                }
                for text in extra {
                    let used: usize = spans.iter().map(Span::width).sum();
                    if used + super::fit::width(&text) > room {
                        break;
                    }
                    spans.push(Span::styled(text, theme.dim));
                }
            }
            Line::from(spans)
        })
        .collect();
    let visible = usize::from(list.height.saturating_sub(2)).max(1);
    let first = state.ui.selected.saturating_sub(visible - 1);
    frame.render_widget(
        Paragraph::new(rows)
            .scroll((u16::try_from(first).unwrap_or(u16::MAX), 0))
            .block(block("Scenarios", theme)),
        list,
    );

    let Some(row) = state.selected_run() else {
        return;
    };
    let mut side = landing_lines(row, theme);
    for ended in &row.ended {
        side.push(Line::styled(
            super::fit::plain(&format!("ended: {ended}"), theme),
            theme.warning,
        ));
    }
    if let Some(reason) = &row.not_run {
        side.push(Line::styled(
            super::fit::plain(&format!("not run: {reason}"), theme),
            theme.warning,
        ));
    }
    if state.ui.reasons {
        side.push(Line::styled("reason chain:", theme.dim));
        side.extend(reason_lines(row, theme));
    }
    let side_height = u16::try_from(side.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    let live = state.view.live.get(&state.ui.selected);
    let chart_height = match (live, wide) {
        (None, _) => 0,
        (Some(_), true) => 12,
        (Some(_), false) => 8,
    };
    let (pane, evidence, chart) = if wide {
        let [top, chart] =
            Layout::vertical([Constraint::Min(5), Constraint::Length(chart_height)]).areas(right);
        let [pane, evidence] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(top);
        (pane, evidence, chart)
    } else {
        let [pane, chart, evidence] = Layout::vertical([
            Constraint::Min(4),
            Constraint::Length(chart_height),
            Constraint::Length(side_height.min(right.height / 3)),
        ])
        .areas(right);
        (pane, evidence, chart)
    };
    if let Some(live) = live
        && chart.height > 0
    {
        // Read by `chart::refresh` off the drawing path; missing until it ran once.
        let series = match state.chart.as_ref().filter(|c| c.row == state.ui.selected) {
            Some(c) => c.series.clone(),
            None => Err("reading the history…".to_string()),
        };
        let title = match &series {
            Ok(s) => {
                let p50 = s
                    .buckets
                    .iter()
                    .filter_map(|b| b.p50_ms)
                    .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
                let p50 = p50.map(|v| format!(" · p50≤{v:.0} ms")).unwrap_or_default();
                format!("{} {} · {} ops{p50}", row.id, live.label, s.ops)
            }
            Err(_) => format!("{} {}", row.id, live.label),
        };
        let title = super::fit::plain(&title, theme);
        super::chart::draw(
            frame,
            chart,
            &title,
            series.as_ref().map_err(String::as_str),
            &live.faults,
            &super::chart::notes_of(state),
            theme,
        );
    }

    // The log picked (`s` opens the picker), else the fault target's or the first
    // service's.
    let shown = state.shown_log();
    let log_lines = shown
        .as_ref()
        .map(|s| log_tail(state, &s.entry.path, TAIL_BYTES, Some(&s.entry.started)))
        .unwrap_or_default();
    let height = usize::from(pane.height.saturating_sub(2));
    let back = if state.ui.follow {
        0
    } else {
        usize::from(state.ui.scroll)
    };
    let end = log_lines
        .len()
        .saturating_sub(back)
        .max(height.min(log_lines.len()));
    let start = end.saturating_sub(height);
    let query = state.ui.search.as_deref();
    let room = usize::from(pane.width.saturating_sub(2));
    let tail_lines: Vec<Line> = log_lines[start..end]
        .iter()
        .map(|l| super::fit::line(highlighted(l.clone(), query, theme), room, theme))
        .collect();
    let mode = if state.ui.follow { "follow" } else { "paused" };
    let phase = serde_json::to_value(row.phase)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let title = pane_title(
        &row.id,
        &phase,
        shown.as_ref(),
        mode,
        usize::from(pane.width.saturating_sub(4)),
        theme,
    );
    frame.render_widget(Paragraph::new(tail_lines).block(block(&title, theme)), pane);
    frame.render_widget(
        Paragraph::new(side)
            .wrap(Wrap { trim: false })
            .block(block("Landing evidence", theme)),
        evidence,
    );
    if let Some(picker) = &state.ui.logs {
        log_picker(frame, area, state, picker, theme);
    }
}

/// The pane's title, the longest of its forms that fits `room` columns: the row
/// and its phase, the log (command and stream), its iteration, follow or paused.
fn pane_title(
    id: &str,
    phase: &str,
    shown: Option<&Shown>,
    mode: &str,
    room: usize,
    theme: &Theme,
) -> String {
    let Some(shown) = shown else {
        return super::fit::plain(&format!("{id} {phase} — no command yet [{mode}]"), theme);
    };
    let log = format!("{} {}", shown.entry.name, shown.entry.stream.as_str());
    let words = iteration_words(shown.label);
    let short = shown.label.map(|l| l.to_string()).unwrap_or_default();
    let forms = [
        format!("{id} {phase} — {log} · {words} [{mode}]"),
        format!("{id} — {log} · {words} [{mode}]"),
        format!("{id} — {log} · {short} [{mode}]"),
        format!("{id} — {log} [{mode}]"),
    ]
    .map(|f| super::fit::plain(&f, theme));
    let fits = |f: &&String| f.chars().count() <= room;
    forms
        .iter()
        .find(fits)
        .unwrap_or(&forms[forms.len() - 1])
        .clone()
}

/// The widest the log picker gets.
const PICKER_WIDTH: u16 = 64;

/// The log picker over the Run screen (never over the step bar or status line):
/// the filter, one iteration's logs (or the row's iterations) and its keys.
fn log_picker(frame: &mut Frame, area: Rect, state: &AppState, picker: &LogPicker, theme: &Theme) {
    let Some(row) = state.selected_run() else {
        return;
    };
    let rows = state.picker_rows();
    let all = iterations(row);
    // Narrow terminals give it the whole width: nothing beneath shows cut beside it.
    let width = if area.width < WIDE {
        area.width
    } else {
        PICKER_WIDTH.min(area.width)
    };
    let wanted = u16::try_from(rows.len().max(1))
        .unwrap_or(u16::MAX)
        .saturating_add(4);
    let [band] = Layout::vertical([Constraint::Length(wanted.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(width)])
        .flex(Flex::Center)
        .areas(band);
    let title = super::fit::plain(
        &if picker.seeds {
            format!("{} · seeds, re-runs, reduction steps", row.id)
        } else {
            let label = all.get(picker.iteration).copied().flatten();
            format!(
                "Logs of {} · {} ({} of {})",
                row.id,
                iteration_words(label),
                picker.iteration + 1,
                all.len()
            )
        },
        theme,
    );
    frame.render_widget(Clear, rect);
    let outer = block(&title, theme);
    let inner = outer.inner(rect);
    frame.render_widget(outer, rect);
    let [filter, list, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(inner);
    let filter_line = if picker.filter.is_empty() {
        Line::styled("type to filter", theme.dim)
    } else {
        Line::from(vec![
            Span::styled("filter: ", theme.dim),
            Span::styled(crate::sanitize::line(&picker.filter), theme.text),
        ])
    };
    frame.render_widget(Paragraph::new(filter_line), filter);
    let room = usize::from(inner.width);
    let shown = state.shown_log();
    let name_width = rows
        .iter()
        .filter_map(|r| match r {
            PickerRow::Log(e) => Some(e.name.chars().count()),
            PickerRow::Iteration(..) => None,
        })
        .max()
        .unwrap_or(0);
    let mut lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (text, tags) = match r {
                PickerRow::Log(e) => {
                    let is_shown = shown
                        .as_ref()
                        .is_some_and(|s| s.iteration == picker.iteration && s.entry == *e);
                    let tags = [(e.target, "fault target"), (is_shown, "shown")];
                    (
                        format!("{:<name_width$}  {}", e.name, e.stream.as_str()),
                        tags,
                    )
                }
                PickerRow::Iteration(at, label, count) => {
                    let is_shown = shown.as_ref().is_some_and(|s| s.iteration == *at);
                    let commands = if *count == 1 { "command" } else { "commands" };
                    (
                        format!("{} ({count} {commands})", iteration_words(*label)),
                        [(false, ""), (is_shown, "shown")],
                    )
                }
            };
            let selected = i == picker.highlight;
            let pointer = if selected {
                theme.symbols.pointer
            } else {
                "  "
            };
            let mut line = format!("{pointer}{text}");
            // A tag that does not fit whole is left out.
            for (on, tag) in tags {
                if on && line.chars().count() + tag.len() + 2 <= room {
                    line.push_str("  ");
                    line.push_str(tag);
                }
            }
            let style = if selected {
                theme.highlight
            } else {
                theme.text
            };
            Line::styled(line, style)
        })
        .collect();
    if lines.is_empty() {
        let why = if row.commands.is_empty() {
            "no command has started yet"
        } else {
            "nothing matches the filter"
        };
        lines.push(Line::styled(why, theme.dim));
    }
    let visible = usize::from(list.height).max(1);
    let first = picker.highlight.saturating_sub(visible - 1);
    frame.render_widget(
        Paragraph::new(lines).scroll((u16::try_from(first).unwrap_or(u16::MAX), 0)),
        list,
    );
    let hint = if picker.seeds {
        "Enter: its logs · Tab: back · Esc: close"
    } else {
        "Enter: show · Left/Right: seed · Tab: all seeds · Esc: close"
    };
    frame.render_widget(
        Paragraph::new(Line::styled(super::fit::plain(hint, theme), theme.dim)),
        keys,
    );
}

fn landing_lines(row: &crate::tui::state::RunRow, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = row
        .landing
        .iter()
        .map(|l| {
            let style = if l.contains("NOT seen") {
                theme.warning
            } else {
                theme.text
            };
            Line::styled(super::fit::plain(l, theme), style)
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled("no fault injected yet", theme.dim));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log's tabs reach the pane as spaces to the next stop of 8 columns, counted
    /// in display columns (a wide character takes two); escapes are still removed.
    #[test]
    fn a_log_s_tabs_become_spaces_to_the_next_tab_stop() {
        let log = "a\tb\n\u{4e2d}\tx\n12345678\ty\n\t\u{1b}[31mred\tz\nplain\n";
        assert_eq!(
            lines_of(log.as_bytes()),
            [
                "a       b",
                "\u{4e2d}      x",
                "12345678        y",
                "        red     z",
                "plain",
            ]
        );
    }
}
