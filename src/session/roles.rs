//! Who may attach to a session and what they may do (owner, approver, viewer), and
//! the file-system side of it: the session directory and its control socket let in
//! only the owner and the listed users.

use std::path::Path;

use super::event::Role;

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

/// The user name of `uid` (`uid <n>` when the password database has none).
pub fn user_name(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map_or_else(|| format!("uid {uid}"), |u| u.name)
}

/// A name that must be a user on this machine (`--approver` / `--viewer`).
pub fn check_user(name: &str) -> Result<(), String> {
    match nix::unistd::User::from_name(name) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(format!("`{name}` is not a user on this machine")),
        Err(e) => Err(format!("cannot look up user `{name}`: {e}")),
    }
}

/// Closes the session directory to everyone but the owner, then opens it (read and
/// traverse) and the socket (connect) to each listed user by POSIX ACL entries; the
/// directories above get a traverse-only entry where they lack one. Returns how
/// access is enforced, for the journal. Without ACL support the directory stays
/// traversable and the socket's peer check is the only gate (said so).
pub fn restrict(dir: &Path, socket: &Path, roles: &Roles) -> String {
    use std::os::unix::fs::PermissionsExt;
    let listed: Vec<&String> = roles.listed().collect();
    let close = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    };
    if listed.is_empty() {
        let _ = close(dir, 0o700);
        let _ = close(socket, 0o600);
        return "mode 0700 on the session directory, 0600 on the socket: the owner only".into();
    }
    let _ = close(dir, 0o700);
    let _ = close(socket, 0o600);
    match grant(dir, socket, &listed) {
        Ok(()) => format!(
            "mode 0700 / 0600 plus ACL entries for {}",
            listed
                .iter()
                .map(|u| u.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(e) => {
            // No ACLs on this file system: let everyone traverse and connect, and
            // let the server's peer-credential check refuse who is not listed.
            let _ = close(dir, 0o711);
            let _ = close(socket, 0o666);
            format!(
                "no ACL support here ({e}): the socket's peer check alone refuses unlisted users"
            )
        }
    }
}

fn grant(dir: &Path, socket: &Path, users: &[&String]) -> std::io::Result<()> {
    use exacl::{AclEntry, AclOption, Perm};
    let add = |path: &Path, perms: Perm, default: bool| -> std::io::Result<()> {
        let mut acl = exacl::getfacl(path, None)?;
        for user in users {
            acl.retain(|e| !(e.kind == exacl::AclEntryKind::User && e.name == **user));
            acl.push(AclEntry::allow_user(user, perms, None));
        }
        acl.retain(|e| e.kind != exacl::AclEntryKind::Mask);
        acl.push(AclEntry::allow_mask(
            Perm::READ | Perm::WRITE | Perm::EXECUTE,
            None,
        ));
        exacl::setfacl(&[path], &acl, None)?;
        if default {
            let mut defaults = vec![
                AclEntry::allow_user("", Perm::READ | Perm::WRITE | Perm::EXECUTE, None),
                AclEntry::allow_group("", Perm::empty(), None),
                AclEntry::allow_other(Perm::empty(), None),
                AclEntry::allow_mask(Perm::READ | Perm::EXECUTE, None),
            ];
            for user in users {
                defaults.push(AclEntry::allow_user(user, Perm::READ | Perm::EXECUTE, None));
            }
            exacl::setfacl(&[path], &defaults, Some(AclOption::DEFAULT_ACL))?;
        }
        Ok(())
    };
    add(dir, Perm::READ | Perm::EXECUTE, true)?;
    add(socket, Perm::READ | Perm::WRITE, false)?;
    // What the session already holds (its inputs, the journal) is readable too.
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path != socket && !path.is_symlink() {
                add(&path, Perm::READ | Perm::EXECUTE, path.is_dir())?;
            }
        }
    }
    // The directories above must let them through.
    for parent in dir.ancestors().skip(1) {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(parent) else {
            break;
        };
        if meta.mode() & 0o001 != 0 {
            continue;
        }
        if meta.uid() != nix::unistd::getuid().as_raw() {
            break;
        }
        add(parent, Perm::EXECUTE, false)?;
    }
    Ok(())
}
