//! The `process` nemesis: SIGKILL, SIGTERM (then SIGKILL after a grace period), and
//! SIGSTOP … SIGCONT, aimed by pid or pidfile. Its injector-side evidence is the
//! victim's state as `/proc` shows it, never the fact that `kill(2)` returned 0.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Context, HeldFault, InjectorSeen, Nemesis, UndoRecord, Window};
use crate::duration::Dur;
use crate::exec;
use crate::host::Host;

/// How long a `command` fault target may take to name its victim.
const TARGET_DEADLINE: Duration = Duration::from_secs(5);

/// Who receives the signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Pid(i32),
    Pidfile(PathBuf),
}

/// What is done to the victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Kill,
    /// SIGTERM; healing escalates to SIGKILL if the victim outlives `grace`.
    Term {
        grace: Duration,
    },
    /// SIGSTOP; healing sends SIGCONT.
    Pause,
}

#[derive(Debug, thiserror::Error)]
pub enum ProcessFaultError {
    #[error("pidfile {path}: {message}")]
    Pidfile { path: PathBuf, message: String },
    #[error("pid {pid}: no such process to aim at")]
    NoVictim { pid: i32 },
    #[error("signal {signal} to pid {pid}: {errno}")]
    Signal {
        pid: i32,
        signal: Signal,
        errno: nix::errno::Errno,
    },
    #[error("{0}")]
    Host(#[from] crate::host::HostError),
}

/// What `/proc` says about the victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcState {
    Running,
    Stopped,
    /// Exited and not yet reaped.
    Zombie,
    Gone,
}

/// The state a `/proc/<pid>/stat` line says (`None`: the file is gone).
pub fn state_of(stat: Option<&str>) -> ProcState {
    let Some(stat) = stat else {
        return ProcState::Gone;
    };
    // The command name is parenthesised and may itself hold spaces or parentheses.
    match stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
    {
        Some('T' | 't') => ProcState::Stopped,
        Some('Z' | 'X') => ProcState::Zombie,
        Some(_) => ProcState::Running,
        None => ProcState::Gone,
    }
}

/// An injected process fault. Dropping it unhealed heals it.
#[derive(Debug)]
pub struct Injected {
    pub pid: i32,
    pub action: Action,
    /// The host the victim runs on.
    pub host: Arc<Host>,
    /// The victim's start time, read before the signal: its undo record's proof that
    /// a pid is still the same process.
    pub started: Option<u64>,
    healed: bool,
}

/// Aims `action` at `target` on `host` and fires it: the pid (or pidfile) is the
/// host's, and so is the `/proc` its landing is read from.
pub async fn inject(
    host: Arc<Host>,
    target: &Target,
    action: Action,
) -> Result<Injected, ProcessFaultError> {
    let pid = match target {
        Target::Pid(pid) => *pid,
        Target::Pidfile(path) => {
            let pidfile = |message: String| ProcessFaultError::Pidfile {
                path: path.clone(),
                message,
            };
            let shown = path.display().to_string();
            let text = host.read_file(&shown).await.map_err(|e| {
                let message = e.message();
                // The error names the file already.
                let said = message
                    .strip_prefix(&format!("{shown}: "))
                    .unwrap_or(&message);
                pidfile(said.to_string())
            })?;
            let text = String::from_utf8_lossy(&text);
            let first = text.lines().next().unwrap_or("").trim();
            first
                .parse::<i32>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| {
                    pidfile(format!("line 1: expected a positive pid, found {first:?}"))
                })?
        }
    };
    let stat = host.proc_stat(pid).await;
    if matches!(
        state_of(stat.as_deref()),
        ProcState::Gone | ProcState::Zombie
    ) {
        return Err(ProcessFaultError::NoVictim { pid });
    }
    let started = stat.as_deref().and_then(crate::host::parse_start_time);
    host.signal(pid, signal_of(action)).await?;
    Ok(Injected {
        pid,
        action,
        host,
        started,
        healed: false,
    })
}

fn signal_of(action: Action) -> Signal {
    match action {
        Action::Kill => Signal::SIGKILL,
        Action::Term { .. } => Signal::SIGTERM,
        Action::Pause => Signal::SIGSTOP,
    }
}

/// Injector-side landing evidence: did the victim reach the state the action implies?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub landed: bool,
    pub state: ProcState,
    pub detail: String,
}

impl Injected {
    /// The victim's state now.
    pub async fn state_now(&self) -> ProcState {
        state_of(self.host.proc_stat(self.pid).await.as_deref())
    }

