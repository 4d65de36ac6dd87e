//! A node over SSH: one OpenSSH master connection (native mux) per node, strict
//! host-key checking, transport errors retried only where repeating is harmless, and
//! a cap on sessions in flight (sshd's `MaxSessions`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use openssh::{ForwardType, KnownHosts, Session, SessionBuilder, Stdio};
use tokio::io::AsyncWriteExt;
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};

use super::{HostError, NodeSpec, Output};

/// How long connecting may take before the node counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(8);
/// Retries of a repeatable command after a transport error, each on a fresh connection.
const RETRIES: u32 = 2;
const RETRY_AFTER: Duration = Duration::from_millis(300);
/// sshd's default `MaxSessions`.
const DEFAULT_MAX_SESSIONS: u16 = 10;
/// How long a command that ends or signals others waits for one of the node's
/// sessions before it takes a connection of its own ([`SshHost::run_cleanup`]).
pub const CLEANUP_SESSION_WAIT: Duration = Duration::from_secs(3);

/// Why a node could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// Its host key is not the one known for it (unknown, or changed): the run stops
    /// before anything starts.
    #[error(
        "node {node} ({destination}): host key not trusted: {reason}; the host presents {}; \
         check it out of band, then add it to {known_hosts}",
        if presented.is_empty() { "a key faultline could not read (ssh-keyscan failed)".to_string() } else { presented.join(", ") }
    )]
    HostKey {
        node: String,
        destination: String,
        reason: String,
        /// Fingerprints (`ED25519 SHA256:…`) of the keys the host offers.
        presented: Vec<String>,
        known_hosts: String,
    },
    #[error("node {node} ({destination}) unreachable: {message}")]
    Unreachable {
        node: String,
        destination: String,
        message: String,
    },
}

/// The node as ssh itself resolves it (`ssh -G`: config aliases, ports, users).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    pub hostname: String,
    pub port: u16,
    pub user: String,
}

pub struct SshHost {
    pub node: String,
    pub spec: NodeSpec,
    pub resolved: Resolved,
    /// Fingerprints of the known_hosts entries the host key was checked against.
    pub fingerprints: Vec<String>,
    /// The first master connection's control socket: `faultline heal` closes a master
    /// a killed faultline left behind.
    pub control: std::path::PathBuf,
    session: Mutex<Option<Arc<Session>>>,
    sessions: Arc<Semaphore>,
    /// What containment the node's commands get: the last started command's word for
    /// it, or the probe's ([`SshHost::containment`]).
    containment: std::sync::Mutex<Option<Containment>>,
}

fn destination(spec: &NodeSpec) -> String {
    spec.ssh.clone().unwrap_or_default()
}

/// `ssh` arguments shared by every call that must see the node as the master does.
fn ssh_options(spec: &NodeSpec) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(port) = spec.port {
        args.extend(["-p".to_string(), port.to_string()]);
    }
    if let Some(known) = &spec.known_hosts {
        args.extend(["-o".to_string(), format!("UserKnownHostsFile={known}")]);
    }
    args
}

/// What `ssh -G` says the destination resolves to.
pub async fn resolve(spec: &NodeSpec) -> Result<Resolved, String> {
    let out = tokio::process::Command::new("ssh")
        .arg("-G")
        .args(ssh_options(spec))
        .arg(destination(spec))
        .output()
        .await
        .map_err(|e| format!("cannot run `ssh -G`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`ssh -G {}`: {}",
            destination(spec),
            crate::sanitize::line(String::from_utf8_lossy(&out.stderr).trim())
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ').map(str::to_string))
            .unwrap_or_default()
    };
    Ok(Resolved {
        hostname: value("hostname"),
        port: value("port").parse().unwrap_or(22),
        user: value("user"),
    })
}

/// The name known_hosts files use for the host (`[addr]:port` off port 22).
fn known_name(r: &Resolved) -> String {
    if r.port == 22 {
        r.hostname.clone()
    } else {
        format!("[{}]:{}", r.hostname, r.port)
    }
}

/// `ED25519 SHA256:…` from lines of `ssh-keygen -l`, in either of its shapes:
/// `256 SHA256:… comment (ED25519)` (a key file) and `host ED25519 SHA256:…` (`-F`).
fn fingerprints_of(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let at = words.iter().position(|w| w.starts_with("SHA256:"))?;
            let kind = match l.trim_end().strip_suffix(')') {
                Some(head) => head.rsplit_once('(')?.1.to_string(),
                None => (*words.get(at.checked_sub(1)?)?).to_string(),
            };
            Some(format!("{kind} {}", words[at]))
        })
        .collect()
}

/// The known_hosts file ssh checks for this node.
fn known_hosts_file(spec: &NodeSpec) -> String {
    spec.known_hosts.clone().unwrap_or_else(|| {
        std::env::var("HOME").map_or("~/.ssh/known_hosts".into(), |h| {
            format!("{h}/.ssh/known_hosts")
        })
    })
}

