//! The session directory (method §2.4, policy §8):
//! `<root>/<plan_slug>/<YYYYMMDDTHHMMSSZ>/` with `logs/`, `metrics/`, `artifacts/`,
//! `findings/`, created as soon as a plan is accepted: private from the first mkdir
//! (0700), then opened as [`super::roles::restrict`] says — 0711, the journal and
//! every directory but `artifacts/` the owner's and the listed users' only. What the
//! system under test writes in `artifacts/` is read through [`crate::untrusted`].

use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::{DateTime, Utc};

use crate::untrusted::open_dir_nofollow;

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
/// second get `…Z-2`, `…Z-3`: an existing session is never reused. Everything is made
/// 0700 at mkdir (so no umask opens a window); [`super::roles::restrict`] then opens
/// what it should. Directories above it that do not exist yet are made 0711 (listed
/// users and the system under test traverse them); existing ones are left as they are.
pub fn create(root: &Path, slug: &str, now: DateTime<Utc>) -> std::io::Result<SessionDir> {
    use std::os::unix::fs::DirBuilderExt;
    let parent = root.join(safe_slug(slug));
    if !parent.is_dir() {
        make_ancestors(&parent)?;
    }
    let stamp = now.format("%Y%m%dT%H%M%SZ").to_string();
    let mut attempt = 1;
    let private = || {
        let mut builder = std::fs::DirBuilder::new();
        builder.mode(0o700);
        builder
    };
    let path = loop {
        let name = if attempt == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{attempt}")
        };
        let candidate = parent.join(name);
        match private().create(&candidate) {
            Ok(()) => break candidate,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    for sub in SUBDIRS {
        private().create(path.join(sub))?;
    }
    Ok(SessionDir { path })
}

/// `dir` and the missing directories above it, each 0711 whatever the umask (set on
/// the descriptor of the directory just made, never through a symlink).
fn make_ancestors(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(up) = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty() && !p.is_dir())
    {
        make_ancestors(up)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        // Another session made it meanwhile: theirs to keep as it is.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(e),
    }
    let fd = open_dir_nofollow(dir)?;
    nix::sys::stat::fchmod(&fd, nix::sys::stat::Mode::from_bits_truncate(0o711))?;
    Ok(())
}

/// A per-seed artifacts directory the system under test writes in as any uid: made
/// (with what is missing above it, by faultline, in its own 0711 `artifacts/`) and set
/// 1777 through its descriptor: sticky, like /tmp, so no uid removes another's files.
/// Refused when it is a symlink or not faultline's.
pub fn make_shared(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let fd = open_dir_nofollow(dir)?;
    let owner = nix::sys::stat::fstat(&fd)?.st_uid;
    if owner != nix::unistd::geteuid().as_raw() {
        return Err(std::io::Error::other(format!(
            "{} is owned by uid {owner}, not by faultline",
            dir.display()
        )));
    }
    nix::sys::stat::fchmod(&fd, nix::sys::stat::Mode::from_bits_truncate(0o1777))?;
    Ok(())
}

/// `<dir>/<name>/`, owned by `uid`/`gid`: a `user:` service's own artifacts directory
/// inside the shared (1777) seed directory. Made with mkdirat and changed through its
/// O_NOFOLLOW descriptor; an existing one is taken only when it is that user's or
/// faultline's own (anyone may have made a name in a 1777 directory).
pub fn make_owned(dir: &Path, name: &str, uid: u32, gid: u32) -> std::io::Result<PathBuf> {
    use nix::fcntl::OFlag;
    use nix::sys::stat::Mode;
    let parent = open_dir_nofollow(dir)?;
    match nix::sys::stat::mkdirat(&parent, name, Mode::from_bits_truncate(0o700)) {
        Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
        Err(e) => return Err(e.into()),
    }
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = nix::fcntl::openat(&parent, name, flags, Mode::empty())?;
    let owner = nix::sys::stat::fstat(&fd)?.st_uid;
    if owner != uid && owner != nix::unistd::geteuid().as_raw() {
        return Err(std::io::Error::other(format!(
            "{}/{name} already exists, owned by uid {owner}",
            dir.display()
        )));
    }
    nix::unistd::fchown(
        &fd,
        Some(nix::unistd::Uid::from_raw(uid)),
        Some(nix::unistd::Gid::from_raw(gid)),
    )?;
    nix::sys::stat::fchmod(&fd, Mode::from_bits_truncate(0o755))?;
    Ok(dir.join(name))
}

/// Replaces `<dir>/<name>` with `bytes` where any uid may have made names (a seed's
/// artifacts directory): written to a fresh file (O_EXCL, O_NOFOLLOW) and renamed over
/// the name, so a symlink or someone else's file there is replaced, never written
/// through.
pub fn write_untrusted(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    use nix::fcntl::OFlag;
    use std::io::Write;
    let parent = open_dir_nofollow(dir)?;
    // Unpredictable: a name planted in advance would make the O_EXCL create fail.
    let tmp = format!(
        ".{name}.faultline-{}",
        super::runtime::random_hex().map_err(std::io::Error::other)?
    );
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mode = nix::sys::stat::Mode::from_bits_truncate(0o644);
    let fd = nix::fcntl::openat(&parent, tmp.as_str(), flags, mode)?;
    let written = std::fs::File::from(fd).write_all(bytes);
    let renamed = written.and_then(|()| {
        nix::fcntl::renameat(&parent, tmp.as_str(), &parent, name).map_err(std::io::Error::from)
    });
    if renamed.is_err() {
        let _ = nix::unistd::unlinkat(
            &parent,
            tmp.as_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    }
    renamed
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
