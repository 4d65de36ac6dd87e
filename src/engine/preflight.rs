//! Before any scenario: toolbox discovery, the capability checklist the operator
//! answers FIRST, then the probes, reconciliation, approved installs, and what the
//! run does about whatever is still missing (method §2 steps 2–3, policy §8).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::iteration::EngineError;
use super::privileged::{self, Approval};
use crate::capability::{
    Blast, Capability, InstallPlan, MatrixRow, Need, NeedSource, PackageManager, Probe, ProbeEnv,
    install_plan, normalise, probe,
};
use crate::exec::{self, CommandSpec, Outcome};
use crate::plan::Plan;
use crate::runspec::RunSpec;
use crate::runspec::vars::Vars;
use crate::session::event::{self, Event};
use crate::session::journal::{Journal, JournalError, Scope};
use crate::session::operator::{Answer, Choice, Operator, Question, QuestionKind, Unanswered};
use crate::toolbox::{self, Toolbox};

const INSTALL_DEADLINE: Duration = Duration::from_secs(600);
use crate::capability::{WAIT_EVERY, WAIT_LIMIT, interval_words};

/// `every 1 s (at most 10 min)`: the re-probing a `wait` starts, as the question says
/// it (the status line says the same from the `capability-wait` record).
fn wait_words() -> String {
    format!(
        "every {} (at most {})",
        interval_words(event::millis(WAIT_EVERY)),
        interval_words(event::millis(WAIT_LIMIT))
    )
}

/// What the preflight settled for the rest of the session.
#[derive(Debug, Default, Clone)]
pub struct Preflight {
    /// Variables set from satisfied or substituted needs (`${fl_client}` …).
    pub vars: BTreeMap<String, String>,
    /// Scenario / arm id → why it cannot run here (INCONCLUSIVE-env).
    pub blocked: BTreeMap<String, String>,
    /// Scenario id → what was substituted (a degraded approximation).
    pub degraded: BTreeMap<String, String>,
    pub toolbox: Option<Toolbox>,
    /// Scenario id → the discovered items its bindings use.
    pub used: BTreeMap<String, Vec<String>>,
    pub matrix: Vec<MatrixRow>,
    /// Needs whose question the operator deferred until a scenario needing them is
    /// reached.
    pub deferred: Vec<Item>,
    /// Scenario ids whose faults run through faultline's TCP fault proxy in place of a
    /// missing capability, because the operator said so.
    pub proxied: std::collections::BTreeSet<String>,
    /// Scenario / arm id → the recorded approval of its privileged fault actions.
    pub approvals: BTreeMap<String, Approval>,
    /// The run spec's nodes, connected.
    pub hosts: crate::host::Hosts,
}

/// Where the preflight runs.
pub struct PreflightCtx<'a> {
    pub plan: &'a Plan,
    pub spec: &'a RunSpec,
    pub sut_dir: &'a Path,
    pub session_dir: &'a Path,
    pub base_vars: &'a BTreeMap<String, String>,
    /// `--only`: scenarios outside it are not asked about their privileged actions.
    pub only: Option<&'a [String]>,
    pub cancel: CancellationToken,
}

#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Unanswered(#[from] Unanswered),
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A node's host key is not trusted: nothing may start.
    #[error(transparent)]
    HostKey(#[from] crate::host::ssh::ConnectError),
}

/// One need with everything the run spec says about obtaining it.
#[derive(Debug, Clone)]
pub struct Item {
    need: Need,
    /// Question key: `binary:fl-client`, `docker`, or `row-47` when unrecognised.
    key: String,
    var: Option<String>,
    package: Option<String>,
    local_install: Option<(String, String)>,
    answer: String,
    probe: Option<Probe>,
    substitute: Option<String>,
}

/// What the checklist takes for one need; `as probed` only where a probe exists,
/// `defer` only before the run starts.
fn capability_choices(recognised: bool, defer: bool) -> Vec<Choice> {
    let mut out = Vec::new();
    if recognised {
        out.push(Choice::new("as probed", "whatever the probe finds"));
    }
    out.extend([
        Choice::new("have", "it is there; the probe checks").alias("yes"),
        Choice::new("don't have", "its dependents are INCONCLUSIVE-env")
            .alias("dont have")
            .alias("no")
            .alias("missing"),
        Choice::new("skip", "not probed; its dependents are INCONCLUSIVE-env"),
        Choice::new("substitute", "use something else in its place").with_text("<with what>"),
    ]);
    if defer {
        out.push(Choice::new(
            "defer",
            "asked again when the first scenario needing it starts",
        ));
    }
    out
}

/// What a need still missing after the probes takes.
fn missing_choices() -> Vec<Choice> {
    vec![
        Choice::new("proceed", "its dependents are INCONCLUSIVE-env"),
        Choice::new(
            "wait",
            &format!(
                "re-probe {} until it appears; a wait can be taken back",
                wait_words()
            ),
        ),
        Choice::new("substitute", "use something else in its place").with_text("<with what>"),
    ]
}

/// An offered install: approve, decline, or run an edited command.
pub fn install_choices() -> Vec<Choice> {
    let mut out = crate::session::operator::approve_decline("the install");
    out.push(Choice::new("edit", "run this command instead").with_text("<command>"));
    out
}