/// Fingerprints of the known_hosts entries for the host.
async fn known_fingerprints(spec: &NodeSpec, r: &Resolved) -> Vec<String> {
    let out = tokio::process::Command::new("ssh-keygen")
        .args(["-l", "-F", &known_name(r), "-f", &known_hosts_file(spec)])
        .output()
        .await;
    out.map(|o| fingerprints_of(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or_default()
}

/// Fingerprints of the keys the host presents now (`ssh-keyscan`); empty when it
/// cannot be asked directly (behind a jump host, say).
async fn presented_fingerprints(r: &Resolved) -> Vec<String> {
    let scan = tokio::process::Command::new("ssh-keyscan")
        .args(["-T", "5", "-p", &r.port.to_string(), &r.hostname])
        .stderr(std::process::Stdio::null())
        .output()
        .await;
    let Ok(scan) = scan else { return Vec::new() };
    let Ok(mut keygen) = tokio::process::Command::new("ssh-keygen")
        .args(["-l", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
    else {
        return Vec::new();
    };
    if let Some(mut stdin) = keygen.stdin.take() {
        let _ = stdin.write_all(&scan.stdout).await;
    }
    keygen
        .wait_with_output()
        .await
        .map(|o| fingerprints_of(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or_default()
}

fn is_host_key_failure(message: &str) -> bool {
    let m = message.to_lowercase();
    m.contains("host key verification failed")
        || m.contains("host key is known")
        || m.contains("identification has changed")
        || m.contains("host key for")
}

fn is_transport(e: &openssh::Error) -> bool {
    matches!(
        e,
        openssh::Error::Master(_)
            | openssh::Error::Connect(_)
            | openssh::Error::Disconnected
            | openssh::Error::SshMux(_)
            | openssh::Error::Ssh(_)
    )
}

fn message_of(e: &openssh::Error) -> String {
    // The source carries what ssh printed ("Connection refused", "Permission denied").
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    crate::sanitize::line(&text)
}

impl SshHost {
    /// Connects (host key checked strictly) and remembers the trusted key's fingerprint.
    pub async fn connect(node: &str, spec: NodeSpec) -> Result<SshHost, ConnectError> {
        let dest = destination(&spec);
        let unreachable = |message: String| ConnectError::Unreachable {
            node: node.to_string(),
            destination: dest.clone(),
            message,
        };
        let resolved = resolve(&spec).await.map_err(unreachable)?;
        let session = match open(&spec).await {
            Ok(session) => session,
            Err(e) => {
                let message = message_of(&e);
                if is_host_key_failure(&message) {
                    return Err(ConnectError::HostKey {
                        node: node.to_string(),
                        destination: format!("{dest}, {}", known_name(&resolved)),
                        reason: message,
                        presented: presented_fingerprints(&resolved).await,
                        known_hosts: known_hosts_file(&spec),
                    });
                }
                return Err(unreachable(message));
            }
        };
        let fingerprints = known_fingerprints(&spec, &resolved).await;
        let control = session.control_socket().to_path_buf();
        let max = spec.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS).max(1);
        Ok(SshHost {
            node: node.to_string(),
            spec,
            resolved,
            fingerprints,
            control,
            session: Mutex::new(Some(Arc::new(session))),
            sessions: Arc::new(Semaphore::new(usize::from(max))),
            containment: std::sync::Mutex::new(None),
        })
    }

    fn transport(&self, message: String) -> HostError {
        HostError::Transport {
            node: self.node.clone(),
            message,
        }
    }

    /// The live master connection, reconnecting if the last one was lost.
    async fn session(&self) -> Result<Arc<Session>, HostError> {
        let mut slot = self.session.lock().await;
        if let Some(session) = slot.as_ref() {
            return Ok(session.clone());
        }
        let session = open(&self.spec)
            .await
            .map(Arc::new)
            .map_err(|e| self.transport(message_of(&e)))?;
        *slot = Some(session.clone());
        Ok(session)
    }

    /// Forgets `dead` so the next call reconnects.
    async fn lost(&self, dead: &Arc<Session>) {
        let mut slot = self.session.lock().await;
        if slot.as_ref().is_some_and(|s| Arc::ptr_eq(s, dead)) {
            *slot = None;
        }
    }

    /// Runs `command` with `sh -c`, `stdin` fed to it; `repeatable` retries a transport
    /// error on a fresh connection.
    pub async fn run(
        &self,
        command: &str,
        stdin: Option<&[u8]>,
        deadline: Duration,
        repeatable: bool,
    ) -> Result<Output, HostError> {
        let permit = self
            .sessions
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| self.transport(e.to_string()))?;
        self.run_holding(permit, command, stdin, deadline, repeatable)
            .await
    }

    /// [`Self::run`] for what ends or signals commands (a kill, a cgroup's end): it
    /// waits at most [`CLEANUP_SESSION_WAIT`] for one of the node's sessions; when
    /// every one is still held (by services that live on, a command that ignores its
    /// SIGTERM), it goes over a connection of its own (sshd counts `MaxSessions` per
    /// connection). Bounded: [`CLEANUP_SESSION_WAIT`] + [`CONNECT_TIMEOUT`] + `deadline`.
    pub async fn run_cleanup(
        &self,
        command: &str,
        deadline: Duration,
    ) -> Result<Output, HostError> {
        let waited =
            tokio::time::timeout(CLEANUP_SESSION_WAIT, self.sessions.clone().acquire_owned()).await;
        match waited {
            Ok(Ok(permit)) => {
                self.run_holding(permit, command, None, deadline, true)
                    .await
            }
            Ok(Err(e)) => Err(self.transport(e.to_string())),
            Err(_) => {
                tracing::warn!(node = %self.node, "every ssh session of the node is held: a cleanup command goes over a connection of its own");
                self.run_apart(command, deadline).await
            }
        }
    }

    /// Runs `command` over a fresh connection of its own, closed after; bounded by
    /// [`CONNECT_TIMEOUT`] + `deadline`.
    async fn run_apart(&self, command: &str, deadline: Duration) -> Result<Output, HostError> {
        let ran = tokio::time::timeout(CONNECT_TIMEOUT + deadline, async {
            let session = open(&self.spec)
                .await
                .map_err(|e| self.transport(message_of(&e)))?;
            let out = exec(&session, command, None).await;
            let _ = session.close().await;
            out.map_err(|e| self.transport(message_of(&e)))
        })
        .await;
        ran.unwrap_or_else(|_| {
            Err(HostError::Deadline {
                node: self.node.clone(),
                command: command.to_string(),
                after: CONNECT_TIMEOUT + deadline,
            })
        })
    }

    /// [`Self::run`] once `permit` (one of the node's sessions) is held.
    async fn run_holding(
        &self,
        _permit: OwnedSemaphorePermit,
        command: &str,
        stdin: Option<&[u8]>,
        deadline: Duration,
        repeatable: bool,
    ) -> Result<Output, HostError> {
        let mut attempt = 0;
        loop {
            let session = self.session().await?;
            let ran = tokio::time::timeout(deadline, exec(&session, command, stdin)).await;
            match ran {
                Err(_) => {
                    return Err(HostError::Deadline {
                        node: self.node.clone(),
                        command: command.to_string(),
                        after: deadline,
                    });
                }
                Ok(Ok(out)) => return Ok(out),
                Ok(Err(e)) if is_transport(&e) => {
                    self.lost(&session).await;
                    if !repeatable || attempt >= RETRIES {
                        let note = if repeatable {
                            String::new()
                        } else {
                            " (run once: it may or may not have run; not repeated)".into()
                        };
                        return Err(self.transport(format!("{}{note}", message_of(&e))));
                    }
                    attempt += 1;
                    tracing::warn!(node = %self.node, error = %message_of(&e), attempt, "ssh transport error; retrying");
                    tokio::time::sleep(RETRY_AFTER * attempt).await;
                }
                Ok(Err(e)) => {
                    return Err(HostError::Other {
                        node: self.node.clone(),
                        message: format!("`{command}`: {}", message_of(&e)),
                    });
                }
            }
        }
    }

    /// Starts a long-running command whose output streams back; it holds one of the
    /// node's sessions until it ends.
    pub async fn spawn(&self, command: &str) -> Result<Spawned, HostError> {
        let permit = self
            .sessions
            .clone()
            .try_acquire_owned()
            .map_err(|_| HostError::Other {
                node: self.node.clone(),
                message: format!(
                    "every one of the node's {} ssh sessions is in use (sshd MaxSessions); \
                     raise `max_sessions` if the node allows more",
                    self.spec.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS)
                ),
            })?;
        let session = self.session().await?;
        let mut cmd = Session::to_command(session.clone(), "sh");
        cmd.arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match cmd.spawn().await {
            Ok(child) => Ok(Spawned { child, permit }),
            Err(e) => {
                if is_transport(&e) {
                    self.lost(&session).await;
                }
                Err(self.transport(message_of(&e)))
            }
        }
    }
}

/// Asks the master connection behind `control` to exit (one a killed faultline left
/// running); `false` when none answers there.
pub fn close_master(control: &std::path::Path) -> bool {
    control.exists()
        && std::process::Command::new("ssh")
            .arg("-S")
            .arg(control)
            .args(["-O", "exit", "faultline-node"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// A remote command started by [`SshHost::spawn`].
pub struct Spawned {
    pub child: openssh::Child<Arc<Session>>,
    /// Its share of the node's sessions, held until it ends.
    pub permit: OwnedSemaphorePermit,
}

async fn open(spec: &NodeSpec) -> Result<Session, openssh::Error> {
    let mut builder = SessionBuilder::default();
    builder
        .known_hosts_check(KnownHosts::Strict)
        .connect_timeout(CONNECT_TIMEOUT)
        .server_alive_interval(Duration::from_secs(5))
        // Socket paths are limited to ~100 bytes: the temp dir, not the session's.
        .control_directory(std::env::temp_dir());
    if let Some(port) = spec.port {
        builder.port(port);
    }
    if let Some(key) = &spec.key {
        builder.keyfile(key);
    }
    if let Some(known) = &spec.known_hosts {
        builder.user_known_hosts_file(known);
    }
    builder.connect_mux(destination(spec)).await
}

async fn exec(
    session: &Session,
    command: &str,
    stdin: Option<&[u8]>,
) -> Result<Output, openssh::Error> {
    let mut cmd = session.command("sh");
    cmd.arg("-c")
        .arg(command)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = match stdin {
        None => {
            cmd.stdin(Stdio::null());
            cmd.output().await?
        }
        Some(bytes) => {
            cmd.stdin(Stdio::piped());
            let mut child = cmd.spawn().await?;
            if let Some(mut pipe) = child.stdin().take() {
                pipe.write_all(bytes)
                    .await
                    .map_err(openssh::Error::ChildIo)?;
                pipe.shutdown().await.map_err(openssh::Error::ChildIo)?;
            }
            child.wait_with_output().await?
        }
    };
    Ok(Output {
        code: out.status.code(),
        stdout: out.stdout,
        stderr: out.stderr,
    })
}

/// What ends a node's commands and everything they start: a cgroup of their own on
/// the node (cgroup v2, where the login may create one and move itself in), or their
/// process group only (a daemon that leaves it is then not ended).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Containment {
    /// Each command in a cgroup of its own.
    pub cgroup: bool,
    /// Where the cgroups are made, or why there are none (sanitized).
    pub detail: String,
}

impl Containment {
    pub(crate) fn cgroups_under(dir: &str) -> Containment {
        Containment {
            cgroup: true,
            detail: crate::sanitize::line(&format!("cgroup: one per command under {dir}")),
        }
    }

    pub(crate) fn group_only(why: &str) -> Containment {
        Containment {
            cgroup: false,
            detail: crate::sanitize::line(&format!("process group only: {why}")),
        }
    }
}

/// The deadline of one shell command that signals or ends a cgroup on the node.
const CGROUP_COMMAND_DEADLINE: Duration = Duration::from_secs(20);
/// How long ending a node's cgroup may take, the wait for a session (or a connection
/// of its own), round trips and the node's own bounded loop (50 rounds of SIGKILL, 20
/// of `rmdir`, 0.1 s apart) included.
const CGROUP_END_WITHIN: Duration = Duration::from_secs(
    CLEANUP_SESSION_WAIT.as_secs() + CONNECT_TIMEOUT.as_secs() + CGROUP_COMMAND_DEADLINE.as_secs(),
);

/// POSIX shell functions run on a node, mirroring `exec::cgroup` (core files only:
/// `cgroup.procs`, `cgroup.kill`, `cgroup.events`). `fl_mount` finds the cgroup2
/// mount in mountinfo; `fl_find PID` the cgroup directory of PID, when this login
/// may write its `cgroup.procs` (moving a process needs that, at the common ancestor);
/// `fl_ours PATH` refuses anything but a `faultline-…` directory under the mount;
/// `fl_term PATH` sends SIGTERM to every member of the cgroup; `fl_end PATH TENTHS`
/// waits up to TENTHS for the cgroup to empty, kills its members until none is left
/// (bounded), removes it and its children. A command with a cgroup is ended by it
/// alone: no process group id a node named is signalled. `fl_start PID` sets `fl_st`
/// to PID's start time (`-` when unknown); `fl_group SIG PGID START` signals group
/// PGID unless a process PGID lives that is not the leader started at START (a
/// session and group leader of that id; a gone leader's id is not reused while its
/// group has members).
pub(crate) const CGROUP_SH: &str = r#"
fl_mount() {
  fl_mnt= fl_root= fl_why=
  while read -r _ _ _ fl_r fl_m fl_rest; do
    case " $fl_rest " in *" - cgroup2 "*) fl_root=$fl_r fl_mnt=$fl_m; break;; esac
  done < /proc/self/mountinfo
  if [ -z "$fl_mnt" ]; then fl_why="no cgroup v2 file system is mounted"; return 1; fi
  case "$fl_root$fl_mnt" in *\\*) fl_why="the cgroup v2 mount point holds escaped characters"; return 1;; esac
}
fl_find() {
  fl_dir= fl_own=
  fl_mount || return 1
  while IFS= read -r fl_l; do case "$fl_l" in 0::*) fl_own=${fl_l#0::};; esac; done < "/proc/$1/cgroup"
  if [ -z "$fl_own" ]; then fl_why="/proc/$1/cgroup names no cgroup v2 membership"; return 1; fi
  case "$fl_root" in
    /) fl_rel=$fl_own ;;
    *) case "$fl_own" in
         "$fl_root"|"$fl_root"/*) fl_rel=${fl_own#"$fl_root"} ;;
         *) fl_why="its cgroup $fl_own is outside the cgroup v2 mount at $fl_mnt"; return 1 ;;
       esac ;;
  esac
  fl_dir=${fl_mnt%/}${fl_rel%/}
  case "$fl_dir/" in */../*|*/./*|*//*) fl_why="its cgroup $fl_own is not a plain path"; return 1;; esac
  if [ ! -w "$fl_dir/cgroup.procs" ]; then
    fl_why="this login cannot write $fl_dir/cgroup.procs (not root, and no cgroup delegated to it)"; return 1
  fi
}
fl_ours() {
  fl_mount || return 1
  case "$1/" in */../*|*/./*|*//*) fl_why="not a plain path; left alone"; return 1;; esac
  case "$1" in "${fl_mnt%/}"/*) ;; *) fl_why="not under the cgroup v2 mount $fl_mnt; left alone"; return 1;; esac
  case "${1##*/}" in faultline-*) ;; *) fl_why="not a cgroup faultline makes; left alone"; return 1;; esac
}
fl_nap() { sleep 0.1 2>/dev/null || sleep 1; }
fl_members() { find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null; }
fl_populated() {
  if [ -r "$1/cgroup.events" ]; then
    while read -r fl_k fl_v; do
      if [ "$fl_k" = populated ]; then [ "$fl_v" = 1 ]; return; fi
    done < "$1/cgroup.events"
  fi
  [ -n "$(fl_members "$1")" ]
}
fl_term() {
  fl_ours "$1" && [ -f "$1/cgroup.procs" ] || return 0
  for fl_q in $(fl_members "$1"); do kill -s TERM "$fl_q" 2>/dev/null; done
}
fl_start() {
  fl_st=-
  fl_s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  set -- ${fl_s##*\)}
  case "${20}" in ''|*[!0-9]*) ;; *) fl_st=${20};; esac
}
fl_group() {
  case "$2" in ''|*[!0-9]*|0|1) echo "refused: $2 is no process group faultline started"; return 0;; esac
  if fl_s=$(cat "/proc/$2/stat" 2>/dev/null); then
    fl_sig=$1 fl_g=$2 fl_want=$3
    set -- ${fl_s##*\)}
    if [ "$3" != "$fl_g" ] || [ "$4" != "$fl_g" ]; then
      echo "skipped: process $fl_g leads no session and group of its own (another process took its id)"; return 0
    fi
    if [ "$fl_want" != - ] && [ "${20}" != "$fl_want" ]; then
      echo "skipped: process $fl_g is not the one started (another process took its id)"; return 0
    fi
    set -- "$fl_sig" "$fl_g"
  fi
  kill -s "$1" -- "-$2" 2>/dev/null
  echo "signalled"
}
fl_end() {
  if ! fl_ours "$1"; then echo "failed $1: $fl_why"; return 1; fi
  if [ ! -d "$1" ]; then echo "gone $1"; return 0; fi
  if [ ! -f "$1/cgroup.procs" ]; then echo "failed $1: not a cgroup; left alone"; return 1; fi
  fl_t=0
  while [ "$fl_t" -lt "$2" ] && fl_populated "$1"; do fl_nap; fl_t=$((fl_t+1)); done
  fl_n=0 fl_seen=0
  while fl_populated "$1"; do
    fl_p=$(fl_members "$1")
    if [ "$fl_n" -ge 50 ]; then echo "failed $1: still holds" $fl_p "after 50 rounds of SIGKILL"; return 1; fi
    if [ "$fl_n" -eq 0 ]; then for fl_q in $fl_p; do fl_seen=$((fl_seen+1)); done; fi
    if [ -f "$1/cgroup.kill" ]; then
      { echo 1 > "$1/cgroup.kill"; } 2>/dev/null
    else
      for fl_q in $fl_p; do kill -s KILL "$fl_q" 2>/dev/null; done
    fi
    fl_n=$((fl_n+1))
    fl_nap
  done
  fl_n=0
  while [ -d "$1" ]; do
    find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null
    [ -d "$1" ] || break
    fl_n=$((fl_n+1))
    if [ "$fl_n" -ge 20 ]; then echo "failed $1: cannot remove it"; return 1; fi
    fl_nap
  done
  echo "ended $1 $fl_seen"
}
"#;

