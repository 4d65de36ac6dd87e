//! The session directory (method §2.4, policy §8):
//! `<root>/<plan_slug>/<YYYYMMDDTHHMMSSZ>/` with `logs/`, `metrics/`, `artifacts/`,
//! `findings/`, created as soon as a plan is accepted.

use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::{DateTime, Utc};

/// Sub-directories every session has.
pub const SUBDIRS: [&str; 4] = ["logs", "metrics", "artifacts", "findings"];

#[derive(Debug, Clone)]
pub struct SessionDir {
    pub path: PathBuf,
}

impl SessionDir {
    pub fn findings_file(&self, scenario_or_arm: &str) -> PathBuf {
        self.path
            .join("findings")
            .join(format!("{}.md", file_stem_for_id(scenario_or_arm)))
    }
}

/// `S5/api` → `S5-api`: arm ids become file names.
pub fn file_stem_for_id(id: &str) -> String {
    id.replace('/', "-")
}

/// A plan slug made safe as one path component.
pub fn safe_slug(slug: &str) -> String {
    let cleaned: String = slug
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let cleaned = cleaned.trim_matches(|c| c == '-' || c == '.').to_string();
    if cleaned.is_empty() {
        "plan".to_string()
    } else {
        cleaned
    }
}

/// Creates a fresh session directory under `root`. Two sessions started in the same
/// second get `…Z-2`, `…Z-3`: an existing session is never reused.
pub fn create(root: &Path, slug: &str, now: DateTime<Utc>) -> std::io::Result<SessionDir> {
    let parent = root.join(safe_slug(slug));
    std::fs::create_dir_all(&parent)?;
    let stamp = now.format("%Y%m%dT%H%M%SZ").to_string();
    let mut attempt = 1;
    let path = loop {
        let name = if attempt == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{attempt}")
        };
        let candidate = parent.join(name);
        match std::fs::create_dir(&candidate) {
            Ok(()) => break candidate,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    for sub in SUBDIRS {
        std::fs::create_dir(path.join(sub))?;
    }
    Ok(SessionDir { path })
}

/// The commit under test and whether the work tree had uncommitted changes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Revision {
    pub commit: String,
    pub dirty: bool,
}

/// Reads the SUT's git revision; `None` when `dir` is not in a git work tree or git is
/// absent (the session log then says so).
pub fn sut_revision(dir: &Path) -> Option<Revision> {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let commit = git(&["rev-parse", "HEAD"])?.trim().to_string();
    let status = git(&["status", "--porcelain"])?;
    Some(Revision {
        commit,
        dirty: !status.trim().is_empty(),
    })
}
