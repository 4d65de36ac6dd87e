//! Cgroup v2 containment: a service that daemonizes (forks, `setsid`s and lets its
//! parent exit) leaves its process group, never its cgroup. Each iteration's services
//! live in a cgroup faultline makes under its own (`faultline-…/<service>`); ending
//! one ends every process in it, wherever it went in the process tree.
//!
//! Only the core files are used (`cgroup.procs`, `cgroup.kill`, `cgroup.events`): no
//! controller is enabled, so the "no internal processes" rule never applies and
//! faultline's own cgroup needs no leaf of its own.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::host::cgroup::{PREFIX, safe};

/// How long ending a cgroup's members may take before it is reported as failed.
const END_WITHIN: Duration = Duration::from_secs(5);

/// How often membership is read again while members are being ended.
const LOOK_EVERY: Duration = Duration::from_millis(10);

/// The cgroup v2 directory this process is in, when it may create cgroups there and
/// move processes into them; otherwise why not (probed once per process).
pub fn base() -> Result<&'static Path, &'static str> {
    static BASE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BASE.get_or_init(find_base) {
        Ok(path) => Ok(path),
        Err(why) => Err(why),
    }
}

fn find_base() -> Result<PathBuf, String> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let (root, mount) = mountinfo
        .lines()
        .find_map(cgroup2_mount)
        .ok_or("no cgroup v2 file system is mounted")?;
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let own = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("/proc/self/cgroup names no cgroup v2 membership")?;
    // The mount may show only part of the hierarchy (its root field).
    let relative = Path::new(own).strip_prefix(&root).map_err(|_| {
        format!(
            "this process's cgroup {own} is outside the cgroup v2 mount at {}",
            mount.display()
        )
    })?;
    let dir = mount.join(relative);
    // Moving a process needs write access to the cgroup.procs of the common ancestor
    // of where it is and where it goes: this process's own cgroup.
    let procs = dir.join("cgroup.procs");
    OpenOptions::new()
        .write(true)
        .open(&procs)
        .map_err(|e| format!("cannot write {}: {e}", procs.display()))?;
    Ok(dir)
}

/// Whether the cgroup v2 hierarchy treats cgroup namespaces as delegation boundaries
/// (mounted with `nsdelegate`, as systemd mounts it): only then does the kernel refuse
/// a service, even one running as root, that writes itself into a `cgroup.procs`
/// above its own cgroup namespace (see `exec::stay_in_own_cgroup`).
pub fn namespaces_bound_services() -> bool {
    std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|mountinfo| {
        mountinfo.lines().any(|line| {
            line.split_once(" - ").is_some_and(|(_, after)| {
                let mut fields = after.split_whitespace();
                fields.next() == Some("cgroup2")
                    && fields
                        .nth(1)
                        .is_some_and(|options| options.split(',').any(|o| o == "nsdelegate"))
            })
        })
    })
}

/// `(root, mount point)` of a `/proc/self/mountinfo` line for a cgroup2 mount.
fn cgroup2_mount(line: &str) -> Option<(PathBuf, PathBuf)> {
    let (fields, after) = line.split_once(" - ")?;
    if after.split_whitespace().next()? != "cgroup2" {
        return None;
    }
    let mut fields = fields.split_whitespace().skip(3);
    let root = unescape(fields.next()?);
    let mount = unescape(fields.next()?);
    Some((PathBuf::from(root), PathBuf::from(mount)))
}

/// mountinfo writes a space, tab, newline and backslash as `\` and three octal digits.
fn unescape(field: &str) -> String {
    let mut out = Vec::with_capacity(field.len());
    let bytes = field.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u8::from_str_radix(d, 8).ok());
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The name of the next iteration's cgroup: `faultline-<session>-<pid>-<n>`, unique
/// among every faultline running (the session alone is not: two sessions started
/// in the same second under different roots share a name).
pub fn iteration_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let session = super::mark::current()
        .and_then(|(_, dir)| {
            Path::new(&dir)
                .file_name()
                .map(|n| format!("{}-", safe(&n.to_string_lossy())))
        })
        .unwrap_or_default();
    format!("{PREFIX}{session}{}-{n}", std::process::id())
}

/// A cgroup made by this process.
#[derive(Debug)]
pub struct Cgroup {
    path: PathBuf,
}

