//! One op as a checker folds it, whichever way it was read: borrowed from the line
//! the streaming reader is on (values as raw JSON text), or from an [`Op`] of a
//! parsed [`History`] (values as JSON trees). Checkers that fold ops one by one
//! ([`OpSink`]) judge both alike, so the streamed check and the `History` check are
//! one code.

use super::history::Op;
use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// What takes ops one at a time, in history order.
pub trait OpSink {
    fn op(&mut self, op: &OpView<'_>);

    /// The one member of each op's input object this sink reads, if any: a
    /// reader that checks the input's text anyway notes it on the way
    /// ([`OpView::input_member`]), so the sink need not look for it again.
    fn input_field(&self) -> Option<&str> {
        None
    }
}

/// One client operation, borrowed (see [`Op`] for the fields).
#[derive(Debug, Clone, Copy)]
pub struct OpView<'a> {
    pub op_id: &'a str,
    pub process: &'a str,
    pub invoke_ts: u64,
    pub complete_ts: Option<u64>,
    pub op_type: &'a str,
    pub key: Option<&'a str>,
    pub input: Val<'a>,
    /// A member of `input` the reader already found, by name (its value; none:
    /// the input object has no such member). `None`: not looked for, then
    /// `input.field(name)` finds it.
    pub input_member: Option<(&'a str, Option<Val<'a>>)>,
    pub output: Val<'a>,
    pub error: Option<&'a str>,
    pub timeout: bool,
    pub node: Option<&'a str>,
    pub fault_epoch: Option<u64>,
}

impl<'a> OpView<'a> {
    /// Acknowledged: completed, no error, not timed out.
    pub fn is_acked(&self) -> bool {
        !self.timeout && self.error.is_none() && self.complete_ts.is_some()
    }

    /// Its effect is unknown: timed out, or still in flight when recording stopped.
    pub fn is_indeterminate(&self) -> bool {
        self.timeout || (self.complete_ts.is_none() && self.error.is_none())
    }

    /// Definitely did not take effect: completed with an error.
    pub fn is_failed(&self) -> bool {
        !self.timeout && self.error.is_some()
    }

    /// `input`'s member `name` ([`Val::field`]), found by the reader if it was.
    pub fn input_field(&self, name: &str) -> Option<Val<'a>> {
        match self.input_member {
            Some((found, value)) if found == name => value,
            _ => self.input.field(name),
        }
    }

    /// The owned op.
    pub fn to_op(&self) -> Op {
        Op {
            op_id: self.op_id.into(),
            process: self.process.into(),
            invoke_ts: self.invoke_ts,
            complete_ts: self.complete_ts,
            op_type: self.op_type.into(),
            key: self.key.map(Into::into),
            input: self.input.to_value(),
            output: self.output.to_value(),
            error: self.error.map(str::to_string),
            timeout: self.timeout,
            node: self.node.map(str::to_string),
            fault_epoch: self.fault_epoch,
        }
    }
}

impl Op {
    /// This op, borrowed.
    pub fn view(&self) -> OpView<'_> {
        OpView {
            op_id: &self.op_id,
            process: &self.process,
            invoke_ts: self.invoke_ts,
            complete_ts: self.complete_ts,
            op_type: &self.op_type,
            key: self.key.as_deref(),
            input: Val::Tree(&self.input),
            input_member: None,
            output: Val::Tree(&self.output),
            error: self.error.as_deref(),
            timeout: self.timeout,
            node: self.node.as_deref(),
            fault_epoch: self.fault_epoch,
        }
    }
}

