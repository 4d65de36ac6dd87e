//! What a run spec can say that YAML and serde accept but a run would waste a cluster
//! on: a built-in checker name that does not exist, a `${var}` nothing sets, a
//! hardening tier with too few seeds to ever earn PASS-hardening. Each is a hand-back
//! naming the file, line and field, found before anything starts.

use std::collections::BTreeSet;

use serde_json::Value;

use super::load::{Origin, RunSpec};
use super::model::Binding;
use crate::plan::lint::{Problem, Severity};
use crate::verdict::Tier;

/// Seeds a hardening tier needs before the decision tree can give PASS-hardening.
pub const HARDENING_SEEDS: u32 = 3;

/// Variables faultline sets for every binding (besides the run spec's own `vars`,
/// the `var`s of its `requires`, `${<service>_pgid}` and `${port:NAME}`).
pub const BUILT_IN_VARS: &[&str] = &[
    "faultline",
    "sut",
    "seed",
    "duration_ms",
    "artifacts",
    "final_state",
    "logs",
];

/// Every trap in `spec`, one problem each.
pub fn traps(spec: &RunSpec) -> Vec<Problem> {
    traps_where(spec, |_| true)
}

/// The traps of the bindings `keep` accepts (and the run spec's own `vars`).
///
/// A trap is placed where its value is written: its own line and column, inside the
/// anchor for a value the binding reaches through an alias (`*name`) or a merge key
/// (`<<: *name`). A value written once and used by several bindings is one problem,
/// at that place, listing each alias use.
pub fn traps_where(spec: &RunSpec, keep: impl Fn(&str) -> bool) -> Vec<Problem> {
    let mut known: BTreeSet<String> = BUILT_IN_VARS.iter().map(|v| v.to_string()).collect();
    known.extend(spec.vars.keys().cloned());
    known.extend(spec.requires.iter().filter_map(|(r, _)| r.var.clone()));
    // `${node:NAME}`: each node's address.
    known.extend(spec.nodes.keys().map(|n| format!("node:{n}")));
    let mut found = Vec::new();
    for (id, (binding, origin)) in spec.bindings.iter().filter(|(id, _)| keep(id)) {
        let mut trap = |id: &str, field: &str, message: String| {
            found.push(Found::new(id, origin, field, message));
        };
        check(id, "", binding, &known, &mut trap);
    }
    let mut out = merged(found);
    // `vars` are the sidecar's: placed through a sidecar binding's document.
    let sidecar = spec
        .bindings
        .values()
        .map(|(_, o)| o)
        .find(|o| o.path.starts_with("scenarios."));
    let var = |name: &str, message: String| {
        let Some(origin) = sidecar else {
            return problem(None, None, &format!("vars.{name}"), message);
        };
        let root = Origin {
            path: String::new(),
            ..origin.clone()
        };
        let at = root.locate(&format!("vars.{name}"));
        Problem {
            line: at.map_or(0, |a| usize::try_from(a.line).unwrap_or(0)),
            column: at.map_or(0, |a| usize::try_from(a.column).unwrap_or(0)),
            file: Some(origin.file.clone()),
            scenario: None,
            field: format!("run spec vars.{name}"),
            message,
            severity: Severity::HandBack,
        }
    };
    // The run spec's own values may name variables too.
    for (name, value) in &spec.vars {
        // faultline sets these for each run after the run spec's own: such a var
        // would be silently replaced (a `final_state` command run as a path).
        if BUILT_IN_VARS.contains(&name.as_str()) {
            out.push(var(
                name,
                format!(
                    "`{name}` is set by faultline for every run (its built-in variables: {}), \
                     so this value would never be used; choose another name",
                    BUILT_IN_VARS.join(", ")
                ),
            ));
        }
        for unknown in unknown_vars(value, &known) {
            out.push(var(
                name,
                format!(
                    "`${{{unknown}}}` is set by nothing (known: {})",
                    list(&known)
                ),
            ));
        }
    }
    out
}

