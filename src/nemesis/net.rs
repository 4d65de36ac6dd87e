//! The `net` nemesis: a partition made of iptables DROP rules in the filter table,
//! each tagged `-m comment --comment "faultline:<tag>"` so that only faultline's own
//! rules are ever read or removed. Its injector-side evidence is the tagged rules'
//! packet counters rising after injection — never the fact that `iptables` exited 0.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Context, HeldFault, InjectorSeen, Nemesis, UndoRecord, Window};
use crate::host::{Host, quote};

/// How long one iptables command may take.
const REMOTE_DEADLINE: Duration = Duration::from_secs(20);

/// Prefix of every comment faultline puts on a rule.
pub const TAG_PREFIX: &str = "faultline:";

#[derive(Debug, thiserror::Error)]
pub enum NetFaultError {
    #[error("`{command}` could not run: {message}")]
    Spawn { command: String, message: String },
    #[error("`{command}` failed: {stderr}")]
    Failed { command: String, stderr: String },
    #[error("{count} rule(s) tagged `{TAG_PREFIX}{tag}` remain after heal")]
    Remains { tag: String, count: usize },
}

impl NetFaultSpec {
    /// The privileged action, in words an operator approves. `isolated`: the run goes
    /// in a network namespace of its own (`isolate: netns`), where a rule without
    /// `netns:` is put — never the namespace faultline was started in.
    pub fn privileged_in(&self, fault: &str, isolated: bool) -> String {
        let mut place = match (&self.netns, isolated && self.node.is_none()) {
            (Some(ns), _) => format!("network namespace `{ns}`"),
            (None, true) => match crate::host::netns::entered() {
                Some(own) => format!(
                    "the run's own network namespace `{}` (`isolate: netns`)",
                    own.name
                ),
                None => "the run's own network namespace (`isolate: netns`: \
                         `faultline-<pid>-<hex>`, made when the run starts)"
                    .to_string(),
            },
            (None, false) => "the current network namespace".to_string(),
        };
        if let Some(node) = &self.node {
            place = format!("{place} of node `{node}` (over SSH)");
        }
        let rules: Vec<String> = self
            .drop
            .iter()
            .map(|rule| {
                let mut argv = add_argv(rule, fault);
                // The comment tag is bookkeeping; the operator approves the match.
                if let Some(at) = argv
                    .windows(2)
                    .position(|w| w[0] == "-m" && w[1] == "comment")
                {
                    argv.drain(at..(at + 4).min(argv.len()));
                }
                format!("iptables {}", argv.join(" "))
            })
            .collect();
        format!(
            "{fault}: {} DROP rule(s) in {place} ({})",
            self.drop.len(),
            rules.join("; ")
        )
    }
}

/// A tag unique to this fault: `<fault-id>-<pid>-<counter>`, restricted to characters
/// that need no quoting anywhere iptables prints them.
pub fn new_tag(fault_id: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let id: String = fault_id
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{id}-{}-{n}", std::process::id())
}

/// The iptables arguments (after the program name) that insert `rule` at the head of
/// its chain, tagged with `tag`.
pub fn add_argv(rule: &NetRule, tag: &str) -> Vec<String> {
    let mut argv: Vec<String> = ["-w", "-t", "filter", "-I", rule.chain.as_str(), "1"]
        .map(String::from)
        .to_vec();
    let mut push = |flag: &str, value: String| {
        argv.push(flag.to_string());
        argv.push(value);
    };
    if let Some(source) = &rule.source {
        push("-s", source.clone());
    }
    if let Some(destination) = &rule.destination {
        push("-d", destination.clone());
    }
    let protocol = rule
        .protocol
        .clone()
        .or_else(|| rule.has_port().then(|| "tcp".to_string()));
    if let Some(protocol) = protocol {
        push("-p", protocol);
    }
    // A port still written as a substitution (an approval asked before the run) is
    // shown as written; injection reads it as a number first.
    let port = |n: Option<u16>, t: &Option<String>| n.map(|n| n.to_string()).or_else(|| t.clone());
    if let Some(port) = port(rule.sport, &rule.sport_template) {
        push("--sport", port);
    }
    if let Some(port) = port(rule.dport, &rule.dport_template) {
        push("--dport", port);
    }
    if let Some(owner) = &rule.uid_owner {
        argv.extend(["-m", "owner", "--uid-owner"].map(String::from));
        argv.push(owner.clone());
    }
    if let Some(p) = rule.probability {
        argv.extend(["-m", "statistic", "--mode", "random", "--probability"].map(String::from));
        argv.push(p.to_string());
    }
    argv.extend(["-m", "comment", "--comment"].map(String::from));
    argv.push(format!("{TAG_PREFIX}{tag}"));
    argv.extend(["-j", "DROP"].map(String::from));
    argv
}

