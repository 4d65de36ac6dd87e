//! Which discovered items a scenario's commands use, and bindings that re-implement
//! a discovered driver instead of calling it.

use super::{ItemKind, Role, Toolbox, ToolboxItem, classify};
use crate::plan::lint::{Problem, Severity};
use crate::runspec::{Binding, Step};

fn step(out: &mut Vec<(String, String)>, field: &str, s: &Step) {
    out.push((format!("{field}.run"), s.run.clone()));
    if let Some(status) = &s.status {
        out.push((format!("{field}.status"), status.clone()));
    }
}

/// Every command of a binding with the run-spec field it sits in (arms included,
/// as `arms.<arm>.<field>`).
fn labelled(b: &Binding, prefix: &str, out: &mut Vec<(String, String)>) {
    if let Some(cluster) = &b.cluster {
        for s in &cluster.services {
            out.push((
                format!("{prefix}cluster.services.{}.run", s.name),
                s.run.clone(),
            ));
        }
        if let Some(health) = &cluster.health {
            step(out, &format!("{prefix}cluster.health"), health);
        }
    }
    for (field, checks) in [
        ("before", &b.before),
        ("preconditions", &b.preconditions),
        ("teardown", &b.teardown),
    ] {
        for c in checks {
            out.push((format!("{prefix}{field}.{}.run", c.name), c.run.clone()));
        }
    }
    if let Some(w) = &b.workload {
        step(out, &format!("{prefix}workload"), w);
    }
    for f in &b.faults {
        let (id, kind) = (&f.value.id, f.value.kind().as_str());
        for (field, command) in f.value.nemesis.commands() {
            out.push((format!("{prefix}faults.{id}.{kind}.{field}"), command));
        }
    }
    if let Some(q) = &b.quiesce {
        out.push((format!("{prefix}quiesce.run"), q.run.clone()));
    }
    let fields = std::iter::once("checker".to_string())
        .filter(|_| b.checker.is_some())
        .chain((0..b.checkers.len()).map(|i| format!("checkers[{i}]")));
    for (field, c) in fields.zip(b.checkers()) {
        if let Some(e) = &c.external {
            out.push((format!("{prefix}{field}.external"), e.clone()));
        }
        if let Some(f) = &c.final_state {
            out.push((format!("{prefix}{field}.final_state"), f.clone()));
        }
    }
    for (arm, inner) in &b.arms {
        labelled(inner, &format!("{prefix}arms.{arm}."), out);
    }
}

/// Every command string of a binding: services, health, preconditions, workload
/// (and its status), fault inject / heal, quiesce, checker; arms included.
pub fn commands_of(binding: &Binding) -> Vec<String> {
    let mut out = Vec::new();
    labelled(binding, "", &mut out);
    out.into_iter().map(|(_, cmd)| cmd).collect()
}

/// Shell-ish split: simple commands (on `;`, `&`, `|`, newlines), then words (on
/// whitespace, quotes, parentheses, backticks). Good enough to spot invocations.
fn simple_commands(cmd: &str) -> Vec<Vec<&str>> {
    cmd.split([';', '&', '|', '\n'])
        .map(|s| {
            s.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '(' | ')' | '`'))
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .collect()
}

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `runner … name` inside one simple command: `make -C . cluster-up`, `just chaos`,
/// `cargo xtask up`, `cargo run -p xtask -- up`.
fn runs(words: &[&str], runners: &[&str], name: &str) -> bool {
    words
        .iter()
        .position(|w| runners.contains(&base(w)))
        .is_some_and(|at| words[at + 1..].contains(&name))
}

