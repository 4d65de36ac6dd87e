//! report.md for the Report screen, read by pulldown-cmark as report.html is: tables
//! drawn as aligned columns that fit the width (cells cut with an ellipsis, never
//! wrapped), headings, strong, emphasis and code as styles, links as their text,
//! images as the file that holds them.
//! One drawn line per source line, so a search's line numbers hold: each piece of
//! text is drawn on the source line it starts on.

use std::ops::Range;

use pulldown_cmark::{Alignment, Event, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;

/// The fewest characters a squeezed column keeps.
const MIN_COLUMN: usize = 3;

/// What stands between two columns: a space, the border's vertical, a space.
const SEPARATOR_WIDTH: usize = 3;

/// `text` as styled lines, one per source line, its tables fitting `width` columns.
pub(super) fn lines(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    // Sanitized line by line as the search reads it, so offsets name the lines searched.
    let source: Vec<String> = text.lines().map(crate::sanitize::line).collect();
    let count = source.len();
    let source = source.join("\n");
    let mut draw = Draw::new(&source, count, usize::from(width), theme);
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for (event, range) in Parser::new_ext(&source, options).into_offset_iter() {
        draw.event(event, range);
    }
    draw.out.into_iter().map(Line::from).collect()
}

/// A container the text of a line sits in, drawn before it.
enum Block {
    Quote,
    /// A list item: its marker until drawn (on the item's first line), then as
    /// many spaces.
    Item {
        width: usize,
        marker: Option<String>,
        line: usize,
    },
}

struct Row {
    line: usize,
    cells: Vec<Vec<Span<'static>>>,
}

struct Table {
    alignments: Vec<Alignment>,
    /// The header first.
    rows: Vec<Row>,
}

struct Draw<'a> {
    theme: &'a Theme,
    width: usize,
    /// Where each source line starts.
    starts: Vec<usize>,
    out: Vec<Vec<Span<'static>>>,
    /// One style per open tag, the innermost last.
    styles: Vec<Style>,
    blocks: Vec<Block>,
    /// Each open list's next number (`None`: bullets).
    lists: Vec<Option<u64>>,
    table: Option<Table>,
    /// Each open image: where it starts and the file holding it.
    images: Vec<(usize, String)>,
}

impl<'a> Draw<'a> {
    fn new(source: &str, lines: usize, width: usize, theme: &'a Theme) -> Self {
        Draw {
            theme,
            width,
            starts: std::iter::once(0)
                .chain(source.match_indices('\n').map(|(at, _)| at + 1))
                .collect(),
            out: vec![Vec::new(); lines],
            styles: Vec::new(),
            blocks: Vec::new(),
            lists: Vec::new(),
            table: None,
            images: Vec::new(),
        }
    }

    fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|start| *start <= offset)
            .saturating_sub(1)
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.theme.text)
    }

    /// `style` in the code colour (the border's).
    fn code(&self, style: Style) -> Style {
        match self.theme.border.fg {
            Some(colour) => style.fg(colour),
            None => style,
        }
    }

    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        match event {
            Event::Start(tag) => self.start(tag, range.start),
            Event::End(tag) => self.end(tag),
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                self.put(range.start, &text, self.style());
            }
            Event::Code(text) => self.put(range.start, &text, self.code(self.style())),
            Event::Rule => {
                let line = self.line_of(range.start);
                let rule = self
                    .theme
                    .symbols
                    .border
                    .horizontal_top
                    .repeat(self.width.saturating_sub(self.indent()));
                self.open(line);
                if let Some(spans) = self.out.get_mut(line) {
                    spans.push(Span::styled(rule, self.theme.dim));
                }
            }
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>, at: usize) {
        let style = self.style();
        self.styles.push(match &tag {
            Tag::Heading { .. } => self.theme.highlight.add_modifier(Modifier::BOLD),
            Tag::TableHead => self.theme.highlight,
            Tag::Strong => style.add_modifier(Modifier::BOLD),
            Tag::Emphasis => style.add_modifier(Modifier::ITALIC),
            Tag::Strikethrough => style.add_modifier(Modifier::CROSSED_OUT),
            Tag::Link { .. } => style.add_modifier(Modifier::UNDERLINED),
            Tag::CodeBlock(_) => self.code(style),
            _ => style,
        });
        let line = self.line_of(at);
        match tag {
            Tag::List(first) => self.lists.push(first),
            Tag::Item => {
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n = n.saturating_add(1);
                        marker
                    }
                    _ => "- ".to_string(),
                };
                self.blocks.push(Block::Item {
                    width: marker.chars().count(),
                    marker: Some(marker),
                    line,
                });
            }
            Tag::BlockQuote(_) => self.blocks.push(Block::Quote),
            Tag::Table(alignments) => {
                self.table = Some(Table {
                    alignments,
                    rows: Vec::new(),
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Row {
                        line,
                        cells: Vec::new(),
                    });
                }
            }
            Tag::TableCell => {
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.cells.push(Vec::new());
                }
            }
            // A terminal cannot draw it: say which file holds it, `figure: alt (file)`.
            Tag::Image { dest_url, .. } => {
                self.put(at, "figure: ", style);
                self.images.push((at, dest_url.into_string()));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        self.styles.pop();
        match tag {
            TagEnd::List(_) => {
                self.lists.pop();
            }
            TagEnd::Item => {
                // An empty item still shows its marker.
                if let Some(Block::Item {
                    marker: Some(_),
                    line,
                    ..
                }) = self.blocks.last()
                {
                    self.open(*line);
                }
                self.blocks.pop();
            }
            TagEnd::BlockQuote(_) => {
                self.blocks.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.draw_table(&table);
                }
            }
            TagEnd::Image => {
                if let Some((at, file)) = self.images.pop() {
                    self.put(at, &format!(" ({file})"), self.style());
                }
            }
            _ => {}
        }
    }

    /// How wide the open containers' marks are.
    fn indent(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| match b {
                Block::Quote => 2,
                Block::Item { width, .. } => *width,
            })
            .sum()
    }

    /// Starts `line` with the open containers' marks, unless it has text already.
    fn open(&mut self, line: usize) {
        let Some(spans) = self.out.get_mut(line) else {
            return;
        };
        if !spans.is_empty() {
            return;
        }
        for block in &mut self.blocks {
            spans.push(match block {
                Block::Quote => Span::styled(
                    format!("{} ", self.theme.symbols.border.vertical_left),
                    self.theme.dim,
                ),
                Block::Item { width, marker, .. } => match marker.take() {
                    Some(marker) => Span::styled(marker, self.theme.text),
                    None => Span::raw(" ".repeat(*width)),
                },
            });
        }
    }

    /// `text` drawn from the line of `at` on (a code block's text spans lines), or
    /// into the table cell being read. Sanitized: an entity can decode to a control.
    fn put(&mut self, at: usize, text: &str, style: Style) {
        let first = self.line_of(at);
        for (n, piece) in text.split('\n').enumerate() {
            if piece.is_empty() {
                continue;
            }
            let piece = crate::sanitize::line(piece);
            if let Some(table) = &mut self.table {
                if let Some(cell) = table.rows.last_mut().and_then(|r| r.cells.last_mut()) {
                    push(cell, piece, style);
                }
                continue;
            }
            self.open(first + n);
            if let Some(spans) = self.out.get_mut(first + n) {
                push(spans, piece, style);
            }
        }
    }

    fn draw_table(&mut self, table: &Table) {
        let w = widths(&table.rows, self.width.saturating_sub(self.indent()));
        let symbols = &self.theme.symbols;
        let unicode = symbols.border.horizontal_top != "-";
        let ellipsis = if unicode { "…" } else { "~" };
        let cross = if unicode { "┼" } else { "+" };
        let bar = format!(" {} ", symbols.border.vertical_left);
        let parts: Vec<String> = w
            .iter()
            .map(|n| symbols.border.horizontal_top.repeat(n + 2))
            .collect();
        // The rule's outer halves overhang by one on each side: trim them.
        let row_width = w.iter().sum::<usize>() + SEPARATOR_WIDTH * w.len().saturating_sub(1);
        let rule: String = parts.join(cross).chars().skip(1).take(row_width).collect();
        for (i, row) in table.rows.iter().enumerate() {
            let base = if i == 0 {
                self.theme.highlight
            } else {
                self.theme.text
            };
            let mut spans = Vec::new();
            for (c, n) in w.iter().enumerate() {
                if c > 0 {
                    spans.push(Span::styled(bar.clone(), self.theme.dim));
                }
                let cell = row.cells.get(c).map_or(&[][..], Vec::as_slice);
                let align = table.alignments.get(c).copied().unwrap_or(Alignment::None);
                spans.extend(fit(cell, *n, align, ellipsis, base));
            }
            self.open(row.line);
            if let Some(line) = self.out.get_mut(row.line) {
                line.extend(spans);
            }
            if i == 0 {
                // The delimiter row is the line under the header.
                self.open(row.line + 1);
                if let Some(line) = self.out.get_mut(row.line + 1) {
                    line.push(Span::styled(rule.clone(), self.theme.dim));
                }
            }
        }
    }
}

