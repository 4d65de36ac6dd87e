//! The run spec's `nodes:` checked before anything runs: each is either this machine
//! or an SSH destination, and every `node:` a step names is one of them.

use std::collections::BTreeMap;

use serde_saphyr::Spanned;

use super::load::SpecError;
use super::model::Binding;
use crate::host::NodeSpec;

/// Every `node:` a binding (and its arms) names, with the field that names it.
pub fn named(binding: &Binding) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut push = |field: String, node: &Option<String>| {
        if let Some(node) = node {
            out.push((field, node.clone()));
        }
    };
    if let Some(cluster) = &binding.cluster {
        for (i, service) in cluster.services.iter().enumerate() {
            push(format!("cluster.services[{i}].node"), &service.node);
        }
        if let Some(health) = &cluster.health {
            push("cluster.health.node".into(), &health.node);
        }
    }
    if let Some(workload) = &binding.workload {
        push("workload.node".into(), &workload.node);
    }
    for (list, checks) in [
        ("before", &binding.before),
        ("preconditions", &binding.preconditions),
        ("teardown", &binding.teardown),
    ] {
        for (i, check) in checks.iter().enumerate() {
            push(format!("{list}[{i}].node"), &check.node);
        }
    }
    for (i, fault) in binding.faults.iter().enumerate() {
        let step = &fault.value;
        let kind = step.kind().as_str();
        push(
            format!("faults[{i}].{kind}.node"),
            &step.nemesis.node().map(str::to_string),
        );
    }
    for (arm, inner) in &binding.arms {
        out.extend(
            named(inner)
                .into_iter()
                .map(|(field, node)| (format!("arms.{arm}.{field}"), node)),
        );
    }
    out
}

/// Errors for nodes that are neither local nor SSH (`offset` is added to the
/// document's lines: an embedded block's first line in the plan, less one).
pub fn check_specs(
    file: &str,
    offset: u64,
    nodes: &BTreeMap<String, Spanned<NodeSpec>>,
    errors: &mut Vec<SpecError>,
) {
    for (name, node) in nodes {
        let spec = &node.value;
        let remote_fields = spec.port.is_some() || spec.key.is_some() || spec.known_hosts.is_some();
        let problem = match (&spec.ssh, spec.local) {
            (Some(_), true) => Some("names both `ssh` and `local: true`; give one"),
            (None, false) => {
                Some("needs `ssh: user@addr` (or a host of your ssh config) or `local: true`")
            }
            (None, true) if remote_fields => {
                Some("is `local: true`: `port`, `key` and `known_hosts` are for `ssh` nodes")
            }
            _ => None,
        };
        if let Some(problem) = problem {
            errors.push(SpecError {
                file: file.to_string(),
                line: node.referenced.line() + offset,
                column: node.referenced.column(),
                field: Some(format!("nodes.{name}")),
                message: format!("node `{name}` {problem}"),
            });
        }
    }
}

/// Errors for each `node:` of scenario `id`'s binding (written at `line`:`column`
/// of `file`, reported under `field_prefix`) that names no node in `known`.
pub fn check_names(
    file: &str,
    (line, column): (u64, u64),
    (id, field_prefix): (&str, &str),
    binding: &Binding,
    known: &BTreeMap<String, NodeSpec>,
    errors: &mut Vec<SpecError>,
) {
    let declared: Vec<&str> = known.keys().map(String::as_str).collect();
    for (field, node) in named(binding) {
        if known.contains_key(&node) {
            continue;
        }
        errors.push(SpecError {
            file: file.to_string(),
            line,
            column,
            field: Some(format!("{field_prefix}{field}")),
            message: format!(
                "{id}: node `{node}` is not declared under `nodes:` ({})",
                if declared.is_empty() {
                    "none is".to_string()
                } else {
                    format!("declared: {}", declared.join(", "))
                }
            ),
        });
    }
}