fn uses(item: &ToolboxItem, words: &[&str]) -> bool {
    let plain = |w: &str| w.strip_prefix("./").unwrap_or(w).to_string();
    let path = &item.path;
    match item.kind {
        ItemKind::MakeTarget => runs(words, &["make", "gmake"], &item.name),
        ItemKind::JustRecipe => runs(words, &["just"], &item.name),
        ItemKind::XtaskCommand => runs(words, &["xtask"], &item.name),
        ItemKind::Script => words
            .iter()
            .map(|w| plain(w))
            .any(|w| w == *path || w.ends_with(&format!("/{path}"))),
        // `go run ./tools/loadgen`, `tools/loadgen/run.sh`, `--manifest-path tools/loadgen/…`.
        ItemKind::Tool => words.iter().map(|w| plain(w)).any(|w| {
            let w = w.trim_end_matches('/');
            w == *path || w.ends_with(&format!("/{path}")) || w.contains(&format!("{path}/"))
        }),
        ItemKind::Folder => words
            .iter()
            .map(|w| plain(w))
            .any(|w| w.starts_with(&format!("{path}/")) || w.contains(&format!("/{path}/"))),
        ItemKind::CiWorkflow | ItemKind::Doc => false,
    }
}

/// The discovered items that any of `binding_commands` invokes (or, for folders,
/// runs something from), in discovery order.
pub fn bindings_using<'t>(
    toolbox: &'t Toolbox,
    binding_commands: &[String],
) -> Vec<&'t ToolboxItem> {
    let parsed: Vec<Vec<&str>> = binding_commands
        .iter()
        .flat_map(|c| simple_commands(c))
        .collect();
    toolbox
        .items
        .iter()
        .filter(|item| parsed.iter().any(|words| uses(item, words)))
        .collect()
}

/// Roles whose drivers a binding should reuse rather than re-implement.
const DRIVER_ROLES: &[Role] = &[Role::ClusterUp, Role::Chaos, Role::Workload];

fn cite(item: &ToolboxItem) -> String {
    match item.line {
        Some(line) => format!("{}:{line} {}", item.path, item.name),
        None => format!("{} {}", item.path, item.name),
    }
}

/// Warnings for a binding (of `scenario`, defined at `line`) whose command calls a
/// cluster / fault / workload tool directly (`docker compose up`, `iptables`,
/// `tc qdisc` …) while a discovered target, recipe, xtask command or script of that
/// role already runs the same tool, and the binding uses no discovered item of that
/// role. One warning per command, naming every such item.
pub fn reimplemented(
    toolbox: &Toolbox,
    scenario: &str,
    binding: &Binding,
    line: usize,
) -> Vec<Problem> {
    let mut commands = Vec::new();
    labelled(binding, "", &mut commands);
    let all: Vec<String> = commands.iter().map(|(_, c)| c.clone()).collect();
    let used: Vec<Role> = bindings_using(toolbox, &all)
        .iter()
        .map(|i| i.role)
        .collect();
    let drivers: Vec<&ToolboxItem> = toolbox
        .items
        .iter()
        .filter(|i| {
            DRIVER_ROLES.contains(&i.role)
                && !used.contains(&i.role)
                && matches!(
                    i.kind,
                    ItemKind::MakeTarget
                        | ItemKind::JustRecipe
                        | ItemKind::XtaskCommand
                        | ItemKind::Script
                        | ItemKind::Tool
                )
        })
        .collect();
    let mut out = Vec::new();
    for (field, cmd) in commands {
        let tools = classify::tools(&cmd);
        let same: Vec<&ToolboxItem> = drivers
            .iter()
            .copied()
            .filter(|i| i.tools.iter().any(|t| tools.contains(t)))
            .collect();
        if same.is_empty() {
            continue;
        }
        let shared: Vec<&str> = tools
            .iter()
            .filter(|t| same.iter().any(|i| i.tools.contains(t)))
            .map(String::as_str)
            .collect();
        let cited: Vec<String> = same.iter().map(|i| cite(i)).collect();
        out.push(Problem {
            line,
            column: 0,
            file: None,
            scenario: Some(scenario.to_string()),
            field: field.clone(),
            message: format!(
                "`{field}` runs {} directly, but the repository already does this in {}; \
                 run that instead of re-implementing it",
                shared.join(", "),
                cited.join(", ")
            ),
            severity: Severity::Warning,
        });
    }
    out
}
