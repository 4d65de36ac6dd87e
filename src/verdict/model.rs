//! The vocabulary of verdicts and the evidence they are computed from (method §3, §4, §8).

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::exit::Exit;

/// The ten per-scenario / per-arm states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "PASS-smoke")]
    PassSmoke,
    #[serde(rename = "PASS-hardening")]
    PassHardening,
    #[serde(rename = "FAIL-reproducible")]
    FailReproducible,
    #[serde(rename = "FAIL-nondeterministic")]
    FailNondeterministic,
    #[serde(rename = "INCONCLUSIVE-env")]
    InconclusiveEnv,
    #[serde(rename = "INCONCLUSIVE-oracle-too-weak")]
    InconclusiveOracleTooWeak,
    #[serde(rename = "INCONCLUSIVE-fault-not-proven")]
    InconclusiveFaultNotProven,
    #[serde(rename = "PARTIAL-surface")]
    PartialSurface,
    #[serde(rename = "PARTIAL-model")]
    PartialModel,
    #[serde(rename = "NOT-RUN")]
    NotRun,
}

impl Verdict {
    pub const ALL: [Verdict; 10] = [
        Verdict::PassSmoke,
        Verdict::PassHardening,
        Verdict::FailReproducible,
        Verdict::FailNondeterministic,
        Verdict::InconclusiveEnv,
        Verdict::InconclusiveOracleTooWeak,
        Verdict::InconclusiveFaultNotProven,
        Verdict::PartialSurface,
        Verdict::PartialModel,
        Verdict::NotRun,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::PassSmoke => "PASS-smoke",
            Verdict::PassHardening => "PASS-hardening",
            Verdict::FailReproducible => "FAIL-reproducible",
            Verdict::FailNondeterministic => "FAIL-nondeterministic",
            Verdict::InconclusiveEnv => "INCONCLUSIVE-env",
            Verdict::InconclusiveOracleTooWeak => "INCONCLUSIVE-oracle-too-weak",
            Verdict::InconclusiveFaultNotProven => "INCONCLUSIVE-fault-not-proven",
            Verdict::PartialSurface => "PARTIAL-surface",
            Verdict::PartialModel => "PARTIAL-model",
            Verdict::NotRun => "NOT-RUN",
        }
    }

    pub fn is_pass(self) -> bool {
        matches!(self, Verdict::PassSmoke | Verdict::PassHardening)
    }

    pub fn is_fail(self) -> bool {
        matches!(
            self,
            Verdict::FailReproducible | Verdict::FailNondeterministic
        )
    }

    pub fn is_inconclusive(self) -> bool {
        matches!(
            self,
            Verdict::InconclusiveEnv
                | Verdict::InconclusiveOracleTooWeak
                | Verdict::InconclusiveFaultNotProven
        )
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Session-level verdict (policy §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionVerdict {
    Done,
    Fail,
    DoneWithConcerns,
    Inconclusive,
    Blocked,
}

impl SessionVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionVerdict::Done => "DONE",
            SessionVerdict::Fail => "FAIL",
            SessionVerdict::DoneWithConcerns => "DONE_WITH_CONCERNS",
            SessionVerdict::Inconclusive => "INCONCLUSIVE",
            SessionVerdict::Blocked => "BLOCKED",
        }
    }

    /// Process exit code for `run` / `demo` / `resume` (policy §8).
    pub fn exit(self) -> Exit {
        match self {
            SessionVerdict::Done => Exit::DONE,
            SessionVerdict::Fail => Exit::FAIL,
            SessionVerdict::DoneWithConcerns => Exit::DONE_WITH_CONCERNS,
            SessionVerdict::Inconclusive => Exit::INCONCLUSIVE,
            SessionVerdict::Blocked => Exit::BLOCKED,
        }
    }
}

impl fmt::Display for SessionVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Budget tiers, ordered weakest first.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Smoke,
    Hardening,
    Release,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Smoke => "smoke",
            Tier::Hardening => "hardening",
            Tier::Release => "release",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How an audit item was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuditSource {
    /// faultline computed it from evidence it saw.
    Measured,
    /// The run spec or the operator vouched for it.
    Declared,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuditStatus {
    Passed,
    Failed,
    NotApplicable,
    /// Nobody measured or declared it. Blocks every PASS.
    Unchecked,
}

/// One green-but-broken check or weak-oracle audit item with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditItem {
    /// Stable id, e.g. `gbb-1-workload-rate` or `weak-seeds`.
    pub id: String,
    pub status: AuditStatus,
    pub source: AuditSource,
    pub evidence: String,
    /// Journal sequence numbers this item rests on.
    pub cites: Vec<u64>,
}

