//! The Wing–Gong / Lowe search with Porcupine's memoisation, on one partition.
//!
//! Call and return entries sit in one time-ordered doubly linked list (arrays of
//! indices, no pointers). The search walks the list from its head: a call whose
//! op can take effect in the current state is linearized — its call and return
//! entries are lifted out and the walk restarts — unless the pair (set of
//! linearized ops, state) was already explored. Reaching a return entry means
//! that op was never linearized in this branch: the last choice is undone.
//!
//! The linearized set is identified by a 128-bit Zobrist fingerprint (XOR of two
//! random words per op) updated in O(1) per step instead of hashing a bitset of
//! every op: that keeps each cache entry at 24 bytes whatever the history's size.
//! Two distinct sets sharing a fingerprint (probability about k²/2^129 for k
//! cached configurations) could only prune a branch — a false "not
//! linearizable", never a false PASS.
//!
//! Indeterminate ops have no return entry: they may be linearized anywhere after
//! their call, or never, so the search succeeds once every completed op is in.

use super::compile::{Compiled, NEVER, Val};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

/// Limits of one check; exceeding either gives [`Outcome::Unknown`].
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub deadline: Option<Instant>,
    /// Most configurations the cache may hold (24 bytes each).
    pub max_configs: usize,
}

/// How the search on one partition ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Linearizable,
    /// No linearization; `blocked` is the op (index into the partition) whose
    /// return the deepest branch could not get past, `depth` how many ops that
    /// branch had linearized and `state` the register value there.
    Illegal {
        blocked: usize,
        depth: usize,
        state: Val,
    },
    Unknown {
        reason: String,
    },
}

/// Peak figures of one search, for evidence and the benchmark.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub configs: usize,
    pub steps: u64,
}

const NIL: u32 = u32::MAX;

/// The cache key is already uniformly random: use its first word as the hash.
#[derive(Default)]
struct FingerprintHasher(u64);

impl Hasher for FingerprintHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
    fn write_u32(&mut self, n: u32) {
        self.0 ^= u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type Cache = HashSet<(u64, u64, Val), BuildHasherDefault<FingerprintHasher>>;

/// splitmix64: a fixed, well-mixed word per op index.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The entry list: entry `2*i` is op i's call, `2*i+1` its return.
struct Entries {
    next: Vec<u32>,
    prev: Vec<u32>,
    head: u32,
}

impl Entries {
    fn new(ops: &[Compiled]) -> Entries {
        let mut order: Vec<(u64, bool, u32)> = Vec::with_capacity(ops.len() * 2);
        for (i, op) in ops.iter().enumerate() {
            order.push((op.call, false, 2 * i as u32));
            if op.ret != NEVER {
                order.push((op.ret, true, 2 * i as u32 + 1));
            }
        }
        // Calls before returns at the same instant: touching ops count as concurrent.
        order.sort_unstable();
        let head = 2 * ops.len() as u32;
        let mut next = vec![NIL; ops.len() * 2 + 1];
        let mut prev = vec![NIL; ops.len() * 2 + 1];
        let mut last = head;
        for &(_, _, e) in &order {
            next[last as usize] = e;
            prev[e as usize] = last;
            last = e;
        }
        Entries { next, prev, head }
    }

    #[inline]
    fn unlink(&mut self, e: u32) {
        let (p, n) = (self.prev[e as usize], self.next[e as usize]);
        self.next[p as usize] = n;
        if n != NIL {
            self.prev[n as usize] = p;
        }
    }

    #[inline]
    fn relink(&mut self, e: u32) {
        let (p, n) = (self.prev[e as usize], self.next[e as usize]);
        self.next[p as usize] = e;
        if n != NIL {
            self.prev[n as usize] = e;
        }
    }
}

/// Search for a linearization of `ops` starting from register value `init`.
pub fn search(ops: &[Compiled], init: Val, budget: Budget) -> (Outcome, Stats) {
    let must_linearize = ops.iter().filter(|o| o.ret != NEVER).count();
    let mut list = Entries::new(ops);
    let keys: Vec<(u64, u64)> = (0..ops.len() as u64)
        .map(|i| (mix(2 * i), mix(2 * i + 1)))
        .collect();
    let mut cache = Cache::default();
    // Undo stack: the call entry linearized and the state before it.
    let mut undo: Vec<(u32, Val)> = Vec::new();
    let (mut state, mut fp1, mut fp2) = (init, 0u64, 0u64);
    let mut linearized_completed = 0usize;
    let mut deepest: Option<(usize, usize, Val)> = None;
    let mut stats = Stats::default();
    let mut entry = list.next[list.head as usize];
    loop {
        if linearized_completed == must_linearize {
            stats.configs = cache.len();
            return (Outcome::Linearizable, stats);
        }
        stats.steps += 1;
        if stats.steps & 0xFFF == 0
            && let Some(reason) = over_budget(&budget, cache.len())
        {
            stats.configs = cache.len();
            return (Outcome::Unknown { reason }, stats);
        }
        let is_call = entry != NIL && entry.is_multiple_of(2);
        if is_call {
            let i = (entry / 2) as usize;
            if let Some(next_state) = ops[i].step.apply(state) {
                let (k1, k2) = keys[i];
                if cache.insert((fp1 ^ k1, fp2 ^ k2, next_state)) {
                    undo.push((entry, state));
                    state = next_state;
                    fp1 ^= k1;
                    fp2 ^= k2;
                    list.unlink(entry);
                    if ops[i].ret != NEVER {
                        list.unlink(entry + 1);
                        linearized_completed += 1;
                    }
                    entry = list.next[list.head as usize];
                    continue;
                }
            }
            entry = list.next[entry as usize];
            continue;
        }
        // A return entry (or the list's end): the branch is stuck here.
        if entry != NIL && deepest.is_none_or(|(d, _, _)| undo.len() >= d) {
            deepest = Some((undo.len(), (entry / 2) as usize, state));
        }
        let Some((call, before)) = undo.pop() else {
            stats.configs = cache.len();
            let (depth, blocked, state) = deepest.unwrap_or((0, 0, init));
            return (
                Outcome::Illegal {
                    blocked,
                    depth,
                    state,
                },
                stats,
            );
        };
        let i = (call / 2) as usize;
        state = before;
        fp1 ^= keys[i].0;
        fp2 ^= keys[i].1;
        if ops[i].ret != NEVER {
            list.relink(call + 1);
            linearized_completed -= 1;
        }
        list.relink(call);
        entry = list.next[call as usize];
    }
}

fn over_budget(budget: &Budget, configs: usize) -> Option<String> {
    if configs > budget.max_configs {
        return Some(format!(
            "memory budget exceeded: more than {} search configurations cached",
            budget.max_configs
        ));
    }
    match budget.deadline {
        Some(d) if Instant::now() > d => Some("time budget exceeded".to_string()),
        _ => None,
    }
}
