//! The SUT's own tools around an authored file: its formatter for the language, the
//! nearest existing test beside it, and git staging (never a commit).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The formatter for a file extension: program and arguments before the path.
fn formatter(ext: &str) -> Option<(&'static str, &'static [&'static str])> {
    Some(match ext {
        "rs" => ("rustfmt", &["--edition", "2024"]),
        "go" => ("gofmt", &["-w"]),
        "py" => ("black", &["-q"]),
        "js" | "jsx" | "ts" | "tsx" => ("prettier", &["--write"]),
        "sh" | "bash" => ("shfmt", &["-w"]),
        "clj" | "cljs" | "cljc" => ("cljfmt", &["fix"]),
        _ => return None,
    })
}

/// Runs the language's formatter over `path`; says what happened either way.
pub fn format(path: &Path) -> String {
    let ext = path
        .extension()
        .map_or_else(String::new, |e| e.to_string_lossy().into_owned());
    let Some((program, args)) = formatter(&ext) else {
        return format!("no formatter known for `.{ext}` files; left as written");
    };
    if which::which(program).is_err() {
        return format!("{program} is not installed; left as written");
    }
    match Command::new(program).args(args).arg(path).output() {
        Ok(out) if out.status.success() => format!("formatted with {program}"),
        Ok(out) => format!(
            "{program} refused it ({}); left as written",
            crate::sanitize::line(String::from_utf8_lossy(&out.stderr).trim())
        ),
        Err(e) => format!("{program} could not start ({e}); left as written"),
    }
}

/// Another file with the same extension in the same folder (first by name).
pub fn nearest_sibling(path: &Path) -> Option<PathBuf> {
    let ext = path.extension()?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(path.parent()?)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p != path && p.extension() == Some(ext) && p.is_file())
        .filter(|p| !p.to_string_lossy().contains(".new."))
        .collect();
    found.sort();
    found.into_iter().next()
}

/// `git add` of exactly `paths`, when `sut` is a git work tree; nothing is committed.
pub fn stage(sut: &Path, paths: &[&Path]) {
    if paths.is_empty() {
        return;
    }
    let inside = Command::new("git")
        .arg("-C")
        .arg(sut)
        .args(["rev-parse", "--is-inside-work-tree"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !inside {
        return;
    }
    let status = Command::new("git")
        .arg("-C")
        .arg(sut)
        .args(["add", "--"])
        .args(paths)
        .status();
    if !status.is_ok_and(|s| s.success()) {
        tracing::warn!("git add of the authored files failed in {}", sut.display());
    }
}

/// What is staged for `paths`, as `git diff --cached` shows it (empty outside git).
pub fn staged_diff(sut: &Path, paths: &[&Path]) -> String {
    Command::new("git")
        .arg("-C")
        .arg(sut)
        .args(["diff", "--cached", "--"])
        .args(paths)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}