/// The start of the name of every cgroup made on a node for the session marked
/// `session` (`exec::mark::value`): `faultline-<session>-r<hash>`, the hash over the
/// session's path and this machine's host name, so a session of the same name from
/// another machine never shares it. `faultline heal` ends every cgroup so named on
/// each of the session's nodes (a crash may come before any record of one).
pub fn cgroup_prefix(session: &str) -> String {
    let host = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    // FNV-1a: stable across builds, as a healer may be a newer faultline.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in session.bytes().chain([0]).chain(host.bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    let name = Path::new(session)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name: String = super::cgroup::safe(&name).chars().take(60).collect();
    format!("{}{name}-r{hash:016x}", super::cgroup::PREFIX)
}

/// Whether `path`, as a node reported it, is a plain absolute path (no `.`, `..` or
/// empty segment, no control character) whose last segment is `name`.
pub fn plain_cgroup_path(path: &str, name: &str) -> bool {
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    !path.chars().any(char::is_control)
        && rest
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
        && rest.rsplit('/').next() == Some(name)
}

/// The remote command of [`SshHost::spawn`] that starts `command` contained: in a
/// session of its own (`setsid -w`, so the channel lives as long as the command), in
/// a new cgroup `<login's cgroup>/<name>-<nonce>-<pgid>` where the node allows one.
/// Its first line is `faultline-<nonce> <pgid> <start> cgroup <path>` or
/// `faultline-<nonce> <pgid> <start> pgroup <why not>` (`<start>`: the leader's start
/// time, `-` when unknown): `nonce`, fresh for each command, tells it from whatever a
/// login prints first (a MOTD, an rc file), and names the cgroup so that a command
/// whose first line is refused is still found by name. A wrapper that cannot say its
/// line (its channel closed) ends before it starts `command`.
pub fn contained(name: &str, nonce: &str, command: &str) -> String {
    let inner = format!(
        r#"{CGROUP_SH}
fl_contain() {{
  fl_find $$ || return 1
  fl_cg=$fl_dir/$1-$2-$$
  if ! mkdir "$fl_cg" 2>/dev/null; then fl_why="cannot create a cgroup in $fl_dir"; return 1; fi
  {{ echo $$ > "$fl_cg/cgroup.procs"; }} 2>/dev/null
  fl_find $$
  if [ "$fl_dir" != "$fl_cg" ]; then
    rmdir "$fl_cg" 2>/dev/null; fl_why="cannot move into $fl_cg"; return 1
  fi
}}
if fl_contain "$1" "$2"; then fl_said="cgroup $fl_cg"; else fl_said="pgroup $fl_why"; fi
fl_start $$
printf 'faultline-%s %s %s %s\n' "$2" "$$" "$fl_st" "$fl_said" || exit 1
exec sh -c "$3"
"#
    );
    format!(
        "exec setsid -w sh -c {} faultline {} {} {}",
        super::quote(&inner),
        super::quote(name),
        super::quote(nonce),
        super::quote(command)
    )
}

