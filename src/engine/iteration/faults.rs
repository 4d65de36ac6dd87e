//! One injection of one fault step: intent, inject, the landing evidence from both
//! sides, heal — each journaled. When the injection happens and how long it is held
//! is the schedule's business (`schedule.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use serde_json::json;

use super::schedule::Nemeses;
use super::{DEFAULT_LANDING_WITHIN, EngineError, FaultFacts, Runner};
use crate::nemesis::landing::LogWatch;
use crate::nemesis::proxy::Proxy;
use crate::nemesis::signal::{self, Watch};
use crate::nemesis::{Context, Held, Ran, Window};
use crate::runspec::{FaultStep, LogSignal, Side, SignalRef};
use crate::session::event::{self, Event};

/// A declared signal with its window open, how long it may take, and whose side it is.
pub(super) type Landing = (Watch, Duration, Side);

/// How long the injector side may take to see its effect: the longest declared
/// landing window, else the default.
fn injector_window(step: &FaultStep) -> Duration {
    step.landing
        .iter()
        .filter_map(|l| l.within.map(|d| d.0))
        .max()
        .unwrap_or(DEFAULT_LANDING_WITHIN)
}

impl Runner<'_> {
    /// The files a log signal watches: each named service's stdout and stderr logs
    /// (labelled with the service when there are several), or a file of the SUT's.
    fn signal_files(
        &mut self,
        log: &LogSignal,
    ) -> Result<Vec<(Option<String>, PathBuf)>, EngineError> {
        let services: Vec<&String> = log.service.iter().chain(&log.services).collect();
        if !services.is_empty() {
            let several = services.len() > 1;
            return Ok(services
                .into_iter()
                .flat_map(|service| {
                    ["stdout", "stderr"].map(|stream| {
                        let file = self.ctx.logs.join(format!("{service}.{stream}.log"));
                        (several.then(|| service.clone()), file)
                    })
                })
                .collect());
        }
        Ok(match &log.file {
            // Relative paths are the SUT's, like the commands that write them.
            Some(file) => {
                let file = self.expand(file)?;
                vec![(None, self.ctx.cwd.join(file))]
            }
            None => Vec::new(),
        })
    }

    /// Opens the window of one signal now: what was true before it proves nothing.
    /// `None` for a log signal that names neither a service nor a file.
    pub(super) async fn open_watch(
        &mut self,
        fault: &str,
        signal: SignalRef<'_>,
    ) -> Result<Option<Watch>, EngineError> {
        Ok(Some(match signal {
            SignalRef::Log(log) => {
                let files = self.signal_files(log)?;
                if files.is_empty() {
                    return Ok(None);
                }
                let pattern = regex::Regex::new(&log.pattern)
                    .map_err(|e| self.io(format!("fault {fault} pattern: {e}")))?;
                Watch::Log(
                    files
                        .into_iter()
                        .map(|(label, file)| (label, LogWatch::begin(&file, pattern.clone())))
                        .collect(),
                )
            }
            SignalRef::Counter(counter) => {
                let mut spec = counter.clone();
                spec.run = self.expand(&spec.run)?;
                Watch::counter(spec, &self.ctx.cwd).await
            }
            SignalRef::Http(http) => {
                let mut spec = http.clone();
                spec.url = self.expand(&spec.url)?;
                Watch::http(spec).await
            }
            SignalRef::Prometheus(prom) => {
                let mut spec = prom.clone();
                spec.url = self.expand(&spec.url)?;
                Watch::prometheus(spec).await
            }
            SignalRef::History(history) => {
                let path = self.expand(&history.path)?;
                let path = self.ctx.cwd.join(path);
                Watch::Log(vec![(
                    None,
                    LogWatch::begin(&path, signal::history_pattern()),
                )])
            }
        }))
    }

    pub(super) fn write_epoch(&self, text: &str) -> Result<(), EngineError> {
        crate::session::dir::write_untrusted(&self.ctx.artifacts, "fault_epoch", text.as_bytes())
            .map_err(|e| self.io(e))
    }

    /// Journals the intent, injects the fault and journals how to undo it. `None` when
    /// the injection failed (journaled, and said in `facts`).
    pub(super) async fn inject(
        &mut self,
        step: &FaultStep,
        epoch: u64,
        facts: &mut FaultFacts,
    ) -> Result<Option<(Held, Vec<Landing>)>, EngineError> {
        let watches = landing_watches(self, step).await?;
        facts.epoch = Some(epoch);
        facts
            .cites
            .push(self.log(Event::FaultIntent(event::FaultIntent {
                fault: facts.id.clone(),
                epoch,
            }))?);
        self.write_epoch(&epoch.to_string())?;
        // A privileged step without a recorded approval is refused like a failed inject.
        let attempt = match self.privileged_approval(step) {
            Ok(approved) => step
                .nemesis
                .inject(&step.id, self)
                .await?
                .map(|held| (held, approved)),
            Err(refused) => Err(refused),
        };
        let (held, approved) = match attempt {
            Ok(held) => held,
            Err(error) => {
                facts
                    .cites
                    .push(self.log(Event::FaultInjectFailed(event::FaultInjectFailed {
                        fault: facts.id.clone(),
                        error: error.clone(),
                    }))?);
                facts.detail.push(format!("inject failed: {error}"));
                facts.inject_failed = Some(error.clone());
                return Ok(None);
            }
        };
        facts.injected = true;
        let pid = held.pid();
        let undo = Some(held.undo());
        let seq = self.log(Event::FaultInjected(event::FaultInjected {
            fault: facts.id.clone(),
            pid,
            undo,
            approved,
        }))?;
        facts.cites.push(seq);
        self.note_injected(step, &facts.id, pid, seq);
        Ok(Some((held, watches)))
    }

    /// The journal seq of the approval a privileged step runs under (`None` for a step
    /// that needs none); an error when it needs one nobody gave.
    pub(super) fn privileged_approval(&self, step: &FaultStep) -> Result<Option<u64>, String> {
        if crate::engine::privileged::step_action(step).is_none() {
            return Ok(None);
        }
        self.approval(&step.id).map(Some)
    }

    /// Injector-side and declared landing evidence for an injected fault.
    pub(super) async fn observe(
        &mut self,
        step: &FaultStep,
        held: &Held,
        watches: &[Landing],
        facts: &mut FaultFacts,
        until: Option<Instant>,
    ) -> Result<(), EngineError> {
        let window = proof_window(step, until);
        if let Some(seen) = held.probe(window, &*self).await? {
            facts.injector_landed = seen.landed;
            facts.detail.push(format!("injector: {}", seen.text));
            let mut detail = seen.detail;
            detail["text"] = json!(seen.text);
            facts
                .cites
                .push(self.log(Event::LandingInjector(event::LandingInjector {
                    fault: facts.id.clone(),
                    landed: seen.landed,
                    text: seen.text,
                    detail,
                }))?);
        }
        // A kind's built-in victim-side check counts like a declared signal.
        let mut builtin_victim = None;
        if let Some(seen) = held.victim(window, &*self).await? {
            facts.victim_side_seen = seen.landed;
            builtin_victim = Some(seen.landed);
            facts.detail.push(format!("victim: {}", seen.detail));
            facts
                .cites
                .push(self.log(Event::LandingDeclared(event::LandingDeclared {
                    fault: facts.id.clone(),
                    side: Some(Side::Victim),
                    pattern: seen.pattern,
                    seen: json!(seen.landed.then_some(&seen.detail)),
                    skew_s: seen.skew,
                }))?);
        }
        await_declared(self, watches, window, builtin_victim, facts).await
    }

    /// Heals a held fault and journals the result. Runs whatever interrupted the
    /// session: healing is never skipped.
    pub(super) async fn heal(
        &mut self,
        held: Held,
        facts: &mut FaultFacts,
    ) -> Result<(), EngineError> {
        let healed = held.heal(&*self).await;
        facts.healed = healed.is_ok();
        facts
            .cites
            .push(self.log(Event::FaultHealed(event::FaultHealed {
                fault: facts.id.clone(),
                result: Some(healed),
                by: None,
            }))?);
        Ok(())
    }
}

