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
    pub output: Val<'a>,
    pub error: Option<&'a str>,
    pub timeout: bool,
    pub node: Option<&'a str>,
    pub fault_epoch: Option<u64>,
}

impl OpView<'_> {
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

    /// The owned op.
    pub fn to_op(&self) -> Op {
        Op {
            op_id: self.op_id.to_string(),
            process: self.process.to_string(),
            invoke_ts: self.invoke_ts,
            complete_ts: self.complete_ts,
            op_type: self.op_type.to_string(),
            key: self.key.map(str::to_string),
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
    Tree(&'a Value),
}

impl<'a> Val<'a> {
    /// As a JSON tree. Raw text was checked by the parser that cut it out, so it
    /// always parses; were it not to, it reads as null.
    pub fn to_value(self) -> Value {
        match self {
            Val::Raw(raw) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
            Val::Tree(v) => v.clone(),
        }
    }

    /// Printed as `serde_json` prints the value (compact, object keys sorted): two
    /// values print alike exactly when they are equal. Raw text already in that
    /// form (a plain string, an integer, a literal) is not parsed.
    pub fn canonical(self) -> Cow<'a, str> {
        match self {
            Val::Raw(raw) if is_canonical(raw.get()) => Cow::Borrowed(raw.get()),
            Val::Raw(_) => Cow::Owned(self.to_value().to_string()),
            Val::Tree(v) => Cow::Owned(v.to_string()),
        }
    }

    /// The JSON text as read (raw), or printed (a tree): [`printed`] makes it
    /// canonical when it is shown.
    pub fn as_read(self) -> Cow<'a, str> {
        match self {
            Val::Raw(raw) => Cow::Borrowed(raw.get()),
            Val::Tree(v) => Cow::Owned(v.to_string()),
        }
    }

    /// A string's text, anything else printed ([`Val::canonical`]).
    pub fn text(self) -> Cow<'a, str> {
        match self {
            Val::Tree(Value::String(s)) => Cow::Borrowed(s),
            Val::Raw(raw) if raw.get().starts_with('"') => {
                let quoted = raw.get();
                if quoted.contains('\\') {
                    Cow::Owned(serde_json::from_str::<String>(quoted).unwrap_or_default())
                } else {
                    Cow::Borrowed(quoted.get(1..quoted.len() - 1).unwrap_or_default())
                }
            }
            _ => self.canonical(),
        }
    }

    pub fn is_null(self) -> bool {
        match self {
            Val::Raw(raw) => raw.get() == "null",
            Val::Tree(v) => v.is_null(),
        }
    }

    /// The number, as `Value::as_f64` reads it (anything else: `None`).
    pub fn as_f64(self) -> Option<f64> {
        match self {
            Val::Raw(raw) => match raw.get().as_bytes().first() {
                Some(b'-' | b'0'..=b'9') => serde_json::from_str::<f64>(raw.get()).ok(),
                _ => None,
            },
            Val::Tree(v) => v.as_f64(),
        }
    }

    /// An object's `name` field, as `Value::get` finds it (the last of repeats).
    pub fn field(self, name: &str) -> Option<Val<'a>> {
        match self {
            Val::Tree(v) => v.get(name).map(Val::Tree),
            Val::Raw(raw) if raw.get().starts_with('{') => {
                let mut de = serde_json::Deserializer::from_str(raw.get());
                de.deserialize_map(Pick(name)).ok().flatten().map(Val::Raw)
            }
            Val::Raw(_) => None,
        }
    }

    /// An array's items; null is none; anything else is one item.
    pub fn items(self) -> Vec<Val<'a>> {
        match self {
            Val::Tree(Value::Null) => Vec::new(),
            Val::Tree(Value::Array(items)) => items.iter().map(Val::Tree).collect(),
            Val::Raw(raw) if raw.get() == "null" => Vec::new(),
            Val::Raw(raw) if raw.get().starts_with('[') => {
                match serde_json::from_str::<Vec<&'a RawValue>>(raw.get()) {
                    Ok(items) => items.into_iter().map(Val::Raw).collect(),
                    Err(_) => vec![self],
                }
            }
            _ => vec![self],
        }
    }
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
