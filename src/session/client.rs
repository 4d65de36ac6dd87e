//! The client side of the attach protocol: find a running session in the runtime
//! registry, connect, check that the server at the other end is the session's own
//! (its uid and pid, by the kernel's word), say hello, and get its messages on a
//! channel (answers and stops go the other way).

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

use super::event::Who;
use super::runtime::{self, Found, RuntimeError};
use super::wire::{ClientMsg, Hello, PROTOCOL_VERSION, ServerMsg, Status, version_mismatch};

/// How long a server has to welcome a client.
const WELCOME_WAIT: Duration = Duration::from_secs(10);
/// The longest line a client reads from a server: a journal record with its text
/// (a long question, a long reason) stays far below it. A longer line is cut: the
/// link ends with a `bye` of the client's own saying so.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error(
        "no running session you may attach to is named or at `{0}` (`faultline sessions` lists those you may)"
    )]
    NotFound(String),
    #[error("`{0}` names more than one session ({1}): name one as owner/short")]
    Ambiguous(String, String),
    #[error("no running session you may attach to{0} (`faultline sessions` lists them)")]
    NoneRunning(String),
    #[error("{0}")]
    Unsafe(#[from] RuntimeError),
    #[error(
        "{socket}: the process serving it is not the session's server ({why}); refused, nothing was sent"
    )]
    Impostor { socket: PathBuf, why: String },
    #[error("{socket}: {why}")]
    Denied { socket: PathBuf, why: String },
    #[error("{socket}: {why}; refused, nothing was sent but the hello")]
    Version { socket: PathBuf, why: String },
    #[error("{socket}: its server is running but did not answer within {wait:?}")]
    Silent { socket: PathBuf, wait: Duration },
    #[error(
        "{socket}: the session's server is gone ({source}); `faultline heal` / `faultline resume` take it from its journal"
    )]
    Gone {
        socket: PathBuf,
        source: std::io::Error,
    },
}

/// A connection to a session server, welcomed.
pub struct Link {
    pub rx: UnboundedReceiver<ServerMsg>,
    pub tx: UnboundedSender<ClientMsg>,
    /// Who the server says this client is, and its role.
    pub who: Who,
    pub status: Status,
    pub plan_text: String,
}

/// Connects to `found`'s server, checks it is the session's, says `hello` and waits
/// for the welcome.
pub async fn connect(found: &Found, hello: Hello) -> Result<Link, AttachError> {
    connect_within(found, hello, WELCOME_WAIT).await
}

