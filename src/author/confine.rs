//! Author mode writes only to declared targets inside the SUT root: never to an
//! absolute path, never through `..`, never through a symlink — whether the target
//! itself is one or a directory on the way points outside the root.

use std::path::{Component, Path, PathBuf};

/// Why a declared target is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("`{0}` is absolute; targets are relative to the SUT root")]
    Absolute(String),
    #[error("`{0}` climbs out with `..`")]
    Climbs(String),
    #[error("`{0}` is a symlink; author mode writes only regular files")]
    SymlinkTarget(String),
    #[error("`{path}` passes through `{via}`, which resolves outside the SUT root")]
    Escapes { path: String, via: String },
    #[error("`{0}` is empty")]
    Empty(String),
    #[error("cannot resolve `{path}`: {why}")]
    Unresolvable { path: String, why: String },
}

/// The absolute path `declared` may be written at, or why it may not.
pub fn confine(root: &Path, declared: &str) -> Result<PathBuf, Refused> {
    let relative = Path::new(declared);
    if declared.trim().is_empty() {
        return Err(Refused::Empty(declared.to_string()));
    }
    if relative.is_absolute() {
        return Err(Refused::Absolute(declared.to_string()));
    }
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(Refused::Climbs(declared.to_string()));
    }
    let unresolvable = |e: std::io::Error| Refused::Unresolvable {
        path: declared.to_string(),
        why: e.to_string(),
    };
    let root = root.canonicalize().map_err(unresolvable)?;
    let target = root.join(relative);
    if std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Refused::SymlinkTarget(declared.to_string()));
    }
    // Every existing directory on the way must resolve inside the root.
    let mut dir = root.clone();
    for part in relative.parent().into_iter().flat_map(Path::components) {
        dir.push(part);
        match dir.canonicalize() {
            Ok(real) if real.starts_with(&root) => {}
            Ok(_) => {
                return Err(Refused::Escapes {
                    path: declared.to_string(),
                    via: dir
                        .strip_prefix(&root)
                        .unwrap_or(&dir)
                        .display()
                        .to_string(),
                });
            }
            // Not there yet: it will be created inside the root.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(unresolvable(e)),
        }
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_relative_paths_are_allowed_and_the_rest_refused() {
        let root = tempfile::tempdir().expect("tempdir");
        assert!(confine(root.path(), "tests/a_test.rs").is_ok());
        assert!(matches!(
            confine(root.path(), "/etc/x"),
            Err(Refused::Absolute(_))
        ));
        assert!(matches!(
            confine(root.path(), "tests/../../x"),
            Err(Refused::Climbs(_))
        ));
        assert!(matches!(confine(root.path(), " "), Err(Refused::Empty(_))));
    }
}