/// Appends `text`, joined to the last span when it has the same style, so a search
/// match is found within one span.
fn push(spans: &mut Vec<Span<'static>>, text: String, style: Style) {
    match spans.last_mut() {
        Some(last) if last.style == style => last.content.to_mut().push_str(&text),
        _ => spans.push(Span::styled(text, style)),
    }
}

fn char_width(c: char) -> usize {
    let mut buf = [0; 4];
    Span::raw(&*c.encode_utf8(&mut buf)).width()
}

fn cell_text(cell: &[Span]) -> String {
    cell.iter().map(|s| s.content.as_ref()).collect()
}

/// Each column's width: as wide as its widest cell, the widest squeezed first until
/// the row fits `width` (with the separators between columns). A `Verdict` column
/// keeps its verdicts (each cell's first word) while another column can give way.
fn widths(rows: &[Row], width: usize) -> Vec<usize> {
    let columns = rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
    let cell_width = |r: &Row, c: usize| {
        r.cells
            .get(c)
            .map_or(0, |s| s.iter().map(Span::width).sum())
    };
    let mut w: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .map(|r| cell_width(r, c))
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let floors: Vec<usize> = (0..columns)
        .map(|c| {
            let verdict = rows
                .first()
                .and_then(|h| h.cells.get(c))
                .is_some_and(|h| cell_text(h).trim().eq_ignore_ascii_case("verdict"));
            let floor = if verdict {
                rows.iter()
                    .skip(1)
                    .filter_map(|r| r.cells.get(c))
                    .filter_map(|cell| {
                        cell_text(cell)
                            .split_whitespace()
                            .next()
                            .map(|word| Span::raw(word).width())
                    })
                    .max()
                    // And the ellipsis of a longer cell.
                    .map_or(MIN_COLUMN, |n| (n + 1).max(MIN_COLUMN))
            } else {
                MIN_COLUMN
            };
            floor.min(w[c])
        })
        .collect();
    let room = width.saturating_sub(SEPARATOR_WIDTH * columns.saturating_sub(1));
    let widest_above = |w: &[usize], floor: &dyn Fn(usize) -> usize| {
        w.iter()
            .copied()
            .enumerate()
            .filter(|(c, n)| *n > floor(*c))
            .max_by_key(|(_, n)| *n)
            .map(|(c, _)| c)
    };
    while w.iter().sum::<usize>() > room {
        let Some(at) =
            widest_above(&w, &|c| floors[c]).or_else(|| widest_above(&w, &|_| MIN_COLUMN))
        else {
            break;
        };
        w[at] -= 1;
    }
    w
}

