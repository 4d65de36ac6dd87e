//! What a session produced, as plain serialisable data: the report renderers and
//! `verdicts.json` read only this (plus the plan), never the engine's live state.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::runspec::FaultStep;
use crate::runspec::duration::Dur;

use crate::session::dir::Revision;
use crate::verdict::{AuditItem, Decision, SessionVerdict, Tier, Verdict};

/// The whole session, as far as it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionOutcome {
    pub plan_path: String,
    pub plan_slug: String,
    /// The SUT directory commands ran in.
    pub sut_dir: String,
    pub session_dir: String,
    pub revision: Option<Revision>,
    /// Who started the run (`--yes`, an answers file, a TUI user).
    pub operator: String,
    /// The tier asked for with `--tier` (or the command's default).
    pub tier: Tier,
    /// RFC 3339 UTC.
    pub started: String,
    pub finished: Option<String>,
    /// Plan order.
    pub scenarios: Vec<ScenarioOutcome>,
    /// `None` while the session is still running.
    pub verdict: Option<SessionVerdict>,
    /// Set when the session was stopped (after healing): what stopped it, e.g.
    /// `interrupted by the operator` (older sessions: a signal's name, `SIGINT`).
    pub interrupted: Option<String>,
    /// What toolbox discovery found in the SUT repository.
    pub toolbox: Vec<crate::toolbox::ToolboxItem>,
    /// The environment capability matrix: requirement → present? → version → source.
    pub capabilities: Vec<crate::capability::MatrixRow>,
}

impl SessionOutcome {
    /// The session part alone: every field but `scenarios` (left empty), copied
    /// field by field so no scenario is copied.
    pub fn head(&self) -> SessionOutcome {
        SessionOutcome {
            plan_path: self.plan_path.clone(),
            plan_slug: self.plan_slug.clone(),
            sut_dir: self.sut_dir.clone(),
            session_dir: self.session_dir.clone(),
            revision: self.revision.clone(),
            operator: self.operator.clone(),
            tier: self.tier,
            started: self.started.clone(),
            finished: self.finished.clone(),
            scenarios: Vec::new(),
            verdict: self.verdict,
            interrupted: self.interrupted.clone(),
            toolbox: self.toolbox.clone(),
            capabilities: self.capabilities.clone(),
        }
    }
}

/// One scenario: its own verdict (aggregated over arms when it has arms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioOutcome {
    pub id: String,
    pub name: String,
    /// Where it stands now: `pending`, `running`, `done`.
    pub phase: Phase,
    pub verdict: Option<Verdict>,
    pub tier_met: Option<Tier>,
    /// The decision tree's reasons (for a scenario with arms: the aggregation).
    pub reasons: Vec<crate::verdict::ReasonStep>,
    /// One entry per arm, or exactly one for a scenario without arms.
    pub runs: Vec<RunOutcome>,
    /// Boxed, as are a run's re-run and reduction: most outcomes have none, and every
    /// scenario's outcome is held for the whole session (inline, the room for them
    /// tripled an outcome's size).
    pub finding: Option<Box<Finding>>,
    /// Set when a capability was substituted: the run is a degraded approximation.
    pub degraded: Option<String>,
    /// Discovered toolbox items this scenario's bindings use (`path name`).
    pub toolbox_used: Vec<String>,
}

impl ScenarioOutcome {
    /// A stop cut one of its reductions short (`faultline resume` finishes it).
    pub fn cut_short(&self) -> bool {
        self.runs
            .iter()
            .any(|r| r.reduction.as_ref().is_some_and(|red| red.cut_short))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Pending,
    Preconditions,
    Workload,
    Fault,
    Quiesce,
    Oracle,
    Audits,
    Rerun,
    Done,
}

/// One scenario or arm run (all its seeds, plus a re-run of a FAIL).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// `D3`, or `D5/api` for an arm.
    pub id: String,
    pub decision: Option<Decision>,
    pub seeds: Vec<SeedRun>,
    /// The same-seed re-run of a FAIL, if one ran.
    pub rerun: Option<Box<SeedRun>>,
    /// Green-but-broken checks, then weak-oracle items, each measured or declared.
    pub audits: Vec<AuditItem>,
    /// Files under the session directory worth opening (relative paths).
    pub artifacts: Vec<String>,
    /// A reproducible FAIL's schedule, reduced.
    #[serde(default)]
    pub reduction: Option<Box<Reduction>>,
}

