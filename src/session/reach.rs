//! Reaching a session's nodes again from its journal alone (`faultline heal`, the
//! watchdog, `resume`): each `node-connected` record says how, host key checking
//! as strict as the run's.

use std::collections::BTreeMap;

use super::event::NodeConnected;
use crate::host::ssh::SshHost;
use crate::host::{Host, Hosts};

/// The journal's nodes, connected, and a runtime to drive them on.
pub struct Reach {
    pub hosts: Hosts,
    runtime: tokio::runtime::Runtime,
}

impl Reach {
    pub fn block_on<F: std::future::Future>(&self, work: F) -> F::Output {
        self.runtime.block_on(work)
    }
}

/// Runs `work` with `nodes` connected, on a thread of its own: healing is called from
/// inside a runtime (stopping on an error) and outside one (`faultline heal`). A node
/// that cannot be reached is in `hosts.unreachable`, with why.
pub fn with_nodes<T: Send>(
    nodes: &BTreeMap<String, NodeConnected>,
    work: impl FnOnce(Option<&Reach>) -> T + Send,
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
                    return work(None);
                }
            };
            let mut hosts = Hosts::default();
            for (name, node) in nodes {
                match runtime.block_on(SshHost::connect(name, node.spec.clone())) {
                    Ok(host) => hosts.insert(name, Host::Ssh(Box::new(host))),
                    Err(e) => {
                        hosts.unreachable.insert(name.clone(), e.to_string());
                    }
                }
            }
            work(Some(&Reach { hosts, runtime }))
        });
        match worker.join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
