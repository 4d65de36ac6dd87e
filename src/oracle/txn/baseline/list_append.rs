//! The baseline list-append checker (see `super`): as before issue 33.

use super::graph::DepGraph;
use super::{cycle_found, found, show_list, tname};
use crate::oracle::checker::CheckerReport;
use crate::oracle::history::History;
use crate::oracle::params::Params;
use crate::oracle::txn::anomaly::{Found, Kind};
use crate::oracle::txn::graph::{RW, Reason, Step, WR, WW};
use crate::oracle::txn::history::{Mop, Status, Txn, printed};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Instant;

pub const NAME: &str = "list-append";
pub const SCOPE: &str = "infers ww / wr / rw dependencies from list-append reads (each key's \
    longest read is its order); appends no read observed add no edge, and predicate \
    anomalies (G2 over predicates) are outside a key-value history";

/// Judge a list-append history.
pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
    super::judge(NAME, SCOPE, history, params, analyse)
}

/// Strings ↔ small ids.
#[derive(Default)]
pub struct Interner {
    ids: HashMap<String, u32>,
    pub names: Vec<String>,
}

impl Interner {
    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(s.to_string(), id);
        self.names.push(s.to_string());
        id
    }

    pub fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("?", String::as_str)
    }
}

enum P {
    Append(u32, u32),
    Read(u32, Option<Vec<u32>>),
}

struct ReadOf {
    txn: usize,
    key: u32,
    list: Vec<u32>,
}

#[derive(Clone, Copy)]
struct Writer {
    txn: usize,
    /// Its txn's last append to that key.
    last: bool,
}

struct State<'a> {
    txns: &'a [Txn],
    keys: Interner,
    vals: Interner,
    found: Vec<Found>,
}

impl State<'_> {
    fn list(&self, list: &[u32]) -> String {
        let names: Vec<&str> = list.iter().map(|&v| self.vals.name(v)).collect();
        show_list(&names)
    }

    fn t(&self, i: usize) -> String {
        tname(&self.txns[i])
    }

    /// `T3 read key 1 as [4 5]`: how every explanation of a read begins.
    fn read(&self, r: &ReadOf) -> String {
        format!(
            "{} read key {} as {}",
            self.t(r.txn),
            self.keys.name(r.key),
            self.list(&r.list)
        )
    }

    fn push(&mut self, kind: Kind, txns: &[usize], text: String) {
        let ops = txns.iter().map(|&i| self.txns[i].id.clone()).collect();
        self.found.push(found(kind, ops, text));
    }
}

