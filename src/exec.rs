//! Child commands: each in its own process group (a service also in its own cgroup,
//! see [`cgroup`]), output streamed straight to files under the session's `logs/` (so
//! a slow reader never blocks the child), and every wait bounded by a deadline.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

pub mod cgroup;
mod lines;
pub mod mark;
mod remote;
pub use lines::{LINE_LIMIT, LineCap};
pub use remote::spawn_remote;

/// How long a group gets between SIGTERM and SIGKILL when a deadline expires.
pub const TERM_GRACE: Duration = Duration::from_secs(2);

/// How often a cgroup is looked at during [`TERM_GRACE`].
const GRACE_LOOK_EVERY: Duration = Duration::from_millis(20);

/// What to run.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    /// Name used for the log files (`<name>.stdout.log`, `<name>.stderr.log`).
    pub name: String,
    /// Shell command line, run with `sh -c`.
    pub command: String,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("cannot create log file {path}: {source}")]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start `{command}` in cgroup {path}: {source}")]
    Cgroup {
        path: PathBuf,
        command: String,
        source: std::io::Error,
    },
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("`{command}` started without a pid")]
    NoPid { command: String },
    #[error("waiting for `{command}`: {source}")]
    Wait {
        command: String,
        source: std::io::Error,
    },
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Exited(i32),
    Signaled(i32),
    /// The deadline expired; the whole group was terminated.
    DeadlineExpired,
}

/// A started child and its process group (and cgroup, if it was started in one).
pub struct Running {
    pub name: String,
    pub command: String,
    /// Process group id (equal to the leader's pid).
    pub pgid: i32,
    /// Holds the child and everything it starts, daemons included.
    pub cgroup: Option<cgroup::Cgroup>,
    pub stdout_log: PathBuf,
    pub stderr_log: PathBuf,
    pub started: Instant,
    leader: Leader,
    /// The leader was reaped and its group killed; nothing is left to clean up.
    reaped: bool,
}

/// The group leader: a child of ours, or a command on a node over SSH.
enum Leader {
    Local(tokio::process::Child),
    Remote(remote::Leader),
}

fn log_file(path: &Path) -> Result<std::fs::File, ExecError> {
    std::fs::File::create(path).map_err(|source| ExecError::Log {
        path: path.to_path_buf(),
        source,
    })
}

/// Starts `spec` in a new process group with stdout / stderr going to `log_dir`.
pub fn spawn(spec: &CommandSpec, log_dir: &Path) -> Result<Running, ExecError> {
    spawn_in(spec, log_dir, None, None)
}

/// The Unix user a service runs as (its primary group with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub uid: u32,
    pub gid: u32,
}

/// The identity of `user`, a name or a numeric uid, from the user database.
pub fn identity_of(user: &str) -> Result<Identity, String> {
    let found = match user.parse::<u32>() {
        Ok(uid) => nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)),
        Err(_) => nix::unistd::User::from_name(user),
    };
    match found {
        Ok(Some(u)) => Ok(Identity {
            uid: u.uid.as_raw(),
            gid: u.gid.as_raw(),
        }),
        Ok(None) => Err(format!("no user `{user}` on this machine")),
        Err(e) => Err(format!("cannot look up user `{user}`: {e}")),
    }
}

/// [`spawn`], the child also in `cgroup` (when given) before it runs anything, so
/// nothing it starts is ever outside it.
pub fn spawn_in(
    spec: &CommandSpec,
    log_dir: &Path,
    cgroup: Option<cgroup::Cgroup>,
    user: Option<Identity>,
) -> Result<Running, ExecError> {
    let stdout_log = log_dir.join(format!("{}.stdout.log", spec.name));
    let stderr_log = log_dir.join(format!("{}.stderr.log", spec.name));
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&spec.command)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(log_file(&stdout_log)?)
        .stderr(log_file(&stderr_log)?)
        .process_group(0);
    if let Some((name, value)) = mark::current() {
        cmd.env(name, value);
    }
    // Dropped before the cgroup move below; the descriptor it writes was opened here.
    if let Some(user) = user {
        cmd.uid(user.uid).gid(user.gid);
    }
    if let Some(cgroup) = &cgroup {
        let procs = cgroup.procs().map_err(|source| ExecError::Cgroup {
            path: cgroup.path().to_path_buf(),
            command: spec.command.clone(),
            source,
        })?;
        // SAFETY: the closure runs in the forked child before exec, where only
        // async-signal-safe calls are allowed: one write(2) on a descriptor the
        // parent opened (close-on-exec), then unshare(2) and geteuid(2), allocating
        // nothing and taking no lock. Writing `0` moves the writer itself, before the
        // command can fork; a write from the parent after spawn would leave a window
        // for an early daemon.
        unsafe {
            cmd.pre_exec(move || {
                (&procs).write_all(b"0")?;
                stay_in_own_cgroup()
            });
        }
    }
    let child = cmd.spawn().map_err(|source| match &cgroup {
        // The move into the cgroup may be what failed: the error names it.
        Some(cgroup) => ExecError::Cgroup {
            path: cgroup.path().to_path_buf(),
            command: spec.command.clone(),
            source,
        },
        None => ExecError::Spawn {
            command: spec.command.clone(),
            source,
        },
    })?;
    let pid = child.id().ok_or_else(|| ExecError::NoPid {
        command: spec.command.clone(),
    })?;
    let pgid = i32::try_from(pid).map_err(|_| ExecError::NoPid {
        command: spec.command.clone(),
    })?;
    Ok(Running {
        name: spec.name.clone(),
        command: spec.command.clone(),
        pgid,
        cgroup,
        stdout_log,
        stderr_log,
        started: Instant::now(),
        leader: Leader::Local(child),
        reaped: false,
    })
}

