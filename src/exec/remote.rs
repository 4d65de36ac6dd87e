//! A command started on a node over SSH: in a new session (`setsid`) so its process
//! group can be signalled remotely, its pid the first line it prints, its stdout and
//! stderr streamed into the local `logs/` like a local child's.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;

use super::{CommandSpec, ExecError, Outcome, Running, TERM_GRACE, log_file};
use crate::host::ssh::Spawned;
use crate::host::{Host, quote};

/// How long a remote command may take to say its pid.
const PID_WITHIN: Duration = Duration::from_secs(15);

/// How the remote leader ended: an exit code, a signal (no code), or the connection
/// to the node was lost (the message).
type Exit = Option<Result<Option<i32>, String>>;

pub(super) struct Leader {
    pub host: Arc<Host>,
    exit: watch::Receiver<Exit>,
}

impl Leader {
    /// Waits until the remote leader ended; cancel-safe.
    pub async fn exit(&mut self) -> Result<Outcome, String> {
        let seen = self
            .exit
            .wait_for(Option::is_some)
            .await
            .map_err(|_| format!("node {}: lost track of the command", self.host.node()))?;
        match seen.clone() {
            Some(Ok(Some(code))) => Ok(Outcome::Exited(code)),
            Some(Ok(None)) => Ok(Outcome::Signaled(Signal::SIGKILL as i32)),
            Some(Err(e)) => Err(e),
            None => Err("no exit status".into()),
        }
    }

    /// How the remote leader ended, if it has (a lost connection reads as `None`:
    /// nothing is known of the command's end).
    pub fn ended(&self) -> Option<Outcome> {
        match self.exit.borrow().clone() {
            Some(Ok(Some(code))) => Some(Outcome::Exited(code)),
            Some(Ok(None)) => Some(Outcome::Signaled(Signal::SIGKILL as i32)),
            Some(Err(_)) | None => None,
        }
    }

    /// SIGTERM to the remote group, SIGKILL after [`TERM_GRACE`]; bounded even when
    /// the node stopped answering.
    pub async fn terminate(&mut self, pgid: i32) {
        let _ = self.host.signal_group(pgid, Signal::SIGTERM).await;
        if tokio::time::timeout(TERM_GRACE, self.exit()).await.is_err() {
            let _ = self.host.signal_group(pgid, Signal::SIGKILL).await;
            let _ = tokio::time::timeout(TERM_GRACE, self.exit()).await;
        }
        // Members that outlived the leader.
        let _ = self.host.signal_group(pgid, Signal::SIGKILL).await;
    }

    /// Ends the group from a drop: on the runtime, when there is one.
    pub fn abandon(&self, pgid: i32) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let host = self.host.clone();
            runtime.spawn(async move {
                let _ = host.signal_group(pgid, Signal::SIGKILL).await;
            });
        }
    }
}

/// Starts `spec` on `host` (an SSH node). The remote command runs in its own session
/// in the login user's home directory; `spec.cwd` and `spec.env` are this machine's
/// and are not carried over.
pub async fn spawn_remote(
    host: Arc<Host>,
    spec: &CommandSpec,
    log_dir: &Path,
) -> Result<Running, ExecError> {
    let Host::Ssh(ssh) = host.as_ref() else {
        return Err(ExecError::Spawn {
            command: spec.command.clone(),
            source: std::io::Error::other("spawn_remote needs an SSH node"),
        });
    };
    let stdout_log = log_dir.join(format!("{}.stdout.log", spec.name));
    let stderr_log = log_dir.join(format!("{}.stderr.log", spec.name));
    let stdout_file = log_file(&stdout_log)?;
    let stderr_file = log_file(&stderr_log)?;
    let spawn_error = |message: String| ExecError::Spawn {
        command: spec.command.clone(),
        source: std::io::Error::other(message),
    };
    // `setsid -w` makes the inner shell a session (and group) leader and waits for
    // it, so the ssh channel lives as long as the command; `$$` is the group id.
    let wrapper = format!(
        "exec setsid -w sh -c 'echo \"$$\"; exec sh -c \"$1\"' faultline {}",
        quote(&spec.command)
    );
    let mut spawned = ssh
        .spawn(&wrapper)
        .await
        .map_err(|e| spawn_error(e.to_string()))?;
    let (Some(stdout), Some(stderr)) =
        (spawned.child.stdout().take(), spawned.child.stderr().take())
    else {
        return Err(spawn_error("no output streams".into()));
    };
    let mut stdout = BufReader::new(stdout);
    let mut first = String::new();
    let said = tokio::time::timeout(PID_WITHIN, stdout.read_line(&mut first)).await;
    let pgid = match said {
        Ok(Ok(_)) => first.trim().parse::<i32>().ok(),
        _ => None,
    };
    let Some(pgid) = pgid.filter(|p| *p > 0) else {
        let mut err = String::new();
        let mut stderr = BufReader::new(stderr);
        let _ = tokio::time::timeout(Duration::from_secs(2), stderr.read_line(&mut err)).await;
        return Err(spawn_error(format!(
            "node {}: the command did not start (said `{}`{})",
            ssh.node,
            crate::sanitize::line(first.trim()),
            if err.trim().is_empty() {
                String::new()
            } else {
                format!(", stderr `{}`", crate::sanitize::line(err.trim()))
            }
        )));
    };
    let (tx, rx) = watch::channel(None);
    // The log writers are plain files: a slow reader never holds up the node.
    tokio::spawn(pump(stdout, stdout_file));
    tokio::spawn(pump(BufReader::new(stderr), stderr_file));
    let node = ssh.node.clone();
    tokio::spawn(async move {
        let Spawned { child, permit } = spawned;
        let ended = match child.wait().await {
            Ok(status) => Ok(status.code()),
            Err(openssh::Error::RemoteProcessTerminated) => Ok(None),
            Err(e) => Err(format!("node {node}: connection lost: {e}")),
        };
        // The node's session is free again once the command ended.
        drop(permit);
        let _ = tx.send(Some(ended));
    });
    Ok(Running {
        name: spec.name.clone(),
        command: spec.command.clone(),
        pgid,
        cgroup: None,
        stdout_log,
        stderr_log,
        started: Instant::now(),
        leader: super::Leader::Remote(Leader {
            host: host.clone(),
            exit: rx,
        }),
        reaped: false,
    })
}

async fn pump(mut from: impl tokio::io::AsyncBufRead + Unpin, to: std::fs::File) {
    let mut to = tokio::fs::File::from_std(to);
    if let Err(e) = tokio::io::copy_buf(&mut from, &mut to).await {
        tracing::warn!(error = %e, "remote output stream ended early");
    }
}
