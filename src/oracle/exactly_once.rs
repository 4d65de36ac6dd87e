//! Exactly-once by business idempotency key: every key a client used has at most
//! one committed effect in the final-state dump, an acknowledged key has one,
//! and a key whose every attempt was rejected has none.
//!
//! The key is read from each op's input object (`idempotency_key` unless the
//! `key_field` parameter names another field). Grouping by the op id instead
//! would make the check vacuous, so that is refused as a mismatch.
//!
//! The checker folds ops one by one ([`Fold`]): per op only its key's id and its
//! op id are kept.

use super::checker::{Anomaly, judged, mismatch, missing_report};
use super::history::History;
use super::intern::{Interner, Texts};
use super::jsonl_read::Header;
use super::op_view::{OpSink, OpView};
use super::params::Params;
use crate::oracle::CheckerReport;
use serde_json::Value;
use std::collections::BTreeMap;

pub const NAME: &str = "exactly-once";
pub const PARAMS: &[&str] = &["key_field"];
pub const REQUIRED: &[&str] = &[
    "op_id",
    "op_type",
    "input",
    "error",
    "timeout",
    "complete_ts",
];
pub const SCOPE: &str = "counts committed effects per idempotency key in the final-state dump; \
    does not see effects the dump omits, effects merged under another key, or ordering";

/// Judge `history` against the dump of committed effects.
pub fn check(
    history: &History,
    effects: Effects<'_>,
    params: &Params,
) -> Result<CheckerReport, String> {
    let mut fold = match Fold::new(params)? {
        Ok(fold) => fold,
        Err(report) => return Ok(report),
    };
    for op in &history.ops {
        fold.op(&op.view());
    }
    fold.finish(&history.header(), effects)
}

/// What the attempts with one key came to.
#[derive(Clone, Copy)]
struct Attempts {
    acked: bool,
    all_failed: bool,
}

/// The checker as a fold over ops: [`OpSink::op`] per op, then [`Fold::finish`].
pub struct Fold {
    field: String,
    keys: Interner,
    ids: Texts,
    /// Each keyed op: its key's id and its op id's.
    attempts: Vec<(u32, u32)>,
    /// By key id.
    per_key: Vec<Attempts>,
    unkeyed: u64,
}

impl Fold {
    /// The fold for `params`; `Ok(Err(report))` when the check cannot be made
    /// (grouping by the op id).
    pub fn new(params: &Params) -> Result<Result<Fold, CheckerReport>, String> {
        params.only(NAME, PARAMS)?;
        let field = params.str("key_field").unwrap_or("idempotency_key");
        if field == "op_id" {
            return Ok(Err(mismatch(
                NAME,
                SCOPE,
                "grouping by the op id makes exactly-once vacuous: name the business \
                 idempotency key"
                    .into(),
            )));
        }
        Ok(Ok(Fold {
            field: field.to_string(),
            keys: Interner::default(),
            ids: Texts::default(),
            attempts: Vec::new(),
            per_key: Vec::new(),
            unkeyed: 0,
        }))
    }

