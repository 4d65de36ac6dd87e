//! One store node. A node with followers is the primary: it replicates each write to
//! every follower before acknowledging it — unless `--ack-before-replicate` plants the
//! bug, in which case writes are acknowledged at once and shipped half a second later.
//! A follower that misses a replication deadline leaves the in-sync set (writes stop
//! waiting for it) until the resync loop has shipped it the whole state again.
//! Log lines on stderr double as victim-side landing evidence.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::wire::{self, Reply, Request};

const REPLICATION_TIMEOUT: Duration = Duration::from_millis(300);
const HEARTBEAT_EVERY: Duration = Duration::from_millis(200);
const SILENCE_WARNING: Duration = Duration::from_millis(1000);
const TICK: Duration = Duration::from_millis(100);
/// The planted bug ships each acknowledged write this long after acking it, so a
/// primary killed at any moment takes the last half second of acked writes with it.
const SHIP_LAG: Duration = Duration::from_millis(500);
const SHIP_EVERY: Duration = Duration::from_millis(50);

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
    /// Acknowledged writes waiting to be shipped, with when they were acknowledged.
    pending: Mutex<Vec<(String, String, Instant)>>,
    /// Acknowledged writes not yet shipped to the followers (the planted bug only).
    unshipped: std::sync::atomic::AtomicUsize,
    last_contact: Mutex<Option<Instant>>,
    /// Followers every write waits for.
    in_sync: Mutex<BTreeSet<String>>,
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
    let followers = parse_followers(&args.followers)?;
    let in_sync = followers.iter().map(|(name, _)| name.clone()).collect();
    let node = Arc::new(Node {
        name: args.name.clone(),
        followers,
        in_sync: Mutex::new(in_sync),
        buggy: args.ack_before_replicate,
        state: Mutex::new(BTreeMap::new()),
        pending: Mutex::new(Vec::new()),
        unshipped: std::sync::atomic::AtomicUsize::new(0),
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
            for (name, addr) in &primary.followers {
                let answered = wire::call(*addr, &Request::Ping, REPLICATION_TIMEOUT).is_ok();
                if answered && !lock(&primary.in_sync).contains(name) {
                    resync(&primary, name, *addr);
                }
            }
        }
    });
    if node.buggy {
        let primary = Arc::clone(node);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(SHIP_EVERY);
                let batch: Vec<(String, String, Instant)> = {
                    let mut pending = lock(&primary.pending);
                    let due = pending.partition_point(|(_, _, acked)| acked.elapsed() >= SHIP_LAG);
                    pending.drain(..due).collect()
                };
                for (key, value, _) in batch {
                    replicate(&primary, &key, &value);
                    primary
                        .unshipped
                        .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                }
            }
        });
    }
}

/// Brings a follower back: it rejoins the in-sync set first (so no new write skips
/// it), then receives every key the primary holds.
fn resync(node: &Node, name: &str, addr: SocketAddr) {
    lock(&node.in_sync).insert(name.to_string());
    let snapshot = lock(&node.state).clone();
    for (key, value) in &snapshot {
        let request = Request::Replicate {
            key: key.clone(),
            value: value.clone(),
        };
        if !matches!(wire::call(addr, &request, REPLICATION_TIMEOUT), Ok(reply) if reply.ok) {
            lock(&node.in_sync).remove(name);
            return;
        }
    }
    log(
        &node.name,
        &format!("INFO {name} back in sync ({} keys shipped)", snapshot.len()),
    );
}

/// Sends one write to every in-sync follower; true when at least one follower is in
/// sync and all in-sync followers stored it. A follower that times out leaves the set.
fn replicate(node: &Node, key: &str, value: &str) -> bool {
    let mut all = true;
    let mut reached = 0;
    for (name, addr) in &node.followers {
        if !lock(&node.in_sync).contains(name) {
            continue;
        }
        let request = Request::Replicate {
            key: key.to_string(),
            value: value.to_string(),
        };
        match wire::call(*addr, &request, REPLICATION_TIMEOUT) {
            Ok(reply) if reply.ok => reached += 1,
            _ => {
                log(
                    &node.name,
                    &format!(
                        "WARN replication to {name} timed out after {}ms; {name} leaves the in-sync set",
                        REPLICATION_TIMEOUT.as_millis()
                    ),
                );
                lock(&node.in_sync).remove(name);
                all = false;
            }
        }
    }
    all && reached > 0
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
        Request::Pending => {
            let unshipped = node.unshipped.load(std::sync::atomic::Ordering::SeqCst);
            Reply {
                ok: unshipped == 0,
                error: (unshipped > 0)
                    .then(|| format!("{unshipped} acknowledged writes not shipped")),
                ..Reply::default()
            }
        }
        Request::Get { key } => Reply {
            ok: true,
            value: lock(&node.state).get(&key).cloned(),
            ..Reply::default()
        },
        Request::Dump => Reply {
            ok: true,
            state: Some(lock(&node.state).clone()),
            ..Reply::default()
        },
        Request::Put { key, value } => {
            lock(&node.state).insert(key.clone(), value.clone());
            if node.buggy {
                node.unshipped
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                lock(&node.pending).push((key, value, Instant::now()));
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
