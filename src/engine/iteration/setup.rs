//! What the faults of a binding need in place before the cluster starts, and take
//! down after it stops: the fault proxies clients connect through, and the tmpfs
//! mounts `disk` faults fill.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;

use super::{EngineError, Runner};
use crate::nemesis::disk::Tmpfs;
use crate::nemesis::proxy::Proxy;
use crate::runspec::{Binding, DiskFaultSpec};
use crate::session::event::{self, Event};

impl Runner<'_> {
    /// Starts the fault proxy of every `proxy` fault (one per listen address) before the
    /// cluster, so clients can route through it from their first connection.
    pub(super) async fn start_proxies(&mut self, binding: &Binding) -> Result<(), EngineError> {
        for fault in &binding.faults {
            let Some(spec) = &fault.value.proxy else {
                continue;
            };
            let listen = self.expand(&spec.listen)?;
            let upstream = self.expand(&spec.upstream)?;
            if self.proxies.contains_key(&listen) {
                continue;
            }
            let proxy = Proxy::start(&listen, &upstream).await.map_err(|e| {
                self.io(format!(
                    "fault {} proxy.listen `{listen}`: {e}",
                    fault.value.id
                ))
            })?;
            self.log(Event::ProxyStarted(event::ProxyStarted {
                listen: proxy.listen.to_string(),
                upstream: upstream.to_string(),
            }))?;
            self.proxies.insert(listen, Arc::new(proxy));
        }
        Ok(())
    }

    pub(super) fn stop_proxies(&mut self) -> Result<(), EngineError> {
        for (listen, proxy) in std::mem::take(&mut self.proxies) {
            let counters = proxy.snapshot();
            drop(proxy);
            self.log(Event::ProxyStopped(event::ProxyStopped {
                listen: listen.to_string(),
                counters: json!(counters),
            }))?;
        }
        Ok(())
    }

    /// The directory a disk fault fills, `${var}`s expanded, relative to the SUT.
    pub(super) fn disk_path(&mut self, spec: &DiskFaultSpec) -> Result<PathBuf, EngineError> {
        let path = self.expand(&spec.path)?;
        // Absolute, so `faultline heal` run from anywhere finds the same filler.
        std::path::absolute(self.ctx.cwd.join(path)).map_err(|e| self.io(e))
    }

    /// Mounts the tmpfs every `disk` fault with a `size` asks for, before anything
    /// starts writing there. Each mount is journaled so `faultline heal` can undo it.
    pub(super) fn mount_disks(&mut self, binding: &Binding) -> Result<(), EngineError> {
        for fault in &binding.faults {
            let Some(spec) = &fault.value.disk else {
                continue;
            };
            let Some(size) = &spec.size else { continue };
            self.privileged_approval(&fault.value)
                .map_err(|e| self.io(e))?;
            let size = self.expand(size)?;
            let path = self.disk_path(spec)?;
            let mount = Tmpfs::mount(&path, &size).map_err(|e| {
                self.io(format!(
                    "fault {} (disk.path / disk.size): {e}",
                    fault.value.id
                ))
            })?;
            self.log(Event::MountCreated(event::MountCreated {
                path: path.display().to_string(),
                fstype: "tmpfs".into(),
                size: size.to_string(),
            }))?;
            self.mounts.push(mount);
        }
        Ok(())
    }

    pub(super) fn unmount_disks(&mut self) -> Result<(), EngineError> {
        for mount in std::mem::take(&mut self.mounts) {
            let path = mount.path.display().to_string();
            let result = mount
                .unmount()
                .map(|()| format!("tmpfs at {path} unmounted"))
                .map_err(|e| e.to_string());
            self.log(Event::MountRemoved(event::MountRemoved {
                path,
                result: Some(result),
                by: None,
            }))?;
        }
        Ok(())
    }
}
