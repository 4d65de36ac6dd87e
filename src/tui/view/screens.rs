//! The text and table screens: Plan, Toolbox, Checklist, Approvals, Finding, Report.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Wrap};

use super::{WIDE, badge, block};
use crate::plan::{SevenM, Severity};
use crate::session::operator::QuestionKind;
use crate::tui::state::{AppState, Badge, Focus, RunRow, Step};
use crate::tui::theme::Theme;

/// Scenario tree with arms, §7.M state and lint problems inline; the selected
/// scenario's details beside it when there is room.
pub(super) fn plan(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let mut lines = Vec::new();
    let selected = state.selected_run().map(|r| r.scenario.as_str());
    for s in &state.plan.scenarios {
        let seven_m = match &s.seven_m {
            SevenM::Filled(b) => format!("§7.M {}", b.model_kind.as_deref().unwrap_or("filled")),
            SevenM::NotApplicable { .. } => "§7.M n/a".to_string(),
            SevenM::Missing => "§7.M missing".to_string(),
        };
        let pointer = if selected == Some(s.id.as_str()) {
            theme.symbols.pointer
        } else {
            "  "
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{pointer}{} ", s.id),
                theme.highlight_if(selected == Some(&s.id)),
            ),
            Span::styled(s.name.clone(), theme.text),
            Span::styled(format!("  ({seven_m})"), theme.dim),
        ]));
        for a in &s.arms {
            lines.push(Line::from(vec![
                Span::styled(format!("    {}{} ", theme.symbols.branch, a.id), theme.text),
                Span::styled(a.description.clone(), theme.dim),
            ]));
        }
        for p in state
            .problems
            .iter()
            .filter(|p| p.scenario.as_deref() == Some(&s.id))
        {
            lines.push(problem_line(p, theme));
        }
    }
    for p in state.problems.iter().filter(|p| p.scenario.is_none()) {
        lines.push(problem_line(p, theme));
    }
    let title = format!("Plan: {}", state.plan.slug);
    let area = if state.handed_back {
        hand_back(frame, area, state, theme)
    } else {
        area
    };
    // Each line cut at a word with an ellipsis: a problem reads whole in the
    // hand-back list, a scenario in the detail beside the tree.
    let tree = |width: u16| {
        let room = usize::from(width.saturating_sub(2));
        let lines: Vec<Line> = lines
            .iter()
            .map(|l| super::fit::line(l.clone(), room, theme))
            .collect();
        Paragraph::new(lines).block(block(&title, theme))
    };
    if area.width < WIDE {
        frame.render_widget(tree(area.width), area);
        return;
    }
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    frame.render_widget(tree(left.width), left);
    let mut detail = Vec::new();
    if let Some(s) = state
        .plan
        .scenarios
        .iter()
        .find(|s| Some(s.id.as_str()) == selected)
    {
        let fields = [
            ("Falsifies", s.falsifies.join(", ")),
            ("Technique", field(&s.technique)),
            ("Workload", field(&s.workload)),
            ("Faults", field(&s.faults)),
            ("Oracle", field(&s.oracle)),
        ];
        for (name, value) in fields {
            detail.push(Line::from(vec![
                Span::styled(format!("{name}: "), theme.dim),
                Span::styled(value, theme.text),
            ]));
        }
    }
    frame.render_widget(
        Paragraph::new(detail)
            .wrap(Wrap { trim: true })
            .block(block("Scenario", theme)),
        right,
    );
}

