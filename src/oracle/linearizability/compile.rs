//! Turns history ops into the compact form the search runs on: values as
//! integers, one step rule per op, times as integers, indeterminate returns as
//! "never".

use super::Model;
use super::append::Concat;
use crate::oracle::history::Op;
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A register value. An integer in ±2^62 is its own code, shifted left (low bit
/// 0), so the common integer values cost no lookup; anything else is interned
/// and coded as its id with the low bit set. `NIL` (id 0) is JSON null, the
/// initial register value.
pub type Val = u64;
pub const NIL: Val = 1;

/// Integers coded in place: those whose shift by one keeps their value.
const INLINE_INTS: std::ops::Range<i64> = -(1 << 62)..(1 << 62);

/// Return time of an op whose effect is unknown: it may linearize any time after its call.
pub const NEVER: u64 = u64::MAX;

/// The step rule of one op on a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Read(Val),
    Write(Val),
    /// Compare-and-set that succeeded (or might have, when indeterminate).
    Cas(Val, Val),
    /// Compare-and-set that answered "no": the register did not hold `old`.
    CasRefused(Val),
    /// The value's text concatenated to the register's (kv model only).
    Append(Val),
}

impl Step {
    /// The register's next value, or `None` if the op cannot happen in `state`;
    /// `concat` makes (and remembers) the values appends produce.
    #[inline]
    pub fn apply(self, state: Val, concat: &mut Concat) -> Option<Val> {
        match self {
            Step::Read(v) => (v == state).then_some(state),
            Step::Write(v) => Some(v),
            Step::Cas(old, new) => (old == state).then_some(new),
            Step::CasRefused(old) => (old != state).then_some(state),
            Step::Append(suffix) => Some(concat.append(state, suffix)),
        }
    }

    /// The op can take effect in `state` and leaves it unchanged.
    #[inline]
    pub fn keeps(self, state: Val) -> bool {
        match self {
            Step::Read(v) => v == state,
            Step::CasRefused(old) => old != state,
            _ => false,
        }
    }
}

/// One op ready for the search.
#[derive(Debug, Clone, Copy)]
pub struct Compiled {
    pub step: Step,
    pub call: u64,
    /// `NEVER` when indeterminate (until a crashed write is given a bound).
    pub ret: u64,
    /// The op's outcome is unknown (it never returned).
    pub indeterminate: bool,
    /// Index of the op in the history (for reports).
    pub origin: usize,
}

/// Why an op is left out of the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Failed, or an indeterminate read: it constrains nothing.
    NoEffect,
    /// An op type or input shape the model does not know: why.
    Unsupported(&'static str),
}

/// A multiply-mix hasher for the interner's integer and string keys (the
/// standard SipHash dominates compile time on large histories; these keys
/// come from the history file, and a slow bucket is the worst a crafted one
/// can cause).
#[derive(Default)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

type MixMap<K> = HashMap<K, Val, BuildHasherDefault<MixHasher>>;

/// Interning of the values that are not inline integers, shared by every
/// partition of one history.
#[derive(Default)]
pub struct Interner {
    strings: MixMap<String>,
    /// Anything else (null, floats, huge integers, arrays, objects), by JSON text.
    others: MixMap<String>,
    /// The JSON text of each interned value, by id.
    names: Vec<String>,
}

impl Interner {
    pub fn new() -> Self {
        let mut i = Interner::default();
        i.intern(&Value::Null);
        i
    }

    pub fn intern(&mut self, v: &Value) -> Val {
        if let Some(k) = v.as_i64().filter(|k| INLINE_INTS.contains(k)) {
            return (k as u64) << 1;
        }
        let next = ((self.names.len() as u64) << 1) | 1;
        let (code, fresh) = if let Value::String(s) = v {
            match self.strings.get(s.as_str()) {
                Some(code) => (*code, false),
                None => {
                    self.strings.insert(s.clone(), next);
                    (next, true)
                }
            }
        } else {
            let code = *self.others.entry(v.to_string()).or_insert(next);
            (code, code == next)
        };
        if fresh {
            self.names.push(v.to_string());
        }
        code
    }

    /// How many values are interned: codes of values made later (by appends
    /// during a search) start past them.
    pub fn count(&self) -> usize {
        self.names.len()
    }

