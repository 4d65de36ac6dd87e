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
use crate::oracle::series::{Bucket, Series, Tally};
use crate::session::view::{FaultLine, Live};
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::verdict::Verdict;

/// The most of a history read at once: a history opened when more than this was
/// appended since the last read (a long run's chart opened late) is charted from
/// its newest part. Longest line likewise.
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
    /// The history read so far, read on from where it stopped at the next refresh.
    reader: Option<Box<HistoryTail>>,
}

impl LiveChart {
    /// A copy to draw: without the history read so far (a replay keeps that once).
    pub fn shown(&self) -> LiveChart {
        LiveChart {
            row: self.row,
            label: self.label,
            len: self.len,
            faults: self.faults.clone(),
            series: self.series.clone(),
            reader: None,
        }
    }
}

/// Reads the selected row's history again only when something the chart shows
/// changed (another row or iteration, the file grew, a fault's state): called on
/// the UI's refresh tick, so drawing never parses a history. Only what was appended
/// since the last read is read ([`HistoryTail`]).
pub fn refresh(state: &mut AppState) {
    let row = state.ui.selected;
    let Some(live) = state.view.live.get(&row) else {
        state.chart = None;
        return;
    };
    // Where the history is read (a replay's under the directory replayed), or why
    // it is not.
    let history = live.history.as_ref().map(|p| state.place(p));
    let len = match &history {
        Some(Ok(p)) => std::fs::symlink_metadata(p)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len()),
        _ => None,
    };
    let same = state.chart.as_ref().is_some_and(|c| {
        c.row == row && c.label == live.label && c.len == len && c.faults == live.faults
    });
    if same && len.is_some() {
        return;
    }
    // The same iteration's history: read on from where the last refresh stopped.
    let kept = state
        .chart
        .take()
        .filter(|c| c.row == row && c.label == live.label)
        .and_then(|c| c.reader)
        .filter(|r| {
            matches!(&history, Some(Ok(p)) if *p == r.path)
                && r.fields == live.fields
                && r.rebase == state.rebase
        });
    let (series, reader) = match history {
        Some(Ok(path)) => {
            let mut reader = kept.unwrap_or_else(|| {
                Box::new(HistoryTail {
                    rebase: state.rebase.clone(),
                    ..HistoryTail::new(path, live.fields.clone())
                })
            });
            let series = reader.series(&live.faults);
            (series, Some(reader))
        }
        Some(Err(why)) => (Err(format!("history not shown: {why}")), None),
        None => (Err(no_history(state, row)), None),
    };
    state.chart = Some(LiveChart {
        row,
        label: live.label,
        len,
        faults: live.faults.clone(),
        series,
        reader,
    });
}

/// A history file read as it grows: what was appended since the last read is read
/// and parsed, a line still being written waits in `carry`, and the new ops are
/// folded into the series ([`Tally`]: a small record per op, not the ops), so a
/// refresh costs what was appended, not the run so far. Read from its start again
/// only when the file shrank or another file took its name (device and inode).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HistoryTail {
    path: std::path::PathBuf,
    fields: std::collections::BTreeMap<String, String>,
    /// A replay's: `path` is opened beneath its directory.
    rebase: Option<crate::tui::files::Rebase>,
    /// Device and inode of the file read.
    file: Option<(u64, u64)>,
    /// Bytes of the file read (`carry` included).
    offset: u64,
    carry: Vec<u8>,
    tally: Tally,
    /// Lines parsed so far (an error names the line counted from where reading began).
    lines: usize,
    /// Why the history cannot be charted; kept until the file is read afresh.
    error: Option<String>,
    /// Bytes read from disk in all, across fresh starts.
    read_in_all: u64,
}

impl HistoryTail {
    pub fn new(
        path: std::path::PathBuf,
        fields: std::collections::BTreeMap<String, String>,
    ) -> HistoryTail {
        HistoryTail {
            path,
            fields,
            ..HistoryTail::default()
        }
    }

    /// Reads what was appended since the last read, then the series of every op
    /// read, its windows named by `faults`.
    pub fn series(&mut self, faults: &[FaultLine]) -> Result<Series, String> {
        self.read_on()
            .map_err(|e| format!("history not readable yet: {e}"))?;
        if let Some(why) = &self.error {
            return Err(why.clone());
        }
        let marks: Vec<_> = faults.iter().map(|f| f.mark.clone()).collect();
        Ok(self.tally.series(&marks))
    }

