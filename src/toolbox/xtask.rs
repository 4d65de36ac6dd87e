//! `cargo xtask` subcommands, found heuristically in `xtask/src/main.rs`: string
//! literals on the left of `match` arms (`"cluster-up" =>`, `Some("up") =>`,
//! `"a" | "b" =>`) and the variants of an enum deriving clap's `Subcommand` / `Parser`
//! (kebab-cased as clap does, or the `name = "…"` of a `#[command]` attribute).
//! Commands built any other way are not seen.

use std::sync::LazyLock;

use regex::Regex;

static LITERAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""([A-Za-z0-9][A-Za-z0-9_:-]*)""#).expect("literal pattern"));
static VARIANT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*([A-Z][A-Za-z0-9]*)\s*(?:[,{(]|$)").expect("variant pattern")
});
static RENAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"#\[(?:command|clap)\(.*\bname\s*=\s*"([^"]+)""#).expect("rename pattern")
});

/// `ClusterUp` → `cluster-up`.
fn kebab(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// (1-based line, command name) in source order, each name once.
pub(super) fn commands(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut push = |n: usize, name: String| {
        if !out.iter().any(|(_, known)| *known == name) {
            out.push((n, name));
        }
    };
    let mut derive_seen = false;
    let mut depth: Option<i64> = None;
    let mut rename: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim();
        if let Some((left, _)) = line.split_once("=>") {
            let left = left.trim();
            if left.starts_with('"') || left.starts_with("Some(\"") {
                for cap in LITERAL.captures_iter(left) {
                    push(n, cap[1].to_string());
                }
            }
        }
        let opens = line.matches('{').count() as i64;
        let closes = line.matches('}').count() as i64;
        if let Some(d) = depth {
            if d == 1 && !trimmed.starts_with("//") {
                if let Some(cap) = RENAME.captures(trimmed) {
                    rename = Some(cap[1].to_string());
                } else if let Some(cap) = VARIANT.captures(line) {
                    push(n, rename.take().unwrap_or_else(|| kebab(&cap[1])));
                }
            }
            let d = d + opens - closes;
            depth = (d > 0).then_some(d);
            continue;
        }
        if trimmed.starts_with("#[") {
            derive_seen |= trimmed.contains("derive(")
                && (trimmed.contains("Subcommand") || trimmed.contains("Parser"));
        } else if derive_seen && (trimmed.starts_with("enum ") || trimmed.starts_with("pub enum "))
        {
            depth = Some(opens - closes).filter(|d| *d > 0);
            derive_seen = false;
        } else if !trimmed.is_empty() && !trimmed.starts_with("//") {
            derive_seen = false;
        }
    }
    out
}
