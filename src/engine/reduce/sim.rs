//! The reduction's search on tokio's paused clock, against an in-process SUT whose
//! acknowledged write is lost only when a partition and a leader kill overlap: the
//! partition held at least 1.5 s, the kill starting before the workload ends. Each
//! candidate takes its workload's length of virtual time, so the time budget is
//! tested as the operator sets it (minutes), in milliseconds of real time. The real
//! demo's reduction (`tests/suite/reduction.rs`) and a stop during it
//! (`reduction_stop.rs`) still run once each on real processes.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{Rerun, search};
use crate::engine::iteration::EngineError;
use crate::engine::request::ReduceBudget;
use crate::runspec::{Binding, FaultStep};
use crate::session::outcome::{TimingCut, WorkloadCut};

const SCHEDULE: &str = r#"
faults:
  - id: clock
    after: 500ms
    duration: 1s
    command: { inject: "true", heal: "true" }
  - id: partition
    after: 1s
    duration: 2s
    command: { inject: "true", heal: "true" }
  - id: kill
    after: 3s
    duration: 400ms
    process: { signal: SIGKILL, target: { service: n1 } }
  - id: pause
    after: 6s
    duration: 1s
    process: { signal: SIGSTOP, target: { service: n2 } }
"#;

/// The workload's length in the failing run.
const WORKLOAD: Duration = Duration::from_secs(10);

struct Sut {
    steps: Vec<FaultStep>,
    /// Whether the SUT fails whatever the faults (a bug no fault is needed for).
    always_fails: bool,
    /// The candidate during which the operator stops the session, if any.
    stop_during: Option<u32>,
    cancel: CancellationToken,
    /// Each candidate: its run number, the faults kept, and the workload's length.
    tried: Vec<(u32, Vec<String>, Duration)>,
}

impl Sut {
    fn new() -> Sut {
        let binding: Binding = serde_saphyr::from_str(SCHEDULE).expect("a binding");
        Sut {
            steps: binding.faults.iter().map(|f| f.value.clone()).collect(),
            always_fails: false,
            stop_during: None,
            cancel: CancellationToken::new(),
            tried: Vec::new(),
        }
    }

    /// Reduces the failing schedule within `runs` re-runs and `time`.
    async fn reduce(&mut self, runs: u32, time: Duration) -> super::Reduction {
        let steps = self.steps.clone();
        let steps: Vec<&FaultStep> = steps.iter().collect();
        search(self, &steps, ReduceBudget { runs, time }, 7, WORKLOAD)
            .await
            .expect("the search ran")
    }

    fn kept(&self) -> Vec<Vec<&str>> {
        self.tried
            .iter()
            .map(|(_, faults, _)| faults.iter().map(String::as_str).collect())
            .collect()
    }
}

impl Rerun for Sut {
    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    async fn fails_with(
        &mut self,
        keep: &[usize],
        timing: &[TimingCut],
        duration: Duration,
        run: u32,
    ) -> Result<Option<bool>, EngineError> {
        let mut steps: Vec<FaultStep> = keep.iter().map(|i| self.steps[*i].clone()).collect();
        for step in &mut steps {
            for cut in timing {
                cut.apply(step);
            }
        }
        let ids = steps.iter().map(|s| s.id.clone()).collect();
        self.tried.push((run, ids, duration));
        if self.stop_during == Some(run) {
            // The operator stops the session half way through this candidate.
            let cancel = self.cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(duration / 2).await;
                cancel.cancel();
            });
        }
        tokio::select! {
            () = tokio::time::sleep(duration) => {}
            () = self.cancel.cancelled() => return Ok(None),
        }
        let step = |id: &str| steps.iter().find(|s| s.id == id);
        let partition = step("partition").and_then(|s| s.duration);
        let kill = step("kill").map(|s| s.after.0);
        let lost = partition.is_some_and(|held| held.0 >= Duration::from_millis(1500))
            && kill.is_some_and(|after| after < duration);
        Ok(Some(self.always_fails || lost))
    }
}

fn cut(fault: &str, field: &str, from_ms: u64, to_ms: u64) -> TimingCut {
    TimingCut {
        fault: fault.into(),
        field: field.into(),
        from_ms,
        to_ms,
    }
}

