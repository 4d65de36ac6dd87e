//! Exactly-once by business idempotency key: every key a client used has at most
//! one committed effect in the final-state dump, an acknowledged key has one,
//! and a key whose every attempt was rejected has none.
//!
//! The key is read from each op's input object (`idempotency_key` unless the
//! `key_field` parameter names another field). Grouping by the op id instead
//! would make the check vacuous, so that is refused as a mismatch.
//!
//! The checker folds ops one by one ([`Fold`]): per op only its key (hashed, and
//! its text in one arena) and its op id are kept. Keys and the dump's entries are
//! then matched by sorting both by the key's hash and walking them side by side:
//! a million distinct keys cost two sorts (each of 256 lists that fit in the
//! cache, see [`Parted`]) and one pass, not two million random probes into a
//! hash table, which is where the time went when keys were interned (see
//! references/checkers.md).

use super::checker::{Anomaly, Refusal, judged, mismatch, missing_report};
use super::history::History;
use super::intern::Texts;
use super::jsonl_read::Header;
use super::op_view::{OpSink, OpView, plain_run, skip_ws};
use super::params::Params;
use crate::oracle::CheckerReport;
use serde_json::Value;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::hash::BuildHasher;

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
        .map_err(|e| e.to_string())
}

/// A key's text in an arena, with what orders and compares it without reading
/// the arena: its hash, first 8 bytes and length. Equal keys are equal in all
/// four; the order (hash first) is arbitrary but total, and the same on both
/// sides of the match.
#[derive(Clone, Copy)]
struct KeyRef {
    hash: u64,
    head: u64,
    start: u32,
    len: u32,
}

/// Texts of keys, one after another; and the hasher every [`KeyRef`] of one
/// check shares.
#[derive(Default)]
struct Keys {
    hasher: foldhash::fast::RandomState,
    bytes: String,
    /// Texts past 4 GiB in all, which a [`KeyRef`] cannot place: refused at the
    /// end rather than compared wrongly.
    overflow: bool,
}

impl Keys {
    #[inline]
    fn push(&mut self, text: &str) -> KeyRef {
        let mut head = [0u8; 8];
        let n = text.len().min(8);
        head[..n].copy_from_slice(&text.as_bytes()[..n]);
        let (start, len) = match (
            u32::try_from(self.bytes.len()),
            u32::try_from(self.bytes.len() + text.len()),
        ) {
            // A key of 8 bytes or fewer is all in its head: nothing to keep.
            (Ok(start), Ok(_)) if text.len() <= 8 => (start, text.len() as u32),
            (Ok(start), Ok(_)) => {
                self.bytes.push_str(text);
                (start, text.len() as u32)
            }
            _ => {
                self.overflow = true;
                (0, 0)
            }
        };
        KeyRef {
            hash: self.hasher.hash_one(text),
            head: u64::from_be_bytes(head),
            start,
            len,
        }
    }

    /// The key's text; one of 8 bytes or fewer is its head.
    fn text(&self, k: &KeyRef) -> Cow<'_, str> {
        let len = k.len as usize;
        if len <= 8 {
            let head = k.head.to_be_bytes();
            // The first bytes of a key that was that long: the whole of it.
            return Cow::Owned(String::from_utf8_lossy(&head[..len]).into_owned());
        }
        let start = k.start as usize;
        Cow::Borrowed(self.bytes.get(start..start + len).unwrap_or_default())
    }

    fn refused(&self) -> Result<(), String> {
        if self.overflow {
            return Err(format!(
                "{NAME}: the idempotency keys come to more than 4 GiB of text; \
                 split the history"
            ));
        }
        Ok(())
    }
}

/// Two keys, each in its own arena, in the match's order.
#[inline]
fn order(a: &KeyRef, in_a: &Keys, b: &KeyRef, in_b: &Keys) -> Ordering {
    a.hash
        .cmp(&b.hash)
        .then(a.head.cmp(&b.head))
        .then(a.len.cmp(&b.len))
        .then_with(|| {
            if a.len <= 8 {
                Ordering::Equal
            } else {
                in_a.text(a).cmp(&in_b.text(b))
            }
        })
}

