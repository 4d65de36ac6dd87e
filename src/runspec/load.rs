//! Loading run specs from a plan's fenced `faultline` blocks and its sidecar
//! `<plan>.run.yaml`, with every error naming file, line, column and field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use serde_saphyr::Spanned;

use super::model::{Binding, RunSpecFile};
use super::yaml::{self, Places};
use crate::plan::Plan;

/// A run-spec problem located in its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: run spec{}: {message}", field.as_ref().map(|f| format!(" field `{f}`")).unwrap_or_default())]
pub struct SpecError {
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub field: Option<String>,
    pub message: String,
}

/// Where a binding came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub file: String,
    pub line: u64,
    /// Where each node of the binding's document is written (see [`Origin::locate`]).
    pub places: Arc<Places>,
    /// The binding's path in that document (`scenarios.S1`; empty for an embedded block,
    /// whose document is the binding).
    pub path: String,
    /// Added to the document's lines to give the file's (an embedded block's first line
    /// in the plan, less one).
    pub line_offset: u64,
}

/// Where a value of a binding is written, in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    pub line: u64,
    pub column: u64,
    /// The alias (`*name`) or merge entry (`<<: *name`) this binding reaches the value
    /// through: line and column; `None` when the binding writes it itself.
    pub through: Option<(u64, u64)>,
}

impl Origin {
    /// An origin known only by its line.
    pub fn at(file: &str, line: u64) -> Origin {
        Origin {
            file: file.to_string(),
            line,
            places: Arc::default(),
            path: String::new(),
            line_offset: 0,
        }
    }

    /// Where `field` of this binding (`checker.builtin`, `checkers[0].builtin`,
    /// `arms.api.tiers.hardening.seeds`) is written: the line and column of its own
    /// text — inside the anchor for a value reached through an alias or a merge key —
    /// and the alias use. A field the document does not spell (a default) is placed at
    /// the nearest enclosing node this binding writes; `None` when there is none.
    pub fn locate(&self, field: &str) -> Option<Located> {
        let full = match (self.path.as_str(), field) {
            ("", f) => f.to_string(),
            (p, "") => p.to_string(),
            (p, f) => format!("{p}.{f}"),
        };
        let (at, place) = self.places.nearest(&full)?;
        if at.len() < self.path.len() || place.defined.line() == 0 {
            return None;
        }
        let shift = |l: serde_saphyr::Location| (l.line() + self.line_offset, l.column());
        let (line, column) = shift(place.defined);
        Some(Located {
            line,
            column,
            through: place.is_alias().then(|| shift(place.referenced)),
        })
    }
}

/// Every scenario / arm binding of a plan, by id (`S1`, `S5/api`).
#[derive(Debug, Default)]
pub struct RunSpec {
    pub vars: BTreeMap<String, String>,
    pub bindings: BTreeMap<String, (Binding, Origin)>,
    /// The sidecar's `requires:` entries, with the line each came from.
    pub requires: Vec<(super::model::Requirement, Origin)>,
    /// The run's nodes (the sidecar's `nodes:` and embedded blocks'), with the line
    /// each came from.
    pub nodes: BTreeMap<String, (crate::host::NodeSpec, Origin)>,
    /// `isolate:` as the sidecar or an embedded block gives it, and where.
    pub isolate: Option<(super::model::Isolate, Origin)>,
}

impl RunSpec {
    /// Whether the run goes in a network namespace of its own.
    pub fn isolated(&self) -> bool {
        matches!(self.isolate, Some((super::model::Isolate::Netns, _)))
    }
}

/// `plan.md` → `plan.run.yaml` beside it.
pub fn sidecar_path(plan_path: &Path) -> PathBuf {
    plan_path.with_extension("run.yaml")
}

/// Line, column and one-line message of a serde-saphyr error (see [`super::yaml`]).
#[cfg(feature = "app")]
pub(crate) fn yaml_message(err: &serde_saphyr::Error) -> (u64, u64, String) {
    let e = yaml::describe(err, None, "");
    (e.line, e.column, e.message)
}

fn yaml_error(file: &str, line_offset: u64, err: yaml::YamlError) -> SpecError {
    SpecError {
        file: file.to_string(),
        line: err.line + line_offset,
        column: err.column,
        field: err.field,
        message: err.message,
    }
}

