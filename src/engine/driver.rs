//! A whole session: the session directory and journal, every scenario and arm in
//! plan order, FAIL classification through the [`Operator`], arm aggregation, the
//! session verdict, and the outputs rewritten as the session goes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;

use super::iteration::EngineError;
use super::outputs::Outputs;
use super::preflight::{self, Preflight, PreflightCtx, PreflightError};
use super::request::Request;
use super::scenario::{BindingResult, BindingRun};
use crate::plan::{Category, Plan, Scenario, SevenM};
use crate::runspec::vars::Vars;
use crate::runspec::{Binding, RunSpec};
use crate::session::dir::SessionDir;
use crate::session::event::{self, Event};
use crate::session::journal::{Journal, JournalError, Record, Scope};
use crate::session::operator::{
    Choice, FreeText, Operator, Question, QuestionKind, UNKNOWN_BLAME, Unanswered,
};
use crate::session::outcome::{
    AnomalyNote, Finding, Phase, Reduction, RunOutcome, ScenarioOutcome, SessionOutcome,
};
use crate::session::roles::Roles;
use crate::session::view::View;
use crate::verdict::{Decision, ReasonStep, Verdict, aggregate_arms, session_verdict};

#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("cannot create the session directory under {root}: {source}")]
    SessionDir {
        root: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A question asked mid-run (a deferred capability) nobody could answer.
    #[error(transparent)]
    Unanswered(Unanswered),
    /// A node's host key is not trusted: the run stops before anything starts.
    #[error(transparent)]
    HostKey(#[from] crate::host::ssh::ConnectError),
    /// The session at `dir` stopped on `source`; `report` says what became of the
    /// documents written from what it had.
    #[error("{source}")]
    Stopped {
        dir: PathBuf,
        report: Result<PathBuf, String>,
        source: Box<DriverError>,
    },
}

impl DriverError {
    /// Whether a node's untrusted host key stopped the run.
    pub fn host_key(&self) -> bool {
        match self {
            DriverError::Stopped { source, .. } => source.host_key(),
            DriverError::HostKey(_) => true,
            _ => false,
        }
    }

    /// The I/O error underneath, when the session's own storage failed (a full or
    /// read-only session root): the operator's environment, not the plan.
    pub fn storage(&self) -> Option<(&std::path::Path, &std::io::Error)> {
        match self {
            DriverError::Stopped { source, .. } => source.storage(),
            DriverError::SessionDir { root, source } => Some((root.as_path(), source)),
            DriverError::Journal(JournalError::Io { path, source }) => {
                Some((path.as_path(), source))
            }
            DriverError::Engine(EngineError::Journal(JournalError::Io { path, source })) => {
                Some((path.as_path(), source))
            }
            _ => None,
        }
    }
}

/// How the session ended, beyond its verdicts.
pub struct Ended {
    pub outcome: SessionOutcome,
    /// A question nobody could answer stopped the run.
    pub unanswered: Option<Unanswered>,
    /// Where the report went (or why it could not be written).
    pub report: Result<PathBuf, String>,
}

struct Driver<'a> {
    req: &'a Request,
    dir: SessionDir,
    journal: Journal,
    outcome: SessionOutcome,
    outputs: Outputs,
    cancel: CancellationToken,
    findings: usize,
    preflight: Preflight,
    /// Authored tests driving their scenarios' workloads, by scenario id.
    authored: BTreeMap<String, crate::engine::authoring::AuthoredDriver>,
    /// The outcome as last journaled (session part, then each scenario by index, as
    /// the digest of its record, not a copy: a copy of every scenario would grow with
    /// the session): only what changed since is journaled again.
    journaled_session: Option<SessionOutcome>,
    journaled_scenarios: Vec<Option<Digest>>,
}

/// A scenario outcome's digest: 128 bits of SipHash over its JSON (two hashers
/// keyed apart), so a change going unjournaled is as good as impossible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Digest(u64, u64);

impl Digest {
    fn of(outcome: &ScenarioOutcome) -> Option<Digest> {
        use std::hash::{Hash, Hasher};
        // An outcome that cannot be serialized cannot be journaled either: no digest,
        // so it is always tried again.
        let bytes = serde_json::to_vec(outcome).ok()?;
        let half = |key: u8| {
            let mut hasher = std::hash::DefaultHasher::new();
            key.hash(&mut hasher);
            bytes.hash(&mut hasher);
            hasher.finish()
        };
        Some(Digest(half(0), half(1)))
    }
}

/// A session directory with its journal open (and locked): what [`run`] runs in.
/// Opened before the run so the session server can listen and journal from the start.
pub struct Opened {
    pub dir: SessionDir,
    pub journal: Journal,
    /// When the session was created (or resumed).
    pub now: chrono::DateTime<chrono::Utc>,
}

/// Creates the session directory (or reopens the one being resumed), saves the
/// inputs, marks children for the watchdog, opens the journal and makes the directory
/// private to the owner and the listed `roles` (journaled), before any server listens.
pub fn open(req: &Request, roles: &Roles) -> Result<Opened, DriverError> {
    let now = chrono::Utc::now();
    let dir = match &req.resume {
        Some(from) => SessionDir {
            path: from.dir.clone(),
        },
        None => {
            let dir = crate::session::dir::create(&req.out_root, &req.plan.slug, now).map_err(
                |source| DriverError::SessionDir {
                    root: req.out_root.clone(),
                    source,
                },
            )?;
            crate::session::resume::save_inputs(
                &dir.path,
                &req.plan_text,
                req.spec_source.as_ref().map(|(_, text)| text.as_str()),
                &req.saved(),
            )
            .map_err(|source| DriverError::SessionDir {
                root: dir.path.clone(),
                source,
            })?;
            dir
        }
    };
    if req.watchdog {
        crate::exec::mark::mark_children(&dir.path);
    }
    let mut journal = Journal::open(&dir.path.join("journal.jsonl"))?;
    let access = crate::session::roles::restrict(&dir.path, roles);
    journal.append(
        Scope::default(),
        Event::SessionRoles(event::SessionRoles {
            owner: roles.owner.clone(),
            owner_uid: roles.owner_uid,
            approvers: roles.approvers.clone(),
            viewers: roles.viewers.clone(),
            // Journaled again, with the socket, once the server listens.
            socket: String::new(),
            access,
        }),
    )?;
    Ok(Opened { dir, journal, now })
}

