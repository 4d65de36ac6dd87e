//! The live chart: ops per bucket as stacked columns (ok / failed / unknown, in
//! the verdict colours), every fault window shaded behind them, a p99 latency row,
//! and a timeline naming each window, marked proven or not. Drawn cell by cell so
//! the same picture reads in a snapshot, a screenshot and a 16-colour terminal.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use super::block;
use crate::oracle::series::{Bucket, Series};
use crate::session::view::{FaultLine, Live};
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::verdict::Verdict;

/// The most of a growing history the chart reads (the newest part beyond it is
/// what a long run charts).
const HISTORY_CAP: u64 = 32 * 1024 * 1024;

/// The selected row's chart as last read: which row and iteration, what its
/// history's length and faults were then, and the series (or why there is none).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveChart {
    pub row: usize,
    pub label: crate::session::label::IterationLabel,
    pub len: Option<u64>,
    pub faults: Vec<FaultLine>,
    pub series: Result<Series, String>,
}

/// Reads the selected row's history again only when something the chart shows
/// changed (another row or iteration, the file grew, a fault's state): called on
/// the UI's refresh tick, so drawing never parses a history.
pub fn refresh(state: &mut AppState) {
    let row = state.ui.selected;
    let Some(live) = state.view.live.get(&row) else {
        state.chart = None;
        return;
    };
    let len = live
        .history
        .as_ref()
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| m.len());
    let same = state.chart.as_ref().is_some_and(|c| {
        c.row == row && c.label == live.label && c.len == len && c.faults == live.faults
    });
    if !same || len.is_none() {
        let series = match live.history {
            Some(_) => live_series(live),
            None => Err(no_history(state, row)),
        };
        state.chart = Some(LiveChart {
            row,
            label: live.label,
            len,
            faults: live.faults.clone(),
            series,
        });
    }
}

/// Why a row's iteration has no history to chart: none declared as JSONL, or one is
/// and the workload has not started (or never did, the iteration ended before it).
fn no_history(state: &AppState, row: usize) -> String {
    let declared = state
        .view
        .runs
        .get(row)
        .and_then(|r| declares_jsonl(state, &r.id));
    match declared {
        Some(true) => {
            let running = state.view.session_verdict.is_none() && state.view.active == Some(row);
            if running {
                "no history yet: the workload has not started".into()
            } else {
                "no history: the workload never started in this iteration".into()
            }
        }
        _ => NOT_DECLARED.into(),
    }
}

/// What the chart says of an iteration whose run spec declares no JSONL history.
const NOT_DECLARED: &str = "no JSONL history declared";

/// The run spec's bindings that declare a JSONL history (`true`) or not, by id, as
/// last read from a session's saved inputs: read once per session directory.
type Declared = (
    std::path::PathBuf,
    Option<std::collections::BTreeMap<String, bool>>,
);
static DECLARED: std::sync::Mutex<Option<Declared>> = std::sync::Mutex::new(None);

/// Whether binding `id` (`D3`, `D5/api`) of the session's run spec declares a JSONL
/// history; `None` when the run spec cannot be read (no session directory, its saved
/// inputs unreadable).
fn declares_jsonl(state: &AppState, id: &str) -> Option<bool> {
    let dir = state.view.session_dir.as_ref()?;
    let mut cache = DECLARED.lock().ok()?;
    if cache.as_ref().is_none_or(|(d, _)| d != dir) {
        *cache = Some((dir.clone(), read_declared(&state.plan, dir)));
    }
    let declared = cache.as_ref()?.1.as_ref()?;
    declared
        .get(id)
        .or_else(|| declared.get(id.split('/').next().unwrap_or(id)))
        .copied()
}

/// [`declares_jsonl`] for every binding and arm of the run spec saved in `session`
/// (its `input/plan.run.yaml`, and the plan's embedded blocks).
fn read_declared(
    plan: &crate::plan::Plan,
    session: &std::path::Path,
) -> Option<std::collections::BTreeMap<String, bool>> {
    use crate::runspec::{Binding, HistoryFormat};
    let input = session.join("input");
    let sidecar = match std::fs::read_to_string(input.join("plan.run.yaml")) {
        Ok(text) => Some(text),
        // A plan whose run spec is all in embedded blocks saves no sidecar.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && input.join("plan.md").is_file() => {
            None
        }
        Err(_) => return None,
    };
    let spec = crate::runspec::load(plan, sidecar.as_deref().map(|t| ("plan.run.yaml", t))).ok()?;
    let jsonl = |b: &Binding| b.history.as_ref().map(|h| h.format == HistoryFormat::Jsonl);
    let mut out = std::collections::BTreeMap::new();
    for (id, (binding, _)) in &spec.bindings {
        let own = jsonl(binding).unwrap_or(false);
        out.insert(id.clone(), own);
        for (arm, inner) in &binding.arms {
            out.insert(format!("{id}/{arm}"), jsonl(inner).unwrap_or(own));
        }
    }
    Some(out)
}

