//! The compact form the transactional checkers judge: every key and value
//! interned to a `u32` (in the order they first appear, so ids — and every
//! order that follows ids — are the same whichever reader filled the store),
//! every micro-op in one flat `Vec` (a txn owns the range from its `mops` to the
//! next txn's), every element of every list read in one flat `Vec`.
//!
//! Filled by [`Builder`], from a parsed [`History`] ([`from_history`]) or line by
//! line by the txn-jsonl reader (`super::read`). The builder knows which checker
//! will judge the store ([`Mode`]): a micro-op or a read the checker cannot judge
//! (`w` in list-append, a scalar read in list-append, a list read in rw-register)
//! stops the filling and is kept as the reason the check is unknown, as the
//! checkers always said it.

use super::history::{Status, parse_mops};
use super::show_list;
use crate::oracle::history::{History, Op};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// "No such id": a txn without a process, a key never seen, a read of nil.
pub const NONE: u32 = u32::MAX;

/// FxHash's multiply-and-rotate, finished with a 64-bit mix so that keys packed
/// as `(a << 32) | b` spread over the low bits hashbrown indexes by.
#[derive(Default, Clone, Copy)]
pub struct Fx(u64);

impl Fx {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h
    }
}

/// A `HashMap` with [`Fx`] hashing.
pub type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

/// A key or value as the history gave it; its printed form (what it is
/// interned by and how explanations show it) is the number's decimal digits,
/// the string itself, or the JSON text.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw<'a> {
    /// A non-negative JSON integer.
    Int(u64),
    /// A JSON string.
    Str(Cow<'a, str>),
    /// Any other JSON value, as its JSON text (a float, a negative number, a
    /// boolean; inside a list read, also null, a list or an object).
    Json(Cow<'a, str>),
}

impl Raw<'_> {
    /// The printed form: strings bare, anything else as JSON.
    pub fn printed(&self) -> Cow<'_, str> {
        match self {
            Raw::Int(v) => Cow::Owned(v.to_string()),
            Raw::Str(s) | Raw::Json(s) => Cow::Borrowed(s),
        }
    }

    /// The JSON text (strings quoted), as an error message shows a value.
    pub fn json(&self) -> String {
        match self {
            Raw::Int(v) => v.to_string(),
            Raw::Str(s) => Value::String(s.to_string()).to_string(),
            Raw::Json(s) => s.to_string(),
        }
    }

    /// The printed form of a JSON value (`history::printed`), without copying
    /// a string.
    pub fn of(v: &Value) -> Raw<'_> {
        match v {
            Value::String(s) => Raw::Str(Cow::Borrowed(s)),
            Value::Number(n) => match n.as_u64() {
                Some(u) => Raw::Int(u),
                None => Raw::Json(Cow::Owned(n.to_string())),
            },
            other => Raw::Json(Cow::Owned(other.to_string())),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Name {
    Int(u64),
    Text(u32),
}

/// The table of integers below it is dense (a `Vec` indexed by the integer)
/// while the integers seen stay within 8× their count: histories number their
/// values 1, 2, 3 …, and a dense lookup costs no hashing and no cache miss.
const DENSE_MAX: u64 = 1 << 26;

/// Printed forms ↔ `u32` ids, in the order first seen. A string that is a
/// non-negative integer's canonical decimal form is that integer (both print
/// alike, so both are one key or value, as they always were).
#[derive(Default)]
pub struct Interner {
    dense: Vec<u32>,
    ints: FxMap<u64, u32>,
    texts: FxMap<Box<str>, u32>,
    names: Vec<Name>,
    strings: Vec<Box<str>>,
}

impl Interner {
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn id(&mut self, raw: &Raw) -> u32 {
        match raw {
            Raw::Int(v) => self.int(*v),
            Raw::Str(s) | Raw::Json(s) => self.text(s),
        }
    }

    fn int(&mut self, v: u64) -> u32 {
        let slot = usize::try_from(v).ok();
        if let Some(&id) = slot.and_then(|i| self.dense.get(i))
            && id != NONE
        {
            return id;
        }
        if !self.ints.is_empty()
            && let Some(&id) = self.ints.get(&v)
        {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(Name::Int(v));
        let bound = 8 * self.names.len() as u64 + 65_536;
        if let Some(i) = slot {
            if i >= self.dense.len() && v < DENSE_MAX && v < bound {
                let size = (i + 1).next_power_of_two().max(1024);
                self.dense.resize(size, NONE);
            }
            if let Some(cell) = self.dense.get_mut(i) {
                *cell = id;
                return id;
            }
        }
        self.ints.insert(v, id);
        id
    }

    fn text(&mut self, s: &str) -> u32 {
        if let Some(v) = canonical_u64(s) {
            return self.int(v);
        }
        if let Some(&id) = self.texts.get(s) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(Name::Text(self.strings.len() as u32));
        self.strings.push(s.into());
        self.texts.insert(s.into(), id);
        id
    }

    /// The id of a printed form already seen.
    pub fn get(&self, printed: &str) -> Option<u32> {
        match canonical_u64(printed) {
            Some(v) => usize::try_from(v)
                .ok()
                .and_then(|i| self.dense.get(i))
                .copied()
                .filter(|&id| id != NONE)
                .or_else(|| self.ints.get(&v).copied()),
            None => self.texts.get(printed).copied(),
        }
    }

    /// The printed form of `id` (`?` for an id never given out).
    pub fn name(&self, id: u32) -> Cow<'_, str> {
        match self.names.get(id as usize) {
            Some(Name::Int(v)) => Cow::Owned(v.to_string()),
            Some(Name::Text(i)) => self
                .strings
                .get(*i as usize)
                .map_or(Cow::Borrowed("?"), |s| Cow::Borrowed(&**s)),
            None => Cow::Borrowed("?"),
        }
    }
}

/// `s` as a u64 if it is one's canonical decimal form (no sign, no leading zero).
pub(crate) fn canonical_u64(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let digits = !b.is_empty() && b.len() <= 20 && b.iter().all(u8::is_ascii_digit);
    if digits && (b.len() == 1 || b[0] != b'0') {
        s.parse().ok()
    } else {
        None
    }
}

/// Which checker the store is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    ListAppend,
    RwRegister,
}

