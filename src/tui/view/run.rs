//! The Run screen: scenario / arm list with badges; the selected row's live pane
//! (a sanitized tail of its newest command log), landing evidence and, on `r`, the
//! reason chain.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::screens::reason_lines;
use super::{WIDE, badge, block};
use crate::tui::state::{AppState, Focus};
use crate::tui::theme::Theme;

/// The most of a log file the pane ever reads.
const TAIL_BYTES: u64 = 64 * 1024;

/// The last `cap` bytes of `path`, a partial first line dropped.
pub(super) fn tail_bytes(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(cap);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes)?;
    if start > 0 {
        let cut = bytes.iter().position(|b| *b == b'\n').map_or(0, |i| i + 1);
        bytes.drain(..cut);
    }
    Ok(bytes)
}

/// The last `cap` bytes of `path` as sanitized lines (a partial first line dropped).
/// An unreadable file gives one line saying so.
pub fn tail(path: &Path, cap: u64) -> Vec<String> {
    match tail_bytes(path, cap) {
        Ok(bytes) => crate::sanitize::decode(&bytes)
            .lines()
            .map(crate::sanitize::line)
            .collect(),
        Err(e) => vec![format!("(cannot read {}: {e})", path.display())],
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
    let list_width = if wide { 48 } else { 30 };
    let [list, right] =
        Layout::horizontal([Constraint::Length(list_width), Constraint::Min(0)]).areas(area);

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
            let mut spans = vec![
                Span::styled(format!("{pointer}{indent}{} ", r.id), id_style),
                badge(r.badge, theme),
            ];
            // Seeds done of those the budget plans; nothing before the budget is known.
            if wide && r.seeds_planned > 0 {
                spans.push(Span::styled(
                    format!(" {}/{} seeds", r.seeds_done, r.seeds_planned),
                    theme.dim,
                ));
                if let Some(ts) = &r.started {
                    spans.push(Span::styled(
                        format!(" {}", super::local_time(ts)),
                        theme.dim,
                    ));
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
        side.push(Line::styled(format!("ended: {ended}"), theme.warning));
    }
    if let Some(reason) = &row.not_run {
        side.push(Line::styled(format!("not run: {reason}"), theme.warning));
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
        super::chart::draw(
            frame,
            chart,
            &title,
            series.as_ref().map_err(String::as_str),
            &live.faults,
            theme,
        );
    }

    // The log the operator picked (`s` cycles), else the newest with something in
    // it (a fresh stderr log is often empty).
    let picked = state
        .ui
        .log_pick
        .filter(|_| !row.logs.is_empty())
        .map(|i| i % row.logs.len());
    let log = match picked {
        Some(i) => row.logs.get(i),
        None => row
            .logs
            .iter()
            .rev()
            .find(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0))
            .or(row.logs.last()),
    };
    let log_lines = log.map(|p| tail(p, TAIL_BYTES)).unwrap_or_default();
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
    let shown: Vec<Line> = log_lines[start..end]
        .iter()
        .map(|l| highlighted(l.clone(), query, theme))
        .collect();
    let name = log
        .and_then(|p| p.file_name())
        .map(|n| crate::sanitize::line(&n.to_string_lossy()))
        .unwrap_or_else(|| "no command yet".to_string());
    let name = match picked {
        Some(i) => format!("{name} ({}/{}, s next)", i + 1, row.logs.len()),
        None if row.logs.len() > 1 => format!("{name} (s: pick a log)"),
        None => name,
    };
    let mode = if state.ui.follow { "follow" } else { "paused" };
    let phase = serde_json::to_value(row.phase)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let title = format!("{} {phase} — {name} [{mode}]", row.id);
    frame.render_widget(Paragraph::new(shown).block(block(&title, theme)), pane);
    frame.render_widget(
        Paragraph::new(side)
            .wrap(Wrap { trim: false })
            .block(block("Landing evidence", theme)),
        evidence,
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
            Line::styled(l.clone(), style)
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled("no fault injected yet", theme.dim));
    }
    lines
}