    /// The report once every op of `header`'s history was folded.
    pub fn finish(self, header: &Header, effects: Effects<'_>) -> Result<CheckerReport, String> {
        if let Some(r) = missing_report(NAME, SCOPE, header, REQUIRED) {
            return Ok(r);
        }
        let mut effects_of = vec![0u64; self.per_key.len()];
        let mut anomalies = Vec::new();
        // In key order, whatever order the dump had.
        let mut phantoms = BTreeMap::new();
        each_effect_count(effects, &self.field, |key, n| match self.keys.get(key) {
            Some(id) => effects_of[id as usize] = n,
            None => {
                phantoms.insert(key.to_string(), n);
            }
        })?;
        let phantoms = phantoms.into_iter().map(|(key, n)| Anomaly {
            counterexample: None,
            ops: Vec::new(),
            why: format!("phantom effect: key `{key}` has {n} effect(s) but no op used it"),
        });
        // Keys with an anomaly, reported in key order as they always were.
        let mut found: Vec<(String, u32)> = Vec::new();
        for (id, a) in self.per_key.iter().enumerate() {
            let n = effects_of[id];
            if n > 1 || (n == 0 && a.acked) || (n == 1 && a.all_failed) {
                found.push((self.keys.name(id as u32), id as u32));
            }
        }
        found.sort();
        let mut ops_of: BTreeMap<u32, Vec<String>> =
            found.iter().map(|(_, id)| (*id, Vec::new())).collect();
        if !ops_of.is_empty() {
            for (key, op) in &self.attempts {
                if let Some(ops) = ops_of.get_mut(key) {
                    ops.push(self.ids.get(*op).to_string());
                }
            }
        }
        for (key, id) in found {
            let n = effects_of[id as usize];
            let ops = ops_of.remove(&id).unwrap_or_default();
            let why = if n > 1 {
                format!(
                    "duplicate effect: key `{key}` has {n} committed effects after {} attempt(s)",
                    ops.len()
                )
            } else if n == 0 {
                format!("lost effect: key `{key}` was acknowledged but has no committed effect")
            } else {
                format!(
                    "effect of a rejected request: every attempt with key `{key}` failed, yet \
                     one effect is committed"
                )
            };
            anomalies.push(Anomaly {
                counterexample: None,
                ops,
                why,
            });
        }
        anomalies.extend(phantoms);
        let produced = header.ops;
        Ok(judged(
            NAME,
            SCOPE,
            produced - self.unkeyed,
            produced,
            anomalies,
        ))
    }
}

impl OpSink for Fold {
    fn op(&mut self, o: &OpView<'_>) {
        let Some(value) = o.input.field(&self.field) else {
            self.unkeyed += 1;
            return;
        };
        let key = self.keys.id(&value.text());
        let op = self.ids.push(o.op_id);
        self.attempts.push((key, op));
        let (acked, failed) = (o.is_acked(), o.is_failed());
        match self.per_key.get_mut(key as usize) {
            Some(a) => {
                a.acked |= acked;
                a.all_failed &= failed;
            }
            None => self.per_key.push(Attempts {
                acked,
                all_failed: failed,
            }),
        }
    }
}

