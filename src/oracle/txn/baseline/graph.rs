//! The dependency graph as it was before issue 33: petgraph, one edge per
//! ordered pair, Kosaraju SCCs per family and A* per pivot (see `super`).

use crate::oracle::txn::anomaly::Kind;
use crate::oracle::txn::graph::{PROCESS, REALTIME, RW, Reason, Step, WR, WW, classify};
use crate::oracle::txn::history::{Status, Txn};
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::{EdgeFiltered, EdgeRef};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

const DATA: u8 = WW | WR;
const ORDER: u8 = PROCESS | REALTIME;

#[derive(Debug, Clone, Default)]
pub struct Edge {
    pub kinds: u8,
    pub reasons: Vec<(u8, Reason)>,
}

impl Edge {
    pub fn reason(&self, kind: u8) -> Option<Reason> {
        self.reasons
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, r)| *r)
    }
}

pub struct DepGraph {
    pub g: DiGraph<(), Edge>,
    index: HashMap<(u32, u32), EdgeIndex>,
}

impl DepGraph {
    pub fn new(txns: usize) -> Self {
        let mut g = DiGraph::with_capacity(txns, txns * 2);
        for _ in 0..txns {
            g.add_node(());
        }
        DepGraph {
            g,
            index: HashMap::new(),
        }
    }

    /// Add a `kind` dependency `from → to` (self-dependencies are dropped).
    pub fn add(&mut self, from: usize, to: usize, kind: u8, reason: Reason) {
        if from == to {
            return;
        }
        let g = &mut self.g;
        let id = *self
            .index
            .entry((from as u32, to as u32))
            .or_insert_with(|| {
                g.add_edge(NodeIndex::new(from), NodeIndex::new(to), Edge::default())
            });
        let edge = &mut self.g[id];
        if edge.kinds & kind == 0 {
            edge.kinds |= kind;
            edge.reasons.push((kind, reason));
        }
    }

    /// Process order (each process's txns by invoke; none for txns without a
    /// process) and real-time order (T1
    /// completed before T2 was invoked), transitively reduced: a completed txn
    /// stops being a direct predecessor once a txn that follows it completes.
    /// Txns that failed are not in the graph's order.
    pub fn add_order(&mut self, txns: &[Txn]) {
        let live = |t: &Txn| t.status != Status::Fail;
        // Ordered by process: edge order decides which cycle the search meets first.
        let mut by_process: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        // A txn without a process (not recorded) is in no process's order.
        for (i, t) in txns
            .iter()
            .enumerate()
            .filter(|(_, t)| live(t) && !t.process.is_empty())
        {
            by_process.entry(&t.process).or_default().push(i);
        }
        for list in by_process.values_mut() {
            list.sort_by_key(|&i| (txns[i].invoke, i));
            for pair in list.windows(2) {
                self.add(pair[0], pair[1], PROCESS, Reason::default());
            }
        }
        // Invokes sort before completions at the same instant: equal stamps are
        // not an order.
        let mut events: Vec<(u64, u8, usize)> = Vec::with_capacity(txns.len() * 2);
        for (i, t) in txns.iter().enumerate().filter(|(_, t)| live(t)) {
            events.push((t.invoke, 0, i));
            if t.status == Status::Ok
                && let Some(c) = t.complete
            {
                events.push((c, 1, i));
            }
        }
        events.sort_unstable();
        let mut frontier: Vec<usize> = Vec::new();
        let mut preds: HashMap<usize, Vec<usize>> = HashMap::new();
        for (_, what, i) in events {
            if what == 0 {
                for &p in &frontier {
                    self.add(p, i, REALTIME, Reason::default());
                }
                preds.insert(i, frontier.clone());
            } else {
                if let Some(before) = preds.remove(&i) {
                    let before: HashSet<usize> = before.into_iter().collect();
                    frontier.retain(|p| !before.contains(p));
                }
                frontier.push(i);
            }
        }
    }

