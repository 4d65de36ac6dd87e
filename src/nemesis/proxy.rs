//! The `proxy` nemesis: a TCP fault proxy (Toxiproxy-like) that faultline runs for the
//! whole iteration between clients and a node. Traffic passes untouched until a fault
//! enables a toxic — latency (+ jitter), a bandwidth cap, a stall (bytes held), reset
//! (connections closed with RST) or slicing (writes split) — and heal disables it.
//! Injector-side evidence is the proxy's own counters: bytes or connections that met
//! the toxic while it was on. A proxy nobody routes through sees nothing, so it cannot
//! prove landing.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Context, HeldFault, InjectorSeen, Nemesis, Resource, UndoRecord, Window};
use crate::duration::Dur;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{ReadHalf, WriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// What a toxic does to the bytes passing while it is on.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Toxic {
    pub latency: Option<Duration>,
    pub jitter: Option<Duration>,
    /// Bytes per second, each direction.
    pub bandwidth: Option<u64>,
    /// Hold every byte until the toxic is off.
    pub stall: bool,
    /// Close every connection (with RST), new ones as they come.
    pub reset: bool,
    /// Forward at most this many bytes per write.
    pub slice: Option<usize>,
}

/// Counters the proxy keeps; `toxic_*` only count while a toxic is on.
#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    bytes: AtomicU64,
    toxic_bytes: AtomicU64,
    toxic_resets: AtomicU64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Snapshot {
    pub connections: u64,
    pub bytes: u64,
    pub toxic_bytes: u64,
    pub toxic_resets: u64,
}

#[derive(Debug, Default)]
struct Shared {
    toxic: RwLock<Option<Toxic>>,
    /// Woken when the toxic changes, so held bytes and idle connections re-check it.
    changed: Notify,
    counters: Counters,
}

impl Shared {
    fn toxic(&self) -> Option<Toxic> {
        self.toxic
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// A running proxy; its tasks end when it is dropped.
#[derive(Debug)]
pub struct Proxy {
    pub listen: SocketAddr,
    pub upstream: String,
    shared: Arc<Shared>,
    accept: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Binds `listen` and forwards every connection to `upstream`.
    pub async fn start(listen: &str, upstream: &str) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind(listen).await?;
        let bound = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let task_shared = shared.clone();
        let target = upstream.to_string();
        let accept = tokio::spawn(async move {
            let mut pumps = tokio::task::JoinSet::new();
            while let Ok((client, _)) = listener.accept().await {
                task_shared
                    .counters
                    .connections
                    .fetch_add(1, Ordering::Relaxed);
                pumps.spawn(connection(client, target.clone(), task_shared.clone()));
            }
        });
        Ok(Proxy {
            listen: bound,
            upstream: upstream.to_string(),
            shared,
            accept,
        })
    }

    pub fn snapshot(&self) -> Snapshot {
        let c = &self.shared.counters;
        Snapshot {
            connections: c.connections.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
            toxic_bytes: c.toxic_bytes.load(Ordering::Relaxed),
            toxic_resets: c.toxic_resets.load(Ordering::Relaxed),
        }
    }

    fn set(&self, toxic: Option<Toxic>) {
        *self
            .shared
            .toxic
            .write()
            .unwrap_or_else(PoisonError::into_inner) = toxic;
        self.shared.changed.notify_waiters();
    }

    /// Turns `toxic` on; the returned handle turns it off when healed or dropped.
    pub fn enable(self: &Arc<Self>, toxic: Toxic) -> InjectedProxy {
        let baseline = self.snapshot();
        self.set(Some(toxic.clone()));
        InjectedProxy {
            proxy: self.clone(),
            toxic,
            baseline,
            healed: false,
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // Aborting the accept task drops its JoinSet, which aborts every pump.
        self.accept.abort();
    }
}

/// Closes `stream` with RST rather than FIN.
#[allow(deprecated)] // linger 0 closes at once (RST); it cannot block on drop
fn reset(stream: TcpStream) {
    let _ = stream.set_linger(Some(Duration::ZERO));
    drop(stream);
}

async fn connection(mut client: TcpStream, upstream: String, shared: Arc<Shared>) {
    if shared.toxic().is_some_and(|t| t.reset) {
        shared.counters.toxic_resets.fetch_add(1, Ordering::Relaxed);
        reset(client);
        return;
    }
    let Ok(mut server) = TcpStream::connect(&upstream).await else {
        reset(client);
        return;
    };
    let reset_both = {
        let (client_read, client_write) = client.split();
        let (server_read, server_write) = server.split();
        // When either direction ends (or resets), the whole connection goes.
        tokio::select! {
            r = pump(client_read, server_write, &shared) => r,
            r = pump(server_read, client_write, &shared) => r,
        }
    };
    if reset_both {
        reset(client);
        reset(server);
    }
}

/// Copies one direction, applying the toxic in force to each chunk. True when it
/// ended because of a reset toxic.
async fn pump(mut from: ReadHalf<'_>, mut to: WriteHalf<'_>, shared: &Shared) -> bool {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let changed = shared.changed.notified();
        let n = tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => return false,
                Ok(n) => n,
            },
            // A reset toxic must also end idle connections.
            () = changed => {
                if shared.toxic().is_some_and(|t| t.reset) {
                    shared.counters.toxic_resets.fetch_add(1, Ordering::Relaxed);
                    return true;
                }
                continue;
            }
        };
        shared.counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
        let Some(mut toxic) = shared.toxic() else {
            if to.write_all(&buf[..n]).await.is_err() {
                return false;
            }
            continue;
        };
        shared
            .counters
            .toxic_bytes
            .fetch_add(n as u64, Ordering::Relaxed);
        if toxic.reset {
            shared.counters.toxic_resets.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        // Held until the stall is lifted.
        while toxic.stall {
            let changed = shared.changed.notified();
            match shared.toxic() {
                Some(t) if t.stall => changed.await,
                other => toxic = other.unwrap_or_default(),
            }
        }
        if let Some(delay) = toxic.latency {
            tokio::time::sleep(delay + jitter(toxic.jitter)).await;
        }
        let slice = toxic.slice.filter(|s| *s > 0).unwrap_or(n);
        for part in buf[..n].chunks(slice) {
            if to.write_all(part).await.is_err() || to.flush().await.is_err() {
                return false;
            }
            if let Some(rate) = toxic.bandwidth.filter(|r| *r > 0) {
                tokio::time::sleep(Duration::from_secs_f64(part.len() as f64 / rate as f64)).await;
            }
        }
    }
}