/// The series of a live iteration's history as it stands on disk, or why there is
/// none yet.
pub fn live_series(live: &Live) -> Result<Series, String> {
    let Some(path) = &live.history else {
        return Err(NOT_DECLARED.into());
    };
    let read = || -> std::io::Result<Vec<u8>> {
        let mut bytes = super::run::tail_bytes(path, HISTORY_CAP)?;
        // A line still being written is not read yet.
        let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(end);
        Ok(bytes)
    };
    let bytes = read().map_err(|e| format!("history not readable yet: {e}"))?;
    let text = String::from_utf8_lossy(&bytes);
    let history = crate::oracle::history::parse_jsonl_renamed("history", &text, &live.fields)
        .map_err(|e| crate::sanitize::line(&format!("history not readable: {e}")))?;
    let marks: Vec<_> = live.faults.iter().map(|f| f.mark.clone()).collect();
    Ok(crate::oracle::series::of_history(&history.ops, &marks))
}

/// The selected row's notes as its chart shows them: a mark where each note of the
/// charted iteration was written, and one line for the row's latest note.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChartNotes {
    /// When the notes of the charted iteration were written, in ms after its start.
    pub marks_ms: Vec<u64>,
    /// The row's notes in all.
    pub count: usize,
    /// The latest one: who and when (`alice 12:03:04`), and its text on one line.
    pub latest: Option<(String, String)>,
}

/// The notes of the selected row ([`crate::session::view::NoteRow::row`]); marks for
/// those written during the iteration its chart shows.
pub fn notes_of(state: &AppState) -> ChartNotes {
    let row = state.ui.selected;
    let label = state.view.live.get(&row).map(|l| l.label);
    let notes: Vec<_> = state
        .view
        .notes
        .iter()
        .filter(|n| n.row == Some(row))
        .collect();
    ChartNotes {
        marks_ms: notes
            .iter()
            .filter(|n| n.iteration.is_some() && n.iteration == label)
            .filter_map(|n| n.iteration_ms)
            .collect(),
        count: notes.len(),
        latest: notes.last().map(|n| {
            let name = crate::sanitize::line(n.who.label.as_deref().unwrap_or(&n.who.user));
            let text: Vec<&str> = n.text.split_whitespace().collect();
            (
                format!("{name} {}", super::local_time(&n.ts)),
                text.join(" "),
            )
        }),
    }
}

/// Draws the chart of `series` (or `missing`, why there is none) in a block titled
/// for the row's iteration, with `notes`: their line in the block's lower border, a
/// mark on the timeline where each note of this iteration was written.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    series: Result<&Series, &str>,
    faults: &[FaultLine],
    notes: &ChartNotes,
    theme: &Theme,
) {
    let mut b = block(title, theme);
    if let Some(line) = notes_line(notes, usize::from(area.width.saturating_sub(4)), theme) {
        b = b.title_bottom(Line::styled(format!(" {line} "), theme.highlight));
    }
    let series = match series {
        Ok(s) if !s.buckets.is_empty() => s,
        Ok(_) => {
            let text = Paragraph::new(Line::styled("no operations recorded yet", theme.dim));
            frame.render_widget(text.block(b), area);
            return;
        }
        Err(why) => {
            let text = Paragraph::new(Line::styled(why.to_string(), theme.dim));
            frame.render_widget(text.block(b), area);
            return;
        }
    };
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let chart = Chart {
        series,
        faults,
        theme,
    };
    frame.render_widget(&chart, inner);
    chart.mark_notes(&notes.marks_ms, inner, frame.buffer_mut());
}

/// The notes' line in `room` columns: `note by alice 12:03:04: the text…`, or
/// `3 notes, last by …` (the text cut at a word, with an ellipsis).
fn notes_line(notes: &ChartNotes, room: usize, theme: &Theme) -> Option<String> {
    let (by, text) = notes.latest.as_ref()?;
    let head = match notes.count {
        0 | 1 => format!("note by {by}: "),
        n => format!("{n} notes, last by {by}: "),
    };
    let line = format!("{head}{text}");
    Some(super::fit::words(&line, room, theme))
}

