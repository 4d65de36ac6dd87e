//! The capability names faultline knows, and the tables that turn a plan's free text
//! (§6b rows, scenario techniques) into them.

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;
use semver::Version;
use serde::Serialize;

use crate::plan::model::Requirement;

/// One thing the environment may or may not provide.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Capability {
    Docker,
    DockerCompose,
    Podman,
    Iptables,
    Tc,
    /// The netem qdisc, accepted by the kernel.
    TcNetem,
    NetNamespaces,
    /// The cgroup v2 io controller.
    CgroupIo,
    /// Root, or CAP_NET_ADMIN in the effective set.
    CapNetAdmin,
    Libfaketime,
    DmFlakey,
    Toxiproxy,
    Go,
    /// The Rust toolchain (cargo).
    Rust,
    Java,
    Python,
    Postgres,
    Redis,
    /// Any named executable on PATH.
    Binary(String),
    /// A `host:port` that accepts TCP connections.
    Endpoint(String),
}

impl Capability {
    /// Every capability without a parameter, in declaration order.
    pub const ALL: &'static [Capability] = &[
        Capability::Docker,
        Capability::DockerCompose,
        Capability::Podman,
        Capability::Iptables,
        Capability::Tc,
        Capability::TcNetem,
        Capability::NetNamespaces,
        Capability::CgroupIo,
        Capability::CapNetAdmin,
        Capability::Libfaketime,
        Capability::DmFlakey,
        Capability::Toxiproxy,
        Capability::Go,
        Capability::Rust,
        Capability::Java,
        Capability::Python,
        Capability::Postgres,
        Capability::Redis,
    ];

    /// The kebab-case name (`binary` / `endpoint` for the parameterised ones).
    pub fn as_str(&self) -> &'static str {
        match self {
            Capability::Docker => "docker",
            Capability::DockerCompose => "docker-compose",
            Capability::Podman => "podman",
            Capability::Iptables => "iptables",
            Capability::Tc => "tc",
            Capability::TcNetem => "tc-netem",
            Capability::NetNamespaces => "net-namespaces",
            Capability::CgroupIo => "cgroup-io",
            Capability::CapNetAdmin => "cap-net-admin",
            Capability::Libfaketime => "libfaketime",
            Capability::DmFlakey => "dm-flakey",
            Capability::Toxiproxy => "toxiproxy",
            Capability::Go => "go",
            Capability::Rust => "rust",
            Capability::Java => "java",
            Capability::Python => "python",
            Capability::Postgres => "postgres",
            Capability::Redis => "redis",
            Capability::Binary(_) => "binary",
            Capability::Endpoint(_) => "endpoint",
        }
    }
}

/// `docker`, or `binary:<name>` / `endpoint:<host:port>` for the parameterised ones.
impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Capability::Binary(arg) | Capability::Endpoint(arg) => {
                write!(f, "{}:{arg}", self.as_str())
            }
            other => f.write_str(other.as_str()),
        }
    }
}

/// Where a need was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NeedSource {
    PlanRow { line: usize },
    Technique { scenario: String },
    Nemesis { kind: String },
    Toolbox { path: String },
    RunSpec { scenario: String },
}

/// One capability the plan needs, as written and as recognised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub raw: String,
    pub source: NeedSource,
    /// `None`: unrecognised, to be confirmed by hand.
    pub capability: Option<Capability>,
    pub floor: Option<Version>,
    pub used_by: Vec<String>,
}

