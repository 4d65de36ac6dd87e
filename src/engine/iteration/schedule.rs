//! The fault schedule of one iteration. Each step starts at a time offset from the
//! workload's start or from an event it waits for, is held for its duration, healed,
//! and repeated as often as it asks; steps overlap freely. The schedule runs in one
//! task: a start or heal that falls due while another fault's landing is being proven
//! happens as soon as that proof ends (the journal has the real times). A fault's own
//! proof never delays its heal: its windows end when its `duration` does.

use std::time::Duration;

use tokio::time::Instant;

use super::faults::Landing;
use super::{EngineError, FaultFacts, Runner};
use crate::nemesis::signal::Watch;
use crate::runspec::{FaultStep, SignalRef};
use crate::session::event::{self, Event, millis};

#[cfg(test)]
mod sim;

/// How often a pending trigger is looked at.
const TRIGGER_EVERY: Duration = Duration::from_millis(100);

/// When a scheduled injection starts.
enum Start {
    At(Instant),
    /// Open the trigger watch at this instant (a repetition's gap first).
    WatchFrom(Instant),
    /// Waiting for the trigger; `after` is counted from when it is seen.
    On {
        watch: Watch,
        deadline: Instant,
    },
}

/// One injection not yet started: the step, which repetition (1-based), and when.
struct Due<'s> {
    step: &'s FaultStep,
    rep: usize,
    start: Start,
}

/// What the schedule asks of the iteration it runs in. The iteration's [`Runner`]
/// does it to real services; the tests' in-process SUT (`sim.rs`) does it on tokio's
/// paused clock, so the schedule's timing is tested to the millisecond.
pub(super) trait Nemeses {
    /// A fault between its injection and its heal.
    type Held;
    fn log(&mut self, event: Event) -> Result<u64, EngineError>;
    fn io(&self, message: String) -> EngineError;
    /// The session was interrupted: no repetition is scheduled any more.
    fn cancelled(&self) -> bool;
    /// What happened to one injection, for the iteration's facts.
    fn record(&mut self, facts: FaultFacts);
    /// The fault epoch the history records from now on (empty: no fault held).
    fn write_epoch(&self, text: &str) -> Result<(), EngineError>;
    /// Opens a trigger's window now; `None` when the signal names nothing to watch.
    async fn open_watch(
        &mut self,
        fault: &str,
        signal: SignalRef<'_>,
    ) -> Result<Option<Watch>, EngineError>;
    /// Journals the intent and injects; `None` when the injection failed (journaled
    /// and said in `facts`). The landing watches are opened before it.
    async fn inject(
        &mut self,
        step: &FaultStep,
        epoch: u64,
        facts: &mut FaultFacts,
    ) -> Result<Option<(Self::Held, Vec<Landing>)>, EngineError>;
    /// The landing evidence of an injected fault, its windows ending by `until`.
    async fn observe(
        &mut self,
        step: &FaultStep,
        held: &Self::Held,
        watches: &[Landing],
        facts: &mut FaultFacts,
        until: Option<Instant>,
    ) -> Result<(), EngineError>;
    /// Heals and journals it, whatever interrupted the session.
    async fn heal(&mut self, held: Self::Held, facts: &mut FaultFacts) -> Result<(), EngineError>;
    /// Awaits `fut` unless the session is interrupted first.
    async fn guard<T>(&self, fut: impl Future<Output = T>) -> Result<T, EngineError>;
    /// Waits until `wake` unless the session is interrupted first, then looks at the
    /// services.
    async fn wait_until(&mut self, wake: Instant) -> Result<(), EngineError>;
}

impl Nemeses for Runner<'_> {
    type Held = crate::nemesis::Held;

    fn log(&mut self, event: Event) -> Result<u64, EngineError> {
        Runner::log(self, event)
    }

    fn io(&self, message: String) -> EngineError {
        Runner::io(self, message)
    }

    fn cancelled(&self) -> bool {
        self.ctx.cancel.is_cancelled()
    }

    fn record(&mut self, facts: FaultFacts) {
        self.facts.faults.push(facts);
    }

    fn write_epoch(&self, text: &str) -> Result<(), EngineError> {
        Runner::write_epoch(self, text)
    }

    async fn open_watch(
        &mut self,
        fault: &str,
        signal: SignalRef<'_>,
    ) -> Result<Option<Watch>, EngineError> {
        Runner::open_watch(self, fault, signal).await
    }

    async fn inject(
        &mut self,
        step: &FaultStep,
        epoch: u64,
        facts: &mut FaultFacts,
    ) -> Result<Option<(Self::Held, Vec<Landing>)>, EngineError> {
        Runner::inject(self, step, epoch, facts).await
    }

    async fn observe(
        &mut self,
        step: &FaultStep,
        held: &Self::Held,
        watches: &[Landing],
        facts: &mut FaultFacts,
        until: Option<Instant>,
    ) -> Result<(), EngineError> {
        Runner::observe(self, step, held, watches, facts, until).await
    }

    async fn heal(&mut self, held: Self::Held, facts: &mut FaultFacts) -> Result<(), EngineError> {
        Runner::heal(self, held, facts).await
    }

    async fn guard<T>(&self, fut: impl Future<Output = T>) -> Result<T, EngineError> {
        Runner::guard(self, fut).await
    }

    async fn wait_until(&mut self, wake: Instant) -> Result<(), EngineError> {
        Runner::guard(self, tokio::time::sleep_until(wake)).await?;
        self.watch_services()?;
        Ok(())
    }
}