/// A uniformly random extra delay in [0, jitter], from the clock's low bits (no RNG
/// crate; this needs spread, not quality).
fn jitter(jitter: Option<Duration>) -> Duration {
    let Some(j) = jitter.filter(|j| !j.is_zero()) else {
        return Duration::ZERO;
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    j.mul_f64(f64::from(nanos % 1000) / 1000.0)
}

/// Injector-side landing evidence: traffic met the toxic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub landed: bool,
    pub before: Snapshot,
    pub after: Snapshot,
    pub detail: String,
}

/// A toxic switched on. Dropping it unhealed switches it off.
#[derive(Debug)]
pub struct InjectedProxy {
    pub proxy: Arc<Proxy>,
    pub toxic: Toxic,
    pub baseline: Snapshot,
    healed: bool,
}

impl InjectedProxy {
    fn observe(&self) -> Observation {
        let after = self.proxy.snapshot();
        let bytes = after.toxic_bytes - self.baseline.toxic_bytes;
        let resets = after.toxic_resets - self.baseline.toxic_resets;
        Observation {
            landed: bytes > 0 || resets > 0,
            before: self.baseline,
            after,
            detail: format!(
                "proxy {} -> {}: {bytes} byte(s) and {resets} reset(s) met the toxic since it was enabled",
                self.proxy.listen, self.proxy.upstream
            ),
        }
    }

    /// Polls the counters until traffic met the toxic or `within` passes.
    pub async fn await_landing(&self, within: Duration) -> Observation {
        super::poll_until(
            within,
            Duration::from_millis(50),
            || self.observe(),
            |s| s.landed,
        )
        .await
    }

    /// Switches the toxic off; held bytes flow on.
    pub fn heal(mut self) -> String {
        self.healed = true;
        self.proxy.set(None);
        format!(
            "toxic off on proxy {} -> {}",
            self.proxy.listen, self.proxy.upstream
        )
    }
}

impl Drop for InjectedProxy {
    fn drop(&mut self) {
        if !self.healed {
            self.proxy.set(None);
        }
    }
}