/// Runs the session. `tap` receives every journal record as it is written.
pub async fn run(
    req: &Request,
    opened: Opened,
    operator: &mut dyn Operator,
    cancel: CancellationToken,
    tap: Option<UnboundedSender<Record>>,
) -> Result<Ended, DriverError> {
    let Opened {
        dir,
        mut journal,
        now,
    } = opened;
    let watchdog = req
        .watchdog
        .then(|| crate::session::watchdog::arm(&dir.path));
    let (tx, rx) = unbounded_channel();
    journal.tap(tx);
    let revision = crate::session::dir::sut_revision(&req.sut_dir);
    let fresh = SessionOutcome {
        plan_path: req.plan_path.display().to_string(),
        plan_slug: req.plan.slug.clone(),
        sut_dir: req.sut_dir.display().to_string(),
        session_dir: dir.path.display().to_string(),
        revision: revision.clone(),
        operator: req.started_by.clone(),
        tier: req.tier,
        started: now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        finished: None,
        scenarios: req.plan.scenarios.iter().map(pending).collect(),
        verdict: None,
        interrupted: None,
        toolbox: Vec::new(),
        capabilities: Vec::new(),
    };
    let outputs = Outputs::new(req.plan.clone(), &dir, req.report_path.clone());
    let (outcome, journaled) = match &req.resume {
        Some(_) => {
            let records = crate::session::journal::read(&dir.path.join("journal.jsonl"))?.records;
            let view = View::of(&records);
            // What the journal already holds is the base, and is not journaled again
            // unless it changes.
            let journaled = view.outcome();
            let mut outcome = reopened(journaled.clone().unwrap_or(fresh), &req.plan);
            restore_decided(&mut outcome, &view);
            (outcome, journaled)
        }
        None => (fresh, None),
    };
    let journaled_scenarios = match &journaled {
        Some(o) if o.scenarios.len() == outcome.scenarios.len() => {
            o.scenarios.iter().map(Digest::of).collect()
        }
        _ => vec![None; outcome.scenarios.len()],
    };
    let journaled_session = journaled.map(|o| SessionOutcome {
        scenarios: Vec::new(),
        ..o
    });
    let watcher = tokio::spawn(outputs.clone().follow(rx, tap));
    let mut driver = Driver {
        req,
        dir,
        journal,
        outcome,
        outputs,
        cancel,
        findings: 0,
        preflight: Preflight::default(),
        authored: BTreeMap::new(),
        journaled_session,
        journaled_scenarios,
    };
    let result = match drive(&mut driver, operator, revision, watchdog).await {
        Ok(ended) => Ok(ended),
        // Whatever can still be written is: the outcome so far, findings, verdicts,
        // the report (faults are healed by then: every iteration heals on its way out).
        Err(source) => {
            // Best effort: the journal may be what failed.
            let _ = driver.journal_outcome();
            Err(DriverError::Stopped {
                dir: driver.dir.path.clone(),
                report: driver.outputs.finish(&driver.outcome),
                source: Box::new(source),
            })
        }
    };
    // Closing the journal's channel lets the watcher drain and stop (another handle,
    // the session server's, may outlive this one).
    driver.journal.untap();
    drop(driver);
    let _ = watcher.await;
    result
}

/// The session from its first record to its verdict.
async fn drive(
    driver: &mut Driver<'_>,
    operator: &mut dyn Operator,
    revision: Option<crate::session::dir::Revision>,
    watchdog: Option<crate::session::watchdog::Arming>,
) -> Result<Ended, DriverError> {
    let req = driver.req;
    if req.resume.is_some() {
        driver.resumed()?;
    } else {
        driver.journal.append(
            Scope::default(),
            Event::SessionStarted(event::SessionStarted {
                format: event::FORMAT,
                plan: req.plan_path.display().to_string(),
                sut: req.sut_dir.display().to_string(),
                session: driver.outcome.session_dir.clone(),
                tier: Some(req.tier),
                started_by: req.started_by.clone(),
                revision,
                faults_approved: "starting the run approves the faults the plan declares".into(),
            }),
        )?;
    }
    if let Some(arming) = watchdog {
        driver.watchdog_armed(&arming)?;
    }
    driver.containment()?;
    driver.isolation()?;
    let (stop, early) = match driver.preflight(operator).await? {
        Some(question) => (
            Some(format!("stopped: question `{}` unanswered", question.id)),
            Some(question),
        ),
        None => (None, None),
    };
    let (stop, early) = match (stop, early) {
        (None, None) if req.author => driver.author(operator).await?,
        settled => settled,
    };
    let unanswered = driver.scenarios(operator, stop).await?.or(early);
    driver.end_isolation()?;
    driver.finish(unanswered)
}

/// A saved outcome made ready to continue. When a signal ended that session, the
/// scenarios it then marked NOT-RUN never had their chance: they are pending again.
fn reopened(saved: SessionOutcome, plan: &Plan) -> SessionOutcome {
    let signalled = saved.interrupted.is_some();
    let mut outcome = SessionOutcome {
        finished: None,
        verdict: None,
        interrupted: None,
        ..saved
    };
    if signalled {
        for (state, scenario) in outcome.scenarios.iter_mut().zip(&plan.scenarios) {
            if state.verdict == Some(Verdict::NotRun) {
                reset(state, scenario);
            }
        }
    }
    outcome
}

/// Runs the journal shows decided but the saved outcome missed (killed between the
/// `verdict` record and the next save): their decisions are taken from the journal.
fn restore_decided(outcome: &mut SessionOutcome, view: &View) {
    for state in outcome
        .scenarios
        .iter_mut()
        .filter(|s| s.phase != Phase::Done)
    {
        for record in view
            .verdicts
            .iter()
            .filter(|r| r.scope.scenario.as_deref() == Some(state.id.as_str()))
        {
            let id = record.item.id.as_str();
            // A NOT-RUN never ran: there is nothing of it to keep.
            let Some(verdict) = record.item.verdict.filter(|v| *v != Verdict::NotRun) else {
                continue;
            };
            let decision = Decision {
                verdict,
                tier_met: record.item.tier_met,
                reasons: record.item.reasons.clone(),
            };
            if state
                .runs
                .iter()
                .any(|r| r.id == id && r.decision.is_some())
            {
                continue;
            }
            state.runs.retain(|r| r.id != id);
            state.runs.push(RunOutcome::decided(id, decision));
            if state.phase == Phase::Pending {
                state.phase = Phase::Audits;
            }
        }
    }
}

/// Back to pending, keeping what the preflight settled for it.
fn reset(state: &mut ScenarioOutcome, scenario: &Scenario) {
    *state = ScenarioOutcome {
        degraded: state.degraded.take(),
        toolbox_used: std::mem::take(&mut state.toolbox_used),
        ..pending(scenario)
    };
}

fn pending(s: &Scenario) -> ScenarioOutcome {
    ScenarioOutcome {
        id: s.id.clone(),
        name: s.name.clone(),
        phase: Phase::Pending,
        verdict: None,
        tier_met: None,
        reasons: Vec::new(),
        runs: Vec::new(),
        finding: None,
        degraded: None,
        toolbox_used: Vec::new(),
    }
}

