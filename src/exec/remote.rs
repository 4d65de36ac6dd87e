//! A command started on a node over SSH: in a new session (`setsid`) so its process
//! group can be signalled remotely, in a cgroup of its own on the node where the node
//! allows one (so a daemon that leaves the group is still ended), its pid and
//! containment the first line it prints, its stdout and stderr streamed into the local
//! `logs/` like a local child's.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::{Notify, watch};

use super::{CommandSpec, ExecError, Outcome, Running, TERM_GRACE, log_file};
use crate::host::Host;
use crate::host::ssh::{self, Containment, Spawned};

/// How long a remote command may take to say its pid.
const PID_WITHIN: Duration = Duration::from_secs(15);
/// The most read of one line before the wrapper's (and of its stderr on failure).
const LINE_MAX: usize = 4096;
/// Lines a login may print before the wrapper's (a MOTD, an rc file), and their bytes.
const BEFORE_MAX_LINES: usize = 64;
const BEFORE_MAX_BYTES: usize = 16 * 1024;
/// The most of a node's text quoted in an error.
const QUOTE_MAX: usize = 200;

/// How the remote leader ended: an exit code, a signal (no code), or the connection
/// to the node was lost (the message).
type Exit = Option<Result<Option<i32>, String>>;

pub(super) struct Leader {
    pub host: Arc<Host>,
    exit: watch::Receiver<Exit>,
    /// The command's cgroup on the node, when it got one: it is then ended by it alone.
    cgroup: Option<String>,
    /// When the leader started on the node (clock ticks since boot), as its first line
    /// said: a group is signalled by number only while its leader is still this one.
    started: Option<u64>,
    /// Closes the command's channel (its session on the node freed for the commands
    /// that end it); its output stops there.
    release: Arc<Notify>,
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

    /// SIGTERM to every member of the remote cgroup (or, without one, to the group
    /// its leader still leads), SIGKILL after [`TERM_GRACE`], then the cgroup ended
    /// and removed; bounded even when the node stopped answering or every session of
    /// it is held (the command's own channel is closed before the SIGKILL).
    pub async fn terminate(&mut self, pgid: i32) {
        let since = tokio::time::Instant::now();
        self.signal(pgid, Signal::SIGTERM).await;
        if tokio::time::timeout(TERM_GRACE, self.exit()).await.is_err() && self.cgroup.is_none() {
            self.release.notify_one();
            self.signal(pgid, Signal::SIGKILL).await;
            let _ = tokio::time::timeout(TERM_GRACE, self.exit()).await;
        }
        // A daemon gets what is left of the grace to shut down; members that outlived
        // the leader are killed (with a cgroup, every member of it at once).
        let grace = TERM_GRACE.saturating_sub(since.elapsed());
        self.end(pgid, grace).await;
    }

    /// `signal` to the command: every member of its cgroup, or its process group
    /// while the leader started is still the one that leads it.
    async fn signal(&self, pgid: i32, signal: Signal) {
        match (self.host.ssh(), self.cgroup.as_deref()) {
            (Some(node), Some(path)) if signal == Signal::SIGTERM => {
                if let Err(e) = node.term_cgroup(path).await {
                    tracing::warn!(error = %e, "SIGTERM to a remote cgroup");
                }
            }
            // A cgroup's members are killed by `end`.
            (Some(_), Some(_)) => {}
            (Some(node), None) => {
                match node.signal_started_group(pgid, self.started, signal).await {
                    Ok(line) => tracing::debug!(%line, "remote group signalled"),
                    Err(e) => tracing::warn!(error = %e, "remote group not signalled"),
                }
            }
            (None, _) => {
                let _ = self.host.signal_group(pgid, signal).await;
            }
        }
    }

    /// SIGKILL to the remote group and to every member of its cgroup, the cgroup
    /// removed: once the leader ended.
    pub async fn kill_all(&mut self, pgid: i32) {
        self.end(pgid, Duration::ZERO).await;
    }

    /// The command's channel closed; then its cgroup, if any, ended and removed
    /// (once), or else SIGKILL to its group (while its leader is the one started).
    async fn end(&mut self, pgid: i32, grace: Duration) {
        let path = self.cgroup.take();
        if path.is_none() || self.ended().is_none() {
            // Its leader is killed now, or gone: its session is freed first for the
            // kill (a daemon that outlived it keeps its output until its cgroup ends).
            self.release.notify_one();
        }
        end_remote(&*self.host, pgid, self.started, path.as_deref(), grace).await;
        self.release.notify_one();
    }

