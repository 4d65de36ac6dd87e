//! Toolbox discovery (method §2 step 2): what a SUT repository already offers to run
//! clusters, workloads and faults, so faultline reuses it instead of reinventing it.
//! See `references/toolbox.md`.

mod classify;
mod recipes;
mod render;
mod scan;
mod usage;
mod xtask;

use std::path::Path;

use serde::Serialize;

pub use render::render_text;
pub use usage::{bindings_using, commands_of, reimplemented};

/// What kind of thing an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemKind {
    Folder,
    Script,
    /// A sub-folder of a script folder holding one program (`tools/loadgen/` with
    /// its `main.go`, `Cargo.toml` …), named for the folder.
    Tool,
    MakeTarget,
    JustRecipe,
    XtaskCommand,
    CiWorkflow,
    Doc,
}

/// What an item is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    ClusterUp,
    ClusterDown,
    Workload,
    /// Fault injection.
    Chaos,
    Smoke,
    Observability,
    Other,
}

/// One discovered driver, folder, document or CI line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ToolboxItem {
    /// Relative to the repository root.
    pub path: String,
    /// 1-based line of the definition (target, recipe, command, CI line, heading).
    pub line: Option<usize>,
    pub kind: ItemKind,
    pub role: Role,
    /// Target or recipe name, script file name, folder path, CI file name.
    pub name: String,
    /// The line that made us think so, trimmed and sanitized.
    pub evidence: String,
    /// Concrete tools the recipe or script invokes (`iptables`, `compose up` …);
    /// [`reimplemented`] compares a binding's commands against these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
}

/// Everything discovered under one repository root.
#[derive(Debug, Clone, Serialize)]
pub struct Toolbox {
    pub root: String,
    pub items: Vec<ToolboxItem>,
    /// Files that exist but could not be read, with the reason; discovery goes on.
    pub skipped: Vec<String>,
}

/// Discovery could not start.
#[derive(Debug, thiserror::Error)]
pub enum ToolboxError {
    #[error("toolbox discovery: {path}: not a directory")]
    NotADirectory { path: String },
    #[error("toolbox discovery: {path}: {source}")]
    Unreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Discovers the toolbox of the repository at `root`. Only a root that is not a
/// readable directory is an error; unreadable files land in [`Toolbox::skipped`].
pub fn discover(root: &Path) -> Result<Toolbox, ToolboxError> {
    let path = root.display().to_string();
    let meta = std::fs::metadata(root).map_err(|source| ToolboxError::Unreadable {
        path: path.clone(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(ToolboxError::NotADirectory { path });
    }
    let mut scan = scan::Scan::new(root);
    scan.folders();
    scan.scripts();
    scan.tools();
    scan.makefiles();
    scan.justfiles();
    scan.xtask();
    scan.ci();
    Ok(Toolbox {
        root: path,
        items: scan.items,
        skipped: scan.skipped,
    })
}
