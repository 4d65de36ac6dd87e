//! Strings as `u32` ids for the streaming checkers: keys, values (their canonical
//! JSON text) and processes interned, op ids kept once in one arena.

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use std::collections::HashMap;
use std::hash::BuildHasher;

/// foldhash: a fast hasher for short strings and integers (ids are not chosen by
/// an attacker who gains from collisions beyond a slower check).
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Texts ↔ ids, in the order first seen. A text that is a non-negative integer's
/// canonical decimal form is looked up as the integer (no string hashed or kept).
/// Other texts are kept once, in an arena; the table holds their ids with 32 bits
/// of their hash (it grows without hashing a text again) and their place in the
/// arena (a lookup reads the table and the text, nothing between).
#[derive(Default)]
pub struct Interner {
    hasher: foldhash::fast::RandomState,
    ints: IntMap,
    table: HashTable<Slot>,
    texts: Texts,
    names: Vec<Name>,
}

/// A text in [`Interner::table`].
#[derive(Clone, Copy)]
struct Slot {
    id: u32,
    hash: u32,
    /// Its place in [`Interner::texts`]' bytes.
    start: u32,
    len: u32,
}

impl Slot {
    fn is(&self, texts: &Texts, text: &str, hash: u32) -> bool {
        self.hash == hash
            && self.len as usize == text.len()
            && texts
                .bytes
                .as_bytes()
                .get(self.start as usize..)
                .and_then(|b| b.get(..text.len()))
                == Some(text.as_bytes())
    }
}

enum Name {
    Int(u64),
    /// Its index in [`Interner::texts`].
    Text(u32),
}

/// The table's hash of a text's 32 hash bits, spread over 64 (the table takes its
/// buckets from the low bits and a tag from the high ones).
fn spread(h: u32) -> u64 {
    u64::from(h).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl Interner {
    /// The id of `text`, given out now if it is new.
    pub fn id(&mut self, text: &str) -> u32 {
        let next = self.names.len() as u32;
        if let Some(v) = canonical_u64(text) {
            return self.ints.get_or_insert(v, next).unwrap_or_else(|| {
                self.names.push(Name::Int(v));
                next
            });
        }
        let h = self.hash(text);
        let texts = &self.texts;
        let same = |slot: &Slot| slot.is(texts, text, h);
        match self.table.entry(spread(h), same, |slot| spread(slot.hash)) {
            Entry::Occupied(e) => e.get().id,
            Entry::Vacant(e) => {
                e.insert(Slot {
                    id: next,
                    hash: h,
                    start: self.texts.bytes.len() as u32,
                    len: text.len() as u32,
                });
                let at = self.texts.push(text);
                self.names.push(Name::Text(at));
                next
            }
        }
    }

    /// The id of a text already seen.
    pub fn get(&self, text: &str) -> Option<u32> {
        if let Some(v) = canonical_u64(text) {
            return self.ints.get(v);
        }
        let h = self.hash(text);
        self.table
            .find(spread(h), |slot| slot.is(&self.texts, text, h))
            .map(|slot| slot.id)
    }

    /// How many ids were given out (ids are `0..len`).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// 32 bits of `text`'s hash.
    fn hash(&self, text: &str) -> u32 {
        self.hasher.hash_one(text) as u32
    }

    /// The text of `id`.
    pub fn name(&self, id: u32) -> String {
        match self.names.get(id as usize) {
            Some(Name::Int(v)) => v.to_string(),
            Some(Name::Text(at)) => self.texts.get(*at).to_string(),
            None => String::from("?"),
        }
    }

    /// The positions of `items` grouped by their process id, the groups in process
    /// name order (`self` interns the processes): `(name, positions in item order)`.
    pub fn grouped_by_name(&self, processes: impl Iterator<Item = u32>) -> Vec<(String, Vec<u32>)> {
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for (i, p) in processes.enumerate() {
            let p = p as usize;
            if groups.len() <= p {
                groups.resize_with(p + 1, Vec::new);
            }
            groups[p].push(i as u32);
        }
        let mut named: Vec<(String, Vec<u32>)> = groups
            .into_iter()
            .enumerate()
            .map(|(p, g)| (self.name(p as u32), g))
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        named
    }
}

/// `u64` → `u32` (below `u32::MAX`): keys below a bound that grows with the
/// entries (a few slots each, so its memory stays proportional to theirs) by
/// index, so the common small, dense numbers (op ids, counters) hash nothing and
/// touch memory in order; other keys hashed.
#[derive(Default)]
pub struct IntMap {
    /// By key: its value + 1, 0 for none.
    dense: Vec<u32>,
    sparse: Map<u64, u32>,
    len: u64,
}

/// [`IntMap`]'s dense part grows to at most this many slots per entry, plus
/// [`DENSE_SLACK`].
const DENSE_PER_ENTRY: u64 = 4;
const DENSE_SLACK: u64 = 4096;

impl IntMap {
    pub fn get(&self, key: u64) -> Option<u32> {
        match usize::try_from(key).ok().and_then(|i| self.dense.get(i)) {
            Some(0) => None,
            Some(v) => Some(v - 1),
            None => self.sparse.get(&key).copied(),
        }
    }

    /// The value of `key`; if it has none, it is given `value` and `None` is
    /// returned.
    pub fn get_or_insert(&mut self, key: u64, value: u32) -> Option<u32> {
        let bound = self
            .len
            .saturating_mul(DENSE_PER_ENTRY)
            .saturating_add(DENSE_SLACK);
        let len = self.dense.len() as u64;
        if key >= len && key < bound {
            self.grow((key + 1).max(len * 2).min(bound) as usize);
        }
        let found = match usize::try_from(key)
            .ok()
            .and_then(|i| self.dense.get_mut(i))
        {
            Some(slot) if *slot == 0 => {
                *slot = value + 1;
                None
            }
            Some(slot) => Some(*slot - 1),
            None => match self.sparse.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(value);
                    None
                }
            },
        };
        if found.is_none() {
            self.len += 1;
        }
        found
    }

    /// The dense part grown to `len` keys; hashed keys it now covers move into it,
    /// so that every key is looked up where it was noted.
    fn grow(&mut self, len: usize) {
        self.dense.resize(len, 0);
        let dense = &mut self.dense;
        self.sparse.retain(|&key, &mut value| {
            match usize::try_from(key).ok().and_then(|i| dense.get_mut(i)) {
                Some(slot) => {
                    *slot = value + 1;
                    false
                }
                None => true,
            }
        });
    }
}