/// One trap of one binding, where it is written.
struct Found {
    id: String,
    file: String,
    field: String,
    message: String,
    /// Line and column of the value's own text (the binding's line and 0 when unknown).
    line: u64,
    column: u64,
    /// The alias use this binding reached it through.
    through: Option<(u64, u64)>,
}

impl Found {
    fn new(id: &str, origin: &Origin, field: &str, message: String) -> Found {
        let at = origin.locate(field);
        Found {
            id: id.to_string(),
            file: origin.file.clone(),
            field: field.to_string(),
            message,
            line: at.map_or(origin.line, |a| a.line),
            column: at.map_or(0, |a| a.column),
            through: at.and_then(|a| a.through),
        }
    }
}

/// One problem per written value: the traps several bindings hit in one anchor's
/// text become one, at the anchor's line and column, naming each alias use.
fn merged(found: Vec<Found>) -> Vec<Problem> {
    // Each written value, and the (binding, alias line:column) uses of it.
    type Uses = Vec<(String, (u64, u64))>;
    let mut groups: Vec<(Found, Uses)> = Vec::new();
    for f in found {
        let same = groups.iter_mut().find(|(g, _)| {
            f.column != 0
                && (&g.file, g.line, g.column, &g.message)
                    == (&f.file, f.line, f.column, &f.message)
        });
        match same {
            // The binding that writes the value (no alias) is the one it is filed under.
            Some((g, uses)) if g.through.is_some() && f.through.is_none() => {
                let alias = std::mem::replace(g, f);
                uses.extend(alias.through.map(|at| (alias.id, at)));
            }
            Some((_, uses)) => uses.extend(f.through.map(|at| (f.id.clone(), at))),
            None => groups.push((f, Vec::new())),
        }
    }
    groups
        .into_iter()
        .map(|(f, mut uses)| {
            if let Some(at) = f.through {
                uses.insert(0, (f.id.clone(), at));
            }
            let message = match uses.as_slice() {
                [] => f.message,
                list => format!(
                    "{} (written here once, used through aliases by {})",
                    f.message,
                    list.iter()
                        .map(|(id, (l, c))| format!("{id} at {l}:{c}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            Problem {
                line: usize::try_from(f.line).unwrap_or(0),
                column: usize::try_from(f.column).unwrap_or(0),
                file: Some(f.file),
                scenario: Some(f.id),
                field: format!("run spec {}", f.field),
                message,
                severity: Severity::HandBack,
            }
        })
        .collect()
}

/// The traps of binding `id` (an arm's fields under `prefix`, `arms.api.`).
fn check(
    id: &str,
    prefix: &str,
    binding: &Binding,
    known: &BTreeSet<String>,
    trap: &mut dyn FnMut(&str, &str, String),
) {
    let mut at = |field: &str, message: String| trap(id, &format!("{prefix}{field}"), message);
    let fields = std::iter::once("checker.builtin".to_string())
        .filter(|_| binding.checker.is_some())
        .chain((0..binding.checkers.len()).map(|i| format!("checkers[{i}].builtin")));
    for (field, checker) in fields.zip(binding.checkers()) {
        let Some(spec) = checker.builtin.as_deref() else {
            continue;
        };
        let name = spec.split_whitespace().next().unwrap_or_default();
        if crate::oracle::registry::info(name).is_none() {
            at(
                &field,
                format!(
                    "no built-in checker `{name}`{}; the built-in ones: {}",
                    nearest(name)
                        .map(|n| format!(" (did you mean `{n}`?)"))
                        .unwrap_or_default(),
                    crate::oracle::registry::names().join(", ")
                ),
            );
        }
    }
    // A declaration is the author's word; one still saying FILL IN is nobody's.
    for (item, text) in &binding.declare {
        if text.contains("FILL IN") {
            at(
                &format!("declare.{item}"),
                format!(
                    "`{item}` still holds the template's placeholder (\"{}\"); write what is \
                     true of this system, or `n/a: why`, or leave the item undeclared",
                    crate::sanitize::line(text)
                ),
            );
        }
    }
    for name in [Tier::Hardening, Tier::Release] {
        if let Some(tier) = binding.tiers.get(&name)
            && tier.seeds < HARDENING_SEEDS
        {
            at(
                &format!("tiers.{}.seeds", name.as_str()),
                format!(
                    "{} seed(s) can never earn PASS-hardening, which needs {HARDENING_SEEDS} \
                     seeds that agree; give `seeds: {HARDENING_SEEDS}` or more",
                    tier.seeds
                ),
            );
        }
    }
    let mut here = known.clone();
    if let Some(cluster) = &binding.cluster {
        here.extend(cluster.services.iter().map(|s| format!("{}_pgid", s.name)));
        here.extend(
            cluster
                .services
                .iter()
                .filter(|s| s.user.is_some())
                .map(|s| format!("{}_uid", s.name)),
        );
    }
    // Arms are checked on their own below; their text is not this binding's.
    let mut value = serde_json::to_value(binding).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.remove("arms");
    }
    let mut seen = BTreeSet::new();
    walk(&value, String::new(), &mut |path, text| {
        for unknown in unknown_vars(text, &here) {
            if seen.insert(unknown.clone()) {
                at(
                    path,
                    format!(
                        "`${{{unknown}}}` is set by nothing, so the run would stop at it \
                         (known: {}, `${{<service>_pgid}}`, `${{port:NAME}}`)",
                        list(&here)
                    ),
                );
            }
        }
    });
    for (arm, inner) in &binding.arms {
        check(
            &format!("{id}/{arm}"),
            &format!("{prefix}arms.{arm}."),
            inner,
            known,
            trap,
        );
    }
}

/// Every string in `value` with its path (`faults.0.command.inject`).
fn walk(value: &Value, path: String, f: &mut dyn FnMut(&str, &str)) {
    match value {
        Value::String(s) => f(&path, s),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, join(&path, &i.to_string()), f);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                walk(item, join(&path, key), f);
            }
        }
        _ => {}
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The names of the `${…}` in `text` that are neither known nor `port:NAME`.
fn unknown_vars(text: &str, known: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            break;
        };
        let name = &after[..end];
        if !name.starts_with("port:") && !known.contains(name) {
            out.push(name.to_string());
        }
        rest = &after[end + 1..];
    }
    out
}

