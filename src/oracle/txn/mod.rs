//! Elle-class transactional checkers (Kingsbury & Alvaro, VLDB 2020): infer the
//! write-write, write-read and read-write dependencies between transactions from a
//! list-append or read-write-register history, add process and real-time order,
//! and report the cycles (G0, G1c, G-single, G2-item and their process / realtime
//! variants) plus the non-cycle anomalies (G1a, G1b, internal, duplicates,
//! incompatible orders), each explained edge by edge.

pub mod anomaly;
pub mod graph;
pub mod history;
pub mod list_append;
pub mod rw_register;

use super::checker::{Anomaly, CheckerReport, Counterexample, Cycle, CycleTxn, Hop, judged};
use super::params::Params;
use anomaly::{Found, Kind, Level};
use graph::{PROCESS, REALTIME, Step, kind_name};
use history::{Mop, Txn};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const PARAMS: &[&str] = &["consistency", "time_limit_s"];
/// A transaction needs both times (real time), its micro-ops invoked and
/// completed, and how it ended. Its process is not required: a history that
/// records none (Elle reads such histories) has no process-order edges, and the
/// scope line says so.
pub const REQUIRED: &[&str] = &[
    "op_id",
    "invoke_ts",
    "complete_ts",
    "op_type",
    "input",
    "output",
    "error",
    "timeout",
];
const DEFAULT_TIME_LIMIT_S: f64 = 60.0;

/// The parameters both checkers take.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub level: Level,
    pub deadline: Instant,
}

/// One transactional check: its parameters, the missing-fields contract, the
/// history's transactions, `analyse` within the budget, and the report.
pub fn judge(
    name: &str,
    scope: &str,
    history: &super::history::History,
    params: &Params,
    analyse: fn(&[Txn], Instant) -> Result<Vec<Found>, String>,
) -> Result<CheckerReport, String> {
    let settings = settings(name, params)?;
    if let Some(r) = super::checker::missing_fields_report(name, scope, history, REQUIRED) {
        return Ok(r);
    }
    let txns = history::from_history(history)?;
    let scope = &with_process_note(scope, &txns.txns);
    Ok(match analyse(&txns.txns, settings.deadline) {
        Ok(found) => report(
            name,
            scope,
            settings.level,
            found,
            txns.txns.len() as u64,
            txns.produced,
        ),
        Err(reason) => super::checker::unknown(name, scope, reason),
    })
}

/// `scope`, plus what was not used when some txns have no process.
fn with_process_note(scope: &str, txns: &[Txn]) -> String {
    let without = txns.iter().filter(|t| t.process.is_empty()).count();
    match without {
        0 => scope.to_string(),
        n if n == txns.len() => format!(
            "{scope}; process order not used: the history records no process, so no \
             process-order edges (cycles through one, the *-process kinds, are not seen)"
        ),
        n => format!(
            "{scope}; process order not used for {n} of {} txns: they have no process, so \
             no process-order edges",
            txns.len()
        ),
    }
}

pub fn settings(name: &str, params: &Params) -> Result<Settings, String> {
    params.only(name, PARAMS)?;
    let level = match params.str("consistency") {
        None => Level::Serializable,
        Some(l) => Level::from_name(l).ok_or_else(|| {
            format!(
                "parameter `consistency`: `{l}` is not a level (one of: {})",
                Level::NAMES
            )
        })?,
    };
    let limit = params.f64("time_limit_s")?.unwrap_or(DEFAULT_TIME_LIMIT_S);
    Ok(Settings {
        level,
        deadline: Instant::now() + Duration::from_secs_f64(limit.max(0.0)),
    })
}

/// A txn's name in explanations.
pub fn tname(t: &Txn) -> String {
    format!("T{}", t.id)
}

/// A list as the explanations print it: `[1 2 3]`, the last 8 elements at most.
pub fn show_list(items: &[&str]) -> String {
    let skip = items.len().saturating_sub(8);
    let mut out = String::from("[");
    if skip > 0 {
        out.push_str("… ");
    }
    out.push_str(&items[skip..].join(" "));
    out.push(']');
    out
}

