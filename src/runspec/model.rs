//! The run spec: how each scenario / arm of a plan is executed (the plan says what).
//! See `references/run-spec.md` for the format in prose.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use crate::duration::Dur;
// Each nemesis kind's spec types are its module's own; the run spec names them here.
pub use crate::nemesis::command::CommandFaultSpec;
pub use crate::nemesis::docker::{DockerAction, DockerFaultSpec, DockerTls};
pub use crate::nemesis::net::{Chain, NetFaultSpec, NetRule, PORT_ALLOWED, PortSpec};
pub use crate::nemesis::process::{ProcessFaultSpec, SignalName, TargetSpec};
pub use crate::nemesis::proxy::{ProxyFaultSpec, ToxicSpec};
pub use crate::nemesis::signal::{CounterSignal, HistorySignal, HttpSignal, LogSignal, PromSignal};

/// A sidecar file `<plan>.run.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpecFile {
    pub version: u32,
    /// Values substituted for `${name}` in commands.
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
    /// Hosts services, steps and faults may run on (`node: NAME`); `${node:NAME}` is
    /// the node's address. See `references/nodes.md`.
    #[serde(default)]
    pub nodes: BTreeMap<String, Spanned<crate::host::NodeSpec>>,
    pub scenarios: BTreeMap<String, Spanned<Binding>>,
    /// Capabilities the bindings need beyond the plan's §6b rows.
    #[serde(default)]
    pub requires: Vec<Spanned<Requirement>>,
    /// `netns`: the whole run in a network namespace faultline makes and deletes.
    #[serde(default)]
    pub isolate: Option<Spanned<Isolate>>,
}

/// Where the run's network is (`isolate:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolate {
    /// The network faultline was started in (the default).
    None,
    /// A network namespace of the run's own: loopback only, made before anything
    /// starts and deleted on every way out (`references/run-spec.md`, "isolate").
    Netns,
}

/// One capability the run needs, and how it may be obtained when missing.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// Free text, normalised like a §6b row ("tc/netem", "Go 1.21+", "binary:tree").
    pub need: String,
    /// Scenario / arm ids that cannot run without it.
    #[serde(default)]
    pub scenarios: Vec<String>,
    /// Variable set to what satisfies the need (the binary's path, or the operator's
    /// substitute), so the commands that use it change when it is substituted.
    pub var: Option<String>,
    /// The one system package that provides it (installed only after approval).
    pub package: Option<String>,
    /// A file faultline may place in the session-local `bin/` (after approval).
    pub local_install: Option<LocalInstall>,
}

/// Copy `from` to `<session>/bin/<name>`: a low-blast-radius install.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LocalInstall {
    pub from: String,
    pub name: String,
}

/// How one scenario (or arm) runs.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Binding {
    /// Steps run before the cluster starts (data directories, generated configs);
    /// one that fails ends the seed like a failed precondition.
    #[serde(default)]
    pub before: Vec<Check>,
    #[serde(default)]
    pub cluster: Option<Cluster>,
    /// Checks that must pass before the workload starts (observability live, baseline
    /// captured, fault plane responsive …).
    #[serde(default)]
    pub preconditions: Vec<Check>,
    pub workload: Option<Step>,
    #[serde(default)]
    pub faults: Faults,
    #[serde(default)]
    pub quiesce: Option<Quiesce>,
    #[serde(default)]
    pub history: Option<HistorySpec>,
    #[serde(default)]
    pub checker: Option<CheckerSpec>,
    /// More checkers judging the same history (a liveness check beside a safety
    /// one); the oracle is their conjunction.
    #[serde(default)]
    pub checkers: Vec<CheckerSpec>,
    #[serde(default)]
    pub tiers: BTreeMap<crate::verdict::Tier, TierBudget>,
    /// Per-surface arms, keyed by the arm's suffix (`api` for `S5/api`).
    #[serde(default)]
    pub arms: BTreeMap<String, Binding>,
    /// Audit items faultline cannot measure, vouched for by the spec's author.
    #[serde(default)]
    pub declare: BTreeMap<String, String>,
    /// Steps run after the services stopped, whatever happened before (journaled; a
    /// failure does not change the verdict).
    #[serde(default)]
    pub teardown: Vec<Check>,
    /// Most a seed may leave under its artifacts directory (default 1 GiB); beyond
    /// it the largest entries are removed, never the history or the final state.
    #[serde(default)]
    pub artifacts_cap: Option<bytesize::ByteSize>,
    /// An embedded block's share of the run-wide `nodes:` (a sidecar declares them at
    /// its top level, where this is refused).
    #[serde(default)]
    pub nodes: BTreeMap<String, Spanned<crate::host::NodeSpec>>,
    /// An embedded block's run-wide `isolate:` (a sidecar's is at its top level).
    #[serde(default)]
    pub isolate: Option<Spanned<Isolate>>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Cluster {
    #[serde(default)]
    pub services: Vec<Service>,
    /// Cluster up and healthy: retried until it exits 0 or its deadline expires.
    pub health: Option<Step>,
}

