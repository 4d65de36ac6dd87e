//! The baseline rw-register checker (see `super`): as before issue 33.

use super::graph::DepGraph;
use super::list_append::Interner;
use super::{cycle_found, found, tname};
use crate::oracle::checker::CheckerReport;
use crate::oracle::history::History;
use crate::oracle::params::Params;
use crate::oracle::txn::anomaly::{Found, Kind};
use crate::oracle::txn::graph::{RW, Reason, Step, WR, WW};
use crate::oracle::txn::history::{Mop, Status, Txn, printed};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Instant;

pub const NAME: &str = "rw-register";
pub const SCOPE: &str = "infers wr dependencies from reads, and ww / rw only where the history \
    proves the version order (nil first; a txn's read before its own write): cycles through \
    versions no read or write-after-read orders are not seen";

/// The id standing for nil (the initial version) in reasons.
const NIL: u32 = u32::MAX;

/// Judge a rw-register history.
pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
    super::judge(NAME, SCOPE, history, params, analyse)
}

enum P {
    Write(u32, u32),
    /// `Some(None)`: read nil; `None`: not known.
    Read(u32, Option<Option<u32>>),
}

#[derive(Clone, Copy)]
struct Writer {
    txn: usize,
    last: bool,
}

/// A read of a key before the txn wrote it: (txn, key, value or NIL).
type ExternalRead = (usize, u32, u32);

