//! `faultline heal SESSION`: after faultline itself was killed (SIGKILL, power loss),
//! the journal still says what it injected and which process groups it started. This
//! heals every fault without a heal record and ends every group still alive — only
//! processes the journal names, each checked against its recorded start time so a
//! reused pid is never touched — and removes the iptables rules of net faults, found
//! by their `faultline:<tag>` comment only; removes disk fillers and the tmpfs mounts
//! the session made; unpauses / reconnects / starts the containers of docker faults —
//! and journals what it did.

use std::collections::BTreeSet;
use std::path::Path;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::exec;
use crate::journal::{self, Journal, JournalError, Record, Scope};
use crate::nemesis::process::{ProcState, proc_state};
use crate::nemesis::{clock, disk, net};

/// What healing did.
#[derive(Debug, Default)]
pub struct Healed {
    /// One line per action, for the operator.
    pub actions: Vec<String>,
    /// Actions that failed.
    pub failures: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum HealError {
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// The same process the journal recorded: alive and started at the recorded time.
fn same_process(pid: i32, started: Option<u64>) -> bool {
    match (exec::start_time(pid), started) {
        (Some(now), Some(then)) => now == then,
        _ => false,
    }
}

/// Faults injected and never healed, in journal order.
fn unhealed(records: &[Record]) -> Vec<&Record> {
    let key = |r: &Record| {
        (
            r.scope.clone(),
            r.data
                .get("fault")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        )
    };
    let mut open: Vec<&Record> = Vec::new();
    for r in records {
        match r.kind.as_str() {
            "fault-injected" => open.push(r),
            "fault-healed" => {
                let k = key(r);
                if let Some(i) = open.iter().position(|o| key(o) == k) {
                    open.remove(i);
                }
            }
            _ => {}
        }
    }
    open
}

fn heal_fault(record: &Record, by: &str, out: &mut Healed) -> Value {
    let fault = record
        .data
        .get("fault")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let undo = record.data.get("undo").cloned().unwrap_or(Value::Null);
    let result = if let Some(net) = undo.get("net") {
        heal_net(fault, net)
    } else if let Some(spec) = undo.get("docker") {
        crate::nemesis::docker::heal_from_undo(spec)
            .map(|line| format!("{fault}: {line}"))
            .map_err(|e| format!("{fault}: {e}"))
    } else if let Some(proxy) = undo.get("proxy") {
        // The proxy is a task of the faultline process: it ended with it.
        Ok(format!(
            "{fault}: proxy {} ran inside faultline and ended with it; no toxic is left",
            proxy.get("listen").and_then(Value::as_str).unwrap_or("?")
        ))
    } else if let Some(control) = undo.pointer("/clock/control").and_then(Value::as_str) {
        clock::clear(Path::new(control))
            .map(|line| format!("{fault}: {line}"))
            .map_err(|e| format!("{fault}: {e}"))
    } else if let Some(filler) = undo.pointer("/disk/filler").and_then(Value::as_str) {
        disk::remove_filler(Path::new(filler))
            .map(|line| format!("{fault}: {line}"))
            .map_err(|e| format!("{fault}: {e}"))
    } else {
        heal_other(fault, &undo)
    };
    match &result {
        Ok(line) => out.actions.push(line.clone()),
        Err(line) => out.failures.push(line.clone()),
    }
    json!({"fault": fault, "result": result, "by": by})
}

/// A net fault: deletes every rule still carrying its tag (in its namespace).
fn heal_net(fault: &str, net: &Value) -> Result<String, String> {
    let netns = net.get("netns").and_then(Value::as_str);
    let Some(tag) = net
        .get("tag")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    else {
        return Err(format!("{fault}: the net undo record names no tag"));
    };
    let place = netns
        .map(|ns| format!(" in netns {ns}"))
        .unwrap_or_default();
    net::remove_tagged(netns, tag)
        .map(|n| {
            format!(
                "{fault}: {n} rule(s) tagged {}{tag} deleted{place}",
                net::TAG_PREFIX
            )
        })
        .map_err(|e| format!("{fault}: {e}{place}"))
}

/// A process or command fault.
fn heal_other(fault: &str, undo: &Value) -> Result<String, String> {
    let pid = undo
        .get("pid")
        .and_then(Value::as_i64)
        .and_then(|p| i32::try_from(p).ok());
    let started = undo.get("started").and_then(Value::as_u64);
    let action = undo.get("action").and_then(Value::as_str).unwrap_or("");
    match (pid, undo.get("heal").and_then(Value::as_str)) {
        (Some(pid), _) if !same_process(pid, started) => {
            Ok(format!("{fault}: pid {pid} is gone; nothing to undo"))
        }
        (Some(pid), _) if action == "Pause" && proc_state(pid) == ProcState::Stopped => {
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGCONT)
                .map(|()| format!("{fault}: SIGCONT sent to pid {pid}"))
                .map_err(|e| format!("{fault}: SIGCONT to pid {pid}: {e}"))
        }
        (Some(pid), _) if action.starts_with("Term") => {
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL)
                .map(|()| format!("{fault}: pid {pid} outlived its SIGTERM: SIGKILL sent"))
                .map_err(|e| format!("{fault}: SIGKILL to pid {pid}: {e}"))
        }
        (Some(pid), _) => Ok(format!("{fault}: pid {pid} needs no undo ({action})")),
        (None, Some(heal)) => {
            let cwd = undo.get("cwd").and_then(Value::as_str).unwrap_or(".");
            match std::process::Command::new("sh")
                .arg("-c")
                .arg(heal)
                .current_dir(cwd)
                .status()
            {
                Ok(status) if status.success() => {
                    Ok(format!("{fault}: heal command `{heal}` exited 0"))
                }
                Ok(status) => Err(format!("{fault}: heal command `{heal}` ended {status}")),
                Err(e) => Err(format!("{fault}: heal command `{heal}`: {e}")),
            }
        }
        (None, None) => Err(format!("{fault}: the journal holds no way to undo it")),
    }
}