/// What a micro-op is, with what its read saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F {
    /// `a`: the value appended.
    Append,
    /// `a`: the value written.
    Write,
    /// A committed read of a list of `b` elements: `elems[a .. a + b]`, or
    /// (`a` = `NONE`) the first `b` of the key's shared list.
    ReadList,
    /// A committed read of nil.
    ReadNil,
    /// A committed read of one value: `a`.
    ReadValue,
    /// A read whose result is not known (the txn did not commit, or may not
    /// have): `a` indexes the text a figure shows for it, `NONE` for nil.
    ReadUnknown,
}

/// One micro-op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mop {
    pub f: F,
    pub key: u32,
    pub a: u32,
    pub b: u32,
}

/// One transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Txn {
    pub invoke: u64,
    /// Its completion; `None` for a txn that never completed (`info`).
    pub complete: Option<u64>,
    /// Its process's id, `NONE` when the history records none.
    pub process: u32,
    /// Where its micro-ops begin in [`Store::mops`].
    pub mops: u32,
    pub status: Status,
}

/// The transactions of one history, compact.
#[derive(Default)]
pub struct Store {
    pub txns: Vec<Txn>,
    id_text: String,
    id_ends: Vec<usize>,
    processes: Vec<Box<str>>,
    process_ids: FxMap<Box<str>, u32>,
    pub keys: Interner,
    pub vals: Interner,
    pub mops: Vec<Mop>,
    pub elems: Vec<u32>,
    /// Per key: the longest list read so far of which every read stored as a
    /// prefix is one (list reads mostly extend one another: each is kept once).
    shared: Vec<Vec<u32>>,
    unknown: Vec<Box<str>>,
    /// Every op in the history (txns and others): coverage's denominator.
    pub produced: u64,
    /// Txns read (also those after a micro-op the checker cannot judge).
    pub txn_count: u64,
    /// Txns without a process, of `txn_count`.
    pub without_process: u64,
}

