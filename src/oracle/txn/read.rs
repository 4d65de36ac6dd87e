//! A txn-jsonl history read line by line straight into a [`Store`]: no
//! whole-file text, no JSON value per record. Each line is parsed by a typed
//! serde visitor into a scratch record that is reused from line to line; the
//! strings of the common case (integers, plain strings) are never allocated.
//!
//! A line the fast reader does not take as it is — an error, or a form it does
//! not handle (a float, a boolean, a nested value, a repeated field) — is read
//! again the way `history::parse_txn_jsonl` reads it, as a JSON value: so every
//! error names the file, the line and the field exactly as that reader does, and
//! every unusual line means what it meant there.

use super::history::{Status, txn_op};
use super::store::{
    Builder, Built, FxMap, Mode, Raw, RawF, RawMops, RawVal, canonical_u64, push_op,
};
use crate::oracle::history::HistoryError;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::io::BufRead;

/// Read a txn-jsonl history from `reader` for `mode`'s checker. `Err`: why it
/// cannot be read (I/O, not UTF-8, a bad line), naming `source`, the line and
/// the field.
pub fn read_txn_jsonl(source: &str, mut reader: impl BufRead, mode: Mode) -> Result<Built, String> {
    let mut builder = Builder::new(mode);
    let mut seen = Seen::default();
    let mut scratch = Scratch::default();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut line = 0usize;
    let mut offset = 0usize;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| format!("{}: {e}", crate::sanitize::line(source)))?;
        if n == 0 {
            break;
        }
        line += 1;
        // No newline: the file's last line (a torn one is an error).
        let last = buf.last() != Some(&b'\n');
        let mut end = if last { buf.len() } else { buf.len() - 1 };
        while end > 0 && buf[end - 1] == b'\r' {
            end -= 1;
        }
        let text = std::str::from_utf8(&buf[..end]).map_err(|e| {
            let at = offset + e.valid_up_to();
            format!(
                "{}: not UTF-8 at line {line}, column {} (byte {at}); a history and a dump \
                 are UTF-8 text",
                crate::sanitize::line(source),
                e.valid_up_to() + 1
            )
        })?;
        offset += n;
        if text.trim().is_empty() {
            continue;
        }
        scratch.reset();
        let parsed = {
            let mut de = serde_json::Deserializer::from_slice(text.as_bytes());
            (&mut scratch)
                .deserialize(&mut de)
                .and_then(|()| de.end())
                .is_ok()
        };
        match scratch.head().filter(|_| parsed) {
            Some((status, complete)) => {
                if !seen.insert(&scratch.id) {
                    return Err(repeated(source, line, &scratch.id));
                }
                builder.push(
                    &scratch.id,
                    &scratch.process,
                    scratch.invoke.unwrap_or_default(),
                    complete,
                    status,
                    &scratch,
                );
            }
            None => slowly(source, line, text, last, &mut builder, &mut seen)?,
        }
    }
    Ok(builder.finish())
}

/// The line read as `parse_txn_jsonl` reads it.
fn slowly(
    source: &str,
    line: usize,
    text: &str,
    last: bool,
    builder: &mut Builder,
    seen: &mut Seen,
) -> Result<(), String> {
    let err = |message: String| {
        HistoryError::Line {
            source_name: source.to_string(),
            line,
            message,
        }
        .to_string()
    };
    let map = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Err(err("expected a JSON object".into())),
        Err(e) if last => {
            return Err(err(format!(
                "truncated final line (no trailing newline, invalid JSON: {e})"
            )));
        }
        Err(e) => return Err(err(format!("invalid JSON: {e}"))),
    };
    let op = txn_op(source, line, &map).map_err(|e| e.to_string())?;
    if !seen.insert(&op.op_id) {
        return Err(repeated(source, line, &op.op_id));
    }
    push_op(builder, source, &op)
}

fn repeated(source: &str, line: usize, id: &str) -> String {
    HistoryError::field(
        source,
        line,
        "op_id",
        format!("op_id {id} repeated (a duplicate response)"),
    )
    .to_string()
}

/// The op ids read so far (a repeated one is a duplicate response).
#[derive(Default)]
struct Seen {
    ints: FxMap<u64, ()>,
    texts: FxMap<Box<str>, ()>,
}

impl Seen {
    /// `false` if `id` was seen before.
    fn insert(&mut self, id: &str) -> bool {
        match canonical_u64(id) {
            Some(v) => self.ints.insert(v, ()).is_none(),
            None if self.texts.contains_key(id) => false,
            None => {
                self.texts.insert(id.into(), ());
                true
            }
        }
    }
}

/// A scalar in the scratch record: an integer, or a string in its text.
#[derive(Debug, Clone, Copy)]
enum SRaw {
    Int(u64),
    Str(usize, usize),
}

