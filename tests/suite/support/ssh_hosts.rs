//! Three SSH test hosts built by `examples/ssh-cluster/hosts.sh`: network namespaces
//! `<prefix>-h1..h3` on a bridge, each with its own sshd (fresh host key, key-only root
//! login) on 10.88.0.11–13, reached from this (the root) namespace through 10.88.0.1.
//! The namespaces share the filesystem and the pid namespace with the test.
//!
//! `ip netns exec` (how hosts.sh starts each sshd) mounts a fresh /sys, which hides
//! the cgroup tree: [`SshHosts::up`] mounts cgroup2 at /sys/fs/cgroup again in each
//! host's mount namespace, as a real machine has it, so a node makes its commands'
//! cgroups in this machine's cgroup tree (see [`SshHosts::cgroups`]).
//!
//! The addresses are fixed (the example's run spec names them), so two clusters cannot
//! be up at once on one machine: [`SshHosts::up`] takes a lock file that every test
//! process opens, and holds it until the hosts are down again.
#![allow(dead_code)]

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// First three octets of the hosts' /24 (hosts.sh's default).
pub const NET: &str = "10.88.0";

/// Who holds the hosts' /24; its content is the directory of the cluster up now.
const LOCK: &str = "/run/faultline-ssh-hosts.lock";

/// The running hosts. Drop takes them down (sshds, namespaces, the root veth).
pub struct SshHosts {
    dir: tempfile::TempDir,
    prefix: String,
    fingerprints: Vec<String>,
    /// Whether each host sees cgroup v2 at /sys/fs/cgroup (or why not).
    cgroups: Result<(), String>,
    /// Held (an exclusive flock) while the hosts are up; released after `down`.
    lock: File,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ssh-cluster/hosts.sh")
}

