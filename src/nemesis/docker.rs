//! The `docker` nemesis: kill, stop, restart, pause … unpause and network
//! disconnect … connect of one container, through the Docker API (bollard). Its
//! injector-side evidence is the engine's own event stream (a `die` / `pause` /
//! `network disconnect` event for exactly this container, after injection) AND the
//! container's state as inspect reports it — never the fact that the API call
//! returned 200. Heal: `start`, `unpause`, `connect` (with the address it had).
//!
//! A fault naming an SSH `node:` reaches the docker socket on that node through a
//! local Unix socket forwarded over the node's own master connection, so the node's
//! key, known_hosts and port hold for the Docker API too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bollard::Docker;
use bollard::models::{
    ContainerInspectResponse, EndpointIpamConfig, EndpointSettings, EventMessage,
    NetworkConnectRequest, NetworkDisconnectRequest,
};
use bollard::query_parameters::{
    EventsOptions, KillContainerOptions, LogsOptions, RestartContainerOptions, StopContainerOptions,
};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::duration::Dur;

use crate::host::ssh::{SshHost, UnixForward};

/// How long one Docker API request may take before the engine counts as unresponsive.
const API_DEADLINE: Duration = Duration::from_secs(30);

/// bollard's own read/write timeout for a named engine (the one its local defaults use).
const CLIENT_TIMEOUT_SECS: u64 = 120;

/// How long the SSH host key check of an `ssh://` engine may take to connect.
const SSH_CONNECT_DEADLINE: Duration = Duration::from_secs(15);

/// The docker socket on a node when a fault with `node:` names no `engine:`.
const NODE_SOCKET: &str = "/var/run/docker.sock";

#[derive(Debug, thiserror::Error)]
pub enum DockerFaultError {
    #[error("docker engine: {0}")]
    Engine(String),
    #[error("container `{container}`: {action}: {message}")]
    Api {
        container: String,
        action: String,
        message: String,
    },
    #[error("container `{container}` is still {state} after heal")]
    NotHealed { container: String, state: String },
    #[error("the docker undo record is incomplete: {0}")]
    Undo(String),
}

/// Connects to `engine` (`references/nemesis.md`, `### docker`), or with the local
/// defaults (DOCKER_HOST or the socket) when there is none, and negotiates the version.
pub async fn connect(
    engine: Option<&str>,
    tls: Option<&DockerTls>,
) -> Result<Docker, DockerFaultError> {
    let failed = |e: bollard::errors::Error| {
        DockerFaultError::Engine(format!("{}: {e}", engine.unwrap_or("local defaults")))
    };
    let version = bollard::API_DEFAULT_VERSION;
    let docker = match (engine, tls) {
        (None, None) => Docker::connect_with_local_defaults().map_err(failed)?,
        (Some(url), None) if url.starts_with("unix://") => {
            Docker::connect_with_unix(url, CLIENT_TIMEOUT_SECS, version).map_err(failed)?
        }
        (Some(url), None) if url.starts_with("tcp://") => {
            Docker::connect_with_http(url, CLIENT_TIMEOUT_SECS, version).map_err(failed)?
        }
        (Some(url), Some(tls)) if url.starts_with("tcp://") => Docker::connect_with_ssl(
            url,
            &tls.key,
            &tls.cert,
            &tls.ca,
            CLIENT_TIMEOUT_SECS,
            version,
        )
        .map_err(failed)?,
        (Some(url), None) if url.starts_with("ssh://") => {
            if names_a_port(url) {
                return Err(DockerFaultError::Engine(format!(
                    "engine `{url}`: bollard's SSH connector hands `user@host:port` to ssh as \
                     one host name, so the port must come from ~/.ssh/config: name a Host \
                     alias there with its HostName and Port (ssh://user@alias)"
                )));
            }
            host_key_known(url).await?;
            Docker::connect_with_ssh(url, CLIENT_TIMEOUT_SECS, version, None).map_err(failed)?
        }
        (engine, Some(_)) => {
            return Err(DockerFaultError::Engine(format!(
                "engine `{}`: `tls` applies to a tcp:// engine only",
                engine.unwrap_or("")
            )));
        }
        (Some(url), None) => {
            return Err(DockerFaultError::Engine(format!(
                "engine `{url}`: allowed are unix:///path, tcp://host:port, ssh://user@host[:port]"
            )));
        }
    };
    docker
        .negotiate_version()
        .await
        .map_err(|e| DockerFaultError::Engine(format!("negotiate version: {e}")))
}

