//! One run of one binding (scenario or arm) with one seed: cluster up, preconditions,
//! workload, the fault schedule with landing probes and healing, quiesce, checker,
//! cluster down. Every step is journaled; the facts returned cite journal records.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::exec::{self, CommandSpec, Outcome, Running};
use crate::journal::{Journal, JournalError, Scope};
use crate::nemesis::landing::LogWatch;
use crate::nemesis::process::{self, Action, Target};
use crate::oracle::{CheckerReport, History, no_lost_ack, parse_jsonl};
use crate::runspec::vars::{VarError, Vars};
use crate::runspec::{Binding, FaultStep, SignalName, TargetSpec};

const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);
const DEFAULT_LANDING_WITHIN: Duration = Duration::from_secs(5);
const RETRY_EVERY: Duration = Duration::from_millis(200);

/// Where one iteration runs.
pub struct IterationCtx {
    /// Scenario or arm id, e.g. `D3` or `D5/api`.
    pub id: String,
    pub scope: Scope,
    pub cwd: PathBuf,
    pub logs: PathBuf,
    pub artifacts: PathBuf,
    /// Already holds the binding's variables; `seed`, `duration_ms`, `artifacts` and
    /// `final_state` are set here.
    pub vars: Vars,
    pub seed: u64,
    pub duration: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{id}: {source}")]
    Var { id: String, source: VarError },
    #[error("{id}: {message}")]
    Io { id: String, message: String },
}

/// What happened to one planned fault.
#[derive(Debug, Clone, Default)]
pub struct FaultFacts {
    pub id: String,
    pub injected: bool,
    /// The injector side saw the effect (e.g. /proc state).
    pub injector_landed: bool,
    /// Every declared signal was observed inside the window.
    pub declared_landed: bool,
    pub victim_side_seen: bool,
    pub healed: bool,
    pub cites: Vec<u64>,
}

/// Everything the iteration learned, for the audits and the decision tree.
#[derive(Debug, Default)]
pub struct IterationFacts {
    /// A precondition (or cluster health) that failed, and the record saying so.
    pub env_missing: Option<(String, u64)>,
    pub expired_step: Option<String>,
    pub faults: Vec<FaultFacts>,
    pub history: Option<History>,
    pub checker: Option<(CheckerReport, u64)>,
    /// Process groups this iteration started (all ended before it returns).
    pub pgids: Vec<i32>,
}

struct Runner<'a> {
    ctx: &'a mut IterationCtx,
    journal: &'a mut Journal,
    services: BTreeMap<String, Running>,
    facts: IterationFacts,
}