/// A long-running process faultline starts, owns (by process group) and stops.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Service {
    pub name: String,
    pub run: String,
    /// Start it under libfaketime with an (initially empty) control file, so a `clock`
    /// fault can move its clock at runtime.
    #[serde(default)]
    pub faketime: bool,
    /// Run it as this Unix user (name or uid): per-member users are how one host tells
    /// its members' traffic apart (`net` rules with `uid_owner: ${<name>_uid}`).
    pub user: Option<String>,
    /// The node it runs on (`nodes:`); this machine when absent.
    pub node: Option<String>,
}

/// A command with its deadline; long ones declare an expected duration and a status
/// command that is pulled periodically.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub run: String,
    pub deadline: Option<Dur>,
    pub expected_duration: Option<Dur>,
    pub status: Option<String>,
    pub status_every: Option<Dur>,
    /// The node it runs on (`nodes:`); this machine when absent.
    pub node: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub name: String,
    pub run: String,
    pub deadline: Option<Dur>,
    /// The node it runs on (`nodes:`); this machine when absent.
    pub node: Option<String>,
}

/// One nemesis step of the fault schedule: exactly one nemesis kind, named by its key
/// (`process`, `command`, `net`, `disk`, `clock`, `proxy`, `docker`; `crate::nemesis::spec`
/// lists them).
#[derive(Debug, Clone, Serialize)]
pub struct FaultStep {
    pub id: String,
    /// Start this long after the workload starts, or after the `on` event was seen.
    pub after: Dur,
    /// Start only once this event is observed (after the workload started; for a
    /// repetition, after the previous heal). Never seen within its `within`: the
    /// fault is not injected and the journal says why.
    pub on: Option<Trigger>,
    /// How long the fault stays before it is healed.
    pub duration: Option<Dur>,
    /// Inject, prove and heal this many times (default once).
    pub repeat: Option<u32>,
    /// Without `on`: time between a repetition's heal and the next injection.
    pub gap: Option<Dur>,
    /// The one nemesis, under its kind's key.
    #[serde(flatten)]
    pub nemesis: crate::nemesis::NemesisSpec,
    /// Declared landing signals; each must be observed inside the fault window.
    pub landing: Vec<LandingSpec>,
    /// The toxic that stands in for this step when the operator substitutes faultline's
    /// TCP fault proxy for a capability the step needs and the machine lacks (netem).
    /// Used only after that answer, never swapped in silently.
    pub substitute_proxy: Option<ProxyFaultSpec>,
}

/// The keys of a fault step besides its nemesis kind's.
const STEP_FIELDS: [&str; 8] = [
    "id",
    "after",
    "on",
    "duration",
    "repeat",
    "gap",
    "landing",
    "substitute_proxy",
];

/// Every key a fault step may have, for the error naming an unknown one.
static STEP_KEYS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    let kinds = crate::nemesis::Kind::ALL.iter().map(|k| k.as_str());
    STEP_FIELDS.iter().copied().chain(kinds).collect()
});

/// A binding's fault steps, and the steps refused while reading (naming no nemesis
/// kind or several), kept so `load` reports them with the spec's other problems.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub struct Faults {
    pub steps: Vec<Spanned<FaultStep>>,
    #[serde(skip)]
    pub refused: Vec<Spanned<RefusedStep>>,
}

/// A fault step that names no nemesis kind, or several.
#[derive(Debug, Clone, Default)]
pub struct RefusedStep {
    pub id: Option<String>,
    /// The kinds it names, in the order written.
    pub kinds: Vec<crate::nemesis::Kind>,
}

