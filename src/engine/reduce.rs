//! Reduction of a reproducible FAIL (method §5): the fault schedule is shrunk by
//! trying each half, then dropping single faults, re-running every candidate with the
//! failing seed, within the operator's budget of re-runs and time. A fault category the
//! failure depends on cannot be dropped (without it the candidate passes). Then the
//! timing of what is left: each kept fault's start offset and hold are halved once,
//! and a halving is kept when the seed still fails; then the workload's length (the
//! number of client ops it issues) the same way, when every kept fault still starts
//! inside the shorter run. Each candidate runs once, so a
//! failure that needs a rare interleaving may keep more faults than it needs: the
//! result says what was tried, never more.

use std::time::Duration;

use tokio::time::Instant;

use super::iteration::EngineError;
use super::request::ReduceBudget;
use super::scenario::{BindingRun, anomalies};
use crate::runspec::FaultStep;
use crate::session::event::{self, Event, millis};
use crate::session::journal::Journal;
use crate::session::outcome::{Reduction, TimingCut, WorkloadCut};

#[cfg(test)]
mod sim;

/// A timing below this is not halved: scheduling jitter is of the same order.
const TIMING_FLOOR: Duration = Duration::from_millis(100);

/// Why a reduction ended before it tried everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Budget,
    /// The operator stopped the session (or a signal did).
    CutShort,
}

impl BindingRun<'_> {
    /// Shrinks the fault schedule of a FAIL that reproduced with `seed`.
    pub(super) async fn reduce(
        &self,
        journal: &mut Journal,
        seed: u64,
        duration: Duration,
    ) -> Result<Reduction, EngineError> {
        let from = self.binding.faults.len();
        journal.append(
            self.scope.clone(),
            Event::ReductionStarted(event::ReductionStarted {
                events: from,
                seed,
                budget_runs: self.reduce.runs,
                budget_ms: millis(self.reduce.time),
            }),
        )?;
        let steps: Vec<&FaultStep> = self.binding.faults.iter().map(|f| &f.value).collect();
        let mut rerun = Reruns {
            run: self,
            journal: &mut *journal,
            seed,
        };
        let reduction = search(&mut rerun, &steps, self.reduce, seed, duration).await?;
        journal.append(
            self.scope.clone(),
            Event::ReductionResult(event::ReductionResult {
                from: reduction.from,
                to: reduction.to,
                runs: reduction.runs,
                faults: reduction.faults.clone(),
                timing: reduction.timing.clone(),
                workload: reduction.workload,
                note: reduction.note.clone(),
                cut_short: reduction.cut_short,
            }),
        )?;
        Ok(reduction)
    }
}

/// The candidates of one binding's reduction, each an iteration of its own, journaled.
struct Reruns<'r, 'a> {
    run: &'r BindingRun<'a>,
    journal: &'r mut Journal,
    seed: u64,
}

impl Rerun for Reruns<'_, '_> {
    fn cancelled(&self) -> bool {
        self.run.cancel.is_cancelled()
    }