impl Store {
    pub fn len(&self) -> usize {
        self.txns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.txns.is_empty()
    }

    /// Txn `i`'s op id.
    pub fn id(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.id_ends[i - 1] };
        self.id_text.get(start..self.id_ends[i]).unwrap_or("?")
    }

    /// Txn `i`'s name in explanations: `T<op id>`.
    pub fn tname(&self, i: usize) -> String {
        format!("T{}", self.id(i))
    }

    /// Txn `i`'s process, empty when not recorded.
    pub fn process(&self, i: usize) -> &str {
        self.processes
            .get(self.txns[i].process as usize)
            .map_or("", |p| &**p)
    }

    /// Rank of each process id by name (the order process edges are added in).
    pub fn process_ranks(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = (0..self.processes.len() as u32).collect();
        ids.sort_unstable_by(|&a, &b| self.processes[a as usize].cmp(&self.processes[b as usize]));
        let mut rank = vec![0; ids.len()];
        for (r, id) in ids.into_iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        rank
    }

    /// Txn `i`'s micro-ops.
    pub fn mops(&self, i: usize) -> &[Mop] {
        let start = self.txns[i].mops as usize;
        let end = self
            .txns
            .get(i + 1)
            .map_or(self.mops.len(), |t| t.mops as usize);
        &self.mops[start..end]
    }

    /// The list a [`F::ReadList`] read (empty for anything else).
    pub fn list(&self, m: &Mop) -> &[u32] {
        match m.f {
            F::ReadList => self.slice(m.key, m.a, m.b),
            _ => &[],
        }
    }

    /// `len` elements from `at` (`NONE`: of `key`'s shared list).
    pub fn slice(&self, key: u32, at: u32, len: u32) -> &[u32] {
        if at == NONE {
            self.shared
                .get(key as usize)
                .map_or(&[][..], |l| l.get(..len as usize).unwrap_or_default())
        } else {
            self.elems
                .get(at as usize..at as usize + len as usize)
                .unwrap_or_default()
        }
    }

    /// A list as explanations print it: `[1 2 3]`, the last 8 elements at most
    /// (as [`show_list`] prints it).
    pub fn show(&self, list: &[u32]) -> String {
        let skip = list.len().saturating_sub(8);
        let mut out = String::from("[");
        if skip > 0 {
            out.push_str("… ");
        }
        for (i, &v) in list[skip..].iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&self.vals.name(v));
        }
        out.push(']');
        out
    }

    /// A micro-op as a figure prints it: `append 1 3`, `w 2 5`, `r 1 [3 4]`.
    pub fn mop_text(&self, m: &Mop) -> String {
        let key = self.keys.name(m.key);
        match m.f {
            F::Append => format!("append {key} {}", self.vals.name(m.a)),
            F::Write => format!("w {key} {}", self.vals.name(m.a)),
            F::ReadList => format!("r {key} {}", self.show(self.list(m))),
            F::ReadNil => format!("r {key} nil"),
            F::ReadValue => format!("r {key} {}", self.vals.name(m.a)),
            F::ReadUnknown => {
                let shown = self.unknown.get(m.a as usize).map_or("nil", |s| &**s);
                format!("r {key} {shown}")
            }
        }
    }
}

/// What a micro-op does, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawF {
    Append,
    Write,
    Read,
}

