//! Where a command runs: this machine, or a node of the run spec's `nodes:` reached
//! over SSH. Everything that touches a node — services, steps, fault actions, landing
//! probes, heal — goes through a [`Host`], so a nemesis does not care which it is.
//!
//! SSH is the system's OpenSSH through one multiplexed master connection per node
//! (the `openssh` crate, native mux): the operator's `~/.ssh/config`, agent and
//! ProxyJump apply as they do to `ssh` itself. See `references/nodes.md`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};

pub mod cgroup;
pub mod netns;
pub mod reach;
pub mod ssh;

pub use reach::Reach;

/// A node as the run spec names it (`nodes:`), with `${var}`s expanded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// `user@addr` or a `Host` alias of the operator's ssh config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// An identity file; without it, ssh's own (config, agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// A known_hosts file used instead of the operator's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_hosts: Option<String>,
    /// This machine: commands run here, as without `nodes:`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub local: bool,
    /// sshd's `MaxSessions` on the node (default 10): each service holds one session
    /// for its life, short commands share the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sessions: Option<u16>,
}

/// How a command run to completion ended, with its output.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// `None` when it ended without an exit code (killed, or the deadline expired).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Output {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// The last non-empty stderr line, sanitized: what a failed command said.
    pub fn said(&self) -> String {
        let err = String::from_utf8_lossy(&self.stderr);
        let out = String::from_utf8_lossy(&self.stdout);
        let last = err
            .lines()
            .chain(out.lines())
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .unwrap_or("");
        crate::sanitize::line(last)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// The connection failed; for a command run once, it may or may not have run.
    #[error("node {node}: ssh transport: {message}")]
    Transport { node: String, message: String },
    #[error("node {node}: `{command}` did not finish within {after:?}")]
    Deadline {
        node: String,
        command: String,
        after: Duration,
    },
    #[error("node {node}: {message}")]
    Other { node: String, message: String },
}

/// This machine or a node over SSH.
pub enum Host {
    Local,
    Ssh(Box<ssh::SshHost>),
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Host({})", self.node())
    }
}

/// The name of the local machine where no node is named.
pub const LOCAL: &str = "local";

impl Host {
    /// The node's name in the run spec (`local` for this machine).
    pub fn node(&self) -> &str {
        match self {
            Host::Local => LOCAL,
            Host::Ssh(h) => &h.node,
        }
    }

    pub fn is_local(&self) -> bool {
        matches!(self, Host::Local)
    }

    /// Runs `command` with `sh -c`; safe to repeat, so a transport error is retried
    /// on a fresh connection.
    pub async fn run(&self, command: &str, deadline: Duration) -> Result<Output, HostError> {
        match self {
            Host::Local => local_run(command, None, deadline).await,
            Host::Ssh(h) => h.run(command, None, deadline, true).await,
        }
    }

    /// Runs `command` once: a transport error is returned, never retried (an
    /// injection that may have happened is not repeated blindly).
    pub async fn run_once(&self, command: &str, deadline: Duration) -> Result<Output, HostError> {
        match self {
            Host::Local => local_run(command, None, deadline).await,
            Host::Ssh(h) => h.run(command, None, deadline, false).await,
        }
    }

    /// A file's bytes.
    pub async fn read_file(&self, path: &str) -> Result<Vec<u8>, HostError> {
        match self {
            Host::Local => std::fs::read(path).map_err(|e| HostError::Other {
                node: LOCAL.into(),
                message: format!("{path}: {e}"),
            }),
            Host::Ssh(h) => {
                let command = format!("cat -- {}", quote(path));
                let out = h.run(&command, None, READ_DEADLINE, true).await?;
                if out.ok() {
                    Ok(out.stdout)
                } else {
                    Err(HostError::Other {
                        node: h.node.clone(),
                        message: format!("{path}: {}", out.said()),
                    })
                }
            }
        }
    }

    /// Writes `bytes` to `path` (replacing it).
    pub async fn put_file(&self, path: &str, bytes: &[u8]) -> Result<(), HostError> {
        match self {
            Host::Local => std::fs::write(path, bytes).map_err(|e| HostError::Other {
                node: LOCAL.into(),
                message: format!("{path}: {e}"),
            }),
            Host::Ssh(h) => {
                let command = format!("cat > {}", quote(path));
                let out = h.run(&command, Some(bytes), READ_DEADLINE, true).await?;
                if out.ok() {
                    Ok(())
                } else {
                    Err(HostError::Other {
                        node: h.node.clone(),
                        message: format!("{path}: {}", out.said()),
                    })
                }
            }
        }
    }

    /// Sends `signal` to process group `pgid` (a gone group is not an error). On a
    /// node, bounded even when every one of its sessions is held
    /// ([`ssh::SshHost::run_cleanup`]).
    pub async fn signal_group(&self, pgid: i32, signal: Signal) -> Result<(), HostError> {
        self.kill(pgid, true, signal).await
    }

