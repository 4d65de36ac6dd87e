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
    .map_err(|err| {
        let mut e = describe(&err, path.into_inner().filter(|p| !p.is_empty()), text);
        // A value that does not fit is placed at its own text (serde-saphyr may give
        // its key), inside the anchor for one reached through an alias or merge key.
        if is_value_error(&err)
            && let Some(place) = e.field.as_deref().and_then(|f| Places::read(text).get(f))
            && place.defined.line() != 0
        {
            e.line = place.defined.line();
            e.column = place.defined.column();
            if place.is_alias() && !e.message.contains(THROUGH) {
                e.message = format!(
                    "{} ({THROUGH} {}:{})",
                    e.message,
                    place.referenced.line(),
                    place.referenced.column()
                );
            }
        }
        e
    })
}

/// How a message names the alias a value was reached through.
const THROUGH: &str = "in the anchor's text, used through the alias at";

/// An error about the value written at a field (not a missing or unknown key).
fn is_value_error(err: &Error) -> bool {
    matches!(
        original(err),
        Error::SerdeInvalidType { .. }
            | Error::SerdeInvalidValue { .. }
            | Error::SerdeInvalidLength { .. }
            | Error::SerdeUnknownVariant { .. }
            | Error::InvalidScalar { .. }
            | Error::Message { .. }
    )
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
///
/// A quoted scalar is taken whole, quotes included: `"${port:n3}"` holds a `}` that
/// would otherwise end it.
fn scalar_at(text: &str, line: u64, column: u64) -> Option<&str> {
    let rest = text_from(text, line, column)?;
    let end = match rest.chars().next() {
        Some(quote @ ('"' | '\'')) => quoted_end(rest, quote),
        _ => rest.find([',', '}', ']', '#']).unwrap_or(rest.len()),
    };
    Some(rest[..end].trim()).filter(|s| !s.is_empty())
}

/// The byte just past the closing quote of the scalar `rest` starts with (`quote`):
/// `\"` escapes inside double quotes, `''` inside single ones; the end of the line
/// when it is not closed there.
fn quoted_end(rest: &str, quote: char) -> usize {
    let mut chars = rest.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if quote == '"' => {
                chars.next();
            }
            c if c == quote => {
                if quote == '\'' && chars.peek().is_some_and(|(_, n)| *n == '\'') {
                    chars.next();
                    continue;
                }
                return i + c.len_utf8();
            }
            _ => {}
        }
    }
    rest.len()
}

/// One sentence for `err`, with the field it concerns; `path` is where serde was and
/// `text` the YAML read (to quote a scalar that did not parse).
pub fn describe(err: &Error, path: Option<String>, text: &str) -> YamlError {
    let (location, through) = alias_locations(err);
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
    let message = match through {
        Some(at) => format!("{message} ({THROUGH} {}:{})", at.line(), at.column()),
        None => message,
    };
    YamlError {
        line: location.line(),
        column: location.column(),
        field,
        message,
    }
}

/// Where an error is: the failing value's own text — inside the anchor when it was
/// reached through an alias or a merge key — and that alias use.
fn alias_locations(err: &Error) -> (Location, Option<Location>) {
    let mut e = err;
    while let Error::WithSnippet { error, .. } = e {
        e = error;
    }
    let Error::AliasError {
        error, locations, ..
    } = e
    else {
        return (err.location().unwrap_or(Location::UNKNOWN), None);
    };
    // A size limit is about the whole expansion, not a value: where it stopped.
    if matches!(
        original(error),
        Error::Budget { .. }
            | Error::AliasReplayLimitExceeded { .. }
            | Error::AliasExpansionLimitExceeded { .. }
            | Error::AliasReplayStackDepthExceeded { .. }
    ) {
        return (err.location().unwrap_or(Location::UNKNOWN), None);
    }
    let at = original(error)
        .location()
        .filter(|l| *l != Location::UNKNOWN)
        .unwrap_or(locations.defined_location);
    let used = locations.reference_location;
    (
        at,
        (used != Location::UNKNOWN && used != at).then_some(used),
    )
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

/// Where one node of a YAML document is. `defined`: where its text is written (for
/// a node reached through an alias `*name` or a merge key `<<: *name`, inside the
/// `&name` node). `referenced`: where the document uses it — the alias token or the
/// `<<` entry; for a plain node the same as `defined`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub defined: Location,
    pub referenced: Location,
}

impl Place {
    /// Reached through an alias or a merge key.
    pub fn is_alias(&self) -> bool {
        self.referenced != self.defined && self.referenced != Location::UNKNOWN
    }
}

/// Every node of a YAML document by its path (`scenarios.S1.checker.builtin`,
/// `faults.0.after`), with its [`Place`], as serde-saphyr reports it through
/// [`serde_saphyr::Spanned`] (aliases and merge keys resolved by serde-saphyr, not
/// here).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places(std::collections::BTreeMap<String, Place>);

impl Places {
    /// The places of `text`'s nodes. A document that does not read (its errors are
    /// reported by the typed read) has none.
    pub fn read(text: &str) -> Places {
        let mut places = Places::default();
        if let Ok(root) = serde_saphyr::from_str::<serde_saphyr::Spanned<Tree>>(text) {
            places.collect(String::new(), &root);
        }
        places
    }

