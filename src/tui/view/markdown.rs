//! report.md for the Report screen: pipe tables drawn as aligned columns that fit the
//! width (cells cut with an ellipsis, never wrapped), headings styled, other text as
//! written. One drawn line per source line, so a search's line numbers hold.

use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;

/// The fewest characters a squeezed column keeps.
const MIN_COLUMN: usize = 3;

/// `text` as styled lines fitting `width` columns where they are tables.
pub(super) fn lines(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let source: Vec<String> = text.lines().map(crate::sanitize::line).collect();
    let mut out = Vec::with_capacity(source.len());
    let mut i = 0;
    while i < source.len() {
        let end = source[i..]
            .iter()
            .position(|l| !is_row(l))
            .map_or(source.len(), |n| i + n);
        if end > i {
            out.extend(table(&source[i..end], usize::from(width), theme));
            i = end;
        } else {
            out.push(prose(&source[i], theme));
            i += 1;
        }
    }
    out
}

fn is_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

/// The cells of one `| a | b \| c |` row, trimmed (`\|` is a pipe inside a cell).
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                cell.push('|');
            }
            '|' => out.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    out.push(cell);
    out.into_iter().map(|c| plain(c.trim())).collect()
}

/// Inline markdown read as text: `**bold**` loses its stars, `[text](target)` shows
/// its text (the target is in report.md), and an image `![alt](file)`, which a
/// terminal cannot draw, says which file holds it: `figure: alt (file)`.
fn plain(text: &str) -> String {
    let text = text.replace("**", "");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find('[') {
        let link = rest[open..].find("](").and_then(|mid| {
            let close = rest[open + mid..].find(')')?;
            Some((open + mid, open + mid + close))
        });
        let Some((mid, close)) = link else { break };
        match rest[..open].strip_suffix('!') {
            Some(before) => {
                out.push_str(before);
                out.push_str("figure: ");
                out.push_str(&rest[open + 1..mid]);
                out.push_str(" (");
                out.push_str(&rest[mid + 2..close]);
                out.push(')');
            }
            None => {
                out.push_str(&rest[..open]);
                out.push_str(&rest[open + 1..mid]);
            }
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// `|---|:--:|`: the line under a table's header.
fn is_rule(cells: &[String]) -> bool {
    !cells.is_empty()
        && cells.iter().all(|c| {
            let c = c.trim_matches(':');
            !c.is_empty() && c.chars().all(|ch| ch == '-')
        })
}

/// Each column's width: as wide as its widest cell, the widest squeezed first
/// until the row fits `width` (with the separators between columns).
fn widths(rows: &[Vec<String>], width: usize) -> Vec<usize> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut w: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter(|r| !is_rule(r))
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let room = width.saturating_sub(SEPARATOR_WIDTH * columns.saturating_sub(1));
    while w.iter().sum::<usize>() > room {
        let Some((at, widest)) = w.iter().copied().enumerate().max_by_key(|(_, n)| *n) else {
            break;
        };
        if widest <= MIN_COLUMN {
            break;
        }
        w[at] = widest - 1;
    }
    w
}

/// What stands between two columns: a space, the border's vertical, a space.
const SEPARATOR_WIDTH: usize = 3;

/// `cell` in exactly `width` characters: padded, or cut with an ellipsis.
fn fit(cell: &str, width: usize, ellipsis: &str) -> String {
    let count = cell.chars().count();
    if count <= width {
        return format!("{cell}{}", " ".repeat(width - count));
    }
    let kept: String = cell.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}{ellipsis}")
}

fn table(source: &[String], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let rows: Vec<Vec<String>> = source.iter().map(|l| cells(l)).collect();
    let w = widths(&rows, width);
    let unicode = theme.symbols.border.horizontal_top != "-";
    let ellipsis = if unicode { "…" } else { "~" };
    let bar = theme.symbols.border.vertical_left;
    let across = theme.symbols.border.horizontal_top;
    let cross = if unicode { "┼" } else { "+" };
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            if is_rule(row) {
                let parts: Vec<String> = w.iter().map(|n| across.repeat(n + 2)).collect();
                let rule = parts.join(cross);
                // The rule's outer halves overhang by one on each side: trim them.
                let row_width = w.iter().sum::<usize>() + SEPARATOR_WIDTH * (w.len() - 1);
                let rule: String = rule.chars().skip(1).take(row_width).collect();
                return Line::styled(rule, theme.dim);
            }
            let style = if i == 0 { theme.highlight } else { theme.text };
            let mut spans = Vec::new();
            for (c, n) in w.iter().enumerate() {
                if c > 0 {
                    spans.push(Span::styled(format!(" {bar} "), theme.dim));
                }
                let cell = row.get(c).map_or("", String::as_str);
                spans.push(Span::styled(fit(cell, *n, ellipsis), style));
            }
            Line::from(spans)
        })
        .collect()
}

/// A heading styled (its `#`s dropped), anything else as written.
fn prose(line: &str, theme: &Theme) -> Line<'static> {
    let heading = line.trim_start_matches('#');
    if heading.len() < line.len() && (heading.is_empty() || heading.starts_with(' ')) {
        return Line::styled(
            heading.trim().to_string(),
            theme.highlight.add_modifier(ratatui::style::Modifier::BOLD),
        );
    }
    Line::styled(plain(line), theme.text)
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
            "# Verdicts\n\n| id | verdict | why |\n|---|---|---|\n| D1 | PASS | {long} |\nafter\n"
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
        assert_eq!(shown[5], "after");
    }

    #[test]
    fn links_show_their_text_and_bold_loses_its_stars() {
        assert_eq!(
            super::plain("**Result: FAIL.** see [findings/D3.md](findings/D3.md), [a](b) [c"),
            "Result: FAIL. see findings/D3.md, a [c"
        );
        assert_eq!(
            super::plain("![D2 throughput](../figures/D2/seed-1-throughput.svg) done!"),
            "figure: D2 throughput (../figures/D2/seed-1-throughput.svg) done!"
        );
    }

    #[test]
    fn a_short_table_keeps_its_natural_widths() {
        let theme = Theme::by_name("dark").expect("theme");
        let shown = texts(&lines("| a | bb |\n| ccc | d \\| e |", 80, &theme));
        assert_eq!(shown, vec!["a   │ bb   ", "ccc │ d | e"]);
    }
}
