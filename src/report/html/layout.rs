//! How report.md's text is laid out in report.html: its title and the dashboard
//! first, then its sections, each with an id a contents list (`<nav>`) links to;
//! the scenario table becomes one section per scenario and arm (the row's cells as
//! labelled fields, long ones folded), with that run's figures moved into it from
//! report.md's Figures section. The words are report.md's, rendered from its
//! markdown events; only where they stand changes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use pulldown_cmark::{Event, HeadingLevel, Options, Tag, TagEnd};

use super::dashboard::{Dashboard, anchor};
use super::pieces::{Blocks, append_rows};
use super::{Rewrite, escape, fold_open, matching_end, plain_text};

/// report.md's heading of the table with a row per scenario and arm
/// (assets/report.md.j2).
const RESULTS: &str = "Scenario results";
/// report.md's section of figures, and the heading of one run's part of it.
const FIGURES: &str = "Figures";
const FIGURES_OF: &str = "Figures of ";
/// report.md's section with a heading per finding, listed in the contents.
const FINDINGS: &str = "Findings";
/// The results table's columns shown in a run section's heading, not as fields.
const NAME_COLUMN: &str = "Scenario";
const VERDICT_COLUMN: &str = "Verdict";

/// The page's parts: the contents list, and what goes in `<main>` in order (its
/// header, then the text before the first section, then each section).
pub(super) struct Page {
    pub nav: String,
    head: String,
    preamble: String,
    parts: Vec<Part>,
}

impl Page {
    /// Writes `<main>`'s content to `out`, each section's text let go of once it
    /// is written.
    pub fn write_main(self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(self.head.as_bytes())?;
        out.write_all(self.preamble.as_bytes())?;
        for part in self.parts {
            write!(
                out,
                "<section class=\"part\" id=\"{}\">\n<h2>{}</h2>\n{}</section>\n",
                part.id, part.heading, part.body
            )?;
        }
        Ok(())
    }
}

