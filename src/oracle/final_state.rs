//! Checkers over state dumps taken at quiescence: reconciliation across
//! replicas, and an invariant over the final state.

use super::checker::{Anomaly, judged, unknown};
use super::history::History;
use super::params::Params;
use crate::oracle::CheckerReport;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A replica's dump: its name (file) and key → value.
pub type Dump = (String, BTreeMap<String, Value>);

pub mod reconciliation {
    use super::*;

    pub const NAME: &str = "reconciliation";
    pub const SCOPE: &str = "pairwise diff of replica dumps taken at quiescence, key by key; does \
        not know whether the dumps were taken after the convergence window, nor which replica is right";

    /// Keys whose values differ between replicas (counted over the key union).
    pub fn check(replicas: &[Dump], params: &Params) -> Result<CheckerReport, String> {
        params.only(NAME, &[])?;
        if replicas.len() < 2 {
            return Err(format!(
                "{NAME} needs at least two replica dumps, got {}",
                replicas.len()
            ));
        }
        let keys: BTreeSet<&String> = replicas.iter().flat_map(|(_, d)| d.keys()).collect();
        let mut anomalies = Vec::new();
        for key in &keys {
            let values: Vec<(&str, Option<&Value>)> = replicas
                .iter()
                .map(|(name, d)| (name.as_str(), d.get(*key)))
                .collect();
            if values.windows(2).any(|w| w[0].1 != w[1].1) {
                let listing = values
                    .iter()
                    .map(|(n, v)| match v {
                        Some(v) => format!("{n}={v}"),
                        None => format!("{n}=(absent)"),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                anomalies.push(Anomaly {
                    counterexample: None,
                    ops: Vec::new(),
                    why: format!("replicas disagree on `{key}`: {listing}"),
                });
            }
        }
        let n = keys.len() as u64;
        let mut report = judged(NAME, SCOPE, n, n, anomalies);
        report.evidence = format!(
            "compared {n} keys across {} replicas, {} differing",
            replicas.len(),
            report.anomalies.len()
        );
        Ok(report)
    }
}

pub mod invariant {
    use super::*;

    pub const NAME: &str = "invariant";
    pub const PARAMS: &[&str] = &["sum", "min", "max", "count", "distinct"];
    pub const SCOPE: &str = "the declared predicate over the final-state dump, after checking \
        quiescence (no op in flight; replica dumps, if given, identical); does not see states \
        between the start and the end";

    /// Evaluate the predicates in `params` over `state`.
    pub fn check(
        state: &BTreeMap<String, Value>,
        history: Option<&History>,
        replicas: &[Dump],
        params: &Params,
    ) -> Result<CheckerReport, String> {
        params.only(NAME, PARAMS)?;
        if params.is_empty() {
            return Err(format!(
                "{NAME}: declare at least one predicate ({})",
                PARAMS.join(", ")
            ));
        }
        // Quiescence first: a predicate read mid-flight proves nothing.
        if let Some(h) = history {
            let in_flight = h
                .ops
                .iter()
                .filter(|o| o.complete_ts.is_none() && !o.timeout && o.error.is_none())
                .count();
            if in_flight > 0 {
                return Ok(unknown(
                    NAME,
                    SCOPE,
                    format!(
                        "not quiescent: {in_flight} op(s) still in flight when the history ends"
                    ),
                ));
            }
        }
        if replicas.windows(2).any(|w| w[0].1 != w[1].1) {
            return Ok(unknown(
                NAME,
                SCOPE,
                "not quiescent: the replica dumps differ (not converged)".into(),
            ));
        }
        let mut anomalies = Vec::new();
        let numbers = |anomalies: &mut Vec<Anomaly>| -> Vec<(&String, f64)> {
            let mut out = Vec::new();
            for (k, v) in state {
                match v.as_f64() {
                    Some(n) => out.push((k, n)),
                    None => anomalies.push(Anomaly {
                        counterexample: None,
                        ops: Vec::new(),
                        why: format!("`{k}` holds {v}, not a number"),
                    }),
                }
            }
            out
        };
        if let Some(want) = params.f64("sum")? {
            let sum: f64 = numbers(&mut anomalies).iter().map(|(_, n)| n).sum();
            if (sum - want).abs() > 1e-9 {
                anomalies.push(Anomaly {
                    counterexample: None,
                    ops: Vec::new(),
                    why: format!("sum of values is {sum}, the invariant says {want}"),
                });
            }
        }
        for (name, bad) in [
            ("min", (|n: f64, t: f64| n < t) as fn(f64, f64) -> bool),
            ("max", |n, t| n > t),
        ] {
            if let Some(t) = params.f64(name)? {
                for (k, n) in numbers(&mut anomalies) {
                    if bad(n, t) {
                        anomalies.push(Anomaly {
                            counterexample: None,
                            ops: Vec::new(),
                            why: format!("`{k}` = {n} breaks {name} {t}"),
                        });
                    }
                }
            }
        }
        if let Some(want) = params.u64("count")?
            && state.len() as u64 != want
        {
            anomalies.push(Anomaly {
                counterexample: None,
                ops: Vec::new(),
                why: format!(
                    "{} keys in the final state, the invariant says {want}",
                    state.len()
                ),
            });
        }
        if params.str("distinct") == Some("true") {
            let mut seen: BTreeMap<String, &String> = BTreeMap::new();
            for (k, v) in state {
                if let Some(first) = seen.insert(v.to_string(), k) {
                    anomalies.push(Anomaly {
                        counterexample: None,
                        ops: Vec::new(),
                        why: format!("`{first}` and `{k}` both hold {v}"),
                    });
                }
            }
        }
        anomalies.dedup();
        let n = state.len() as u64;
        let mut report = judged(NAME, SCOPE, n, n, anomalies);
        report.evidence = format!(
            "evaluated {} over {n} keys, {} violations",
            params_summary(params),
            report.anomalies.len()
        );
        Ok(report)
    }

    fn params_summary(params: &Params) -> String {
        PARAMS
            .iter()
            .filter_map(|p| params.str(p).map(|v| format!("{p}={v}")))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Parse a dump: a JSON object of key → value.
pub fn parse_dump(name: &str, text: &str) -> Result<BTreeMap<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m.into_iter().collect()),
        Ok(_) => Err(format!("{name}: expected a JSON object of key → value")),
        Err(e) => Err(format!("{name}: invalid JSON: {e}")),
    }
}
