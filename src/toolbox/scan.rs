//! The walk over a repository: which folders and files are looked at, and how each
//! becomes items.

use std::path::Path;

use super::recipes::{Recipe, just_recipes, make_targets};
use super::{ItemKind, Role, ToolboxItem, classify, xtask};

/// Folders reported whenever they exist.
const FOLDERS: &[&str] = &[
    "tools",
    "scripts",
    "bin",
    "tests/integration",
    "tests/stability",
    "tests/chaos",
    "docs/runbooks",
    "docs/testing",
];
/// Folders whose Markdown files are each reported as a document.
const DOC_FOLDERS: &[&str] = &["docs/runbooks", "docs/testing"];
/// Single documents reported whenever they exist.
const DOCS: &[&str] = &["docs/stability-test-plan.md"];
/// Folders whose scripts are classified.
const SCRIPT_FOLDERS: &[&str] = &["scripts", "tools", "bin"];
/// Files that make a sub-folder of a script folder one program of its own.
const TOOL_MARKERS: &[&str] = &[
    "main.go",
    "main.rs",
    "Cargo.toml",
    "go.mod",
    "package.json",
    "__main__.py",
];
/// Where such a program's leading comments are read from, first found wins.
const ENTRY_FILES: &[&str] = &[
    "main.go",
    "main.rs",
    "src/main.rs",
    "__main__.py",
    "index.js",
];
const MAKEFILES: &[&str] = &["GNUmakefile", "makefile", "Makefile"];
const JUSTFILES: &[&str] = &["justfile", "Justfile", ".justfile"];
/// Single CI files; `.github/workflows/` and `.buildkite/` are listed.
const CI_FILES: &[&str] = &[".gitlab-ci.yml", ".circleci/config.yml", "Jenkinsfile"];
const CI_FOLDERS: &[&str] = &[".github/workflows", ".buildkite"];
/// Leading lines of a script searched for descriptive comments.
const HEAD_LINES: usize = 15;
const MAX_EVIDENCE: usize = 200;

pub(super) struct Scan<'a> {
    root: &'a Path,
    pub items: Vec<ToolboxItem>,
    pub skipped: Vec<String>,
}

/// Trimmed, sanitized and bounded evidence text.
fn evidence(text: &str) -> String {
    let clean = crate::sanitize::line(text.trim());
    match clean.char_indices().nth(MAX_EVIDENCE) {
        Some((cut, _)) => format!("{}…", &clean[..cut]),
        None => clean,
    }
}

fn item(path: &str, line: Option<usize>, kind: ItemKind, role: Role, name: &str) -> ToolboxItem {
    ToolboxItem {
        path: path.to_string(),
        line,
        kind,
        role,
        name: name.to_string(),
        evidence: String::new(),
        tools: Vec::new(),
    }
}

/// The role of a recipe: by its name, else by the first body line that suggests one;
/// with the evidence line (definition or body line).
fn recipe_role(r: &Recipe) -> Option<(Role, String)> {
    if let Some(role) = classify::by_name(&r.name) {
        return Some((role, r.text.clone()));
    }
    r.body
        .iter()
        .find_map(|(_, l)| classify::by_text(l).map(|role| (role, l.clone())))
}

impl<'a> Scan<'a> {
    pub fn new(root: &'a Path) -> Self {
        Scan {
            root,
            items: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// The text of a regular file (lossy UTF-8); `None` if absent, a note if unreadable.
    fn read(&mut self, rel: &str) -> Option<String> {
        let path = self.root.join(rel);
        if !path.is_file() {
            return None;
        }
        match std::fs::read(&path) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) => {
                self.skipped.push(format!("{rel}: {e}"));
                None
            }
        }
    }

