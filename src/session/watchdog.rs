//! A session's watchdog: so that nothing faultline started outlives it, even when it
//! is SIGKILLed, OOM-killed or crashes past its own healing.
//!
//! When a session starts, faultline spawns `faultline watchdog SESSION` in its own
//! process group and keeps the write end of the watchdog's stdin. A clean end (every
//! fault already healed by faultline itself, signals included) writes `done`. When the
//! input ends without `done`, the kernel closed it because faultline died: the
//! watchdog heals the session from its journal — faults, mounts, the process groups
//! it recorded (only those) and the services' cgroups with every process in them —
//! under the journal's lock, and says so in it.
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
    match spawn(dir, None) {
        Ok(new) => {
            let pid = new.child.id();
            // A watchdog of an earlier session in this process is told all is well.
            if let Some(old) = armed.replace(new) {
                stand_down(old);
            }
            drop(armed);
            watch_the_watchdog();
            Arming::Armed { pid }
        }
        Err(why) => Arming::Failed { why },
    }
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
    // Its own process group: a Ctrl-C or hang-up meant for faultline's terminal
    // group must not end the one process that heals after faultline.
    let mut child = std::os::unix::process::CommandExt::process_group(
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        0,
    )
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

/// The engine watches the watchdog: one that died (killed, OOM) is replaced at once,
/// and the journal says so. One thread per process, while a watchdog is armed.
fn watch_the_watchdog() {
    static WATCHING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if WATCHING.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(LOOK_EVERY);
            let mut armed = ARMED.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(current) = armed.as_mut() else {
                WATCHING.store(false, std::sync::atomic::Ordering::SeqCst);
                return;
            };
            let Ok(Some(status)) = current.child.try_wait() else {
                continue;
            };
            let old = current.child.id();
            let dir = current.dir.clone();
            let died = format!("the watchdog (pid {old}) died: {status}");
            let mut notes = NOTES.lock().unwrap_or_else(PoisonError::into_inner);
            notes.push(crate::session::event::WatchdogEvent {
                armed: false,
                pid: Some(old),
                why: Some(died.clone()),
            });
            match spawn(&dir, Some(&died)) {
                Ok(new) => {
                    notes.push(crate::session::event::WatchdogEvent {
                        armed: true,
                        pid: Some(new.child.id()),
                        why: Some(format!("re-armed after {died}")),
                    });
                    *armed = Some(new);
                }
                Err(why) => {
                    notes.push(crate::session::event::WatchdogEvent {
                        armed: false,
                        pid: None,
                        why: Some(format!("could not re-arm after {died}: {why}")),
                    });
                    *armed = None;
                }
            }
        }
    });
}

/// The watchdog notes not yet journaled.
pub(super) fn take_notes() -> Vec<crate::session::event::WatchdogEvent> {
    std::mem::take(&mut *NOTES.lock().unwrap_or_else(PoisonError::into_inner))
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
pub fn watch(dir: &Path, after: Option<&str>) -> i32 {
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
