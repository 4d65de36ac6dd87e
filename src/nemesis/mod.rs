//! Fault kinds. Each fault is a resource with a lifetime: injected, observed from the
//! injector side, healed — and healed on drop if nobody healed it explicitly.
//!
//! Every kind implements [`Nemesis`] (its run-spec spec), [`HeldFault`] (the fault
//! while it is held) and [`UndoRecord`] (what the journal keeps to heal it after a
//! crash); `spec.rs` lists the kinds once and derives the enums the engine, the run
//! spec and the journal use from that list. The kinds' spec types are this module's
//! own (`runspec` re-exports them).
//!
//! A nemesis never journals: a held fault returns its undo record
//! ([`HeldFault::undo`]) and what a fault holds for the iteration ([`Resource`],
//! from [`Nemesis::prepare`]), and the engine journals both.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::Instant;

use crate::exec::Outcome;

pub mod clock;
pub mod command;
pub mod disk;
pub mod docker;
pub mod landing;
pub mod net;
pub mod process;
pub mod proxy;
pub mod signal;
pub mod spec;

pub use spec::{Held, Kind, NemesisSpec, Undo};

/// Calls `observe` every `every` until `done` holds for what it saw or `within`
/// passes; returns the last observation. Landing probes wait on a condition this way,
/// never on a fixed sleep.
pub async fn poll_until<T>(
    within: std::time::Duration,
    every: std::time::Duration,
    mut observe: impl FnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    poll_until_async(within, every, async || observe(), done).await
}

/// [`poll_until`] for an observation that must be awaited (a round trip to a node).
pub async fn poll_until_async<T>(
    within: std::time::Duration,
    every: std::time::Duration,
    mut observe: impl AsyncFnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let seen = observe().await;
        if done(&seen) || tokio::time::Instant::now() >= deadline {
            return seen;
        }
        tokio::time::sleep(every).await;
    }
}

/// What the engine lends a nemesis while it prepares, injects, probes and heals one
/// fault of an iteration. Kept narrow so the place a fault acts on (a host) is one
/// more method here.
// Enum dispatch only (never `dyn Context`), so the futures' auto traits are the
// engine's concrete ones.
#[allow(async_fn_in_trait)]
pub trait Context {
    /// What ends the iteration (an interrupt, an unusable `${var}`, a journal that
    /// cannot be written); a failed injection is an `Ok(Err(message))` instead.
    type Error;
    /// `text` with its `${var}`s expanded.
    fn expand(&mut self, text: &str) -> Result<String, Self::Error>;
    /// An error that ends the iteration, saying `message`.
    fn fail(&self, message: String) -> Self::Error;
    /// Awaits `fut` unless the session is interrupted first.
    async fn guard<T>(&self, fut: impl Future<Output = T>) -> Result<T, Self::Error>;
    /// The session's `logs/` directory.
    fn logs(&self) -> &Path;
    /// The directory the SUT's commands run in.
    fn cwd(&self) -> &Path;
    /// The cluster's members by service name (the workload client is none).
    fn members(&self) -> Vec<String>;
    /// What a fault may know of running service `name`; `None` when no such
    /// service runs.
    fn service(&self, name: &str) -> Option<Service>;
    /// The host a fault acts on (`None`: this machine), or why it cannot be used.
    fn host(&self, node: Option<&str>) -> Result<Arc<crate::host::Host>, String>;
    /// Runs `command` once as a journaled child named `name`, its output in `logs/`.
    async fn run_once(
        &mut self,
        name: &str,
        command: &str,
        deadline: Duration,
    ) -> Result<Ran, Self::Error>;
    /// The fault proxy listening on `listen`, if one runs (a [`Resource::Proxy`] an
    /// earlier step's [`Nemesis::prepare`] returned).
    fn proxy(&self, listen: &str) -> Option<Arc<proxy::Proxy>>;
    /// The journal seq of the approval fault `fault`'s privileged action runs under,
    /// or why there is none.
    fn approval(&self, fault: &str) -> Result<u64, String>;
}

/// A running service as a fault sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    /// Its process group (on its node).
    pub pgid: i32,
    /// The node it runs on (`None`: this machine).
    pub node: Option<String>,
    /// Its faketime control file and environment, when it was started with
    /// `faketime: true`.
    pub faketime: Option<(PathBuf, Vec<(String, String)>)>,
}

/// How a [`Context::run_once`] child ended, and the last lines it printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub outcome: Outcome,
    /// The last non-blank lines of its stdout, sanitized.
    pub stdout: Vec<String>,
    /// The last non-blank lines of its stderr, sanitized.
    pub stderr: Vec<String>,
}