/// True when an `ssh://` engine ends in `:port`.
fn names_a_port(url: &str) -> bool {
    let host = url.rsplit('@').next().unwrap_or(url);
    host.rsplit_once(':')
        .is_some_and(|(_, port)| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
}

/// The socket path on the node that a fault with `node:` reaches: its `engine:`
/// (`unix:///path`, a path on the node) or the default socket.
fn node_socket(engine: Option<&str>) -> Result<PathBuf, String> {
    let Some(url) = engine else {
        return Ok(PathBuf::from(NODE_SOCKET));
    };
    match url.strip_prefix("unix://") {
        Some(path) if path.starts_with('/') => Ok(PathBuf::from(path)),
        _ => Err(format!(
            "engine `{url}`: on a fault with `node:` the engine is the docker socket on that \
             node (unix:///path, default unix://{NODE_SOCKET}); a tcp:// or ssh:// engine is \
             named without `node:`"
        )),
    }
}

/// Where the engine is reached, in the words the journal uses.
fn engine_words(engine: Option<&str>, node: Option<&str>) -> String {
    match (node, engine) {
        (Some(node), engine) => {
            let socket = node_socket(engine).map_or_else(
                |_| engine.unwrap_or_default().to_string(),
                |p| p.display().to_string(),
            );
            format!("node {node}'s docker socket over ssh ({socket})")
        }
        (None, None) => "the local docker engine (DOCKER_HOST or its socket)".into(),
        (None, Some(url)) if url.starts_with("ssh://") => {
            format!("engine {url} (bollard's ssh connector)")
        }
        (None, Some(url)) => format!("engine {url}"),
    }
}

/// An engine connected, with the forward a node's socket is reached through.
struct Reached {
    docker: Docker,
    forward: Option<UnixForward>,
    words: String,
}

/// Connects to the engine `engine` names, or to the socket on `node` (an SSH node,
/// with its name) through a socket forwarded over its master connection.
async fn reach(
    engine: Option<&str>,
    tls: Option<&DockerTls>,
    node: Option<(&str, &SshHost)>,
) -> Result<Reached, DockerFaultError> {
    let words = engine_words(engine, node.map(|(name, _)| name));
    let Some((_, host)) = node else {
        return Ok(Reached {
            docker: connect(engine, tls).await?,
            forward: None,
            words,
        });
    };
    let failed = |e: String| DockerFaultError::Engine(format!("{words}: {e}"));
    if tls.is_some() {
        return Err(failed("`tls` applies to a tcp:// engine only".into()));
    }
    let remote = node_socket(engine).map_err(failed)?;
    let forward = host
        .forward_unix(&remote)
        .await
        .map_err(|e| failed(e.to_string()))?;
    match connect(Some(&unix_url(&forward)), None).await {
        Ok(docker) => Ok(Reached {
            docker,
            forward: Some(forward),
            words,
        }),
        Err(e) => {
            let _ = forward.close().await;
            Err(failed(e.to_string()))
        }
    }
}

fn unix_url(forward: &UnixForward) -> String {
    format!("unix://{}", forward.local.display())
}

/// Connects to an `ssh://` engine's host once with strict host key checking and
/// closes again: bollard's SSH connector accepts a host it has never seen (and adds
/// it to known_hosts), so faultline refuses an unknown host before bollard dials it.
/// A known host with a changed key is refused by that connector itself.
async fn host_key_known(url: &str) -> Result<(), DockerFaultError> {
    let mut builder = openssh::SessionBuilder::default();
    builder
        .known_hosts_check(openssh::KnownHosts::Strict)
        .connect_timeout(SSH_CONNECT_DEADLINE);
    let (builder, destination) = builder.resolve(url);
    let refused = |e: openssh::Error| {
        // ssh's own words (which key, which host) are in the error's source.
        let mut said = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            said = format!("{said}: {cause}");
            source = cause.source();
        }
        DockerFaultError::Engine(format!(
            "engine `{url}`: {} (the host's key must already be in known_hosts: it is checked strictly)",
            crate::sanitize::line(&said)
        ))
    };
    let session = builder.connect(destination).await.map_err(refused)?;
    session.close().await.map_err(refused)
}

fn api(container: &str, action: &str, e: impl ToString) -> DockerFaultError {
    DockerFaultError::Api {
        container: container.to_string(),
        action: action.to_string(),
        message: e.to_string(),
    }
}

