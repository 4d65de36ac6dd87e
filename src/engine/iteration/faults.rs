//! One injection of one fault step: intent, inject, the landing evidence from both
//! sides, heal — each journaled. When the injection happens and how long it is held
//! is the schedule's business (`schedule.rs`).

use std::path::PathBuf;
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{Value, json};

use super::{DEFAULT_DEADLINE, DEFAULT_LANDING_WITHIN, EngineError, FaultFacts, Runner};
use crate::exec;
use crate::nemesis::clock::{self, InjectedClock, VictimClock};
use crate::nemesis::command::{CommandFault, InjectedCommand};
use crate::nemesis::docker::{self, InjectedDocker};
use crate::nemesis::landing::LogWatch;
use crate::nemesis::net::{self, InjectedNet};
use crate::nemesis::process::{self, Action, Target};
use crate::nemesis::proxy::{InjectedProxy, Toxic};
use crate::nemesis::signal::{self, Watch};
use crate::nemesis::{Kind, disk};
use crate::runspec::{
    ClockFaultSpec, FaultStep, LogSignal, NetFaultSpec, ProcessFaultSpec, ProxyFaultSpec, Side,
    SignalName, SignalRef, TargetSpec,
};
use crate::session::event::{self, Event, Undo};

/// How long a `command` fault target may take to name its victim.
const TARGET_DEADLINE: Duration = Duration::from_secs(5);

/// A fault between injection and heal.
pub(super) enum Held {
    Process(process::Injected),
    Command(InjectedCommand),
    Net(InjectedNet),
    Disk(disk::InjectedDisk),
    Clock(InjectedClock, VictimClock),
    Proxy(InjectedProxy),
    Docker(InjectedDocker),
}

/// A declared signal with its window open, how long it may take, and whose side it is.
pub(super) type Landing = (Watch, Duration, Side);

/// What a kind's built-in injector-side probe saw, in one shape for the journal.
struct InjectorSeen {
    landed: bool,
    text: String,
    /// The kind's own figures (counters before / after, container state …).
    detail: Value,
}

/// How long the injector side may take to see its effect: the longest declared
/// landing window, else the default.
fn injector_window(step: &FaultStep) -> Duration {
    step.landing
        .iter()
        .filter_map(|l| l.within.map(|d| d.0))
        .max()
        .unwrap_or(DEFAULT_LANDING_WITHIN)
}

/// A proof's window cut to the time left before the fault's heal is due (`until`,
/// set when the step declares a `duration`): a landing is shown while the fault is
/// held, and `duration` runs from injection to heal whatever the proof is doing.
fn clip(window: Duration, until: Option<Instant>) -> Duration {
    until.map_or(window, |t| {
        window.min(t.saturating_duration_since(Instant::now()))
    })
}

