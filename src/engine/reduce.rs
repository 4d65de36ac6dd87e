//! Reduction of a reproducible FAIL (method §5): the fault schedule is shrunk by
//! trying each half, then dropping single faults, re-running every candidate with the
//! failing seed, within the operator's budget of re-runs and time. A fault category the
//! failure depends on cannot be dropped (without it the candidate passes). Each
//! candidate runs once, so a failure that needs a rare interleaving may keep more
//! faults than it needs: the result says what was tried, never more.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::iteration::EngineError;
use super::scenario::{BindingRun, anomalies};
use crate::journal::Journal;

/// The operator's budget for one reduction (`--reduce-runs`, `--reduce-time`).
#[derive(Debug, Clone, Copy)]
pub struct ReduceBudget {
    pub runs: u32,
    pub time: Duration,
}

impl Default for ReduceBudget {
    fn default() -> Self {
        ReduceBudget {
            runs: 8,
            time: Duration::from_secs(600),
        }
    }
}

/// What the reduction found, for the finding and the reproducer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reduction {
    /// Fault steps in the original schedule.
    pub from: usize,
    /// Fault steps left.
    pub to: usize,
    /// Candidates re-run.
    pub runs: u32,
    pub seed: u64,
    /// Ids of the faults kept, in schedule order.
    pub faults: Vec<String>,
    /// How it ended: shrunk as far as it could, or stopped by its budget.
    pub note: String,
    /// The reduced spec and the command that replays it (written by the driver).
    pub reproducer: Option<String>,
}

impl Reduction {
    /// "reduced from 3 events to 1 over 4 re-runs".
    pub fn summary(&self) -> String {
        format!(
            "reduced from {} events to {} over {} re-runs (seed {}; kept: {})",
            self.from,
            self.to,
            self.runs,
            self.seed,
            if self.faults.is_empty() {
                "none".to_string()
            } else {
                self.faults.join(", ")
            }
        )
    }
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
            "reduction-started",
            &json!({"events": from, "seed": seed, "budget_runs": self.reduce.runs,
                    "budget_ms": self.reduce.time.as_millis()}),
        )?;
        let started = Instant::now();
        let spent = |runs: u32| runs >= self.reduce.runs || started.elapsed() >= self.reduce.time;
        let mut runs = 0;
        let mut current: Vec<usize> = (0..from).collect();
        let mut stopped = false;
        // Halves first: a failure that needs only part of the schedule halves fast.
        'halves: while current.len() > 1 {
            let (a, b) = current.split_at(current.len() / 2);
            let (a, b) = (a.to_vec(), b.to_vec());
            let mut shrunk = false;
            for half in [a, b] {
                if spent(runs) {
                    stopped = true;
                    break 'halves;
                }
                runs += 1;
                if self
                    .fails_with(journal, &half, seed, duration, runs)
                    .await?
                {
                    current = half;
                    shrunk = true;
                    break;
                }
            }
            if !shrunk {
                break;
            }
        }
        // Then single faults, each dropped if the failure stays without it.
        let mut i = 0;
        // Down to none: a failure that needs no fault at all is worth knowing.
        while !stopped && i < current.len() {
            if spent(runs) {
                stopped = true;
                break;
            }
            let mut candidate = current.clone();
            candidate.remove(i);
            runs += 1;
            if self
                .fails_with(journal, &candidate, seed, duration, runs)
                .await?
            {
                current = candidate;
            } else {
                i += 1;
            }
        }
        let faults: Vec<String> = current
            .iter()
            .map(|i| self.binding.faults[*i].value.id.clone())
            .collect();
        let note = if stopped {
            format!(
                "stopped by its budget ({} re-runs, {:?}); a smaller schedule may exist",
                self.reduce.runs, self.reduce.time
            )
        } else if current.is_empty() {
            "the failure needs no fault: the seed failed with none injected".into()
        } else {
            "every remaining fault is needed: without any one of them the seed passed".into()
        };
        let reduction = Reduction {
            from,
            to: current.len(),
            runs,
            seed,
            faults,
            note,
            reproducer: None,
        };
        journal.append(
            self.scope.clone(),
            "reduction-result",
            &json!({"from": reduction.from, "to": reduction.to, "runs": runs,
                    "faults": reduction.faults, "note": reduction.note}),
        )?;
        Ok(reduction)
    }

    /// Runs the seed with only the faults at `keep`; true when the checker still
    /// finds an anomaly.
    async fn fails_with(
        &self,
        journal: &mut Journal,
        keep: &[usize],
        seed: u64,
        duration: Duration,
        run: u32,
    ) -> Result<bool, EngineError> {
        let mut binding = self.binding.clone();
        binding.faults = keep
            .iter()
            .map(|i| self.binding.faults[*i].clone())
            .collect();
        let ids: Vec<&str> = binding.faults.iter().map(|f| f.value.id.as_str()).collect();
        let label = format!("seed-{seed}-reduce-{run}");
        let facts = self
            .iterate_with(&binding, journal, seed, &label, duration)
            .await?;
        let failed = anomalies(&facts) > 0;
        journal.append(
            self.scope.clone(),
            "reduction-candidate",
            &json!({"run": run, "faults": ids, "failed": failed}),
        )?;
        Ok(failed)
    }
}
