//! list-append: every txn appends unique values to lists and reads whole lists,
//! so the longest read of a key is its version order (every other read must be a
//! prefix of it) and every dependency can be inferred from it.
//!
//! Each read is compared with its key's order once; a read that is a prefix of
//! it (all of them, in a valid history) is judged from what is known per
//! position of the order — who appended the value there, whether a duplicate or
//! a value nobody (or a failed txn) appended comes at or before it — so the cost
//! is one slice comparison per read, not a lookup per element read.

use super::anomaly::{Found, Kind};
use super::graph::{DepGraph, RW, Reason, Step, Timing, WR, WW};
use super::history::Status;
use super::store::{F, FxMap, Mode, NONE, Store};
use super::{cycle_found, found};
use crate::oracle::checker::CheckerReport;
use crate::oracle::history::History;
use crate::oracle::params::Params;
use std::collections::HashSet;
use std::time::Instant;

pub const NAME: &str = "list-append";
pub const SCOPE: &str = "infers ww / wr / rw dependencies from list-append reads (each key's \
    longest read is its order); appends no read observed add no edge, and predicate \
    anomalies (G2 over predicates) are outside a key-value history";

/// Judge a list-append history.
pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
    super::judge(NAME, SCOPE, history, params, Mode::ListAppend, analyse)
}

/// Who appended a value to a key: the txn, and whether it was that txn's last
/// append to the key.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Writer(u32);

impl Writer {
    fn new(txn: usize, last: bool) -> Self {
        Writer((txn as u32) << 1 | u32::from(last))
    }
    fn txn(self) -> usize {
        (self.0 >> 1) as usize
    }
    fn last(self) -> bool {
        self.0 & 1 == 1
    }
}

/// One committed read of a list (nil: empty): `len` elements from `at` of the
/// store's elements (`NONE`: of the key's shared list).
#[derive(Clone, Copy)]
struct ReadOf {
    txn: u32,
    key: u32,
    at: u32,
    len: u32,
}

/// A key's version order, and what is known per position of it.
#[derive(Clone, Copy)]
struct Order {
    /// The longest read.
    read: u32,
    /// Where its positions begin in `State::at`.
    pos: u32,
    /// The shortest prefix with a value twice (`NONE`: none).
    dup_end: u32,
    /// The first position whose value nobody, or a failed txn, appended.
    bad: u32,
}

struct State<'a> {
    st: &'a Store,
    found: Vec<Found>,
    reads: Vec<ReadOf>,
    /// Per key: its order, if read.
    orders: Vec<Option<Order>>,
    /// Per position of every order: who appended the value there (`None`: nobody).
    at: Vec<Option<Writer>>,
}

/// The list `r` read.
fn slice<'a>(st: &'a Store, r: &ReadOf) -> &'a [u32] {
    st.slice(r.key, r.at, r.len)
}

impl<'a> State<'a> {
    fn list(&self, r: &ReadOf) -> &'a [u32] {
        slice(self.st, r)
    }

    fn order(&self, key: u32) -> Option<(&Order, &'a [u32])> {
        let o = self.orders.get(key as usize)?.as_ref()?;
        Some((o, self.list(&self.reads[o.read as usize])))
    }

    fn t(&self, i: usize) -> String {
        self.st.tname(i)
    }

    /// `T3 read key 1 as [4 5]`: how every explanation of a read begins.
    fn read(&self, r: &ReadOf) -> String {
        format!(
            "{} read key {} as {}",
            self.t(r.txn as usize),
            self.st.keys.name(r.key),
            self.st.show(self.list(r))
        )
    }

    fn push(&mut self, kind: Kind, txns: &[usize], text: String) {
        let ops = txns.iter().map(|&i| self.st.id(i).to_string()).collect();
        self.found.push(found(kind, ops, text));
    }
}

