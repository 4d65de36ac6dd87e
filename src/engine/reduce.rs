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

use std::time::{Duration, Instant};

use super::iteration::EngineError;
use super::scenario::{BindingRun, anomalies};
use crate::runspec::FaultStep;
use crate::session::event::{self, Event, millis};
use crate::session::journal::Journal;
use crate::session::outcome::{Reduction, TimingCut, WorkloadCut};

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
        let started = Instant::now();
        let spent = |runs: u32| runs >= self.reduce.runs || started.elapsed() >= self.reduce.time;
        let mut runs = 0;
        let mut current: Vec<usize> = (0..from).collect();
        // Why it ended early, if it did: its budget, or a stop.
        let mut stopped: Option<Ended> = None;
        let ends = |runs: u32| {
            if self.cancel.is_cancelled() {
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
                stopped = ends(runs);
                if stopped.is_some() {
                    break 'halves;
                }
                runs += 1;
                match self
                    .fails_with(journal, &half, &[], seed, duration, runs)
                    .await?
                {
                    Some(true) => {
                        current = half;
                        shrunk = true;
                        break;
                    }
                    Some(false) => {}
                    None => {
                        runs -= 1;
                        stopped = Some(Ended::CutShort);
                        break 'halves;
                    }
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
            stopped = ends(runs);
            if stopped.is_some() {
                break;
            }
            let mut candidate = current.clone();
            candidate.remove(i);
            runs += 1;
            match self
                .fails_with(journal, &candidate, &[], seed, duration, runs)
                .await?
            {
                Some(true) => current = candidate,
                Some(false) => i += 1,
                None => {
                    // The interrupted run decided nothing: it is not counted.
                    runs -= 1;
                    stopped = Some(Ended::CutShort);
                }
            }
        }
        // Then the timing of what is left, one halving per start offset and hold.
        let mut timing: Vec<TimingCut> = Vec::new();
        for cut in self.timing_candidates(&current) {
            if stopped.is_none() {
                stopped = ends(runs);
            }
            if stopped.is_some() {
                break;
            }
            let mut tried = timing.clone();
            tried.push(cut);
            runs += 1;
            match self
                .fails_with(journal, &current, &tried, seed, duration, runs)
                .await?
            {
                Some(true) => timing = tried,
                Some(false) => {}
                None => {
                    // The interrupted run decided nothing: it is not counted.
                    runs -= 1;
                    stopped = Some(Ended::CutShort);
                }
            }
        }
        // Then the workload's length: fewer ops, if every kept fault still starts in time.
        let mut workload = None;
        let shorter = duration / 2;
        let latest_start = current
            .iter()
            .map(|i| {
                let mut step = self.binding.faults[*i].value.clone();
                for cut in &timing {
                    cut.apply(&mut step);
                }
                step.after.0
            })
            .max()
            .unwrap_or_default();
        let worth = duration >= TIMING_FLOOR * 2 && latest_start < shorter;
        if worth && stopped.is_none() {
            stopped = ends(runs);
        }
        if worth && stopped.is_none() {
            runs += 1;
            match self
                .fails_with(journal, &current, &timing, seed, shorter, runs)
                .await?
            {
                Some(true) => {
                    workload = Some(WorkloadCut {
                        from_ms: millis(duration),
                        to_ms: millis(shorter),
                    });
                }
                Some(false) => {}
                None => {
                    // The interrupted run decided nothing: it is not counted.
                    runs -= 1;
                    stopped = Some(Ended::CutShort);
                }
            }
        }
        let faults: Vec<String> = current
            .iter()
            .map(|i| self.binding.faults[*i].value.id.clone())
            .collect();
        let note = match stopped {
            Some(Ended::CutShort) => format!(
                "cut short by a stop after {runs} re-run(s); what it kept so far still fails"
            ),
            Some(Ended::Budget) => format!(
                "stopped by its budget ({} re-runs, {:?}); a smaller schedule may exist",
                self.reduce.runs, self.reduce.time
            ),
            None if current.is_empty() => {
                "the failure needs no fault: the seed failed with none injected".into()
            }
            None => {
                "every remaining fault is needed: without any one of them the seed passed".into()
            }
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
        journal.append(
            self.scope.clone(),
            Event::ReductionResult(event::ReductionResult {
                from: reduction.from,
                to: reduction.to,
                runs,
                faults: reduction.faults.clone(),
                timing: reduction.timing.clone(),
                workload: reduction.workload,
                note: reduction.note.clone(),
                cut_short,
            }),
        )?;
        Ok(reduction)
    }

    /// The halvings to try on the faults at `keep`: start offsets, then holds.
    fn timing_candidates(&self, keep: &[usize]) -> Vec<TimingCut> {
        let halved = |fault: &str, field: &str, value: Duration| {
            (value >= TIMING_FLOOR * 2).then(|| TimingCut {
                fault: fault.to_string(),
                field: field.to_string(),
                from_ms: millis(value),
                to_ms: millis(value / 2),
            })
        };
        let steps: Vec<&FaultStep> = keep
            .iter()
            .map(|i| &self.binding.faults[*i].value)
            .collect();
        let starts = steps
            .iter()
            .filter_map(|s| halved(&s.id, "after", s.after.0));
        let holds = steps
            .iter()
            .filter_map(|s| halved(&s.id, "duration", s.duration?.0));
        starts.chain(holds).collect()
    }

    /// Runs the seed with only the faults at `keep`, with `timing` applied: whether
    /// the checker still finds an anomaly, or `None` when a stop interrupted the run
    /// (healed on its way out, and not journaled as a candidate: it decided nothing).
    async fn fails_with(
        &self,
        journal: &mut Journal,
        keep: &[usize],
        timing: &[TimingCut],
        seed: u64,
        duration: Duration,
        run: u32,
    ) -> Result<Option<bool>, EngineError> {
        let mut binding = self.binding.clone();
        binding.faults = keep
            .iter()
            .map(|i| self.binding.faults[*i].clone())
            .collect();
        for step in &mut binding.faults {
            for cut in timing {
                cut.apply(&mut step.value);
            }
        }
        let ids: Vec<String> = binding.faults.iter().map(|f| f.value.id.clone()).collect();
        let label = crate::session::label::IterationLabel::reduce(seed, run);
        let facts = match self.iterate_with(&binding, journal, label, duration).await {
            Ok(facts) => facts,
            Err(EngineError::Interrupted { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let failed = anomalies(&facts) > 0;
        journal.append(
            self.scope.clone(),
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