/// Every anomaly of a list-append history; `Err` on a malformed read or when the
/// deadline passes.
pub fn analyse(txns: &[Txn], deadline: Instant) -> Result<Vec<Found>, String> {
    let mut st = State {
        txns,
        keys: Interner::default(),
        vals: Interner::default(),
        found: Vec::new(),
    };
    let parsed = parse(&mut st)?;
    let mut writers: HashMap<(u32, u32), Writer> = HashMap::new();
    for (t, mops) in parsed.iter().enumerate() {
        let mut last_index: HashMap<u32, usize> = HashMap::new();
        for (i, m) in mops.iter().enumerate() {
            if let P::Append(k, _) = m {
                last_index.insert(*k, i);
            }
        }
        for (i, m) in mops.iter().enumerate() {
            if let P::Append(k, v) = *m {
                let last = last_index.get(&k) == Some(&i);
                if let Some(w) = writers.insert((k, v), Writer { txn: t, last }) {
                    return Err(format!(
                        "{} and {} both append {} to key {}: list-append needs each value \
                         appended to a key once",
                        st.t(w.txn),
                        st.t(t),
                        st.vals.name(v),
                        st.keys.name(k)
                    ));
                }
            }
        }
    }
    internal(&mut st, &parsed);
    let mut reads: Vec<ReadOf> = Vec::new();
    for (t, mops) in parsed.into_iter().enumerate() {
        for m in mops {
            if let P::Read(key, Some(list)) = m {
                reads.push(ReadOf { txn: t, key, list });
            }
        }
    }
    for r in &reads {
        read_anomalies(&mut st, &writers, r);
    }
    let orders = version_orders(&mut st, &reads);
    let mut graph = DepGraph::new(txns.len());
    let live = |w: Option<&Writer>| w.filter(|w| txns[w.txn].status != Status::Fail).copied();
    // Keys in order: the graph's edge order decides which cycle the search meets
    // first, and one history must always give the same report.
    let mut keys: Vec<u32> = orders.keys().copied().collect();
    keys.sort_unstable();
    for key in keys {
        let Some((order, _)) = orders.get(&key) else {
            continue;
        };
        for pair in order.windows(2) {
            if let (Some(a), Some(b)) = (
                live(writers.get(&(key, pair[0]))),
                live(writers.get(&(key, pair[1]))),
            ) {
                let reason = Reason {
                    key,
                    a: pair[0],
                    b: pair[1],
                };
                graph.add(a.txn, b.txn, WW, reason);
            }
        }
    }
    for r in &reads {
        let Some((order, _)) = orders.get(&r.key) else {
            continue;
        };
        if !order.starts_with(&r.list) {
            continue;
        }
        if let Some(&last) = r.list.last()
            && let Some(w) = live(writers.get(&(r.key, last)))
        {
            let reason = Reason {
                key: r.key,
                a: last,
                b: 0,
            };
            graph.add(w.txn, r.txn, WR, reason);
        }
        if let Some(&next) = order.get(r.list.len())
            && let Some(w) = live(writers.get(&(r.key, next)))
        {
            let reason = Reason {
                key: r.key,
                a: r.list.len() as u32,
                b: next,
            };
            graph.add(r.txn, w.txn, RW, reason);
        }
    }
    graph.add_order(txns);
    for (kind, steps) in graph.cycles(deadline)? {
        let text = |s: &Step| edge_text(&st, &orders, s);
        let f = cycle_found(kind, txns, &steps, text);
        st.found.push(f);
    }
    Ok(st.found)
}

fn edge_text(st: &State, orders: &HashMap<u32, (Vec<u32>, usize)>, s: &Step) -> String {
    let Some(r) = s.reason else {
        return String::new();
    };
    let key = st.keys.name(r.key);
    let (a, b) = (st.t(s.from), st.t(s.to));
    match s.kind {
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
            let prefix = orders
                .get(&r.key)
                .map(|(o, _)| &o[..(r.a as usize).min(o.len())])
                .unwrap_or_default();
            format!(
                "{a} read key {key} as {}, without {b}'s append of {}",
                st.list(prefix),
                st.vals.name(r.b)
            )
        }
    }
}

fn parse(st: &mut State) -> Result<Vec<Vec<P>>, String> {
    let txns = st.txns;
    txns.iter()
        .map(|t| {
            t.mops
                .iter()
                .map(|m| match m {
                    Mop::Append { key, value } => Ok(P::Append(st.keys.id(key), st.vals.id(value))),
                    Mop::Read { key, value } => {
                        let k = st.keys.id(key);
                        if t.status != Status::Ok {
                            return Ok(P::Read(k, None));
                        }
                        match value {
                            // An ok read of nil: the key does not exist yet.
                            Value::Null => Ok(P::Read(k, Some(Vec::new()))),
                            Value::Array(items) => Ok(P::Read(
                                k,
                                Some(items.iter().map(|v| st.vals.id(&printed(v))).collect()),
                            )),
                            other => Err(format!(
                                "op {}: read of key {key}: expected a list (or nil), got {other}",
                                t.id
                            )),
                        }
                    }
                    Mop::Write { key, .. } => Err(format!(
                        "op {}: [\"w\", {key}, …] in a list-append history (use rw-register)",
                        t.id
                    )),
                })
                .collect()
        })
        .collect()
}

