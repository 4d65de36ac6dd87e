//! The session mark: every child faultline starts for a session carries
//! `FAULTLINE_SESSION=<session dir>` in its environment, and so does everything it
//! starts in turn. A process spawned in the instant before faultline was killed — too
//! soon for its `command-started` record — or one that left its process group is
//! still found by its mark, and only processes bearing the mark are ever ended this way.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The environment variable that marks a session's children.
pub const VAR: &str = "FAULTLINE_SESSION";

/// The mark this process puts on its children (one session per process).
static MARK: Mutex<Option<String>> = Mutex::new(None);

/// The value a session's mark carries: its directory, canonical so every spelling of
/// the path finds the same processes.
pub fn value(session: &Path) -> String {
    std::fs::canonicalize(session)
        .unwrap_or_else(|_| session.to_path_buf())
        .display()
        .to_string()
}

/// From now on, children started by this process carry the mark of `session`.
pub fn mark_children(session: &Path) {
    *MARK.lock().unwrap_or_else(PoisonError::into_inner) = Some(value(session));
}

/// The `(name, value)` to set on a child, if this process marks its children.
pub(super) fn current() -> Option<(&'static str, String)> {
    MARK.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .map(|v| (VAR, v))
}

/// A live process bearing a session's mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    pub pid: i32,
    pub command: String,
}

/// Live processes (zombies excluded) that carry the mark of `session`, except this
/// process itself.
pub fn marked(session: &Path) -> Vec<Marked> {
    marked_since(session, 0)
}

/// [`marked`], only those started at or after `since` (clock ticks since boot, as
/// [`super::start_time`]): at a clean end, what this very process started, never a
/// process an earlier run of the session or anyone else left with the same mark.
pub fn marked_since(session: &Path, since: u64) -> Vec<Marked> {
    let want = format!("{VAR}={}", value(session));
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| u32::try_from(*pid).is_ok_and(|p| p != me))
        .filter(|pid| since == 0 || super::start_time(*pid).is_some_and(|t| t >= since))
        .filter(|pid| {
            std::fs::read(proc_path(*pid, "environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == want.as_bytes()))
        })
        .map(|pid| Marked {
            pid,
            command: std::fs::read(proc_path(pid, "cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .trim()
                        .to_string()
                })
                .unwrap_or_default(),
        })
        .collect()
}

fn proc_path(pid: i32, file: &str) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/{file}"))
}

/// SIGKILLs one marked process; one already gone is not an error.
pub fn end(process: &Marked) -> nix::Result<()> {
    match kill(Pid::from_raw(process.pid), Signal::SIGKILL) {
        Err(nix::errno::Errno::ESRCH) => Ok(()),
        other => other,
    }
}
