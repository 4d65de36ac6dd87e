//! Progress over time from a history: how many operations were invoked in each
//! time bucket and how they ended (ok / failed / unknown), their latency (p50 / p99
//! of the ops that completed), and the fault windows the ops' `fault_epoch` places
//! on the same clock. The Run screen's live chart draws it while the history is
//! written; each seed's figures are kept under `metrics/` for the report.
//!
//! Time is the recorder's own clock, counted from the first invoke, so a history
//! nobody here wrote is charted the same way. A fault window is where the ops that
//! carry its epoch fall: from the first invoke under it to the last invoke or
//! completion under it — what the workload saw of the fault, not the injector's
//! timestamps (which sit on another clock).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::history::Op;

/// One time bucket of the series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Seconds from the first invoke to the bucket's start.
    pub start_s: f64,
    /// Ops invoked in the bucket that were acknowledged.
    pub ok: u32,
    /// Ops invoked in the bucket that completed with an error.
    pub fail: u32,
    /// Ops invoked in the bucket whose effect is unknown (timeout, in flight).
    pub unknown: u32,
    /// Latency percentiles of the bucket's completed ops, in milliseconds.
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

impl Bucket {
    pub fn total(&self) -> u32 {
        self.ok + self.fail + self.unknown
    }
}

/// What is known of one fault, to name its window: its epoch, its id and whether
/// its landing was proven (`None` while not yet decided).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultMark {
    pub epoch: u64,
    pub fault: String,
    pub proven: Option<bool>,
}

/// Where the ops under one fault epoch fall on the series' clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub epoch: u64,
    /// The fault's id, or `epoch N` when no mark names it.
    pub fault: String,
    pub from_s: f64,
    pub to_s: f64,
    pub proven: Option<bool>,
}

/// A history's progress over time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub bucket_s: f64,
    pub buckets: Vec<Bucket>,
    pub windows: Vec<Window>,
    /// Ops read, and how many were charted (an op before the first invoke cannot be).
    pub ops: usize,
}

impl Series {
    /// The largest op count of any bucket (the chart's scale).
    pub fn peak(&self) -> u32 {
        self.buckets.iter().map(Bucket::total).max().unwrap_or(0)
    }

    /// Seconds covered by the buckets.
    pub fn span_s(&self) -> f64 {
        self.buckets.len() as f64 * self.bucket_s
    }

    /// The series as CSV: one row per bucket, a window's epoch in the last column
    /// when the bucket's start lies inside it.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("start_s,ok,fail,unknown,ops_per_s,p50_ms,p99_ms,fault\n");
        for b in &self.buckets {
            let rate = f64::from(b.total()) / self.bucket_s;
            let fault = self
                .windows
                .iter()
                .filter(|w| w.from_s <= b.start_s + self.bucket_s && b.start_s <= w.to_s)
                .map(|w| w.fault.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            let ms = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "{:.3},{},{},{},{rate:.3},{},{},{fault}",
                b.start_s,
                b.ok,
                b.fail,
                b.unknown,
                ms(b.p50_ms),
                ms(b.p99_ms),
            );
        }
        out
    }
}

/// One op as the series counts it: when it was invoked, how it ended and, if it
/// completed, how long it took — all the series reads of an op, so a long run's
/// chart keeps 24 bytes per op instead of the op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Charted {
    invoke: u64,
    latency: Option<u64>,
    outcome: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    Fail,
    Unknown,
}

impl Charted {
    fn of(op: &Op) -> Charted {
        let outcome = if op.is_acked() {
            Outcome::Ok
        } else if op.is_failed() {
            Outcome::Fail
        } else {
            Outcome::Unknown
        };
        Charted {
            invoke: op.invoke_ts,
            latency: op
                .complete_ts
                .filter(|_| !op.timeout)
                .map(|done| done.saturating_sub(op.invoke_ts)),
            outcome,
        }
    }
}

/// The nearest-rank `P`th percentile of a growing multiset, exact, in O(log n) per
/// value: the lowest `rank(n)` values in a max-heap, the others in a min-heap, so
/// the percentile is the max-heap's top. Each new value moves at most one across.
#[derive(Debug, Clone, Default)]
struct Rank<const P: usize> {
    low: BinaryHeap<u64>,
    high: BinaryHeap<Reverse<u64>>,
}

impl<const P: usize> Rank<P> {
    fn add(&mut self, x: u64) {
        if self.low.peek().is_some_and(|top| x <= *top) {
            self.low.push(x);
        } else {
            self.high.push(Reverse(x));
        }
        let n = self.low.len() + self.high.len();
        let rank = (P * n).div_ceil(100).max(1);
        if self.low.len() > rank
            && let Some(top) = self.low.pop()
        {
            self.high.push(Reverse(top));
        } else if self.low.len() < rank
            && let Some(Reverse(least)) = self.high.pop()
        {
            self.low.push(least);
        }
    }

