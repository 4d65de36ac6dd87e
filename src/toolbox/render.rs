//! The "Toolbox discovered" table as text (JSON is the serde form of [`Toolbox`]).

use super::{ItemKind, Role, Toolbox};

fn role(r: Role) -> &'static str {
    match r {
        Role::ClusterUp => "cluster-up",
        Role::ClusterDown => "cluster-down",
        Role::Workload => "workload",
        Role::Chaos => "chaos",
        Role::Smoke => "smoke",
        Role::Observability => "observability",
        Role::Other => "other",
    }
}

fn kind(k: ItemKind) -> &'static str {
    match k {
        ItemKind::Folder => "folder",
        ItemKind::Script => "script",
        ItemKind::Tool => "tool",
        ItemKind::MakeTarget => "make-target",
        ItemKind::JustRecipe => "just-recipe",
        ItemKind::XtaskCommand => "xtask-command",
        ItemKind::CiWorkflow => "ci-workflow",
        ItemKind::Doc => "doc",
    }
}

/// One row per item: role, kind, name, `path:line`, evidence; then skipped files.
pub fn render_text(toolbox: &Toolbox) -> String {
    let mut out = format!("Toolbox discovered in {}\n", toolbox.root);
    if toolbox.items.is_empty() {
        out.push_str("(nothing found)\n");
    }
    let rows: Vec<[String; 5]> = toolbox
        .items
        .iter()
        .map(|i| {
            let at = i.line.map_or(i.path.clone(), |l| format!("{}:{l}", i.path));
            [
                role(i.role).into(),
                kind(i.kind).into(),
                i.name.clone(),
                at,
                i.evidence.clone(),
            ]
        })
        .collect();
    let header = ["ROLE", "KIND", "NAME", "WHERE", "EVIDENCE"].map(String::from);
    let mut widths = [0usize; 4];
    for row in rows.iter().chain(std::iter::once(&header)) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    if !rows.is_empty() {
        for row in std::iter::once(&header).chain(&rows) {
            let mut line = String::new();
            for (cell, w) in row.iter().zip(widths) {
                line.push_str(&format!("{cell:<w$}  "));
            }
            line.push_str(&row[4]);
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    for note in &toolbox.skipped {
        out.push_str(&format!("skipped: {note}\n"));
    }
    out
}
