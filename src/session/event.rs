//! What a journal record says happened: one typed [`Event`] per kind.
//!
//! The journal line keeps the shape every earlier faultline wrote
//! (`{"seq", "ts", "scenario", "arm", "kind", "data"}`), so old journals load. A kind
//! this build does not know, or a known kind whose payload it cannot read, becomes
//! [`Event::Unknown`] with its text kept: a reader skips it, nothing is lost, and the
//! line is written back unchanged if the record is ever re-serialized.
//!
//! Adding a kind: one line in the `events!` list below, its payload struct, and its
//! case in the reducer (`session::view`). No kind is spelled as a string anywhere else.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::outcome::{ScenarioOutcome, SessionOutcome, TimingCut, WorkloadCut};
use crate::verdict::{ReasonStep, SessionVerdict, Tier, Verdict};

/// The journal format this build writes (in `session-started`). 1: the untyped
/// journals before typed events (no `format` field); 2: typed events; 3: the
/// session's outcome journaled too (`outcome-session`, `outcome-scenario`), so the
/// journal alone is what `resume` and `report` read.
pub const FORMAT: u32 = 3;

impl Event {
    /// An `outcome-*` record: the outcome restated for `resume` and `report`, not
    /// news. Timelines and progress lines leave these out.
    pub fn restates_outcome(&self) -> bool {
        matches!(self, Event::OutcomeSession(_) | Event::OutcomeScenario(_))
    }
}