/// Roots the child's cgroup namespace at the cgroup it was just moved into, so that
/// neither it nor anything it starts can leave it: the kernel refuses a move to a
/// cgroup outside the mover's namespace (ENOENT), even as root, when writing an
/// ancestor's `cgroup.procs`. Needs CAP_SYS_ADMIN: a service run as another user
/// (which cannot write faultline's cgroups anyway) goes without.
fn stay_in_own_cgroup() -> std::io::Result<()> {
    match nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWCGROUP) {
        Err(nix::errno::Errno::EPERM) if !nix::unistd::geteuid().is_root() => Ok(()),
        other => other.map_err(std::io::Error::from),
    }
}

/// Sends `signal` to every process of group `pgid`. A group that no longer exists is
/// not an error: there is nothing left to signal.
pub fn signal_group(pgid: i32, signal: Signal) -> nix::Result<()> {
    match killpg(Pid::from_raw(pgid), signal) {
        Err(nix::errno::Errno::ESRCH) => Ok(()),
        other => other,
    }
}

/// Bytes the unprivileged writer can still use on the filesystem holding `dir`, and
/// its total size.
pub fn disk_space(dir: &Path) -> nix::Result<(u64, u64)> {
    let st = nix::sys::statvfs::statvfs(dir)?;
    let unit = st.fragment_size();
    Ok((st.blocks_available() * unit, st.blocks() * unit))
}

impl Running {
    /// Says so when the filesystem holding this child's logs has no space left: the
    /// child, not faultline, got the ENOSPC, so its output on disk may be cut short.
    pub fn logs_full(&self) -> Option<String> {
        let dir = self.stdout_log.parent()?;
        let (free, _) = disk_space(dir).ok()?;
        (free == 0).then(|| {
            format!(
                "no space left on the filesystem holding {}: the output of `{}` may be cut short",
                dir.display(),
                self.name
            )
        })
    }

    /// Waits for the child, at most `deadline` from now. On expiry the group gets
    /// SIGTERM, then SIGKILL after [`TERM_GRACE`], and is reaped.
    pub async fn wait(&mut self, deadline: Duration) -> Result<Outcome, ExecError> {
        match tokio::time::timeout(deadline, self.leader_exit()).await {
            Ok(outcome) => {
                let outcome = outcome?;
                // The leader is gone; anything it left in its group goes with it.
                self.kill_all().await;
                self.reaped = true;
                Ok(outcome)
            }
            Err(_) => {
                self.terminate().await?;
                Ok(Outcome::DeadlineExpired)
            }
        }
    }

    /// [`Self::wait`] for at most `slice`, leaving the child running when it has not
    /// ended by then (`None`): a wait that something else may cut short.
    pub async fn wait_for(&mut self, slice: Duration) -> Option<Result<Outcome, ExecError>> {
        let outcome = tokio::time::timeout(slice, self.leader_exit()).await.ok()?;
        if outcome.is_ok() {
            self.kill_all().await;
            self.reaped = true;
        }
        Some(outcome)
    }

    /// Waits for the leader to end (cancel-safe: a remote leader's end is watched).
    async fn leader_exit(&mut self) -> Result<Outcome, ExecError> {
        let command = self.command.clone();
        match &mut self.leader {
            Leader::Local(child) => child
                .wait()
                .await
                .map(outcome_of)
                .map_err(|source| ExecError::Wait { command, source }),
            Leader::Remote(leader) => leader.exit().await.map_err(|e| ExecError::Wait {
                command,
                source: std::io::Error::other(e),
            }),
        }
    }

