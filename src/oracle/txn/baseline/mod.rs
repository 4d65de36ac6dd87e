//! The transactional checkers as they were before issue 33 (petgraph, the
//! history's txns as strings and JSON values): kept callable as the baseline of
//! `benches/txn.rs` (the speed-up is stated as a ratio against it) and as the
//! oracle of the differential tests in `tests/suite/oracle_txn.rs` (the compact
//! checkers must give the same reports). Not used by `faultline` itself.

pub mod graph;
pub mod list_append;
pub mod rw_register;

use super::anomaly::{Found, Kind};
use super::graph::{PROCESS, REALTIME, Step, kind_name};
use super::history::{self, Mop, Txn};
use super::{REQUIRED, report, settings, show_list};
use crate::oracle::checker::{CheckerReport, Cycle, CycleTxn, Hop};
use crate::oracle::params::Params;
use std::time::Instant;

/// One transactional check: its parameters, the missing-fields contract, the
/// history's transactions, `analyse` within the budget, and the report.
pub fn judge(
    name: &str,
    scope: &str,
    history: &crate::oracle::history::History,
    params: &Params,
    analyse: fn(&[Txn], Instant) -> Result<Vec<Found>, String>,
) -> Result<CheckerReport, String> {
    let settings = settings(name, params)?;
    if let Some(r) = crate::oracle::checker::missing_fields_report(name, scope, history, REQUIRED) {
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
        Err(reason) => crate::oracle::checker::unknown(name, scope, reason),
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

/// A txn's name in explanations.
pub fn tname(t: &Txn) -> String {
    format!("T{}", t.id)
}

/// A non-cycle anomaly.
pub fn found(kind: Kind, ops: Vec<String>, text: String) -> Found {
    super::found(kind, ops, text)
}