/// How the declared checker ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum CheckerRun {
    /// Never invoked on the history.
    NotRun,
    /// Invoked, and it judged the history.
    Judged {
        anomalies: u64,
        ops_checked: u64,
        ops_produced: u64,
    },
    /// Invoked, but the history lacks fields it needs.
    MissingFields { fields: Vec<String> },
    /// Invoked, but it ran out of its time / memory budget.
    Unknown { reason: String },
    /// The checker does not fit the model / claim category.
    Mismatch { reason: String },
}

impl CheckerRun {
    /// For a checker that ran but cannot tell PASS from FAIL: the tree's question and
    /// its answer. `None` when it judged the history or never ran.
    pub fn too_weak(&self) -> Option<(&'static str, String)> {
        match self {
            CheckerRun::MissingFields { fields } => Some((
                "does the history have the checker's required fields?",
                format!("no: missing {}", fields.join(", ")),
            )),
            CheckerRun::Unknown { reason } => Some((
                "could the checker tell PASS from FAIL?",
                format!("no: checker answered unknown ({reason})"),
            )),
            CheckerRun::Mismatch { reason } => Some((
                "does the checker match the model and claim?",
                format!("no: {reason}"),
            )),
            CheckerRun::NotRun | CheckerRun::Judged { .. } => None,
        }
    }
}

/// Everything the decision tree looks at, for one scenario or arm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// Set when the scenario / arm was never reached (reason).
    pub not_run: Option<String>,
    /// Set when a required capability or precondition was missing (reason).
    pub env_missing: Option<String>,
    /// Whether a re-run with the same seed reproduced a registered FAIL
    /// (`None` when no re-run happened).
    pub rerun_reproduced: Option<bool>,
    pub fault_planned: bool,
    /// Every planned fault's declared landing signal was observed in its window.
    pub landing_proven: bool,
    pub checker: CheckerRun,
    /// Whether a fault was active during the checked history window.
    pub fault_active: bool,
    /// Highest budget tier fully met, if any.
    pub tier_met: Option<Tier>,
    /// The §7.M block is filled (not "not applicable").
    pub serious: bool,
    /// Number of distinct PRNG seeds whose runs agreed (clean).
    pub seeds_agreeing: u32,
    /// Green-but-broken checks (ids `gbb-1-…` … `gbb-10-…`).
    pub green_but_broken: Vec<AuditItem>,
    /// Weak-oracle audit items (ids `weak-…`).
    pub weak_oracle: Vec<AuditItem>,
    /// A step whose deadline expired (named in the reason chain).
    pub expired_step: Option<String>,
    /// Services that ended before the workload did with no fault to explain it, one
    /// line each (`n1 exited 3 at +0.1 s: …`); their records are cited under `ended`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services_ended: Vec<String>,
    /// Faults whose injection failed, one line each (`<fault>: <why>`): never
    /// injected, so never a landing to prove.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub never_injected: Vec<String>,
    /// Journal sequence numbers cited for each tree question, by question key.
    pub cites: std::collections::BTreeMap<String, Vec<u64>>,
}

impl Evidence {
    /// Nothing observed: the base a run's evidence is built on.
    pub fn empty() -> Evidence {
        Evidence {
            not_run: None,
            env_missing: None,
            rerun_reproduced: None,
            fault_planned: false,
            landing_proven: false,
            checker: CheckerRun::NotRun,
            fault_active: false,
            tier_met: None,
            serious: false,
            seeds_agreeing: 0,
            green_but_broken: Vec::new(),
            weak_oracle: Vec::new(),
            expired_step: None,
            services_ended: Vec::new(),
            never_injected: Vec::new(),
            cites: Default::default(),
        }
    }
}

/// One question of the decision tree (or one downgrade rule) and its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasonStep {
    pub question: String,
    pub answer: String,
    pub cites: Vec<u64>,
}

/// The tree's output: a verdict and the chain that led to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub verdict: Verdict,
    pub tier_met: Option<Tier>,
    pub reasons: Vec<ReasonStep>,
}