/// The chart's body (inside its block).
pub struct Chart<'a> {
    pub series: &'a Series,
    pub faults: &'a [FaultLine],
    pub theme: &'a Theme,
}

/// Columns merged from buckets so every bucket fits the width.
struct Column {
    bucket: Bucket,
    start_s: f64,
    end_s: f64,
}

/// The plot's left gutter (the scale), in columns.
const GUTTER: u16 = 6;

impl Chart<'_> {
    /// A mark on the timeline row at each of `marks_ms` (the iteration's clock, put on
    /// the chart's, which counts from the first invoke: a mark sits right of the ops
    /// of its moment by the workload's start-up; past the last column, at it).
    fn mark_notes(&self, marks_ms: &[u64], area: Rect, buf: &mut Buffer) {
        if area.height < 4 || area.width < 12 || marks_ms.is_empty() {
            return;
        }
        let cols = self.columns(usize::from(area.width - GUTTER));
        let cell_w = self.cell_width(area, cols.len());
        let glyph = if self.theme.symbols.bar.is_ascii() {
            "*"
        } else {
            "◆"
        };
        let y = area.y + area.height - 2;
        for ms in marks_ms {
            let at_s = *ms as f64 / 1000.0;
            let i = cols
                .iter()
                .position(|c| at_s < c.end_s)
                .unwrap_or(cols.len().saturating_sub(1));
            let x = area.x + GUTTER + u16::try_from(i).unwrap_or(u16::MAX).saturating_mul(cell_w);
            if x < area.right() {
                buf.set_string(x, y, glyph, self.theme.highlight);
            }
        }
    }

    /// Columns per bucket column: few buckets are drawn wide so the run fills the plot.
    fn cell_width(&self, area: Rect, columns: usize) -> u16 {
        let plot_w = usize::from(area.width.saturating_sub(GUTTER));
        u16::try_from(plot_w / columns.max(1)).unwrap_or(1).max(1)
    }

    fn columns(&self, width: usize) -> Vec<Column> {
        let s = self.series;
        let per = s.buckets.len().div_ceil(width.max(1)).max(1);
        s.buckets
            .chunks(per)
            .map(|chunk| {
                let mut merged = Bucket::default();
                for b in chunk {
                    merged.ok += b.ok;
                    merged.fail += b.fail;
                    merged.unknown += b.unknown;
                    merged.p50_ms = max_of(merged.p50_ms, b.p50_ms);
                    merged.p99_ms = max_of(merged.p99_ms, b.p99_ms);
                }
                let start_s = chunk.first().map_or(0.0, |b| b.start_s);
                Column {
                    bucket: merged,
                    start_s,
                    end_s: start_s + s.bucket_s * chunk.len() as f64,
                }
            })
            .collect()
    }

    /// The window (index) a column lies in, if any.
    fn window_at(&self, c: &Column) -> Option<usize> {
        self.series
            .windows
            .iter()
            .position(|w| w.from_s < c.end_s && c.start_s <= w.to_s)
    }

    fn proven_style(&self, proven: Option<bool>) -> Style {
        match proven {
            Some(true) => self.theme.text,
            _ => self.theme.warning,
        }
    }
}

fn max_of(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

impl Widget for Chart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        (&self).render(area, buf);
    }
}

