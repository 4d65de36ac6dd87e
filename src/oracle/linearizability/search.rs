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
//! Two sound prunings beside the cache ([`Pruning::Full`]; the bench and the
//! differential test compare with the cache alone, [`Pruning::CacheOnly`]):
//! - ops that can take effect without changing the state (reads of the current
//!   value, refused cas) are taken without branching: see `forced_candidate`;
//! - on a key with appends, a step is refused when the first pending read can
//!   no longer see its value from the state it leaves: see `can_reach_next_read`.
//!
//! Indeterminate ops have no return entry: they may be linearized anywhere after
//! their call, or never, so the search succeeds once every completed op is in.

use super::append::Concat;
use super::compile::{Compiled, Interner, NEVER, Step, Val};
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
    /// return the deepest branch could not get past, `prefix` the ops that branch
    /// had linearized (partition indices, in the order they take effect) and
    /// `state` the register value there (JSON text).
    Illegal {
        blocked: usize,
        prefix: Vec<usize>,
        state: String,
    },
    Unknown {
        reason: String,
    },
    /// Cut short because the search was asked to stop (another partition was found
    /// not linearizable under `--first`), or never started for that reason.
    Stopped,
}

/// Which sound prunings the search uses beside the configuration cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pruning {
    /// State-keeping ops taken without branching, and every step checked against
    /// the next read it must still reach.
    #[default]
    Full,
    /// The cache of (linearized set, state) alone: Wing–Gong / Lowe with
    /// Porcupine's memoisation, the baseline the prunings are measured and tested
    /// against.
    CacheOnly,
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
        // Calls and returns sorted apart, then merged: histories come in invoke
        // order, so the stable sort of the calls is a single pass, and the returns
        // are nearly sorted too. Ties keep op order, as before the merge.
        let mut calls: Vec<(u64, u32)> = Vec::with_capacity(ops.len());
        let mut returns: Vec<(u64, u32)> = Vec::with_capacity(ops.len());
        for (i, op) in ops.iter().enumerate() {
            calls.push((op.call, 2 * i as u32));
            if op.ret != NEVER {
                returns.push((op.ret, 2 * i as u32 + 1));
            }
        }
        calls.sort_by_key(|&(t, _)| t);
        returns.sort_by_key(|&(t, _)| t);
        let head = 2 * ops.len() as u32;
        let mut next = vec![NIL; ops.len() * 2 + 1];
        let mut prev = vec![NIL; ops.len() * 2 + 1];
        let mut last = head;
        let (mut c, mut r) = (0, 0);
        while c < calls.len() || r < returns.len() {
            // Calls before returns at the same instant: touching ops count as concurrent.
            let take_call = match (calls.get(c), returns.get(r)) {
                (Some(call), Some(ret)) => call.0 <= ret.0,
                (call, _) => call.is_some(),
            };
            let e = if take_call {
                c += 1;
                calls[c - 1].1
            } else {
                r += 1;
                returns[r - 1].1
            };
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

/// One linearization choice on the undo stack.
#[derive(Clone, Copy)]
struct Frame {
    call: u32,
    before: Val,
    /// Taken without branching (see [`Search::forced_candidate`]).
    forced: bool,
}

struct Search<'a> {
    ops: &'a [Compiled],
    concat: Concat<'a>,
    /// The partition has appends: see [`Search::can_reach_next_read`].
    appends: bool,
    prune: bool,
    list: Entries,
    keys: Vec<(u64, u64)>,
    cache: Cache,
    undo: Vec<Frame>,
    state: Val,
    fp: (u64, u64),
    linearized_completed: usize,
    /// The calls of the deepest branch so far (see [`Search::save_deepest`]), and
    /// the shortest the undo stack has been since they were saved.
    deepest: Vec<u32>,
    low_water: usize,
}

