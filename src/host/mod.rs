//! Where a command runs: this machine, or a node of the run spec's `nodes:` reached
//! over SSH. Everything that touches a node — services, steps, fault actions, landing
//! probes, heal — goes through a [`Host`], so a nemesis does not care which it is.
//!
//! SSH is the system's OpenSSH through one multiplexed master connection per node
//! (the `openssh` crate, native mux): the operator's `~/.ssh/config`, agent and
//! ProxyJump apply as they do to `ssh` itself. See `references/nodes.md`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};

pub mod cgroup;
pub mod local;
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

impl HostError {
    /// What went wrong, without the node's name (for a caller that names the place).
    pub fn message(&self) -> String {
        match self {
            HostError::Transport { message, .. } => format!("ssh transport: {message}"),
            HostError::Deadline { command, after, .. } => {
                format!("`{command}` did not finish within {after:?}")
            }
            HostError::Other { message, .. } => message.clone(),
        }
    }
}

/// A future a [`Remote`] returns: boxed so `Arc<Host>` can hold any implementation.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What faultline does on a machine, whichever machine it is: the one seam under the
/// nemeses, services' stops, landing probes and heal (the shape of Jepsen's `Remote`).
/// This machine ([`local::Local`]) and a node over SSH ([`ssh::SshHost`]) implement
/// it; a Kubernetes pod would be one more implementation (references/kubernetes.md).
/// Callers use the methods on [`Host`] (`run`, `run_once`, `signal`, `proc_stat` …),
/// which hold the checks every implementation shares.
pub trait Remote: Send + Sync {
    /// The node's name in the run spec (`local` for this machine).
    fn node(&self) -> &str;
    /// Whether this is the machine faultline runs on.
    fn is_local(&self) -> bool {
        false
    }
    /// Runs `command` with `sh -c`, `stdin` fed to it, within `deadline`.
    /// `repeatable`: safe to repeat, so a transport error may be retried on a fresh
    /// connection; otherwise it is returned (an injection that may have happened is
    /// never repeated blindly).
    fn exec<'a>(
        &'a self,
        command: &'a str,
        stdin: Option<&'a [u8]>,
        deadline: Duration,
        repeatable: bool,
    ) -> BoxFuture<'a, Result<Output, HostError>>;
    /// Delivers `signal` to process `id` (to its group when `group`); a gone process
    /// is not an error. Bounded even when the node is busy. Called through
    /// [`Host::signal`] / [`Host::signal_group`], which refuse ids that are no process.
    fn deliver(&self, id: i32, group: bool, signal: Signal)
    -> BoxFuture<'_, Result<(), HostError>>;
    /// A file's bytes.
    fn read_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Vec<u8>, HostError>> {
        Box::pin(async move {
            let command = format!("cat -- {}", quote(path));
            let out = self.exec(&command, None, READ_DEADLINE, true).await?;
            if out.ok() {
                Ok(out.stdout)
            } else {
                Err(HostError::Other {
                    node: self.node().to_string(),
                    message: format!("{path}: {}", out.said()),
                })
            }
        })
    }
    /// Writes `bytes` to `path` (replacing it).
    fn put_file<'a>(
        &'a self,
        path: &'a str,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, Result<(), HostError>> {
        Box::pin(async move {
            let command = format!("cat > {}", quote(path));
            let out = self
                .exec(&command, Some(bytes), READ_DEADLINE, true)
                .await?;
            if out.ok() {
                Ok(())
            } else {
                Err(HostError::Other {
                    node: self.node().to_string(),
                    message: format!("{path}: {}", out.said()),
                })
            }
        })
    }
    /// The SSH connection under it, for what only SSH offers (a forwarded socket, the
    /// node's cgroups, a long-lived service's channel).
    fn ssh(&self) -> Option<&ssh::SshHost> {
        None
    }
}

/// Any [`Remote`]: this machine or a node.
pub type Host = dyn Remote;

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Host({})", self.node())
    }
}

/// The name of the local machine where no node is named.
pub const LOCAL: &str = "local";

impl Host {
    /// This machine, as a host.
    pub fn local() -> Arc<Host> {
        Arc::new(local::Local)
    }

    /// Runs `command` with `sh -c`; safe to repeat, so a transport error is retried
    /// on a fresh connection.
    pub async fn run(&self, command: &str, deadline: Duration) -> Result<Output, HostError> {
        self.exec(command, None, deadline, true).await
    }

    /// Runs `command` once: a transport error is returned, never retried (an
    /// injection that may have happened is not repeated blindly).
    pub async fn run_once(&self, command: &str, deadline: Duration) -> Result<Output, HostError> {
        self.exec(command, None, deadline, false).await
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
        // 0 and negatives would reach faultline's own group or every process; `-1`
        // (group 1) is every process to `kill`.
        if id <= 0 || (group && id == 1) {
            let who = if group {
                format!("-{id}")
            } else {
                id.to_string()
            };
            return Err(HostError::Other {
                node: self.node().to_string(),
                message: format!("refusing {signal} to {who}: not a process"),
            });
        }
        self.deliver(id, group, signal).await
    }

    /// `/proc/<pid>/stat` of a process on this host; `None` when it is gone.
    pub async fn proc_stat(&self, pid: i32) -> Option<String> {
        self.read_file(&format!("/proc/{pid}/stat"))
            .await
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// Where this host is, for a sentence: "" here, " on node n2" elsewhere.
    pub fn place(&self) -> String {
        if self.is_local() {
            String::new()
        } else {
            format!(" on node {}", self.node())
        }
    }

    /// When `pid` started (clock ticks since boot) on this host.
    pub async fn start_time(&self, pid: i32) -> Option<u64> {
        parse_start_time(&self.proc_stat(pid).await?)
    }
}

/// Undoes what a fault dropped unhealed left on `host`, from a destructor: on this
/// machine at once (a thread of its own drives `undo`, so it works inside a runtime
/// or outside one); on a node on the running runtime if there is one; otherwise
/// `faultline heal` undoes it from the journal's record.
pub fn undo_on_drop(
    host: &Arc<Host>,
    undo: impl FnOnce(Arc<Host>) -> BoxFuture<'static, ()> + Send,
) {
    let host = host.clone();
    if host.is_local() {
        std::thread::scope(|scope| {
            let _ = scope
                .spawn(|| {
                    if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                    {
                        runtime.block_on(undo(host));
                    }
                })
                .join();
        });
    } else if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(undo(host));
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
            return Ok(Host::local());
        };
        if let Some(why) = self.unreachable.get(name) {
            return Err(format!("node {name} is unreachable: {why}"));
        }
        self.nodes
            .get(name)
            .cloned()
            .ok_or_else(|| format!("no node `{name}` in the run spec's `nodes:`"))
    }

    pub fn insert(&mut self, name: &str, host: Arc<Host>) {
        self.nodes.insert(name.to_string(), host);
    }

    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.nodes.keys()
    }
}