/// Every anomaly of a rw-register history.
pub fn analyse(txns: &[Txn], deadline: Instant) -> Result<Vec<Found>, String> {
    let mut keys = Interner::default();
    let mut vals = Interner::default();
    let parsed = parse(txns, &mut keys, &mut vals)?;
    let t = |i: usize| tname(&txns[i]);
    let name = |v: u32| {
        if v == NIL {
            "nil".to_string()
        } else {
            vals.name(v).to_string()
        }
    };
    let mut out: Vec<Found> = Vec::new();
    let push = |out: &mut Vec<Found>, kind: Kind, ids: &[usize], text: String| {
        out.push(found(
            kind,
            ids.iter().map(|&i| txns[i].id.clone()).collect(),
            text,
        ));
    };
    let mut writers: HashMap<(u32, u32), Writer> = HashMap::new();
    for (i, mops) in parsed.iter().enumerate() {
        let mut last: HashMap<u32, usize> = HashMap::new();
        for (j, m) in mops.iter().enumerate() {
            if let P::Write(k, _) = m {
                last.insert(*k, j);
            }
        }
        for (j, m) in mops.iter().enumerate() {
            if let P::Write(k, v) = *m {
                let w = Writer {
                    txn: i,
                    last: last.get(&k) == Some(&j),
                };
                if let Some(prev) = writers.insert((k, v), w) {
                    return Err(format!(
                        "{} and {} both write {} to key {}: rw-register needs each value \
                         written to a key once",
                        t(prev.txn),
                        t(i),
                        name(v),
                        keys.name(k)
                    ));
                }
            }
        }
    }
    // Internal consistency, and the external reads (before the txn's own write).
    let mut external: Vec<ExternalRead> = Vec::new();
    // (txn, key, value read, value then written): a write that follows a read.
    let mut follows: Vec<(usize, u32, u32, u32)> = Vec::new();
    for (i, mops) in parsed.iter().enumerate() {
        if txns[i].status != Status::Ok {
            continue;
        }
        let mut known: HashMap<u32, (u32, bool)> = HashMap::new();
        for m in mops {
            match *m {
                P::Write(k, v) => {
                    if let Some(&(r, false)) = known.get(&k) {
                        follows.push((i, k, r, v));
                    }
                    known.insert(k, (v, true));
                }
                P::Read(k, Some(v)) => {
                    let v = v.unwrap_or(NIL);
                    match known.get(&k) {
                        Some(&(expect, wrote)) if expect != v => {
                            let how = if wrote {
                                "its own write"
                            } else {
                                "its earlier read"
                            };
                            let text = format!(
                                "{} read key {} as {}, but {how} makes it {}",
                                t(i),
                                keys.name(k),
                                name(v),
                                name(expect)
                            );
                            push(&mut out, Kind::Internal, &[i], text);
                        }
                        Some(_) => {}
                        None => {
                            external.push((i, k, v));
                            known.insert(k, (v, false));
                        }
                    }
                }
                P::Read(_, None) => {}
            }
        }
    }
    let live = |w: Option<&Writer>| w.filter(|w| txns[w.txn].status != Status::Fail).copied();
    let mut graph = DepGraph::new(txns.len());
    let mut readers: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
    for &(i, k, v) in &external {
        readers.entry((k, v)).or_default().push(i);
        if v == NIL {
            continue;
        }
        let key = keys.name(k);
        match writers.get(&(k, v)) {
            None => {
                let text = format!("{} read key {key} as {}: no txn wrote it", t(i), name(v));
                push(&mut out, Kind::GarbageRead, &[i], text);
            }
            Some(w) if txns[w.txn].status == Status::Fail => {
                let text = format!(
                    "{} read key {key} as {}, written by {}, which failed",
                    t(i),
                    name(v),
                    t(w.txn)
                );
                push(&mut out, Kind::G1a, &[w.txn, i], text);
            }
            Some(w) => {
                if !w.last && w.txn != i {
                    let text = format!(
                        "{} read key {key} as {}, which {} overwrote in the same txn",
                        t(i),
                        name(v),
                        t(w.txn)
                    );
                    push(&mut out, Kind::G1b, &[w.txn, i], text);
                }
                graph.add(w.txn, i, WR, Reason { key: k, a: v, b: 0 });
            }
        }
    }
    // nil comes first: whoever read nil precedes every write of the key.
    // Sorted: the graph's edge order decides which cycle the search meets first, and
    // one history must always give the same report.
    let mut writes_of: HashMap<u32, Vec<(usize, u32)>> = HashMap::new();
    let mut written: Vec<(&(u32, u32), &Writer)> = writers.iter().collect();
    written.sort_unstable_by_key(|(kv, _)| **kv);
    for (&(k, v), w) in written {
        if txns[w.txn].status != Status::Fail {
            writes_of.entry(k).or_default().push((w.txn, v));
        }
    }
    let mut nil_reads: Vec<(u32, &Vec<usize>)> = readers
        .iter()
        .filter(|((_, v), _)| *v == NIL)
        .map(|(&(k, _), list)| (k, list))
        .collect();
    nil_reads.sort_unstable_by_key(|(k, _)| *k);
    for (k, list) in nil_reads {
        for &r in list {
            for &(w, wv) in writes_of.get(&k).map(Vec::as_slice).unwrap_or_default() {
                graph.add(
                    r,
                    w,
                    RW,
                    Reason {
                        key: k,
                        a: NIL,
                        b: wv,
                    },
                );
            }
        }
    }
    // A write after a read: the version read precedes the one written (not
    // necessarily directly), so its writer → T (ww) and its other readers → T (rw).
    for &(i, k, r, v) in &follows {
        if r != NIL
            && let Some(w) = live(writers.get(&(k, r)))
        {
            graph.add(w.txn, i, WW, Reason { key: k, a: r, b: v });
        }
        for &other in readers.get(&(k, r)).map(Vec::as_slice).unwrap_or_default() {
            graph.add(other, i, RW, Reason { key: k, a: r, b: v });
        }
    }
    // Lost update: which of the writes came second is unknown, so the cycle shows
    // two rw edges (G2-item); in any total order one is a ww edge (G-single).
    let mut overwrote: HashMap<(u32, u32), Vec<(usize, u32)>> = HashMap::new();
    for &(i, k, r, v) in &follows {
        overwrote.entry((k, r)).or_default().push((i, v));
    }
    let mut lost: Vec<_> = overwrote.into_iter().filter(|(_, l)| l.len() > 1).collect();
    lost.sort_unstable();
    for ((k, r), list) in lost {
        let each: Vec<String> = list
            .iter()
            .map(|&(i, v)| format!("{} wrote {}", t(i), name(v)))
            .collect();
        let ids: Vec<usize> = list.iter().map(|&(i, _)| i).collect();
        let text = format!(
            "{} txns read key {} as {} and each overwrote it: {}",
            list.len(),
            keys.name(k),
            name(r),
            each.join(", ")
        );
        push(&mut out, Kind::LostUpdate, &ids, text);
    }
    graph.add_order(txns);
    let text = |s: &Step| {
        let Some(r) = s.reason else {
            return String::new();
        };
        let key = keys.name(r.key);
        let (a, b) = (t(s.from), t(s.to));
        match s.kind {
            WW => format!(
                "{b} read key {key} as {} ({a}'s write) before writing {}",
                name(r.a),
                name(r.b)
            ),
            WR => format!("{b} read key {key} as {}, which {a} wrote", name(r.a)),
            _ if r.a == NIL => format!(
                "{a} read key {key} as nil, the initial version, which {b}'s write of {} \
                 overwrites",
                name(r.b)
            ),
            _ => format!(
                "{a} read key {key} as {}, and {b} read that version before overwriting it \
                 with {}",
                name(r.a),
                name(r.b)
            ),
        }
    };
    for (kind, steps) in graph.cycles(deadline)? {
        out.push(cycle_found(kind, txns, &steps, text));
    }
    Ok(out)
}

fn parse(txns: &[Txn], keys: &mut Interner, vals: &mut Interner) -> Result<Vec<Vec<P>>, String> {
    txns.iter()
        .map(|t| {
            t.mops
                .iter()
                .map(|m| match m {
                    Mop::Write { key, value } => Ok(P::Write(keys.id(key), vals.id(value))),
                    Mop::Read { key, value } => {
                        let k = keys.id(key);
                        if t.status != Status::Ok {
                            return Ok(P::Read(k, None));
                        }
                        match value {
                            Value::Null => Ok(P::Read(k, Some(None))),
                            Value::Array(_) | Value::Object(_) => Err(format!(
                                "op {}: read of key {key}: expected one value (or nil), got \
                                 {value}",
                                t.id
                            )),
                            v => Ok(P::Read(k, Some(Some(vals.id(&printed(v)))))),
                        }
                    }
                    Mop::Append { key, .. } => Err(format!(
                        "op {}: [\"append\", {key}, …] in a rw-register history (use list-append)",
                        t.id
                    )),
                })
                .collect()
        })
        .collect()
}
