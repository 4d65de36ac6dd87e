//! Reaching a session's nodes again from its journal alone (`faultline heal`, the
//! watchdog, `resume`): each `node-connected` record says how, host key checking
//! as strict as the run's.

use std::collections::BTreeMap;

use super::ssh::SshHost;
use super::{Host, Hosts, NodeSpec};

/// The journal's nodes, connected, and a runtime to drive them on.
#[derive(Default)]
pub struct Reach {
    pub hosts: Hosts,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Reach {
    /// Runs `work` on the nodes' runtime; without one (no node was recorded: the
    /// work is on this machine), on a runtime of its own on a thread of its own, so it
    /// works inside a runtime or outside one.
    pub fn block_on<F>(&self, work: F) -> Result<F::Output, String>
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        // Inside a runtime (a heal called from async code) a runtime cannot block:
        // the nodes' own runtime drives `work` from a thread of its own, as a fresh one
        // does when there is none.
        let inside = tokio::runtime::Handle::try_current().is_ok();
        if let (Some(runtime), false) = (&self.runtime, inside) {
            return Ok(runtime.block_on(work));
        }
        std::thread::scope(|scope| {
            scope
                .spawn(|| match &self.runtime {
                    Some(runtime) => Ok(runtime.block_on(work)),
                    None => tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map(|runtime| runtime.block_on(work))
                        .map_err(|e| format!("no runtime: {e}")),
                })
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// The host of `node` (this machine for `None`), or why it cannot be reached.
    pub fn host(&self, node: Option<&str>) -> Result<std::sync::Arc<Host>, String> {
        self.hosts.get(node)
    }
}

/// Runs `work` with `nodes` connected, on a thread of its own: healing is called from
/// inside a runtime (stopping on an error) and outside one (`faultline heal`). A node
/// that cannot be reached is in `hosts.unreachable`, with why.
pub fn with_nodes<T: Send>(
    nodes: &BTreeMap<String, NodeSpec>,
    work: impl FnOnce(&Reach) -> T + Send,
) -> T {
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    tracing::error!(error = %e, "no runtime to reach the nodes");
                    let mut reach = Reach::default();
                    for name in nodes.keys() {
                        reach
                            .hosts
                            .unreachable
                            .insert(name.clone(), format!("no runtime: {e}"));
                    }
                    return work(&reach);
                }
            };
            let mut hosts = Hosts::default();
            for (name, node) in nodes {
                match runtime.block_on(SshHost::connect(name, node.clone())) {
                    Ok(host) => hosts.insert(name, std::sync::Arc::new(host)),
                    Err(e) => {
                        hosts.unreachable.insert(name.clone(), e.to_string());
                    }
                }
            }
            work(&Reach {
                hosts,
                runtime: Some(runtime),
            })
        });
        match worker.join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