    /// Runs the seed with only the faults at `keep`, with `timing` applied: whether
    /// the checker still finds an anomaly, or `None` when a stop interrupted the run
    /// (healed on its way out, and not journaled as a candidate: it decided nothing).
    async fn fails_with(
        &mut self,
        keep: &[usize],
        timing: &[TimingCut],
        duration: Duration,
        run: u32,
    ) -> Result<Option<bool>, EngineError> {
        let (this, journal, seed) = (self.run, &mut *self.journal, self.seed);
        let mut binding = this.binding.clone();
        binding.faults = keep
            .iter()
            .map(|i| this.binding.faults[*i].clone())
            .collect();
        for step in &mut binding.faults {
            for cut in timing {
                cut.apply(&mut step.value);
            }
        }
        let ids: Vec<String> = binding.faults.iter().map(|f| f.value.id.clone()).collect();
        let label = crate::session::label::IterationLabel::reduce(seed, run);
        let facts = match this.iterate_with(&binding, journal, label, duration).await {
            Ok(facts) => facts,
            Err(EngineError::Interrupted { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let failed = anomalies(&facts) > 0;
        journal.append(
            this.scope.clone(),
            Event::ReductionCandidate(event::ReductionCandidate {
                run,
                faults: ids,
                timing: timing.to_vec(),
                duration_ms: millis(duration),
                failed,
            }),
        )?;
        Ok(Some(failed))
    }
}

/// The halvings to try on the faults at `keep`: start offsets, then holds.
fn timing_candidates(steps: &[&FaultStep], keep: &[usize]) -> Vec<TimingCut> {
    let halved = |fault: &str, field: &str, value: Duration| {
        (value >= TIMING_FLOOR * 2).then(|| TimingCut {
            fault: fault.to_string(),
            field: field.to_string(),
            from_ms: millis(value),
            to_ms: millis(value / 2),
        })
    };
    let steps: Vec<&FaultStep> = keep.iter().map(|i| steps[*i]).collect();
    let starts = steps
        .iter()
        .filter_map(|s| halved(&s.id, "after", s.after.0));
    let holds = steps
        .iter()
        .filter_map(|s| halved(&s.id, "duration", s.duration?.0));
    starts.chain(holds).collect()
}

/// How each candidate of a reduction is run: by the binding's own iteration
/// ([`BindingRun`]), or in tests by an in-process SUT on tokio's paused clock
/// (`reduce/sim.rs`).
pub(super) trait Rerun {
    /// A stop was asked for: no further candidate is started.
    fn cancelled(&self) -> bool;
    /// Runs the failing seed with only the faults at `keep`, with `timing` applied,
    /// for `duration`: whether it still fails, or `None` when a stop interrupted it.
    async fn fails_with(
        &mut self,
        keep: &[usize],
        timing: &[TimingCut],
        duration: Duration,
        run: u32,
    ) -> Result<Option<bool>, EngineError>;
}

/// The search over `steps`, the schedule that failed with `seed` in `duration`:
/// halves, single faults, timings, the workload's length, within `budget`.
pub(super) async fn search<R: Rerun>(
    rerun: &mut R,
    steps: &[&FaultStep],
    budget: ReduceBudget,
    seed: u64,
    duration: Duration,
) -> Result<Reduction, EngineError> {
    let from = steps.len();
    let started = Instant::now();
    let spent = |runs: u32| runs >= budget.runs || started.elapsed() >= budget.time;
    let mut runs = 0;
    let mut current: Vec<usize> = (0..from).collect();
    // Why it ended early, if it did: its budget, or a stop.
    let mut stopped: Option<Ended> = None;
    let ends = |rerun: &R, runs: u32| {
        if rerun.cancelled() {
            Some(Ended::CutShort)
        } else if spent(runs) {
            Some(Ended::Budget)
        } else {
            None
        }
    };
    // Halves first: a failure that needs only part of the schedule halves fast.
    'halves: while current.len() > 1 {
        let (a, b) = current.split_at(current.len() / 2);
        let (a, b) = (a.to_vec(), b.to_vec());
        let mut shrunk = false;
        for half in [a, b] {
            stopped = ends(rerun, runs);
            if stopped.is_some() {
                break 'halves;
            }
            let candidate = (&half[..], &[][..], duration);
            match attempt(rerun, candidate, &mut runs, &mut stopped).await? {
                Some(true) => {
                    current = half;
                    shrunk = true;
                    break;
                }
                Some(false) => {}
                None => break 'halves,
            }
        }
        if !shrunk {
            break;
        }
    }
    // Then single faults, each dropped if the failure stays without it.
    let mut i = 0;
    // Down to none: a failure that needs no fault at all is worth knowing.
    while stopped.is_none() && i < current.len() {
        stopped = ends(rerun, runs);
        if stopped.is_some() {
            break;
        }
        let mut candidate = current.clone();
        candidate.remove(i);
        let tried = (&candidate[..], &[][..], duration);
        match attempt(rerun, tried, &mut runs, &mut stopped).await? {
            Some(true) => current = candidate,
            Some(false) => i += 1,
            None => {}
        }
    }
    // Then the timing of what is left, one halving per start offset and hold.
    let mut timing: Vec<TimingCut> = Vec::new();
    for cut in timing_candidates(steps, &current) {
        if stopped.is_none() {
            stopped = ends(rerun, runs);
        }
        if stopped.is_some() {
            break;
        }
        let mut tried = timing.clone();
        tried.push(cut);
        let candidate = (&current[..], &tried[..], duration);
        if attempt(rerun, candidate, &mut runs, &mut stopped).await? == Some(true) {
            timing = tried;
        }
    }
    // Then the workload's length: fewer ops, if every kept fault still starts in time.
    let mut workload = None;
    let shorter = duration / 2;
    let latest_start = current
        .iter()
        .map(|i| {
            let mut step = steps[*i].clone();
            for cut in &timing {
                cut.apply(&mut step);
            }
            step.after.0
        })
        .max()
        .unwrap_or_default();
    let worth = duration >= TIMING_FLOOR * 2 && latest_start < shorter;
    if worth && stopped.is_none() {
        stopped = ends(rerun, runs);
    }
    if worth && stopped.is_none() {
        let candidate = (&current[..], &timing[..], shorter);
        if attempt(rerun, candidate, &mut runs, &mut stopped).await? == Some(true) {
            workload = Some(WorkloadCut {
                from_ms: millis(duration),
                to_ms: millis(shorter),
            });
        }
    }
    let faults: Vec<String> = current.iter().map(|i| steps[*i].id.clone()).collect();
    let note = match stopped {
        Some(Ended::CutShort) => {
            format!("cut short by a stop after {runs} re-run(s); what it kept so far still fails")
        }
        Some(Ended::Budget) => format!(
            "stopped by its budget ({} re-runs, {:?}); a smaller schedule may exist",
            budget.runs, budget.time
        ),
        None if current.is_empty() => {
            "the failure needs no fault: the seed failed with none injected".into()
        }
        None => "every remaining fault is needed: without any one of them the seed passed".into(),
    };
    let cut_short = stopped == Some(Ended::CutShort);
    let reduction = Reduction {
        from,
        to: current.len(),
        runs,
        seed,
        faults,
        note,
        timing,
        workload,
        reproducer: None,
        cut_short,
    };
    Ok(reduction)
}

/// Runs one candidate (the faults kept, the timing cuts, the workload's length),
/// counted in `runs`: whether it still fails. A stop during it decided nothing: it
/// is not counted, the search ends (`stopped`), and the answer is `None`.
async fn attempt<R: Rerun>(
    rerun: &mut R,
    (keep, timing, duration): (&[usize], &[TimingCut], Duration),
    runs: &mut u32,
    stopped: &mut Option<Ended>,
) -> Result<Option<bool>, EngineError> {
    *runs += 1;
    let failed = rerun.fails_with(keep, timing, duration, *runs).await?;
    if failed.is_none() {
        *runs -= 1;
        *stopped = Some(Ended::CutShort);
    }
    Ok(failed)
}
