//! Role classification, table-driven: one table of name words (target, recipe,
//! script and folder names) and one of text patterns (recipe bodies, script comments,
//! CI lines). Matching is case-insensitive with word boundaries; `-`, `_`, `.` and `/`
//! separate words in names. Roles are tried in table order, so the first one wins
//! (`chaos-partition` is Chaos, `cluster-down` is ClusterDown, not ClusterUp).

use std::sync::LazyLock;

use regex::Regex;

use super::Role::{self, *};

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
            "loadgen",
            "loadtest",
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
        &[
            "metrics",
            "grafana",
            "prometheus",
            "logs",
            "trace",
            "tracing",
        ],
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

/// Text patterns, in the same role priority as [`NAME_WORDS`]: (role, label, tool, regex).
const TEXT: &[Pattern] = &[
    p(Chaos, "iptables", true, r"\b(?:ip6?tables|nft)\b"),
    p(Chaos, "tc", true, r#"(?:^|[\s;&|('"/])tc\s"#),
    p(Chaos, "netem", true, r"\bnetem\b"),
    p(Chaos, "toxiproxy", true, r"\btoxiproxy"),
    p(Chaos, "pumba", true, r"\bpumba\b"),
    p(Chaos, "blockade", true, r"\bblockade\b"),
    p(Chaos, "faketime", true, r"\b(?:lib)?faketime\b"),
    p(Chaos, "dmsetup", true, r"\bdmsetup\b"),
    p(
        Chaos,
        "kill",
        true,
        r"\b(?:kill|pkill|killall)\s+-(?:9|kill|stop|s\s*kill|s\s*stop)\b",
    ),
    p(Chaos, "chaos", false, r"\bchaos"),
    p(Chaos, "nemesis", false, r"\bnemes[ie]s\b"),
    p(
        ClusterDown,
        "compose down",
        true,
        r"\bdocker[ -]compose\b[^;&|\n]*\sdown\b",
    ),
    p(ClusterDown, "kubectl delete", true, r"\bkubectl\s+delete\b"),
    p(
        ClusterDown,
        "kind delete",
        true,
        r"\bkind\s+delete\s+cluster\b",
    ),
    p(Workload, "jepsen", true, r"\bjepsen\b"),
    p(Workload, "wrk", true, r"\bwrk2?\s"),
    p(Workload, "k6", true, r"\bk6\s+run\b"),
    p(Workload, "ycsb", true, r"\bycsb\b"),
    p(Workload, "stress-ng", true, r"\bstress-ng\b"),
    p(Smoke, "smoke", false, r"\b(?:smoke|sanity|e2e)\b"),
    p(
        Observability,
        "prometheus",
        false,
        r"\b(?:prometheus|grafana|jaeger|otel)\b",
    ),
    p(
        ClusterUp,
        "compose up",
        true,
        r"\bdocker[ -]compose\b[^;&|\n]*\sup\b",
    ),
    p(ClusterUp, "kubectl apply", true, r"\bkubectl\s+apply\b"),
    p(
        ClusterUp,
        "helm install",
        true,
        r"\bhelm\s+(?:install|upgrade)\b",
    ),
    p(
        ClusterUp,
        "kind create",
        true,
        r"\bkind\s+create\s+cluster\b",
    ),
];

const fn p(role: Role, label: &'static str, tool: bool, re: &'static str) -> Pattern {
    Pattern {
        role,
        label,
        tool,
        re,
    }
}

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
            let re = format!(
                "(?:^|[^a-z0-9])(?:{})(?:[^a-z0-9]|$)",
                alternatives.join("|")
            );
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