/// `text` as the integer it is the canonical decimal form of (no sign, no leading
/// zero, at most 19 digits so it fits).
pub fn canonical_u64(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if b.is_empty() || b.len() > 19 || (b[0] == b'0' && b.len() > 1) {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(c - b'0');
    }
    Some(v)
}

/// Append-only texts (op ids) in one arena: one allocation per growth, not per text.
#[derive(Default)]
pub struct Texts {
    bytes: String,
    ends: Vec<u32>,
}

impl Texts {
    pub fn push(&mut self, text: &str) -> u32 {
        self.bytes.push_str(text);
        self.ends.push(self.bytes.len() as u32);
        self.ends.len() as u32 - 1
    }

    pub fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let start = i
            .checked_sub(1)
            .and_then(|j| self.ends.get(j))
            .map_or(0, |e| *e as usize);
        let end = self.ends.get(i).map_or(start, |e| *e as usize);
        self.bytes.get(start..end).unwrap_or("?")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys are found again wherever they were noted: in order, out of order, far
    /// ahead (hashed, then moved into the dense part as it grows past them).
    #[test]
    fn an_int_map_finds_every_key_where_it_was_noted() {
        let mut m = IntMap::default();
        let far = 3 * DENSE_SLACK;
        assert_eq!(m.get_or_insert(far, 1), None);
        assert_eq!(m.get_or_insert(u64::MAX, 2), None);
        assert!((m.dense.len() as u64) < far && m.sparse.len() == 2);
        for k in (0..2 * DENSE_SLACK).rev() {
            assert_eq!(m.get_or_insert(k, k as u32 + 10), None);
        }
        // A key past the dense part grows it (to twice its length) past `far`.
        assert_eq!(m.get_or_insert(far + 1, 3), None);
        assert!(m.dense.len() as u64 > far, "the dense part grew past {far}");
        assert_eq!(m.sparse.len(), 1, "{far} moved into the dense part");
        assert_eq!(m.get_or_insert(far, 99), Some(1));
        assert_eq!(m.get(far), Some(1));
        assert_eq!(m.get_or_insert(u64::MAX, 99), Some(2));
        assert_eq!(m.get_or_insert(5, 99), Some(15));
        assert_eq!(m.get(5), Some(15));
        assert_eq!(m.get(far + 2), None);
        assert_eq!(m.get_or_insert(0, 99), Some(10));
        assert_eq!(m.len, 2 * DENSE_SLACK + 3);
    }

    /// Ids are given in first-seen order, numbers and texts alike, and many texts
    /// (the table grown many times) are each found again.
    #[test]
    fn the_interner_gives_each_text_one_id() {
        let mut i = Interner::default();
        let texts: Vec<String> = (0..20_000)
            .map(|n| match n % 4 {
                0 => format!("{n}"),
                1 => format!("t{n}"),
                2 => format!("0{n}"),
                _ => format!("\"é{n}\""),
            })
            .collect();
        for (n, t) in texts.iter().enumerate() {
            assert_eq!(i.id(t), n as u32, "{t}");
        }
        for (n, t) in texts.iter().enumerate().rev() {
            assert_eq!(i.id(t), n as u32, "{t}");
            assert_eq!(i.get(t), Some(n as u32), "{t}");
            assert_eq!(i.name(n as u32), *t);
        }
        assert_eq!(i.get("t3"), None);
        assert_eq!(i.get("-1"), None);
        assert_eq!(i.name(texts.len() as u32), "?");
    }
}