    /// In milliseconds; `None` before any value.
    fn ms(&self) -> Option<f64> {
        self.low.peek().map(|ns| *ns as f64 / 1e6)
    }
}

/// Two ranks are equal when they hold the same values the same way (heaps built
/// by the same additions).
impl<const P: usize> PartialEq for Rank<P> {
    fn eq(&self, other: &Self) -> bool {
        self.low.as_slice() == other.low.as_slice() && self.high.as_slice() == other.high.as_slice()
    }
}

/// A series built as ops come: [`Tally::add`] folds new ops into their buckets and
/// [`Tally::series`] gives what [`of_history`] gives for every op added, at a cost
/// that does not grow with the ops already added — except when the bucket width
/// changes (the span crossed one of [`bucket_for`]'s steps, a few times in a run)
/// or an op is invoked before every other: then the buckets are counted again from
/// the ops' records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    charted: Vec<Charted>,
    /// Earliest and latest invoke among `charted`.
    first: u64,
    last: u64,
    /// The width and origin `buckets` are counted in; width 0 until counted.
    bucket_ns: u64,
    origin: u64,
    buckets: Vec<Bucket>,
    latencies: Vec<(Rank<50>, Rank<99>)>,
    /// Epoch → first invoke and last invoke or completion under it.
    spans: BTreeMap<u64, (u64, u64)>,
}

impl Tally {
    /// Folds `ops` in.
    pub fn add(&mut self, ops: &[Op]) {
        for op in ops {
            let c = Charted::of(op);
            if self.charted.is_empty() {
                (self.first, self.last) = (c.invoke, c.invoke);
            }
            self.first = self.first.min(c.invoke);
            self.last = self.last.max(c.invoke);
            self.charted.push(c);
            if self.bucket_ns != 0 && self.origin == self.first {
                self.fold(c);
            }
            // Epoch 0 is "outside every fault".
            if let Some(epoch) = op.fault_epoch.filter(|e| *e > 0) {
                let end = op.complete_ts.unwrap_or(op.invoke_ts).max(op.invoke_ts);
                let span = self.spans.entry(epoch).or_insert((op.invoke_ts, end));
                span.0 = span.0.min(op.invoke_ts);
                span.1 = span.1.max(end);
            }
        }
    }

    /// Ops added.
    pub fn len(&self) -> usize {
        self.charted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.charted.is_empty()
    }

    /// The series of every op added, in buckets as wide as [`bucket_for`] picks for
    /// their span (first to last invoke), windows named by `marks`.
    pub fn series(&mut self, marks: &[FaultMark]) -> Series {
        self.series_in(
            bucket_for(Duration::from_nanos(self.last - self.first)),
            marks,
        )
    }

    /// The series of every op added in buckets of `bucket`.
    fn series_in(&mut self, bucket: Duration, marks: &[FaultMark]) -> Series {
        let bucket_ns = u64::try_from(bucket.as_nanos()).unwrap_or(u64::MAX).max(1);
        let bucket_s = bucket.as_secs_f64().max(1e-9);
        if self.charted.is_empty() {
            return Series {
                bucket_s,
                ..Series::default()
            };
        }
        if bucket_ns != self.bucket_ns || self.origin != self.first {
            (self.bucket_ns, self.origin) = (bucket_ns, self.first);
            self.buckets.clear();
            self.latencies.clear();
            for i in 0..self.charted.len() {
                self.fold(self.charted[i]);
            }
        }
        let buckets = self
            .buckets
            .iter()
            .zip(&self.latencies)
            .enumerate()
            .map(|(i, (b, (p50, p99)))| Bucket {
                start_s: i as f64 * bucket_s,
                p50_ms: p50.ms(),
                p99_ms: p99.ms(),
                ..b.clone()
            })
            .collect();
        let secs = |ts: u64| (ts - self.origin) as f64 / 1e9;
        let windows = self
            .spans
            .iter()
            .map(|(&epoch, &(from, to))| {
                let mark = marks.iter().find(|m| m.epoch == epoch);
                Window {
                    epoch,
                    fault: mark.map_or_else(|| format!("epoch {epoch}"), |m| m.fault.clone()),
                    from_s: secs(from),
                    to_s: secs(to),
                    proven: mark.and_then(|m| m.proven),
                }
            })
            .collect();
        Series {
            bucket_s,
            buckets,
            windows,
            ops: self.charted.len(),
        }
    }