/// One injection between inject and heal.
struct Holding<'s, H> {
    step: &'s FaultStep,
    rep: usize,
    epoch: u64,
    held: H,
    heal_at: Instant,
    facts: FaultFacts,
}

/// Journal and report name of one injection: the step id, `#n` from the second on.
fn injection_id(step: &FaultStep, rep: usize) -> String {
    if rep == 1 {
        step.id.clone()
    } else {
        format!("{}#{rep}", step.id)
    }
}

/// The first start of a step, counted from the workload's start.
fn first_start(step: &FaultStep, workload_started: Instant) -> Start {
    match step.on {
        Some(_) => Start::WatchFrom(workload_started),
        None => Start::At(workload_started + step.after.0),
    }
}

/// The start of the repetition after one healed at `healed`.
fn next_start(step: &FaultStep, healed: Instant) -> Start {
    let from = healed + step.gap.map_or(Duration::ZERO, |g| g.0);
    match step.on {
        Some(_) => Start::WatchFrom(from),
        None => Start::At(from),
    }
}

/// Runs the whole schedule. Whatever ends it (an interruption, an error), every
/// fault still held is healed and journaled before it returns.
pub(super) async fn run_schedule<N: Nemeses>(
    n: &mut N,
    steps: &[&FaultStep],
    workload_started: Instant,
    workload_deadline: Duration,
) -> Result<(), EngineError> {
    let mut due: Vec<Due> = steps
        .iter()
        .map(|step| Due {
            step,
            rep: 1,
            start: first_start(step, workload_started),
        })
        .collect();
    let mut holding = Vec::new();
    let result = drive(n, &mut due, &mut holding, workload_deadline).await;
    // Every held fault is healed even if journaling one heal fails.
    let mut healing = Ok(());
    while let Some(held) = holding.pop() {
        let healed = heal_holding(n, held, &mut holding, &mut due).await;
        healing = healing.and(healed);
    }
    result.and(healing)
}

async fn drive<'s, N: Nemeses>(
    n: &mut N,
    due: &mut Vec<Due<'s>>,
    holding: &mut Vec<Holding<'s, N::Held>>,
    workload_deadline: Duration,
) -> Result<(), EngineError> {
    let mut epoch = 0;
    loop {
        let now = Instant::now();
        if let Some(i) = holding.iter().position(|h| h.heal_at <= now) {
            let held = holding.remove(i);
            heal_holding(n, held, holding, due).await?;
            continue;
        }
        advance_triggers(n, due, workload_deadline).await?;
        if let Some(i) = due
            .iter()
            .position(|d| matches!(d.start, Start::At(t) if t <= now))
        {
            let next = due.remove(i);
            epoch += 1;
            start_injection(n, next, epoch, holding, due).await?;
            continue;
        }
        if due.is_empty() && holding.is_empty() {
            return Ok(());
        }
        let wake = holding
            .iter()
            .map(|h| h.heal_at)
            .chain(due.iter().map(|d| match d.start {
                Start::At(t) | Start::WatchFrom(t) => t,
                Start::On { deadline, .. } => deadline.min(now + TRIGGER_EVERY),
            }))
            .min()
            .unwrap_or(now)
            .min(now + super::WATCH_EVERY);
        n.wait_until(wake).await?;
    }
}

