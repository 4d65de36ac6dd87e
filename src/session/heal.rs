//! `faultline heal SESSION`: after faultline itself was killed (SIGKILL, power loss),
//! the journal still says what it injected and which process groups it started. This
//! heals every fault without a heal record and ends every group still alive — only
//! processes the journal names, each checked against its recorded start time so a
//! reused pid is never touched — ends every process in each cgroup it made for
//! services (a daemon that left its group included) and removes those cgroups, on
//! this machine and on each node over SSH;
//! removes the iptables rules of net faults, found by their `faultline:<tag>` comment
//! only; deletes the run's own network namespace (`isolate: netns`); removes disk fillers and the tmpfs mounts the session made; unpauses /
//! reconnects / starts the containers of docker faults — and journals what it did.

use std::path::Path;

use nix::sys::signal::Signal;

use super::event::{
    CgroupRemoved, Event, FaultHealed, FaultInjected, GroupEnded, HealBy, HealFinished,
    MarkedEnded, MountRemoved, NetnsRemoved,
};
use super::journal::{self, Journal, JournalError, Scope, Skipped};
use super::view::{Scoped, View};
use crate::exec;
use crate::host::Reach;
use crate::nemesis::disk;

/// What healing did.
#[derive(Debug, Default)]
pub struct Healed {
    /// One line per action, for the operator.
    pub actions: Vec<String>,
    /// Actions that failed.
    pub failures: Vec<String>,
    /// Journal lines that could not be read (their records, if any, were not healed).
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, thiserror::Error)]
pub enum HealError {
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// Heals one open fault from its undo record alone, each kind in its own way.
fn heal_fault(
    open: &Scoped<FaultInjected>,
    reach: &Reach,
    by: &str,
    out: &mut Healed,
) -> FaultHealed {
    let fault = open.item.fault.as_str();
    let result = match &open.item.undo {
        Some(undo) => undo.heal(fault, reach),
        None => Err(format!("{fault}: the journal holds no way to undo it")),
    };
    match &result {
        Ok(line) => out.actions.push(line.clone()),
        Err(line) => out.failures.push(line.clone()),
    }
    FaultHealed {
        fault: fault.to_string(),
        result: Some(result),
        by: Some(by.to_string()),
    }
}

/// Journals what healing did; a journal that cannot take it (a full disk) never stops
/// the healing: the failure is said with the actions.
fn note(journal: &mut Journal, out: &mut Healed, scope: Scope, event: Event) {
    if let Err(e) = journal.append(scope, event) {
        out.failures.push(format!("not journaled: {e}"));
    }
}

/// Unmounts every tmpfs the journal says was mounted and never removed.
fn heal_mounts(view: &View, journal: &mut Journal, by: &str, out: &mut Healed) {
    for open in &view.open_mounts {
        let path = &open.item.path;
        let result = disk::unmount(Path::new(path))
            .map(|()| format!("tmpfs at {path} unmounted"))
            .map_err(|e| e.to_string());
        match &result {
            Ok(line) => out.actions.push(line.clone()),
            Err(line) => out.failures.push(line.clone()),
        }
        note(
            journal,
            out,
            open.scope.clone(),
            Event::MountRemoved(MountRemoved {
                path: path.clone(),
                result: Some(result),
                by: Some(by.to_string()),
            }),
        );
    }
}

/// Deletes the run's network namespace the journal says was made and never deleted
/// (after its faults are healed and its processes ended: the rules in it go with it).
fn heal_netns(view: &View, journal: &mut Journal, by: &str, out: &mut Healed) {
    for open in &view.open_netns {
        let name = &open.item.name;
        let result = crate::host::netns::delete(name, open.item.inode);
        match &result {
            Ok(line) => out.actions.push(line.clone()),
            Err(line) => out
                .failures
                .push(format!("network namespace {name}: {line}")),
        }
        note(
            journal,
            out,
            open.scope.clone(),
            Event::NetnsRemoved(NetnsRemoved {
                name: name.clone(),
                result: Some(result),
                by: Some(by.to_string()),
            }),
        );
    }
}

/// Ends every member of each cgroup the journal says was made and never removed, and
/// removes it: the services' before the iteration's that holds them.
fn heal_cgroups(view: &View, journal: &mut Journal, by: &str, out: &mut Healed) {
    for open in view.open_cgroups.iter().rev() {
        let path = &open.item.path;
        let result = exec::cgroup::remove(Path::new(path));
        match &result {
            Ok(line) => out.actions.push(line.clone()),
            Err(line) => out.failures.push(line.clone()),
        }
        note(
            journal,
            out,
            open.scope.clone(),
            Event::CgroupRemoved(CgroupRemoved {
                path: path.clone(),
                result: Some(result),
                by: Some(by.to_string()),
            }),
        );
    }
}

/// Ends every process still carrying the session's mark: one started too late for
/// its `command-started` record, or one that left its process group.
fn end_marked(dir: &Path, journal: &mut Journal, by: &str, out: &mut Healed) {
    end_marked_since(dir, 0, journal, by, out);
}

/// The sweep of a clean end: every process this process started for the session at
/// `dir` has ended with its service, except one that left its process group and
/// had no cgroup to hold it (no cgroup v2 delegation, an unprivileged run). Those
/// still bearing the mark, started since this process did, are ended and journaled.
/// Returns what was done and what failed.
pub fn sweep_marked_at_clean_end(dir: &Path, journal: &mut Journal) -> Healed {
    let since = exec::start_time(std::process::id().cast_signed()).unwrap_or(u64::MAX);
    let mut out = Healed::default();
    end_marked_since(dir, since, journal, "faultline (clean end)", &mut out);
    out
}

fn end_marked_since(dir: &Path, since: u64, journal: &mut Journal, by: &str, out: &mut Healed) {
    // A few passes: a marked process may fork while its siblings are being ended,
    // and /proc hides one mid-exec.
    for _ in 0..MARK_PASSES {
        let found = exec::mark::marked_since(dir, since);
        if found.is_empty() {
            break;
        }
        end_each(found, journal, by, out);
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// How many times [`end_marked`] looks again for marked processes.
const MARK_PASSES: usize = 5;

fn end_each(found: Vec<exec::mark::Marked>, journal: &mut Journal, by: &str, out: &mut Healed) {
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
        note(
            journal,
            out,
            Scope::default(),
            Event::MarkedEnded(MarkedEnded {
                pid: process.pid,
                command: process.command.clone(),
                result: Some(result),
                by: by.to_string(),
            }),
        );
    }
}

/// Heals what the session at `dir` left behind (`faultline heal`, `faultline resume`).
pub fn heal_session(dir: &Path) -> Result<Healed, HealError> {
    heal_session_as(dir, "faultline heal")
}

/// Heals what the session at `dir` left behind; `by` says who, in every record.
/// Damaged journal lines are passed over (and named in `skipped`): every intact
/// record around them is healed.
pub fn heal_session_as(dir: &Path, by: &str) -> Result<Healed, HealError> {
    heal(dir, by, false).map(|healed| healed.unwrap_or_default())
}

/// [`heal_session_as`], unless the journal's last record is a heal by `by` that
/// finished: faultline's other watchdog healed the session a moment ago, and nobody
/// wrote since (`None`).
pub fn heal_unless_healed(dir: &Path, by: &str) -> Result<Option<Healed>, HealError> {
    heal(dir, by, true)
}

fn heal(dir: &Path, by: &str, unless_healed: bool) -> Result<Option<Healed>, HealError> {
    let path = dir.join("journal.jsonl");
    // Refuses a directory without a journal before creating anything in it.
    journal::read(&path)?;
    // Then the lock: the records read next are the last anyone wrote.
    let mut journal = Journal::open(&path)?;
    let contents = journal::read(&path)?;
    let healed = contents
        .records
        .last()
        .is_some_and(|r| matches!(&r.event, Event::HealFinished(h) if h.by == by));
    if unless_healed && healed {
        return Ok(None);
    }
    let view = View::of(&contents.records);
    let out = Healed {
        skipped: contents.skipped,
        ..Healed::default()
    };
    // Nodes over SSH are reached from a thread of their own; without any, nothing
    // is spawned (the watchdog heals from a bare process).
    if view.nodes.is_empty() {
        return Ok(Some(heal_view(
            dir,
            &view,
            &mut journal,
            &Reach::default(),
            by,
            out,
        )));
    }
    let nodes = view
        .nodes
        .iter()
        .map(|(name, n)| (name.clone(), n.spec.clone()))
        .collect();
    Ok(Some(crate::host::reach::with_nodes(&nodes, |reach| {
        heal_view(dir, &view, &mut journal, reach, by, out)
    })))
}

/// Heals what `view` says is left, on this machine and (through `reach`) on nodes.
fn heal_view(
    dir: &Path,
    view: &View,
    journal: &mut Journal,
    reach: &Reach,
    by: &str,
    mut out: Healed,
) -> Healed {
    note(
        journal,
        &mut out,
        Scope::default(),
        Event::HealStarted(HealBy { by: by.to_string() }),
    );
    for open in &view.open_faults {
        let healed = heal_fault(open, reach, by, &mut out);
        note(
            journal,
            &mut out,
            open.scope.clone(),
            Event::FaultHealed(healed),
        );
    }
    heal_mounts(view, journal, by, &mut out);
    // Groups last: a paused victim is resumed before its group is ended.
    for group in &view.groups {
        let pgid = group.item.pgid;
        let line = format!("process group {pgid} ({}) ended", group.item.name);
        let ended = match &group.item.node {
            None if !exec::same_process(pgid, group.item.started) => continue,
            None => exec::signal_group(pgid, Signal::SIGKILL).map_err(|e| e.to_string()),
            Some(node) => match end_remote_group(reach, node, pgid, group.item.started) {
                None => continue,
                Some(ended) => ended,
            },
        };
        let line = match &group.item.node {
            Some(node) => format!("{line} on node {node}"),
            None => line,
        };
        match ended {
            Ok(()) => out.actions.push(line),
            Err(e) => out.failures.push(format!("{line}: {e}")),
        }
        note(
            journal,
            &mut out,
            group.scope.clone(),
            Event::GroupEnded(GroupEnded {
                pgid,
                by: by.to_string(),
            }),
        );
    }
    // What left its group (a daemon) is still in its service's cgroup.
    heal_cgroups(view, journal, by, &mut out);
    heal_node_cgroups(dir, view, reach, &mut out);
    end_marked(dir, journal, by, &mut out);
    heal_netns(view, journal, by, &mut out);
    // Master connections a killed faultline left running on this machine.
    for node in view.nodes.values() {
        if crate::host::ssh::close_master(Path::new(&node.control)) {
            out.actions.push(format!(
                "ssh master connection to node {} closed",
                node.node
            ));
        }
    }
    let finished = Event::HealFinished(HealFinished {
        by: by.to_string(),
        actions: out.actions.clone(),
        failures: out.failures.clone(),
        skipped_lines: out.skipped.iter().map(|s| s.line).collect(),
    });
    note(journal, &mut out, Scope::default(), finished);
    out
}

/// Ends every cgroup the session made on each of its nodes (a command's there, a
/// daemon that left its group included) and removes it. They are found on the node by
/// the name the session gives them (`ssh::cgroup_prefix`): a crash between the
/// command's start and its record leaves none behind either. What was done is in the
/// `heal-finished` record's lines.
fn heal_node_cgroups(dir: &Path, view: &View, reach: &Reach, out: &mut Healed) {
    let prefix = crate::host::ssh::cgroup_prefix(&exec::mark::value(dir));
    for node in view.nodes.keys() {
        let host = match reach.host(Some(node)) {
            Ok(host) => host,
            Err(why) => {
                out.failures
                    .push(format!("the session's cgroups on node {node}: {why}"));
                continue;
            }
        };
        let Some(ssh) = host.ssh() else {
            continue;
        };
        let lines = reach
            .block_on(ssh.end_cgroups_named(&prefix))
            .unwrap_or_else(|why| {
                vec![Err(format!("the session's cgroups on node {node}: {why}"))]
            });
        for line in lines {
            match line {
                Ok(line) => out.actions.push(line),
                Err(line) => out.failures.push(line),
            }
        }
    }
}

/// Ends a group on a node if the same process still leads it there; `None` when it
/// is gone (nothing to do).
fn end_remote_group(
    reach: &Reach,
    node: &str,
    pgid: i32,
    started: Option<u64>,
) -> Option<Result<(), String>> {
    let host = match reach.host(Some(node)) {
        Ok(host) => host,
        Err(why) => return Some(Err(why)),
    };
    reach
        .block_on(async {
            let now = host.start_time(pgid).await;
            if now.is_none() || now != started {
                return None;
            }
            Some(
                host.signal_group(pgid, Signal::SIGKILL)
                    .await
                    .map_err(|e| e.to_string()),
            )
        })
        .unwrap_or_else(|why| Some(Err(why)))
}
