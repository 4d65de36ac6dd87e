//! How the TUI opens the files a journal names (a command's logs, a workload's
//! history, the staged diff) and the few a replay reads of a session (its journal,
//! inputs and report): never through a symlink as the last component, never blocking
//! on a fifo (`O_NONBLOCK`, cleared once the file is known to be a regular one), a
//! regular file only, and every read capped by its caller.
//!
//! A replay ([`Rebase`]) trusts no path its journal names: one under the session
//! directory the journal recorded is read under the directory being replayed (a
//! copied or moved session shows its own files, never the original's), each
//! directory on the way opened without following a symlink; any other is refused.
//! (`crate::untrusted` adds an ownership rule for the run's 1777 artifacts
//! directories, meant for the run that made them; a replay may be another user's
//! look at a finished session, so only its open rules apply here.)

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use crate::session::event::Event;
use crate::session::journal::Record;

/// The most of a session's journal a replay reads: larger is refused.
pub const JOURNAL_CAP: u64 = 1 << 30;
/// The most of a session's report or saved input a replay reads: larger is refused.
pub const TEXT_CAP: u64 = 16 << 20;

fn file_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC
}

/// `fd` as a file when it is a regular one, in blocking mode again.
fn regular(fd: OwnedFd) -> std::io::Result<File> {
    let file = File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(OFlag::O_RDONLY))?;
    Ok(file)
}

/// Opens `path` for reading: not through a symlink as its last component, not
/// blocking on a fifo, a regular file only.
pub fn open(path: &Path) -> std::io::Result<File> {
    regular(nix::fcntl::open(path, file_flags(), Mode::empty())?)
}

/// Opens `rel` (plain names only) beneath the directory `root`, not following a
/// symlink anywhere on the way: each directory is opened from the one before it.
pub fn open_beneath(root: &Path, rel: &Path) -> std::io::Result<File> {
    let names: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter(|c| *c != Component::CurDir)
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(std::io::Error::other(format!(
                "{} leaves the session directory",
                rel.display()
            ))),
        })
        .collect::<Result<_, _>>()?;
    let Some((last, dirs)) = names.split_last() else {
        return Err(std::io::Error::other("not a file"));
    };
    let dir_flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut dir = nix::fcntl::open(root, dir_flags, Mode::empty())?;
    for name in dirs {
        dir = nix::fcntl::openat(&dir, *name, dir_flags | OFlag::O_NOFOLLOW, Mode::empty())?;
    }
    regular(nix::fcntl::openat(
        &dir,
        *last,
        file_flags(),
        Mode::empty(),
    )?)
}

/// At most `limit` bytes of `file`; a longer file is refused, not cut.
pub fn read_capped(file: File, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB: not read",
            limit >> 20
        )));
    }
    Ok(bytes)
}

/// `path` read as text ([`open`], [`read_capped`]).
pub fn read_text(path: &Path, limit: u64) -> std::io::Result<String> {
    let bytes = read_capped(open(path)?, limit)?;
    String::from_utf8(bytes).map_err(std::io::Error::other)
}

/// Where a replay reads the files its journal names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rebase {
    /// The session directory being replayed.
    pub shown: PathBuf,
    /// Where the journal says the session was when it was written (started,
    /// resumed), longest first.
    pub recorded: Vec<PathBuf>,
}

impl Rebase {
    /// The replay of `shown`, whose journal holds `records`.
    pub fn of(shown: &Path, records: &[Record]) -> Rebase {
        let mut recorded: Vec<PathBuf> = records
            .iter()
            .filter_map(|r| match &r.event {
                Event::SessionStarted(s) => Some(s.session.clone()),
                Event::SessionResumed(s) => Some(s.session.clone()),
                Event::OutcomeSession(o) => o.outcome.as_ref().map(|o| o.session_dir.clone()),
                _ => None,
            })
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect();
        recorded.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        recorded.dedup();
        Rebase {
            shown: shown.to_path_buf(),
            recorded,
        }
    }