/// Splits one `iptables-save` line into words, honouring double quotes and backslash
/// escapes the way iptables prints them.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quoted = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                in_word = true;
            }
            '"' => {
                quoted = !quoted;
                in_word = true;
            }
            c if c.is_whitespace() && !quoted => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// One rule carrying a given tag, as `iptables-save -c` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaggedRule {
    pub chain: String,
    pub packets: u64,
    pub bytes: u64,
    /// The rule's words after `-A <chain>`.
    pub spec: Vec<String>,
}

/// The rules of `iptables-save -c -t filter` output whose comment is exactly
/// `faultline:<tag>`; every other rule is ignored.
pub fn parse_tagged(save: &str, tag: &str) -> Vec<TaggedRule> {
    let wanted = format!("{TAG_PREFIX}{tag}");
    save.lines()
        .filter_map(|line| {
            let (counters, rest) = line.trim().strip_prefix('[')?.split_once(']')?;
            let (packets, bytes) = counters.split_once(':')?;
            let words = words(rest);
            let tagged = words
                .windows(2)
                .any(|w| w[0] == "--comment" && w[1] == wanted);
            match words.as_slice() {
                [flag, chain, spec @ ..] if flag == "-A" && tagged => Some(TaggedRule {
                    chain: chain.clone(),
                    packets: packets.parse().ok()?,
                    bytes: bytes.parse().ok()?,
                    spec: spec.to_vec(),
                }),
                _ => None,
            }
        })
        .collect()
}

/// The command line of an iptables call (in namespace `netns`, if named).
fn remote_line(netns: Option<&str>, program: &str, args: &[String]) -> String {
    let ns = netns.map(|ns| ["ip", "netns", "exec", ns]);
    ns.iter()
        .flatten()
        .copied()
        .chain(std::iter::once(program))
        .chain(args.iter().map(String::as_str))
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs an iptables command on `host`, its stdout on exit 0; `once` for one that adds
/// a rule (never repeated after a transport error: it may have run).
async fn run_on(
    host: &Host,
    netns: Option<&str>,
    program: &str,
    args: &[String],
    once: bool,
) -> Result<String, NetFaultError> {
    let line = remote_line(netns, program, args);
    let command = if host.is_local() {
        line.clone()
    } else {
        format!("{line} (on node {})", host.node())
    };
    let ran = if once {
        host.run_once(&line, REMOTE_DEADLINE).await
    } else {
        host.run(&line, REMOTE_DEADLINE).await
    };
    let out = ran.map_err(|e| NetFaultError::Spawn {
        command: command.clone(),
        message: e.to_string(),
    })?;
    if out.ok() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(NetFaultError::Failed {
            command,
            stderr: out.said(),
        })
    }
}

/// The rules tagged `tag` now present in `netns` of `host`, with their counters.
pub async fn tagged_rules(
    host: &Host,
    netns: Option<&str>,
    tag: &str,
) -> Result<Vec<TaggedRule>, NetFaultError> {
    let args = ["-c", "-t", "filter"].map(String::from);
    let save = run_on(host, netns, "iptables-save", &args, false).await?;
    Ok(parse_tagged(&save, tag))
}