impl Widget for &Chart<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.height < 4 || area.width < 12 {
            return;
        }
        let t = self.theme;
        let sym = &t.symbols;
        let gutter = GUTTER;
        let plot_w = usize::from(area.width - gutter);
        let cols = self.columns(plot_w);
        let bars_h = area.height - 3;
        let peak = cols
            .iter()
            .map(|c| c.bucket.total())
            .max()
            .unwrap_or(0)
            .max(1);
        // A fifth of headroom above the tallest column, so a window's shading shows
        // even where the workload never slowed.
        let scale_top = u64::from(peak) * 5 / 4 + 1;
        let bucket_s =
            self.series.bucket_s * (self.series.buckets.len() as f64 / cols.len().max(1) as f64);
        let peak_rate = scale_top as f64 / bucket_s.max(1e-9);
        let top = format!("{peak_rate:>4.0}/s");
        buf.set_string(area.x, area.y, truncate(&top, gutter), t.dim);
        buf.set_string(area.x, area.y + bars_h - 1, "   0", t.dim);
        let (ok_s, fail_s, unk_s) = (
            t.verdict(Verdict::PassHardening),
            t.verdict(Verdict::FailReproducible),
            t.warning,
        );
        let cell_w = self.cell_width(area, cols.len());
        let right = area.right();
        let worst = cols
            .iter()
            .filter_map(|c| c.bucket.p99_ms)
            .fold(0.0_f64, f64::max);
        for (i, c) in cols.iter().enumerate() {
            let x = area.x + gutter + u16::try_from(i).unwrap_or(u16::MAX).saturating_mul(cell_w);
            if x >= right {
                break;
            }
            let scale = |n: u32| -> u16 {
                let cells = (u64::from(n) * u64::from(bars_h)).div_ceil(scale_top);
                u16::try_from(cells).unwrap_or(bars_h).min(bars_h)
            };
            let total = scale(c.bucket.total());
            let fail = scale(c.bucket.fail).min(total);
            let unknown = scale(c.bucket.unknown).min(total - fail);
            let window = self.window_at(c);
            for level in 0..bars_h {
                let y = area.y + bars_h - 1 - level;
                let (text, style) = if level < total {
                    if level < fail {
                        (sym.bar_fail, fail_s)
                    } else if level < fail + unknown {
                        (sym.bar_unknown, unk_s)
                    } else {
                        (sym.bar, ok_s)
                    }
                } else if let Some(w) = window {
                    (sym.shade, self.proven_style(self.series.windows[w].proven))
                } else {
                    (" ", t.text)
                };
                fill(buf, (x, cell_w, right), y, text, style);
            }
            // Latency: p99 as one of eight levels of the run's worst p99.
            if let Some(p99) = c.bucket.p99_ms.filter(|_| worst > 0.0) {
                let level = ((p99 / worst) * 7.0).round().clamp(0.0, 7.0) as usize;
                fill(
                    buf,
                    (x, cell_w, right),
                    area.y + bars_h,
                    sym.levels[level],
                    t.text,
                );
            }
            // Timeline: the window's line, proven or not.
            if let Some(w) = window {
                let proven = self.series.windows[w].proven;
                let mark = if proven == Some(true) {
                    sym.window
                } else {
                    sym.window_unproven
                };
                fill(
                    buf,
                    (x, cell_w, right),
                    area.y + bars_h + 1,
                    mark,
                    self.proven_style(proven),
                );
            }
        }
        buf.set_string(
            area.x,
            area.y + bars_h,
            truncate(&format!("p99{:>3}", short_ms(worst)), gutter),
            t.dim,
        );
        buf.set_string(area.x, area.y + bars_h + 1, "fault", t.dim);
        // Window names on the timeline row's last line, each at its first column.
        let names_y = area.y + bars_h + 2;
        let mut free_from = area.x + gutter;
        for w in &self.series.windows {
            let Some(first) = cols
                .iter()
                .position(|c| w.from_s < c.end_s && c.start_s <= w.to_s)
            else {
                continue;
            };
            let x = (area.x
                + gutter
                + u16::try_from(first)
                    .unwrap_or(u16::MAX)
                    .saturating_mul(cell_w))
            .max(free_from);
            if x >= area.right() {
                break;
            }
            let state = self
                .faults
                .iter()
                .rev()
                .find(|f| f.mark.fault == w.fault)
                .map(|f| if f.healed { "" } else { " held" })
                .unwrap_or_default();
            let mark = match w.proven {
                Some(true) => "proven",
                Some(false) => "NOT proven",
                None => "landing?",
            };
            let label = format!("{} {mark}{state} ", w.fault);
            let room = usize::from(area.right() - x);
            let label = truncate(&label, u16::try_from(room).unwrap_or(u16::MAX));
            let width = u16::try_from(label.chars().count()).unwrap_or(u16::MAX);
            buf.set_string(x, names_y, &label, self.proven_style(w.proven));
            free_from = x.saturating_add(width);
        }
    }
}

/// `text` in `width` cells from `x` (not past `right`).
fn fill(buf: &mut Buffer, (x, width, right): (u16, u16, u16), y: u16, text: &str, style: Style) {
    for dx in 0..width {
        let at = x.saturating_add(dx);
        if at >= right {
            break;
        }
        buf.set_string(at, y, text, style);
    }
}

/// A latency in the gutter's few cells: `850`, `12s`.
fn short_ms(ms: f64) -> String {
    if ms >= 10_000.0 {
        format!("{:.0}s", ms / 1000.0)
    } else {
        format!("{ms:.0}")
    }
}

fn truncate(text: &str, width: u16) -> String {
    text.chars().take(usize::from(width)).collect()
}
