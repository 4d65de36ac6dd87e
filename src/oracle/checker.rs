//! What every checker reports, and the field-requirement contract.

use std::sync::Arc;

use super::history::History;
use super::jsonl_read::Header;
use crate::verdict::CheckerRun;

/// One violation found by a checker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anomaly {
    /// Op ids involved.
    pub ops: Vec<String>,
    /// Why these ops violate the property.
    pub why: String,
    /// What the anomaly figure draws (a linearizability search's stop, or a
    /// dependency cycle); never journaled, so shared rather than copied with the report.
    pub counterexample: Option<Arc<Counterexample>>,
}

/// The structure behind an anomaly, for its figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counterexample {
    /// Where a linearizability search got stuck (drawn as a timeline).
    Stuck(Stuck),
    /// A cycle of transaction dependencies (drawn as a ring).
    Cycle(Cycle),
}

impl Counterexample {
    pub fn stuck(&self) -> Option<&Stuck> {
        match self {
            Counterexample::Stuck(s) => Some(s),
            Counterexample::Cycle(_) => None,
        }
    }

    pub fn cycle(&self) -> Option<&Cycle> {
        match self {
            Counterexample::Cycle(c) => Some(c),
            Counterexample::Stuck(_) => None,
        }
    }
}

/// How far a linearizability search got on one object before an op could not take
/// effect. Indices are into the history's ops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stuck {
    /// The object searched: `the register` or ``key `k` ``.
    pub place: String,
    /// Every op on that object the search considered, in history order.
    pub ops: Vec<usize>,
    /// The deepest linearizable prefix, in the order its ops take effect.
    pub prefix: Vec<usize>,
    /// The op whose return no order of the ops before it could get past.
    pub blocked: usize,
    /// The object's value after the prefix (JSON text).
    pub state: String,
}

/// A dependency cycle: `hops[i]` leads from `txns[i]` to `txns[i + 1]` (the last
/// back to the first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// The anomaly's name, e.g. `G-single`.
    pub kind: String,
    /// The levels it violates, e.g. `violates snapshot-isolation and stronger`.
    pub violates: String,
    pub txns: Vec<CycleTxn>,
    pub hops: Vec<Hop>,
}

/// One transaction of a cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleTxn {
    /// `T<op id>`, as the explanations name it.
    pub name: String,
    pub process: String,
    /// Its micro-ops as committed, e.g. `r 1 [3 4]`, `append 2 5`.
    pub mops: Vec<String>,
}

/// One edge of a cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// `ww`, `wr`, `rw`, `process` or `realtime`.
    pub kind: String,
    /// Why the edge exists, in words.
    pub why: String,
}

/// Why a folding checker gives no report. A dump it cannot read is the input's
/// fault, not the command's: the caller names the dump's file and exits as for
/// malformed input, where a check asked wrongly is a usage error.
#[derive(Debug)]
pub enum Refusal {
    /// A parameter refused, a dump missing: how the check was asked.
    Usage(String),
    /// The final-state dump is not one the checker reads.
    Dump(String),
    /// The history holds more than the checker can (said how to split it).
    History(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Usage(m) | Refusal::Dump(m) | Refusal::History(m) => f.write_str(m),
        }
    }
}

/// A checker's result, with execution evidence and its declared scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckerReport {
    /// Checker name, e.g. `no-lost-ack`.
    pub checker: String,
    /// How the run ended (feeds the decision tree).
    pub run: CheckerRun,
    pub anomalies: Vec<Anomaly>,
    /// What the checker cannot detect.
    pub scope: String,
    /// Execution evidence, e.g. "checked 4,217 ops, 0 anomalies".
    pub evidence: String,
}

impl CheckerReport {
    /// Ops the checker consumed (0 unless it judged the history).
    pub fn ops_checked(&self) -> u64 {
        match self.run {
            CheckerRun::Judged { ops_checked, .. } => ops_checked,
            _ => 0,
        }
    }
}

/// How a checker runs, beside its parameters: what `faultline check --first` asks and
/// who hears of the first anomaly. A checker that finds its anomalies in one pass
/// over the history may ignore all of it; the linearizability search uses it.
#[derive(Clone, Copy, Default)]
pub struct RunOptions<'a> {
    /// Stop at the first anomaly: what is not searched yet is left, and said so.
    pub first: bool,
    /// Told, once, a one-line summary of the first anomaly as soon as it is found
    /// (from the thread that found it), while the rest is still being searched.
    pub on_first_anomaly: Option<&'a (dyn Fn(&str) + Sync)>,
    /// Most threads one check may search on; 0 is the machine's cores.
    pub threads: usize,
}

impl std::fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("first", &self.first)
            .field("on_first_anomaly", &self.on_first_anomaly.is_some())
            .field("threads", &self.threads)
            .finish()
    }
}

