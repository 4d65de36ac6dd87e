//! The store's line protocol: one JSON request per line, one JSON reply per line.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Request {
    Put {
        key: String,
        value: String,
    },
    Replicate {
        key: String,
        value: String,
    },
    /// A key's value as this node holds it (`value`; none when unset).
    Get {
        key: String,
    },
    Ping,
    Dump,
    /// Has every acknowledged write been shipped to the followers?
    Pending,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Reply {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// Sends one request and reads its reply, each bounded by `timeout`.
pub fn call(addr: SocketAddr, request: &Request, timeout: Duration) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut line = serde_json::to_vec(request)?;
    line.push(b'\n');
    stream.write_all(&line)?;
    let mut reply = String::new();
    BufReader::new(stream).read_line(&mut reply)?;
    serde_json::from_str(&reply).map_err(std::io::Error::other)
}

pub fn wait_ready(targets: &[SocketAddr], timeout: Duration) -> Result<(), String> {
    let start = Instant::now();
    for target in targets {
        loop {
            match call(*target, &Request::Ping, Duration::from_millis(200)) {
                Ok(reply) if reply.ok => break,
                _ if start.elapsed() >= timeout => {
                    return Err(format!("{target} not ready after {timeout:?}"));
                }
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
    Ok(())
}

/// Ok once no reachable node holds acknowledged writes it has not shipped; a node
/// that does not answer ships nothing more, so it does not hold the answer back.
pub fn settled(targets: &[SocketAddr]) -> Result<(), String> {
    for target in targets {
        if let Ok(reply) = call(*target, &Request::Pending, Duration::from_millis(200))
            && !reply.ok
        {
            return Err(format!(
                "{target}: {}",
                reply.error.unwrap_or_else(|| "writes not shipped".into())
            ));
        }
    }
    Ok(())
}

pub fn dump(target: SocketAddr, out: &Path) -> Result<(), String> {
    let reply = call(target, &Request::Dump, Duration::from_secs(2))
        .map_err(|e| format!("dump from {target}: {e}"))?;
    let state = reply.state.unwrap_or_default();
    let text = serde_json::to_string(&state).map_err(|e| e.to_string())?;
    std::fs::write(out, text).map_err(|e| format!("{}: {e}", out.display()))
}