/// A JSON value: raw text the reader checked is JSON, or a parsed tree.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    Raw(&'a RawValue),
    /// JSON text cut out of a line by a reader that checked it is one valid value
    /// (no whitespace around it), as [`Val::Raw`] without the `RawValue` wrapper.
    Json(&'a str),
    /// As [`Val::Json`], a string the reader found has no escape: its text is
    /// what lies between the quotes, taken without looking again.
    Str(&'a str),
    Tree(&'a Value),
}

impl<'a> Val<'a> {
    /// The JSON text of a raw value (`None`: a tree).
    fn json(self) -> Option<&'a str> {
        match self {
            Val::Raw(raw) => Some(raw.get()),
            Val::Json(text) | Val::Str(text) => Some(text),
            Val::Tree(_) => None,
        }
    }

    /// As a JSON tree. Raw text was checked by the parser that cut it out, so it
    /// always parses; were it not to, it reads as null.
    pub fn to_value(self) -> Value {
        match self {
            Val::Tree(v) => v.clone(),
            raw => serde_json::from_str(raw.json().unwrap_or("null")).unwrap_or(Value::Null),
        }
    }

    /// Printed as `serde_json` prints the value (compact, object keys sorted): two
    /// values print alike exactly when they are equal. Raw text already in that
    /// form (a plain string, an integer, a literal) is not parsed.
    pub fn canonical(self) -> Cow<'a, str> {
        match self {
            Val::Tree(v) => Cow::Owned(v.to_string()),
            raw => match raw.json() {
                Some(text) if is_canonical(text) => Cow::Borrowed(text),
                _ => Cow::Owned(raw.to_value().to_string()),
            },
        }
    }

    /// The JSON text as read (raw), or printed (a tree): [`printed`] makes it
    /// canonical when it is shown.
    pub fn as_read(self) -> Cow<'a, str> {
        match self {
            Val::Tree(v) => Cow::Owned(v.to_string()),
            raw => Cow::Borrowed(raw.json().unwrap_or_default()),
        }
    }

    /// A string's text, anything else printed ([`Val::canonical`]).
    pub fn text(self) -> Cow<'a, str> {
        match (self, self.json()) {
            (Val::Tree(Value::String(s)), _) => Cow::Borrowed(s),
            (Val::Str(quoted), _) => Cow::Borrowed(
                quoted
                    .strip_prefix('"')
                    .and_then(|q| q.strip_suffix('"'))
                    .unwrap_or_default(),
            ),
            (_, Some(quoted)) if quoted.starts_with('"') => {
                let inner = quoted.get(1..quoted.len() - 1).unwrap_or_default();
                // Checked JSON: the text stops short of its end only at an escape.
                if plain_run(inner.as_bytes()) < inner.len() {
                    Cow::Owned(serde_json::from_str::<String>(quoted).unwrap_or_default())
                } else {
                    Cow::Borrowed(inner)
                }
            }
            _ => self.canonical(),
        }
    }

    pub fn is_null(self) -> bool {
        match self {
            Val::Tree(v) => v.is_null(),
            raw => raw.json() == Some("null"),
        }
    }

    /// The number, as `Value::as_f64` reads it (anything else: `None`).
    pub fn as_f64(self) -> Option<f64> {
        match self {
            Val::Tree(v) => v.as_f64(),
            raw => {
                let text = raw.json()?;
                match text.as_bytes().first() {
                    Some(b'-' | b'0'..=b'9') => {
                        small_integer(text).or_else(|| serde_json::from_str::<f64>(text).ok())
                    }
                    _ => None,
                }
            }
        }
    }

    /// An object's `name` field, as `Value::get` finds it (the last of repeats).
    pub fn field(self, name: &str) -> Option<Val<'a>> {
        match self {
            Val::Tree(v) => v.get(name).map(Val::Tree),
            raw => {
                let text = raw.json().filter(|t| t.starts_with('{'))?;
                match pick(text, name) {
                    Some(found) => found.map(Val::Json),
                    // A key with an escape: serde_json reads the keys as text.
                    None => {
                        let mut de = serde_json::Deserializer::from_str(text);
                        de.deserialize_map(Pick(name))
                            .ok()
                            .flatten()
                            .map(|v| Val::Json(v.get()))
                    }
                }
            }
        }
    }

    /// An array's items; null is none; anything else is one item.
    pub fn items(self) -> Vec<Val<'a>> {
        let mut items = Vec::new();
        self.each_item(|item| items.push(item));
        items
    }

    /// [`Val::items`] handed to `f` one by one (no list built).
    pub fn each_item(self, mut f: impl FnMut(Val<'a>)) {
        match self {
            Val::Tree(Value::Null) => {}
            Val::Tree(Value::Array(items)) => items.iter().map(Val::Tree).for_each(f),
            Val::Tree(_) => f(self),
            raw => match raw.json() {
                Some("null") => {}
                Some(text) if text.starts_with('[') => {
                    match serde_json::from_str::<Vec<&'a RawValue>>(text) {
                        Ok(items) => items.into_iter().for_each(|v| f(Val::Json(v.get()))),
                        Err(_) => f(self),
                    }
                }
                _ => f(self),
            },
        }
    }
}

/// An integer of at most 15 digits (exact in an `f64`) read by hand, as
/// `serde_json` reads it (`-0` is `-0.0`); anything else `None`.
fn small_integer(text: &str) -> Option<f64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let d = digits.as_bytes();
    if d.is_empty() || d.len() > 15 || (d[0] == b'0' && d.len() > 1) {
        return None;
    }
    let mut v = 0u64;
    for &c in d {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(c - b'0');
    }
    let v = v as f64;
    Some(if negative { -v } else { v })
}

/// The last `name` member of the JSON object `json` (valid JSON text), found by
/// hand: `Some(None)` when there is none, `None` when a key has an escape (then
/// serde_json must read the keys).
fn pick<'a>(json: &'a str, name: &str) -> Option<Option<&'a str>> {
    let b = json.as_bytes();
    let mut found = None;
    let mut i = skip_ws(b, 1);
    if b.get(i) == Some(&b'}') {
        return Some(None);
    }
    while b.get(i) == Some(&b'"') {
        let (end, escaped) = string_end(b, i + 1);
        if escaped {
            return None;
        }
        let key = b.get(i + 1..end - 1).unwrap_or_default();
        i = skip_ws(b, end);
        // The colon.
        i = skip_ws(b, i + 1);
        let start = i;
        i = value_end(b, i);
        if key == name.as_bytes() {
            found = json.get(start..i);
        }
        i = skip_ws(b, i);
        // A comma, or the closing brace.
        if b.get(i) != Some(&b',') {
            break;
        }
        i = skip_ws(b, i + 1);
    }
    Some(found)
}