/// A built-in checker: a name, the fields it needs, and its scope.
pub trait Checker {
    /// Stable name, e.g. `no-lost-ack`.
    fn name() -> &'static str;
    /// History fields the checker cannot judge without.
    fn required_fields() -> &'static [&'static str];
    /// What the checker cannot detect.
    fn scope() -> &'static str;
}

/// The report for a history lacking some of `required`, or `None` if all present.
pub fn missing_fields_report(
    checker: &str,
    scope: &str,
    history: &History,
    required: &[&str],
) -> Option<CheckerReport> {
    if history.missing_fields(required).is_empty() {
        return None;
    }
    missing_report(checker, scope, &history.header(), required)
}

/// [`missing_fields_report`] of a history read as a stream (its [`Header`]).
pub fn missing_report(
    checker: &str,
    scope: &str,
    history: &Header,
    required: &[&str],
) -> Option<CheckerReport> {
    let fields = history.missing_fields(required);
    if fields.is_empty() {
        return None;
    }
    let mut evidence = format!(
        "refused: {} lacks field(s) {}",
        history.source,
        fields.join(", ")
    );
    // A field under another name is the usual cause: say what was dropped.
    if !history.unknown_fields.is_empty() {
        let dropped: Vec<&str> = history.unknown_fields.iter().map(String::as_str).collect();
        evidence.push_str(&format!(
            "; it has field(s) this reader does not know, dropped: {}",
            dropped.join(", ")
        ));
        let hints: Vec<String> = fields
            .iter()
            .filter_map(|want| {
                let like = dropped.iter().find(|d| d.starts_with(want.as_str()))?;
                Some(format!("`{like}` for `{want}`"))
            })
            .collect();
        if !hints.is_empty() {
            evidence.push_str(&format!(" (did you mean {}?)", hints.join(", ")));
        }
    }
    Some(CheckerReport {
        checker: checker.to_string(),
        run: CheckerRun::MissingFields { fields },
        anomalies: Vec::new(),
        scope: scope.to_string(),
        evidence,
    })
}