    fn collect(&mut self, path: String, node: &serde_saphyr::Spanned<Tree>) {
        self.0.insert(
            path.clone(),
            Place {
                defined: node.defined,
                referenced: node.referenced,
            },
        );
        let child = |key: &str| {
            if path.is_empty() {
                key.to_string()
            } else {
                format!("{path}.{key}")
            }
        };
        match &node.value {
            Tree::Leaf => {}
            Tree::Map(entries) => {
                for (key, value) in entries {
                    self.collect(child(key), value);
                }
            }
            Tree::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.collect(child(&i.to_string()), item);
                }
            }
        }
    }

    /// The place at `path`; list items may be written `[0]` or `.0`.
    pub fn get(&self, path: &str) -> Option<Place> {
        self.0.get(&normalize(path)).copied()
    }

    /// The place at `path`, or at the nearest enclosing node that has one, with the
    /// path it was found at.
    pub fn nearest(&self, path: &str) -> Option<(String, Place)> {
        let mut path = normalize(path);
        loop {
            if let Some(place) = self.0.get(&path) {
                return Some((path, *place));
            }
            if path.is_empty() {
                return None;
            }
            path.truncate(path.rfind('.').unwrap_or(0));
        }
    }
}

/// `checkers[0].builtin` → `checkers.0.builtin`.
fn normalize(path: &str) -> String {
    path.replace("].", ".")
        .replace(['[', ']'], ".")
        .trim_end_matches('.')
        .to_string()
}

/// A YAML node's shape, each child with its place.
enum Tree {
    Leaf,
    Map(Vec<(String, serde_saphyr::Spanned<Tree>)>),
    Seq(Vec<serde_saphyr::Spanned<Tree>>),
}

impl<'de> serde::Deserialize<'de> for Tree {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

macro_rules! leaf {
    ($($name:ident: $ty:ty),*) => {
        $(fn $name<E: serde::de::Error>(self, _: $ty) -> Result<Tree, E> {
            Ok(Tree::Leaf)
        })*
    };
}

impl<'de> serde::de::Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any YAML node")
    }

    leaf!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_i128: i128,
          visit_u128: u128, visit_f64: f64, visit_str: &str, visit_bytes: &[u8]);

    fn visit_unit<E: serde::de::Error>(self) -> Result<Tree, E> {
        Ok(Tree::Leaf)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Tree, E> {
        Ok(Tree::Leaf)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, de: D) -> Result<Tree, D::Error> {
        de.deserialize_any(TreeVisitor)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut entries = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            entries.push((key, map.next_value()?));
        }
        Ok(Tree::Map(entries))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Seq(items))
    }
}

/// A mapping key as text (a scalar; a collection as a key has no path).
struct Key(String);

impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a scalar key")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Key, E> {
                Ok(Key("null".into()))
            }
        }
        // As text: `y` is a key, not the YAML 1.1 boolean.
        de.deserialize_str(KeyVisitor)
    }
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

    /// A value is placed where its text is: inside the anchor for one reached through
    /// an alias or a merge key, with the alias use beside it.
    #[test]
    fn places_follow_anchors_aliases_and_merge_keys() {
        let text = "\
scenarios:
  S1: &base
    checker:
      builtin: typo
    y: 1
  S2:
    <<: *base
    z: 2
  S3:
    checker: &chk
      builtin: plain
  S4:
    checker: *chk
";
        let places = Places::read(text);
        let at = |path: &str| {
            let p = places
                .get(path)
                .unwrap_or_else(|| panic!("{path}: {places:?}"));
            (
                (p.defined.line(), p.defined.column()),
                p.is_alias()
                    .then(|| (p.referenced.line(), p.referenced.column())),
            )
        };
        assert_eq!(at("scenarios.S1.checker.builtin"), ((4, 16), None));
        assert_eq!(at("scenarios.S2.checker.builtin"), ((4, 16), Some((7, 9))));
        assert_eq!(at("scenarios.S2.z"), ((8, 8), None));
        // `y` is a key here, not YAML 1.1's `true`.
        assert!(places.get("scenarios.S1.y").is_some(), "{places:?}");
        assert_eq!(at("scenarios.S3.checker.builtin"), ((11, 16), None));
        assert_eq!(
            at("scenarios.S4.checker.builtin"),
            ((11, 16), Some((13, 14)))
        );
        // Nothing at a path the document does not spell; its parent is the nearest.
        assert_eq!(
            places
                .nearest("scenarios.S2.checkers[0].builtin")
                .map(|(p, _)| p),
            Some("scenarios.S2".to_string())
        );
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Spare {
        #[serde(default)]
        #[allow(dead_code)]
        spare: Option<serde::de::IgnoredAny>,
        #[allow(dead_code)]
        items: Vec<serde_saphyr::Spanned<Item>>,
    }

    /// A bad value reached through an alias is placed at its text in the anchor,
    /// naming the alias; the same value written plainly, at its own text.
    #[test]
    fn a_bad_value_through_an_alias_is_placed_in_the_anchor() {
        let text =
            "spare: &bad {name: a, count: lots}\nitems:\n  - name: b\n    count: 1\n  - *bad\n";
        let err = from_str::<Spare>(text).expect_err("lots");
        assert_eq!(err.field.as_deref(), Some("items[1].count"), "{err:?}");
        assert_eq!((err.line, err.column), (1, 30), "{err:?}");
        assert!(
            err.message
                .ends_with("(in the anchor's text, used through the alias at 5:5)"),
            "{err:?}"
        );
        let merged = "spare: &bad {name: a, count: lots}\nitems:\n  - <<: *bad\n    name: c\n";
        let err = from_str::<Spare>(merged).expect_err("lots");
        assert_eq!((err.line, err.column), (1, 30), "{err:?}");
        assert!(err.message.ends_with("alias at 3:9)"), "{err:?}");
        let plain = "items:\n  - name: b\n    count: lots\n";
        let err = from_str::<Spare>(plain).expect_err("lots");
        assert_eq!((err.line, err.column), (3, 12), "{err:?}");
        assert!(!err.message.contains("alias"), "{err:?}");
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