fn check_binding(
    id: &str,
    binding: &Binding,
    file: &str,
    line_offset: u64,
    errors: &mut Vec<SpecError>,
) {
    let first = errors.len();
    for refused in &binding.faults.refused {
        errors.push(SpecError {
            file: file.to_string(),
            line: refused.referenced.line() + line_offset,
            column: refused.referenced.column(),
            field: Some(super::model::kind_keys()),
            message: refused.value.describe(id),
        });
    }
    for fault in &binding.faults {
        let step = &fault.value;
        // Where the step is written: inside the anchor for one reached through an alias.
        let through = if fault.referenced != fault.defined && fault.referenced.line() != 0 {
            format!(
                " (used through the alias at {}:{})",
                fault.referenced.line() + line_offset,
                fault.referenced.column()
            )
        } else {
            String::new()
        };
        let at = |field: &str, message: String| SpecError {
            file: file.to_string(),
            line: fault.defined.line() + line_offset,
            column: fault.defined.column(),
            field: Some(field.into()),
            message: format!("{message}{through}"),
        };
        for (field, message) in step.nemesis.check(id, &step.id) {
            errors.push(at(&field, message));
        }
        let substitute = step.substitute_proxy.as_ref();
        if let Some((field, message)) = substitute.and_then(|p| {
            crate::nemesis::proxy::idle_toxic(&p.toxic, "substitute_proxy", id, &step.id)
        }) {
            errors.push(at(&field, message));
        }
        for (i, signal) in step.landing.iter().enumerate() {
            let named = signal.signals().len();
            // An injector-side entry without a signal only sets the built-in probe's window.
            let windows_only = named == 0 && signal.side == super::model::Side::Injector;
            if named != 1 && !windows_only {
                errors.push(at(
                    &format!("landing[{i}]"),
                    format!(
                        "landing signal {i} of fault `{}` ({id}) needs exactly one of `log`, \
                         `counter`, `http`, `prometheus` or `history` (an injector-side entry \
                         may name none to set the built-in probe's `within`)",
                        step.id
                    ),
                ));
            }
        }
        if step.on.as_ref().is_some_and(|t| t.signals().len() != 1) {
            errors.push(at(
                "on",
                format!(
                    "fault `{}` of {id}: `on` needs exactly one of `log`, `counter`, `http`, \
                     `prometheus` or `history`",
                    step.id
                ),
            ));
        }
        if step.repeat == Some(0) {
            errors.push(at(
                "repeat",
                format!(
                    "fault `{}` of {id}: `repeat` counts injections and must be at least 1",
                    step.id
                ),
            ));
        }
    }
    // In the order of the faults in the file, refused steps among them.
    errors[first..].sort_by_key(|e| e.line);
    for (arm, inner) in &binding.arms {
        check_binding(&format!("{id}/{arm}"), inner, file, line_offset, errors);
    }
}

fn insert(
    spec: &mut RunSpec,
    id: String,
    binding: Binding,
    origin: Origin,
    errors: &mut Vec<SpecError>,
) {
    if let Some((_, first)) = spec.bindings.get(&id) {
        errors.push(SpecError {
            file: origin.file.clone(),
            line: origin.line,
            column: 1,
            field: Some(id.clone()),
            message: format!(
                "{id} is bound twice: here and at {}:{}; keep one",
                first.file, first.line
            ),
        });
        return;
    }
    spec.bindings.insert(id, (binding, origin));
}

/// Takes an embedded block's run-wide fields (`nodes:`, `isolate:`) into `spec`; an
/// arm that names them is refused (they hold for the whole run).
fn run_wide(
    spec: &mut RunSpec,
    id: &str,
    binding: &mut Binding,
    file: &str,
    offset: u64,
    errors: &mut Vec<SpecError>,
) {
    let nodes = std::mem::take(&mut binding.nodes);
    super::nodes::check_specs(file, offset, &nodes, errors);
    add_nodes(spec, nodes, file, offset, errors);
    if let Some(isolate) = binding.isolate.take() {
        set_isolate(spec, &isolate, file, offset, errors);
    }
    for (arm, inner) in &binding.arms {
        refuse_run_wide(
            (&format!("{id}/{arm}"), &format!("arms.{arm}.")),
            inner,
            file,
            offset,
            "an arm",
            errors,
        );
    }
}

/// `nodes:` and `isolate:` hold for the whole run: refused where `what` is written.
fn refuse_run_wide(
    (id, path): (&str, &str),
    binding: &Binding,
    file: &str,
    offset: u64,
    what: &str,
    errors: &mut Vec<SpecError>,
) {
    let places = binding
        .nodes
        .values()
        .map(|n| ("nodes", n.referenced))
        .chain(binding.isolate.iter().map(|i| ("isolate", i.referenced)));
    for (field, at) in places {
        errors.push(SpecError {
            file: file.to_string(),
            line: at.line() + offset,
            column: at.column(),
            field: Some(format!("{path}{field}")),
            message: format!(
                "`{field}:` holds for the whole run and cannot be given in {what} ({id}): \
                 write it at the top level of the sidecar, or in an embedded block"
            ),
        });
    }
    for (arm, inner) in &binding.arms {
        refuse_run_wide(
            (&format!("{id}/{arm}"), &format!("{path}arms.{arm}.")),
            inner,
            file,
            offset,
            "an arm",
            errors,
        );
    }
}