/// A fresh nonce for [`contained`]: 16 hex digits from the system's random source.
pub fn nonce() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        // Not secret, only unforeseeable to a login's chatter: time, pid and a count.
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let mixed = (now as u64)
            ^ (u64::from(std::process::id()) << 32)
            ^ u64::from(NEXT.fetch_add(1, Ordering::Relaxed)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        bytes = mixed.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One line of [`CGROUP_SH`]'s `fl_end`: what was done, or why not (sanitized).
fn ended_line(node: &str, line: &str) -> Result<String, String> {
    let line = crate::sanitize::line(line.trim());
    if let Some(rest) = line.strip_prefix("ended ") {
        let (path, n) = rest.rsplit_once(' ').unwrap_or((rest, "0"));
        return Ok(match n {
            "0" => format!("cgroup {path} on node {node} removed (it was empty)"),
            n => format!("cgroup {path} on node {node}: {n} process(es) killed, cgroup removed"),
        });
    }
    if let Some(path) = line.strip_prefix("gone ") {
        return Ok(format!("cgroup {path} on node {node} is gone already"));
    }
    let why = line.strip_prefix("failed ").unwrap_or(&line);
    Err(format!("cgroup {why} (node {node})"))
}

impl SshHost {
    /// Remembers what containment the node gave a command (the latest word wins).
    pub(crate) fn saw_containment(&self, seen: Containment) {
        if let Ok(mut slot) = self.containment.lock() {
            *slot = Some(seen);
        }
    }

    /// What containment the node's commands get, as last seen (a command started
    /// there, or [`Self::containment`]'s probe); `None` before either.
    pub fn containment_seen(&self) -> Option<Containment> {
        self.containment.lock().ok().and_then(|slot| slot.clone())
    }

    /// What containment the node's commands get: [`Self::containment_seen`], else a
    /// probe (the same test the command wrapper makes, and a cgroup made and removed
    /// again; nothing is moved). For the capability matrix: one row per node.
    pub async fn containment(&self) -> Containment {
        if let Some(seen) = self.containment_seen() {
            return seen;
        }
        let probe = format!(
            r#"{CGROUP_SH}
if fl_find $$; then
  if mkdir "$fl_dir/faultline-probe-$$" 2>/dev/null; then
    rmdir "$fl_dir/faultline-probe-$$"; echo "cgroup $fl_dir"
  else echo "pgroup cannot create a cgroup in $fl_dir"; fi
else echo "pgroup $fl_why"; fi"#
        );
        let probed = match self.run(&probe, None, CGROUP_COMMAND_DEADLINE, true).await {
            Ok(out) => {
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                let line = text.lines().next().unwrap_or_default().trim().to_string();
                match line.split_once(' ') {
                    Some(("cgroup", dir)) => Containment::cgroups_under(dir),
                    Some(("pgroup", why)) => Containment::group_only(why),
                    _ => Containment::group_only(&format!(
                        "the probe said `{}`",
                        crate::sanitize::line(&line)
                    )),
                }
            }
            Err(e) => Containment::group_only(&format!("the probe failed: {e}")),
        };
        self.saw_containment(probed.clone());
        probed
    }

    /// Runs one of [`CGROUP_SH`]'s functions; bounded even when the node stopped
    /// answering, or every session of it is held.
    async fn cgroup_command(&self, call: &str) -> Result<Output, String> {
        let script = format!("{CGROUP_SH}\n{call}");
        match tokio::time::timeout(
            CGROUP_END_WITHIN,
            self.run_cleanup(&script, CGROUP_COMMAND_DEADLINE),
        )
        .await
        {
            Ok(Ok(out)) => Ok(out),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "node {}: no answer within {CGROUP_END_WITHIN:?}",
                self.node
            )),
        }
    }

    /// SIGTERM to every member of the cgroup at `path` (a daemon that left the
    /// command's group may still shut down cleanly). Its process group is not
    /// signalled by number: every member of it is in the cgroup.
    pub async fn term_cgroup(&self, path: &str) -> Result<(), String> {
        let call = format!("fl_term {}", super::quote(path));
        self.cgroup_command(&call).await.map(|_| ())
    }

    /// Sends `signal` to process group `pgid` on the node unless a live process of
    /// that id is not the group's leader that started at `started` (clock ticks since
    /// boot, as the node said when the command started; `None`: only that it leads a
    /// session and group of its own): a pid reused after the command's end is never
    /// signalled. Bounded. The line says what was done.
    pub async fn signal_started_group(
        &self,
        pgid: i32,
        started: Option<u64>,
        signal: nix::sys::signal::Signal,
    ) -> Result<String, String> {
        if pgid <= 1 {
            return Err(format!("refusing {signal} to group {pgid}"));
        }
        let name = signal.as_str().trim_start_matches("SIG");
        let started = started.map_or_else(|| "-".to_string(), |t| t.to_string());
        let call = format!("fl_group {name} {pgid} {started}");
        let out = self.cgroup_command(&call).await?;
        let text = String::from_utf8_lossy(&out.stdout);
        let line = crate::sanitize::line(text.lines().next().unwrap_or_default().trim());
        if line == "signalled" {
            Ok(format!("{signal} to group {pgid} on node {}", self.node))
        } else {
            Err(format!(
                "{signal} to group {pgid} on node {}: {line}",
                self.node
            ))
        }
    }

    /// Ends the cgroup at `path` on the node: up to `grace` for it to empty, then its
    /// members killed until none is left, and the cgroup removed. The line says what
    /// was done.
    pub async fn end_cgroup(&self, path: &str, grace: Duration) -> Result<String, String> {
        let tenths = grace.as_millis() / 100;
        let call = format!("fl_end {} {tenths}", super::quote(path));
        let out = self.cgroup_command(&call).await?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        match text.lines().rfind(|l| !l.trim().is_empty()) {
            Some(line) => ended_line(&self.node, line),
            None => Err(format!(
                "cgroup {} on node {}: no answer ({})",
                crate::sanitize::line(path),
                self.node,
                out.said()
            )),
        }
    }

    /// Ends and removes every cgroup on the node whose name starts with `prefix`
    /// ([`cgroup_prefix`]), wherever it is in the node's cgroup tree: what heal does
    /// after a crash. One line per cgroup: what was done, or what failed.
    pub async fn end_cgroups_named(&self, prefix: &str) -> Vec<Result<String, String>> {
        let call = format!(
            r#"if fl_mount; then
  fl_list=$(find "$fl_mnt" -type d -name {}'-*' -prune -print 2>/dev/null)
  if [ -n "$fl_list" ]; then
    printf '%s\n' "$fl_list" | while IFS= read -r fl_d; do fl_end "$fl_d" 0; done
  fi
fi"#,
            super::quote(prefix)
        );
        match self.cgroup_command(&call).await {
            Ok(out) => String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| ended_line(&self.node, l))
                .collect(),
            Err(e) => vec![Err(format!(
                "the cgroups of this session on node {}: {e}",
                self.node
            ))],
        }
    }
}