/// `items` sorted by `order`, stably, where `order` compares `hash` first and
/// the hash is uniform: one counting pass spreads the items into buckets by the
/// hash's top bits (a few items each; the writes are independent of each
/// other, so the cache misses overlap), then each bucket is sorted. Linear,
/// where a comparison sort of a million items was a quarter of the check. (In
/// place, by swaps, each miss waited for the last: twice as slow.)
fn sort_by_hash<T: Copy>(
    items: Vec<T>,
    hash: impl Fn(&T) -> u64,
    mut order: impl FnMut(&T, &T) -> Ordering,
) -> Vec<T> {
    let Some(&first) = items.first() else {
        return items;
    };
    // About four items a bucket (sixteen took more comparisons; the same time
    // when the buckets spanned all of memory).
    let bits = (usize::BITS - items.len().leading_zeros()).clamp(3, 26) - 2;
    let bucket = |item: &T| (hash(item) >> (64 - bits)) as usize;
    let mut starts = vec![0usize; (1 << bits) + 1];
    for item in &items {
        starts[bucket(item) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut next = starts.clone();
    let mut sorted = vec![first; items.len()];
    for item in items {
        let at = &mut next[bucket(&item)];
        sorted[*at] = item;
        *at += 1;
    }
    for w in starts.windows(2) {
        sorted[w[0]..w[1]].sort_by(&mut order);
    }
    sorted
}

/// How many lists [`Parted`] spreads items over, as bits of the hash.
const PART_BITS: u32 = 8;

/// Items spread over 2^[`PART_BITS`] lists by their key hash's top bits as they
/// come, each list in arrival order. Sorted a list at a time, each small enough
/// to stay in the cache, the lists one after another are in hash order: no
/// second buffer the size of them all, no scatter across all of memory.
struct Parted<T> {
    parts: Vec<Vec<T>>,
}

impl<T: Copy> Parted<T> {
    fn new() -> Self {
        Parted {
            parts: (0..1 << PART_BITS).map(|_| Vec::new()).collect(),
        }
    }

    fn push(&mut self, hash: u64, item: T) {
        if let Some(part) = self.parts.get_mut((hash >> (64 - PART_BITS)) as usize) {
            part.push(item);
        }
    }

    /// Each list sorted by `order`, stably (see [`sort_by_hash`]).
    fn sorted(
        self,
        hash: impl Fn(&T) -> u64,
        mut order: impl FnMut(&T, &T) -> Ordering,
    ) -> Vec<Vec<T>> {
        // A list's items share the top bits: its buckets are cut by the rest.
        let below = |t: &T| hash(t) << PART_BITS;
        self.parts
            .into_iter()
            .map(|part| sort_by_hash(part, below, &mut order))
            .collect()
    }
}

/// One op that named a key.
#[derive(Clone, Copy)]
struct Attempt {
    key: KeyRef,
    /// Its op id's index in [`Fold::ids`] (also the op's place in the history).
    op: u32,
    acked: bool,
    failed: bool,
}

/// A key's count of effects in the dump.
#[derive(Clone, Copy)]
struct Entry {
    key: KeyRef,
    n: u64,
}

/// The checker as a fold over ops: [`OpSink::op`] per op, then [`Fold::finish`].
pub struct Fold {
    field: String,
    keys: Keys,
    ids: Texts,
    attempts: Parted<Attempt>,
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
            keys: Keys::default(),
            ids: Texts::default(),
            attempts: Parted::new(),
            unkeyed: 0,
        }))
    }

    /// The report once every op of `header`'s history was folded.
    pub fn finish(self, header: &Header, effects: Effects<'_>) -> Result<CheckerReport, Refusal> {
        if let Some(r) = missing_report(NAME, SCOPE, header, REQUIRED) {
            return Ok(r);
        }
        let Fold {
            keys,
            ids,
            attempts,
            unkeyed,
            field,
        } = self;
        keys.refused().map_err(Refusal::History)?;
        // The dump's entries, keys copied into their own arena (the same hasher).
        let mut dump = Dumped::new(&keys.hasher);
        each_effect_count(effects, &field, &mut dump).map_err(Refusal::Dump)?;
        let Dumped {
            keys: dumped,
            entries,
        } = dump;
        dumped.refused().map_err(Refusal::Dump)?;
        // A key given twice counts as its last value: the sort is stable, so the
        // last of equal keys is the last of its run (equal keys share a list).
        let mut entries = entries.sorted(
            |e| e.key.hash,
            |a, b| order(&a.key, &dumped, &b.key, &dumped),
        );
        for part in &mut entries {
            part.dedup_by(|later, kept| {
                let same = order(&later.key, &dumped, &kept.key, &dumped).is_eq();
                if same {
                    *kept = *later;
                }
                same
            });
        }
        // Attempts grouped by key, each group in op order (the sort is stable).
        let attempts = attempts.sorted(|a| a.key.hash, |a, b| order(&a.key, &keys, &b.key, &keys));
        let groups = attempts
            .iter()
            .flat_map(|part| part.chunk_by(|a, b| order(&a.key, &keys, &b.key, &keys).is_eq()));

        let mut found: Vec<(String, u64, &[Attempt])> = Vec::new();
        let mut phantoms = BTreeMap::new();
        // A dump key no op used, with effects under it (a count of 0, null or
        // an empty list is none).
        let mut phantom = |e: &Entry| {
            if e.n > 0 {
                phantoms.insert(dumped.text(&e.key).into_owned(), e.n);
            }
        };
        let mut dump = entries.iter().flatten().peekable();
        for group in groups {
            let key = &group[0].key;
            // Dump entries ordered before this key are no op's key: phantoms.
            let mut n = 0;
            while let Some(e) = dump.peek() {
                match order(&e.key, &dumped, key, &keys) {
                    Ordering::Less => {
                        phantom(e);
                        dump.next();
                    }
                    Ordering::Equal => {
                        n = e.n;
                        dump.next();
                        break;
                    }
                    Ordering::Greater => break,
                }
            }
            let acked = group.iter().any(|a| a.acked);
            let all_failed = group.iter().all(|a| a.failed);
            if n > 1 || (n == 0 && acked) || (n == 1 && all_failed) {
                found.push((keys.text(key).into_owned(), n, group));
            }
        }
        dump.for_each(&mut phantom);
        let phantoms = phantoms.into_iter().map(|(key, n)| Anomaly {
            counterexample: None,
            ops: Vec::new(),
            why: format!("phantom effect: key `{key}` has {n} effect(s) but no op used it"),
        });
        // Keys with an anomaly, reported in key order as they always were.
        found.sort_by(|a, b| a.0.cmp(&b.0));
        let mut anomalies = Vec::new();
        for (key, n, group) in found {
            let ops: Vec<String> = group.iter().map(|a| ids.get(a.op).to_string()).collect();
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
        Ok(judged(NAME, SCOPE, produced - unkeyed, produced, anomalies))
    }
}