/// What the operator said about one need.
#[derive(Debug, PartialEq, Eq)]
enum Said {
    /// "as probed": whatever the probe finds (the `--yes` answer).
    AsProbed,
    /// "have": the operator says it is there; the probe checks.
    Have,
    DontHave,
    Skip,
    Substitute(String),
}

fn said(text: &str) -> Said {
    let t = text.trim();
    let lower = t.to_lowercase();
    if let Some(with) = lower.strip_prefix("substitute") {
        let with = t[t.len() - with.len()..]
            .trim()
            .trim_start_matches("with")
            .trim();
        return Said::Substitute(with.to_string());
    }
    match lower.as_str() {
        "skip" => Said::Skip,
        "as probed" | "" => Said::AsProbed,
        "don't have" | "dont have" | "no" | "missing" => Said::DontHave,
        _ => Said::Have,
    }
}

/// `binary:x` / `endpoint:h:p` name those directly; anything else is normalised.
fn recognise(raw: &str) -> Vec<(Capability, Option<semver::Version>)> {
    let trimmed = raw.trim();
    let head = trimmed.split_whitespace().next().unwrap_or_default();
    if let Some(name) = head.strip_prefix("binary:") {
        return vec![(Capability::Binary(name.to_string()), None)];
    }
    if let Some(addr) = head.strip_prefix("endpoint:") {
        return vec![(Capability::Endpoint(addr.to_string()), None)];
    }
    normalise(trimmed)
}

fn key_of(need: &Need) -> String {
    match (&need.capability, &need.source) {
        (Some(cap), _) => cap.to_string(),
        (None, NeedSource::PlanRow { line }) => format!("row-{line}"),
        (None, _) => format!("need-{}", need.raw.len()),
    }
}