/// Every anomaly of a list-append history; `Err` when a value is appended to a
/// key twice or the deadline passes.
pub fn analyse(st: &Store, deadline: Instant) -> Result<Vec<Found>, String> {
    let failed = |w: Writer| st.txns[w.txn()].status == Status::Fail;
    let writers = writers(st)?;
    let mut s = State {
        st,
        found: Vec::new(),
        reads: Vec::new(),
        orders: vec![None; st.keys.len()],
        at: Vec::new(),
    };
    internal(&mut s);
    for (t, txn) in st.txns.iter().enumerate() {
        if txn.status != Status::Ok {
            continue;
        }
        for m in st.mops(t) {
            let (at, len) = match m.f {
                F::ReadList => (m.a, m.b),
                F::ReadNil => (NONE, 0),
                _ => continue,
            };
            s.reads.push(ReadOf {
                txn: t as u32,
                key: m.key,
                at,
                len,
            });
        }
    }
    // Each key's longest read (the first of equal length) is its order.
    for (i, r) in s.reads.iter().enumerate() {
        let slot = &mut s.orders[r.key as usize];
        let longer = slot.is_none_or(|o| r.len > s.reads[o.read as usize].len);
        if longer {
            *slot = Some(Order {
                read: i as u32,
                pos: 0,
                dup_end: NONE,
                bad: NONE,
            });
        }
    }
    // The key (+ 1) whose order last held each value: a value met twice in one
    // order is a duplicate.
    let mut met: Vec<u32> = vec![0; st.vals.len()];
    for key in 0..s.orders.len() {
        let Some(mut o) = s.orders[key] else {
            continue;
        };
        o.pos = s.at.len() as u32;
        let list = slice(st, &s.reads[o.read as usize]);
        for (i, &v) in list.iter().enumerate() {
            let w = writers.get(&pack(key as u32, v)).copied();
            if o.bad == NONE && w.is_none_or(failed) {
                o.bad = i as u32;
            }
            if let Some(m) = met.get_mut(v as usize) {
                if o.dup_end == NONE && *m == key as u32 + 1 {
                    o.dup_end = i as u32 + 1;
                }
                *m = key as u32 + 1;
            }
            s.at.push(w);
        }
        s.orders[key] = Some(o);
    }
    drop(met);
    // Is each read a prefix of its key's order? (Two prefixes of the key's
    // shared list are prefixes of one another.)
    let prefix: Vec<bool> = s
        .reads
        .iter()
        .map(|r| {
            s.order(r.key).is_some_and(|(o, order)| {
                let l = &s.reads[o.read as usize];
                if l.at == NONE && r.at == NONE {
                    r.len <= l.len
                } else {
                    order.starts_with(s.list(r))
                }
            })
        })
        .collect();
    for (i, &is_prefix) in prefix.iter().enumerate() {
        let r = s.reads[i];
        read_anomalies(&mut s, &writers, &r, is_prefix);
    }
    incompatible(&mut s, &prefix);
    drop(writers);
    let mut graph = DepGraph::new(st.len());
    let live = |w: Option<Writer>| w.filter(|&w| !failed(w));
    // Keys in order: the graph's edge order decides which cycle the search meets
    // first, and one history must always give the same report.
    for key in 0..s.orders.len() {
        let Some((o, order)) = s.order(key as u32) else {
            continue;
        };
        let at = &s.at[o.pos as usize..o.pos as usize + order.len()];
        for i in 1..order.len() {
            if let (Some(a), Some(b)) = (live(at[i - 1]), live(at[i])) {
                let reason = Reason {
                    key: key as u32,
                    a: order[i - 1],
                    b: order[i],
                };
                graph.add(a.txn(), b.txn(), WW, reason);
            }
        }
    }
    for (i, r) in s.reads.iter().enumerate() {
        let Some((o, order)) = s.order(r.key) else {
            continue;
        };
        if !prefix[i] {
            continue;
        }
        let at = |p: usize| s.at[o.pos as usize + p];
        let len = r.len as usize;
        if len > 0
            && let Some(w) = live(at(len - 1))
        {
            let reason = Reason {
                key: r.key,
                a: order[len - 1],
                b: 0,
            };
            graph.add(w.txn(), r.txn as usize, WR, reason);
        }
        if len < order.len()
            && let Some(w) = live(at(len))
        {
            let reason = Reason {
                key: r.key,
                a: len as u32,
                b: order[len],
            };
            graph.add(r.txn as usize, w.txn(), RW, reason);
        }
    }
    let ranks = st.process_ranks();
    graph.add_order(|i| {
        let t = &st.txns[i];
        Timing {
            process: ranks.get(t.process as usize).copied().unwrap_or(NONE),
            invoke: t.invoke,
            complete: t.complete,
            status: t.status,
        }
    });
    for (kind, steps) in graph.cycles(deadline)? {
        let text = |step: &Step| edge_text(&s, step);
        let f = cycle_found(kind, st, &steps, text);
        s.found.push(f);
    }
    Ok(s.found)
}