/// Deletes every rule tagged `tag` in `netns` of `host` (each by its own listed
/// spec), then checks none is left. Returns how many were deleted. Untagged rules are
/// never touched.
pub async fn remove_tagged(
    host: &Host,
    netns: Option<&str>,
    tag: &str,
) -> Result<usize, NetFaultError> {
    let mut removed = 0;
    for rule in tagged_rules(host, netns, tag).await? {
        let mut argv: Vec<String> = ["-w", "-t", "filter", "-D", &rule.chain]
            .map(String::from)
            .to_vec();
        argv.extend(rule.spec);
        run_on(host, netns, "iptables", &argv, false).await?;
        removed += 1;
    }
    let left = tagged_rules(host, netns, tag).await?.len();
    if left == 0 {
        Ok(removed)
    } else {
        Err(NetFaultError::Remains {
            tag: tag.to_string(),
            count: left,
        })
    }
}

/// Packet counters of a fault's tagged rules, one per rule in listing order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Counters {
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
}

impl Counters {
    pub fn total_packets(&self) -> u64 {
        self.packets.iter().sum()
    }
}

/// Injector-side landing evidence: did the tagged rules drop anything since injection?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub landed: bool,
    pub before: Counters,
    pub after: Counters,
    pub detail: String,
}

/// An injected net fault. Dropping it unhealed deletes its rules.
#[derive(Debug)]
pub struct InjectedNet {
    pub netns: Option<String>,
    pub tag: String,
    /// The iptables arguments that added each rule (after the program name).
    pub rules: Vec<Vec<String>>,
    /// The counters read right after the rules went in.
    pub baseline: Counters,
    /// The host whose tables hold the rules.
    pub host: Arc<Host>,
    healed: bool,
}

/// Adds the rules of `spec` to the tables of `host`, tagged with a fresh tag derived
/// from `fault_id`. If one rule fails (or its command was cut off by a transport
/// error, so it may be in place), everything tagged is removed before the error is
/// returned.
pub async fn inject(
    host: Arc<Host>,
    spec: &NetFaultSpec,
    fault_id: &str,
) -> Result<InjectedNet, NetFaultError> {
    let mut injected = InjectedNet::new(spec, fault_id, host.clone());
    let netns = injected.netns.clone();
    for rule in &spec.drop {
        let argv = add_argv(rule, &injected.tag);
        if let Err(e) = run_on(&*host, netns.as_deref(), "iptables", &argv, true).await {
            let _ = remove_tagged(&*host, netns.as_deref(), &injected.tag).await;
            injected.healed = true;
            return Err(e);
        }
        injected.rules.push(argv);
    }
    injected.baseline = injected.counters().await?;
    Ok(injected)
}

impl InjectedNet {
    /// A fault of `spec` with a fresh tag and no rule yet.
    fn new(spec: &NetFaultSpec, fault_id: &str, host: Arc<Host>) -> InjectedNet {
        // On this machine, a run in its own namespace (`isolate: netns`) puts its rules
        // there by name: the undo record then heals them from any namespace.
        let own = || crate::host::netns::entered().map(|n| n.name.clone());
        InjectedNet {
            netns: spec
                .netns
                .clone()
                .or_else(|| host.is_local().then(own).flatten()),
            tag: new_tag(fault_id),
            rules: Vec::new(),
            baseline: Counters {
                packets: Vec::new(),
                bytes: Vec::new(),
            },
            host,
            healed: false,
        }
    }

    /// The packet / byte counters of exactly this fault's tagged rules.
    pub async fn counters(&self) -> Result<Counters, NetFaultError> {
        let rules = tagged_rules(&*self.host, self.netns.as_deref(), &self.tag).await?;
        Ok(Counters {
            packets: rules.iter().map(|r| r.packets).collect(),
            bytes: rules.iter().map(|r| r.bytes).collect(),
        })
    }