/// Bounds one API call so a wedged engine cannot hang a fault or a heal forever.
async fn bounded<T, E: ToString>(
    container: &str,
    action: &str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, DockerFaultError> {
    match tokio::time::timeout(API_DEADLINE, fut).await {
        Ok(result) => result.map_err(|e| api(container, action, e)),
        Err(_) => Err(api(
            container,
            action,
            format!("no answer within {API_DEADLINE:?}"),
        )),
    }
}

fn action_name(action: DockerAction) -> &'static str {
    match action {
        DockerAction::Kill => "kill",
        DockerAction::Stop => "stop",
        DockerAction::Restart => "restart",
        DockerAction::Pause => "pause",
        DockerAction::Disconnect => "disconnect",
    }
}

fn parse_action(name: &str) -> Option<DockerAction> {
    [
        DockerAction::Kill,
        DockerAction::Stop,
        DockerAction::Restart,
        DockerAction::Pause,
        DockerAction::Disconnect,
    ]
    .into_iter()
    .find(|a| action_name(*a) == name)
}

/// The container's state in the words the journal uses.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct State {
    pub running: bool,
    pub paused: bool,
    /// Networks the container is attached to.
    pub networks: Vec<String>,
    pub started_at: String,
}

impl State {
    fn of(inspect: &ContainerInspectResponse) -> State {
        let state = inspect.state.as_ref();
        let mut networks: Vec<String> = inspect
            .network_settings
            .as_ref()
            .and_then(|n| n.networks.as_ref())
            .map(|n| n.keys().cloned().collect())
            .unwrap_or_default();
        networks.sort();
        State {
            running: state.and_then(|s| s.running).unwrap_or(false),
            paused: state.and_then(|s| s.paused).unwrap_or(false),
            networks,
            started_at: state.and_then(|s| s.started_at.clone()).unwrap_or_default(),
        }
    }

    fn describe(&self) -> String {
        let run = match (self.running, self.paused) {
            (true, true) => "paused",
            (true, false) => "running",
            _ => "not running",
        };
        format!("{run}, networks [{}]", self.networks.join(", "))
    }
}

async fn inspect(
    docker: &Docker,
    container: &str,
) -> Result<ContainerInspectResponse, DockerFaultError> {
    bounded(
        container,
        "inspect",
        docker.inspect_container(container, None),
    )
    .await
}

/// What the journal keeps to undo a container action after a crash.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct DockerUndo {
    pub container: String,
    pub id: String,
    pub action: String,
    pub network: Option<String>,
    pub address: Option<String>,
    /// The engine it was done on (absent: the local defaults, as journals before it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<DockerTls>,
    /// The SSH node whose socket (`engine`, a path there) it was done through
    /// (absent: `engine` is reached from this machine, as journals before it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// An injected docker fault. Dropping it unhealed heals it (on its own thread, since
