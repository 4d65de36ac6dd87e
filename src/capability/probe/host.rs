//! Host facts read from files, plus dm-flakey and TCP endpoints.

use std::time::Duration;

use semver::Version;

use super::run::run;
use super::{Probe, ProbeEnv};
use crate::capability::registry::Capability;

const CONTROLLERS: &str = "/sys/fs/cgroup/cgroup.controllers";

/// Directories where distributions put `libfaketime.so.1`.
const FAKETIME_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/faketime",
    "/usr/lib/aarch64-linux-gnu/faketime",
    "/usr/lib/faketime",
    "/usr/local/lib/faketime",
    "/usr/lib64/faketime",
];

/// CAP_NET_ADMIN's bit in the capability sets.
const CAP_NET_ADMIN_BIT: u32 = 12;

/// How long a TCP connect may take.
const CONNECT_DEADLINE: Duration = Duration::from_secs(2);

/// The cgroup v2 root lists the `io` controller.
pub(super) fn cgroup_io() -> Probe {
    let cap = Capability::CgroupIo;
    let command = format!("read {CONTROLLERS}");
    match std::fs::read_to_string(CONTROLLERS) {
        Ok(text) => {
            let present = text.split_whitespace().any(|c| c == "io");
            let saw = format!("controllers: {}", text.trim());
            Probe::new(&cap, present, None, None, command, &saw)
        }
        Err(e) => Probe::new(
            &cap,
            false,
            None,
            None,
            command,
            &format!("no cgroup v2 root ({e})"),
        ),
    }
}

/// Root, or bit 12 of `CapEff` in `/proc/self/status`.
pub(super) fn cap_net_admin() -> Probe {
    let cap = Capability::CapNetAdmin;
    let command = "euid; CapEff in /proc/self/status";
    let euid = nix::unistd::geteuid();
    if euid.is_root() {
        return Probe::new(&cap, true, None, None, command, "euid 0 (root)");
    }
    let cap_eff = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        });
    match cap_eff {
        Some(bits) => {
            let present = bits & (1 << CAP_NET_ADMIN_BIT) != 0;
            let saw = format!("euid {euid}, CapEff {bits:#x}");
            Probe::new(&cap, present, None, None, command, &saw)
        }
        None => Probe::new(
            &cap,
            false,
            None,
            None,
            command,
            &format!("euid {euid}, CapEff unreadable"),
        ),
    }
}

/// `libfaketime.so.1` in one of the usual library directories.
pub(super) fn libfaketime() -> Probe {
    let cap = Capability::Libfaketime;
    let command = format!("look for libfaketime.so.1 in {}", FAKETIME_DIRS.join(", "));
    match FAKETIME_DIRS
        .iter()
        .map(|d| std::path::Path::new(d).join("libfaketime.so.1"))
        .find(|p| p.is_file())
    {
        Some(path) => Probe::new(&cap, true, None, None, command, &path.display().to_string()),
        None => Probe::new(
            &cap,
            false,
            None,
            None,
            command,
            "libfaketime.so.1 not found",
        ),
    }
}

/// `dmsetup targets` lists `flakey` (a target loaded in the kernel).
pub(super) async fn dm_flakey(env: &ProbeEnv) -> Probe {
    let cap = Capability::DmFlakey;
    let command = "dmsetup targets";
    match run("dmsetup", &["targets"], env).await {
        Ok(ran) if ran.ok => {
            let present = ran
                .output
                .lines()
                .any(|l| l.split_whitespace().next() == Some("flakey"));
            let saw = if present {
                ran.output
            } else {
                format!("flakey not among loaded targets: {}", ran.output)
            };
            Probe::new(&cap, present, None, None, command, &saw)
        }
        Ok(ran) => Probe::new(&cap, false, None, None, command, &ran.output),
        Err(why) => Probe::new(&cap, false, None, None, command, &why),
    }
}

/// A TCP connect to `addr` within [`CONNECT_DEADLINE`].
pub(super) async fn endpoint(cap: &Capability, addr: &str) -> Probe {
    let command = format!("tcp connect {addr} (timeout {CONNECT_DEADLINE:?})");
    let saw =
        match tokio::time::timeout(CONNECT_DEADLINE, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(_)) => return Probe::new(cap, true, None, None, command, "connected"),
            Ok(Err(e)) => format!("connect failed: {e}"),
            Err(_) => format!("no answer within {CONNECT_DEADLINE:?}"),
        };
    Probe::new(cap, false, None, None::<&Version>, command, &saw)
}
