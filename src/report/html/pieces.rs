//! report.md's top-level blocks, one at a time, the document parsed a piece at a
//! time: pulldown-cmark builds the block tree of all the text it is handed before
//! it gives the first event, and report.md's tree for thousands of scenarios was the
//! largest thing a session held at its end. The pieces give the same blocks as the
//! whole document would:
//!
//! - a piece ends where a line at the margin starts with `#`, if the parse of the
//!   piece with that line confirms it opens a top-level heading (nothing open goes on
//!   across it); a block that swallowed the line is parsed again from its start, with
//!   the next such line;
//! - a long table at the margin is read [`TABLE_ROWS`] rows at a time: once its
//!   first rows are confirmed a top-level table, each further group of lines that
//!   start with `|` is parsed under the table's own header and delimiter lines (every
//!   such line continues a table, and a row's cells are its own line's), and given as
//!   a block that continues the table before it;
//! - a document that may define link references (which apply to all of it) is
//!   parsed whole.

use std::ops::Range;

use pulldown_cmark::{Event, OffsetIter, Options, Parser, Tag};

/// Body rows of a long table parsed together.
const TABLE_ROWS: usize = 256;
/// pulldown-cmark fills the missing cells of short rows up to this many per table;
/// a table that could reach it is not split (a split would reset the count).
const FILLED_CELLS: usize = 1 << 18;

/// A top-level block's events, and whether it continues the table before it (its
/// header repeated: the rows are the ones to read).
pub(super) type Block<'a> = (Vec<Event<'a>>, bool);

pub(super) struct Blocks<'a> {
    markdown: &'a str,
    options: Options,
    /// Where the next piece starts.
    pos: usize,
    /// Split points before this are not used (one was found inside a block).
    skip_to: usize,
    /// The piece being read: its parse, where it starts, and where it ends.
    piece: Option<Piece<'a>>,
    /// The rest of a long table being read: its header and delimiter lines, and its
    /// remaining rows' lines.
    table: Option<(&'a str, &'a str)>,
    /// Parsed whole (no split point is used).
    whole: bool,
}

struct Piece<'a> {
    events: OffsetIter<'a>,
    start: usize,
    split: Split,
    /// A block read and not yet given (see [`Split::Table`]).
    held: Option<(Vec<Event<'a>>, Range<usize>)>,
}

/// Where a piece ends, and what is to be confirmed there.
#[derive(Clone, Copy)]
enum Split {
    /// The document's end.
    End,
    /// A heading line starting at this offset (parsed with the piece).
    Heading(usize),
    /// A long table, its header at `head`, cut before the body row at `cut`: the
    /// piece's last block must be that table, to `cut`; its rows from `cut` to
    /// `rows_end` are read in groups.
    Table {
        head: usize,
        cut: usize,
        rows_end: usize,
    },
}