    /// Ends the group (and cgroup) from a drop: on the runtime, when there is one.
    pub fn abandon(&self, pgid: i32) {
        self.release.notify_one();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let host = self.host.clone();
            let path = self.cgroup.clone();
            let started = self.started;
            runtime.spawn(async move {
                end_remote(&*host, pgid, started, path.as_deref(), Duration::ZERO).await;
            });
        }
    }
}

/// Ends a remote command: every member of its cgroup at `path` killed (after up to
/// `grace` for them to end) and the cgroup removed; without a cgroup, SIGKILL to group
/// `pgid` while its leader is the one that started at `started`. Bounded.
async fn end_remote(
    host: &Host,
    pgid: i32,
    started: Option<u64>,
    path: Option<&str>,
    grace: Duration,
) {
    match (host.ssh(), path) {
        (Some(node), Some(path)) => match node.end_cgroup(path, grace).await {
            Ok(line) => tracing::debug!(%line, "remote cgroup ended"),
            Err(e) => tracing::warn!(error = %e, "remote cgroup not ended"),
        },
        (Some(node), None) => {
            match node
                .signal_started_group(pgid, started, Signal::SIGKILL)
                .await
            {
                Ok(line) => tracing::debug!(%line, "remote group killed"),
                Err(e) => tracing::warn!(error = %e, "remote group not killed"),
            }
        }
        (None, _) => {
            let _ = host.signal_group(pgid, Signal::SIGKILL).await;
        }
    }
}

/// What the wrapper's first line says: its group, when its leader started, and its
/// containment.
#[derive(Debug, PartialEq, Eq)]
struct FirstLine {
    pgid: i32,
    started: Option<u64>,
    /// The cgroup's path on the node, or why there is none.
    cgroup: Result<String, String>,
}

/// `text` as a short sanitized quote for an error.
fn excerpt(text: &str) -> String {
    let clean = crate::sanitize::line(text.trim());
    if clean.chars().count() <= QUOTE_MAX {
        return clean;
    }
    let mut cut: String = clean.chars().take(QUOTE_MAX).collect();
    cut.push('…');
    cut
}

/// Reads up to the line that starts with `marker` and a space, and returns the rest
/// of it. Lines before it (what a login prints first) are skipped, at most
/// [`BEFORE_MAX_LINES`] of them and [`BEFORE_MAX_BYTES`] in all; no line is read past
/// [`LINE_MAX`] bytes.
async fn marked_line(
    from: &mut (impl AsyncBufRead + Unpin),
    marker: &str,
) -> Result<String, String> {
    let (mut lines, mut bytes) = (0, 0);
    loop {
        let mut line = Vec::new();
        let n = (&mut *from)
            .take(LINE_MAX as u64)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| format!("reading its first line: {e}"))?;
        if n == 0 {
            return Err(format!(
                "its output ended before its first line ({lines} other line(s) before)"
            ));
        }
        let whole = line.ends_with(b"\n");
        let text = String::from_utf8_lossy(&line);
        if let Some(rest) = text.strip_prefix(marker).and_then(|r| r.strip_prefix(' ')) {
            if !whole {
                return Err(format!(
                    "its first line is longer than {LINE_MAX} bytes or unfinished (`{}`)",
                    excerpt(&text)
                ));
            }
            return Ok(rest.trim_end_matches(['\n', '\r']).to_string());
        }
        if !whole && n >= LINE_MAX {
            return Err(format!(
                "a line of more than {LINE_MAX} bytes before its first line (`{}`)",
                excerpt(&text)
            ));
        }
        lines += 1;
        bytes += n;
        if lines >= BEFORE_MAX_LINES || bytes >= BEFORE_MAX_BYTES {
            return Err(format!(
                "{lines} line(s) ({bytes} bytes) and still not its first line (the last \
                 `{}`)",
                excerpt(&text)
            ));
        }
    }
}