/// A section of the page under one of report.md's `##` headings.
struct Part {
    id: String,
    title: String,
    /// Its title as HTML.
    heading: String,
    body: String,
    /// Entries under it in the contents: (anchor, text, tone class).
    entries: Vec<(String, String, Option<&'static str>)>,
}

/// Which section and figures group each top-level block stands in, followed in
/// document order.
#[derive(Default)]
struct Place {
    section: String,
    group: Option<String>,
}

impl Place {
    /// Moves past `block`: returns its heading's level and text if it is one, and
    /// the figures group (a run's id) it belongs to, if any.
    fn after(&mut self, block: &[Event<'_>]) -> (Option<(u8, String)>, Option<String>) {
        let heading = heading(block);
        if let Some((level, text)) = &heading
            && *level <= 3
        {
            if *level <= 2 {
                self.section = text.clone();
            }
            self.group = (*level == 3 && self.section == FIGURES)
                .then(|| text.strip_prefix(FIGURES_OF).map(str::to_string))
                .flatten();
        }
        (heading, self.group.clone())
    }
}

/// Lays out report.md's `markdown` (the whole document, parsed with `options`) with
/// `dashboard` on top. The document is read block by block, twice, and never held
/// parsed whole: first for the results table's rows and the figures each run gets
/// (the only blocks kept), then to write the page.
pub(super) fn page(
    markdown: &str,
    options: Options,
    rewrite: &mut Rewrite<'_>,
    dashboard: Option<&Dashboard>,
) -> Page {
    let (results, groups, moved) = moves(markdown, options);

    let mut ids = Ids::default();
    ids.taken.insert("top".into());
    ids.taken.insert("dashboard".into());
    let mut title = String::new();
    let mut preamble = String::new();
    let mut parts: Vec<Part> = Vec::new();
    let mut results_id: Option<String> = None;
    let mut place = Place::default();
    for (b, (block, _)) in blocks(markdown, options).enumerate() {
        let (heading, _) = place.after(&block);
        if moved.contains(&b) {
            continue;
        }
        let end = block.len() - 1;
        let body = match parts.last_mut() {
            Some(part) => &mut part.body,
            None => &mut preamble,
        };
        match heading {
            Some((1, _)) if title.is_empty() => {
                title = rewrite.html(&block[1..end], false);
            }
            Some((2, text)) => {
                let id = ids.of(&text);
                let mut intro = String::new();
                if text == RESULTS {
                    results_id = Some(id.clone());
                }
                // Said where the figures were: they now stand with their runs.
                if let (FIGURES, false, Some(to)) = (text.as_str(), moved.is_empty(), &results_id) {
                    let _ = writeln!(
                        intro,
                        "<p class=\"moved-note\">In this page each scenario's and arm's figures \
                         stand in its own section under <a href=\"#{to}\">{RESULTS}</a>.</p>"
                    );
                }
                parts.push(Part {
                    id,
                    heading: rewrite.html(&block[1..end], false),
                    title: text,
                    body: intro,
                    entries: Vec::new(),
                });
            }
            Some((level, text)) => {
                let id = ids.of(&text);
                let _ = writeln!(
                    body,
                    "<h{level} id=\"{id}\">{}</h{level}>",
                    rewrite.html(&block[1..end], false)
                );
                if let Some(part) = parts.last_mut()
                    && part.title == FINDINGS
                {
                    part.entries.push((id, text, None));
                }
            }
            None if results.contains(&b) => {
                let table = Table::read(&block);
                let entries = runs(&block, &table, rewrite, &groups, dashboard, body);
                if let Some(part) = parts.last_mut() {
                    part.entries.extend(entries);
                }
            }
            None => body.push_str(&rewrite.html(&block, false)),
        }
    }

    if title.is_empty() {
        title = "Findings report".to_string();
    }
    let mut head = format!("<header class=\"page-head\">\n<h1 id=\"top\">{title}</h1>\n");
    if let Some(d) = dashboard {
        head.push_str(&d.html());
    }
    head.push_str("</header>\n");
    Page {
        nav: contents(&parts, dashboard.is_some()),
        head,
        preamble,
        parts,
    }
}

/// Figures moved beside their runs, by run id: each group's blocks (its heading
/// first), kept from the first read.
type Groups = BTreeMap<String, Vec<Vec<Event<'static>>>>;

/// The first read of the document: which block is the results table, the figures
/// groups of the runs it has a row for, and the blocks those groups take out of the
/// Figures section.
fn moves(markdown: &str, options: Options) -> (BTreeSet<usize>, Groups, BTreeSet<usize>) {
    let mut results = BTreeSet::new();
    let mut keys: BTreeSet<String> = BTreeSet::new();
    let mut groups: Groups = BTreeMap::new();
    let mut members: Vec<(usize, String)> = Vec::new();
    let mut place = Place::default();
    // The results table's blocks: its first, and those that continue it.
    let mut in_results = false;
    for (b, (block, continues)) in blocks(markdown, options).enumerate() {
        let (_, group) = place.after(&block);
        in_results &= continues;
        if in_results {
            results.insert(b);
            keys.extend(Table::read(&block).rows.iter().map(|r| row_key(&block, r)));
            continue;
        }
        match group {
            Some(id) => {
                members.push((b, id.clone()));
                groups
                    .entry(id)
                    .or_default()
                    .push(block.into_iter().map(Event::into_static).collect());
            }
            None if place.section == RESULTS
                && results.is_empty()
                && matches!(block[0], Event::Start(Tag::Table(_))) =>
            {
                results.insert(b);
                in_results = true;
                keys = Table::read(&block)
                    .rows
                    .iter()
                    .map(|r| row_key(&block, r))
                    .collect();
            }
            None => {}
        }
    }
    groups.retain(|id, _| keys.contains(id));
    let moved = members
        .into_iter()
        .filter(|(_, id)| groups.contains_key(id))
        .map(|(b, _)| b)
        .collect();
    (results, groups, moved)
}

/// report.md's top-level blocks (see [`Blocks`]), each whole but the results table,
/// given a group of rows at a time (`true`: more rows of the block before) so that
/// it is never held whole.
fn blocks(markdown: &str, options: Options) -> impl Iterator<Item = (Vec<Event<'_>>, bool)> {
    let mut pieces = Blocks::new(markdown, options).peekable();
    let mut place = Place::default();
    let (mut results, mut seen) = (false, false);
    std::iter::from_fn(move || {
        let (mut block, continues) = pieces.next()?;
        if continues && results {
            return Some((block, true));
        }
        place.after(&block);
        // The first table under the results heading, as `moves` finds it.
        results = !seen
            && place.section == RESULTS
            && matches!(block.first(), Some(Event::Start(Tag::Table(_))));
        seen |= results;
        if !results {
            while let Some((more, true)) = pieces.next_if(|(_, continues)| *continues) {
                append_rows(&mut block, more);
            }
        }
        Some((block, false))
    })
}

/// The contents list: the dashboard, every section, and under the results each
/// scenario and arm (a dot in its verdict's colour) and under the findings each one.
fn contents(parts: &[Part], dashboard: bool) -> String {
    let mut nav = String::from(
        "<nav class=\"toc\" aria-label=\"Contents\">\n<p class=\"toc-title\"><a href=\"#top\">Contents</a></p>\n<ol>\n",
    );
    if dashboard {
        nav.push_str("<li><a href=\"#dashboard\">At a glance</a></li>\n");
    }
    for part in parts {
        let _ = write!(
            nav,
            "<li><a href=\"#{}\">{}</a>",
            part.id,
            escape(&part.title)
        );
        if !part.entries.is_empty() {
            nav.push_str("<ol>");
            for (id, text, tone) in &part.entries {
                let dot = tone
                    .map(|t| format!("<span class=\"dot {t}\"></span>"))
                    .unwrap_or_default();
                let _ = write!(nav, "<li><a href=\"#{id}\">{dot}{}</a></li>", escape(text));
            }
            nav.push_str("</ol>");
        }
        nav.push_str("</li>\n");
    }
    nav.push_str("</ol>\n</nav>\n");
    nav
}

/// The results table as one section per row (a scenario or an arm), written to
/// `out`; returns their contents entries.
fn runs(
    events: &[Event<'_>],
    table: &Table,
    rewrite: &mut Rewrite<'_>,
    groups: &Groups,
    dashboard: Option<&Dashboard>,
    out: &mut String,
) -> Vec<(String, String, Option<&'static str>)> {
    let column = |name: &str| table.head.iter().position(|h| h == name);
    let (name, verdict) = (column(NAME_COLUMN), column(VERDICT_COLUMN));
    let mut entries = Vec::new();
    for row in &table.rows {
        let key = row_key(events, row);
        let id = anchor(&key);
        let tone = dashboard.and_then(|d| d.tone_of(&key));
        let cell = |rewrite: &mut Rewrite<'_>, k: Option<usize>| {
            k.and_then(|k| row.get(k))
                .map(|&(s, e)| rewrite.html(&events[s + 1..e], true))
                .unwrap_or_default()
        };
        let _ = write!(
            out,
            "<section class=\"run {}\" id=\"{id}\">\n<h3 class=\"run-title\"><span class=\"run-id\">{}</span> \
             <span class=\"run-name\">{}</span></h3>\n",
            tone.unwrap_or("tone-none"),
            cell(rewrite, Some(0)),
            cell(rewrite, name)
        );
        if verdict.is_some() {
            let _ = writeln!(
                out,
                "<p class=\"run-verdict\">{}</p>",
                cell(rewrite, verdict)
            );
        }
        out.push_str("<dl class=\"run-fields\">\n");
        for (k, &(s, e)) in row.iter().enumerate() {
            if k == 0 || Some(k) == name || Some(k) == verdict {
                continue;
            }
            let html = rewrite.html(&events[s + 1..e], true);
            let label = table.head.get(k).map(String::as_str).unwrap_or_default();
            let _ = write!(out, "<dt>{}</dt><dd>", escape(label));
            match fold_open(&plain_text(&events[s + 1..e])) {
                Some(open) => {
                    let _ = write!(out, "{open}{html}{}", super::FOLD_CLOSE);
                }
                None => out.push_str(&html),
            }
            out.push_str("</dd>\n");
        }
        out.push_str("</dl>\n");
        if let Some(group) = groups.get(&key) {
            out.push_str("<div class=\"run-figures\">\n");
            for block in group.iter().skip(1) {
                out.push_str(&rewrite.html(block, false));
            }
            out.push_str("</div>\n");
        }
        out.push_str("</section>\n");
        entries.push((id, plain_text(&events[row[0].0 + 1..row[0].1]), tone));
    }
    entries
}

/// A markdown table's header texts and its body rows, each row its cells'
/// (start, end) event indices.
struct Table {
    head: Vec<String>,
    rows: Vec<Vec<(usize, usize)>>,
}

impl Table {
    /// The table whose block is `events` (its opening to its closing).
    fn read(events: &[Event<'_>]) -> Table {
        let (start, end) = (0, events.len().saturating_sub(1));
        let mut head = Vec::new();
        let mut rows: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut in_head = false;
        let mut i = start + 1;
        while i < end {
            match &events[i] {
                Event::Start(Tag::TableHead) => in_head = true,
                Event::End(TagEnd::TableHead) => in_head = false,
                Event::Start(Tag::TableRow) => rows.push(Vec::new()),
                Event::Start(Tag::TableCell) => {
                    let close = matching_end(events, i);
                    if in_head {
                        head.push(plain_text(&events[i + 1..close]).trim().to_string());
                    } else if let Some(row) = rows.last_mut() {
                        row.push((i, close));
                    }
                    i = close;
                }
                _ => {}
            }
            i += 1;
        }
        rows.retain(|r| !r.is_empty());
        Table { head, rows }
    }
}

/// The scenario or arm a results row is about: its first cell's first word (`D5/api`;
/// `D5` of `D5 (all arms)`).
fn row_key(events: &[Event<'_>], row: &[(usize, usize)]) -> String {
    row.first()
        .map(|&(s, e)| plain_text(&events[s + 1..e]))
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_default()
}

/// A heading block's level and text.
fn heading(block: &[Event<'_>]) -> Option<(u8, String)> {
    let end = block.len().saturating_sub(1);
    let Some(Event::Start(Tag::Heading { level, .. })) = block.first() else {
        return None;
    };
    let level = match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    };
    Some((level, plain_text(&block[1..end]).trim().to_string()))
}

/// Ids made from headings: lower case, letters and digits, words joined by `-`,
/// a number appended to one already taken.
#[derive(Default)]
struct Ids {
    taken: BTreeSet<String>,
}

impl Ids {
    fn of(&mut self, text: &str) -> String {
        let mut slug = String::new();
        for c in text.chars() {
            if c.is_alphanumeric() {
                slug.extend(c.to_lowercase());
            } else if !slug.is_empty() && !slug.ends_with('-') {
                slug.push('-');
            }
        }
        let slug = match slug.trim_end_matches('-') {
            "" => "section".to_string(),
            s => s.to_string(),
        };
        let mut id = slug.clone();
        let mut n = 1;
        while self.taken.contains(&id) {
            n += 1;
            id = format!("{slug}-{n}");
        }
        self.taken.insert(id.clone());
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_ids_are_plain_and_never_twice() {
        let mut ids = Ids::default();
        assert_eq!(ids.of("Scenario results"), "scenario-results");
        assert_eq!(
            ids.of("Adequacy vs the plan's §7b"),
            "adequacy-vs-the-plan-s-7b"
        );
        assert_eq!(ids.of("D3"), "d3");
        assert_eq!(ids.of("D3"), "d3-2");
        assert_eq!(ids.of("<>"), "section");
    }
}