/// drop cannot await).
#[derive(Debug)]
pub struct InjectedDocker {
    pub container: String,
    /// The full id, which is what the event stream names.
    pub id: String,
    pub action: DockerAction,
    pub network: Option<String>,
    /// The address the container had on `network`, so reconnecting restores it.
    pub address: Option<String>,
    /// Unix time (seconds, fractional) just before the API call: events since then count.
    pub since: f64,
    /// The engine it was done on, so a heal without `docker` reaches it again.
    pub engine: Option<String>,
    pub tls: Option<DockerTls>,
    /// The SSH node whose socket it was done through.
    pub node: Option<String>,
    docker: Docker,
    /// The node's socket forwarded here, held until the heal (boxed: the held-fault
    /// enum is as large as its largest kind).
    forward: Option<Box<UnixForward>>,
    healed: bool,
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Performs `spec`'s action on its container, on the engine of `node` (an SSH node
/// the spec names) when there is one.
pub async fn inject(
    spec: &DockerFaultSpec,
    node: Option<&SshHost>,
) -> Result<InjectedDocker, DockerFaultError> {
    let node = node.map(|host| (host.node.as_str(), host));
    let reached = reach(spec.engine.as_deref(), spec.tls.as_ref(), node).await?;
    let docker = reached.docker;
    let container = spec.container.as_str();
    let before = inspect(&docker, container).await?;
    let id = before.id.clone().unwrap_or_else(|| container.to_string());
    let address = spec.network.as_ref().and_then(|net| {
        before
            .network_settings
            .as_ref()
            .and_then(|n| n.networks.as_ref())
            .and_then(|n| n.get(net))
            .and_then(|e| e.ip_address.clone())
            .filter(|ip| !ip.is_empty())
    });
    let grace = spec
        .grace
        .map(|d| i32::try_from(d.0.as_secs()).unwrap_or(i32::MAX));
    let mut injected = InjectedDocker {
        container: container.to_string(),
        id,
        action: spec.action,
        network: spec.network.clone(),
        address,
        since: now_unix(),
        engine: spec.engine.clone(),
        tls: spec.tls.clone(),
        node: node.map(|(name, _)| name.to_string()),
        docker: docker.clone(),
        forward: reached.forward.map(Box::new),
        // Nothing to heal until the action went through.
        healed: true,
    };
    let name = action_name(spec.action);
    match spec.action {
        DockerAction::Kill => {
            let options = KillContainerOptions {
                signal: "SIGKILL".into(),
            };
            bounded(
                container,
                name,
                docker.kill_container(container, Some(options)),
            )
            .await?;
        }
        DockerAction::Stop => {
            let options = StopContainerOptions {
                signal: None,
                t: grace,
            };
            bounded(
                container,
                name,
                docker.stop_container(container, Some(options)),
            )
            .await?;
        }
        DockerAction::Restart => {
            let options = RestartContainerOptions {
                signal: None,
                t: grace,
            };
            bounded(
                container,
                name,
                docker.restart_container(container, Some(options)),
            )
            .await?;
        }
        DockerAction::Pause => {
            bounded(container, name, docker.pause_container(container)).await?;
        }
        DockerAction::Disconnect => {
            let Some(network) = spec.network.as_deref() else {
                return Err(api(container, name, "no network named"));
            };
            let request = NetworkDisconnectRequest {
                container: container.to_string(),
                force: Some(true),
            };
            bounded(container, name, docker.disconnect_network(network, request)).await?;
        }
    }
    injected.healed = false;
    Ok(injected)
}

/// Injector-side landing evidence: the event and the state.
#[derive(Debug, Clone)]
pub struct Observation {
    pub landed: bool,
    /// `type action` of each matching event seen since injection.
    pub events: Vec<String>,
    pub state: Option<State>,
    pub detail: String,
}

/// The events that show `action` happened to the container.
fn wanted_events(action: DockerAction) -> &'static [&'static str] {
    match action {
        DockerAction::Kill | DockerAction::Stop => &["die"],
        DockerAction::Restart => &["restart"],
        DockerAction::Pause => &["pause"],
        DockerAction::Disconnect => &["disconnect"],
    }
}

/// True when the event concerns container `id` (a network event names it in its
/// `container` attribute, a container event is its actor).
fn about(event: &EventMessage, id: &str) -> bool {
    let Some(actor) = &event.actor else {
        return false;
    };
    let attribute = actor
        .attributes
        .as_ref()
        .and_then(|a| a.get("container"))
        .map(String::as_str);
    actor.id.as_deref() == Some(id) || attribute == Some(id)
}

impl InjectedDocker {
    /// Events about this container since injection, up to now (a finite query: the
    /// engine closes the stream at `until`).
    async fn events(&self) -> Result<Vec<String>, DockerFaultError> {
        let mut filters: HashMap<String, Vec<String>> = HashMap::new();
        match (&self.action, &self.network) {
            (DockerAction::Disconnect, Some(network)) => {
                filters.insert("type".into(), vec!["network".into()]);
                filters.insert("network".into(), vec![network.clone()]);
            }
            _ => {
                filters.insert("type".into(), vec!["container".into()]);
                filters.insert("container".into(), vec![self.id.clone()]);
            }
        }
        let options = EventsOptions {
            since: Some(format!("{:.9}", self.since - 1.0)),
            until: Some(format!("{:.9}", now_unix())),
            filters: Some(filters),
        };
        let mut stream = self.docker.events(Some(options));
        let mut seen = Vec::new();
        let read = async {
            while let Some(event) = stream.next().await {
                let event = event.map_err(|e| api(&self.container, "events", e))?;
                let at = event.time_nano.map_or(0.0, |n| n as f64 / 1e9);
                if at + 0.001 < self.since || !about(&event, &self.id) {
                    continue;
                }
                let kind = event.typ.map(|t| t.to_string()).unwrap_or_default();
                seen.push(format!("{kind} {}", event.action.unwrap_or_default()));
            }
            Ok::<_, DockerFaultError>(())
        };
        match tokio::time::timeout(API_DEADLINE, read).await {
            Ok(result) => result.map(|()| seen),
            Err(_) => Err(api(&self.container, "events", "stream did not end")),
        }
    }