impl OpSink for Fold {
    fn op(&mut self, o: &OpView<'_>) {
        let Some(value) = o.input_field(&self.field) else {
            self.unkeyed += 1;
            return;
        };
        let key = self.keys.push(&value.text());
        self.attempts.push(
            key.hash,
            Attempt {
                key,
                op: self.ids.push(o.op_id),
                acked: o.is_acked(),
                failed: o.is_failed(),
            },
        );
    }

    fn input_field(&self) -> Option<&str> {
        Some(&self.field)
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

/// Where a dump's effect counts go, a key at a time.
trait Counts {
    fn count(&mut self, key: &str, n: u64);
    /// Drop every count handed so far: the dump is read again, another way.
    fn forget(&mut self);
}

/// The dump's entries as the match wants them: keys in an arena of their own
/// (hashed by the history's keys' hasher), spread over lists by hash.
struct Dumped {
    keys: Keys,
    entries: Parted<Entry>,
}

impl Dumped {
    fn new(hasher: &foldhash::fast::RandomState) -> Self {
        Dumped {
            keys: Keys {
                hasher: hasher.clone(),
                ..Keys::default()
            },
            entries: Parted::new(),
        }
    }
}

impl Counts for Dumped {
    fn count(&mut self, key: &str, n: u64) {
        let key = self.keys.push(key);
        self.entries.push(key.hash, Entry { key, n });
    }

    fn forget(&mut self) {
        *self = Dumped::new(&self.keys.hasher);
    }
}

/// Effects per key, handed to `counts`: an array of records carrying `field`, or
/// an object of key → count (number) or key → list of effects. A key given twice
/// counts as its last value, and the first problem in key order is the one
/// reported, whichever form the dump has.
fn each_effect_count(
    effects: Effects<'_>,
    field: &str,
    counts: &mut impl Counts,
) -> Result<(), String> {
    let mut each = |key: &str, n| counts.count(key, n);
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
        Effects::Text(text) => {
            if plain_counts(text, &mut each).is_none() {
                counts.forget();
                stream::each(text, field, &mut |key, n| counts.count(key, n))?;
            }
        }
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

/// The common dump, an object of plain counts (`{"key": 2, ...}`: keys with no
/// escape, counts non-negative integers of at most 19 digits, JSON whitespace
/// between), read by hand, each entry handed to `each` in order as serde's
/// visitors hand it, in about a third of their instructions. `None` for any other
/// text, perhaps after some entries: those are to be forgotten, and the text read
/// by [`stream::each`].
fn plain_counts(text: &str, each: &mut impl FnMut(&str, u64)) -> Option<()> {
    let b = text.as_bytes();
    let ws = |i| skip_ws(b, i);
    let mut i = ws(0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = ws(i + 1);
    if b.get(i) == Some(&b'}') {
        return (ws(i + 1) == b.len()).then_some(());
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let start = i + 1;
        let end = start + plain_run(b.get(start..)?);
        if b.get(end) != Some(&b'"') {
            return None;
        }
        let key = text.get(start..end)?;
        i = ws(end + 1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(i + 1);
        let (first, mut n) = (i, 0u64);
        while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
            // Nineteen digits never overflow; more are refused below.
            n = n.wrapping_mul(10).wrapping_add(u64::from(d));
            i += 1;
        }
        let digits = i - first;
        if digits == 0 || digits > 19 || (digits > 1 && b[first] == b'0') {
            return None;
        }
        i = ws(i);
        each(key, n);
        match b.get(i) {
            Some(b',') => i = ws(i + 1),
            Some(b'}') => return (ws(i + 1) == b.len()).then_some(()),
            _ => return None,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys whose hashes collide are still told apart by their text, past the
    /// first eight bytes too, and the same text compares equal across arenas.
    #[test]
    fn colliding_hashes_are_ordered_by_the_keys_text() {
        let (mut a, mut b) = (Keys::default(), Keys::default());
        let key = |keys: &mut Keys, text: &str| KeyRef {
            hash: 7,
            ..keys.push(text)
        };
        let one = key(&mut a, "idempotency-0001");
        let two = key(&mut b, "idempotency-0002");
        let same = key(&mut b, "idempotency-0001");
        let short = key(&mut b, "idem");
        assert_eq!(order(&one, &a, &two, &b), Ordering::Less);
        assert_eq!(order(&two, &b, &one, &a), Ordering::Greater);
        assert_eq!(order(&one, &a, &same, &b), Ordering::Equal);
        assert_ne!(order(&one, &a, &short, &b), Ordering::Equal);
    }

    impl Counts for Vec<(String, u64)> {
        fn count(&mut self, key: &str, n: u64) {
            self.push((key.to_string(), n));
        }
        fn forget(&mut self) {
            self.clear();
        }
    }

    proptest::proptest! {
        /// The hand reader takes an object dump of plain counts, and only such a
        /// dump, handing out what serde's visitors hand out, in the same order;
        /// what it handed out before giving up is forgotten.
        #[test]
        fn plain_counts_read_as_serde_reads_them(
            entries in proptest::collection::vec((0usize..8, 0usize..10, 0usize..4), 0..8),
            tail in 0usize..6,
        ) {
            const KEYS: &[&str] = &["\"t1\"", "\"t2\"", "\"\"", "\"é☃\"", "\"a\\nb\"", "\"t1\"", "\"k\\u0031\"", "7"];
            const COUNTS: &[&str] = &["0", "1", "2", "007", "-1", "1.5", "1e2", "null", "[1,2]", "18446744073709551616"];
            const WS: &[&str] = &["", " ", "\n  ", "\t"];
            let body: Vec<String> = entries
                .iter()
                .map(|(k, c, w)| format!("{}{}{}:{}{}", WS[*w], KEYS[*k], WS[*w], COUNTS[*c], WS[*w]))
                .collect();
            let text = format!("{{{}}}{}", body.join(","), ["", " ", "\n", "x", ",", "}"][tail]);
            let mut fast = Vec::new();
            let took = plain_counts(&text, &mut |k, n| fast.push((k.to_string(), n))).is_some();
            let mut slow = Vec::new();
            let parsed = stream::each(&text, "k", &mut |k, n| slow.push((k.to_string(), n)));
            let plain = entries.iter().all(|(k, c, _)| !KEYS[*k].contains('\\') && *k != 7 && *c < 3)
                && tail < 3;
            proptest::prop_assert_eq!(took, plain, "{}", text);
            if took {
                proptest::prop_assert!(parsed.is_ok(), "{}", text);
                proptest::prop_assert_eq!(&fast, &slow, "{}", text);
            }
            // Whichever reader took it, the counts are serde's (what the hand
            // reader handed out before it gave up is forgotten).
            let mut got = Vec::new();
            let read = each_effect_count(Effects::Text(&text), "k", &mut got);
            proptest::prop_assert_eq!(read.is_ok(), parsed.is_ok(), "{}", text);
            if read.is_ok() {
                proptest::prop_assert_eq!(got, slow, "{}", text);
            }
        }
    }

    /// With hashes that pile into a few buckets, or all into one, the result is
    /// what a stable comparison sort gives.
    #[test]
    fn the_bucket_sort_is_a_stable_sort() {
        let items: Vec<(u64, u32)> = (0..5000u32)
            .map(|i| (u64::from(i.wrapping_mul(2_654_435_761) % 97), i))
            .collect();
        for spread in [0u32, 1, 58] {
            let hash = |x: &(u64, u32)| (x.0 % 3) << spread;
            let by = |x: &(u64, u32), y: &(u64, u32)| hash(x).cmp(&hash(y)).then(x.0.cmp(&y.0));
            let mut want = items.clone();
            want.sort_by(by);
            assert!(
                sort_by_hash(items.clone(), hash, by) == want,
                "spread {spread}"
            );
        }
        assert!(sort_by_hash(Vec::<(u64, u32)>::new(), |x| x.0, |x, y| x.cmp(y)).is_empty());
    }
}