/// Adds `nodes` to the run's; a name declared twice with different values is refused.
fn add_nodes(
    spec: &mut RunSpec,
    nodes: BTreeMap<String, Spanned<crate::host::NodeSpec>>,
    file: &str,
    offset: u64,
    errors: &mut Vec<SpecError>,
) {
    for (name, node) in nodes {
        let line = node.referenced.line() + offset;
        match spec.nodes.get(&name) {
            Some((known, _)) if *known == node.value => {}
            Some((_, first)) => errors.push(SpecError {
                file: file.to_string(),
                line,
                column: node.referenced.column(),
                field: Some(format!("nodes.{name}")),
                message: format!(
                    "node `{name}` is declared twice, differently: here and at {}:{}; keep one",
                    first.file, first.line
                ),
            }),
            None => {
                spec.nodes
                    .insert(name, (node.value, Origin::at(file, line)));
            }
        }
    }
}

/// Sets the run's `isolate:`; two different values are refused.
fn set_isolate(
    spec: &mut RunSpec,
    isolate: &Spanned<super::model::Isolate>,
    file: &str,
    offset: u64,
    errors: &mut Vec<SpecError>,
) {
    let line = isolate.referenced.line() + offset;
    match &spec.isolate {
        Some((known, _)) if *known == isolate.value => {}
        Some((_, first)) => errors.push(SpecError {
            file: file.to_string(),
            line,
            column: isolate.referenced.column(),
            field: Some("isolate".into()),
            message: format!(
                "`isolate:` is given twice, differently: here and at {}:{}; keep one",
                first.file, first.line
            ),
        }),
        None => spec.isolate = Some((isolate.value, Origin::at(file, line))),
    }
}

/// Every `node:` a binding names is one of the run's nodes.
fn check_node_names(spec: &RunSpec, errors: &mut Vec<SpecError>) {
    let known: BTreeMap<String, crate::host::NodeSpec> = spec
        .nodes
        .iter()
        .map(|(name, (node, _))| (name.clone(), node.clone()))
        .collect();
    for (id, (binding, origin)) in &spec.bindings {
        // Arms are checked with their scenario (`named` walks them).
        if id.contains('/') {
            continue;
        }
        let at = origin
            .locate("")
            .map_or((origin.line, 1), |l| (l.line, l.column));
        let prefix = if origin.path.is_empty() {
            String::new()
        } else {
            format!("{}.", origin.path)
        };
        super::nodes::check_names(&origin.file, at, (id, &prefix), binding, &known, errors);
    }
}

/// A run in its own namespace has loopback only: nothing on another machine.
fn check_isolation(spec: &RunSpec, errors: &mut Vec<SpecError>) {
    let Some((super::model::Isolate::Netns, origin)) = &spec.isolate else {
        return;
    };
    let remote: Vec<&str> = spec
        .nodes
        .iter()
        .filter(|(_, (node, _))| node.ssh.is_some())
        .map(|(name, _)| name.as_str())
        .collect();
    if !remote.is_empty() {
        errors.push(SpecError {
            file: origin.file.clone(),
            line: origin.line,
            column: 1,
            field: Some("isolate".into()),
            message: format!(
                "`isolate: netns` gives the run loopback only, so the ssh node(s) {} could \
                 not be reached from it: drop `isolate`, or run those members on this machine",
                remote.join(", ")
            ),
        });
    }
}

/// Each `net` rule port written as a substitution, read as far as the run spec alone
/// says: `${port:NAME}` is a port and a `vars` value is expanded; text that then is
/// not a port is refused at its own line and column. One that needs a value known only
/// at run time (`${seed}`, a `requires` var) is read when the fault is injected.
fn check_ports(spec: &RunSpec, errors: &mut Vec<SpecError>) {
    for (id, (binding, origin)) in &spec.bindings {
        check_binding_ports(id, "", binding, origin, &spec.vars, errors);
    }
}