impl std::ops::Deref for Faults {
    type Target = Vec<Spanned<FaultStep>>;
    fn deref(&self) -> &Self::Target {
        &self.steps
    }
}

impl std::ops::DerefMut for Faults {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.steps
    }
}

impl<'a> IntoIterator for &'a Faults {
    type Item = &'a Spanned<FaultStep>;
    type IntoIter = std::slice::Iter<'a, Spanned<FaultStep>>;
    fn into_iter(self) -> Self::IntoIter {
        self.steps.iter()
    }
}

impl<'a> IntoIterator for &'a mut Faults {
    type Item = &'a mut Spanned<FaultStep>;
    type IntoIter = std::slice::IterMut<'a, Spanned<FaultStep>>;
    fn into_iter(self) -> Self::IntoIter {
        self.steps.iter_mut()
    }
}

impl FromIterator<Spanned<FaultStep>> for Faults {
    fn from_iter<I: IntoIterator<Item = Spanned<FaultStep>>>(iter: I) -> Self {
        Faults {
            steps: iter.into_iter().collect(),
            refused: Vec::new(),
        }
    }
}

impl<'de> Deserialize<'de> for Faults {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut faults = Faults::default();
        for item in Vec::<Spanned<Lenient>>::deserialize(d)? {
            let (referenced, defined) = (item.referenced, item.defined);
            match item.value {
                Lenient::Step(value) => faults.steps.push(Spanned {
                    value: *value,
                    referenced,
                    defined,
                }),
                Lenient::Refused(value) => faults.refused.push(Spanned {
                    value,
                    referenced,
                    defined,
                }),
            }
        }
        Ok(faults)
    }
}

/// A fault step as read in a list of them: one naming no kind or several is kept
/// aside rather than ending the read, so every problem of the spec is reported at once.
enum Lenient {
    Step(Box<FaultStep>),
    Refused(RefusedStep),
}

impl<'de> Deserialize<'de> for Lenient {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(StepVisitor { strict: false })
    }
}

/// A fault step read on its own refuses one naming no kind or several at once.
impl<'de> Deserialize<'de> for FaultStep {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match d.deserialize_map(StepVisitor { strict: true })? {
            Lenient::Step(step) => Ok(*step),
            // The strict visitor refuses with an error before it gets here.
            Lenient::Refused(refused) => Err(serde::de::Error::custom(refused.seen())),
        }
    }
}

impl RefusedStep {
    /// The kinds it names: "none", or "`disk` and `process`".
    fn kinds_named(&self) -> String {
        let kinds: Vec<String> = self
            .kinds
            .iter()
            .map(|k| format!("`{}`", k.as_str()))
            .collect();
        match kinds.as_slice() {
            [] => "none".into(),
            _ => kinds.join(" and "),
        }
    }

    /// The step and the kinds it names: "fault `x` naming `disk` and `process`".
    fn seen(&self) -> String {
        format!("{} naming {}", named(&self.id), self.kinds_named())
    }

    /// Why it is refused, for scenario (or arm) `of`: what it names and what is allowed.
    pub fn describe(&self, of: &str) -> String {
        format!(
            "{} of {of} names {}; it needs {}",
            named(&self.id),
            self.kinds_named(),
            kinds_allowed()
        )
    }
}

/// Every kind's key, joined by `|`: the field a refused step's problem is about.
pub fn kind_keys() -> String {
    let kinds: Vec<&str> = crate::nemesis::Kind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect();
    kinds.join("|")
}

struct StepVisitor {
    /// Refuse a step naming no kind or several with an error, rather than keep it aside.
    strict: bool,
}

/// `id` for a message about a step, or what stands for it before it is read.
fn named(id: &Option<String>) -> String {
    id.as_ref()
        .map_or("a fault without `id`".to_string(), |id| {
            format!("fault `{id}`")
        })
}

fn kinds_allowed() -> String {
    let kinds: Vec<String> = crate::nemesis::Kind::ALL
        .iter()
        .map(|k| format!("`{}`", k.as_str()))
        .collect();
    format!("exactly one nemesis kind of {}", kinds.join(", "))
}

