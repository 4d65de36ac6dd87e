//! The fault schedule on tokio's paused clock, against an in-process SUT: services
//! that tick into their own log files (no ticks while a pause fault holds them), a
//! victim that notices a flag some time after it is raised, and an injector that acts
//! on them at once. The schedule, the trigger and landing watches over those files and
//! the landing proof are the engine's own (`run_schedule`, `Watch`,
//! `landing_watches`, `await_declared`); only the services and the nemesis are in
//! process. Every record is stamped with the virtual milliseconds since the workload
//! started, so the tests assert timings exactly, where the real-process tests they
//! replace could only assert an order or a band.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{Nemeses, run_schedule};
use crate::engine::iteration::faults::{Landing, await_declared, landing_watches, proof_window};
use crate::engine::iteration::{EngineError, FaultFacts};
use crate::nemesis::landing::LogWatch;
use crate::nemesis::signal::Watch;
use crate::runspec::{Binding, FaultStep, SignalRef};
use crate::session::event::{self, Event};

/// One in-process service.
#[derive(Default)]
struct Service {
    paused: AtomicBool,
    flag: AtomicBool,
}

/// What injecting a fault does to the SUT.
#[derive(Debug, Clone, Copy)]
enum Effect {
    /// No more ticks from the service until healed (what a SIGSTOP does).
    Pause(&'static str),
    /// Raises the service's flag, which it notices after its delay.
    Flag(&'static str),
}

/// The kinds of record the schedule writes (the journal's own names are spelled in
/// `session/event.rs` alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    Awaiting,
    TriggerSeen,
    Skipped,
    Intent,
    Injected,
    Injector,
    Declared,
    Proof,
    Healed,
}

/// One journal record, stamped in virtual milliseconds since the workload started.
#[derive(Debug, Clone)]
struct Rec {
    ms: u64,
    kind: K,
    fault: String,
    seen: Option<String>,
}

struct Sim {
    dir: tempfile::TempDir,
    t0: Instant,
    services: BTreeMap<&'static str, Arc<Service>>,
    effects: BTreeMap<&'static str, Effect>,
    records: Vec<Rec>,
    facts: Vec<FaultFacts>,
    /// Every fault epoch written for the history, with when.
    epochs: Mutex<Vec<(u64, String)>>,
    /// The operator's stop.
    cancel: CancellationToken,
}

impl Sim {
    fn new() -> Sim {
        Sim {
            dir: tempfile::tempdir().expect("temp dir"),
            t0: Instant::now(),
            services: BTreeMap::new(),
            effects: BTreeMap::new(),
            records: Vec::new(),
            facts: Vec::new(),
            epochs: Mutex::new(Vec::new()),
            cancel: CancellationToken::new(),
        }
    }

