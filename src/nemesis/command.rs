//! The `command` nemesis: a custom inject command and its heal command, both run as
//! process-group children with their output in the session's logs. The inject
//! command's exit status is recorded but is never landing evidence on its own.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::exec::{self, CommandSpec, ExecError, Outcome};

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
