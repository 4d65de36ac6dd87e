//! The container engine, through bollard; compose through the CLI.

use std::time::Duration;

use bollard::Docker;
use semver::Version;

use super::run::{run, shown};
use super::{Probe, ProbeEnv, find_version};
use crate::capability::registry::Capability;

/// How long the engine gets to answer.
const ENGINE_DEADLINE: Duration = Duration::from_secs(5);

const COMMAND: &str = "bollard: connect (local defaults), ping, negotiate version, version";

/// Connects with local defaults (DOCKER_HOST or the local socket), pings, negotiates
/// the API version and reads the engine version.
pub(super) async fn engine(floor: Option<&Version>) -> Probe {
    let cap = Capability::Docker;
    match tokio::time::timeout(ENGINE_DEADLINE, ask_engine()).await {
        Ok(Ok((version, saw))) => Probe::new(&cap, true, version, floor, COMMAND, &saw),
        Ok(Err(why)) => Probe::new(&cap, false, None, floor, COMMAND, &why),
        Err(_) => Probe::new(
            &cap,
            false,
            None,
            floor,
            COMMAND,
            &format!("engine did not answer within {ENGINE_DEADLINE:?}"),
        ),
    }
}

async fn ask_engine() -> Result<(Option<String>, String), String> {
    let docker = Docker::connect_with_local_defaults().map_err(|e| format!("connect: {e}"))?;
    docker.ping().await.map_err(|e| format!("ping: {e}"))?;
    let docker = docker
        .negotiate_version()
        .await
        .map_err(|e| format!("negotiate version: {e}"))?;
    let v = docker
        .version()
        .await
        .map_err(|e| format!("version: {e}"))?;
    let version = v.version.as_deref().and_then(find_version);
    let saw = format!(
        "engine {} api {} os {}",
        v.version.as_deref().unwrap_or("?"),
        v.api_version.as_deref().unwrap_or("?"),
        v.os.as_deref().unwrap_or("?"),
    );
    Ok((version, saw))
}

/// `docker compose version`, then `docker-compose version`.
pub(super) async fn compose(floor: Option<&Version>, env: &ProbeEnv) -> Probe {
    let cap = Capability::DockerCompose;
    let tried: [(&str, &[&str]); 2] = [
        ("docker", &["compose", "version"]),
        ("docker-compose", &["version"]),
    ];
    let mut saw = Vec::new();
    for (program, args) in tried {
        match run(program, args, env).await {
            Ok(ran) if ran.ok => {
                let version = find_version(&ran.output);
                return Probe::new(
                    &cap,
                    true,
                    version,
                    floor,
                    shown(program, args),
                    &ran.output,
                );
            }
            Ok(ran) => saw.push(format!(
                "`{}` failed: {}",
                shown(program, args),
                ran.output.trim()
            )),
            Err(why) => saw.push(why),
        }
    }
    let command = "docker compose version ; docker-compose version";
    Probe::new(&cap, false, None, floor, command, &saw.join("\n"))
}