/// The window of a fault's landing proof: its longest declared window (else the
/// default), cut to the time left before the heal is due (`until`, set when the
/// step declares a `duration`): `duration` runs from injection to heal whatever the
/// proof is doing.
pub(super) fn proof_window(step: &FaultStep, until: Option<Instant>) -> Window {
    let mut window = Window {
        within: injector_window(step),
        until,
    };
    window.within = window.clip(window.within);
    window
}

/// Watches for the step's declared landing signals, opened before injection so only
/// what happens after it counts.
pub(super) async fn landing_watches<N: Nemeses>(
    n: &mut N,
    step: &FaultStep,
) -> Result<Vec<Landing>, EngineError> {
    let mut watches = Vec::new();
    for landing in &step.landing {
        let within = landing.within.map_or(DEFAULT_LANDING_WITHIN, |d| d.0);
        for signal in landing.signals() {
            if let Some(watch) = n.open_watch(&step.id, signal).await? {
                watches.push((watch, within, landing.side));
            }
        }
    }
    Ok(watches)
}

/// Waits for each declared signal in its window (cut to `window`'s end), journals
/// what it saw, then the proof: landed when there was victim-side evidence (the
/// kind's built-in check, `builtin_victim`, or a declared signal) and all of it was
/// seen. Injector-side evidence alone proves nothing.
pub(super) async fn await_declared<N: Nemeses>(
    n: &mut N,
    watches: &[Landing],
    window: Window,
    builtin_victim: Option<bool>,
    facts: &mut FaultFacts,
) -> Result<(), EngineError> {
    let mut all =
        builtin_victim.unwrap_or(true) && (builtin_victim.is_some() || !watches.is_empty());
    for (watch, within, side) in watches {
        let found = n
            .guard(watch.await_match(window.clip(*within)))
            .await?
            .map_err(|e| n.io(e.to_string()))?;
        all &= found.is_some();
        if found.is_some() {
            match side {
                Side::Victim => facts.victim_side_seen = true,
                Side::Injector => facts.injector_landed = true,
            }
        }
        let side_name = match side {
            Side::Victim => "victim",
            Side::Injector => "injector",
        };
        facts.detail.push(match &found {
            Some(line) => format!("{side_name}: {}", crate::sanitize::line(line)),
            None => format!(
                "{side_name}: `{}` not seen within {within:?}",
                watch.describe()
            ),
        });
        facts
            .cites
            .push(n.log(Event::LandingDeclared(event::LandingDeclared {
                fault: facts.id.clone(),
                side: Some(*side),
                pattern: watch.describe(),
                seen: json!(found),
                skew_s: None,
            }))?);
    }
    facts.declared_landed = all;
    // The decision, once: readers (live chart, metrics, figures, report) take it
    // from this record instead of weighing the evidence again.
    let proven = facts.proven();
    facts.cites.push(n.log(Event::FaultProof(event::FaultProof {
        fault: facts.id.clone(),
        epoch: facts.epoch,
        proven,
        why: if proven {
            "every declared signal seen in its window".into()
        } else if !facts.injected {
            "not injected".into()
        } else {
            "a declared signal was not seen in its window".into()
        },
    }))?);
    Ok(())
}

