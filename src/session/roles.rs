//! Who may attach to a session and what they may do (owner, approver, viewer), and
//! the file-system side of it: the session directory and its control socket let in
//! only the owner and the listed users.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use exacl::{AclEntry, Perm};

use super::event::Role;
use crate::untrusted::user_name;

/// The session's list: the owner (who started it) and the users named at the start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roles {
    pub owner_uid: u32,
    pub owner: String,
    pub approvers: Vec<String>,
    pub viewers: Vec<String>,
}

impl Roles {
    /// The roles for a session started by this process's real user.
    pub fn started_here(approvers: &[String], viewers: &[String]) -> Roles {
        let uid = nix::unistd::getuid().as_raw();
        Roles {
            owner_uid: uid,
            owner: user_name(uid),
            approvers: approvers.to_vec(),
            viewers: viewers.to_vec(),
        }
    }

    /// The role of the user the kernel says is at the other end; `None`: not listed.
    pub fn role_of(&self, uid: u32, user: &str) -> Option<Role> {
        if uid == self.owner_uid {
            Some(Role::Owner)
        } else if self.approvers.iter().any(|a| a == user) {
            Some(Role::Approver)
        } else if self.viewers.iter().any(|v| v == user) {
            Some(Role::Viewer)
        } else {
            None
        }
    }

    /// Everyone listed besides the owner.
    pub fn listed(&self) -> impl Iterator<Item = &String> {
        self.approvers
            .iter()
            .chain(&self.viewers)
            .filter(|u| **u != self.owner)
    }

    /// The list as a person reads it, for refusals.
    pub fn describe(&self) -> String {
        let names = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        format!(
            "owner {}; approvers: {}; viewers: {}",
            self.owner,
            names(&self.approvers),
            names(&self.viewers)
        )
    }
}

/// A name that must be a user on this machine (`--approver` / `--viewer`).
pub fn check_user(name: &str) -> Result<(), String> {
    match nix::unistd::User::from_name(name) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(format!("`{name}` is not a user on this machine")),
        Err(e) => Err(format!("cannot look up user `{name}`: {e}")),
    }
}

/// The one entry of a session directory that is not private: the system under test
/// writes there, whatever uid it runs as.
const ARTIFACTS: &str = "artifacts";
/// How deep the private tree is walked (logs/<stem>/seed-<n>/… is four levels).
const MAX_DEPTH: usize = 8;