    /// File names directly under `rel`, sorted; a note if the folder is unreadable.
    fn list(&mut self, rel: &str) -> Vec<String> {
        let path = self.root.join(rel);
        if !path.is_dir() {
            return Vec::new();
        }
        let entries = match std::fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(e) => {
                self.skipped.push(format!("{rel}/: {e}"));
                return Vec::new();
            }
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    pub fn folders(&mut self) {
        for &rel in FOLDERS {
            if self.root.join(rel).is_dir() {
                let role = classify::by_name(rel).unwrap_or(Role::Other);
                let mut it = item(rel, None, ItemKind::Folder, role, rel);
                it.evidence = format!("{rel}/ exists");
                self.items.push(it);
            }
        }
        let mut docs: Vec<String> = DOCS.iter().map(|d| d.to_string()).collect();
        for &folder in DOC_FOLDERS {
            for name in self.list(folder) {
                if name.ends_with(".md") {
                    docs.push(format!("{folder}/{name}"));
                }
            }
        }
        for rel in docs {
            let Some(text) = self.read(&rel) else {
                continue;
            };
            let heading = text.lines().enumerate().find(|(_, l)| l.starts_with('#'));
            let name = rel.rsplit('/').next().unwrap_or(&rel).to_string();
            let role = classify::by_name(&name)
                .or_else(|| heading.and_then(|(_, h)| classify::by_text(h)))
                .unwrap_or(Role::Other);
            let mut it = item(
                &rel,
                heading.map(|(i, _)| i + 1),
                ItemKind::Doc,
                role,
                &name,
            );
            it.evidence = evidence(heading.map_or(name.as_str(), |(_, h)| h));
            self.items.push(it);
        }
    }

    /// `.sh` / `.py` or executable files directly under the script folders, kept when
    /// their name or leading comments suggest a role.
    pub fn scripts(&mut self) {
        for &folder in SCRIPT_FOLDERS {
            for name in self.list(folder) {
                let rel = format!("{folder}/{name}");
                if !(name.ends_with(".sh") || name.ends_with(".py") || self.executable(&rel)) {
                    continue;
                }
                let Some(text) = self.read(&rel) else {
                    continue;
                };
                let comments: Vec<(usize, &str)> = text
                    .lines()
                    .take(HEAD_LINES)
                    .enumerate()
                    .filter(|(_, l)| l.starts_with('#') && !l.starts_with("#!"))
                    .map(|(i, l)| (i + 1, l.trim_start_matches('#').trim()))
                    .filter(|(_, l)| !l.is_empty())
                    .collect();
                let by_comment = comments
                    .iter()
                    .find_map(|&(n, l)| classify::by_text(l).map(|role| (role, n, l)));
                let (role, line, why) = match (classify::by_name(&name), by_comment) {
                    // Named for a role: cite the comment that agrees, else the first one.
                    (Some(role), _) => match comments
                        .iter()
                        .find(|(_, l)| classify::by_text(l) == Some(role))
                        .or(comments.first())
                    {
                        Some(&(n, l)) => (role, Some(n), l),
                        None => (role, None, name.as_str()),
                    },
                    (None, Some((role, n, l))) => (role, Some(n), l),
                    (None, None) => continue,
                };
                let mut it = item(&rel, line, ItemKind::Script, role, &name);
                it.evidence = evidence(why);
                it.tools = classify::tools(&text);
                self.items.push(it);
            }
        }
    }

    /// Sub-folder names directly under `rel` (hidden ones left out), sorted.
    fn list_dirs(&mut self, rel: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.root.join(rel)) else {
            // An unreadable folder is noted once, by `list`.
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        names
    }

    /// One level of sub-folders of the script folders: a folder holding a program
    /// (`main.go`, `main.rs`, `Cargo.toml`, `go.mod`, `package.json`, `__main__.py`) is
    /// one tool named for the folder — the usual shape of a Go or Rust load generator.
    /// Its role comes from the folder name, else from the leading comments of its
    /// entry file (or the `description` of its `package.json`).
    pub fn tools(&mut self) {
        for &folder in SCRIPT_FOLDERS {
            for name in self.list_dirs(folder) {
                let rel = format!("{folder}/{name}");
                let Some(marker) = TOOL_MARKERS
                    .iter()
                    .find(|m| self.root.join(&rel).join(m).is_file())
                else {
                    continue;
                };
                let entry = ENTRY_FILES
                    .iter()
                    .map(|e| format!("{rel}/{e}"))
                    .find_map(|e| self.read(&e).map(|text| (e, text)));
                let comments: Vec<(usize, String)> = entry
                    .as_ref()
                    .map(|(_, text)| {
                        text.lines()
                            .take(HEAD_LINES)
                            .enumerate()
                            .filter(|(_, l)| {
                                let l = l.trim_start();
                                (l.starts_with("//") || l.starts_with('#')) && !l.starts_with("#!")
                            })
                            .map(|(i, l)| {
                                (
                                    i + 1,
                                    l.trim_start_matches(['/', '!', '#']).trim().to_string(),
                                )
                            })
                            .filter(|(_, l)| !l.is_empty())
                            .collect()
                    })
                    .unwrap_or_default();
                let description = self
                    .read(&format!("{rel}/package.json"))
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                    .and_then(|v| v["description"].as_str().map(str::to_string));
                let by_text = comments
                    .iter()
                    .find_map(|(n, l)| classify::by_text(l).map(|role| (role, Some(*n), l.clone())))
                    .or_else(|| {
                        let d = description.as_deref()?;
                        classify::by_text(d).map(|role| (role, None, d.to_string()))
                    });
                let (role, line, why) = match (classify::by_name(&name), by_text) {
                    (Some(role), _) => (role, None, format!("{rel}/{marker}")),
                    (None, Some(found)) => found,
                    (None, None) => continue,
                };
                // The line cited is in the entry file; the item's path is the folder.
                let cited = match (&entry, line) {
                    (Some((file, _)), Some(n)) => format!("{file}:{n}: {why}"),
                    _ => why,
                };
                let mut it = item(&rel, None, ItemKind::Tool, role, &name);
                it.evidence = evidence(&cited);
                it.tools = entry
                    .as_ref()
                    .map(|(_, text)| classify::tools(text))
                    .unwrap_or_default();
                self.items.push(it);
            }
        }
    }

    #[cfg(unix)]
    fn executable(&self, rel: &str) -> bool {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(self.root.join(rel)).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
    }

    #[cfg(not(unix))]
    fn executable(&self, _rel: &str) -> bool {
        false
    }

    fn recipes(&mut self, rel: &str, kind: ItemKind, found: Vec<Recipe>) {
        for r in found {
            let Some((role, why)) = recipe_role(&r) else {
                continue;
            };
            let body: Vec<&str> = r.body.iter().map(|(_, l)| l.as_str()).collect();
            let mut it = item(rel, Some(r.line), kind, role, &r.name);
            it.evidence = evidence(&why);
            it.tools = classify::tools(&body.join("\n"));
            self.items.push(it);
        }
    }

    pub fn makefiles(&mut self) {
        for &rel in MAKEFILES {
            if let Some(text) = self.read(rel) {
                self.recipes(rel, ItemKind::MakeTarget, make_targets(&text));
            }
        }
    }

    pub fn justfiles(&mut self) {
        for &rel in JUSTFILES {
            if let Some(text) = self.read(rel) {
                self.recipes(rel, ItemKind::JustRecipe, just_recipes(&text));
            }
        }
    }

    pub fn xtask(&mut self) {
        let rel = "xtask/src/main.rs";
        let Some(text) = self.read(rel) else { return };
        let lines: Vec<&str> = text.lines().collect();
        for (n, name) in xtask::commands(&text) {
            let Some(role) = classify::by_name(&name) else {
                continue;
            };
            let mut it = item(rel, Some(n), ItemKind::XtaskCommand, role, &name);
            it.evidence = evidence(lines.get(n - 1).copied().unwrap_or_default());
            self.items.push(it);
        }
    }

    /// One item per CI line that mentions cluster or fault tooling.
    pub fn ci(&mut self) {
        let mut files: Vec<String> = Vec::new();
        for &folder in CI_FOLDERS {
            for name in self.list(folder) {
                if name.ends_with(".yml") || name.ends_with(".yaml") {
                    files.push(format!("{folder}/{name}"));
                }
            }
        }
        files.extend(CI_FILES.iter().map(|f| f.to_string()));
        for rel in files {
            let Some(text) = self.read(&rel) else {
                continue;
            };
            let name = rel.rsplit('/').next().unwrap_or(&rel).to_string();
            for (i, line) in text.lines().enumerate() {
                if let Some(role) = classify::ci_mention(line) {
                    let mut it = item(&rel, Some(i + 1), ItemKind::CiWorkflow, role, &name);
                    it.evidence = evidence(line);
                    it.tools = classify::tools(line);
                    self.items.push(it);
                }
            }
        }
    }
}
