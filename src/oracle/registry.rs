//! Every built-in checker by name, what it reads, the function that runs it, and
//! the checker picker (model + claim category → checker, `oracles-and-faults.md`).

use super::checker::{CheckerReport, RunOptions, mismatch};
use super::final_state::{Dump, invariant, reconciliation};
use super::history::History;
use super::linearizability::{self, Limits, Model};
use super::params::Params;
use super::session::{monotonic_reads, read_your_writes};
use super::slo::{fairness, thresholds};
use super::txn::{list_append, rw_register};
use super::{counter, exactly_once, fault_window, no_lost_ack, prefix_order};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// What a checker reads besides its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    History,
    /// The history and the final-state dump.
    HistoryAndFinalState,
    /// The final-state dump (the history, if given, proves quiescence).
    FinalState,
    /// Two or more replica dumps.
    Replicas,
}

/// A checker's entry point: what it was given and its parameters. `Err` is a
/// usage problem (bad parameter, a needed input not given), not a verdict.
pub type CheckFn = fn(&Given, &Params) -> Result<CheckerReport, String>;

/// One built-in checker's declaration: its row is the one place a checker is
/// declared (name, inputs, picker rows, summary and the function that runs it).
#[derive(Debug, Clone, Copy)]
pub struct CheckerInfo {
    pub name: &'static str,
    pub needs: Needs,
    /// The (model, claim category) rows of the picker table it serves.
    pub serves: &'static [(&'static str, &'static str)],
    pub summary: &'static str,
    /// Runs it; called by [`run`] once the name is known and the checker fits
    /// the plan's model and claim.
    pub run: CheckFn,
}

/// Every built-in checker, in `--help` order.
pub const CHECKERS: &[CheckerInfo] = &[
    CheckerInfo {
        name: "linearizability-register",
        needs: Needs::History,
        serves: &[("register", "safety")],
        summary: "WGL search on one register (read/write/cas); stops at the first anomaly \
                  with --first (params: time_limit_s, max_configs)",
        run: |g, p| linearizability_with(g, p, Model::Register),
    },
    CheckerInfo {
        name: "linearizability-kv",
        needs: Needs::History,
        serves: &[("map", "safety"), ("register", "safety")],
        summary: "WGL search per key of a map, smallest key first; with --first every key's \
                  search stops once one key is not linearizable (params: time_limit_s, \
                  max_configs)",
        run: |g, p| linearizability_with(g, p, Model::Kv),
    },
    CheckerInfo {
        name: "counter",
        needs: Needs::History,
        serves: &[("counter", "safety")],
        summary: "each read within the adds surely / possibly done by then (params: initial)",
        run: |g, p| counter::check(g.history()?, p),
    },
    CheckerInfo {
        name: "no-lost-ack",
        needs: Needs::HistoryAndFinalState,
        serves: &[
            ("log", "durability"),
            ("map", "durability"),
            ("register", "durability"),
        ],
        summary: "every acknowledged write is in the final state",
        run: |g, p| {
            p.only(g.name, &[])?;
            Ok(no_lost_ack::check(g.history()?, &g.final_map()?))
        },
    },
    CheckerInfo {
        name: "exactly-once",
        needs: Needs::HistoryAndFinalState,
        serves: &[("ledger", "idempotency")],
        summary: "at most one committed effect per idempotency key",
        run: |g, p| {
            exactly_once::check(
                g.history()?,
                exactly_once::Effects::Tree(g.final_state()?),
                p,
            )
        },
    },
    CheckerInfo {
        name: "prefix-order",
        needs: Needs::History,
        serves: &[("queue", "ordering"), ("log", "ordering")],
        summary: "each consumer sees a prefix of the canonical order (params: window)",
        run: |g, p| prefix_order::check(g.history()?, p),
    },
    CheckerInfo {
        name: "monotonic-reads",
        needs: Needs::History,
        serves: &[("session", "safety"), ("session", "consistency")],
        summary: "per (process, key) read versions never go back",
        run: |g, p| monotonic_reads::check(g.history()?, p),
    },
    CheckerInfo {
        name: "read-your-writes",
        needs: Needs::History,
        serves: &[("session", "safety"), ("session", "consistency")],
        summary: "a session reads its own acknowledged writes",
        run: |g, p| read_your_writes::check(g.history()?, p),
    },
    CheckerInfo {
        name: "list-append",
        needs: Needs::History,
        serves: &[
            ("map", "isolation"),
            ("ledger", "isolation"),
            ("any", "isolation"),
        ],
        summary: "Elle-style dependency cycles of list-append txns \
                  (params: consistency, time_limit_s)",
        run: |g, p| list_append::check(g.history()?, p),
    },
    CheckerInfo {
        name: "rw-register",
        needs: Needs::History,
        serves: &[("register", "isolation")],
        summary: "Elle-style dependency cycles of read/write-register txns \
                  (params: consistency, time_limit_s)",
        run: |g, p| rw_register::check(g.history()?, p),
    },
    CheckerInfo {
        name: "reconciliation",
        needs: Needs::Replicas,
        serves: &[("membership-table", "membership"), ("map", "convergence")],
        summary: "replica dumps agree key by key",
        run: |g, p| reconciliation::check(g.inputs.replicas, p),
    },
    CheckerInfo {
        name: "invariant",
        needs: Needs::FinalState,
        serves: &[
            ("counter", "safety"),
            ("lock", "safety"),
            ("lease", "safety"),
            ("ledger", "safety"),
        ],
        summary: "predicate over the final state (params: sum, min, max, count, distinct)",
        run: |g, p| invariant::check(&g.final_map()?, g.inputs.history, g.inputs.replicas, p),
    },
    CheckerInfo {
        name: "slo",
        needs: Needs::History,
        serves: &[
            ("any", "performance-slo"),
            ("any", "liveness"),
            ("any", "operational"),
        ],
        summary: "latency / error-rate / throughput thresholds (params: p99_ms, error_rate, …)",
        run: |g, p| thresholds::check(g.history()?, p),
    },
    CheckerInfo {
        name: "fairness",
        needs: Needs::History,
        serves: &[("any", "fairness")],
        summary: "per-group formulas (params: group, worst_p99_ratio, …)",
        run: |g, p| fairness::check(g.history()?, p),
    },
    CheckerInfo {
        name: "slo-during-fault",
        needs: Needs::History,
        serves: &[
            ("any", "liveness"),
            ("any", "performance-slo"),
            ("any", "operational"),
        ],
        summary: "error rate / latency inside each fault window, needs fault_epoch \
                  (params: error_rate, p99_ms, max_ms, p99_ratio, min_ops)",
        run: |g, p| fault_window::check(g.history()?, p),
    },
];

