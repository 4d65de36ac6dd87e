//! Service levels inside the fault windows. An op whose `fault_epoch` is set ran
//! while that fault was active; `null` means outside every window. Each window
//! (the ops sharing one epoch) is judged on its own against thresholds fixed
//! before the run, and optionally against the ops outside every window.
//!
//! `fault_epoch` is required as a key: without it nothing tells in-fault ops
//! from the others, and judging the whole history instead would pass a service
//! that only fails while the fault is on.

use super::checker::{Anomaly, judged, missing_fields_report, unknown};
use super::history::{History, Op};
use super::params::Params;
use super::slo::{Figures, figures};
use crate::oracle::CheckerReport;
use std::collections::BTreeMap;

pub const NAME: &str = "slo-during-fault";
/// Thresholds first; `min_ops` only sets how thin a window may be.
pub const PARAMS: &[&str] = &["error_rate", "p99_ms", "max_ms", "p99_ratio", "min_ops"];
pub const REQUIRED: &[&str] = &[
    "op_id",
    "invoke_ts",
    "complete_ts",
    "error",
    "timeout",
    "fault_epoch",
];
pub const SCOPE: &str = "per fault window (ops sharing a non-null fault_epoch): error rate \
    (failed or timed out) and latency of acknowledged ops against thresholds declared before \
    the run, p99 relative to the ops outside every window; does not judge correctness, \
    recovery after a window closes, or ops the recorder tags with the wrong epoch";

/// A window with fewer ops says little about its rates (`min_ops` overrides).
const DEFAULT_MIN_OPS: u64 = 10;

pub fn check(history: &History, params: &Params) -> Result<CheckerReport, String> {
    params.only(NAME, PARAMS)?;
    let thresholds = &PARAMS[..4];
    if thresholds.iter().all(|p| params.str(p).is_none()) {
        return Err(format!(
            "{NAME}: declare at least one threshold ({})",
            thresholds.join(", ")
        ));
    }
    let min_ops = params.u64("min_ops")?.unwrap_or(DEFAULT_MIN_OPS);
    let limits = Thresholds::parse(params)?;
    if let Some(r) = missing_fields_report(NAME, SCOPE, history, REQUIRED) {
        return Ok(r);
    }
    let mut windows: BTreeMap<u64, Vec<&Op>> = BTreeMap::new();
    let mut outside: Vec<&Op> = Vec::new();
    for op in &history.ops {
        match op.fault_epoch {
            Some(epoch) => windows.entry(epoch).or_default().push(op),
            None => outside.push(op),
        }
    }
    if windows.is_empty() {
        return Ok(unknown(
            NAME,
            SCOPE,
            "no op ran inside a fault window (every fault_epoch is null): the history does \
             not cover a fault"
                .into(),
        ));
    }
    // Throughput is not judged here, so no span is needed.
    let baseline = figures(&outside, 0.0);
    let mut anomalies = Vec::new();
    let mut thin = Vec::new();
    let mut unjudged = 0u64;
    let mut worst: Option<(u64, Figures)> = None;
    for (&epoch, ops) in &windows {
        if (ops.len() as u64) < min_ops {
            thin.push(format!("epoch {epoch} ({} ops)", ops.len()));
            unjudged += ops.len() as u64;
            continue;
        }
        let f = figures(ops, 0.0);
        if worst.is_none_or(|(_, w)| f.error_rate > w.error_rate) {
            worst = Some((epoch, f));
        }
        anomalies.extend(limits.breaches(epoch, ops.len(), &f, &baseline));
    }
    if anomalies.is_empty() {
        if !thin.is_empty() {
            return Ok(unknown(
                NAME,
                SCOPE,
                format!(
                    "fault window(s) with fewer than {min_ops} ops: {}",
                    thin.join(", ")
                ),
            ));
        }
        // A ratio to nothing is no evidence either way.
        if limits.p99_ratio.is_some() && baseline.p99_ms <= 0.0 {
            return Ok(unknown(
                NAME,
                SCOPE,
                "p99_ratio: no acknowledged op outside the fault windows to compare with".into(),
            ));
        }
    }
    let n = history.ops.len() as u64;
    let inside = n - outside.len() as u64;
    // Ops of a window too thin to judge are not checked (coverage).
    let mut report = judged(NAME, SCOPE, n - unjudged, n, anomalies);
    report.evidence = format!(
        "{}; {} fault window(s), {inside} ops inside, {} outside",
        report.evidence,
        windows.len(),
        outside.len()
    );
    if let Some((epoch, f)) = worst {
        report.evidence.push_str(&format!(
            "; worst window epoch {epoch}: error rate {:.4}, p99 {:.2} ms (outside: error rate \
             {:.4}, p99 {:.2} ms)",
            f.error_rate, f.p99_ms, baseline.error_rate, baseline.p99_ms
        ));
    }
    Ok(report)
}

/// The declared thresholds, parsed before anything is judged (a malformed one
/// is a usage error even if no window gets judged).
struct Thresholds {
    error_rate: Option<f64>,
    p99_ms: Option<f64>,
    max_ms: Option<f64>,
    p99_ratio: Option<f64>,
}

impl Thresholds {
    fn parse(params: &Params) -> Result<Thresholds, String> {
        Ok(Thresholds {
            error_rate: params.f64("error_rate")?,
            p99_ms: params.f64("p99_ms")?,
            max_ms: params.f64("max_ms")?,
            p99_ratio: params.f64("p99_ratio")?,
        })
    }

    /// The thresholds window `epoch` (of `count` ops, figures `f`) breaks.
    fn breaches(&self, epoch: u64, count: usize, f: &Figures, baseline: &Figures) -> Vec<Anomaly> {
        let mut whys = Vec::new();
        for (name, limit, got) in [
            ("error_rate", self.error_rate, f.error_rate),
            ("p99_ms", self.p99_ms, f.p99_ms),
            ("max_ms", self.max_ms, f.max_ms),
        ] {
            if let Some(t) = limit
                && got > t
            {
                whys.push(format!("{name} is {got:.3}, above the threshold {t}"));
            }
        }
        if let Some(t) = self.p99_ratio
            && baseline.p99_ms > 0.0
            && f.p99_ms / baseline.p99_ms > t
        {
            whys.push(format!(
                "p99 inside / p99 outside = {:.3} ({:.2} ms vs {:.2} ms) > {t}",
                f.p99_ms / baseline.p99_ms,
                f.p99_ms,
                baseline.p99_ms
            ));
        }
        whys.into_iter()
            .map(|why| Anomaly {
                counterexample: None,
                ops: Vec::new(),
                why: format!("fault epoch {epoch} ({count} ops): {why}"),
            })
            .collect()
    }
}
