//! Role classification, table-driven: one table of name words (target, recipe,
//! script and folder names) and one of text patterns (recipe bodies, script comments,
//! CI lines). Matching is case-insensitive with word boundaries; `-`, `_`, `.` and `/`
//! separate words in names. Roles are tried in table order, so the first one wins
//! (`chaos-partition` is Chaos, `cluster-down` is ClusterDown, not ClusterUp).

use std::sync::LazyLock;

use regex::Regex;

use super::Role;

/// Name words per role, in priority order. A multi-word entry (`clean-cluster`)
/// matches its words joined by any separator.
const NAME_WORDS: &[(Role, &[&str])] = &[
    (
        Role::Chaos,
        &[
            "chaos",
            "nemesis",
            "fault",
            "faults",
            "partition",
            "kill",
            "netem",
            "toxiproxy",
            "pumba",
            "iptables",
        ],
    ),
    (
        Role::ClusterDown,
        &["down", "stop", "teardown", "clean-cluster", "destroy"],
    ),
    (
        Role::Workload,
        &[
            "load",
            "bench",
            "benchmark",
            "workload",
            "stress",
            "jepsen",
            "soak",
        ],
    ),
    (Role::Smoke, &["smoke", "sanity", "e2e", "integration"]),
    (
        Role::Observability,
        &["metrics", "grafana", "prometheus", "logs", "trace", "tracing"],
    ),
    (
        Role::ClusterUp,
        &[
            "up",
            "start",
            "cluster",
            "deploy",
            "compose-up",
            "spawn",
            "launch",
        ],
    ),
];

/// A text pattern: the role it suggests, a label, and whether it names a concrete
/// tool (tools are what [`super::reimplemented`] compares).
struct Pattern {
    role: Role,
    label: &'static str,
    tool: bool,
    re: &'static str,
}

/// Text patterns, in the same role priority as [`NAME_WORDS`].
const TEXT: &[Pattern] = &[
    Pattern { role: Role::Chaos, label: "iptables", tool: true, re: r"\b(?:ip6?tables|nft)\b" },
    Pattern { role: Role::Chaos, label: "tc", tool: true, re: r#"(?:^|[\s;&|('"/])tc\s"# },
    Pattern { role: Role::Chaos, label: "netem", tool: true, re: r"\bnetem\b" },
    Pattern { role: Role::Chaos, label: "toxiproxy", tool: true, re: r"\btoxiproxy" },
    Pattern { role: Role::Chaos, label: "pumba", tool: true, re: r"\bpumba\b" },
    Pattern { role: Role::Chaos, label: "blockade", tool: true, re: r"\bblockade\b" },
    Pattern { role: Role::Chaos, label: "faketime", tool: true, re: r"\b(?:lib)?faketime\b" },
    Pattern { role: Role::Chaos, label: "dmsetup", tool: true, re: r"\bdmsetup\b" },
    Pattern { role: Role::Chaos, label: "kill", tool: true, re: r"\b(?:kill|pkill|killall)\s+-(?:9|kill|stop|s\s*kill|s\s*stop)\b" },
    Pattern { role: Role::Chaos, label: "chaos", tool: false, re: r"\bchaos" },
    Pattern { role: Role::Chaos, label: "nemesis", tool: false, re: r"\bnemes[ie]s\b" },
    Pattern { role: Role::ClusterDown, label: "compose down", tool: true, re: r"\bdocker[ -]compose\b[^;&|\n]*\sdown\b" },
    Pattern { role: Role::ClusterDown, label: "kubectl delete", tool: true, re: r"\bkubectl\s+delete\b" },
    Pattern { role: Role::ClusterDown, label: "kind delete", tool: true, re: r"\bkind\s+delete\s+cluster\b" },
    Pattern { role: Role::Workload, label: "jepsen", tool: true, re: r"\bjepsen\b" },
    Pattern { role: Role::Workload, label: "wrk", tool: true, re: r"\bwrk2?\s" },
    Pattern { role: Role::Workload, label: "k6", tool: true, re: r"\bk6\s+run\b" },
    Pattern { role: Role::Workload, label: "ycsb", tool: true, re: r"\bycsb\b" },
    Pattern { role: Role::Workload, label: "stress-ng", tool: true, re: r"\bstress-ng\b" },
    Pattern { role: Role::Smoke, label: "smoke", tool: false, re: r"\b(?:smoke|sanity|e2e)\b" },
    Pattern { role: Role::Observability, label: "prometheus", tool: false, re: r"\b(?:prometheus|grafana|jaeger|otel)\b" },
    Pattern { role: Role::ClusterUp, label: "compose up", tool: true, re: r"\bdocker[ -]compose\b[^;&|\n]*\sup\b" },
    Pattern { role: Role::ClusterUp, label: "kubectl apply", tool: true, re: r"\bkubectl\s+apply\b" },
    Pattern { role: Role::ClusterUp, label: "helm install", tool: true, re: r"\bhelm\s+(?:install|upgrade)\b" },
    Pattern { role: Role::ClusterUp, label: "kind create", tool: true, re: r"\bkind\s+create\s+cluster\b" },
];

fn compile(re: &str) -> Regex {
    // The tables above are constants; a typo fails every test at once.
    Regex::new(&format!("(?i){re}")).expect("toolbox classification pattern")
}

static NAMES: LazyLock<Vec<(Role, Regex)>> = LazyLock::new(|| {
    NAME_WORDS
        .iter()
        .map(|(role, words)| {
            let alternatives: Vec<String> = words
                .iter()
                .map(|w| regex::escape(w).replace(r"\-", "[^a-z0-9]+"))
                .collect();
            let re = format!("(?:^|[^a-z0-9])(?:{})(?:[^a-z0-9]|$)", alternatives.join("|"));
            (*role, compile(&re))
        })
        .collect()
});

static TEXTS: LazyLock<Vec<(&'static Pattern, Regex)>> =
    LazyLock::new(|| TEXT.iter().map(|p| (p, compile(p.re))).collect());

static COMPOSE: LazyLock<Regex> = LazyLock::new(|| compile(r"\bdocker[ -]compose\b"));

/// The role a name suggests (`cluster-up`, `partition.sh`, `tests/chaos`).
pub(crate) fn by_name(name: &str) -> Option<Role> {
    let name = name.to_lowercase();
    NAMES
        .iter()
        .find(|(_, re)| re.is_match(&name))
        .map(|(role, _)| *role)
}

/// The role a line of recipe, script comment or CI definition suggests.
pub(crate) fn by_text(text: &str) -> Option<Role> {
    TEXTS
        .iter()
        .find(|(_, re)| re.is_match(text))
        .map(|(p, _)| p.role)
}

/// Labels of the concrete cluster / fault / workload tools a text invokes.
pub(crate) fn tools(text: &str) -> Vec<String> {
    TEXTS
        .iter()
        .filter(|(p, re)| p.tool && re.is_match(text))
        .map(|(p, _)| p.label.to_string())
        .collect()
}

/// A CI line that wires cluster or fault tooling: its role (Chaos for fault tools,
/// ClusterUp / ClusterDown for compose up / down, Other for any other compose use).
pub(crate) fn ci_mention(line: &str) -> Option<Role> {
    TEXTS
        .iter()
        .find(|(p, re)| {
            matches!(p.role, Role::Chaos | Role::ClusterUp | Role::ClusterDown) && re.is_match(line)
        })
        .map(|(p, _)| p.role)
        .or_else(|| COMPOSE.is_match(line).then_some(Role::Other))
}
