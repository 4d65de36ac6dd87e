//! A command started on a node over SSH: in a new session (`setsid`) so its process
//! group can be signalled remotely, in a cgroup of its own on the node where the node
//! allows one (so a daemon that leaves the group is still ended), its pid and
//! containment the first line it prints, its stdout and stderr streamed into the local
//! `logs/` like a local child's.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;

use super::{CommandSpec, ExecError, Outcome, Running, TERM_GRACE, log_file};
use crate::host::Host;
use crate::host::ssh::{self, Containment, Spawned};

/// How long a remote command may take to say its pid.
const PID_WITHIN: Duration = Duration::from_secs(15);

/// How the remote leader ended: an exit code, a signal (no code), or the connection
/// to the node was lost (the message).
type Exit = Option<Result<Option<i32>, String>>;

pub(super) struct Leader {
    pub host: Arc<Host>,
    exit: watch::Receiver<Exit>,
    /// The command's cgroup on the node, when it got one.
    cgroup: Option<String>,
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

    /// SIGTERM to the remote group (and to whatever left it in its cgroup), SIGKILL
    /// after [`TERM_GRACE`], then the cgroup ended and removed; bounded even when the
    /// node stopped answering.
    pub async fn terminate(&mut self, pgid: i32) {
        let since = tokio::time::Instant::now();
        match (self.ssh(), self.cgroup.as_deref()) {
            (Some(node), Some(path)) => {
                if let Err(e) = node.term_cgroup(path, pgid).await {
                    tracing::warn!(error = %e, "SIGTERM to a remote cgroup");
                }
            }
            _ => {
                let _ = self.host.signal_group(pgid, Signal::SIGTERM).await;
            }
        }
        if tokio::time::timeout(TERM_GRACE, self.exit()).await.is_err() {
            let _ = self.host.signal_group(pgid, Signal::SIGKILL).await;
            let _ = tokio::time::timeout(TERM_GRACE, self.exit()).await;
        }
        // A daemon gets what is left of the grace to shut down; members that outlived
        // the leader are killed.
        let grace = TERM_GRACE.saturating_sub(since.elapsed());
        self.end(pgid, grace).await;
    }

    /// SIGKILL to the remote group and to every member of its cgroup, the cgroup
    /// removed: once the leader ended.
    pub async fn kill_all(&mut self, pgid: i32) {
        self.end(pgid, Duration::ZERO).await;
    }

    /// SIGKILL to the group; the cgroup, if any, ended and removed (once).
    async fn end(&mut self, pgid: i32, grace: Duration) {
        let path = self.cgroup.take();
        end_remote(&self.host, pgid, path.as_deref(), grace).await;
    }

    /// Ends the group (and cgroup) from a drop: on the runtime, when there is one.
    pub fn abandon(&self, pgid: i32) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let host = self.host.clone();
            let path = self.cgroup.clone();
            runtime.spawn(async move {
                end_remote(&host, pgid, path.as_deref(), Duration::ZERO).await;
            });
        }
    }

    fn ssh(&self) -> Option<&ssh::SshHost> {
        match self.host.as_ref() {
            Host::Ssh(node) => Some(node),
            Host::Local => None,
        }
    }
}

/// SIGKILL to remote group `pgid`; then every member of its cgroup at `path` (after
/// up to `grace` for them to end), and the cgroup removed. Bounded.
async fn end_remote(host: &Host, pgid: i32, path: Option<&str>, grace: Duration) {
    match (host, path) {
        (Host::Ssh(node), Some(path)) => match node.end_cgroup(path, pgid, grace).await {
            Ok(line) => tracing::debug!(%line, "remote cgroup ended"),
            Err(e) => tracing::warn!(error = %e, "remote cgroup not ended"),
        },
        _ => {
            let _ = host.signal_group(pgid, Signal::SIGKILL).await;
        }
    }
}

/// What the first line of a remote command says: its group and its containment.
#[derive(Debug, PartialEq, Eq)]
struct FirstLine {
    pgid: i32,
    /// The cgroup's path on the node, or why there is none.
    cgroup: Result<String, String>,
}

