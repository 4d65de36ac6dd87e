//! Strings as `u32` ids for the streaming checkers: keys, values (their canonical
//! JSON text) and processes interned, op ids kept once in one arena.

use std::collections::HashMap;

/// foldhash: a fast hasher for short strings and integers (ids are not chosen by
/// an attacker who gains from collisions beyond a slower check).
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Texts ↔ ids, in the order first seen. A text that is a non-negative integer's
/// canonical decimal form is looked up as the integer (no string hashed or kept).
#[derive(Default)]
pub struct Interner {
    ints: Map<u64, u32>,
    texts: Map<Box<str>, u32>,
    names: Vec<Name>,
}

enum Name {
    Int(u64),
    Text(Box<str>),
}

impl Interner {
    /// The id of `text`, given out now if it is new.
    pub fn id(&mut self, text: &str) -> u32 {
        let next = self.names.len() as u32;
        if let Some(v) = canonical_u64(text) {
            let id = *self.ints.entry(v).or_insert(next);
            if id == next {
                self.names.push(Name::Int(v));
            }
            return id;
        }
        if let Some(&id) = self.texts.get(text) {
            return id;
        }
        self.texts.insert(text.into(), next);
        self.names.push(Name::Text(text.into()));
        next
    }

    /// The id of a text already seen.
    pub fn get(&self, text: &str) -> Option<u32> {
        match canonical_u64(text) {
            Some(v) => self.ints.get(&v).copied(),
            None => self.texts.get(text).copied(),
        }
    }

    /// The text of `id`.
    pub fn name(&self, id: u32) -> String {
        match self.names.get(id as usize) {
            Some(Name::Int(v)) => v.to_string(),
            Some(Name::Text(s)) => s.to_string(),
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
