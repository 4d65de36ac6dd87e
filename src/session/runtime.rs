//! The per-user runtime directory and its registry of running sessions, done as tmux
//! and OpenSSH do theirs: `<base>/faultline-<uid>/` (base `/tmp`, or
//! `FAULTLINE_RUNTIME_BASE`), created 0700 by faultline for the caller and refused
//! when it exists with another owner, wider permissions or as a symlink.
//!
//! Inside it, each running session has a slot `<short>.<random>/` (0700, plus a
//! read-and-traverse ACL entry for each listed user) holding the control socket
//! (mode 0600 from its birth: the socket's mode is set on the descriptor before
//! bind, never by path) and `session.json`. A listed user finds the sessions they
//! are on through `for-<their uid>/` (readable by them alone), whose entries name
//! the slots; the runtime directory itself lets listed users traverse, never list,
//! so nobody learns that a session they may not see exists. Every change is made
//! under a lock on the runtime directory and through descriptors opened with
//! `O_NOFOLLOW`.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg, OFlag};
use nix::sys::stat::Mode;
use serde::{Deserialize, Serialize};

/// Where the runtime directories live when not `/tmp` (tmux's `TMUX_TMPDIR`).
pub const ENV_BASE: &str = "FAULTLINE_RUNTIME_BASE";
/// The control socket's name inside a slot.
pub const SOCKET: &str = "control.sock";
const ENTRY: &str = "session.json";
const PREFIX: &str = "faultline-";
const INDEX: &str = "for-";
/// A registry entry is a few hundred bytes; anything much larger is not ours.
const ENTRY_MAX: u64 = 64 * 1024;
/// Longest socket path the kernel takes (`sun_path`, less its NUL).
const SUN_PATH_MAX: usize = 107;
/// Longest plan slug in a short name (the socket path must stay short).
const SLUG_MAX: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(
        "{path}: {why}; faultline refuses to use it (remove it if it is yours, or set {ENV_BASE} to a directory of your own)"
    )]
    Unsafe { path: PathBuf, why: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> RuntimeError + '_ {
    move |source| RuntimeError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The directory runtime directories are made in.
pub fn base() -> PathBuf {
    std::env::var_os(ENV_BASE)
        .filter(|b| !b.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
}

/// What a running session says of itself in its slot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Entry {
    /// The name `attach` / `stop` take: the plan's slug and a number.
    pub short: String,
    /// The session directory (absolute).
    pub session: String,
    pub plan: String,
    pub owner: String,
    pub owner_uid: u32,
    /// The server process, and when it started (clock ticks since boot): the two
    /// name one process even after pids are reused.
    pub pid: u32,
    pub pid_start: Option<u64>,
    pub started: String,
    /// The users listed on the session besides its owner.
    pub listed: Vec<String>,
}

impl Entry {
    /// Whether the server this entry names still runs.
    pub fn alive(&self) -> bool {
        let Ok(pid) = i32::try_from(self.pid) else {
            return false;
        };
        match (crate::exec::start_time(pid), self.pid_start) {
            (Some(now), Some(then)) => now == then,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

/// A runtime directory that passed the checks, held open.
pub struct RuntimeDir {
    pub path: PathBuf,
    pub uid: u32,
    fd: OwnedFd,
}

/// Opens `path` as a directory without following a symlink: as a path only (a
/// listed user may traverse another's directory without reading it), or readable
/// (to list or lock it).
fn open_dir(path: &Path, readable: bool) -> nix::Result<OwnedFd> {
    let how = if readable {
        OFlag::O_RDONLY
    } else {
        OFlag::O_PATH
    };
    nix::fcntl::open(
        path,
        how | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// Checks an opened directory: owned by `uid`, nobody else may write, nothing for
/// others (the group class bits are the ACL mask of the listed users' entries).
fn check_dir(fd: &OwnedFd, path: &Path, uid: u32) -> Result<(), RuntimeError> {
    let stat = nix::sys::stat::fstat(fd).map_err(|e| io(path)(e.into()))?;
    if stat.st_uid != uid {
        return Err(RuntimeError::Unsafe {
            path: path.to_path_buf(),
            why: format!(
                "owned by {} (uid {}), not by uid {uid}",
                crate::untrusted::user_name(stat.st_uid),
                stat.st_uid
            ),
        });
    }
    let mode = stat.st_mode & 0o7777;
    if mode & 0o7027 != 0 {
        return Err(RuntimeError::Unsafe {
            path: path.to_path_buf(),
            why: format!("mode {mode:04o}: others may read or write it (want 0700)"),
        });
    }
    // Group bits are the ACL mask of the traverse entries faultline adds for listed
    // users; without an ACL they are the group's own access.
    if mode & 0o070 != 0 && !has_named_entries(fd) {
        return Err(RuntimeError::Unsafe {
            path: path.to_path_buf(),
            why: format!("mode {mode:04o}: its group may enter it (want 0700)"),
        });
    }
    Ok(())
}

/// Whether the directory open as `fd` has an access ACL beyond its mode bits.
fn has_named_entries(fd: &OwnedFd) -> bool {
    let path = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
    exacl::getfacl(&path, Some(exacl::AclOption::ACCESS_ACL))
        .is_ok_and(|acl| acl.iter().any(|e| !e.name.is_empty()))
}

fn opened(path: &Path, uid: u32) -> Result<OwnedFd, RuntimeError> {
    let mine = uid == nix::unistd::getuid().as_raw();
    let fd = open_dir(path, mine).map_err(|e| match e {
        nix::errno::Errno::ELOOP | nix::errno::Errno::ENOTDIR => RuntimeError::Unsafe {
            path: path.to_path_buf(),
            why: "a symlink or not a directory".into(),
        },
        e => io(path)(e.into()),
    })?;
    check_dir(&fd, path, uid)?;
    Ok(fd)
}

impl RuntimeDir {
    /// Refused when the longest socket path a slot in here can have does not fit a
    /// socket address: the session could be started but never attached to.
    pub fn fits_sockets(self) -> Result<RuntimeDir, RuntimeError> {
        // `<dir>/<slug>-<n>.<16 hex>/control.sock`, n up to four digits.
        let longest = self.path.as_os_str().len() + 1 + SLUG_MAX + 5 + 1 + 16 + 1 + SOCKET.len();
        if longest > SUN_PATH_MAX {
            return Err(RuntimeError::Unsafe {
                path: self.path.clone(),
                why: format!(
                    "its sockets' paths would be up to {longest} bytes, longer than a socket path \
                     may be ({SUN_PATH_MAX}): nobody could attach"
                ),
            });
        }
        Ok(self)
    }

    /// The caller's runtime directory, made 0700 if it is not there yet, refused when
    /// it is not safely the caller's.
    pub fn own() -> Result<RuntimeDir, RuntimeError> {
        let uid = nix::unistd::getuid().as_raw();
        let path = base().join(format!("{PREFIX}{uid}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io(&path)(e)),
        }
        let fd = opened(&path, uid)?;
        Ok(RuntimeDir { path, uid, fd })
    }

    /// Another user's runtime directory, checked the same way (never created).
    fn of(path: PathBuf, uid: u32) -> Result<RuntimeDir, RuntimeError> {
        let fd = opened(&path, uid)?;
        Ok(RuntimeDir { path, uid, fd })
    }

    /// A path through the opened descriptor: what it names cannot be swapped.
    fn via(&self, name: &str) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}/{name}", self.fd.as_raw_fd()))
    }

    fn lock(&self) -> Result<Flock<OwnedFd>, RuntimeError> {
        let fd = self.fd.try_clone().map_err(io(&self.path))?;
        Flock::lock(fd, FlockArg::LockExclusive).map_err(|(_, e)| io(&self.path)(e.into()))
    }

    /// The slots in here, with their entries (unreadable or foreign slots skipped).
    fn slots(&self) -> Vec<(String, Entry)> {
        let Ok(names) = std::fs::read_dir(self.via("")) else {
            return Vec::new();
        };
        names
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !n.starts_with(INDEX) && n.contains('.'))
            .filter_map(|n| self.entry(&n).map(|e| (n, e)))
            .collect()
    }

    /// Reads a slot's entry: the slot and the file are the directory owner's, the
    /// file regular and bounded.
    fn entry(&self, slot: &str) -> Option<Entry> {
        let dir = opened(&self.path.join(slot), self.uid).ok()?;
        let file = nix::fcntl::openat(
            &dir,
            ENTRY,
            OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK,
            Mode::empty(),
        )
        .ok()?;
        let mut file = std::fs::File::from(file);
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.uid() != self.uid {
            return None;
        }
        let mut text = String::new();
        Read::by_ref(&mut file)
            .take(ENTRY_MAX)
            .read_to_string(&mut text)
            .ok()?;
        let mut entry: Entry = serde_json::from_str(&text).ok()?;
        // The owner is whoever owns the directory; what the file says of it is ignored.
        entry.owner = crate::untrusted::user_name(self.uid);
        // A short name is a slug faultline made, and the slot is named after it: an
        // entry claiming a path (or `owner/short`) as its short name is not ours.
        let named = slot
            .strip_prefix(entry.short.as_str())
            .is_some_and(|rest| rest.starts_with('.'));
        (entry.owner_uid == self.uid && valid_short(&entry.short) && named).then_some(entry)
    }

    /// Removes the slots whose server is gone, with their index entries (the
    /// caller's own directory, under its lock).
    fn sweep(&self) {
        for (slot, entry) in self.slots() {
            if !entry.alive() {
                self.remove_slot(&slot, &entry);
            }
        }
    }

    fn remove_slot(&self, slot: &str, entry: &Entry) {
        let dir = self.path.join(slot);
        for name in [SOCKET, ENTRY] {
            let _ = std::fs::remove_file(self.via(&format!("{slot}/{name}")));
        }
        if let Err(e) = std::fs::remove_dir(self.via(slot)) {
            tracing::warn!("runtime: cannot remove {}: {e}", dir.display());
        }
        for user in &entry.listed {
            if let Some(uid) = uid_of(user) {
                let index = format!("{INDEX}{uid}");
                let _ = std::fs::remove_file(self.via(&format!("{index}/{slot}")));
                // Left when other sessions still list this user (not empty).
                let _ = std::fs::remove_dir(self.via(&index));
            }
        }
    }

    /// The runtime directory lets exactly the users listed on a live session
    /// traverse it.
    fn set_traverse(&self) -> Result<(), RuntimeError> {
        let mut users: Vec<String> = self
            .slots()
            .into_iter()
            .filter(|(_, e)| e.alive())
            .flat_map(|(_, e)| e.listed)
            // A user deleted since that session started has no entry to keep.
            .filter(|u| uid_of(u).is_some())
            .collect();
        users.sort();
        users.dedup();
        set_acl(&self.fd, 0o700, &users, exacl::Perm::EXECUTE).map_err(io(&self.path))
    }
}

fn uid_of(user: &str) -> Option<u32> {
    nix::unistd::User::from_name(user)
        .ok()
        .flatten()
        .map(|u| u.uid.as_raw())
}

/// Sets the mode of what `fd` names and an ACL giving each of `users` `perms`
/// (earlier named entries replaced).
fn set_acl(fd: &OwnedFd, mode: u32, users: &[String], perms: exacl::Perm) -> std::io::Result<()> {
    let users: Vec<&String> = users.iter().collect();
    super::roles::apply(fd, mode, &users, perms, false).map(|_| ())
}

/// An `O_PATH` descriptor of `path`, its last component never followed.
fn path_fd(path: &Path) -> std::io::Result<OwnedFd> {
    super::roles::open_nofollow(None, path)
}

/// A registered session: removed from the registry when dropped.
pub struct Slot {
    runtime: RuntimeDir,
    name: String,
    pub entry: Entry,
    pub socket: PathBuf,
}

/// Registers the session at `session` (absolute) in the caller's runtime directory
/// and binds its socket; the listener is the server's to serve.
pub fn register(
    session: &Path,
    plan: &str,
    roles: &super::roles::Roles,
) -> Result<(Slot, std::os::unix::net::UnixListener), RuntimeError> {
    // Read before the lock: `visible` takes it on a descriptor of its own.
    let seen: Vec<String> = visible().into_iter().map(|f| f.entry.short).collect();
    let runtime = RuntimeDir::own()?;
    let _lock = runtime.lock()?;
    runtime.sweep();
    let slug = session
        .parent()
        .and_then(Path::file_name)
        .and_then(OsStr::to_str)
        .map_or_else(|| "session".to_string(), super::dir::safe_slug)
        .chars()
        .take(SLUG_MAX)
        .collect::<String>();
    // Unique among every session the owner can see, so the short name printed for
    // it is never ambiguous to the owner.
    let taken: Vec<String> = runtime
        .slots()
        .into_iter()
        .map(|(_, e)| e.short)
        .chain(seen)
        .collect();
    let short = (1..)
        .map(|n| format!("{slug}-{n}"))
        .find(|s| !taken.contains(s))
        .unwrap_or(slug);
    let name = format!("{short}.{}", random_hex()?);
    let path = runtime.path.join(&name);
    let socket = path.join(SOCKET);
    let length = socket.as_os_str().len();
    if length > SUN_PATH_MAX {
        return Err(RuntimeError::Unsafe {
            path: socket,
            why: format!(
                "{length} bytes, longer than a socket path may be ({SUN_PATH_MAX}): clients could not connect"
            ),
        });
    }
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(runtime.via(&name))
        .map_err(io(&path))?;
    let listed: Vec<String> = roles.listed().cloned().collect();
    let pid = std::process::id();
    let entry = Entry {
        short,
        session: session.display().to_string(),
        plan: plan.to_string(),
        owner: roles.owner.clone(),
        owner_uid: roles.owner_uid,
        pid,
        pid_start: i32::try_from(pid).ok().and_then(crate::exec::start_time),
        started: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        listed: listed.clone(),
    };
    let slot = Slot {
        socket: path.join(SOCKET),
        runtime,
        name,
        entry,
    };
    // From here on, a failure removes what was made (the slot's Drop).
    let listener = slot.bind()?;
    slot.write_entry()?;
    slot.open_to_listed()?;
    Ok((slot, listener))
}

impl Slot {
    fn inside(&self, name: &str) -> PathBuf {
        self.runtime.via(&format!("{}/{name}", self.name))
    }

    /// A socket whose mode is 0600 before it has a name.
    fn bind(&self) -> Result<std::os::unix::net::UnixListener, RuntimeError> {
        use nix::sys::socket::{AddressFamily, SockFlag, SockType, UnixAddr};
        let err = io(&self.socket);
        let fd = nix::sys::socket::socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
            None,
        )
        .map_err(|e| err(e.into()))?;
        nix::sys::stat::fchmod(fd.as_fd(), Mode::from_bits_truncate(0o600))
            .map_err(|e| err(e.into()))?;
        // Bound through the runtime directory's descriptor: no component of the
        // path can be swapped for a symlink between the checks and the bind.
        let addr = UnixAddr::new(&self.inside(SOCKET)).map_err(|e| err(e.into()))?;
        nix::sys::socket::bind(fd.as_raw_fd(), &addr).map_err(|e| err(e.into()))?;
        nix::sys::socket::listen(
            &fd,
            nix::sys::socket::Backlog::new(128).unwrap_or(nix::sys::socket::Backlog::MAXCONN),
        )
        .map_err(|e| err(e.into()))?;
        Ok(std::os::unix::net::UnixListener::from(fd))
    }

    fn write_entry(&self) -> Result<(), RuntimeError> {
        let path = self.inside(ENTRY);
        let text = serde_json::to_vec_pretty(&self.entry).map_err(|e| io(&path)(e.into()))?;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc_nofollow())
            .open(&path)
            .map_err(io(&path))?;
        file.write_all(&text).map_err(io(&path))
    }

    /// The listed users may traverse the runtime directory, read the slot and its
    /// entry, connect to the socket, and find the slot through their index.
    fn open_to_listed(&self) -> Result<(), RuntimeError> {
        use exacl::Perm;
        let listed = &self.entry.listed;
        if listed.is_empty() {
            return Ok(());
        }
        let err = io(&self.socket);
        let grant = |name: &str, mode: u32, perms: Perm| {
            path_fd(&self.inside(name)).and_then(|fd| set_acl(&fd, mode, listed, perms))
        };
        let slot = opened(&self.runtime.path.join(&self.name), self.runtime.uid)?;
        set_acl(&slot, 0o700, listed, Perm::READ | Perm::EXECUTE).map_err(&err)?;
        grant(ENTRY, 0o600, Perm::READ).map_err(&err)?;
        grant(SOCKET, 0o600, Perm::READ | Perm::WRITE).map_err(&err)?;
        for user in listed {
            let Some(uid) = uid_of(user) else { continue };
            let index = format!("{INDEX}{uid}");
            match std::fs::DirBuilder::new()
                .mode(0o700)
                .create(self.runtime.via(&index))
            {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(err(e)),
            }
            let dir = opened(&self.runtime.path.join(&index), self.runtime.uid)?;
            let via = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
            set_acl(
                &dir,
                0o700,
                std::slice::from_ref(user),
                Perm::READ | Perm::EXECUTE,
            )
            .map_err(&err)?;
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .custom_flags(libc_nofollow())
                .open(via.join(&self.name))
                .map_err(&err)?;
        }
        self.runtime.set_traverse()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Ok(_lock) = self.runtime.lock() else {
            return;
        };
        self.runtime.remove_slot(&self.name, &self.entry);
        if let Err(e) = self.runtime.set_traverse() {
            tracing::warn!("runtime: {e}");
        }
    }
}

fn libc_nofollow() -> i32 {
    OFlag::O_NOFOLLOW.bits()
}

/// A short name as [`register`] makes them: a slug and a number, letters, digits,
/// `.`, `_` and `-`, never a path.
pub fn valid_short(short: &str) -> bool {
    !short.is_empty()
        && short.len() <= SLUG_MAX + 8
        && short.starts_with(|c: char| c.is_ascii_alphanumeric())
        && short
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

pub(super) fn random_hex() -> Result<String, RuntimeError> {
    let path = Path::new("/dev/urandom");
    let mut bytes = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(io(path))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A running session the caller may attach to.
#[derive(Debug, Clone)]
pub struct Found {
    /// Its slot (where the socket is).
    pub slot: PathBuf,
    pub entry: Entry,
}

impl Found {
    pub fn socket(&self) -> PathBuf {
        self.slot.join(SOCKET)
    }

    /// Checks again, just before connecting, that the slot is still its owner's.
    pub fn recheck(&self) -> Result<(), RuntimeError> {
        let runtime = self.slot.parent().unwrap_or(Path::new("/"));
        opened(runtime, self.entry.owner_uid)?;
        opened(&self.slot, self.entry.owner_uid)?;
        Ok(())
    }
}

/// Every running session the caller may attach to, newest first: the caller's own
/// (stale ones removed on the way) and those other users list the caller on.
pub fn visible() -> Vec<Found> {
    let me = nix::unistd::getuid().as_raw();
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(base()) else {
        return out;
    };
    for dir in entries.flatten() {
        let Some(uid) = dir
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(runtime) = RuntimeDir::of(dir.path(), uid) else {
            continue;
        };
        let slots: Vec<(String, Entry)> = if uid == me {
            if let Ok(_lock) = runtime.lock() {
                runtime.sweep();
            }
            runtime.slots()
        } else {
            let index = runtime.path.join(format!("{INDEX}{me}"));
            let Ok(index) = opened(&index, uid) else {
                continue;
            };
            let names = std::fs::read_dir(format!("/proc/self/fd/{}", index.as_raw_fd()));
            names
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| !n.starts_with(INDEX) && !n.contains('/'))
                .filter_map(|n| runtime.entry(&n).map(|e| (n, e)))
                .collect()
        };
        out.extend(
            slots
                .into_iter()
                .filter(|(_, e)| e.alive())
                .map(|(name, entry)| Found {
                    slot: runtime.path.join(name),
                    entry,
                }),
        );
    }
    // The caller's own first, then by start; `started` is the entry's own word, so
    // another user's entry can never sort before the caller's own sessions.
    out.sort_by(|a, b| {
        (b.entry.owner_uid == me)
            .cmp(&(a.entry.owner_uid == me))
            .then(b.entry.started.cmp(&a.entry.started))
            .then(b.entry.short.cmp(&a.entry.short))
    });
    out
}