/// [`connect`], waiting at most `wait` for the welcome.
pub async fn connect_within(
    found: &Found,
    hello: Hello,
    wait: Duration,
) -> Result<Link, AttachError> {
    found.recheck()?;
    let socket = found.socket();
    let stream = UnixStream::connect(&socket)
        .await
        .map_err(|source| AttachError::Gone {
            socket: socket.clone(),
            source,
        })?;
    // Both ends check the other: the server by its peer's uid, we by the server's
    // uid and pid against what the owner's registry says.
    let cred = stream.peer_cred().map_err(|source| AttachError::Gone {
        socket: socket.clone(),
        source,
    })?;
    let expected = &found.entry;
    let pid = cred.pid().and_then(|p| u32::try_from(p).ok());
    if cred.uid() != expected.owner_uid || pid != Some(expected.pid) {
        return Err(AttachError::Impostor {
            socket,
            why: format!(
                "uid {} pid {}, where the session's server is uid {} pid {}",
                cred.uid(),
                pid.map_or_else(|| "?".to_string(), |p| p.to_string()),
                expected.owner_uid,
                expected.pid
            ),
        });
    }
    let (read, mut write) = stream.into_split();
    let mut lines = FramedRead::new(read, LinesCodec::new_with_max_length(MAX_LINE));
    // This end's version, whatever the caller's hello said.
    let hello = Hello {
        protocol: PROTOCOL_VERSION,
        ..hello
    };
    let said = match serde_json::to_vec(&ClientMsg::Hello(hello)) {
        Ok(mut line) => {
            line.push(b'\n');
            write.write_all(&line).await
        }
        Err(e) => Err(std::io::Error::other(e)),
    };
    if let Err(source) = said {
        return Err(AttachError::Gone { socket, source });
    }
    let first = match tokio::time::timeout(wait, lines.next()).await {
        Ok(Some(Ok(line))) => line,
        Ok(Some(Err(LinesCodecError::MaxLineLengthExceeded))) => {
            return Err(AttachError::Denied {
                socket,
                why: too_long(),
            });
        }
        Ok(Some(Err(LinesCodecError::Io(_))) | None) | Err(_) => {
            return Err(AttachError::Silent { socket, wait });
        }
    };
    let (who, status, plan_text) = match welcome(&first, expected.pid) {
        Ok(welcome) => welcome,
        Err(Unwelcomed::Bye(why)) => return Err(AttachError::Denied { socket, why }),
        Err(Unwelcomed::Version(why)) => return Err(AttachError::Version { socket, why }),
        Err(Unwelcomed::Unreadable(e)) => {
            tracing::warn!("attach: unreadable server line: {e}");
            return Err(AttachError::Silent { socket, wait });
        }
    };
    let (in_tx, rx) = unbounded_channel();
    let (tx, mut out_rx) = unbounded_channel::<ClientMsg>();
    tokio::spawn(async move {
        while let Some(msg) = out_rx.recv().await {
            let Ok(mut line) = serde_json::to_vec(&msg) else {
                continue;
            };
            line.push(b'\n');
            if write.write_all(&line).await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        loop {
            let msg = match lines.next().await {
                Some(Ok(line)) => match serde_json::from_str::<ServerMsg>(&line) {
                    Ok(msg) => msg,
                    Err(e) => {
                        tracing::warn!("attach: unreadable server line: {e}");
                        continue;
                    }
                },
                // Cut, not read on: a message missed would leave this client's picture
                // of the run wrong without a word. The link ends, saying why.
                Some(Err(LinesCodecError::MaxLineLengthExceeded)) => {
                    let _ = in_tx.send(ServerMsg::Bye { why: too_long() });
                    break;
                }
                Some(Err(LinesCodecError::Io(_))) | None => break,
            };
            if in_tx.send(msg).is_err() {
                break;
            }
        }
    });
    Ok(Link {
        rx,
        tx,
        who,
        status,
        plan_text,
    })
}

/// What a client says of a server line over [`MAX_LINE`].
fn too_long() -> String {
    format!(
        "the session's server sent a line longer than {} MiB; this client reads no such \
         message and lets go (the run goes on: its journal has everything)",
        MAX_LINE >> 20
    )
}

/// Why a server's first line is no welcome this client takes.
enum Unwelcomed {
    Bye(String),
    Version(String),
    Unreadable(serde_json::Error),
}

/// The welcome in a server's first line: who it says this client is, the session's
/// status and its plan. Its version is read first, from any JSON object of type
/// `welcome`: a server of another version may shape the rest otherwise.
fn welcome(line: &str, server: u32) -> Result<(Who, Status, String), Unwelcomed> {
    let theirs = serde_json::from_str::<serde_json::Value>(line)
        .ok()
        .filter(|v| v["type"] == "welcome")
        .map(|v| v["protocol"].as_u64().unwrap_or(0));
    if let Some(theirs) = theirs
        && theirs != u64::from(PROTOCOL_VERSION)
    {
        let binary = std::fs::read_link(format!("/proc/{server}/exe")).ok();
        return Err(Unwelcomed::Version(version_mismatch(
            "client",
            "session's server",
            theirs,
            binary.as_deref(),
        )));
    }
    match serde_json::from_str::<ServerMsg>(line) {
        Ok(ServerMsg::Welcome {
            who,
            status,
            plan_text,
            ..
        }) => Ok((who, status, plan_text)),
        Ok(ServerMsg::Bye { why }) => Err(Unwelcomed::Bye(why)),
        Ok(_) => Err(Unwelcomed::Bye(
            "the server's first message was not a welcome".to_string(),
        )),
        Err(e) => Err(Unwelcomed::Unreadable(e)),
    }
}

/// The session to attach to: the one `named` (a short name, `owner/short`, or a
/// session directory), else the newest running one (under `root` when given).
/// `mine`: only the caller's own (the launcher looking for the server it started).
///
/// Another user may list you on a session of theirs and name it anything: a short
/// name two owners use is refused as ambiguous (say `owner/short`), and a session
/// directory matches only an entry whose owner owns that directory.
pub fn find(named: Option<&str>, root: Option<&Path>, mine: bool) -> Result<Found, AttachError> {
    let me = nix::unistd::getuid().as_raw();
    let visible: Vec<Found> = runtime::visible()
        .into_iter()
        .filter(|f| !mine || f.entry.owner_uid == me)
        .collect();
    match named {
        // An existing directory is a path, whatever else it could be read as; a short
        // name (never holding a `/`) or `owner/short` otherwise.
        Some(name) if name.contains('/') && std::fs::symlink_metadata(name).is_ok() => {
            by_path(visible, name)
        }
        Some(name) => {
            let wanted = match name.split_once('/') {
                Some((owner, short)) => (Some(owner), short),
                None => (None, name),
            };
            if !runtime::valid_short(wanted.1) {
                return by_path(visible, name);
            }
            let by_name: Vec<Found> = visible
                .iter()
                .filter(|f| {
                    f.entry.short == wanted.1 && wanted.0.is_none_or(|o| o == f.entry.owner)
                })
                .cloned()
                .collect();
            // The caller's own session of that name before anyone else's: another user
            // may name an entry after it, never take its place.
            let me = nix::unistd::getuid().as_raw();
            if let [own] = by_name
                .iter()
                .filter(|f| f.entry.owner_uid == me)
                .collect::<Vec<_>>()
                .as_slice()
            {
                return Ok((*own).clone());
            }
            match by_name.as_slice() {
                // A session directory named without a `/` (from inside its parent).
                [] if std::fs::symlink_metadata(name).is_ok() => by_path(visible, name),
                [] => Err(AttachError::NotFound(crate::sanitize::line(name))),
                [one] => Ok(one.clone()),
                many => Err(ambiguous(name, &many.iter().collect::<Vec<_>>())),
            }
        }
        None => {
            let root = root.map(|r| std::path::absolute(r).unwrap_or_else(|_| r.to_path_buf()));
            let under: Vec<Found> = visible
                .into_iter()
                .filter(|f| {
                    root.as_ref()
                        .is_none_or(|r| Path::new(&f.entry.session).starts_with(r))
                })
                .collect();
            // The caller's own newest first (its own word on when it started); another
            // user's session only when it is the one there is, since what its entry
            // says of itself could be made to sort first.
            let me = nix::unistd::getuid().as_raw();
            if let Some(own) = under.iter().find(|f| f.entry.owner_uid == me) {
                return Ok(own.clone());
            }
            match under.as_slice() {
                [] => Err(AttachError::NoneRunning(
                    root.map(|r| format!(" under {}", r.display()))
                        .unwrap_or_default(),
                )),
                [one] => Ok(one.clone()),
                many => Err(ambiguous("(none given)", &many.iter().collect::<Vec<_>>())),
            }
        }
    }
}

/// [`find`] for what ends a session (`stop`): without a name it must be the only
/// running session the caller may attach to (under `root`), never the newest of
/// several — stopping is not undone, and a root caller sees many.
pub fn find_only(named: Option<&str>, root: Option<&Path>) -> Result<Found, AttachError> {
    if named.is_none() {
        let root = root.map(|r| std::path::absolute(r).unwrap_or_else(|_| r.to_path_buf()));
        let under: Vec<Found> = runtime::visible()
            .into_iter()
            .filter(|f| {
                root.as_ref()
                    .is_none_or(|r| Path::new(&f.entry.session).starts_with(r))
            })
            .collect();
        if under.len() > 1 {
            return Err(ambiguous("(none given)", &under.iter().collect::<Vec<_>>()));
        }
    }
    find(named, root, false)
}

fn ambiguous(name: &str, many: &[&Found]) -> AttachError {
    AttachError::Ambiguous(
        crate::sanitize::line(name),
        many.iter()
            .map(|f| crate::sanitize::line(&format!("{}/{}", f.entry.owner, f.entry.short)))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// The session whose directory `name` is, owned by its entry's owner.
fn by_path(visible: Vec<Found>, name: &str) -> Result<Found, AttachError> {
    let path = std::path::absolute(name).unwrap_or_else(|_| PathBuf::from(name));
    let canonical = std::fs::canonicalize(&path).ok();
    visible
        .into_iter()
        .find(|f| {
            let session = Path::new(&f.entry.session);
            (session == path || canonical.as_deref() == Some(session))
                && std::fs::symlink_metadata(session)
                    .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == f.entry.owner_uid)
        })
        .ok_or_else(|| AttachError::NotFound(crate::sanitize::line(name)))
}
