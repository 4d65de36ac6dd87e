//! Reading YAML with errors a person can act on: where (line, column and the field
//! path, `scenarios.S1.faults[0].after`), what was found and what is allowed there.
//! serde-saphyr's own rendering names the value rather than the field and prints
//! budget breaches as Rust debug output; both are put into words here.

use std::cell::RefCell;

use serde::de::DeserializeOwned;
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Budget, Error, Location};

/// A YAML document that did not deserialize, located in its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// 1-based line and column inside the YAML text (0 when unknown).
    pub line: u64,
    pub column: u64,
    /// The field path of the offending node, when there is one.
    pub field: Option<String>,
    /// What is wrong and what is allowed, in one sentence.
    pub message: String,
}

/// Deserializes `text` as `T`, keeping the path serde was at when it failed.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    let path = RefCell::new(None);
    serde_saphyr::with_deserializer_from_str(text, |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            let at = e.inner().location().unwrap_or(Location::UNKNOWN);
            let before = text_before(text, at.line(), at.column());
            *path.borrow_mut() = Some(render_path(e.path(), before));
            e.into_inner()
        })
    })
    .map_err(|err| describe(&err, path.into_inner().filter(|p| !p.is_empty()), text))
}

/// `scenarios.S1.faults[0].after` from serde's path. serde-saphyr's `Spanned` wrapper
/// reads as a map whose `value` key holds the node; it is not a field of the document.
/// A run spec wraps a whole document, a list item or a `scenarios.<id>` entry that way,
/// so a `value` right there is dropped (a `vars.value` stays).
///
/// A map key that is not a string (a budget tier under `tiers`) is not on serde's
/// path; it is taken from the text: the last tier name written before the error.
fn render_path(path: &serde_path_to_error::Path, before: &str) -> String {
    use serde_path_to_error::Segment;
    let segments: Vec<&Segment> = path.iter().collect();
    let mut out = String::new();
    for (i, segment) in segments.iter().enumerate() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                let wrapper = key == "value"
                    && match i {
                        0 => true,
                        _ => {
                            matches!(segments[i - 1], Segment::Seq { .. })
                                || (i == 2
                                    && matches!(segments[0], Segment::Map { key } if key == "scenarios"))
                        }
                    };
                if wrapper {
                    continue;
                }
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {
                use crate::verdict::Tier;
                let tier = [Tier::Smoke, Tier::Hardening, Tier::Release]
                    .iter()
                    .map(|t| t.as_str())
                    .filter_map(|t| before.rfind(&format!("{t}:")).map(|at| (at, t)))
                    .max();
                if out.ends_with("tiers")
                    && let Some((_, t)) = tier
                {
                    out.push('.');
                    out.push_str(t);
                }
            }
        }
    }
    out
}

/// The error serde-saphyr wraps (with a snippet, or with the alias it came through).
fn original(mut err: &Error) -> &Error {
    while let Error::WithSnippet { error, .. } | Error::AliasError { error, .. } = err {
        err = error;
    }
    err
}

/// `path.field`, unless serde's path already ends at that field (an unknown field's
/// key is on the path; a missing one is not).
fn join(path: Option<&str>, field: &str) -> String {
    match path {
        Some(p) if p == field || p.ends_with(&format!(".{field}")) => p.to_string(),
        Some(p) => format!("{p}.{field}"),
        None => field.to_string(),
    }
}

/// What a scalar type is, in words.
fn scalar_words(ty: &str) -> String {
    match ty {
        "bool" => "`true` or `false`".into(),
        "f32" | "f64" => "a number".into(),
        "char" => "a single character".into(),
        t if t.starts_with('u') => {
            format!("a whole number, 0 or more ({t})")
        }
        t if t.starts_with('i') => format!("a whole number ({t})"),
        t => format!("a value of type {t}"),
    }
}

/// The text of `text` before 1-based `line`, `column` (all of it when unknown).
fn text_before(text: &str, line: u64, column: u64) -> &str {
    let Some(l) = usize::try_from(line).ok().and_then(|l| l.checked_sub(1)) else {
        return text;
    };
    let start: usize = text.split_inclusive('\n').take(l).map(str::len).sum();
    let col = usize::try_from(column).unwrap_or(0).saturating_sub(1);
    let in_line = text[start.min(text.len())..]
        .char_indices()
        .nth(col)
        .map_or(0, |(i, _)| i);
    &text[..(start + in_line).min(text.len())]
}

