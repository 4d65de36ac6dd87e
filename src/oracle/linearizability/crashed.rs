//! Settling crashed writes before the search. A write whose outcome is unknown
//! may take effect any time after its call, or never; left pending, every such
//! write doubles the configurations the search can reach. Two sound reductions:
//!
//! - A crashed write of a value that no read returns and no compare-and-set
//!   expects is dropped: taking effect can only be undone by the next write
//!   without anyone having seen it, so it is equivalent to never taking effect.
//!   (Kept when a refused cas exists: "the value was not X" can see it.)
//! - A crashed write whose value is produced by no other op but is observed must
//!   have taken effect before the first observer returned: it gets that bound as
//!   its return time, and so becomes an ordinary op of the search.

use super::compile::{Compiled, MixHasher, NEVER, NIL, Step, Val};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Apply both reductions to one partition; returns how many writes were dropped.
pub fn settle(ops: &mut Vec<Compiled>) -> usize {
    let mut producers: HashMap<Val, u32, BuildHasherDefault<MixHasher>> = HashMap::default();
    // Value → earliest return of a completed op that needs it (`NEVER` if only
    // pending ops need it).
    let mut observed: HashMap<Val, u64, BuildHasherDefault<MixHasher>> = HashMap::default();
    let mut refused_cas = false;
    for op in ops.iter() {
        match op.step {
            Step::Write(v) => *producers.entry(v).or_default() += 1,
            Step::Cas(old, new) => {
                *producers.entry(new).or_default() += 1;
                let bound = observed.entry(old).or_insert(NEVER);
                *bound = (*bound).min(op.ret);
            }
            Step::Read(v) => {
                let bound = observed.entry(v).or_insert(NEVER);
                *bound = (*bound).min(op.ret);
            }
            Step::CasRefused(_) => refused_cas = true,
        }
    }
    let before = ops.len();
    ops.retain_mut(|op| {
        let Step::Write(v) = op.step else {
            return true;
        };
        if !op.indeterminate {
            return true;
        }
        match observed.get(&v) {
            None => refused_cas,
            Some(&first) => {
                // The initial value is produced without any write: no bound.
                if v != NIL && first != NEVER && producers.get(&v) == Some(&1) {
                    op.ret = first.max(op.call);
                }
                true
            }
        }
    });
    before - ops.len()
}