impl<'de> serde::de::Visitor<'de> for StepVisitor {
    type Value = Lenient;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a fault step (`id`, one nemesis kind, its schedule and landing)")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Lenient, A::Error> {
        use serde::de::{Error, Unexpected};
        let mut id: Option<String> = None;
        let mut after: Option<Dur> = None;
        let mut on = None;
        let mut duration = None;
        let mut repeat = None;
        let mut gap = None;
        let mut landing: Option<Vec<LandingSpec>> = None;
        let mut substitute_proxy = None;
        let mut nemeses: Vec<crate::nemesis::NemesisSpec> = Vec::new();
        fn once<T, E: Error>(slot: &mut Option<T>, key: &'static str, value: T) -> Result<(), E> {
            match slot.replace(value) {
                Some(_) => Err(E::duplicate_field(key)),
                None => Ok(()),
            }
        }
        let refusal = |id: &Option<String>, kinds: Vec<crate::nemesis::Kind>| {
            let refused = RefusedStep {
                id: id.clone(),
                kinds,
            };
            A::Error::invalid_value(
                Unexpected::Other(&refused.seen()),
                &kinds_allowed().as_str(),
            )
        };
        // serde-saphyr locates an error at the key being read: the one for a step
        // naming no kind is made while at `id`, so it points at the step.
        let mut none_error = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "id" => {
                    once(&mut id, "id", map.next_value()?)?;
                    if self.strict {
                        none_error = Some(refusal(&id, Vec::new()));
                    }
                }
                "after" => once(&mut after, "after", map.next_value()?)?,
                "on" => once(&mut on, "on", map.next_value::<Option<Trigger>>()?)?,
                "duration" => once(&mut duration, "duration", map.next_value::<Option<Dur>>()?)?,
                "repeat" => once(&mut repeat, "repeat", map.next_value::<Option<u32>>()?)?,
                "gap" => once(&mut gap, "gap", map.next_value::<Option<Dur>>()?)?,
                "landing" => once(&mut landing, "landing", map.next_value()?)?,
                "substitute_proxy" => once(
                    &mut substitute_proxy,
                    "substitute_proxy",
                    map.next_value::<Option<ProxyFaultSpec>>()?,
                )?,
                other => match crate::nemesis::NemesisSpec::next_value(other, &mut map)? {
                    Some(spec) => {
                        nemeses.push(spec);
                        if self.strict && nemeses.len() > 1 {
                            let kinds = nemeses.iter().map(|n| n.kind()).collect();
                            return Err(refusal(&id, kinds));
                        }
                    }
                    None => return Err(A::Error::unknown_field(other, STEP_KEYS.as_slice())),
                },
            }
        }
        if nemeses.len() != 1 {
            if self.strict {
                return Err(none_error.unwrap_or_else(|| refusal(&id, Vec::new())));
            }
            let kinds = nemeses.iter().map(|n| n.kind()).collect();
            return Ok(Lenient::Refused(RefusedStep { id, kinds }));
        }
        let Some(nemesis) = nemeses.pop() else {
            return Err(refusal(&id, Vec::new()));
        };
        Ok(Lenient::Step(Box::new(FaultStep {
            id: id.ok_or_else(|| A::Error::missing_field("id"))?,
            after: after.unwrap_or_default(),
            on: on.flatten(),
            duration: duration.flatten(),
            repeat: repeat.flatten(),
            gap: gap.flatten(),
            nemesis,
            landing: landing.unwrap_or_default(),
            substitute_proxy: substitute_proxy.flatten(),
        })))
    }
}

impl Binding {
    /// Every checker of this binding: `checker`, then the `checkers` list.
    pub fn checkers(&self) -> Vec<&CheckerSpec> {
        self.checker.iter().chain(&self.checkers).collect()
    }

    /// Whether any fault step (arms included) offers a proxy stand-in.
    pub fn offers_proxy(&self) -> bool {
        self.faults
            .iter()
            .any(|f| f.value.substitute_proxy.is_some())
            || self.arms.values().any(Binding::offers_proxy)
    }

    /// This binding with every step that offers a proxy stand-in replaced by it.
    pub fn proxy_substituted(&self) -> Binding {
        let mut binding = self.clone();
        for fault in &mut binding.faults {
            if let Some(proxy) = fault.value.substitute_proxy.take() {
                fault.value.nemesis = crate::nemesis::NemesisSpec::Proxy(proxy);
            }
        }
        for arm in binding.arms.values_mut() {
            *arm = arm.proxy_substituted();
        }
        binding
    }
}