fn list(known: &BTreeSet<String>) -> String {
    known
        .iter()
        .map(|k| format!("`${{{k}}}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The built-in checker name closest to `name`, when one is a slip of a few letters.
fn nearest(name: &str) -> Option<&'static str> {
    crate::oracle::registry::names()
        .into_iter()
        .map(|n| (strsim::levenshtein(name, n), n))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, n)| n)
}

fn problem(id: Option<&str>, origin: Option<&Origin>, field: &str, message: String) -> Problem {
    Problem {
        line: origin.map_or(0, |o| usize::try_from(o.line).unwrap_or(0)),
        column: 0,
        file: origin.map(|o| o.file.clone()),
        scenario: id.map(str::to_string),
        field: format!("run spec {field}"),
        message,
        severity: Severity::HandBack,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slip_of_a_letter_finds_its_checker() {
        assert_eq!(
            nearest("linearizability-regster"),
            Some("linearizability-register")
        );
        assert_eq!(nearest("no-lost-acks"), Some("no-lost-ack"));
        assert_eq!(nearest("totally-different"), None);
    }

    #[test]
    fn port_variables_and_known_names_pass() {
        let known: BTreeSet<String> = ["seed".to_string()].into();
        assert_eq!(
            unknown_vars("a ${seed} ${port:n1} ${logs} ${x", &known),
            vec!["logs".to_string()]
        );
    }
}