impl Need {
    /// The needs of one §6b row: one per recognised capability, else one unrecognised.
    /// A floor in the row's own floor column wins over one written in the requirement.
    pub fn from_requirement(req: &Requirement) -> Vec<Need> {
        let column_floor = floor_of(&req.version_floor);
        let used_by: Vec<String> = req
            .used_by
            .split([',', ';'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let need = |capability, floor| Need {
            raw: req.requirement.clone(),
            source: NeedSource::PlanRow { line: req.line },
            capability,
            floor,
            used_by: used_by.clone(),
        };
        let found = normalise(&req.requirement);
        if found.is_empty() {
            return vec![need(None, column_floor)];
        }
        found
            .into_iter()
            .map(|(cap, floor)| need(Some(cap), column_floor.clone().or(floor)))
            .collect()
    }
}

/// Keyword table: a pattern and what it names. Longer phrases come first; a match
/// is blanked out so `docker compose` does not also count as `docker`.
static KEYWORDS: LazyLock<Vec<(Regex, &'static [Capability])>> = LazyLock::new(|| {
    use Capability::*;
    let table: &[(&str, &'static [Capability])] = &[
        (r"docker[\s-]*compose|\bcompose\b", &[DockerCompose]),
        (r"\bpodman\b", &[Podman]),
        (r"\bdocker\b", &[Docker]),
        (r"cap_net_admin|\bnet_admin\b", &[CapNetAdmin]),
        (r"\bip6?tables\b", &[Iptables]),
        (r"\bnetem\b", &[TcNetem]),
        (r"\btc\b|traffic control", &[Tc]),
        (r"net(work)?[\s-]*namespaces?|\bnetns\b", &[NetNamespaces]),
        (r"\bcgroups?", &[CgroupIo]),
        (r"faketime", &[Libfaketime]),
        (r"dm[\s_-]*flakey|device[\s-]*mapper", &[DmFlakey]),
        (r"toxiproxy", &[Toxiproxy]),
        (r"\bgo(lang)?\b", &[Go]),
        (r"\brust\b|\bcargo\b", &[Rust]),
        (r"\bjava\b|\bjdk\b|\bjre\b", &[Java]),
        (r"\bpython\d*", &[Python]),
        (r"\bpostgres(ql)?\b|\bpsql\b", &[Postgres]),
        (r"\bredis\b", &[Redis]),
    ];
    table
        .iter()
        .filter_map(|(p, caps)| Regex::new(&format!("(?i){p}")).ok().map(|r| (r, *caps)))
        .collect()
});

/// Technique table: fault words and the capabilities that inject them.
static TECHNIQUES: LazyLock<Vec<(Regex, &'static [Capability])>> = LazyLock::new(|| {
    use Capability::*;
    let table: &[(&str, &'static [Capability])] = &[
        (
            // "isolate the leader", "network isolation" — never a transaction's
            // isolation level, which a technique line may name without any cut.
            r"partition|split[\s-]*brain|isolat(e|es|ed|ing)\b|(network|node|host|leader|primary|replica) isolation|isolation of|blackhole|drop packets",
            &[Iptables, NetNamespaces, CapNetAdmin],
        ),
        (
            r"latency|delay|jitter|packet loss|netem|bandwidth",
            &[TcNetem, CapNetAdmin],
        ),
        (r"clock|time skew|time jump|faketime", &[Libfaketime]),
        (r"disk fault|disk error|\beio\b|fsync|flakey", &[DmFlakey]),
        (r"io throttl|slow disk|cgroup", &[CgroupIo]),
        (r"compose", &[Docker, DockerCompose]),
        (r"container|docker", &[Docker]),
        (r"toxiproxy|toxic", &[Toxiproxy]),
    ];
    table
        .iter()
        .filter_map(|(p, caps)| Regex::new(&format!("(?i){p}")).ok().map(|r| (r, *caps)))
        .collect()
});

/// A version written as `1.21`, `14+`, `>= 2.20.1`: the first number not glued to a
/// word (so `v2` in "cgroups v2" is not a floor). Missing parts are zero.
static FLOOR: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?:^|[^\w.])(\d+)(?:\.(\d+))?(?:\.(\d+))?").ok());

/// The version floor written in `text`, if any.
pub fn floor_of(text: &str) -> Option<Version> {
    let caps = FLOOR.as_ref()?.captures(text)?;
    let part = |i| {
        caps.get(i)
            .map_or(Some(0), |m| m.as_str().parse::<u64>().ok())
    };
    Some(Version::new(part(1)?, part(2)?, part(3)?))
}

/// Free text of a requirement row → capabilities with their floors. The text is cut
/// at ` + `, `,`, `;`, ` and `, `/`; a floor applies to the capabilities of its piece.
/// Unknown text gives an empty list.
pub fn normalise(raw: &str) -> Vec<(Capability, Option<Version>)> {
    let mut out: Vec<(Capability, Option<Version>)> = Vec::new();
    for piece in split_pieces(raw) {
        let floor = floor_of(&piece);
        let mut rest = piece.to_string();
        for (re, caps) in KEYWORDS.iter() {
            if !re.is_match(&rest) {
                continue;
            }
            rest = re.replace_all(&rest, " ").into_owned();
            for cap in caps.iter() {
                if !out.iter().any(|(c, _)| c == cap) {
                    out.push((cap.clone(), floor.clone()));
                }
            }
        }
    }
    out
}

fn split_pieces(raw: &str) -> Vec<String> {
    static SEP: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"(?i)\s\+\s|[,;/&]|\sand\s|\splus\s").ok());
    match SEP.as_ref() {
        Some(sep) => sep.split(raw).map(str::to_string).collect(),
        None => vec![raw.to_string()],
    }
}

/// A scenario's technique text → the capabilities its faults need.
pub fn from_technique(text: &str) -> Vec<Capability> {
    let mut out: Vec<Capability> = Vec::new();
    for (re, caps) in TECHNIQUES.iter() {
        if re.is_match(text) {
            for cap in caps.iter() {
                if !out.contains(cap) {
                    out.push(cap.clone());
                }
            }
        }
    }
    out
}