/// Every need of the plan and its run spec, merged by capability.
fn needs(plan: &Plan, spec: &RunSpec, toolbox: Option<&Toolbox>) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    let mut add = |need: Need, extra: Option<&crate::runspec::Requirement>| {
        let key = key_of(&need);
        if let Some(existing) = items.iter_mut().find(|i| i.key == key) {
            for s in &need.used_by {
                if !existing.need.used_by.contains(s) {
                    existing.need.used_by.push(s.clone());
                }
            }
            if let Some(r) = extra {
                existing.var = existing.var.take().or(r.var.clone());
                existing.package = existing.package.take().or(r.package.clone());
                existing.local_install = existing.local_install.take().or(r
                    .local_install
                    .as_ref()
                    .map(|l| (l.from.clone(), l.name.clone())));
            }
            return;
        }
        items.push(Item {
            key,
            var: extra.and_then(|r| r.var.clone()),
            package: extra.and_then(|r| r.package.clone()),
            local_install: extra
                .and_then(|r| r.local_install.as_ref())
                .map(|l| (l.from.clone(), l.name.clone())),
            need,
            answer: String::new(),
            probe: None,
            substitute: None,
        });
    };
    for row in plan.requirements.iter().filter(|r| !r.brought_up_by_sut) {
        let recognised = recognise(&row.requirement);
        if recognised.is_empty() {
            for need in Need::from_requirement(row) {
                add(need, None);
            }
            continue;
        }
        for (capability, floor) in recognised {
            let used_by = row
                .used_by
                .split([',', ';'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            add(
                Need {
                    raw: row.requirement.clone(),
                    source: NeedSource::PlanRow { line: row.line },
                    capability: Some(capability),
                    floor: floor
                        .or_else(|| crate::capability::registry::floor_of(&row.version_floor)),
                    used_by,
                },
                None,
            );
        }
    }
    for scenario in &plan.scenarios {
        let Some(technique) = &scenario.technique else {
            continue;
        };
        for capability in crate::capability::from_technique(&technique.text) {
            add(
                Need {
                    raw: format!("{} technique: {}", scenario.id, technique.text),
                    source: NeedSource::Technique {
                        scenario: scenario.id.clone(),
                    },
                    capability: Some(capability),
                    floor: None,
                    used_by: vec![scenario.id.clone()],
                },
                None,
            );
        }
    }
    // Tools the discovered drivers a binding calls rely on (iptables, tc, compose …).
    if let Some(found) = toolbox {
        for (id, (binding, _)) in &spec.bindings {
            for item in toolbox::bindings_using(found, &toolbox::commands_of(binding)) {
                for tool in &item.tools {
                    for (capability, floor) in normalise(tool) {
                        add(
                            Need {
                                raw: format!("{tool} (used by {} {})", item.path, item.name),
                                source: NeedSource::Toolbox {
                                    path: item.path.clone(),
                                },
                                capability: Some(capability),
                                floor,
                                used_by: vec![id.clone()],
                            },
                            None,
                        );
                    }
                }
            }
        }
    }
    for (requirement, _) in &spec.requires {
        for (capability, floor) in recognise(&requirement.need) {
            add(
                Need {
                    raw: requirement.need.clone(),
                    source: NeedSource::RunSpec {
                        scenario: requirement.scenarios.join(", "),
                    },
                    capability: Some(capability),
                    floor,
                    used_by: requirement.scenarios.clone(),
                },
                Some(requirement),
            );
        }
    }
    items
}

struct Run<'a, 'b> {
    ctx: &'b PreflightCtx<'a>,
    journal: &'b mut Journal,
    env: ProbeEnv,
    bin: PathBuf,
}

impl<'a, 'b> Run<'a, 'b> {
    /// Probes and installs see the session's own `bin/` first on their PATH.
    fn new(ctx: &'b PreflightCtx<'a>, journal: &'b mut Journal) -> Run<'a, 'b> {
        let bin = ctx.session_dir.join("bin");
        Run {
            ctx,
            journal,
            env: ProbeEnv {
                path: Some(probe_path(&bin)),
                scratch: ctx.session_dir.join("artifacts"),
            },
            bin,
        }
    }

    fn log(&mut self, event: Event) -> Result<u64, PreflightError> {
        Ok(self.journal.append(Scope::default(), event)?.seq)
    }

    /// Asks a capability question (the checklist, a deferred or missing need).
    async fn ask(
        &mut self,
        operator: &mut dyn Operator,
        id: String,
        prompt: String,
        choices: Vec<Choice>,
        default: &str,
    ) -> Result<String, PreflightError> {
        self.ask_question(
            operator,
            Question {
                id,
                kind: QuestionKind::ConfirmCapability,
                prompt,
                choices,
                default: default.to_string(),
                ..Question::default()
            },
        )
        .await
    }

    /// Asks `question` and journals the answer with who gave it.
    async fn ask_question(
        &mut self,
        operator: &mut dyn Operator,
        question: Question,
    ) -> Result<String, PreflightError> {
        Ok(self.ask_answer(operator, question).await?.text)
    }

    /// [`Run::ask_question`], keeping who answered.
    async fn ask_answer(
        &mut self,
        operator: &mut dyn Operator,
        question: Question,
    ) -> Result<Answer, PreflightError> {
        let answer = crate::session::operator::answer(operator, &question).await?;
        self.log(crate::session::operator::answered(&question, &answer))?;
        Ok(answer)
    }

    async fn probe_item(
        &mut self,
        item: &Item,
        capability: &Capability,
    ) -> Result<Probe, PreflightError> {
        let seen = probe(capability, item.need.floor.as_ref(), &self.env).await;
        self.log(Event::Capability(event::CapabilitySeen {
            need: item.need.raw.clone(),
            capability: capability.to_string(),
            present: seen.present,
            version: seen.version.clone(),
            meets_floor: seen.meets_floor,
            command: seen.command.clone(),
            saw: seen.saw.clone(),
            used_by: item.need.used_by.clone(),
        }))?;
        Ok(seen)
    }

    /// The install the operator may approve: a file placed in the session's own
    /// `bin/`, the run spec's named package, or the registry's package for it.
    fn offer(
        &mut self,
        item: &Item,
        capability: &Capability,
    ) -> Result<Option<Offer>, PreflightError> {
        if let Some((from, name)) = &item.local_install {
            let mut vars = Vars::default();
            for (k, v) in self.ctx.base_vars.iter().chain(self.ctx.spec.vars.iter()) {
                vars.set(k, v.clone());
            }
            let from = vars.expand(from).map_err(|source| EngineError::Var {
                id: item.key.clone(),
                source,
            })?;
            return Ok(Some(Offer::Local {
                from: PathBuf::from(from),
                to: self.bin.join(name),
            }));
        }
        let Some(pm) = PackageManager::detect(&self.env) else {
            return Ok(None);
        };
        if let Some(package) = &item.package {
            let plan = InstallPlan {
                capability: capability.clone(),
                command: pm_command(pm, package),
                package: package.clone(),
                enables: format!("provides {}", item.need.raw),
                blast: Blast::Low,
            };
            return Ok(Some(Offer::Package(plan)));
        }
        Ok(install_plan(capability, pm).map(Offer::Package))
    }

    /// Runs an approved install as a tailed background command.
    async fn install(&mut self, key: &str, offer: &Offer) -> Result<bool, PreflightError> {
        match offer {
            Offer::Local { from, to } => {
                let done = std::fs::create_dir_all(&self.bin)
                    .and_then(|()| std::fs::copy(from, to).map(|_| ()));
                self.log(Event::InstallFinished(event::InstallFinished {
                    capability: key.to_string(),
                    placed: Some(to.display().to_string()),
                    ok: Some(done.is_ok()),
                    error: done.as_ref().err().map(ToString::to_string),
                    ..event::InstallFinished::default()
                }))?;
                Ok(done.is_ok())
            }
            Offer::Package(_) | Offer::Edited(_) => {
                let command = offer.command_line();
                let logs = self.ctx.session_dir.join("logs").join("installs");
                // An edited copy into the session's `bin/` needs it to exist, as the
                // unedited copy does.
                std::fs::create_dir_all(&logs)
                    .and_then(|()| std::fs::create_dir_all(&self.bin))
                    .map_err(|e| EngineError::Io {
                        id: key.to_string(),
                        message: e.to_string(),
                    })?;
                let spec = CommandSpec {
                    name: format!(
                        "install-{}",
                        crate::session::dir::file_stem_for_id(&key.replace(':', "-"))
                    ),
                    command,
                    cwd: self.ctx.session_dir.to_path_buf(),
                    env: self.path_env(),
                };
                let mut running = exec::spawn(&spec, &logs).map_err(|e| EngineError::Io {
                    id: key.to_string(),
                    message: e.to_string(),
                })?;
                self.log(Event::CommandStarted(event::CommandStarted {
                    name: spec.name.clone(),
                    command: spec.command.clone(),
                    pgid: running.pgid,
                    started: exec::start_time(running.pgid),
                    log: running.stderr_log.display().to_string(),
                    node: None,
                }))?;
                let outcome =
                    running
                        .wait(INSTALL_DEADLINE)
                        .await
                        .map_err(|e| EngineError::Io {
                            id: key.to_string(),
                            message: e.to_string(),
                        })?;
                self.log(Event::InstallFinished(event::InstallFinished {
                    capability: key.to_string(),
                    command: Some(spec.command.clone()),
                    outcome: Some(format!("{outcome:?}")),
                    ..event::InstallFinished::default()
                }))?;
                Ok(outcome == Outcome::Exited(0))
            }
        }
    }

    fn path_env(&self) -> Vec<(String, String)> {
        self.env
            .path
            .as_ref()
            .map(|p| vec![("PATH".to_string(), p.to_string_lossy().into_owned())])
            .unwrap_or_default()
    }
}

/// An install faultline may carry out once approved.
enum Offer {
    Local {
        from: PathBuf,
        to: PathBuf,
    },
    Package(InstallPlan),
    /// The operator edited the offered command; it runs as they wrote it.
    Edited(String),
}

impl Offer {
    fn describe(&self) -> String {
        match self {
            Offer::Local { from, to } => format!("copy {} to {}", from.display(), to.display()),
            Offer::Package(plan) => crate::capability::display(plan),
            Offer::Edited(command) => command.clone(),
        }
    }

    /// The offer as one shell command line: what the operator may edit.
    fn command_line(&self) -> String {
        match self {
            Offer::Local { from, to } => shell_words(&[
                "cp".to_string(),
                "--".to_string(),
                from.display().to_string(),
                to.display().to_string(),
            ]),
            Offer::Package(plan) => shell_words(&plan.command),
            Offer::Edited(command) => command.clone(),
        }
    }

    fn low_blast(&self) -> Result<(), String> {
        match self {
            Offer::Local { .. } | Offer::Edited(_) => Ok(()),
            Offer::Package(plan) => match &plan.blast {
                Blast::Low => Ok(()),
                Blast::High(why) => Err(why.clone()),
            },
        }
    }
}

fn pm_command(pm: PackageManager, package: &str) -> Vec<String> {
    let base: &[&str] = match pm {
        PackageManager::AptGet => &["apt-get", "install", "-y"],
        PackageManager::Dnf => &["dnf", "install", "-y"],
        PackageManager::Apk => &["apk", "add"],
        PackageManager::Brew => &["brew", "install"],
    };
    base.iter()
        .map(|s| s.to_string())
        .chain(std::iter::once(package.to_string()))
        .collect()
}

/// argv → one shell command line with each word single-quoted.
/// Words are quoted only where the shell needs it, so the operator reads (and may edit)
/// the command as they would type it; a NUL byte (no shell can quote it) falls back to
/// single quotes and the command then fails visibly.
fn shell_words(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| {
        argv.iter()
            .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// The PATH probes and installs use: the session's own `bin/` first.
fn probe_path(bin: &Path) -> OsString {
    let mut path = OsString::from(bin.as_os_str());
    if let Some(current) = std::env::var_os("PATH") {
        path.push(":");
        path.push(current);
    }
    path
}

/// Runs the preflight: discovery, checklist, probes, installs, decisions.
pub async fn run(
    ctx: &PreflightCtx<'_>,
    journal: &mut Journal,
    operator: &mut dyn Operator,
) -> Result<Preflight, PreflightError> {
    let mut out = Preflight::default();
    let mut run = Run::new(ctx, journal);
    discover(&mut run, &mut out)?;

    // 1. The operator's answers, all of them, before any probe runs.
    let mut items = needs(ctx.plan, ctx.spec, out.toolbox.as_ref());
    for item in &mut items {
        let used = if item.need.used_by.is_empty() {
            "the whole plan".to_string()
        } else {
            item.need.used_by.join(", ")
        };
        let recognised = item.need.capability.is_some();
        let prompt = format!(
            "{} (needed by {used}){}: have / don't have / skip / substitute <with what> / defer",
            item.need.raw,
            if recognised {
                ""
            } else {
                " — unrecognised, confirm by hand"
            }
        );
        item.answer = run
            .ask(
                operator,
                format!("capability.{}", item.key),
                prompt,
                capability_choices(recognised, true),
                if recognised { "as probed" } else { "have" },
            )
            .await?;
    }
    run.log(Event::ChecklistComplete(event::ChecklistComplete {
        needs: items.len(),
    }))?;

    // The nodes, once the operator confirmed the environment: an untrusted host key
    // stops the run here, before any probe or install.
    let nodes = super::nodes::connect(ctx.spec, ctx.base_vars).await?;
    for event in nodes.events {
        run.log(event)?;
    }
    out.vars.extend(nodes.vars);
    out.matrix.extend(nodes.rows);
    out.blocked.extend(nodes.blocked);
    out.hosts = nodes.hosts;

    // 2. Probes, reconciliation, installs, decisions — except what was deferred.
    for mut item in items {
        if item.answer.trim().eq_ignore_ascii_case("defer") {
            run.log(Event::CapabilityDeferred(event::CapabilityDeferred {
                need: item.need.raw.clone(),
                until: item.need.used_by.clone(),
            }))?;
            out.deferred.push(item);
            continue;
        }
        settle(&mut run, operator, &mut item, &mut out).await?;
    }
    run.log(Event::CapabilityMatrix(event::CapabilityMatrix {
        rows: out.matrix.clone(),
    }))?;
    approve_privileged(&mut run, operator, &mut out).await?;
    Ok(out)
}

/// The run spec keys (scenario or arm ids) whose privileged fault actions this run
/// asks about: bound, inside `--only`, and not already INCONCLUSIVE-env.
fn privileged_keys(ctx: &PreflightCtx<'_>, out: &Preflight) -> Vec<(String, Vec<String>)> {
    privileged::by_binding(ctx.spec)
        .into_iter()
        .filter(|(key, _)| {
            let scenario = key.split('/').next().unwrap_or(key);
            let wanted = ctx.only.is_none_or(|only| {
                only.iter().any(|o| {
                    *o == *key || o == scenario || o.split('/').next() == Some(key.as_str())
                })
            });
            wanted && !out.blocked.contains_key(key) && !out.blocked.contains_key(scenario)
        })
        .collect()
}

/// Asks for each scenario's privileged fault actions, after the capabilities; the
/// answer is journaled with who gave it before anything privileged can run, and a
/// declined scenario is INCONCLUSIVE-env without running.
async fn approve_privileged(
    run: &mut Run<'_, '_>,
    operator: &mut dyn Operator,
    out: &mut Preflight,
) -> Result<(), PreflightError> {
    for (key, actions) in privileged_keys(run.ctx, out) {
        let answer = run
            .ask_answer(operator, privileged::question(&key, &actions))
            .await?;
        if answer.text.trim().eq_ignore_ascii_case("approve") {
            let seq = run.log(Event::PrivilegedApproved(event::PrivilegedDecision {
                scenario: key.clone(),
                actions: actions.clone(),
                by: answer.by.clone(),
                who: answer.who.clone(),
            }))?;
            out.approvals.insert(key, Approval { seq });
        } else {
            run.log(Event::PrivilegedDeclined(event::PrivilegedDecision {
                scenario: key.clone(),
                actions: actions.clone(),
                by: answer.by.clone(),
                who: answer.who.clone(),
            }))?;
            out.blocked.insert(
                key,
                format!(
                    "its privileged fault actions were not approved ({}): {}",
                    answer.by,
                    actions.join("; ")
                ),
            );
        }
    }
    Ok(())
}

/// Settles the deferred needs of scenario / arm `id` (of `scenario`) now that it is
/// reached: the question comes up mid-run, then the same probe / install / decision.
pub async fn reached(
    ctx: &PreflightCtx<'_>,
    journal: &mut Journal,
    operator: &mut dyn Operator,
    out: &mut Preflight,
    scenario: &str,
    id: &str,
) -> Result<(), PreflightError> {
    let (due, later): (Vec<Item>, Vec<Item>) = std::mem::take(&mut out.deferred)
        .into_iter()
        .partition(|i| i.need.used_by.iter().any(|u| u == id || u == scenario));
    out.deferred = later;
    if due.is_empty() {
        return Ok(());
    }
    let mut run = Run::new(ctx, journal);
    for mut item in due {
        item.answer = run
            .ask(
                operator,
                format!("deferred.{}", item.key),
                format!(
                    "{} is needed now by {id}: have / don't have / skip / substitute <with what>",
                    item.need.raw
                ),
                capability_choices(true, false),
                "as probed",
            )
            .await?;
        settle(&mut run, operator, &mut item, out).await?;
    }
    run.log(Event::CapabilityMatrix(event::CapabilityMatrix {
        rows: out.matrix.clone(),
    }))?;
    Ok(())
}

fn discover(run: &mut Run<'_, '_>, out: &mut Preflight) -> Result<(), PreflightError> {
    match toolbox::discover(run.ctx.sut_dir) {
        Ok(found) => {
            for item in &found.items {
                run.log(Event::ToolboxItem(json!(item)))?;
            }
            for (id, (binding, _)) in &run.ctx.spec.bindings {
                let commands = toolbox::commands_of(binding);
                let used: Vec<String> = toolbox::bindings_using(&found, &commands)
                    .iter()
                    .map(|i| format!("{} {}", i.path, i.name))
                    .collect();
                if !used.is_empty() {
                    run.log(Event::ToolboxUsed(event::ToolboxUsed {
                        scenario: id.clone(),
                        items: used.clone(),
                    }))?;
                    out.used.insert(id.clone(), used);
                }
            }
            out.toolbox = Some(found);
        }
        Err(e) => {
            run.log(Event::ToolboxError(event::ErrorText {
                error: e.to_string(),
            }))?;
        }
    }
    Ok(())
}

async fn settle(
    run: &mut Run<'_, '_>,
    operator: &mut dyn Operator,
    item: &mut Item,
    out: &mut Preflight,
) -> Result<(), PreflightError> {
    let said_now = said(&item.answer);
    let used_by = item.need.used_by.clone();
    let mut row = MatrixRow {
        requirement: item.need.raw.clone(),
        capability: item.need.capability.as_ref().map(ToString::to_string),
        present: None,
        version: None,
        source: String::new(),
        used_by: used_by.clone(),
        note: String::new(),
    };
    let block = |out: &mut Preflight, reason: String| {
        for id in &used_by {
            out.blocked
                .entry(id.clone())
                .or_insert_with(|| reason.clone());
        }
    };
    let Some(capability) = item.need.capability.clone() else {
        // Nothing to probe: the operator's word is all there is.
        row.source = "unrecognised — confirm by hand".into();
        row.present = Some(matches!(said_now, Said::Have | Said::AsProbed));
        row.note = format!("operator: {}", item.answer);
        if !matches!(said_now, Said::Have | Said::AsProbed) {
            block(
                out,
                format!(
                    "requirement `{}` not available (operator: {})",
                    item.need.raw, item.answer
                ),
            );
        }
        out.matrix.push(row);
        return Ok(());
    };
    if said_now == Said::Skip {
        row.source = "operator".into();
        row.note = "skipped by the operator".into();
        block(
            out,
            format!("capability {capability} skipped by the operator"),
        );
        out.matrix.push(row);
        return Ok(());
    }
    let wants_proxy =
        matches!(&said_now, Said::Substitute(with) if with.eq_ignore_ascii_case("proxy"));
    if let Said::Substitute(with) = &said_now
        && !wants_proxy
    {
        return substitute(run, item, &capability, with.clone(), row, out).await;
    }
    let mut seen = run.probe_item(item, &capability).await?;
    let present = |p: &Probe| p.present && p.meets_floor != Some(false);
    let disagree = match said_now {
        Said::Have => !present(&seen),
        Said::DontHave => present(&seen),
        _ => false,
    };
    if disagree {
        run.log(Event::CapabilityDisagreement(
            event::CapabilityDisagreement {
                capability: capability.to_string(),
                operator: item.answer.clone(),
                probe_present: seen.present,
                resolution: "the probe wins: it looked".into(),
            },
        ))?;
    }
    if !present(&seen) {
        seen = if wants_proxy {
            proxy_stands_in(run, item, &capability, seen, out)?
        } else {
            obtain(run, operator, item, &capability, seen, out).await?
        };
    }
    row.present = Some(present(&seen));
    row.version = seen.version.clone();
    row.source = if said_now == Said::AsProbed {
        "probe"
    } else {
        "operator+probe"
    }
    .into();
    row.note = seen.saw.clone();
    if present(&seen) {
        if let Some(var) = &item.var {
            out.vars
                .insert(var.clone(), resolved(&capability, &run.env));
        }
    } else if !out.blocked.keys().any(|k| used_by.contains(k)) {
        block(
            out,
            format!("capability {capability} missing: {}", seen.saw),
        );
    }
    item.probe = Some(seen);
    out.matrix.push(row);
    Ok(())
}

/// Missing after the probe: offer an install, then wait / proceed / substitute.
async fn obtain(
    run: &mut Run<'_, '_>,
    operator: &mut dyn Operator,
    item: &mut Item,
    capability: &Capability,
    mut seen: Probe,
    out: &mut Preflight,
) -> Result<Probe, PreflightError> {
    let present = |p: &Probe| p.present && p.meets_floor != Some(false);
    match run.offer(item, capability)? {
        Some(offer) => match offer.low_blast() {
            Ok(()) => {
                let enables = match &offer {
                    Offer::Package(plan) => format!(" It enables {}.", plan.enables),
                    _ => String::new(),
                };
                let unblocks = item.need.used_by.join(", ");
                let question = Question {
                    id: format!("install.{}", item.key),
                    kind: QuestionKind::ApproveChange,
                    prompt: format!(
                        "{capability} is missing; run `{}` to get it?{enables} Unblocks: {}. \
                         approve / decline / edit: <command>",
                        offer.describe(),
                        if unblocks.is_empty() {
                            "no scenario"
                        } else {
                            &unblocks
                        }
                    ),
                    choices: install_choices(),
                    default: "decline".into(),
                    editable: Some(offer.command_line()),
                    ..Question::default()
                };
                let Answer {
                    text: answer,
                    by,
                    who,
                } = run.ask_answer(operator, question).await?;
                let edited = crate::session::operator::edited(&answer).map(str::to_string);
                if answer.trim().eq_ignore_ascii_case("approve") || edited.is_some() {
                    let offer = match edited {
                        Some(command) => Offer::Edited(command),
                        None => offer,
                    };
                    // Journaled before the command starts: the report says who approved what.
                    run.log(Event::InstallApproved(event::InstallDecision {
                        capability: capability.to_string(),
                        what: offer.describe(),
                        edited: Some(matches!(offer, Offer::Edited(_))),
                        by: by.clone(),
                        who: who.clone(),
                    }))?;
                    run.install(&item.key, &offer).await?;
                    seen = run.probe_item(item, capability).await?;
                } else {
                    run.log(Event::InstallDeclined(event::InstallDecision {
                        capability: capability.to_string(),
                        what: offer.describe(),
                        edited: None,
                        by: by.clone(),
                        who: who.clone(),
                    }))?;
                }
            }
            Err(why) => {
                run.log(Event::InstallNotOffered(event::InstallNotOffered {
                    capability: capability.to_string(),
                    shown: Some(offer.describe()),
                    why: why.to_string(),
                }))?;
            }
        },
        None => {
            run.log(Event::InstallNotOffered(event::InstallNotOffered {
                capability: capability.to_string(),
                shown: None,
                why: "no package or local install provides it".into(),
            }))?;
        }
    }
    if present(&seen) {
        return Ok(seen);
    }
    // Asked again whenever the operator takes a `wait` back.
    let answer = loop {
        let answer = run
            .ask(
                operator,
                format!("missing.{}", item.key),
                format!(
                    "{capability} is still missing ({}): wait (re-probe {}) / proceed \
                     (dependents INCONCLUSIVE-env) / substitute <with what>{}",
                    seen.saw,
                    wait_words(),
                    proxy_offer(run.ctx, item, capability)
                ),
                missing_choices(),
                "proceed",
            )
            .await?;
        if !answer.trim().eq_ignore_ascii_case("wait") {
            break answer;
        }
        run.log(Event::CapabilityWait(event::CapabilityRef {
            capability: capability.to_string(),
            every_ms: Some(event::millis(WAIT_EVERY)),
            limit_ms: Some(event::millis(WAIT_LIMIT)),
        }))?;
        match wait_for(run, operator, item, capability, seen).await? {
            Waited::Over => return run.probe_item(item, capability).await,
            Waited::TakenBack(last) => seen = last,
        }
    };
    let choice = said(&answer);
    if matches!(&choice, Said::Substitute(with) if with.eq_ignore_ascii_case("proxy")) {
        return proxy_stands_in(run, item, capability, seen, out);
    }
    if let Said::Substitute(with) = choice {
        item.substitute = Some(with.clone());
        let mut sub = probe(&Capability::Binary(with.clone()), None, &run.env).await;
        if sub.present {
            let note = format!("{capability} substituted by {with}: a degraded approximation");
            for id in &item.need.used_by {
                out.degraded.insert(id.clone(), note.clone());
            }
            if let Some(var) = &item.var {
                out.vars.insert(
                    var.clone(),
                    resolved(&Capability::Binary(with.clone()), &run.env),
                );
            }
            run.log(Event::CapabilitySubstituted(event::CapabilitySubstituted {
                capability: capability.to_string(),
                with: with.to_string(),
                present: Some(true),
                scenarios: None,
                by: None,
            }))?;
            sub.capability = capability.clone();
        }
        Ok(sub)
    } else {
        Ok(seen)
    }
}

/// How a `wait` for a missing capability ended.
enum Waited {
    /// It appeared, the wait's limit passed, or the run is stopping.
    Over,
    /// The operator took it back; the last probe's result.
    TakenBack(Probe),
}

/// Re-probes `capability` every [`WAIT_EVERY`] until it appears or [`WAIT_LIMIT`]
/// passes. Meanwhile an attached operator may take the wait back (question
/// `waiting.<key>`, withdrawn when the wait ends otherwise); nobody else can.
async fn wait_for(
    run: &mut Run<'_, '_>,
    operator: &mut dyn Operator,
    item: &Item,
    capability: &Capability,
    mut seen: Probe,
) -> Result<Waited, PreflightError> {
    let present = |p: &Probe| p.present && p.meets_floor != Some(false);
    let question = Question {
        id: format!("waiting.{}", item.key),
        kind: QuestionKind::StopWaiting,
        prompt: format!(
            "re-probing {capability} {} until it appears: `stop waiting` stops it and asks \
             again what to do",
            wait_words()
        ),
        choices: vec![
            Choice::new(
                "stop waiting",
                "stop re-probing; what to do about it is asked again",
            )
            .alias("stop"),
        ],
        default: "stop waiting".into(),
        ..Question::default()
    };
    let mut stop = Some(operator.ask(&question));
    let started = tokio::time::Instant::now();
    while !present(&seen) && started.elapsed() < WAIT_LIMIT {
        tokio::select! {
            () = tokio::time::sleep(WAIT_EVERY) => {}
            () = run.ctx.cancel.cancelled() => break,
            given = async {
                match stop.as_mut() {
                    Some(rx) => rx.await,
                    None => std::future::pending().await,
                }
            } => {
                stop = None;
                // Unanswerable here (a headless run): the wait goes on.
                let Ok(Ok(answer)) = given else { continue };
                if question.check(&answer.text).is_err() {
                    continue;
                }
                run.log(crate::session::operator::answered(&question, &answer))?;
                run.log(Event::CapabilityWaitStopped(event::CapabilityWaitStopped {
                    capability: capability.to_string(),
                    by: answer.by,
                    waited_ms: event::millis(started.elapsed()),
                }))?;
                return Ok(Waited::TakenBack(seen));
            }
        }
        seen = probe(capability, item.need.floor.as_ref(), &run.env).await;
    }
    // Still open: dropping it withdraws it.
    drop(stop);
    Ok(Waited::Over)
}

/// Dependents of `item` whose bindings offer a proxy stand-in for their faults.
fn proxy_takers(ctx: &PreflightCtx<'_>, item: &Item) -> Vec<String> {
    item.need
        .used_by
        .iter()
        .filter(|id| {
            ctx.spec
                .bindings
                .get(id.as_str())
                .is_some_and(|(binding, _)| binding.offers_proxy())
        })
        .cloned()
        .collect()
}

/// The question's extra choice when faultline's proxy can stand in ("" when it cannot).
fn proxy_offer(ctx: &PreflightCtx<'_>, item: &Item, capability: &Capability) -> String {
    let takers = proxy_takers(ctx, item);
    if takers.is_empty() {
        return String::new();
    }
    format!(
        " / substitute proxy (faultline's TCP fault proxy stands in for {capability} in {}: \
         delay, bandwidth, stalls and resets per connection — no packet loss or reordering)",
        takers.join(", ")
    )
}

/// The operator chose faultline's proxy in place of a missing capability: the
/// dependents that offer a proxy stand-in run with it (degraded, said in the
/// findings); the others stay blocked. `seen` is returned marked as covered.
fn proxy_stands_in(
    run: &mut Run<'_, '_>,
    item: &mut Item,
    capability: &Capability,
    mut seen: Probe,
    out: &mut Preflight,
) -> Result<Probe, PreflightError> {
    let takers = proxy_takers(run.ctx, item);
    if takers.is_empty() {
        for id in &item.need.used_by {
            out.blocked.entry(id.clone()).or_insert_with(|| {
                format!("{capability} missing, and no fault of {id} offers a proxy stand-in")
            });
        }
        return Ok(seen);
    }
    let note = format!(
        "{capability} substituted by faultline's TCP fault proxy: a degraded approximation \
         (per-connection delay, bandwidth, stalls and resets; no packet loss or reordering)"
    );
    for id in &item.need.used_by {
        if takers.contains(id) {
            out.degraded.insert(id.clone(), note.clone());
        } else {
            out.blocked.entry(id.clone()).or_insert_with(|| {
                format!("{capability} missing, and no fault of {id} offers a proxy stand-in")
            });
        }
    }
    out.proxied.extend(takers.iter().cloned());
    run.log(Event::CapabilitySubstituted(event::CapabilitySubstituted {
        capability: capability.to_string(),
        with: "faultline proxy".into(),
        present: None,
        scenarios: Some(takers.clone()),
        by: Some("operator answer".into()),
    }))?;
    item.substitute = Some("faultline proxy".into());
    seen.present = true;
    seen.meets_floor = None;
    seen.saw = format!("missing; faultline's proxy stands in ({})", seen.saw);
    Ok(seen)
}

/// The operator substituted before any probe: probe the substitute instead.
async fn substitute(
    run: &mut Run<'_, '_>,
    item: &mut Item,
    capability: &Capability,
    with: String,
    mut row: MatrixRow,
    out: &mut Preflight,
) -> Result<(), PreflightError> {
    let replacement = Capability::Binary(with.clone());
    let seen = run.probe_item(item, &replacement).await?;
    row.present = Some(seen.present);
    row.version = seen.version.clone();
    row.source = "operator+probe".into();
    row.note = format!("substituted by {with}: {}", seen.saw);
    if seen.present {
        let note = format!("{capability} substituted by {with}: a degraded approximation");
        for id in &item.need.used_by {
            out.degraded.insert(id.clone(), note.clone());
        }
        if let Some(var) = &item.var {
            out.vars
                .insert(var.clone(), resolved(&replacement, &run.env));
        }
        run.log(Event::CapabilitySubstituted(event::CapabilitySubstituted {
            capability: capability.to_string(),
            with: with.to_string(),
            present: Some(true),
            scenarios: None,
            by: None,
        }))?;
    } else {
        for id in &item.need.used_by {
            out.blocked
                .entry(id.clone())
                .or_insert_with(|| format!("substitute {with} for {capability} is missing too"));
        }
    }
    item.substitute = Some(with);
    out.matrix.push(row);
    Ok(())
}

/// What a `var` of a satisfied need is set to: a binary's full path, else its name.
fn resolved(capability: &Capability, env: &ProbeEnv) -> String {
    match capability {
        Capability::Binary(name) => which::which_in(name, env.path.as_ref(), &env.scratch)
            .map_or_else(|_| name.clone(), |p| p.display().to_string()),
        other => other.to_string(),
    }
}

/// Every question known before the run, with its default (`--answers-template`).
pub fn questions(plan: &Plan, spec: &RunSpec, toolbox: Option<&Toolbox>) -> Vec<Question> {
    let mut out = Vec::new();
    for item in needs(plan, spec, toolbox) {
        let recognised = item.need.capability.is_some();
        out.push(Question {
            id: format!("capability.{}", item.key),
            kind: QuestionKind::ConfirmCapability,
            prompt: format!(
                "{}: have / don't have / skip / substitute <with what>",
                item.need.raw
            ),
            choices: capability_choices(recognised, true),
            default: if recognised { "as probed" } else { "have" }.to_string(),
            ..Question::default()
        });
        if recognised {
            out.push(Question {
                id: format!("install.{}", item.key),
                kind: QuestionKind::ApproveChange,
                prompt: format!(
                    "{}: approve / decline / edit: <command> for an offered install (asked only if missing)",
                    item.need.raw
                ),
                choices: install_choices(),
                default: "decline".to_string(),
                ..Question::default()
            });
            out.push(Question {
                id: format!("missing.{}", item.key),
                kind: QuestionKind::ConfirmCapability,
                prompt: format!(
                    "{}: wait / proceed / substitute <with what> (asked only if still missing)",
                    item.need.raw
                ),
                choices: missing_choices(),
                default: "proceed".to_string(),
                ..Question::default()
            });
        }
    }
    for (key, actions) in privileged::by_binding(spec) {
        out.push(privileged::question(&key, &actions));
    }
    out
}