    /// Looks at the victim now.
    pub async fn observe(&self) -> Observation {
        self.observation(self.state_now().await)
    }

    fn observation(&self, state: ProcState) -> Observation {
        let landed = match self.action {
            Action::Pause => state == ProcState::Stopped,
            Action::Kill | Action::Term { .. } => {
                matches!(state, ProcState::Gone | ProcState::Zombie)
            }
        };
        Observation {
            landed,
            state,
            detail: format!("pid {} is {:?} in /proc", self.pid, state),
        }
    }

    /// Looks at the victim until it reached the state the action implies or
    /// `within` passes.
    pub async fn await_landing(&self, within: Duration) -> Observation {
        // Each look may be a round trip to a node: polled at a pace that suits both.
        super::poll_until_async(
            within,
            Duration::from_millis(if self.host.is_local() { 20 } else { 50 }),
            async || self.observe().await,
            |s| s.landed,
        )
        .await
    }

    /// Reverses what can be reversed: SIGCONT a paused victim; SIGKILL a victim that
    /// outlived its SIGTERM grace. A killed process is restarted by the cluster, not here.
    pub async fn heal(mut self) -> Result<String, ProcessFaultError> {
        let outcome = self.heal_now().await;
        self.healed = true;
        outcome
    }

    async fn heal_now(&self) -> Result<String, ProcessFaultError> {
        match self.action {
            Action::Pause => match self.state_now().await {
                ProcState::Gone | ProcState::Zombie => {
                    Ok(format!("pid {} exited while paused", self.pid))
                }
                _ => {
                    self.host.signal(self.pid, Signal::SIGCONT).await?;
                    Ok(format!(
                        "SIGCONT sent to pid {}{}",
                        self.pid,
                        self.host.place()
                    ))
                }
            },
            Action::Term { grace } => {
                let seen = self.await_landing(grace).await;
                if seen.landed {
                    Ok(format!("pid {} exited after SIGTERM", self.pid))
                } else {
                    self.host.signal(self.pid, Signal::SIGKILL).await?;
                    Ok(format!(
                        "pid {} outlived SIGTERM by {grace:?}: SIGKILL sent",
                        self.pid
                    ))
                }
            }
            Action::Kill => Ok(format!("nothing to undo for SIGKILL of pid {}", self.pid)),
        }
    }
}

impl Drop for Injected {
    fn drop(&mut self) {
        // Last line of defence: never leave a victim stopped or a SIGTERM half done.
        if self.healed {
            return;
        }
        let signal = match self.action {
            Action::Pause => Signal::SIGCONT,
            Action::Term { .. } => Signal::SIGKILL,
            Action::Kill => return,
        };
        let pid = self.pid;
        crate::host::undo_on_drop(&self.host, move |host| {
            Box::pin(async move {
                let _ = host.signal(pid, signal).await;
            })
        });
    }
}