/// The rest of the line of `text` from 1-based `line`, `column`.
fn text_from(text: &str, line: u64, column: u64) -> Option<&str> {
    let l = text
        .lines()
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let start = l
        .char_indices()
        .nth(usize::try_from(column).ok()?.checked_sub(1)?)?
        .0;
    Some(&l[start..])
}

/// The scalar written at 1-based `line`, `column` of `text` (up to a flow separator,
/// a comment or the end of the line), to say what was found.
fn scalar_at(text: &str, line: u64, column: u64) -> Option<&str> {
    let rest = text_from(text, line, column)?;
    let end = rest.find([',', '}', ']', '#']).unwrap_or(rest.len());
    Some(rest[..end].trim()).filter(|s| !s.is_empty())
}

/// One sentence for `err`, with the field it concerns; `path` is where serde was and
/// `text` the YAML read (to quote a scalar that did not parse).
pub fn describe(err: &Error, path: Option<String>, text: &str) -> YamlError {
    let location = err.location().unwrap_or(Location::UNKNOWN);
    let at = path.as_deref();
    let (field, message) = match original(err) {
        Error::SerdeInvalidType {
            unexpected,
            expected,
            ..
        }
        | Error::SerdeInvalidValue {
            unexpected,
            expected,
            ..
        } => (
            path.clone(),
            format!("expected {expected}, got {unexpected}"),
        ),
        Error::SerdeInvalidLength { len, expected, .. } => (
            path.clone(),
            format!("expected {expected}, got {len} item(s)"),
        ),
        Error::SerdeUnknownVariant {
            variant, expected, ..
        } => (
            path.clone(),
            format!(
                "`{variant}` is not allowed here; use one of: {}",
                expected.join(", ")
            ),
        ),
        Error::SerdeUnknownField {
            field, expected, ..
        } => (
            Some(join(at, field)),
            format!(
                "unknown field `{field}`; allowed here: {}",
                expected.join(", ")
            ),
        ),
        Error::SerdeMissingField { field, .. } => (
            Some(join(at, field)),
            format!("`{field}` is required here and missing"),
        ),
        Error::InvalidScalar { ty, .. } => (
            path.clone(),
            match scalar_at(text, location.line(), location.column()) {
                Some(found) => format!("expected {}, got `{found}`", scalar_words(ty)),
                None => format!("expected {}", scalar_words(ty)),
            },
        ),
        Error::Unexpected { expected, .. } => {
            let wanted = match *expected {
                "string scalar" => "a string",
                "mapping start" => "a mapping (`key: value` entries)",
                "sequence start" => "a list (`- item` entries or `[a, b]`)",
                other => other,
            };
            let found = match text_from(text, location.line(), location.column()) {
                // The location is the key's `:` when nothing follows it.
                Some(t) if t.starts_with(':') || t.trim().is_empty() => {
                    " got nothing (an empty value)".into()
                }
                Some(t) if t.starts_with('{') => " got a mapping".into(),
                Some(t) if t.starts_with('[') || t.starts_with("- ") => " got a list".into(),
                Some(_) => match scalar_at(text, location.line(), location.column()) {
                    Some(s) => format!(" got `{s}`"),
                    None => String::new(),
                },
                None => String::new(),
            };
            (
                path.clone(),
                format!(
                    "expected {wanted}{}",
                    if found.is_empty() {
                        String::new()
                    } else {
                        format!(",{found}")
                    }
                ),
            )
        }
        Error::DuplicateMappingKey { key, .. } => (
            path.clone(),
            match key {
                Some(k) => format!("key `{k}` is written twice in one mapping; keep one"),
                None => "a key is written twice in one mapping; keep one".into(),
            },
        ),
        Error::UnknownAnchor { .. } => (
            path.clone(),
            "an alias `*name` names no anchor `&name` defined before it".into(),
        ),
        Error::Budget { breach, .. } => (None, budget_words(breach)),
        Error::AliasReplayLimitExceeded {
            max_total_replayed_events,
            ..
        } => (
            None,
            aliases_expanded(&format!(
                "more than {max_total_replayed_events} YAML events replayed through aliases"
            )),
        ),
        Error::AliasExpansionLimitExceeded {
            max_expansions_per_anchor,
            ..
        } => (
            None,
            aliases_expanded(&format!(
                "one anchor used through more than {max_expansions_per_anchor} aliases"
            )),
        ),
        Error::AliasReplayStackDepthExceeded { max_depth, .. } => (
            None,
            aliases_expanded(&format!("aliases nested more than {max_depth} deep")),
        ),
        Error::MultipleDocuments { .. } => (
            None,
            "a second YAML document follows a `---` line; a run spec is one document: remove \
             the marker or merge the two"
                .into(),
        ),
        Error::Eof { .. } => (
            path.clone(),
            "the YAML ends before a value is written here (an empty file or block holds no \
             run spec)"
                .into(),
        ),
        Error::Message { msg, .. } => (path.clone(), msg.clone()),
        other => (path.clone(), first_line(other)),
    };
    YamlError {
        line: location.line(),
        column: location.column(),
        field,
        message,
    }
}