impl RunOutcome {
    /// A run settled by its decision alone: nothing ran (NOT-RUN, INCONCLUSIVE-env), or
    /// its decision was taken back from the journal.
    pub fn decided(id: &str, decision: Decision) -> RunOutcome {
        RunOutcome {
            id: id.to_string(),
            decision: Some(decision),
            seeds: Vec::new(),
            rerun: None,
            audits: Vec::new(),
            artifacts: Vec::new(),
            reduction: None,
        }
    }
}

/// One iteration with one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedRun {
    pub seed: u64,
    pub landing: Vec<LandingEvidence>,
    pub oracle: Option<OracleEvidence>,
    /// A precondition that failed, named.
    pub env_missing: Option<String>,
    pub expired_step: Option<String>,
    /// Services that ended on their own before the workload did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services_ended: Vec<ServiceEnd>,
}

/// A service that ended while it was meant to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceEnd {
    /// `n1 exited 3 at +0.1 s: failed to list data directory`.
    pub said: String,
    /// The fault that explains it (absent: none does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// Its `service-exited` record, and the fault's `fault-injected` record.
    pub cites: Vec<u64>,
}

/// What was seen of one planned fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LandingEvidence {
    pub fault: String,
    pub injected: bool,
    pub injector_side: bool,
    pub victim_side: bool,
    /// Every declared signal was observed in its window.
    pub declared: bool,
    pub healed: bool,
    /// Human summary, e.g. `n3 state T (stopped); primary logged "replication to n3 timed out"`.
    pub detail: String,
    pub cites: Vec<u64>,
}

/// What the checker consumed and found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OracleEvidence {
    pub checker: String,
    pub ops_checked: u64,
    pub ops_produced: u64,
    pub anomalies: u64,
    pub evidence: String,
    pub cites: Vec<u64>,
    /// The first anomalies, spelled out (at most [`ANOMALIES_LISTED`]; `anomalies`
    /// counts them all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listed: Vec<AnomalyNote>,
}

/// How many anomalies a seed's evidence and a finding spell out.
pub const ANOMALIES_LISTED: usize = 20;
/// How many of one anomaly's ops are spelled out.
pub const OPS_LISTED: usize = 6;

/// One anomaly as the finding tells it: why, and the ops it involves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnomalyNote {
    pub why: String,
    pub ops: Vec<OpNote>,
    /// Ops of this anomaly beyond those listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_ops: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One op of an anomaly, read back from the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpNote {
    pub op_id: String,
    pub process: String,
    pub op_type: String,
    #[serde(default)]
    pub key: Option<String>,
    pub input: serde_json::Value,
    pub output: serde_json::Value,
    /// `ok`, `timed out` or `failed: <error>`.
    pub ended: String,
    /// Invoke time, ms after the history's first invoke (`None`: the checker named an
    /// op the history does not hold).
    #[serde(default)]
    pub invoked_ms: Option<u64>,
    /// The fault held when it was invoked (`None`: outside every fault window).
    #[serde(default)]
    pub fault: Option<String>,
}

impl OpNote {
    /// One line: `op 3-41 (process 0) write k3-41 <- "v41" -> "ok", ok, invoked +2.31 s, during pause-n3`.
    pub fn describe(&self) -> String {
        let Some(invoked_ms) = self.invoked_ms else {
            return format!("op {} (not in the history)", self.op_id);
        };
        let mut line = format!(
            "op {} (process {}) {}",
            self.op_id, self.process, self.op_type
        );
        if let Some(key) = &self.key {
            line.push_str(&format!(" {key}"));
        }
        if !self.input.is_null() {
            line.push_str(&format!(" \u{2190} {}", self.input));
        }
        if !self.output.is_null() {
            line.push_str(&format!(" \u{2192} {}", self.output));
        }
        line.push_str(&format!(
            ", {}, invoked +{:.2} s, {}",
            self.ended,
            invoked_ms as f64 / 1000.0,
            match &self.fault {
                Some(f) => format!("during {f}"),
                None => "outside every fault window".to_string(),
            }
        ));
        line
    }
}

