//! Fitting text into a width: cut at a word boundary with an ellipsis (never in
//! the middle of a word when a boundary is near), or a path shown by its end.
//! Widths are display columns (ratatui's unicode-width), not characters.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;

/// The ellipsis the theme's character set has.
pub(super) fn ellipsis(theme: &Theme) -> &'static str {
    // `~` would read as a home directory in a path.
    if theme.symbols.border.horizontal_top == "-" {
        "..."
    } else {
        "…"
    }
}

/// `text` in the theme's character set: as it is on a UTF-8 locale; in ASCII
/// otherwise (as the borders are) for the marks faultline writes itself (`—`, `·`,
/// `×`, `≤`, `↑↓`, `…`).
pub(super) fn plain(text: &str, theme: &Theme) -> String {
    if ellipsis(theme) == "…" {
        return text.to_string();
    }
    theme
        .symbols
        .hint(text)
        .replace(" — ", " - ")
        .replace('—', "-")
        .replace('·', "|")
        .replace('×', "x")
        .replace('≤', "<=")
        .replace('…', "...")
}

/// Display columns of `text`.
pub(super) fn width(text: &str) -> usize {
    Span::raw(text).width()
}

fn char_width(c: char) -> usize {
    let mut buf = [0; 4];
    width(c.encode_utf8(&mut buf))
}

/// `text` in at most `room` columns: whole when it fits, else cut at a word
/// boundary with an ellipsis.
pub(super) fn words(text: &str, room: usize, theme: &Theme) -> String {
    let fitted = line(Line::raw(text.to_string()), room, theme);
    fitted.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// `line` in at most `room` columns, each span keeping its style: whole when it
/// fits, else cut after the last whole word that leaves room for the ellipsis (a
/// word longer than half the room is cut inside, rather than losing most of it).
pub(super) fn line(line: Line<'static>, room: usize, theme: &Theme) -> Line<'static> {
    if line.width() <= room {
        return line;
    }
    let mark = ellipsis(theme);
    let room = room.saturating_sub(width(mark));
    // Every character with the span it came from, up to the room.
    let mut kept: Vec<(char, usize)> = Vec::new();
    let mut used = 0;
    'spans: for (i, span) in line.spans.iter().enumerate() {
        for c in span.content.chars() {
            let n = char_width(c);
            if used + n > room {
                break 'spans;
            }
            used += n;
            kept.push((c, i));
        }
    }
    // The next character (the first one dropped) decides whether a word was cut.
    let next = line
        .spans
        .iter()
        .flat_map(|s| s.content.chars())
        .nth(kept.len());
    if next.is_some_and(|c| !c.is_whitespace())
        && let Some(at) = kept.iter().rposition(|(c, _)| c.is_whitespace())
        && at * 2 >= kept.len()
    {
        kept.truncate(at);
    }
    while kept
        .last()
        .is_some_and(|(c, _)| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '·' | '—'))
    {
        kept.pop();
    }
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut last_style = line.spans.first().map_or(Style::default(), |s| s.style);
    let mut current: Option<(usize, String)> = None;
    for (c, i) in kept {
        match &mut current {
            Some((at, text)) if *at == i => text.push(c),
            _ => {
                if let Some((at, text)) = current.take() {
                    spans.push(Span::styled(text, line.spans[at].style));
                }
                current = Some((i, c.to_string()));
            }
        }
    }
    if let Some((at, text)) = current {
        last_style = line.spans[at].style;
        spans.push(Span::styled(text, last_style));
    }
    spans.push(Span::styled(mark, last_style));
    Line::from(spans).style(line.style)
}

/// `path` after `label` in rows of `room` columns, broken after a `/` (a path is
/// never cut short; rows after the first are indented as far as the label): at most `max_rows` rows, else one row with the path's end
/// after a leading ellipsis.
pub(super) fn path_rows(
    label: &str,
    path: &str,
    room: usize,
    max_rows: usize,
    theme: &Theme,
) -> Vec<String> {
    // Rows after the first start under the path's first character.
    let pad = " ".repeat(width(label));
    let mut rows = vec![label.to_string()];
    for part in path.split_inclusive('/') {
        let fits = rows.last().is_some_and(|r| width(r) + width(part) <= room);
        match rows.last_mut() {
            Some(row) if fits => row.push_str(part),
            _ => rows.push(format!("{pad}{part}")),
        }
    }
    if rows.len() <= max_rows && rows.iter().all(|r| width(r) <= room) {
        return rows;
    }
    // The end of the path, from a `/` on, with what leads up to it elided.
    let mark = ellipsis(theme);
    let room_for_path = room.saturating_sub(width(label) + width(mark));
    let end = path
        .match_indices('/')
        .map(|(at, _)| &path[at..])
        .find(|end| width(end) <= room_for_path)
        .map_or_else(
            || {
                // Not even the file name fits: its last characters.
                let mut end: Vec<char> = Vec::new();
                let mut used = 0;
                for c in path.chars().rev() {
                    used += char_width(c);
                    if used > room_for_path {
                        break;
                    }
                    end.insert(0, c);
                }
                end.into_iter().collect()
            },
            str::to_string,
        );
    vec![format!("{label}{mark}{end}")]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme() -> Theme {
        Theme::monochrome()
    }

    #[test]
    fn text_is_cut_at_a_word_with_an_ellipsis_and_kept_whole_when_it_fits() {
        let t = theme();
        assert_eq!(words("short", 10, &t), "short");
        assert_eq!(words("one two three four", 12, &t), "one two…");
        assert_eq!(words("one, two three", 8, &t), "one…");
        assert_eq!(words("abcdefghijklmnop", 6, &t), "abcde…");
        assert!(width(&words("日本語のテキストです", 7, &t)) <= 7);
    }

    #[test]
    fn styles_survive_the_cut() {
        let bold = Style::new().bold();
        let l = Line::from(vec![Span::raw("ab "), Span::styled("cd ef gh", bold)]);
        let cut = line(l, 7, &theme());
        let text: String = cut.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "ab cd…");
        assert_eq!(cut.spans[1].style, bold);
    }

    #[test]
    fn a_path_breaks_after_a_slash_or_shows_its_end() {
        let t = theme();
        let rows = path_rows("HTML: ", "/a/bb/ccc/report.html", 18, 3, &t);
        assert_eq!(rows, vec!["HTML: /a/bb/ccc/", "      report.html"]);
        let rows = path_rows("HTML: ", "/a/bb/ccc/report.html", 20, 1, &t);
        assert_eq!(rows, vec!["HTML: …/report.html".to_string()]);
    }
}
