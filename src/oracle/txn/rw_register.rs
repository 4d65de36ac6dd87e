//! rw-register: txns write unique values to registers and read single values.
//! Reads give wr edges exactly; the version order is only partly known, so ww and
//! rw edges come from what a history proves: nil is every key's first version (a
//! read of nil precedes every write of that key), and a txn that read a key and
//! then wrote it ordered the value it read before its own.

use super::anomaly::{Found, Kind};
use super::graph::{DepGraph, RW, Reason, Step, Timing, WR, WW};
use super::history::Status;
use super::store::{F, FxMap, Mode, NONE, Store};
use super::{cycle_found, found};
use crate::oracle::checker::CheckerReport;
use crate::oracle::history::History;
use crate::oracle::params::Params;
use std::borrow::Cow;
use std::time::Instant;

pub const NAME: &str = "rw-register";
pub const SCOPE: &str = "infers wr dependencies from reads, and ww / rw only where the history \
    proves the version order (nil first; a txn's read before its own write): cycles through \
    versions no read or write-after-read orders are not seen";

/// The id standing for nil (the initial version) in reasons.
const NIL: u32 = u32::MAX;

/// Txns with more micro-ops than this are looked at through a map, not pairwise.
const SMALL: usize = 32;

/// Judge a rw-register history.
pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
    super::judge(NAME, SCOPE, history, params, Mode::RwRegister, analyse)
}

#[derive(Clone, Copy)]
struct Writer {
    txn: u32,
    last: bool,
}

/// A read of a key before the txn wrote it.
#[derive(Clone, Copy)]
struct External {
    txn: u32,
    key: u32,
    /// The value read, or `NIL`.
    value: u32,
}

/// A write that follows the txn's read of the key.
#[derive(Clone, Copy)]
struct Follow {
    txn: u32,
    key: u32,
    read: u32,
    wrote: u32,
}

fn pack(key: u32, value: u32) -> u64 {
    u64::from(key) << 32 | u64::from(value)
}