impl SshHost {
    /// Forwards a fresh local Unix socket to the socket `remote` on the node, through
    /// the node's master connection: whatever is spoken through it is held to the
    /// node's key, known_hosts and port like every other command. The local socket is
    /// alone in a directory only this user may enter.
    pub async fn forward_unix(&self, remote: &Path) -> Result<UnixForward, HostError> {
        let other = |message: String| HostError::Other {
            node: self.node.clone(),
            message,
        };
        let dir = private_dir().map_err(other)?;
        let local = dir.join("s");
        let session = match self.session().await {
            Ok(session) => session,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let asked = session
            .request_port_forward(ForwardType::Local, local.as_path(), remote)
            .await;
        if let Err(e) = asked {
            let _ = std::fs::remove_dir_all(&dir);
            let message = format!(
                "forwarding {} to {} on the node: {}",
                local.display(),
                remote.display(),
                message_of(&e)
            );
            if is_transport(&e) {
                self.lost(&session).await;
                return Err(self.transport(message));
            }
            return Err(other(message));
        }
        Ok(UnixForward {
            local,
            remote: remote.to_path_buf(),
            dir,
            session,
            closed: false,
        })
    }
}

/// Unix socket paths hold about 100 bytes (`sun_path` is 108 on Linux).
const SOCKET_PATH_MAX: usize = 100;

/// A directory for one forwarded socket, under the temp dir (short, as the control
/// socket's): see [`claim`].
fn private_dir() -> Result<PathBuf, String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("fl-fwd-{}-{n}", std::process::id()));
    // The socket inside is `s`.
    if dir.as_os_str().len() + 2 > SOCKET_PATH_MAX {
        return Err(format!(
            "{}: too long a path for a Unix socket (at most {SOCKET_PATH_MAX} bytes): \
             set TMPDIR to a shorter directory",
            dir.display()
        ));
    }
    claim(&dir)?;
    Ok(dir)
}

