//! The cap on what one seed leaves under its artifacts directory: a cluster's data
//! directories can reach gigabytes per seed, and a session runs many seeds.

use std::path::{Path, PathBuf};

use crate::session::event::{ArtifactsPruned, Pruned};

/// The cap when the binding sets none.
pub const DEFAULT_CAP: u64 = 1 << 30;

/// Bytes under `path` (files only; symlinks are not followed).
fn size_of(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| size_of(&e.path())).sum())
        .unwrap_or(0)
}

/// Removes the largest top-level entries of `dir` not in `keep` until what is left
/// fits under `cap`. `None` when it already fits.
pub fn prune(dir: &Path, cap: u64, keep: &[PathBuf]) -> Option<ArtifactsPruned> {
    let mut entries: Vec<(PathBuf, u64)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| {
            let path = e.path();
            let bytes = size_of(&path);
            (path, bytes)
        })
        .collect();
    let found: u64 = entries.iter().map(|e| e.1).sum();
    if found <= cap {
        return None;
    }
    entries.retain(|(path, _)| !keep.iter().any(|k| k == path));
    entries.sort_by_key(|e| std::cmp::Reverse(e.1));
    let mut left = found;
    let mut removed = Vec::new();
    for (path, bytes) in entries {
        if left <= cap {
            break;
        }
        let gone = if path.is_dir() && !path.is_symlink() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        if gone.is_ok() {
            left -= bytes;
            removed.push(Pruned {
                path: path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
                bytes,
            });
        }
    }
    Some(ArtifactsPruned {
        cap_bytes: cap,
        found_bytes: found,
        left_bytes: left,
        removed,
    })
}
