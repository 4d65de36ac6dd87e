//! When the SUT stopped answering while the workload kept trying (method §4, gbb-1).
//!
//! A client blocked in an op is working: the rate of invokes falls because the SUT
//! does not answer, not because the harness stopped. So gbb-1 tells a quiet bucket
//! that clients spent *stalled* (an op in flight that got no answer, or an answer far
//! later than the usual acknowledgement) from one in which they were idle. The
//! stalled stretches are also what the findings report as the SUT's outages.

use super::history::{History, Op};

/// An op that takes more than this many times the median acknowledged latency is
/// stalled, whatever its answer, as is every op that got none (timed out)…
const SLOW_FACTOR: u64 = 10;
/// …but never one shorter than this (a 2 ms median would make 20 ms "stalled").
const SLOW_FLOOR_NS: u64 = 100_000_000;
/// Stalled stretches shorter than this are not reported as outages.
const OUTAGE_MIN_NS: u64 = 1_000_000_000;

/// A stretch of the run during which some client was always stalled in an op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outage {
    /// Start, ns after the first invoke.
    pub start_ns: u64,
    pub length_ns: u64,
    /// Ops invoked inside the stretch, and how each ended.
    pub invoked: u64,
    pub acked: u64,
    pub timed_out: u64,
    pub failed: u64,
}

impl Outage {
    /// One line for evidence: "at +2.0 s for 5.0 s: 12 ops invoked (0 acked, …)".
    pub fn describe(&self) -> String {
        format!(
            "at +{:.1} s for {:.1} s: {} ops invoked ({} acked, {} timed out, {} failed)",
            self.start_ns as f64 / 1e9,
            self.length_ns as f64 / 1e9,
            self.invoked,
            self.acked,
            self.timed_out,
            self.failed
        )
    }
}

/// The stalled intervals of a history, merged and sorted, as absolute times.
pub struct Stalls {
    merged: Vec<(u64, u64)>,
    first_invoke: u64,
}

impl Stalls {
    pub fn of(h: &History) -> Stalls {
        let first_invoke = h.ops.iter().map(|o| o.invoke_ts).min().unwrap_or(0);
        let threshold = slow_threshold(h);
        let ends = busy_ends(h);
        let mut spans: Vec<(u64, u64)> = h
            .ops
            .iter()
            .zip(ends)
            .filter_map(|(op, end)| {
                // A prompt refusal is an answer (a database's serialization
                // failure), not a stall: only no answer, or a late one, stalls.
                let slow = end.saturating_sub(op.invoke_ts) > threshold;
                let unanswered = !op.is_acked() && !op.is_failed();
                (unanswered || slow).then_some((op.invoke_ts, end))
            })
            .filter(|(s, e)| e > s)
            .collect();
        spans.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (s, e) in spans {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        Stalls {
            merged,
            first_invoke,
        }
    }

    /// How much of `[from, to)` (absolute ns) some client spent stalled.
    pub fn covered(&self, from: u64, to: u64) -> u64 {
        let start = self.merged.partition_point(|&(_, e)| e <= from);
        self.merged[start..]
            .iter()
            .take_while(|&&(s, _)| s < to)
            .map(|&(s, e)| e.min(to).saturating_sub(s.max(from)))
            .sum()
    }

    /// The stalled stretches of at least a second, with the ops invoked in each.
    pub fn outages(&self, h: &History) -> Vec<Outage> {
        let mut outages: Vec<Outage> = self
            .merged
            .iter()
            .filter(|(s, e)| e - s >= OUTAGE_MIN_NS)
            .map(|&(s, e)| Outage {
                start_ns: s - self.first_invoke,
                length_ns: e - s,
                invoked: 0,
                acked: 0,
                timed_out: 0,
                failed: 0,
            })
            .collect();
        for op in &h.ops {
            let at = op.invoke_ts - self.first_invoke;
            let i = outages.partition_point(|o| o.start_ns + o.length_ns <= at);
            if let Some(o) = outages.get_mut(i).filter(|o| o.start_ns <= at) {
                o.invoked += 1;
                if op.is_acked() {
                    o.acked += 1;
                } else if op.is_failed() {
                    o.failed += 1;
                } else {
                    o.timed_out += 1;
                }
            }
        }
        outages
    }
}

/// The latency above which an acknowledged op counts as stalled.
fn slow_threshold(h: &History) -> u64 {
    let mut latencies: Vec<u64> = h
        .ops
        .iter()
        .filter(|o| o.is_acked())
        .filter_map(|o| o.complete_ts.map(|c| c.saturating_sub(o.invoke_ts)))
        .collect();
    if latencies.is_empty() {
        return SLOW_FLOOR_NS;
    }
    let mid = latencies.len() / 2;
    let (_, median, _) = latencies.select_nth_unstable(mid);
    median.saturating_mul(SLOW_FACTOR).max(SLOW_FLOOR_NS)
}

/// When each op stopped occupying its client: its completion, or — for an op with no
/// completion (timed out, effect unknown) — its process's next invoke, since a
/// client issues one op at a time; the end of the history for its process's last op.
fn busy_ends(h: &History) -> Vec<u64> {
    let end_of_history = h
        .ops
        .iter()
        .map(|o| o.complete_ts.unwrap_or(o.invoke_ts))
        .max()
        .unwrap_or(0);
    let mut next_invoke: std::collections::HashMap<&str, u64> = Default::default();
    let mut order: Vec<usize> = (0..h.ops.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(h.ops[i].invoke_ts));
    let mut ends = vec![0; h.ops.len()];
    for i in order {
        let op: &Op = &h.ops[i];
        ends[i] = match op.complete_ts {
            Some(c) => c,
            None => next_invoke
                .get(op.process.as_str())
                .copied()
                .unwrap_or(end_of_history),
        };
        next_invoke.insert(op.process.as_str(), op.invoke_ts);
    }
    ends
}
