//! Elle-class transactional checkers (Kingsbury & Alvaro, VLDB 2020): infer the
//! write-write, write-read and read-write dependencies between transactions from a
//! list-append or read-write-register history, add process and real-time order,
//! and report the cycles (G0, G1c, G-single, G2-item and their process / realtime
//! variants) plus the non-cycle anomalies (G1a, G1b, internal, duplicates,
//! incompatible orders), each explained edge by edge.
//!
//! They judge a compact form of the transactions ([`store`]: ids for keys and
//! values, flat arrays), filled from a parsed history or line by line from a
//! txn-jsonl file ([`read`], [`check_file`]); the dependency graph is flat
//! arrays merged into a compressed adjacency only when it has a cycle ([`graph`]).

pub mod anomaly;
#[doc(hidden)]
pub mod baseline;
pub mod graph;
pub mod history;
pub mod list_append;
pub mod read;
pub mod rw_register;
pub mod store;

use super::checker::{Anomaly, CheckerReport, Counterexample, Cycle, CycleTxn, Hop, judged};
use super::params::Params;
use anomaly::{Found, Kind, Level};
use graph::{PROCESS, REALTIME, Step, kind_name};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::{Built, Mode, Store};

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
    /// `time_limit_s`.
    pub limit: Duration,
}

/// What judges a store: every anomaly found, `Err` when the checker cannot
/// tell (a value appended twice, the time limit).
pub type Analyse = fn(&Store, Instant) -> Result<Vec<Found>, String>;

/// One transactional check of a parsed history: its parameters, the
/// missing-fields contract, the history's transactions, `analyse` within the
/// budget, and the report.
pub fn judge(
    name: &str,
    scope: &str,
    history: &super::history::History,
    params: &Params,
    mode: Mode,
    analyse: Analyse,
) -> Result<CheckerReport, String> {
    let settings = settings(name, params)?;
    if let Some(r) = super::checker::missing_fields_report(name, scope, history, REQUIRED) {
        return Ok(r);
    }
    let built = store::from_history(history, mode)?;
    Ok(judge_store(name, scope, settings, built, analyse))
}

/// The report on a filled store; the budget starts now.
fn judge_store(
    name: &str,
    scope: &str,
    settings: Settings,
    (store, refused): Built,
    analyse: Analyse,
) -> CheckerReport {
    let scope = &with_process_note(scope, store.without_process, store.txn_count);
    let deadline = Instant::now()
        .checked_add(settings.limit)
        .unwrap_or_else(far_future);
    let found = match refused {
        Some(reason) => Err(reason),
        None => analyse(&store, deadline),
    };
    match found {
        Ok(found) => report(
            name,
            scope,
            settings.level,
            found,
            store.txn_count,
            store.produced,
        ),
        Err(reason) => super::checker::unknown(name, scope, reason),
    }
}

/// Why `faultline check` could not check a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    /// A usage problem (an unknown checker, a bad parameter): exit 64.
    Usage(String),
    /// The file cannot be read or parsed (it names the file, the line and the
    /// field): exit 66.
    Unreadable(String),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Usage(m) | FileError::Unreadable(m) => f.write_str(m),
        }
    }
}

/// The checker `name` (`list-append` or `rw-register`): its scope, what it
/// reads and what judges it.
fn checker(name: &str) -> Result<(&'static str, &'static str, Mode, Analyse), FileError> {
    match name {
        list_append::NAME => Ok((
            list_append::NAME,
            list_append::SCOPE,
            Mode::ListAppend,
            list_append::analyse,
        )),
        rw_register::NAME => Ok((
            rw_register::NAME,
            rw_register::SCOPE,
            Mode::RwRegister,
            rw_register::analyse,
        )),
        other => Err(FileError::Usage(format!(
            "`{other}` is not a transactional checker (list-append, rw-register)"
        ))),
    }
}