    /// Whether `state` is what the action leaves behind.
    fn state_landed(&self, state: &State) -> bool {
        match self.action {
            DockerAction::Kill | DockerAction::Stop => !state.running,
            // A restart ends running again; the restart event says it went down.
            DockerAction::Restart => state.running,
            DockerAction::Pause => state.paused,
            DockerAction::Disconnect => self
                .network
                .as_ref()
                .is_some_and(|n| !state.networks.contains(n)),
        }
    }

    async fn observe(&self) -> Observation {
        let events = self.events().await;
        let state = inspect(&self.docker, &self.container)
            .await
            .map(|i| State::of(&i));
        let wanted = wanted_events(self.action);
        let (events, event_error) = match events {
            Ok(events) => (events, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let event_seen = events
            .iter()
            .any(|e| wanted.iter().any(|w| e.ends_with(&format!(" {w}"))));
        let state_ok = state.as_ref().is_ok_and(|s| self.state_landed(s));
        let detail = format!(
            "container {} after {} on {}: event {} {} (saw [{}]{}); state {}",
            self.container,
            action_name(self.action),
            self.words(),
            wanted.join("/"),
            if event_seen { "seen" } else { "not seen" },
            events.join(", "),
            event_error.map(|e| format!("; {e}")).unwrap_or_default(),
            match &state {
                Ok(s) => s.describe(),
                Err(e) => format!("unreadable: {e}"),
            }
        );
        Observation {
            landed: event_seen && state_ok,
            events,
            state: state.ok(),
            detail,
        }
    }

    /// Polls the event stream and the state until both show the action or `within`
    /// passes.
    pub async fn await_landing(&self, within: Duration) -> Observation {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let seen = self.observe().await;
            if seen.landed || tokio::time::Instant::now() >= deadline {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Where the engine was reached, as the journal says it.
    fn words(&self) -> String {
        engine_words(self.engine.as_deref(), self.node.as_deref())
    }

    /// What `faultline heal` needs to undo it from the journal alone.
    pub fn undo(&self) -> DockerUndo {
        DockerUndo {
            container: self.container.clone(),
            id: self.id.clone(),
            action: action_name(self.action).to_string(),
            network: self.network.clone(),
            address: self.address.clone(),
            engine: self.engine.clone(),
            tls: self.tls.clone(),
            node: self.node.clone(),
        }
    }

    /// Writes the container's log since injection to `dir/docker-<container>.log`.
    pub async fn collect_logs(&self, dir: &Path) -> Result<std::path::PathBuf, String> {
        let path = dir.join(format!(
            "docker-{}.log",
            crate::sanitize::line(&self.container)
        ));
        let since = (self.since as i32).saturating_sub(1);
        collect_logs(&self.docker, &self.container, since, &path).await?;
        Ok(path)
    }

    /// Undoes the action and checks the container's state says so; then ends the
    /// node's forwarded socket, if it was reached through one.
    pub async fn heal(mut self) -> Result<String, DockerFaultError> {
        self.healed = true;
        let healed = heal_with(
            &self.docker,
            &self.container,
            self.action,
            self.network.as_deref(),
            self.address.as_deref(),
        )
        .await;
        let closed = match self.forward.take() {
            Some(forward) => forward.close().await.err(),
            None => None,
        };
        let line = format!("{} on {}", healed?, self.words());
        Ok(match closed {
            Some(e) => format!("{line}; {e}"),
            None => line,
        })
    }
}

impl Drop for InjectedDocker {
    fn drop(&mut self) {
        if self.healed {
            return;
        }
        let (container, action) = (self.container.clone(), self.action);
        let (network, address) = (self.network.clone(), self.address.clone());
        // A node's engine is still behind its forwarded socket (dropped after this).
        let (engine, tls) = match &self.forward {
            Some(forward) => (Some(unix_url(forward)), None),
            None => (self.engine.clone(), self.tls.clone()),
        };
        // Its own runtime on its own thread: drop may run inside a runtime, where
        // blocking on another future would panic.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(runtime) = runtime {
                let _ = runtime.block_on(async {
                    let docker = connect(engine.as_deref(), tls.as_ref()).await?;
                    heal_with(
                        &docker,
                        &container,
                        action,
                        network.as_deref(),
                        address.as_deref(),
                    )
                    .await
                });
            }
        })
        .join();
    }
}

/// Undoes `action` on `container` if its state shows it still in effect, then checks.
pub async fn heal_with(
    docker: &Docker,
    container: &str,
    action: DockerAction,
    network: Option<&str>,
    address: Option<&str>,
) -> Result<String, DockerFaultError> {
    let state = State::of(&inspect(docker, container).await?);
    let did = match action {
        DockerAction::Pause if state.paused => {
            bounded(container, "unpause", docker.unpause_container(container)).await?;
            "unpaused"
        }
        DockerAction::Disconnect => {
            let network = network.ok_or_else(|| api(container, "connect", "no network named"))?;
            if state.networks.iter().any(|n| n == network) {
                "already connected"
            } else {
                let request = NetworkConnectRequest {
                    container: container.to_string(),
                    endpoint_config: Some(EndpointSettings {
                        ipam_config: address.map(|ip| EndpointIpamConfig {
                            ipv4_address: Some(ip.to_string()),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                };
                bounded(
                    container,
                    "connect",
                    docker.connect_network(network, request),
                )
                .await?;
                "reconnected"
            }
        }
        DockerAction::Kill | DockerAction::Stop | DockerAction::Restart if !state.running => {
            bounded(container, "start", docker.start_container(container, None)).await?;
            "started"
        }
        _ => "already healed",
    };
    let after = State::of(&inspect(docker, container).await?);
    let healed = after.running
        && !after.paused
        && network.is_none_or(|n| {
            action != DockerAction::Disconnect || after.networks.iter().any(|x| x == n)
        });
    if healed {
        Ok(format!(
            "container {container} {did} ({})",
            after.describe()
        ))
    } else {
        Err(DockerFaultError::NotHealed {
            container: container.to_string(),
            state: after.describe(),
        })
    }
}

/// Heals from a journal undo record on the engine it names, reaching a node's socket
/// through `node` (its SSH host) when it was done on one; the line says where.
async fn heal_undo(undo: &DockerUndo, node: Option<&SshHost>) -> Result<String, DockerFaultError> {
    if undo.container.is_empty() {
        return Err(DockerFaultError::Undo("no container".into()));
    }
    let action = parse_action(&undo.action)
        .ok_or_else(|| DockerFaultError::Undo(format!("no known action `{}`", undo.action)))?;
    let node = node.map(|host| (host.node.as_str(), host));
    let reached = reach(undo.engine.as_deref(), undo.tls.as_ref(), node).await?;
    let healed = heal_with(
        &reached.docker,
        &undo.container,
        action,
        undo.network.as_deref(),
        undo.address.as_deref(),
    )
    .await;
    let closed = match reached.forward {
        Some(forward) => forward.close().await.err(),
        None => None,
    };
    let line = format!("{} on {}", healed?, reached.words);
    Ok(match closed {
        Some(e) => format!("{line}; {e}"),
        None => line,
    })
}

/// Writes `container`'s stdout and stderr since `since` (unix seconds) to `path`.
pub async fn collect_logs(
    docker: &Docker,
    container: &str,
    since: i32,
    path: &Path,
) -> Result<(), String> {
    let options = LogsOptions {
        stdout: true,
        stderr: true,
        since,
        timestamps: true,
        ..Default::default()
    };
    let mut stream = docker.logs(container, Some(options));
    let mut bytes = Vec::new();
    let read = async {
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| format!("logs of {container}: {e}"))?;
            bytes.extend_from_slice(&chunk.into_bytes());
        }
        Ok::<_, String>(())
    };
    tokio::time::timeout(API_DEADLINE, read)
        .await
        .map_err(|_| format!("logs of {container}: no end within {API_DEADLINE:?}"))??;
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}
/// A Docker API action on one container (`references/nemesis.md`, `### docker`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DockerFaultSpec {
    /// Container name or id, as `docker ps` shows it.
    pub container: String,
    pub action: DockerAction,
    /// `disconnect` only: the network the container is taken off (and put back on).
    pub network: Option<String>,
    /// `stop` / `restart` only: seconds the engine waits before it kills (default 10).
    pub grace: Option<Dur>,
    /// The engine acted on: `unix:///path/docker.sock`, `tcp://host:port` or
    /// `ssh://user@host[:port]`; absent = the local defaults (DOCKER_HOST or the socket).
    /// With an SSH `node`: `unix:///path` only, a socket on that node.
    pub engine: Option<String>,
    /// `tcp://` only: client certificate files for a TLS engine.
    pub tls: Option<DockerTls>,
    /// The node (`nodes:`) whose docker socket is acted on, reached through the node's
    /// own SSH connection; this machine's engine when absent or `local: true`.
    pub node: Option<String>,
}

/// The PEM files of a TLS Docker engine (what DOCKER_CERT_PATH holds as ca.pem,
/// cert.pem, key.pem).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DockerTls {
    pub ca: std::path::PathBuf,
    pub cert: std::path::PathBuf,
    pub key: std::path::PathBuf,
}

/// What is done to the container; each has its own heal (`start`, `unpause`, `connect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DockerAction {
    Kill,
    Stop,
    Restart,
    Pause,
    Disconnect,
}