/// The value of a micro-op, as read.
#[derive(Debug, Clone, PartialEq)]
pub enum RawVal<'a> {
    Scalar(Raw<'a>),
    Nil,
    /// A list: `len` elements from `start` of the txn's elements.
    List {
        start: usize,
        len: usize,
    },
    /// A JSON object, as its JSON text.
    Object(Cow<'a, str>),
}

/// One txn's micro-ops as a reader holds them.
pub trait RawMops {
    fn count(&self) -> usize;
    /// Micro-op `i`: what it does, its key, its value.
    fn mop(&self, i: usize) -> (RawF, Raw<'_>, RawVal<'_>);
    /// Element `i` of the txn's list reads.
    fn elem(&self, i: usize) -> Raw<'_>;
}

/// Fills a [`Store`] one txn at a time.
pub struct Builder {
    store: Store,
    /// One list read's elements, before they are stored.
    read: Vec<u32>,
    mode: Mode,
    /// Why the checker cannot judge the history (the first txn it cannot read).
    refused: Option<String>,
}

/// The store, or why the checker cannot judge it (then the store holds the txn
/// counts only).
pub type Built = (Store, Option<String>);

impl Builder {
    pub fn new(mode: Mode) -> Self {
        Builder {
            store: Store::default(),
            read: Vec::new(),
            mode,
            refused: None,
        }
    }

    /// Count one op of the history that is not a txn (coverage).
    pub fn other_op(&mut self) {
        self.store.produced += 1;
    }

    /// Add one txn. Nothing is stored once a txn was refused (its reason is
    /// the check's answer), but txns are still counted.
    pub fn push(
        &mut self,
        id: &str,
        process: &str,
        invoke: u64,
        complete: Option<u64>,
        status: Status,
        mops: &impl RawMops,
    ) {
        let st = &mut self.store;
        st.produced += 1;
        st.txn_count += 1;
        if process.is_empty() {
            st.without_process += 1;
        }
        if self.refused.is_some() {
            return;
        }
        if let Some(reason) = refusal(self.mode, id, status, mops) {
            self.refused = Some(reason);
            return;
        }
        let limit = (u32::MAX - 1) as usize;
        let big = st.txns.len() >= limit / 2
            || st.mops.len() + mops.count() >= limit
            || st.elems.len() >= limit
            || st.keys.len() >= limit
            || st.vals.len() >= limit;
        if big {
            self.refused = Some(
                "the history is too large for the transactional checkers (more than 2^31 \
                 txns, or 2^32 micro-ops, elements read, keys or values)"
                    .into(),
            );
            return;
        }
        st.id_text.push_str(id);
        st.id_ends.push(st.id_text.len());
        let process = if process.is_empty() {
            NONE
        } else if let Some(&p) = st.process_ids.get(process) {
            p
        } else {
            let p = st.processes.len() as u32;
            st.processes.push(process.into());
            st.process_ids.insert(process.into(), p);
            p
        };
        st.txns.push(Txn {
            invoke,
            complete,
            process,
            mops: st.mops.len() as u32,
            status,
        });
        let committed = status == Status::Ok;
        for i in 0..mops.count() {
            let (f, key, value) = mops.mop(i);
            let key = st.keys.id(&key);
            let mop = match (f, value) {
                (RawF::Append | RawF::Write, RawVal::Scalar(v)) => Mop {
                    f: if f == RawF::Append {
                        F::Append
                    } else {
                        F::Write
                    },
                    key,
                    a: st.vals.id(&v),
                    b: 0,
                },
                (RawF::Read, value) if !committed => {
                    let a = match value {
                        RawVal::Nil => NONE,
                        other => {
                            st.unknown.push(shown(&other, mops).into());
                            (st.unknown.len() - 1) as u32
                        }
                    };
                    Mop {
                        f: F::ReadUnknown,
                        key,
                        a,
                        b: 0,
                    }
                }
                (RawF::Read, RawVal::Nil) => Mop {
                    f: F::ReadNil,
                    key,
                    a: NONE,
                    b: 0,
                },
                (RawF::Read, RawVal::Scalar(v)) => Mop {
                    f: F::ReadValue,
                    key,
                    a: st.vals.id(&v),
                    b: 0,
                },
                (RawF::Read, RawVal::List { start, len }) => {
                    let read = &mut self.read;
                    read.clear();
                    for j in start..start + len {
                        read.push(st.vals.id(&mops.elem(j)));
                    }
                    if st.shared.len() <= key as usize {
                        st.shared.resize_with(key as usize + 1, Vec::new);
                    }
                    let shared = &mut st.shared[key as usize];
                    let at = if shared.starts_with(read) {
                        NONE
                    } else if read.starts_with(shared) {
                        shared.extend_from_slice(&read[shared.len()..]);
                        NONE
                    } else {
                        let at = st.elems.len() as u32;
                        st.elems.extend_from_slice(read);
                        at
                    };
                    Mop {
                        f: F::ReadList,
                        key,
                        a: at,
                        b: len as u32,
                    }
                }
                // Refused above: an object read, a non-scalar append / write.
                (_, _) => continue,
            };
            st.mops.push(mop);
        }
    }

    pub fn finish(self) -> Built {
        (self.store, self.refused)
    }
}

/// Why `mode`'s checker cannot judge this txn, if it cannot (the messages the
/// checkers always gave).
fn refusal(mode: Mode, id: &str, status: Status, mops: &impl RawMops) -> Option<String> {
    for i in 0..mops.count() {
        let (f, key, value) = mops.mop(i);
        let key = Printed(&key);
        match (mode, f) {
            (Mode::ListAppend, RawF::Write) => {
                return Some(format!(
                    "op {id}: [\"w\", {key}, …] in a list-append history (use rw-register)"
                ));
            }
            (Mode::RwRegister, RawF::Append) => {
                return Some(format!(
                    "op {id}: [\"append\", {key}, …] in a rw-register history (use list-append)"
                ));
            }
            (_, RawF::Read) if status != Status::Ok => {}
            (Mode::ListAppend, RawF::Read) => {
                let got = match &value {
                    RawVal::Nil | RawVal::List { .. } => continue,
                    RawVal::Scalar(v) => v.json(),
                    RawVal::Object(text) => text.to_string(),
                };
                return Some(format!(
                    "op {id}: read of key {key}: expected a list (or nil), got {got}"
                ));
            }
            (Mode::RwRegister, RawF::Read) => {
                let got = match &value {
                    RawVal::Nil | RawVal::Scalar(_) => continue,
                    RawVal::List { start, len } => {
                        let items: Vec<String> =
                            (*start..start + len).map(|j| mops.elem(j).json()).collect();
                        format!("[{}]", items.join(","))
                    }
                    RawVal::Object(text) => text.to_string(),
                };
                return Some(format!(
                    "op {id}: read of key {key}: expected one value (or nil), got {got}"
                ));
            }
            _ => {}
        }
    }
    None
}

/// A key's printed form, formatted only when a message needs it.
struct Printed<'a, 'b>(&'a Raw<'b>);

impl std::fmt::Display for Printed<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Raw::Int(v) => write!(f, "{v}"),
            Raw::Str(s) | Raw::Json(s) => f.write_str(s),
        }
    }
}

