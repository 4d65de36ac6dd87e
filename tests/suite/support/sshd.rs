//! A real sshd on a spare loopback port for the tests that reach something over SSH:
//! its own host key generated on the spot, key-only login, the authorized keys the test
//! writes. Ended (by pid) on drop.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Sshd {
    child: std::process::Child,
    pub port: u16,
    dir: PathBuf,
}

impl Sshd {
    /// None (after a SKIP line naming `what` did not run) when sshd is not installed or
    /// the test is not root; a failure instead under FAULTLINE_REQUIRE_SSHD=1.
    pub fn start(dir: &Path, authorized_keys: &str, what: &str) -> Option<Sshd> {
        let sshd = Path::new("/usr/sbin/sshd");
        if !sshd.exists() || !nix::unistd::geteuid().is_root() {
            let why = format!(
                "no sshd here (Debian's openssh-server at /usr/sbin/sshd, run as root); {what} did not run"
            );
            crate::common::skipped("SSHD", Some(why));
            return None;
        }
        // sshd's privilege separation directory.
        std::fs::create_dir_all("/run/sshd").expect("/run/sshd");
        keygen(&dir.join("host_key"));
        std::fs::write(dir.join("authorized_keys"), authorized_keys).expect("authorized_keys");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a spare port")
            .port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\n\
             AuthorizedKeysFile {dir}/authorized_keys\nPubkeyAuthentication yes\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
             PermitRootLogin prohibit-password\nStrictModes no\nPidFile {dir}/sshd.pid\n\
             AcceptEnv LANG\n",
            dir = dir.display()
        );
        std::fs::write(dir.join("sshd_config"), config).expect("sshd_config");
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.join("sshd.log")).expect("sshd.log"))
            .spawn()
            .expect("sshd starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd did not listen: {}",
                std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(Sshd {
            child,
            port,
            dir: dir.to_path_buf(),
        })
    }

    /// A known_hosts file holding exactly this sshd's host key.
    pub fn known_hosts(&self) -> PathBuf {
        let known = self.dir.join("known_hosts");
        let host_pub = std::fs::read_to_string(self.dir.join("host_key.pub")).expect("host key");
        std::fs::write(&known, format!("[127.0.0.1]:{} {host_pub}", self.port))
            .expect("known_hosts");
        known
    }

    /// What sshd logged so far (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
    }

    /// `ssh` to root on it with `key`, host key pinned from its file.
    pub fn ssh(&self, key: &Path) -> Vec<String> {
        self.ssh_as(key, "root")
    }

    /// `ssh` to `user` on it with `key` (the user must be able to log in:
    /// `UnixUser::may_log_in`, and read the authorized keys file).
    pub fn ssh_as(&self, key: &Path, user: &str) -> Vec<String> {
        vec![
            "ssh".into(),
            "-i".into(),
            key.display().to_string(),
            "-p".into(),
            self.port.to_string(),
            "-o".into(),
            format!("UserKnownHostsFile={}", self.known_hosts().display()),
            "-o".into(),
            "StrictHostKeyChecking=yes".into(),
            "-o".into(),
            "BatchMode=yes".into(),
            "-o".into(),
            "IdentitiesOnly=yes".into(),
            format!("{user}@127.0.0.1"),
        ]
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .output()
        .expect("ssh-keygen");
    assert!(
        out.status.success(),
        "ssh-keygen: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