impl super::Nemesis for DockerFaultSpec {
    type Held = InjectedDocker;

    fn privileged(&self, fault: &str) -> Option<String> {
        let action = format!("{:?}", self.action).to_lowercase();
        Some(format!(
            "{fault}: docker {action} of container `{}` through {}",
            self.container,
            engine_words(self.engine.as_deref(), self.node.as_deref())
        ))
    }

    fn node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    /// A kill / stop / restart ends the container's processes too.
    fn ends_processes(&self) -> bool {
        matches!(
            self.action,
            DockerAction::Kill | DockerAction::Stop | DockerAction::Restart
        )
    }

    fn check(&self, of: &str, fault: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let wants_network = self.action == DockerAction::Disconnect;
        if wants_network != self.network.is_some() {
            out.push((
                "docker.network".into(),
                format!(
                    "fault `{fault}` of {of}: `docker.network` goes with `action: disconnect` and only with it"
                ),
            ));
        }
        if self.node.is_some() {
            // A `${var}` is judged once expanded, at injection.
            let engine = self.engine.as_deref();
            if let Some(e) = engine.filter(|e| e.contains("://") && !e.starts_with("unix://")) {
                out.push((
                    "docker.engine".into(),
                    format!(
                        "fault `{fault}` of {of}: {}",
                        node_socket(Some(e)).err().unwrap_or_default()
                    ),
                ));
            }
            if self.tls.is_some() {
                out.push((
                    "docker.tls".into(),
                    format!(
                        "fault `{fault}` of {of}: `docker.tls` is for a tcp:// engine, not for a node's docker socket"
                    ),
                ));
            }
        }
        out
    }