impl Driver<'_> {
    /// Journals how a killed session is picked up: the scenarios kept as they were,
    /// the ones interrupted mid-way.
    /// Journals which containment this run's services get (see [`containment`]).
    fn containment(&mut self) -> Result<(), DriverError> {
        let (saw, present) = containment();
        self.journal.append(
            Scope::default(),
            Event::Capability(event::CapabilitySeen {
                need: CONTAINMENT_NEED.into(),
                capability: CONTAINMENT.into(),
                present,
                version: None,
                meets_floor: None,
                command: "cgroup v2 delegation (/proc/self/mountinfo, /proc/self/cgroup, \
                          write access to its cgroup.procs)"
                    .into(),
                saw: crate::sanitize::line(&saw),
                used_by: vec!["services".into()],
            }),
        )?;
        Ok(())
    }

    /// Journals the run's own network namespace, when this process made one: from
    /// here, heal and the watchdog delete it should this process die.
    fn isolation(&mut self) -> Result<(), DriverError> {
        if let Some(netns) = crate::host::netns::entered() {
            self.journal.append(
                Scope::default(),
                Event::NetnsCreated(event::NetnsCreated {
                    name: netns.name.clone(),
                    inode: netns.inode,
                }),
            )?;
        }
        Ok(())
    }

    /// Deletes the run's network namespace once every scenario ended (its services,
    /// probes and faults are gone with them); this process leaves it when it exits.
    fn end_isolation(&mut self) -> Result<(), DriverError> {
        if let Some(netns) = crate::host::netns::entered() {
            let result = crate::host::netns::delete(&netns.name, netns.inode);
            self.journal.append(
                Scope::default(),
                Event::NetnsRemoved(event::NetnsRemoved {
                    name: netns.name.clone(),
                    result: Some(result),
                    by: None,
                }),
            )?;
        }
        Ok(())
    }

    /// Journals whether a watchdog will heal the session should this process die.
    fn watchdog_armed(
        &mut self,
        arming: &crate::session::watchdog::Arming,
    ) -> Result<(), DriverError> {
        use crate::session::watchdog::Arming;
        let records = match arming {
            Arming::Armed { pids } => pids
                .iter()
                .map(|pid| event::WatchdogEvent {
                    armed: true,
                    pid: Some(*pid),
                    why: None,
                })
                .collect(),
            Arming::Off { why } | Arming::Failed { why } => vec![event::WatchdogEvent {
                armed: false,
                pid: None,
                why: Some(why.clone()),
            }],
        };
        for data in records {
            self.journal
                .append(Scope::default(), Event::Watchdog(data))?;
        }
        Ok(())
    }

    fn resumed(&mut self) -> Result<(), DriverError> {
        self.findings = self
            .outcome
            .scenarios
            .iter()
            .filter(|s| s.finding.is_some())
            .count();
        let ids = |done: bool| -> Vec<String> {
            self.outcome
                .scenarios
                .iter()
                .filter(|s| (s.phase == Phase::Done) == done && (done || s.phase != Phase::Pending))
                .map(|s| s.id.clone())
                .collect()
        };
        let (kept, interrupted) = (ids(true), ids(false));
        self.journal.append(
            Scope::default(),
            Event::SessionResumed(event::SessionResumed {
                session: self.outcome.session_dir.clone(),
                by: self.req.started_by.clone(),
                kept,
                interrupted,
            }),
        )?;
        self.publish()?;
        Ok(())
    }

    /// A scenario a crash interrupted: re-run it, or keep what finished (its decided
    /// arms) and let the decision tree settle the rest as NOT-RUN.
    async fn pick_up(
        &mut self,
        index: usize,
        operator: &mut dyn Operator,
    ) -> Result<(), DriverError> {
        let scenario = &self.req.plan.scenarios[index];
        let decided: Vec<String> = self.outcome.scenarios[index]
            .runs
            .iter()
            .filter(|r| r.decision.is_some())
            .map(|r| r.id.clone())
            .collect();
        let question = Question {
            id: format!("resume.{}", scenario.id),
            kind: QuestionKind::Resume,
            choices: resume_choices(),
            prompt: format!(
                "{} was interrupted ({} of its runs decided: {}): rerun / keep (the verdict \
                 the finished runs support; the rest NOT-RUN)",
                scenario.id,
                decided.len(),
                if decided.is_empty() {
                    "none".to_string()
                } else {
                    decided.join(", ")
                }
            ),
            default: "rerun".into(),
            ..Question::default()
        };
        let answer = crate::session::operator::answer(operator, &question)
            .await
            .map_err(DriverError::Unanswered)?;
        let keep = answer.text.trim().eq_ignore_ascii_case("keep");
        self.journal.append(
            Self::scope(scenario, &scenario.id),
            crate::session::operator::answered(&question, &answer),
        )?;
        if keep {
            self.skip_all(
                index,
                "interrupted by a crash before a verdict; kept as it stood",
            )?;
        } else {
            reset(&mut self.outcome.scenarios[index], scenario);
        }
        Ok(())
    }

    /// Journals what changed of the outcome (each changed scenario, then the session
    /// part, so a session part on record always has its scenarios before it), then
    /// brings the documents up to date. The journal is the outcome's only record:
    /// `resume` and `report` read it back through the reducer.
    fn publish(&mut self) -> Result<(), DriverError> {
        self.journal_outcome()?;
        self.outputs.publish(&self.outcome);
        Ok(())
    }

    /// The journal half of [`Driver::publish`].
    fn journal_outcome(&mut self) -> Result<(), DriverError> {
        for index in 0..self.outcome.scenarios.len() {
            self.journal_scenario(index)?;
        }
        self.journal_head()
    }

    /// The outcome's session part, when it changed since last journaled.
    fn journal_head(&mut self) -> Result<(), DriverError> {
        let head = self.outcome.head();
        if self.journaled_session.as_ref() != Some(&head) {
            let order = self
                .outcome
                .scenarios
                .iter()
                .map(|s| s.id.clone())
                .collect();
            self.journal.append(
                Scope::default(),
                Event::OutcomeSession(event::OutcomeSession {
                    outcome: Some(Box::new(head.clone())),
                    order,
                }),
            )?;
            self.journaled_session = Some(head);
        }
        Ok(())
    }

    /// [`Driver::publish`] when of the scenarios only `index` may have changed.
    fn publish_at(&mut self, index: usize) -> Result<(), DriverError> {
        self.journal_scenario(index)?;
        self.journal_head()?;
        self.outputs.publish_at(&self.outcome, index);
        Ok(())
    }

    fn journal_scenario(&mut self, index: usize) -> Result<(), DriverError> {
        let Some(now) = self.outcome.scenarios.get(index) else {
            return Ok(());
        };
        let digest = Digest::of(now);
        if digest.is_some() && self.journaled_scenarios.get(index).copied().flatten() == digest {
            return Ok(());
        }
        self.journal.append(
            Scope {
                scenario: Some(now.id.clone()),
                arm: None,
            },
            Event::OutcomeScenario(event::OutcomeScenario {
                outcome: Some(Box::new(now.clone())),
            }),
        )?;
        if let Some(slot) = self.journaled_scenarios.get_mut(index) {
            *slot = digest;
        }
        Ok(())
    }

    /// Toolbox, checklist, probes, installs. An unanswered question is returned: the
    /// session then runs no scenario.
    async fn preflight(
        &mut self,
        operator: &mut dyn Operator,
    ) -> Result<Option<Unanswered>, DriverError> {
        let ctx = preflight_ctx(self.req, &self.dir, &self.cancel);
        match preflight::run(&ctx, &mut self.journal, operator).await {
            Ok(mut found) => {
                found.matrix.push(containment_row());
                self.outcome.toolbox = found
                    .toolbox
                    .as_ref()
                    .map(|t| t.items.clone())
                    .unwrap_or_default();
                self.outcome.capabilities = found.matrix.clone();
                for scenario in &mut self.outcome.scenarios {
                    scenario.degraded = found.degraded.get(&scenario.id).cloned();
                    scenario.toolbox_used =
                        found.used.get(&scenario.id).cloned().unwrap_or_default();
                }
                self.preflight = found;
                self.publish()?;
                Ok(None)
            }
            Err(PreflightError::Unanswered(question)) => {
                self.journal.append(
                    Scope::default(),
                    Event::StoppedUnanswered(event::StoppedUnanswered {
                        question: question.id.clone(),
                    }),
                )?;
                Ok(Some(question))
            }
            Err(PreflightError::Journal(e)) => Err(e.into()),
            Err(PreflightError::Engine(e)) => Err(e.into()),
            Err(PreflightError::HostKey(e)) => Err(e.into()),
        }
    }

    /// Author mode between the preflight and the first scenario: a stop reason (and
    /// the question nobody answered) when the session cannot go on.
    async fn author(
        &mut self,
        operator: &mut dyn Operator,
    ) -> Result<(Option<String>, Option<Unanswered>), DriverError> {
        use crate::engine::authoring::{self as in_run, InRunError};
        let ctx = in_run::Ctx {
            req: self.req,
            session: &self.dir.path,
            cancel: self.cancel.clone(),
        };
        match in_run::run(&ctx, &mut self.journal, operator).await {
            Ok(drivers) => {
                self.authored = drivers;
                Ok((None, None))
            }
            Err(InRunError::Unanswered(question)) => {
                self.journal.append(
                    Scope::default(),
                    Event::StoppedUnanswered(event::StoppedUnanswered {
                        question: question.id.clone(),
                    }),
                )?;
                let reason = format!("stopped: question `{}` unanswered", question.id);
                Ok((Some(reason), Some(question)))
            }
            Err(InRunError::Interrupted) => {
                Ok((Some("session interrupted by the operator".into()), None))
            }
            Err(InRunError::Journal(e)) => Err(e.into()),
        }
    }

    async fn scenarios(
        &mut self,
        operator: &mut dyn Operator,
        stop: Option<String>,
    ) -> Result<Option<Unanswered>, DriverError> {
        let mut stop = stop;
        let mut unanswered = None;
        for index in 0..self.req.plan.scenarios.len() {
            let scenario = &self.req.plan.scenarios[index];
            // A scenario with nothing to run never reaches an await that hears the
            // signal: it is looked at here, before each one, and the task yields so a
            // signal's handler gets to run even on a busy runtime.
            tokio::task::yield_now().await;
            if stop.is_none() && self.cancel.is_cancelled() {
                self.journal.append(
                    Scope::default(),
                    Event::Interrupted(event::InterruptedEvent {
                        during: scenario.id.clone(),
                    }),
                )?;
                stop = Some("session interrupted by the operator".to_string());
            }
            if let Some(reason) = &stop {
                self.skip_all(index, reason)?;
                continue;
            }
            // Only a resumed session has scenarios already done or part-way.
            let phase = self.outcome.scenarios[index].phase;
            if phase == Phase::Done {
                if self.outcome.scenarios[index].cut_short() {
                    if let Some(question) = self.finish_reductions(index, operator).await? {
                        let reason = self.stopped_unanswered(&question)?;
                        stop = Some(reason);
                        unanswered = Some(question);
                    }
                    self.publish_at(index)?;
                }
                continue;
            }
            if phase != Phase::Pending {
                match self.pick_up(index, operator).await {
                    Ok(()) => {}
                    Err(DriverError::Unanswered(question)) => {
                        let reason = format!("stopped: question `{}` unanswered", question.id);
                        self.skip_all(index, &reason)?;
                        stop = Some(reason);
                        unanswered = Some(question);
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            }
            let kept = self.outcome.scenarios[index].verdict.is_some();
            if !kept {
                self.outcome.scenarios[index].phase = Phase::Preconditions;
            }
            self.publish_at(index)?;
            let ran = if kept {
                Ok(())
            } else {
                self.scenario(index, scenario, operator).await
            };
            match ran {
                Ok(()) => {}
                Err(DriverError::Engine(EngineError::Interrupted { .. })) => {
                    let reason = "session interrupted by the operator".to_string();
                    self.journal.append(
                        Scope::default(),
                        Event::Interrupted(event::InterruptedEvent {
                            during: scenario.id.clone(),
                        }),
                    )?;
                    self.skip_all(index, &reason)?;
                    stop = Some(reason);
                    continue;
                }
                Err(DriverError::Unanswered(question)) => {
                    let reason = self.stopped_unanswered(&question)?;
                    self.skip_all(index, &reason)?;
                    stop = Some(reason);
                    unanswered = Some(question);
                    continue;
                }
                Err(e) => return Err(e),
            }
            let failed = self.outcome.scenarios[index]
                .verdict
                .is_some_and(Verdict::is_fail);
            if failed && let Err(question) = self.classify(index, operator).await {
                let reason = self.stopped_unanswered(&question)?;
                stop = Some(reason);
                unanswered = Some(question);
            }
            self.outcome.scenarios[index].phase = Phase::Done;
            self.publish_at(index)?;
        }
        Ok(unanswered)
    }

    /// Journals that the run stops on `question` nobody answered; the reason the
    /// scenarios left are skipped with.
    fn stopped_unanswered(&mut self, question: &Unanswered) -> Result<String, DriverError> {
        self.journal.append(
            Scope::default(),
            Event::StoppedUnanswered(event::StoppedUnanswered {
                question: question.id.clone(),
            }),
        )?;
        Ok(format!("stopped: question `{}` unanswered", question.id))
    }

    /// Marks scenario `index` (and its arms) NOT-RUN with `reason`, keeping any run
    /// that already has a verdict.
    fn skip_all(&mut self, index: usize, reason: &str) -> Result<(), DriverError> {
        let scenario = &self.req.plan.scenarios[index];
        let ids = run_ids(scenario);
        // Exact, as in [`Driver::scenario`].
        self.outcome.scenarios[index].runs.reserve_exact(ids.len());
        for id in ids {
            if self.outcome.scenarios[index]
                .runs
                .iter()
                .any(|r| r.id == id && r.decision.is_some())
            {
                continue;
            }
            let result = self.not_run(scenario, &id, reason)?;
            self.outcome.scenarios[index].runs.retain(|r| r.id != id);
            self.outcome.scenarios[index].runs.push(result.outcome);
        }
        self.settle(index)?;
        Ok(())
    }

    fn scope(scenario: &Scenario, id: &str) -> Scope {
        Scope {
            scenario: Some(scenario.id.clone()),
            arm: (id != scenario.id).then(|| id.to_string()),
        }
    }

    /// The `verdict` event: the decision and the reason chain it rests on.
    fn journal_verdict(
        &mut self,
        scenario: &Scenario,
        id: &str,
        decision: &Decision,
    ) -> Result<(), DriverError> {
        self.journal.append(
            Self::scope(scenario, id),
            Event::Verdict(event::VerdictEvent {
                id: id.to_string(),
                verdict: Some(decision.verdict),
                tier_met: decision.tier_met,
                reasons: decision.reasons.clone(),
            }),
        )?;
        Ok(())
    }

    fn not_run(
        &mut self,
        scenario: &Scenario,
        id: &str,
        reason: &str,
    ) -> Result<BindingResult, DriverError> {
        self.decided_without_running(scenario, id, reason, false)
    }

    /// A scenario / arm settled before anything ran: NOT-RUN (never reached) or, when
    /// `env` is set, INCONCLUSIVE-env (a capability it needs is missing).
    fn decided_without_running(
        &mut self,
        scenario: &Scenario,
        id: &str,
        reason: &str,
        env: bool,
    ) -> Result<BindingResult, DriverError> {
        let why = event::Reason {
            reason: reason.to_string(),
        };
        let event = if env {
            Event::EnvMissing(why)
        } else {
            Event::NotRun(why)
        };
        let seq = self.journal.append(Self::scope(scenario, id), event)?.seq;
        let key = if env { "env" } else { "not_run" };
        let evidence = crate::verdict::Evidence {
            not_run: (!env).then(|| reason.to_string()),
            env_missing: env.then(|| reason.to_string()),
            cites: BTreeMap::from([(key.to_string(), vec![seq])]),
            ..crate::verdict::Evidence::empty()
        };
        let decision = crate::verdict::decide(&evidence);
        self.journal_verdict(scenario, id, &decision)?;
        Ok(BindingResult {
            evidence,
            outcome: RunOutcome::decided(id, decision),
        })
    }

    async fn scenario(
        &mut self,
        index: usize,
        scenario: &Scenario,
        operator: &mut dyn Operator,
    ) -> Result<(), DriverError> {
        let ids = run_ids(scenario);
        // One slot per run, not the doubling a push gives: a run outcome is large, and
        // the session holds one per scenario.
        self.outcome.scenarios[index].runs.reserve_exact(ids.len());
        for id in ids {
            if let Some(question) = self.deferred_needs(scenario, &id, operator).await? {
                return Err(DriverError::Unanswered(question));
            }
            let excluded = self
                .req
                .only
                .as_ref()
                .is_some_and(|only| !only.iter().any(|o| *o == id || *o == scenario.id));
            let binding = binding_for(&self.req.spec, &scenario.id, &id);
            let result = match (excluded, binding) {
                (true, _) => self.not_run(scenario, &id, "excluded by --only")?,
                (false, None) => self.not_run(scenario, &id, "no run spec binding")?,
                (false, Some(_)) if self.blocked(scenario, &id).is_some() => {
                    let reason = self.blocked(scenario, &id).unwrap_or_default();
                    self.decided_without_running(scenario, &id, &reason, true)?
                }
                (false, Some(binding)) => match self.binding(scenario, &id, binding).await {
                    Ok(result) => {
                        if let Some(decision) = &result.outcome.decision {
                            self.journal_verdict(scenario, &id, decision)?;
                        }
                        result
                    }
                    // The harness could not run it as written: it was never reached.
                    Err(DriverError::Engine(
                        e @ (EngineError::Var { .. } | EngineError::Io { .. }),
                    )) => self.not_run(scenario, &id, &format!("harness error: {e}"))?,
                    Err(e) => return Err(e),
                },
            };
            self.outcome.scenarios[index].runs.push(result.outcome);
            self.publish_at(index)?;
        }
        self.settle(index)
    }

    /// Asks and settles the capability questions deferred until `id` is reached.
    async fn deferred_needs(
        &mut self,
        scenario: &Scenario,
        id: &str,
        operator: &mut dyn Operator,
    ) -> Result<Option<Unanswered>, DriverError> {
        if self.preflight.deferred.is_empty() {
            return Ok(None);
        }
        let waiting = self.preflight.deferred.len();
        let ctx = preflight_ctx(self.req, &self.dir, &self.cancel);
        let reached = preflight::reached(
            &ctx,
            &mut self.journal,
            operator,
            &mut self.preflight,
            &scenario.id,
            id,
        )
        .await;
        match reached {
            // Nothing was due at `id`: nothing to copy (copying per scenario would
            // cost the whole plan at every scenario).
            Ok(()) if self.preflight.deferred.len() == waiting => Ok(None),
            Ok(()) => {
                self.outcome.capabilities = self.preflight.matrix.clone();
                for s in &mut self.outcome.scenarios {
                    s.degraded = self.preflight.degraded.get(&s.id).cloned();
                }
                Ok(None)
            }
            Err(PreflightError::Unanswered(question)) => Ok(Some(question)),
            Err(PreflightError::Journal(e)) => Err(e.into()),
            Err(PreflightError::Engine(e)) => Err(e.into()),
            Err(PreflightError::HostKey(e)) => Err(e.into()),
        }
    }

    /// Why `id` cannot run in this environment (a missing capability the operator
    /// chose to proceed without), if it cannot.
    fn blocked(&self, scenario: &Scenario, id: &str) -> Option<String> {
        self.preflight
            .blocked
            .get(id)
            .or_else(|| self.preflight.blocked.get(&scenario.id))
            .cloned()
    }

    async fn binding(
        &mut self,
        scenario: &Scenario,
        id: &str,
        binding: &Binding,
    ) -> Result<BindingResult, DriverError> {
        let binding = self.as_run(id, scenario, binding);
        let run = self.binding_run(scenario, id, &binding);
        let mut result = run.run(&mut self.journal).await?;
        if let Some(reduction) = result.outcome.reduction.as_mut() {
            self.write_reproducer(id, &binding, reduction);
        }
        Ok(result)
    }

    /// The binding as this session runs it: faultline's proxy in place of a missing
    /// capability when the operator chose it, the authored test driving the workload
    /// in author mode.
    fn as_run(&self, id: &str, scenario: &Scenario, binding: &Binding) -> Binding {
        let binding = if self.preflight.proxied.contains(id)
            || self.preflight.proxied.contains(&scenario.id)
        {
            binding.proxy_substituted()
        } else {
            binding.clone()
        };
        match self.authored.get(id) {
            Some(authored) => authored.drive(&binding),
            None => binding,
        }
    }

    /// Where and how `binding` (already [`Driver::as_run`]) runs for `id`.
    fn binding_run<'b>(
        &self,
        scenario: &Scenario,
        id: &str,
        binding: &'b Binding,
    ) -> BindingRun<'b> {
        let mut vars = Vars::default();
        for (k, v) in self
            .req
            .vars
            .iter()
            .chain(self.req.spec.vars.iter())
            .chain(self.preflight.vars.iter())
        {
            vars.set(k, v.clone());
        }
        let claims: Vec<&crate::plan::Claim> = self
            .req
            .plan
            .claims
            .iter()
            .filter(|c| scenario.falsifies.contains(&c.id))
            .collect();
        let any_size =
            regex::Regex::new(r"(?i)\bany (cluster )?size\b|\bany number of (nodes|replicas)\b")
                .is_ok_and(|re| claims.iter().any(|c| re.is_match(&c.text)));
        BindingRun {
            id: id.to_string(),
            scope: Self::scope(scenario, id),
            binding,
            requested: self.req.tier,
            serious: matches!(scenario.seven_m, SevenM::Filled(_)),
            statistical: claims
                .iter()
                .any(|c| c.categories.contains(&Category::PerformanceSlo)),
            any_size,
            cwd: self.req.sut_dir.clone(),
            logs: self.dir.path.join("logs"),
            artifacts: self.dir.path.join("artifacts"),
            vars,
            cancel: self.cancel.clone(),
            reduce: self.req.reduce,
            privileged: self
                .preflight
                .approvals
                .get(id)
                .or_else(|| self.preflight.approvals.get(&scenario.id))
                .cloned(),
            hosts: self.preflight.hosts.clone(),
        }
    }

    /// Writes the reduced spec of a finished reduction; one cut short has none yet
    /// (its FAIL keeps the unreduced reproducer until `resume` finishes it).
    fn write_reproducer(&self, id: &str, binding: &Binding, reduction: &mut Reduction) {
        if reduction.cut_short {
            return;
        }
        let written = super::reproducer::write(self.req, &self.dir.path, id, binding, reduction);
        reduction.reproducer = Some(match written {
            Ok(replay) => replay,
            Err(e) => format!("the reduced spec could not be written: {e}"),
        });
    }

    /// `faultline resume` of a session stopped while a FAIL of scenario `index` was
    /// being reduced: runs each cut-short reduction again (from the whole schedule,
    /// with the failing seed and a fresh budget), then writes the finding again.
    async fn finish_reductions(
        &mut self,
        index: usize,
        operator: &mut dyn Operator,
    ) -> Result<Option<Unanswered>, DriverError> {
        let scenario = &self.req.plan.scenarios[index];
        let cut: Vec<(String, u64)> = self.outcome.scenarios[index]
            .runs
            .iter()
            .filter_map(|r| {
                let reduction = r.reduction.as_ref().filter(|red| red.cut_short)?;
                Some((r.id.clone(), reduction.seed))
            })
            .collect();
        for (id, seed) in cut {
            let Some(binding) = binding_for(&self.req.spec, &scenario.id, &id) else {
                continue;
            };
            let binding = self.as_run(&id, scenario, binding);
            let Some((_, budget)) = super::scenario::budget_for(&binding, self.req.tier) else {
                continue;
            };
            let duration = budget.duration.0;
            let run = self.binding_run(scenario, &id, &binding);
            let mut reduction = run.reduce(&mut self.journal, seed, duration).await?;
            self.write_reproducer(&id, &binding, &mut reduction);
            if let Some(state) = self.outcome.scenarios[index]
                .runs
                .iter_mut()
                .find(|r| r.id == id)
            {
                state.reduction = Some(Box::new(reduction));
            }
            self.publish_at(index)?;
        }
        Ok(self.classify(index, operator).await.err())
    }

    /// The scenario's verdict: its one run's, or the aggregation of its arms'.
    fn settle(&mut self, index: usize) -> Result<(), DriverError> {
        let scenario = &self.req.plan.scenarios[index];
        let state = &mut self.outcome.scenarios[index];
        let decisions: Vec<(String, Decision)> = state
            .runs
            .iter()
            .filter_map(|r| r.decision.clone().map(|d| (r.id.clone(), d)))
            .collect();
        if scenario.arms.is_empty() {
            if let Some((_, decision)) = decisions.first() {
                state.verdict = Some(decision.verdict);
                state.tier_met = decision.tier_met;
                state.reasons = decision.reasons.clone();
            }
            return Ok(());
        }
        let verdicts: Vec<Verdict> = decisions.iter().map(|(_, d)| d.verdict).collect();
        let verdict = aggregate_arms(&verdicts);
        let listing = decisions
            .iter()
            .map(|(id, d)| format!("{id} {}", d.verdict))
            .collect::<Vec<_>>()
            .join(", ");
        let seq = self
            .journal
            .append(
                Scope {
                    scenario: Some(scenario.id.clone()),
                    arm: None,
                },
                Event::ArmsAggregated(event::ArmsAggregated {
                    arms: listing.clone(),
                    verdict: Some(verdict),
                }),
            )?
            .seq;
        let state = &mut self.outcome.scenarios[index];
        state.verdict = Some(verdict);
        state.tier_met = decisions.iter().filter_map(|(_, d)| d.tier_met).min();
        state.reasons = vec![ReasonStep {
            question: "how do the arms aggregate?".into(),
            answer: format!("{listing}: {verdict}"),
            cites: vec![seq],
        }];
        Ok(())
    }

    /// Asks the blame class and bug type of a FAIL (method §2.7, §5, §6).
    async fn classify(
        &mut self,
        index: usize,
        operator: &mut dyn Operator,
    ) -> Result<(), Unanswered> {
        let scenario = &self.req.plan.scenarios[index];
        let reproduced = self.outcome.scenarios[index].verdict == Some(Verdict::FailReproducible);
        let mut answers = Vec::new();
        // The answers as the journal holds them: who classified it is read from there.
        let mut answered = View::default();
        let mut asked_ids = Vec::new();
        // After a stop nobody is there to answer: the finding is written unclassified
        // (`faultline resume` asks, when it finishes a reduction the stop cut short).
        let asked = if self.cancel.is_cancelled() {
            Vec::new()
        } else {
            classification_questions(&scenario.id, reproduced)
        };
        for question in asked {
            let answer = crate::session::operator::answer(operator, &question).await?;
            let written = self.journal.append(
                Scope {
                    scenario: Some(scenario.id.clone()),
                    arm: None,
                },
                Event::OperatorAnswer(event::OperatorAnswer {
                    question: question.id.clone(),
                    prompt: None,
                    answer: answer.text.clone(),
                    by: answer.by.clone(),
                    who: answer.who.clone(),
                }),
            );
            if let Ok(record) = written {
                answered.apply(&record);
            }
            asked_ids.push(question.id.clone());
            answers.push(answer.text);
        }
        // Written again by `resume` (a finished reduction): the same finding, the same id.
        let id = match &self.outcome.scenarios[index].finding {
            Some(finding) => finding.id.clone(),
            None => {
                self.findings += 1;
                format!("F{}", self.findings)
            }
        };
        let state = &self.outcome.scenarios[index];
        let failing = state
            .runs
            .iter()
            .find(|r| r.decision.as_ref().is_some_and(|d| d.verdict.is_fail()));
        let reduction = failing
            .and_then(|r| r.reduction.as_ref())
            .map(|r| reduction_text(r, &self.outcome.session_dir));
        let failing_oracle = failing.and_then(|run| {
            run.seeds
                .iter()
                .filter_map(|s| s.oracle.as_ref())
                .find(|o| o.anomalies > 0)
        });
        let (what, evidence, seed) = match failing {
            Some(run) => (
                failing_oracle.map_or_else(
                    || "the checker reported anomalies".to_string(),
                    |o| o.evidence.clone(),
                ),
                // A service that ended with no fault to explain it comes first.
                run.seeds
                    .iter()
                    .chain(run.rerun.as_deref())
                    .flat_map(|s| {
                        s.services_ended
                            .iter()
                            .filter(|e| e.fault.is_none())
                            .map(move |e| {
                                format!(
                                    "seed {}: service {} with no fault to explain it ({})",
                                    s.seed,
                                    e.said,
                                    crate::report::cites_text(&e.cites)
                                )
                            })
                    })
                    .chain(run.artifacts.iter().cloned())
                    .collect(),
                run.seeds.last().map_or(1, |s| s.seed),
            ),
            None => (String::new(), Vec::new(), 1),
        };
        let unasked = |text: Option<&String>| match text {
            Some(text) => text.clone(),
            None if self.cancel.is_cancelled() => NOT_ASKED.to_string(),
            None => String::new(),
        };
        let finding = Finding {
            id,
            scenario: scenario.id.clone(),
            hypothesis: scenario.closes.clone(),
            what_happened: format!(
                "{what} (seed {seed}; the same-seed re-run {})",
                if reproduced {
                    "reproduced it"
                } else {
                    "did not reproduce it"
                }
            ),
            reproducer: format!(
                "{} --only {} --tier {} --headless --yes",
                self.req.rerun_command, scenario.id, self.req.tier
            ),
            reproduced,
            blame: unasked(answers.first()),
            classified_by: answered
                .answered_by(asked_ids.iter().map(String::as_str))
                .join(", "),
            bug_type: unasked(answers.get(1)),
            tags: answers.get(2).cloned().unwrap_or_default(),
            severity: answers.get(3).cloned().unwrap_or_default(),
            root_cause: unasked(answers.get(4)),
            evidence,
            reduction,
            next_action: unasked(answers.get(5)),
            anomalies: failing_oracle
                .map(|o| o.listed.iter().map(AnomalyNote::describe).collect())
                .unwrap_or_default(),
            anomalies_total: failing_oracle.map_or(0, |o| o.anomalies),
        };
        self.outcome.scenarios[index].finding = Some(Box::new(finding));
        Ok(())
    }

    fn finish(&mut self, unanswered: Option<Unanswered>) -> Result<Ended, DriverError> {
        let verdicts: Vec<Verdict> = self
            .outcome
            .scenarios
            .iter()
            .filter_map(|s| s.verdict)
            .collect();
        let verdict = session_verdict(&verdicts);
        self.outcome.verdict = Some(verdict);
        self.outcome.finished =
            Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        if self.cancel.is_cancelled() {
            self.outcome.interrupted = Some("interrupted by the operator".into());
        }
        let scenarios = self
            .outcome
            .scenarios
            .iter()
            .map(|s| event::ScenarioVerdict {
                id: s.id.clone(),
                verdict: s.verdict,
            })
            .collect();
        // What left its group without a cgroup to hold it is ended before the verdict.
        let swept =
            crate::session::heal::sweep_marked_at_clean_end(&self.dir.path, &mut self.journal);
        for failed in &swept.failures {
            tracing::warn!("clean-end sweep: {failed}");
        }
        self.journal_outcome()?;
        self.journal.append(
            Scope::default(),
            Event::SessionVerdict(event::SessionVerdictEvent {
                verdict: Some(verdict),
                scenarios,
            }),
        )?;
        let report = self.outputs.finish(&self.outcome);
        Ok(Ended {
            outcome: self.outcome.clone(),
            unanswered,
            report,
        })
    }
}