    /// Sends `signal` to process `pid` (a gone process is not an error).
    pub async fn signal(&self, pid: i32, signal: Signal) -> Result<(), HostError> {
        self.kill(pid, false, signal).await
    }

    async fn kill(&self, id: i32, group: bool, signal: Signal) -> Result<(), HostError> {
        let who = if group {
            format!("-{id}")
        } else {
            id.to_string()
        };
        // 0 and negatives would reach faultline's own group or every process; `-1`
        // (group 1) is every process to `kill`.
        if id <= 0 || (group && id == 1) {
            return Err(HostError::Other {
                node: self.node().to_string(),
                message: format!("refusing {signal} to {who}: not a process"),
            });
        }
        match self {
            Host::Local => {
                let pid = nix::unistd::Pid::from_raw(id);
                let result = if group {
                    nix::sys::signal::killpg(pid, signal)
                } else {
                    nix::sys::signal::kill(pid, signal)
                };
                match result {
                    Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
                    Err(e) => Err(HostError::Other {
                        node: LOCAL.into(),
                        message: format!("{signal} to {who}: {e}"),
                    }),
                }
            }
            Host::Ssh(h) => {
                // `kill` fails for a process that is gone: that is "nothing to signal".
                let name = signal.as_str().trim_start_matches("SIG");
                let command = format!("kill -s {name} -- {who} 2>/dev/null || true");
                // Bounded even when every session of the node is held.
                let out = h.run_cleanup(&command, READ_DEADLINE).await?;
                if out.ok() {
                    Ok(())
                } else {
                    Err(HostError::Other {
                        node: h.node.clone(),
                        message: format!("{signal} to {who}: {}", out.said()),
                    })
                }
            }
        }
    }

    /// `/proc/<pid>/stat` of a process on this host; `None` when it is gone.
    pub async fn proc_stat(&self, pid: i32) -> Option<String> {
        match self {
            Host::Local => std::fs::read_to_string(format!("/proc/{pid}/stat")).ok(),
            Host::Ssh(_) => self
                .read_file(&format!("/proc/{pid}/stat"))
                .await
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned()),
        }
    }

    /// When `pid` started (clock ticks since boot) on this host.
    pub async fn start_time(&self, pid: i32) -> Option<u64> {
        parse_start_time(&self.proc_stat(pid).await?)
    }
}

/// Field 22 (start time) of a `/proc/<pid>/stat` line: with the pid, it names one
/// process even after pids are reused.
pub fn parse_start_time(stat: &str) -> Option<u64> {
    // Fields after the parenthesised command name start at field 3 (state).
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// How long a small remote read, write or signal may take.
const READ_DEADLINE: Duration = Duration::from_secs(20);

/// `text` quoted for a POSIX shell.
pub fn quote(text: &str) -> String {
    // Only a NUL byte cannot be quoted; no shell argument can hold one anyway.
    let clean = text.replace('\0', "");
    shlex::try_quote(&clean).map_or_else(|_| "''".to_string(), Into::into)
}

async fn local_run(
    command: &str,
    stdin: Option<&[u8]>,
    deadline: Duration,
) -> Result<Output, HostError> {
    use tokio::io::AsyncWriteExt;
    let other = |message: String| HostError::Other {
        node: LOCAL.into(),
        message,
    };
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

/// The run's nodes by name, connected. Cheap to clone.
#[derive(Clone, Default)]
pub struct Hosts {
    nodes: BTreeMap<String, Arc<Host>>,
    /// Nodes that could not be reached, and why: the scenarios that use one end
    /// INCONCLUSIVE-env naming it.
    pub unreachable: BTreeMap<String, String>,
}

impl std::fmt::Debug for Hosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hosts")
            .field("nodes", &self.nodes.keys().collect::<Vec<_>>())
            .field("unreachable", &self.unreachable)
            .finish()
    }
}

impl Hosts {
    /// The host a step names (`None`: this machine). An unknown name is an error the
    /// run spec's lint reports first.
    pub fn get(&self, node: Option<&str>) -> Result<Arc<Host>, String> {
        let Some(name) = node else {
            return Ok(Arc::new(Host::Local));
        };
        if let Some(why) = self.unreachable.get(name) {
            return Err(format!("node {name} is unreachable: {why}"));
        }
        self.nodes
            .get(name)
            .cloned()
            .ok_or_else(|| format!("no node `{name}` in the run spec's `nodes:`"))
    }

    pub fn insert(&mut self, name: &str, host: Host) {
        self.nodes.insert(name.to_string(), Arc::new(host));
    }

    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.nodes.keys()
    }
}