/// Makes the session directory private: every file faultline keeps in it (the journal,
/// `input/`, `findings/`, `logs/`, `metrics/`, reports) becomes 0600 /
/// 0700 plus POSIX ACL read entries for the listed users, with default ACLs so what is
/// written later inherits the same; the directory itself becomes 0711 (others may
/// traverse to `artifacts/`, never list), and `artifacts/` 0711. Called when the
/// session directory is created (and on resume), before any server listens. Every
/// change goes through a descriptor opened with O_NOFOLLOW; nothing above `dir` is
/// changed. Returns how access is enforced, for the journal.
pub fn restrict(dir: &Path, roles: &Roles) -> String {
    let listed: Vec<&String> = roles.listed().collect();
    let root = match open_nofollow(None, dir) {
        Ok(fd) => fd,
        Err(e) => {
            return format!(
                "cannot open the session directory to restrict it ({e}): it stays as \
                 created, 0700"
            );
        }
    };
    let acls = match private_tree(&root, &listed, 0) {
        Ok(applied) => applied,
        Err(e) => {
            return format!(
                "cannot make the session's files private ({e}): the session directory \
                 stays 0700 (the system under test cannot reach artifacts/)"
            );
        }
    };
    let opened = open_at(&root, ARTIFACTS)
        .and_then(|fd| chmod(&fd, 0o711))
        .and_then(|()| apply(&root, 0o711, &listed, Perm::READ | Perm::EXECUTE, true));
    if let Err(e) = opened {
        return format!(
            "the session's files are private, but the session directory could not be \
             opened to traverse ({e}): it stays 0700"
        );
    }
    let journal = open_at(&root, "journal.jsonl")
        .and_then(|fd| nix::sys::stat::fstat(&fd).map_err(std::io::Error::from))
        .map_or_else(
            |_| "no journal.jsonl yet".to_string(),
            |st| format!("journal.jsonl mode {:04o}", st.st_mode & 0o7777),
        );
    let mut text = match (acls, listed.is_empty()) {
        (true, true) => format!(
            "session directory 0711 (others may traverse to artifacts/, never list); \
             {journal}; input/, findings/, logs/, metrics/ 0700: the owner only"
        ),
        (true, false) => format!(
            "session directory 0711 (others may traverse to artifacts/, never list); \
             {journal} (the group bits are the ACL mask; the owning group has none); \
             input/, findings/, logs/, metrics/ the owner plus ACL read entries for {}",
            listed
                .iter()
                .map(|u| u.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (false, _) => format!(
            "no ACL support on this file system: session directory 0711, {journal}, \
             private directories 0700, by mode alone: the listed users cannot read the \
             session's files directly (they attach over the socket), and what is written \
             later has the umask's mode"
        ),
    };
    text.push_str("; artifacts/ 0711, each seed's directory in it 1777 (the system under test writes there as any uid)");
    for user in &listed {
        if let Some(why) = nix::unistd::User::from_name(user)
            .ok()
            .flatten()
            .and_then(|u| blocked_ancestor(u.uid.as_raw(), u.gid.as_raw(), &u.name, dir))
        {
            text.push_str(&format!(
                "; {user} cannot read the session's files directly: {why} (faultline \
                 changes nothing above the session directory; they can still attach)"
            ));
        }
    }
    text
}

/// `path` (relative to `at`, or as is) without following a symlink in its last
/// component: an O_PATH descriptor, for fstat, chmod and ACLs through /proc/self/fd.
pub(super) fn open_nofollow(at: Option<&OwnedFd>, path: &Path) -> std::io::Result<OwnedFd> {
    use nix::fcntl::OFlag;
    let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mode = nix::sys::stat::Mode::empty();
    let fd = match at {
        Some(at) => nix::fcntl::openat(at, path, flags, mode),
        None => nix::fcntl::open(path, flags, mode),
    };
    fd.map_err(std::io::Error::from)
}

fn open_at(at: &OwnedFd, name: &str) -> std::io::Result<OwnedFd> {
    open_nofollow(Some(at), Path::new(name))
}

/// The descriptor's own inode by name: /proc/self/fd/<n> resolves to it, not to
/// whatever a path names now.
fn proc_path(fd: &OwnedFd) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

fn chmod(fd: &OwnedFd, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(proc_path(fd), std::fs::Permissions::from_mode(mode))
}

/// Sets `fd`'s mode, then its whole access ACL from `mode` plus `perms` for each listed
/// user (and, for a directory, a default ACL so what is made in it later is the same):
/// earlier entries are replaced, so a resumed session lists only its own users.
/// `false`: this file system has no ACLs, and the mode alone holds.
pub(super) fn apply(
    fd: &OwnedFd,
    mode: u32,
    users: &[&String],
    perms: Perm,
    directory: bool,
) -> std::io::Result<bool> {
    let mut entries = exacl::from_mode(mode);
    for user in users {
        entries.push(AclEntry::allow_user(user, perms, None));
    }
    if !users.is_empty() {
        entries.push(AclEntry::allow_mask(perms, None));
    }
    if directory {
        let inherited = exacl::Flag::DEFAULT;
        entries.extend([
            AclEntry::allow_user("", Perm::READ | Perm::WRITE | Perm::EXECUTE, inherited),
            AclEntry::allow_group("", Perm::empty(), inherited),
            AclEntry::allow_other(Perm::empty(), inherited),
        ]);
        for user in users {
            entries.push(AclEntry::allow_user(
                user,
                Perm::READ | Perm::EXECUTE,
                inherited,
            ));
        }
        if !users.is_empty() {
            entries.push(AclEntry::allow_mask(Perm::READ | Perm::EXECUTE, inherited));
        }
    }
    chmod(fd, mode)?;
    match exacl::setfacl(&[proc_path(fd)], &entries, None) {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(nix::libc::EOPNOTSUPP) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Every entry of the session directory but `artifacts/`, depth first: files 0600,
/// directories 0700, plus the listed users' read entries; whether ACLs could be set.
/// Symlinks, sockets and fifos are left alone (the socket is the server's).
fn private_tree(dir: &OwnedFd, users: &[&String], depth: usize) -> std::io::Result<bool> {
    let mut acls = true;
    for entry in std::fs::read_dir(proc_path(dir))? {
        let name = entry?.file_name();
        if depth == 0 && name == ARTIFACTS {
            continue;
        }
        let fd = open_nofollow(Some(dir), Path::new(&name))?;
        let kind = nix::sys::stat::fstat(&fd)?.st_mode & nix::libc::S_IFMT;
        if kind == nix::libc::S_IFDIR {
            if depth < MAX_DEPTH {
                acls &= private_tree(&fd, users, depth + 1)?;
            }
            acls &= apply(&fd, 0o700, users, Perm::READ | Perm::EXECUTE, true)?;
        } else if kind == nix::libc::S_IFREG {
            acls &= apply(&fd, 0o600, users, Perm::READ, false)?;
        }
    }
    Ok(acls)
}

/// The first directory from `/` down to `dir` that `uid` (primary group `gid`) may not
/// traverse, said as a person reads it; `None` when the whole way is open to it. Reads
/// modes and ACLs only.
pub fn blocked_ancestor(uid: u32, gid: u32, user: &str, dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if uid == 0 {
        return None;
    }
    let groups: Vec<u32> = std::ffi::CString::new(user)
        .ok()
        .and_then(|name| nix::unistd::getgrouplist(&name, nix::unistd::Gid::from_raw(gid)).ok())
        .map_or_else(|| vec![gid], |g| g.iter().map(|g| g.as_raw()).collect());
    let mut ancestors: Vec<&Path> = dir.ancestors().collect();
    ancestors.reverse();
    for path in ancestors {
        let Ok(meta) = std::fs::metadata(path) else {
            return Some(format!("{} cannot be looked up", path.display()));
        };
        let mode = meta.mode();
        let acl = exacl::getfacl(path, None).unwrap_or_default();
        let named = acl.iter().find(|e| {
            e.kind == exacl::AclEntryKind::User
                && !e.name.is_empty()
                && nix::unistd::User::from_name(&e.name)
                    .ok()
                    .flatten()
                    .is_some_and(|u| u.uid.as_raw() == uid)
        });
        let mask = acl
            .iter()
            .find(|e| e.kind == exacl::AclEntryKind::Mask)
            .map_or(Perm::EXECUTE, |e| e.perms);
        let through = if meta.uid() == uid {
            mode & 0o100 != 0
        } else if let Some(entry) = named {
            (entry.perms & mask).contains(Perm::EXECUTE)
        } else if groups.contains(&meta.gid()) {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !through {
            return Some(format!(
                "uid {uid} ({user}) cannot traverse {} (mode {:04o}, owner uid {})",
                path.display(),
                mode & 0o7777,
                meta.uid()
            ));
        }
    }
    None
}