impl<'a> Blocks<'a> {
    pub(super) fn new(markdown: &'a str, options: Options) -> Blocks<'a> {
        Blocks {
            markdown,
            options,
            pos: 0,
            skip_to: 0,
            piece: None,
            table: None,
            whole: markdown.contains("]:"),
        }
    }

    /// The next split point after `self.pos` (and not before `self.skip_to`).
    fn split(&self) -> Split {
        if self.whole {
            return Split::End;
        }
        let text = self.markdown;
        let from = self.pos.max(self.skip_to);
        // A run of lines starting with `|`: (its first line, its line count).
        let mut run: Option<(usize, usize)> = None;
        let mut at = from;
        // Line starts only: `from` is one, or the piece's own first line.
        if at > 0 && text.as_bytes().get(at - 1) != Some(&b'\n') {
            at = text[at..].find('\n').map_or(text.len(), |n| at + n + 1);
        }
        while at < text.len() {
            let end = text[at..].find('\n').map_or(text.len(), |n| at + n + 1);
            let line = &text[at..end];
            if line.starts_with('|') {
                let (head, count) = run.get_or_insert((at, 0));
                *count += 1;
                // Header, delimiter, then TABLE_ROWS body rows before the first cut.
                if *count == TABLE_ROWS + 3 && *head >= self.pos {
                    let head = *head;
                    let (rows_end, rows) = run_end(text, at);
                    let cols = text[head..]
                        .split('\n')
                        .next()
                        .map_or(0, |h| h.matches('|').count() + 1);
                    if (TABLE_ROWS + 1 + rows) * cols < FILLED_CELLS {
                        return Split::Table {
                            head,
                            cut: at,
                            rows_end,
                        };
                    }
                }
            } else {
                run = None;
                if at > self.pos && is_heading_line(line) {
                    return Split::Heading(at);
                }
            }
            at = end;
        }
        Split::End
    }

    /// Starts the piece from `self.pos`.
    fn open(&mut self) {
        let split = self.split();
        let end = match split {
            Split::End => self.markdown.len(),
            Split::Heading(at) => line_end(self.markdown, at),
            Split::Table { cut, .. } => cut,
        };
        self.piece = Some(Piece {
            events: Parser::new_ext(&self.markdown[self.pos..end], self.options).into_offset_iter(),
            start: self.pos,
            split,
            held: None,
        });
    }

    /// The next group of a long table's rows, parsed under its header, as a block
    /// that continues it.
    fn table_rows(&mut self, head: &'a str, rows: &'a str) -> Option<Block<'a>> {
        let mut cut = 0;
        for _ in 0..TABLE_ROWS {
            if cut == rows.len() {
                break;
            }
            cut = line_end(rows, cut);
        }
        let (now, later) = rows.split_at(cut);
        self.table = (!later.is_empty()).then_some((head, later));
        let text = format!("{head}{now}");
        let events: Vec<Event<'static>> = Parser::new_ext(&text, self.options)
            .map(Event::into_static)
            .collect();
        let read = events
            .iter()
            .filter(|e| matches!(e, Event::Start(Tag::TableRow)))
            .count();
        if read != now.lines().count()
            || !matches!(events.first(), Some(Event::Start(Tag::Table(_))))
        {
            // Cannot happen (see the module's note); said rather than hidden.
            tracing::warn!(
                "report.html: a table's rows did not read as rows ({read} of {})",
                now.lines().count()
            );
        }
        Some((events, true))
    }
}

impl<'a> Iterator for Blocks<'a> {
    type Item = Block<'a>;

    fn next(&mut self) -> Option<Block<'a>> {
        loop {
            if let Some((head, rows)) = self.table.take() {
                return self.table_rows(head, rows);
            }
            if self.piece.is_none() {
                if self.pos >= self.markdown.len() {
                    return None;
                }
                self.open();
            }
            let piece = self.piece.as_mut()?;
            let (start, split) = (piece.start, piece.split);
            let next = block(&mut piece.events);
            let at = |range: &Range<usize>| (start + range.start, start + range.end);
            let failed = match (split, next) {
                (Split::End, Some((block, _))) => return Some((block, false)),
                (Split::End, None) => {
                    self.piece = None;
                    self.pos = self.markdown.len();
                    continue;
                }
                (Split::Heading(cut), Some((block, range))) => {
                    let (from, to) = at(&range);
                    if from == cut
                        && matches!(block.first(), Some(Event::Start(Tag::Heading { .. })))
                    {
                        // The heading the piece was cut before: the next piece's first.
                        self.piece = None;
                        self.pos = cut;
                        continue;
                    }
                    if to <= cut && from < cut {
                        return Some((block, false));
                    }
                    from
                }
                // The line was not read apart (cannot be: a block holds it).
                (Split::Heading(cut), None) => {
                    self.piece = None;
                    self.pos = cut;
                    continue;
                }
                // A block followed by another is whole: the one before is given, the
                // last held until the piece ends.
                (Split::Table { .. }, Some(next)) => match piece.held.replace(next) {
                    Some((block, _)) => return Some((block, false)),
                    None => continue,
                },
                (
                    Split::Table {
                        head,
                        cut,
                        rows_end,
                    },
                    None,
                ) => {
                    let Some((block, range)) = piece.held.take() else {
                        self.piece = None;
                        self.pos = cut;
                        continue;
                    };
                    let (from, to) = at(&range);
                    if from == head
                        && to == cut
                        && matches!(block.first(), Some(Event::Start(Tag::Table(_))))
                    {
                        self.piece = None;
                        self.pos = rows_end;
                        let head_end = line_end(self.markdown, line_end(self.markdown, head));
                        self.table = Some((
                            &self.markdown[head..head_end],
                            &self.markdown[cut..rows_end],
                        ));
                        return Some((block, false));
                    }
                    from
                }
            };
            // A block goes on past the cut: read again from its line, to a later
            // split.
            self.piece = None;
            self.skip_to = match split {
                Split::Heading(cut) => line_end(self.markdown, cut),
                Split::Table { rows_end, .. } => rows_end,
                Split::End => self.markdown.len(),
            };
            self.pos = self.markdown[..failed].rfind('\n').map_or(0, |n| n + 1);
        }
    }
}