impl Search<'_> {
    /// Linearize the call `entry` if it can take effect and leads somewhere new.
    fn try_linearize(&mut self, entry: u32, forced: bool) -> bool {
        let i = (entry / 2) as usize;
        let Some(next_state) = self.ops[i].step.apply(self.state, &mut self.concat) else {
            return false;
        };
        if self.prune && self.appends && !self.can_reach_next_read(i, next_state) {
            return false;
        }
        let (k1, k2) = self.keys[i];
        if !self
            .cache
            .insert((self.fp.0 ^ k1, self.fp.1 ^ k2, next_state))
        {
            return false;
        }
        self.undo.push(Frame {
            call: entry,
            before: self.state,
            forced,
        });
        self.state = next_state;
        self.fp = (self.fp.0 ^ k1, self.fp.1 ^ k2);
        self.list.unlink(entry);
        if self.ops[i].ret != NEVER {
            self.list.unlink(entry + 1);
            self.linearized_completed += 1;
        }
        true
    }

    /// On a key with appends: whether the first pending read (the one whose return
    /// comes first) can still see its value once op `i` has left `state`. Refusing
    /// the step when it cannot is sound — it only cuts branches that cannot succeed:
    ///
    /// That read R, with value v, must take effect in every linearization from
    /// here, and before its return only ops already called can come in between.
    /// Each of them keeps the value (a read, a refused cas), extends it (an
    /// append) or replaces it (a write, a cas). If none replaces it, v is `state`
    /// extended by appends: `state` must begin v. Otherwise the last replacement
    /// sets a value that appends alone then turn into v: some write or cas called
    /// before R returns, other than `i`, must produce a value that begins v.
    ///
    /// A value carries its whole past, so this refutes a wrong order of two appends
    /// at once, not at the next read's return after every order of the ops before
    /// it. (Without appends a wrong value is refuted at the read's return anyway,
    /// and refuting it earlier would name the write, not the read, as the op that
    /// cannot take effect.)
    fn can_reach_next_read(&mut self, i: usize, state: Val) -> bool {
        let mut entry = self.list.next[self.list.head as usize];
        let mut read = None;
        while entry != NIL {
            let j = (entry / 2) as usize;
            if j != i
                && !entry.is_multiple_of(2)
                && let Step::Read(v) = self.ops[j].step
            {
                read = Some((entry, v));
                break;
            }
            entry = self.list.next[entry as usize];
        }
        let Some((read_return, v)) = read else {
            return true;
        };
        if self.concat.is_prefix(state, v) {
            return true;
        }
        // Calls before the read's return are the entries before it in the list.
        let mut entry = self.list.next[self.list.head as usize];
        while entry != read_return {
            let j = (entry / 2) as usize;
            if j != i
                && entry.is_multiple_of(2)
                && let Step::Write(x) | Step::Cas(_, x) = self.ops[j].step
                && self.concat.is_prefix(x, v)
            {
                return true;
            }
            entry = self.list.next[entry as usize];
        }
        false
    }

    /// Undo choices until one whose alternatives remain; returns the entry to
    /// resume scanning from, or `None` when every choice is exhausted.
    fn backtrack(&mut self) -> Option<u32> {
        loop {
            let frame = self.undo.pop()?;
            self.low_water = self.low_water.min(self.undo.len());
            let i = (frame.call / 2) as usize;
            self.state = frame.before;
            self.fp = (self.fp.0 ^ self.keys[i].0, self.fp.1 ^ self.keys[i].1);
            if self.ops[i].ret != NEVER {
                self.list.relink(frame.call + 1);
                self.linearized_completed -= 1;
            }
            self.list.relink(frame.call);
            // A forced choice was the only one worth trying from its configuration.
            if !frame.forced {
                return Some(self.list.next[frame.call as usize]);
            }
        }
    }

    /// Saves the current branch as the deepest. Only what changed since the last
    /// save is copied — the stack below `low_water` is untouched since — so saving
    /// costs no more than the pushes and pops that led here, however deep the
    /// branch and however often the search gets stuck at the same depth.
    fn save_deepest(&mut self) {
        self.deepest.truncate(self.low_water);
        self.deepest
            .extend(self.undo[self.low_water..].iter().map(|f| f.call / 2));
        self.low_water = self.undo.len();
    }

    /// A call before the first pending return that can take effect without
    /// changing the state (a read of the current value, a refused cas). Taking it
    /// now loses nothing: any linearization from here that places it later stays
    /// valid with it moved to the front — it changes no state, and every op that
    /// returned before its call is already linearized. So it needs no branch.
    fn forced_candidate(&self) -> Option<u32> {
        if !self.prune {
            return None;
        }
        let mut entry = self.list.next[self.list.head as usize];
        while entry != NIL && entry.is_multiple_of(2) {
            if self.ops[(entry / 2) as usize].step.keeps(self.state) {
                return Some(entry);
            }
            entry = self.list.next[entry as usize];
        }
        None
    }
}

