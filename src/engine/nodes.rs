//! The run spec's nodes, before anything starts: each reached over SSH with its host
//! key checked strictly (an untrusted key stops the run), journaled with the key's
//! fingerprint, and probed for what the steps aimed at it use. A node that cannot be
//! reached, or lacks what its steps need, ends the scenarios that use it
//! INCONCLUSIVE-env, naming it.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::capability::matrix::MatrixRow;
use crate::host::ssh::{ConnectError, SshHost};
use crate::host::{Host, Hosts, NodeSpec};
use crate::runspec::vars::Vars;
use crate::runspec::{Binding, RunSpec};
use crate::session::event::{CapabilitySeen, Event, NodeConnected};

/// How long one probe on a node may take.
const PROBE_WITHIN: std::time::Duration = std::time::Duration::from_secs(15);

/// What connecting the nodes settled.
#[derive(Default)]
pub struct Nodes {
    pub hosts: Hosts,
    /// `node:NAME` → the node's address, for `${node:NAME}`.
    pub vars: BTreeMap<String, String>,
    /// One checklist row per node and capability.
    pub rows: Vec<MatrixRow>,
    /// Scenario / arm id → why it cannot run (INCONCLUSIVE-env).
    pub blocked: BTreeMap<String, String>,
    /// To journal, in order.
    pub events: Vec<Event>,
}

/// Scenario / arm ids by the node they use, and which of them use it for `net` faults.
fn users(spec: &RunSpec) -> BTreeMap<String, (Vec<String>, bool)> {
    let mut out: BTreeMap<String, (Vec<String>, bool)> = BTreeMap::new();
    for (id, (binding, _)) in &spec.bindings {
        for (field, node) in crate::runspec::nodes::named(binding) {
            let key = match field.strip_prefix("arms.") {
                Some(rest) => format!("{id}/{}", rest.split('.').next().unwrap_or("")),
                None => id.clone(),
            };
            let entry = out.entry(node).or_default();
            if !entry.0.contains(&key) {
                entry.0.push(key);
            }
            entry.1 |= field.contains(".net.");
        }
    }
    out
}

/// Whether any binding starts a service or step on a node (they need `setsid` there).
fn runs_commands(binding: &Binding) -> bool {
    crate::runspec::nodes::named(binding)
        .iter()
        .any(|(field, _)| !field.contains("faults["))
}