/// The names, for `--help` and `references/checkers.md`.
pub fn names() -> Vec<&'static str> {
    CHECKERS.iter().map(|c| c.name).collect()
}

pub fn info(name: &str) -> Option<&'static CheckerInfo> {
    CHECKERS.iter().find(|c| c.name == name)
}

/// The checker the picker table suggests for a model and claim category.
/// The checker made for exactly this model and claim (no any-model fallback).
pub fn pick_for_model(model: &str, claim: &str) -> Option<&'static str> {
    CHECKERS
        .iter()
        .find(|c| c.serves.iter().any(|(m, k)| *m == model && *k == claim))
        .map(|c| c.name)
}

pub fn pick(model: &str, claim: &str) -> Option<&'static str> {
    CHECKERS
        .iter()
        .find(|c| c.serves.iter().any(|(m, k)| *m == model && *k == claim))
        .or_else(|| {
            CHECKERS
                .iter()
                .find(|c| c.serves.iter().any(|(m, k)| *m == "any" && *k == claim))
        })
        .map(|c| c.name)
}

/// Why `checker` does not fit the model and claim, if it does not. An unknown
/// model or claim (`None`) is not held against it.
pub fn misfit(checker: &str, model: Option<&str>, claim: Option<&str>) -> Option<String> {
    let info = info(checker)?;
    // A row for the model itself fits whatever the claim (the model is the
    // stronger statement); an "any model" row, or any row when the model is
    // unknown, must match the claim.
    let fits = |m: &str, k: &str| match (model, claim) {
        (Some(model), _) if m == model => true,
        (_, Some(claim)) if m == "any" || model.is_none() => k == claim,
        (_, None) => m == "any",
        _ => false,
    };
    if info.serves.iter().any(|(m, k)| fits(m, k)) {
        return None;
    }
    let asked = match (model, claim) {
        (Some(m), Some(k)) => format!("model `{m}`, claim `{k}`"),
        (Some(m), None) => format!("model `{m}`"),
        (None, Some(k)) => format!("claim `{k}`"),
        (None, None) => return None,
    };
    let suggestion = match (model, claim) {
        (Some(m), Some(k)) => pick(m, k).map(|p| format!("; the picker suggests `{p}`")),
        _ => None,
    }
    .unwrap_or_default();
    Some(format!(
        "checker `{checker}` does not match {asked}{suggestion}"
    ))
}

/// Everything a checker may read.
#[derive(Debug, Default)]
pub struct Inputs<'a> {
    pub history: Option<&'a History>,
    pub final_state: Option<&'a Value>,
    pub replicas: &'a [Dump],
    /// The plan's model and claim category, when known.
    pub model: Option<&'a str>,
    pub claim: Option<&'a str>,
}

/// Run checker `name`. `Err` is a usage problem (unknown name, bad parameter,
/// an input the checker needs was not given), not a verdict.
pub fn run(name: &str, inputs: &Inputs, params: &Params) -> Result<CheckerReport, String> {
    run_with(name, inputs, params, &RunOptions::default())
}