    /// Every cycle class found, one cycle per strongly connected component and
    /// family, deduplicated by (kind, txns). `Err` when `deadline` passed.
    pub fn cycles(&self, deadline: Instant) -> Result<Vec<(Kind, Vec<Step>)>, String> {
        // (edge kinds allowed, pivot kinds, pivots tried per component)
        let families: [(u8, u8, usize); 6] = [
            (WW, WW, 1),
            (DATA, WR, 1),
            (DATA | RW, RW, 64),
            (WW | ORDER, ORDER, 1),
            (DATA | ORDER, ORDER, 4),
            (DATA | RW | ORDER, RW, 64),
        ];
        let mut out = Vec::new();
        let mut seen: HashSet<(Kind, Vec<usize>)> = HashSet::new();
        for (mask, pivot_mask, tries) in families {
            let allowed = EdgeFiltered::from_fn(&self.g, |e| e.weight().kinds & mask != 0);
            // Kosaraju: petgraph's Tarjan recurses per node and overflows the
            // stack on a long chain of txns (1M).
            let sccs = petgraph::algo::kosaraju_scc(&allowed);
            let mut comp = vec![usize::MAX; self.g.node_count()];
            for (c, scc) in sccs.iter().enumerate() {
                if scc.len() > 1 {
                    for n in scc {
                        comp[n.index()] = c;
                    }
                }
            }
            for (c, scc) in sccs.iter().enumerate() {
                if scc.len() < 2 {
                    continue;
                }
                if Instant::now() > deadline {
                    return Err("time limit reached during the cycle search".into());
                }
                let inside = EdgeFiltered::from_fn(&self.g, |e| {
                    e.weight().kinds & mask != 0
                        && comp[e.source().index()] == c
                        && comp[e.target().index()] == c
                });
                let pivots = scc
                    .iter()
                    .flat_map(|&n| self.g.edges(n))
                    .filter(|e| e.weight().kinds & pivot_mask != 0 && comp[e.target().index()] == c)
                    .take(tries);
                let mut best: Option<(usize, Vec<Step>)> = None;
                for pivot in pivots {
                    let Some((_, path)) = petgraph::algo::astar(
                        &inside,
                        pivot.target(),
                        |n| n == pivot.source(),
                        |e| cost(e.weight().kinds & mask),
                        |_| 0u64,
                    ) else {
                        continue;
                    };
                    let mut steps = vec![self.step(pivot.id(), pivot_mask)];
                    for pair in path.windows(2) {
                        if let Some(id) = self.g.find_edge(pair[0], pair[1]) {
                            steps.push(self.step(id, mask));
                        }
                    }
                    let rws = steps.iter().filter(|s| s.kind == RW).count();
                    let better = best
                        .as_ref()
                        .is_none_or(|(r, b)| (rws, steps.len()) < (*r, b.len()));
                    if better {
                        best = Some((rws, steps));
                    }
                    if best.as_ref().is_some_and(|(r, _)| *r <= 1) {
                        break;
                    }
                }
                if let Some((_, steps)) = best {
                    let kind = classify(&steps);
                    let mut nodes: Vec<usize> = steps.iter().map(|s| s.from).collect();
                    nodes.sort_unstable();
                    if seen.insert((kind, nodes)) {
                        out.push((kind, steps));
                    }
                }
            }
        }
        Ok(out)
    }

    /// The hop of edge `id` as the strongest kind `mask` allows (data first, rw last).
    fn step(&self, id: EdgeIndex, mask: u8) -> Step {
        let (from, to) = self
            .g
            .edge_endpoints(id)
            .map_or((0, 0), |(a, b)| (a.index(), b.index()));
        let edge = &self.g[id];
        let kinds = edge.kinds & mask;
        let kind = [WW, WR, PROCESS, REALTIME, RW]
            .into_iter()
            .find(|k| kinds & k != 0)
            .unwrap_or(RW);
        Step {
            from,
            to,
            kind,
            reason: edge.reason(kind),
        }
    }
}

fn cost(kinds: u8) -> u64 {
    if kinds & DATA != 0 {
        1
    } else if kinds & ORDER != 0 {
        2
    } else {
        10_000
    }
}