    fn observation(&self, read: Result<Counters, NetFaultError>) -> Observation {
        let (after, unreadable) = match read {
            Ok(after) => (after, None),
            Err(e) => (
                Counters {
                    packets: Vec::new(),
                    bytes: Vec::new(),
                },
                Some(e),
            ),
        };
        let landed = after.total_packets() > self.baseline.total_packets();
        let detail = match unreadable {
            Some(e) => format!("counters of {TAG_PREFIX}{} unreadable: {e}", self.tag),
            None => format!(
                "rules tagged {TAG_PREFIX}{} dropped {} packet(s) since injection (packets {:?} -> {:?})",
                self.tag,
                after
                    .total_packets()
                    .saturating_sub(self.baseline.total_packets()),
                self.baseline.packets,
                after.packets
            ),
        };
        Observation {
            landed,
            before: self.baseline.clone(),
            after,
            detail,
        }
    }

    /// Polls the counters until they rose above the baseline or `within` passes. No
    /// matching traffic inside the window means not landed.
    pub async fn await_landing(&self, within: Duration) -> Observation {
        // Each read may be a round trip to a node: polled at a pace that suits both.
        super::poll_until_async(
            within,
            Duration::from_millis(if self.host.is_local() { 50 } else { 100 }),
            async || self.observation(self.counters().await),
            |s| s.landed,
        )
        .await
    }

    /// Deletes exactly this fault's rules and checks none of its tag remains.
    pub async fn heal(mut self) -> Result<String, NetFaultError> {
        self.healed = true;
        let removed = remove_tagged(&*self.host, self.netns.as_deref(), &self.tag).await?;
        Ok(format!(
            "{removed} rule(s) tagged {TAG_PREFIX}{} deleted{}{}",
            self.tag,
            self.host.place(),
            self.netns
                .as_deref()
                .map(|ns| format!(" in netns {ns}"))
                .unwrap_or_default()
        ))
    }
}

/// ` on node NAME` for a host that is a node; nothing for this machine.
impl Drop for InjectedNet {
    fn drop(&mut self) {
        if self.healed {
            return;
        }
        let (netns, tag) = (self.netns.clone(), self.tag.clone());
        crate::host::undo_on_drop(&self.host, move |host| {
            Box::pin(async move {
                let _ = remove_tagged(&*host, netns.as_deref(), &tag).await;
            })
        });
    }
}
/// A partition made of iptables DROP rules (`references/nemesis.md`, `### net`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NetFaultSpec {
    /// Network namespace the rules go into (`ip netns exec <netns> iptables …`);
    /// the current namespace when absent.
    pub netns: Option<String>,
    /// The node whose own iptables get the rules (`nodes:`); this machine when absent.
    pub node: Option<String>,
    /// One rule per dropped direction: a full partition A↔B is two, an asymmetric one is one.
    pub drop: Vec<NetRule>,
}

/// The filter-table chain a rule goes into.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
pub enum Chain {
    #[default]
    #[serde(rename = "INPUT")]
    Input,
    #[serde(rename = "OUTPUT")]
    Output,
    #[serde(rename = "FORWARD")]
    Forward,
}

impl Chain {
    pub fn as_str(self) -> &'static str {
        match self {
            Chain::Input => "INPUT",
            Chain::Output => "OUTPUT",
            Chain::Forward => "FORWARD",
        }
    }
}

/// One DROP rule: the packets it matches are dropped.
///
/// `dport` and `sport` are written as a number or as a `${port:NAME}` / `${var}`
/// substitution (a member's port); a substitution is kept in `*_template` and read as
/// a port when the fault is injected, like the addresses' `${var}`s.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(from = "NetRuleText", into = "NetRuleText")]
pub struct NetRule {
    pub chain: Chain,
    /// Source address or CIDR (`-s`).
    pub source: Option<String>,
    /// Destination address or CIDR (`-d`).
    pub destination: Option<String>,
    /// `-p`; `tcp` when a port is given and no protocol is.
    pub protocol: Option<String>,
    /// `--dport` written as a number.
    pub dport: Option<u16>,
    /// `--sport` written as a number.
    pub sport: Option<u16>,
    /// `dport` written as a substitution (`${port:n3}`): expanded at injection.
    pub dport_template: Option<String>,
    /// `sport` written as a substitution: expanded at injection.
    pub sport_template: Option<String>,
    /// `-m owner --uid-owner`: only packets sent by this user (name or uid) — how
    /// members on one host, each run as its own user, are told apart. OUTPUT only.
    pub uid_owner: Option<String>,
    /// Drop only this fraction of matching packets, in (0, 1].
    pub probability: Option<f64>,
}