/// Txns with more micro-ops than this are looked at through a map, not pairwise.
const SMALL: usize = 32;

fn pack(key: u32, value: u32) -> u64 {
    u64::from(key) << 32 | u64::from(value)
}

/// Who appended each (key, value); `Err` if two txns (or one, twice) did.
fn writers(st: &Store) -> Result<FxMap<u64, Writer>, String> {
    let mut writers: FxMap<u64, Writer> = FxMap::default();
    writers.reserve(st.vals.len());
    let mut last_at: FxMap<u32, usize> = FxMap::default();
    for t in 0..st.len() {
        let mops = st.mops(t);
        if mops.len() > SMALL {
            last_at.clear();
            for (i, m) in mops.iter().enumerate() {
                if m.f == F::Append {
                    last_at.insert(m.key, i);
                }
            }
        }
        for (i, m) in mops.iter().enumerate() {
            if m.f != F::Append {
                continue;
            }
            let last = if mops.len() > SMALL {
                last_at.get(&m.key) == Some(&i)
            } else {
                !mops[i + 1..]
                    .iter()
                    .any(|n| n.f == F::Append && n.key == m.key)
            };
            if let Some(w) = writers.insert(pack(m.key, m.a), Writer::new(t, last)) {
                return Err(format!(
                    "{} and {} both append {} to key {}: list-append needs each value \
                     appended to a key once",
                    st.tname(w.txn()),
                    st.tname(t),
                    st.vals.name(m.a),
                    st.keys.name(m.key)
                ));
            }
        }
    }
    Ok(writers)
}

fn edge_text(s: &State, step: &Step) -> String {
    let st = s.st;
    let Some(r) = step.reason else {
        return String::new();
    };
    let key = st.keys.name(r.key);
    let (a, b) = (s.t(step.from), s.t(step.to));
    match step.kind {
        WW => format!(
            "key {key}'s order puts {a}'s append of {} right before {b}'s append of {}",
            st.vals.name(r.a),
            st.vals.name(r.b)
        ),
        WR => format!(
            "{b} read {a}'s append of {} to key {key}",
            st.vals.name(r.a)
        ),
        _ => {
            let prefix = s
                .order(r.key)
                .map(|(_, o)| &o[..(r.a as usize).min(o.len())])
                .unwrap_or_default();
            format!(
                "{a} read key {key} as {}, without {b}'s append of {}",
                st.show(prefix),
                st.vals.name(r.b)
            )
        }
    }
}

/// A committed txn's reads must agree with its own earlier reads and appends.
fn internal(s: &mut State) {
    let st = s.st;
    // Per key met in the txn: the whole list once read, else the appends so far
    // (the first `used` entries; their lists are reused from txn to txn).
    let mut known: Vec<(u32, bool, Vec<u32>)> = Vec::new();
    let mut used;
    let mut index: FxMap<u32, usize> = FxMap::default();
    for (t, txn) in st.txns.iter().enumerate() {
        if txn.status != Status::Ok {
            continue;
        }
        let mops = st.mops(t);
        let big = mops.len() > SMALL;
        // Only a key met twice in one txn can disagree with itself.
        let twice = big
            || mops
                .iter()
                .enumerate()
                .any(|(i, m)| mops[..i].iter().any(|n| n.key == m.key));
        if !twice {
            continue;
        }
        used = 0;
        index.clear();
        let mut slot = |known: &mut Vec<(u32, bool, Vec<u32>)>, used: &mut usize, key: u32| {
            let found = if big {
                index.get(&key).copied()
            } else {
                known[..*used].iter().position(|k| k.0 == key)
            };
            found.ok_or_else(|| {
                if *used == known.len() {
                    known.push((key, false, Vec::new()));
                }
                known[*used].0 = key;
                known[*used].1 = false;
                known[*used].2.clear();
                if big {
                    index.insert(key, *used);
                }
                *used += 1;
                *used - 1
            })
        };
        for m in mops {
            match m.f {
                F::Append => {
                    let at = slot(&mut known, &mut used, m.key).unwrap_or_else(|at| at);
                    known[at].2.push(m.a);
                }
                F::ReadList | F::ReadNil => {
                    let list = st.list(m);
                    let at = match slot(&mut known, &mut used, m.key) {
                        Ok(at) => {
                            let (_, whole, expect) = &known[at];
                            let ok = if *whole {
                                list == expect.as_slice()
                            } else {
                                list.ends_with(expect)
                            };
                            if !ok {
                                let text = format!(
                                    "{} read key {} as {}, but its own earlier reads and \
                                     appends make it {}{}",
                                    st.tname(t),
                                    st.keys.name(m.key),
                                    st.show(list),
                                    if *whole { "" } else { "end with " },
                                    st.show(expect)
                                );
                                s.push(Kind::Internal, &[t], text);
                            }
                            at
                        }
                        Err(at) => at,
                    };
                    known[at].1 = true;
                    known[at].2.clear();
                    known[at].2.extend_from_slice(list);
                }
                _ => {}
            }
        }
    }
}

