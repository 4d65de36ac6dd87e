//! Kernel features tried for real inside a scratch network namespace, which is
//! always deleted afterwards (also on error: the guard deletes it on drop).

use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};

use semver::Version;

use super::run::{found, run, shown};
use super::{Probe, ProbeEnv, find_version};
use crate::capability::registry::Capability;

/// Qdisc kinds tried, with the least arguments each needs.
const QDISCS: &[(&str, &[&str])] = &[
    ("netem", &["netem", "delay", "1ms"]),
    (
        "tbf",
        &[
            "tbf", "rate", "1mbit", "burst", "32kbit", "latency", "400ms",
        ],
    ),
    ("htb", &["htb"]),
    ("prio", &["prio"]),
    ("fq_codel", &["fq_codel"]),
    ("sfq", &["sfq"]),
    ("pfifo", &["pfifo"]),
];

/// A documentation address (RFC 5737) for the throw-away iptables rule.
const RULE: &[&str] = &["INPUT", "-s", "192.0.2.1", "-j", "DROP"];

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A kernel step that failed: what ran and what it printed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("`{command}`: {saw}")]
pub struct KernelError {
    pub command: String,
    pub saw: String,
}

/// A scratch namespace `fl-probe-<pid>-<n>`, deleted when dropped.
struct Netns {
    name: String,
    env: ProbeEnv,
}

impl Netns {
    async fn create(env: &ProbeEnv) -> Result<Netns, KernelError> {
        let name = format!(
            "fl-probe-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        // The guard exists before the attempt, so a half-made namespace goes too.
        let ns = Netns {
            name,
            env: env.clone(),
        };
        step(env, "ip", &["netns", "add", &ns.name]).await?;
        Ok(ns)
    }

    /// `ip netns exec <ns> program args…`.
    async fn exec(&self, program: &str, args: &[&str]) -> Result<String, KernelError> {
        let mut full = vec!["netns", "exec", self.name.as_str(), program];
        full.extend_from_slice(args);
        step(&self.env, "ip", &full).await
    }

    /// `ip -n <ns> args…`.
    async fn ip(&self, args: &[&str]) -> Result<String, KernelError> {
        let mut full = vec!["-n", self.name.as_str()];
        full.extend_from_slice(args);
        step(&self.env, "ip", &full).await
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let Some(ip) = self.env.which("ip") else {
            return;
        };
        let mut cmd = std::process::Command::new(ip);
        cmd.args(["netns", "delete", &self.name])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(p) = self.env.search_path() {
            cmd.env("PATH", p);
        }
        let _ = cmd.status();
    }
}

/// Runs one step; a non-zero exit is an error carrying the output (and a hint when
/// not running as root).
async fn step(env: &ProbeEnv, program: &str, args: &[&str]) -> Result<String, KernelError> {
    let command = shown(program, args);
    let root_hint = || {
        let euid = nix::unistd::geteuid();
        if euid.is_root() {
            String::new()
        } else {
            format!(" (not root: euid {euid})")
        }
    };
    match run(program, args, env).await {
        Ok(ran) if ran.ok => Ok(ran.output),
        Ok(ran) => Err(KernelError {
            command,
            saw: format!("{}{}", ran.output.trim(), root_hint()),
        }),
        Err(why) => Err(KernelError {
            command,
            saw: format!("{why}{}", root_hint()),
        }),
    }
}

fn failed(cap: &Capability, floor: Option<&Version>, e: KernelError) -> Probe {
    Probe::new(cap, false, None, floor, e.command, &e.saw)
}

/// Creating (and deleting) a namespace works.
pub(super) async fn netns(env: &ProbeEnv) -> Probe {
    let cap = Capability::NetNamespaces;
    match Netns::create(env).await {
        Ok(ns) => {
            let saw = format!("created {} (deleted afterwards)", ns.name);
            Probe::new(&cap, true, None, None, "ip netns add / delete", &saw)
        }
        Err(e) => failed(&cap, None, e),
    }
}

/// Lists, adds and deletes a rule with iptables inside a scratch namespace.
pub(super) async fn iptables(floor: Option<&Version>, env: &ProbeEnv) -> Probe {
    let cap = Capability::Iptables;
    let version = match step(env, "iptables", &["--version"]).await {
        Ok(out) => find_version(&out),
        Err(e) => return failed(&cap, floor, e),
    };
    let rule = RULE.join(" ");
    let command =
        format!("ip netns exec <scratch> iptables -L -n; iptables -A {rule}; iptables -D {rule}");
    let tried = async {
        let ns = Netns::create(env).await?;
        ns.exec("iptables", &["-L", "-n"]).await?;
        ns.exec("iptables", &[&["-A"], RULE].concat()).await?;
        ns.exec("iptables", &[&["-D"], RULE].concat()).await?;
        Ok::<_, KernelError>(ns.name.clone())
    };
    match tried.await {
        Ok(name) => {
            let saw = format!("listed, added and deleted a rule in {name}");
            Probe::new(&cap, true, version, floor, command, &saw)
        }
        Err(e) => failed(&cap, floor, e),
    }
}

/// What the kernel accepted on the scratch interface.
struct QdiscReport {
    dev: &'static str,
    accepted: Vec<String>,
    rejected: Vec<String>,
}

async fn try_qdiscs(env: &ProbeEnv) -> Result<QdiscReport, KernelError> {
    if !found("tc", env) {
        return Err(KernelError {
            command: "tc".to_string(),
            saw: "`tc` not found on PATH".to_string(),
        });
    }
    let ns = Netns::create(env).await?;
    let dev = match ns.ip(&["link", "add", "d0", "type", "dummy"]).await {
        Ok(_) => "d0",
        // No dummy driver: the namespace's own loopback still takes qdiscs.
        Err(_) => "lo",
    };
    ns.ip(&["link", "set", dev, "up"]).await?;
    let mut report = QdiscReport {
        dev,
        accepted: Vec::new(),
        rejected: Vec::new(),
    };
    for (kind, args) in QDISCS {
        let add = [&["qdisc", "add", "dev", dev, "root"], *args].concat();
        if ns.exec("tc", &add).await.is_ok() {
            report.accepted.push(kind.to_string());
            ns.exec("tc", &["qdisc", "del", "dev", dev, "root"]).await?;
        } else {
            report.rejected.push(kind.to_string());
        }
    }
    Ok(report)
}

/// The qdisc kinds (from a fixed list) the kernel accepts, tried in a scratch namespace.
pub async fn qdisc_kinds(env: &ProbeEnv) -> Result<Vec<String>, KernelError> {
    try_qdiscs(env).await.map(|r| r.accepted)
}

/// `tc` works when the kernel accepts any qdisc; netem when it accepts `netem`.
pub(super) async fn tc(cap: &Capability, floor: Option<&Version>, env: &ProbeEnv) -> Probe {
    let version = step(env, "tc", &["-V"])
        .await
        .ok()
        .and_then(|o| find_version(&o));
    let command = "ip netns exec <scratch> tc qdisc add dev <dummy> root <kind> …; tc qdisc del";
    match try_qdiscs(env).await {
        Ok(r) => {
            let present = match cap {
                Capability::TcNetem => r.accepted.iter().any(|k| k == "netem"),
                _ => !r.accepted.is_empty(),
            };
            let saw = format!(
                "on {}: accepted [{}]; rejected [{}]",
                r.dev,
                r.accepted.join(", "),
                r.rejected.join(", ")
            );
            Probe::new(cap, present, version, floor, command, &saw)
        }
        Err(e) => failed(cap, floor, e),
    }
}