/// Creates `dir` with mode 0700, or takes it when it is already this user's own with
/// no access for anyone else (its stale socket removed); anything else is refused.
fn claim(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let ours =
        meta.is_dir() && meta.uid() == nix::unistd::geteuid().as_raw() && meta.mode() & 0o077 == 0;
    if !ours {
        return Err(format!(
            "{} exists and is not faultline's own private directory (uid {}, mode {:o}): \
             refusing to put a socket there",
            dir.display(),
            meta.uid(),
            meta.mode() & 0o7777
        ));
    }
    match std::fs::remove_file(dir.join("s")) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", dir.join("s").display())),
    }
}

/// A local Unix socket forwarded to one on a node ([`SshHost::forward_unix`]).
/// [`UnixForward::close`] ends it; dropping it unclosed removes its directory and
/// cancels the forward on the runtime, if one runs (otherwise it ends with the master).
pub struct UnixForward {
    /// Connect here to reach `remote` on the node.
    pub local: PathBuf,
    pub remote: PathBuf,
    dir: PathBuf,
    session: Arc<Session>,
    closed: bool,
}

impl std::fmt::Debug for UnixForward {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "UnixForward({} -> {})",
            self.local.display(),
            self.remote.display()
        )
    }
}

impl UnixForward {
    /// Cancels the forward and removes the socket's directory.
    pub async fn close(mut self) -> Result<(), String> {
        self.closed = true;
        let cancelled = self
            .session
            .close_port_forward(
                ForwardType::Local,
                self.local.as_path(),
                self.remote.as_path(),
            )
            .await
            .map_err(|e| {
                format!(
                    "closing the forward of {}: {}",
                    self.local.display(),
                    message_of(&e)
                )
            });
        let removed =
            std::fs::remove_dir_all(&self.dir).map_err(|e| format!("{}: {e}", self.dir.display()));
        cancelled.and(removed)
    }
}