/// Every anomaly of a rw-register history.
pub fn analyse(st: &Store, deadline: Instant) -> Result<Vec<Found>, String> {
    let t = |i: usize| st.tname(i);
    let name = |v: u32| -> Cow<str> {
        if v == NIL {
            Cow::Borrowed("nil")
        } else {
            st.vals.name(v)
        }
    };
    let mut out: Vec<Found> = Vec::new();
    let push = |out: &mut Vec<Found>, kind: Kind, ids: &[usize], text: String| {
        out.push(found(
            kind,
            ids.iter().map(|&i| st.id(i).to_string()).collect(),
            text,
        ));
    };
    let failed = |w: &Writer| st.txns[w.txn as usize].status == Status::Fail;
    let mut writers: FxMap<u64, Writer> = FxMap::default();
    let mut last_at: FxMap<u32, usize> = FxMap::default();
    for i in 0..st.len() {
        let mops = st.mops(i);
        if mops.len() > SMALL {
            last_at.clear();
            for (j, m) in mops.iter().enumerate() {
                if m.f == F::Write {
                    last_at.insert(m.key, j);
                }
            }
        }
        for (j, m) in mops.iter().enumerate() {
            if m.f != F::Write {
                continue;
            }
            let last = if mops.len() > SMALL {
                last_at.get(&m.key) == Some(&j)
            } else {
                !mops[j + 1..]
                    .iter()
                    .any(|n| n.f == F::Write && n.key == m.key)
            };
            let w = Writer {
                txn: i as u32,
                last,
            };
            if let Some(prev) = writers.insert(pack(m.key, m.a), w) {
                return Err(format!(
                    "{} and {} both write {} to key {}: rw-register needs each value \
                     written to a key once",
                    t(prev.txn as usize),
                    t(i),
                    name(m.a),
                    st.keys.name(m.key)
                ));
            }
        }
    }
    // Internal consistency, and the external reads (before the txn's own write).
    let mut external: Vec<External> = Vec::new();
    let mut follows: Vec<Follow> = Vec::new();
    let mut known: Vec<(u32, u32, bool)> = Vec::new();
    let mut slots: FxMap<u32, usize> = FxMap::default();
    for i in 0..st.len() {
        if st.txns[i].status != Status::Ok {
            continue;
        }
        // Per key: the value known (read or written), and whether written.
        known.clear();
        slots.clear();
        let mops = st.mops(i);
        let big = mops.len() > SMALL;
        for m in mops {
            let slot = if big {
                slots.get(&m.key).copied()
            } else {
                known.iter().position(|k| k.0 == m.key)
            };
            if slot.is_none() && big {
                slots.insert(m.key, known.len());
            }
            match m.f {
                F::Write => match slot {
                    Some(s) => {
                        let (_, r, wrote) = known[s];
                        if !wrote {
                            follows.push(Follow {
                                txn: i as u32,
                                key: m.key,
                                read: r,
                                wrote: m.a,
                            });
                        }
                        known[s] = (m.key, m.a, true);
                    }
                    None => known.push((m.key, m.a, true)),
                },
                F::ReadNil | F::ReadValue => {
                    let v = if m.f == F::ReadNil { NIL } else { m.a };
                    match slot.map(|s| known[s]) {
                        Some((_, expect, wrote)) if expect != v => {
                            let how = if wrote {
                                "its own write"
                            } else {
                                "its earlier read"
                            };
                            let text = format!(
                                "{} read key {} as {}, but {how} makes it {}",
                                t(i),
                                st.keys.name(m.key),
                                name(v),
                                name(expect)
                            );
                            push(&mut out, Kind::Internal, &[i], text);
                        }
                        Some(_) => {}
                        None => {
                            external.push(External {
                                txn: i as u32,
                                key: m.key,
                                value: v,
                            });
                            known.push((m.key, v, false));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let live = |w: Option<&Writer>| w.filter(|w| !failed(w)).copied();
    let mut graph = DepGraph::new(st.len());
    for e in &external {
        let (i, v) = (e.txn as usize, e.value);
        if v == NIL {
            continue;
        }
        let key = st.keys.name(e.key);
        match writers.get(&pack(e.key, v)) {
            None => {
                let text = format!("{} read key {key} as {}: no txn wrote it", t(i), name(v));
                push(&mut out, Kind::GarbageRead, &[i], text);
            }
            Some(w) if failed(w) => {
                let text = format!(
                    "{} read key {key} as {}, written by {}, which failed",
                    t(i),
                    name(v),
                    t(w.txn as usize)
                );
                push(&mut out, Kind::G1a, &[w.txn as usize, i], text);
            }
            Some(w) => {
                if !w.last && w.txn as usize != i {
                    let text = format!(
                        "{} read key {key} as {}, which {} overwrote in the same txn",
                        t(i),
                        name(v),
                        t(w.txn as usize)
                    );
                    push(&mut out, Kind::G1b, &[w.txn as usize, i], text);
                }
                let reason = Reason {
                    key: e.key,
                    a: v,
                    b: 0,
                };
                graph.add(w.txn as usize, i, WR, reason);
            }
        }
    }
    // The readers of each version, grouped by (key, value), each group in the
    // order read.
    let mut readers: Vec<u32> = (0..external.len() as u32).collect();
    readers.sort_by_key(|&x| {
        let e = &external[x as usize];
        (e.key, e.value)
    });
    // nil comes first: whoever read nil precedes every write of the key.
    // In key order: the graph's edge order decides which cycle the search meets
    // first, and one history must always give the same report.
    let mut writes: Vec<(u64, u32)> = writers
        .iter()
        .filter(|(_, w)| !failed(w))
        .map(|(&kv, w)| (kv, w.txn))
        .collect();
    writes.sort_unstable();
    let mut at = 0;
    while at < readers.len() {
        let e = external[readers[at] as usize];
        let end = at
            + readers[at..].partition_point(|&x| {
                let o = &external[x as usize];
                (o.key, o.value) == (e.key, e.value)
            });
        if e.value == NIL {
            let from = writes.partition_point(|&(kv, _)| kv < pack(e.key, 0));
            let to = writes.partition_point(|&(kv, _)| kv <= pack(e.key, u32::MAX));
            for &r in &readers[at..end] {
                let reader = external[r as usize].txn as usize;
                for &(kv, w) in &writes[from..to] {
                    let reason = Reason {
                        key: e.key,
                        a: NIL,
                        b: kv as u32,
                    };
                    graph.add(reader, w as usize, RW, reason);
                }
            }
        }
        at = end;
    }
    drop(writes);
    // The follows grouped by the version they read, each group in the order
    // found; and where that version's readers are in `readers` (a merge of the
    // two sorted lists).
    let mut overwrote: Vec<u32> = (0..follows.len() as u32).collect();
    overwrote.sort_by_key(|&x| {
        let f = &follows[x as usize];
        (f.key, f.read)
    });
    let mut read_by: Vec<(u32, u32)> = vec![(0, 0); follows.len()];
    let mut r = 0;
    for &x in &overwrote {
        let f = &follows[x as usize];
        let version = (f.key, f.read);
        let at = |i: usize| {
            let e = &external[readers[i] as usize];
            (e.key, e.value)
        };
        while r < readers.len() && at(r) < version {
            r += 1;
        }
        let mut end = r;
        while end < readers.len() && at(end) == version {
            end += 1;
        }
        read_by[x as usize] = (r as u32, end as u32);
    }
    // A write after a read: the version read precedes the one written (not
    // necessarily directly), so its writer → T (ww) and its other readers → T (rw).
    for (f, &(from, to)) in follows.iter().zip(&read_by) {
        let reason = Reason {
            key: f.key,
            a: f.read,
            b: f.wrote,
        };
        if f.read != NIL
            && let Some(w) = live(writers.get(&pack(f.key, f.read)))
        {
            graph.add(w.txn as usize, f.txn as usize, WW, reason);
        }
        for &other in &readers[from as usize..to as usize] {
            graph.add(
                external[other as usize].txn as usize,
                f.txn as usize,
                RW,
                reason,
            );
        }
    }
    drop(read_by);
    // Lost update: which of the writes came second is unknown, so the cycle shows
    // two rw edges (G2-item); in any total order one is a ww edge (G-single).
    for group in overwrote.chunk_by(|&a, &b| {
        let (a, b) = (&follows[a as usize], &follows[b as usize]);
        (a.key, a.read) == (b.key, b.read)
    }) {
        if group.len() < 2 {
            continue;
        }
        let first = &follows[group[0] as usize];
        let each: Vec<String> = group
            .iter()
            .map(|&x| {
                let f = &follows[x as usize];
                format!("{} wrote {}", t(f.txn as usize), name(f.wrote))
            })
            .collect();
        let ids: Vec<usize> = group
            .iter()
            .map(|&x| follows[x as usize].txn as usize)
            .collect();
        let text = format!(
            "{} txns read key {} as {} and each overwrote it: {}",
            group.len(),
            st.keys.name(first.key),
            name(first.read),
            each.join(", ")
        );
        push(&mut out, Kind::LostUpdate, &ids, text);
    }
    drop(writers);
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
    let text = |s: &Step| {
        let Some(r) = s.reason else {
            return String::new();
        };
        let key = st.keys.name(r.key);
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
        out.push(cycle_found(kind, st, &steps, text));
    }
    Ok(out)
}