/// Unmounts every tmpfs the journal says was mounted and never removed.
fn heal_mounts(
    records: &[Record],
    journal: &mut Journal,
    by: &str,
    out: &mut Healed,
) -> Result<(), HealError> {
    let mut open: Vec<&Record> = Vec::new();
    for r in records {
        let path = r.data.get("path").and_then(Value::as_str);
        match r.kind.as_str() {
            "mount-created" => open.push(r),
            "mount-removed" => open.retain(|o| o.data.get("path").and_then(Value::as_str) != path),
            _ => {}
        }
    }
    for r in open {
        let Some(path) = r.data.get("path").and_then(Value::as_str) else {
            continue;
        };
        let result = disk::unmount(Path::new(path))
            .map(|()| format!("tmpfs at {path} unmounted"))
            .map_err(|e| e.to_string());
        match &result {
            Ok(line) => out.actions.push(line.clone()),
            Err(line) => out.failures.push(line.clone()),
        }
        journal.append(
            r.scope.clone(),
            "mount-removed",
            &json!({"path": path, "result": result, "by": by}),
        )?;
    }
    Ok(())
}

/// Ends every process still carrying the session's mark: one started too late for
/// its `command-started` record, or one that left its process group.
fn end_marked(
    dir: &Path,
    journal: &mut Journal,
    by: &str,
    out: &mut Healed,
) -> Result<(), HealError> {
    // A few passes: a marked process may fork while its siblings are being ended,
    // and /proc hides one mid-exec.
    for _ in 0..MARK_PASSES {
        let found = exec::mark::marked(dir);
        if found.is_empty() {
            break;
        }
        end_each(found, journal, by, out)?;
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(())
}

/// How many times [`end_marked`] looks again for marked processes.
const MARK_PASSES: usize = 5;

fn end_each(
    found: Vec<exec::mark::Marked>,
    journal: &mut Journal,
    by: &str,
    out: &mut Healed,
) -> Result<(), HealError> {
    for process in found {
        let line = format!(
            "process {} (`{}`) bearing the session's mark ended",
            process.pid, process.command
        );
        let result = exec::mark::end(&process)
            .map(|()| line.clone())
            .map_err(|e| format!("{line}: {e}"));
        match &result {
            Ok(line) => out.actions.push(line.clone()),
            Err(line) => out.failures.push(line.clone()),
        }
        journal.append(
            Scope::default(),
            "marked-ended",
            &json!({"pid": process.pid, "command": process.command, "result": result, "by": by}),
        )?;
    }
    Ok(())
}

/// Heals what the session at `dir` left behind (`faultline heal`, `faultline resume`).
pub fn heal_session(dir: &Path) -> Result<Healed, HealError> {
    heal_session_as(dir, "faultline heal")
}

/// Heals what the session at `dir` left behind; `by` says who, in every record.
pub fn heal_session_as(dir: &Path, by: &str) -> Result<Healed, HealError> {
    let path = dir.join("journal.jsonl");
    // Refuses a directory without a journal before creating anything in it.
    journal::read(&path)?;
    // Then the lock: the records read next are the last anyone wrote.
    let mut journal = Journal::open(&path)?;
    let records = journal::read(&path)?.records;
    let mut out = Healed::default();
    journal.append(Scope::default(), "heal-started", &json!({"by": by}))?;
    for record in unhealed(&records) {
        let data = heal_fault(record, by, &mut out);
        journal.append(record.scope.clone(), "fault-healed", &data)?;
    }
    heal_mounts(&records, &mut journal, by, &mut out)?;
    // Groups last: a paused victim is resumed before its group is ended.
    let mut seen = BTreeSet::new();
    for r in records.iter().filter(|r| r.kind == "command-started") {
        let Some(pgid) = r
            .data
            .get("pgid")
            .and_then(Value::as_i64)
            .and_then(|p| i32::try_from(p).ok())
        else {
            continue;
        };
        let started = r.data.get("started").and_then(Value::as_u64);
        if !seen.insert(pgid) || !same_process(pgid, started) {
            continue;
        }
        let ended = exec::signal_group(pgid, Signal::SIGKILL);
        let line = format!(
            "process group {pgid} ({}) ended",
            r.data.get("name").and_then(Value::as_str).unwrap_or("?")
        );
        match ended {
            Ok(()) => out.actions.push(line.clone()),
            Err(e) => out.failures.push(format!("{line}: {e}")),
        }
        journal.append(
            r.scope.clone(),
            "group-ended",
            &json!({"pgid": pgid, "by": by}),
        )?;
    }
    end_marked(dir, &mut journal, by, &mut out)?;
    journal.append(
        Scope::default(),
        "heal-finished",
        &json!({"by": by, "actions": out.actions, "failures": out.failures}),
    )?;
    Ok(out)
}
