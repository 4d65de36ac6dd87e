//! This machine as a [`Remote`]: commands as children in process groups of their own,
//! signals and files through the kernel directly.

use std::time::Duration;

use nix::sys::signal::Signal;

use super::{BoxFuture, HostError, LOCAL, Output, Remote};

/// The machine faultline runs on.
#[derive(Debug, Clone, Copy, Default)]
pub struct Local;

fn other(message: String) -> HostError {
    HostError::Other {
        node: LOCAL.into(),
        message,
    }
}

impl Remote for Local {
    fn node(&self) -> &str {
        LOCAL
    }

    fn is_local(&self) -> bool {
        true
    }

    fn exec<'a>(
        &'a self,
        command: &'a str,
        stdin: Option<&'a [u8]>,
        deadline: Duration,
        _repeatable: bool,
    ) -> BoxFuture<'a, Result<Output, HostError>> {
        Box::pin(run(command, stdin, deadline))
    }

    fn deliver(
        &self,
        id: i32,
        group: bool,
        signal: Signal,
    ) -> BoxFuture<'_, Result<(), HostError>> {
        let pid = nix::unistd::Pid::from_raw(id);
        let result = if group {
            nix::sys::signal::killpg(pid, signal)
        } else {
            nix::sys::signal::kill(pid, signal)
        };
        let done = match result {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
            Err(e) => {
                let who = if group {
                    format!("-{id}")
                } else {
                    id.to_string()
                };
                Err(other(format!("{signal} to {who}: {e}")))
            }
        };
        Box::pin(std::future::ready(done))
    }

    fn read_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Vec<u8>, HostError>> {
        let read = std::fs::read(path).map_err(|e| other(format!("{path}: {e}")));
        Box::pin(std::future::ready(read))
    }

    fn put_file<'a>(
        &'a self,
        path: &'a str,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, Result<(), HostError>> {
        let written = std::fs::write(path, bytes).map_err(|e| other(format!("{path}: {e}")));
        Box::pin(std::future::ready(written))
    }
}

async fn run(command: &str, stdin: Option<&[u8]>, deadline: Duration) -> Result<Output, HostError> {
    use tokio::io::AsyncWriteExt;
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(if stdin.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| other(format!("`{command}`: {e}")))?;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(bytes)
            .await
            .map_err(|e| other(format!("`{command}` stdin: {e}")))?;
    }
    match tokio::time::timeout(deadline, child.wait_with_output()).await {
        Ok(Ok(out)) => Ok(Output {
            code: out.status.code(),
            stdout: out.stdout,
            stderr: out.stderr,
        }),
        Ok(Err(e)) => Err(other(format!("`{command}`: {e}"))),
        Err(_) => Err(HostError::Deadline {
            node: LOCAL.into(),
            command: command.to_string(),
            after: deadline,
        }),
    }
}
