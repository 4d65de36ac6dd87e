//! A session's watchdogs: so that nothing faultline started outlives it, even when it
//! is SIGKILLed, OOM-killed or crashes past its own healing.
//!
//! When a session starts, faultline spawns [`WATCHDOGS`] processes `faultline watchdog
//! SESSION`, each in a session of its own (no terminal's hang-up or Ctrl-C reaches
//! it), and keeps the write end of each one's stdin. A clean end (every fault already
//! healed by faultline itself, signals included) writes `done`. When the input ends
//! without `done`, the kernel closed it because faultline died: the watchdog heals the
//! session from its journal — faults, mounts, the process groups it recorded (only
//! those) and the services' cgroups with every process in them — under the journal's
//! lock, and says so in it. The second watchdog then finds the session healed (the
//! journal's last record is the first one's `heal-finished`) and leaves it.
//!
//! Two, so that killing faultline and a watchdog at the same instant (before faultline
//! replaces the one that died, a look every 200 ms) still leaves a healer: faultline
//! re-arms a watchdog that died, each watchdog heals when faultline dies, so while
//! any one of the three lives the session is healed or its watchdogs re-armed.
//! (Killing all three at the same instant is not covered.) The stdin pipe closes
//! exactly when faultline dies, as a pidfd on it would say: its write end is
//! close-on-exec, so no child of faultline ever holds it open.
//!
//! A parent-death signal on each child would not do: it fires when the spawning
//! *thread* ends (tokio retires idle threads), and it cannot undo an iptables rule.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, PoisonError};

use crate::exit::Exit;

/// Setting this to `off` runs without a watchdog: a killed session's faults stay in
/// place (for inspection) until `faultline heal` or `faultline resume`.
pub const ENV_SWITCH: &str = "FAULTLINE_WATCHDOG";

/// The word faultline writes when it ends having healed everything itself.
const DONE: &str = "done";

/// Who the watchdog's journal records name.
pub const HEALER: &str = "faultline watchdog";

/// How many watchdogs a session has.
pub const WATCHDOGS: usize = 2;

struct Armed {
    dir: PathBuf,
    stdin: ChildStdin,
    child: Child,
}

/// The watchdogs of this process: there is one faultline session per process.
static ARMED: Mutex<Vec<Armed>> = Mutex::new(Vec::new());

/// What [`arm`] did, for the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arming {
    /// Every watchdog's pid.
    Armed {
        pids: Vec<u32>,
    },
    Off {
        why: String,
    },
    Failed {
        why: String,
    },
}

/// Starts the watchdogs of the session at `dir` (once per process and session).
pub fn arm(dir: &Path) -> Arming {
    if std::env::var(ENV_SWITCH).is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
        return Arming::Off {
            why: format!("{ENV_SWITCH}=off"),
        };
    }
    let mut armed = ARMED.lock().unwrap_or_else(PoisonError::into_inner);
    if armed.first().is_some_and(|current| current.dir == dir) {
        return Arming::Armed {
            pids: armed.iter().map(|a| a.child.id()).collect(),
        };
    }
    let mut new = Vec::with_capacity(WATCHDOGS);
    for _ in 0..WATCHDOGS {
        match spawn(dir, None) {
            Ok(one) => new.push(one),
            Err(why) => {
                new.into_iter().for_each(stand_down);
                return Arming::Failed { why };
            }
        }
    }
    let pids = new.iter().map(|a| a.child.id()).collect();
    // The watchdogs of an earlier session in this process are told all is well.
    for old in std::mem::replace(&mut *armed, new) {
        stand_down(old);
    }
    drop(armed);
    watch_the_watchdog();
    Arming::Armed { pids }
}

/// Starts `faultline watchdog DIR`; `after` is what it journals first should it heal
/// (the death of the watchdog it replaces).
fn spawn(dir: &Path, after: Option<&str>) -> Result<Armed, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find the faultline binary: {e}"))?;
    let mut command = Command::new(&exe);
    // A crash point is the watched process's, never its healer's.
    command
        .arg("watchdog")
        .arg(dir)
        .env_remove(super::journal::CRASH_AFTER);
    if let Some(after) = after {
        command.arg("--after").arg(after);
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid(2) is async-signal-safe and allocates nothing. Its own session:
    // no signal meant for faultline's terminal (Ctrl-C, hang-up, a kill of its
    // process group) ends a process that heals after faultline.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            nix::unistd::setsid()
                .map(drop)
                .map_err(std::io::Error::from)
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {} watchdog: {e}", exe.display()))?;
    let Some(stdin) = child.stdin.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("the watchdog's stdin was not piped".into());
    };
    Ok(Armed {
        dir: dir.to_path_buf(),
        stdin,
        child,
    })
}

