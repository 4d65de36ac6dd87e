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

/// What the partition's ops say about one crashed write's value.
#[derive(Clone, Copy)]
struct Tally {
    /// Writes and cas that produce the value.
    producers: u32,
    /// Some read or cas expects the value.
    observed: bool,
    /// Earliest return of a completed op that expects it (`NEVER` if none).
    first_observer: u64,
}

/// Apply both reductions to one partition; returns how many writes were dropped.
///
/// Neither holds when the key is appended to: a later append builds on the
/// crashed write's value (a read can see it as a prefix), and an append can
/// produce the same value. Such partitions are left as they are.
pub fn settle(ops: &mut Vec<Compiled>) -> usize {
    if ops.iter().any(|op| matches!(op.step, Step::Append(_))) {
        return 0;
    }
    // Only crashed writes' values matter: tallying just those keeps the map tiny
    // (a few entries) however many values the partition holds.
    let mut tally: HashMap<Val, Tally, BuildHasherDefault<MixHasher>> = ops
        .iter()
        .filter(|op| op.indeterminate)
        .filter_map(|op| match op.step {
            Step::Write(v) => Some((
                v,
                Tally {
                    producers: 0,
                    observed: false,
                    first_observer: NEVER,
                },
            )),
            _ => None,
        })
        .collect();
    if tally.is_empty() {
        return 0;
    }
    let mut refused_cas = false;
    for op in ops.iter() {
        let (produced, observed) = match op.step {
            Step::Write(v) => (Some(v), None),
            Step::Cas(old, new) => (Some(new), Some(old)),
            Step::Read(v) => (None, Some(v)),
            Step::CasRefused(_) => {
                refused_cas = true;
                (None, None)
            }
            Step::Append(_) => (None, None),
        };
        if let Some(t) = produced.and_then(|v| tally.get_mut(&v)) {
            t.producers += 1;
        }
        if let Some(t) = observed.and_then(|v| tally.get_mut(&v)) {
            t.observed = true;
            t.first_observer = t.first_observer.min(op.ret);
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
        let Some(t) = tally.get(&v) else {
            return true;
        };
        if !t.observed {
            return refused_cas;
        }
        // The initial value is produced without any write: no bound.
        if v != NIL && t.first_observer != NEVER && t.producers == 1 {
            op.ret = t.first_observer.max(op.call);
        }
        true
    });
    before - ops.len()
}