    /// Counts one op in its bucket of the current width and origin.
    fn fold(&mut self, c: Charted) {
        let at = usize::try_from((c.invoke - self.origin) / self.bucket_ns).unwrap_or(usize::MAX);
        if at >= self.buckets.len() {
            // An op far beyond the rest (a stray clock) would allocate without bound.
            if at > 1_000_000 {
                return;
            }
            self.buckets.resize(at + 1, Bucket::default());
            self.latencies.resize(at + 1, Default::default());
        }
        let b = &mut self.buckets[at];
        match c.outcome {
            Outcome::Ok => b.ok += 1,
            Outcome::Fail => b.fail += 1,
            Outcome::Unknown => b.unknown += 1,
        }
        if let Some(latency) = c.latency {
            let (p50, p99) = &mut self.latencies[at];
            p50.add(latency);
            p99.add(latency);
        }
    }
}

/// The series of `ops` in buckets of `bucket`, windows named by `marks`.
pub fn of_ops(ops: &[Op], bucket: Duration, marks: &[FaultMark]) -> Series {
    let mut tally = Tally::default();
    tally.add(ops);
    tally.series_in(bucket, marks)
}

/// The series of `ops` in buckets as wide as [`bucket_for`] picks for their span
/// (first to last invoke).
pub fn of_history(ops: &[Op], marks: &[FaultMark]) -> Series {
    let mut tally = Tally::default();
    tally.add(ops);
    tally.series(marks)
}