/// The next top-level block of `events` and its byte range: a tag's opening to its
/// closing, or one event alone (a rule).
fn block<'a>(events: &mut OffsetIter<'a>) -> Option<(Vec<Event<'a>>, Range<usize>)> {
    let mut block = Vec::new();
    let mut range = 0..0;
    let mut depth = 0usize;
    for (event, at) in events.by_ref() {
        if block.is_empty() {
            range = at;
        }
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        block.push(event);
        if depth == 0 {
            return Some((block, range));
        }
    }
    (!block.is_empty()).then_some((block, range))
}

/// The offset after the line starting at `at` (its newline included).
fn line_end(text: &str, at: usize) -> usize {
    text[at..].find('\n').map_or(text.len(), |n| at + n + 1)
}

/// The end of the run of `|` lines holding the line at `at`, and how many of its
/// lines follow that one.
fn run_end(text: &str, at: usize) -> (usize, usize) {
    let mut end = line_end(text, at);
    let mut rows = 0;
    while end < text.len() && text[end..].starts_with('|') {
        end = line_end(text, end);
        rows += 1;
    }
    (end, rows)
}

/// An ATX heading's line: one to six `#` at the margin, then a space, a tab or the
/// line's end.
fn is_heading_line(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes)
        && matches!(
            line.as_bytes().get(hashes),
            None | Some(b' ' | b'\t' | b'\n' | b'\r')
        )
}

/// Appends to `table` (a table block) the body rows of `more` (a block that
/// continues it): the table the whole document holds.
pub(super) fn append_rows<'a>(table: &mut Vec<Event<'a>>, more: Vec<Event<'a>>) {
    let closing = table.pop();
    let rows = more
        .iter()
        .position(|e| matches!(e, Event::End(pulldown_cmark::TagEnd::TableHead)))
        .map_or(more.len(), |n| n + 1);
    let last = more.len().saturating_sub(1);
    table.extend(more.into_iter().take(last).skip(rows));
    table.extend(closing);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocks read a piece at a time, tables put back together, against the
    /// whole document's.
    fn same_as_whole(markdown: &str) -> usize {
        let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
        let mut pieces: Vec<Vec<Event<'_>>> = Vec::new();
        let mut continued = 0;
        for (block, continues) in Blocks::new(markdown, options) {
            match pieces.last_mut() {
                Some(table) if continues => {
                    continued += 1;
                    append_rows(table, block);
                }
                _ => pieces.push(block),
            }
        }
        let whole: Vec<Event<'_>> = Parser::new_ext(markdown, options).collect();
        assert_eq!(pieces.concat(), whole);
        continued
    }

    #[test]
    fn a_document_read_in_pieces_gives_the_whole_document_s_blocks() {
        let rows: String = (0..700)
            .map(|i| format!("| S{i} | *a* `b` | [S{i}.md](S{i}.md) |\n"))
            .collect();
        let table = format!("| ID | Text | Link |\n|:---|---:|---|\n{rows}");
        let doc = format!(
            "# Title\n\nIntro\n## Results\n\n{table}\n## Code\n\n```\n# not a heading\n{table}```\n\
             \n- a list\n# heading after a list\n> quote\n## heading after a quote\n\
             <!--\n\n## inside a comment\n-->\n\nSetext\n---\n\n{table}## Last\n\n~~~\nopen fence\n## in it\n"
        );
        // The two tables outside the fence are cut in groups of rows.
        assert!(same_as_whole(&doc) >= 4);
        // Link references apply to the whole document: not cut.
        let refs = format!("{doc}\n[x]: /y\n");
        assert_eq!(same_as_whole(&refs), 0);
    }
}