/// Just past the JSON whitespace at `i`.
pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Just past the closing quote of the string whose text starts at `i`, and
/// whether it has an escape.
fn string_end(b: &[u8], mut i: usize) -> (usize, bool) {
    let mut escaped = false;
    loop {
        i += plain_run(b.get(i..).unwrap_or_default());
        match b.get(i) {
            Some(b'"') => return (i + 1, escaped),
            Some(b'\\') => {
                escaped = true;
                i += 2;
            }
            Some(_) => i += 1,
            None => return (b.len(), escaped),
        }
    }
}

/// How many of `b`'s first bytes are plain string text: not a quote, a
/// backslash or a control character. Eight bytes at a time (each test below
/// sets the top bit of every byte that matches, and the lowest set bit is the
/// first match; higher ones may be false, which the count never reads).
pub(super) fn plain_run(b: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut n = 0;
    for chunk in b.chunks_exact(8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let hits = zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\')))
            | x.wrapping_sub(ONES * 0x20) & !x & HIGH;
        if hits != 0 {
            return n + (hits.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + b[n..]
        .iter()
        .take_while(|c| !matches!(c, b'"' | b'\\' | 0..0x20))
        .count()
}

/// Just past the JSON value (valid text) that starts at `i`.
fn value_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                i = string_end(b, i + 1).0;
                if depth == 0 {
                    return i;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return i,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b',' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Raw JSON text `serde_json` would print the same: `true`, `false`, `null`, an
/// integer of at most 18 digits (not `-0`, which reads as a float), a string with
/// no escape.
fn is_canonical(raw: &str) -> bool {
    let b = raw.as_bytes();
    match b.first() {
        Some(b'"') => !b.contains(&b'\\'),
        Some(b't' | b'f' | b'n') => true,
        Some(b'-') => {
            b.len() > 1 && b.len() <= 19 && b[1] != b'0' && b[1..].iter().all(u8::is_ascii_digit)
        }
        Some(b'0'..=b'9') => {
            b.len() <= 18 && (b.len() == 1 || b[0] != b'0') && b.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

/// Finds one field of a JSON object without building the object.
struct Pick<'n>(&'n str);

impl<'de> Visitor<'de> for Pick<'_> {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            if key.0 == self.0 {
                found = Some(map.next_value::<&'de RawValue>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// A key, borrowed when it has no escape.
pub struct Key<'de>(pub Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// JSON text printed as [`Val::canonical`] prints it (text that is not JSON, which
/// the readers never hand over, as it is).
pub fn printed(json: &str) -> String {
    match serde_json::from_str::<Value>(json) {
        Ok(v) => v.to_string(),
        Err(_) => json.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Eight bytes at a time counts what a byte-by-byte look counts, for
        /// every byte value (UTF-8's high bytes, controls, quotes, backslashes)
        /// at every place in and past a word.
        #[test]
        fn plain_run_counts_what_a_byte_loop_counts(
            b in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x20, 0x20u8..=0xff, Just(b'a')],
                0..40,
            ),
        ) {
            let want = b.iter().take_while(|c| !matches!(c, b'"' | b'\\' | 0..0x20)).count();
            prop_assert_eq!(plain_run(&b), want);
        }
    }

    /// Members' names and values of every kind, escapes and repeats among them.
    const NAMES: &[&str] = &["version", "v", "versio\\u006e", "idempotency_key", "", "é"];
    const VALUES: &[&str] = &[
        "1",
        "-0",
        "2.5",
        "1e3",
        "null",
        "\"x\"",
        "\"a\\\"}b\"",
        "[1,{\"version\":2}]",
        "{\"version\":3}",
        "true",
        "123456789012345",
        "1234567890123456",
    ];

    proptest! {
        /// A raw object's field is found by hand as serde_json finds it in the
        /// parsed value (the last of repeats; a name with an escape read as text),
        /// and a raw number is read as `Value::as_f64` reads it.
        #[test]
        fn a_raw_value_reads_as_its_parsed_tree(
            members in prop::collection::vec((0usize..6, 0usize..12, 0usize..3), 0..6),
        ) {
            let sp = [" ", "", "\t"];
            let json = format!(
                "{{{}}}",
                members
                    .iter()
                    .map(|(n, v, s)| format!("{}\"{}\"{}:{}{}", sp[*s], NAMES[*n], sp[*s], sp[*s], VALUES[*v]))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            let tree: Value = serde_json::from_str(&json).expect("valid JSON");
            for name in ["version", "idempotency_key", "é", "x"] {
                let raw = Val::Json(&json).field(name).map(|v| v.to_value());
                prop_assert_eq!(raw, tree.get(name).cloned(), "{} in {}", name, json);
            }
            for v in VALUES {
                let parsed: Value = serde_json::from_str(v).expect("valid JSON");
                prop_assert_eq!(Val::Json(v).as_f64().map(f64::to_bits), parsed.as_f64().map(f64::to_bits), "{}", v);
            }
        }
    }
}
