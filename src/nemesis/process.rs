//! The `process` nemesis: SIGKILL, SIGTERM (then SIGKILL after a grace period), and
//! SIGSTOP … SIGCONT, aimed by pid or pidfile. Its injector-side evidence is the
//! victim's state as `/proc` shows it, never the fact that `kill(2)` returned 0.

use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Context, HeldFault, InjectorSeen, Nemesis, UndoRecord, Window};
use crate::exec;
use crate::runspec::{ProcessFaultSpec, SignalName, TargetSpec};

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

/// Reads the state letter of `/proc/<pid>/stat`.
pub fn proc_state(pid: i32) -> ProcState {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
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

fn read_pidfile(path: &Path) -> Result<i32, ProcessFaultError> {
    let err = |message: String| ProcessFaultError::Pidfile {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let first = text.lines().next().unwrap_or("").trim();
    first
        .parse::<i32>()
        .ok()
        .filter(|pid| *pid > 0)
        .ok_or_else(|| err(format!("line 1: expected a positive pid, found {first:?}")))
}

impl Target {
    pub fn resolve(&self) -> Result<i32, ProcessFaultError> {
        let pid = match self {
            Target::Pid(pid) => *pid,
            Target::Pidfile(path) => read_pidfile(path)?,
        };
        match proc_state(pid) {
            ProcState::Gone | ProcState::Zombie => Err(ProcessFaultError::NoVictim { pid }),
            _ => Ok(pid),
        }
    }
}

fn send(pid: i32, signal: Signal) -> Result<(), ProcessFaultError> {
    kill(Pid::from_raw(pid), signal).map_err(|errno| ProcessFaultError::Signal {
        pid,
        signal,
        errno,
    })
}

/// An injected process fault. Dropping it unhealed heals it.
#[derive(Debug)]
pub struct Injected {
    pub pid: i32,
    pub action: Action,
    healed: bool,
}

/// Aims `action` at `target` and fires it.
pub fn inject(target: &Target, action: Action) -> Result<Injected, ProcessFaultError> {
    let pid = target.resolve()?;
    let signal = match action {
        Action::Kill => Signal::SIGKILL,
        Action::Term { .. } => Signal::SIGTERM,
        Action::Pause => Signal::SIGSTOP,
    };
    send(pid, signal)?;
    Ok(Injected {
        pid,
        action,
        healed: false,
    })
}

/// Injector-side landing evidence: did the victim reach the state the action implies?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub landed: bool,
    pub state: ProcState,
    pub detail: String,
}

impl Injected {
    /// Looks at the victim now.
    pub fn observe(&self) -> Observation {
        let state = proc_state(self.pid);
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

    /// Polls [`Injected::observe`] until it reports landing or `within` passes.
    pub async fn await_landing(&self, within: Duration) -> Observation {
        super::poll_until(
            within,
            Duration::from_millis(20),
            || self.observe(),
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
            Action::Pause => match proc_state(self.pid) {
                ProcState::Gone | ProcState::Zombie => {
                    Ok(format!("pid {} exited while paused", self.pid))
                }
                _ => {
                    send(self.pid, Signal::SIGCONT)?;
                    Ok(format!("SIGCONT sent to pid {}", self.pid))
                }
            },
            Action::Term { grace } => {
                let seen = self.await_landing(grace).await;
                if seen.landed {
                    Ok(format!("pid {} exited after SIGTERM", self.pid))
                } else {
                    send(self.pid, Signal::SIGKILL)?;
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
        if !self.healed {
            let signal = match self.action {
                Action::Pause => Some(Signal::SIGCONT),
                Action::Term { .. } => Some(Signal::SIGKILL),
                Action::Kill => None,
            };
            if let Some(signal) = signal {
                let _ = kill(Pid::from_raw(self.pid), signal);
            }
        }
    }
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
        Ok(inject(&target, action).map_err(|e| e.to_string()))
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
            let outcome = cx.run_once(&name, &command, TARGET_DEADLINE).await?;
            let out = std::fs::read_to_string(cx.logs().join(format!("{name}.stdout.log")))
                .unwrap_or_default();
            let named = out
                .lines()
                .map(str::trim)
                .rfind(|l| !l.is_empty())
                .unwrap_or("");
            if outcome != exec::Outcome::Exited(0) {
                return Ok(Err(format!("target command `{command}` ended {outcome:?}")));
            }
            let members = cx.members();
            if !members.iter().any(|m| m == named) {
                return Ok(match named.parse::<i32>() {
                    Ok(pid) if pid > 0 => Ok(Target::Pid(pid)),
                    _ => Err(format!(
                        "target command `{command}` printed `{}`: neither a service of the \
                         cluster ({}) nor a pid",
                        crate::sanitize::line(named),
                        members.join(", ")
                    )),
                });
            }
            named.to_string()
        }
    };
    Ok(match cx.service_pgid(&service) {
        Some(pgid) => Ok(Target::Pid(pgid)),
        None => Err(format!(
            "fault target service `{service}` is not in the cluster"
        )),
    })
}

impl HeldFault for Injected {
    type Undo = ProcessUndo;

    fn pid(&self) -> Option<i32> {
        Some(self.pid)
    }

    fn undo(&self) -> ProcessUndo {
        ProcessUndo {
            pid: self.pid,
            action: format!("{:?}", self.action),
            started: exec::start_time(self.pid),
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
    pub action: String,
    #[serde(default)]
    pub started: Option<u64>,
}

/// The same process the journal recorded: alive and started at the recorded time.
pub fn same_process(pid: i32, started: Option<u64>) -> bool {
    match (exec::start_time(pid), started) {
        (Some(now), Some(then)) => now == then,
        _ => false,
    }
}

impl UndoRecord for ProcessUndo {
    const KEYED: bool = false;

    /// Resumes a paused victim, finishes a SIGTERM it outlived.
    fn heal(&self, fault: &str) -> Result<String, String> {
        let pid = self.pid;
        let action = self.action.as_str();
        if !same_process(pid, self.started) {
            Ok(format!("{fault}: pid {pid} is gone; nothing to undo"))
        } else if action == "Pause" && proc_state(pid) == ProcState::Stopped {
            kill(Pid::from_raw(pid), Signal::SIGCONT)
                .map(|()| format!("{fault}: SIGCONT sent to pid {pid}"))
                .map_err(|e| format!("{fault}: SIGCONT to pid {pid}: {e}"))
        } else if action.starts_with("Term") {
            kill(Pid::from_raw(pid), Signal::SIGKILL)
                .map(|()| format!("{fault}: pid {pid} outlived its SIGTERM: SIGKILL sent"))
                .map_err(|e| format!("{fault}: SIGKILL to pid {pid}: {e}"))
        } else {
            Ok(format!("{fault}: pid {pid} needs no undo ({action})"))
        }
    }
}
