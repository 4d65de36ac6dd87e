//! What the faults of a binding need in place before the cluster starts, and take
//! down after it stops: the fault proxies clients connect through, the tmpfs
//! mounts `disk` faults fill, and the cgroups that hold the services (so a service
//! that daemonizes is still ended with the rest).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;

use super::{EngineError, Runner};
use crate::exec::cgroup::{self, Cgroup};
use crate::nemesis::Resource;
use crate::runspec::Binding;
use crate::session::event::{self, Event};

impl Runner<'_> {
    /// Puts in place what each fault needs before the cluster starts (the fault
    /// proxies clients connect through, the tmpfs mounts `disk` faults fill): its
    /// nemesis returns it, and it is journaled here and held for the iteration.
    pub(super) async fn prepare_faults(&mut self, binding: &Binding) -> Result<(), EngineError> {
        for fault in &binding.faults {
            let step = &fault.value;
            if let Some(resource) = step.nemesis.prepare(&step.id, self).await? {
                self.hold(resource)?;
            }
        }
        Ok(())
    }

    /// Journals what a fault put in place, then keeps it for the iteration (a
    /// resource the journal cannot record is dropped, which takes it down).
    fn hold(&mut self, resource: Resource) -> Result<(), EngineError> {
        match resource {
            Resource::Proxy { listen, proxy } => {
                self.log(Event::ProxyStarted(event::ProxyStarted {
                    listen: proxy.listen.to_string(),
                    upstream: proxy.upstream.clone(),
                }))?;
                self.proxies.insert(listen, proxy);
            }
            Resource::Mount(mount) => {
                self.log(Event::MountCreated(event::MountCreated {
                    path: mount.path.display().to_string(),
                    fstype: "tmpfs".into(),
                    size: mount.size.clone(),
                }))?;
                self.mounts.push(mount);
            }
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

    /// The cgroup service `name` starts in, inside this iteration's own cgroup (made
    /// with the first service). Each is journaled as soon as it exists, before any
    /// process is in it, so a healer after a crash finds it (a crash between the
    /// `mkdir` and the record leaves an empty cgroup, never a process). `None` where
    /// cgroup v2 is not usable: the service is ended by its process group only, and
    /// the journal says so once.
    pub(super) fn service_cgroup(&mut self, name: &str) -> Result<Option<Cgroup>, EngineError> {
        let base = match cgroup::base() {
            Ok(base) => base,
            Err(why) => return self.cgroups_unusable(why).map(|()| None),
        };
        let parent = match &self.cgroup {
            Some(parent) => parent.clone(),
            None => {
                let Some(made) = self.make_cgroup(base.join(cgroup::iteration_name()), None)?
                else {
                    return Ok(None);
                };
                let path = made.path().to_path_buf();
                self.cgroup = Some(path.clone());
                path
            }
        };
        // Two services whose names read the same as cgroup names get `-2`, `-3`.
        let safe = crate::host::cgroup::safe(name);
        let mut path = parent.join(&safe);
        let mut n = 1;
        while path.exists() {
            n += 1;
            path = parent.join(format!("{safe}-{n}"));
        }
        self.make_cgroup(path, Some(name))
    }

    fn make_cgroup(
        &mut self,
        path: PathBuf,
        service: Option<&str>,
    ) -> Result<Option<Cgroup>, EngineError> {
        match Cgroup::create(path.clone()) {
            Ok(made) => {
                self.log(Event::CgroupCreated(event::CgroupCreated {
                    path: path.display().to_string(),
                    service: service.map(str::to_string),
                }))?;
                Ok(Some(made))
            }
            Err(e) => {
                let why = format!("cannot create cgroup {}: {e}", path.display());
                self.cgroups_unusable(&why).map(|()| None)
            }
        }
    }

    /// Says once per faultline process (in the journal, as a checklist row) that
    /// services are contained by their process groups only.
    fn cgroups_unusable(&mut self, why: &str) -> Result<(), EngineError> {
        static SAID: AtomicBool = AtomicBool::new(false);
        if SAID.swap(true, Ordering::Relaxed) {
            return Ok(());
        }
        tracing::warn!(
            why,
            "cgroup v2 not usable: services are ended by process group only"
        );
        self.log(Event::Capability(event::CapabilitySeen {
            need: "services contained in a cgroup (a daemonizing service is ended too)".into(),
            capability: CGROUP_CAPABILITY.into(),
            present: false,
            version: None,
            meets_floor: None,
            command: "cgroup v2 mount and own cgroup from /proc/self/mountinfo and \
                      /proc/self/cgroup; write access to its cgroup.procs; mkdir of a child"
                .into(),
            saw: crate::sanitize::line(why),
            used_by: vec!["services".into()],
        }))?;
        Ok(())
    }

    /// Ends every process in the cgroup at `path`, removes it, journals it (off the
    /// runtime's threads: ending members may take a moment).
    pub(super) async fn remove_cgroup(&mut self, path: PathBuf) -> Result<(), EngineError> {
        let target = path.clone();
        let result = tokio::task::spawn_blocking(move || cgroup::remove(&target))
            .await
            .unwrap_or_else(|e| Err(format!("removing cgroup {}: {e}", path.display())));
        self.cgroup_removed(&path, result)
    }

    pub(super) fn cgroup_removed(
        &mut self,
        path: &Path,
        result: Result<String, String>,
    ) -> Result<(), EngineError> {
        if let Err(e) = &result {
            tracing::warn!(error = %e, "cgroup not removed");
        }
        self.log(Event::CgroupRemoved(event::CgroupRemoved {
            path: path.display().to_string(),
            result: Some(result),
            by: None,
        }))?;
        Ok(())
    }
}

/// The checklist row a run without cgroup v2 containment adds.
const CGROUP_CAPABILITY: &str = "cgroup-v2";
