//! Replacing a document whole or not at all: every document faultline writes for
//! people and tools (the report, its HTML, `verdicts.json`, `junit.xml`, findings, the
//! session log, a session's saved request) goes through [`write`] (or [`write_with`],
//! for a document written as it is made), so a full disk or a crash mid-write leaves
//! the previous version, never a file cut short or empty.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to a new temporary file beside `path`, syncs it, renames it over
/// `path` and syncs the directory. The temporary file is created exclusively (never
/// through a link an attacker left in the directory) as a plain create would make it
/// (0666 less the umask, or what the directory's default ACL gives — a private
/// session directory's), then given `path`'s own mode if it exists. On any error it
/// is removed and `path` is as it was (the caller names `path` with the error).
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, |out| out.write_all(bytes))
}

/// [`write`] for a document made as it is written: `fill` writes it to the temporary
/// file (buffered), which replaces `path` only once `fill` returned `Ok` and the
/// bytes are synced. The whole document is never held in memory.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = temp_path(path)?;
    let result = replace(path, &tmp, fill);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn replace(
    path: &Path,
    tmp: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(tmp)?;
    let mut out = std::io::BufWriter::with_capacity(64 << 10, file);
    fill(&mut out)?;
    let file = out
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)?;
    if let Ok(old) = std::fs::metadata(path) {
        let mode = old.permissions().mode() & 0o7777;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    file.sync_all()?;
    drop(file);
    std::fs::rename(tmp, path)?;
    // The rename itself survives a crash only once the directory is synced.
    File::open(parent(path))?.sync_all()
}

/// `.<name>.<pid>-<n>.tmp` beside `path`: one per write of any process, so two writers
/// never share a temporary file.
fn temp_path(path: &Path) -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{}: not a file path", path.display()),
        )
    })?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Ok(parent(path).join(format!(
        ".{}.{}-{n}.tmp",
        name.to_string_lossy(),
        std::process::id()
    )))
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_keeps_the_mode_and_leaves_no_temp() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("verdicts.json");
        std::fs::write(&path, "old").expect("old");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("mode");
        write(&path, b"new").expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    #[test]
    fn a_failed_write_leaves_what_was_there_and_no_temp() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A directory where the file should go: the rename fails after the temp is made.
        let path = dir.path().join("report.md");
        std::fs::create_dir(&path).expect("dir");
        std::fs::write(path.join("inside"), "kept").expect("inside");
        write(&path, b"new").expect_err("refused");
        assert!(path.join("inside").exists());
        let left = std::fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(left, 1, "the temporary file was left behind");
    }

    #[test]
    fn a_writer_that_fails_part_way_leaves_the_old_document() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("session-log.md");
        std::fs::write(&path, "old").expect("old");
        let failed = write_with(&path, |out| {
            out.write_all(b"half of the new")?;
            Err(std::io::Error::other("the journal could not be read"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "old");
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1);
        write_with(&path, |out| {
            out.write_all(b"new, ")?;
            out.write_all(b"in two writes")
        })
        .expect("written");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "new, in two writes"
        );
    }
}