/// The hand-back list under the tree: every problem that stops the run, each
/// wrapped whole. When they do not all fit, the list starts at the selected
/// scenario's first problem (the arrows move through them) and the title says how
/// many show. Returns the area left for the tree.
fn hand_back(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) -> Rect {
    let stops: Vec<&crate::plan::Problem> = state
        .problems
        .iter()
        .filter(|p| p.severity == Severity::HandBack)
        .collect();
    let inner = area.width.saturating_sub(2);
    let wrapped: Vec<Vec<Line<'static>>> = stops
        .iter()
        .map(|p| {
            let scope = p.scenario.as_deref().unwrap_or("plan");
            let line = Line::styled(
                format!(
                    "{}{scope} line {} {}: {}",
                    theme.symbols.warn,
                    p.line,
                    p.field,
                    crate::sanitize::line(&p.message)
                ),
                theme.mismatch,
            );
            super::overlay::wrap(line, inner)
        })
        .collect();
    let total: usize = wrapped.iter().map(Vec::len).sum();
    let room = usize::from((area.height / 2).saturating_sub(2)).max(1);
    let order: Vec<&str> = state.plan.scenarios.iter().map(|s| s.id.as_str()).collect();
    let rank = |p: &crate::plan::Problem| {
        p.scenario
            .as_deref()
            .and_then(|id| order.iter().position(|o| *o == id))
    };
    let selected = state
        .selected_run()
        .and_then(|r| order.iter().position(|o| *o == r.scenario));
    let first = if total <= room {
        0
    } else {
        stops.iter().position(|p| rank(p) >= selected).unwrap_or(0)
    };
    let mut rows: Vec<Line> = Vec::new();
    let mut shown = 0;
    for problem in wrapped.iter().skip(first) {
        // A problem that does not fit whole waits for the arrows (unless it is the only one).
        if rows.len() + problem.len() > room && shown > 0 {
            break;
        }
        rows.extend(problem.iter().take(room).cloned());
        shown += 1;
    }
    let height = u16::try_from(rows.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2)
        .min(area.height / 2);
    let [top, bottom] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(height)]).areas(area);
    let count = match stops.len() {
        1 => "1 problem stops".to_string(),
        n => format!("{n} problems stop"),
    };
    let title = if shown == stops.len() {
        format!("Handed back: {count} the run; nothing was started (q leaves)")
    } else {
        format!(
            "Handed back: {count} the run; {}-{} of {} shown, ↓ for more (q leaves)",
            first + 1,
            first + shown,
            stops.len()
        )
    };
    frame.render_widget(Paragraph::new(rows).block(block(&title, theme)), bottom);
    top
}

fn field(f: &Option<crate::plan::Field>) -> String {
    f.as_ref().map(|f| f.text.clone()).unwrap_or_default()
}

fn problem_line(p: &crate::plan::Problem, theme: &Theme) -> Line<'static> {
    let style = match p.severity {
        Severity::HandBack => theme.mismatch,
        Severity::Warning => theme.warning,
    };
    Line::from(Span::styled(
        format!(
            "      {}line {} {}: {}",
            theme.symbols.warn, p.line, p.field, p.message
        ),
        style,
    ))
}

impl Theme {
    fn highlight_if(&self, on: bool) -> Style {
        if on { self.highlight } else { self.text }
    }
}

/// The discovered toolbox as a table, the highlighted row's cells whole below it.
pub(super) fn toolbox(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let header = Row::new(["role", "kind", "name", "path", "evidence"]).style(theme.dim);
    let widths = [
        Constraint::Length(13),
        Constraint::Length(13),
        Constraint::Length(16),
        Constraint::Fill(1),
        Constraint::Fill(2),
    ];
    let tools = &state.view.toolbox;
    let selected = state.ui.table_row.min(tools.len().saturating_sub(1));
    let detail = tools.get(selected).map(|t| {
        vec![
            ("role", t.role.clone()),
            ("kind", t.kind.clone()),
            ("name", t.name.clone()),
            ("path", t.path.clone()),
            ("evidence", t.evidence.clone()),
        ]
    });
    let (area, below) = split_detail(area, detail.as_deref(), theme);
    let room = column_widths(pointed(area, theme), &widths);
    let fit = |i: usize, text: &str| super::fit::words(text, room[i], theme);
    let rows = tools.iter().map(|t| {
        Row::new([
            fit(0, &t.role),
            fit(1, &t.kind),
            fit(2, &t.name),
            // A path keeps its end (the file's name), an ellipsis before it.
            super::fit::path_rows("", &t.path, room[3], 1, theme)
                .into_iter()
                .next()
                .unwrap_or_default(),
            fit(4, &t.evidence),
        ])
        .style(theme.text)
    });
    let title = format!("Toolbox ({} items)", tools.len());
    let mut table_state = ratatui::widgets::TableState::default()
        .with_selected((!tools.is_empty()).then_some(selected));
    frame.render_stateful_widget(
        Table::new(rows, widths)
            .header(header)
            // A pointer, not a colour: a mismatch keeps its style when picked.
            .highlight_symbol(theme.symbols.pointer)
            .block(block(&title, theme)),
        area,
        &mut table_state,
    );
    draw_detail(frame, below, detail.as_deref(), theme);
}