/// The capability record that says which containment a run's services got.
pub const CONTAINMENT: &str = "containment";

const CONTAINMENT_NEED: &str = "what ends a service and everything it started";

/// Which containment this run's services get, and whether it is a cgroup: one per
/// service where cgroup v2 is delegated to this process, else their process groups
/// and the session-mark sweep at every clean end (a child that clears its
/// environment and leaves its group escapes that one).
fn containment() -> (String, bool) {
    match crate::exec::cgroup::base() {
        Ok(base) => {
            // A root service can move itself out of a cgroup (into an ancestor's
            // cgroup.procs) unless cgroup namespaces bound it.
            let bound = if crate::exec::cgroup::namespaces_bound_services() {
                "each in a cgroup namespace of its own, which it cannot leave"
            } else {
                "each in a cgroup namespace of its own, which a root service can still \
                 leave (cgroup v2 is not mounted with nsdelegate)"
            };
            (
                format!("cgroup: one per service under {}, {bound}", base.display()),
                true,
            )
        }
        Err(why) => (
            format!(
                "session-mark sweep: process groups, then every process bearing the \
                 session's mark ended at the clean end (no cgroup: {why})"
            ),
            false,
        ),
    }
}

/// The capability matrix's row for [`containment`].
fn containment_row() -> crate::capability::matrix::MatrixRow {
    let (saw, present) = containment();
    crate::capability::matrix::MatrixRow {
        requirement: format!("{CONTAINMENT} ({CONTAINMENT_NEED})"),
        capability: Some(CONTAINMENT.into()),
        present: Some(present),
        version: None,
        source: "probe".into(),
        used_by: Vec::new(),
        note: saw,
    }
}

