//! Reading what the system under test wrote where any uid may make names (a seed's
//! 1777 artifacts directory: a history, a final state, replica dumps): never through
//! a symlink, a regular file only, bounded, and believed only when faultline or a
//! process of this run owns it. A base module: the checkers (`oracle`), the engine and
//! the session directory (`session::dir`, which makes those directories and writes in
//! them) all read through it.

use std::path::Path;

/// `dir` as a directory descriptor, refused when its last component is a symlink.
pub fn open_dir_nofollow(dir: &Path) -> std::io::Result<std::os::fd::OwnedFd> {
    use nix::fcntl::OFlag;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    Ok(nix::fcntl::open(dir, flags, nix::sys::stat::Mode::empty())?)
}

/// Most faultline reads of one file the system under test wrote (a history, a final
/// state): larger is refused, not truncated.
pub const READ_LIMIT: u64 = 1 << 30;

fn untrusted_flags() -> nix::fcntl::OFlag {
    use nix::fcntl::OFlag;
    // O_NONBLOCK: a fifo planted under the name does not hang the open.
    OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC
}

/// Reads a file the system under test wrote, where any uid may have made the name:
/// never through a symlink as its last component, a regular file only, at most
/// `limit` bytes.
pub fn read_untrusted(path: &Path, limit: u64) -> std::io::Result<String> {
    let fd = nix::fcntl::open(path, untrusted_flags(), nix::sys::stat::Mode::empty())?;
    believed(path, nix::sys::stat::fstat(&fd)?.st_uid)?;
    read_fd(fd, limit)
}

/// Opens, as [`read_untrusted`] does, a file to be read as a stream (a history):
/// never through a symlink as its last component, believed, a regular file only.
pub fn open_untrusted(path: &Path) -> std::io::Result<std::fs::File> {
    let fd = nix::fcntl::open(path, untrusted_flags(), nix::sys::stat::Mode::empty())?;
    believed(path, nix::sys::stat::fstat(&fd)?.st_uid)?;
    let file = std::fs::File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// Below a directory anyone may write (a seed's 1777 artifacts), what is there is
/// believed only when faultline or a process of this run made it: another local user
/// could have made the name first (a forged history, a planted `replicas/`). `owner`
/// is the uid owning `path`; each directory above it is checked the same way, so a
/// directory a stranger made in between vouches for nothing. Elsewhere a directory's
/// owner vouches for what is in it.
pub fn believed(path: &Path, owner: u32) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let mut at = std::path::absolute(path)?;
    let mut owner = owner;
    let mut uids = None;
    while let Some(parent) = at.parent() {
        let dir = std::fs::symlink_metadata(parent)?;
        if dir.mode() & 0o002 != 0 && !uids.get_or_insert_with(run_uids).contains(&owner) {
            return Err(std::io::Error::other(format!(
                "{} is owned by {} (uid {owner}), neither faultline nor a process of this run, \
                 in {} where anyone may make names: not believed (another user may have made it)",
                at.display(),
                user_name(owner),
                parent.display()
            )));
        }
        owner = dir.uid();
        at = parent.to_path_buf();
    }
    Ok(())
}

/// faultline's own uids and those its run's processes (its descendants, alive now:
/// the services, which outlive every command that writes a result) run as.
fn run_uids() -> std::collections::BTreeSet<u32> {
    let me = std::process::id();
    let mut uids = std::collections::BTreeSet::from([
        nix::unistd::getuid().as_raw(),
        nix::unistd::geteuid().as_raw(),
    ]);
    let mut parents = std::collections::HashMap::new();
    let mut owners = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| {
                    v.split_whitespace()
                        .filter_map(|n| n.parse::<u32>().ok())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        };
        if let Some(ppid) = field("PPid:").first() {
            parents.insert(pid, *ppid);
        }
        owners.insert(pid, field("Uid:"));
    }
    for (pid, ids) in &owners {
        let mut at = *pid;
        // Bounded: a pid chain that loops (pids reused mid-scan) ends the walk.
        for _ in 0..64 {
            match parents.get(&at) {
                Some(&parent) if parent == me => {
                    uids.extend(ids.iter().copied());
                    break;
                }
                Some(&parent) if parent > 1 => at = parent,
                _ => break,
            }
        }
    }
    uids
}

/// [`read_untrusted`] of `name` in the directory `dir` (a descriptor).
pub fn read_untrusted_at(
    dir: &std::os::fd::OwnedFd,
    name: &std::ffi::OsStr,
    limit: u64,
) -> std::io::Result<String> {
    let fd = nix::fcntl::openat(dir, name, untrusted_flags(), nix::sys::stat::Mode::empty())?;
    // The directory itself is the caller's to have believed ([`believed`]).
    let world_writable = nix::sys::stat::fstat(dir)?.st_mode & 0o002 != 0;
    let owner = nix::sys::stat::fstat(&fd)?.st_uid;
    if world_writable && !run_uids().contains(&owner) {
        return Err(std::io::Error::other(format!(
            "owned by {} (uid {owner}), neither faultline nor a process of this run: not believed",
            user_name(owner)
        )));
    }
    read_fd(fd, limit)
}

fn read_fd(fd: std::os::fd::OwnedFd, limit: u64) -> std::io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    file.take(limit.saturating_add(1))
        .read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(std::io::Error::other(format!("larger than {limit} bytes")));
    }
    Ok(text)
}

/// The user name of `uid` (`uid <n>` when the password database has none).
pub fn user_name(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map_or_else(|| format!("uid {uid}"), |u| u.name)
}