/// The bucket width for a run of `span`: the narrowest of a few round widths that
/// keeps the run within 120 buckets, so a short run still shows its shape and a long
/// one fits a screen's worth of columns.
pub fn bucket_for(span: Duration) -> Duration {
    const WIDTHS_MS: [u64; 9] = [100, 250, 500, 1_000, 5_000, 15_000, 30_000, 60_000, 300_000];
    let span_ms = u64::try_from(span.as_millis()).unwrap_or(u64::MAX);
    let ms = WIDTHS_MS
        .into_iter()
        .find(|w| span_ms / w < 120)
        .unwrap_or(300_000);
    Duration::from_millis(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use compact_str::ToCompactString;
    use serde_json::Value;

    fn op(invoke_ms: u64, took_ms: Option<u64>, error: bool, epoch: Option<u64>) -> Op {
        Op {
            op_id: invoke_ms.to_compact_string(),
            process: "0".into(),
            invoke_ts: invoke_ms * 1_000_000,
            complete_ts: took_ms.map(|t| (invoke_ms + t) * 1_000_000),
            op_type: "read".into(),
            key: None,
            input: Value::Null,
            output: Value::Null,
            error: error.then(|| "e".to_string()),
            timeout: took_ms.is_none(),
            node: None,
            fault_epoch: epoch,
        }
    }

    #[test]
    fn buckets_count_outcomes_and_latency_by_invoke_time() {
        let ops = vec![
            op(0, Some(10), false, Some(0)),
            op(500, Some(30), false, Some(0)),
            op(900, None, false, Some(0)),
            op(1_200, Some(5), true, Some(1)),
            op(2_999, Some(100), false, Some(1)),
        ];
        let marks = [FaultMark {
            epoch: 1,
            fault: "pause-n2".into(),
            proven: Some(true),
        }];
        let s = of_ops(&ops, Duration::from_secs(1), &marks);
        assert_eq!(s.buckets.len(), 3);
        assert_eq!((s.buckets[0].ok, s.buckets[0].unknown), (2, 1));
        assert_eq!(s.buckets[1].fail, 1);
        assert_eq!(s.buckets[0].p50_ms, Some(10.0));
        assert_eq!(s.buckets[0].p99_ms, Some(30.0));
        assert_eq!(s.windows.len(), 1, "epoch 0 is no fault");
        let w = &s.windows[0];
        assert_eq!((w.fault.as_str(), w.proven), ("pause-n2", Some(true)));
        assert!((w.from_s - 1.2).abs() < 1e-9 && (w.to_s - 3.099).abs() < 1e-9);
        let csv = s.to_csv();
        assert!(csv.starts_with("start_s,ok,fail,unknown"));
        assert!(csv.lines().nth(2).is_some_and(|l| l.ends_with("pause-n2")));
        assert!(csv.lines().nth(1).is_some_and(|l| l.ends_with(',')));
    }

    #[test]
    fn an_unnamed_epoch_and_an_empty_history_chart_without_guessing() {
        let s = of_ops(
            &[op(0, Some(1), false, Some(4))],
            Duration::from_secs(1),
            &[],
        );
        assert_eq!(s.windows[0].fault, "epoch 4");
        assert_eq!(s.windows[0].proven, None);
        let empty = of_ops(&[], Duration::from_secs(1), &[]);
        assert!(empty.buckets.is_empty() && empty.peak() == 0);
    }

    /// The series as it was computed before [`Tally`], all at once (each bucket's
    /// latencies sorted): the reference the tally is checked against.
    fn reference(ops: &[Op], marks: &[FaultMark]) -> Series {
        let first = ops.iter().map(|o| o.invoke_ts).min().unwrap_or(0);
        let last = ops.iter().map(|o| o.invoke_ts).max().unwrap_or(0);
        let bucket = bucket_for(Duration::from_nanos(last - first));
        let bucket_ns = bucket.as_nanos() as u64;
        let mut buckets: Vec<Bucket> = Vec::new();
        let mut latencies: Vec<Vec<u64>> = Vec::new();
        for op in ops {
            let at = ((op.invoke_ts - first) / bucket_ns) as usize;
            if at >= buckets.len() {
                buckets.resize(at + 1, Bucket::default());
                latencies.resize(at + 1, Vec::new());
            }
            let b = &mut buckets[at];
            if op.is_acked() {
                b.ok += 1;
            } else if op.is_failed() {
                b.fail += 1;
            } else {
                b.unknown += 1;
            }
            if let Some(done) = op.complete_ts.filter(|_| !op.timeout) {
                latencies[at].push(done - op.invoke_ts);
            }
        }
        let rank = |sorted: &[u64], p: usize| {
            let r = (p * sorted.len()).div_ceil(100).max(1);
            (!sorted.is_empty()).then(|| sorted[r - 1] as f64 / 1e6)
        };
        for (i, (b, mut lat)) in buckets.iter_mut().zip(latencies).enumerate() {
            b.start_s = i as f64 * bucket.as_secs_f64();
            lat.sort_unstable();
            b.p50_ms = rank(&lat, 50);
            b.p99_ms = rank(&lat, 99);
        }
        let mut windows: Vec<Window> = Vec::new();
        let mut epochs: Vec<u64> = ops.iter().filter_map(|o| o.fault_epoch).collect();
        epochs.sort_unstable();
        epochs.dedup();
        for epoch in epochs.into_iter().filter(|e| *e > 0) {
            let under = ops.iter().filter(|o| o.fault_epoch == Some(epoch));
            let from = under.clone().map(|o| o.invoke_ts).min().unwrap_or(0);
            let to = under
                .map(|o| o.complete_ts.unwrap_or(o.invoke_ts).max(o.invoke_ts))
                .max()
                .unwrap_or(0);
            let mark = marks.iter().find(|m| m.epoch == epoch);
            windows.push(Window {
                epoch,
                fault: mark.map_or_else(|| format!("epoch {epoch}"), |m| m.fault.clone()),
                from_s: (from - first) as f64 / 1e9,
                to_s: (to - first) as f64 / 1e9,
                proven: mark.and_then(|m| m.proven),
            });
        }
        Series {
            bucket_s: bucket.as_secs_f64(),
            buckets,
            windows,
            ops: ops.len(),
        }
    }

    /// A tally fed a history in chunks gives after each chunk the series of every
    /// op so far computed all at once: through the bucket width's changes (the run
    /// grows from 0.1 s to 60 s buckets), a late op invoked before all the others,
    /// and buckets whose latencies arrive out of order.
    #[test]
    fn a_tally_fed_in_chunks_gives_the_series_of_the_whole() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut below = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut ops = Vec::new();
        // Invokes from 1 s to about 2 h, denser early; some ops land late.
        let mut at_ms = 1_000u64;
        for i in 0..6_000u64 {
            at_ms += below(if i < 3_000 { 20 } else { 2_400 });
            let invoke = at_ms.saturating_sub(below(4) * below(3_000));
            let took = match below(10) {
                0 => None,
                _ => Some(below(500)),
            };
            let epoch = (i / 700) % 3;
            ops.push(op(invoke, took, below(7) == 0, Some(epoch)));
        }
        // Invoked before every other op, read last: the origin moves.
        ops.push(op(0, Some(3), false, Some(2)));
        let marks = [FaultMark {
            epoch: 1,
            fault: "kill-n1".into(),
            proven: Some(false),
        }];
        let mut tally = Tally::default();
        let mut from = 0;
        let mut widths = Vec::new();
        while from < ops.len() {
            let to = (from + 1 + below(400) as usize).min(ops.len());
            tally.add(&ops[from..to]);
            let got = tally.series(&marks);
            assert_eq!(got, reference(&ops[..to], &marks), "after {to} ops");
            widths.push(got.bucket_s);
            from = to;
        }
        widths.dedup();
        assert!(widths.len() >= 5, "the width changed only {widths:?}");
        assert_eq!(tally.len(), ops.len());
        assert_eq!(of_history(&ops, &marks), reference(&ops, &marks));
    }

    #[test]
    fn buckets_narrow_for_short_runs_and_widen_for_long_ones() {
        assert_eq!(
            bucket_for(Duration::from_secs(4)),
            Duration::from_millis(100)
        );
        assert_eq!(bucket_for(Duration::from_secs(100)), Duration::from_secs(1));
        assert_eq!(
            bucket_for(Duration::from_secs(3_600)),
            Duration::from_secs(60)
        );
    }
}