impl Cgroup {
    /// Makes the cgroup at `path` (its parent must exist).
    pub fn create(path: PathBuf) -> std::io::Result<Cgroup> {
        std::fs::create_dir(&path)?;
        Ok(Cgroup { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its `cgroup.procs`, open for writing: a process that writes `0` to it moves
    /// itself in (the file is opened by the parent, so the child only writes).
    pub(super) fn procs(&self) -> std::io::Result<File> {
        OpenOptions::new()
            .write(true)
            .open(self.path.join("cgroup.procs"))
    }

    /// Sends `signal` to every member outside process group `pgid` (which gets it
    /// from `killpg`; none gets it twice): a SIGTERM before the kill, so a daemon that
    /// left its group may still shut down cleanly.
    pub(super) fn signal_outside(&self, pgid: i32, signal: Signal) {
        for pid in members(&self.path) {
            let pid = Pid::from_raw(pid);
            if nix::unistd::getpgid(Some(pid)).is_ok_and(|g| g.as_raw() != pgid) {
                let _ = kill(pid, signal);
            }
        }
    }

    /// Whether any live process is in it (or below it).
    pub(super) fn populated(&self) -> bool {
        populated(&self.path)
    }

    /// Ends every member, at once.
    pub(super) fn kill_members(&self) {
        let _ = kill_once(&self.path);
    }
}

/// Every live process in the cgroup at `path` and its descendants, by pid as this
/// process sees them (a pid from outside its pid namespace reads as 0 and is left out).
pub fn members(path: &Path) -> BTreeSet<i32> {
    let mut found = BTreeSet::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if let Ok(text) = std::fs::read_to_string(dir.join("cgroup.procs")) {
            found.extend(
                text.lines()
                    .filter_map(|l| l.trim().parse::<i32>().ok())
                    .filter(|p| *p > 0),
            );
        }
        stack.extend(children(&dir));
    }
    found
}

fn children(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether any live process is left in the cgroup or below it.
fn populated(path: &Path) -> bool {
    match std::fs::read_to_string(path.join("cgroup.events")) {
        Ok(events) => events.lines().any(|l| l.trim() == "populated 1"),
        Err(_) => !members(path).is_empty(),
    }
}

/// One round of killing: `cgroup.kill` (Linux ≥ 5.14) takes the whole subtree in one
/// write; without it, each member gets SIGKILL (new forks are caught by the next
/// round).
fn kill_once(path: &Path) -> std::io::Result<()> {
    let knob = path.join("cgroup.kill");
    if knob.exists() {
        return OpenOptions::new().write(true).open(knob)?.write_all(b"1");
    }
    for pid in members(path) {
        match kill(Pid::from_raw(pid), Signal::SIGKILL) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Whether `path` is a cgroup faultline makes: on a cgroup v2 file system, named
/// `faultline-…` or directly inside one, no `..`. A journal naming anything else (a
/// damaged line, the root cgroup) is never acted on.
fn is_ours(path: &Path) -> bool {
    let named = |p: Option<&Path>| {
        p.and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(PREFIX))
    };
    let plain = path.components().all(|c| {
        matches!(
            c,
            std::path::Component::RootDir | std::path::Component::Normal(_)
        )
    });
    plain
        && (named(Some(path)) || named(path.parent()))
        && nix::sys::statfs::statfs(path)
            .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::CGROUP2_SUPER_MAGIC)
}

/// Ends every process in the cgroup at `path` (and below), then removes it and its
/// child cgroups. A cgroup already gone is not an error. The line says what it did.
pub fn remove(path: &Path) -> Result<String, String> {
    let shown = path.display();
    if !path.exists() {
        return Ok(format!("cgroup {shown} is gone already"));
    }
    if !is_ours(path) {
        return Err(format!(
            "{shown} is not a cgroup faultline makes (a `{PREFIX}…` cgroup v2 directory); left alone"
        ));
    }
    let ended = end_members(path).map_err(|e| format!("cgroup {shown}: {e}"))?;
    remove_tree(path).map_err(|e| format!("cgroup {shown}: cannot remove it: {e}"))?;
    Ok(match ended {
        0 => format!("cgroup {shown} removed (it was empty)"),
        n => format!("cgroup {shown}: {n} process(es) killed, cgroup removed"),
    })
}

/// Kills members until none is left; how many there were.
fn end_members(path: &Path) -> Result<usize, String> {
    let deadline = Instant::now() + END_WITHIN;
    let mut seen = BTreeSet::new();
    loop {
        let now = members(path);
        if now.is_empty() && !populated(path) {
            return Ok(seen.len());
        }
        seen.extend(now.iter().copied());
        kill_once(path).map_err(|e| format!("cannot kill its members: {e}"))?;
        if Instant::now() >= deadline {
            return Err(format!(
                "{} process(es) still in it after {END_WITHIN:?}: {now:?}",
                now.len()
            ));
        }
        std::thread::sleep(LOOK_EVERY);
    }
}

/// Removes child cgroups first: a cgroup with children cannot be removed.
fn remove_tree(path: &Path) -> std::io::Result<()> {
    for child in children(path) {
        remove_tree(&child)?;
    }
    // An exiting member may keep the cgroup busy a moment after it left the list.
    let deadline = Instant::now() + END_WITHIN;
    loop {
        match std::fs::remove_dir(path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e)
                if Instant::now() < deadline
                    && e.raw_os_error() == Some(nix::errno::Errno::EBUSY as i32) =>
            {
                std::thread::sleep(LOOK_EVERY);
            }
            Err(e) => return Err(e),
        }
    }
}
