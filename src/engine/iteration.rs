//! One run of one binding (scenario or arm) with one seed: cluster up, preconditions,
//! workload, the fault schedule with landing probes and healing, quiesce, checker,
//! cluster down. Every step is journaled; the facts returned cite journal records.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::exec::{self, CommandSpec, Outcome, Running};
use crate::journal::{Journal, JournalError, Scope};
use crate::nemesis::clock::{self, InjectedClock, VictimClock};
use crate::nemesis::command::CommandFault;
use crate::nemesis::disk::{self, InjectedDisk, Tmpfs};
use crate::nemesis::docker::{self, InjectedDocker};
use crate::nemesis::landing::LogWatch;
use crate::nemesis::net::{self, InjectedNet};
use crate::nemesis::process::{self, Action, Target};
use crate::nemesis::proxy::{InjectedProxy, Proxy, Toxic};
use crate::nemesis::signal::{self, Watch};
use crate::oracle::{CheckerReport, History, no_lost_ack, parse_external_result, parse_jsonl};
use crate::runspec::vars::{VarError, Vars};
use crate::runspec::{
    Binding, ClockFaultSpec, DiskFaultSpec, FaultStep, LogSignal, NetFaultSpec, Side, SignalName,
    TargetSpec,
};

const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);
const DEFAULT_LANDING_WITHIN: Duration = Duration::from_secs(5);
const RETRY_EVERY: Duration = Duration::from_millis(200);
const DEFAULT_STATUS_EVERY: Duration = Duration::from_secs(30);

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
    /// Cancelled when the operator interrupts the session: every wait ends early, the
    /// faults already injected are healed and journaled, the services are stopped.
    pub cancel: CancellationToken,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("{id}: {source}")]
    Var { id: String, source: VarError },
    #[error("{id}: {message}")]
    Io { id: String, message: String },
    #[error("{id}: interrupted")]
    Interrupted { id: String },
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
    /// One line per observation, for the report.
    pub detail: Vec<String>,
    pub cites: Vec<u64>,
}

/// A fault between injection and heal.
enum Held {
    Process(process::Injected),
    Command(crate::nemesis::command::InjectedCommand),
    Net(InjectedNet),
    Disk(InjectedDisk),
    Clock(InjectedClock, VictimClock),
    Proxy(InjectedProxy),
    Docker(InjectedDocker),
    Failed(String),
}

/// How long the injector side of a net fault may take to see dropped packets: the
/// longest declared landing window, else the default.
fn injector_window(step: &FaultStep) -> Duration {
    step.landing
        .iter()
        .filter_map(|l| l.within.map(|d| d.0))
        .max()
        .unwrap_or(DEFAULT_LANDING_WITHIN)
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
    /// Journal records of the preconditions that were checked (passed or not).
    pub preconditions: Vec<u64>,
    /// How long the workload command ran and whether it exited 0.
    pub workload: Option<(Duration, bool, u64)>,
    /// Quiescence reached (`None` when the binding declares no quiesce condition).
    pub quiesced: Option<(bool, u64)>,
    /// Log files of the long-running services (grepped for swallowed errors).
    pub service_logs: Vec<PathBuf>,
    /// Process groups this iteration started (all ended before it returns).
    pub pgids: Vec<i32>,
}

struct Runner<'a> {
    ctx: &'a mut IterationCtx,
    journal: &'a mut Journal,
    services: BTreeMap<String, Running>,
    /// tmpfs mounts made for `disk` faults; unmounted after the services stop.
    mounts: Vec<Tmpfs>,
    /// Services started under faketime: their control file and environment.
    faketime: BTreeMap<String, (PathBuf, Vec<(String, String)>)>,
    /// Fault proxies by listen address, running for the whole iteration.
    proxies: BTreeMap<String, std::sync::Arc<Proxy>>,
    facts: IterationFacts,
}