/// A finding's classification field when a stop came before it was asked.
const NOT_ASKED: &str = "not asked: the session was stopped";

/// The finding's reduction line: what it found and its reduced reproducer, or, when a
/// stop cut it short, how to finish it (the sentence the report and headless output
/// repeat) and what it had found so far.
pub fn reduction_text(r: &Reduction, session_dir: &str) -> String {
    if r.cut_short {
        let progress = if r.runs == 0 {
            "no candidate had finished".to_string()
        } else {
            format!("so far {}", r.summary())
        };
        return format!("{}; {progress}", cut_short_sentence(session_dir));
    }
    format!(
        "{}; {}; reduced reproducer: {}",
        r.summary(),
        r.note,
        r.reproducer.as_deref().unwrap_or("not written")
    )
}

/// "reduction cut short — `faultline resume <dir>` finishes it".
pub fn cut_short_sentence(session_dir: &str) -> String {
    format!("reduction cut short — `faultline resume {session_dir}` finishes it")
}

/// What the preflight needs of the session; a free function so the caller can still
/// lend its journal mutably alongside.
fn preflight_ctx<'a>(
    req: &'a Request,
    dir: &'a SessionDir,
    cancel: &CancellationToken,
) -> PreflightCtx<'a> {
    PreflightCtx {
        plan: &req.plan,
        spec: &req.spec,
        sut_dir: &req.sut_dir,
        session_dir: &dir.path,
        base_vars: &req.vars,
        only: req.only.as_deref(),
        cancel: cancel.clone(),
    }
}

