//! Thresholds fixed before the run: SLOs over the whole history, and the
//! per-group fairness formulas. Latency is complete − invoke of acknowledged ops;
//! the error rate counts failed and timed-out ops; throughput is acknowledged ops
//! per second over the history's span (first invoke to last completion).

use super::checker::{Anomaly, judged, missing_fields_report, unknown};
use super::history::{History, Op};
use super::params::Params;
use crate::oracle::CheckerReport;
use std::collections::BTreeMap;

/// Latency, error and throughput figures of a set of ops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Figures {
    pub(super) p50_ms: f64,
    pub(super) p90_ms: f64,
    pub(super) p99_ms: f64,
    pub(super) p999_ms: f64,
    pub(super) max_ms: f64,
    pub(super) error_rate: f64,
    pub(super) throughput: f64,
}

/// Nearest-rank percentile of sorted `v`.
fn percentile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1e6
}

pub(super) fn figures(ops: &[&Op], span_s: f64) -> Figures {
    let mut lat: Vec<u64> = ops
        .iter()
        .filter(|o| o.is_acked())
        .filter_map(|o| o.complete_ts.map(|c| c.saturating_sub(o.invoke_ts)))
        .collect();
    lat.sort_unstable();
    let errors = ops.iter().filter(|o| o.is_failed() || o.timeout).count();
    Figures {
        p50_ms: percentile(&lat, 0.50),
        p90_ms: percentile(&lat, 0.90),
        p99_ms: percentile(&lat, 0.99),
        p999_ms: percentile(&lat, 0.999),
        max_ms: percentile(&lat, 1.0),
        error_rate: if ops.is_empty() {
            0.0
        } else {
            errors as f64 / ops.len() as f64
        },
        throughput: if span_s > 0.0 {
            lat.len() as f64 / span_s
        } else {
            0.0
        },
    }
}

/// Seconds from the first invoke to the last completion (or invoke).
fn span_s(ops: &[&Op]) -> f64 {
    let first = ops.iter().map(|o| o.invoke_ts).min().unwrap_or(0);
    let last = ops
        .iter()
        .map(|o| o.complete_ts.unwrap_or(o.invoke_ts))
        .max()
        .unwrap_or(0);
    last.saturating_sub(first) as f64 / 1e9
}

const TIMING: &[&str] = &["op_id", "invoke_ts", "complete_ts", "error", "timeout"];

pub mod thresholds {
    use super::*;

    pub const NAME: &str = "slo";
    pub const PARAMS: &[&str] = &[
        "p50_ms",
        "p90_ms",
        "p99_ms",
        "p999_ms",
        "max_ms",
        "error_rate",
        "min_throughput",
        "min_window_s",
    ];
    pub const SCOPE: &str = "latency percentiles, error rate and throughput against thresholds \
        declared before the run; does not judge correctness, and a window shorter than \
        min_window_s gives unknown";

    pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
        params.only(NAME, PARAMS)?;
        if PARAMS[..7].iter().all(|p| params.str(p).is_none()) {
            return Err(format!(
                "{NAME}: declare at least one threshold ({})",
                PARAMS[..7].join(", ")
            ));
        }
        if let Some(r) = missing_fields_report(NAME, SCOPE, history, TIMING) {
            return Ok(r);
        }
        let ops: Vec<&Op> = history.ops.iter().collect();
        let span = span_s(&ops);
        if let Some(min) = params.f64("min_window_s")?
            && span < min
        {
            return Ok(unknown(
                NAME,
                SCOPE,
                format!("window too short: {span:.1} s of history, {min} s required"),
            ));
        }
        // A latency ceiling over no acknowledged op would read as 0 ms: a green
        // nobody measured.
        let latency = ["p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"];
        if latency.iter().any(|p| params.str(p).is_some()) && !ops.iter().any(|o| o.is_acked()) {
            return Ok(unknown(
                NAME,
                SCOPE,
                format!(
                    "no acknowledged op among {}: a latency threshold cannot be judged",
                    ops.len()
                ),
            ));
        }
        let f = figures(&ops, span);
        let mut anomalies = Vec::new();
        let ceilings = [
            ("p50_ms", f.p50_ms),
            ("p90_ms", f.p90_ms),
            ("p99_ms", f.p99_ms),
            ("p999_ms", f.p999_ms),
            ("max_ms", f.max_ms),
            ("error_rate", f.error_rate),
        ];
        for (name, got) in ceilings {
            if let Some(t) = params.f64(name)?
                && got > t
            {
                anomalies.push(Anomaly {
                    counterexample: None,
                    ops: Vec::new(),
                    why: format!("{name} is {got:.3}, above the threshold {t}"),
                });
            }
        }
        if let Some(t) = params.f64("min_throughput")?
            && f.throughput < t
        {
            anomalies.push(Anomaly {
                counterexample: None,
                ops: Vec::new(),
                why: format!(
                    "throughput is {:.1} ops/s, below the floor {t}",
                    f.throughput
                ),
            });
        }
        let n = ops.len() as u64;
        let mut report = judged(NAME, SCOPE, n, n, anomalies);
        report.evidence = format!(
            "{}; p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms, error rate {:.4}, {:.1} ops/s over {span:.1} s",
            report.evidence, f.p50_ms, f.p99_ms, f.max_ms, f.error_rate, f.throughput
        );
        Ok(report)
    }
}

