//! Probes: each checks one capability for real and says what it ran and what it saw.
//! Every binary is looked up on [`ProbeEnv::path`] and spawned with that PATH, so
//! tests can put shims first.

mod binary;
mod docker;
mod host;
mod kernel;
mod run;

use std::ffi::OsString;
use std::path::PathBuf;

use semver::Version;
use serde::Serialize;

use super::registry::Capability;

pub use kernel::{KernelError, qdisc_kinds};

/// Where probes look and what they may touch.
#[derive(Debug, Clone)]
pub struct ProbeEnv {
    /// PATH for binary lookups and children; `None` uses the process's PATH.
    pub path: Option<OsString>,
    /// A directory probes may write into.
    pub scratch: PathBuf,
}

impl ProbeEnv {
    /// The PATH probes search and give their children: [`ProbeEnv::path`], else the
    /// process's own.
    pub fn search_path(&self) -> Option<OsString> {
        self.path.clone().or_else(|| std::env::var_os("PATH"))
    }

    /// Where `program` lives on [`ProbeEnv::search_path`].
    pub fn which(&self, program: &str) -> Option<PathBuf> {
        which::which_in(program, self.search_path(), &self.scratch).ok()
    }
}

/// What one probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    pub capability: Capability,
    pub present: bool,
    pub version: Option<String>,
    /// `None` when there is no floor or no version to compare.
    pub meets_floor: Option<bool>,
    /// What it ran, human-readable.
    pub command: String,
    /// What it saw, sanitized and trimmed.
    pub saw: String,
    /// Always `"probe"`.
    pub source: String,
}

/// Longest `saw` kept, in characters.
const SAW_MAX: usize = 300;

impl Probe {
    /// A probe result; `saw` is sanitized and trimmed, the floor compared.
    pub(crate) fn new(
        capability: &Capability,
        present: bool,
        version: Option<String>,
        floor: Option<&Version>,
        command: impl Into<String>,
        saw: &str,
    ) -> Probe {
        let meets_floor = match (floor, version.as_deref().and_then(parse_version)) {
            (Some(floor), Some(found)) if present => Some(found >= *floor),
            _ => None,
        };
        Probe {
            capability: capability.clone(),
            present,
            version,
            meets_floor,
            command: command.into(),
            saw: trim_saw(saw),
            source: "probe".to_string(),
        }
    }
}

/// Sanitizes each line, joins them with ` | `, and cuts at [`SAW_MAX`] characters.
fn trim_saw(text: &str) -> String {
    let joined = text
        .lines()
        .map(|l| crate::sanitize::line(l).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ");
    if joined.chars().count() <= SAW_MAX {
        return joined;
    }
    let cut: String = joined.chars().take(SAW_MAX).collect();
    format!("{cut}…")
}

/// The first `x.y[.z]` in `text`, as written.
pub(crate) fn find_version(text: &str) -> Option<String> {
    static RE: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\d+\.\d+(?:\.\d+)?").ok());
    RE.as_ref()?.find(text).map(|m| m.as_str().to_string())
}

/// `x.y[.z]` → a semver version with missing parts zero.
fn parse_version(text: &str) -> Option<Version> {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().ok());
    let major = parts.next()??;
    let minor = parts.next().unwrap_or(Some(0))?;
    let patch = parts.next().unwrap_or(Some(0))?;
    Some(Version::new(major, minor, patch))
}

/// Probes `cap` on this machine; never panics, a failure is a `present: false` probe.
pub async fn probe(cap: &Capability, floor: Option<&Version>, env: &ProbeEnv) -> Probe {
    match cap {
        Capability::Docker => docker::engine(floor).await,
        Capability::DockerCompose => docker::compose(floor, env).await,
        Capability::NetNamespaces => kernel::netns(env).await,
        Capability::Iptables => kernel::iptables(floor, env).await,
        Capability::Tc | Capability::TcNetem => kernel::tc(cap, floor, env).await,
        Capability::CgroupIo => host::cgroup_io(),
        Capability::CapNetAdmin => host::cap_net_admin(),
        Capability::Libfaketime => host::libfaketime(),
        Capability::DmFlakey => host::dm_flakey(env).await,
        Capability::Endpoint(addr) => host::endpoint(cap, addr).await,
        other => binary::tool(other, floor, env).await,
    }
}
