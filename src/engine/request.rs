//! What a session is asked to do, decided before it starts: the [`Request`] the
//! driver runs, the reduction budget, and the channel the driver's records reach
//! the outputs by. Apart from the driver so that the outputs, the reproducer and
//! author mode read it without importing the driver (no cycle inside `engine`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;

use crate::plan::Plan;
use crate::runspec::RunSpec;
use crate::session::journal::Record;
use crate::verdict::Tier;

/// Everything a session needs, decided before it starts.
pub struct Request {
    /// Shared with the documents written as the session goes (never copied).
    pub plan: std::sync::Arc<Plan>,
    pub plan_path: PathBuf,
    pub spec: RunSpec,
    /// Commands run here; its git revision is recorded.
    pub sut_dir: PathBuf,
    /// The session root (`<root>/<plan_slug>/<timestamp>/` is created in it).
    pub out_root: PathBuf,
    pub tier: Tier,
    /// Scenario or arm ids to run; the rest are NOT-RUN "excluded by --only".
    pub only: Option<Vec<String>>,
    pub report_path: Option<PathBuf>,
    /// Variables set before the run spec's own (`faultline`, `sut`).
    pub vars: BTreeMap<String, String>,
    /// Who started the run, for the journal.
    pub started_by: String,
    /// The command line that re-runs this plan (`faultline demo`, `faultline run P`),
    /// used to write reproducers.
    pub rerun_command: String,
    /// The plan and run-spec texts as read, saved into the session so `resume` and
    /// `report` need nothing outside it.
    pub plan_text: String,
    pub spec_source: Option<(String, String)>,
    /// Set by `faultline resume`: continue this session instead of starting one.
    pub resume: Option<ResumeFrom>,
    /// How far a reproducible FAIL's fault schedule may be reduced.
    pub reduce: ReduceBudget,
    /// Start a watchdog process that heals the session if this process dies first
    /// (set by the faultline binary; in-process callers own their children).
    pub watchdog: bool,
    /// Author mode inside the run (`--author` or `DIST_TEST_AUTHOR_MODE=1`).
    pub author: bool,
}

impl Request {
    /// The request as `resume` needs it again, less what is re-read from the texts.
    pub fn saved(&self) -> crate::session::resume::SavedRequest {
        crate::session::resume::SavedRequest {
            plan_label: self.plan_path.clone(),
            spec_label: self.spec_source.as_ref().map(|(label, _)| label.clone()),
            sut_dir: self.sut_dir.clone(),
            tier: self.tier,
            only: self.only.clone(),
            report_path: self.report_path.clone(),
            vars: self.vars.clone(),
            rerun_command: self.rerun_command.clone(),
            reduce_runs: self.reduce.runs,
            reduce_time_ms: u64::try_from(self.reduce.time.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// A killed session to continue: its directory. What it had decided is read back
/// from its journal (the outcome its records add up to).
pub struct ResumeFrom {
    pub dir: PathBuf,
}

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

/// The records the driver journals, as the outputs' `follow` takes them.
pub type Records = UnboundedReceiver<Record>;