#[derive(Debug, Clone, Copy)]
enum SVal {
    Scalar(SRaw),
    Nil,
    List(usize, usize),
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Type {
    #[default]
    Absent,
    Ok,
    Info,
    Fail,
    Other,
}

/// One line's record, reused from line to line.
#[derive(Default)]
struct Scratch {
    id: String,
    has_id: bool,
    /// Empty: none recorded.
    process: String,
    invoke: Option<u64>,
    /// `Some(None)`: null.
    complete: Option<Option<u64>>,
    kind: Type,
    /// How many `value` fields (more than one: read slowly, the last one counts).
    values: u32,
    text: String,
    mops: Vec<(RawF, SRaw, SVal)>,
    elems: Vec<SRaw>,
}

impl Scratch {
    fn reset(&mut self) {
        self.id.clear();
        self.has_id = false;
        self.process.clear();
        self.invoke = None;
        self.complete = None;
        self.kind = Type::Absent;
        self.values = 0;
        self.text.clear();
        self.mops.clear();
        self.elems.clear();
    }

    /// The txn's status and completion, if the record is one the fast reader
    /// takes as it is (else it is read slowly: it may be an error).
    fn head(&self) -> Option<(Status, Option<u64>)> {
        if !self.has_id || self.invoke.is_none() || self.values != 1 {
            return None;
        }
        let complete = self.complete?;
        match (self.kind, complete) {
            (Type::Ok, Some(_)) => Some((Status::Ok, complete)),
            (Type::Fail, Some(_)) => Some((Status::Fail, complete)),
            (Type::Info, _) => Some((Status::Info, None)),
            _ => None,
        }
    }

    fn raw(&self, r: SRaw) -> Raw<'_> {
        match r {
            SRaw::Int(v) => Raw::Int(v),
            SRaw::Str(a, b) => Raw::Str(Cow::Borrowed(self.text.get(a..b).unwrap_or_default())),
        }
    }
}

impl RawMops for Scratch {
    fn count(&self) -> usize {
        self.mops.len()
    }

    fn mop(&self, i: usize) -> (RawF, Raw<'_>, RawVal<'_>) {
        let (f, key, value) = self.mops[i];
        let value = match value {
            SVal::Scalar(v) => RawVal::Scalar(self.raw(v)),
            SVal::Nil => RawVal::Nil,
            SVal::List(start, len) => RawVal::List { start, len },
        };
        (f, self.raw(key), value)
    }

    fn elem(&self, i: usize) -> Raw<'_> {
        self.raw(self.elems[i])
    }
}

fn fallback<E: de::Error>() -> E {
    E::custom("read slowly")
}

impl<'de> DeserializeSeed<'de> for &mut Scratch {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(Line(self))
    }
}

struct Line<'s>(&'s mut Scratch);

enum Field {
    OpId,
    Process,
    InvokeTs,
    CompleteTs,
    Type,
    Value,
    Other,
}

impl<'de> de::Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "op_id" => Field::OpId,
                    "process" => Field::Process,
                    "invoke_ts" => Field::InvokeTs,
                    "complete_ts" => Field::CompleteTs,
                    "type" => Field::Type,
                    "value" => Field::Value,
                    _ => Field::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

impl<'de> Visitor<'de> for Line<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a txn object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let s = self.0;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::OpId => {
                    s.id.clear();
                    map.next_value_seed(Id {
                        out: &mut s.id,
                        null: false,
                    })?;
                    s.has_id = true;
                }
                Field::Process => {
                    s.process.clear();
                    map.next_value_seed(Id {
                        out: &mut s.process,
                        null: true,
                    })?;
                }
                Field::InvokeTs => s.invoke = Some(map.next_value::<u64>()?),
                Field::CompleteTs => s.complete = Some(map.next_value::<Option<u64>>()?),
                Field::Type => s.kind = map.next_value_seed(TypeSeed)?,
                Field::Value => {
                    s.values += 1;
                    s.text.clear();
                    s.mops.clear();
                    s.elems.clear();
                    map.next_value_seed(Mops(&mut *s))?;
                }
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// An op id or process: a string or an integer (null too, for a process).
struct Id<'a> {
    out: &'a mut String,
    null: bool,
}

impl<'de> DeserializeSeed<'de> for Id<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Visitor<'_> for Id<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or an integer")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.out.push_str(v);
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        write!(self.out, "{v}").map_err(|_| fallback())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        write!(self.out, "{v}").map_err(|_| fallback())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if self.null { Ok(()) } else { Err(fallback()) }
    }
}

struct TypeSeed;

impl<'de> DeserializeSeed<'de> for TypeSeed {
    type Value = Type;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Type, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for TypeSeed {
    type Value = Type;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("ok, info or fail")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Type, E> {
        Ok(match v {
            "ok" => Type::Ok,
            "info" => Type::Info,
            "fail" => Type::Fail,
            _ => Type::Other,
        })
    }
}

/// The micro-op list.
struct Mops<'a>(&'a mut Scratch);