/// `spec`'s node with `${var}`s expanded in its fields.
fn expanded(spec: &NodeSpec, vars: &mut Vars) -> Result<NodeSpec, String> {
    let mut out = spec.clone();
    for value in [&mut out.ssh, &mut out.key, &mut out.known_hosts]
        .into_iter()
        .flatten()
    {
        *value = vars.expand(value).map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// Connects every node `spec` declares. `Err` only for an untrusted host key: the run
/// must not start.
pub async fn connect(
    spec: &RunSpec,
    base_vars: &BTreeMap<String, String>,
) -> Result<Nodes, ConnectError> {
    let mut out = Nodes::default();
    let mut vars = Vars::default();
    for (k, v) in base_vars.iter().chain(spec.vars.iter()) {
        vars.set(k, v.clone());
    }
    let users = users(spec);
    let commands_on: Vec<String> = spec
        .bindings
        .values()
        .filter(|(b, _)| runs_commands(b))
        .flat_map(|(b, _)| crate::runspec::nodes::named(b))
        .map(|(_, node)| node)
        .collect();
    let mut connected = Vec::new();
    for (name, (node, _origin)) in &spec.nodes {
        let (used_by, nets) = users.get(name).cloned().unwrap_or_default();
        if node.local {
            out.hosts.insert(name, Host::local());
            out.vars.insert(format!("node:{name}"), "127.0.0.1".into());
            continue;
        }
        let node = match expanded(node, &mut vars) {
            Ok(node) => node,
            Err(why) => {
                out.unreachable(name, &used_by, &format!("its fields: {why}"));
                continue;
            }
        };
        let host = match SshHost::connect(name, node.clone()).await {
            Ok(host) => host,
            Err(e @ ConnectError::HostKey { .. }) => return Err(e),
            Err(ConnectError::Unreachable { message, .. }) => {
                out.unreachable(name, &used_by, &message);
                continue;
            }
        };
        out.vars
            .insert(format!("node:{name}"), host.resolved.hostname.clone());
        out.events.push(Event::NodeConnected(NodeConnected {
            node: name.clone(),
            spec: node.clone(),
            hostname: host.resolved.hostname.clone(),
            port: host.resolved.port,
            user: host.resolved.user.clone(),
            fingerprints: host.fingerprints.clone(),
            control: host.control.display().to_string(),
        }));
        let address = format!(
            "{}@{}:{}",
            host.resolved.user, host.resolved.hostname, host.resolved.port
        );
        let key = host.fingerprints.join(", ");
        out.row(
            name,
            "ssh",
            true,
            Some(key.clone()),
            &format!("reached as {address}; host key {key}"),
            &used_by,
        );
        connected.push((
            name.clone(),
            Arc::new(host) as Arc<Host>,
            address,
            used_by,
            nets,
        ));
    }
    // Then what each node's steps use, once every `${node:NAME}` is known.
    for (k, v) in &out.vars {
        vars.set(k, v.clone());
    }
    for (name, host, address, used_by, nets) in connected {
        let mut probes = vec![("kernel".to_string(), "uname -sr".to_string())];
        if commands_on.contains(&name) {
            probes.push(("setsid".into(), "command -v setsid".into()));
        }
        if nets {
            probes.push(("iptables".into(), "iptables -V".into()));
        }
        probes.extend(programs_on(spec, &name, &mut vars));
        for (capability, command) in &probes {
            let seen = host.run(command, PROBE_WITHIN).await;
            let (present, saw) = match &seen {
                Ok(out) if out.ok() => (true, out.said()),
                Ok(out) => (false, format!("`{command}` failed: {}", out.said())),
                Err(e) => (false, e.to_string()),
            };
            out.events.push(Event::Capability(CapabilitySeen {
                need: format!("node {name}: {capability}"),
                capability: format!("node:{name}/{capability}"),
                present,
                version: present.then(|| saw.clone()),
                meets_floor: None,
                command: format!("ssh {address} {command}"),
                saw: saw.clone(),
                used_by: used_by.clone(),
            }));
            let asked = format!("`{command}` on the node");
            out.row(
                &name,
                capability,
                present,
                Some(saw.clone()),
                &asked,
                &used_by,
            );
            if !present {
                for id in &used_by {
                    out.blocked
                        .entry(id.clone())
                        .or_insert_with(|| format!("node {name} lacks {capability}: {saw}"));
                }
            }
        }
        if commands_on.contains(&name)
            && let Some(ssh) = host.ssh()
        {
            out.containment(&name, ssh.containment().await);
        }
        out.hosts.insert(&name, host);
    }
    Ok(out)
}

/// The programs the services and steps on `node` start, as probes (`binary:NAME`,
/// `command -v` or `test -x` on the node). A command whose `${var}`s are only known
/// inside an iteration (`${seed}`) is left to fail where it runs.
fn programs_on(spec: &RunSpec, node: &str, vars: &mut Vars) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (binding, _) in spec.bindings.values() {
        for command in commands_on(binding, node) {
            let Ok(line) = vars.expand(&command) else {
                continue;
            };
            let words = shlex::split(&line).unwrap_or_default();
            let program = words
                .iter()
                .find(|w| *w != "exec" && !w.contains('='))
                .cloned();
            let Some(program) = program else { continue };
            let name = program.rsplit('/').next().unwrap_or(&program).to_string();
            let probe = if program.contains('/') {
                format!("test -x {0} && echo {0}", crate::host::quote(&program))
            } else {
                format!("command -v {}", crate::host::quote(&program))
            };
            let capability = format!("binary:{name}");
            if !out.iter().any(|(c, _)| *c == capability) {
                out.push((capability, probe));
            }
        }
    }
    out
}

/// The command lines a binding (arms included) runs on `node`.
fn commands_on(binding: &Binding, node: &str) -> Vec<String> {
    let on = |n: &Option<String>| n.as_deref() == Some(node);
    let mut out = Vec::new();
    if let Some(cluster) = &binding.cluster {
        out.extend(
            cluster
                .services
                .iter()
                .filter(|s| on(&s.node))
                .map(|s| s.run.clone()),
        );
        out.extend(
            cluster
                .health
                .iter()
                .filter(|h| on(&h.node))
                .map(|h| h.run.clone()),
        );
    }
    out.extend(
        binding
            .workload
            .iter()
            .filter(|w| on(&w.node))
            .map(|w| w.run.clone()),
    );
    for check in binding
        .before
        .iter()
        .chain(&binding.preconditions)
        .chain(&binding.teardown)
    {
        if on(&check.node) {
            out.push(check.run.clone());
        }
    }
    for arm in binding.arms.values() {
        out.extend(commands_on(arm, node));
    }
    out
}

impl Nodes {
    fn row(
        &mut self,
        node: &str,
        capability: &str,
        present: bool,
        version: Option<String>,
        note: &str,
        used_by: &[String],
    ) {
        self.rows.push(MatrixRow {
            requirement: format!("node {node}: {capability}"),
            capability: Some(format!("node:{node}/{capability}")),
            present: Some(present),
            version,
            source: "probe".into(),
            used_by: used_by.to_vec(),
            note: crate::sanitize::line(note),
        });
    }

    /// Which containment the node's commands get: journaled and a matrix row, never a
    /// block (a process group still ends what stays in it).
    fn containment(&mut self, node: &str, got: crate::host::ssh::Containment) {
        let capability = format!("node:{node}/containment");
        self.events.push(Event::Capability(CapabilitySeen {
            need: format!("node {node}: what ends a command and everything it started"),
            capability: capability.clone(),
            present: got.cgroup,
            version: None,
            meets_floor: None,
            command: "the command wrapper's cgroup probe".into(),
            saw: got.detail.clone(),
            used_by: Vec::new(),
        }));
        self.rows.push(MatrixRow {
            requirement: format!("node {node}: containment"),
            capability: Some(capability),
            present: Some(got.cgroup),
            version: None,
            source: "probe".into(),
            used_by: Vec::new(),
            note: crate::sanitize::line(&got.detail),
        });
    }

    fn unreachable(&mut self, name: &str, used_by: &[String], why: &str) {
        let why = crate::sanitize::line(why);
        self.hosts.unreachable.insert(name.to_string(), why.clone());
        self.events.push(Event::Capability(CapabilitySeen {
            need: format!("node {name}: ssh"),
            capability: format!("node:{name}/ssh"),
            present: false,
            version: None,
            meets_floor: None,
            command: "ssh (OpenSSH master connection)".into(),
            saw: why.clone(),
            used_by: used_by.to_vec(),
        }));
        self.row(name, "ssh", false, None, &why, used_by);
        for id in used_by {
            self.blocked
                .entry(id.clone())
                .or_insert_with(|| format!("node {name} unreachable: {why}"));
        }
    }
}
