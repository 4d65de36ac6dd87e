//! The client side of the attach protocol: find a running session, connect, say
//! hello, and get its messages on a channel (answers and stops go the other way).

use std::path::{Path, PathBuf};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::wire::{ClientMsg, Hello, SERVER_FILE, ServerFile, ServerMsg};

#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error(
        "{0}: not a session directory faultline is serving (no {SERVER_FILE}); it ended, or never started"
    )]
    NotServed(PathBuf),
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{socket}: permission denied: you are not on this session's list (ask its owner to start it with --approver / --viewer naming you)"
    )]
    Denied { socket: PathBuf },
    #[error(
        "{socket}: the session's server is gone ({source}); `faultline heal` / `faultline resume` take it from its journal"
    )]
    Gone {
        socket: PathBuf,
        source: std::io::Error,
    },
    #[error("no running session under {0}; name one (`faultline sessions` lists them)")]
    NoneRunning(PathBuf),
}

/// A connection to a session server.
pub struct Link {
    pub rx: UnboundedReceiver<ServerMsg>,
    pub tx: UnboundedSender<ClientMsg>,
}

/// Reads `server.json` of a session directory.
pub fn server_file(dir: &Path) -> Result<ServerFile, AttachError> {
    let path = dir.join(SERVER_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(AttachError::NotServed(dir.to_path_buf()));
        }
        Err(source) => {
            if source.kind() == std::io::ErrorKind::PermissionDenied {
                return Err(AttachError::Denied { socket: path });
            }
            return Err(AttachError::Read { path, source });
        }
    };
    serde_json::from_str(&text).map_err(|e| AttachError::Read {
        path,
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })
}

/// Connects to the session at `dir` and says `hello`.
pub async fn connect(dir: &Path, hello: Hello) -> Result<Link, AttachError> {
    let file = server_file(dir)?;
    let socket = PathBuf::from(&file.socket);
    let stream = UnixStream::connect(&socket).await.map_err(|source| {
        if source.kind() == std::io::ErrorKind::PermissionDenied {
            AttachError::Denied {
                socket: socket.clone(),
            }
        } else {
            AttachError::Gone {
                socket: socket.clone(),
                source,
            }
        }
    })?;
    let (read, mut write) = stream.into_split();
    let (in_tx, rx) = unbounded_channel();
    let (tx, mut out_rx) = unbounded_channel::<ClientMsg>();
    let _ = tx.send(ClientMsg::Hello(hello));
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
        let mut lines = BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match serde_json::from_str::<ServerMsg>(&line) {
                Ok(msg) => {
                    if in_tx.send(msg).is_err() {
                        break;
                    }
                }
                Err(e) => tracing::warn!("attach: unreadable server line: {e}"),
            }
        }
    });
    Ok(Link { rx, tx })
}

/// A session some server is serving now.
#[derive(Debug, Clone)]
pub struct Running {
    pub dir: PathBuf,
    pub server: ServerFile,
}

/// Every session under `root` (`<root>/<plan>/<stamp>/`) whose server still runs,
/// newest first.
pub fn running(root: &Path) -> Vec<Running> {
    let mut out = Vec::new();
    let Ok(plans) = std::fs::read_dir(root) else {
        return out;
    };
    for plan in plans.flatten() {
        let Ok(sessions) = std::fs::read_dir(plan.path()) else {
            continue;
        };
        for session in sessions.flatten() {
            let dir = session.path();
            let Ok(server) = server_file(&dir) else {
                continue;
            };
            if alive(server.pid) {
                out.push(Running { dir, server });
            }
        }
    }
    out.sort_by(|a, b| {
        b.server
            .started
            .cmp(&a.server.started)
            .then(b.dir.cmp(&a.dir))
    });
    out
}

fn alive(pid: u32) -> bool {
    i32::try_from(pid).is_ok_and(|pid| {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
            || nix::errno::Errno::last() == nix::errno::Errno::EPERM
    })
}

/// The session to attach to: the one named, else the newest running under `root`.
pub fn choose(named: Option<&Path>, root: &Path) -> Result<PathBuf, AttachError> {
    match named {
        Some(dir) => Ok(dir.to_path_buf()),
        None => running(root)
            .into_iter()
            .next()
            .map(|r| r.dir)
            .ok_or_else(|| AttachError::NoneRunning(root.to_path_buf())),
    }
}
