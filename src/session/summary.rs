//! One line for a journal record's payload, the way every reader shows it (the
//! report's timeline, the TUI's evidence list, headless output).

/// Longest note kept in a timeline row before it is cut with an ellipsis.
const SUMMARY_MAX: usize = 160;

/// A short one-line summary of a journal record's payload: `key=value` pairs for an
/// object (empty fields left out), the text for a string, compact JSON otherwise;
/// cut at [`SUMMARY_MAX`] characters.
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

fn scalar(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "null".to_string(),
        other => other.to_string(),
    }
}

/// Text on one line: newlines and runs of whitespace collapsed, controls stripped.
pub fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    crate::sanitize::line(&flat)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
