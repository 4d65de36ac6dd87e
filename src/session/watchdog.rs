//! A session's watchdog: so that nothing faultline started outlives it, even when it
//! is SIGKILLed, OOM-killed or crashes past its own healing.
//!
//! When a session starts, faultline spawns `faultline watchdog SESSION` in its own
//! process group and keeps the write end of the watchdog's stdin. A clean end (every
//! fault already healed by faultline itself, signals included) writes `done`. When the
//! input ends without `done`, the kernel closed it because faultline died: the
//! watchdog heals the session from its journal — faults, mounts, and the process
//! groups it recorded (only those) — under the journal's lock, and says so in it.
//!
//! A parent-death signal on each child would not do: it fires when the spawning
//! *thread* ends (tokio retires idle threads), and it cannot undo an iptables rule.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, PoisonError};

/// Setting this to `off` runs without a watchdog: a killed session's faults stay in
/// place (for inspection) until `faultline heal` or `faultline resume`.
pub const ENV_SWITCH: &str = "FAULTLINE_WATCHDOG";

/// The word faultline writes when it ends having healed everything itself.
const DONE: &str = "done";

/// Who the watchdog's journal records name.
pub const HEALER: &str = "faultline watchdog";

struct Armed {
    dir: PathBuf,
    stdin: ChildStdin,
    child: Child,
}

/// The watchdog of this process: there is one faultline session per process.
static ARMED: Mutex<Option<Armed>> = Mutex::new(None);

/// What [`arm`] did, for the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arming {
    Armed { pid: u32 },
    Off { why: String },
    Failed { why: String },
}

/// Starts the watchdog of the session at `dir` (once per process and session).
pub fn arm(dir: &Path) -> Arming {
    if std::env::var(ENV_SWITCH).is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
        return Arming::Off {
            why: format!("{ENV_SWITCH}=off"),
        };
    }
    let mut armed = ARMED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(current) = armed.as_ref()
        && current.dir == dir
    {
        return Arming::Armed {
            pid: current.child.id(),
        };
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return Arming::Failed {
                why: format!("cannot find the faultline binary: {e}"),
            };
        }
    };
    // Its own process group: a Ctrl-C or hang-up meant for faultline's terminal
    // group must not end the one process that heals after faultline.
    let spawned = std::os::unix::process::CommandExt::process_group(
        Command::new(&exe)
            .arg("watchdog")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        0,
    )
    .spawn();
    match spawned {
        Ok(mut child) => {
            let pid = child.id();
            let Some(stdin) = child.stdin.take() else {
                let _ = child.kill();
                let _ = child.wait();
                return Arming::Failed {
                    why: "the watchdog's stdin was not piped".into(),
                };
            };
            // A watchdog of an earlier session in this process is told all is well.
            if let Some(old) = armed.replace(Armed {
                dir: dir.to_path_buf(),
                stdin,
                child,
            }) {
                stand_down(old);
            }
            Arming::Armed { pid }
        }
        Err(e) => Arming::Failed {
            why: format!("cannot start {} watchdog: {e}", exe.display()),
        },
    }
}

/// Tells the watchdog faultline ended cleanly (every fault healed), and reaps it.
pub fn disarm() {
    let armed = ARMED.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(armed) = armed {
        stand_down(armed);
    }
}

fn stand_down(mut armed: Armed) {
    // If the write fails the watchdog is gone already, or heals a healed session.
    let _ = writeln!(armed.stdin, "{DONE}");
    drop(armed.stdin);
    let _ = armed.child.wait();
}

/// `faultline watchdog SESSION`: waits for faultline to end; heals the session if it
/// ended without saying `done`. Returns the exit code.
pub fn watch(dir: &Path) -> i32 {
    let _log = crate::logging::to_file(dir);
    let mut done = false;
    for line in std::io::stdin().lock().lines() {
        match line {
            Ok(line) if line.trim() == DONE => done = true,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    if done {
        return crate::exit::OK;
    }
    tracing::warn!(session = %dir.display(), "faultline ended without healing; healing its session");
    match crate::session::heal::heal_session_as(dir, HEALER) {
        Ok(healed) if healed.failures.is_empty() => {
            tracing::info!(actions = ?healed.actions, "watchdog healed the session");
            crate::exit::OK
        }
        Ok(healed) => {
            tracing::error!(failures = ?healed.failures, "watchdog could not heal everything");
            1
        }
        Err(e) => {
            tracing::error!(error = %e, "watchdog could not heal the session");
            crate::exit::UNREADABLE
        }
    }
}
