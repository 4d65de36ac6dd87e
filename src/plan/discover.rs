//! Finding the plans a SUT holds when `faultline run` names none: every markdown file
//! under `docs/testing-plans/`, and any other markdown file whose first heading is
//! titled "Test Plan:".

use std::path::{Path, PathBuf};

/// Folders a plan never lives in (build output, dependencies, past sessions).
const SKIP: [&str; 6] = [
    ".git",
    "target",
    "node_modules",
    "vendor",
    "test-sessions",
    ".cache",
];

/// How deep the title scan goes below the SUT root.
const MAX_DEPTH: usize = 5;

/// One plan found, with the title its first heading gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    pub title: String,
}

/// The first `# ` heading of a markdown text.
fn first_heading(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with("# "))
        .map(|l| l[2..].trim())
}

fn is_markdown(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"))
}

/// Plans under `sut`, sorted by path: the `docs/testing-plans/` ones whatever their
/// title, elsewhere only files titled "Test Plan:". Unreadable folders are skipped.
pub fn plans(sut: &Path) -> Vec<Found> {
    let mut out = Vec::new();
    let mut stack = vec![(sut.to_path_buf(), 0usize)];
    let plans_dir = sut.join("docs").join("testing-plans");
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if kind.is_dir() {
                let skip = SKIP.iter().any(|s| name == *s);
                if !skip && depth < MAX_DEPTH {
                    stack.push((path, depth + 1));
                }
                continue;
            }
            if !kind.is_file() || !is_markdown(&path) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let title = first_heading(&text).unwrap_or_default().to_string();
            let titled = title
                .get(..10)
                .is_some_and(|t| t.eq_ignore_ascii_case("test plan:"));
            if titled || path.starts_with(&plans_dir) {
                out.push(Found { path, title });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_plans_folder_and_titled_files_but_not_other_markdown() {
        let root = tempfile::tempdir().expect("tempdir");
        let write = |rel: &str, text: &str| {
            let path = root.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write("docs/testing-plans/raft.md", "# Raft plan\n");
        write("notes/kv.md", "intro\n# Test Plan: KV store\n");
        write("README.md", "# Readme\n");
        write("target/doc/x.md", "# Test Plan: built copy\n");
        let found = plans(root.path());
        let names: Vec<String> = found
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix(root.path())
                    .expect("under root")
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["docs/testing-plans/raft.md", "notes/kv.md"]);
        assert_eq!(found[1].title, "Test Plan: KV store");
    }
}
