//! One run of one binding (scenario or arm) with one seed: cluster up, preconditions,
//! workload, the fault schedule with landing probes and healing, quiesce, checker,
//! cluster down. Every step is journaled; the facts returned cite journal records.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::exec::{self, CommandSpec, Outcome, Running};
use crate::nemesis::clock;
use crate::nemesis::disk::Tmpfs;
use crate::nemesis::proxy::Proxy;
use crate::oracle::checker::conjunction;
use crate::oracle::format::{HistoryFileError, read_run_history};
use crate::oracle::{CheckerReport, History, no_lost_ack, parse_external_result};
use crate::runspec::vars::{VarError, Vars};
use crate::runspec::{Binding, CheckerSpec, FaultStep};
use crate::session::event::{self, Event, millis};
use crate::session::journal::{Journal, JournalError, Scope};
use crate::session::label::CommandRole;

/// The workload's name among the iteration's commands (its role).
const WORKLOAD: &str = CommandRole::Workload.as_str();

mod condition;
mod faults;
mod schedule;
mod setup;
mod watch;

const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);
const DEFAULT_LANDING_WITHIN: Duration = Duration::from_secs(5);
const RETRY_EVERY: Duration = Duration::from_millis(200);
const DEFAULT_STATUS_EVERY: Duration = Duration::from_secs(30);
/// How long a node may take to run `true` before it counts as unreachable.
const NODE_ANSWERS_WITHIN: Duration = Duration::from_secs(15);
/// How often the services are looked at while the engine waits (a service that ended
/// is journaled within this of its end, when nothing else holds the engine).
const WATCH_EVERY: Duration = Duration::from_millis(100);

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
    /// The journaled approval of this binding's privileged fault actions (iptables,
    /// tmpfs mounts, Docker); without one, none of them is attempted.
    pub privileged: Option<super::privileged::Approval>,
    /// The run spec's nodes, connected before the run started.
    pub hosts: crate::host::Hosts,
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

/// Why a child did not start: refused as the uid it was to run as (said in full), or
/// anything else.
enum SpawnError {
    Denied(String),
    Engine(EngineError),
}

impl From<EngineError> for SpawnError {
    fn from(e: EngineError) -> Self {
        SpawnError::Engine(e)
    }
}

/// The `EACCES` (or `EPERM`) a start failed with, if it did.
fn denied(e: &exec::ExecError) -> Option<&std::io::Error> {
    match e {
        exec::ExecError::Cgroup { source, .. } | exec::ExecError::Spawn { source, .. }
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            Some(source)
        }
        _ => None,
    }
}

/// The account name of `uid`, when the user database has one.
fn account_name(uid: u32) -> Option<String> {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name)
}

/// What happened to one planned fault.
#[derive(Debug, Clone, Default)]
pub struct FaultFacts {
    pub id: String,
    /// The fault epoch it was injected under (what the history's `fault_epoch` says).
    pub epoch: Option<u64>,
    pub injected: bool,
    /// The injector side saw the effect (e.g. /proc state).
    pub injector_landed: bool,
    /// Every declared signal was observed inside the window.
    pub declared_landed: bool,
    pub victim_side_seen: bool,
    pub healed: bool,
    /// Why its injection failed (a refused target, a failing inject command): it was
    /// never injected, which the verdict says instead of a missing landing signal.
    pub inject_failed: Option<String>,
    /// One line per observation, for the report.
    pub detail: Vec<String>,
    pub cites: Vec<u64>,
}

impl FaultFacts {
    /// The one definition of a proven landing, which the verdict, the `fault-proof`
    /// record and every artifact drawn from it share: injected, and every declared
    /// signal seen in its window (injector-side evidence alone proves nothing).
    pub fn proven(&self) -> bool {
        self.injected && self.declared_landed
    }
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
    /// Services that ended on their own before the workload did, each with its
    /// `service-exited` record (those a fault explains included, marked so).
    pub services_ended: Vec<(event::ServiceExited, u64)>,
}

impl IterationFacts {
    /// The services that ended with no fault to explain it, each said in one line
    /// with its record.
    pub fn unexplained_ends(&self) -> impl Iterator<Item = (String, u64)> + '_ {
        self.services_ended
            .iter()
            .filter(|(e, _)| e.explained_by.is_none())
            .map(|(e, seq)| (e.said(), *seq))
    }
}