    async fn inject<C: super::Context>(
        &self,
        _fault: &str,
        cx: &mut C,
    ) -> Result<Result<InjectedDocker, String>, C::Error> {
        let mut spec = self.clone();
        spec.container = cx.expand(&spec.container)?;
        if let Some(network) = &spec.network {
            spec.network = Some(cx.expand(network)?);
        }
        if let Some(engine) = &spec.engine {
            spec.engine = Some(cx.expand(engine)?);
        }
        let host = match spec.node.as_deref().map(|node| cx.host(Some(node))) {
            None => None,
            Some(Ok(host)) => Some(host),
            Some(Err(why)) => return Ok(Err(why)),
        };
        // A `local: true` node is this machine: its engine as without `node:`.
        let ssh = host.as_deref().and_then(|h| h.ssh());
        if ssh.is_none() {
            spec.node = None;
        }
        Ok(cx
            .guard(inject(&spec, ssh))
            .await?
            .map_err(|e| e.to_string()))
    }
}

impl super::HeldFault for InjectedDocker {
    type Undo = DockerUndo;

    fn undo(&self) -> DockerUndo {
        InjectedDocker::undo(self)
    }

    async fn probe<C: super::Context>(
        &self,
        window: super::Window,
        cx: &C,
    ) -> Result<Option<super::InjectorSeen>, C::Error> {
        let s = cx.guard(self.await_landing(window.within)).await?;
        Ok(Some(super::InjectorSeen {
            landed: s.landed,
            text: s.detail,
            detail: serde_json::json!({"events": s.events, "state": s.state}),
        }))
    }

    /// Heals after saving the container's log of the fault window into `logs/` (a
    /// killed container's last words are evidence too).
    async fn heal<C: super::Context>(self, cx: &C) -> Result<String, String> {
        let logs = self.collect_logs(cx.logs()).await;
        let healed = InjectedDocker::heal(self)
            .await
            .map_err(|e| e.to_string())?;
        Ok(match logs {
            Ok(path) => format!("{healed}; its log is in {}", path.display()),
            Err(e) => format!("{healed}; its log could not be saved: {e}"),
        })
    }
}

