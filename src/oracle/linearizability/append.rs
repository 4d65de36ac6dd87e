//! Values made by appends during a search. An append's result is the text of
//! the key's value followed by the appended text; most such strings are also
//! what some read returned (so they already have a code), the rest get codes
//! of their own, past the interner's, local to one partition's search.

use super::compile::{Interner, MixHasher, NIL, Val};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

type MixMap<K> = HashMap<K, Val, BuildHasherDefault<MixHasher>>;

/// The append table of one search.
pub struct Concat<'a> {
    values: &'a Interner,
    /// (value, appended value) → result: each concatenation is built once.
    memo: MixMap<(Val, Val)>,
    /// (value, value read) → whether the first's text begins the second's.
    prefixes: HashMap<(Val, Val), bool, BuildHasherDefault<MixHasher>>,
    /// Strings no op names, by text, and their texts by local index.
    made: MixMap<String>,
    made_texts: Vec<String>,
}

impl<'a> Concat<'a> {
    pub fn new(values: &'a Interner) -> Self {
        Concat {
            values,
            memo: MixMap::default(),
            prefixes: HashMap::default(),
            made: MixMap::default(),
            made_texts: Vec::new(),
        }
    }

    /// The code of `state`'s text followed by `suffix`'s.
    pub fn append(&mut self, state: Val, suffix: Val) -> Val {
        if let Some(code) = self.memo.get(&(state, suffix)) {
            return *code;
        }
        let mut text = self.text(state);
        text.push_str(&self.text(suffix));
        let code = self.code_of(text);
        self.memo.insert((state, suffix), code);
        code
    }

    /// Whether `state`'s text begins `target`'s: appends alone can turn the
    /// one into the other only then.
    pub fn is_prefix(&mut self, state: Val, target: Val) -> bool {
        if state == target || state == NIL {
            return true;
        }
        if let Some(known) = self.prefixes.get(&(state, target)) {
            return *known;
        }
        let answer = self.text(target).starts_with(&self.text(state));
        self.prefixes.insert((state, target), answer);
        answer
    }

    /// Index into `made_texts` of a code made here.
    fn made_index(&self, v: Val) -> Option<usize> {
        (v & 1 == 1)
            .then_some((v >> 1) as usize)
            .and_then(|id| id.checked_sub(self.values.count()))
    }

    fn text(&self, v: Val) -> String {
        match self.made_index(v) {
            // Codes come from the interner or from here; "?" like the interner's
            // name of an unknown code.
            Some(i) => self
                .made_texts
                .get(i)
                .map_or_else(|| "?".into(), String::clone),
            None => self.values.text(v),
        }
    }

    fn code_of(&mut self, text: String) -> Val {
        // The kv model's unset key and "" are one value.
        if text.is_empty() {
            return NIL;
        }
        if let Some(code) = self.values.find_string(&text) {
            return code;
        }
        if let Some(code) = self.made.get(&text) {
            return *code;
        }
        let code = (((self.values.count() + self.made_texts.len()) as u64) << 1) | 1;
        self.made_texts.push(text.clone());
        self.made.insert(text, code);
        code
    }

    /// The JSON text of a value, made here or interned.
    pub fn name(&self, v: Val) -> String {
        match self.made_index(v) {
            Some(_) => serde_json::Value::String(self.text(v)).to_string(),
            None => self.values.name(v),
        }
    }
}