/// `area` less the highlighted row's pointer, which the table draws left of its
/// columns.
fn pointed(area: Rect, theme: &Theme) -> Rect {
    let pointer = u16::try_from(super::fit::width(theme.symbols.pointer)).unwrap_or(0);
    Rect {
        width: area.width.saturating_sub(pointer),
        ..area
    }
}

/// The most rows the highlighted row's detail takes below a table.
const DETAIL_ROWS: u16 = 6;

/// `area` split into the table and, below it, room for `detail` (each field on
/// its own wrapped lines) when there is one: at most [`DETAIL_ROWS`] rows and a
/// third of the area.
fn split_detail(area: Rect, detail: Option<&[(&str, String)]>, theme: &Theme) -> (Rect, Rect) {
    let Some(detail) = detail else {
        return (area, Rect::default());
    };
    let inner = usize::from(area.width.saturating_sub(2)).max(1);
    let wanted: usize = detail
        .iter()
        .map(|(name, text)| {
            let line = detail_line(name, text, theme);
            line.width().div_ceil(inner).max(1)
        })
        .sum();
    let rows = u16::try_from(wanted)
        .unwrap_or(u16::MAX)
        .min(DETAIL_ROWS)
        .min(area.height / 3);
    if rows == 0 {
        return (area, Rect::default());
    }
    let [table, below] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(rows + 2)]).areas(area);
    (table, below)
}

fn detail_line(name: &str, text: &str, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{name}: "), theme.dim),
        Span::styled(crate::sanitize::line(text), theme.text),
    ])
}

/// The highlighted row's fields whole, wrapped, in `area` below its table.
fn draw_detail(frame: &mut Frame, area: Rect, detail: Option<&[(&str, String)]>, theme: &Theme) {
    let Some(detail) = detail.filter(|_| area.height > 2) else {
        return;
    };
    let lines: Vec<Line> = detail
        .iter()
        .map(|(name, text)| detail_line(name, text, theme))
        .collect();
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block(&theme.symbols.hint("Selected row (↑↓ pick)"), theme)),
        area,
    );
}

/// The width of each column of a bordered `Table` of `widths` drawn in `area`, as
/// the table lays them out (a column apart, from the left), so a cell is fit to
/// its column rather than cut at its edge.
fn column_widths(area: Rect, widths: &[Constraint]) -> Vec<usize> {
    let inner = Rect::new(0, 0, area.width.saturating_sub(2), 1);
    Layout::horizontal(widths.iter().copied())
        .flex(Flex::Start)
        .spacing(1)
        .split(inner)
        .iter()
        .map(|r| usize::from(r.width))
        .collect()
}

/// need | operator said | probe saw | present, mismatches in the mismatch style;
/// the highlighted row's cells whole below it.
pub(super) fn checklist(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let header = Row::new(["need", "operator said", "probe saw", "present"]).style(theme.dim);
    let widths = [
        Constraint::Fill(2),
        Constraint::Fill(1),
        Constraint::Fill(2),
        Constraint::Length(7),
    ];
    let items = &state.view.checklist;
    let said = |c: &crate::session::view::ChecklistRow| match (&c.answer, c.mismatch) {
        (Some(a), true) => format!("{}{a}", theme.symbols.warn),
        (Some(a), false) => a.clone(),
        (None, _) => "-".to_string(),
    };
    let present = |c: &crate::session::view::ChecklistRow| match c.present {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    };
    let selected = state.ui.table_row.min(items.len().saturating_sub(1));
    let detail = items.get(selected).map(|c| {
        vec![
            ("need", c.need.clone()),
            ("operator said", said(c)),
            ("probe saw", c.probe.clone().unwrap_or_else(|| "-".into())),
            ("present", present(c).to_string()),
        ]
    });
    let (area, below) = split_detail(area, detail.as_deref(), theme);
    let room = column_widths(pointed(area, theme), &widths);
    let fit = |i: usize, text: &str| Cell::from(super::fit::words(text, room[i], theme));
    let rows = items.iter().map(|c| {
        let style = if c.mismatch {
            theme.mismatch
        } else {
            theme.text
        };
        Row::new([
            fit(0, &c.need),
            fit(1, &said(c)),
            fit(2, c.probe.as_deref().unwrap_or("-")),
            Cell::from(present(c)),
        ])
        .style(style)
    });
    let mut table_state = ratatui::widgets::TableState::default()
        .with_selected((!items.is_empty()).then_some(selected));
    frame.render_stateful_widget(
        Table::new(rows, widths)
            .header(header)
            // A pointer, not a colour: a mismatch keeps its style when picked.
            .highlight_symbol(theme.symbols.pointer)
            .block(block("Capability checklist", theme)),
        area,
        &mut table_state,
    );
    draw_detail(frame, below, detail.as_deref(), theme);
}