/// serde-saphyr's own one-line message, its `at line …` tail cut (the location is
/// reported on its own).
fn first_line(err: &Error) -> String {
    let rendered = err.without_snippet().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    first
        .rfind(" at line ")
        .map_or(first, |at| &first[..at])
        .to_string()
}

/// The sentence for a YAML document refused for its size once aliases are expanded.
fn aliases_expanded(limit: &str) -> String {
    format!(
        "refused: the YAML grows past a safety limit ({limit}) once its aliases are \
         expanded — every `*name` stands for a full copy of the `&name` node, so aliases \
         of aliases multiply (a \"billion laughs\"); write the repeated part out, or nest \
         fewer aliases"
    )
}

fn budget_words(breach: &BudgetBreach) -> String {
    let b = Budget::default();
    let limit = match breach {
        BudgetBreach::Events { .. } => format!("more than {} YAML events", b.max_events),
        BudgetBreach::Aliases { .. } => format!("more than {} aliases", b.max_aliases),
        BudgetBreach::Anchors { .. } => format!("more than {} anchors", b.max_anchors),
        BudgetBreach::Depth { .. } => format!("nesting deeper than {}", b.max_depth),
        BudgetBreach::Nodes { .. } => format!("more than {} nodes", b.max_nodes),
        BudgetBreach::ScalarBytes { .. } => format!(
            "more than {} bytes of text in its values",
            b.max_total_scalar_bytes
        ),
        BudgetBreach::AliasAnchorRatio { aliases, anchors } => {
            format!("{aliases} aliases for {anchors} anchors")
        }
        BudgetBreach::RecordedAnchorEvents { .. } | BudgetBreach::RecordedAnchorBytes { .. } => {
            "too much held for anchors".into()
        }
        BudgetBreach::Documents { .. } => {
            return format!(
                "more than {} YAML documents in one file; a run spec is one document",
                b.max_documents
            );
        }
        _ => "a size limit".into(),
    };
    aliases_expanded(&limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        items: Vec<serde_saphyr::Spanned<Item>>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Item {
        name: String,
        count: u32,
    }

    #[test]
    fn errors_name_the_field_path_not_the_value() {
        let doc = from_str::<Doc>("items:\n  - name: a\n    count: 2\n").expect("valid");
        assert_eq!(
            (doc.items[0].value.name.as_str(), doc.items[0].value.count),
            ("a", 2)
        );
        let err = from_str::<Doc>("items:\n  - name: a\n    count: true\n").expect_err("bool");
        assert_eq!(err.field.as_deref(), Some("items[0].count"), "{err:?}");
        assert!(err.message.ends_with("got `true`"), "{err:?}");
        assert_eq!(err.line, 3);
        let err = from_str::<Doc>("items:\n  - name: a\n    cuont: 1\n").expect_err("typo");
        assert_eq!(err.field.as_deref(), Some("items[0].cuont"), "{err:?}");
        assert!(err.message.contains("allowed here: name, count"), "{err:?}");
        let err = from_str::<Doc>("items:\n  - name: a\n").expect_err("missing");
        assert_eq!(err.field.as_deref(), Some("items[0].count"), "{err:?}");
    }

    /// Ten levels of ten aliases each: refused in words, never as a debug dump.
    #[test]
    fn an_alias_bomb_is_refused_in_words() {
        let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 1..10 {
            let refs = vec![format!("*a{}", level - 1); 10].join(", ");
            text.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
        }
        let err = from_str::<std::collections::BTreeMap<String, serde::de::IgnoredAny>>(&text)
            .expect_err("bomb");
        assert!(
            err.message.contains("once its aliases are expanded")
                && err.message.contains("(more than "),
            "{err:?}"
        );
        assert!(!err.message.contains('{'), "{err:?}");
        assert!(err.line > 1, "{err:?}");
    }
}