/// Search for a linearization of `ops` starting from register value `init`;
/// `values` holds the values the ops name. `stop` is asked now and then (beside the
/// budget, every few thousand steps): once it says yes the search ends
/// [`Outcome::Stopped`]. `pruning` says which prunings to use beside the cache.
pub fn search(
    ops: &[Compiled],
    init: Val,
    budget: Budget,
    values: &Interner,
    stop: &dyn Fn() -> bool,
    pruning: Pruning,
) -> (Outcome, Stats) {
    let must_linearize = ops.iter().filter(|o| o.ret != NEVER).count();
    let mut s = Search {
        ops,
        concat: Concat::new(values),
        appends: ops.iter().any(|o| matches!(o.step, Step::Append(_))),
        prune: pruning == Pruning::Full,
        list: Entries::new(ops),
        keys: (0..ops.len() as u64)
            .map(|i| (mix(2 * i), mix(2 * i + 1)))
            .collect(),
        // A linearizable history caches about 1–1.2 configurations per op (kv and
        // register benchmark histories): no regrowth below that, and never more
        // room than the budget allows.
        cache: Cache::with_capacity_and_hasher(
            (ops.len() + ops.len() / 2).min(budget.max_configs),
            Default::default(),
        ),
        undo: Vec::new(),
        state: init,
        fp: (0, 0),
        linearized_completed: 0,
        deepest: Vec::new(),
        low_water: 0,
    };
    let mut deepest: Option<(usize, usize, Val)> = None;
    let mut stats = Stats::default();
    let mut entry = NIL;
    // At a configuration reached by a new choice (not by backtracking into it).
    let mut fresh = true;
    loop {
        if s.linearized_completed == must_linearize {
            stats.configs = s.cache.len();
            return (Outcome::Linearizable, stats);
        }
        stats.steps += 1;
        if stats.steps & 0xFFF == 0 {
            if let Some(reason) = over_budget(&budget, s.cache.len()) {
                stats.configs = s.cache.len();
                return (Outcome::Unknown { reason }, stats);
            }
            if stop() {
                stats.configs = s.cache.len();
                return (Outcome::Stopped, stats);
            }
        }
        let mut stuck = false;
        if fresh {
            fresh = false;
            match s.forced_candidate() {
                Some(forced) if s.try_linearize(forced, true) => {
                    fresh = true;
                    continue;
                }
                // Explored before and failed, or (appends) the next read is out of
                // reach from this value: so does this configuration.
                Some(_) => stuck = true,
                None => entry = s.list.next[s.list.head as usize],
            }
        }
        if !stuck && entry != NIL && entry.is_multiple_of(2) {
            if s.try_linearize(entry, false) {
                fresh = true;
            } else {
                entry = s.list.next[entry as usize];
            }
            continue;
        }
        // A return entry (or the list's end): the branch is stuck here.
        if !stuck && entry != NIL && deepest.is_none_or(|(d, _, _)| s.undo.len() >= d) {
            deepest = Some((s.undo.len(), (entry / 2) as usize, s.state));
            s.save_deepest();
        }
        match s.backtrack() {
            Some(resume) => entry = resume,
            None => {
                stats.configs = s.cache.len();
                let (_, blocked, state) = deepest.unwrap_or((0, 0, init));
                return (
                    Outcome::Illegal {
                        blocked,
                        prefix: s.deepest.iter().map(|&i| i as usize).collect(),
                        state: s.concat.name(state),
                    },
                    stats,
                );
            }
        }
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
