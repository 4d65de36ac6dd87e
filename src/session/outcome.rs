//! What a session produced, as plain serialisable data: the report renderers and
//! `verdicts.json` read only this (plus the plan), never the engine's live state.

use serde::{Deserialize, Serialize};

use crate::session::dir::Revision;
use crate::verdict::{AuditItem, Decision, SessionVerdict, Tier, Verdict};

/// The whole session, as far as it got.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// Set when a signal stopped the session (after healing), e.g. `SIGINT`.
    pub interrupted: Option<String>,
    /// What toolbox discovery found in the SUT repository.
    pub toolbox: Vec<crate::toolbox::ToolboxItem>,
    /// The environment capability matrix: requirement → present? → version → source.
    pub capabilities: Vec<crate::capability::MatrixRow>,
}

/// One scenario: its own verdict (aggregated over arms when it has arms).
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    pub finding: Option<Finding>,
    /// Set when a capability was substituted: the run is a degraded approximation.
    pub degraded: Option<String>,
    /// Discovered toolbox items this scenario's bindings use (`path name`).
    pub toolbox_used: Vec<String>,
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunOutcome {
    /// `D3`, or `D5/api` for an arm.
    pub id: String,
    pub decision: Option<Decision>,
    pub seeds: Vec<SeedRun>,
    /// The same-seed re-run of a FAIL, if one ran.
    pub rerun: Option<SeedRun>,
    /// Green-but-broken checks, then weak-oracle items, each measured or declared.
    pub audits: Vec<AuditItem>,
    /// Files under the session directory worth opening (relative paths).
    pub artifacts: Vec<String>,
    /// A reproducible FAIL's schedule, reduced.
    #[serde(default)]
    pub reduction: Option<super::reduce::Reduction>,
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeedRun {
    pub seed: u64,
    pub landing: Vec<LandingEvidence>,
    pub oracle: Option<OracleEvidence>,
    /// A precondition that failed, named.
    pub env_missing: Option<String>,
    pub expired_step: Option<String>,
}

/// What was seen of one planned fault.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OracleEvidence {
    pub checker: String,
    pub ops_checked: u64,
    pub ops_produced: u64,
    pub anomalies: u64,
    pub evidence: String,
    pub cites: Vec<u64>,
}

/// A FAIL's write-up (method §2.7, §5, §6).
#[derive(Debug, Clone, Serialize, Deserialize)]
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
}