    fn ms(&self) -> u64 {
        u64::try_from(self.t0.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A service that writes `<name> tick <n>` every `every` from `first` on, and
    /// `flag seen` `notice` after it sees its flag raised.
    fn service(&mut self, name: &'static str, first: Duration, every: Duration, notice: Duration) {
        let service = Arc::new(Service::default());
        self.services.insert(name, service.clone());
        let log = self.dir.path().join(format!("{name}.stderr.log"));
        let append = move |line: String| {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log)
                .expect("service log");
            writeln!(file, "{line}").expect("service log written");
        };
        tokio::spawn(async move {
            tokio::time::sleep(first).await;
            let mut ticks = 0;
            loop {
                if !service.paused.load(Ordering::SeqCst) {
                    ticks += 1;
                    append(format!("{name} tick {ticks}"));
                    if service.flag.swap(false, Ordering::SeqCst) {
                        tokio::time::sleep(notice).await;
                        append("flag seen".into());
                    }
                }
                tokio::time::sleep(every).await;
            }
        });
    }

    /// Runs the `faults:` of `yaml` from now, the workload's start.
    async fn run(&mut self, yaml: &str) -> Result<(), EngineError> {
        let binding: Binding = serde_saphyr::from_str(yaml).expect("a binding");
        let steps: Vec<&FaultStep> = binding.faults.iter().map(|f| &f.value).collect();
        self.t0 = Instant::now();
        run_schedule(self, &steps, self.t0, Duration::from_secs(30)).await
    }

    /// `(ms, kind, fault)` of every record of these kinds, in journal order.
    fn timeline(&self, kinds: &[K]) -> Vec<(u64, K, String)> {
        self.records
            .iter()
            .filter(|r| kinds.contains(&r.kind))
            .map(|r| (r.ms, r.kind, r.fault.clone()))
            .collect()
    }

    /// The fault epochs written for the history, each with when (ms).
    fn epochs_written(&self) -> Vec<(u64, String)> {
        self.epochs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn fact(&self, id: &str) -> &FaultFacts {
        self.facts
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("no facts for {id}: {:?}", self.facts))
    }
}

/// A schedule record's kind, the fault it is about, and what it saw.
fn fault_of(event: &Event) -> (K, String, Option<String>) {
    match event {
        Event::FaultAwaiting(e) => (K::Awaiting, e.fault.clone(), None),
        Event::FaultTriggerSeen(e) => (K::TriggerSeen, e.fault.clone(), Some(e.seen.clone())),
        Event::FaultSkipped(e) => (K::Skipped, e.fault.clone(), Some(e.reason.clone())),
        Event::FaultIntent(e) => (K::Intent, e.fault.clone(), None),
        Event::FaultInjected(e) => (K::Injected, e.fault.clone(), None),
        Event::LandingInjector(e) => (K::Injector, e.fault.clone(), Some(e.text.clone())),
        Event::LandingDeclared(e) => (
            K::Declared,
            e.fault.clone(),
            e.seen.as_str().map(str::to_string),
        ),
        Event::FaultProof(e) => (K::Proof, e.fault.clone(), Some(e.why.clone())),
        Event::FaultHealed(e) => (K::Healed, e.fault.clone(), None),
        other => panic!("the schedule journaled {}", other.kind()),
    }
}

impl Nemeses for Sim {
    type Held = Effect;

    fn log(&mut self, event: Event) -> Result<u64, EngineError> {
        let (kind, fault, seen) = fault_of(&event);
        self.records.push(Rec {
            ms: self.ms(),
            kind,
            fault,
            seen,
        });
        Ok(self.records.len() as u64)
    }