/// Reads `<pgid> <start> cgroup <path>` or `<pgid> <start> pgroup <why>` (what
/// follows the wrapper's marker); the pgid must be above 1, the path a plain absolute
/// one ending in `<name>-<pgid>` (the node is never trusted to name where faultline
/// later kills). `Err` says why the line is refused; nothing it names is signalled.
fn first_line(line: &str, name: &str) -> Result<FirstLine, String> {
    let mut words = line.splitn(4, ' ');
    let (pgid, started, kind) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    let detail = words.next().unwrap_or_default();
    let Some(pgid) = pgid.parse::<i32>().ok().filter(|p| *p > 1) else {
        return Err(format!(
            "no process group id above 1 first (`{}`)",
            excerpt(line)
        ));
    };
    let started = match started {
        "-" => None,
        t => match t.parse::<u64>() {
            Ok(t) => Some(t),
            Err(_) => {
                return Err(format!(
                    "no start time after the process group id (`{}`)",
                    excerpt(line)
                ));
            }
        },
    };
    match kind {
        "cgroup" if ssh::plain_cgroup_path(detail, &format!("{name}-{pgid}")) => Ok(FirstLine {
            pgid,
            started,
            cgroup: Ok(detail.to_string()),
        }),
        "cgroup" => Err(format!(
            "a cgroup path that is not the one asked for (`{name}-{pgid}`, plain): `{}`",
            excerpt(detail)
        )),
        "pgroup" => Ok(FirstLine {
            pgid,
            started,
            cgroup: Err(detail.to_string()),
        }),
        _ => Err(format!(
            "no containment after the process group id (`{}`)",
            excerpt(line)
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
    let Some(ssh) = host.ssh() else {
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
    let nonce = ssh::nonce();
    // The cgroup is `<name>-<nonce>-<pgid>`.
    let named = format!("{name}-{nonce}");
    let mut spawned = ssh
        .spawn(&ssh::contained(&name, &nonce, &spec.command))
        .await
        .map_err(|e| spawn_error(e.to_string()))?;
    let (Some(stdout), Some(stderr)) =
        (spawned.child.stdout().take(), spawned.child.stderr().take())
    else {
        return Err(spawn_error("no output streams".into()));
    };
    let mut stdout = BufReader::new(stdout);
    let marker = format!("faultline-{nonce}");
    let said = tokio::time::timeout(PID_WITHIN, marked_line(&mut stdout, &marker)).await;
    let read = match said {
        Ok(Ok(line)) => first_line(&line, &named),
        Ok(Err(why)) => Err(why),
        Err(_) => Err(format!("no first line within {PID_WITHIN:?}")),
    };
    let read = match read {
        Ok(read) => read,
        Err(why) => {
            let mut err = Vec::new();
            let mut stderr = BufReader::new(stderr);
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                (&mut stderr)
                    .take(LINE_MAX as u64)
                    .read_until(b'\n', &mut err),
            )
            .await;
            // Its channel closed first: its session is free for what follows, and a
            // wrapper that has not said its line yet never starts the command. What
            // did start is ended by its cgroup's name, never by a number the node said.
            drop((stdout, stderr, spawned));
            for line in ssh.end_cgroups_named(&named).await {
                match line {
                    Ok(line) => tracing::debug!(%line, "a refused command's cgroup ended"),
                    Err(e) => tracing::warn!(error = %e, "a refused command's cgroup"),
                }
            }
            let err = String::from_utf8_lossy(&err);
            return Err(spawn_error(format!(
                "node {}: the command did not start as asked: {why}{}",
                ssh.node,
                if err.trim().is_empty() {
                    String::new()
                } else {
                    format!(" (stderr `{}`)", excerpt(&err))
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
            tracing::warn!(node = %ssh.node, why = %excerpt(&why), "no cgroup on the node: the command is ended by its process group only");
            ssh.saw_containment(Containment::group_only(&excerpt(&why)));
            None
        }
    };
    let (tx, rx) = watch::channel(None);
    // The log writers are plain files: a slow reader never holds up the node.
    tokio::spawn(pump(stdout, stdout_file));
    tokio::spawn(pump(BufReader::new(stderr), stderr_file));
    let node = ssh.node.clone();
    let release = Arc::new(Notify::new());
    let released = release.clone();
    tokio::spawn(async move {
        let Spawned { child, permit } = spawned;
        let ended = tokio::select! {
            waited = child.wait() => match waited {
                Ok(status) => Ok(status.code()),
                Err(openssh::Error::RemoteProcessTerminated) => Ok(None),
                Err(e) => Err(format!("node {node}: connection lost: {e}")),
            },
            // The child dropped: its channel closed.
            () = released.notified() => Err(format!("node {node}: its channel was closed to end it")),
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
            started: read.started,
            release,
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
        let name = "faultline-s-r01-n1-ab12";
        assert_eq!(
            first_line(
                "42 1234 cgroup /sys/fs/cgroup/faultline-s-r01-n1-ab12-42",
                name
            ),
            Ok(FirstLine {
                pgid: 42,
                started: Some(1234),
                cgroup: Ok("/sys/fs/cgroup/faultline-s-r01-n1-ab12-42".into()),
            })
        );
        assert_eq!(
            first_line("42 - pgroup no cgroup v2 file system is mounted", name),
            Ok(FirstLine {
                pgid: 42,
                started: None,
                cgroup: Err("no cgroup v2 file system is mounted".into()),
            })
        );
        // Never trusted blindly: another cgroup, a path with `..`, no start time, no
        // containment, a group id of 1 (`kill -- -1` is every process), 0, negative.
        for line in [
            "42 7 cgroup /sys/fs/cgroup/init.scope",
            "42 7 cgroup /sys/fs/cgroup/../faultline-s-r01-n1-ab12-42",
            "42 7 cgroup faultline-s-r01-n1-ab12-42",
            "42 7 cgroup /sys/fs/cgroup/faultline-s-r01-n1-ab12-43",
            "42 cgroup /sys/fs/cgroup/faultline-s-r01-n1-ab12-42",
            "42",
            "42 7 what",
            "1 7 pgroup why",
            "0 7 pgroup why",
            "-1 7 cgroup /c/faultline-s-r01-n1-ab12--1",
            "27860 new messages",
            "hello",
            "",
        ] {
            first_line(line, name).expect_err(line);
        }
        let long = format!("42 7 cgroup /{}", "x".repeat(10_000));
        let refused = first_line(&long, name).expect_err("long");
        assert!(refused.len() < 600, "{} bytes", refused.len());
    }

    fn read(input: &[u8]) -> Result<String, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let mut from = input;
        runtime.block_on(marked_line(&mut from, "faultline-n0nce"))
    }

    #[test]
    fn a_logins_chatter_before_the_marked_line_is_skipped_within_bounds() {
        // What a MOTD or an rc file prints first is skipped, never read as a group.
        assert_eq!(
            read(b"27860 new messages\n1 more\n\nfaultline-n0nce 42 7 pgroup why\nout\n"),
            Ok("42 7 pgroup why".into())
        );
        assert_eq!(
            read(b"faultline-n0nce 42 - pgroup why\r\n"),
            Ok("42 - pgroup why".into())
        );
        // Another nonce, or none: not the line.
        let e = read(b"faultline-other 42 7 pgroup x\n42 7 pgroup x\n").expect_err("unmarked");
        assert!(e.contains("ended before"), "{e}");
        assert!(read(b"faultline-n0nce42 7 pgroup x\n").is_err());
        // Bounded: too many lines, too many bytes, one line too long, unfinished.
        let many = "hi\n".repeat(BEFORE_MAX_LINES + 1) + "faultline-n0nce 42 7 pgroup x\n";
        assert!(read(many.as_bytes()).is_err());
        let big = format!("{}\n", "y".repeat(LINE_MAX - 10)).repeat(5)
            + "faultline-n0nce 42 7 pgroup x\n";
        assert!(read(big.as_bytes()).is_err());
        let huge = format!(
            "{}\nfaultline-n0nce 42 7 pgroup x\n",
            "z".repeat(50 * LINE_MAX)
        );
        let e = read(huge.as_bytes()).expect_err("huge");
        assert!(e.len() < 600, "{} bytes", e.len());
        let huge = format!(
            "faultline-n0nce 42 7 pgroup {}\n",
            "z".repeat(50 * LINE_MAX)
        );
        let e = read(huge.as_bytes()).expect_err("huge marked");
        assert!(e.len() < 600, "{} bytes", e.len());
        assert!(read(b"faultline-n0nce 42 7 pgroup x").is_err());
        assert!(read(b"").is_err());
    }

    #[test]
    fn a_quote_of_a_nodes_text_is_short_and_clean() {
        assert_eq!(excerpt(" ok \n"), "ok");
        let e = excerpt(&format!("\x1b[31m{}", "a".repeat(1000)));
        assert!(!e.contains('\x1b'));
        assert_eq!(e.chars().count(), QUOTE_MAX + 1);
    }
}