fn render(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A dump of committed effects: parsed, or its JSON text read where it lies (a
/// dump of a million keys is then never held as a tree).
#[derive(Clone, Copy)]
pub enum Effects<'a> {
    Tree(&'a Value),
    Text(&'a str),
}

/// Effects per key, handed to `each`: an array of records carrying `field`, or an
/// object of key → count (number) or key → list of effects. A key given twice
/// counts as its last value, and the first problem in key order is the one
/// reported, whichever form the dump has.
fn each_effect_count(
    effects: Effects<'_>,
    field: &str,
    mut each: impl FnMut(&str, u64),
) -> Result<(), String> {
    match effects {
        Effects::Tree(Value::Array(records)) => {
            let mut counts = BTreeMap::new();
            for (i, r) in records.iter().enumerate() {
                *counts.entry(record_key(i, r, field)?).or_insert(0) += 1;
            }
            for (k, n) in counts {
                each(&k, n);
            }
        }
        Effects::Tree(Value::Object(map)) => {
            for (k, v) in map {
                each(k, count_of(k, v)?);
            }
        }
        Effects::Tree(_) => return Err(NOT_A_DUMP.into()),
        Effects::Text(text) => stream::each(text, field, &mut each)?,
    }
    Ok(())
}

const NOT_A_DUMP: &str = "effects dump: expected an array of records or an object";

/// The key of record `i` of an array dump.
fn record_key(i: usize, record: &Value, field: &str) -> Result<String, String> {
    record
        .get(field)
        .map(render)
        .ok_or_else(|| format!("effects dump: record {i} has no `{field}`"))
}

/// How many effects `key`'s value in an object dump stands for.
fn count_of(key: &str, v: &Value) -> Result<u64, String> {
    Ok(match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| bad_count(key))?,
        Value::Array(a) => a.len() as u64,
        Value::Null => 0,
        _ => 1,
    })
}

fn bad_count(key: &str) -> String {
    format!("effects dump: `{key}`: count must be a non-negative integer")
}

/// The dump's text read by serde's visitors: an object's keys are borrowed where
/// they need no unescaping and its values counted, not kept; an array's records
/// are parsed one at a time.
mod stream {
    use super::{NOT_A_DUMP, bad_count, record_key};
    use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess};
    use serde_json::Value;
    use std::borrow::Cow;
    use std::collections::{BTreeMap, BTreeSet};
    use std::fmt;

    /// What the text was, once read to its end (a JSON error anywhere wins over
    /// a problem with the dump's shape, as when it was parsed whole first).
    enum Read {
        /// Record keys and their counts, or the first record with no key.
        Records(Result<BTreeMap<String, u64>, String>),
        /// Keys whose last value was not a count (the first in key order is
        /// reported).
        Object(BTreeSet<String>),
        Neither,
    }

    pub(super) fn each(
        text: &str,
        field: &str,
        each: &mut dyn FnMut(&str, u64),
    ) -> Result<(), String> {
        let mut de = serde_json::Deserializer::from_str(text);
        let read = de
            .deserialize_any(Top { field, each })
            .and_then(|read| de.end().map(|()| read))
            .map_err(|e| format!("effects dump: invalid JSON: {e}"))?;
        match read {
            Read::Records(counts) => {
                for (k, n) in counts? {
                    each(&k, n);
                }
                Ok(())
            }
            Read::Object(bad) => match bad.first() {
                Some(key) => Err(bad_count(key)),
                None => Ok(()),
            },
            Read::Neither => Err(NOT_A_DUMP.into()),
        }
    }

    struct Top<'f, 'e> {
        field: &'f str,
        each: &'e mut dyn FnMut(&str, u64),
    }

    impl<'de> de::Visitor<'de> for Top<'_, '_> {
        type Value = Read;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an effects dump")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read, A::Error> {
            let mut bad = BTreeSet::new();
            while let Some(Key(key)) = map.next_key()? {
                match map.next_value_seed(Count)? {
                    Some(n) => {
                        if !bad.is_empty() {
                            bad.remove(key.as_ref());
                        }
                        (self.each)(&key, n);
                    }
                    None => {
                        bad.insert(key.into_owned());
                    }
                }
            }
            Ok(Read::Object(bad))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Read, A::Error> {
            let mut counts = Ok(BTreeMap::new());
            let mut i = 0;
            while let Some(record) = seq.next_element::<Value>()? {
                if let Ok(c) = &mut counts {
                    match record_key(i, &record, self.field) {
                        Ok(k) => *c.entry(k).or_insert(0) += 1,
                        Err(e) => counts = Err(e),
                    }
                }
                i += 1;
            }
            Ok(Read::Records(counts))
        }

        fn visit_bool<E>(self, _: bool) -> Result<Read, E> {
            Ok(Read::Neither)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Read, E> {
            Ok(Read::Neither)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Read, E> {
            Ok(Read::Neither)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Read, E> {
            Ok(Read::Neither)
        }
        fn visit_str<E>(self, _: &str) -> Result<Read, E> {
            Ok(Read::Neither)
        }
        fn visit_unit<E>(self) -> Result<Read, E> {
            Ok(Read::Neither)
        }
    }

    /// An object's key, borrowed from the text unless it had escapes.
    struct Key<'de>(Cow<'de, str>);

    impl<'de> de::Deserialize<'de> for Key<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> de::Visitor<'de> for V {
                type Value = Key<'de>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a key")
                }
                fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Borrowed(s)))
                }
                fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Owned(s.to_string())))
                }
            }
            d.deserialize_str(V)
        }
    }

    /// A value's count of effects; `None`: a number that is not a count.
    struct Count;

    impl<'de> DeserializeSeed<'de> for Count {
        type Value = Option<u64>;

        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<u64>, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> de::Visitor<'de> for Count {
        type Value = Option<u64>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a count")
        }

        fn visit_u64<E>(self, n: u64) -> Result<Option<u64>, E> {
            Ok(Some(n))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Option<u64>, E> {
            Ok(u64::try_from(n).ok())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Option<u64>, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Option<u64>, E> {
            Ok(Some(0))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<u64>, A::Error> {
            let mut n = 0;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(Some(n))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<u64>, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Some(1))
        }
        fn visit_bool<E>(self, _: bool) -> Result<Option<u64>, E> {
            Ok(Some(1))
        }
        fn visit_str<E>(self, _: &str) -> Result<Option<u64>, E> {
            Ok(Some(1))
        }
    }
}