/// Declares the event enum: variant, payload and the kind it is journaled as.
macro_rules! events {
    ($( $(#[$doc:meta])* $variant:ident($payload:ty) = $kind:literal, )*) => {
        /// One thing that happened in a session.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind", content = "data")]
        pub enum Event {
            $( $(#[$doc])* #[serde(rename = $kind)] $variant($payload), )*
            /// A kind this build does not read (a newer faultline's, or a damaged
            /// payload); kept verbatim.
            #[serde(skip)]
            Unknown(Unknown),
        }

        impl Event {
            /// The kind this event is journaled as.
            pub fn kind(&self) -> &str {
                match self {
                    $( Event::$variant(_) => $kind, )*
                    Event::Unknown(u) => &u.kind,
                }
            }
        }

        /// Every kind this build reads, for tests and the reference.
        pub const KINDS: &[&str] = &[$( $kind ),*];
    };
}

events! {
    // The session itself.
    SessionStarted(SessionStarted) = "session-started",
    SessionResumed(SessionResumed) = "session-resumed",
    SessionVerdict(SessionVerdictEvent) = "session-verdict",
    Watchdog(WatchdogEvent) = "watchdog",
    JournalTornTail(TornTail) = "journal-torn-tail",
    /// The operator (or a signal) stopped the run during a scenario.
    Interrupted(InterruptedEvent) = "interrupted",
    /// The session's own part of its outcome (all but the scenarios) and the
    /// scenarios' order, whenever it changed.
    OutcomeSession(OutcomeSession) = "outcome-session",
    /// One scenario's outcome as it stands, whenever it changed.
    OutcomeScenario(OutcomeScenario) = "outcome-scenario",
    /// A question nobody could answer stopped the run.
    StoppedUnanswered(StoppedUnanswered) = "stopped-unanswered",
    OperatorAnswer(OperatorAnswer) = "operator-answer",
    /// A note an attached operator left on the run (`{"type":"note","text":…}`).
    OperatorNote(OperatorNote) = "operator-note",
    // Operators: who may do what, who is attached, what was asked of them.
    SessionRoles(SessionRoles) = "session-roles",
    ParticipantJoined(Participant) = "participant-joined",
    ParticipantLeft(Participant) = "participant-left",
    ParticipantRefused(ParticipantRefused) = "participant-refused",
    QuestionAsked(QuestionAsked) = "question-asked",
    QuestionWithdrawn(QuestionWithdrawn) = "question-withdrawn",
    AnswerRefused(AnswerRefused) = "answer-refused",
    StopAsked(StopAsked) = "stop-asked",
    // Preflight: toolbox, checklist, probes, installs, approvals.
    ToolboxItem(Value) = "toolbox-item",
    ToolboxUsed(ToolboxUsed) = "toolbox-used",
    ToolboxError(ErrorText) = "toolbox-error",
    ChecklistComplete(ChecklistComplete) = "checklist-complete",
    Capability(CapabilitySeen) = "capability",
    CapabilityDeferred(CapabilityDeferred) = "capability-deferred",
    CapabilityDisagreement(CapabilityDisagreement) = "capability-disagreement",
    CapabilityWait(CapabilityRef) = "capability-wait",
    /// The operator took a `wait` back: the probing stopped and they are asked again.
    CapabilityWaitStopped(CapabilityWaitStopped) = "capability-wait-stopped",
    CapabilitySubstituted(CapabilitySubstituted) = "capability-substituted",
    CapabilityMatrix(CapabilityMatrix) = "capability-matrix",
    InstallApproved(InstallDecision) = "install-approved",
    InstallDeclined(InstallDecision) = "install-declined",
    InstallNotOffered(InstallNotOffered) = "install-not-offered",
    InstallFinished(InstallFinished) = "install-finished",
    PrivilegedApproved(PrivilegedDecision) = "privileged-approved",
    PrivilegedDeclined(PrivilegedDecision) = "privileged-declined",
    NodeConnected(NodeConnected) = "node-connected",
    // A scenario's run.
    Budget(Budget) = "budget",
    AuditDeclared(AuditDeclared) = "audit-declared",
    DeclarationRefused(DeclarationRefused) = "declaration-refused",
    IterationStarted(IterationStarted) = "iteration-started",
    HistoryLive(HistoryLive) = "history-live",
    CommandStarted(CommandStarted) = "command-started",
    CommandExited(CommandExited) = "command-exited",
    LogsFull(LogsFull) = "logs-full",
    Precondition(Precondition) = "precondition",
    ServiceStopped(ServiceStopped) = "service-stopped",
    /// A service ended on its own before the workload did (or before health passed).
    ServiceExited(ServiceExited) = "service-exited",
    CheckpointStart(CheckpointStart) = "checkpoint-start",
    CheckpointEnd(CheckpointEnd) = "checkpoint-end",
    StatusPull(StatusPull) = "status-pull",
    Quiesce(Quiesce) = "quiesce",
    ProxyStarted(ProxyStarted) = "proxy-started",
    ProxyStopped(ProxyStopped) = "proxy-stopped",
    MountCreated(MountCreated) = "mount-created",
    MountRemoved(MountRemoved) = "mount-removed",
    ArtifactsPruned(ArtifactsPruned) = "artifacts-pruned",
    /// A cgroup (v2) made to hold an iteration's services and all they start.
    CgroupCreated(CgroupCreated) = "cgroup-created",
    /// Its members ended and the cgroup removed (by the run, or a healer).
    CgroupRemoved(CgroupRemoved) = "cgroup-removed",
    /// The run's own network namespace (`isolate: netns`), made before anything started.
    NetnsCreated(NetnsCreated) = "netns-created",
    /// It was deleted (by the run's end, or a healer).
    NetnsRemoved(NetnsRemoved) = "netns-removed",
    // Faults.
    FaultAwaiting(FaultAwaiting) = "fault-awaiting",
    FaultTriggerSeen(FaultTriggerSeen) = "fault-trigger-seen",
    FaultSkipped(FaultSkipped) = "fault-skipped",
    FaultIntent(FaultIntent) = "fault-intent",
    FaultInjectFailed(FaultInjectFailed) = "fault-inject-failed",
    FaultInjected(FaultInjected) = "fault-injected",
    LandingInjector(LandingInjector) = "landing-injector",
    LandingDeclared(LandingDeclared) = "landing-declared",
    /// Whether the fault's landing is proven, decided once from the evidence above.
    FaultProof(FaultProof) = "fault-proof",
    FaultHealed(FaultHealed) = "fault-healed",
    // The oracle.
    HistoryUnreadable(HistoryUnreadable) = "history-unreadable",
    HistoryRejected(ErrorText) = "history-rejected",
    CheckerUnknown(CheckerUnknown) = "checker-unknown",
    CheckerOutputRejected(CheckerOutputRejected) = "checker-output-rejected",
    FinalStateMissing(FinalStateMissing) = "final-state-missing",
    OracleResult(OracleResult) = "oracle-result",
    // Verdicts and what follows a FAIL.
    SeedsStopped(SeedsStopped) = "seeds-stopped",
    RerunResult(RerunResult) = "rerun-result",
    ReductionStarted(ReductionStarted) = "reduction-started",
    ReductionCandidate(ReductionCandidate) = "reduction-candidate",
    ReductionResult(ReductionResult) = "reduction-result",
    NotRun(Reason) = "not-run",
    EnvMissing(Reason) = "env-missing",
    Verdict(VerdictEvent) = "verdict",
    ArmsAggregated(ArmsAggregated) = "arms-aggregated",
    // Author mode.
    AuthorStarted(AuthorStarted) = "author-started",
    AuthorFailed(AuthorFailed) = "author-failed",
    AuthorWritten(AuthorWritten) = "author-written",
    AuthorSkipped(AuthorSkipped) = "author-skipped",
    AuthorRefused(AuthorReason) = "author-refused",
    AuthorEphemeral(AuthorReason) = "author-ephemeral",
    AuthorStaged(AuthorStaged) = "author-staged",
    AuthorBuildStarted(AuthorBuildStarted) = "author-build-started",
    AuthorBuild(AuthorBuild) = "author-build",
    AuthorDriver(AuthorDriver) = "author-driver",
    // Healing after a crash (`faultline heal`, the watchdog, `resume`).
    HealStarted(HealBy) = "heal-started",
    GroupEnded(GroupEnded) = "group-ended",
    MarkedEnded(MarkedEnded) = "marked-ended",
    HealFinished(HealFinished) = "heal-finished",
}

/// A record of a kind this build does not read, kept as it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Unknown {
    pub kind: String,
    pub data: Value,
    /// Why it was not read: an unknown kind, or the payload's error.
    pub why: String,
}

impl Event {
    /// The payload as JSON, for generic renderers (the session log's summaries).
    pub fn data(&self) -> Value {
        match self {
            Event::Unknown(u) => u.data.clone(),
            known => serde_json::to_value(known)
                .ok()
                .and_then(|mut v| v.get_mut("data").map(Value::take))
                .unwrap_or(Value::Null),
        }
    }

    /// Reads `kind` + `data` as written in a journal line.
    pub fn from_parts(kind: String, data: Value) -> Event {
        let wire = serde_json::json!({"kind": kind, "data": data});
        match serde_json::from_value::<Event>(wire) {
            Ok(event) => event,
            Err(e) => {
                let why = if KINDS.contains(&kind.as_str()) {
                    format!("unreadable payload: {e}")
                } else {
                    "a kind this faultline does not know".to_string()
                };
                Event::Unknown(Unknown { kind, data, why })
            }
        }
    }
}

/// Milliseconds of a duration, saturating (for payloads).
pub fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

// ---- payloads -------------------------------------------------------------------
// Every payload reads leniently (`#[serde(default)]`): a field an older faultline did
// not write is empty, never a reason to drop the record.

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionStarted {
    /// Journal format ([`FORMAT`]); absent (0) in journals before typed events.
    pub format: u32,
    pub plan: String,
    pub sut: String,
    pub session: String,
    pub tier: Option<Tier>,
    pub started_by: String,
    pub revision: Option<crate::session::dir::Revision>,
    pub faults_approved: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionResumed {
    pub session: String,
    pub by: String,
    pub kept: Vec<String>,
    pub interrupted: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OutcomeSession {
    /// The outcome with its `scenarios` left empty: they come as `outcome-scenario`.
    /// (Boxed, as outcomes are large beside every other payload.)
    pub outcome: Option<Box<SessionOutcome>>,
    /// The scenarios' ids in plan order.
    pub order: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OutcomeScenario {
    pub outcome: Option<Box<ScenarioOutcome>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionVerdictEvent {
    pub verdict: Option<SessionVerdict>,
    pub scenarios: Vec<ScenarioVerdict>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScenarioVerdict {
    pub id: String,
    pub verdict: Option<Verdict>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WatchdogEvent {
    pub armed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TornTail {
    pub bytes: usize,
    pub kept_in: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InterruptedEvent {
    pub during: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StoppedUnanswered {
    pub question: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OperatorAnswer {
    pub question: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    pub answer: String,
    pub by: String,
    /// The attached operator who answered (absent for answers files and `--yes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub who: Option<Who>,
}

impl OperatorAnswer {
    /// Who gave it: the attached operator with the channel (`alice (tui)`), or the
    /// channel alone (an answers file, `--yes`).
    pub fn answerer(&self) -> String {
        match &self.who {
            Some(who) => format!("{who} ({})", self.by),
            None => self.by.clone(),
        }
    }
}

/// The longest note an operator may leave, in bytes of its text as sent (UTF-8). A
/// longer one is refused whole, never cut: nothing of it is journaled.
pub const NOTE_MAX_BYTES: usize = 4096;

/// A note an attached operator (owner or approver) left on the run: their words as
/// written, line breaks kept, with who wrote them by the kernel's word. When it was
/// written is the record's own timestamp; which scenario ran then, the reducer's
/// (`View::notes`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OperatorNote {
    /// The text, cleaned by [`OperatorNote::checked`] (each line sanitized, lines
    /// joined by `\n`); at most [`NOTE_MAX_BYTES`].
    pub text: String,
    /// The operator, as the server knew them (peer credentials; `label` is only what
    /// `--as` asserted).
    pub who: Who,
    /// The client it came through: `json`, `tui`.
    pub client: String,
}

impl OperatorNote {
    /// The text a note is journaled with, or why it is refused: over
    /// [`NOTE_MAX_BYTES`] as sent (refused whole, not cut), or nothing but blanks.
    pub fn checked(text: &str) -> Result<String, String> {
        if text.len() > NOTE_MAX_BYTES {
            return Err(format!(
                "a note is at most {NOTE_MAX_BYTES} bytes and this one has {}: refused whole, \
                 nothing of it was journaled (leave it as two notes)",
                text.len()
            ));
        }
        let clean = Self::clean(text);
        if clean.is_empty() {
            return Err("a note needs some text".to_string());
        }
        Ok(clean)
    }

    /// `text` fit to show: each line sanitized ([`crate::sanitize::line`]: no escape
    /// sequence or control character but tab) and trimmed at its end, blank lines
    /// before the first and after the last dropped, lines joined by `\n`.
    pub fn clean(text: &str) -> String {
        let lines: Vec<String> = text
            .split('\n')
            .map(|l| crate::sanitize::line(l).trim_end().to_string())
            .collect();
        let first = lines.iter().position(|l| !l.trim().is_empty());
        let last = lines.iter().rposition(|l| !l.trim().is_empty());
        match (first, last) {
            (Some(first), Some(last)) => lines[first..=last].join("\n"),
            _ => String::new(),
        }
    }

    /// Who wrote it, as the session names attached operators (`alice (uid 1001,
    /// approver)`; a `--as` label says it was asserted by key), sanitized.
    pub fn author(&self) -> String {
        crate::sanitize::line(&self.who.to_string())
    }
}

/// What an attached operator may do in a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Sees everything, answers nothing.
    #[default]
    Viewer,
    /// Answers questions (installs and privileged actions included) and may stop.
    Approver,
    /// Started the session: everything an approver may.
    Owner,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Viewer => "viewer",
            Role::Approver => "approver",
            Role::Owner => "owner",
        })
    }
}

/// An attached operator as the session server knows them: the kernel vouches for
/// `uid` (the socket's peer credentials); `label` is only what the client asserted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Who {
    pub uid: u32,
    pub user: String,
    pub role: Role,
    /// `--as NAME`: a name bound to an SSH key's forced command, asserted by the
    /// client, never checked by faultline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The client's process id (peer credentials).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.label {
            Some(label) => write!(
                f,
                "{label} (asserted by key; uid {} {}, {})",
                self.uid, self.user, self.role
            ),
            None => write!(f, "{} (uid {}, {})", self.user, self.uid, self.role),
        }
    }
}

/// Who may attach and what they may do; how the session directory enforces it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionRoles {
    pub owner: String,
    pub owner_uid: u32,
    pub approvers: Vec<String>,
    pub viewers: Vec<String>,
    /// The control socket clients attach on (empty in the record made with the
    /// session directory; the server journals its own once it listens).
    pub socket: String,
    /// How the file system keeps everyone else out (ACL entries, or the mode alone).
    pub access: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Participant {
    pub who: Who,
    /// `tui`, `json`, `stop`, `status`.
    pub client: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ParticipantRefused {
    pub uid: u32,
    pub user: String,
    pub why: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QuestionAsked {
    pub question: crate::session::operator::Question,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QuestionWithdrawn {
    pub question: String,
    pub why: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnswerRefused {
    pub question: String,
    pub answer: String,
    pub who: Who,
    pub why: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StopAsked {
    pub who: Who,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolboxUsed {
    pub scenario: String,
    pub items: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ErrorText {
    pub error: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChecklistComplete {
    pub needs: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapabilitySeen {
    pub need: String,
    pub capability: String,
    pub present: bool,
    pub version: Option<String>,
    pub meets_floor: Option<bool>,
    pub command: String,
    pub saw: String,
    pub used_by: Vec<String>,
}

/// A node of the run spec reached over SSH, its host key checked: enough for
/// `faultline heal` to reach it again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeConnected {
    pub node: String,
    /// As the run spec gives it, `${var}`s expanded.
    pub spec: crate::host::NodeSpec,
    /// As ssh resolved it.
    pub hostname: String,
    pub port: u16,
    pub user: String,
    /// The known_hosts entries its key was checked against (`ED25519 SHA256:…`).
    pub fingerprints: Vec<String>,
    /// The master connection's control socket.
    pub control: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapabilityDeferred {
    pub need: String,
    pub until: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapabilityDisagreement {
    pub capability: String,
    pub operator: String,
    pub probe_present: bool,
    pub resolution: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapabilityWaitStopped {
    pub capability: String,
    /// Who took it back (as the `operator-answer` record says).
    pub by: String,
    /// How long it had waited.
    pub waited_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapabilityRef {
    pub capability: String,
    /// `capability-wait` only: how often it is probed again, and for how long at most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub every_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_ms: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapabilitySubstituted {
    pub capability: String,
    pub with: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub present: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenarios: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapabilityMatrix {
    pub rows: Vec<crate::capability::matrix::MatrixRow>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InstallDecision {
    pub capability: String,
    pub what: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edited: Option<bool>,
    pub by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub who: Option<Who>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InstallNotOffered {
    pub capability: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shown: Option<String>,
    pub why: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InstallFinished {
    pub capability: String,
    /// A file placed in the session's `bin/`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A package manager's command and how it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PrivilegedDecision {
    pub scenario: String,
    pub actions: Vec<String>,
    pub by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub who: Option<Who>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Budget {
    pub tier: Option<Tier>,
    pub seeds: u32,
    pub duration_ms: u64,
    pub faults: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuditDeclared {
    pub item: String,
    pub text: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeclarationRefused {
    pub item: String,
    pub reason: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IterationStarted {
    pub seed: u64,
    /// Which pass of the seed (written `seed-N`, `seed-N-rerun`, `seed-N-reduce-K`).
    pub label: crate::session::label::IterationLabel,
    pub duration_ms: u64,
}

/// Where the workload writes its JSONL history (absolute), so a watcher can chart
/// it while it grows; with the run spec's field renames.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HistoryLive {
    pub path: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandStarted {
    pub name: String,
    pub command: String,
    pub pgid: i32,
    /// The group leader's start time (clock ticks since boot), so a reused pid is
    /// never mistaken for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started: Option<u64>,
    pub log: String,
    /// The node it runs on (`None`: this machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandExited {
    pub name: String,
    pub outcome: String,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogsFull {
    pub name: String,
    pub error: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Precondition {
    pub name: String,
    pub ok: bool,
    pub cites: Vec<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServiceStopped {
    pub name: String,
    pub pgid: i32,
}

/// A service that ended while it was meant to run: how, when, what it said last, and
/// the fault that explains it, if one does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServiceExited {
    pub name: String,
    pub pgid: i32,
    /// The node it ran on (absent: this machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Its exit status, when it exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Since it started, when faultline saw it had ended.
    pub elapsed_ms: u64,
    /// `start` (before the workload started), `workload`.
    pub during: String,
    /// Its last stderr lines, sanitized and bounded ([`STDERR_TAIL_LINES`] lines of
    /// at most [`STDERR_TAIL_CHARS`] characters).
    pub stderr_tail: Vec<String>,
    /// The `fault-injected` record of the fault that explains its end (one that ends
    /// processes, aimed at it or at nobody faultline can name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explained_by: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
}

/// How many of a dead service's last stderr lines are journaled.
pub const STDERR_TAIL_LINES: usize = 5;
/// How long each of them may be, in characters.
pub const STDERR_TAIL_CHARS: usize = 200;

impl ServiceExited {
    /// `exited 3`, `killed by signal 9 (SIGKILL)`.
    pub fn status(&self) -> String {
        match (self.code, self.signal) {
            (Some(code), _) => format!("exited {code}"),
            (None, Some(sig)) => match nix::sys::signal::Signal::try_from(sig) {
                Ok(name) => format!("killed by signal {sig} ({name})"),
                Err(_) => format!("killed by signal {sig}"),
            },
            (None, None) => "ended".to_string(),
        }
    }

    /// One sanitized line: `n1 exited 3 at +0.1 s: failed to list data directory`
    /// (its last stderr line after the colon, when it wrote one).
    pub fn said(&self) -> String {
        let at = format!("+{:.1} s", self.elapsed_ms as f64 / 1000.0);
        let mut text = format!("{} {} at {at}", self.name, self.status());
        if let Some(node) = &self.node {
            text.push_str(&format!(" on node {node}"));
        }
        if let Some(last) = self.stderr_tail.last() {
            text.push_str(": ");
            text.push_str(last);
        }
        crate::sanitize::line(&text)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckpointStart {
    pub command: String,
    pub expected_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckpointEnd {
    pub command: String,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StatusPull {
    pub command: String,
    pub elapsed_ms: u64,
    pub last_line: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Quiesce {
    pub reached: bool,
    pub cites: Vec<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProxyStarted {
    pub listen: String,
    pub upstream: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProxyStopped {
    pub listen: String,
    pub counters: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MountCreated {
    pub path: String,
    pub fstype: String,
    pub size: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ArtifactsPruned {
    /// The cap, and what the seed's artifacts held before and after.
    pub cap_bytes: u64,
    pub found_bytes: u64,
    pub left_bytes: u64,
    /// What was removed (relative to the artifacts directory), largest first.
    pub removed: Vec<Pruned>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pruned {
    pub path: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MountRemoved {
    pub path: String,
    pub result: Option<Result<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CgroupCreated {
    /// The cgroup's directory (absolute, on the cgroup v2 file system).
    pub path: String,
    /// The service it holds; absent for the iteration's cgroup the services' are in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CgroupRemoved {
    pub path: String,
    pub result: Option<Result<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetnsCreated {
    /// Its name under /run/netns (`ip netns exec <name> …` enters it).
    pub name: String,
    /// Its inode: only the namespace recorded is ever deleted under that name.
    pub inode: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetnsRemoved {
    pub name: String,
    pub result: Option<Result<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultAwaiting {
    pub fault: String,
    pub on: String,
    pub within_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultTriggerSeen {
    pub fault: String,
    pub seen: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultSkipped {
    pub fault: String,
    pub reason: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultIntent {
    pub fault: String,
    pub epoch: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultInjectFailed {
    pub fault: String,
    pub error: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultInjected {
    pub fault: String,
    pub pid: Option<i32>,
    /// How to undo it after a crash (`faultline heal`).
    pub undo: Option<Undo>,
    /// The journal seq of the approval of a privileged action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved: Option<u64>,
}

/// How a fault is undone by a process that did not inject it: one variant per nemesis
/// kind (`crate::nemesis::spec`). `ProcessUndo` keeps the path earlier code used.
pub use crate::nemesis::Undo;
pub use crate::nemesis::process::ProcessUndo;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LandingInjector {
    pub fault: String,
    pub landed: bool,
    pub text: String,
    /// The nemesis's own measurements (counters before / after, process state…).
    pub detail: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LandingDeclared {
    pub fault: String,
    pub side: Option<crate::runspec::model::Side>,
    pub pattern: String,
    /// What was seen (a matching line, a reading), `null` when nothing was.
    pub seen: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skew_s: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultProof {
    pub fault: String,
    /// The fault epoch it was injected under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u64>,
    pub proven: bool,
    pub why: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FaultHealed {
    pub fault: String,
    pub result: Option<Result<String, String>>,
    /// Who healed it, when not the run itself (`faultline heal`, the watchdog).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HistoryUnreadable {
    pub path: String,
    pub error: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckerUnknown {
    pub checker: String,
    pub error: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckerOutputRejected {
    pub outcome: String,
    pub error: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FinalStateMissing {
    pub path: String,
    pub error: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OracleResult {
    pub checker: String,
    pub evidence: String,
    pub run: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SeedsStopped {
    pub after_seed: u64,
    pub reason: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RerunResult {
    pub seed: u64,
    pub reproduced: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReductionStarted {
    pub events: usize,
    pub seed: u64,
    pub budget_runs: u32,
    pub budget_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReductionCandidate {
    pub run: u32,
    pub faults: Vec<String>,
    pub timing: Vec<TimingCut>,
    pub duration_ms: u64,
    pub failed: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReductionResult {
    pub from: usize,
    pub to: usize,
    pub runs: u32,
    pub faults: Vec<String>,
    pub timing: Vec<TimingCut>,
    pub workload: Option<WorkloadCut>,
    pub note: String,
    /// A stop ended it before it tried everything; `faultline resume` runs it again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reason {
    pub reason: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerdictEvent {
    pub id: String,
    pub verdict: Option<Verdict>,
    pub tier_met: Option<Tier>,
    pub reasons: Vec<ReasonStep>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ArmsAggregated {
    pub arms: String,
    pub verdict: Option<Verdict>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthorStarted {
    pub sut: String,
    pub by: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthorFailed {
    pub error: String,
    pub then: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthorWritten {
    pub path: String,
    pub scenario: String,
    pub sha256: String,
    pub incomplete: bool,
    pub todo_kept: Vec<String>,
    pub language: String,
    pub formatter: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthorSkipped {
    pub path: String,
    pub scenario: String,
    pub reason: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthorReason {
    pub scenario: String,
    pub reason: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthorStaged {
    pub files: usize,
    /// The staged diff, relative to the session directory.
    pub diff: String,
    pub bytes: usize,
    pub saved: String,
    pub note: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthorBuildStarted {
    pub scenario: String,
    pub command: String,
    pub log: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthorBuild {
    pub scenario: String,
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthorDriver {
    pub scenario: String,
    pub driver: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub built: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HealBy {
    pub by: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GroupEnded {
    pub pgid: i32,
    pub by: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MarkedEnded {
    pub pid: i32,
    pub command: String,
    pub result: Option<Result<String, String>>,
    pub by: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HealFinished {
    pub by: String,
    pub actions: Vec<String>,
    pub failures: Vec<String>,
    /// Journal lines that could not be read and were skipped (1-based).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_lines: Vec<usize>,
}