/// Reads `<pgid> cgroup <path>` or `<pgid> pgroup <why>`; the path must be a plain
/// absolute one ending in `<name>-<pgid>` (the node is never trusted to name where
/// faultline later kills). `Err` holds why the line is refused, with the pgid when
/// one was read.
fn first_line(line: &str, name: &str) -> Result<FirstLine, (Option<i32>, String)> {
    let line = line.trim_end_matches(['\n', '\r']);
    let (pgid, rest) = line.split_once(' ').unwrap_or((line, ""));
    let Some(pgid) = pgid.parse::<i32>().ok().filter(|p| *p > 0) else {
        return Err((None, "no process group id first".into()));
    };
    let (kind, detail) = rest.split_once(' ').unwrap_or((rest, ""));
    match kind {
        "cgroup" if ssh::plain_cgroup_path(detail, &format!("{name}-{pgid}")) => Ok(FirstLine {
            pgid,
            cgroup: Ok(detail.to_string()),
        }),
        "cgroup" => Err((
            Some(pgid),
            format!("a cgroup path that is not the one asked for (`{name}-{pgid}`, plain)"),
        )),
        "pgroup" => Ok(FirstLine {
            pgid,
            cgroup: Err(detail.to_string()),
        }),
        _ => Err((
            Some(pgid),
            "no containment after the process group id".into(),
        )),
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
    // The cgroup's name carries the session's (see `ssh::cgroup_prefix`): heal finds
    // it on the node after a crash, before any record of it could be written.
    let session = super::mark::current()
        .map(|(_, session)| session)
        .unwrap_or_else(|| format!("pid-{}", std::process::id()));
    let name = format!(
        "{}-{}",
        ssh::cgroup_prefix(&session),
        crate::host::cgroup::safe(&spec.name)
    );
    let mut spawned = ssh
        .spawn(&ssh::contained(&name, &spec.command))
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
    let read = match said {
        Ok(Ok(_)) => first_line(&first, &name),
        Ok(Err(e)) => Err((None, format!("reading its first line: {e}"))),
        Err(_) => Err((None, format!("no first line within {PID_WITHIN:?}"))),
    };
    let read = match read {
        Ok(read) => read,
        Err((pgid, why)) => {
            // A group that did start is not left running behind the error.
            if let Some(pgid) = pgid {
                let _ = host.signal_group(pgid, Signal::SIGKILL).await;
            }
            let mut err = String::new();
            let mut stderr = BufReader::new(stderr);
            let _ = tokio::time::timeout(Duration::from_secs(2), stderr.read_line(&mut err)).await;
            return Err(spawn_error(format!(
                "node {}: the command did not start as asked: {why} (said `{}`{})",
                ssh.node,
                crate::sanitize::line(first.trim()),
                if err.trim().is_empty() {
                    String::new()
                } else {
                    format!(", stderr `{}`", crate::sanitize::line(err.trim()))
                }
            )));
        }
    };
    let pgid = read.pgid;
    let cgroup = match read.cgroup {
        Ok(path) => {
            let under = Path::new(&path)
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            ssh.saw_containment(Containment::cgroups_under(&under));
            Some(path)
        }
        Err(why) => {
            tracing::warn!(node = %ssh.node, why = %crate::sanitize::line(&why), "no cgroup on the node: the command is ended by its process group only");
            ssh.saw_containment(Containment::group_only(&why));
            None
        }
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
            cgroup,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_says_the_group_and_its_containment_or_is_refused() {
        let name = "faultline-s-r01-n1";
        assert_eq!(
            first_line("42 cgroup /sys/fs/cgroup/faultline-s-r01-n1-42\n", name),
            Ok(FirstLine {
                pgid: 42,
                cgroup: Ok("/sys/fs/cgroup/faultline-s-r01-n1-42".into()),
            })
        );
        assert_eq!(
            first_line("42 pgroup no cgroup v2 file system is mounted\n", name),
            Ok(FirstLine {
                pgid: 42,
                cgroup: Err("no cgroup v2 file system is mounted".into()),
            })
        );
        // Never trusted blindly: another cgroup, a path with `..`, an old wrapper's
        // bare pid, no pid at all.
        for (line, pgid) in [
            ("42 cgroup /sys/fs/cgroup/init.scope", Some(42)),
            (
                "42 cgroup /sys/fs/cgroup/../faultline-s-r01-n1-42",
                Some(42),
            ),
            ("42 cgroup faultline-s-r01-n1-42", Some(42)),
            ("42", Some(42)),
            ("42 what", Some(42)),
            ("-1 cgroup /c/faultline-s-r01-n1--1", None),
            ("hello", None),
            ("", None),
        ] {
            let refused = first_line(line, name).expect_err(line);
            assert_eq!(refused.0, pgid, "{line:?}");
        }
    }
}