    /// How the child ended, if it has, without waiting: `None` while it runs. A
    /// leader that exited 0 has ended only when its cgroup shows nothing of it is
    /// left: a service that daemonized lives on in its cgroup, and without one (no
    /// cgroup v2, a node) a daemon that left the group cannot be told from an end.
    /// Nothing is signalled or killed here.
    pub fn ended(&mut self) -> Option<Outcome> {
        let outcome = match &mut self.leader {
            Leader::Local(child) => child.try_wait().ok().flatten().map(outcome_of)?,
            Leader::Remote(leader) => leader.ended()?,
        };
        if outcome == Outcome::Exited(0) && !self.nothing_left() {
            return None;
        }
        Some(outcome)
    }

    /// Whether this child's cgroup (and its process group) is known to be empty.
    fn nothing_left(&self) -> bool {
        let Some(cgroup) = self.cgroup.as_ref() else {
            return false;
        };
        // EPERM (a member run as another user) still says the group has a member.
        let in_group = !matches!(
            killpg(Pid::from_raw(self.pgid), None::<Signal>),
            Err(nix::errno::Errno::ESRCH)
        );
        !in_group && !cgroup.populated()
    }

    /// The node this runs on (`None`: this machine).
    pub fn node(&self) -> Option<&str> {
        match &self.leader {
            Leader::Local(_) => None,
            Leader::Remote(leader) => Some(leader.host.node()),
        }
    }

    /// Ends the whole group (and cgroup): SIGTERM, a grace period, then SIGKILL;
    /// reaps the leader.
    pub async fn terminate(&mut self) -> Result<(), ExecError> {
        if let Leader::Remote(leader) = &mut self.leader {
            leader.terminate(self.pgid).await;
            self.reaped = true;
            return Ok(());
        }
        let _ = signal_group(self.pgid, Signal::SIGTERM);
        if let Some(cgroup) = &self.cgroup {
            cgroup.signal_outside(self.pgid, Signal::SIGTERM);
        }
        let grace = tokio::time::Instant::now() + TERM_GRACE;
        if tokio::time::timeout_at(grace, self.leader_exit())
            .await
            .is_err()
        {
            let _ = signal_group(self.pgid, Signal::SIGKILL);
        }
        // A daemon (its leader long gone, as with `--daemonize yes`) gets the same
        // grace to shut down cleanly.
        if let Some(cgroup) = &self.cgroup {
            while cgroup.populated() && tokio::time::Instant::now() < grace {
                tokio::time::sleep(GRACE_LOOK_EVERY).await;
            }
        }
        // Members other than the leader may ignore SIGTERM.
        self.kill_all().await;
        self.leader_exit().await?;
        self.reaped = true;
        Ok(())
    }
}

impl Running {
    /// SIGKILL to the group and, at once, to every member of the cgroup (on a node,
    /// its cgroup there is removed too).
    async fn kill_all(&mut self) {
        match &mut self.leader {
            Leader::Local(_) => self.kill_local(),
            Leader::Remote(leader) => leader.kill_all(self.pgid).await,
        }
    }

    fn kill_local(&self) {
        let _ = signal_group(self.pgid, Signal::SIGKILL);
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill_members();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A child abandoned on an error or interrupt path takes its group with it.
        if self.reaped {
            return;
        }
        match &self.leader {
            Leader::Local(_) => self.kill_local(),
            // Reaching the node takes a round trip: done on the runtime if one is
            // running; otherwise `faultline heal` ends the group from the journal.
            Leader::Remote(leader) => leader.abandon(self.pgid),
        }
    }
}

fn outcome_of(status: std::process::ExitStatus) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Outcome::Exited(code),
        (None, Some(sig)) => Outcome::Signaled(sig),
        (None, None) => Outcome::Exited(-1),
    }
}

/// When `pid` started, in clock ticks since boot (field 22 of `/proc/<pid>/stat`);
/// with the pid it names one process even after pids are reused.
pub fn start_time(pid: i32) -> Option<u64> {
    crate::host::parse_start_time(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The same local process the journal recorded: alive and started at the recorded time.
pub fn same_process(pid: i32, started: Option<u64>) -> bool {
    match (start_time(pid), started) {
        (Some(now), Some(then)) => now == then,
        _ => false,
    }
}