impl NetRule {
    /// Whether the rule names a port (as a number or a substitution).
    pub fn has_port(&self) -> bool {
        self.dport.is_some()
            || self.sport.is_some()
            || self.dport_template.is_some()
            || self.sport_template.is_some()
    }

    /// `(field, template)` for each port written as a substitution.
    pub fn port_templates(&self) -> Vec<(&'static str, &str)> {
        [
            ("dport", self.dport_template.as_deref()),
            ("sport", self.sport_template.as_deref()),
        ]
        .into_iter()
        .filter_map(|(field, t)| t.map(|t| (field, t)))
        .collect()
    }
}

/// A [`NetRule`] as the run spec writes it.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct NetRuleText {
    #[serde(default)]
    chain: Chain,
    source: Option<String>,
    destination: Option<String>,
    protocol: Option<String>,
    dport: Option<PortSpec>,
    sport: Option<PortSpec>,
    uid_owner: Option<String>,
    probability: Option<f64>,
}

impl From<NetRuleText> for NetRule {
    fn from(t: NetRuleText) -> NetRule {
        let split = |p: Option<PortSpec>| match p {
            Some(PortSpec::Number(n)) => (Some(n), None),
            Some(PortSpec::Substituted(s)) => (None, Some(s)),
            None => (None, None),
        };
        let (dport, dport_template) = split(t.dport);
        let (sport, sport_template) = split(t.sport);
        NetRule {
            chain: t.chain,
            source: t.source,
            destination: t.destination,
            protocol: t.protocol,
            dport,
            sport,
            dport_template,
            sport_template,
            uid_owner: t.uid_owner,
            probability: t.probability,
        }
    }
}

impl From<NetRule> for NetRuleText {
    fn from(r: NetRule) -> NetRuleText {
        let join = |n: Option<u16>, s: Option<String>| {
            s.map(PortSpec::Substituted)
                .or_else(|| n.map(PortSpec::Number))
        };
        NetRuleText {
            chain: r.chain,
            source: r.source,
            destination: r.destination,
            protocol: r.protocol,
            dport: join(r.dport, r.dport_template),
            sport: join(r.sport, r.sport_template),
            uid_owner: r.uid_owner,
            probability: r.probability,
        }
    }
}

/// What a port field takes, in the words of its errors.
pub const PORT_ALLOWED: &str = "a port: a whole number from 0 to 65535, or a `${port:NAME}` / \
     `${var}` substitution that gives one";

/// A port as written: a number, or text with `${…}` substitutions read as a port
/// once they are expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortSpec {
    Number(u16),
    Substituted(String),
}

impl PortSpec {
    /// A port from its text: a number (`7000`, `"7000"`) or a substitution.
    pub fn parse(text: &str) -> Result<PortSpec, String> {
        let trimmed = text.trim();
        if let Ok(n) = trimmed.parse::<u16>() {
            return Ok(PortSpec::Number(n));
        }
        let shown = crate::sanitize::line(text);
        if !trimmed.contains("${") {
            return Err(format!("expected {PORT_ALLOWED}, got `{shown}`"));
        }
        let mut rest = trimmed;
        while let Some(start) = rest.find("${") {
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Err(format!(
                    "expected {PORT_ALLOWED}, got `{shown}`: its `${{` is never closed by `}}`"
                ));
            };
            if after[..end].trim().is_empty() {
                return Err(format!(
                    "expected {PORT_ALLOWED}, got `{shown}`: `${{}}` names no variable"
                ));
            }
            rest = &after[end + 1..];
        }
        Ok(PortSpec::Substituted(trimmed.to_string()))
    }

    /// The port an expanded substitution gives, or why it gives none.
    pub fn read_expanded(template: &str, expanded: &str) -> Result<u16, String> {
        expanded.trim().parse::<u16>().map_err(|_| {
            format!(
                "`{}` gives `{}`, which is not a port (a whole number from 0 to 65535)",
                crate::sanitize::line(template),
                crate::sanitize::line(expanded)
            )
        })
    }
}