    fn read_on(&mut self) -> std::io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        use std::os::unix::fs::MetadataExt;
        // Never through a symlink, a regular file only (a fifo does not hang it).
        let mut file = crate::tui::files::open_placed(self.rebase.as_ref(), &self.path)?;
        let meta = file.metadata()?;
        let id = (meta.dev(), meta.ino());
        let len = meta.len();
        if self.file != Some(id) || len < self.offset {
            *self = HistoryTail {
                file: Some(id),
                read_in_all: self.read_in_all,
                rebase: self.rebase.take(),
                ..HistoryTail::new(
                    std::mem::take(&mut self.path),
                    std::mem::take(&mut self.fields),
                )
            };
        }
        if len == self.offset || self.error.is_some() {
            return Ok(());
        }
        let mut from = self.offset;
        let mut partial = false;
        if len - from > HISTORY_CAP {
            // More than the cap since the last read: its newest part only, from the
            // first whole line in it.
            from = len - HISTORY_CAP;
            partial = true;
            self.carry.clear();
            self.tally = Tally::default();
        }
        file.seek(SeekFrom::Start(from))?;
        let mut bytes = std::mem::take(&mut self.carry);
        let read = file.take(len - from).read_to_end(&mut bytes)?;
        self.read_in_all += read as u64;
        self.offset = from + read as u64;
        if partial {
            let cut = bytes
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |i| i + 1);
            bytes.drain(..cut);
        }
        // A line still being written is not read yet.
        let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        self.carry = bytes.split_off(end);
        if self.carry.len() as u64 > HISTORY_CAP {
            self.error = Some(format!(
                "history not readable: a line of more than {} MiB",
                HISTORY_CAP >> 20
            ));
            self.carry = Vec::new();
            return Ok(());
        }
        if bytes.is_empty() {
            return Ok(());
        }
        let mut text = String::from_utf8_lossy(&bytes);
        // A recorder's closing `{"ops_total": N}` counts the whole file, not this
        // read: left out, its line blank so the lines keep their numbers.
        if text.contains("ops_total") {
            let kept: Vec<&str> = text
                .split('\n')
                .map(|l| if is_trailer(l) { "" } else { l })
                .collect();
            text = std::borrow::Cow::Owned(kept.join("\n"));
        }
        match crate::oracle::history::parse_jsonl_renamed("history", &text, &self.fields) {
            Ok(history) => {
                self.lines += text.matches('\n').count();
                self.tally.add(&history.ops);
            }
            Err(e) => {
                let e = shifted(e, self.lines);
                self.error = Some(crate::sanitize::line(&format!("history not readable: {e}")));
            }
        }
        Ok(())
    }
}

/// A history's trailer line: an object of `ops_total` alone.
fn is_trailer(line: &str) -> bool {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(line.trim())
        .is_ok_and(|m| m.len() == 1 && m.contains_key("ops_total"))
}