impl Drop for UnixForward {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (session, local, remote) = (
                self.session.clone(),
                self.local.clone(),
                self.remote.clone(),
            );
            runtime.spawn(async move {
                let _ = session
                    .close_port_forward(ForwardType::Local, local.as_path(), remote.as_path())
                    .await;
            });
        }
    }
}

impl super::Remote for SshHost {
    fn node(&self) -> &str {
        &self.node
    }

    fn exec<'a>(
        &'a self,
        command: &'a str,
        stdin: Option<&'a [u8]>,
        deadline: Duration,
        repeatable: bool,
    ) -> super::BoxFuture<'a, Result<Output, HostError>> {
        Box::pin(self.run(command, stdin, deadline, repeatable))
    }

    fn deliver(
        &self,
        id: i32,
        group: bool,
        signal: nix::sys::signal::Signal,
    ) -> super::BoxFuture<'_, Result<(), HostError>> {
        Box::pin(async move {
            let who = if group {
                format!("-{id}")
            } else {
                id.to_string()
            };
            // `kill` fails for a process that is gone: that is "nothing to signal".
            let name = signal.as_str().trim_start_matches("SIG");
            let command = format!("kill -s {name} -- {who} 2>/dev/null || true");
            // Bounded even when every session of the node is held.
            let out = self.run_cleanup(&command, SIGNAL_DEADLINE).await?;
            if out.ok() {
                Ok(())
            } else {
                Err(HostError::Other {
                    node: self.node.clone(),
                    message: format!("{signal} to {who}: {}", out.said()),
                })
            }
        })
    }

    fn ssh(&self) -> Option<&SshHost> {
        Some(self)
    }
}