/// Halves, then single faults, then each timing, then the workload: down to the two
/// faults the loss needs, the halvings that still lose the write kept (not the
/// partition's hold, which would be too short), the workload halved.
#[tokio::test(start_paused = true)]
async fn the_search_keeps_what_the_failure_needs_and_halves_what_it_can() {
    let mut sut = Sut::new();
    let started = Instant::now();
    let reduction = sut.reduce(20, Duration::from_secs(600)).await;
    assert_eq!(
        sut.kept(),
        vec![
            vec!["clock", "partition"],
            vec!["kill", "pause"],
            vec!["partition", "kill", "pause"],
            vec!["kill", "pause"],
            vec!["partition", "pause"],
            vec!["partition", "kill"],
            vec!["partition", "kill"],
            vec!["partition", "kill"],
            vec!["partition", "kill"],
            vec!["partition", "kill"],
            vec!["partition", "kill"],
        ]
    );
    assert_eq!(reduction.from, 4);
    assert_eq!(reduction.to, 2);
    assert_eq!(reduction.runs, 11);
    assert_eq!(reduction.faults, ["partition", "kill"]);
    assert_eq!(
        reduction.timing,
        vec![
            cut("partition", "after", 1000, 500),
            cut("kill", "after", 3000, 1500),
            cut("kill", "duration", 400, 200),
        ]
    );
    assert_eq!(
        reduction.workload,
        Some(WorkloadCut {
            from_ms: 10_000,
            to_ms: 5_000
        })
    );
    assert!(!reduction.cut_short);
    assert!(
        reduction
            .note
            .starts_with("every remaining fault is needed"),
        "{}",
        reduction.note
    );
    // Ten candidates of the whole workload and the last of half of it, back to back.
    assert_eq!(started.elapsed(), Duration::from_secs(105));
}

/// The time budget is looked at before each candidate: with 25 s (or exactly 30 s)
/// and 10 s candidates, the fourth is not started.
#[tokio::test(start_paused = true)]
async fn the_time_budget_ends_the_search_before_the_candidate_that_would_pass_it() {
    let mut sut = Sut::new();
    sut.reduce(20, Duration::from_secs(30)).await;
    assert_eq!(
        sut.tried.len(),
        3,
        "a budget spent to the second starts nothing"
    );
    let mut sut = Sut::new();
    let reduction = sut.reduce(20, Duration::from_secs(25)).await;
    assert_eq!(sut.tried.len(), 3);
    assert_eq!(reduction.runs, 3);
    assert_eq!(reduction.faults, ["partition", "kill", "pause"]);
    assert!(!reduction.cut_short);
    assert_eq!(
        reduction.note,
        "stopped by its budget (20 re-runs, 25s); a smaller schedule may exist"
    );
}

/// The run budget: four re-runs, then it stops with what it had.
#[tokio::test(start_paused = true)]
async fn the_run_budget_ends_the_search_after_its_last_run() {
    let mut sut = Sut::new();
    let reduction = sut.reduce(4, Duration::from_secs(600)).await;
    assert_eq!(sut.tried.len(), 4);
    assert_eq!((reduction.runs, reduction.to), (4, 3));
    assert!(
        reduction
            .note
            .starts_with("stopped by its budget (4 re-runs"),
        "{}",
        reduction.note
    );
}

/// A stop during a candidate: that candidate decided nothing and is not counted, no
/// other starts, and what was kept so far is the result.
#[tokio::test(start_paused = true)]
async fn a_stop_during_a_candidate_ends_the_search_with_what_it_kept() {
    let mut sut = Sut::new();
    sut.stop_during = Some(3);
    let started = Instant::now();
    let reduction = sut.reduce(20, Duration::from_secs(600)).await;
    assert_eq!(sut.tried.len(), 3);
    assert_eq!(reduction.runs, 2);
    assert_eq!(reduction.to, 4);
    assert!(reduction.cut_short);
    assert!(reduction.timing.is_empty() && reduction.workload.is_none());
    assert_eq!(
        reduction.note,
        "cut short by a stop after 2 re-run(s); what it kept so far still fails"
    );
    // Two whole candidates and half of the third.
    assert_eq!(started.elapsed(), Duration::from_secs(25));
}

/// A failure that needs no fault is reduced to none, and says so.
#[tokio::test(start_paused = true)]
async fn a_failure_that_needs_no_fault_is_reduced_to_none() {
    let mut sut = Sut::new();
    sut.always_fails = true;
    let reduction = sut.reduce(20, Duration::from_secs(600)).await;
    assert_eq!(
        sut.kept(),
        vec![vec!["clock", "partition"], vec!["clock"], vec![], vec![],]
    );
    assert_eq!((reduction.to, reduction.runs), (0, 4));
    assert!(reduction.faults.is_empty());
    assert_eq!(
        reduction.workload.map(|w| w.to_ms),
        Some(5_000),
        "the last candidate halved the workload"
    );
    assert_eq!(
        reduction.note,
        "the failure needs no fault: the seed failed with none injected"
    );
}