/// What a fault puts in place before the cluster starts and holds for the whole
/// iteration. The engine journals it when it is returned, keeps it, and takes it
/// down (journaled too) after the services stop.
#[derive(Debug)]
pub enum Resource {
    /// A fault proxy, by the listen address its spec names (`${var}`s expanded).
    Proxy {
        listen: String,
        proxy: Arc<proxy::Proxy>,
    },
    /// A tmpfs mounted for the iteration.
    Mount(disk::Tmpfs),
}

/// One nemesis kind's run-spec spec: what it needs, and how it is injected.
// Enum dispatch only, as for `Context`.
#[allow(async_fn_in_trait)]
pub trait Nemesis {
    type Held: HeldFault;
    /// What fault `fault` does with privilege, in words an operator can approve;
    /// `None` when it needs none. `${var}`s are shown as written.
    fn privileged(&self, _fault: &str) -> Option<String> {
        None
    }
    /// The node (`nodes:`) it names as the one it acts on; this machine when `None`.
    fn node(&self) -> Option<&str> {
        None
    }
    /// Whether it ends a member's processes (a failover is planned).
    fn ends_processes(&self) -> bool {
        false
    }
    /// The shell commands it runs, by field name (`inject`, `heal`), as written.
    fn commands(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// Problems `load` reports: (field, message) for fault `fault` of scenario `of`.
    fn check(&self, _of: &str, _fault: &str) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Puts in place what the fault needs before the cluster starts, and returns it
    /// for the engine to journal and hold; `None` when it needs nothing.
    async fn prepare<C: Context>(
        &self,
        _fault: &str,
        _cx: &mut C,
    ) -> Result<Option<Resource>, C::Error> {
        Ok(None)
    }
    /// Injects fault `fault`; `Ok(Err(message))` when the injection failed.
    async fn inject<C: Context>(
        &self,
        fault: &str,
        cx: &mut C,
    ) -> Result<Result<Self::Held, String>, C::Error>;
}

/// How long an injector-side probe may look: `within` (already cut to the heal),
/// and the heal's due time to cut any other window to.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub within: Duration,
    pub until: Option<Instant>,
}

impl Window {
    /// `window` cut to the time left before the heal is due: a landing is shown while
    /// the fault is held.
    pub fn clip(&self, window: Duration) -> Duration {
        self.until.map_or(window, |t| {
            window.min(t.saturating_duration_since(Instant::now()))
        })
    }
}

/// What a kind's built-in injector-side probe saw, in one shape for the journal.
#[derive(Debug, Clone)]
pub struct InjectorSeen {
    pub landed: bool,
    pub text: String,
    /// The kind's own figures (counters before / after, container state …).
    pub detail: Value,
}

/// What a kind's built-in victim-side check saw (it counts like a declared signal).
#[derive(Debug, Clone)]
pub struct VictimSeen {
    pub landed: bool,
    pub detail: String,
    /// What was watched for, as the journal names it.
    pub pattern: String,
    pub skew: Option<i64>,
}

/// A fault between injection and heal.
// Enum dispatch only, as for `Context`.
#[allow(async_fn_in_trait)]
pub trait HeldFault {
    type Undo: UndoRecord;
    /// The victim's pid, for a fault aimed at one process.
    fn pid(&self) -> Option<i32> {
        None
    }
    /// Enough to heal it later from the journal alone (`faultline heal`).
    fn undo(&self) -> Self::Undo;
    /// The built-in injector-side probe; `None` for a kind whose probes are all declared.
    async fn probe<C: Context>(
        &self,
        window: Window,
        cx: &C,
    ) -> Result<Option<InjectorSeen>, C::Error>;
    /// The built-in victim-side check, for a kind that has one.
    async fn victim<C: Context>(
        &self,
        _window: Window,
        _cx: &C,
    ) -> Result<Option<VictimSeen>, C::Error> {
        Ok(None)
    }
    /// Heals it; the line says what was done.
    async fn heal<C: Context>(self, cx: &C) -> Result<String, String>;
}

/// How a fault is undone by a process that did not inject it (`faultline heal`).
pub trait UndoRecord: std::fmt::Debug + Clone + PartialEq + Serialize + DeserializeOwned {
    /// The journal holds it under its kind's key (`{"net": {…}}`); the first kinds
    /// wrote their bare fields, and journals of theirs are still read.
    const KEYED: bool = true;
    /// Heals fault `fault` from this record alone; each line names the fault. A
    /// record of a fault on a node reaches it through `reach`.
    fn heal(&self, fault: &str, reach: &crate::host::Reach) -> Result<String, String>;
}