impl super::UndoRecord for DockerUndo {
    /// On this machine's engine on a runtime of its own (`faultline heal` is
    /// synchronous), or on a node's socket through `reach`'s connection to it.
    fn heal(&self, fault: &str, reach: &crate::host::Reach) -> Result<String, String> {
        let host = reach
            .host(self.node.as_deref())
            .map_err(|why| format!("{fault}: {why}"))?;
        let ssh = host.ssh();
        if let (Some(node), None) = (&self.node, ssh) {
            return Err(format!("{fault}: node {node} is not reached over ssh"));
        }
        let healed = reach
            .block_on(heal_undo(self, ssh))
            .map_err(|why| format!("{fault}: {why}"))?;
        healed
            .map(|line| format!("{fault}: {line}"))
            .map_err(|e| format!("{fault}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_names_round_trip() {
        for action in [
            DockerAction::Kill,
            DockerAction::Stop,
            DockerAction::Restart,
            DockerAction::Pause,
            DockerAction::Disconnect,
        ] {
            assert_eq!(parse_action(action_name(action)), Some(action));
        }
        assert_eq!(parse_action("reboot"), None);
    }

    #[tokio::test]
    async fn an_engine_names_a_known_scheme_and_tls_goes_with_tcp_only() {
        let e = connect(Some("http://127.0.0.1:2375"), None)
            .await
            .expect_err("no http:// engine");
        assert!(e.to_string().contains("allowed are unix://"), "{e}");
        let e = connect(Some("ssh://root@127.0.0.1:2222"), None)
            .await
            .expect_err("a port bollard would lose");
        assert!(e.to_string().contains("Host alias"), "{e}");
        assert!(!names_a_port("ssh://root@engine-host"));
        assert!(!names_a_port("ssh://root@[::1]"));
        let dir = tempfile::tempdir().expect("tempdir");
        let tls = DockerTls {
            ca: dir.path().join("ca.pem"),
            cert: dir.path().join("cert.pem"),
            key: dir.path().join("key.pem"),
        };
        let e = connect(Some("unix:///run/docker.sock"), Some(&tls))
            .await
            .expect_err("tls on a socket");
        assert!(e.to_string().contains("tcp:// engine only"), "{e}");
        // A missing certificate is named before anything is dialled.
        let e = connect(Some("tcp://127.0.0.1:9"), Some(&tls))
            .await
            .expect_err("no such files");
        assert!(e.to_string().contains("ca.pem"), "{e}");
    }

    #[test]
    fn an_undo_record_names_its_engine_and_old_ones_mean_the_local_one() {
        let old: DockerUndo =
            serde_json::from_str(r#"{"container":"c1","id":"abc","action":"pause"}"#)
                .expect("an undo record from before engines");
        assert_eq!(old.engine, None);
        let local = serde_json::to_string(&old).expect("json");
        assert!(!local.contains("engine"), "{local}");
        let remote = DockerUndo {
            engine: Some("ssh://root@10.88.0.11".into()),
            ..old
        };
        let text = serde_json::to_string(&remote).expect("json");
        let back: DockerUndo = serde_json::from_str(&text).expect("read back");
        assert_eq!(back, remote);
        assert_eq!(back.node, None);
        let on_node = DockerUndo {
            engine: None,
            node: Some("n2".into()),
            ..back
        };
        let text = serde_json::to_string(&on_node).expect("json");
        assert!(text.contains(r#""node":"n2""#), "{text}");
        let back: DockerUndo = serde_json::from_str(&text).expect("read back");
        assert_eq!(back, on_node);
    }

    #[test]
    fn a_nodes_engine_is_a_socket_on_it_and_the_words_say_where() {
        assert_eq!(node_socket(None), Ok(PathBuf::from("/var/run/docker.sock")));
        assert_eq!(
            node_socket(Some("unix:///run/user/0/docker.sock")),
            Ok(PathBuf::from("/run/user/0/docker.sock"))
        );
        for refused in ["tcp://10.0.0.2:2375", "ssh://root@n2", "unix://relative"] {
            let e = node_socket(Some(refused)).expect_err(refused);
            assert!(e.contains("docker socket on that node"), "{e}");
        }
        assert_eq!(
            engine_words(None, Some("n2")),
            "node n2's docker socket over ssh (/var/run/docker.sock)"
        );
        assert!(engine_words(Some("ssh://root@h"), None).contains("bollard's ssh connector"));
        assert!(engine_words(None, None).contains("local docker engine"));
    }

    #[test]
    fn network_events_count_by_their_container_attribute() {
        let event = EventMessage {
            actor: Some(bollard::models::EventActor {
                id: Some("net-id".into()),
                attributes: Some(HashMap::from([("container".into(), "abc".into())])),
            }),
            ..Default::default()
        };
        assert!(about(&event, "abc"));
        assert!(!about(&event, "abd"));
    }
}