/// Duplicates, garbage, aborted and intermediate reads of one read.
fn read_anomalies(s: &mut State, writers: &FxMap<u64, Writer>, r: &ReadOf, prefix: bool) {
    let st = s.st;
    let len = r.len as usize;
    // What is known per position of the order holds for a prefix of it.
    let known = if prefix {
        s.order(r.key).map(|(o, _)| *o)
    } else {
        None
    };
    let writer = |s: &State, i: usize, v: u32| match known {
        Some(o) => s.at[o.pos as usize + i],
        None => writers.get(&pack(r.key, v)).copied(),
    };
    if known.is_none_or(|o| o.dup_end != NONE && len >= o.dup_end as usize) {
        let mut sorted = s.list(r).to_vec();
        sorted.sort_unstable();
        let twice = sorted.windows(2).find(|p| p[0] == p[1]).map(|p| p[0]);
        if let Some(v) = twice {
            let text = format!("{}: {} appears more than once", s.read(r), st.vals.name(v));
            s.push(Kind::Duplicate, &[r.txn as usize], text);
        }
    }
    if known.is_none_or(|o| o.bad != NONE && len > o.bad as usize) {
        let key = st.keys.name(r.key);
        for i in 0..len {
            let v = s.list(r)[i];
            match writer(s, i, v) {
                None => {
                    let text = format!(
                        "{}: no txn appended {} to key {key}",
                        s.read(r),
                        st.vals.name(v)
                    );
                    s.push(Kind::GarbageRead, &[r.txn as usize], text);
                }
                Some(w) if st.txns[w.txn()].status == Status::Fail => {
                    let text = format!(
                        "{}, with {}'s append of {}, and {} failed",
                        s.read(r),
                        s.t(w.txn()),
                        st.vals.name(v),
                        s.t(w.txn())
                    );
                    s.push(Kind::G1a, &[w.txn(), r.txn as usize], text);
                }
                _ => {}
            }
        }
    }
    if len > 0 {
        let last = s.list(r)[len - 1];
        if let Some(w) = writer(s, len - 1, last)
            && !w.last()
            && w.txn() != r.txn as usize
            && st.txns[w.txn()].status != Status::Fail
        {
            let text = format!(
                "{}, ending on {}'s append of {}, which {} followed with another append to \
                 key {}",
                s.read(r),
                s.t(w.txn()),
                st.vals.name(last),
                s.t(w.txn()),
                st.keys.name(r.key)
            );
            s.push(Kind::G1b, &[w.txn(), r.txn as usize], text);
        }
    }
}

/// A read that is not a prefix of its key's order (the longest read) is an
/// incompatible order.
fn incompatible(s: &mut State, prefix: &[bool]) {
    let mut reported: HashSet<(u32, u32)> = HashSet::new();
    for (i, &is_prefix) in prefix.iter().enumerate() {
        let r = &s.reads[i];
        if is_prefix {
            continue;
        }
        let Some((o, order)) = s.order(r.key) else {
            continue;
        };
        if reported.insert((r.key, r.txn)) {
            let l = s.reads[o.read as usize];
            let text = format!(
                "{} and {} read it as {}: neither is a prefix of the other",
                s.read(r),
                s.t(l.txn as usize),
                s.st.show(order)
            );
            s.push(
                Kind::IncompatibleOrder,
                &[r.txn as usize, l.txn as usize],
                text,
            );
        }
    }
}