/// Format a count with thousands separators ("4,217").
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The noun for `count` things: `one` for exactly one, `many` otherwise ("1 op",
/// "2 ops").
pub fn plural<'a>(count: u64, one: &'a str, many: &'a str) -> &'a str {
    if count == 1 { one } else { many }
}

/// Standard evidence line: "checked 4,217 of 4,300 ops, 0 anomalies".
pub fn evidence_line(checked: u64, produced: u64, anomalies: usize) -> String {
    let noun = plural(anomalies as u64, "anomaly", "anomalies");
    if checked == produced {
        format!(
            "checked {} {}, {anomalies} {noun}",
            thousands(checked),
            plural(checked, "op", "ops")
        )
    } else {
        format!(
            "checked {} of {} {}, {anomalies} {noun}",
            thousands(checked),
            thousands(produced),
            plural(produced, "op", "ops")
        )
    }
}

/// The report of a checker that judged `checked` of `produced` ops.
pub fn judged(
    checker: &str,
    scope: &str,
    checked: u64,
    produced: u64,
    anomalies: Vec<Anomaly>,
) -> CheckerReport {
    CheckerReport {
        checker: checker.to_string(),
        run: CheckerRun::Judged {
            anomalies: anomalies.len() as u64,
            ops_checked: checked,
            ops_produced: produced,
        },
        evidence: evidence_line(checked, produced, anomalies.len()),
        anomalies,
        scope: scope.to_string(),
    }
}

/// The report of a checker that could not tell PASS from FAIL.
pub fn unknown(checker: &str, scope: &str, reason: String) -> CheckerReport {
    CheckerReport {
        checker: checker.to_string(),
        evidence: format!("unknown: {reason}"),
        run: CheckerRun::Unknown { reason },
        anomalies: Vec::new(),
        scope: scope.to_string(),
    }
}

/// The report of a checker that does not fit the model / claim.
pub fn mismatch(checker: &str, scope: &str, reason: String) -> CheckerReport {
    CheckerReport {
        checker: checker.to_string(),
        evidence: format!("refused: {reason}"),
        run: CheckerRun::Mismatch { reason },
        anomalies: Vec::new(),
        scope: scope.to_string(),
    }
}

/// Several checkers' reports on one history as one oracle: it fails when any found an
/// anomaly (an anomaly found is never outweighed), it is too weak when any was
/// (and none found one), and it did not judge when any did not. Coverage is the
/// least any of them covered. `None` when no checker judged, or when one could not
/// run at all and none found an anomaly.
pub fn conjunction(reports: Vec<Option<CheckerReport>>) -> Option<CheckerReport> {
    if reports.len() == 1 {
        return reports.into_iter().next().flatten();
    }
    let all_ran = reports.iter().all(Option::is_some);
    let reports: Vec<CheckerReport> = reports.into_iter().flatten().collect();
    let name = reports
        .iter()
        .map(|r| r.checker.as_str())
        .collect::<Vec<_>>()
        .join(" + ");
    let judged = |r: &CheckerReport| match r.run {
        CheckerRun::Judged {
            anomalies,
            ops_checked,
            ops_produced,
        } => Some((anomalies, ops_checked, ops_produced)),
        _ => None,
    };
    let found: u64 = reports.iter().filter_map(judged).map(|j| j.0).sum();
    let weak = reports.iter().find(|r| r.run.too_weak().is_some());
    let run = if found > 0 {
        let produced = reports
            .iter()
            .filter_map(judged)
            .map(|j| j.2)
            .max()
            .unwrap_or(0);
        let checked = reports
            .iter()
            .filter_map(judged)
            .map(|j| j.1)
            .min()
            .unwrap_or(0);
        CheckerRun::Judged {
            anomalies: found,
            ops_checked: checked,
            ops_produced: produced,
        }
    } else if let Some(weak) = weak {
        match &weak.run {
            CheckerRun::MissingFields { fields } => CheckerRun::MissingFields {
                fields: fields.clone(),
            },
            CheckerRun::Unknown { reason } => CheckerRun::Unknown {
                reason: format!("{}: {reason}", weak.checker),
            },
            CheckerRun::Mismatch { reason } => CheckerRun::Mismatch {
                reason: format!("{}: {reason}", weak.checker),
            },
            other => other.clone(),
        }
    } else if !all_ran || reports.iter().any(|r| judged(r).is_none()) {
        return None;
    } else {
        CheckerRun::Judged {
            anomalies: 0,
            ops_checked: reports
                .iter()
                .filter_map(judged)
                .map(|j| j.1)
                .min()
                .unwrap_or(0),
            ops_produced: reports
                .iter()
                .filter_map(judged)
                .map(|j| j.2)
                .max()
                .unwrap_or(0),
        }
    };
    Some(CheckerReport {
        checker: name,
        run,
        anomalies: reports
            .iter()
            .flat_map(|r| {
                r.anomalies.iter().map(|a| Anomaly {
                    counterexample: None,
                    ops: a.ops.clone(),
                    why: format!("{}: {}", r.checker, a.why),
                })
            })
            .collect(),
        scope: reports
            .iter()
            .map(|r| format!("{}: {}", r.checker, r.scope))
            .collect::<Vec<_>>()
            .join("; "),
        evidence: reports
            .iter()
            .map(|r| format!("{}: {}", r.checker, r.evidence))
            .collect::<Vec<_>>()
            .join("; "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(name: &str, run: CheckerRun, anomalies: usize) -> Option<CheckerReport> {
        Some(CheckerReport {
            checker: name.into(),
            run,
            anomalies: (0..anomalies)
                .map(|i| Anomaly {
                    counterexample: None,
                    ops: vec![i.to_string()],
                    why: "bad".into(),
                })
                .collect(),
            scope: String::new(),
            evidence: format!("{name} said so"),
        })
    }

    fn judged(anomalies: u64, checked: u64, produced: u64) -> CheckerRun {
        CheckerRun::Judged {
            anomalies,
            ops_checked: checked,
            ops_produced: produced,
        }
    }

    #[test]
    fn an_anomaly_outweighs_a_weak_or_missing_checker() {
        let unknown = CheckerRun::Unknown {
            reason: "out of time".into(),
        };
        let both = conjunction(vec![
            report("slo", unknown.clone(), 0),
            report("no-lost-ack", judged(2, 90, 100), 2),
            None,
        ])
        .expect("a verdict");
        assert_eq!(both.run, judged(2, 90, 100));
        assert_eq!(both.checker, "slo + no-lost-ack");
        assert!(both.anomalies.iter().all(|a| a.why == "no-lost-ack: bad"));
        assert!(both.evidence.contains("slo: slo said so"));

        // No anomaly: the weak one decides, naming itself.
        let weak = conjunction(vec![
            report("no-lost-ack", judged(0, 100, 100), 0),
            report("slo", unknown, 0),
        ])
        .expect("a verdict");
        assert_eq!(
            weak.run,
            CheckerRun::Unknown {
                reason: "slo: out of time".into()
            }
        );

        // No anomaly and one that never ran: the oracle did not judge.
        assert!(conjunction(vec![report("a", judged(0, 5, 5), 0), None]).is_none());

        // All clean: coverage is the least any of them covered.
        let clean = conjunction(vec![
            report("a", judged(0, 80, 100), 0),
            report("b", judged(0, 100, 100), 0),
        ])
        .expect("a verdict");
        assert_eq!(clean.run, judged(0, 80, 100));
        assert_eq!(conjunction(vec![None]), None);
    }
}