/// `cell` in exactly `width` columns: padded (in `base`) as `align` says, or cut
/// with an ellipsis.
fn fit(
    cell: &[Span<'static>],
    width: usize,
    align: Alignment,
    ellipsis: &str,
    base: Style,
) -> Vec<Span<'static>> {
    let pad = |n: usize| Span::styled(" ".repeat(n), base);
    let total: usize = cell.iter().map(Span::width).sum();
    let mut out = Vec::new();
    if total <= width {
        let gap = width - total;
        let before = match align {
            Alignment::Right => gap,
            Alignment::Center => gap / 2,
            Alignment::Left | Alignment::None => 0,
        };
        if before > 0 {
            out.push(pad(before));
        }
        out.extend(cell.iter().cloned());
        if gap > before {
            out.push(pad(gap - before));
        }
        return out;
    }
    let mut room = width.saturating_sub(1);
    let mut cut = base;
    'spans: for span in cell {
        cut = span.style;
        let mut kept = String::new();
        for c in span.content.chars() {
            let n = char_width(c);
            if n > room {
                if !kept.is_empty() {
                    out.push(Span::styled(kept, span.style));
                }
                break 'spans;
            }
            room -= n;
            kept.push(c);
        }
        if !kept.is_empty() {
            out.push(Span::styled(kept, span.style));
        }
    }
    out.push(Span::styled(ellipsis.to_string(), cut));
    // A wide character that did not fit leaves a gap.
    if room > 0 {
        out.push(pad(room));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn a_wide_table_fits_its_width_one_line_per_row() {
        let long = "x".repeat(60);
        let text = format!(
            "# Verdicts\n\n| id | verdict | why |\n|---|---|---|\n| D1 | PASS | {long} |\n\nafter\n"
        );
        let theme = Theme::by_name("dark").expect("theme");
        let shown = texts(&lines(&text, 40, &theme));
        assert_eq!(shown.len(), text.lines().count(), "{shown:?}");
        assert_eq!(shown[0], "Verdicts");
        for row in &shown[2..5] {
            assert!(row.chars().count() <= 40, "{row}");
        }
        assert!(shown[4].starts_with("D1 │ PASS    │ xxx"), "{}", shown[4]);
        assert!(shown[4].ends_with('…'), "{}", shown[4]);
        assert!(shown[3].contains('┼'), "{}", shown[3]);
        assert_eq!(shown[6], "after");
    }

    #[test]
    fn links_show_their_text_and_bold_loses_its_stars() {
        let theme = Theme::by_name("dark").expect("theme");
        let shown = lines(
            "**Result: FAIL.** see [findings/D3.md](findings/D3.md), [a](b) [c\n\n\
             ![D2 throughput](../figures/D2/seed-1-throughput.svg) done!",
            80,
            &theme,
        );
        assert_eq!(
            texts(&shown),
            vec![
                "Result: FAIL. see findings/D3.md, a [c",
                "",
                "figure: D2 throughput (../figures/D2/seed-1-throughput.svg) done!"
            ]
        );
        assert!(
            shown[0].spans[0]
                .style
                .add_modifier
                .contains(Modifier::BOLD)
        );
    }

    #[test]
    fn a_short_table_keeps_its_natural_widths() {
        let theme = Theme::by_name("dark").expect("theme");
        let shown = texts(&lines(
            "| a | bb |\n|---|---|\n| ccc | d \\| e |",
            80,
            &theme,
        ));
        assert_eq!(shown, vec!["a   │ bb   ", "────┼──────", "ccc │ d | e"]);
    }

    #[test]
    fn only_markdown_tables_are_tables_and_their_cells_are_read_as_markdown() {
        let theme = Theme::by_name("dark").expect("theme");
        let text = "| not a table\n\n```\n| a | b |\n```\n\n\
                    - in a list:\n\n  | `x\\|y` | **z** |\n  |---|---|\n  | 1 | 2 |";
        let drawn = lines(text, 80, &theme);
        let shown = texts(&drawn);
        assert_eq!(
            shown,
            vec![
                "| not a table",
                "",
                "",
                "| a | b |",
                "",
                "",
                "- in a list:",
                "",
                "  x|y │ z",
                "  ────┼──",
                "  1   │ 2",
            ]
        );
        let z = drawn[8].spans.iter().find(|s| s.content == "z").expect("z");
        assert!(z.style.add_modifier.contains(Modifier::BOLD), "{z:?}");
    }

    #[test]
    fn the_verdict_column_is_squeezed_last() {
        let theme = Theme::by_name("dark").expect("theme");
        let long = "y".repeat(40);
        let text = format!(
            "| ID | Scenario | Verdict | Oracle |\n|---|---|---|---|\n\
             | D4 | {long} | INCONCLUSIVE-fault-not-proven — D4: not proven | {long} |"
        );
        let shown = texts(&lines(&text, 60, &theme));
        assert!(
            shown[2].contains("│ INCONCLUSIVE-fault-not-proven"),
            "{shown:?}"
        );
        assert!(shown[2].chars().count() <= 60, "{}", shown[2]);
    }

    #[test]
    fn an_escape_decoded_from_an_entity_is_not_drawn() {
        let theme = Theme::by_name("dark").expect("theme");
        let shown = texts(&lines("a&#27;b &#x9b;31mc", 80, &theme));
        assert!(shown[0].chars().all(|c| !c.is_control()), "{shown:?}");
    }
}
