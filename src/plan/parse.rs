//! Markdown plan parser: walks the pulldown-cmark event stream (with byte offsets)
//! and fills the [`Plan`] model. Structure comes from the markdown tree; regexes are
//! only applied to the text of a single heading, field or cell.

use std::path::Path;
use std::sync::LazyLock;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use regex::Regex;

use super::builder::{ARM_RE, Item, Mode, ScenarioBuilder, clean_label};
use super::model::*;
use super::norm::{extract_ids, normalise_categories};

pub(super) fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("static regex {pattern}: {e}"))
}

/// `## 1b. Claims`, `## §7b.`, `## Sec. 7c` → section key.
static SECTION_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:§|Sec\.?\s*)?(\d+[a-z]?)(?:\.|\s|$)"));
/// `Scenario S1: name`, `S01: name`, `D3 — name`.
static SCENARIO_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:Scenario\s+)?([A-Z][A-Za-z]?\d+[a-z]?)\s*(?::|—|–|-)\s*(.*)$"));
/// `§7.M`, `Sec. 7.M`, optionally followed by `.S`.
static SEVEN_M_RE: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:§|Sec\.?\s*)\s*7\.M(\.S)?\b"));
/// `§7.M: not applicable …` written as a line of text.
static SEVEN_M_NA_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^(?:(?:§|sec\.?\s*)\s*7\.m\s*:?\s*)?not applicable"));
/// `H1. rest` at the start of a hypothesis item.
static HYP_RE: LazyLock<Regex> = LazyLock::new(|| re(r"(?s)^\s*(H\d+)\.?\s*(.*)$"));
/// A header line `**Label:** value`.
static HEADER_RE: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*\*\*([^*]+?):?\*\*:?\s*(.*?)\s*$"));

/// Converts byte offsets to 1-based line numbers.
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines(starts)
    }
    fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&s| s <= offset).max(1)
    }
}

/// A table being collected: header cells and rows with their lines.
#[derive(Default)]
struct Table {
    header: Vec<String>,
    rows: Vec<(usize, Vec<String>)>,
    in_head: bool,
}

impl Table {
    /// Cell of `row` in the first column whose header contains `name`, else `fallback`.
    fn cell<'a>(&self, row: &'a [String], name: &str, fallback: usize) -> &'a str {
        let idx = self
            .header
            .iter()
            .position(|h| h.to_lowercase().contains(name))
            .unwrap_or(fallback);
        row.get(idx).map(|s| s.trim()).unwrap_or_default()
    }
}

/// Walks the events and owns all intermediate state.
struct Walker<'t> {
    text: &'t str,
    lines: Lines,
    plan: Plan,
    section: String,
    /// Latest `###` heading inside §4 (the hypotheses' subsystem group).
    subheading: Option<String>,
    scenario: Option<ScenarioBuilder>,
    heading: Option<(HeadingLevel, String, usize)>,
    items: Vec<Item>,
    table: Option<Table>,
    cell: Option<String>,
    para: Option<(String, std::ops::Range<usize>)>,
    code: Option<(String, String, usize)>,
}

/// The 1-based line of a fenced code block's opening that nothing closes (CommonMark:
/// a closing fence is the same character, at least as long, alone on its line).
fn unclosed_fence(text: &str) -> Option<usize> {
    let mut open: Option<(usize, char, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        // Four spaces in is indented code, not a fence.
        if line.len() - trimmed.len() > 3 {
            continue;
        }
        let Some(c @ ('`' | '~')) = trimmed.chars().next() else {
            continue;
        };
        let n = trimmed.chars().take_while(|x| *x == c).count();
        if n < 3 {
            continue;
        }
        match open {
            None => open = Some((i + 1, c, n)),
            Some((_, oc, on)) if c == oc && n >= on && trimmed[n..].trim().is_empty() => {
                open = None;
            }
            Some(_) => {}
        }
    }
    open.map(|(line, _, _)| line)
}

/// Parse a markdown plan. `source` is the path (used for the slug fallback and reports).
pub fn parse_plan(source: &str, text: &str) -> Plan {
    let mut w = Walker {
        text,
        lines: Lines::new(text),
        plan: Plan {
            source: source.to_string(),
            ..Plan::default()
        },
        section: String::new(),
        subheading: None,
        scenario: None,
        heading: None,
        items: Vec::new(),
        table: None,
        cell: None,
        para: None,
        code: None,
    };
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
        w.event(event, range);
    }
    w.end_scenario();
    let mut plan = w.plan;
    plan.unclosed_fence = unclosed_fence(text);
    plan.slug = plan.title.clone().unwrap_or_else(|| {
        Path::new(source)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| source.to_string())
    });
    plan
}