fn check_binding_ports(
    id: &str,
    prefix: &str,
    binding: &Binding,
    origin: &Origin,
    vars: &BTreeMap<String, String>,
    errors: &mut Vec<SpecError>,
) {
    for (i, fault) in binding.faults.iter().enumerate() {
        let crate::nemesis::NemesisSpec::Net(net) = &fault.value.nemesis else {
            continue;
        };
        for (j, rule) in net.drop.iter().enumerate() {
            for (field, template) in rule.port_templates() {
                let Some(expanded) = expand_static(template, vars, 0) else {
                    continue;
                };
                let Err(why) = super::model::PortSpec::read_expanded(template, &expanded) else {
                    continue;
                };
                let path = format!("{prefix}faults[{i}].net.drop[{j}].{field}");
                let at = origin.locate(&path);
                let through = at
                    .and_then(|a| a.through)
                    .map(|(l, c)| {
                        format!(" (in the anchor's text, used through the alias at {l}:{c})")
                    })
                    .unwrap_or_default();
                let full = match origin.path.as_str() {
                    "" => path.clone(),
                    p => format!("{p}.{path}"),
                };
                errors.push(SpecError {
                    file: origin.file.clone(),
                    line: at.map_or(origin.line, |a| a.line),
                    column: at.map_or(1, |a| a.column),
                    field: Some(full),
                    message: format!(
                        "fault `{}` of {id}: {why} once `vars` are substituted; write {}{through}",
                        crate::sanitize::line(&fault.value.id),
                        super::model::PORT_ALLOWED
                    ),
                });
            }
        }
    }
    for (arm, inner) in &binding.arms {
        check_binding_ports(
            &format!("{id}/{arm}"),
            &format!("{prefix}arms.{arm}."),
            inner,
            origin,
            vars,
            errors,
        );
    }
}

/// `text` with its `${…}` expanded from the run spec's `vars` alone (`${port:NAME}`
/// stands for some port); `None` when it needs a value only a run knows.
fn expand_static(text: &str, vars: &BTreeMap<String, String>, depth: usize) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}')?;
        let name = &after[..end];
        if name.starts_with("port:") {
            out.push('1');
        } else if depth < 8 && !super::traps::BUILT_IN_VARS.contains(&name) {
            out.push_str(&expand_static(vars.get(name)?, vars, depth + 1)?);
        } else {
            return None;
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// Collects the plan's embedded blocks and the sidecar text (if any) into one spec.
pub fn load(plan: &Plan, sidecar: Option<(&str, &str)>) -> Result<RunSpec, Vec<SpecError>> {
    let mut spec = RunSpec::default();
    let mut errors = Vec::new();
    for block in &plan.embedded_run_specs {
        // The fence's first YAML line is `block.line`; YAML lines count from 1.
        let offset = u64::try_from(block.line).unwrap_or(0).saturating_sub(1);
        match yaml::from_str::<Spanned<Binding>>(&block.yaml) {
            Ok(mut binding) => {
                run_wide(
                    &mut spec,
                    &block.scenario_id,
                    &mut binding.value,
                    &plan.source,
                    offset,
                    &mut errors,
                );
                check_binding(
                    &block.scenario_id,
                    &binding.value,
                    &plan.source,
                    offset,
                    &mut errors,
                );
                let origin = Origin {
                    places: Arc::new(Places::read(&block.yaml)),
                    line_offset: offset,
                    ..Origin::at(&plan.source, u64::try_from(block.line).unwrap_or(0))
                };
                insert(
                    &mut spec,
                    block.scenario_id.clone(),
                    binding.value,
                    origin,
                    &mut errors,
                );
            }
            Err(err) => errors.push(yaml_error(&plan.source, offset, err)),
        }
    }
    if let Some((file, text)) = sidecar {
        match yaml::from_str::<RunSpecFile>(text) {
            Ok(parsed) => {
                if parsed.version != 1 {
                    errors.push(SpecError {
                        file: file.to_string(),
                        line: 1,
                        column: 1,
                        field: Some("version".into()),
                        message: format!(
                            "version {} is not supported (expected 1)",
                            parsed.version
                        ),
                    });
                }
                spec.vars = parsed.vars;
                spec.requires = parsed
                    .requires
                    .into_iter()
                    .map(|r| (r.value, Origin::at(file, r.referenced.line())))
                    .collect();
                super::nodes::check_specs(file, 0, &parsed.nodes, &mut errors);
                add_nodes(&mut spec, parsed.nodes, file, 0, &mut errors);
                if let Some(isolate) = parsed.isolate {
                    set_isolate(&mut spec, &isolate, file, 0, &mut errors);
                }
                let places = Arc::new(Places::read(text));
                for (id, binding) in parsed.scenarios {
                    refuse_run_wide(
                        (&id, &format!("scenarios.{id}.")),
                        &binding.value,
                        file,
                        0,
                        "a sidecar's scenario",
                        &mut errors,
                    );
                    check_binding(&id, &binding.value, file, 0, &mut errors);
                    let origin = Origin {
                        places: Arc::clone(&places),
                        path: format!("scenarios.{id}"),
                        ..Origin::at(file, binding.referenced.line())
                    };
                    insert(&mut spec, id, binding.value, origin, &mut errors);
                }
            }
            Err(err) => errors.push(yaml_error(file, 0, err)),
        }
    }
    check_node_names(&spec, &mut errors);
    check_isolation(&spec, &mut errors);
    check_ports(&spec, &mut errors);
    if errors.is_empty() {
        Ok(spec)
    } else {
        Err(errors)
    }
}