/// Why the hosts cannot be built here, if they cannot.
fn unavailable() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root: network namespaces and sshd need root".into());
    }
    if !Path::new("/usr/sbin/sshd").exists() {
        return Some("/usr/sbin/sshd missing (Debian's openssh-server)".into());
    }
    for (tool, package) in [
        ("ssh", "openssh-client"),
        ("ssh-keygen", "openssh-client"),
        ("iptables", "iptables"),
    ] {
        if Command::new(tool).arg("-V").output().is_err() {
            return Some(format!("`{tool}` missing ({package})"));
        }
    }
    match Command::new("ip").args(["netns", "list"]).output() {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(format!(
            "`ip netns list` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Some(format!("`ip` (iproute2) missing: {e}")),
    }
}

/// A prefix of at most 10 characters (interface names stay within 15), different per
/// test and per test process.
fn prefix_for(test_name: &str) -> String {
    // FNV-1a: stable across runs, no dependency.
    let mut hash: u32 = 0x811c_9dc5;
    for byte in test_name.bytes().chain(std::process::id().to_le_bytes()) {
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    format!("fl{:06x}", hash & 0x00ff_ffff)
}

impl SshHosts {
    /// Builds the three hosts for `test_name`. `None` (after a loud `SKIP:` line) when
    /// this machine cannot (not root, no sshd, no `ip netns`); a panic naming the reason
    /// instead under `FAULTLINE_REQUIRE_SSH=1`. A failure of `hosts.sh up` itself, on a
    /// machine that can, is always a panic with its output.
    pub fn up(test_name: &str) -> Option<SshHosts> {
        let why = unavailable().map(|r| format!("the SSH test hosts cannot be built here: {r}"));
        if crate::common::skipped("SSH", why) {
            return None;
        }
        let mut lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(LOCK)
            .unwrap_or_else(|e| panic!("{LOCK}: {e}"));
        lock.lock()
            .unwrap_or_else(|e| panic!("locking {LOCK}: {e}"));
        // Holding the lock, a cluster it still names was left by a test process that
        // died before its drop ran: take it down first, or its addresses block ours.
        let left = std::fs::read_to_string(LOCK).unwrap_or_default();
        let left = left.trim();
        if !left.is_empty() && Path::new(left).join("prefix").exists() {
            eprintln!("ssh_hosts: taking down {left}, left up by a test process that died");
            let _ = Command::new(script()).args(["down", left]).output();
        }
        let dir = tempfile::Builder::new()
            .prefix("faultline-ssh-hosts-")
            .tempdir()
            .unwrap_or_else(|e| panic!("a temporary directory: {e}"));
        lock.set_len(0).unwrap_or_else(|e| panic!("{LOCK}: {e}"));
        writeln!(lock, "{}", dir.path().display()).unwrap_or_else(|e| panic!("{LOCK}: {e}"));
        let prefix = prefix_for(test_name);
        let out = Command::new(script())
            .arg("up")
            .arg(dir.path())
            .arg(&prefix)
            .env("FL_SSH_NET", NET)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", script().display()));
        assert!(
            out.status.success(),
            "hosts.sh up {} {prefix} ended {}:\n{}{}",
            dir.path().display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // One line per host: `h1 10.88.0.11 SHA256:…`.
        let stdout = String::from_utf8_lossy(&out.stdout);
        let fingerprints: Vec<String> = (1..=3)
            .map(|i| {
                let want = format!("h{i} {NET}.1{i} ");
                stdout
                    .lines()
                    .find_map(|line| line.strip_prefix(&want))
                    .filter(|fp| fp.starts_with("SHA256:"))
                    .unwrap_or_else(|| {
                        panic!("hosts.sh up printed no `{want}SHA256:…` line:\n{stdout}")
                    })
                    .to_string()
            })
            .collect();
        let mut hosts = SshHosts {
            dir,
            prefix,
            fingerprints,
            cgroups: Ok(()),
            lock,
        };
        hosts.cgroups = (1..=3).try_for_each(|i| {
            let out = hosts.ssh(
                i,
                "grep -q ' - cgroup2 ' /proc/self/mountinfo || \
                 mount -t cgroup2 cgroup2 /sys/fs/cgroup",
            );
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "h{i}: mounting cgroup2 at /sys/fs/cgroup: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
        });
        Some(hosts)
    }

    /// Whether the hosts see cgroup v2 (this machine's tree), so a node can contain
    /// its commands in cgroups; otherwise why not.
    pub fn cgroups(&self) -> Result<(), String> {
        self.cgroups.clone()
    }

    /// Where every file of the hosts lives (keys, configs, sshd logs under `hN/`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Prefix of the namespaces (`<prefix>-h1`…) and of the root veth (`<prefix>-r`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Host `i`'s (1..=3) address.
    pub fn address(&self, i: usize) -> String {
        assert!((1..=3).contains(&i), "there are hosts 1..=3, not {i}");
        format!("{NET}.1{i}")
    }

    /// Host `i`'s network namespace (for `ip netns exec`).
    pub fn namespace(&self, i: usize) -> String {
        assert!((1..=3).contains(&i), "there are hosts 1..=3, not {i}");
        format!("{}-h{i}", self.prefix)
    }

    /// The SHA256 fingerprint of host `i`'s host key, as ssh-keygen -l prints it.
    pub fn fingerprint(&self, i: usize) -> &str {
        assert!((1..=3).contains(&i), "there are hosts 1..=3, not {i}");
        &self.fingerprints[i - 1]
    }

    /// Every host's address with its host key.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir().join("known_hosts")
    }

    /// The client's private key (no passphrase), authorized on every host as root.
    pub fn key(&self) -> PathBuf {
        self.dir().join("id_ed25519")
    }

    /// An ssh_config naming the hosts `h1`..`h3` (also matched by address).
    pub fn ssh_config(&self) -> PathBuf {
        self.dir().join("ssh_config")
    }

    /// Host `i`'s sshd pid file.
    pub fn sshd_pidfile(&self, i: usize) -> PathBuf {
        assert!((1..=3).contains(&i), "there are hosts 1..=3, not {i}");
        self.dir().join(format!("h{i}/sshd.pid"))
    }

    /// `cmd` run as root on host `i` by the system ssh, with the hosts' ssh_config
    /// (strict host key checking, batch mode).
    pub fn ssh(&self, i: usize, cmd: &str) -> Output {
        assert!((1..=3).contains(&i), "there are hosts 1..=3, not {i}");
        Command::new("ssh")
            .arg("-F")
            .arg(self.ssh_config())
            .arg(format!("h{i}"))
            .arg(cmd)
            .output()
            .unwrap_or_else(|e| panic!("ssh: {e}"))
    }

    /// Takes the hosts down (`hosts.sh down`); repeating it does nothing.
    pub fn down(&mut self) -> Output {
        let out = Command::new(script())
            .arg("down")
            .arg(self.dir())
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", script().display()));
        if out.status.success() {
            let _ = self.lock.set_len(0);
        }
        out
    }
}

impl Drop for SshHosts {
    fn drop(&mut self) {
        let out = self.down();
        if !out.status.success() {
            eprintln!(
                "ssh_hosts: hosts.sh down {} ended {}: {}",
                self.dir().display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