/// [`run`] as `options` asks (`--first`, the first anomaly told at once, threads);
/// a checker that finds its anomalies in one pass over the history ignores them.
pub fn run_with(
    name: &str,
    inputs: &Inputs,
    params: &Params,
    options: &RunOptions,
) -> Result<CheckerReport, String> {
    let info = info(name).ok_or_else(|| {
        format!(
            "no built-in checker `{name}` (one of: {})",
            names().join(", ")
        )
    })?;
    if let Some(reason) = misfit(name, inputs.model, inputs.claim) {
        return Ok(mismatch(name, "", reason));
    }
    (info.run)(
        &Given {
            name: info.name,
            inputs,
            options,
        },
        params,
    )
}

/// What a checker's function is given: the inputs, how to run, and its own name
/// for the errors when one it needs is missing.
pub struct Given<'a> {
    pub name: &'static str,
    pub inputs: &'a Inputs<'a>,
    pub options: &'a RunOptions<'a>,
}

impl<'a> Given<'a> {
    pub fn history(&self) -> Result<&'a History, String> {
        self.inputs
            .history
            .ok_or_else(|| format!("checker `{}` needs a history", self.name))
    }

    pub fn final_state(&self) -> Result<&'a Value, String> {
        self.inputs
            .final_state
            .ok_or_else(|| format!("checker `{}` needs a final-state dump", self.name))
    }

    /// The final state as a map of key → value.
    pub fn final_map(&self) -> Result<BTreeMap<String, Value>, String> {
        match self.final_state()? {
            Value::Object(m) => Ok(m.clone().into_iter().collect()),
            _ => Err("final state: expected a JSON object of key → value".into()),
        }
    }
}

/// The two WGL checkers: the same parameters, one model each.
fn linearizability_with(
    given: &Given,
    params: &Params,
    model: Model,
) -> Result<CheckerReport, String> {
    params.only(given.name, &["time_limit_s", "max_configs"])?;
    let defaults = Limits::default();
    let limits = Limits {
        time: params
            .f64("time_limit_s")?
            .map_or(defaults.time, Duration::from_secs_f64),
        max_configs: params
            .u64("max_configs")?
            .map_or(defaults.max_configs, |n| n as usize),
    };
    let history = given.history()?;
    Ok(linearizability::check_with_options(history, model, limits, given.options).0)
}

/// Run a run-spec checker (`builtin: "NAME [param=value …]"`) inside a session:
/// the final state is `<artifacts>/final.json` and replica dumps are the
/// `<artifacts>/replicas/*.json` files, read only when the checker needs them.
pub fn run_in_session(
    spec: &str,
    history: &History,
    artifacts: &std::path::Path,
) -> Result<CheckerReport, String> {
    let (name, params) = Params::split_spec(spec)?;
    let needs = info(&name).map(|i| i.needs).ok_or_else(|| {
        format!(
            "no built-in checker `{name}` (one of: {})",
            names().join(", ")
        )
    })?;
    let final_state = match needs {
        Needs::HistoryAndFinalState | Needs::FinalState => {
            let path = artifacts.join("final.json");
            let text = crate::untrusted::read_untrusted(&path, crate::untrusted::READ_LIMIT)
                .map_err(|e| format!("final state {}: {e}", path.display()))?;
            Some(
                serde_json::from_str::<Value>(&text)
                    .map_err(|e| format!("final state {}: invalid JSON: {e}", path.display()))?,
            )
        }
        _ => None,
    };
    let replicas = match needs {
        Needs::Replicas | Needs::FinalState => replica_dumps(&artifacts.join("replicas"))?,
        _ => Vec::new(),
    };
    let inputs = Inputs {
        history: Some(history),
        final_state: final_state.as_ref(),
        replicas: &replicas,
        model: None,
        claim: None,
    };
    run(&name, &inputs, &params)
}

/// Every `*.json` in `dir`, by file name; a missing directory is no replicas. The
/// system under test wrote them where any uid may make names: neither the directory
/// nor a dump is read through a symlink.
fn replica_dumps(dir: &std::path::Path) -> Result<Vec<Dump>, String> {
    use crate::untrusted::{READ_LIMIT, believed, open_dir_nofollow, read_untrusted_at};
    use std::os::fd::AsRawFd;
    let fd = match open_dir_nofollow(dir) {
        Ok(fd) => fd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("replicas {}: {e}", dir.display())),
    };
    let owner = nix::sys::stat::fstat(&fd)
        .map_err(|e| format!("replicas {}: {e}", dir.display()))?
        .st_uid;
    believed(dir, owner).map_err(|e| format!("replicas: {e}"))?;
    let listing = std::path::PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
    let entries =
        std::fs::read_dir(listing).map_err(|e| format!("replicas {}: {e}", dir.display()))?;
    let mut names: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .filter(|n| {
            std::path::Path::new(n)
                .extension()
                .is_some_and(|x| x == "json")
        })
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| {
            let name = dir.join(n).display().to_string();
            let text = read_untrusted_at(&fd, n, READ_LIMIT).map_err(|e| format!("{name}: {e}"))?;
            super::final_state::parse_dump(&name, &text).map(|d| (name, d))
        })
        .collect()
}
