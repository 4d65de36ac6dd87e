//! The dependency graph between transactions and the cycle search.
//!
//! One node per txn (node index = txn index). Dependencies are recorded as they
//! are found, one `(from, to, kind)` triple each in flat arrays (the reason —
//! key and values — kept for the dependency kinds only); the search turns them
//! into a compressed adjacency (CSR): at most one edge per ordered pair carrying
//! every kind found between them, each with the first reason seen (what the
//! explanation prints).
//!
//! Most histories have no cycle at all: one iterative Tarjan pass over the raw
//! triples says so, and nothing else is built. Otherwise the cycles: per family
//! of edge kinds, the strongly connected components (Kosaraju, iterative), then
//! per component the cheapest cycle through a pivot edge of the kind that
//! defines the anomaly (A* with rw edges costing far more than the others:
//! fewest rw first, then shortest). Components, pivots and paths are met in the
//! order the previous petgraph-based search met them (each node's edges newest
//! first, Kosaraju's two passes, the same heap), so a history gives the same
//! report it always gave: `baseline` keeps that search, and the differential
//! tests compare the two.

use super::anomaly::{CycleClass, Kind, Order};
use super::history::Status;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};
use std::time::Instant;

pub const WW: u8 = 1;
pub const WR: u8 = 2;
pub const RW: u8 = 4;
pub const PROCESS: u8 = 8;
pub const REALTIME: u8 = 16;
const DATA: u8 = WW | WR;
const ORDER: u8 = PROCESS | REALTIME;
/// The kinds that carry a reason.
const DEPS: u8 = WW | WR | RW;
const NONE: u32 = u32::MAX;

/// Why an edge exists; the fields' meaning is the checker's (key id, values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reason {
    pub key: u32,
    pub a: u32,
    pub b: u32,
}

/// One hop of a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub from: usize,
    pub to: usize,
    pub kind: u8,
    pub reason: Option<Reason>,
}

/// A txn as the order edges see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Its process's rank by name, `u32::MAX` for none.
    pub process: u32,
    pub invoke: u64,
    pub complete: Option<u64>,
    pub status: Status,
}

/// The dependencies found so far.
pub struct DepGraph {
    n: usize,
    from: Vec<u32>,
    to: Vec<u32>,
    kind: Vec<u8>,
    /// One per dependency (a kind in `DEPS`), in the order added.
    reasons: Vec<Reason>,
    /// An order edge was added (every later dependency's reason is then found
    /// by its rank among dependencies, not by its index).
    order_seen: bool,
    ranked: bool,
}

impl DepGraph {
    pub fn new(txns: usize) -> Self {
        DepGraph {
            n: txns,
            from: Vec::new(),
            to: Vec::new(),
            kind: Vec::new(),
            reasons: Vec::new(),
            order_seen: false,
            ranked: false,
        }
    }

    /// Add a `kind` dependency `from → to` (self-dependencies are dropped).
    pub fn add(&mut self, from: usize, to: usize, kind: u8, reason: Reason) {
        if from == to || from >= self.n || to >= self.n {
            return;
        }
        self.from.push(from as u32);
        self.to.push(to as u32);
        self.kind.push(kind);
        if kind & DEPS != 0 {
            self.ranked |= self.order_seen;
            self.reasons.push(reason);
        } else {
            self.order_seen = true;
        }
    }