/// `e` with its line counted from where reading began, not from this read's start.
fn shifted(
    e: crate::oracle::history::HistoryError,
    before: usize,
) -> crate::oracle::history::HistoryError {
    use crate::oracle::history::HistoryError;
    match e {
        HistoryError::Field {
            source_name,
            line,
            field,
            message,
        } => HistoryError::Field {
            source_name,
            line: line + before,
            field,
            message,
        },
        HistoryError::Line {
            source_name,
            line,
            message,
        } => HistoryError::Line {
            source_name,
            line: line + before,
            message,
        },
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
    let dir = state.session_dir_shown()?;
    let mut cache = DECLARED.lock().ok()?;
    if cache.as_ref().is_none_or(|(d, _)| d != dir) {
        *cache = Some((dir.to_path_buf(), read_declared(&state.plan, dir)));
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
    let sidecar = match crate::tui::files::read_text(
        &input.join("plan.run.yaml"),
        crate::tui::files::TEXT_CAP,
    ) {
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
/// none yet (read whole, once).
pub fn live_series(live: &Live) -> Result<Series, String> {
    let Some(path) = &live.history else {
        return Err(NOT_DECLARED.into());
    };
    HistoryTail::new(path.clone(), live.fields.clone()).series(&live.faults)
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
/// those written during the iteration its chart shows, on the chart's clock: from
/// the workload's start (one written before it, at its start).
pub fn notes_of(state: &AppState) -> ChartNotes {
    let row = state.ui.selected;
    let live = state.view.live.get(&row);
    let label = live.map(|l| l.label);
    let workload = live.and_then(|l| l.workload_started.as_deref());
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
            .filter_map(|n| millis_after(workload?, &n.ts))
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

/// Milliseconds from `from` to `to` (RFC 3339), 0 when `to` is earlier.
fn millis_after(from: &str, to: &str) -> Option<u64> {
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    u64::try_from((parse(to)? - parse(from)?).num_milliseconds().max(0)).ok()
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
            // Cut at a word with an ellipsis, never mid-word by the border.
            let room = usize::from(area.width.saturating_sub(2));
            let why = super::fit::words(why, room, theme);
            let text = Paragraph::new(Line::styled(why, theme.dim));
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
    /// A mark on the timeline row at each of `marks_ms` (ms after the workload's
    /// start; the chart counts from its first invoke, a client's exec later; past the
    /// last column, at it).
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const HISTORY: &str =
        include_str!("../../../tests/fixtures/histories/demo-d3-two-faults.jsonl");

    /// Each refresh reads only what was appended (a half-written line waits for its
    /// end); a file cut short or replaced is read from its start.
    #[test]
    fn the_history_is_read_on_from_where_it_stopped() {
        let lines: Vec<&str> = HISTORY.lines().collect();
        assert!(lines.len() > 20);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("history.jsonl");
        let mut file = std::fs::File::create(&path).expect("history");
        let mut tail = HistoryTail::new(path.clone(), Default::default());
        let mut written = 0u64;
        let mut write = |file: &mut std::fs::File, text: &str| {
            file.write_all(text.as_bytes()).expect("write");
            file.flush().expect("flush");
            written += text.len() as u64;
            written
        };
        let ops = |tail: &mut HistoryTail| tail.series(&[]).expect("series").ops;

        let ten = format!("{}\n", lines[..10].join("\n"));
        let at = write(&mut file, &ten);
        assert_eq!(ops(&mut tail), 10);
        assert_eq!(tail.read_in_all, at);
        // Nothing appended: nothing read.
        assert_eq!(ops(&mut tail), 10);
        assert_eq!(tail.read_in_all, at);
        // Half a line: read, not parsed.
        let (head, rest) = lines[10].split_at(lines[10].len() / 2);
        let at = write(&mut file, head);
        assert_eq!(ops(&mut tail), 10);
        assert_eq!(tail.read_in_all, at);
        let at = write(&mut file, &format!("{rest}\n{}\n", lines[11]));
        assert_eq!(ops(&mut tail), 12);
        assert_eq!(tail.read_in_all, at, "each byte read once");
        let whole = live_series(&Live {
            history: Some(path.clone()),
            ..Live::default()
        })
        .expect("read whole");
        assert_eq!(tail.series(&[]), Ok(whole));

        // Cut short: read from its start.
        file.set_len(0).expect("truncate");
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("reopen");
        file.write_all(format!("{}\n", lines[0]).as_bytes())
            .expect("write");
        assert_eq!(ops(&mut tail), 1);
        // Replaced by another file (a rename over it), longer than what was read.
        let other = dir.path().join("new.jsonl");
        std::fs::write(&other, format!("{}\n", lines[..15].join("\n"))).expect("other");
        std::fs::rename(&other, &path).expect("rename");
        assert_eq!(ops(&mut tail), 15);
    }

    /// A note's mark counts from the workload's start, where the chart's clock
    /// begins, not from the iteration's (preconditions, the cluster coming up).
    #[test]
    fn a_note_is_marked_at_its_time_after_the_workload_started() {
        use crate::session::event::{self, Event};
        use crate::session::journal::{Record, Scope};
        let plan = crate::plan::parse_plan(
            "examples/demo/plan.md",
            include_str!("../../../examples/demo/plan.md"),
        );
        let mut state = AppState::new(plan);
        let d3 = Scope {
            scenario: Some("D3".into()),
            arm: None,
        };
        let note = |text: &str| {
            Event::OperatorNote(event::OperatorNote {
                text: text.into(),
                ..Default::default()
            })
        };
        let records = [
            (
                &d3,
                "2026-12-03T03:00:00Z",
                Event::IterationStarted(event::IterationStarted {
                    seed: 1,
                    label: crate::session::label::IterationLabel::seed(1),
                    duration_ms: 4_000,
                }),
            ),
            (&Scope::default(), "2026-12-03T03:00:01Z", note("early")),
            (
                &d3,
                "2026-12-03T03:00:01.500Z",
                Event::CommandStarted(event::CommandStarted {
                    name: "workload".into(),
                    ..Default::default()
                }),
            ),
            (&Scope::default(), "2026-12-03T03:00:02.500Z", note("later")),
        ];
        for (seq, (scope, ts, event)) in records.into_iter().enumerate() {
            state.apply(&Record {
                seq: seq as u64 + 1,
                ts: ts.into(),
                scope: scope.clone(),
                event,
            });
        }
        state.ui.selected = state.view.live.keys().next().copied().unwrap_or(0);
        assert_eq!(notes_of(&state).marks_ms, vec![0, 1_000]);
    }

    #[test]
    fn a_bad_line_is_named_by_its_line_in_the_file() {
        let lines: Vec<&str> = HISTORY.lines().collect();
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("history.jsonl");
        std::fs::write(&path, format!("{}\n{}\n", lines[0], lines[1])).expect("history");
        let mut tail = HistoryTail::new(path.clone(), Default::default());
        assert!(tail.series(&[]).is_ok());
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("reopen");
        // The recorder's trailer counts the whole file, not the last read.
        file.write_all(format!("{}\n{{\"ops_total\": 3}}\n", lines[2]).as_bytes())
            .expect("write");
        assert_eq!(tail.series(&[]).map(|s| s.ops), Ok(3));
        file.write_all(b"not json\n").expect("write");
        let why = tail.series(&[]).expect_err("a bad line");
        assert!(why.contains(":5:"), "{why}");
    }
}