/// Install records, and the exact change a pending approval would make.
pub(super) fn approvals(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let mut lines: Vec<Line> = state
        .view
        .approvals
        .iter()
        .map(|a| {
            Line::from(vec![
                Span::styled(
                    format!("{:<12} ", a.status),
                    theme.highlight_if(a.status == "approved"),
                ),
                Span::styled(format!("{}  ", a.capability), theme.text),
                Span::styled(a.detail.clone(), theme.dim),
            ])
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled("no installs offered or approved", theme.dim));
    }
    if let Some(q) = &state.pending
        && matches!(
            q.kind,
            crate::session::operator::QuestionKind::ApproveChange
                | crate::session::operator::QuestionKind::ApprovePrivileged
        )
    {
        lines.push(Line::default());
        lines.push(Line::styled(
            format!("waiting for approval: {}", q.id),
            theme.warning,
        ));
        lines.push(Line::styled(q.prompt.clone(), theme.text));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block("Approvals", theme)),
        area,
    );
}

/// The reason chain of a run row, one step a line.
pub(super) fn reason_lines(row: &RunRow, theme: &Theme) -> Vec<Line<'static>> {
    row.reasons
        .iter()
        .map(|r| {
            Line::from(vec![
                Span::styled(format!("{} ", r.question), theme.text),
                Span::styled(format!("{} ", r.answer), theme.warning),
                Span::styled(
                    if r.cites.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "(#{})",
                            r.cites
                                .iter()
                                .map(u64::to_string)
                                .collect::<Vec<_>>()
                                .join(", #")
                        )
                    },
                    theme.dim,
                ),
            ])
        })
        .collect()
}

/// Whether the pending question is drawn inside the Finding screen (a FAIL's
/// classification) rather than as an overlay.
pub(super) fn asks_inline(state: &AppState) -> bool {
    state.ui.step == Step::Finding
        && state.pending.as_ref().is_some_and(|q| {
            matches!(
                q.kind,
                QuestionKind::ClassifyFailure | QuestionKind::Describe
            )
        })
}

/// The findings as lines: each FAIL with its reason chain and the operator's
/// classification so far.
fn finding_lines(state: &AppState, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let fails = state
        .view
        .runs
        .iter()
        .filter(|r| matches!(r.badge, Badge::Verdict(v) if v.is_fail()));
    for row in fails {
        lines.push(Line::from(vec![
            Span::styled(format!("{} ", row.id), theme.text),
            badge(row.badge, theme),
            Span::styled(format!(" {}", row.name), theme.dim),
        ]));
        lines.extend(reason_lines(row, theme).into_iter().map(|mut l| {
            l.spans.insert(0, Span::raw("  "));
            l
        }));
        let prefix = format!("{}.", row.id);
        for a in state
            .view
            .answer_rows
            .iter()
            .filter(|a| a.question.starts_with(&prefix))
        {
            // A multi-line answer keeps its lines, the later ones under the first.
            let mut said = a.answer.lines();
            let first = said.next().unwrap_or_default();
            let rest: Vec<&str> = said.collect();
            let by = Span::styled(format!(" (by {})", a.by), theme.dim);
            lines.push(Line::from(vec![
                Span::styled(format!("  {}: ", a.question), theme.dim),
                Span::styled(crate::sanitize::line(first), theme.text),
            ]));
            for more in &rest {
                lines.push(Line::from(vec![
                    Span::raw("    "),
                    Span::styled(crate::sanitize::line(more), theme.text),
                ]));
            }
            if let Some(last) = lines.last_mut() {
                last.spans.push(by);
            }
        }
        lines.push(Line::default());
    }
    if lines.is_empty() {
        lines.push(Line::styled("no FAIL so far", theme.dim));
    }
    lines
}