/// What a nemesis gets from the iteration it acts in.
impl Context for Runner<'_> {
    type Error = EngineError;

    fn expand(&mut self, text: &str) -> Result<String, EngineError> {
        Runner::expand(self, text)
    }

    fn fail(&self, message: String) -> EngineError {
        self.io(message)
    }

    async fn guard<T>(&self, fut: impl Future<Output = T>) -> Result<T, EngineError> {
        Runner::guard(self, fut).await
    }

    fn logs(&self) -> &Path {
        &self.ctx.logs
    }

    fn cwd(&self) -> &Path {
        &self.ctx.cwd
    }

    fn members(&self) -> Vec<String> {
        // The workload client is kept with the services, but is no member.
        self.services
            .keys()
            .filter(|k| *k != crate::session::label::CommandRole::Workload.as_str())
            .cloned()
            .collect()
    }

    fn service(&self, name: &str) -> Option<crate::nemesis::Service> {
        let running = self.services.get(name)?;
        Some(crate::nemesis::Service {
            pgid: running.pgid,
            node: running.node().map(str::to_string),
            faketime: self.faketime.get(name).cloned(),
        })
    }

    fn host(&self, node: Option<&str>) -> Result<Arc<crate::host::Host>, String> {
        self.ctx.hosts.get(node)
    }

    async fn run_once(
        &mut self,
        name: &str,
        command: &str,
        deadline: Duration,
    ) -> Result<Ran, EngineError> {
        let (outcome, _) = Runner::run_once(self, name, command, deadline).await?;
        let tail = |stream: &str| {
            super::watch::log_tail(&self.ctx.logs.join(format!("{name}.{stream}.log")))
        };
        Ok(Ran {
            outcome,
            stdout: tail("stdout"),
            stderr: tail("stderr"),
        })
    }

    fn proxy(&self, listen: &str) -> Option<Arc<Proxy>> {
        self.proxies.get(listen).cloned()
    }

    fn approval(&self, fault: &str) -> Result<u64, String> {
        match &self.ctx.privileged {
            Some(approval) => Ok(approval.seq),
            None => Err(format!(
                "fault {fault} is a privileged action and no approval was recorded for {} \
                 (privileged.{})",
                self.ctx.id, self.ctx.id
            )),
        }
    }
}