impl Serialize for PortSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PortSpec::Number(n) => s.serialize_u16(*n),
            PortSpec::Substituted(t) => s.serialize_str(t),
        }
    }
}

impl<'de> Deserialize<'de> for PortSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct PortVisitor;
        impl serde::de::Visitor<'_> for PortVisitor {
            type Value = PortSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(PORT_ALLOWED)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<PortSpec, E> {
                u16::try_from(v).map(PortSpec::Number).map_err(|_| {
                    E::invalid_value(serde::de::Unexpected::Unsigned(v), &PORT_ALLOWED)
                })
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<PortSpec, E> {
                u16::try_from(v)
                    .map(PortSpec::Number)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &PORT_ALLOWED))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PortSpec, E> {
                PortSpec::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(PortVisitor)
    }
}

impl Nemesis for NetFaultSpec {
    type Held = InjectedNet;

    fn node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    fn privileged(&self, fault: &str) -> Option<String> {
        Some(self.privileged_in(fault, false))
    }

    /// Something is dropped, and each drop probability lies in (0, 1].
    fn check(&self, of: &str, fault: &str) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        if self.drop.is_empty() {
            problems.push((
                "net.drop".into(),
                format!("fault `{fault}` of {of} needs at least one rule under `net.drop`"),
            ));
        }
        for (index, rule) in self.drop.iter().enumerate() {
            if rule.uid_owner.is_some() && rule.chain != Chain::Output {
                problems.push((
                    "net.drop.uid_owner".into(),
                    format!(
                        "fault `{fault}` of {of}, rule {}: `uid_owner` matches the user that \
                         sends a packet, which iptables knows only on the OUTPUT chain; add \
                         `chain: OUTPUT`",
                        index + 1
                    ),
                ));
            }
            if let Some(p) = rule.probability.filter(|p| !(*p > 0.0 && *p <= 1.0)) {
                problems.push((
                    "net.drop.probability".into(),
                    format!(
                        "fault `{fault}` of {of}, rule {}: probability {p} is outside (0, 1]",
                        index + 1
                    ),
                ));
            }
        }
        problems
    }

    async fn inject<C: Context>(
        &self,
        fault: &str,
        cx: &mut C,
    ) -> Result<Result<InjectedNet, String>, C::Error> {
        // `${var}`s expanded in the namespace and the addresses.
        let mut spec = self.clone();
        if let Some(ns) = &spec.netns {
            spec.netns = Some(cx.expand(ns)?);
        }
        for (index, rule) in spec.drop.iter_mut().enumerate() {
            for value in [&mut rule.source, &mut rule.destination, &mut rule.uid_owner]
                .into_iter()
                .flatten()
            {
                *value = cx.expand(value)?;
            }
            // `${port:n3}`: a member's port, read as a number once expanded.
            for (field, template, port) in [
                ("dport", rule.dport_template.take(), &mut rule.dport),
                ("sport", rule.sport_template.take(), &mut rule.sport),
            ] {
                let Some(template) = template else {
                    continue;
                };
                let expanded = cx.expand(&template)?;
                match PortSpec::read_expanded(&template, &expanded) {
                    Ok(n) => *port = Some(n),
                    Err(why) => {
                        return Ok(Err(format!(
                            "fault `{fault}`: run spec field `net.drop[{index}].{field}`: {why}"
                        )));
                    }
                }
            }
        }
        let host = match cx.host(self.node.as_deref()) {
            Ok(host) => host,
            Err(why) => return Ok(Err(why)),
        };
        Ok(cx
            .guard(inject(host, &spec, fault))
            .await?
            .map_err(|e| e.to_string()))
    }
}

impl HeldFault for InjectedNet {
    type Undo = NetUndo;