/// ` on node NAME` for a host that is a node; nothing for this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum SignalName {
    #[serde(rename = "SIGKILL")]
    Kill,
    #[serde(rename = "SIGTERM")]
    Term,
    #[serde(rename = "SIGSTOP")]
    Stop,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessFaultSpec {
    pub signal: SignalName,
    pub target: TargetSpec,
    /// SIGTERM only: time before SIGKILL.
    pub grace: Option<Dur>,
    /// Where a `pid` / `pidfile` / `command` target lives; a `service` target is on
    /// its service's node.
    pub node: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
pub enum TargetSpec {
    Service(String),
    Pid(i32),
    Pidfile(String),
    /// Asked at injection time: the last line it prints is a service name or a pid.
    Command(String),
}

impl Nemesis for ProcessFaultSpec {
    type Held = Injected;

    fn node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    fn ends_processes(&self) -> bool {
        self.signal != SignalName::Stop
    }

    async fn inject<C: Context>(
        &self,
        fault: &str,
        cx: &mut C,
    ) -> Result<Result<Injected, String>, C::Error> {
        let target = match victim(fault, &self.target, cx).await? {
            Ok(target) => target,
            Err(why) => return Ok(Err(why)),
        };
        let action = match self.signal {
            SignalName::Kill => Action::Kill,
            SignalName::Term => Action::Term {
                grace: self.grace.map_or(Duration::from_secs(5), |d| d.0),
            },
            SignalName::Stop => Action::Pause,
        };
        // A service's victim is on the service's node; a pid or pidfile on `node`.
        let node = match &self.target {
            TargetSpec::Service(service) => cx.service(service).and_then(|s| s.node),
            TargetSpec::Command(_) => match &target {
                Target::Pid(pid) => cx
                    .members()
                    .into_iter()
                    .find_map(|m| cx.service(&m).filter(|s| s.pgid == *pid))
                    .and_then(|s| s.node)
                    .or_else(|| self.node.clone()),
                Target::Pidfile(_) => self.node.clone(),
            },
            _ => self.node.clone(),
        };
        let host = match cx.host(node.as_deref()) {
            Ok(host) => host,
            Err(why) => return Ok(Err(why)),
        };
        Ok(cx
            .guard(inject(host, &target, action))
            .await?
            .map_err(|e| e.to_string()))
    }
}

/// The process a process fault aims at. A `command` target is asked at injection
/// time (the current leader, say): the last line it prints names a service of the
/// cluster or a pid; anything else fails the injection, saying what it printed.
async fn victim<C: Context>(
    fault: &str,
    target: &TargetSpec,
    cx: &mut C,
) -> Result<Result<Target, String>, C::Error> {
    let service = match target {
        TargetSpec::Pid(pid) => return Ok(Ok(Target::Pid(*pid))),
        TargetSpec::Pidfile(path) => {
            return Ok(Ok(Target::Pidfile(PathBuf::from(cx.expand(path)?))));
        }
        TargetSpec::Service(name) => name.clone(),
        TargetSpec::Command(command) => {
            let command = cx.expand(command)?;
            let name = format!("{fault}-target");
            let ran = cx.run_once(&name, &command, TARGET_DEADLINE).await?;
            let named = ran.stdout.last().map_or("", String::as_str);
            if ran.outcome != exec::Outcome::Exited(0) {
                return Ok(Err(format!(
                    "target command `{}` failed ({}), {}",
                    crate::sanitize::line(&command),
                    ended(ran.outcome),
                    printed(&ran.stdout, &ran.stderr)
                )));
            }
            let members = cx.members();
            if !members.iter().any(|m| m == named) {
                return Ok(match named.parse::<i32>() {
                    Ok(pid) if pid > 0 => Ok(Target::Pid(pid)),
                    _ => Err(format!(
                        "target command `{}` printed `{named}`: neither a service of the \
                         cluster ({}) nor a pid",
                        crate::sanitize::line(&command),
                        members.join(", ")
                    )),
                });
            }
            named.to_string()
        }
    };
    Ok(match cx.service(&service) {
        Some(running) => Ok(Target::Pid(running.pgid)),
        None => Err(format!(
            "fault target service `{service}` is not in the cluster"
        )),
    })
}

/// How a target command ended, in words: `exited 1`, `killed by signal 9 (SIGKILL)`,
/// `still running after 5 s (stopped)`.
fn ended(outcome: exec::Outcome) -> String {
    match outcome {
        exec::Outcome::Exited(code) => format!("exited {code}"),
        exec::Outcome::Signaled(sig) => match Signal::try_from(sig) {
            Ok(name) => format!("killed by signal {sig} ({name})"),
            Err(_) => format!("killed by signal {sig}"),
        },
        exec::Outcome::DeadlineExpired => format!(
            "still running after {} s (stopped)",
            TARGET_DEADLINE.as_secs()
        ),
    }
}

/// What a command printed, from the last lines of its stdout and stderr (already
/// sanitized and bounded): `printing `a` `b` on stdout and `c` on stderr`.
fn printed(stdout: &[String], stderr: &[String]) -> String {
    let quoted = |lines: &[String]| {
        lines
            .iter()
            .map(|l| format!("`{}`", l.replace('`', "'")))
            .collect::<Vec<_>>()
            .join(" ")
    };
    match (stdout.is_empty(), stderr.is_empty()) {
        (true, true) => "printing nothing".to_string(),
        (false, true) => format!("printing {} on stdout", quoted(stdout)),
        (true, false) => format!("printing {} on stderr", quoted(stderr)),
        (false, false) => format!(
            "printing {} on stdout and {} on stderr",
            quoted(stdout),
            quoted(stderr)
        ),
    }
}

impl HeldFault for Injected {
    type Undo = ProcessUndo;

    fn pid(&self) -> Option<i32> {
        Some(self.pid)
    }

    fn undo(&self) -> ProcessUndo {
        ProcessUndo {
            pid: self.pid,
            action: UndoAction::of(self.action),
            started: self.started,
            node: (!self.host.is_local()).then(|| self.host.node().to_string()),
        }
    }

    async fn probe<C: Context>(
        &self,
        window: Window,
        cx: &C,
    ) -> Result<Option<InjectorSeen>, C::Error> {
        // /proc answers at once; a short window covers a slow SIGTERM handler.
        let s = cx
            .guard(self.await_landing(window.clip(Duration::from_secs(2))))
            .await?;
        Ok(Some(InjectorSeen {
            landed: s.landed,
            text: s.detail,
            detail: json!({"state": format!("{:?}", s.state)}),
        }))
    }

    async fn heal<C: Context>(self, _cx: &C) -> Result<String, String> {
        Injected::heal(self).await.map_err(|e| e.to_string())
    }
}

/// The victim and what was done to it; the journal holds these fields bare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessUndo {
    pub pid: i32,
    pub action: UndoAction,
    #[serde(default)]
    pub started: Option<u64>,
    /// The node the victim runs on (absent: this machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl UndoRecord for ProcessUndo {
    const KEYED: bool = false;

    /// Resumes a paused victim, finishes a SIGTERM it outlived.
    fn heal(&self, fault: &str, reach: &crate::host::Reach) -> Result<String, String> {
        let host = reach
            .host(self.node.as_deref())
            .map_err(|why| format!("{fault}: {why}"))?;
        reach
            .block_on(self.heal_on(fault, &*host))
            .map_err(|why| format!("{fault}: {why}"))?
    }
}

