//! Filters the templates use to keep every value on one line and inside its table cell.

use minijinja::Value;
use minijinja::value::Serde;

use crate::session::summary::{one_line, summary_of};

/// One markdown table cell: control characters stripped, newlines and runs of
/// whitespace collapsed, `|` escaped; empty or absent values become `—`.
pub fn cell(value: &Value) -> String {
    if value.is_none() || value.is_undefined() {
        return "—".to_string();
    }
    let text = escape(&one_line(&value.to_string()));
    if text.is_empty() {
        "—".to_string()
    } else {
        text
    }
}

/// Text collapsed onto one line (for list items and headings), without escaping `|`.
pub fn oneline(value: &Value) -> String {
    if value.is_none() || value.is_undefined() {
        return String::new();
    }
    one_line(&value.to_string())
}

/// Journal sequence numbers as `#3, #7`, or `—` when nothing is cited.
pub fn cites(seqs: Vec<u64>) -> String {
    if seqs.is_empty() {
        return "—".to_string();
    }
    seqs.iter()
        .map(|s| format!("#{s}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A short one-line summary of a journal record's `data`: `key=value` pairs for an
/// object, the text for a string, compact JSON otherwise; cut short (see [`summary_of`]).
pub fn summary(data: Serde<serde_json::Value>) -> String {
    escape(&summary_of(&data.0))
}

/// A checker's evidence without the leading `checked N [of M] ops, K anomalies`
/// that the report already says from the counts (so it is not said twice); what
/// follows it (latencies, windows, a refusal) is kept.
pub fn beyond_counts(evidence: &str) -> String {
    static COUNTS: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let counts = COUNTS.get_or_init(|| {
        regex::Regex::new(r"^checked [0-9,]+(?: of [0-9,]+)? ops, [0-9,]+ anomal(?:y|ies)[;,]?\s*")
            .ok()
    });
    let rest = match counts {
        Some(re) => re.replace(evidence.trim(), ""),
        None => evidence.trim().into(),
    };
    one_line(&rest)
}

/// Prefixes every line with `> ` so a quoted paragraph stays one blockquote.
pub fn quote(value: &Value) -> String {
    value
        .to_string()
        .lines()
        .map(|l| format!("> {}", crate::sanitize::line(l.trim_end())))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The findings file name of a scenario or arm id (`D5/api` → `D5-api.md`).
pub fn finding_file(id: &str) -> String {
    format!("{}.md", id.replace('/', "-"))
}

fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}
