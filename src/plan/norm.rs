//! Small normalisers applied to the text of a single field or table cell:
//! id lists (with ranges), claim categories and §7.M model kinds.

use std::sync::LazyLock;

use regex::Regex;

use super::model::Category;

/// Matches `C1`, `C1–C5`, `C1-C5`, `C1..C5`, `C1–5` (any one-letter prefix).
static ID_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b([A-Z])(\d+)(?:\s*(?:–|—|-|\.\.)\s*(?:[A-Z])?(\d+))?\b")
        .unwrap_or_else(|e| panic!("static regex: {e}"))
});

/// Largest range expanded; anything wider is treated as two single ids.
const MAX_RANGE: u64 = 500;

/// Extract ids with the given one-letter prefix from `text`, expanding ranges
/// ("C1–C5" gives C1..C5). Order is preserved, duplicates dropped.
pub fn extract_ids(text: &str, prefix: char) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |id: String| {
        if !out.contains(&id) {
            out.push(id);
        }
    };
    for cap in ID_RE.captures_iter(text) {
        let letter = cap.get(1).map(|m| m.as_str()).unwrap_or_default();
        if !letter.starts_with(prefix) {
            continue;
        }
        let Some(start) = cap.get(2).and_then(|m| m.as_str().parse::<u64>().ok()) else {
            continue;
        };
        match cap.get(3).and_then(|m| m.as_str().parse::<u64>().ok()) {
            Some(end) if end >= start && end - start <= MAX_RANGE => {
                for n in start..=end {
                    push(format!("{prefix}{n}"));
                }
            }
            Some(end) => {
                push(format!("{prefix}{start}"));
                push(format!("{prefix}{end}"));
            }
            None => push(format!("{prefix}{start}")),
        }
    }
    out
}

/// Map one lower-case word of a category cell to a category.
fn category_word(word: &str) -> Option<Category> {
    Some(match word {
        "safety" => Category::Safety,
        "liveness" => Category::Liveness,
        "durability" => Category::Durability,
        "performance" | "performance-slo" | "perf" | "slo" | "performance_slo" => {
            Category::PerformanceSlo
        }
        "operational" => Category::Operational,
        "idempotency" => Category::Idempotency,
        // Transactional claims: the picker suggests list-append / rw-register.
        "isolation" | "consistency" | "serializable" | "serializability" | "snapshot"
        | "transactional" => Category::Isolation,
        "ordering" => Category::Ordering,
        "membership" => Category::Membership,
        "boundary" | "tenancy" | "authz" => Category::Boundary,
        "fairness" => Category::Fairness,
        _ => return None,
    })
}

/// Normalise a §1b category cell into known categories plus unknown words.
///
/// The cell is split on `/`, `,`, `+`, "and" and whitespace. A parenthetical that
/// follows a recognised category is a note and is dropped ("ordering (queue example)");
/// one that comes first is a qualifier and is reported as unknown ("(negative)").
pub fn normalise_categories(raw: &str) -> (Vec<Category>, Vec<String>) {
    let lower = raw.to_lowercase();
    let mut cats: Vec<Category> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    let mut rest = lower.as_str();
    while !rest.is_empty() {
        let (before, paren, after) = match rest.find('(') {
            Some(open) => {
                let close = rest[open..].find(')').map(|c| open + c);
                match close {
                    Some(close) => (&rest[..open], Some(&rest[open..=close]), &rest[close + 1..]),
                    None => (&rest[..open], Some(&rest[open..]), ""),
                }
            }
            None => (rest, None, ""),
        };
        for word in before
            .split(|c: char| c == '/' || c == ',' || c == '+' || c.is_whitespace())
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_'))
            .filter(|w| !w.is_empty() && *w != "and" && *w != "&")
        {
            match category_word(word) {
                Some(c) if !cats.contains(&c) => cats.push(c),
                Some(_) => {}
                None => {
                    if !unknown.iter().any(|u| u == word) {
                        unknown.push(word.to_string());
                    }
                }
            }
        }
        if let Some(p) = paren
            && cats.is_empty()
            && !unknown.iter().any(|u| u == p)
        {
            unknown.push(p.to_string());
        }
        rest = after;
    }
    (cats, unknown)
}

/// Known §7.M model names.
const MODEL_KINDS: &[&str] = &[
    "register",
    "map",
    "queue",
    "log",
    "lock",
    "lease",
    "session",
    "membership-table",
    "counter",
    "ledger",
];

/// Normalise a "Model under test" value: a known kind, `other(name)` kept as written,
/// or `other(<first word>)` for anything else. `None` for empty text.
pub fn model_kind(text: &str) -> Option<String> {
    let lower = text.trim().to_lowercase();
    let lower = lower.trim_start_matches(['`', '*', '_']);
    if lower.is_empty() {
        return None;
    }
    if let Some(inner) = lower.strip_prefix("other(") {
        let name = inner.split(')').next().unwrap_or_default().trim();
        return Some(format!("other({name})"));
    }
    let word: String = lower
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    if word.is_empty() {
        return None;
    }
    if word == "membership" && lower.starts_with("membership table") {
        return Some("membership-table".to_string());
    }
    if MODEL_KINDS.contains(&word.as_str()) {
        Some(word)
    } else {
        Some(format!("other({word})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_expand() {
        assert_eq!(extract_ids("C1–C3, C7", 'C'), vec!["C1", "C2", "C3", "C7"]);
        assert_eq!(extract_ids("H3 (subset), H4, C2", 'H'), vec!["H3", "H4"]);
    }

    #[test]
    fn categories() {
        let (c, u) = normalise_categories("ordering / idempotency (queue)");
        assert_eq!(c, vec![Category::Ordering, Category::Idempotency]);
        assert!(u.is_empty());
        let (c, u) = normalise_categories("(negative) consistency");
        assert_eq!(c, vec![Category::Isolation]);
        assert_eq!(u, vec!["(negative)"]);
        let (c, u) = normalise_categories("observability");
        assert!(c.is_empty());
        assert_eq!(u, vec!["observability"]);
    }

    #[test]
    fn model_kinds() {
        assert_eq!(
            model_kind("register (single key)").as_deref(),
            Some("register")
        );
        assert_eq!(
            model_kind("other(parser).").as_deref(),
            Some("other(parser)")
        );
        assert_eq!(model_kind("widget thing").as_deref(), Some("other(widget)"));
    }
}
