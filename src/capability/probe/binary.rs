//! Toolchains and tools probed by asking the binary for its version.

use semver::Version;

use super::run::{run, shown};
use super::{Probe, ProbeEnv, find_version};
use crate::capability::registry::Capability;

/// The version commands tried, in order, for a capability; the first that runs wins.
fn commands(cap: &Capability) -> Vec<(String, Vec<&'static str>)> {
    let of = |list: &[(&str, &[&'static str])]| {
        list.iter()
            .map(|(p, a)| (p.to_string(), a.to_vec()))
            .collect::<Vec<_>>()
    };
    match cap {
        Capability::Go => of(&[("go", &["version"])]),
        Capability::Rust => of(&[("cargo", &["--version"])]),
        Capability::Java => of(&[("java", &["-version"])]),
        Capability::Python => of(&[("python3", &["--version"]), ("python", &["--version"])]),
        Capability::Postgres => of(&[("psql", &["--version"]), ("postgres", &["--version"])]),
        Capability::Redis => of(&[
            ("redis-server", &["--version"]),
            ("redis-cli", &["--version"]),
        ]),
        Capability::Toxiproxy => of(&[
            ("toxiproxy-server", &["--version"]),
            ("toxiproxy-cli", &["--version"]),
        ]),
        Capability::Podman => of(&[("podman", &["--version"])]),
        Capability::Binary(name) => vec![(name.clone(), vec!["--version"])],
        _ => Vec::new(),
    }
}

/// Runs the capability's version commands; present when one exits 0 (for a plain
/// `binary:<name>`, being on PATH is enough).
pub(super) async fn tool(cap: &Capability, floor: Option<&Version>, env: &ProbeEnv) -> Probe {
    let tried = commands(cap);
    if tried.is_empty() {
        return Probe::new(cap, false, None, floor, "-", "no probe for this capability");
    }
    let mut saw = Vec::new();
    for (program, args) in &tried {
        let line = shown(program, args);
        match run(program, args, env).await {
            Ok(ran) if ran.ok || matches!(cap, Capability::Binary(_)) => {
                let version = find_version(&ran.output);
                return Probe::new(cap, true, version, floor, line, &ran.output);
            }
            Ok(ran) => saw.push(format!("`{line}` failed: {}", ran.output.trim())),
            Err(why) => saw.push(why),
        }
    }
    let command = tried
        .iter()
        .map(|(p, a)| shown(p, a))
        .collect::<Vec<_>>()
        .join(" ; ");
    Probe::new(cap, false, None, floor, command, &saw.join("\n"))
}