impl<'de> DeserializeSeed<'de> for Mops<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Mops<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of micro-ops")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(MopSeed(&mut *self.0))?.is_some() {}
        Ok(())
    }
}

/// One micro-op: `[f, k, v]`.
struct MopSeed<'a>(&'a mut Scratch);

impl<'de> DeserializeSeed<'de> for MopSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for MopSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("[f, k, v]")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let s = self.0;
        let f = seq.next_element_seed(FSeed)?.ok_or_else(fallback)?;
        let key = seq
            .next_element_seed(Scalar(&mut s.text))?
            .ok_or_else(fallback)?;
        let value = match f {
            RawF::Append | RawF::Write => SVal::Scalar(
                seq.next_element_seed(Scalar(&mut s.text))?
                    .ok_or_else(fallback)?,
            ),
            RawF::Read => seq.next_element_seed(Read(&mut *s))?.ok_or_else(fallback)?,
        };
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(fallback());
        }
        s.mops.push((f, key, value));
        Ok(())
    }
}

struct FSeed;

impl<'de> DeserializeSeed<'de> for FSeed {
    type Value = RawF;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawF, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for FSeed {
    type Value = RawF;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("append, r or w")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawF, E> {
        match v {
            "append" => Ok(RawF::Append),
            "w" | "write" => Ok(RawF::Write),
            "r" | "read" => Ok(RawF::Read),
            _ => Err(fallback()),
        }
    }
}

/// A key or a written value: a non-negative integer or a string (anything else
/// is read slowly).
struct Scalar<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for Scalar<'_> {
    type Value = SRaw;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<SRaw, D::Error> {
        d.deserialize_any(self)
    }
}