/// What a figure shows for a read whose result is not known: `[1 2]`, `5`, `nil`.
fn shown(value: &RawVal, mops: &impl RawMops) -> String {
    match value {
        RawVal::Nil => "nil".into(),
        RawVal::Scalar(v) => v.printed().into_owned(),
        RawVal::List { start, len } => {
            let items: Vec<Raw> = (*start..start + len).map(|j| mops.elem(j)).collect();
            let printed: Vec<Cow<str>> = items.iter().map(Raw::printed).collect();
            show_list(&printed.iter().map(|p| &**p).collect::<Vec<_>>())
        }
        RawVal::Object(text) => text.to_string(),
    }
}

/// A txn's micro-ops in a JSON value, checked as `parse_mops` checks them.
pub struct ValueMops<'a> {
    mops: Vec<(RawF, Raw<'a>, RawVal<'a>)>,
    elems: Vec<Raw<'a>>,
}

impl<'a> ValueMops<'a> {
    /// `None` when `value` is not a list of micro-ops (`parse_mops` says why).
    pub fn of(value: &'a Value) -> Option<Self> {
        let Value::Array(items) = value else {
            return None;
        };
        let mut out = ValueMops {
            mops: Vec::with_capacity(items.len()),
            elems: Vec::new(),
        };
        for item in items {
            let Value::Array(parts) = item else {
                return None;
            };
            let [f, k, v] = parts.as_slice() else {
                return None;
            };
            let key = match k {
                Value::String(_) | Value::Number(_) | Value::Bool(_) => Raw::of(k),
                _ => return None,
            };
            let scalar = |v: &'a Value| match v {
                Value::String(_) | Value::Number(_) | Value::Bool(_) => Some(Raw::of(v)),
                _ => None,
            };
            let mop = match f.as_str()? {
                "append" => (RawF::Append, key, RawVal::Scalar(scalar(v)?)),
                "w" | "write" => (RawF::Write, key, RawVal::Scalar(scalar(v)?)),
                "r" | "read" => {
                    let value = match v {
                        Value::Null => RawVal::Nil,
                        Value::Array(list) => {
                            let start = out.elems.len();
                            out.elems.extend(list.iter().map(Raw::of));
                            RawVal::List {
                                start,
                                len: list.len(),
                            }
                        }
                        Value::Object(_) => RawVal::Object(Cow::Owned(v.to_string())),
                        scalar => RawVal::Scalar(Raw::of(scalar)),
                    };
                    (RawF::Read, key, value)
                }
                _ => return None,
            };
            out.mops.push(mop);
        }
        Some(out)
    }
}