/// Check a txn-jsonl history file with `list-append` or `rw-register`, reading
/// it line by line into the compact store (no whole-file text, no generic
/// history): the fast path of `faultline check --format txn-jsonl`.
pub fn check_file(name: &str, path: &Path, params: &Params) -> Result<CheckerReport, FileError> {
    let (name, ..) = checker(name)?;
    settings(name, params).map_err(FileError::Usage)?;
    let file = std::fs::File::open(path).map_err(|e| {
        FileError::Unreadable(format!(
            "{}: {e}",
            crate::sanitize::line(&path.display().to_string())
        ))
    })?;
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    check_txn_jsonl(name, &path.display().to_string(), reader, params)
}

/// [`check_file`] on any reader; `source` names it in errors.
pub fn check_txn_jsonl(
    name: &str,
    source: &str,
    reader: impl std::io::BufRead,
    params: &Params,
) -> Result<CheckerReport, FileError> {
    let (name, scope, mode, analyse) = checker(name)?;
    let settings = settings(name, params).map_err(FileError::Usage)?;
    let built = read::read_txn_jsonl(source, reader, mode).map_err(FileError::Unreadable)?;
    Ok(judge_store(name, scope, settings, built, analyse))
}

/// `scope`, plus what was not used when some txns have no process.
fn with_process_note(scope: &str, without: u64, txns: u64) -> String {
    match without {
        0 => scope.to_string(),
        n if n == txns => format!(
            "{scope}; process order not used: the history records no process, so no \
             process-order edges (cycles through one, the *-process kinds, are not seen)"
        ),
        n => format!(
            "{scope}; process order not used for {n} of {txns} txns: they have no process, \
             so no process-order edges"
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
    let limit = Duration::try_from_secs_f64(limit.max(0.0)).unwrap_or(Duration::MAX);
    Ok(Settings {
        level,
        deadline: Instant::now().checked_add(limit).unwrap_or_else(far_future),
        limit,
    })
}

/// An instant no budget reaches (`time_limit_s` too large to add to now).
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600)
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
fn order_text(st: &Store, step: &Step) -> Option<String> {
    let (a, b) = (&st.txns[step.from], &st.txns[step.to]);
    match step.kind {
        PROCESS => Some(format!(
            "process {} ran {} before {}",
            st.process(step.from),
            st.tname(step.from),
            st.tname(step.to)
        )),
        REALTIME => Some(format!(
            "{} completed (at {}) before {} was invoked (at {})",
            st.tname(step.from),
            a.complete.unwrap_or_default(),
            st.tname(step.to),
            b.invoke
        )),
        _ => None,
    }
}

/// A cycle as an anomaly: every hop "T1 < T2 (wr): <why>", the txns' op ids, and
/// the cycle itself for its figure.
pub fn cycle_found(
    kind: Kind,
    st: &Store,
    steps: &[Step],
    data_text: impl Fn(&Step) -> String,
) -> Found {
    let hops: Vec<Hop> = steps
        .iter()
        .map(|s| Hop {
            kind: kind_name(s.kind).to_string(),
            why: order_text(st, s).unwrap_or_else(|| data_text(s)),
        })
        .collect();
    let said: Vec<String> = steps
        .iter()
        .zip(&hops)
        .map(|(s, hop)| {
            format!(
                "{} < {} ({}): {}",
                st.tname(s.from),
                st.tname(s.to),
                hop.kind,
                hop.why
            )
        })
        .collect();
    let members = steps.iter().map(|s| CycleTxn {
        name: st.tname(s.from),
        process: st.process(s.from).to_string(),
        mops: st.mops(s.from).iter().map(|m| st.mop_text(m)).collect(),
    });
    Found {
        kind,
        ops: steps.iter().map(|s| st.id(s.from).to_string()).collect(),
        why: format!("{} ({}): {}", kind.name(), kind.violates(), said.join("; ")),
        cycle: Some(Cycle {
            kind: kind.name(),
            violates: kind.violates(),
            txns: members.collect(),
            hops,
        }),
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
