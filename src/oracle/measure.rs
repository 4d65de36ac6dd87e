//! Audit measurements computed from a history (method §4); each is
//! [`AuditSource::Measured`] and cannot be declared.

use super::availability::{Outage, Stalls};
use super::checker::CheckerReport;
use super::history::History;
use crate::verdict::{AuditItem, AuditSource, AuditStatus};
use std::collections::HashMap;
use std::time::Duration;

const BUCKETS: u64 = 10;

fn item(id: &str, status: AuditStatus, evidence: String) -> AuditItem {
    AuditItem {
        id: id.to_string(),
        status,
        source: AuditSource::Measured,
        evidence,
        cites: Vec::new(),
    }
}

/// gbb-1: the workload kept its rate for the intended duration.
///
/// The intended window starts at the first invoke and is split into ten equal
/// buckets; the check fails if the last invoke falls before 90 % of the intended
/// duration, or a bucket holds fewer than 20 % of the mean count while its clients
/// sat idle. A quiet bucket that clients spent at least 80 % stalled in ops the SUT
/// did not answer is an outage of the SUT, not of the harness: it passes, and every
/// outage is named in the evidence (references/audits.md has the rule and its cases).
pub fn workload_rate(h: &History, intended: Duration) -> AuditItem {
    const ID: &str = "gbb-1-workload-rate";
    let intended_ns = u64::try_from(intended.as_nanos()).unwrap_or(u64::MAX);
    let (Some(first), Some(last)) = (
        h.ops.iter().map(|o| o.invoke_ts).min(),
        h.ops.iter().map(|o| o.invoke_ts).max(),
    ) else {
        return item(ID, AuditStatus::Failed, "no ops recorded".into());
    };
    if intended_ns == 0 {
        return item(ID, AuditStatus::Failed, "intended duration is zero".into());
    }
    let span_ns = last - first;
    let span_s = span_ns as f64 / 1e9;
    let n = h.ops.len();
    let rate = if span_ns > 0 { n as f64 / span_s } else { 0.0 };
    let mut evidence = format!(
        "{n} ops over {span_s:.1} s ({rate:.1} ops/s); intended {:.1} s",
        intended.as_secs_f64()
    );
    let stalls = Stalls::of(h);
    let outages = stalls.outages(h);
    if !outages.is_empty() {
        evidence.push_str(&format!(
            "; SUT outages (clients stalled in ops, not idle): {}",
            listed(&outages)
        ));
    }

    // Stopped early?
    let needed = first.saturating_add(intended_ns / 10 * 9);
    if last < needed {
        evidence.push_str(&format!(
            "; last invoke at {span_s:.1} s, before 90% of the intended duration"
        ));
        return item(ID, AuditStatus::Failed, evidence);
    }

    // Rate collapse, unless the quiet bucket was spent waiting on the SUT?
    let width = (intended_ns / BUCKETS).max(1);
    let mut counts = [0u64; BUCKETS as usize];
    for op in &h.ops {
        let offset = op.invoke_ts - first;
        let b = offset / width;
        if b < BUCKETS {
            counts[b as usize] += 1;
        }
    }
    let mean = counts.iter().sum::<u64>() as f64 / BUCKETS as f64;
    for (i, &c) in counts.iter().enumerate() {
        if (c as f64) >= 0.2 * mean {
            continue;
        }
        let from = first + i as u64 * width;
        let stalled = stalls.covered(from, from + width) as f64 / width as f64;
        if stalled < STALLED_SHARE {
            evidence.push_str(&format!(
                "; rate collapse: bucket {} of {BUCKETS} has {c} ops (mean {mean:.1}) and its clients were stalled in ops for only {:.0}% of it",
                i + 1,
                stalled * 100.0
            ));
            return item(ID, AuditStatus::Failed, evidence);
        }
    }
    item(ID, AuditStatus::Passed, evidence)
}

/// Share of a quiet bucket its clients must have spent stalled for it to count as an
/// outage of the SUT rather than a collapse of the workload.
const STALLED_SHARE: f64 = 0.8;

/// At most this many outages are spelled out in one evidence line.
const OUTAGES_LISTED: usize = 5;

fn listed(outages: &[Outage]) -> String {
    let mut text = outages
        .iter()
        .take(OUTAGES_LISTED)
        .map(Outage::describe)
        .collect::<Vec<_>>()
        .join("; ");
    if outages.len() > OUTAGES_LISTED {
        text.push_str(&format!("; and {} more", outages.len() - OUTAGES_LISTED));
    }
    text
}

/// gbb-2: the oracle consumed ops (cites how many).
pub fn oracle_consumed(report: &CheckerReport) -> AuditItem {
    const ID: &str = "gbb-2-oracle-consumed";
    let checked = report.ops_checked();
    let evidence = format!("{}: {}", report.checker, report.evidence);
    if checked == 0 {
        item(ID, AuditStatus::Failed, evidence)
    } else {
        item(ID, AuditStatus::Passed, evidence)
    }
}

/// gbb-5: timestamps are monotonic: per process, invoke times never go back,
/// and no op completes before it was invoked.
pub fn monotonic(h: &History) -> AuditItem {
    const ID: &str = "gbb-5-monotonic";
    let mut last: HashMap<&str, u64> = HashMap::new();
    for op in &h.ops {
        if let Some(c) = op.complete_ts
            && c < op.invoke_ts
        {
            return item(
                ID,
                AuditStatus::Failed,
                format!(
                    "op {} completes at {c} before its invoke at {}",
                    op.op_id, op.invoke_ts
                ),
            );
        }
        if let Some(prev) = last.insert(op.process.as_str(), op.invoke_ts)
            && op.invoke_ts < prev
        {
            return item(
                ID,
                AuditStatus::Failed,
                format!(
                    "process {}: op {} invoked at {} after an invoke at {prev}",
                    op.process, op.op_id, op.invoke_ts
                ),
            );
        }
    }
    item(
        ID,
        AuditStatus::Passed,
        format!(
            "{} ops, per-process invoke times non-decreasing",
            h.ops.len()
        ),
    )
}

/// Whether any op ran under a fault (non-null `fault_epoch`).
pub fn fault_window_covered(h: &History) -> bool {
    h.ops.iter().any(|o| o.fault_epoch.is_some())
}
