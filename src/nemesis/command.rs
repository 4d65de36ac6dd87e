//! The `command` nemesis: a custom inject command and its heal command, both run as
//! process-group children with their output in the session's logs. The inject
//! command's exit status is recorded but is never landing evidence on its own.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Context, HeldFault, InjectorSeen, Nemesis, UndoRecord, Window};
use crate::exec::{self, CommandSpec, ExecError, Outcome};

/// How long the inject and heal commands may take (the default of any step).
const DEADLINE: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
pub struct CommandFault {
    /// Fault id, used to name the log files.
    pub id: String,
    pub inject: String,
    pub heal: String,
    pub cwd: PathBuf,
    pub deadline: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum CommandFaultError {
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error("{step} command `{command}` ended {outcome:?}")]
    Failed {
        step: &'static str,
        command: String,
        outcome: Outcome,
    },
}

/// An injected command fault; dropping it unhealed runs the heal command.
#[derive(Debug)]
pub struct InjectedCommand {
    fault: CommandFault,
    log_dir: PathBuf,
    healed: bool,
}

async fn run_step(
    fault: &CommandFault,
    step: &'static str,
    command: &str,
    log_dir: &Path,
) -> Result<(), CommandFaultError> {
    let spec = CommandSpec {
        name: format!("fault-{}-{step}", fault.id),
        command: command.to_string(),
        cwd: fault.cwd.clone(),
        env: Vec::new(),
    };
    let mut running = exec::spawn(&spec, log_dir)?;
    match running.wait(fault.deadline).await? {
        Outcome::Exited(0) => Ok(()),
        outcome => Err(CommandFaultError::Failed {
            step,
            command: command.to_string(),
            outcome,
        }),
    }
}

impl CommandFault {
    /// Runs the inject command; a non-zero exit or an expired deadline is an error.
    /// A failed inject is still healed, since it may have half-applied.
    pub async fn inject(&self, log_dir: &Path) -> Result<InjectedCommand, CommandFaultError> {
        let injected = InjectedCommand {
            fault: self.clone(),
            log_dir: log_dir.to_path_buf(),
            healed: false,
        };
        run_step(self, "inject", &self.inject, log_dir).await?;
        Ok(injected)
    }
}

impl InjectedCommand {
    pub async fn heal(mut self) -> Result<(), CommandFaultError> {
        self.healed = true;
        run_step(&self.fault, "heal", &self.fault.heal, &self.log_dir).await
    }
}

impl Drop for InjectedCommand {
    fn drop(&mut self) {
        if !self.healed {
            // Blocking on purpose: this runs on an error path where no runtime may be left.
            let _ = std::process::Command::new("sh")
                .arg("-c")
                .arg(&self.fault.heal)
                .current_dir(&self.fault.cwd)
                .status();
        }
    }
}
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CommandFaultSpec {
    pub inject: String,
    pub heal: String,
}

impl Nemesis for CommandFaultSpec {
    type Held = InjectedCommand;

    fn commands(&self) -> Vec<(&'static str, String)> {
        vec![("inject", self.inject.clone()), ("heal", self.heal.clone())]
    }

    async fn inject<C: Context>(
        &self,
        fault: &str,
        cx: &mut C,
    ) -> Result<Result<InjectedCommand, String>, C::Error> {
        let fault = CommandFault {
            id: fault.to_string(),
            inject: cx.expand(&self.inject)?,
            heal: cx.expand(&self.heal)?,
            cwd: cx.cwd().to_path_buf(),
            deadline: DEADLINE,
        };
        let logs = cx.logs().to_path_buf();
        Ok(cx
            .guard(fault.inject(&logs))
            .await?
            .map_err(|e| e.to_string()))
    }
}

impl HeldFault for InjectedCommand {
    type Undo = CommandUndo;

    fn undo(&self) -> CommandUndo {
        CommandUndo {
            heal: self.fault.heal.clone(),
            cwd: self.fault.cwd.display().to_string(),
        }
    }

    /// None built in: a command fault's probes are all declared.
    async fn probe<C: Context>(
        &self,
        _window: Window,
        _cx: &C,
    ) -> Result<Option<InjectorSeen>, C::Error> {
        Ok(None)
    }

    async fn heal<C: Context>(self, _cx: &C) -> Result<String, String> {
        InjectedCommand::heal(self)
            .await
            .map(|()| "heal command exited 0".to_string())
            .map_err(|e| e.to_string())
    }
}

/// The heal command, expanded, and where it runs; the journal holds these fields bare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandUndo {
    pub heal: String,
    pub cwd: String,
}

impl UndoRecord for CommandUndo {
    const KEYED: bool = false;

    /// Runs the heal command where the run would have.
    fn heal(&self, fault: &str, _reach: &crate::host::Reach) -> Result<String, String> {
        let heal = &self.heal;
        match std::process::Command::new("sh")
            .arg("-c")
            .arg(heal)
            .current_dir(&self.cwd)
            .status()
        {
            Ok(status) if status.success() => {
                Ok(format!("{fault}: heal command `{heal}` exited 0"))
            }
            Ok(status) => Err(format!("{fault}: heal command `{heal}` ended {status}")),
            Err(e) => Err(format!("{fault}: heal command `{heal}`: {e}")),
        }
    }
}
