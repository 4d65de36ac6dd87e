//! Install plans: the exact system-package command that would add a missing
//! capability, and how far its effects reach. Kernel features are never offered.

use serde::Serialize;

use super::probe::ProbeEnv;
use super::registry::Capability;

/// A system package manager, detected on the probe PATH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PackageManager {
    AptGet,
    Dnf,
    Apk,
    Brew,
}

impl PackageManager {
    /// Detection order.
    const ORDER: [PackageManager; 4] = [
        PackageManager::AptGet,
        PackageManager::Dnf,
        PackageManager::Apk,
        PackageManager::Brew,
    ];

    fn program(self) -> &'static str {
        match self {
            PackageManager::AptGet => "apt-get",
            PackageManager::Dnf => "dnf",
            PackageManager::Apk => "apk",
            PackageManager::Brew => "brew",
        }
    }

    /// The first manager found on the probe PATH.
    pub fn detect(env: &ProbeEnv) -> Option<PackageManager> {
        Self::ORDER
            .into_iter()
            .find(|pm| env.which(pm.program()).is_some())
    }

    fn install_args(self) -> &'static [&'static str] {
        match self {
            PackageManager::AptGet | PackageManager::Dnf => &["install", "-y"],
            PackageManager::Apk => &["add"],
            PackageManager::Brew => &["install"],
        }
    }
}

/// How far an install reaches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Blast {
    /// Exactly one named package from the system package manager.
    Low,
    /// Anything more; the reason says what.
    High(String),
}

/// One offered install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallPlan {
    pub capability: Capability,
    /// The argv, e.g. `["apt-get", "install", "-y", "iptables"]`.
    pub command: Vec<String>,
    pub package: String,
    /// What installing it enables.
    pub enables: String,
    pub blast: Blast,
}

/// Package names per manager (apt-get, dnf, apk, brew); `None` where there is none.
type Names = [Option<&'static str>; 4];

/// Package per manager, what it enables, and a reason when it reaches further than
/// one package (a service it starts, a kernel module it does not load).
fn entry(cap: &Capability) -> Option<(Names, &'static str, Option<&'static str>)> {
    const SERVICE: Option<&str> = Some("installs and starts a system service");
    let e = match cap {
        Capability::Iptables => (
            [Some("iptables"), Some("iptables"), Some("iptables"), None],
            "network partitions with iptables",
            None,
        ),
        Capability::Tc => (
            [Some("iproute2"), Some("iproute-tc"), Some("iproute2"), None],
            "the `tc` and `ip` tools (qdiscs still need kernel support)",
            None,
        ),
        Capability::Libfaketime => (
            [Some("libfaketime"); 4],
            "clock skew through LD_PRELOAD libfaketime",
            None,
        ),
        Capability::DmFlakey => (
            [
                Some("dmsetup"),
                Some("device-mapper"),
                Some("device-mapper"),
                None,
            ],
            "the dmsetup tool only",
            Some("the dm-flakey target is a kernel module; faultline never loads kernel modules"),
        ),
        Capability::Toxiproxy => (
            [None, None, None, Some("toxiproxy")],
            "network faults through Toxiproxy",
            None,
        ),
        Capability::Docker => (
            [Some("docker.io"), Some("moby-engine"), Some("docker"), None],
            "the container engine",
            SERVICE,
        ),
        Capability::DockerCompose => (
            [
                Some("docker-compose"),
                Some("docker-compose"),
                Some("docker-cli-compose"),
                Some("docker-compose"),
            ],
            "compose-file clusters",
            None,
        ),
        Capability::Podman => ([Some("podman"); 4], "a Docker substitute", None),
        Capability::Go => (
            [Some("golang"), Some("golang"), Some("go"), Some("go")],
            "the Go toolchain",
            None,
        ),
        Capability::Rust => (
            [Some("cargo"), Some("cargo"), Some("cargo"), Some("rust")],
            "the Rust toolchain",
            None,
        ),
        Capability::Java => (
            [
                Some("default-jre-headless"),
                Some("java-latest-openjdk-headless"),
                Some("openjdk17-jre-headless"),
                Some("openjdk"),
            ],
            "a Java runtime",
            None,
        ),
        Capability::Python => (
            [
                Some("python3"),
                Some("python3"),
                Some("python3"),
                Some("python"),
            ],
            "Python 3",
            None,
        ),
        Capability::Postgres => (
            [
                Some("postgresql"),
                Some("postgresql-server"),
                Some("postgresql"),
                Some("postgresql"),
            ],
            "a PostgreSQL server",
            SERVICE,
        ),
        Capability::Redis => (
            [
                Some("redis-server"),
                Some("redis"),
                Some("redis"),
                Some("redis"),
            ],
            "a Redis server",
            SERVICE,
        ),
        // Kernel features, privileges, arbitrary binaries and endpoints.
        _ => return None,
    };
    Some(e)
}

/// The install offered for `cap` with `pm`, if any.
pub fn install_plan(cap: &Capability, pm: PackageManager) -> Option<InstallPlan> {
    let (names, enables, wider) = entry(cap)?;
    let package = names[pm as usize]?;
    let command = std::iter::once(pm.program())
        .chain(pm.install_args().iter().copied())
        .chain(std::iter::once(package))
        .map(str::to_string)
        .collect();
    Some(InstallPlan {
        capability: cap.clone(),
        command,
        package: package.to_string(),
        enables: enables.to_string(),
        blast: wider.map_or(Blast::Low, |why| Blast::High(why.to_string())),
    })
}

/// The exact command line shown to the operator.
pub fn display(plan: &InstallPlan) -> String {
    plan.command.join(" ")
}