impl AnomalyNote {
    /// One line: the reason, then each op.
    pub fn describe(&self) -> String {
        if self.ops.is_empty() {
            return self.why.clone();
        }
        let ops: Vec<String> = self.ops.iter().map(OpNote::describe).collect();
        let mut line = format!("{}: {}", self.why, ops.join("; "));
        if self.more_ops > 0 {
            line.push_str(&format!("; and {} more op(s)", self.more_ops));
        }
        line
    }
}

/// A FAIL's write-up (method §2.7, §5, §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// `F1`, `F2`… in session order.
    pub id: String,
    pub scenario: String,
    pub hypothesis: Vec<String>,
    pub what_happened: String,
    /// The command line / seed that reproduces it.
    pub reproducer: String,
    pub reproduced: bool,
    pub blame: String,
    /// Who gave the classification answers (blame, bug type, …): an attached
    /// operator, the answers file or `--yes`; empty when nobody was asked.
    #[serde(default)]
    pub classified_by: String,
    pub bug_type: String,
    /// Secondary tags (method §6), comma-separated as the operator gave them.
    pub tags: String,
    /// P0…P3 or `unrated`.
    pub severity: String,
    pub root_cause: String,
    pub evidence: Vec<String>,
    pub next_action: String,
    /// The reduction of a reproducible FAIL: "reduced from N events to k over M
    /// re-runs …", how it ended, and the reduced reproducer's replay command.
    #[serde(default)]
    pub reduction: Option<String>,
    /// The failing seed's anomalies, one line each (the first [`ANOMALIES_LISTED`]).
    #[serde(default)]
    pub anomalies: Vec<String>,
    /// How many anomalies the failing seed's checker found in all.
    #[serde(default)]
    pub anomalies_total: u64,
}

/// What the reduction found, for the finding and the reproducer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reduction {
    /// Fault steps in the original schedule.
    pub from: usize,
    /// Fault steps left.
    pub to: usize,
    /// Candidates re-run.
    pub runs: u32,
    pub seed: u64,
    /// Ids of the faults kept, in schedule order.
    pub faults: Vec<String>,
    /// How it ended: shrunk as far as it could, or stopped by its budget.
    pub note: String,
    /// Timings of kept faults that were halved and still failed.
    #[serde(default)]
    pub timing: Vec<TimingCut>,
    /// The workload's run, halved when the seed still failed with fewer ops.
    #[serde(default)]
    pub workload: Option<WorkloadCut>,
    /// The reduced spec and the command that replays it (written by the driver).
    pub reproducer: Option<String>,
    /// A stop (the operator's, or a signal) ended it before it tried everything: the
    /// FAIL stands with its unreduced reproducer; `faultline resume` finishes it.
    #[serde(default)]
    pub cut_short: bool,
}

/// One kept fault's timing, shortened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimingCut {
    pub fault: String,
    /// `after` (start offset) or `duration` (hold).
    pub field: String,
    pub from_ms: u64,
    pub to_ms: u64,
}

/// The workload's length (the tier's duration), shortened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadCut {
    pub from_ms: u64,
    pub to_ms: u64,
}

impl TimingCut {
    /// Applies this cut to `step` when it is the fault it names.
    pub fn apply(&self, step: &mut FaultStep) {
        if step.id != self.fault {
            return;
        }
        let to = Dur(Duration::from_millis(self.to_ms));
        match self.field.as_str() {
            "after" => step.after = to,
            "duration" => step.duration = Some(to),
            _ => {}
        }
    }
}

impl Reduction {
    /// "reduced from 3 events to 1 over 4 re-runs".
    pub fn summary(&self) -> String {
        let mut text = format!(
            "reduced from {} events to {} over {} re-runs (seed {}; kept: {})",
            self.from,
            self.to,
            self.runs,
            self.seed,
            if self.faults.is_empty() {
                "none".to_string()
            } else {
                self.faults.join(", ")
            }
        );
        if !self.timing.is_empty() {
            let cuts: Vec<String> = self
                .timing
                .iter()
                .map(|c| format!("{} {} {}ms → {}ms", c.fault, c.field, c.from_ms, c.to_ms))
                .collect();
            text.push_str(&format!("; timing: {}", cuts.join(", ")));
        }
        if let Some(cut) = self.workload {
            text.push_str(&format!("; workload {}ms → {}ms", cut.from_ms, cut.to_ms));
        }
        text
    }
}