/// An injected fault that can explain a service's end: its record, id, and the pid it
/// aimed at; `any` when it may have ended any process (a `command` fault, a container
/// kill, a signal to a pid that is no service's group).
struct Explainer {
    seq: u64,
    fault: String,
    pid: Option<i32>,
    any: bool,
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
    /// The cgroup this iteration's services' cgroups are made in, once made.
    cgroup: Option<PathBuf>,
    /// Faults injected so far that can end a service.
    explainers: Vec<Explainer>,
    /// Services already journaled as ended.
    ended: std::collections::BTreeSet<String>,
    /// The workload has started (a service's end is then `during: workload`).
    workload_started: bool,
    facts: IterationFacts,
}

impl Runner<'_> {
    fn log(&mut self, event: Event) -> Result<u64, EngineError> {
        Ok(self.journal.append(self.ctx.scope.clone(), event)?.seq)
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

    /// `text` expanded with `${artifacts}` naming `dir` (a `user:` service's own).
    fn expand_with_artifacts(&mut self, text: &str, dir: &Path) -> Result<String, EngineError> {
        let shared = self.ctx.artifacts.display().to_string();
        self.ctx.vars.set("artifacts", dir.display().to_string());
        let expanded = self.expand(text);
        self.ctx.vars.set("artifacts", shared);
        expanded
    }

    /// A `user:` service's own `artifacts/<service>/`, owned by its uid; why not, when
    /// it cannot be made.
    fn own_artifacts(
        &self,
        service: &crate::runspec::model::Service,
        identity: &exec::Identity,
    ) -> Result<PathBuf, String> {
        crate::session::dir::make_owned(
            &self.ctx.artifacts,
            &service.name,
            identity.uid,
            identity.gid,
        )
        .map_err(|e| format!("cannot make its artifacts directory: {e}"))
    }

    /// Why a `user:` service's uid cannot reach what it needs, when it cannot: its
    /// working directory (the child changes into it before it runs anything) and,
    /// when its `command` (expanded: a var may hold `${artifacts}`) names it, its own
    /// artifacts directory `own`. A private directory above them that faultline did
    /// not create and does not change keeps that uid out.
    fn unreachable_for(
        &self,
        user: &str,
        identity: &exec::Identity,
        own: &Path,
        command: &str,
    ) -> Option<String> {
        let name = account_name(identity.uid).unwrap_or_else(|| user.to_string());
        let blocked = |dir: &Path| {
            crate::session::roles::blocked_ancestor(identity.uid, identity.gid, &name, dir)
        };
        if let Some(why) = blocked(&self.ctx.cwd) {
            return Some(format!(
                "{why}, so it cannot start in its working directory {}",
                self.ctx.cwd.display()
            ));
        }
        let names_own = command.contains(&own.display().to_string());
        if names_own && let Some(why) = blocked(own) {
            return Some(format!(
                "{why}, so it cannot reach its artifacts directory {}",
                own.display()
            ));
        }
        None
    }

    /// The seed ends before anything starts: `service` cannot run as its user.
    fn user_missing(&mut self, service: &str, why: &str) -> Result<bool, EngineError> {
        let why = crate::sanitize::line(why);
        let name = format!("service {service} runs as its user");
        let seq = self.log(Event::Precondition(event::Precondition {
            name: format!("{name}: {why}"),
            ok: false,
            cites: Vec::new(),
        }))?;
        self.facts.preconditions.push(seq);
        self.facts.env_missing = Some((format!("{name}: {why}"), seq));
        Ok(false)
    }

    async fn spawn(
        &mut self,
        node: Option<&str>,
        name: &str,
        command: &str,
    ) -> Result<Running, EngineError> {
        if node.is_some() {
            return self.spawn_remote(node, name, command).await;
        }
        self.spawn_own(name, command)
    }

    /// Starts `command` on a node over SSH, journaled like a local child (with its
    /// node, so `faultline heal` reaches the group there).
    async fn spawn_remote(
        &mut self,
        node: Option<&str>,
        name: &str,
        command: &str,
    ) -> Result<Running, EngineError> {
        let host = self.ctx.hosts.get(node).map_err(|e| self.io(e))?;
        if host.is_local() {
            return self.spawn_own(name, command);
        }
        let spec = CommandSpec {
            name: name.to_string(),
            command: command.to_string(),
            cwd: self.ctx.cwd.clone(),
            env: Vec::new(),
        };
        let running = exec::spawn_remote(host.clone(), &spec, &self.ctx.logs)
            .await
            .map_err(|e| self.io(e))?;
        let started = host.start_time(running.pgid).await;
        self.log(Event::CommandStarted(event::CommandStarted {
            name: name.to_string(),
            command: command.to_string(),
            pgid: running.pgid,
            started,
            log: running.stderr_log.display().to_string(),
            node: Some(host.node().to_string()),
        }))?;
        Ok(running)
    }

    /// [`Self::spawn_in`] for a command run as faultline's own uid.
    fn spawn_own(&mut self, name: &str, command: &str) -> Result<Running, EngineError> {
        self.spawn_in(name, command, Vec::new(), None, None)
            .map_err(|e| match e {
                SpawnError::Engine(e) => e,
                SpawnError::Denied(why) => self.io(why),
            })
    }

    fn spawn_in(
        &mut self,
        name: &str,
        command: &str,
        env: Vec<(String, String)>,
        cgroup: Option<exec::cgroup::Cgroup>,
        user: Option<exec::Identity>,
    ) -> Result<Running, SpawnError> {
        let spec = CommandSpec {
            name: name.to_string(),
            command: command.to_string(),
            cwd: self.ctx.cwd.clone(),
            env,
        };
        let path = cgroup.as_ref().map(|c| c.path().to_path_buf());
        let running = match exec::spawn_in(&spec, &self.ctx.logs, cgroup, user) {
            Ok(running) => running,
            Err(e) => {
                // Nothing started in it: it is removed at once.
                if let Some(path) = &path {
                    let result = exec::cgroup::remove(path);
                    self.cgroup_removed(path, result)?;
                }
                return Err(match (user, denied(&e)) {
                    (Some(identity), Some(source)) => {
                        SpawnError::Denied(self.denied_as(identity, path.as_deref(), source))
                    }
                    _ => SpawnError::Engine(self.io(e)),
                });
            }
        };
        self.facts.pgids.push(running.pgid);
        self.log(Event::CommandStarted(event::CommandStarted {
            name: name.to_string(),
            command: command.to_string(),
            pgid: running.pgid,
            started: exec::start_time(running.pgid),
            log: running.stderr_log.display().to_string(),
            node: None,
        }))?;
        Ok(running)
    }

    /// A child refused as `identity` (EACCES): the uid, the working directory it was
    /// to start in and the cgroup it was to join, and why the uid cannot traverse the
    /// directory when a directory above it says so.
    fn denied_as(
        &self,
        identity: exec::Identity,
        cgroup: Option<&Path>,
        source: &std::io::Error,
    ) -> String {
        let name = account_name(identity.uid).unwrap_or_else(|| identity.uid.to_string());
        let cwd = &self.ctx.cwd;
        let mut text = format!(
            "cannot start as uid {} ({name}) in working directory {}",
            identity.uid,
            cwd.display()
        );
        if let Some(path) = cgroup {
            text.push_str(&format!(" and cgroup {}", path.display()));
        }
        text.push_str(&format!(": {source}"));
        if let Some(why) =
            crate::session::roles::blocked_ancestor(identity.uid, identity.gid, &name, cwd)
        {
            text.push_str(&format!(" ({why})"));
        }
        text
    }

    /// Journals a full logs filesystem after `running` ended (ENOSPC reached the child).
    fn note_full_logs(&mut self, running: &Running) -> Result<(), EngineError> {
        if let Some(error) = running.logs_full() {
            self.log(Event::LogsFull(event::LogsFull {
                name: running.name.clone(),
                error: error.to_string(),
            }))?;
        }
        Ok(())
    }

    /// Runs `command` to completion within `deadline`; journals and returns the outcome.
    async fn run_once(
        &mut self,
        name: &str,
        command: &str,
        deadline: Duration,
    ) -> Result<(Outcome, u64), EngineError> {
        self.run_on(None, name, command, deadline).await
    }

    /// [`Self::run_once`] on a node (`None`: this machine).
    async fn run_on(
        &mut self,
        node: Option<&str>,
        name: &str,
        command: &str,
        deadline: Duration,
    ) -> Result<(Outcome, u64), EngineError> {
        let mut running = self.spawn(node, name, command).await?;
        let outcome = self
            .guard(running.wait(deadline))
            .await?
            .map_err(|e| self.io(e))?;
        let seq = self.exited(name, &outcome, &running)?;
        Ok((outcome, seq))
    }

    fn exited(
        &mut self,
        name: &str,
        outcome: &Outcome,
        running: &Running,
    ) -> Result<u64, EngineError> {
        let seq = self.log(Event::CommandExited(event::CommandExited {
            name: name.to_string(),
            outcome: format!("{outcome:?}"),
            elapsed_ms: millis(running.started.elapsed()),
        }))?;
        self.note_full_logs(running)?;
        Ok(seq)
    }

    /// [`Self::run_on`] with the services looked at every [`WATCH_EVERY`] while the
    /// command runs: a service that ended with no fault to explain it cuts the command
    /// short (its records come back), so a health check that blocks does not hide a
    /// member that died at once.
    async fn run_watching(
        &mut self,
        node: Option<&str>,
        name: &str,
        command: &str,
        deadline: Duration,
    ) -> Result<(Outcome, u64, Vec<u64>), EngineError> {
        let mut running = self.spawn(node, name, command).await?;
        let limit = tokio::time::Instant::now() + deadline;
        let (outcome, ended) = loop {
            let slice =
                WATCH_EVERY.min(limit.saturating_duration_since(tokio::time::Instant::now()));
            let done = if slice.is_zero() {
                Some(self.guard(running.wait(Duration::ZERO)).await?)
            } else {
                self.guard(running.wait_for(slice)).await?
            };
            if let Some(done) = done {
                break (done.map_err(|e| self.io(e))?, Vec::new());
            }
            let ended = self.watch_services()?;
            if !ended.is_empty() {
                let cut = self.guard(running.wait(Duration::ZERO)).await?;
                break (cut.map_err(|e| self.io(e))?, ended);
            }
        };
        let seq = self.exited(name, &outcome, &running)?;
        Ok((outcome, seq, ended))
    }

    /// Retries `command` until it exits 0 or `within` passes (`condition.rs`).
    async fn until_ok(
        &mut self,
        node: Option<&str>,
        name: &str,
        command: &str,
        within: Duration,
        watch: bool,
    ) -> Result<(bool, u64, Vec<u64>), EngineError> {
        let mut condition = condition::Command {
            runner: self,
            node,
            name,
            command,
            watch,
        };
        // Boxed for the same reason as the schedule.
        Box::pin(condition::until_ok(&mut condition, within)).await
    }

    async fn cluster_up(&mut self, binding: &Binding) -> Result<bool, EngineError> {
        let services = binding.cluster.iter().flat_map(|c| c.services.iter());
        for service in services {
            if let Some(node) = service.node.as_deref().filter(|n| self.remote(n)) {
                if service.faketime || service.user.is_some() {
                    return Err(self.io(format!(
                        "service `{}` runs on node {node}: `faketime` and `user` are for \
                         services on this machine",
                        service.name
                    )));
                }
                let command = self.expand(&service.run)?;
                let running = self
                    .spawn_remote(Some(node), &service.name, &command)
                    .await?;
                self.keep_service(&service.name, running);
                continue;
            }
            let env = if service.faketime {
                // faultline's own directory in the shared one: nobody else writes in it.
                let euid = nix::unistd::geteuid().as_raw();
                let egid = nix::unistd::getegid().as_raw();
                let control =
                    crate::session::dir::make_owned(&self.ctx.artifacts, "faketime", euid, egid)
                        .map_err(|e| {
                            self.io(format!("service `{}` (faketime: true): {e}", service.name))
                        })?
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
            let user = match service.user.as_deref().map(exec::identity_of) {
                None => None,
                Some(Ok(identity)) => {
                    // `${<name>_uid}` lets a `net` rule match the member's packets.
                    self.ctx
                        .vars
                        .set(&format!("{}_uid", service.name), identity.uid.to_string());
                    Some(identity)
                }
                Some(Err(why)) => return self.user_missing(&service.name, &why),
            };
            let command = match (&user, service.user.as_deref()) {
                (Some(identity), Some(name)) => {
                    let own = match self.own_artifacts(service, identity) {
                        Ok(own) => own,
                        Err(why) => return self.user_missing(&service.name, &why),
                    };
                    // `${artifacts}` is its own directory, owned by its user.
                    let command = self.expand_with_artifacts(&service.run, &own)?;
                    if let Some(why) = self.unreachable_for(name, identity, &own, &command) {
                        return self.user_missing(&service.name, &why);
                    }
                    command
                }
                _ => self.expand(&service.run)?,
            };
            let cgroup = self.service_cgroup(&service.name)?;
            let running = match self.spawn_in(&service.name, &command, env, cgroup, user) {
                Ok(running) => running,
                // Refused as its uid all the same (an ACL, a security module, a
                // directory that changed since it was looked at): said as such.
                Err(SpawnError::Denied(why)) => return self.user_missing(&service.name, &why),
                Err(SpawnError::Engine(e)) => return Err(e),
            };
            self.keep_service(&service.name, running);
        }
        if let Some(health) = binding.cluster.as_ref().and_then(|c| c.health.as_ref()) {
            let command = self.expand(&health.run)?;
            let within = health.deadline.map_or(DEFAULT_DEADLINE, |d| d.0);
            let node = health.node.as_deref();
            let (ok, seq, ended) = self
                .until_ok(node, "health", &command, within, true)
                .await?;
            let seq = self.log(Event::Precondition(event::Precondition {
                name: "cluster up and healthy".into(),
                ok,
                cites: std::iter::once(seq).chain(ended).collect(),
            }))?;
            self.facts.preconditions.push(seq);
            if !ok {
                self.facts.env_missing = Some(("cluster up and healthy".into(), seq));
                return Ok(false);
            }
        }
        for check in &binding.preconditions {
            let command = self.expand(&check.run)?;
            let within = check.deadline.map_or(DEFAULT_DEADLINE, |d| d.0);
            let node = check.node.as_deref();
            let (outcome, seq) = self.run_on(node, &check.name, &command, within).await?;
            let ok = outcome == Outcome::Exited(0);
            let seq = self.log(Event::Precondition(event::Precondition {
                name: check.name.clone(),
                ok,
                cites: vec![seq],
            }))?;
            self.facts.preconditions.push(seq);
            if !ok {
                self.facts.env_missing = Some((check.name.clone(), seq));
                return Ok(false);
            }
        }
        // A service that already ended leaves the cluster short before the workload.
        let ended = self.watch_services()?;
        if !ended.is_empty() {
            let name = "every service running when the workload starts";
            let seq = self.log(Event::Precondition(event::Precondition {
                name: name.into(),
                ok: false,
                cites: ended,
            }))?;
            self.facts.preconditions.push(seq);
            self.facts.env_missing = Some((name.into(), seq));
            return Ok(false);
        }
        Ok(true)
    }

    fn keep_service(&mut self, name: &str, running: Running) {
        self.facts.service_logs.push(running.stderr_log.clone());
        self.facts.service_logs.push(running.stdout_log.clone());
        // `${<name>_pgid}` lets `command` faults aim at a service's process group.
        self.ctx
            .vars
            .set(&format!("{name}_pgid"), running.pgid.to_string());
        self.services.insert(name.to_string(), running);
    }

    /// Whether `node` is reached over SSH (an unknown or unreachable name counts as
    /// remote: starting on it fails, saying why).
    fn remote(&self, node: &str) -> bool {
        self.ctx
            .hosts
            .get(Some(node))
            .map_or(true, |host| !host.is_local())
    }

    /// Each node this binding uses answers over SSH; the first that does not ends the
    /// seed as a missing environment, naming it.
    async fn nodes_reachable(&mut self, binding: &Binding) -> Result<bool, EngineError> {
        let mut nodes: Vec<String> = crate::runspec::nodes::named(binding)
            .into_iter()
            .filter(|(field, _)| !field.starts_with("arms."))
            .map(|(_, node)| node)
            .collect();
        nodes.sort();
        nodes.dedup();
        for node in nodes {
            let answer = match self.ctx.hosts.get(Some(&node)) {
                Err(why) => Err(why),
                Ok(host) if host.is_local() => continue,
                Ok(host) => host
                    .run("true", NODE_ANSWERS_WITHIN)
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|out| {
                        out.ok()
                            .then_some(())
                            .ok_or_else(|| format!("`true` failed: {}", out.said()))
                    }),
            };
            let name = match &answer {
                Ok(()) => format!("node {node} answers over ssh"),
                Err(why) => format!("node {node} answers over ssh: {why}"),
            };
            let seq = self.log(Event::Precondition(event::Precondition {
                name: name.clone(),
                ok: answer.is_ok(),
                cites: Vec::new(),
            }))?;
            self.facts.preconditions.push(seq);
            if answer.is_err() {
                self.facts.env_missing = Some((name, seq));
                return Ok(false);
            }
        }
        Ok(true)
    }

    async fn cluster_down(&mut self) -> Result<(), EngineError> {
        let services = std::mem::take(&mut self.services);
        for (name, mut running) in services {
            let _ = running.terminate().await;
            self.log(Event::ServiceStopped(event::ServiceStopped {
                name: name.clone(),
                pgid: running.pgid,
            }))?;
            self.note_full_logs(&running)?;
            if let Some(cgroup) = running.cgroup.take() {
                self.remove_cgroup(cgroup.path().to_path_buf()).await?;
            }
        }
        if let Some(parent) = self.cgroup.take() {
            self.remove_cgroup(parent).await?;
        }
        Ok(())
    }

    /// Runs each step once; the first that fails ends the seed as a missing
    /// precondition when `required` (the `before` steps), or is only journaled.
    async fn steps(
        &mut self,
        steps: &[crate::runspec::Check],
        required: bool,
    ) -> Result<bool, EngineError> {
        for step in steps {
            let command = self.expand(&step.run)?;
            let within = step.deadline.map_or(DEFAULT_DEADLINE, |d| d.0);
            let node = step.node.as_deref();
            let (outcome, seq) = self.run_on(node, &step.name, &command, within).await?;
            if required {
                let ok = outcome == Outcome::Exited(0);
                let seq = self.log(Event::Precondition(event::Precondition {
                    name: step.name.clone(),
                    ok,
                    cites: vec![seq],
                }))?;
                self.facts.preconditions.push(seq);
                if !ok {
                    self.facts.env_missing = Some((step.name.clone(), seq));
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Teardown steps (not after an interrupt: every command would be cut short),
    /// then the artifacts cap — after the services stopped, so none still writes
    /// where the cap removes.
    async fn tidy(&mut self, binding: &Binding, interrupted: bool) -> Result<(), EngineError> {
        if !interrupted {
            self.steps(&binding.teardown, false).await?;
        }
        let cap = binding
            .artifacts_cap
            .map_or(super::artifacts::DEFAULT_CAP, |c| c.as_u64());
        let mut keep = vec![
            self.ctx.artifacts.join("final.json"),
            self.ctx.artifacts.join("fault_epoch"),
            self.ctx.artifacts.join("replicas"),
        ];
        if let Some(history) = &binding.history {
            let path = self.expand(&history.path)?;
            keep.push(self.ctx.cwd.join(path));
        }
        if let Some(pruned) = super::artifacts::prune(&self.ctx.artifacts, cap, &keep) {
            self.log(Event::ArtifactsPruned(pruned))?;
        }
        Ok(())
    }

    async fn body(&mut self, binding: &Binding) -> Result<(), EngineError> {
        if !self.nodes_reachable(binding).await? {
            return Ok(());
        }
        if !self.steps(&binding.before, true).await? {
            return Ok(());
        }
        self.prepare_faults(binding).await?;
        if !self.cluster_up(binding).await? {
            return Ok(());
        }
        let Some(workload) = &binding.workload else {
            return Ok(());
        };
        let command = self.expand(&workload.run)?;
        if let Some(history) = binding
            .history
            .as_ref()
            .filter(|h| h.format == crate::runspec::model::HistoryFormat::Jsonl)
        {
            let path = self.expand(&history.path)?;
            let path = self.ctx.cwd.join(path);
            self.log(Event::HistoryLive(event::HistoryLive {
                path: path.display().to_string(),
                fields: history.fields.clone(),
            }))?;
        }
        let client = self
            .spawn(workload.node.as_deref(), WORKLOAD, &command)
            .await?;
        self.workload_started = true;
        let started = client.started;
        if let Some(expected) = workload.expected_duration {
            self.log(Event::CheckpointStart(event::CheckpointStart {
                command: WORKLOAD.into(),
                expected_ms: millis(expected.0),
            }))?;
        }
        // Kept with the services so every exit path stops it.
        self.services.insert(WORKLOAD.into(), client);
        let faults: Vec<&FaultStep> = binding.faults.iter().map(|f| &f.value).collect();
        let deadline = workload.deadline.map_or(DEFAULT_DEADLINE, |d| d.0);
        // Boxed: the schedule's future nests the nemeses' own, and inline it takes the
        // session's future past the compiler's layout depth limit.
        Box::pin(schedule::run_schedule(
            self,
            &faults,
            started.into(),
            deadline,
        ))
        .await?;
        let outcome = self.await_workload(workload, started, deadline).await?;
        let client = self.services.remove(WORKLOAD);
        let elapsed = started.elapsed();
        let seq = self.log(Event::CommandExited(event::CommandExited {
            name: WORKLOAD.into(),
            outcome: format!("{outcome:?}"),
            elapsed_ms: millis(elapsed),
        }))?;
        if let Some(client) = &client {
            self.note_full_logs(client)?;
        }
        // The last look: what ends after the workload is the cluster going down.
        self.watch_services()?;
        self.facts.workload = Some((elapsed, outcome == Outcome::Exited(0), seq));
        if workload.expected_duration.is_some() {
            self.log(Event::CheckpointEnd(event::CheckpointEnd {
                command: WORKLOAD.into(),
                elapsed_ms: millis(elapsed),
            }))?;
        }
        if outcome == Outcome::DeadlineExpired {
            self.facts.expired_step = Some(WORKLOAD.into());
        }
        if let Some(quiesce) = &binding.quiesce {
            let command = self.expand(&quiesce.run)?;
            let (quiet, seq, _) = self
                .until_ok(
                    None,
                    CommandRole::Quiesce.as_str(),
                    &command,
                    quiesce.timeout.0,
                    false,
                )
                .await?;
            let seq = self.log(Event::Quiesce(event::Quiesce {
                reached: quiet,
                cites: vec![seq],
            }))?;
            self.facts.quiesced = Some((quiet, seq));
            if !quiet {
                self.facts
                    .expired_step
                    .get_or_insert_with(|| CommandRole::Quiesce.as_str().into());
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
        let mut next_pull = std::time::Instant::now() + every;
        loop {
            let left = deadline.saturating_sub(started.elapsed());
            // Pull status only while the deadline is further away than the next pull.
            let pull_due = workload.status.is_some() && every < left;
            // The services are looked at every WATCH_EVERY; the last stretch is waited
            // in one piece so the deadline itself decides.
            let slice = (WATCH_EVERY < left).then(|| {
                let to_pull = next_pull.saturating_duration_since(std::time::Instant::now());
                if pull_due {
                    WATCH_EVERY.min(to_pull)
                } else {
                    WATCH_EVERY
                }
            });
            let Some(client) = self.services.get_mut(WORKLOAD) else {
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
                    self.watch_services()?;
                    let Some(status) = workload.status.as_ref().filter(|_| pull_due) else {
                        continue;
                    };
                    if std::time::Instant::now() < next_pull {
                        continue;
                    }
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
                    self.log(Event::StatusPull(event::StatusPull {
                        command: WORKLOAD.into(),
                        elapsed_ms: millis(started.elapsed()),
                        last_line: Some(last.clone()),
                    }))?;
                    next_pull = std::time::Instant::now() + every;
                }
            }
        }
    }

    async fn oracle(&mut self, binding: &Binding) -> Result<(), EngineError> {
        let checkers = binding.checkers();
        let Some(history) = binding.history.as_ref().filter(|_| !checkers.is_empty()) else {
            return Ok(());
        };
        for (i, dump) in checkers
            .iter()
            .filter_map(|c| c.final_state.as_ref())
            .enumerate()
        {
            let command = self.expand(dump)?;
            let name = if i == 0 {
                CommandRole::FinalState.as_str().to_string()
            } else {
                format!("final-state-{}", i + 1)
            };
            self.run_once(&name, &command, DEFAULT_DEADLINE).await?;
        }
        let path = PathBuf::from(self.expand(&history.path)?);
        // A missing history is journaled, never read as an empty (clean) one; the
        // file is read as a stream, never whole.
        let format = match history.format {
            crate::runspec::HistoryFormat::Jsonl => crate::oracle::Format::Jsonl,
            crate::runspec::HistoryFormat::Edn => crate::oracle::Format::Edn,
            crate::runspec::HistoryFormat::Porcupine => crate::oracle::Format::Porcupine,
            crate::runspec::HistoryFormat::TxnJsonl => crate::oracle::Format::TxnJsonl,
        };
        let parsed = match read_run_history(format, &path, &history.fields) {
            Err(HistoryFileError::Unreadable(e)) => {
                let path = path.display().to_string();
                self.log(Event::HistoryUnreadable(event::HistoryUnreadable {
                    path,
                    error: e.to_string(),
                }))?;
                return Ok(());
            }
            Err(HistoryFileError::Rejected(e)) => Err(e),
            Ok(h) => Ok(h),
        };
        let parsed = match parsed {
            Ok(h) => h,
            Err(e) => {
                self.log(Event::HistoryRejected(event::ErrorText {
                    error: e.to_string(),
                }))?;
                return Ok(());
            }
        };
        let mut parsed = parsed;
        // Several checkers judge the same history; the oracle is their conjunction.
        let mut reports = Vec::new();
        let mut last = None;
        for checker in checkers {
            let (report, history) = self.check(checker, parsed).await?;
            parsed = history;
            if let Some(report) = &report {
                last = Some(self.log(Event::OracleResult(event::OracleResult {
                    checker: report.checker.clone(),
                    evidence: report.evidence.clone(),
                    run: serde_json::to_value(&report.run).unwrap_or_default(),
                }))?);
            }
            reports.push(report);
        }
        if let (Some(report), Some(seq)) = (conjunction(reports), last) {
            self.facts.checker = Some((report, seq));
        }
        self.facts.history = Some(parsed);
        Ok(())
    }

    /// Runs one checker on the history (handed back, since a built-in runs off the
    /// runtime's threads); `None` when it could not judge at all (journaled).
    async fn check(
        &mut self,
        checker: &CheckerSpec,
        mut parsed: History,
    ) -> Result<(Option<CheckerReport>, History), EngineError> {
        let report = match (&checker.builtin, &checker.external) {
            (Some(name), _) if name == "no-lost-ack" => self.no_lost_ack(&parsed)?,
            // Every other built-in, with its parameters after the name. A check can
            // take its whole budget: it runs off the runtime's threads so a signal
            // is heard at once (the process exits without waiting for it).
            (Some(spec), _) => {
                let (spec_text, artifacts) = (spec.clone(), self.ctx.artifacts.clone());
                let checking = tokio::task::spawn_blocking(move || {
                    let report =
                        crate::oracle::registry::run_in_session(&spec_text, &parsed, &artifacts);
                    (report, parsed)
                });
                let (result, history) = self
                    .guard(checking)
                    .await?
                    .map_err(|e| self.io(format!("the checker stopped: {e}")))?;
                parsed = history;
                match result {
                    Ok(report) => Some(report),
                    Err(error) => {
                        self.log(Event::CheckerUnknown(event::CheckerUnknown {
                            checker: spec.to_string(),
                            error: error.to_string(),
                        }))?;
                        None
                    }
                }
            }
            (None, Some(command)) => self.external(command).await?,
            (None, None) => None,
        };
        Ok((report, parsed))
    }

    fn no_lost_ack(&mut self, history: &History) -> Result<Option<CheckerReport>, EngineError> {
        let final_path = self.ctx.artifacts.join("final.json");
        let state = crate::untrusted::read_untrusted(&final_path, crate::untrusted::READ_LIMIT)
            .map_err(|e| e.to_string())
            .and_then(|t| no_lost_ack::parse_final_state(&t));
        match state {
            Ok(state) => Ok(Some(no_lost_ack::check(history, &state))),
            Err(e) => {
                self.log(Event::FinalStateMissing(event::FinalStateMissing {
                    path: final_path.display().to_string(),
                    error: e.to_string(),
                }))?;
                Ok(None)
            }
        }
    }

    /// Runs an external checker; its last stdout line is the JSON result.
    async fn external(&mut self, command: &str) -> Result<Option<CheckerReport>, EngineError> {
        let command = self.expand(command)?;
        let (outcome, _) = self
            .run_once(CommandRole::Checker.as_str(), &command, DEFAULT_DEADLINE)
            .await?;
        let stdout_path = self.ctx.logs.join("checker.stdout.log");
        let stdout = std::fs::read_to_string(&stdout_path).map_err(|e| self.io(e))?;
        match parse_external_result(&command, &stdout) {
            Ok(report) => Ok(Some(report)),
            Err(error) => {
                self.log(Event::CheckerOutputRejected(event::CheckerOutputRejected {
                    outcome: format!("{outcome:?}"),
                    error: error.to_string(),
                }))?;
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
    // The system under test writes here as whatever uid it runs as or drops to.
    crate::session::dir::make_shared(&ctx.artifacts).map_err(|e| EngineError::Io {
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
        cgroup: None,
        explainers: Vec::new(),
        ended: Default::default(),
        workload_started: false,
        facts: IterationFacts::default(),
    };
    runner
        .ctx
        .vars
        .set("logs", runner.ctx.logs.display().to_string());
    let outcome = runner.body(binding).await;
    let down = runner.cluster_down().await;
    // After the services stopped, so none still writes into a mount being removed.
    let unmounted = runner.unmount_disks();
    let proxies = runner.stop_proxies();
    let interrupted = matches!(outcome, Err(EngineError::Interrupted { .. }));
    let tidied = runner.tidy(binding, interrupted).await;
    outcome?;
    down?;
    unmounted?;
    proxies?;
    tidied?;
    Ok(runner.facts)
}