    fn io(&self, message: String) -> EngineError {
        EngineError::Io {
            id: "sim".into(),
            message,
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn record(&mut self, facts: FaultFacts) {
        self.facts.push(facts);
    }

    fn write_epoch(&self, text: &str) -> Result<(), EngineError> {
        let mut epochs = self.epochs.lock().unwrap_or_else(PoisonError::into_inner);
        epochs.push((self.ms(), text.to_string()));
        Ok(())
    }

    async fn open_watch(
        &mut self,
        _fault: &str,
        signal: SignalRef<'_>,
    ) -> Result<Option<Watch>, EngineError> {
        let SignalRef::Log(log) = signal else {
            return Ok(None);
        };
        let pattern = regex::Regex::new(&log.pattern).map_err(|e| self.io(e.to_string()))?;
        let files = log.service.iter().chain(&log.services).map(|service| {
            let path = self.dir.path().join(format!("{service}.stderr.log"));
            (None, LogWatch::begin(&path, pattern.clone()))
        });
        Ok(Some(Watch::Log(files.collect())))
    }

    async fn inject(
        &mut self,
        step: &FaultStep,
        epoch: u64,
        facts: &mut FaultFacts,
    ) -> Result<Option<(Effect, Vec<Landing>)>, EngineError> {
        let watches = landing_watches(self, step).await?;
        facts.epoch = Some(epoch);
        let intent = self.log(Event::FaultIntent(event::FaultIntent {
            fault: facts.id.clone(),
            epoch,
        }))?;
        facts.cites.push(intent);
        self.write_epoch(&epoch.to_string())?;
        let effect = *self
            .effects
            .get(step.id.as_str())
            .unwrap_or_else(|| panic!("no effect for {}", step.id));
        match effect {
            Effect::Pause(name) => self.services[name].paused.store(true, Ordering::SeqCst),
            Effect::Flag(name) => self.services[name].flag.store(true, Ordering::SeqCst),
        }
        facts.injected = true;
        let injected = self.log(Event::FaultInjected(event::FaultInjected {
            fault: facts.id.clone(),
            ..Default::default()
        }))?;
        facts.cites.push(injected);
        Ok(Some((effect, watches)))
    }

    async fn observe(
        &mut self,
        step: &FaultStep,
        held: &Effect,
        watches: &[Landing],
        facts: &mut FaultFacts,
        until: Option<Instant>,
    ) -> Result<(), EngineError> {
        let window = proof_window(step, until);
        // The injector sees a pause at once, as the real one reads the process state.
        if let Effect::Pause(name) = held {
            facts.injector_landed = true;
            let text = format!("{name} paused");
            facts.detail.push(format!("injector: {text}"));
            let seq = self.log(Event::LandingInjector(event::LandingInjector {
                fault: facts.id.clone(),
                landed: true,
                text,
                detail: json!({}),
            }))?;
            facts.cites.push(seq);
        }
        await_declared(self, watches, window, None, facts).await
    }

    async fn heal(&mut self, held: Effect, facts: &mut FaultFacts) -> Result<(), EngineError> {
        if let Effect::Pause(name) = held {
            self.services[name].paused.store(false, Ordering::SeqCst);
        }
        facts.healed = true;
        let seq = self.log(Event::FaultHealed(event::FaultHealed {
            fault: facts.id.clone(),
            result: Some(Ok("healed".into())),
            by: None,
        }))?;
        facts.cites.push(seq);
        Ok(())
    }

    async fn guard<T>(&self, fut: impl Future<Output = T>) -> Result<T, EngineError> {
        tokio::select! {
            out = fut => Ok(out),
            () = self.cancel.cancelled() => Err(EngineError::Interrupted { id: "sim".into() }),
        }
    }

    async fn wait_until(&mut self, wake: Instant) -> Result<(), EngineError> {
        self.guard(tokio::time::sleep_until(wake)).await
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Two services ticking every 100 ms, half a tick off the schedule's 100 ms looks so
/// no tick and no look fall on the same instant.
fn two_services() -> Sim {
    let mut sim = Sim::new();
    sim.service("a", ms(50), ms(100), ms(0));
    sim.service("b", ms(50), ms(100), ms(0));
    sim
}

/// Epochs as [`Sim::epochs_written`] gives them.
fn epochs_at(at: &[(u64, &str)]) -> Vec<(u64, String)> {
    at.iter().map(|(ms, e)| (*ms, e.to_string())).collect()
}

fn row(ms: u64, kind: K, fault: &str) -> (u64, K, String) {
    (ms, kind, fault.to_string())
}

/// Moved from the real-process `fault_schedule` test (which still runs the same
/// schedule once on real processes): faults overlap, one waits for an event the
/// victim writes, one repeats with a gap; here each at its exact millisecond, with
/// the fault epoch the history records at each change.
#[tokio::test(start_paused = true)]
async fn faults_overlap_wait_for_events_and_repeat_to_the_millisecond() {
    let mut sim = two_services();
    sim.effects.insert("hold-a", Effect::Pause("a"));
    sim.effects.insert("kick-b", Effect::Pause("b"));
    sim.effects.insert("again", Effect::Pause("b"));
    sim.run(
        r#"
faults:
  - id: hold-a
    after: 200ms
    duration: 2s
    process: { signal: SIGSTOP, target: { service: a } }
  - id: kick-b
    on: { log: { service: b, pattern: "b tick 8$" } }
    after: 100ms
    duration: 300ms
    process: { signal: SIGSTOP, target: { service: b } }
  - id: again
    after: 2500ms
    duration: 100ms
    repeat: 3
    gap: 200ms
    process: { signal: SIGSTOP, target: { service: b } }
"#,
    )
    .await
    .expect("the schedule ran");

    let kinds = [K::Awaiting, K::TriggerSeen, K::Injected, K::Healed];
    // b's eighth tick is at 750 ms, seen at the look at 800; kick-b starts 100 ms
    // later and is held inside hold-a's window; each repetition starts its gap after
    // the previous heal.
    assert_eq!(
        sim.timeline(&kinds),
        vec![
            row(0, K::Awaiting, "kick-b"),
            row(200, K::Injected, "hold-a"),
            row(800, K::TriggerSeen, "kick-b"),
            row(900, K::Injected, "kick-b"),
            row(1200, K::Healed, "kick-b"),
            row(2200, K::Healed, "hold-a"),
            row(2500, K::Injected, "again"),
            row(2600, K::Healed, "again"),
            row(2800, K::Injected, "again#2"),
            row(2900, K::Healed, "again#2"),
            row(3100, K::Injected, "again#3"),
            row(3200, K::Healed, "again#3"),
        ]
    );
    let seen = sim
        .records
        .iter()
        .find(|r| r.kind == K::TriggerSeen)
        .and_then(|r| r.seen.clone());
    assert_eq!(seen.as_deref(), Some("b tick 8"));

    // Every injection is accounted for, landed on the injector side and healed, each
    // under its own epoch; the history's epoch is the newest fault still held.
    assert_eq!(sim.facts.len(), 5);
    for fault in &sim.facts {
        assert!(fault.injected && fault.injector_landed, "{fault:?}");
        assert!(fault.healed, "{fault:?}");
        // Injector-side evidence alone proves nothing: none declared a victim signal.
        assert!(!fault.proven(), "{fault:?}");
    }
    let epochs: Vec<Option<u64>> = ["hold-a", "kick-b", "again", "again#2", "again#3"]
        .iter()
        .map(|id| sim.fact(id).epoch)
        .collect();
    assert_eq!(epochs, [1, 2, 3, 4, 5].map(Some));
    assert_eq!(
        sim.epochs_written(),
        epochs_at(&[
            (200, "1"),
            (900, "2"),
            (1200, "1"),
            (2200, ""),
            (2500, "3"),
            (2600, ""),
            (2800, "4"),
            (2900, ""),
            (3100, "5"),
            (3200, ""),
        ])
    );
}

/// Moved from `fault_schedule`: a trigger that never comes is given up exactly at its
/// `within`, the fault is journaled as skipped, never injected, and its repetition is
/// not scheduled.
#[tokio::test(start_paused = true)]
async fn a_trigger_that_never_comes_skips_the_fault_at_its_within_and_proves_nothing() {
    let mut sim = two_services();
    sim.effects.insert("never", Effect::Pause("a"));
    sim.run(
        r#"
faults:
  - id: never
    on: { log: { service: a, pattern: "a tock" }, within: 1s }
    process: { signal: SIGSTOP, target: { service: a } }
    repeat: 2
"#,
    )
    .await
    .expect("the schedule ran");
    assert_eq!(
        sim.timeline(&[K::Awaiting, K::Skipped, K::Injected]),
        vec![row(0, K::Awaiting, "never"), row(1000, K::Skipped, "never"),]
    );
    // Skipped, so no repetition either: one fact, not injected, not proven.
    assert_eq!(sim.facts.len(), 1);
    let fault = &sim.facts[0];
    assert!(!fault.injected && !fault.declared_landed, "{fault:?}");
    assert!(!fault.proven(), "{fault:?}");
    assert!(
        fault.detail.iter().any(|d| d.contains("a tock")),
        "{:?}",
        fault.detail
    );
    assert!(
        sim.epochs_written().is_empty(),
        "no epoch without an injection"
    );
}

/// The real-process test of the same name (`fault_schedule`) allows a band for the
/// machine; here, to the millisecond: `duration` runs from injection to heal whatever
/// the landing proof is doing. A proof that takes 1.5 s of a 2 s fault and one that never
/// succeeds within its 4 s window are both healed exactly 2 s after injection; the
/// first is proven, the second is not, and its window was cut to the hold.
#[tokio::test(start_paused = true)]
async fn a_fault_is_healed_exactly_its_duration_after_injection_whatever_its_proof_takes() {
    let mut sim = Sim::new();
    // The victim looks for its flag every 50 ms (from 30 ms, off the watches' looks)
    // and says so 1.5 s after it sees it.
    sim.service("v", ms(30), ms(50), ms(1500));
    sim.effects.insert("slow-proof", Effect::Flag("v"));
    sim.effects.insert("no-proof", Effect::Flag("v"));
    sim.run(
        r#"
faults:
  - id: slow-proof
    after: 300ms
    duration: 2s
    command: { inject: "touch flag", heal: "true" }
    landing:
      - side: victim
        log: { service: v, pattern: "flag seen" }
        within: 4s
  - id: no-proof
    after: 3s
    duration: 2s
    command: { inject: "true", heal: "true" }
    landing:
      - side: victim
        log: { service: v, pattern: "never" }
        within: 4s
"#,
    )
    .await
    .expect("the schedule ran");
    assert_eq!(
        sim.timeline(&[K::Injected, K::Healed]),
        vec![
            row(300, K::Injected, "slow-proof"),
            row(2300, K::Healed, "slow-proof"),
            row(3000, K::Injected, "no-proof"),
            row(5000, K::Healed, "no-proof"),
        ]
    );
    let declared = |fault: &str| {
        sim.records
            .iter()
            .find(|r| r.kind == K::Declared && r.fault == fault)
            .cloned()
            .unwrap_or_else(|| panic!("no landing-declared for {fault}"))
    };
    // The victim saw its flag at 330 ms and said so at 1830; the watch looks every
    // 100 ms from the injection, so it saw the line at 1900.
    let slow = declared("slow-proof");
    assert_eq!(
        (slow.ms, slow.seen.as_deref()),
        (1900, Some("flag seen")),
        "{slow:?}"
    );
    // The 4 s window was cut to the 2 s hold: given up at the heal, not at 7 s.
    let none = declared("no-proof");
    assert_eq!((none.ms, none.seen.as_deref()), (5000, None), "{none:?}");
    assert!(sim.fact("slow-proof").victim_side_seen);
    assert!(sim.fact("slow-proof").proven());
    assert!(!sim.fact("no-proof").victim_side_seen);
    assert!(!sim.fact("no-proof").proven());
    assert!(
        sim.fact("no-proof")
            .detail
            .iter()
            .any(|d| d.contains("not seen within 4s")),
        "{:?}",
        sim.fact("no-proof").detail
    );
}

/// A stop in the middle of a landing proof, with another fault held: both are healed
/// at the stop, newest first, and journaled; the history's epoch steps back to none;
/// nothing later is injected, not even the proving fault's repetition.
#[tokio::test(start_paused = true)]
async fn a_stop_during_a_proof_heals_every_held_fault_and_injects_nothing_more() {
    let mut sim = Sim::new();
    sim.service("a", ms(50), ms(100), ms(0));
    sim.service("v", ms(30), ms(50), ms(1500));
    sim.effects.insert("hold-a", Effect::Pause("a"));
    sim.effects.insert("slow-proof", Effect::Flag("v"));
    sim.effects.insert("later", Effect::Pause("a"));
    let cancel = sim.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(ms(1000)).await;
        cancel.cancel();
    });
    let ended = sim
        .run(
            r#"
faults:
  - id: hold-a
    after: 100ms
    duration: 5s
    process: { signal: SIGSTOP, target: { service: a } }
  - id: slow-proof
    after: 300ms
    duration: 2s
    repeat: 2
    command: { inject: "touch flag", heal: "true" }
    landing:
      - side: victim
        log: { service: v, pattern: "flag seen" }
        within: 4s
  - id: later
    after: 1500ms
    process: { signal: SIGSTOP, target: { service: a } }
"#,
        )
        .await;
    assert!(
        matches!(ended, Err(EngineError::Interrupted { .. })),
        "{ended:?}"
    );
    assert_eq!(
        sim.timeline(&[K::Injected, K::Healed]),
        vec![
            row(100, K::Injected, "hold-a"),
            row(300, K::Injected, "slow-proof"),
            row(1000, K::Healed, "slow-proof"),
            row(1000, K::Healed, "hold-a"),
        ]
    );
    // The interrupted proof journaled no verdict on its landing.
    assert!(
        !sim.records
            .iter()
            .any(|r| r.kind == K::Proof && r.fault == "slow-proof"),
        "{:?}",
        sim.records
    );
    assert_eq!(
        sim.epochs_written(),
        epochs_at(&[(100, "1"), (300, "2"), (1000, "1"), (1000, "")])
    );
    assert_eq!(sim.facts.len(), 2);
    assert!(
        sim.facts.iter().all(|f| f.injected && f.healed),
        "{:?}",
        sim.facts
    );
}