impl Runner<'_> {
    fn log(&mut self, kind: &str, data: serde_json::Value) -> Result<u64, EngineError> {
        Ok(self
            .journal
            .append(self.ctx.scope.clone(), kind, &data)?
            .seq)
    }

    fn io(&self, message: impl ToString) -> EngineError {
        EngineError::Io {
            id: self.ctx.id.clone(),
            message: message.to_string(),
        }
    }

    /// Awaits `fut` unless the session is interrupted first.
    async fn guard<T>(&self, fut: impl std::future::Future<Output = T>) -> Result<T, EngineError> {
        tokio::select! {
            out = fut => Ok(out),
            () = self.ctx.cancel.cancelled() => Err(EngineError::Interrupted { id: self.ctx.id.clone() }),
        }
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
        self.spawn_env(name, command, Vec::new())
    }

    fn spawn_env(
        &mut self,
        name: &str,
        command: &str,
        env: Vec<(String, String)>,
    ) -> Result<Running, EngineError> {
        let spec = CommandSpec {
            name: name.to_string(),
            command: command.to_string(),
            cwd: self.ctx.cwd.clone(),
            env,
        };
        let running = exec::spawn(&spec, &self.ctx.logs).map_err(|e| self.io(e))?;
        self.facts.pgids.push(running.pgid);
        self.log(
            "command-started",
            json!({"name": name, "command": command, "pgid": running.pgid,
                   "started": exec::start_time(running.pgid),
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
        let outcome = self
            .guard(running.wait(deadline))
            .await?
            .map_err(|e| self.io(e))?;
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
            self.guard(tokio::time::sleep(RETRY_EVERY)).await?;
        }
    }

    async fn cluster_up(&mut self, binding: &Binding) -> Result<bool, EngineError> {
        let services = binding.cluster.iter().flat_map(|c| c.services.iter());
        for service in services {
            let command = self.expand(&service.run)?;
            let env = if service.faketime {
                let control = self
                    .ctx
                    .artifacts
                    .join("faketime")
                    .join(format!("{}.control", service.name));
                let env = clock::prepare(&control).map_err(|e| {
                    self.io(format!("service `{}` (faketime: true): {e}", service.name))
                })?;
                self.faketime
                    .insert(service.name.clone(), (control, env.clone()));
                env
            } else {
                Vec::new()
            };
            let running = self.spawn_env(&service.name, &command, env)?;
            self.facts.service_logs.push(running.stderr_log.clone());
            self.facts.service_logs.push(running.stdout_log.clone());
            // `${<name>_pgid}` lets `command` faults aim at a service's process group.
            self.ctx
                .vars
                .set(&format!("{}_pgid", service.name), running.pgid.to_string());
            self.services.insert(service.name.clone(), running);
        }
        if let Some(health) = binding.cluster.as_ref().and_then(|c| c.health.as_ref()) {
            let command = self.expand(&health.run)?;
            let within = health.deadline.map_or(DEFAULT_DEADLINE, |d| d.0);
            let (ok, seq) = self.until_ok("health", &command, within).await?;
            let seq = self.log(
                "precondition",
                json!({"name": "cluster up and healthy", "ok": ok, "cites": [seq]}),
            )?;
            self.facts.preconditions.push(seq);
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
            self.facts.preconditions.push(seq);
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
                    return Err(self.io(format!(
                        "fault target service `{name}` is not in the cluster"
                    )));
                }
            },
        })
    }

    /// The file a log signal watches: a service's stderr log, or a file of the SUT's.
    fn signal_file(&mut self, log: &LogSignal) -> Result<Option<PathBuf>, EngineError> {
        Ok(match (&log.service, &log.file) {
            (Some(service), _) => Some(self.ctx.logs.join(format!("{service}.stderr.log"))),
            // Relative paths are the SUT's, like the commands that write them.
            (None, Some(file)) => {
                let file = self.expand(file)?;
                Some(self.ctx.cwd.join(file))
            }
            (None, None) => None,
        })
    }

    /// Injects a clock offset into a faketime service, watching the victim's own clock
    /// from before the injection.
    fn inject_clock(
        &mut self,
        step: &FaultStep,
        spec: &ClockFaultSpec,
    ) -> Result<Held, EngineError> {
        let Some((control, env)) = self.faketime.get(&spec.service).cloned() else {
            return Ok(Held::Failed(format!(
                "fault {} clock.service: `{}` is not a service started with `faketime: true`",
                step.id, spec.service
            )));
        };
        let Some(file) = self.signal_file(&spec.victim_clock)? else {
            return Ok(Held::Failed(format!(
                "fault {} clock.victim_clock names neither a service nor a file",
                step.id
            )));
        };
        let pattern = regex::Regex::new(&spec.victim_clock.pattern)
            .map_err(|e| self.io(format!("fault {} clock.victim_clock.pattern: {e}", step.id)))?;
        let victim = VictimClock::begin(&file, pattern);
        Ok(match clock::inject(&control, &env, spec.offset) {
            Ok(injected) => Held::Clock(injected, victim),
            Err(e) => Held::Failed(e.to_string()),
        })
    }

    /// Log watches for the step's declared landing signals, started before injection so
    /// only lines written after it count.
    async fn landing_watches(
        &mut self,
        step: &FaultStep,
    ) -> Result<Vec<(Watch, Duration, Side)>, EngineError> {
        let mut watches = Vec::new();
        for signal in &step.landing {
            let within = signal.within.map_or(DEFAULT_LANDING_WITHIN, |d| d.0);
            let watch = if let Some(counter) = &signal.counter {
                let mut spec = counter.clone();
                spec.run = self.expand(&spec.run)?;
                Watch::counter(spec, &self.ctx.cwd).await
            } else if let Some(http) = &signal.http {
                let mut spec = http.clone();
                spec.url = self.expand(&spec.url)?;
                Watch::http(spec).await
            } else if let Some(prom) = &signal.prometheus {
                let mut spec = prom.clone();
                spec.url = self.expand(&spec.url)?;
                Watch::prometheus(spec).await
            } else if let Some(history) = &signal.history {
                let path = self.expand(&history.path)?;
                let path = self.ctx.cwd.join(path);
                Watch::Log(LogWatch::begin(&path, signal::history_pattern()))
            } else {
                continue;
            };
            watches.push((watch, within, signal.side));
        }
        for signal in &step.landing {
            let Some(log) = &signal.log else { continue };
            let Some(file) = self.signal_file(log)? else {
                continue;
            };
            let pattern = regex::Regex::new(&log.pattern)
                .map_err(|e| self.io(format!("fault {} landing pattern: {e}", step.id)))?;
            let within = signal.within.map_or(DEFAULT_LANDING_WITHIN, |d| d.0);
            watches.push((
                Watch::Log(LogWatch::begin(&file, pattern)),
                within,
                signal.side,
            ));
        }
        Ok(watches)
    }

    /// The net spec with `${var}`s expanded in its namespace and addresses.
    fn expand_net(&mut self, spec: &NetFaultSpec) -> Result<NetFaultSpec, EngineError> {
        let mut spec = spec.clone();
        if let Some(ns) = &spec.netns {
            spec.netns = Some(self.expand(ns)?);
        }
        for rule in &mut spec.drop {
            for value in [&mut rule.source, &mut rule.destination]
                .into_iter()
                .flatten()
            {
                *value = self.expand(value)?;
            }
        }
        Ok(spec)
    }

    /// The docker spec with `${var}`s expanded in its container and network names.
    async fn inject_docker(&mut self, step: &FaultStep) -> Result<Held, EngineError> {
        let Some(spec) = &step.docker else {
            return Ok(Held::Failed("no docker spec".into()));
        };
        let mut spec = spec.clone();
        spec.container = self.expand(&spec.container)?;
        if let Some(network) = &spec.network {
            spec.network = Some(self.expand(network)?);
        }
        Ok(match self.guard(docker::inject(&spec)).await? {
            Ok(injected) => Held::Docker(injected),
            Err(e) => Held::Failed(e.to_string()),
        })
    }

    /// Heals a docker fault after saving the container's log of the fault window into
    /// `logs/` (a killed container's last words are evidence too).
    async fn heal_docker(&mut self, injected: InjectedDocker) -> Result<String, String> {
        let logs = injected.collect_logs(&self.ctx.logs).await;
        let healed = injected.heal().await.map_err(|e| e.to_string())?;
        Ok(match logs {
            Ok(path) => format!("{healed}; its log is in {}", path.display()),
            Err(e) => format!("{healed}; its log could not be saved: {e}"),
        })
    }

    fn write_epoch(&self, text: &str) -> Result<(), EngineError> {
        std::fs::write(self.ctx.artifacts.join("fault_epoch"), text).map_err(|e| self.io(e))
    }

    /// Injects one fault, gathers its landing evidence, holds it for its duration and
    /// heals it. The heal runs (and is journaled) even when the session is interrupted
    /// meanwhile; the interruption is returned after it.
    async fn fault(
        &mut self,
        step: &FaultStep,
        epoch: u64,
        facts: &mut FaultFacts,
    ) -> Result<(), EngineError> {
        facts.id = step.id.clone();
        let watches = self.landing_watches(step).await?;
        facts
            .cites
            .push(self.log("fault-intent", json!({"fault": step.id, "epoch": epoch}))?);
        self.write_epoch(&epoch.to_string())?;
        let held = if step.kind().is_none() {
            Held::Failed("the step names no single nemesis kind".into())
        } else if step.docker.is_some() {
            self.inject_docker(step).await?
        } else if let Some(spec) = &step.proxy {
            self.enable_toxic(step, spec)?
        } else {
            match (
                &step.process,
                &step.command,
                &step.net,
                &step.disk,
                &step.clock,
            ) {
                (Some(spec), None, None, None, None) => {
                    let target = self.victim_pid(&spec.target)?;
                    let action = match spec.signal {
                        SignalName::Kill => Action::Kill,
                        SignalName::Term => Action::Term {
                            grace: spec.grace.map_or(Duration::from_secs(5), |d| d.0),
                        },
                        SignalName::Stop => Action::Pause,
                    };
                    match process::inject(&target, action) {
                        Ok(injected) => Held::Process(injected),
                        Err(e) => Held::Failed(e.to_string()),
                    }
                }
                (None, Some(spec), None, None, None) => {
                    let fault = CommandFault {
                        id: step.id.clone(),
                        inject: self.expand(&spec.inject)?,
                        heal: self.expand(&spec.heal)?,
                        cwd: self.ctx.cwd.clone(),
                        deadline: DEFAULT_DEADLINE,
                    };
                    match self.guard(fault.inject(&self.ctx.logs)).await? {
                        Ok(injected) => Held::Command(injected),
                        Err(e) => Held::Failed(e.to_string()),
                    }
                }
                (None, None, Some(spec), None, None) => {
                    let spec = self.expand_net(spec)?;
                    match net::inject(&spec, &step.id) {
                        Ok(injected) => Held::Net(injected),
                        Err(e) => Held::Failed(e.to_string()),
                    }
                }
                (None, None, None, None, Some(spec)) => self.inject_clock(step, spec)?,
                (None, None, None, Some(spec), None) => {
                    let dir = self.disk_path(spec)?;
                    match disk::inject(&dir, &step.id) {
                        Ok(injected) => Held::Disk(injected),
                        Err(e) => Held::Failed(e.to_string()),
                    }
                }
                _ => Held::Failed("the step names no single nemesis kind".into()),
            }
        };
        if let Held::Failed(error) = &held {
            self.write_epoch("")?;
            facts.cites.push(self.log(
                "fault-inject-failed",
                json!({"fault": step.id, "error": error}),
            )?);
            facts.detail.push(format!("inject failed: {error}"));
            return Ok(());
        }
        facts.injected = true;
        let pid = match &held {
            Held::Process(injected) => Some(injected.pid),
            _ => None,
        };
        // Enough to heal it later from the journal alone (`faultline heal`).
        let undo = match (&held, &step.command) {
            (Held::Process(injected), _) => {
                json!({"pid": injected.pid, "action": format!("{:?}", injected.action),
                                                   "started": exec::start_time(injected.pid)})
            }
            (Held::Docker(injected), _) => injected.undo(),
            (Held::Net(injected), _) => {
                let rules: Vec<Vec<&str>> = injected
                    .rules
                    .iter()
                    .map(|argv| {
                        std::iter::once("iptables")
                            .chain(argv.iter().map(String::as_str))
                            .collect()
                    })
                    .collect();
                json!({"net": {"netns": injected.netns, "tag": injected.tag, "rules": rules}})
            }
            (Held::Clock(injected, _), _) => {
                json!({"clock": {"control": injected.control.display().to_string()}})
            }
            (Held::Proxy(injected), _) => {
                json!({"proxy": {"listen": injected.proxy.listen.to_string(),
                                 "upstream": injected.proxy.upstream, "toxic": injected.toxic}})
            }
            (Held::Disk(injected), _) => {
                json!({"disk": {"filler": injected.filler.display().to_string()}})
            }
            (_, Some(spec)) => {
                json!({"heal": self.expand(&spec.heal)?, "cwd": self.ctx.cwd.display().to_string()})
            }
            _ => json!(null),
        };
        facts.cites.push(self.log(
            "fault-injected",
            json!({"fault": step.id, "pid": pid, "undo": undo}),
        )?);
        let observed = self.observe(step, &held, &watches, facts).await;
        let hold = match (&observed, step.duration) {
            (Ok(()), Some(duration)) => self.guard(tokio::time::sleep(duration.0)).await,
            _ => Ok(()),
        };
        let healed = match held {
            Held::Process(injected) => injected.heal().await.map_err(|e| e.to_string()),
            Held::Command(injected) => injected
                .heal()
                .await
                .map(|()| "heal command exited 0".to_string())
                .map_err(|e| e.to_string()),
            Held::Net(injected) => injected.heal().map_err(|e| e.to_string()),
            Held::Disk(injected) => injected.heal().map_err(|e| e.to_string()),
            Held::Clock(injected, _) => injected.heal().map_err(|e| e.to_string()),
            Held::Proxy(injected) => Ok(injected.heal()),
            Held::Docker(injected) => self.heal_docker(injected).await,
            Held::Failed(_) => Ok(String::new()),
        };
        self.write_epoch("")?;
        facts.healed = healed.is_ok();
        facts
            .cites
            .push(self.log("fault-healed", json!({"fault": step.id, "result": healed}))?);
        observed?;
        hold
    }

    /// Injector-side and declared landing evidence for an injected fault.
    async fn observe(
        &mut self,
        step: &FaultStep,
        held: &Held,
        watches: &[(Watch, Duration, Side)],
        facts: &mut FaultFacts,
    ) -> Result<(), EngineError> {
        if let Held::Process(injected) = held {
            let seen = self
                .guard(injected.await_landing(Duration::from_secs(2)))
                .await?;
            facts.injector_landed = seen.landed;
            facts.detail.push(format!("injector: {}", seen.detail));
            facts.cites.push(self.log(
                "landing-injector",
                json!({"fault": step.id, "landed": seen.landed, "detail": seen.detail}),
            )?);
        }
        if let Held::Net(injected) = held {
            let within = injector_window(step);
            let seen = self.guard(injected.await_landing(within)).await?;
            facts.injector_landed = seen.landed;
            facts.detail.push(format!("injector: {}", seen.detail));
            facts.cites.push(self.log(
                "landing-injector",
                json!({"fault": step.id, "landed": seen.landed,
                       "detail": {"text": seen.detail, "before": seen.before, "after": seen.after}}),
            )?);
        }
        if let Held::Disk(injected) = held {
            let seen = self
                .guard(injected.await_landing(injector_window(step)))
                .await?;
            facts.injector_landed = seen.landed;
            facts.detail.push(format!("injector: {}", seen.detail));
            facts.cites.push(self.log(
                "landing-injector",
                json!({"fault": step.id, "landed": seen.landed,
                       "detail": {"text": seen.detail, "free_bytes": seen.free_bytes}}),
            )?);
        }
        if let Held::Proxy(injected) = held {
            let seen = self
                .guard(injected.await_landing(injector_window(step)))
                .await?;
            facts.injector_landed = seen.landed;
            facts.detail.push(format!("injector: {}", seen.detail));
            facts.cites.push(self.log(
                "landing-injector",
                json!({"fault": step.id, "landed": seen.landed,
                       "detail": {"text": seen.detail, "before": seen.before, "after": seen.after}}),
            )?);
        }
        if let Held::Docker(injected) = held {
            let within = injector_window(step);
            let seen = self.guard(injected.await_landing(within)).await?;
            facts.injector_landed = seen.landed;
            facts.detail.push(format!("injector: {}", seen.detail));
            facts.cites.push(self.log(
                "landing-injector",
                json!({"fault": step.id, "landed": seen.landed,
                       "detail": {"text": seen.detail, "events": seen.events, "state": seen.state}}),
            )?);
        }
        // A kind's built-in victim-side check counts like a declared signal.
        let mut builtin_victim = None;
        if let Held::Clock(injected, victim) = held {
            let within = injector_window(step);
            let seen = self.guard(injected.await_landing(within)).await?;
            facts.injector_landed = seen.landed;
            facts.detail.push(format!("injector: {}", seen.detail));
            facts.cites.push(self.log(
                "landing-injector",
                json!({"fault": step.id, "landed": seen.landed,
                       "detail": {"text": seen.detail, "skew_s": seen.skew}}),
            )?);
            let seen = self
                .guard(victim.await_offset(injected.offset, within))
                .await?;
            facts.victim_side_seen = seen.landed;
            builtin_victim = Some(seen.landed);
            facts.detail.push(format!("victim: {}", seen.detail));
            facts.cites.push(self.log(
                "landing-declared",
                json!({"fault": step.id, "side": Side::Victim, "pattern": victim.pattern.as_str(),
                       "seen": seen.landed.then_some(&seen.detail), "skew_s": seen.skew}),
            )?);
        }
        let mut all = !watches.is_empty() || builtin_victim.is_some();
        all &= builtin_victim.unwrap_or(true);
        for (watch, within, side) in watches {
            let found = self
                .guard(watch.await_match(*within))
                .await?
                .map_err(|e| self.io(e))?;
            all &= found.is_some();
            if found.is_some() {
                match side {
                    Side::Victim => facts.victim_side_seen = true,
                    Side::Injector => facts.injector_landed = true,
                }
            }
            let side_name = match side {
                Side::Victim => "victim",
                Side::Injector => "injector",
            };
            facts.detail.push(match &found {
                Some(line) => format!("{side_name}: {}", crate::sanitize::line(line)),
                None => format!(
                    "{side_name}: `{}` not seen within {within:?}",
                    watch.describe()
                ),
            });
            facts.cites.push(self.log(
                "landing-declared",
                json!({"fault": step.id, "side": side, "pattern": watch.describe(), "seen": found}),
            )?);
        }
        facts.declared_landed = all;
        Ok(())
    }

    /// Starts the fault proxy of every `proxy` fault (one per listen address) before the
    /// cluster, so clients can route through it from their first connection.
    async fn start_proxies(&mut self, binding: &Binding) -> Result<(), EngineError> {
        for fault in &binding.faults {
            let Some(spec) = &fault.value.proxy else {
                continue;
            };
            let listen = self.expand(&spec.listen)?;
            let upstream = self.expand(&spec.upstream)?;
            if self.proxies.contains_key(&listen) {
                continue;
            }
            let proxy = Proxy::start(&listen, &upstream).await.map_err(|e| {
                self.io(format!(
                    "fault {} proxy.listen `{listen}`: {e}",
                    fault.value.id
                ))
            })?;
            self.log(
                "proxy-started",
                json!({"listen": proxy.listen.to_string(), "upstream": upstream}),
            )?;
            self.proxies.insert(listen, std::sync::Arc::new(proxy));
        }
        Ok(())
    }

    fn stop_proxies(&mut self) -> Result<(), EngineError> {
        for (listen, proxy) in std::mem::take(&mut self.proxies) {
            let counters = proxy.snapshot();
            drop(proxy);
            self.log(
                "proxy-stopped",
                json!({"listen": listen, "counters": counters}),
            )?;
        }
        Ok(())
    }

    fn enable_toxic(
        &mut self,
        step: &FaultStep,
        spec: &crate::runspec::ProxyFaultSpec,
    ) -> Result<Held, EngineError> {
        let listen = self.expand(&spec.listen)?;
        let Some(proxy) = self.proxies.get(&listen) else {
            return Ok(Held::Failed(format!(
                "fault {} proxy.listen: no proxy runs on `{listen}`",
                step.id
            )));
        };
        let t = &spec.toxic;
        Ok(Held::Proxy(proxy.enable(Toxic {
            latency: t.latency.map(|d| d.0),
            jitter: t.jitter.map(|d| d.0),
            bandwidth: t.bandwidth,
            stall: t.stall,
            reset: t.reset,
            slice: t.slice,
        })))
    }

    /// The directory a disk fault fills, `${var}`s expanded, relative to the SUT.
    fn disk_path(&mut self, spec: &DiskFaultSpec) -> Result<PathBuf, EngineError> {
        let path = self.expand(&spec.path)?;
        // Absolute, so `faultline heal` run from anywhere finds the same filler.
        std::path::absolute(self.ctx.cwd.join(path)).map_err(|e| self.io(e))
    }

    /// Mounts the tmpfs every `disk` fault with a `size` asks for, before anything
    /// starts writing there. Each mount is journaled so `faultline heal` can undo it.
    fn mount_disks(&mut self, binding: &Binding) -> Result<(), EngineError> {
        for fault in &binding.faults {
            let Some(spec) = &fault.value.disk else {
                continue;
            };
            let Some(size) = &spec.size else { continue };
            let size = self.expand(size)?;
            let path = self.disk_path(spec)?;
            let mount = Tmpfs::mount(&path, &size).map_err(|e| {
                self.io(format!(
                    "fault {} (disk.path / disk.size): {e}",
                    fault.value.id
                ))
            })?;
            self.log(
                "mount-created",
                json!({"path": path.display().to_string(), "fstype": "tmpfs", "size": size}),
            )?;
            self.mounts.push(mount);
        }
        Ok(())
    }

    fn unmount_disks(&mut self) -> Result<(), EngineError> {
        for mount in std::mem::take(&mut self.mounts) {
            let path = mount.path.display().to_string();
            let result = mount.unmount().map_err(|e| e.to_string());
            self.log("mount-removed", json!({"path": path, "result": result}))?;
        }
        Ok(())
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
        self.mount_disks(binding)?;
        self.start_proxies(binding).await?;
        if !self.cluster_up(binding).await? {
            return Ok(());
        }
        let Some(workload) = &binding.workload else {
            return Ok(());
        };
        let command = self.expand(&workload.run)?;
        let client = self.spawn("workload", &command)?;
        let started = client.started;
        if let Some(expected) = workload.expected_duration {
            self.log(
                "checkpoint-start",
                json!({"command": "workload", "expected_ms": expected.0.as_millis()}),
            )?;
        }
        // Kept with the services so every exit path stops it.
        self.services.insert("workload".into(), client);
        let mut faults: Vec<&FaultStep> = binding.faults.iter().map(|f| &f.value).collect();
        faults.sort_by_key(|f| f.after);
        for (index, fault) in faults.into_iter().enumerate() {
            let wait = fault.after.0.saturating_sub(started.elapsed());
            self.guard(tokio::time::sleep(wait)).await?;
            let mut facts = FaultFacts::default();
            let result = self.fault(fault, index as u64 + 1, &mut facts).await;
            self.facts.faults.push(facts);
            result?;
        }
        let deadline = workload.deadline.map_or(DEFAULT_DEADLINE, |d| d.0);
        let outcome = self.await_workload(workload, started, deadline).await?;
        self.services.remove("workload");
        let elapsed = started.elapsed();
        let seq = self.log(
            "command-exited",
            json!({"name": "workload", "outcome": format!("{outcome:?}"),
                   "elapsed_ms": elapsed.as_millis()}),
        )?;
        self.facts.workload = Some((elapsed, outcome == Outcome::Exited(0), seq));
        if workload.expected_duration.is_some() {
            self.log(
                "checkpoint-end",
                json!({"command": "workload", "elapsed_ms": elapsed.as_millis()}),
            )?;
        }
        if outcome == Outcome::DeadlineExpired {
            self.facts.expired_step = Some("workload".into());
        }
        if let Some(quiesce) = &binding.quiesce {
            let command = self.expand(&quiesce.run)?;
            let (quiet, seq) = self
                .until_ok("quiesce", &command, quiesce.timeout.0)
                .await?;
            let seq = self.log("quiesce", json!({"reached": quiet, "cites": [seq]}))?;
            self.facts.quiesced = Some((quiet, seq));
            if !quiet {
                self.facts
                    .expired_step
                    .get_or_insert_with(|| "quiesce".into());
            }
        }
        self.oracle(binding).await
    }

    /// Waits for the workload within its deadline, pulling its status command every
    /// `status_every` meanwhile (each pull journaled with its last output line).
    async fn await_workload(
        &mut self,
        workload: &crate::runspec::Step,
        started: std::time::Instant,
        deadline: Duration,
    ) -> Result<Outcome, EngineError> {
        let every = workload.status_every.map_or(DEFAULT_STATUS_EVERY, |d| d.0);
        let mut pulls = 0u32;
        loop {
            let left = deadline.saturating_sub(started.elapsed());
            // Pull status only while the deadline is further away than the next pull;
            // the last stretch is waited in one piece so the deadline itself decides.
            let slice = workload
                .status
                .as_ref()
                .map(|_| every)
                .filter(|e| *e < left);
            let Some(client) = self.services.get_mut("workload") else {
                return Err(self.io("workload vanished from the running set"));
            };
            let waited = tokio::select! {
                out = async {
                    match slice {
                        Some(slice) => tokio::time::timeout(slice, client.wait(left)).await,
                        None => Ok(client.wait(left).await),
                    }
                } => out,
                () = self.ctx.cancel.cancelled() => {
                    return Err(EngineError::Interrupted { id: self.ctx.id.clone() });
                }
            };
            match waited {
                Ok(outcome) => return outcome.map_err(|e| self.io(e)),
                Err(_) => {
                    let Some(status) = &workload.status else {
                        continue;
                    };
                    pulls += 1;
                    let command = self.expand(status)?;
                    let name = format!("status-{pulls}");
                    self.run_once(&name, &command, every).await?;
                    let out =
                        std::fs::read_to_string(self.ctx.logs.join(format!("{name}.stdout.log")))
                            .unwrap_or_default();
                    let last = out
                        .lines()
                        .last()
                        .map(crate::sanitize::line)
                        .unwrap_or_default();
                    self.log(
                        "status-pull",
                        json!({"command": "workload", "elapsed_ms": started.elapsed().as_millis(), "last_line": last}),
                    )?;
                }
            }
        }
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
        let source = path.display().to_string();
        let parsed = match history.format {
            crate::runspec::HistoryFormat::Jsonl => parse_jsonl(&source, &text),
            crate::runspec::HistoryFormat::Edn => {
                crate::oracle::read_history(crate::oracle::Format::Edn, &source, &text)
            }
            crate::runspec::HistoryFormat::Porcupine => {
                crate::oracle::read_history(crate::oracle::Format::Porcupine, &source, &text)
            }
        };
        let parsed = match parsed {
            Ok(h) => h,
            Err(e) => {
                self.log("history-rejected", json!({"error": e.to_string()}))?;
                return Ok(());
            }
        };
        let report = match (&checker.builtin, &checker.external) {
            (Some(name), _) if name == "no-lost-ack" => self.no_lost_ack(&parsed)?,
            // Every other built-in, with its parameters after the name.
            (Some(spec), _) => {
                match crate::oracle::registry::run_in_session(spec, &parsed, &self.ctx.artifacts) {
                    Ok(report) => Some(report),
                    Err(error) => {
                        self.log("checker-unknown", json!({"checker": spec, "error": error}))?;
                        None
                    }
                }
            }
            (None, Some(command)) => self.external(command).await?,
            (None, None) => None,
        };
        if let Some(report) = report {
            let seq = self.log(
                "oracle-result",
                json!({"checker": report.checker, "evidence": report.evidence, "run": report.run}),
            )?;
            self.facts.checker = Some((report, seq));
        }
        self.facts.history = Some(parsed);
        Ok(())
    }

    fn no_lost_ack(&mut self, history: &History) -> Result<Option<CheckerReport>, EngineError> {
        let final_path = self.ctx.artifacts.join("final.json");
        let state = std::fs::read_to_string(&final_path)
            .map_err(|e| e.to_string())
            .and_then(|t| no_lost_ack::parse_final_state(&t));
        match state {
            Ok(state) => Ok(Some(no_lost_ack::check(history, &state))),
            Err(e) => {
                self.log(
                    "final-state-missing",
                    json!({"path": final_path.display().to_string(), "error": e}),
                )?;
                Ok(None)
            }
        }
    }

    /// Runs an external checker; its last stdout line is the JSON result.
    async fn external(&mut self, command: &str) -> Result<Option<CheckerReport>, EngineError> {
        let command = self.expand(command)?;
        let (outcome, _) = self.run_once("checker", &command, DEFAULT_DEADLINE).await?;
        let stdout_path = self.ctx.logs.join("checker.stdout.log");
        let stdout = std::fs::read_to_string(&stdout_path).map_err(|e| self.io(e))?;
        match parse_external_result(&command, &stdout) {
            Ok(report) => Ok(Some(report)),
            Err(error) => {
                self.log(
                    "checker-output-rejected",
                    json!({"outcome": format!("{outcome:?}"), "error": error}),
                )?;
                Ok(None)
            }
        }
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
    // A fault epoch left by an earlier iteration must not tag this one's ops.
    let _ = std::fs::remove_file(ctx.artifacts.join("fault_epoch"));
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
        mounts: Vec::new(),
        faketime: BTreeMap::new(),
        proxies: BTreeMap::new(),
        facts: IterationFacts::default(),
    };
    let outcome = runner.body(binding).await;
    let down = runner.cluster_down().await;
    // After the services stopped, so none still writes into a mount being removed.
    let unmounted = runner.unmount_disks();
    let proxies = runner.stop_proxies();
    outcome?;
    down?;
    unmounted?;
    proxies?;
    Ok(runner.facts)
}