/// How long a signal sent over the node's connection may take.
const SIGNAL_DEADLINE: Duration = Duration::from_secs(20);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_read_ssh_keygen_listings() {
        let listing = "256 SHA256:abcDEF 10.0.0.1 (ED25519)\n3072 SHA256:xyz 10.0.0.1 (RSA)\n";
        assert_eq!(
            fingerprints_of(listing),
            vec!["ED25519 SHA256:abcDEF", "RSA SHA256:xyz"]
        );
        let found = "# Host [10.0.0.1]:2222 found: line 1 \n[10.0.0.1]:2222 ED25519 SHA256:q/w\n";
        assert_eq!(fingerprints_of(found), vec!["ED25519 SHA256:q/w"]);
    }

    #[test]
    fn known_hosts_names_carry_the_port_off_22() {
        let mut r = Resolved {
            hostname: "10.0.0.1".into(),
            port: 22,
            user: "root".into(),
        };
        assert_eq!(known_name(&r), "10.0.0.1");
        r.port = 2222;
        assert_eq!(known_name(&r), "[10.0.0.1]:2222");
    }

    #[test]
    fn a_forward_directory_is_private_and_a_foreign_one_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().expect("tempdir");
        let fresh = base.path().join("fresh");
        claim(&fresh).expect("a new directory");
        let mode = std::fs::metadata(&fresh)
            .expect("made")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        // Ours and private (an earlier run's): taken again, its stale socket gone.
        std::fs::write(fresh.join("s"), "").expect("stale socket");
        claim(&fresh).expect("our own directory");
        assert!(!fresh.join("s").exists());
        let open = base.path().join("open");
        std::fs::create_dir(&open).expect("open dir");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let e = claim(&open).expect_err("others may enter it");
        assert!(e.contains("refusing"), "{e}");
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&fresh, &link).expect("symlink");
        assert!(claim(&link).is_err(), "a symlink is not followed");
        let dir = private_dir().expect("under the temp dir");
        assert!(dir.starts_with(std::env::temp_dir()));
        std::fs::remove_dir(&dir).expect("removed");
    }

    #[test]
    fn host_key_failures_are_told_from_unreachable_nodes() {
        assert!(is_host_key_failure(
            "No ED25519 host key is known for 10.0.0.1 and you have requested strict checking."
        ));
        assert!(is_host_key_failure("Host key verification failed."));
        assert!(!is_host_key_failure(
            "connect to host 10.0.0.1 port 22: No route to host"
        ));
    }

    #[test]
    fn a_node_names_only_a_plain_cgroup_ending_in_the_name_asked_for() {
        let name = "faultline-s-r0123-n1-42";
        assert!(plain_cgroup_path(
            "/sys/fs/cgroup/user.slice/faultline-s-r0123-n1-42",
            name
        ));
        assert!(plain_cgroup_path(
            "/sys/fs/cgroup/faultline-s-r0123-n1-42",
            name
        ));
        for bad in [
            "sys/fs/cgroup/faultline-s-r0123-n1-42",
            "/sys/fs/cgroup/../faultline-s-r0123-n1-42",
            "/sys/fs/cgroup/./faultline-s-r0123-n1-42",
            "/sys/fs//cgroup/faultline-s-r0123-n1-42",
            "/sys/fs/cgroup/faultline-s-r0123-n1-43",
            "/sys/fs/cgroup/faultline-s-r0123-n1-42/",
            "/sys/fs/cgroup/x\x1b/faultline-s-r0123-n1-42",
            "/",
            "",
        ] {
            assert!(!plain_cgroup_path(bad, name), "{bad:?}");
        }
    }

    #[test]
    fn a_sessions_node_cgroups_share_one_prefix_of_their_own() {
        let one = cgroup_prefix("/srv/sessions/20260101T000000Z-kv");
        assert_eq!(one, cgroup_prefix("/srv/sessions/20260101T000000Z-kv"));
        assert!(one.starts_with("faultline-20260101T000000Z-kv-r"), "{one}");
        assert_ne!(one, cgroup_prefix("/other/20260101T000000Z-kv"));
        // Safe as one cgroup name, whatever the session is called.
        let odd = cgroup_prefix("/s/a b.c/../x\ny");
        assert!(
            odd.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "{odd}"
        );
    }

    fn shell(call: &str) -> String {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{CGROUP_SH}\n{call}"))
            .output()
            .expect("sh");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn a_group_is_signalled_by_number_only_while_its_leader_is_the_one_started() {
        use std::os::unix::process::CommandExt;
        let mut command = std::process::Command::new("sleep");
        command.arg("30");
        // SAFETY: `setsid` is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            command.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(Into::into));
        }
        // A session and group leader, as the wrapper on a node is.
        let mut leader = command.spawn().expect("sleep");
        let pid = leader.id();
        let start = shell(&format!("fl_start {pid}; echo $fl_st"));
        assert_eq!(
            start.parse::<u64>().ok(),
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| super::super::parse_start_time(&stat)),
            "{start}"
        );
        // Another start time: a reused pid, left alone.
        let other = start.parse::<u64>().expect("a start time") + 1;
        let said = shell(&format!("fl_group TERM {pid} {other}"));
        assert!(said.starts_with("skipped"), "{said}");
        assert!(leader.try_wait().expect("wait").is_none(), "still running");
        // Group 1 (`kill -- -1`: every process) and 0 are refused outright.
        for bad in ["1", "0", "-1", "x"] {
            let said = shell(&format!("fl_group TERM {bad} -"));
            assert!(said.starts_with("refused"), "{bad}: {said}");
        }
        let said = shell(&format!("fl_group KILL {pid} {start}"));
        assert_eq!(said, "signalled");
        assert!(!leader.wait().expect("reaped").success());
    }

    #[test]
    fn what_a_node_says_of_a_cgroup_it_ended_reads_as_a_line() {
        assert_eq!(
            ended_line("n1", "ended /sys/fs/cgroup/faultline-x 2"),
            Ok("cgroup /sys/fs/cgroup/faultline-x on node n1: 2 process(es) killed, cgroup removed".into())
        );
        assert_eq!(
            ended_line("n1", "ended /sys/fs/cgroup/faultline-x 0"),
            Ok("cgroup /sys/fs/cgroup/faultline-x on node n1 removed (it was empty)".into())
        );
        assert!(ended_line("n1", "gone /c/faultline-x").is_ok());
        let failed = ended_line("n1", "failed /c/faultline-x: cannot remove it\x1b[31m");
        let failed = failed.expect_err("a failure");
        assert!(failed.contains("node n1"), "{failed}");
        assert!(!failed.contains('\x1b'), "sanitized: {failed:?}");
    }
}