    /// The distinct ordered pairs with an edge, sorted.
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        let mut pairs: Vec<(usize, usize)> = self
            .from
            .iter()
            .zip(&self.to)
            .map(|(&a, &b)| (a as usize, b as usize))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    }

    /// Process order (each process's txns by invoke; none for txns without a
    /// process) and real-time order (T1 completed before T2 was invoked),
    /// transitively reduced: a completed txn stops being a direct predecessor
    /// once a txn that follows it completes. Txns that failed are not in the
    /// graph's order. `at(i)`: txn `i`.
    pub fn add_order(&mut self, at: impl Fn(usize) -> Timing) {
        let n = self.n;
        let live = |t: &Timing| t.status != Status::Fail;
        // By process name: edge order decides which cycle the search meets first.
        let mut by_process: Vec<(u32, u64, u32)> = (0..n)
            .filter_map(|i| {
                let t = at(i);
                (live(&t) && t.process != NONE).then_some((t.process, t.invoke, i as u32))
            })
            .collect();
        by_process.sort_unstable();
        for pair in by_process.windows(2) {
            if pair[0].0 == pair[1].0 {
                self.add(
                    pair[0].2 as usize,
                    pair[1].2 as usize,
                    PROCESS,
                    Reason::default(),
                );
            }
        }
        drop(by_process);
        // Invokes sort before completions at the same instant: equal stamps are
        // not an order.
        const DONE: u64 = 1 << 32;
        let mut events: Vec<(u64, u64)> = Vec::with_capacity(n * 2);
        for i in 0..n {
            let t = at(i);
            if !live(&t) {
                continue;
            }
            events.push((t.invoke, i as u64));
            if t.status == Status::Ok
                && let Some(c) = t.complete
            {
                events.push((c, DONE | i as u64));
            }
        }
        events.sort_unstable();
        let mut frontier: Vec<u32> = Vec::new();
        // The real-time edges added at each txn's invoke: its predecessors.
        let mut preds: Vec<(usize, usize)> = vec![(0, 0); n];
        let mut mark: Vec<u32> = vec![0; n];
        for (_, tag) in events {
            let i = (tag & (DONE - 1)) as usize;
            if tag & DONE == 0 {
                let first = self.from.len();
                for &p in &frontier {
                    self.add(p as usize, i, REALTIME, Reason::default());
                }
                preds[i] = (first, self.from.len());
            } else {
                let (first, end) = std::mem::take(&mut preds[i]);
                let stamp = i as u32 + 1;
                for &p in &self.from[first..end] {
                    mark[p as usize] = stamp;
                }
                frontier.retain(|&p| mark[p as usize] != stamp);
                frontier.push(i as u32);
            }
        }
    }

    /// Every cycle class found, one cycle per strongly connected component and
    /// family, deduplicated by (kind, txns). `Err` when `deadline` passed. The
    /// graph is consumed: its raw dependencies are dropped as the merged graph
    /// is built.
    pub fn cycles(self, deadline: Instant) -> Result<Vec<(Kind, Vec<Step>)>, String> {
        if self.from.len() >= NONE as usize || self.n >= NONE as usize {
            return Err("the dependency graph is too large (2^32 edges or txns)".into());
        }
        if !self.has_cycle() {
            return Ok(Vec::new());
        }
        let n = self.n;
        let g = self.csr();
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
        let mut comp = vec![NONE; n];
        let mut search = Search::new(n);
        let mut passes = Passes::new(n);
        for (mask, pivot_mask, tries) in families {
            let sccs = g.kosaraju(mask, &mut passes);
            for (c, scc) in sccs.iter().enumerate() {
                for &x in scc {
                    comp[x as usize] = c as u32;
                }
            }
            for (c, scc) in sccs.iter().enumerate() {
                if Instant::now() > deadline {
                    return Err("time limit reached during the cycle search".into());
                }
                let c = c as u32;
                let mut pivots: Vec<(u32, usize)> = Vec::new();
                'pick: for &x in scc {
                    for e in g.out(x) {
                        if g.kinds[e] & pivot_mask != 0 && comp[g.to[e] as usize] == c {
                            pivots.push((x, e));
                            if pivots.len() == tries {
                                break 'pick;
                            }
                        }
                    }
                }
                let mut best: Option<(usize, Vec<Step>)> = None;
                for (source, e) in pivots {
                    // A large component is searched from up to 64 pivots: the
                    // budget holds within one too.
                    if Instant::now() > deadline {
                        return Err("time limit reached during the cycle search".into());
                    }
                    let Some(path) = search.astar(&g, g.to[e], source, mask, &comp, c) else {
                        continue;
                    };
                    let mut steps = vec![g.step(source, e, pivot_mask)];
                    for pair in path.windows(2) {
                        if let Some(id) = g.find(pair[0], pair[1]) {
                            steps.push(g.step(pair[0], id, mask));
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
            for scc in &sccs {
                for &x in scc {
                    comp[x as usize] = NONE;
                }
            }
        }
        Ok(out)
    }

    /// Offsets of each node's dependencies when grouped by source.
    fn offsets(&self) -> Vec<u32> {
        let mut start = vec![0u32; self.n + 1];
        for &f in &self.from {
            start[f as usize + 1] += 1;
        }
        for i in 0..self.n {
            start[i + 1] += start[i];
        }
        start
    }

    /// Is any strongly connected component of the whole graph larger than one
    /// txn? (Iterative Tarjan over the raw dependencies; repeats do no harm.)
    fn has_cycle(&self) -> bool {
        let n = self.n;
        let start = self.offsets();
        let mut to = vec![0u32; self.from.len()];
        {
            let mut fill: Vec<u32> = start[..n].to_vec();
            for (&f, &t) in self.from.iter().zip(&self.to) {
                let slot = &mut fill[f as usize];
                to[*slot as usize] = t;
                *slot += 1;
            }
        }
        let mut index = vec![NONE; n];
        let mut low = vec![0u32; n];
        let mut on = vec![false; n];
        let mut stack: Vec<u32> = Vec::new();
        let mut call: Vec<(u32, u32)> = Vec::new();
        let mut next = 0u32;
        for s in 0..n {
            if index[s] != NONE {
                continue;
            }
            index[s] = next;
            low[s] = next;
            next += 1;
            stack.push(s as u32);
            on[s] = true;
            call.push((s as u32, start[s]));
            while let Some(&(v, pos)) = call.last() {
                let v = v as usize;
                if pos < start[v + 1] {
                    if let Some(top) = call.last_mut() {
                        top.1 += 1;
                    }
                    let w = to[pos as usize] as usize;
                    if index[w] == NONE {
                        index[w] = next;
                        low[w] = next;
                        next += 1;
                        stack.push(w as u32);
                        on[w] = true;
                        call.push((w as u32, start[w]));
                    } else if on[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u as usize] = low[u as usize].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut size = 0;
                    while let Some(x) = stack.pop() {
                        on[x as usize] = false;
                        size += 1;
                        if x as usize == v {
                            break;
                        }
                    }
                    if size > 1 {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// The merged graph: one edge per ordered pair (kinds OR-ed, the first
    /// reason of each kind), each node's out- and in-edges newest first.
    fn csr(mut self) -> Csr {
        let n = self.n;
        let m = self.from.len();
        let start = self.offsets();
        let mut slot = vec![0u32; m];
        {
            let mut fill: Vec<u32> = start[..n].to_vec();
            for (a, &f) in self.from.iter().enumerate() {
                let at = &mut fill[f as usize];
                slot[*at as usize] = a as u32;
                *at += 1;
            }
        }
        self.from = Vec::new();
        // A dependency's reason: by index while no order edge came before it.
        let rank: Option<Vec<u32>> = self.ranked.then(|| {
            let mut r = 0u32;
            self.kind
                .iter()
                .map(|&k| {
                    let here = r;
                    if k & DEPS != 0 {
                        r += 1;
                    }
                    here
                })
                .collect()
        });
        let reasons = std::mem::take(&mut self.reasons);
        let reason_of = |a: u32| {
            let i = rank.as_ref().map_or(a, |r| r[a as usize]) as usize;
            reasons.get(i).copied().unwrap_or_default()
        };
        let mut g = Csr {
            start: Vec::with_capacity(n + 1),
            to: Vec::with_capacity(m),
            kinds: Vec::with_capacity(m),
            reason_at: Vec::with_capacity(m),
            reasons: Vec::new(),
            in_start: Vec::new(),
            in_from: Vec::new(),
            in_kinds: Vec::new(),
        };
        let mut first: Vec<u32> = Vec::with_capacity(m);
        let mut group: Vec<(u32, u32)> = Vec::new();
        let mut uniq: Vec<(u32, u32, u8, u32)> = Vec::new();
        g.start.push(0);
        for u in 0..n {
            group.clear();
            for &a in &slot[start[u] as usize..start[u + 1] as usize] {
                group.push((self.to[a as usize], a));
            }
            group.sort_unstable();
            uniq.clear();
            let mut i = 0;
            while i < group.len() {
                let target = group[i].0;
                let mut kinds = 0u8;
                let mut per = [NONE; 3];
                let mut j = i;
                while j < group.len() && group[j].0 == target {
                    let a = group[j].1;
                    let k = self.kind[a as usize];
                    kinds |= k;
                    for (b, bit) in [WW, WR, RW].into_iter().enumerate() {
                        if k & bit != 0 && per[b] == NONE {
                            per[b] = a;
                        }
                    }
                    j += 1;
                }
                let mut at = NONE;
                if kinds & DEPS != 0 {
                    at = g.reasons.len() as u32;
                    for a in per.into_iter().filter(|&a| a != NONE) {
                        g.reasons.push(reason_of(a));
                    }
                }
                uniq.push((group[i].1, target, kinds, at));
                i = j;
            }
            // Newest first, as petgraph lists a node's edges.
            uniq.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
            for &(f, t, k, at) in &uniq {
                first.push(f);
                g.to.push(t);
                g.kinds.push(k);
                g.reason_at.push(at);
            }
            g.start.push(g.to.len() as u32);
        }
        drop(slot);
        drop(rank);
        drop(reasons);
        drop(self);
        // In-edges, grouped by target, each group newest first.
        let edges = g.to.len();
        let mut in_start = vec![0u32; n + 1];
        for &t in &g.to {
            in_start[t as usize + 1] += 1;
        }
        for i in 0..n {
            in_start[i + 1] += in_start[i];
        }
        let mut in_edge = vec![0u32; edges];
        {
            let mut fill: Vec<u32> = in_start[..n].to_vec();
            for e in 0..edges {
                let at = &mut fill[g.to[e] as usize];
                in_edge[*at as usize] = e as u32;
                *at += 1;
            }
        }
        for v in 0..n {
            let list = &mut in_edge[in_start[v] as usize..in_start[v + 1] as usize];
            list.sort_unstable_by(|&x, &y| first[y as usize].cmp(&first[x as usize]));
        }
        drop(first);
        let mut source = vec![0u32; edges];
        for u in 0..n {
            for e in g.start[u]..g.start[u + 1] {
                source[e as usize] = u as u32;
            }
        }
        g.in_from = in_edge.iter().map(|&e| source[e as usize]).collect();
        g.in_kinds = in_edge.iter().map(|&e| g.kinds[e as usize]).collect();
        g.in_start = in_start;
        g
    }
}

/// The merged graph, compressed: node `u`'s edges are `start[u]..start[u + 1]`.
struct Csr {
    start: Vec<u32>,
    to: Vec<u32>,
    kinds: Vec<u8>,
    /// Where the edge's reasons begin in `reasons` (one per kind of `DEPS` it
    /// carries, ww then wr then rw).
    reason_at: Vec<u32>,
    reasons: Vec<Reason>,
    in_start: Vec<u32>,
    in_from: Vec<u32>,
    in_kinds: Vec<u8>,
}

/// The visit marks of Kosaraju's passes, reused from family to family.
struct Passes {
    discovered: Vec<bool>,
    finished: Vec<bool>,
    order: Vec<u32>,
    stack: Vec<u32>,
}

impl Passes {
    fn new(n: usize) -> Self {
        Passes {
            discovered: vec![false; n],
            finished: vec![false; n],
            order: Vec::with_capacity(n),
            stack: Vec::new(),
        }
    }
}

impl Csr {
    fn out(&self, u: u32) -> std::ops::Range<usize> {
        self.start[u as usize] as usize..self.start[u as usize + 1] as usize
    }

    fn find(&self, a: u32, b: u32) -> Option<usize> {
        self.out(a).find(|&e| self.to[e] == b)
    }

    fn reason(&self, e: usize, kind: u8) -> Option<Reason> {
        let kinds = self.kinds[e];
        if kinds & kind == 0 {
            return None;
        }
        if kind & DEPS == 0 {
            return Some(Reason::default());
        }
        let before = (kinds & DEPS & kind.wrapping_sub(1)).count_ones() as usize;
        self.reasons
            .get(self.reason_at[e] as usize + before)
            .copied()
    }

    /// The hop of edge `e` (from `from`) as the strongest kind `mask` allows
    /// (data first, rw last).
    fn step(&self, from: u32, e: usize, mask: u8) -> Step {
        let kinds = self.kinds[e] & mask;
        let kind = [WW, WR, PROCESS, REALTIME, RW]
            .into_iter()
            .find(|k| kinds & k != 0)
            .unwrap_or(RW);
        Step {
            from: from as usize,
            to: self.to[e] as usize,
            kind,
            reason: self.reason(e, kind),
        }
    }

    /// The strongly connected components of two or more txns of the graph
    /// restricted to `mask`, in the order Kosaraju's passes (as petgraph runs
    /// them) meet them, each in its DFS order.
    fn kosaraju(&self, mask: u8, p: &mut Passes) -> Vec<Vec<u32>> {
        let n = self.start.len() - 1;
        p.discovered.fill(false);
        p.finished.fill(false);
        p.order.clear();
        // First pass: post-order DFS on the reversed graph.
        for i in 0..n {
            if p.discovered[i] {
                continue;
            }
            p.stack.clear();
            p.stack.push(i as u32);
            while let Some(&x) = p.stack.last() {
                let xi = x as usize;
                if !p.discovered[xi] {
                    p.discovered[xi] = true;
                    for e in self.in_start[xi] as usize..self.in_start[xi + 1] as usize {
                        let s = self.in_from[e];
                        if self.in_kinds[e] & mask != 0 && !p.discovered[s as usize] {
                            p.stack.push(s);
                        }
                    }
                } else {
                    p.stack.pop();
                    if !p.finished[xi] {
                        p.finished[xi] = true;
                        p.order.push(x);
                    }
                }
            }
        }
        // Second pass: pre-order DFS on the graph, by decreasing finish time.
        p.discovered.fill(false);
        let mut sccs = Vec::new();
        let mut scc: Vec<u32> = Vec::new();
        for k in (0..p.order.len()).rev() {
            let i = p.order[k];
            if p.discovered[i as usize] {
                continue;
            }
            p.stack.clear();
            p.stack.push(i);
            scc.clear();
            while let Some(x) = p.stack.pop() {
                if p.discovered[x as usize] {
                    continue;
                }
                p.discovered[x as usize] = true;
                for e in self.out(x) {
                    let t = self.to[e];
                    if self.kinds[e] & mask != 0 && !p.discovered[t as usize] {
                        p.stack.push(t);
                    }
                }
                scc.push(x);
            }
            if scc.len() > 1 {
                sccs.push(scc.clone());
            }
        }
        sccs
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

/// A* (with no estimate: Dijkstra) from one node to another inside one
/// component, with petgraph's heap discipline, reusing its tables.
struct Search {
    score: Vec<u64>,
    came: Vec<u32>,
    touched: Vec<u32>,
    heap: BinaryHeap<Scored>,
}

/// A heap entry ordered by score alone, smallest first (petgraph's `MinScored`).
struct Scored(u64, u32);

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for Scored {}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.cmp(&self.0)
    }
}

impl Search {
    fn new(n: usize) -> Self {
        Search {
            score: vec![u64::MAX; n],
            came: vec![NONE; n],
            touched: Vec::new(),
            heap: BinaryHeap::new(),
        }
    }

    /// The cheapest path `start` → `goal` over edges of `mask` inside component
    /// `c`, as node indices.
    fn astar(
        &mut self,
        g: &Csr,
        start: u32,
        goal: u32,
        mask: u8,
        comp: &[u32],
        c: u32,
    ) -> Option<Vec<u32>> {
        for &x in &self.touched {
            self.score[x as usize] = u64::MAX;
            self.came[x as usize] = NONE;
        }
        self.touched.clear();
        self.heap.clear();
        self.score[start as usize] = 0;
        self.touched.push(start);
        self.heap.push(Scored(0, start));
        while let Some(Scored(g_node, node)) = self.heap.pop() {
            if node == goal {
                let mut path = vec![goal];
                let mut at = goal;
                while self.came[at as usize] != NONE {
                    at = self.came[at as usize];
                    path.push(at);
                }
                path.reverse();
                return Some(path);
            }
            if self.score[node as usize] < g_node {
                continue;
            }
            if comp[node as usize] != c {
                continue;
            }
            for e in g.out(node) {
                let next = g.to[e];
                if g.kinds[e] & mask == 0 || comp[next as usize] != c {
                    continue;
                }
                let g_next = g_node + cost(g.kinds[e] & mask);
                let old = self.score[next as usize];
                if g_next >= old {
                    continue;
                }
                if old == u64::MAX {
                    self.touched.push(next);
                }
                self.score[next as usize] = g_next;
                self.came[next as usize] = node;
                self.heap.push(Scored(g_next, next));
            }
        }
        None
    }
}

/// The anomaly a cycle shows.
pub fn classify(steps: &[Step]) -> Kind {
    let rws = steps.iter().filter(|s| s.kind == RW).count();
    let class = match rws {
        0 if steps.iter().all(|s| s.kind == WW || s.kind & ORDER != 0) => CycleClass::G0,
        0 => CycleClass::G1c,
        1 => CycleClass::GSingle,
        _ => CycleClass::G2Item,
    };
    let order = if steps.iter().any(|s| s.kind == REALTIME) {
        Order::Realtime
    } else if steps.iter().any(|s| s.kind == PROCESS) {
        Order::Process
    } else {
        Order::None
    };
    Kind::Cycle(class, order)
}

/// The name of an edge kind in explanations.
pub fn kind_name(kind: u8) -> &'static str {
    match kind {
        WW => "ww",
        WR => "wr",
        RW => "rw",
        PROCESS => "process",
        _ => "realtime",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(process: u32, invoke: u64, complete: u64) -> Timing {
        Timing {
            process,
            invoke,
            complete: Some(complete),
            status: Status::Ok,
        }
    }

    #[test]
    fn realtime_edges_are_transitively_reduced() {
        // 0 and 1 overlap; both precede 2, which precedes 3: 0→2, 1→2, 2→3 only.
        let txns = [txn(0, 0, 10), txn(1, 5, 12), txn(2, 20, 30), txn(3, 40, 50)];
        let mut g = DepGraph::new(txns.len());
        g.add_order(|i| txns[i]);
        assert_eq!(g.pairs(), vec![(0, 2), (1, 2), (2, 3)]);
        // An invoke at the instant of a completion is not after it.
        let txns = [txn(0, 0, 10), txn(1, 10, 20)];
        let mut g = DepGraph::new(2);
        g.add_order(|i| txns[i]);
        assert_eq!(g.pairs().len(), 0);
    }

    #[test]
    fn a_cycle_is_classified_by_its_edges() {
        let mut g = DepGraph::new(2);
        g.add(0, 1, WR, Reason::default());
        g.add(1, 0, RW, Reason::default());
        let far = Instant::now() + std::time::Duration::from_secs(5);
        let found = g.cycles(far).expect("in time");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, Kind::Cycle(CycleClass::GSingle, Order::None));
    }

    #[test]
    fn merged_edges_keep_every_kind_and_the_first_reason_of_each() {
        let r = |key| Reason { key, a: 0, b: 0 };
        let mut g = DepGraph::new(3);
        g.add(0, 1, WR, r(1));
        g.add(0, 1, WR, r(2));
        g.add(0, 1, WW, r(3));
        g.add(1, 0, RW, r(4));
        g.add_order(|i| txn(0, i as u64 * 10, i as u64 * 10 + 5));
        g.add(1, 2, RW, r(5));
        let csr = g.csr();
        let e = csr.find(0, 1).expect("0 → 1");
        assert_eq!(csr.kinds[e], WR | WW | PROCESS | REALTIME);
        assert_eq!(csr.reason(e, WR), Some(r(1)));
        assert_eq!(csr.reason(e, WW), Some(r(3)));
        assert_eq!(csr.reason(e, PROCESS), Some(Reason::default()));
        assert_eq!(csr.reason(e, RW), None);
        let e = csr
            .find(1, 2)
            .expect("1 → 2: a dependency after the order edges");
        assert_eq!(csr.reason(e, RW), Some(r(5)));
        // 1's edges newest first: 1 → 2 (process, then rw) before 1 → 0.
        let targets: Vec<u32> = csr.out(1).map(|e| csr.to[e]).collect();
        assert_eq!(targets, vec![2, 0]);
    }
}