impl Visitor<'_> for Scalar<'_> {
    type Value = SRaw;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an integer or a string")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<SRaw, E> {
        Ok(SRaw::Int(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<SRaw, E> {
        let start = self.0.len();
        self.0.push_str(v);
        Ok(SRaw::Str(start, self.0.len()))
    }
}

/// What a read returned: nil, a scalar, or a list of scalars.
struct Read<'a>(&'a mut Scratch);

impl<'de> DeserializeSeed<'de> for Read<'_> {
    type Value = SVal;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<SVal, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Read<'_> {
    type Value = SVal;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("nil, a value or a list")
    }
    fn visit_unit<E: de::Error>(self) -> Result<SVal, E> {
        Ok(SVal::Nil)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<SVal, E> {
        Ok(SVal::Scalar(SRaw::Int(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<SVal, E> {
        Scalar(&mut self.0.text).visit_str(v).map(SVal::Scalar)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SVal, A::Error> {
        let s = self.0;
        let start = s.elems.len();
        while let Some(v) = seq.next_element_seed(Scalar(&mut s.text))? {
            s.elems.push(v);
        }
        Ok(SVal::List(start, s.elems.len() - start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::txn::history::parse_txn_jsonl;
    use crate::oracle::txn::store::from_history;

    /// The fast reader and the generic one (`parse_txn_jsonl`, then the store
    /// built from its history) fill the same store, or fail with the same error.
    fn same(text: &str, mode: Mode) {
        let fast = read_txn_jsonl("h.jsonl", text.as_bytes(), mode);
        let slow = parse_txn_jsonl("h.jsonl", text)
            .map_err(|e| e.to_string())
            .and_then(|h| from_history(&h, mode));
        match (fast, slow) {
            (Ok((a, ra)), Ok((b, rb))) => {
                assert_eq!(ra, rb, "{text}");
                assert_eq!(a.txns, b.txns, "{text}");
                assert_eq!(a.mops, b.mops, "{text}");
                assert_eq!(a.elems, b.elems, "{text}");
                assert_eq!(a.produced, b.produced);
                assert_eq!(a.without_process, b.without_process);
                for i in 0..a.len() {
                    assert_eq!(a.id(i), b.id(i));
                    assert_eq!(a.process(i), b.process(i));
                    let texts = |s: &super::super::store::Store| -> Vec<String> {
                        s.mops(i).iter().map(|m| s.mop_text(m)).collect()
                    };
                    assert_eq!(texts(&a), texts(&b), "{text}");
                }
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{text}"),
            (a, b) => panic!(
                "fast {:?} vs generic {:?} on {text}",
                a.map(|x| x.1),
                b.map(|x| x.1)
            ),
        }
    }

    #[test]
    fn the_fast_reader_reads_as_the_generic_one() {
        let lines = [
            r#"{"op_id": 1, "process": 0, "invoke_ts": 1, "complete_ts": 2, "type": "ok", "value": [["append", "x", 1], ["r", "x", [1]]]}"#,
            r#"{"op_id": "a", "invoke_ts": 3, "complete_ts": null, "type": "info", "value": [["append", 5, "5"], ["r", 5, null]]}"#,
            r#"{"op_id": -2, "process": null, "invoke_ts": 3, "complete_ts": 9, "type": "fail", "error": "x", "value": [["r", "y", [1, 2]]]}"#,
            r#"{"value": [["r", "y", ["a\"b", 7, 1.5, true, null, [1], {"k": 1}]]], "type": "ok", "complete_ts": 5, "invoke_ts": 4, "process": "p", "op_id": 3}"#,
            r#"{"op_id": 4, "process": 1, "invoke_ts": 4, "complete_ts": 5, "type": "info", "value": [["r", "z", [1, 2]], ["read", "z", 3], ["r", "z", {"a": 1}]]}"#,
            r#"{"op_id": 5, "process": 1, "invoke_ts": 4, "complete_ts": 5, "type": "ok", "value": [["write", 1.5, -1], ["w", true, 2]]}"#,
            r#"{"op_id": 6, "process": 1, "invoke_ts": 4, "complete_ts": 5, "type": "ok", "value": [["r", "q", 3]]}"#,
            r#"{"op_id": 7, "process": 1, "invoke_ts": 4, "complete_ts": 5, "type": "ok", "value": [["r", "q", {"a": [1]}]]}"#,
            r#"{"op_id": 8, "process": 1, "invoke_ts": 4, "complete_ts": 5, "type": "ok", "value": [], "value": [["r", "q", [1]]]}"#,
        ];
        for mode in [Mode::ListAppend, Mode::RwRegister] {
            for a in &lines {
                for b in &lines {
                    same(&format!("{a}\n{b}\n"), mode);
                }
            }
        }
        let bad = [
            r#"{"op_id": 1.5, "invoke_ts": 1, "complete_ts": 2, "type": "ok", "value": []}"#,
            r#"{"op_id": 1, "process": [], "invoke_ts": 1, "complete_ts": 2, "type": "ok", "value": []}"#,
            r#"{"op_id": 1, "invoke_ts": -1, "complete_ts": 2, "type": "ok", "value": []}"#,
            r#"{"op_id": 1, "invoke_ts": 1, "type": "ok", "value": []}"#,
            r#"{"op_id": 1, "invoke_ts": 1, "complete_ts": 2, "type": "done", "value": []}"#,
            r#"{"op_id": 1, "invoke_ts": 1, "complete_ts": 2, "type": 1, "value": []}"#,
            r#"{"op_id": 1, "invoke_ts": 1, "complete_ts": 2, "type": "ok"}"#,
            r#"{"op_id": 1, "invoke_ts": 1, "complete_ts": 2, "type": "ok", "value": [["cas", 1, 2]]}"#,
            r#"{"op_id": 1, "invoke_ts": 1, "complete_ts": 2, "type": "ok", "value": [["append", 1]]}"#,
            r#"{"op_id": 1, "invoke_ts": 1, "complete_ts": 2, "type": "ok", "value": [["append", [1], 2]]}"#,
            r#"{"op_id": 1, "invoke_ts": 1, "complete_ts": 2, "type": "ok", "value": [["append", 1, null]]}"#,
            r#"{"op_id": 1, "invoke_ts": 1, "complete_ts": null, "type": "fail", "value": []}"#,
            r#"{"op_id": 1, "invoke_ts": 1, "complete_ts": 2, "type": "ok", "value": {}}"#,
            r#"[1]"#,
            r#"{"op_id": 1, "#,
        ];
        for mode in [Mode::ListAppend, Mode::RwRegister] {
            for b in &bad {
                let good =
                    r#"{"op_id": 0, "invoke_ts": 1, "complete_ts": 2, "type": "ok", "value": []}"#;
                same(&format!("{good}\n{b}\n"), mode);
                same(&format!("{good}\n{b}"), mode);
                same(&format!("{good}\r\n\n  \n{b}\r\n"), mode);
            }
            same(
                "{\"op_id\": 1, \"invoke_ts\": 1, \"complete_ts\": 2, \"type\": \"ok\", \"value\": []}\n{\"op_id\": \"1\", \"invoke_ts\": 1, \"complete_ts\": 2, \"type\": \"ok\", \"value\": []}\n",
                mode,
            );
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_are_named_by_line_column_and_byte() {
        let text = b"{\"op_id\": 1, \"invoke_ts\": 1, \"complete_ts\": 2, \"type\": \"ok\", \"value\": []}\n{\"op_id\": \"\xff\"}\n";
        let err = read_txn_jsonl("h.jsonl", &text[..], Mode::ListAppend)
            .err()
            .unwrap_or_default();
        assert_eq!(
            err,
            "h.jsonl: not UTF-8 at line 2, column 12 (byte 85); a history and a dump are UTF-8 text"
        );
    }
}