/// A committed txn's reads must agree with its own earlier reads and appends.
fn internal(st: &mut State, parsed: &[Vec<P>]) {
    for (t, mops) in parsed.iter().enumerate() {
        if st.txns[t].status != Status::Ok {
            continue;
        }
        // Per key: the whole list once read, else the appends so far.
        let mut known: HashMap<u32, (bool, Vec<u32>)> = HashMap::new();
        for m in mops {
            match m {
                P::Append(k, v) => known.entry(*k).or_default().1.push(*v),
                P::Read(k, Some(list)) => {
                    if let Some((whole, expect)) = known.get(k) {
                        let ok = if *whole {
                            list == expect
                        } else {
                            list.ends_with(expect)
                        };
                        if !ok {
                            let text = format!(
                                "{} read key {} as {}, but its own earlier reads and appends \
                                 make it {}{}",
                                st.t(t),
                                st.keys.name(*k),
                                st.list(list),
                                if *whole { "" } else { "end with " },
                                st.list(expect)
                            );
                            st.push(Kind::Internal, &[t], text);
                        }
                    }
                    known.insert(*k, (true, list.clone()));
                }
                P::Read(_, None) => {}
            }
        }
    }
}

/// Duplicates, garbage, aborted and intermediate reads of one read.
fn read_anomalies(st: &mut State, writers: &HashMap<(u32, u32), Writer>, r: &ReadOf) {
    let key = st.keys.name(r.key).to_string();
    let mut seen: HashMap<u32, usize> = HashMap::new();
    for &v in &r.list {
        *seen.entry(v).or_default() += 1;
    }
    if let Some(v) = seen.iter().filter(|(_, n)| **n > 1).map(|(&v, _)| v).min() {
        let text = format!("{}: {} appears more than once", st.read(r), st.vals.name(v));
        st.push(Kind::Duplicate, &[r.txn], text);
    }
    for &v in &r.list {
        match writers.get(&(r.key, v)) {
            None => {
                let text = format!(
                    "{}: no txn appended {} to key {key}",
                    st.read(r),
                    st.vals.name(v)
                );
                st.push(Kind::GarbageRead, &[r.txn], text);
            }
            Some(w) if st.txns[w.txn].status == Status::Fail => {
                let text = format!(
                    "{}, with {}'s append of {}, and {} failed",
                    st.read(r),
                    st.t(w.txn),
                    st.vals.name(v),
                    st.t(w.txn)
                );
                st.push(Kind::G1a, &[w.txn, r.txn], text);
            }
            _ => {}
        }
    }
    if let Some(&last) = r.list.last()
        && let Some(w) = writers.get(&(r.key, last))
        && !w.last
        && w.txn != r.txn
        && st.txns[w.txn].status != Status::Fail
    {
        let text = format!(
            "{}, ending on {}'s append of {}, which {} followed with another append to key \
             {key}",
            st.read(r),
            st.t(w.txn),
            st.vals.name(last),
            st.t(w.txn)
        );
        st.push(Kind::G1b, &[w.txn, r.txn], text);
    }
}

/// Per key: the longest read (its version order) and the reading txn. A read
/// that is not a prefix of it is an incompatible order.
fn version_orders(st: &mut State, reads: &[ReadOf]) -> HashMap<u32, (Vec<u32>, usize)> {
    let mut longest: HashMap<u32, usize> = HashMap::new();
    for (i, r) in reads.iter().enumerate() {
        let e = longest.entry(r.key).or_insert(i);
        if r.list.len() > reads[*e].list.len() {
            *e = i;
        }
    }
    let mut reported: std::collections::HashSet<(u32, usize)> = Default::default();
    for r in reads {
        let Some(l) = longest.get(&r.key).map(|&i| &reads[i]) else {
            continue;
        };
        if !l.list.starts_with(&r.list) && reported.insert((r.key, r.txn)) {
            let text = format!(
                "{} and {} read it as {}: neither is a prefix of the other",
                st.read(r),
                st.t(l.txn),
                st.list(&l.list)
            );
            st.push(Kind::IncompatibleOrder, &[r.txn, l.txn], text);
        }
    }
    longest
        .into_iter()
        .map(|(k, i)| (k, (reads[i].list.clone(), reads[i].txn)))
        .collect()
}