    fn undo(&self) -> NetUndo {
        let rules = self
            .rules
            .iter()
            .map(|argv| {
                std::iter::once("iptables".to_string())
                    .chain(argv.iter().cloned())
                    .collect()
            })
            .collect();
        NetUndo {
            netns: self.netns.clone(),
            tag: self.tag.clone(),
            rules,
            node: (!self.host.is_local()).then(|| self.host.node().to_string()),
        }
    }

    async fn probe<C: Context>(
        &self,
        window: Window,
        cx: &C,
    ) -> Result<Option<InjectorSeen>, C::Error> {
        let s = cx.guard(self.await_landing(window.within)).await?;
        Ok(Some(InjectorSeen {
            landed: s.landed,
            text: s.detail,
            detail: json!({"before": s.before, "after": s.after}),
        }))
    }

    async fn heal<C: Context>(self, _cx: &C) -> Result<String, String> {
        InjectedNet::heal(self).await.map_err(|e| e.to_string())
    }
}

/// The tag of the fault's rules and the namespace they are in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetUndo {
    pub netns: Option<String>,
    pub tag: String,
    pub rules: Vec<Vec<String>>,
    /// The node whose tables hold the rules (absent: this machine's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl UndoRecord for NetUndo {
    /// Deletes every rule still carrying its tag (in its namespace).
    fn heal(&self, fault: &str, reach: &crate::host::Reach) -> Result<String, String> {
        let netns = self.netns.as_deref();
        let tag = self.tag.as_str();
        if tag.is_empty() {
            return Err(format!("{fault}: the net undo record names no tag"));
        }
        let mut place = netns
            .map(|ns| format!(" in netns {ns}"))
            .unwrap_or_default();
        if let Some(node) = &self.node {
            place = format!(" on node {node}{place}");
        }
        let host = reach
            .host(self.node.as_deref())
            .map_err(|why| format!("{fault}: {why}"))?;
        reach
            .block_on(remove_tagged(&*host, netns, tag))
            .map_err(|why| format!("{fault}: {why}"))?
            .map(|n| format!("{fault}: {n} rule(s) tagged {TAG_PREFIX}{tag} deleted{place}"))
            .map_err(|e| format!("{fault}: {e}{place}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_keeps_only_the_exact_tag() {
        let save = "\
*filter
:INPUT ACCEPT [0:0]
[3:180] -A INPUT -s 10.0.0.1/32 -m comment --comment \"faultline:f-1-1\" -j DROP
[7:420] -A INPUT -s 10.0.0.1/32 -m comment --comment \"faultline:f-1-10\" -j DROP
[9:9] -A OUTPUT -p tcp -m tcp --dport 9 -m comment --comment \"keep me\" -j DROP
[5:300] -A OUTPUT -d 10.0.0.2/32 -m comment --comment faultline:f-1-1 -j DROP
COMMIT
";
        let rules = parse_tagged(save, "f-1-1");
        assert_eq!(rules.len(), 2);
        assert_eq!((rules[0].chain.as_str(), rules[0].packets), ("INPUT", 3));
        assert_eq!((rules[1].chain.as_str(), rules[1].bytes), ("OUTPUT", 300));
        assert_eq!(
            rules[0].spec,
            [
                "-s",
                "10.0.0.1/32",
                "-m",
                "comment",
                "--comment",
                "faultline:f-1-1",
                "-j",
                "DROP"
            ]
        );
    }

    #[test]
    fn a_port_without_protocol_means_tcp() {
        let rule = NetRule {
            dport: Some(80),
            probability: Some(0.5),
            ..NetRule::default()
        };
        let argv = add_argv(&rule, "t");
        let text = argv.join(" ");
        assert!(text.contains("-I INPUT 1 -p tcp --dport 80"), "{text}");
        assert!(text.contains("--probability 0.5"), "{text}");
        assert!(text.ends_with("--comment faultline:t -j DROP"), "{text}");
    }

    #[test]
    fn tags_are_unique_and_safe() {
        let a = new_tag("p 1/x");
        let b = new_tag("p 1/x");
        assert_ne!(a, b);
        assert!(a.starts_with("p_1_x-"), "{a}");
    }
}