impl FaultStep {
    /// How many injections this step schedules.
    pub fn injections(&self) -> usize {
        self.repeat.map_or(1, |n| n as usize)
    }

    /// The nemesis kind this step names.
    pub fn kind(&self) -> crate::nemesis::Kind {
        self.nemesis.kind()
    }
}

/// Which side of the fault a signal comes from (policy §8 wants one of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Injector,
    Victim,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LandingSpec {
    pub side: Side,
    /// A pattern appearing in a service's log (or any file) inside the window.
    pub log: Option<LogSignal>,
    /// A number a command prints rising inside the window (e.g. a drop counter).
    pub counter: Option<CounterSignal>,
    /// A field of an HTTP JSON endpoint (a node's status page).
    pub http: Option<HttpSignal>,
    /// A Prometheus metric rising inside the window.
    pub prometheus: Option<PromSignal>,
    /// The history: an op recorded as indeterminate (`info`) or failed inside the window.
    pub history: Option<HistorySignal>,
    /// How long to wait for the signal after injection.
    pub within: Option<Dur>,
}

impl LandingSpec {
    pub fn signals(&self) -> Vec<SignalRef<'_>> {
        signal_refs(
            &self.log,
            &self.counter,
            &self.http,
            &self.prometheus,
            &self.history,
        )
    }
}

/// The event a fault waits for before it starts: one signal, like a landing signal.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Trigger {
    pub log: Option<LogSignal>,
    pub counter: Option<CounterSignal>,
    pub http: Option<HttpSignal>,
    pub prometheus: Option<PromSignal>,
    pub history: Option<HistorySignal>,
    /// How long to wait for it (default: the workload's deadline).
    pub within: Option<Dur>,
}

impl Trigger {
    pub fn signals(&self) -> Vec<SignalRef<'_>> {
        signal_refs(
            &self.log,
            &self.counter,
            &self.http,
            &self.prometheus,
            &self.history,
        )
    }
}

/// One signal of a landing entry or trigger, whichever field named it.
#[derive(Debug, Clone, Copy)]
pub enum SignalRef<'a> {
    Log(&'a LogSignal),
    Counter(&'a CounterSignal),
    Http(&'a HttpSignal),
    Prometheus(&'a PromSignal),
    History(&'a HistorySignal),
}

fn signal_refs<'a>(
    log: &'a Option<LogSignal>,
    counter: &'a Option<CounterSignal>,
    http: &'a Option<HttpSignal>,
    prometheus: &'a Option<PromSignal>,
    history: &'a Option<HistorySignal>,
) -> Vec<SignalRef<'a>> {
    [
        log.as_ref().map(SignalRef::Log),
        counter.as_ref().map(SignalRef::Counter),
        http.as_ref().map(SignalRef::Http),
        prometheus.as_ref().map(SignalRef::Prometheus),
        history.as_ref().map(SignalRef::History),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Quiesce {
    /// Exits 0 once the system is quiet (no in-flight work, replicas converged).
    pub run: String,
    pub timeout: Dur,
    pub interval: Option<Dur>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HistoryFormat {
    Jsonl,
    Edn,
    Porcupine,
    /// One JSON object per transaction (references/checkers.md).
    #[serde(rename = "txn-jsonl")]
    TxnJsonl,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySpec {
    pub path: String,
    pub format: HistoryFormat,
    /// JSONL only: the reader's field → the name the recorder gives it
    /// (`process: process_id`), for a recorder that cannot be changed.
    #[serde(default)]
    pub fields: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CheckerSpec {
    /// A built-in checker name, e.g. `no-lost-ack`.
    pub builtin: Option<String>,
    /// An external command printing the checker JSON result on its last line.
    pub external: Option<String>,
    /// Command writing the final-state dump the checker compares against.
    pub final_state: Option<String>,
}

/// A budget tier as numbers.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TierBudget {
    pub duration: Dur,
    #[serde(default = "one")]
    pub seeds: u32,
    #[serde(default)]
    pub faults: u32,
}

fn one() -> u32 {
    1
}