/// Opens trigger watches that are due, and turns seen (or expired) triggers into
/// starts (or journaled skips).
async fn advance_triggers<N: Nemeses>(
    n: &mut N,
    due: &mut Vec<Due<'_>>,
    workload_deadline: Duration,
) -> Result<(), EngineError> {
    let mut i = 0;
    while i < due.len() {
        let now = Instant::now();
        let step = due[i].step;
        let id = injection_id(step, due[i].rep);
        match &due[i].start {
            Start::WatchFrom(t) if *t <= now => {
                let Some(trigger) = &step.on else {
                    due[i].start = Start::At(now);
                    continue;
                };
                let within = trigger.within.map_or(workload_deadline, |d| d.0);
                let signal = trigger.signals().into_iter().next();
                let watch = match signal {
                    Some(signal) => n.open_watch(&id, signal).await?,
                    None => None,
                };
                let Some(watch) = watch else {
                    skip(n, due.remove(i), "its trigger names no signal to watch")?;
                    continue;
                };
                n.log(Event::FaultAwaiting(event::FaultAwaiting {
                    fault: id.clone(),
                    on: watch.describe(),
                    within_ms: millis(within),
                }))?;
                due[i].start = Start::On {
                    watch,
                    deadline: now + within,
                };
            }
            Start::On { watch, deadline } => {
                let seen = watch.poll().await.map_err(|e| n.io(e.to_string()))?;
                if let Some(line) = seen {
                    n.log(Event::FaultTriggerSeen(event::FaultTriggerSeen {
                        fault: id.clone(),
                        seen: line.clone(),
                    }))?;
                    due[i].start = Start::At(Instant::now() + step.after.0);
                } else if *deadline <= now {
                    let why = format!("its trigger `{}` was not seen in time", watch.describe());
                    skip(n, due.remove(i), &why)?;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Journals an injection that will not happen, and counts it as not proven.
fn skip<N: Nemeses>(n: &mut N, skipped: Due<'_>, why: &str) -> Result<(), EngineError> {
    let id = injection_id(skipped.step, skipped.rep);
    let seq = n.log(Event::FaultSkipped(event::FaultSkipped {
        fault: id.clone(),
        reason: why.to_string(),
    }))?;
    n.record(FaultFacts {
        id,
        detail: vec![format!("not injected: {why}")],
        cites: vec![seq],
        ..FaultFacts::default()
    });
    Ok(())
}

/// Injects, proves landing, and holds the fault until its heal is due. A failed
/// injection is recorded and its next repetition scheduled.
async fn start_injection<'s, N: Nemeses>(
    n: &mut N,
    next: Due<'s>,
    epoch: u64,
    holding: &mut Vec<Holding<'s, N::Held>>,
    due: &mut Vec<Due<'s>>,
) -> Result<(), EngineError> {
    let mut facts = FaultFacts {
        id: injection_id(next.step, next.rep),
        ..FaultFacts::default()
    };
    let injected = n.inject(next.step, epoch, &mut facts).await;
    let Some((held, watches)) = injected? else {
        n.write_epoch(&current_epoch(holding))?;
        n.record(facts);
        schedule_repetition(n, next.step, next.rep, due);
        return Ok(());
    };
    // `duration` counts from here (the `fault-injected` record), not from the end
    // of the landing proof, and the proof's windows end when the heal is due.
    let injected_at = Instant::now();
    let until = next.step.duration.map(|d| injected_at + d.0);
    let observed = n
        .observe(next.step, &held, &watches, &mut facts, until)
        .await;
    let hold = next.step.duration.map_or(Duration::ZERO, |d| d.0);
    // Held before the proof's result is looked at, so an interrupted proof still heals.
    holding.push(Holding {
        step: next.step,
        rep: next.rep,
        epoch,
        held,
        heal_at: injected_at + hold,
        facts,
    });
    observed
}

async fn heal_holding<'s, N: Nemeses>(
    n: &mut N,
    mut held: Holding<'s, N::Held>,
    holding: &mut [Holding<'s, N::Held>],
    due: &mut Vec<Due<'s>>,
) -> Result<(), EngineError> {
    n.heal(held.held, &mut held.facts).await?;
    n.write_epoch(&current_epoch(holding))?;
    n.record(held.facts);
    schedule_repetition(n, held.step, held.rep, due);
    Ok(())
}

fn schedule_repetition<'s, N: Nemeses>(
    n: &N,
    step: &'s FaultStep,
    rep: usize,
    due: &mut Vec<Due<'s>>,
) {
    if rep < step.injections() && !n.cancelled() {
        due.push(Due {
            step,
            rep: rep + 1,
            start: next_start(step, Instant::now()),
        });
    }
}

/// The fault epoch the history should record now: the newest fault still held.
fn current_epoch<H>(holding: &[Holding<'_, H>]) -> String {
    holding
        .iter()
        .map(|h| h.epoch)
        .max()
        .map_or_else(String::new, |e| e.to_string())
}