impl RawMops for ValueMops<'_> {
    fn count(&self) -> usize {
        self.mops.len()
    }

    fn mop(&self, i: usize) -> (RawF, Raw<'_>, RawVal<'_>) {
        let (f, k, v) = &self.mops[i];
        (*f, k.clone(), v.clone())
    }

    fn elem(&self, i: usize) -> Raw<'_> {
        self.elems[i].clone()
    }
}

/// Add one op of a parsed history: a `txn` op as a txn (its micro-ops from its
/// completion when it committed, else from its invoke), anything else counted.
/// `Err` names the source, the op and the field.
pub fn push_op(builder: &mut Builder, source: &str, op: &Op) -> Result<(), String> {
    if op.op_type != "txn" {
        builder.other_op();
        return Ok(());
    }
    let status = if op.is_acked() {
        Status::Ok
    } else if op.is_failed() {
        Status::Fail
    } else {
        Status::Info
    };
    // An ok txn's completion carries the reads; without one, its invoke.
    let (field, value) = match (status, &op.output) {
        (Status::Ok, Value::Array(_)) => ("output", &op.output),
        _ => ("input", &op.input),
    };
    let Some(mops) = ValueMops::of(value) else {
        let why = parse_mops(value).err().unwrap_or_default();
        return Err(format!("{source}: op {}: field `{field}`{why}", op.op_id));
    };
    builder.push(
        &op.op_id,
        &op.process,
        op.invoke_ts,
        op.complete_ts,
        status,
        &mops,
    );
    Ok(())
}

/// The transactions of `history` (ops whose `op_type` is `txn`; others are left
/// unjudged), for `mode`'s checker. `Err` names the source, the op and the field.
pub fn from_history(history: &History, mode: Mode) -> Result<Built, String> {
    let mut builder = Builder::new(mode);
    for op in &history.ops {
        push_op(&mut builder, &history.source, op)?;
    }
    Ok(builder.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_forms_intern_alike_and_ids_follow_first_sight() {
        let mut i = Interner::default();
        let five = i.id(&Raw::Int(5));
        assert_eq!(i.id(&Raw::Str("5".into())), five, "\"5\" prints as 5");
        let padded = i.id(&Raw::Str("05".into()));
        assert_ne!(padded, five);
        let big = i.id(&Raw::Int(u64::MAX));
        let float = i.id(&Raw::Json("1.5".into()));
        assert_eq!((five, padded, big, float), (0, 1, 2, 3));
        assert_eq!(i.name(big), u64::MAX.to_string());
        assert_eq!(i.name(padded), "05");
        assert_eq!(i.get("18446744073709551615"), Some(big));
        // A value far beyond the dense table, then the table grown past it.
        let far = i.id(&Raw::Int(1_000_000));
        for v in 0..200_000 {
            i.id(&Raw::Int(v));
        }
        assert_eq!(i.id(&Raw::Int(1_000_000)), far);
        assert_eq!(i.get("1000000"), Some(far));
    }
}