impl Runner<'_> {
    /// The process a process fault aims at. A `command` target is asked at injection
    /// time (the current leader, say): the last line it prints names a service of the
    /// cluster or a pid; anything else fails the injection, saying what it printed.
    async fn victim_pid(
        &mut self,
        fault: &str,
        target: &TargetSpec,
    ) -> Result<Result<Target, String>, EngineError> {
        let service = match target {
            TargetSpec::Pid(pid) => return Ok(Ok(Target::Pid(*pid))),
            TargetSpec::Pidfile(path) => {
                return Ok(Ok(Target::Pidfile(PathBuf::from(self.expand(path)?))));
            }
            TargetSpec::Service(name) => name.clone(),
            TargetSpec::Command(command) => {
                let command = self.expand(command)?;
                let name = format!("{fault}-target");
                let (outcome, _) = self.run_once(&name, &command, TARGET_DEADLINE).await?;
                let out = std::fs::read_to_string(self.ctx.logs.join(format!("{name}.stdout.log")))
                    .unwrap_or_default();
                let named = out
                    .lines()
                    .map(str::trim)
                    .rfind(|l| !l.is_empty())
                    .unwrap_or("");
                if outcome != exec::Outcome::Exited(0) {
                    return Ok(Err(format!("target command `{command}` ended {outcome:?}")));
                }
                // The workload client is kept with the services, but is no member.
                let members: Vec<String> = self
                    .services
                    .keys()
                    .filter(|k| *k != "workload")
                    .cloned()
                    .collect();
                if !members.iter().any(|m| m == named) {
                    return Ok(match named.parse::<i32>() {
                        Ok(pid) if pid > 0 => Ok(Target::Pid(pid)),
                        _ => Err(format!(
                            "target command `{command}` printed `{}`: neither a service of the \
                             cluster ({}) nor a pid",
                            crate::sanitize::line(named),
                            members.join(", ")
                        )),
                    });
                }
                named.to_string()
            }
        };
        Ok(match self.services.get(&service) {
            Some(running) => Ok(Target::Pid(running.pgid)),
            None => Err(format!(
                "fault target service `{service}` is not in the cluster"
            )),
        })
    }

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

    /// Watches for the step's declared landing signals, opened before injection so only
    /// what happens after it counts.
    async fn landing_watches(&mut self, step: &FaultStep) -> Result<Vec<Landing>, EngineError> {
        let mut watches = Vec::new();
        for landing in &step.landing {
            let within = landing.within.map_or(DEFAULT_LANDING_WITHIN, |d| d.0);
            for signal in landing.signals() {
                if let Some(watch) = self.open_watch(&step.id, signal).await? {
                    watches.push((watch, within, landing.side));
                }
            }
        }
        Ok(watches)
    }

    pub(super) fn write_epoch(&self, text: &str) -> Result<(), EngineError> {
        std::fs::write(self.ctx.artifacts.join("fault_epoch"), text).map_err(|e| self.io(e))
    }

    /// Journals the intent, injects the fault and journals how to undo it. `None` when
    /// the injection failed (journaled, and said in `facts`).
    pub(super) async fn inject(
        &mut self,
        step: &FaultStep,
        epoch: u64,
        facts: &mut FaultFacts,
    ) -> Result<Option<(Held, Vec<Landing>)>, EngineError> {
        let watches = self.landing_watches(step).await?;
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
            Ok(approved) => self.inject_kind(step).await?.map(|held| (held, approved)),
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
                return Ok(None);
            }
        };
        facts.injected = true;
        let pid = match &held {
            Held::Process(injected) => Some(injected.pid),
            _ => None,
        };
        let undo = self.undo(&held, step)?;
        facts
            .cites
            .push(self.log(Event::FaultInjected(event::FaultInjected {
                fault: facts.id.clone(),
                pid,
                undo,
                approved,
            }))?);
        Ok(Some((held, watches)))
    }

    /// The journal seq of the approval a privileged step runs under (`None` for a step
    /// that needs none); an error when it needs one nobody gave.
    pub(super) fn privileged_approval(&self, step: &FaultStep) -> Result<Option<u64>, String> {
        if crate::engine::privileged::step_action(step).is_none() {
            return Ok(None);
        }
        match &self.ctx.privileged {
            Some(approval) => Ok(Some(approval.seq)),
            None => Err(format!(
                "fault {} is a privileged action and no approval was recorded for {} \
                 (privileged.{})",
                step.id, self.ctx.id, self.ctx.id
            )),
        }
    }

    /// Does what the step's one nemesis kind does; the error is the injector's message.
    async fn inject_kind(&mut self, step: &FaultStep) -> Result<Result<Held, String>, EngineError> {
        Ok(match step.kind() {
            None => Err("the step names no single nemesis kind".into()),
            Some(Kind::Process) => match &step.process {
                Some(spec) => self.inject_process(&step.id, spec).await?,
                None => Err("no process spec".into()),
            },
            Some(Kind::Command) => match &step.command {
                Some(spec) => {
                    let fault = CommandFault {
                        id: step.id.clone(),
                        inject: self.expand(&spec.inject)?,
                        heal: self.expand(&spec.heal)?,
                        cwd: self.ctx.cwd.clone(),
                        deadline: DEFAULT_DEADLINE,
                    };
                    self.guard(fault.inject(&self.ctx.logs))
                        .await?
                        .map(Held::Command)
                        .map_err(|e| e.to_string())
                }
                None => Err("no command spec".into()),
            },
            Some(Kind::Net) => match &step.net {
                Some(spec) => {
                    let spec = self.expand_net(spec)?;
                    net::inject(&spec, &step.id)
                        .map(Held::Net)
                        .map_err(|e| e.to_string())
                }
                None => Err("no net spec".into()),
            },
            Some(Kind::Disk) => match &step.disk {
                Some(spec) => {
                    let dir = self.disk_path(spec)?;
                    disk::inject(&dir, &step.id)
                        .map(Held::Disk)
                        .map_err(|e| e.to_string())
                }
                None => Err("no disk spec".into()),
            },
            Some(Kind::Clock) => match &step.clock {
                Some(spec) => self.inject_clock(step, spec)?,
                None => Err("no clock spec".into()),
            },
            Some(Kind::Proxy) => match &step.proxy {
                Some(spec) => self.enable_toxic(step, spec)?,
                None => Err("no proxy spec".into()),
            },
            Some(Kind::Docker) => match &step.docker {
                Some(spec) => {
                    let mut spec = spec.clone();
                    spec.container = self.expand(&spec.container)?;
                    if let Some(network) = &spec.network {
                        spec.network = Some(self.expand(network)?);
                    }
                    if let Some(engine) = &spec.engine {
                        spec.engine = Some(self.expand(engine)?);
                    }
                    self.guard(docker::inject(&spec))
                        .await?
                        .map(Held::Docker)
                        .map_err(|e| e.to_string())
                }
                None => Err("no docker spec".into()),
            },
        })
    }

    async fn inject_process(
        &mut self,
        fault: &str,
        spec: &ProcessFaultSpec,
    ) -> Result<Result<Held, String>, EngineError> {
        let target = match self.victim_pid(fault, &spec.target).await? {
            Ok(target) => target,
            Err(why) => return Ok(Err(why)),
        };
        let action = match spec.signal {
            SignalName::Kill => Action::Kill,
            SignalName::Term => Action::Term {
                grace: spec.grace.map_or(Duration::from_secs(5), |d| d.0),
            },
            SignalName::Stop => Action::Pause,
        };
        Ok(process::inject(&target, action)
            .map(Held::Process)
            .map_err(|e| e.to_string()))
    }

    /// Injects a clock offset into a faketime service, watching the victim's own clock
    /// from before the injection.
    fn inject_clock(
        &mut self,
        step: &FaultStep,
        spec: &ClockFaultSpec,
    ) -> Result<Result<Held, String>, EngineError> {
        let Some((control, env)) = self.faketime.get(&spec.service).cloned() else {
            return Ok(Err(format!(
                "fault {} clock.service: `{}` is not a service started with `faketime: true`",
                step.id, spec.service
            )));
        };
        // The victim's clock lines are on its stderr (one file: it reads the newest).
        let clock_log = &spec.victim_clock;
        let file = match (&clock_log.service, &clock_log.file) {
            (Some(service), _) => Some(self.ctx.logs.join(format!("{service}.stderr.log"))),
            (None, Some(file)) => {
                let file = self.expand(file)?;
                Some(self.ctx.cwd.join(file))
            }
            (None, None) => None,
        };
        let Some(file) = file else {
            return Ok(Err(format!(
                "fault {} clock.victim_clock names neither a service nor a file",
                step.id
            )));
        };
        let pattern = regex::Regex::new(&spec.victim_clock.pattern)
            .map_err(|e| self.io(format!("fault {} clock.victim_clock.pattern: {e}", step.id)))?;
        let victim = VictimClock::begin(&file, pattern);
        Ok(clock::inject(&control, &env, spec.offset)
            .map(|injected| Held::Clock(injected, victim))
            .map_err(|e| e.to_string()))
    }

    /// Switches on the toxic of the proxy listening where the step says.
    fn enable_toxic(
        &mut self,
        step: &FaultStep,
        spec: &ProxyFaultSpec,
    ) -> Result<Result<Held, String>, EngineError> {
        let listen = self.expand(&spec.listen)?;
        let Some(proxy) = self.proxies.get(&listen) else {
            return Ok(Err(format!(
                "fault {} proxy.listen: no proxy runs on `{listen}`",
                step.id
            )));
        };
        let t = &spec.toxic;
        Ok(Ok(Held::Proxy(proxy.enable(Toxic {
            latency: t.latency.map(|d| d.0),
            jitter: t.jitter.map(|d| d.0),
            bandwidth: t.bandwidth,
            stall: t.stall,
            reset: t.reset,
            slice: t.slice,
        }))))
    }

    /// The net spec with `${var}`s expanded in its namespace and addresses.
    fn expand_net(&mut self, spec: &NetFaultSpec) -> Result<NetFaultSpec, EngineError> {
        let mut spec = spec.clone();
        if let Some(ns) = &spec.netns {
            spec.netns = Some(self.expand(ns)?);
        }
        for rule in &mut spec.drop {
            for value in [&mut rule.source, &mut rule.destination, &mut rule.uid_owner]
                .into_iter()
                .flatten()
            {
                *value = self.expand(value)?;
            }
        }
        Ok(spec)
    }

    /// Enough to heal the fault later from the journal alone (`faultline heal`).
    fn undo(&mut self, held: &Held, step: &FaultStep) -> Result<Option<Undo>, EngineError> {
        Ok(Some(match held {
            Held::Process(injected) => Undo::Process(event::ProcessUndo {
                pid: injected.pid,
                action: format!("{:?}", injected.action),
                started: exec::start_time(injected.pid),
            }),
            Held::Docker(injected) => Undo::Docker {
                docker: injected.undo(),
            },
            Held::Net(injected) => {
                let rules = injected
                    .rules
                    .iter()
                    .map(|argv| {
                        std::iter::once("iptables".to_string())
                            .chain(argv.iter().cloned())
                            .collect()
                    })
                    .collect();
                Undo::Net {
                    net: event::NetUndo {
                        netns: injected.netns.clone(),
                        tag: injected.tag.clone(),
                        rules,
                    },
                }
            }
            Held::Clock(injected, _) => Undo::Clock {
                clock: event::ClockUndo {
                    control: injected.control.display().to_string(),
                },
            },
            Held::Proxy(injected) => Undo::Proxy {
                proxy: event::ProxyUndo {
                    listen: injected.proxy.listen.to_string(),
                    upstream: injected.proxy.upstream.clone(),
                    toxic: json!(injected.toxic),
                },
            },
            Held::Disk(injected) => Undo::Disk {
                disk: event::DiskUndo {
                    filler: injected.filler.display().to_string(),
                },
            },
            Held::Command(_) => match &step.command {
                Some(spec) => Undo::Command(event::CommandUndo {
                    heal: self.expand(&spec.heal)?,
                    cwd: self.ctx.cwd.display().to_string(),
                }),
                None => return Ok(None),
            },
        }))
    }

    /// The kind's built-in injector-side probe; `None` for the `command` kind, whose
    /// probes are all declared.
    async fn injector_probe(
        &self,
        step: &FaultStep,
        held: &Held,
        until: Option<Instant>,
    ) -> Result<Option<InjectorSeen>, EngineError> {
        let within = clip(injector_window(step), until);
        let seen = |landed: bool, text: &str, detail: Value| InjectorSeen {
            landed,
            text: text.to_string(),
            detail,
        };
        Ok(Some(match held {
            Held::Command(_) => return Ok(None),
            Held::Process(injected) => {
                // /proc answers at once; a short window covers a slow SIGTERM handler.
                let s = self
                    .guard(injected.await_landing(clip(Duration::from_secs(2), until)))
                    .await?;
                seen(
                    s.landed,
                    &s.detail,
                    json!({"state": format!("{:?}", s.state)}),
                )
            }
            Held::Net(injected) => {
                let s = self.guard(injected.await_landing(within)).await?;
                seen(
                    s.landed,
                    &s.detail,
                    json!({"before": s.before, "after": s.after}),
                )
            }
            Held::Disk(injected) => {
                let s = self.guard(injected.await_landing(within)).await?;
                seen(s.landed, &s.detail, json!({"free_bytes": s.free_bytes}))
            }
            Held::Proxy(injected) => {
                let s = self.guard(injected.await_landing(within)).await?;
                seen(
                    s.landed,
                    &s.detail,
                    json!({"before": s.before, "after": s.after}),
                )
            }
            Held::Docker(injected) => {
                let s = self.guard(injected.await_landing(within)).await?;
                seen(
                    s.landed,
                    &s.detail,
                    json!({"events": s.events, "state": s.state}),
                )
            }
            Held::Clock(injected, _) => {
                let s = self.guard(injected.await_landing(within)).await?;
                seen(s.landed, &s.detail, json!({"skew_s": s.skew}))
            }
        }))
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
        if let Some(seen) = self.injector_probe(step, held, until).await? {
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
        if let Held::Clock(injected, victim) = held {
            let seen = self
                .guard(victim.await_offset(injected.offset, clip(injector_window(step), until)))
                .await?;
            facts.victim_side_seen = seen.landed;
            builtin_victim = Some(seen.landed);
            facts.detail.push(format!("victim: {}", seen.detail));
            facts
                .cites
                .push(self.log(Event::LandingDeclared(event::LandingDeclared {
                    fault: facts.id.clone(),
                    side: Some(Side::Victim),
                    pattern: victim.pattern.as_str().to_string(),
                    seen: json!(seen.landed.then_some(&seen.detail)),
                    skew_s: seen.skew,
                }))?);
        }
        let mut all = !watches.is_empty() || builtin_victim.is_some();
        all &= builtin_victim.unwrap_or(true);
        for (watch, within, side) in watches {
            let found = self
                .guard(watch.await_match(clip(*within, until)))
                .await?
                .map_err(|e| self.io(e))?;
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
                .push(self.log(Event::LandingDeclared(event::LandingDeclared {
                    fault: facts.id.clone(),
                    side: Some(*side),
                    pattern: watch.describe(),
                    seen: json!(found),
                    skew_s: None,
                }))?);
        }
        facts.declared_landed = all;
        Ok(())
    }

    /// Heals a held fault and journals the result. Runs whatever interrupted the
    /// session: healing is never skipped.
    pub(super) async fn heal(
        &mut self,
        held: Held,
        facts: &mut FaultFacts,
    ) -> Result<(), EngineError> {
        let healed = match held {
            Held::Process(injected) => injected.heal().await.map_err(|e| e.to_string()),
            Held::Command(injected) => injected
                .heal()
                .await
                .map(|()| "heal command exited 0".to_string())
                .map_err(|e| e.to_string()),
            Held::Net(injected) => injected.heal().map_err(|e| e.to_string()),
            Held::Disk(injected) => injected.heal().map_err(|e| e.to_string()),
            Held::Clock(injected, _) => injected.heal().map_err(|e| e.to_string()),
            Held::Proxy(injected) => Ok(injected.heal()),
            Held::Docker(injected) => self.heal_docker(injected).await,
        };
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

    /// Heals a docker fault after saving the container's log of the fault window into
    /// `logs/` (a killed container's last words are evidence too).
    async fn heal_docker(&mut self, injected: InjectedDocker) -> Result<String, String> {
        let logs = injected.collect_logs(&self.ctx.logs).await;
        let healed = injected.heal().await.map_err(|e| e.to_string())?;
        Ok(match logs {
            Ok(path) => format!("{healed}; its log is in {}", path.display()),
            Err(e) => format!("{healed}; its log could not be saved: {e}"),
        })
    }
}