pub mod fairness {
    use super::*;

    pub const NAME: &str = "fairness";
    pub const PARAMS: &[&str] = &[
        "group",
        "repeat",
        "worst_p99_ratio",
        "min_group_throughput",
        "max_group_error_rate",
        "throughput_spread",
        "repeat_spread",
    ];
    /// The formulas among [`PARAMS`]: at least one must be declared.
    const FORMULAS: &[&str] = &[
        "worst_p99_ratio",
        "min_group_throughput",
        "max_group_error_rate",
        "throughput_spread",
        "repeat_spread",
    ];
    pub const SCOPE: &str = "per-group formulas: worst_group_p99 / aggregate_p99 <= t, \
        min_group_throughput >= t, error_rate_by_group <= t, max/min group throughput <= t, \
        and across repeated runs each group's max/min throughput <= t; a single group, or \
        a single repeat, is unknown (too coarse); does not judge groups absent from the \
        history";

    /// `group` (or `repeat`) is `process`, `key`, `node`, `op_type` or `input.FIELD`.
    fn group_of(op: &Op, group: &str) -> Option<String> {
        match group {
            "process" => Some(op.process.to_string()),
            "key" => op.key.as_deref().map(str::to_string),
            "node" => op.node.clone(),
            "op_type" => Some(op.op_type.to_string()),
            g => g.strip_prefix("input.").and_then(|f| {
                op.input.get(f).map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
            }),
        }
    }

    pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
        params.only(NAME, PARAMS)?;
        let group = params.str("group").ok_or_else(|| {
            format!("{NAME}: name the group dimension (group=process|key|node|op_type|input.FIELD)")
        })?;
        if FORMULAS.iter().all(|p| params.str(p).is_none()) {
            return Err(format!(
                "{NAME}: declare at least one formula ({})",
                FORMULAS.join(", ")
            ));
        }
        let repeat = params.str("repeat");
        if params.str("repeat_spread").is_some() && repeat.is_none() {
            return Err(format!(
                "{NAME}: repeat_spread needs the repeat dimension (repeat=input.FIELD|process|node|…)"
            ));
        }
        let mut required: Vec<&str> = TIMING.to_vec();
        for dimension in std::iter::once(group).chain(repeat) {
            let field = if matches!(dimension, "process" | "key" | "node" | "op_type") {
                dimension
            } else {
                "input"
            };
            if !required.contains(&field) {
                required.push(field);
            }
        }
        if let Some(r) = missing_fields_report(NAME, SCOPE, history, &required) {
            return Ok(r);
        }
        let all: Vec<&Op> = history.ops.iter().collect();
        let span = span_s(&all);
        let mut groups: BTreeMap<String, Vec<&Op>> = BTreeMap::new();
        let mut ungrouped = 0u64;
        for op in &all {
            match group_of(op, group) {
                Some(g) => groups.entry(g).or_default().push(op),
                None => ungrouped += 1,
            }
        }
        if groups.len() < 2 {
            return Ok(unknown(
                NAME,
                SCOPE,
                format!(
                    "group dimension `{group}` too coarse: {} group(s)",
                    groups.len()
                ),
            ));
        }
        let aggregate = figures(&all, span);
        // Throughput per group over the whole history's span: groups share the window.
        let per: Vec<(&String, Figures)> = groups
            .iter()
            .map(|(g, ops)| (g, figures(ops, span)))
            .collect();
        let mut anomalies = Vec::new();
        if let Some(t) = params.f64("worst_p99_ratio")?
            && let Some((g, f)) = per.iter().max_by(|a, b| a.1.p99_ms.total_cmp(&b.1.p99_ms))
            && aggregate.p99_ms > 0.0
            && f.p99_ms / aggregate.p99_ms > t
        {
            anomalies.push(Anomaly {
 counterexample: None,
                ops: Vec::new(),
                why: format!(
                    "worst_group_p99 / aggregate_p99 = {:.3} ({group} {g}: {:.2} ms vs {:.2} ms) > {t}",
                    f.p99_ms / aggregate.p99_ms, f.p99_ms, aggregate.p99_ms
                ),
            });
        }
        if let Some(t) = params.f64("min_group_throughput")? {
            for (g, f) in per.iter().filter(|(_, f)| f.throughput < t) {
                anomalies.push(Anomaly {
                    counterexample: None,
                    ops: Vec::new(),
                    why: format!("{group} {g}: throughput {:.1} ops/s < {t}", f.throughput),
                });
            }
        }
        if let Some(t) = params.f64("max_group_error_rate")? {
            for (g, f) in per.iter().filter(|(_, f)| f.error_rate > t) {
                anomalies.push(Anomaly {
                    counterexample: None,
                    ops: Vec::new(),
                    why: format!("{group} {g}: error rate {:.4} > {t}", f.error_rate),
                });
            }
        }
        if let Some(t) = params.f64("throughput_spread")? {
            let (lo, hi) = per
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(lo, hi), (_, f)| {
                    (lo.min(f.throughput), hi.max(f.throughput))
                });
            let spread = if lo > 0.0 { hi / lo } else { f64::INFINITY };
            if spread > t {
                anomalies.push(Anomaly {
                    counterexample: None,
                    ops: Vec::new(),
                    why: format!("max / min group throughput = {spread:.3} > {t}"),
                });
            }
        }
        if let (Some(t), Some(repeat)) = (params.f64("repeat_spread")?, repeat) {
            match repeat_spread(&groups, repeat) {
                // A violation another formula found stands without this one.
                Err(reason) if anomalies.is_empty() => return Ok(unknown(NAME, SCOPE, reason)),
                Err(_) => {}
                Ok((spread, g)) if spread > t => anomalies.push(Anomaly {
                    counterexample: None,
                    ops: Vec::new(),
                    why: format!(
                        "{group} {g}: max / min throughput across repeats = {spread:.3} > {t}"
                    ),
                }),
                Ok(_) => {}
            }
        }
        let n = all.len() as u64;
        let mut report = judged(NAME, SCOPE, n - ungrouped, n, anomalies);
        report.evidence = format!(
            "{} over {} groups by {group}",
            report.evidence,
            groups.len()
        );
        Ok(report)
    }

    /// The largest spread across repeats of one group's throughput, and that
    /// group: each repeat's throughput is its acknowledged ops per second over the
    /// repeat's own span, so repeats of different lengths compare. A group absent
    /// from a repeat has throughput 0 there (infinite spread). Fewer than two
    /// repeats is an error: one run against itself says nothing.
    fn repeat_spread(
        groups: &BTreeMap<String, Vec<&Op>>,
        repeat: &str,
    ) -> Result<(f64, String), String> {
        let mut repeats: BTreeMap<String, Vec<&Op>> = BTreeMap::new();
        for op in groups.values().flatten() {
            if let Some(r) = group_of(op, repeat) {
                repeats.entry(r).or_default().push(op);
            }
        }
        if repeats.len() < 2 {
            return Err(format!(
                "repeat dimension `{repeat}` too coarse: {} repeat(s), at least 2 needed",
                repeats.len()
            ));
        }
        let spans: BTreeMap<&String, f64> =
            repeats.iter().map(|(r, ops)| (r, span_s(ops))).collect();
        let mut worst = (0.0f64, String::new());
        for (g, ops) in groups {
            let mut by_repeat: BTreeMap<String, Vec<&Op>> = BTreeMap::new();
            for op in ops {
                if let Some(r) = group_of(op, repeat) {
                    by_repeat.entry(r).or_default().push(op);
                }
            }
            let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
            for (r, span) in &spans {
                let in_repeat = by_repeat.get(*r).map_or(&[][..], Vec::as_slice);
                let tput = figures(in_repeat, *span).throughput;
                lo = lo.min(tput);
                hi = hi.max(tput);
            }
            // Starved in every repeat is stable (min_group_throughput judges it).
            let spread = if hi <= 0.0 {
                1.0
            } else if lo <= 0.0 {
                f64::INFINITY
            } else {
                hi / lo
            };
            if spread > worst.0 || worst.1.is_empty() {
                worst = (spread, g.clone());
            }
        }
        Ok(worst)
    }
}