impl Walker<'_> {
    fn event(&mut self, event: Event<'_>, range: std::ops::Range<usize>) {
        let line = self.lines.line(range.start);
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                self.heading = Some((level, String::new(), line));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, text, line)) = self.heading.take() {
                    self.heading_done(level, text.trim(), line);
                }
            }
            Event::Start(Tag::Paragraph) if self.items.is_empty() && self.cell.is_none() => {
                self.para = Some((String::new(), range));
            }
            Event::End(TagEnd::Paragraph) => {
                if let Some((text, range)) = self.para.take() {
                    self.paragraph_done(text.trim(), range);
                } else if let Some(item) = self.items.last_mut() {
                    item.text.push('\n');
                }
            }
            Event::Start(Tag::Item) => self.items.push(Item {
                line,
                ..Item::default()
            }),
            Event::End(TagEnd::Item) => {
                if let Some(item) = self.items.pop() {
                    match self.items.last_mut() {
                        Some(parent) => parent.children.push(item),
                        None => self.item_done(item),
                    }
                }
            }
            Event::Start(Tag::Strong) => {
                if let Some(item) = self.items.last_mut()
                    && self.code.is_none()
                    && self.heading.is_none()
                    && item.label.is_none()
                    && !item.label_done
                    && item.text.trim().is_empty()
                {
                    item.in_label = true;
                    item.label = Some(String::new());
                }
            }
            Event::End(TagEnd::Strong) => {
                if let Some(item) = self.items.last_mut()
                    && item.in_label
                {
                    item.in_label = false;
                    item.label_done = true;
                }
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let info = match kind {
                    CodeBlockKind::Fenced(info) => info.trim().to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((info, String::new(), line));
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((info, body, line)) = self.code.take() {
                    self.code_done(&info, body, line);
                }
            }
            Event::Start(Tag::Table(_)) => self.table = Some(Table::default()),
            Event::End(TagEnd::Table) => {
                if let Some(t) = self.table.take() {
                    self.table_done(t);
                }
            }
            Event::Start(Tag::TableHead) => {
                if let Some(t) = self.table.as_mut() {
                    t.in_head = true;
                }
            }
            Event::End(TagEnd::TableHead) => {
                if let Some(t) = self.table.as_mut() {
                    t.in_head = false;
                }
            }
            Event::Start(Tag::TableRow) => {
                if let Some(t) = self.table.as_mut() {
                    t.rows.push((line, Vec::new()));
                }
            }
            Event::Start(Tag::TableCell) => self.cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => {
                if let (Some(cell), Some(t)) = (self.cell.take(), self.table.as_mut()) {
                    if t.in_head {
                        t.header.push(cell.trim().to_string());
                    } else if let Some((_, row)) = t.rows.last_mut() {
                        row.push(cell.trim().to_string());
                    }
                }
            }
            Event::Text(s) => self.push_text(&s),
            Event::Code(s) => self.push_text(&format!("`{s}`")),
            Event::SoftBreak | Event::HardBreak => self.push_text(" "),
            _ => {}
        }
    }

    /// Route inline text to the innermost open container.
    fn push_text(&mut self, s: &str) {
        if let Some((_, body, _)) = self.code.as_mut() {
            body.push_str(s);
        } else if let Some(cell) = self.cell.as_mut() {
            cell.push_str(s);
        } else if let Some((_, h, _)) = self.heading.as_mut() {
            h.push_str(s);
        } else if let Some(item) = self.items.last_mut() {
            match (item.in_label, item.label.as_mut()) {
                (true, Some(label)) => label.push_str(s),
                _ => item.text.push_str(s),
            }
        } else if let Some((p, _)) = self.para.as_mut() {
            p.push_str(s);
        }
    }

    fn end_scenario(&mut self) {
        if let Some(b) = self.scenario.take() {
            self.plan.scenarios.push(b.finish());
        }
    }

    fn heading_done(&mut self, level: HeadingLevel, text: &str, line: usize) {
        match level {
            HeadingLevel::H1 => {
                let lower = text.to_lowercase();
                if lower.starts_with("test plan:") {
                    let t = text.get("test plan:".len()..).unwrap_or_default().trim();
                    if !t.is_empty() {
                        self.plan.title = Some(t.to_string());
                    }
                }
            }
            HeadingLevel::H2 => {
                self.end_scenario();
                self.section = SECTION_RE
                    .captures(text)
                    .and_then(|c| c.get(1))
                    .map(|m| m.as_str().to_string())
                    .unwrap_or_default();
            }
            HeadingLevel::H3 if self.section == "4" => self.subheading = Some(text.to_string()),
            HeadingLevel::H3 if self.section == "7" => {
                if let Some(c) = SCENARIO_RE.captures(text) {
                    self.end_scenario();
                    let id = c.get(1).map(|m| m.as_str()).unwrap_or_default();
                    let name = c.get(2).map(|m| m.as_str().trim()).unwrap_or_default();
                    self.scenario = Some(ScenarioBuilder::new(id.into(), name.into(), line));
                }
            }
            _ => {
                let Some(b) = self.scenario.as_mut() else {
                    return;
                };
                match SEVEN_M_RE.captures(text) {
                    Some(c) if c.get(1).is_some() => b.mode = Mode::SevenMS,
                    Some(_) => {
                        b.mode = Mode::SevenM;
                        if text.to_lowercase().contains("not applicable") {
                            b.not_applicable = Some((text.to_string(), line));
                        }
                        b.seven_m.get_or_insert_with(|| SevenMBlock {
                            line,
                            ..SevenMBlock::default()
                        });
                    }
                    None => {}
                }
            }
        }
    }

    fn paragraph_done(&mut self, text: &str, range: std::ops::Range<usize>) {
        let line = self.lines.line(range.start);
        self.broken_table(&range);
        if self.section.is_empty() {
            self.header_lines(&range);
        }
        if self.section == "7d" {
            let conf = self.plan.confidence.get_or_insert_with(String::new);
            if !conf.is_empty() {
                conf.push_str("\n\n");
            }
            conf.push_str(text);
            return;
        }
        let Some(b) = self.scenario.as_mut() else {
            return;
        };
        let na_here =
            SEVEN_M_NA_RE.is_match(text) && (b.mode == Mode::SevenM || SEVEN_M_RE.is_match(text));
        if na_here && b.not_applicable.is_none() {
            b.not_applicable = Some((text.to_string(), line));
        } else if b.mode == Mode::SevenMS && ARM_RE.is_match(text) {
            let item = Item {
                line,
                text: text.to_string(),
                ..Item::default()
            };
            b.arm(&item);
        }
    }

    /// A paragraph whose lines are written as table rows is a table that lost its
    /// delimiter row: markdown reads it as text, so its rows (claims, requirements …)
    /// are silently not there.
    fn broken_table(&mut self, range: &std::ops::Range<usize>) {
        let raw = self.text.get(range.clone()).unwrap_or_default();
        let is_row = |l: &str| {
            let t = l.trim();
            t.starts_with('|') && t.matches('|').count() >= 2
        };
        let mut lines = raw.lines().enumerate().filter(|(_, l)| is_row(l));
        let Some((first, _)) = lines.next() else {
            return;
        };
        self.plan.broken_tables.push(BrokenTable {
            line: self.lines.line(range.start) + first,
            section: self.section.clone(),
            rows: 1 + lines.count(),
        });
    }

    /// `**Date:** …` header lines, read from the paragraph's own source lines.
    fn header_lines(&mut self, range: &std::ops::Range<usize>) {
        let raw = self.text.get(range.clone()).unwrap_or_default();
        for l in raw.lines() {
            let Some(c) = HEADER_RE.captures(l) else {
                continue;
            };
            let value = c.get(2).map(|m| m.as_str().to_string());
            let h = &mut self.plan.header;
            match clean_label(c.get(1).map(|m| m.as_str()).unwrap_or_default()).as_str() {
                "date" => h.date = value,
                "plan mode" => h.plan_mode = value,
                "sut" => h.sut = value,
                "change under test" => h.change_under_test = value,
                "plan author" => h.plan_author = value,
                "status" => h.status = value,
                _ => {}
            }
        }
    }

    fn item_done(&mut self, item: Item) {
        if let Some(b) = self.scenario.as_mut() {
            b.field(&item);
        } else if self.section == "4" {
            self.hypothesis(&item);
        }
    }

    fn hypothesis(&mut self, item: &Item) {
        let whole = item.whole_text();
        let Some(c) = HYP_RE.captures(&whole) else {
            return;
        };
        let id = c.get(1).map(|m| m.as_str()).unwrap_or_default().to_string();
        let (title, statement) = match &item.label {
            Some(label) => {
                let t = HYP_RE
                    .captures(label)
                    .and_then(|c| c.get(2))
                    .map_or(label.as_str(), |m| m.as_str());
                let st = item.text.trim();
                // `H1. **title** — statement`: the id sits in the text, not the label.
                let st = st.strip_prefix(&format!("{id}.")).unwrap_or(st);
                (t.trim().trim_end_matches('.').to_string(), st)
            }
            None => {
                let rest = c.get(2).map_or("", |m| m.as_str());
                let rest = rest.lines().next().unwrap_or_default();
                match rest.split_once(" — ").or_else(|| rest.split_once(". ")) {
                    Some((t, st)) => (t.trim().to_string(), st),
                    None => (rest.trim().to_string(), ""),
                }
            }
        };
        let statement = statement
            .trim()
            .trim_start_matches(['—', '–', '-', ':'])
            .trim();
        let after = |key: &str| -> Option<String> {
            let lower = whole.to_lowercase();
            let at = lower.find(key)? + key.len();
            let tail = whole.get(at..)?.trim_start_matches([':', ' ']);
            let end = tail.find(['\n']).unwrap_or(tail.len());
            let sentence = &tail[..end];
            let cut = sentence.find(". ").map_or(sentence.len(), |i| i + 1);
            Some(sentence[..cut].trim().to_string())
        };
        let could = after("could falsify").unwrap_or_default();
        self.plan.hypotheses.push(Hypothesis {
            id,
            title,
            statement: statement.lines().next().unwrap_or_default().to_string(),
            could_falsify: extract_ids(&could, 'C'),
            suspected_because: after("suspected because"),
            subsystem: after("subsystem").or_else(|| self.subheading.clone()),
            line: item.line,
        });
    }

    fn code_done(&mut self, info: &str, body: String, line: usize) {
        let Some(b) = self.scenario.as_mut() else {
            return;
        };
        if info.split_whitespace().next() == Some("faultline") {
            self.plan.embedded_run_specs.push(EmbeddedRunSpec {
                scenario_id: b.s.id.clone(),
                line: line + 1,
                yaml: body,
            });
        } else if b.mode == Mode::Scenario && b.skeleton_code.is_none() {
            b.skeleton_code = Some(Field { text: body, line });
        }
    }

    fn table_done(&mut self, t: Table) {
        for (line, row) in &t.rows {
            let line = *line;
            match self.section.as_str() {
                "1b" | "1c" => {
                    let id = t.cell(row, "id", 0).to_string();
                    if id.is_empty() {
                        continue;
                    }
                    let mut claim = Claim {
                        id,
                        line,
                        ..Claim::default()
                    };
                    if self.section == "1b" {
                        claim.text = t.cell(row, "claim", 1).into();
                        claim.category_raw = t.cell(row, "categ", 2).into();
                        (claim.categories, claim.unknown_categories) =
                            normalise_categories(&claim.category_raw);
                        claim.source = t.cell(row, "source", 3).into();
                        claim.inferred = t.cell(row, "inferred", 4).into();
                        self.plan.claims.push(claim);
                    } else {
                        claim.text = t.cell(row, "behav", 1).into();
                        claim.source = t.cell(row, "source", 2).into();
                        self.plan.missing_claims.push(claim);
                    }
                }
                "6b" => self.plan.requirements.push(Requirement {
                    requirement: t.cell(row, "requirement", 0).into(),
                    version_floor: t.cell(row, "version", 1).into(),
                    used_by: t.cell(row, "used by", 2).into(),
                    install_hint: t.cell(row, "install", 3).into(),
                    brought_up_by_sut: row
                        .iter()
                        .any(|c| c.to_lowercase().contains("brought up by sut")),
                    line,
                }),
                "7b" => self.plan.adequacy.push(AdequacyRow {
                    claim: t.cell(row, "claim", 0).into(),
                    threat_model: t.cell(row, "threat", 1).into(),
                    scenarios: t.cell(row, "scenario", 2).into(),
                    why_sufficient: t.cell(row, "why", 3).into(),
                    line,
                }),
                "7c" => self.plan.residual.push(row.clone()),
                _ => {}
            }
        }
    }
}