/// What happened to the watchdog since the journal last heard: taken by the journal
/// before its next record, so the death and the re-arming are on record.
static NOTES: Mutex<Vec<crate::session::event::WatchdogEvent>> = Mutex::new(Vec::new());

/// How often the engine looks whether its watchdog still lives.
const LOOK_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// The engine watches its watchdogs: one that died (killed, OOM) is replaced at once,
/// and the journal says so. One thread per process, while watchdogs are armed.
fn watch_the_watchdog() {
    static WATCHING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if WATCHING.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(LOOK_EVERY);
            let mut armed = ARMED.lock().unwrap_or_else(PoisonError::into_inner);
            if armed.is_empty() {
                WATCHING.store(false, std::sync::atomic::Ordering::SeqCst);
                return;
            }
            let mut notes = NOTES.lock().unwrap_or_else(PoisonError::into_inner);
            armed.retain_mut(|current| replace_if_dead(current, &mut notes));
        }
    });
}

/// Replaces `current` if it died, noting both; false when it died and could not be
/// replaced (it is then dropped).
fn replace_if_dead(
    current: &mut Armed,
    notes: &mut Vec<crate::session::event::WatchdogEvent>,
) -> bool {
    let Ok(Some(status)) = current.child.try_wait() else {
        return true;
    };
    let old = current.child.id();
    let died = format!("the watchdog (pid {old}) died: {status}");
    notes.push(crate::session::event::WatchdogEvent {
        armed: false,
        pid: Some(old),
        why: Some(died.clone()),
    });
    match spawn(&current.dir, Some(&died)) {
        Ok(new) => {
            notes.push(crate::session::event::WatchdogEvent {
                armed: true,
                pid: Some(new.child.id()),
                why: Some(format!("re-armed after {died}")),
            });
            *current = new;
            true
        }
        Err(why) => {
            notes.push(crate::session::event::WatchdogEvent {
                armed: false,
                pid: None,
                why: Some(format!("could not re-arm after {died}: {why}")),
            });
            false
        }
    }
}

/// The watchdog notes not yet journaled.
pub(super) fn take_notes() -> Vec<crate::session::event::WatchdogEvent> {
    std::mem::take(&mut *NOTES.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Tells the watchdogs faultline ended cleanly (every fault healed), and reaps them.
pub fn disarm() {
    let armed = std::mem::take(&mut *ARMED.lock().unwrap_or_else(PoisonError::into_inner));
    armed.into_iter().for_each(stand_down);
}

fn stand_down(mut armed: Armed) {
    // If the write fails the watchdog is gone already, or heals a healed session.
    let _ = writeln!(armed.stdin, "{DONE}");
    drop(armed.stdin);
    let _ = armed.child.wait();
}

/// `faultline watchdog SESSION`: waits for faultline to end; heals the session if it
/// ended without saying `done`. Returns the exit code.
pub fn watch(dir: &Path, after: Option<&str>) -> Exit {
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
        return Exit::OK;
    }
    tracing::warn!(session = %dir.display(), "faultline ended without healing; healing its session");
    // The death of the watchdog this one replaced, should faultline have died before
    // its journal took the note.
    let path = dir.join("journal.jsonl");
    let noted = |after: &str| {
        super::journal::read(&path).is_ok_and(|c| {
            c.records.iter().any(|r| {
                matches!(&r.event, super::event::Event::Watchdog(w) if w.why.as_deref() == Some(after))
            })
        })
    };
    if let Some(after) = after
        && !noted(after)
        && let Ok(mut journal) = super::journal::Journal::open(&path)
    {
        let _ = journal.append(
            super::journal::Scope::default(),
            super::event::Event::Watchdog(super::event::WatchdogEvent {
                armed: false,
                pid: None,
                why: Some(format!("{after} (said by its replacement)")),
            }),
        );
    }
    match crate::session::heal::heal_unless_healed(dir, HEALER) {
        Ok(None) => {
            tracing::info!("the other watchdog healed the session already");
            Exit::OK
        }
        Ok(Some(healed)) if healed.failures.is_empty() => {
            tracing::info!(actions = ?healed.actions, "watchdog healed the session");
            Exit::OK
        }
        Ok(Some(healed)) => {
            tracing::error!(failures = ?healed.failures, "watchdog could not heal everything");
            Exit::FAILED
        }
        Err(e) => {
            tracing::error!(error = %e, "watchdog could not heal the session");
            Exit::UNREADABLE
        }
    }
}