/// The explanation of an order edge (process / realtime), if `step` is one.
fn order_text(txns: &[Txn], step: &Step) -> Option<String> {
    let (a, b) = (&txns[step.from], &txns[step.to]);
    match step.kind {
        PROCESS => Some(format!(
            "process {} ran {} before {}",
            a.process,
            tname(a),
            tname(b)
        )),
        REALTIME => Some(format!(
            "{} completed (at {}) before {} was invoked (at {})",
            tname(a),
            a.complete.unwrap_or_default(),
            tname(b),
            b.invoke
        )),
        _ => None,
    }
}

/// A cycle as an anomaly: every hop "T1 < T2 (wr): <why>", the txns' op ids, and
/// the cycle itself for its figure.
pub fn cycle_found(
    kind: Kind,
    txns: &[Txn],
    steps: &[Step],
    data_text: impl Fn(&Step) -> String,
) -> Found {
    let hops: Vec<Hop> = steps
        .iter()
        .map(|s| Hop {
            kind: kind_name(s.kind).to_string(),
            why: order_text(txns, s).unwrap_or_else(|| data_text(s)),
        })
        .collect();
    let said: Vec<String> = steps
        .iter()
        .zip(&hops)
        .map(|(s, hop)| {
            format!(
                "{} < {} ({}): {}",
                tname(&txns[s.from]),
                tname(&txns[s.to]),
                hop.kind,
                hop.why
            )
        })
        .collect();
    let members = steps.iter().map(|s| {
        let t = &txns[s.from];
        CycleTxn {
            name: tname(t),
            process: t.process.clone(),
            mops: t.mops.iter().map(mop_text).collect(),
        }
    });
    Found {
        kind,
        ops: steps.iter().map(|s| txns[s.from].id.clone()).collect(),
        why: format!("{} ({}): {}", kind.name(), kind.violates(), said.join("; ")),
        cycle: Some(Cycle {
            kind: kind.name(),
            violates: kind.violates(),
            txns: members.collect(),
            hops,
        }),
    }
}

/// A micro-op as a figure prints it: `append 1 3`, `w 2 5`, `r 1 [3 4]`.
fn mop_text(mop: &Mop) -> String {
    match mop {
        Mop::Append { key, value } => format!("append {key} {value}"),
        Mop::Write { key, value } => format!("w {key} {value}"),
        Mop::Read { key, value } => {
            let read = match value {
                serde_json::Value::Array(items) => {
                    let items: Vec<String> = items.iter().map(history::printed).collect();
                    show_list(&items.iter().map(String::as_str).collect::<Vec<_>>())
                }
                serde_json::Value::Null => "nil".to_string(),
                other => history::printed(other),
            };
            format!("r {key} {read}")
        }
    }
}

/// A non-cycle anomaly.
pub fn found(kind: Kind, ops: Vec<String>, text: String) -> Found {
    Found {
        kind,
        ops,
        why: format!("{} ({}): {text}", kind.name(), kind.violates()),
        cycle: None,
    }
}

/// The report: anomalies `level` forbids fail the check; the ones it allows are
/// named in the evidence only.
pub fn report(
    name: &str,
    scope: &str,
    level: Level,
    found: Vec<Found>,
    checked: u64,
    produced: u64,
) -> CheckerReport {
    let (failing, allowed): (Vec<Found>, Vec<Found>) =
        found.into_iter().partition(|f| f.kind.fails(level));
    let counts = |list: &[Found]| {
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for f in list {
            *by.entry(f.kind.name()).or_default() += 1;
        }
        by.iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let failing_counts = counts(&failing);
    let allowed_counts = counts(&allowed);
    let anomalies = failing
        .into_iter()
        .map(|f| Anomaly {
            ops: f.ops,
            why: f.why,
            counterexample: f.cycle.map(|c| Arc::new(Counterexample::Cycle(c))),
        })
        .collect();
    let mut report = judged(name, scope, checked, produced, anomalies);
    report.evidence.push_str(&format!(" at {}", level.name()));
    if !failing_counts.is_empty() {
        report.evidence.push_str(&format!(" ({failing_counts})"));
    }
    if !allowed.is_empty() {
        let first: Vec<&str> = allowed.iter().take(3).map(|f| f.why.as_str()).collect();
        report.evidence.push_str(&format!(
            "; allowed at {}: {allowed_counts}, e.g. {}",
            level.name(),
            first.join(" | ")
        ));
    }
    report
}