    /// The code of string `s`, if some op names it.
    pub fn find_string(&self, s: &str) -> Option<Val> {
        self.strings.get(s).copied()
    }

    /// The text an append concatenates: a string's characters, nothing for
    /// null, the JSON text of anything else (a number's digits).
    pub fn text(&self, v: Val) -> String {
        if v == NIL {
            return String::new();
        }
        let name = self.name(v);
        serde_json::from_str::<String>(&name).unwrap_or(name)
    }

    /// The JSON text of a value.
    pub fn name(&self, v: Val) -> String {
        if v & 1 == 0 {
            // An arithmetic shift restores the sign.
            return ((v as i64) >> 1).to_string();
        }
        self.names
            .get((v >> 1) as usize)
            .map_or_else(|| "?".into(), String::clone)
    }
}

/// Compile `op` (at history index `origin`) or say why it is skipped.
pub fn compile(
    op: &Op,
    origin: usize,
    values: &mut Interner,
    model: Model,
) -> Result<Compiled, Skip> {
    if op.is_failed() {
        return Err(Skip::NoEffect);
    }
    let indeterminate = op.is_indeterminate();
    // In the map an unset key reads as "" (Porcupine's kv model): the empty
    // string and null are one value there.
    let mut code = |v: &Value| match v {
        Value::String(s) if s.is_empty() && model == Model::Kv => NIL,
        v => values.intern(v),
    };
    let step = match op.op_type.as_str() {
        "read" | "get" | "r" if indeterminate => return Err(Skip::NoEffect),
        "read" | "get" | "r" => Step::Read(code(&op.output)),
        "write" | "put" | "w" => Step::Write(code(&op.input)),
        "append" if model == Model::Kv => match &op.input {
            Value::String(_) | Value::Number(_) => Step::Append(code(&op.input)),
            _ => {
                return Err(Skip::Unsupported(
                    "an append's input is a string or a number",
                ));
            }
        },
        "cas" | "compare-and-set" => {
            let (old, new) = cas_args(&op.input).ok_or(Skip::Unsupported(
                "a cas's input is [old new] or {\"old\" (or \"expected\"), \"new\"}",
            ))?;
            let (old, new) = (code(old), code(new));
            if !indeterminate && op.output == Value::Bool(false) {
                Step::CasRefused(old)
            } else {
                Step::Cas(old, new)
            }
        }
        _ => {
            return Err(Skip::Unsupported(
                "not an op type of the model (read, write, cas; append for kv)",
            ));
        }
    };
    let ret = match op.complete_ts {
        Some(t) if !indeterminate => t,
        _ => NEVER,
    };
    Ok(Compiled {
        step,
        call: op.invoke_ts,
        ret,
        indeterminate,
        origin,
    })
}

/// `[old, new]` or `{"old"|"expected": …, "new": …}`.
fn cas_args(input: &Value) -> Option<(&Value, &Value)> {
    match input {
        Value::Array(pair) if pair.len() == 2 => Some((&pair[0], &pair[1])),
        Value::Object(o) => Some((o.get("old").or_else(|| o.get("expected"))?, o.get("new")?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Inline integers and interned values never share a code, equal values
    /// always do, and every code names its value.
    #[test]
    fn value_codes_are_distinct_and_named() {
        let mut values = Interner::new();
        let samples = [
            json!(null),
            json!(0),
            json!(5),
            json!(-7),
            json!((1i64 << 62) - 1),
            json!(-(1i64 << 62)),
            json!(1i64 << 62),
            json!(i64::MAX),
            json!(u64::MAX),
            json!("5"),
            json!(5.5),
            json!([1, 2]),
        ];
        let codes: Vec<Val> = samples.iter().map(|v| values.intern(v)).collect();
        assert_eq!(codes[0], NIL);
        for (i, a) in codes.iter().enumerate() {
            for b in &codes[i + 1..] {
                assert_ne!(a, b, "{codes:?}");
            }
        }
        let again: Vec<Val> = samples.iter().map(|v| values.intern(v)).collect();
        assert_eq!(codes, again);
        let names: Vec<String> = codes.iter().map(|&c| values.name(c)).collect();
        let texts: Vec<String> = samples.iter().map(Value::to_string).collect();
        assert_eq!(names, texts);
    }
}