    /// `journaled` under the replayed directory, or why it is not read: only a path
    /// under a recorded session directory is, made of plain names.
    pub fn place(&self, journaled: &Path) -> Result<PathBuf, String> {
        let outside = || {
            crate::sanitize::line(&format!(
                "outside the session directory: {}",
                journaled.display()
            ))
        };
        let rel = self
            .recorded
            .iter()
            .find_map(|dir| journaled.strip_prefix(dir).ok())
            .ok_or_else(outside)?;
        let plain = rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !plain || rel.as_os_str().is_empty() {
            return Err(outside());
        }
        Ok(self.shown.join(rel))
    }

    /// Opens `placed` (from [`Rebase::place`]) beneath the replayed directory.
    pub fn open(&self, placed: &Path) -> std::io::Result<File> {
        let rel = placed
            .strip_prefix(&self.shown)
            .map_err(|_| std::io::Error::other("outside the session directory: not read"))?;
        open_beneath(&self.shown, rel)
    }
}

/// Opens `path` as placed for `rebase` (a replay's), or as it is.
pub fn open_placed(rebase: Option<&Rebase>, path: &Path) -> std::io::Result<File> {
    match rebase {
        Some(rebase) => rebase.open(path),
        None => open(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rebase(shown: &Path, recorded: &str) -> Rebase {
        Rebase {
            shown: shown.to_path_buf(),
            recorded: vec![PathBuf::from(recorded)],
        }
    }

    #[test]
    fn a_journaled_path_is_read_under_the_replayed_directory_or_refused() {
        let r = rebase(Path::new("/copy"), "/old/s1");
        assert_eq!(
            r.place(Path::new("/old/s1/logs/D2/seed-1/n3.stderr.log")),
            Ok(PathBuf::from("/copy/logs/D2/seed-1/n3.stderr.log"))
        );
        for refused in [
            "/etc/shadow",
            "/old/s1/../s2/logs/x.log",
            "/old/s1",
            "/old/s10/logs/x.log",
            "logs/x.log",
        ] {
            let why = r.place(Path::new(refused)).expect_err(refused);
            assert!(why.contains("outside the session directory"), "{why}");
        }
    }

    #[test]
    fn symlinks_fifos_and_other_files_are_not_opened() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("logs/D2")).expect("dirs");
        std::fs::write(root.join("logs/D2/n1.log"), "ok\n").expect("log");
        std::fs::write(root.join("secret"), "secret\n").expect("secret");
        std::os::unix::fs::symlink(root.join("secret"), root.join("logs/D2/n2.log"))
            .expect("symlink");
        std::os::unix::fs::symlink(root.join("logs/D2"), root.join("logs/D3")).expect("dirlink");
        nix::unistd::mkfifo(&root.join("logs/D2/n3.log"), Mode::S_IRUSR | Mode::S_IWUSR)
            .expect("fifo");
        let read = |rel: &str| {
            open_beneath(root, Path::new(rel))
                .and_then(|f| read_capped(f, 1024))
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        assert_eq!(read("logs/D2/n1.log").expect("a regular log"), "ok\n");
        assert!(read("logs/D2/n2.log").is_err(), "a symlinked log");
        assert!(
            read("logs/D3/n1.log").is_err(),
            "through a symlinked directory"
        );
        // Returns at once (O_NONBLOCK), refused as not a regular file.
        let fifo = read("logs/D2/n3.log").expect_err("a fifo");
        assert!(fifo.to_string().contains("not a regular file"), "{fifo}");
        assert!(read("logs/D2").is_err(), "a directory");
        assert!(read("logs/../secret").is_err(), "a path leaving the root");
        assert!(
            open(&root.join("logs/D2/n3.log")).is_err(),
            "a fifo by path"
        );
        assert!(
            open(&root.join("logs/D2/n2.log")).is_err(),
            "a symlink by path"
        );
        // Capped: larger is refused.
        let big = open(&root.join("secret")).expect("opens");
        assert!(read_capped(big, 3).is_err());
    }
}
