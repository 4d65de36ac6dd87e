//! Filters the templates use to keep every value on one line and inside its table cell.

use minijinja::Value;
use minijinja::value::Serde;

/// Longest note kept in a timeline row before it is cut with an ellipsis.
const SUMMARY_MAX: usize = 160;

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
/// object, the text for a string, compact JSON otherwise; cut at [`SUMMARY_MAX`].
pub fn summary(data: Serde<serde_json::Value>) -> String {
    escape(&summary_of(&data.0))
}

/// The unescaped one-line summary [`summary`] puts in a table cell.
pub fn summary_of(data: &serde_json::Value) -> String {
    let text = match data {
        serde_json::Value::Object(map) if map.is_empty() => String::new(),
        // A field the event left empty says nothing: it is not shown.
        serde_json::Value::Object(map) => map
            .iter()
            .filter(|(_, v)| !is_empty(v))
            .map(|(k, v)| format!("{k}={}", scalar(v)))
            .collect::<Vec<_>>()
            .join(", "),
        other => scalar(other),
    };
    let text = one_line(&text);
    match text.char_indices().nth(SUMMARY_MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

fn is_empty(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Null => true,
        serde_json::Value::String(s) => s.is_empty(),
        serde_json::Value::Array(a) => a.is_empty(),
        serde_json::Value::Object(o) => o.is_empty(),
        _ => false,
    }
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

fn scalar(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "null".to_string(),
        other => other.to_string(),
    }
}

fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    crate::sanitize::line(&flat)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}