/// The problem with a toxic that does nothing, if it does nothing: (field, message)
/// for `field` (`proxy`, or a step's `substitute_proxy`).
pub fn idle_toxic(
    toxic: &ToxicSpec,
    field: &str,
    of: &str,
    fault: &str,
) -> Option<(String, String)> {
    let t = toxic;
    let effects = t.latency.is_some()
        || t.bandwidth.is_some_and(|b| b > 0)
        || t.stall
        || t.reset
        || t.slice.is_some_and(|s| s > 0);
    (!effects).then(|| {
        (
            format!("{field}.toxic"),
            format!(
                "fault `{fault}` of {of}: the toxic does nothing; give latency, bandwidth, stall, reset or slice"
            ),
        )
    })
}
/// A toxic on the built-in TCP fault proxy (`references/nemesis.md`, `### proxy`).
/// The proxy runs for the whole iteration; the fault switches the toxic on and off.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyFaultSpec {
    /// Address the proxy listens on (`127.0.0.1:7101`); clients must connect here.
    pub listen: String,
    /// The node it forwards to (`127.0.0.1:7001`).
    pub upstream: String,
    pub toxic: ToxicSpec,
}

/// What the toxic does; at least one effect.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToxicSpec {
    pub latency: Option<Dur>,
    pub jitter: Option<Dur>,
    /// Bytes per second, each direction.
    pub bandwidth: Option<u64>,
    /// Hold every byte until heal.
    #[serde(default)]
    pub stall: bool,
    /// Close every connection with RST, new ones too, until heal.
    #[serde(default)]
    pub reset: bool,
    /// Forward at most this many bytes per write.
    pub slice: Option<usize>,
}

impl Nemesis for ProxyFaultSpec {
    type Held = InjectedProxy;

    fn check(&self, of: &str, fault: &str) -> Vec<(String, String)> {
        idle_toxic(&self.toxic, "proxy", of, fault)
            .into_iter()
            .collect()
    }

    /// Starts the proxy (one per listen address) before the cluster, so clients can
    /// route through it from their first connection; the engine journals it and
    /// stops it after the iteration.
    async fn prepare<C: Context>(
        &self,
        fault: &str,
        cx: &mut C,
    ) -> Result<Option<Resource>, C::Error> {
        let listen = cx.expand(&self.listen)?;
        let upstream = cx.expand(&self.upstream)?;
        if cx.proxy(&listen).is_some() {
            return Ok(None);
        }
        let proxy = Proxy::start(&listen, &upstream)
            .await
            .map_err(|e| cx.fail(format!("fault {fault} proxy.listen `{listen}`: {e}")))?;
        Ok(Some(Resource::Proxy {
            listen,
            proxy: Arc::new(proxy),
        }))
    }

    /// Switches on the toxic of the proxy listening where the step says.
    async fn inject<C: Context>(
        &self,
        fault: &str,
        cx: &mut C,
    ) -> Result<Result<InjectedProxy, String>, C::Error> {
        let listen = cx.expand(&self.listen)?;
        let Some(proxy) = cx.proxy(&listen) else {
            return Ok(Err(format!(
                "fault {fault} proxy.listen: no proxy runs on `{listen}`"
            )));
        };
        let t = &self.toxic;
        Ok(Ok(proxy.enable(Toxic {
            latency: t.latency.map(|d| d.0),
            jitter: t.jitter.map(|d| d.0),
            bandwidth: t.bandwidth,
            stall: t.stall,
            reset: t.reset,
            slice: t.slice,
        })))
    }
}

impl HeldFault for InjectedProxy {
    type Undo = ProxyUndo;

    fn undo(&self) -> ProxyUndo {
        ProxyUndo {
            listen: self.proxy.listen.to_string(),
            upstream: self.proxy.upstream.clone(),
            toxic: json!(self.toxic),
        }
    }

    async fn probe<C: Context>(
        &self,
        window: Window,
        cx: &C,
    ) -> Result<Option<InjectorSeen>, C::Error> {
        let s = cx.guard(self.await_landing(window.within)).await?;
        Ok(Some(InjectorSeen {
            landed: s.landed,
            text: s.detail,
            detail: json!({"before": s.before, "after": s.after}),
        }))
    }

    async fn heal<C: Context>(self, _cx: &C) -> Result<String, String> {
        Ok(InjectedProxy::heal(self))
    }
}

/// The proxy and the toxic it had on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProxyUndo {
    pub listen: String,
    pub upstream: String,
    pub toxic: Value,
}

impl UndoRecord for ProxyUndo {
    /// The proxy is a task of the faultline process: it ended with it.
    fn heal(&self, fault: &str, _reach: &crate::host::Reach) -> Result<String, String> {
        Ok(format!(
            "{fault}: proxy {} ran inside faultline and ended with it; no toxic is left",
            self.listen
        ))
    }
}
