//! One store node. A node with followers is the primary: it replicates each write to
//! every follower before acknowledging it — unless `--ack-before-replicate` plants the
//! bug, in which case writes are acknowledged at once and shipped in batches.
//! Log lines on stderr double as victim-side landing evidence.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::wire::{self, Reply, Request};

const REPLICATION_TIMEOUT: Duration = Duration::from_millis(300);
const HEARTBEAT_EVERY: Duration = Duration::from_millis(200);
const SILENCE_WARNING: Duration = Duration::from_millis(1000);
const TICK: Duration = Duration::from_millis(100);
const BATCH_EVERY: Duration = Duration::from_millis(500);

#[derive(Debug, clap::Args)]
pub struct NodeArgs {
    #[arg(long)]
    pub name: String,
    #[arg(long)]
    pub listen: SocketAddr,
    /// Followers as name=addr pairs; a node with followers is the primary.
    #[arg(long, value_delimiter = ',')]
    pub followers: Vec<String>,
    /// Plant the bug: acknowledge writes before replicating them.
    #[arg(long)]
    pub ack_before_replicate: bool,
}

struct Node {
    name: String,
    followers: Vec<(String, SocketAddr)>,
    buggy: bool,
    state: Mutex<BTreeMap<String, String>>,
    pending: Mutex<Vec<(String, String)>>,
    last_contact: Mutex<Option<Instant>>,
}

fn log(node: &str, message: &str) {
    let now = chrono::Utc::now().format("%H:%M:%S%.3f");
    eprintln!("{now} {node} {message}");
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means another handler panicked; the map is still usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn parse_followers(specs: &[String]) -> Result<Vec<(String, SocketAddr)>, String> {
    specs
        .iter()
        .map(|spec| {
            let (name, addr) = spec
                .split_once('=')
                .ok_or_else(|| format!("--followers entry `{spec}`: expected name=addr"))?;
            let addr = addr
                .parse()
                .map_err(|e| format!("--followers entry `{spec}`: {e}"))?;
            Ok((name.to_string(), addr))
        })
        .collect()
}

pub fn run(args: &NodeArgs) -> Result<(), String> {
    let listener =
        TcpListener::bind(args.listen).map_err(|e| format!("bind {}: {e}", args.listen))?;
    let node = Arc::new(Node {
        name: args.name.clone(),
        followers: parse_followers(&args.followers)?,
        buggy: args.ack_before_replicate,
        state: Mutex::new(BTreeMap::new()),
        pending: Mutex::new(Vec::new()),
        last_contact: Mutex::new(None),
    });
    let role = if node.followers.is_empty() {
        "follower"
    } else {
        "primary"
    };
    log(
        &node.name,
        &format!("INFO listening on {} as {role}", args.listen),
    );
    spawn_background(&node);
    for stream in listener.incoming().flatten() {
        let node = Arc::clone(&node);
        std::thread::spawn(move || serve(&node, stream));
    }
    Ok(())
}

fn spawn_background(node: &Arc<Node>) {
    // Tick-gap detector: a stopped process notices, when resumed, that time jumped.
    let ticker = Arc::clone(node);
    std::thread::spawn(move || {
        let mut last = Instant::now();
        loop {
            std::thread::sleep(TICK);
            let gap = last.elapsed();
            if gap > TICK * 5 {
                log(
                    &ticker.name,
                    &format!(
                        "WARN tick gap {}ms (was this process paused?)",
                        gap.as_millis()
                    ),
                );
            }
            last = Instant::now();
            if ticker.followers.is_empty() {
                let silent = lock(&ticker.last_contact).map(|t| t.elapsed());
                if let Some(silent) = silent.filter(|s| *s > SILENCE_WARNING) {
                    log(
                        &ticker.name,
                        &format!("WARN no contact from primary for {}ms", silent.as_millis()),
                    );
                    *lock(&ticker.last_contact) = Some(Instant::now());
                }
            }
        }
    });
    if node.followers.is_empty() {
        return;
    }
    let primary = Arc::clone(node);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(HEARTBEAT_EVERY);
            for (_, addr) in &primary.followers {
                let _ = wire::call(*addr, &Request::Ping, REPLICATION_TIMEOUT);
            }
        }
    });
    if node.buggy {
        let primary = Arc::clone(node);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(BATCH_EVERY);
                let batch = std::mem::take(&mut *lock(&primary.pending));
                for (key, value) in batch {
                    replicate(&primary, &key, &value);
                }
            }
        });
    }
}

/// Sends one write to every follower; true when all of them stored it.
fn replicate(node: &Node, key: &str, value: &str) -> bool {
    let mut all = true;
    for (name, addr) in &node.followers {
        let request = Request::Replicate {
            key: key.to_string(),
            value: value.to_string(),
        };
        match wire::call(*addr, &request, REPLICATION_TIMEOUT) {
            Ok(reply) if reply.ok => {}
            _ => {
                log(
                    &node.name,
                    &format!(
                        "WARN replication to {name} timed out after {}ms",
                        REPLICATION_TIMEOUT.as_millis()
                    ),
                );
                all = false;
            }
        }
    }
    all
}

fn handle(node: &Node, request: Request) -> Reply {
    match request {
        Request::Ping => {
            *lock(&node.last_contact) = Some(Instant::now());
            Reply {
                ok: true,
                ..Reply::default()
            }
        }
        Request::Replicate { key, value } => {
            *lock(&node.last_contact) = Some(Instant::now());
            lock(&node.state).insert(key, value);
            Reply {
                ok: true,
                ..Reply::default()
            }
        }
        Request::Dump => Reply {
            ok: true,
            state: Some(lock(&node.state).clone()),
            ..Reply::default()
        },
        Request::Put { key, value } => {
            lock(&node.state).insert(key.clone(), value.clone());
            if node.buggy {
                lock(&node.pending).push((key, value));
                return Reply {
                    ok: true,
                    ..Reply::default()
                };
            }
            if replicate(node, &key, &value) {
                Reply {
                    ok: true,
                    ..Reply::default()
                }
            } else {
                Reply {
                    ok: false,
                    error: Some("not replicated to every follower".into()),
                    ..Reply::default()
                }
            }
        }
    }
}

fn serve(node: &Node, stream: TcpStream) {
    let Ok(reader) = stream.try_clone() else {
        return;
    };
    let mut writer = stream;
    for line in BufReader::new(reader).lines() {
        let Ok(line) = line else { return };
        let reply = match serde_json::from_str::<Request>(&line) {
            Ok(request) => handle(node, request),
            Err(e) => Reply {
                ok: false,
                error: Some(format!("bad request: {e}")),
                ..Reply::default()
            },
        };
        let Ok(mut bytes) = serde_json::to_vec(&reply) else {
            return;
        };
        bytes.push(b'\n');
        if writer.write_all(&bytes).is_err() {
            return;
        }
    }
}