/// The ids a scenario runs under: its arms' ids, or its own.
fn run_ids(scenario: &Scenario) -> Vec<String> {
    if scenario.arms.is_empty() {
        vec![scenario.id.clone()]
    } else {
        scenario.arms.iter().map(|a| a.id.clone()).collect()
    }
}

/// The binding for `id` (`D5/api` is looked up as arm `api` of `D5`, or as its own key).
fn binding_for<'s>(spec: &'s RunSpec, scenario: &str, id: &str) -> Option<&'s Binding> {
    if let Some((binding, _)) = spec.bindings.get(id) {
        return Some(binding);
    }
    let arm = id.strip_prefix(scenario)?.strip_prefix('/')?;
    spec.bindings.get(scenario)?.0.arms.get(arm)
}

/// The tells of each blame class (method §5), shown while the operator classifies.
pub const BLAME_TELLS: [&str; 5] = [
    "SUT: the failure survives swapping the workload generator",
    "harness: it vanishes with another generator, or the history shows ops the API does not accept",
    "checker: it flags a known-good history, or ignores a documented relaxation",
    "environment: it vanishes on another host / kernel / filesystem, or lines up with host events (cgroup throttle, hypervisor pause, NTP step)",
    "unknown — pending re-run on alternative harness/host: always allowed",
];