impl Runner<'_> {
    fn log(&mut self, kind: &str, data: serde_json::Value) -> Result<u64, EngineError> {
        Ok(self
            .journal
            .append(self.ctx.scope.clone(), kind, &data)?
            .seq)
    }

    fn expand(&mut self, text: &str) -> Result<String, EngineError> {
        self.ctx
            .vars
            .expand(text)
            .map_err(|source| EngineError::Var {
                id: self.ctx.id.clone(),
                source,
            })
    }

    fn spawn(&mut self, name: &str, command: &str) -> Result<Running, EngineError> {
        let spec = CommandSpec {
            name: name.to_string(),
            command: command.to_string(),
            cwd: self.ctx.cwd.clone(),
            env: Vec::new(),
        };
        let running = exec::spawn(&spec, &self.ctx.logs).map_err(|e| EngineError::Io {
            id: self.ctx.id.clone(),
            message: e.to_string(),
        })?;
        self.facts.pgids.push(running.pgid);
        self.log(
            "command-started",
            json!({"name": name, "command": command, "pgid": running.pgid,
                   "log": running.stderr_log.display().to_string()}),
        )?;
        Ok(running)
    }

    /// Runs `command` to completion within `deadline`; journals and returns the outcome.
    async fn run_once(
        &mut self,
        name: &str,
        command: &str,
        deadline: Duration,
    ) -> Result<(Outcome, u64), EngineError> {
        let mut running = self.spawn(name, command)?;
        let outcome = running.wait(deadline).await.map_err(|e| EngineError::Io {
            id: self.ctx.id.clone(),
            message: e.to_string(),
        })?;
        let seq = self.log(
            "command-exited",
            json!({"name": name, "outcome": format!("{outcome:?}"),
                   "elapsed_ms": running.started.elapsed().as_millis()}),
        )?;
        Ok((outcome, seq))
    }

    /// Retries `command` until it exits 0 or `within` passes (a condition, not a sleep).
    async fn until_ok(
        &mut self,
        name: &str,
        command: &str,
        within: Duration,
    ) -> Result<(bool, u64), EngineError> {
        let start = tokio::time::Instant::now();
        loop {
            let left = within.saturating_sub(start.elapsed());
            let (outcome, seq) = self.run_once(name, command, left.max(RETRY_EVERY)).await?;
            if outcome == Outcome::Exited(0) {
                return Ok((true, seq));
            }
            if start.elapsed() >= within {
                return Ok((false, seq));
            }
            tokio::time::sleep(RETRY_EVERY).await;
        }
    }

    async fn cluster_up(&mut self, binding: &Binding) -> Result<bool, EngineError> {
        let Some(cluster) = &binding.cluster else {
            return Ok(true);
        };
        for service in &cluster.services {
            let command = self.expand(&service.run)?;
            let running = self.spawn(&service.name, &command)?;
            self.services.insert(service.name.clone(), running);
        }
        if let Some(health) = &cluster.health {
            let command = self.expand(&health.run)?;
            let within = health.deadline.map_or(DEFAULT_DEADLINE, |d| d.0);
            let (ok, seq) = self.until_ok("health", &command, within).await?;
            let seq = self.log(
                "precondition",
                json!({"name": "cluster up and healthy", "ok": ok, "cites": [seq]}),
            )?;
            if !ok {
                self.facts.env_missing = Some(("cluster up and healthy".into(), seq));
                return Ok(false);
            }
        }
        for check in &binding.preconditions {
            let command = self.expand(&check.run)?;
            let within = check.deadline.map_or(DEFAULT_DEADLINE, |d| d.0);
            let (outcome, seq) = self.run_once(&check.name, &command, within).await?;
            let ok = outcome == Outcome::Exited(0);
            let seq = self.log(
                "precondition",
                json!({"name": check.name, "ok": ok, "cites": [seq]}),
            )?;
            if !ok {
                self.facts.env_missing = Some((check.name.clone(), seq));
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn victim_pid(&mut self, target: &TargetSpec) -> Result<Target, EngineError> {
        Ok(match target {
            TargetSpec::Pid(pid) => Target::Pid(*pid),
            TargetSpec::Pidfile(path) => Target::Pidfile(PathBuf::from(self.expand(path)?)),
            TargetSpec::Service(name) => match self.services.get(name) {
                Some(running) => Target::Pid(running.pgid),
                None => {
                    return Err(EngineError::Io {
                        id: self.ctx.id.clone(),
                        message: format!("fault target service `{name}` is not in the cluster"),
                    });
                }
            },
        })
    }

    async fn fault(&mut self, step: &FaultStep, epoch: u64) -> Result<FaultFacts, EngineError> {
        let mut facts = FaultFacts {
            id: step.id.clone(),
            ..FaultFacts::default()
        };
        let mut watches = Vec::new();
        for signal in &step.landing {
            let Some(log) = &signal.log else { continue };
            let file = match (&log.service, &log.file) {
                (Some(service), _) => self.ctx.logs.join(format!("{service}.stderr.log")),
                (None, Some(file)) => PathBuf::from(self.expand(file)?),
                (None, None) => continue,
            };
            let pattern = regex::Regex::new(&log.pattern).map_err(|e| EngineError::Io {
                id: self.ctx.id.clone(),
                message: format!("fault {} landing pattern: {e}", step.id),
            })?;
            let within = signal.within.map_or(DEFAULT_LANDING_WITHIN, |d| d.0);
            watches.push((LogWatch::begin(&file, pattern), within, signal.side));
        }
        let epoch_file = self.ctx.artifacts.join("fault_epoch");
        let write_epoch =
            |text: String| std::fs::write(&epoch_file, text).map_err(|e| e.to_string());
        facts
            .cites
            .push(self.log("fault-intent", json!({"fault": step.id, "epoch": epoch}))?);
        let Some(spec) = &step.process else {
            // Only process faults are wired into the runner so far; say so loudly
            // rather than pretend: the fault stays uninjected and cannot be proven.
            facts.cites.push(self.log(
                "fault-not-injected",
                json!({"fault": step.id, "reason": "this fault kind is not wired into the runner yet"}),
            )?);
            return Ok(facts);
        };
        let target = self.victim_pid(&spec.target)?;
        let action = match spec.signal {
            SignalName::Kill => Action::Kill,
            SignalName::Term => Action::Term {
                grace: spec.grace.map_or(Duration::from_secs(5), |d| d.0),
            },
            SignalName::Stop => Action::Pause,
        };
        if let Err(message) = write_epoch(epoch.to_string()) {
            return Err(EngineError::Io {
                id: self.ctx.id.clone(),
                message,
            });
        }
        let injected = match process::inject(&target, action) {
            Ok(injected) => injected,
            Err(e) => {
                facts.cites.push(self.log(
                    "fault-inject-failed",
                    json!({"fault": step.id, "error": e.to_string()}),
                )?);
                return Ok(facts);
            }
        };
        facts.injected = true;
        facts.cites.push(self.log(
            "fault-injected",
            json!({"fault": step.id, "pid": injected.pid}),
        )?);
        let seen = injected.await_landing(Duration::from_secs(2)).await;
        facts.injector_landed = seen.landed;
        facts.cites.push(self.log(
            "landing-injector",
            json!({"fault": step.id, "landed": seen.landed, "detail": seen.detail}),
        )?);
        let mut all = !watches.is_empty();
        for (watch, within, side) in &watches {
            let found = watch
                .await_match(*within)
                .await
                .map_err(|e| EngineError::Io {
                    id: self.ctx.id.clone(),
                    message: e.to_string(),
                })?;
            all &= found.is_some();
            if found.is_some() && *side == crate::runspec::Side::Victim {
                facts.victim_side_seen = true;
            }
            facts.cites.push(self.log(
                "landing-declared",
                json!({"fault": step.id, "side": side, "pattern": watch.pattern.as_str(), "seen": found}),
            )?);
        }
        facts.declared_landed = all;
        if let Some(duration) = step.duration {
            tokio::time::sleep(duration.0).await;
        }
        let healed = injected.heal().await;
        let _ = write_epoch(String::new());
        facts.healed = healed.is_ok();
        facts.cites.push(self.log(
            "fault-healed",
            json!({"fault": step.id, "result": healed.map_err(|e| e.to_string())}),
        )?);
        Ok(facts)
    }

    async fn cluster_down(&mut self) -> Result<(), EngineError> {
        let services = std::mem::take(&mut self.services);
        for (name, mut running) in services {
            let _ = running.terminate().await;
            self.log(
                "service-stopped",
                json!({"name": name, "pgid": running.pgid}),
            )?;
        }
        Ok(())
    }

    async fn body(&mut self, binding: &Binding) -> Result<(), EngineError> {
        if !self.cluster_up(binding).await? {
            return Ok(());
        }
        let Some(workload) = &binding.workload else {
            return Ok(());
        };
        let command = self.expand(&workload.run)?;
        let mut client = self.spawn("workload", &command)?;
        let mut faults: Vec<&FaultStep> = binding.faults.iter().map(|f| &f.value).collect();
        faults.sort_by_key(|f| f.after);
        for (index, fault) in faults.into_iter().enumerate() {
            let wait = fault.after.0.saturating_sub(client.started.elapsed());
            tokio::time::sleep(wait).await;
            let facts = self.fault(fault, index as u64 + 1).await?;
            self.facts.faults.push(facts);
        }
        let deadline = workload.deadline.map_or(DEFAULT_DEADLINE, |d| d.0);
        let outcome = client
            .wait(deadline.saturating_sub(client.started.elapsed()))
            .await
            .map_err(|e| EngineError::Io {
                id: self.ctx.id.clone(),
                message: e.to_string(),
            })?;
        self.log(
            "command-exited",
            json!({"name": "workload", "outcome": format!("{outcome:?}")}),
        )?;
        if outcome == Outcome::DeadlineExpired {
            self.facts.expired_step = Some("workload".into());
        }
        if let Some(quiesce) = &binding.quiesce {
            let command = self.expand(&quiesce.run)?;
            let (quiet, seq) = self
                .until_ok("quiesce", &command, quiesce.timeout.0)
                .await?;
            self.log("quiesce", json!({"reached": quiet, "cites": [seq]}))?;
            if !quiet {
                self.facts
                    .expired_step
                    .get_or_insert_with(|| "quiesce".into());
            }
        }
        self.oracle(binding).await
    }

    async fn oracle(&mut self, binding: &Binding) -> Result<(), EngineError> {
        let (Some(history), Some(checker)) = (&binding.history, &binding.checker) else {
            return Ok(());
        };
        if let Some(dump) = &checker.final_state {
            let command = self.expand(dump)?;
            self.run_once("final-state", &command, DEFAULT_DEADLINE)
                .await?;
        }
        let path = PathBuf::from(self.expand(&history.path)?);
        // A missing history is journaled, never read as an empty (clean) one.
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                let path = path.display().to_string();
                self.log(
                    "history-unreadable",
                    json!({"path": path, "error": e.to_string()}),
                )?;
                return Ok(());
            }
        };
        let parsed = match parse_jsonl(&path.display().to_string(), &text) {
            Ok(h) => h,
            Err(e) => {
                self.log("history-rejected", json!({"error": e.to_string()}))?;
                return Ok(());
            }
        };
        if checker.builtin.as_deref() == Some("no-lost-ack") {
            let final_path = self.ctx.artifacts.join("final.json");
            let state = std::fs::read_to_string(&final_path)
                .map_err(|e| e.to_string())
                .and_then(|t| no_lost_ack::parse_final_state(&t));
            let state = match state {
                Ok(state) => state,
                Err(e) => {
                    self.log(
                        "final-state-missing",
                        json!({"path": final_path.display().to_string(), "error": e}),
                    )?;
                    return Ok(());
                }
            };
            let report = no_lost_ack::check(&parsed, &state);
            let seq = self.log(
                "oracle-result",
                json!({"checker": report.checker, "evidence": report.evidence, "run": report.run}),
            )?;
            self.facts.checker = Some((report, seq));
        }
        self.facts.history = Some(parsed);
        Ok(())
    }
}

/// Runs `binding` once; services are always stopped and faults always healed before
/// this returns, whatever happened.
pub async fn run(
    binding: &Binding,
    ctx: &mut IterationCtx,
    journal: &mut Journal,
) -> Result<IterationFacts, EngineError> {
    std::fs::create_dir_all(&ctx.artifacts).map_err(|e| EngineError::Io {
        id: ctx.id.clone(),
        message: e.to_string(),
    })?;
    ctx.vars.set("seed", ctx.seed.to_string());
    ctx.vars
        .set("duration_ms", ctx.duration.as_millis().to_string());
    ctx.vars
        .set("artifacts", ctx.artifacts.display().to_string());
    ctx.vars.set(
        "final_state",
        ctx.artifacts.join("final.json").display().to_string(),
    );
    let mut runner = Runner {
        ctx,
        journal,
        services: BTreeMap::new(),
        facts: IterationFacts::default(),
    };
    let outcome = runner.body(binding).await;
    let down = runner.cluster_down().await;
    outcome?;
    down?;
    Ok(runner.facts)
}