/// What a process fault did, as its undo record keeps it: `"Kill"`, `"Term"`,
/// `"Pause"` in the journal. Journals written before this type held the action's
/// debug form (`Term { grace: 5s }`), read here as `Term`; anything else is kept
/// as written and needs no undo.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(from = "String", into = "String")]
pub enum UndoAction {
    Kill,
    Term,
    Pause,
    Unknown(String),
}

impl UndoAction {
    fn of(action: Action) -> UndoAction {
        match action {
            Action::Kill => UndoAction::Kill,
            Action::Term { .. } => UndoAction::Term,
            Action::Pause => UndoAction::Pause,
        }
    }

    /// Why this action leaves nothing to undo, in words.
    fn no_undo_words(&self) -> String {
        match self {
            UndoAction::Pause => "it was paused with SIGSTOP and is no longer stopped".into(),
            UndoAction::Kill => "it was sent SIGKILL".into(),
            UndoAction::Term => "its SIGTERM was followed".into(),
            UndoAction::Unknown(other) => {
                format!("recorded action {}", crate::sanitize::line(other))
            }
        }
    }
}

impl From<String> for UndoAction {
    fn from(s: String) -> UndoAction {
        match s.as_str() {
            "Kill" => UndoAction::Kill,
            "Pause" => UndoAction::Pause,
            t if t == "Term" || t.starts_with("Term {") => UndoAction::Term,
            _ => UndoAction::Unknown(s),
        }
    }
}

impl From<UndoAction> for String {
    fn from(a: UndoAction) -> String {
        match a {
            UndoAction::Kill => "Kill".into(),
            UndoAction::Term => "Term".into(),
            UndoAction::Pause => "Pause".into(),
            UndoAction::Unknown(s) => s,
        }
    }
}

impl ProcessUndo {
    /// [`UndoRecord::heal`] on the victim's host.
    async fn heal_on(&self, fault: &str, host: &Host) -> Result<String, String> {
        let (pid, action, place) = (self.pid, &self.action, host.place());
        let stat = host.proc_stat(pid).await;
        let now = stat.as_deref().and_then(crate::host::parse_start_time);
        if now.is_none() || now != self.started {
            return Ok(format!(
                "{fault}: pid {pid}{place} is gone; nothing to undo"
            ));
        }
        if *action == UndoAction::Pause && state_of(stat.as_deref()) == ProcState::Stopped {
            host.signal(pid, Signal::SIGCONT)
                .await
                .map(|()| format!("{fault}: SIGCONT sent to pid {pid}{place}"))
                .map_err(|e| format!("{fault}: SIGCONT to pid {pid}{place}: {e}"))
        } else if *action == UndoAction::Term {
            host.signal(pid, Signal::SIGKILL)
                .await
                .map(|()| format!("{fault}: pid {pid}{place} outlived its SIGTERM: SIGKILL sent"))
                .map_err(|e| format!("{fault}: SIGKILL to pid {pid}{place}: {e}"))
        } else {
            Ok(format!(
                "{fault}: pid {pid}{place} needs no undo ({})",
                action.no_undo_words()
            ))
        }
    }
}