/// What the operator is asked about a FAIL, in order (method §2.7, §5, §6); the
/// answers fill the finding's blame, bug type, tags, severity, root cause and next
/// action. `--answers-template` lists the same ids.
pub fn classification_questions(scenario: &str, reproduced: bool) -> Vec<Question> {
    let ask = |suffix: &str, kind, prompt: &str, default: &str| Question {
        id: format!("{scenario}.{suffix}"),
        kind,
        prompt: format!("{scenario}: {prompt}"),
        default: default.to_string(),
        ..Question::default()
    };
    let listed =
        |values: &[&str]| -> Vec<Choice> { values.iter().map(|v| Choice::new(v, "")).collect() };
    let unknown = || Choice::new(UNKNOWN_BLAME, "decided after a re-run elsewhere");
    let next = if reproduced {
        // The reduction (method §5) has run by the time this is asked.
        "hand the reproducer (the reduced one, when the reduction kept it) to the owning subsystem and keep it as a regression test"
    } else {
        "re-run with more seeds to find a reproducing interleaving"
    };
    vec![
        Question {
            hints: BLAME_TELLS.iter().map(|t| t.to_string()).collect(),
            choices: listed(&["SUT", "harness", "checker", "environment"])
                .into_iter()
                .chain([unknown()])
                .collect(),
            ..ask(
                "blame",
                QuestionKind::ClassifyFailure,
                "blame class of this FAIL: SUT, harness, checker or environment",
                UNKNOWN_BLAME,
            )
        },
        Question {
            choices: listed(&[
                "timing",
                "ordering",
                "partition",
                "crash-recovery",
                "upgrade",
                "config",
                "fault-handling",
                "performance",
            ])
            .into_iter()
            .chain([unknown()])
            .collect(),
            ..ask(
                "bug-type",
                QuestionKind::ClassifyFailure,
                "bug type: timing, ordering, partition, crash-recovery, upgrade, config, fault-handling or performance",
                UNKNOWN_BLAME,
            )
        },
        Question {
            free_text: FreeText::Line,
            ..ask(
                "tags",
                QuestionKind::ClassifyFailure,
                "tags, comma-separated: replication, leadership/election, idempotency/dedup, durability, liveness, safety",
                "",
            )
        },
        Question {
            choices: vec![
                Choice::new("P0", "data loss / corruption / safety"),
                Choice::new("P1", "availability loss needing an operator"),
                Choice::new("P2", "auto-recovering degradation"),
                Choice::new("P3", "no user impact"),
                Choice::new("unrated", "not rated yet"),
            ],
            ..ask(
                "severity",
                QuestionKind::ClassifyFailure,
                "severity: P0 data loss / corruption / safety, P1 availability loss needing an operator, P2 auto-recovering degradation, P3 no user impact",
                "unrated",
            )
        },
        Question {
            free_text: FreeText::Lines,
            ..ask(
                "root-cause",
                QuestionKind::Describe,
                "hypothesised root cause",
                "not yet known",
            )
        },
        Question {
            free_text: FreeText::Lines,
            ..ask("next-action", QuestionKind::Describe, "next action", next)
        },
    ]
}

/// What `faultline resume` asks about a scenario a crash interrupted.
pub fn resume_choices() -> Vec<Choice> {
    vec![
        Choice::new("rerun", "run it again from its start"),
        Choice::new("keep", "keep the runs it finished; the rest are NOT-RUN"),
    ]
}
