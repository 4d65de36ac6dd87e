//! Real Unix users for identity tests (root, useradd, runuser).

use std::process::Command;

/// A Unix user made for one test (`useradd`), removed again on drop.
pub struct UnixUser {
    pub name: String,
    pub uid: u32,
}

impl UnixUser {
    pub fn create(prefix: &str) -> UnixUser {
        let name = format!("{prefix}{}", std::process::id() % 100_000);
        let _ = Command::new("userdel").arg(&name).output();
        let out = Command::new("useradd")
            .args(["--no-create-home", "--shell", "/usr/sbin/nologin"])
            .arg(&name)
            .output()
            .expect("useradd runs");
        assert!(
            out.status.success(),
            "useradd {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let uid = nix::unistd::User::from_name(&name)
            .ok()
            .flatten()
            .expect("the new user exists")
            .uid
            .as_raw();
        UnixUser { name, uid }
    }

    /// A login shell and an unlocked (password-less, key-only) account, so a real
    /// sshd without PAM lets this user in.
    pub fn may_log_in(&self) {
        let out = Command::new("usermod")
            .args(["--shell", "/bin/sh", "--password", "*"])
            .arg(&self.name)
            .output()
            .expect("usermod runs");
        assert!(
            out.status.success(),
            "usermod {}: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn runuser(&self) -> Vec<String> {
        vec![
            "runuser".into(),
            "-u".into(),
            self.name.clone(),
            "--".into(),
        ]
    }
}

impl Drop for UnixUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
    }
}

/// Whether real Unix users can be made here (root, useradd, runuser); a failure
/// instead of a skip under FAULTLINE_REQUIRE_USERS=1.
pub fn can_make_users() -> bool {
    let ok = nix::unistd::geteuid().is_root()
        && Command::new("useradd").arg("--help").output().is_ok()
        && Command::new("runuser").arg("--help").output().is_ok();
    let why = "cannot create Unix users here (needs root, useradd, runuser)";
    !crate::common::skipped("USERS", (!ok).then(|| why.to_string()))
}