/// The Finding screen's lines as plain text (what `/` searches there).
pub fn finding_text(state: &AppState) -> Vec<String> {
    finding_lines(state, &Theme::monochrome())
        .into_iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

/// `line` with every match of `query` in the highlight style (within each span).
fn marked(line: Line<'static>, query: Option<&str>, theme: &Theme) -> Line<'static> {
    let Some(q) = query.filter(|q| !q.is_empty()) else {
        return line;
    };
    let mut spans = Vec::new();
    for span in line.spans {
        let mut rest = span.content.as_ref();
        while let Some(at) = rest.find(q) {
            spans.push(Span::styled(rest[..at].to_string(), span.style));
            spans.push(Span::styled(q.to_string(), theme.highlight));
            rest = &rest[at + q.len()..];
        }
        spans.push(Span::styled(rest.to_string(), span.style));
    }
    Line::from(spans).style(line.style)
}

/// `lines` from source line `from` on (text screens scroll by source line, so a
/// search can scroll a match into view without knowing the wrapping), matches marked.
fn from_line(
    lines: Vec<Line<'static>>,
    from: u16,
    state: &AppState,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let query = state.ui.search.as_deref();
    lines
        .into_iter()
        .skip(usize::from(from))
        .map(|l| marked(l, query, theme))
        .collect()
}

/// The findings keep at least this many rows above a classification's form.
const MIN_FINDINGS: u16 = 5;

/// FAIL scenarios with their reason chains and the operator's classification; while
/// one is being classified, the question and its editor take the lower part.
pub(super) fn finding(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let lines = from_line(finding_lines(state, theme), state.ui.scroll, state, theme);
    let list = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(block("Findings", theme));
    match (&state.pending, asks_inline(state)) {
        (Some(q), true) => {
            let form = super::overlay::form_height(q, state, theme, area.width)
                .min(area.height.saturating_sub(MIN_FINDINGS));
            let [top, bottom] =
                Layout::vertical([Constraint::Min(MIN_FINDINGS), Constraint::Length(form)])
                    .areas(area);
            frame.render_widget(list, top);
            super::overlay::question_form(frame, bottom, q, state, theme);
        }
        _ => frame.render_widget(list, area),
    }
}

/// The most rows the HTML report's path takes on the Report screen.
const HTML_ROWS: usize = 3;

/// The verdicts (pick one with the arrows, `e` shows its evidence) above report.md,
/// its tables drawn as aligned columns, with the path of report.html between them.
pub(super) fn report(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
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
            let style = if selected && state.ui.focus == Focus::List {
                theme.highlight
            } else {
                theme.text
            };
            Line::from(vec![
                Span::styled(format!("{pointer}{} ", r.id), style),
                badge(r.badge, theme),
            ])
        })
        .collect();
    let height = u16::try_from(rows.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2)
        .min(area.height / 3)
        .max(3);
    // The HTML report's path, on rows of its own broken after a `/` (never cut
    // short; when even three rows are too few, its end — and whole in the evidence).
    let html: Vec<Line> = state
        .html_report()
        .map(|p| super::fit::path_rows(" HTML: ", &p, usize::from(area.width), HTML_ROWS, theme))
        .unwrap_or_default()
        .into_iter()
        .map(|row| Line::styled(row, theme.dim))
        .collect();
    let html_rows = u16::try_from(html.len()).unwrap_or(u16::MAX);
    let [top, path, bottom] = Layout::vertical([
        Constraint::Length(height),
        Constraint::Length(html_rows),
        Constraint::Min(0),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(html), path);
    let visible = usize::from(height.saturating_sub(2)).max(1);
    let first = state.ui.selected.saturating_sub(visible - 1);
    frame.render_widget(
        Paragraph::new(rows)
            .scroll((u16::try_from(first).unwrap_or(u16::MAX), 0))
            .block(block("Verdicts (e: evidence, Tab: report text)", theme)),
        top,
    );
    let text = match &state.report_text {
        Some(t) => super::markdown::lines(t, bottom.width.saturating_sub(2), theme),
        None => vec![Line::styled("report.md not written yet", theme.dim)],
    };
    frame.render_widget(
        Paragraph::new(from_line(text, state.ui.scroll, state, theme))
            .wrap(Wrap { trim: false })
            .block(block("Report", theme)),
        bottom,
    );
}
